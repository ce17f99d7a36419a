"""lower_for_hardware: the division network is bit-exact with the reference `div`/`rem`."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera.diagnostics import Span
from kera.elaborate import build_program
from kera.hls.lower import LOWERED_OPS, lower_for_hardware, needs_lowering
from kera.interp import evaluate
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import IntType, TupleType


def _divmod_graph(t: IntType) -> Graph:
    g = Graph("d.kera")
    a, b = param(g, 0, "a", t, Span(0, 1)), param(g, 1, "b", t, Span(2, 3))
    q = g.add("div", t, (a, b), span=Span(10, 15))
    r = g.add("rem", t, (a, b), span=Span(20, 25))
    g.add_region(Region("f", (a, b), g.add("tuple", TupleType((t, t)), (q, r))))
    return g


def _both(g: Graph, lowered: Graph, a: np.ndarray, b: np.ndarray) -> None:
    want = evaluate(g, "f", {"a": a, "b": b})
    got = evaluate(lowered, "f", {"a": a, "b": b})
    for name, w, x in zip(("div", "rem"), want, got, strict=True):
        bad = np.flatnonzero(w != x)
        assert bad.size == 0, (name, a[bad[:5]], b[bad[:5]], w[bad[:5]], x[bad[:5]])


def _dtype(t: IntType) -> type:
    return np.int64 if t.signed else np.uint64


@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
@pytest.mark.parametrize("width", range(1, 9))
def test_exhaustive_small_widths(width: int, signed: bool) -> None:
    t = IntType(width, signed)
    g = _divmod_graph(t)
    lowered = lower_for_hardware(g)
    assert not needs_lowering(lowered) and needs_lowering(g)
    vals = np.arange(t.min, t.max + 1).astype(_dtype(t))
    a, b = (x.ravel() for x in np.meshgrid(vals, vals))
    _both(g, lowered, a, b)


def _edges(t: IntType) -> list[int]:
    vals = {0, 1, t.max, t.min, t.max - 1, t.min + 1, 2, 3, 7}
    if t.signed:
        vals |= {-1, -2, -3}
    vals |= {1 << k for k in range(t.width - (1 if t.signed else 0))}
    return sorted(v for v in vals if t.min <= v <= t.max)


@settings(max_examples=60, deadline=None)
@given(width=st.integers(9, 64), signed=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_random_wide(width: int, signed: bool, seed: int) -> None:
    t = IntType(width, signed)
    g = _divmod_graph(t)
    lowered = lower_for_hardware(g)
    rng = np.random.default_rng(seed)
    edges = _edges(t)
    rand = [t.wrap(int(x)) for x in rng.integers(0, 2**63, 200, dtype=np.uint64)]
    small = [t.wrap(int(x)) for x in rng.integers(-300, 300, 100)]
    pool = edges + rand + small
    a = [pool[i] for i in rng.integers(0, len(pool), 600)] + edges * len(edges)
    b = [pool[i] for i in rng.integers(0, len(pool), 600)] + [e for e in edges for _ in edges]
    _both(g, lowered, np.array(a, dtype=_dtype(t)), np.array(b, dtype=_dtype(t)))


def test_structure_spans_and_regions() -> None:
    t = IntType(16, True)
    g = _divmod_graph(t)
    lowered = lower_for_hardware(g)
    assert lowered.regions["f"].params == g.regions["f"].params  # same interface
    assert lowered.source_path == g.source_path
    ops = {n.op for n in lowered.nodes.values()}
    assert not ops & LOWERED_OPS
    assert ops <= {"param", "const", "tuple", "slice", "concat", "cast", "eq", "ge", "lt", "and",
                   "xor", "sub", "neg", "select"}
    # every new node points back at the `/` or `%` it came from
    spans = {lowered.spans.get(n) for n, node in lowered.nodes.items() if node.op == "sub"}
    assert spans <= {Span(10, 15), Span(20, 25)} and spans
    # div and rem of the same operands share one network: about w steps of a few nodes
    assert len(lowered.nodes) < 16 * 14


def test_graph_without_division_is_unchanged() -> None:
    p = build_program("t.kera", "#[top] pub fn f(a: u8, b: u8) -> u8 { (a + b) ^ (a >> 1) }")
    assert p.graph is not None
    lowered = lower_for_hardware(p.graph)
    assert lowered.fingerprint() == p.graph.fingerprint()
    assert set(lowered.nodes) == set(p.graph.nodes)
    assert lowered.spans == p.graph.spans


def test_from_source_constant_divisor() -> None:
    src = "#[top] pub fn f(a: i16) -> (i16, i16) { (a / -7, a % 10) }"
    p = build_program("t.kera", src)
    assert p.graph is not None and p.top is not None
    lowered = lower_for_hardware(p.graph)
    a = np.arange(-(2**15), 2**15, dtype=np.int64)
    want, got = evaluate(p.graph, p.top, {"a": a}), evaluate(lowered, p.top, {"a": a})
    assert all(np.array_equal(x, y) for x, y in zip(want, got, strict=True))


@pytest.mark.parametrize("signed", [False, True], ids=["u", "i"])
def test_constant_divisors_8_bits(signed: bool) -> None:
    t = IntType(8, signed)
    a_vals = np.arange(t.min, t.max + 1).astype(_dtype(t))
    divisors = set(_edges(t)) | {t.wrap(-(1 << k)) for k in range(8)} | {3, 5, 10, 100, 127}
    divisors |= {t.wrap(-c) for c in (3, 5, 10, 100)} if signed else {200, 255, 171}
    for c in sorted(divisors):
        g = Graph("c.kera")
        a = param(g, 0, "a", t)
        b = const(g, t, c)
        q, r = g.add("div", t, (a, b)), g.add("rem", t, (a, b))
        g.add_region(Region("f", (a,), g.add("tuple", TupleType((t, t)), (q, r))))
        lowered = lower_for_hardware(g)
        want, got = evaluate(g, "f", {"a": a_vals}), evaluate(lowered, "f", {"a": a_vals})
        assert all(np.array_equal(x, y) for x, y in zip(want, got, strict=True)), c
        ops = {n.op for n in lowered.nodes.values()}
        if not signed and c > 0 and c & (c - 1) == 0:
            assert ops <= {"param", "const", "slice", "cast", "tuple"}, (c, ops)
        assert len(lowered.nodes) < len(lower_for_hardware(_divmod_graph(t)).nodes)
