"""decompose_for_timing: ops too slow for the period become bit-exact, schedulable pieces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera import load
from kera.diagnostics import Span
from kera.hls.decompose import _csd, decompose_for_timing, mul_plan
from kera.hls.models import load_model
from kera.hls.schedule import schedule
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel, SimpleModel
from kera.interp import evaluate
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, ArrayType, IntType, TupleType, uint
from tests.conftest import needs_verilator

MODEL = SimpleModel()  # add/sub/lt of w bits: 0.8 + 0.05 w ns
PEERS = Path(__file__).resolve().parents[3] / "shared" / "kernels" / "peers"
ORDERS = ("lt", "le", "gt", "ge")


def _carry_graph(t: IntType) -> Graph:
    """f(a, b) = (a + b, a - b, -a (signed), a < b, a <= b, a > b, a >= b)."""
    g = Graph("c.kera")
    a, b = param(g, 0, "a", t, Span(0, 1)), param(g, 1, "b", t, Span(2, 3))
    outs = [g.add("add", t, (a, b), span=Span(4, 5)), g.add("sub", t, (a, b), span=Span(6, 7))]
    if t.signed:
        outs.append(g.add("neg", t, (a,)))
    outs += [g.add(op, BOOL, (a, b)) for op in ORDERS]
    g.add_region(Region("f", (a, b), g.add("tuple", TupleType(tuple(
        g.nodes[o].type for o in outs)), tuple(outs))))
    return g


def _same(g: Graph, h: Graph, inputs: dict[str, np.ndarray]) -> None:
    want, got = evaluate(g, "f", inputs), evaluate(h, "f", inputs)
    for k, (w, x) in enumerate(zip(want, got, strict=True)):
        bad = np.flatnonzero(np.asarray(w) != np.asarray(x))
        assert bad.size == 0, (k, {n: v[bad[:4]] for n, v in inputs.items()})


def _ops(g: Graph) -> list[str]:
    return [n.op for n in g.nodes.values()]


def _widest(g: Graph, op: str) -> int:
    return max((n.type.flat_width for n in g.nodes.values() if n.op == op), default=0)


def _values(t: IntType) -> np.ndarray:
    return np.arange(t.min, t.max + 1).astype(np.int64 if t.signed else np.uint64)


@pytest.mark.parametrize("usable", [0.951, 1.051], ids=["k1", "k3"])
@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
@pytest.mark.parametrize("width", [6, 7])
def test_carry_chains_exhaustive(width: int, signed: bool, usable: float) -> None:
    t = IntType(width, signed)
    g = _carry_graph(t)
    h = decompose_for_timing(g, CostModel(MODEL), usable)
    # every adder left fits: 3 bits (one-bit segments) or 5 bits (three-bit segments)
    limit = 3 if usable < 1 else 5
    assert 0 < _widest(h, "add") <= limit and _widest(h, "sub") <= limit
    assert not set(ORDERS) & set(_ops(h)) and "neg" not in _ops(h)
    a, b = (x.ravel() for x in np.meshgrid(_values(t), _values(t)))
    _same(g, h, {"a": a, "b": b})


def test_ops_that_fit_are_left_alone() -> None:
    g = _carry_graph(uint(8))
    assert decompose_for_timing(g, CostModel(MODEL), 2.0) is g


def test_known_zero_top_bits_are_not_segmented() -> None:
    """(a as u12) + (b as u12) of two u6: a 6-bit chain, the carry on top, zeros above."""
    g = Graph("z.kera")
    a, b = param(g, 0, "a", uint(6)), param(g, 1, "b", uint(6))
    wide = uint(12)
    xa, xb = g.add("cast", wide, (a,)), g.add("cast", wide, (b,))
    outs = (g.add("add", wide, (xa, xb)), g.add("sub", wide, (xa, xb)),
            g.add("ge", BOOL, (xa, xb)))
    g.add_region(Region("f", (a, b), g.add("tuple", TupleType((wide, wide, BOOL)), outs)))
    h = decompose_for_timing(g, CostModel(MODEL), 0.951)
    assert _widest(h, "add") <= 3 and _widest(h, "sub") <= 3
    assert sum(n.op in ("add", "sub") for n in h.nodes.values()) == 2 * 6  # 6 one-bit segments
    a_, b_ = (x.ravel() for x in np.meshgrid(_values(uint(6)), _values(uint(6))))
    _same(g, h, {"a": a_, "b": b_})


@settings(max_examples=40, deadline=None)
@given(width=st.integers(9, 64), signed=st.booleans(), usable=st.floats(0.96, 2.5),
       seed=st.integers(0, 2**32 - 1))
def test_carry_chains_wide_random(width: int, signed: bool, usable: float, seed: int) -> None:
    t = IntType(width, signed)
    g = _carry_graph(t)
    h = decompose_for_timing(g, CostModel(MODEL), usable)
    rng = np.random.default_rng(seed)
    dt = np.int64 if signed else np.uint64
    raw = rng.integers(0, 2**63, size=(2, 400), dtype=np.uint64) << np.uint64(1)
    raw |= rng.integers(0, 2, size=(2, 400), dtype=np.uint64)
    edges = np.array([0, 1, t.max, t.min, t.max - 1, t.min + 1], dtype=object)
    vals = []
    for row in raw:
        v = (row & np.uint64((1 << width) - 1)).astype(object)
        if signed:
            v = np.where(v >= 1 << (width - 1), v - (1 << width), v)
        vals.append(np.concatenate([v, edges]).astype(dt))
    a = np.repeat(vals[0], 2)
    b = np.concatenate([vals[1], vals[1][::-1]])
    _same(g, h, {"a": a, "b": b})


def _mul_graph(t: IntType, c: int, mask: int, lo: int, n: int) -> Graph:
    """f(x) = bits lo..lo+n of (x & mask) * c."""
    g = Graph("m.kera")
    x = param(g, 0, "x", t)
    xm = g.add("and", t, (x, const(g, t, mask)))
    p = g.add("mul", t, (xm, const(g, t, c)), span=Span(9, 10))
    g.add_region(Region("f", (x,), g.add("slice", uint(n), (p,), {"lo": lo})))
    return g


def test_popcount_multiply_is_a_narrow_byte_sum() -> None:
    """x * 0x0101010101010101 >> 56 of nibble-masked bytes: 8 terms of 8 bits, no wide adder."""
    t = uint(64)
    g = _mul_graph(t, 0x0101010101010101, 0x0F0F0F0F0F0F0F0F, 56, 8)
    h = decompose_for_timing(g, CostModel(MODEL), 3.0)
    assert "mul" not in _ops(h)
    assert _ops(h).count("add") == 7 and _widest(h, "add") == 8
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.integers(0, 2**63, 3000, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
                        np.array([0, 2**64 - 1], dtype=np.uint64)])
    _same_one(g, h, {"x": x})


def _same_one(g: Graph, h: Graph, inputs: dict[str, np.ndarray]) -> None:
    want, got = np.asarray(evaluate(g, "f", inputs)), np.asarray(evaluate(h, "f", inputs))
    bad = np.flatnonzero(want != got)
    assert bad.size == 0, {n: v[bad[:4]] for n, v in inputs.items()}


@settings(max_examples=60, deadline=None)
@given(width=st.integers(2, 64), signed=st.booleans(), data=st.data())
def test_constant_multiplies_random(width: int, signed: bool, data: st.DataObject) -> None:
    t = IntType(width, signed)
    c = data.draw(st.integers(0, (1 << width) - 1))
    mask = data.draw(st.integers(0, (1 << width) - 1))
    lo = data.draw(st.integers(0, width - 1))
    n = data.draw(st.integers(1, width - lo))
    g = _mul_graph(t, c - (1 << width) if signed and c >> (width - 1) else c,
                   mask - (1 << width) if signed and mask >> (width - 1) else mask, lo, n)
    h = decompose_for_timing(g, CostModel(MODEL), 0.5)  # no multiply fits: always rewritten
    assert "mul" not in _ops(h)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    raw = rng.integers(0, 2**63, 500, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    v = (raw & np.uint64((1 << width) - 1)).astype(object)
    if signed:
        v = np.where(v >= 1 << (width - 1), v - (1 << width), v)
    _same_one(g, h, {"x": v.astype(np.int64 if signed else np.uint64)})


@pytest.mark.parametrize(("length", "index_width"), [(256, 8), (13, 4), (13, 6), (40, 5), (5, 8)])
def test_constant_table_lookup_is_a_mux_tree(length: int, index_width: int) -> None:
    rng = np.random.default_rng(length)
    g = Graph("s.kera")
    i = param(g, 0, "i", uint(index_width))
    table = g.add("array", ArrayType(uint(8), length),
                  tuple(const(g, uint(8), int(v)) for v in rng.integers(0, 256, length)))
    g.add_region(Region("f", (i,), g.add("array_index", uint(8), (table, i))))
    h = decompose_for_timing(g, CostModel(MODEL), 0.9)  # a ROM of b > 4 index bits: 2+ levels
    lookups = [n for n in h.nodes.values() if n.op == "array_index"]
    if length >= 32:
        assert all(h.nodes[n.inputs[0]].type.length < length for n in lookups)
    _same_one(g, h, {"i": np.arange(1 << index_width, dtype=np.uint64)})


def test_peer_kernels_now_schedule_at_55_mhz() -> None:
    for name in ("popcount64", "isqrt32"):
        loaded = load(PEERS / f"{name}.kera")
        s = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55.0)[0]
        assert s.latency > 1
        costs = CostModel(load_model("ice40"))
        for n in s.graph.nodes.values():  # a 64-bit add is left only as short chains (SWAR)
            if n.op == "add" and n.type.flat_width >= 64:
                q = costs.narrow_query(s.graph, n)
                assert q is not None
                chain = costs.chain(s.graph, n, q)
                assert chain is not None and chain.longest < 16
        schedule(s.graph, s.region, family="ice40", clock_mhz=55.0)  # fits by itself, too


@needs_verilator
def test_segmented_adder_is_cycle_exact_in_simulation(tmp_path: Path) -> None:
    from kera import _api

    src = tmp_path / "a.kera"
    src.write_text("#[top]\npub fn a(x: u32, y: u32) -> u32 {\n    x + y\n}\n", encoding="utf-8")
    loaded = load(src)
    rows = [{"x": x, "y": y} for x, y in [(0, 0), (2**32 - 1, 1), (0xFFFF, 1), (0x7FFFFFFF, 1),
                                           (123456789, 987654321), (2**32 - 1, 2**32 - 1)]]
    sim = _api.simulate(loaded, rows, board="icebreaker", clock_mhz=100.0)
    assert sim.schedule.latency > 1 and "add" in _ops(sim.schedule.graph)
    assert _widest(sim.schedule.graph, "add") < 32
    assert sim.passed
    assert sim.result.latency_observed == sim.schedule.latency
    assert sim.outputs == [(r["x"] + r["y"]) % 2**32 for r in rows]


@settings(max_examples=25, deadline=None)
@given(mask=st.integers(0, 2**16 - 1), shift=st.integers(1, 8), usable=st.floats(0.96, 1.3))
def test_additions_cut_where_no_carry_crosses(mask: int, shift: int, usable: float) -> None:
    """SWAR field sums (x & m) + ((x >> k) & m): exact on every u16, whatever the cuts."""
    t = uint(16)
    g = Graph("w.kera")
    x = param(g, 0, "x", t)
    m = const(g, t, mask)
    lo = g.add("and", t, (x, m))
    hi = g.add("and", t, (g.add("shr", t, (x, const(g, uint(32), shift))), m))
    g.add_region(Region("f", (x,), g.add("add", t, (lo, hi))))
    h = decompose_for_timing(g, CostModel(MODEL), usable)
    _same_one(g, h, {"x": np.arange(1 << 16, dtype=np.uint64)})


def test_nibble_sums_are_independent_adders() -> None:
    g = Graph("n.kera")
    t = uint(64)
    x = param(g, 0, "x", t)
    m = const(g, t, 0x3333_3333_3333_3333)
    lo = g.add("and", t, (x, m))
    hi = g.add("and", t, (g.add("shr", t, (x, const(g, uint(32), 2))), m))
    g.add_region(Region("f", (x,), g.add("add", t, (lo, hi))))
    # its chain is 16 runs of 3 positions (kera.hls.carries): 0.95 ns, which fits 1 ns whole
    kept = decompose_for_timing(g, CostModel(MODEL), 1.0)
    assert [n.type.flat_width for n in kept.nodes.values() if n.op == "add"] == [64]
    h = decompose_for_timing(g, CostModel(MODEL), 0.9)
    adds = [n for n in h.nodes.values() if n.op == "add"]
    assert len(adds) == 16 and {a.type.flat_width for a in adds} <= {3, 4}  # one per nibble


def test_constant_table_is_costed_as_a_rom_not_a_mux_of_variables() -> None:
    """An 8-bit S-box: 8 functions of 8 index bits (ECP5: 16 LUT4 + a mux LUT each, 2 levels)."""
    from kera.hls.models import load_model

    rng = np.random.default_rng(7)
    g = Graph("s.kera")
    i = param(g, 0, "i", uint(8))
    table = g.add("array", ArrayType(uint(8), 256),
                  tuple(const(g, uint(8), int(v)) for v in rng.permutation(256)))
    g.add_region(Region("f", (i,), g.add("array_index", uint(8), (table, i))))
    node = g.nodes[g.regions["f"].result]
    ecp5 = CostModel(load_model("ecp5"))
    assert ecp5.rom_cost(g, node) == (2, 8 * 17)
    # two LUT levels, and the nets of an index bit that drives 128 LUTs (rom_fanout_ns)
    assert ecp5.area(g, node)["lut"] == 136
    assert ecp5.delay(g, node) == pytest.approx(2 * ecp5.level_ns + ecp5.rom_fanout_ns(g, node))
    assert CostModel(load_model("ice40")).rom_cost(g, node) == (3, 8 * 31)


def test_a_stateful_accumulator_is_segmented_and_keeps_its_state(tmp_path: Path) -> None:
    """`s = s + x` on u64 at 55 MHz: refused before; now segments, II their count (the
    recurrence runs through each segment's carry): 3, since each segment's carry out costs a
    net (``CostModel.carry_out``; 2 before)."""
    src = tmp_path / "acc.kera"
    src.write_text("#[top]\npub fn acc(x: u64) -> u64 {\n    reg s: u64 = 0;\n    s = s + x;\n"
                   "    s\n}\n", encoding="utf-8")
    loaded = load(src)
    s = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55.0)[0]
    segments = sum(1 for n in s.graph.nodes.values() if n.op == "add" and n.type.flat_width > 1)
    assert s.ii == segments == 3 and _widest(s.graph, "add") < 64
    x = np.array([2**64 - 1, 1, 5, 2**32 - 1, 2**32 + 1, 2**63], dtype=np.uint64)
    want = evaluate(loaded.graph, loaded.top, {"x": x})
    got = evaluate(s.graph, s.region, {"x": x})
    assert np.array_equal(np.asarray(want), np.asarray(got))


@pytest.mark.parametrize("low", ["cast", "slice"])
@pytest.mark.parametrize("order", ["ge", "le"])
def test_a_narrowed_difference_is_the_low_bits_of_its_compares_chain(low: str, order: str
                                                                     ) -> None:
    """``if x >= k { (x as u7 - k as u7) as u8 } else { x }`` (kera.opt.narrow's form) on u8.

    With SimpleModel (0.8 + 0.05 w ns) and 1.16 ns usable, the 8-bit compare (1.2 ns) is too
    slow and the 7-bit difference (1.15 ns) fits; the widest subtraction that fits has 7 bits,
    so a segment holds 5, and the 8 compared bits are two segments of 4 (a 5- and a 6-bit
    subtraction). The difference is the low 7 bits of the same chain: 2 subtractions in all,
    not 3 (two chains on the same bits, which yosys places side by side)."""
    t, n = uint(8), uint(7)
    g = Graph("g.kera")
    x, k = param(g, 0, "x", t), param(g, 1, "k", t)
    test = g.add("ge", BOOL, (x, k)) if order == "ge" else g.add("le", BOOL, (k, x))
    lows = [g.add("cast", n, (v,)) if low == "cast" else g.add("slice", n, (v,), {"lo": 0})
            for v in (x, k)]
    diff = g.add("cast", t, (g.add("sub", n, tuple(lows)),))
    g.add_region(Region("f", (x, k), g.add("select", t, (test, diff, x))))
    h = decompose_for_timing(g, CostModel(MODEL), 1.16)
    subs = sorted(nd.type.flat_width for nd in h.nodes.values() if nd.op == "sub")
    assert subs == [5, 6] and not set(ORDERS) & set(_ops(h))
    a, b = (v.ravel() for v in np.meshgrid(_values(t), _values(t)))
    _same_one(g, h, {"x": a, "k": b})


@pytest.mark.parametrize(("width", "mask", "rewritten"), [
    (8, 0x55, True), (7, 0x55, True), (6, 0x15, True), (8, 0x15, False), (8, 0xAA, False)])
def test_pair_counts_of_a_swar_popcount_are_independent_sums(width: int, mask: int,
                                                             rewritten: bool) -> None:
    """x - ((x >> 1) & m), too slow as one chain (SimpleModel: sub of w bits 0.8 + 0.05 w ns,
    1.0 ns usable), is (x & m) + ((x >> 1) & m) when m = 0b..0101 covers, with m << 1, every
    bit (u8 0x55, u7 0x55, u6 0x15): fields of two bits that never carry, one 2-bit sum per
    field (u7's top field is one bit), no subtraction. With 0x15 on u8 (bits 6, 7 left out) or
    0xAA it stays a (segmented) subtraction. Exact on every x."""
    t = uint(width)
    g = Graph("p.kera")
    x = param(g, 0, "x", t)
    pairs = g.add("and", t, (g.add("shr", t, (x, const(g, uint(32), 1))), const(g, t, mask)))
    g.add_region(Region("f", (x,), g.add("sub", t, (x, pairs))))
    h = decompose_for_timing(g, CostModel(MODEL), 1.0)
    sums = [n.type.flat_width for n in h.nodes.values() if n.op == "add"]
    if rewritten:
        assert "sub" not in _ops(h) and sums == [2] * (width // 2) + [1] * (width % 2)
    else:
        assert "sub" in _ops(h)
    _same_one(g, h, {"x": np.arange(1 << width, dtype=np.uint64)})


def _var_mul_graph(t: IntType) -> Graph:
    g = Graph("m.kera")
    a, b = param(g, 0, "a", t), param(g, 1, "b", t)
    g.add_region(Region("f", (a, b), g.add("mul", t, (a, b))))
    return g


def _random_of(t: IntType, rng: np.random.Generator, n: int) -> np.ndarray:
    v = (rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2)
         + rng.integers(0, 2, n, dtype=np.uint64)) & np.uint64((1 << t.width) - 1)
    v = v.astype(object)
    if t.signed:
        v = np.where(v >= 1 << (t.width - 1), v - (1 << t.width), v)
    edges = np.array([t.min, t.max, 0, 1, -1 if t.signed else t.max - 1], dtype=object)
    return np.concatenate([v, edges]).astype(np.int64 if t.signed else np.uint64)


@pytest.mark.parametrize("t", [uint(32), IntType(32, True), uint(24), IntType(20, True),
                               uint(64), IntType(64, True), uint(48), IntType(40, True)],
                         ids=str)
def test_a_wide_variable_multiply_becomes_dsp_sized_partial_products(t: IntType) -> None:
    """On ECP5 at 150 MHz a 17- to 64-bit variable multiply is too slow on one MULT18X18D
    and too wide for its 18-bit operands: it becomes the products of 16-bit pieces that reach
    below the result's top (3 for 32 bits, 6 for 33 to 48, 10 for 64; each one pipelined
    DSP) and their sums, bit-exact on random and edge values."""
    g = _var_mul_graph(t)
    costs = CostModel(load_model("ecp5"))
    h = decompose_for_timing(g, costs, 4.8)
    muls = [n for n in h.nodes.values() if n.op == "mul"]
    pieces = -(-t.width // 16)
    assert len(muls) == pieces * (pieces + 1) // 2
    assert all(CostModel(load_model("ecp5")).can_pipeline(h, m) for m in muls)
    rng = np.random.default_rng(t.width)
    _same_one(g, h, {"a": _random_of(t, rng, 3000), "b": _random_of(t, rng, 3000)})
    # without a pipelined DSP (iCE40: nextpnr does not time SB_MAC16) it is shift-and-add
    lut = decompose_for_timing(g, CostModel(load_model("ice40")), 4.8)
    assert "mul" not in _ops(lut)
    _same_one(g, lut, {"a": _random_of(t, rng, 500), "b": _random_of(t, rng, 500)})
    # an i17 product fits one 18-bit DSP: the scheduler pipelines it whole
    narrow = _var_mul_graph(IntType(17, True))
    assert decompose_for_timing(narrow, costs, 4.8).nodes.keys() == narrow.nodes.keys()


@pytest.mark.parametrize(("t", "budget"), [(uint(64), 8), (IntType(64, True), 8),
                                          (uint(48), 4), (uint(32), 2)], ids=str)
def test_a_multiply_over_the_dsp_budget_puts_its_widest_pieces_on_the_dsps(
        t: IntType, budget: int) -> None:
    """A variable multiply that needs more SB_MAC16s than the budget leaves is split into the
    products of 16-bit pieces (10 for 64 bits, 6 for 48, 3 for 32), of which the budget takes
    the widest and LUTs the rest; bit-exact. With no DSP left it stays one LUT multiply."""
    g = _var_mul_graph(t)
    costs = CostModel(load_model("ice40"), budget)
    assert costs.lut_multipliers(g) and costs.dsps_left(g, g.regions["f"].result) == budget
    h = decompose_for_timing(g, costs, 1000.0)
    muls = [n for n in h.nodes.values() if n.op == "mul"]
    pieces = -(-t.width // 16)
    assert len(muls) == pieces * (pieces + 1) // 2
    on_lut = CostModel(load_model("ice40"), budget).lut_multipliers(h)
    assert len(muls) - len(on_lut) == budget  # every DSP used, one piece each
    assert max(h.nodes[n].type.width for n in on_lut) <= min(
        n.type.width for n in muls if n.id not in on_lut)
    rng = np.random.default_rng(t.width)
    _same_one(g, h, {"a": _random_of(t, rng, 2000), "b": _random_of(t, rng, 2000)})
    spent = CostModel(load_model("ice40"), 0)
    assert decompose_for_timing(g, spent, 1000.0).nodes.keys() == g.nodes.keys()


def test_a_u64_multiply_on_an_up5k_takes_its_eight_dsps_not_the_whole_device() -> None:
    """tests/opt/kernels/mul64.kera on icebreaker at 12 MHz: the whole product as a LUT
    multiplier was 97 % of the UP5K's LUTs; split, the 8 SB_MAC16 take eight of its ten
    pieces (yosys + nextpnr, benchmarks/qor.py: 734 LUT, 49 FF, 8 SB_MAC16)."""
    from kera.hls.resources import estimate

    loaded = load(str(Path(__file__).resolve().parents[1] / "opt" / "kernels" / "mul64.kera"))
    sched, board, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker")
    est = estimate(sched, CostModel(model), board.capacities).total
    assert est["dsp"] == board.capacities.dsp == 8
    assert est["lut"] < 0.25 * board.capacities.lut
    # the result's 64 flip-flops and the valid bit, less the low half of the lowest piece,
    # which is the result's low 16 bits: yosys puts them in that SB_MAC16's output register
    assert est["ff"] == 64 + 1 - 16


def test_a_u32_multiply_schedules_at_150_mhz_on_ecp5(tmp_path: Path) -> None:
    """Refused before ("`mul` (32 bits) needs 9.5 ns ... try --clock-mhz 83"); placed at
    177.9 MHz (median of 3 nextpnr seeds, 3 MULT18X18D)."""
    src = tmp_path / "m.kera"
    src.write_text("#[top]\npub fn m(a: u32, b: u32) -> u32 {\n    a * b\n}\n")
    p = load(str(src))
    s, _, _ = plan_schedule(p.graph, p.top, board="ulx3s", clock_mhz=150)
    assert len(s.pipelined) == 3 and s.latency >= 2


def _apply(recipe: tuple, x: int, n: int) -> int:
    """Evaluate a ``mul_plan`` recipe on ``x`` modulo ``2**n``, as ``_build`` wires it."""
    kind, m = recipe[0], (1 << n) - 1
    if kind == "zero":
        return 0
    if kind == "x":
        return x & m
    if kind == "shl":
        s = recipe[1]
        return (_apply(recipe[2], x & ((1 << (n - s)) - 1), n - s) << s) & m
    if kind == "csd":
        plus, minus = _csd(recipe[1], n)
        return (sum(x << p for p in plus) - sum(x << q for q in minus)) & m
    if kind == "fact":
        t = _apply(recipe[3], x, n)
        return ((t << recipe[1]) + recipe[2] * t) & m
    return (_apply(recipe[2], x, n) + recipe[1] * x) & m


def _adders(recipe: tuple, n: int) -> int:
    """The adders a recipe wires (a sum of d signed digits: d - 1)."""
    kind = recipe[0]
    if kind == "csd":
        plus, minus = _csd(recipe[1], n)
        return len(plus) + len(minus) - 1
    if kind == "shl":
        return _adders(recipe[2], n - recipe[1])
    if kind == "fact":
        return _adders(recipe[3], n) + 1
    if kind == "pm":
        return _adders(recipe[2], n) + 1
    return 0


@settings(max_examples=300, deadline=None)
@given(n=st.integers(2, 64), data=st.data())
def test_a_constant_multiply_plan_is_exact_and_no_dearer_than_its_digits(
        n: int, data: st.DataObject) -> None:
    """``mul_plan``: factors ``2**k +- 1`` and steps of one (Bernstein) where they save
    adders; its recipe is the product modulo ``2**n`` and wires the adders it claims."""
    c = data.draw(st.integers(1, (1 << n) - 1))
    adds, recipe = mul_plan(c, n)
    plus, minus = _csd(c, n)
    assert adds <= max(0, len(plus) + len(minus) - 1)
    assert adds == _adders(recipe, n)
    for x in (0, 1, (1 << n) - 1, data.draw(st.integers(0, (1 << n) - 1))):
        assert _apply(recipe, x, n) == (x * c) & ((1 << n) - 1)


def test_a_repeating_constant_factors() -> None:
    """u32 ``x / 10``'s multiply-high by 0x66666667 (16 signed digits): 5 adders."""
    assert mul_plan(0x66666667, 62)[0] == 5
    assert mul_plan(0x0101010101010101, 64)[0] == 3


def _widening_graph(n: int, c: int) -> Graph:
    t = uint(n)
    g = Graph("w.kera")
    x = param(g, 0, "x", t)
    p = g.add("widening_mul", uint(2 * n), (x, const(g, t, c)), span=Span(9, 10))
    g.add_region(Region("f", (x,), p))
    return g


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 32), data=st.data())
def test_a_widening_multiply_by_a_constant_becomes_shift_and_add(
        n: int, data: st.DataObject) -> None:
    """An unsigned ``widening_mul`` too slow for the period is the ``mul`` of its operands
    zero-extended to the product's width: shift-and-add, bit-exact on random and edge values."""
    c = data.draw(st.integers(0, (1 << n) - 1))
    g = _widening_graph(n, c)
    h = decompose_for_timing(g, CostModel(MODEL), 0.5)
    assert not {"mul", "widening_mul"} & set(_ops(h))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    _same_one(g, h, {"x": _random_of(uint(n), rng, 400)})


