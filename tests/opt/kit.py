"""Test helpers for the optimiser: a tiny graph builder, edge inputs and an exact comparison."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from kera.interp import evaluate
from kera.ir import values
from kera.ir.graph import Graph, Region
from kera.ir.types import BOOL, ArrayType, BoolType, IntType, TupleType, Type
from kera.opt.rewrite import live

_BOOL_RESULT = {"eq", "ne", "lt", "le", "gt", "ge"}


class B:
    """Build a one-region graph (named ``f``) tersely: ``b.op("add", x, b.c(u8, 1))``."""

    def __init__(self) -> None:
        self.g = Graph("t.kera")
        self.params: list[bytes] = []

    def param(self, name: str, t: Type) -> bytes:
        """Add the next parameter."""
        nid = self.g.add("param", t, (), {"index": len(self.params), "name": name})
        self.params.append(nid)
        return nid

    def c(self, t: Type, value: int) -> bytes:
        """Add a constant (wrapped into ``t``)."""
        v = int(bool(value)) if isinstance(t, BoolType) else t.wrap(value)  # type: ignore[union-attr]
        return self.g.add("const", t, (), {"value": v})

    def op(self, name: str, *args: bytes, t: Type | None = None, **attrs: int) -> bytes:
        """Add an op; the result type defaults to bool for comparisons, else the first operand's."""
        if t is None:
            first = args[1] if name == "select" else args[0]
            t = BOOL if name in _BOOL_RESULT else self.g.nodes[first].type
        return self.g.add(name, t, args, attrs or None)

    def finish(self, result: bytes) -> Graph:
        """Name the region ``f`` and return the graph."""
        self.g.add_region(Region("f", tuple(self.params), result))
        return self.g

    def expect(self, build: Callable[[B], bytes]) -> bytes:
        """Return the id of a node built on this builder's params (for exact expected graphs)."""
        return build(self)


def edge_ints(t: IntType) -> list[int]:
    """Return the edge values of ``t`` with the powers of two's neighbours, in ascending order."""
    return sorted(values.edge_values(t, neighbours=True))


def scalar_rows(t: Type, rows: int, rng: random.Random) -> list[object]:
    """Return ``rows`` values of a type: every edge value first (cycled), then random ones."""
    if isinstance(t, BoolType):
        return [rng.random() < 0.5 for _ in range(rows)]
    if isinstance(t, IntType):
        edges = edge_ints(t)
        rng.shuffle(edges)
        out = [edges[i % len(edges)] for i in range(min(rows, 2 * len(edges)))]
        return out + [rng.randint(t.min, t.max) for _ in range(rows - len(out))]
    if isinstance(t, ArrayType):
        cols = [scalar_rows(t.elem, rows, rng) for _ in range(t.length)]
        return [list(r) for r in zip(*cols, strict=True)]
    assert isinstance(t, TupleType)
    cols = [scalar_rows(e, rows, rng) for e in t.elems]
    return [tuple(r) for r in zip(*cols, strict=True)] if cols else [() for _ in range(rows)]


def inputs_for(graph: Graph, region: str, rows: int, seed: int) -> dict[str, object]:
    """Return batched inputs of a region's params: edge values and random ones."""
    rng = random.Random(seed)
    params, _ = graph.signature(region)
    return {name: values.stack(scalar_rows(t, rows, rng), t) for name, t in params}


def results(graph: Graph, region: str, inputs: dict[str, object], rows: int) -> list[object]:
    """Return the region's results as JSON-ready rows (exact Python ints)."""
    out = evaluate(graph, region, inputs, rows=rows)
    _, t = graph.signature(region)
    return values.to_json_rows(out, t, rows)


