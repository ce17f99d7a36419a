"""Known bits: which bits of each integer (and bool) node are the same for every input.

A ``Known`` is a pair of masks over the node's N-bit pattern (its value modulo ``2**N``; a bool
is one bit): ``zero`` has the bits known to be 0, ``one`` the bits known to be 1, never both.
The transfer functions follow LLVM's ``KnownBits`` (carry propagation for ``add``/``sub``,
trailing zeros and bounds for ``mul``, shifts over the amounts the amount's bits allow), are
keyed by opcode in ``TRANSFER``, and any op without an entry (or an aggregate operand) gives
"nothing known" — always sound. The tests check every claim exhaustively on widths 1–6.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from kera.ir.graph import Graph
from kera.ir.types import BoolType, IntType, Type


class Known(NamedTuple):
    """Bits known to be 0 (``zero``) and 1 (``one``) in a ``width``-bit pattern."""

    zero: int
    one: int
    width: int

    @property
    def mask(self) -> int:
        """All ``width`` bits."""
        return (1 << self.width) - 1

    @property
    def known(self) -> int:
        """The bits whose value is known."""
        return self.zero | self.one

    @property
    def maybe(self) -> int:
        """The bits that may be 1 (also the largest pattern)."""
        return ~self.zero & self.mask

    def is_const(self) -> bool:
        """Return True when every bit is known."""
        return self.known == self.mask


def width_of(t: Type) -> int | None:
    """Return the pattern width of a scalar type (bool: 1), None for aggregates."""
    if type(t) is IntType:  # the usual case first: this runs for every node of every walk
        return t.width
    if isinstance(t, BoolType):
        return 1
    return t.width if isinstance(t, IntType) else None


def unknown(width: int) -> Known:
    """Return "nothing known" for ``width`` bits."""
    return Known(0, 0, width)


def exact(value: int, width: int) -> Known:
    """Return the known bits of the constant ``value`` (wrapped to ``width`` bits)."""
    m = (1 << width) - 1
    return Known(~value & m, value & m, width)


def below(bound: int, width: int) -> Known:
    """Return the known zeros of a pattern that is at most ``bound`` (unsigned)."""
    m = (1 << width) - 1
    return Known(m & ~((1 << bound.bit_length()) - 1), 0, width)


def meet(a: Known, b: Known) -> Known:
    """Return what holds for a value that is either ``a`` or ``b``."""
    return Known(a.zero & b.zero, a.one & b.one, a.width)


def both(a: Known, b: Known) -> Known:
    """Return the union of two sound facts about one value."""
    return Known(a.zero | b.zero, a.one | b.one, a.width)


def _sext(x: int, w: int) -> int:
    return x - (1 << w) if x >> (w - 1) & 1 else x


def _trailing_ones(x: int) -> int:
    return (~x & (x + 1)).bit_length() - 1


def extend(a: Known, width: int, signed: bool) -> Known:
    """Return the known bits of ``a`` truncated or extended (by ``signed``) to ``width``."""
    m = (1 << width) - 1
    if width <= a.width or not signed:
        high = m & ~a.mask
        return Known((a.zero | high) & m, a.one & m, width)
    return Known(_sext(a.zero, a.width) & m, _sext(a.one, a.width) & m, width)


# ----------------------------------------------------------------------------- arithmetic


def add_carry(a: Known, b: Known, carry: Known) -> Known:
    """Return the known bits of ``a + b + carry`` (``carry`` one bit), LLVM's computeForAddCarry."""
    m = a.mask
    sum_zero = a.maybe + b.maybe + (carry.maybe & 1)  # every unknown bit taken as 1
    sum_one = a.one + b.one + (carry.one & 1)  # every unknown bit taken as 0
    carry_zero = ~(sum_zero ^ a.zero ^ b.zero)
    carry_one = sum_one ^ a.one ^ b.one
    known = a.known & b.known & (carry_zero | carry_one) & m
    return Known(~sum_zero & known, sum_one & known, a.width)