@pytest.mark.parametrize(("board", "clock"), [("icebreaker", 55.0), ("ulx3s", 150.0)])
def test_a_u32_division_by_ten_schedules_at_the_tight_clocks(board: str, clock: float) -> None:
    """u32 ``x / 10`` (and ``x % 10``) was refused at both tight clocks ("`widening_mul` (31
    bits) needs 48.6 ns" on iCE40, 10.6 ns on ECP5): its multiply-high by 0x66666667 is now
    5 adders, segmented for the period (tests/opt/kernels/div10.kera; parity interp/rtl 0
    mismatches on 3,385 vectors at both clocks)."""
    p = load(str(Path(__file__).resolve().parents[1] / "opt" / "kernels" / "div10.kera"))
    s, _, _ = plan_schedule(p.graph, p.top, board=board, clock_mhz=clock)
    assert "widening_mul" not in {s.graph.nodes[n].op for n in s.order
                                  if s.graph.nodes[n].type.flat_width > 32}


def _var_table(g: Graph, length: int, first: int) -> tuple[bytes, list[bytes]]:
    """An array of ``length`` variable u8 elements (params ``e0``.. from index ``first``): a
    `mem` in flip-flops is such a value."""
    elems = [param(g, first + k, f"e{k}", uint(8)) for k in range(length)]
    return g.add("array", ArrayType(uint(8), length), tuple(elems)), elems


