"""A hypothesis strategy for random well-typed graphs, and a shuffled rebuild of a graph."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from kera.diagnostics import Span
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, ArrayType, IntType, TupleType, Type, sint, uint

SCALARS: list[Type] = [uint(1), uint(8), sint(8), uint(32), sint(64), uint(64), BOOL]
INT_BINARY = ["add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor"]


@st.composite
def graphs(draw: st.DrawFn, max_steps: int = 40) -> Graph:
    """Draw a random graph: 1-3 params, up to ``max_steps`` ops, 1-3 regions."""
    g = Graph(source_path=draw(st.one_of(st.none(), st.sampled_from(["a.kera", "dir/é.kera"]))))
    names = ["x", "y", "z"]
    params = []
    for i in range(draw(st.integers(1, 3))):
        params.append(param(g, i, names[i], draw(st.sampled_from(SCALARS))))
    pool: list[bytes] = list(params)

    def pick(pred=lambda t: True) -> bytes | None:
        cands = [n for n in pool if pred(g.nodes[n].type)]
        return draw(st.sampled_from(cands)) if cands else None

    for _ in range(draw(st.integers(0, max_steps))):
        kind = draw(st.sampled_from(["const", "bin", "cmp", "cast", "shift", "select", "agg",
                                     "unary"]))
        nid = _step(g, draw, kind, pick)
        if nid is not None:
            pool.append(nid)
            if draw(st.booleans()):
                g.spans.setdefault(nid, Span(draw(st.integers(0, 99)), 100))
    for r in range(draw(st.integers(1, 3))):
        g.add_region(Region(f"r{r}" if r else "top", tuple(params), draw(st.sampled_from(pool))))
    return g


def _step(g: Graph, draw: st.DrawFn, kind: str, pick) -> bytes | None:
    is_int = lambda t: isinstance(t, IntType)  # noqa: E731
    if kind == "const":
        t = draw(st.sampled_from(SCALARS))
        return const(g, t, draw(st.integers(-(1 << 64), 1 << 64)))
    if kind in ("bin", "cmp"):
        a = pick(is_int)
        if a is None:
            return None
        t = g.nodes[a].type
        b = pick(lambda u: u == t)
        op = draw(st.sampled_from(INT_BINARY if kind == "bin" else ["eq", "lt", "ge"]))
        return g.add(op, t if kind == "bin" else BOOL, (a, b))
    if kind == "unary":
        a = pick(is_int)
        op = draw(st.sampled_from(["not", "popcount", "clz"]))
        return None if a is None else g.add(op, g.nodes[a].type, (a,))
    if kind == "cast":
        a = pick(lambda t: is_int(t) or t == BOOL)
        return None if a is None else g.add("cast", draw(st.sampled_from(SCALARS[:-1])), (a,))
    if kind == "shift":
        a, n = pick(is_int), pick(lambda t: is_int(t) and not t.signed)
        if a is None or n is None:
            return None
        op = draw(st.sampled_from(["shl", "shr", "rotl"]))
        return g.add(op, g.nodes[a].type, (a, n))
    if kind == "select":
        c = pick(lambda t: t == BOOL)
        a = pick()
        if c is None:
            return None
        t = g.nodes[a].type
        return g.add("select", t, (c, a, pick(lambda u: u == t)))
    a = pick()
    t = g.nodes[a].type
    if draw(st.booleans()):
        arr = g.add("array", ArrayType(t, 2), (a, pick(lambda u: u == t)))
        idx = pick(lambda u: is_int(u) and not u.signed)
        return arr if idx is None else g.add("array_index", t, (arr, idx))
    b = pick()
    tup = g.add("tuple", TupleType((t, g.nodes[b].type)), (a, b))
    return g.add("tuple_get", g.nodes[b].type, (tup,), {"index": 1})


def rebuild_shuffled(g: Graph, seed: int, junk: int = 5) -> Graph:
    """Re-add ``g``'s nodes in a random topological order, plus some dead nodes."""
    rng = random.Random(seed)
    out = Graph(g.source_path)
    pending = list(g.nodes.values())
    users_left = {n.id: set(n.inputs) for n in pending}
    done: set[bytes] = set()
    while pending:
        ready = [n for n in pending if users_left[n.id] <= done]
        node = rng.choice(ready)
        pending.remove(node)
        assert out.add(node.op, node.type, node.inputs, dict(node.attrs),
                       g.spans.get(node.id)) == node.id
        done.add(node.id)
        if rng.random() < 0.2 and junk:
            junk -= 1
            const(out, uint(13), rng.randrange(1 << 13))
    for name in rng.sample(sorted(g.regions), len(g.regions)):
        out.add_region(g.regions[name])
    return out
