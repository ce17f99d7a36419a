"""CostModel.carry_out: a carry (borrow) out of a chain costs one net more than the fitted sum."""

from __future__ import annotations

from kera.hls.models import load_model
from kera.hls.timing import CostModel
from kera.ir.graph import Graph, Region, param
from kera.ir.types import IntType, sint, uint


def _sum(op: str, operand: IntType, result: IntType) -> tuple[Graph, bytes]:
    g = Graph("c.kera")
    pa, pb = param(g, 0, "a", operand), param(g, 1, "b", operand)
    a, b = pa, pb
    if operand != result:
        a, b = g.add("cast", result, (pa,)), g.add("cast", result, (pb,))
    s = g.add(op, result, (a, b))
    g.add_region(Region("f", (pa, pb), s))
    return g, s


def test_a_zero_extended_sum_pays_a_net_for_its_carry_out() -> None:
    """(a as u9) + (b as u9) of two u8 on iCE40: the fitted 9-bit add plus a net (1.704 ns,
    lut_network.net_ns); a u9 + u9, a sign-extended i8 sum (its top bit is a sum of the sign
    bits) and the 8 - 8 bit subtraction of two u8 pay none. On ECP5 (the CCU2C sums its
    carry out; the fitted add takes no LUTs) none does."""
    for family, net in (("ice40", 1.704), ("ecp5", 0.0)):
        costs = CostModel(load_model(family))
        for op, operand, result, extra in (("add", uint(8), uint(9), net),
                                           ("sub", uint(8), uint(9), net),
                                           ("add", uint(9), uint(9), 0.0),
                                           ("add", sint(8), sint(9), 0.0),
                                           ("sub", uint(8), uint(8), 0.0)):
            g, s = _sum(op, operand, result)
            width = 9 if op == "add" or result.width > operand.width else 8
            fitted = costs.op_delay((op, width, None))
            assert abs(costs.delay(g, g.nodes[s]) - (fitted + extra)) < 1e-9, (op, operand)


def test_a_sum_is_at_least_one_logic_level() -> None:
    """A 2-bit add of two u2 on iCE40: the fitted curve says 0.44 ns (its sum LUT is the one
    before the flip-flop, which the register overhead holds), but chained it is a LUT and a
    net: lut_network.level_ns, 2.596 ns. A 16-bit one keeps its fitted 5.31 ns; on ECP5 a u8
    add keeps its fitted 1.59 ns (above the 0.891 ns level)."""
    for family, width, want in (("ice40", 2, 2.596), ("ice40", 16, None), ("ecp5", 8, None)):
        costs = CostModel(load_model(family))
        g, s = _sum("add", uint(width), uint(width))
        fitted = costs.op_delay(("add", width, None))
        expect = want if want is not None else fitted
        assert want is None or fitted < want
        assert abs(costs.delay(g, g.nodes[s]) - expect) < 1e-9, family