@pytest.mark.parametrize(("length", "index_width"), [(16, 4), (13, 4), (40, 6), (5, 2)])
def test_a_lookup_in_a_variable_array_is_a_mux_tree(length: int, index_width: int) -> None:
    """A read at a variable index of an array of variables (delay_line's 64 x i16 `mem` in
    flip-flops) becomes the same two-level mux tree as a ROM, over the reads at constant
    indices (wires); bit-exact with the clamped read's semantics."""
    g = Graph("v.kera")
    i = param(g, 0, "i", uint(index_width))
    table, elems = _var_table(g, length, 1)
    g.add_region(Region("f", (i, *elems), g.add("array_index", uint(8), (table, i))))
    h = decompose_for_timing(g, CostModel(MODEL), 0.9)
    if length >= 16:
        assert all(h.nodes[n.inputs[0]].type.length < length for n in h.nodes.values()
                   if n.op == "array_index" and h.nodes[n.inputs[1]].op != "const")
    rng = np.random.default_rng(length)
    inputs = {"i": rng.integers(0, 1 << index_width, 600).astype(np.uint64)}
    inputs |= {f"e{k}": rng.integers(0, 256, 600).astype(np.uint64) for k in range(length)}
    _same_one(g, h, inputs)


class _SliceMuxModel(SimpleModel):
    """The same delays on a family whose slices multiplex two LUTs (ECP5)."""

    family = "ecp5"


