"""The bit network as yosys builds it (``kera.hls.lutmap.ToolNetwork``) and the ECP5 wide LUTs
(``kera.hls.cutmap``): figures derived by hand from what yosys/abc9 make of small circuits."""

from __future__ import annotations

from kera.elaborate import build_program
from kera.hls.lower import lower_for_hardware
from kera.hls.lutmap import ONE, ZERO, neg_wiring
from kera.hls.models import load_model
from kera.hls.resources import estimate
from kera.hls.schedule import schedule
from kera.hls.timing import CostModel


def _estimate(src: str, family: str = "ice40", clock: float = 12.0):
    p = build_program("t.kera", src)
    assert p.graph is not None and p.top is not None, p.diagnostics
    g = lower_for_hardware(p.graph)
    model = load_model(family)
    s = schedule(g, p.top, family=family, clock_mhz=clock, model=model)
    return s, estimate(s, CostModel(model))


def test_negation_wires() -> None:
    x0 = (frozenset({0}), 0, -1, 0)
    x1 = (frozenset({1}), 0, -1, 0)
    assert neg_wiring([x0, ZERO, ZERO], False) == [x0, x0, x0]  # 0 - x, x in {0, 1}
    assert neg_wiring([x0, x0, x0], True) == [x0, ZERO, ZERO]  # x in {0, -1}: 0 or 1
    assert neg_wiring([x0], True) == [x0]  # -x of an i1 wraps to x
    assert neg_wiring([x0, x1], False) is None and neg_wiring([ONE, ZERO], False) is None


def test_crc_step_mask_is_wiring_not_a_carry_chain() -> None:
    # c >> 1 ^ (poly & -(c & 1)): each bit i < 31 is c[i + 1] ^ c[0] where the polynomial has
    # a one (13 of bits 0..30 of 0xEDB88320: one 2-input LUT each), else a wire; bit 31 is
    # c[0]. No carry cell (yosys folds the negation of a 0/1 value) and one LUT level.
    src = ("#[top] pub fn f(c: u32) -> u32 { (c >> 1u32) ^ (0xEDB88320u32 & (0u32 - (c & 1u32))) }")
    s, res = _estimate(src)
    assert res.total["lut"] == 13 and res.total["carry"] == 0
    assert max(s.finish_ns.values()) == CostModel(load_model("ice40")).level_ns


def test_state_and_inverted_result_of_one_value_take_two_luts_per_bit() -> None:
    # the state register holds s ^ x and the output register !(s ^ x): flip-flops do not
    # invert, so each of the 8 xor gates is built in both polarities (yosys: 16 SB_LUT4)
    src = """#[top] pub fn f(x: u8) -> u8 {
        reg s: u8 = 0;
        let n = s ^ x;
        s = n;
        !n
    }"""
    _, res = _estimate(src)
    assert res.total["lut"] == 16
    _, plain = _estimate(src.replace("!n", "n"))  # one polarity: 8 LUTs
    assert plain.total["lut"] == 8
