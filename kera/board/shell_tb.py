"""cocotb 2 testbench of the board shell: play a waveform into ``rx``, record ``tx``.

The UART timing lives on the host side (``kera.board.sim``): it turns bytes into one line level
per clock cycle and decodes the recorded ``tx`` levels back into bytes, so this module only
needs cocotb. Environment: ``KERA_BOARD_RX`` (a file of '0'/'1', one per cycle),
``KERA_BOARD_QUIET`` (stop after this many cycles of idle ``tx`` once the waveform is played),
``KERA_BOARD_MAX_CYCLES`` and ``KERA_BOARD_RESULTS`` (the JSON written at the end).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly


@cocotb.test()
async def shell_stream(dut: Any) -> None:
    """Play the RX waveform cycle by cycle and record TX until it has been quiet."""
    wave = Path(os.environ["KERA_BOARD_RX"]).read_text(encoding="utf-8").strip()
    quiet_limit = int(os.environ["KERA_BOARD_QUIET"])
    max_cycles = int(os.environ["KERA_BOARD_MAX_CYCLES"])
    Clock(dut.clk, 10, unit="ns").start()  # cocotb 2: start() schedules the clock task
    dut.rx.value = 1
    dut.rst.value = 1
    for _ in range(3):
        await FallingEdge(dut.clk)
    dut.rst.value = 0
    tx: list[str] = []
    quiet = 0
    cycle = 0
    while cycle < max_cycles and (cycle < len(wave) or quiet < quiet_limit):
        dut.rx.value = int(wave[cycle]) if cycle < len(wave) else 1
        await ReadOnly()
        level = str(dut.tx.value)
        tx.append(level)
        quiet = quiet + 1 if level == "1" and cycle >= len(wave) else 0
        await FallingEdge(dut.clk)
        cycle += 1
    result = {"tx": "".join(tx), "cycles": cycle, "finished": cycle < max_cycles}
    Path(os.environ["KERA_BOARD_RESULTS"]).write_text(json.dumps(result), encoding="utf-8")