@pytest.mark.parametrize(("length", "index_width"), [(16, 4), (13, 4), (40, 6), (5, 2),
                                                     (3, 8)])
def test_on_ecp5_a_lookup_in_a_variable_array_is_a_tree_of_selects(length: int,
                                                                   index_width: int) -> None:
    """On ECP5 a read of an array of variables by a variable index is one select per index
    bit at any clock (two levels to a slice's 4:1 multiplexers: ``kera.hls.muxpair``),
    bit-exact with the clamped read's semantics."""
    g = Graph("v.kera")
    i = param(g, 0, "i", uint(index_width))
    table, elems = _var_table(g, length, 1)
    g.add_region(Region("f", (i, *elems), g.add("array_index", uint(8), (table, i))))
    h = decompose_for_timing(g, CostModel(_SliceMuxModel()), 100.0)
    assert not any(n.op == "array_index" and h.nodes[n.inputs[1]].op != "const"
                   for n in h.nodes.values())
    selects = sum(1 for n in h.nodes.values() if n.op == "select")
    assert selects >= min(length, 1 << index_width) - 1  # a select removes one candidate
    rng = np.random.default_rng(length)
    inputs = {"i": rng.integers(0, 1 << index_width, 600).astype(np.uint64)}
    inputs |= {f"e{k}": rng.integers(0, 256, 600).astype(np.uint64) for k in range(length)}
    _same_one(g, h, inputs)