def _not(a: Known) -> Known:
    return Known(a.one, a.zero, a.width)


def _add(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    return add_carry(ins[0], ins[1], exact(0, 1))


def _sub(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    return add_carry(ins[0], _not(ins[1]), exact(1, 1))


def _neg(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    return add_carry(exact(0, ins[0].width), _not(ins[0]), exact(1, 1))


def multiply(a: Known, b: Known) -> Known:
    """Return the known bits of the wrapping product of two ``width``-bit patterns."""
    w, m = a.width, a.mask
    tz = min(w, _trailing_ones(a.zero) + _trailing_ones(b.zero))
    zero, one = (1 << tz) - 1, 0
    low = min(_trailing_ones(a.known), _trailing_ones(b.known), w)  # low bits fully known
    if low:
        lm = (1 << low) - 1
        p = (a.one * b.one) & lm  # the low bits of a product depend on the low bits only
        zero, one = zero | (~p & lm), one | p
    top = a.maybe * b.maybe
    if top <= m:  # no wrap: the product is at most the product of the largest patterns
        zero |= below(top, w).zero
    return Known(zero & m, one & m, w)


def _mul(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    return multiply(ins[0], ins[1])


def _widening_mul(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    assert isinstance(t, IntType)
    a, b = (extend(k, t.width, t.signed) for k in ins)
    return multiply(a, b)  # the exact product of the extended operands, modulo 2**2N


def _udiv(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    a, b = ins
    assert isinstance(t, IntType)
    if t.signed:
        return unknown(a.width)
    return below(a.maybe // max(b.one, 1), a.width)  # a / 0 = 0; else at most max / min


def _urem(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    a, b = ins
    assert isinstance(t, IntType)
    if t.signed:
        return unknown(a.width)
    bound = a.maybe if b.one == 0 else min(a.maybe, b.maybe - 1)  # a % 0 = a
    return below(bound, a.width)


def _min_max(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    return meet(ins[0], ins[1])  # the result is one of the operands


# ----------------------------------------------------------------------------- bitwise


def _not_op(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    return _not(ins[0])


def _and(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    a, b = ins
    return Known(a.zero | b.zero, a.one & b.one, a.width)


def _or(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    a, b = ins
    return Known(a.zero & b.zero, a.one | b.one, a.width)


def _xor(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    a, b = ins
    return Known((a.zero & b.zero) | (a.one & b.one), (a.zero & b.one) | (a.one & b.zero),
                 a.width)


def amounts(n: Known, limit: int) -> list[int]:
    """Return the amounts ``n`` may hold, those ``>= limit`` as ``limit`` (all when too many)."""
    unknown_bits = ~(n.zero | n.one) & ((1 << n.width) - 1)
    if not unknown_bits:  # a constant amount (the usual case): no combinations to try
        return [min(n.one, limit)]
    free = [1 << i for i in range(n.width) if unknown_bits >> i & 1]
    if len(free) > 6:
        return list(range(limit + 1))
    out = set()
    for combo in range(1 << len(free)):
        v = n.one | sum(f for i, f in enumerate(free) if combo >> i & 1)
        out.add(min(v, limit))
    return sorted(out)


def _over_amounts(a: Known, n: Known, limit: int, one: Callable[[int], Known]) -> Known:
    out: Known | None = None
    for k in amounts(n, limit):
        r = one(k)
        out = r if out is None else meet(out, r)
    assert out is not None
    return out


def _shl(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    a, n = ins
    w, m = a.width, a.mask

    def by(k: int) -> Known:
        if k >= w:
            return exact(0, w)
        return Known(((a.zero << k) | ((1 << k) - 1)) & m, (a.one << k) & m, w)

    return _over_amounts(a, n, w, by)


def _shr(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    a, n = ins
    w, m = a.width, a.mask
    signed = isinstance(t, IntType) and t.signed

    def by(k: int) -> Known:
        if signed:
            k = min(k, w - 1)
            return Known((_sext(a.zero, w) >> k) & m, (_sext(a.one, w) >> k) & m, w)
        if k >= w:
            return exact(0, w)
        return Known((a.zero >> k) | (m & ~(m >> k)), a.one >> k, w)

    return _over_amounts(a, n, w, by)


def _rotl_masks(a: Known, r: int) -> Known:
    w, m = a.width, a.mask

    def rot(x: int) -> int:
        return ((x << r) | (x >> (w - r))) & m if r else x

    return Known(rot(a.zero), rot(a.one), w)


def _rotate(ins: list[Known], t: Type, attrs: Mapping[str, Any], left: bool) -> Known:
    a, n = ins
    w = a.width
    free = n.width - bin(n.known).count("1")
    rs = {v % w for v in amounts(n, 1 << n.width)} if free <= 6 else set(range(w))
    out: Known | None = None
    for r in sorted(rs):
        k = _rotl_masks(a, r if left else (w - r) % w)
        out = k if out is None else meet(out, k)
    assert out is not None
    return out


def _count(ins: list[Known], t: Type, attrs: Mapping[str, Any], op: str) -> Known:
    (a,) = ins
    w = a.width
    if op == "popcount":
        bound = bin(a.maybe).count("1")
    elif op == "clz":
        bound = w - a.one.bit_length()  # a known 1 ends the leading zeros
    else:
        bound = _trailing_ones(~a.one & a.mask) if a.one else w
    return below(bound, w)


# ----------------------------------------------------------------------------- comparisons


def _bounds(a: Known, signed: bool) -> tuple[int, int]:
    """Return the smallest and largest value the pattern can hold."""
    if not signed:
        return a.one, a.maybe
    s = 1 << (a.width - 1)
    lo = (a.one & ~s) | (0 if a.zero & s else s)
    hi = (a.maybe & ~s) | (s if a.one & s else 0)
    return _sext(lo, a.width), _sext(hi, a.width)


def _compare(ins: list[Known], in_types: Sequence[Type], op: str) -> Known:
    a, b = ins
    if op in ("eq", "ne"):
        differ = (a.one & b.zero) | (a.zero & b.one)
        if differ:
            return exact(op == "ne", 1)
        if a.is_const() and b.is_const():
            return exact(op == "eq", 1)
        return unknown(1)
    signed = isinstance(in_types[0], IntType) and in_types[0].signed
    (alo, ahi), (blo, bhi) = _bounds(a, signed), _bounds(b, signed)
    if op in ("gt", "ge"):
        op, (alo, ahi), (blo, bhi) = {"gt": "lt", "ge": "le"}[op], (blo, bhi), (alo, ahi)
    if (ahi < blo) if op == "lt" else (ahi <= blo):
        return exact(1, 1)
    if (alo >= bhi) if op == "lt" else (alo > bhi):
        return exact(0, 1)
    return unknown(1)


# ----------------------------------------------------------------------------- conversions


def _select(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    c, a, b = ins
    if c.is_const():
        return a if c.one else b
    return meet(a, b)


def _slice(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    (a,) = ins
    w = width_of(t)
    assert w is not None
    lo, m = int(attrs["lo"]), (1 << w) - 1
    return Known((a.zero >> lo) & m, (a.one >> lo) & m, w)


def _concat(ins: list[Known], t: Type, attrs: Mapping[str, Any]) -> Known:
    hi, lo = ins
    return Known(hi.zero << lo.width | lo.zero, hi.one << lo.width | lo.one, hi.width + lo.width)


Transfer = Callable[[list[Known], Type, Mapping[str, Any]], Known]

TRANSFER: dict[str, Transfer] = {
    "add": _add, "sub": _sub, "neg": _neg, "mul": _mul, "widening_mul": _widening_mul,
    "div": _udiv, "rem": _urem, "min": _min_max, "max": _min_max,
    "not": _not_op, "and": _and, "or": _or, "xor": _xor, "shl": _shl, "shr": _shr,
    "rotl": lambda ins, t, a: _rotate(ins, t, a, True),
    "rotr": lambda ins, t, a: _rotate(ins, t, a, False),
    "popcount": lambda ins, t, a: _count(ins, t, a, "popcount"),
    "clz": lambda ins, t, a: _count(ins, t, a, "clz"),
    "ctz": lambda ins, t, a: _count(ins, t, a, "ctz"),
    "select": _select, "slice": _slice, "concat": _concat,
}
"""Opcode -> transfer function on the operands' known bits (each operand scalar)."""

COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
UNSUPPORTED = frozenset({"param", "state", "array_update", "array", "tuple"})
"""Ops with no transfer of their own: params are unknown, the others are aggregates."""


_NO_ATTRS: Mapping[str, Any] = {}  # read only: the attributes of a node that has none

Memo = dict[bytes, "Known | None"]
"""Node id -> known bits. An id is a hash of the node's whole content (its inputs' ids
included), so an entry holds in every graph that has the node: walks may share one memo."""


class KnownBits:
    """Memoised known bits of the nodes of one graph (which may grow), without recursion."""

    __slots__ = ("graph", "memo")

    def __init__(self, graph: Graph, memo: Memo | None = None) -> None:
        self.graph = graph
        self.memo: Memo = {} if memo is None else memo

    def __call__(self, nid: bytes) -> Known | None:
        """Return the known bits of node ``nid`` (None for aggregates)."""
        memo = self.memo
        if nid in memo:
            return memo[nid]
        nodes = self.graph.nodes
        node = nodes[nid]
        for i in node.inputs:
            if i not in memo:
                break
        else:  # the usual case: the inputs' bits are known
            attrs = node.attrs
            memo[nid] = k = self.compute(node.op, node.type, node.inputs,
                                         dict(attrs) if attrs else _NO_ATTRS)
            return k
        stack = [nid]
        while stack:
            top = stack[-1]
            if top in memo:
                stack.pop()
                continue
            node = nodes[top]
            missing = [i for i in node.inputs if i not in memo]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            attrs = node.attrs
            memo[top] = self.compute(node.op, node.type, node.inputs,
                                     dict(attrs) if attrs else _NO_ATTRS)
        return memo[nid]

    def compute(self, op: str, t: Type, inputs: Sequence[bytes],
                attrs: Mapping[str, Any]) -> Known | None:
        """Return the known bits of a node with these parts (its inputs already in the graph)."""
        w = width_of(t)
        if w is None:
            return None
        if op == "const":
            return exact(int(attrs["value"]), w)
        nodes = self.graph.nodes
        if op == "array_index":
            arr = nodes[inputs[0]]
            if arr.op != "array":
                return unknown(w)
            elems = [self(e) for e in arr.inputs]
            out = elems[0]
            for e in elems[1:]:
                out = meet(out, e)  # type: ignore[arg-type]
            return out
        if op == "tuple_get":
            src = nodes[inputs[0]]
            return self(src.inputs[int(attrs["index"])]) if src.op == "tuple" else unknown(w)
        memo = self.memo
        ins = [memo[i] if i in memo else self(i) for i in inputs]
        if None in ins:
            return unknown(w)
        if op == "cast":
            src_t = nodes[inputs[0]].type
            return extend(ins[0], w, isinstance(src_t, IntType) and src_t.signed)  # type: ignore[arg-type]
        if op in COMPARISONS:
            return _compare(ins, [nodes[i].type for i in inputs], op)  # type: ignore[arg-type]
        rule = TRANSFER.get(op)
        return unknown(w) if rule is None else rule(ins, t, attrs)  # type: ignore[arg-type]


__all__ = [
    "COMPARISONS",
    "TRANSFER",
    "UNSUPPORTED",
    "Known",
    "KnownBits",
    "add_carry",
    "amounts",
    "below",
    "both",
    "exact",
    "extend",
    "meet",
    "multiply",
    "unknown",
    "width_of",
]
