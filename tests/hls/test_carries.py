"""kera.hls.carries: a carry chain splits where both operand bits are known (yosys removes
the known carry cells), which the estimate's area and delay follow."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from kera.hls.carries import chain_profile
from kera.hls.models import load_model
from kera.hls.timing import CostModel
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import sint, uint

V = None


def _masked_sum(mask: int) -> tuple[Graph, bytes]:
    """``(a & mask) + (b & mask)`` of two u16."""
    g = Graph("c.kera")
    pa, pb = param(g, 0, "a", uint(16)), param(g, 1, "b", uint(16))
    m = const(g, uint(16), mask)
    s = g.add("add", uint(16), (g.add("and", uint(16), (pa, m)), g.add("and", uint(16), (pb, m))))
    g.add_region(Region("f", (pa, pb), s))
    return g, s


def test_a_sum_of_values_masked_to_0x0f0f_is_two_4_bit_chains_and_their_carry_outs() -> None:
    """Bits 12-15 are zero: a 13-bit chain (wreduce). Positions 0-3 and 8-11 have two signal
    operand bits: a carry cell and a sum LUT each (8 + 8); 4 and 12 have two zero operand
    bits and the carry in: no cell, the carry out, which yosys's netlist reads off the
    SB_CARRY (no LUT4: nextpnr packs a pass-through logic cell, ``pass_outs``); 5-7 are all
    known: the constant 0 (no cell, no LUT). Two runs of 5 positions (yosys 0.70
    `synth_ice40`: 8 SB_CARRY and 8 SB_LUT4; `synth_ecp5`: 6 CCU2C, two 5-bit chains of 3)."""
    a = [V] * 4 + [0] * 4 + [V] * 4 + [0]
    prof = chain_profile(a, a)
    assert (prof.carries, prof.luts, prof.runs, prof.pass_outs) == (8, 10, (5, 5), 2)
    assert prof.longest_carries_out and prof.constants[5:8] == (0, 0, 0)
    g, s = _masked_sum(0x0F0F)
    ice40 = CostModel(load_model("ice40"))
    area = ice40.area(g, g.nodes[s])
    assert round(area["carry"]) == 8 and round(area["lut"]) == 8
    # delay: a 5-bit chain (fitted 1.55 ns, at least a level: 2.596) and its carry out's
    # net (1.704): 4.300 ns, where one 13-bit chain was 4.66 + 1.704
    assert ice40.op_delay(("add", 5, None)) < 2.596
    assert abs(ice40.delay(g, g.nodes[s]) - (2.596 + 1.704)) < 1e-9
    assert ice40.delay(g, g.nodes[s]) < ice40.op_delay(("add", 13, None)) + 1.704
    ecp5 = CostModel(load_model("ecp5"))
    area = ecp5.area(g, g.nodes[s])
    assert area["carry"] == 6 and area["lut"] == 12  # 2 LUT4 sites per CCU2C
    # its constant sum bits are known to the network: bits 5-7 and 13-15 are zero
    bits = ice40.network(g).bits[s]
    assert [i for i, b in enumerate(bits) if not b[0]] == [5, 6, 7, 13, 14, 15]


def test_an_unmasked_sum_keeps_the_fitted_chain() -> None:
    """A u16 + u16 of signals: one run, the fitted 16-bit add's area and delay."""
    g, s = _masked_sum(0xFFFF)
    for family in ("ice40", "ecp5"):
        costs = CostModel(load_model(family))
        assert costs.chain(g, g.nodes[s], ("add", 16, None)) is None
    prof = chain_profile([V] * 8 + [0], [V] * 8 + [0])
    assert (prof.carries, prof.luts, prof.runs) == (8, 9, (9,))


def test_an_undemanded_sum_bit_keeps_no_cell() -> None:
    """Of a 4-bit a + b whose readers take bits 0-1 only, the cells of positions 0 (its
    carry feeds bit 1's sum) remain: 1 cell, 2 LUTs, one run of 2."""
    prof = chain_profile([V] * 4, [V] * 4, 0, [True, True, False, False])
    assert (prof.carries, prof.luts, prof.runs) == (1, 2, (2,))