def test_a_read_of_the_word_just_written_is_forwarded() -> None:
    """``m[b]`` after ``m[a] = x`` (both indices in range by their type) is ``a == b ? x :
    old m[b]``: the read no longer waits for the write (delay_line at 55 and 150 MHz)."""
    g = Graph("u.kera")
    a, b, x = (param(g, k, n, uint(w)) for k, (n, w) in enumerate((("a", 4), ("b", 4),
                                                                    ("x", 8))))
    table, elems = _var_table(g, 16, 3)
    upd = g.add("array_update", ArrayType(uint(8), 16), (table, a, x))
    g.add_region(Region("f", (a, b, x, *elems), g.add("array_index", uint(8), (upd, b))))
    h = decompose_for_timing(g, CostModel(MODEL), 0.9)
    assert "array_update" not in _ops(h)
    rng = np.random.default_rng(7)
    inputs = {n: rng.integers(0, 16, 800).astype(np.uint64) for n in ("a", "b")}
    inputs["b"][::3] = inputs["a"][::3]  # a third hit the written word
    inputs |= {n: rng.integers(0, 256, 800).astype(np.uint64)
               for n in ("x", *(f"e{k}" for k in range(16)))}
    _same_one(g, h, inputs)


@pytest.mark.parametrize("clock", [12.0, 55.0])
def test_delay_line_reads_its_block_ram_past_the_write(clock: float) -> None:
    """delay_line writes `buf[ptr] = x` and then reads `buf[ptr - delay]` in one transfer:
    the read is forwarded past the write (`ptr == ptr - delay ? x : buf[...]`), so the
    buffer has one read and one write port and is a block RAM at any clock (it was 64 x 16
    flip-flops and a 64-way mux: 2,344 LUTs and 1,047 FFs at 12 MHz, refused at 55 MHz with
    "`array_index` (16 bits) needs 18.5 ns")."""
    from kera.hls.resources import estimate

    p = load(str(Path(__file__).resolve().parents[2] / "examples" / "delay_line.kera"))
    s, _, model = plan_schedule(p.graph, p.top, board="icebreaker", clock_mhz=clock)
    assert s.state is not None and [m.mapped_to for m in s.state.mems] == ["bram"]
    res = estimate(s, CostModel(model))
    assert res.total["bram"] == 1 and res.total["lut"] < 200 and res.total["ff"] < 200


