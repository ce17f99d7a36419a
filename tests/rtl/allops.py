"""One region that uses every opcode of the registry at several widths, and its edge vectors.

Simulating it against the interpreter checks every Verilog lowering at once: 1, 7, 8 and 64
bits, signed and unsigned, shift amounts below, at and above the width, division by zero and
``MIN / -1``, array reads and writes past the end, nested aggregates.
"""

from __future__ import annotations

import random

from kera.ir.graph import Graph, Region, StateSlot, const, param
from kera.ir.ops import OPS
from kera.ir.types import BOOL, ArrayType, IntType, TupleType, Type, sint, uint

WIDTHS = (1, 7, 8, 64)


def _amount_type(w: int) -> IntType:
    """An unsigned amount type that reaches past ``w`` (so `>= N` cases are exercised)."""
    return uint((2 * w).bit_length() + 1)


def allops_graph(with_state: bool = False) -> tuple[Graph, str]:
    """Return (graph, region) of the all-opcodes design; ``with_state`` adds a running sum in a
    `reg` (then only schedules that close its recurrence in II cycles are legal, e.g. one
    stage: the hand-made depth schedules of tests/rtl/schedules.py do not know recurrences)."""
    g = Graph()
    params: list[bytes] = []

    def p(name: str, t: Type) -> bytes:
        pid = param(g, len(params), name, t)
        params.append(pid)
        return pid

    fields: list[bytes] = []
    used: set[str] = {"param", "const"}

    def add(op: str, t: Type, *ins: bytes, **attrs: int) -> bytes:
        used.add(op)
        nid = g.add(op, t, ins, attrs or None)
        fields.append(nid)
        return nid

    flag = p("flag", BOOL)
    for w in WIDTHS:
        for signed in (False, True):
            t = IntType(w, signed)
            tag = f"{'i' if signed else 'u'}{w}"
            x, y, n = p(f"x_{tag}", t), p(f"y_{tag}", t), p(f"n_{tag}", _amount_type(w))
            for op in ("add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor",
                       "shl", "shr", "rotl", "rotr"):
                add(op, t, x, n if op in ("shl", "shr", "rotl", "rotr") else y)
            for op in ("not", "popcount", "clz", "ctz") + (("neg",) if signed else ()):
                add(op, t, x)
            for op in ("eq", "ne", "lt", "le", "gt", "ge"):
                add(op, BOOL, x, y)
            add("select", t, flag, x, y)
            add("shl", t, x, const(g, _amount_type(w), w))  # exactly the width
            for to in (uint(3), sint(5), uint(64), sint(64), uint(w), sint(w)):
                add("cast", to, x)
            if w <= 32:
                add("widening_mul", IntType(2 * w, signed), x, y)
                add("concat", uint(2 * w), x, y)
            if w > 1:
                add("slice", uint(w - 1), x, lo=1)
            add("rotl", t, x, const(g, _amount_type(w), 2 * w + 1))
    u8 = uint(8)
    arr, idx, val = p("arr", ArrayType(u8, 5)), p("idx", uint(3)), p("val", u8)
    tbl = add("array", ArrayType(u8, 3), *(const(g, u8, v) for v in (7, 200, 33)))
    add("array_index", u8, tbl, idx)
    add("array_index", u8, arr, idx)
    add("array_index", u8, arr, const(g, uint(3), 7))  # past the end: the last element
    add("array_index", u8, arr, val)  # a u8 index: clamped to the last element first
    add("array_update", ArrayType(u8, 5), arr, idx, val)
    add("array_update", ArrayType(u8, 5), arr, const(g, uint(3), 2), val)
    add("array_update", ArrayType(u8, 5), arr, const(g, uint(3), 6), val)  # no change
    low, high = (g.add("slice", uint(1), [idx], {"lo": k}) for k in (0, 1))
    small = g.add("array_index", u8, [arr, low])
    nested = add("array", ArrayType(ArrayType(u8, 5), 2), arr, fields[-1])
    add("array_index", ArrayType(u8, 5), nested, high)
    unit = g.add("tuple", TupleType(()), [])
    pair = add("tuple", TupleType((u8, BOOL, TupleType(()))), small, flag, unit)
    add("tuple_get", BOOL, pair, index=1)
    add("tuple_get", u8, pair, index=0)
    slots: tuple[StateSlot, ...] = ()
    if with_state:  # a running sum (STATE.md): the rows are one stream
        total = add("state", u8, index=0, kind="reg")
        slots = (StateSlot(total, const(g, u8, 5), g.add("add", u8, [total, val])),)
    missing = set(OPS) - used - (set() if with_state else {"state"})
    assert not missing, f"allops misses {sorted(missing)}"
    result = g.add("tuple", TupleType(tuple(g.nodes[f].type for f in fields)), fields)
    g.add_region(Region("allops", tuple(params), result, slots))
    return g, "allops"


def _edge_values(t: Type) -> list[object]:
    if isinstance(t, IntType):
        vals = {0, 1, t.max, t.min, t.min + 1, t.max - 1} | ({-1} if t.signed else set())
        vals |= {t.wrap(1 << k) for k in range(t.width)}
        return sorted(v for v in vals if t.contains(v))
    if isinstance(t, ArrayType):
        return [[v] * t.length for v in _edge_values(t.elem)]
    return [False, True]


def _random_value(t: Type, rng: random.Random) -> object:
    if isinstance(t, IntType):
        return rng.randint(t.min, t.max)
    if isinstance(t, ArrayType):
        return [_random_value(t.elem, rng) for _ in range(t.length)]
    return rng.random() < 0.5


def allops_rows(graph: Graph, region: str, count: int = 200, seed: int = 1) -> list[dict]:
    """Return input rows: each parameter's edge values in turn, then random rows."""
    params, _ = graph.signature(region)
    rng = random.Random(seed)
    rows = []
    edges = {name: _edge_values(t) for name, t in params}
    for k in range(max(len(v) for v in edges.values())):
        rows.append({name: edges[name][(k * 7 + i) % len(edges[name])]
                     for i, (name, _) in enumerate(params)})
    for name, t in params:  # amounts exactly at the width, divisors -1 and 0
        if name.startswith("n_"):
            w = int(name.split("_")[1][1:])
            rows.append({**rows[0], name: w})
        if name.startswith("y_") and t.signed:  # type: ignore[attr-defined]
            x = "x_" + name[2:]
            rows.append({**rows[1], x: t.min, name: -1})  # type: ignore[attr-defined]
            rows.append({**rows[1], x: t.min, name: 0})  # type: ignore[attr-defined]
    rows += [{name: _random_value(t, rng) for name, t in params} for _ in range(count)]
    return rows
