"""A hypothesis strategy for random well-typed graphs that use every op of the registry.

Widths are 1..64 (biased to the edges), signed and unsigned; constants are biased to edge
values; arrays and tuples appear now and then; some recipes build the shapes the passes look
for (long associative chains, arithmetic on extended narrow values, constant divisors).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from kera.ir.graph import Graph
from kera.ir.types import BOOL, ArrayType, BoolType, IntType, TupleType, Type
from tests.opt.kit import B, edge_ints

EDGE_WIDTHS = (1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64)
SAME_INT = ("add", "sub", "mul", "div", "rem", "min", "max")
CHAIN = ("add", "mul", "and", "or", "xor", "min", "max")


class Builder:
    """One random graph under construction: a ``B`` plus pools of nodes by type."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.b = B()
        self.scalars: dict[Type, list[bytes]] = {}
        self.aggregates: list[bytes] = []
        self.made: list[bytes] = []

    def keep(self, nid: bytes) -> bytes:
        t = self.b.g.nodes[nid].type
        if isinstance(t, IntType | BoolType):
            self.scalars.setdefault(t, []).append(nid)
        else:
            self.aggregates.append(nid)
        self.made.append(nid)
        return nid

    def int_type(self, max_width: int = 64, signed: bool | None = None) -> IntType:
        known = [t for t in self.scalars if isinstance(t, IntType) and t.width <= max_width
                 and (signed is None or t.signed == signed)]
        if known and self.draw(st.integers(0, 9)) < 6:
            return self.draw(st.sampled_from(known))
        widths = [w for w in EDGE_WIDTHS if w <= max_width]
        w = self.draw(st.one_of(st.sampled_from(widths), st.integers(1, max_width)))
        s = self.draw(st.booleans()) if signed is None else signed
        return IntType(w, s)

    def scalar_type(self) -> Type:
        return BOOL if self.draw(st.integers(0, 5)) == 0 else self.int_type()

    def const(self, t: Type) -> bytes:
        if isinstance(t, BoolType):
            return self.b.c(t, self.draw(st.booleans()))
        assert isinstance(t, IntType)
        v = self.draw(st.one_of(st.sampled_from(edge_ints(t)), st.integers(t.min, t.max)))
        return self.b.c(t, v)

    def operand(self, t: Type) -> bytes:
        have = self.scalars.get(t, [])
        roll = self.draw(st.integers(0, 9))
        if have and roll < 6:
            return self.draw(st.sampled_from(have))
        others = [n for ns in self.scalars.values() for n in ns]
        if isinstance(t, IntType) and others and roll < 8:
            return self.keep(self.b.op("cast", self.draw(st.sampled_from(others)), t=t))
        return self.const(t)

    def array(self) -> bytes:
        arrays = [a for a in self.aggregates if isinstance(self.b.g.nodes[a].type, ArrayType)]
        if arrays and self.draw(st.booleans()):
            return self.draw(st.sampled_from(arrays))
        t = self.scalar_type()
        elems = [self.operand(t) for _ in range(self.draw(st.integers(1, 4)))]
        return self.keep(self.b.op("array", *elems, t=ArrayType(t, len(elems))))

    def index(self, length: int) -> bytes:
        u = self.int_type(signed=False)
        if self.draw(st.booleans()):
            k = self.draw(st.sampled_from([0, length - 1, length, u.max]))
            return self.b.c(u, min(k, u.max))
        return self.operand(u)


Recipe = Callable[[Builder], bytes]


def _same_int(op: str) -> Recipe:
    def make(r: Builder) -> bytes:
        t = r.int_type()
        return r.b.op(op, r.operand(t), r.operand(t))

    return make


def _bitwise(op: str) -> Recipe:
    def make(r: Builder) -> bytes:
        t = r.scalar_type()
        return r.b.op(op, r.operand(t), r.operand(t))

    return make


def _shift(op: str) -> Recipe:
    def make(r: Builder) -> bytes:
        t = r.int_type()
        u = r.int_type(signed=False)
        if r.draw(st.booleans()):
            k = r.draw(st.sampled_from([0, 1, t.width - 1, t.width, t.width + 1, u.max]))
            amount = r.b.c(u, min(k, u.max))
        else:
            amount = r.operand(u)
        return r.b.op(op, r.operand(t), amount)

    return make


def _unary(op: str, signed: bool | None = None, boolean: bool = False) -> Recipe:
    def make(r: Builder) -> bytes:
        t = r.scalar_type() if boolean else r.int_type(signed=signed)
        return r.b.op(op, r.operand(t))

    return make


def _compare(op: str) -> Recipe:
    def make(r: Builder) -> bytes:
        t = r.scalar_type() if op in ("eq", "ne") else r.int_type()
        return r.b.op(op, r.operand(t), r.operand(t))

    return make


def _widening_mul(r: Builder) -> bytes:
    t = r.int_type(max_width=32)
    return r.b.op("widening_mul", r.operand(t), r.operand(t), t=IntType(2 * t.width, t.signed))


def _select(r: Builder) -> bytes:
    if r.aggregates and r.draw(st.integers(0, 4)) == 0:
        a = r.draw(st.sampled_from(r.aggregates))
        t = r.b.g.nodes[a].type
        b = r.draw(st.sampled_from([x for x in r.aggregates if r.b.g.nodes[x].type == t]))
        return r.b.op("select", r.operand(BOOL), a, b)
    t = r.scalar_type()
    return r.b.op("select", r.operand(BOOL), r.operand(t), r.operand(t))


def _cast(r: Builder) -> bytes:
    src = r.scalar_type()
    return r.b.op("cast", r.operand(src), t=r.int_type())