@pytest.mark.parametrize("width", [1, 2, 3, 5, 8, 13, 32, 64])
def test_a_popcount_is_nibble_counts_and_an_adder_tree(width: int) -> None:
    """At any clock: a count bit of each nibble is one function of its bits (no gate shared
    between two count bits), then adders as narrow as their counts; exact on edges and at
    random (exhaustive up to 13 bits)."""
    t = uint(width)
    g = Graph("p.kera")
    x = param(g, 0, "x", t)
    g.add_region(Region("f", (x,), g.add("popcount", t, (x,))))
    h = decompose_for_timing(g, CostModel(MODEL), 100.0)
    assert "popcount" not in _ops(h)
    sums = sorted(n.type.flat_width for n in h.nodes.values() if n.op == "add")
    nibbles = -(-width // 4)
    assert len(sums) == max(0, nibbles - 1)
    assert all(w <= (width.bit_length()) for w in sums)
    if width <= 13:
        xs = np.arange(1 << width, dtype=np.uint64)
    else:
        rng = np.random.default_rng(width)
        xs = (rng.integers(0, 2**63, 4000, dtype=np.uint64) * np.uint64(2) + rng.integers(
            0, 2, 4000, dtype=np.uint64)) & np.uint64(t.mask)
        xs = np.concatenate([xs, np.array([0, t.mask, t.mask - 1, 1], dtype=np.uint64)])
    _same_one(g, h, {"x": xs})


def test_a_popcount_costs_its_nibbles_and_its_adders_on_ice40() -> None:
    """popcount64 as 16 nibble counts (3 LUT4 each) and 15 adders, the registered total's top
    bit an ``and`` (``tests/hls/test_count_sums.py``): 48 + 1 + 56 LUTs and the handshake's 3
    (yosys 0.70 + nextpnr 0.11, icebreaker at 12 MHz: 108 SB_LUT4), and 7 flip-flops of the
    count: the 57 above are known zero."""
    from kera.hls.resources import estimate

    loaded = load(PEERS / "popcount64.kera")
    s = plan_schedule(loaded.graph, loaded.top, board="icebreaker")[0]
    assert "popcount" not in _ops(s.graph) and "mul" not in _ops(s.graph)
    res = estimate(s, CostModel(load_model("ice40")))
    assert res.by_op["add"]["count"] == 15
    assert res.by_op["xor"]["lut"] + res.by_op["and"]["lut"] == 48 + 1
    assert res.total["lut"] == 108 and res.total["ff"] == 8


@pytest.mark.parametrize(("width", "cells"), [(5, 3), (6, 3), (7, 4), (8, 4)])
def test_an_ecp5_sum_just_above_the_gate_sums_is_a_chain(width: int, cells: int) -> None:
    """yosys builds a sum of 5 to 7 bits on CCU2C cells (two bits each, no LUT4), which the
    fitted table, a gate sum at 4 bits and a chain at 8, would have mixed: popcount64's
    adder tree (4, 5, 6 and 7 bits) is 22 CCU2C in yosys 0.70's netlist."""
    costs = CostModel(load_model("ecp5"))
    area = costs._query_area(("add", width, None))
    assert area["carry"] == cells and area["lut"] == 0
    loaded = load(PEERS / "popcount64.kera")
    s = plan_schedule(loaded.graph, loaded.top, board="ulx3s")[0]
    from kera.hls.resources import estimate

    assert estimate(s, costs).total["carry"] == 22


@pytest.mark.parametrize("op", ["mul", "widening_mul"])
@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
def test_a_variable_multiply_too_slow_for_any_dsp_is_shift_and_add(op: str, signed: bool
                                                                    ) -> None:
    """Where no DSP form fits the period (SimpleModel has no pipelined DSP), ``a * b`` is the
    masked shifts of ``a`` by the bits of ``b``, summed by adders: exact on every pair of
    6-bit operands, signed or not, and for the widening product too."""
    t = IntType(6, signed)
    out = IntType(12, signed) if op == "widening_mul" else t
    g = Graph("m.kera")
    a, b = param(g, 0, "a", t), param(g, 1, "b", t)
    g.add_region(Region("f", (a, b), g.add(op, out, (a, b))))
    h = decompose_for_timing(g, CostModel(MODEL), 1.0)
    assert op not in _ops(h) and "add" in _ops(h)
    xs, ys = (v.ravel() for v in np.meshgrid(_values(t), _values(t)))
    _same_one(g, h, {"a": xs, "b": ys})


def test_mat2_schedules_at_55_mhz_on_ice40_with_lut_multipliers() -> None:
    """mat2's eight u8 x u8 products (formed in u17) were refused at 55 MHz on iCE40 ("`mul`
    (17 bits) needs 19.8 ns"): nextpnr does not time an SB_MAC16, so the model costs it as the
    LUT multiplier it cannot prove faster, and no pipelined SB_MAC16 is timed either. Now
    each is eight masked shifts and their adders (yosys 0.70 + nextpnr 0.11, seed 1: 1,103
    SB_LUT4 as estimated, 61.6 MHz placed)."""
    loaded = load(PEERS.parent / "mat2.kera")
    s = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55.0)[0]
    assert "mul" not in _ops(s.graph) and s.latency > 1


