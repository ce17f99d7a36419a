"""Variable shifts and rotates, zero counts, equalities and min/max too slow for the period
become mux and reduction trees (``kera.hls.logic_split``): bit-exact, schedulable, cycle-exact."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera import load
from kera.diagnostics import KeraError
from kera.hls.decompose import decompose_for_timing
from kera.hls.logic_split import EQ_GROUP
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel, SimpleModel
from kera.interp import evaluate
from kera.ir.graph import Graph, Region, param
from kera.ir.types import BOOL, IntType, uint
from tests.conftest import needs_verilator

MODEL = SimpleModel()


class _SliceMuxModel(SimpleModel):
    """The same delays on a family whose slices multiplex two LUTs (ECP5): the zero counts'
    trees are radix 4 there (``kera.hls.logic_split._count4``)."""

    family = "ecp5"


SLICE_MUX = _SliceMuxModel()
SLOW = 0.951  # below every shift, count, compare and min/max of 4 bits or more: all split


def _graph(op: str, t: IntType, amount: IntType | None = None) -> Graph:
    g = Graph("l.kera")
    a = param(g, 0, "a", t)
    if op in ("clz", "ctz"):
        g.add_region(Region("f", (a,), g.add(op, t, (a,))))
        return g
    b = param(g, 1, "b", amount or t)
    out_t = BOOL if op in ("eq", "ne") else t
    g.add_region(Region("f", (a, b), g.add(op, out_t, (a, b))))
    return g


def _values(t: IntType) -> np.ndarray:
    return np.arange(t.min, t.max + 1).astype(np.int64 if t.signed else np.uint64)


def _random(t: IntType, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(
        0, 2, n, dtype=np.uint64)
    edges = np.array([0, 1, t.mask, t.mask >> 1, 1 << (t.width - 1)], dtype=np.uint64)
    u = np.concatenate([raw & np.uint64(t.mask), edges])
    if not t.signed:
        return u
    return np.array([int(x) - (1 << t.width) if int(x) >> (t.width - 1) else int(x) for x in u],
                    dtype=np.int64)


def _same(g: Graph, h: Graph, inputs: dict[str, np.ndarray]) -> None:
    want, got = np.asarray(evaluate(g, "f", inputs)), np.asarray(evaluate(h, "f", inputs))
    bad = np.flatnonzero(want != got)
    assert bad.size == 0, {n: v[bad[:4]] for n, v in inputs.items()}


def _ops(g: Graph) -> set[str]:
    return {n.op for n in g.nodes.values()}


def _variable(g: Graph, op: str) -> bool:
    """Whether ``g`` still has ``op`` with an amount that is not a constant."""
    return any(n.op == op and g.nodes[n.inputs[1]].op != "const" for n in g.nodes.values())


@pytest.mark.parametrize("op", ["shl", "shr", "rotl", "rotr"])
@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
@pytest.mark.parametrize("width", [1, 3, 4, 5, 8])
def test_shifts_and_rotates_are_barrels_exhaustive(op: str, signed: bool, width: int) -> None:
    """Every value and every amount of a u4 (so amounts past the width too)."""
    t, amount = IntType(width, signed), uint(4)
    g = _graph(op, t, amount)
    h = decompose_for_timing(g, CostModel(MODEL), SLOW)
    assert not _variable(h, op) and "select" in _ops(h) or width == 1
    a, b = (x.ravel() for x in np.meshgrid(_values(t), _values(amount)))
    _same(g, h, {"a": a, "b": b})


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(["shl", "shr", "rotl", "rotr"]), width=st.integers(4, 64),
       signed=st.booleans(), amount_width=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_wide_shifts_and_rotates_are_exact(op: str, width: int, signed: bool,
                                           amount_width: int, seed: int) -> None:
    t, amount = IntType(width, signed), uint(amount_width)
    g = _graph(op, t, amount)
    h = decompose_for_timing(g, CostModel(MODEL), SLOW)
    levels = (width - 1).bit_length()
    odd_rotate = op in ("rotl", "rotr") and width & (width - 1)
    assert _variable(h, op) == bool(odd_rotate and amount_width > 2 * levels)
    rng = np.random.default_rng(seed)
    b = rng.integers(0, 1 << amount_width, 300).astype(np.uint64)
    _same(g, h, {"a": _random(t, 295, seed), "b": b})


@pytest.mark.parametrize("model", [MODEL, SLICE_MUX], ids=["radix2", "radix4"])
@pytest.mark.parametrize("op", ["clz", "ctz"])
@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 7, 8, 11, 16])
def test_zero_counts_are_trees_exhaustive(op: str, signed: bool, width: int,
                                          model: SimpleModel) -> None:
    t = IntType(width, signed)
    g = _graph(op, t)
    h = decompose_for_timing(g, CostModel(model), SLOW)
    assert op not in _ops(h)
    _same(g, h, {"a": _values(t)})


@pytest.mark.parametrize("op", ["clz", "ctz"])
def test_a_zero_count_is_a_tree_at_any_clock(op: str) -> None:
    g = _graph(op, uint(32))
    assert op not in _ops(decompose_for_timing(g, CostModel(MODEL), 100.0))


@pytest.mark.parametrize("model", [MODEL, SLICE_MUX], ids=["radix2", "radix4"])
@pytest.mark.parametrize("op", ["clz", "ctz"])
@pytest.mark.parametrize("width", [24, 32, 33, 64])
def test_wide_zero_counts_are_exact(op: str, width: int, model: SimpleModel) -> None:
    t = uint(width)
    g = _graph(op, t)
    h = decompose_for_timing(g, CostModel(model), SLOW)
    assert op not in _ops(h)
    single = [np.uint64(1) << np.uint64(k) for k in range(width)]  # every count once
    xs = np.concatenate([_random(t, 500, width), np.array(single, dtype=np.uint64)])
    _same(g, h, {"a": xs})


@pytest.mark.parametrize("op", ["eq", "ne", "min", "max"])
@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
@pytest.mark.parametrize("width", [4, 6, 9])
def test_compares_and_min_max_exhaustive(op: str, signed: bool, width: int) -> None:
    """min/max: the borrow of the comparison's chain picks; eq/ne: groups of ``EQ_GROUP``
    bits (one group is left as it is)."""
    t = IntType(width, signed)
    g = _graph(op, t)
    h = decompose_for_timing(g, CostModel(MODEL), SLOW)
    _split(g, h, op, width)
    a, b = (x.ravel() for x in np.meshgrid(_values(t), _values(t)))
    _same(g, h, {"a": a, "b": b})


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(["eq", "ne", "min", "max"]), width=st.integers(9, 64),
       signed=st.booleans(), seed=st.integers(0, 2**16))
def test_wide_compares_and_min_max_are_exact(op: str, width: int, signed: bool,
                                             seed: int) -> None:
    t = IntType(width, signed)
    g = _graph(op, t)
    h = decompose_for_timing(g, CostModel(MODEL), SLOW)
    _split(g, h, op, width)
    a = _random(t, 300, seed)
    b = np.concatenate([a[:100], _random(t, 200, seed + 1)])  # equal pairs too
    _same(g, h, {"a": a, "b": b})


def _split(g: Graph, h: Graph, op: str, width: int) -> None:
    if op in ("min", "max"):
        assert op not in _ops(h)
    elif width <= EQ_GROUP:
        assert _ops(h) == _ops(g)
    else:
        wide = [n for n in h.nodes.values() if n.op in ("eq", "ne")
                and h.nodes[n.inputs[0]].type.flat_width > EQ_GROUP]
        assert not wide


KERNELS = {
    "shl": "pub fn m(a: u64, b: u8) -> u64 {\n    a << b\n}\n",
    "shr": "pub fn m(a: i64, b: u8) -> i64 {\n    a >> b\n}\n",
    "rotl": "pub fn m(a: u32, b: u8) -> u32 {\n    rotl(a, b)\n}\n",
    "clz": "pub fn m(a: u64) -> u64 {\n    clz(a)\n}\n",
    "max": "pub fn m(a: i64, b: i64) -> i64 {\n    max(a, b)\n}\n",
}


@pytest.mark.parametrize("op", sorted(KERNELS))
def test_ops_refused_before_schedule_at_55_mhz_on_ice40(op: str, tmp_path: Path) -> None:
    """Each of these needed 13 to 29 ns on an iCE40 (``shl`` 64: 17.3 ns) and refused the
    55 MHz clock; now pipelined over stages, every stage within the period."""
    src = tmp_path / "m.kera"
    src.write_text("#[top]\n" + KERNELS[op], encoding="utf-8")
    loaded = load(src)
    s = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55.0)[0]
    assert op not in _ops(s.graph) or not _variable(s.graph, op)
    assert s.latency >= 1


def test_what_nothing_splits_names_the_line_and_the_clock(tmp_path: Path) -> None:
    """A rotate of 48 bits by a u64 amount: 64 levels would be dearer than a modulo network
    (not built), so it keeps the error, with its line and the clock that fits."""
    src = tmp_path / "m.kera"
    src.write_text("#[top]\npub fn m(a: u48, b: u64) -> u48 {\n    rotl(a, b)\n}\n",
                   encoding="utf-8")
    loaded = load(src)
    with pytest.raises(KeraError) as info:
        plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55.0)
    assert info.value.exit_code == 1
    assert info.value.message.startswith(f"{src}:3:5: `rotl` (48 bits) needs ")
    assert "try --clock-mhz" in info.value.message


@needs_verilator
@pytest.mark.parametrize("op", ["shr", "clz"])
def test_a_pipelined_barrel_and_count_are_cycle_exact(op: str, tmp_path: Path) -> None:
    from kera import _api

    src = tmp_path / "m.kera"
    src.write_text("#[top]\n" + KERNELS[op], encoding="utf-8")
    loaded = load(src)
    big = [0, 1, 2**63 - 1, 2**63, 2**64 - 1, 0x0123456789ABCDEF, 0x8000_0000_0000_0001]
    if op == "shr":
        rows = [{"a": a - (1 << 64) if a >> 63 else a, "b": b}
                for a in big for b in (0, 1, 7, 31, 63, 64, 200)]
        want = [r["a"] >> min(r["b"], 63) for r in rows]
    else:
        rows = [{"a": a} for a in big + [1 << k for k in range(0, 64, 5)]]
        want = [64 - r["a"].bit_length() for r in rows]
    sim = _api.simulate(loaded, rows, board="icebreaker", clock_mhz=55.0)
    assert sim.schedule.latency > 1
    assert sim.passed
    assert sim.result.latency_observed == sim.schedule.latency
    assert sim.outputs == want


def test_a_split_compare_costs_its_segments_as_comparisons(tmp_path: Path) -> None:
    """The segments of ``max`` of i64 at 55 MHz on iCE40 are subtractions of which only the
    borrow is read: yosys trims their sum LUTs, so each costs a comparison one bit narrower
    (four segments: 131 LUTs as sums, 71 as comparisons; 71 placed, yosys 0.70 + nextpnr)."""
    from kera.hls.models import load_model
    from kera.hls.resources import estimate

    src = tmp_path / "m.kera"
    src.write_text("#[top]\n" + KERNELS["max"], encoding="utf-8")
    loaded = load(src)
    s = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55.0)[0]
    costs = CostModel(load_model("ice40"))
    subs = [n for n in s.graph.nodes.values() if n.op == "sub"]
    assert len(subs) == 4
    want = sum(costs._query_area(("lt", n.type.flat_width - 1, None))["lut"] for n in subs)
    got = estimate(s, costs).by_op["sub"]["lut"]
    assert got == round(want)  # the estimate rounds each row
    assert got < sum(costs._query_area(("sub", n.type.flat_width, None))["lut"] for n in subs)
