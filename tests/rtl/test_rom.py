"""Constant tables read by a variable index: one ROM each, clamped reads, lint-clean, simulated."""

from __future__ import annotations

import re

from kera.elaborate import build_program
from kera.hls.pipeline import single_stage
from kera.rtl import emit_verilog
from kera.rtl.lint import lint
from tests.conftest import needs_verilator

# T is read by a u2 (4 of its 8 entries reachable), twice by a u8 (clamped past the end), and
# at constant indices; U only at constant indices (no ROM); W by an index that reaches it all.
TABLES = b"""\
const T: [u8; 8] = [10, 20, 30, 40, 50, 60, 70, 80];
const U: [u16; 2] = [7, 9];
const W: [i4; 4] = [-8, -1, 0, 7];

#[top]
pub fn tables(a: u2, b: u8, c: u8) -> (u8, u8, u8, u16, i4, u8) {
    (T[a], T[b], T[c ^ b], U[0] + U[1], W[a], T[3])
}
"""


def _schedule():  # type: ignore[no-untyped-def]
    program = build_program("tables.kera", TABLES)
    assert program.ok, program.diagnostics
    return single_stage(program.graph, program.top)


def _verilog() -> str:
    return emit_verilog(_schedule(), board="sim", version="0")


def test_each_table_and_reach_is_one_rom() -> None:
    text = _verilog()
    decls = re.findall(r"reg \[(\d+):0\] (rom\w*) \[0:(\d+)\];", text)
    # T's first 4 entries for the u2 index, all 8 for the u8 ones, and W's 4 entries.
    assert sorted((int(w) + 1, int(n) + 1) for w, _, n in decls) == [(4, 4), (8, 4), (8, 8)]
    assert text.count("initial begin") == 3
    assert len(re.findall(r"= rom\w*\[", text)) == 4
    assert "case" not in text  # no inline multiplexer is left
    clamps = re.findall(r"wire \[2:0\] \w+_at = \(\w+ > 8'd7\) \? 3'd7 : \w+\[2:0\];", text)
    assert len(clamps) == 2


def test_rom_text_is_deterministic() -> None:
    assert _verilog() == _verilog()


@needs_verilator
def test_roms_are_lint_clean_and_simulate_exactly() -> None:
    from kera.sim import simulate

    assert lint(_verilog()) == []
    rows = [{"a": a, "b": b, "c": c} for a in range(4) for b, c in
            [(0, 0), (7, 0), (8, 1), (255, 255), (6, 9), (200, 3)]]
    result = simulate(_schedule(), rows)
    assert result.passed, result.mismatches[:3]
    assert len(result.outputs) == len(rows)