@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
def test_a_multiply_of_extended_operands_takes_the_narrow_ones_terms(signed: bool) -> None:
    """``(a as T16) * (b as T16)`` of 8-bit operands: 8 partial products, not 16 (a sign
    extension's top term is subtracted, ``b = b[0..6] - b[7] * 2**7``); exact on every pair."""
    t, wide = IntType(8, signed), IntType(16, signed)
    g = Graph("m.kera")
    a, b = param(g, 0, "a", t), param(g, 1, "b", t)
    ea, eb = (g.add("cast", wide, (x,)) for x in (a, b))
    g.add_region(Region("f", (a, b), g.add("mul", wide, (ea, eb))))
    h = decompose_for_timing(g, CostModel(MODEL), 1.0)
    assert "mul" not in _ops(h)
    masks = [n for n in h.nodes.values() if n.op == "and" and n.type.flat_width > 1]
    assert len(masks) == 8
    xs, ys = (v.ravel() for v in np.meshgrid(_values(t), _values(t)))
    _same_one(g, h, {"a": xs, "b": ys})


@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
@pytest.mark.parametrize("width", [1, 2, 3, 4, 5])
def test_ecp5_sums_too_narrow_for_a_chain_are_gates(width: int, signed: bool) -> None:
    """yosys makes an ``$alu`` of at most 4 result bits gates on ECP5 (``gate_sum_width``),
    and so does the decomposition at any clock: exact on every pair of operands. 5-bit
    operands are chains: sums, differences and comparisons; one-bit results stay as they are
    (yosys folds them further)."""
    t = IntType(width, signed)
    g = _carry_graph(t)
    h = decompose_for_timing(g, CostModel(load_model("ecp5")), 1000.0)
    left = set(_ops(h)) & {"add", "sub", "neg", *ORDERS}
    assert left == (set() if 2 <= width <= 4 else set(_ops(g)) & {"add", "sub", "neg", *ORDERS})
    a, b = (x.ravel() for x in np.meshgrid(_values(t), _values(t)))
    _same(g, h, {"a": a, "b": b})