def assert_same_bits(before: Graph, after: Graph, rows: int = 48, seed: int = 0) -> None:
    """Assert every region gives identical results before and after, on edge + random rows."""
    assert sorted(before.regions) == sorted(after.regions)
    for name in before.regions:
        assert before.signature(name) == after.signature(name)
        inputs = inputs_for(before, name, rows, seed)
        want, got = results(before, name, inputs, rows), results(after, name, inputs, rows)
        bad = [(i, w, g) for i, (w, g) in enumerate(zip(want, got, strict=True)) if w != g]
        assert not bad, f"region {name}: first mismatches (row, before, after): {bad[:3]}"


WIRING = frozenset({"param", "const", "cast", "slice", "concat", "tuple", "tuple_get", "array"})
"""Ops that are only wires: they compute nothing."""


def logic_bits(graph: Graph) -> int:
    """Return the total result width of the live nodes that compute (not wiring, not a shift
    or rotate by a constant): the bits of logic the graph asks for."""
    nodes, total = graph.nodes, 0
    for nid in live(graph):
        node = nodes[nid]
        if node.op in WIRING or (node.op in ("shl", "shr", "rotl", "rotr")
                                 and nodes[node.inputs[1]].op == "const"):
            continue
        total += node.type.flat_width
    return total


def total_bits(graph: Graph) -> int:
    """Return the total result width of the live nodes."""
    return sum(graph.nodes[n].type.flat_width for n in live(graph))


def depth(graph: Graph, nid: bytes, ops: set[str]) -> int:
    """Return the most nodes of ``ops`` on any path from ``nid`` down to a leaf."""
    memo: dict[bytes, int] = {}
    for n in graph.topo_order([nid]):
        node = graph.nodes[n]
        below = max((memo[i] for i in node.inputs), default=0)
        memo[n] = below + (node.op in ops)
    return memo[nid]


def column(values_: list[int], t: IntType) -> np.ndarray:
    """Return a batch of one integer type."""
    return values.stack(values_, t)


Build = Callable[[B, list[bytes]], bytes]


def graph_of(params: list[tuple[str, Type]], build: Build) -> Graph:
    """Return the one-region graph ``build(b, params)`` makes."""
    b = B()
    ps = [b.param(n, t) for n, t in params]
    return b.finish(build(b, ps))


def result_after(pass_fn: Callable[[Graph], Graph], params: list[tuple[str, Type]],
                 build: Build, check: bool = True) -> tuple[Graph, bytes]:
    """Run a pass on the graph ``build`` makes; return (new graph, result id).

    With ``check``, the pass must keep the validator happy and the bits the same.
    """
    from kera.ir.validate import validate

    before = graph_of(params, build)
    fp = before.fingerprint()
    after = pass_fn(before)
    assert before.fingerprint() == fp, "the pass changed its input graph"
    if check:
        assert validate(after) == []
        assert_same_bits(before, after)
    return after, after.regions["f"].result


def expected(params: list[tuple[str, Type]], build: Build) -> bytes:
    """Return the result id of the graph ``build`` makes (ids are content hashes)."""
    return graph_of(params, build).regions["f"].result


def all_values(t: Type) -> list[object]:
    """Return every value of a small scalar type."""
    if isinstance(t, BoolType):
        return [False, True]
    assert isinstance(t, IntType) and t.width <= 16
    return list(range(t.min, t.max + 1))


def run_unary(t: Type, build: Callable[[B, bytes], bytes]) -> list[object]:
    """Return ``build(b, x)`` evaluated for every value of ``x: t``."""
    b = B()
    g = b.finish(build(b, b.param("x", t)))
    rows = all_values(t)
    return results(g, "f", {"x": values.stack(rows, t)}, len(rows))


def same_arrays(a: object, b: object) -> bool:
    """Return True when two batched values hold the same bits (leaf by leaf, same dtype)."""
    if isinstance(a, list | tuple):
        return (type(a) is type(b) and len(a) == len(b)  # type: ignore[arg-type]
                and all(same_arrays(x, y) for x, y in zip(a, b, strict=True)))  # type: ignore[call-overload]
    return a.dtype == b.dtype and np.array_equal(a, b)  # type: ignore[union-attr]