def _concat(r: Builder) -> bytes:
    hi = r.int_type(max_width=63)
    lo = r.int_type(max_width=64 - hi.width)
    return r.b.op("concat", r.operand(hi), r.operand(lo), t=IntType(hi.width + lo.width, False))


def _slice(r: Builder) -> bytes:
    t = r.int_type()
    lo = r.draw(st.integers(0, t.width - 1))
    w = r.draw(st.integers(1, t.width - lo))
    return r.b.op("slice", r.operand(t), t=IntType(w, False), lo=lo)


def _array_index(r: Builder) -> bytes:
    arr = r.array()
    at = r.b.g.nodes[arr].type
    assert isinstance(at, ArrayType)
    return r.b.op("array_index", arr, r.index(at.length), t=at.elem)


def _array_update(r: Builder) -> bytes:
    arr = r.array()
    at = r.b.g.nodes[arr].type
    assert isinstance(at, ArrayType)
    return r.b.op("array_update", arr, r.index(at.length), r.operand(at.elem), t=at)


def _tuple(r: Builder) -> bytes:
    fields = [r.operand(r.scalar_type()) for _ in range(r.draw(st.integers(0, 3)))]
    types = tuple(r.b.g.nodes[f].type for f in fields)
    return r.b.op("tuple", *fields, t=TupleType(types))


def _tuple_get(r: Builder) -> bytes:
    tuples = [a for a in r.aggregates if isinstance(r.b.g.nodes[a].type, TupleType)
              and r.b.g.nodes[a].type.elems]  # type: ignore[union-attr]
    tup = r.draw(st.sampled_from(tuples)) if tuples else r.keep(_tuple_nonempty(r))
    tt = r.b.g.nodes[tup].type
    assert isinstance(tt, TupleType)
    i = r.draw(st.integers(0, len(tt.elems) - 1))
    return r.b.op("tuple_get", tup, t=tt.elems[i], index=i)


def _tuple_nonempty(r: Builder) -> bytes:
    t = r.scalar_type()
    f = r.operand(t)
    return r.b.op("tuple", f, r.operand(BOOL), t=TupleType((t, BOOL)))


def _const(r: Builder) -> bytes:
    return r.const(r.scalar_type())


def _chain(r: Builder) -> bytes:
    """A sequential ``acc = acc op term`` over 3..9 terms (what ``balance`` looks for)."""
    op = r.draw(st.sampled_from(CHAIN))
    t = r.int_type() if op in ("add", "mul", "min", "max") else r.scalar_type()
    acc = r.operand(t)
    for _ in range(r.draw(st.integers(2, 8))):
        acc = r.b.op(op, acc, r.operand(t))
    return acc


def _widened(r: Builder) -> bytes:
    """Arithmetic on narrow values extended to a wide type (what ``narrow`` looks for)."""
    small = r.int_type(max_width=20)
    wide = IntType(r.draw(st.integers(small.width + 1, 64)), r.draw(st.booleans()))
    a = r.b.op("cast", r.operand(small), t=wide)
    op = r.draw(st.sampled_from(("add", "sub", "mul", "shl")))
    if op == "shl":
        return r.b.op(op, a, r.b.c(IntType(8, False), r.draw(st.integers(0, 70))))
    b = r.b.op("cast", r.operand(small), t=wide) if r.draw(st.booleans()) else r.const(wide)
    return r.b.op(op, a, b)


def _by_constant(r: Builder) -> bytes:
    """Multiply, divide or remainder by a constant (what ``strength`` looks for)."""
    t = r.int_type()
    op = r.draw(st.sampled_from(("mul", "div", "rem")))
    return r.b.op(op, r.operand(t), r.const(t))


RECIPES: dict[str, Recipe] = {
    **{op: _same_int(op) for op in SAME_INT},
    **{op: _bitwise(op) for op in ("and", "or", "xor")},
    **{op: _shift(op) for op in ("shl", "shr", "rotl", "rotr")},
    **{op: _compare(op) for op in ("eq", "ne", "lt", "le", "gt", "ge")},
    **{op: _unary(op) for op in ("popcount", "clz", "ctz")},
    "neg": _unary("neg", signed=True),
    "not": _unary("not", boolean=True),
    "widening_mul": _widening_mul, "select": _select, "cast": _cast, "concat": _concat,
    "slice": _slice, "array": lambda r: r.array(), "array_index": _array_index,
    "array_update": _array_update, "tuple": _tuple, "tuple_get": _tuple_get, "const": _const,
    "chain": _chain, "widened": _widened, "by_constant": _by_constant,
}


def _param_type(draw: st.DrawFn) -> Type:
    kind = draw(st.integers(0, 9))
    w = draw(st.one_of(st.sampled_from(EDGE_WIDTHS), st.integers(1, 64)))
    t: Type = IntType(w, draw(st.booleans()))
    if kind == 0:
        return BOOL
    if kind == 1:
        return ArrayType(t, draw(st.integers(1, 4)))
    if kind == 2:
        return TupleType((t, BOOL))
    return t


@st.composite
def graphs(draw: st.DrawFn, max_steps: int = 24) -> Graph:
    """Draw a random one-region graph (region ``f``) over 1..3 params."""
    r = Builder(draw)
    for i in range(draw(st.integers(1, 3))):
        r.keep(r.b.param("xyz"[i], _param_type(draw)))
    names = sorted(RECIPES)
    for _ in range(draw(st.integers(1, max_steps))):
        r.keep(RECIPES[draw(st.sampled_from(names))](r))
    outs = r.made[-draw(st.integers(1, 3)) :]
    if len(outs) == 1:
        return r.b.finish(outs[0])
    types = tuple(r.b.g.nodes[o].type for o in outs)
    return r.b.finish(r.b.op("tuple", *outs, t=TupleType(types)))