def test_products_by_constants_with_trailing_zeros_start_their_sums_late() -> None:
    """``a * 0x1800 + b * 0x2200`` (u32): the products' low 11 and 9 bits are 0 (yosys's
    ``opt_expr`` shifts them out of the ``$mul``); positions 0-8 of the sum are 0, 9-10 wires
    of the second product, 11-31 a chain: 20 cells (the top one's carry is unread) and 21 sum
    LUTs (yosys 0.70 `synth_ice40 -dsp` of the 30-bit version: 18 SB_CARRY, 19 SB_LUT4)."""
    t = uint(32)
    g = Graph("c.kera")
    pa, pb = param(g, 0, "a", t), param(g, 1, "b", t)
    p = g.add("mul", t, (pa, const(g, t, 0x1800)))
    q = g.add("mul", t, (pb, const(g, t, 0x2200)))
    s = g.add("add", t, (p, q))
    g.add_region(Region("f", (pa, pb), s))
    costs = CostModel(load_model("ice40"))
    bits = costs.network(g).bits
    assert all(not b[0] for b in bits[p][:11]) and bits[p][11][0]
    assert all(not b[0] for b in bits[q][:9]) and bits[q][9][0]
    chain = costs.chain(g, g.nodes[s], ("add", 32, None))
    assert chain is not None and (chain.carries, chain.luts, chain.runs) == (20, 21, (21,))
    area = costs.area(g, g.nodes[s])
    assert round(area["lut"]) == 21 and round(area["carry"]) == 20
    assert costs.delay(g, g.nodes[s]) == costs.op_delay(("add", 21, None))


def test_a_negation_of_a_shifted_value_is_a_chain_of_its_high_bits() -> None:
    """``-(y << 9)`` (i32): its low 9 bits are 0 with no borrow, the chain is bits 9-31:
    costed as a 23-bit negation."""
    t = sint(32)
    g = Graph("c.kera")
    py = param(g, 0, "y", t)
    n = g.add("neg", t, (g.add("shl", t, (py, const(g, uint(32), 9))),))
    g.add_region(Region("f", (py,), n))
    costs = CostModel(load_model("ice40"))
    net = costs.network(g)
    assert getattr(net, "known_low", {})[n] == 9
    assert all(b == (frozenset(), 0, -1, 0) for b in net.bits[n][:9])
    assert costs.delay(g, g.nodes[n]) == costs.op_delay(("neg", 23, None))


_KNOWN = st.sampled_from([None, 0, 1])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_KNOWN, _KNOWN), max_size=6), _KNOWN)
def test_constant_and_wire_sum_bits_hold_for_every_value_of_the_signals(
        pairs: list[tuple[int | None, int | None]], carry_in: int | None) -> None:
    """Exhaustively: a sum bit the profile calls constant is that constant, and one it calls a
    wire of an operand is that operand's bit, whatever the signal bits are."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    prof = chain_profile(a, b, carry_in)
    free = [("a", i) for i, x in enumerate(a) if x is None]
    free += [("b", i) for i, y in enumerate(b) if y is None]
    free += [("c", 0)] if carry_in is None else []
    for values in itertools.product((0, 1), repeat=len(free)):
        given_ = dict(zip(free, values, strict=True))
        xa = sum((given_.get(("a", i), x) or 0) << i for i, x in enumerate(a))
        xb = sum((given_.get(("b", i), y) or 0) << i for i, y in enumerate(b))
        total = xa + xb + (given_.get(("c", 0), carry_in) or 0)
        for i in range(len(a)):
            bit = total >> i & 1
            if prof.constants[i] is not None:
                assert bit == prof.constants[i], (i, values)
            if prof.wires[i] is not None:
                assert bit == (xa, xb)[prof.wires[i]] >> i & 1, (i, values)
    assert prof.carries <= max(0, len(a)) and sum(prof.runs) <= len(a)


def test_a_constant_s_lowest_one_passes_a_signal_carry_in_to_the_chain() -> None:
    """``x + 5``: bit 0 holds one signal (``x[0] + 1``), so its cell goes and ``x[0]`` is the
    carry into bit 1, the chain's first cell; ``x + y`` starts with a constant carry in, and
    ``x + 0x80`` of 8 bits keeps no chain at all."""
    x = [None] * 8
    five = [1, 0, 1, 0, 0, 0, 0, 0]
    assert chain_profile(x, five).signal_carry_in
    assert not chain_profile(x, [None] * 8).signal_carry_in
    assert not chain_profile(x, [0] * 7 + [1]).signal_carry_in