def test_narrow_unsigned_operands_in_a_wide_type_are_gates_on_ecp5() -> None:
    """The width that counts is yosys's after ``wreduce``: u8 operands known below 8 are a
    3-bit sum (a 4-bit ``$alu``); the bits above are the carry, or copies of the borrow."""
    t = uint(8)
    g = Graph("n.kera")
    a, b = param(g, 0, "a", t, Span(0, 1)), param(g, 1, "b", t, Span(2, 3))
    seven = const(g, t, 7)
    x, y = g.add("and", t, (a, seven)), g.add("and", t, (b, seven))
    outs = [g.add("add", t, (x, y)), g.add("sub", t, (x, y)), g.add("lt", BOOL, (x, y)),
            g.add("ge", BOOL, (y, x))]
    g.add_region(Region("f", (a, b), g.add("tuple", TupleType(tuple(
        g.nodes[o].type for o in outs)), tuple(outs))))
    h = decompose_for_timing(g, CostModel(load_model("ecp5")), 1000.0)
    assert not {"add", "sub", *ORDERS} & set(_ops(h))
    assert decompose_for_timing(g, CostModel(load_model("ice40")), 1000.0) is g  # no ripples
    a_, b_ = (v.ravel() for v in np.meshgrid(_values(t), _values(t)))
    _same(g, h, {"a": a_, "b": b_})


@needs_verilator
def test_an_ecp5_divider_of_narrow_rows_is_cycle_exact_in_simulation(tmp_path: Path) -> None:
    """A u4 division on ECP5: every row is a sum of at most 4 result bits, so the RTL is
    ripple gates (no `add`/`sub`/ordering left but of one-bit operands, which yosys folds),
    and it simulates exactly, cycle by cycle."""
    from kera import _api

    src = tmp_path / "d.kera"
    src.write_text("#[top]\npub fn d(x: u4, y: u4) -> (u4, u4) {\n    (x / y, x % y)\n}\n",
                   encoding="utf-8")
    loaded = load(src)
    rows = [{"x": x, "y": y} for x in range(16) for y in range(16)]
    sim = _api.simulate(loaded, rows, board="ulx3s", clock_mhz=150.0)
    g = sim.schedule.graph
    left = [n for n in g.nodes.values() if n.op in {"add", "sub", "neg", *ORDERS}]
    assert all(g.nodes[i].type.flat_width == 1 for n in left for i in n.inputs)
    assert "xor" in _ops(g) and sim.passed
    assert sim.result.latency_observed == sim.schedule.latency
    want = [[r["x"] // r["y"], r["x"] % r["y"]] if r["y"] else None for r in rows]
    got = [list(o) if isinstance(o, (list, tuple)) else o for o in sim.outputs]
    for w, g in zip(want, got, strict=True):
        if w is not None:
            assert g == w


@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
def test_a_product_of_extended_halves_takes_only_the_nonzero_pieces(signed: bool) -> None:
    """``(a as u64) * (b as u64)`` of two u32: the pieces above bit 32 are known zero, so 4
    DSP products (not 10), at any clock on ECP5 (yosys's own 64-bit multiply took 608 LUT4
    sites where the pieces take 230); an i32 pair sign-extends, so all 10 stay."""
    t, wide = IntType(32, signed), IntType(64, signed)
    g = Graph("m.kera")
    a, b = param(g, 0, "a", t), param(g, 1, "b", t)
    ea, eb = g.add("cast", wide, (a,)), g.add("cast", wide, (b,))
    g.add_region(Region("f", (a, b), g.add("mul", wide, (ea, eb))))
    h = decompose_for_timing(g, CostModel(load_model("ecp5")), 100.0)
    assert sum(n.op == "mul" for n in h.nodes.values()) == (10 if signed else 4)
    rng = np.random.default_rng(7)
    _same_one(g, h, {"a": _random_of(t, rng, 2000), "b": _random_of(t, rng, 2000)})
