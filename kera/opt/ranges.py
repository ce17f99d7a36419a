"""Value-range analysis: a sound interval ``[lo, hi]`` for every integer (and bool) node.

Intervals are of the value a node holds (signed values for ``iN``), never wider than its type:
where an operation may wrap, the interval is the type's whole range. Sources of knowledge are
constants, casts from narrower types (zero- or sign-extension), masks (``and`` with a
non-negative operand), shifts by constants, ``or``/``xor`` of non-negative values, ``min``/``max``,
``select``, counts (``popcount``/``clz``/``ctz``) and exact interval arithmetic that does not
wrap.
"""

from __future__ import annotations

from collections.abc import Callable

from kera.ir.graph import Graph, Node
from kera.ir.tables import Unsupported
from kera.ir.types import BoolType, IntType, Type

Interval = tuple[int, int]


_FULL: dict[Type, Interval | None] = {}  # type -> its whole range (types are few and interned)


def full(t: Type) -> Interval | None:
    """Return the whole range of a scalar type (None for aggregates)."""
    try:
        return _FULL[t]
    except KeyError:
        pass
    r: Interval | None = None
    if isinstance(t, BoolType):
        r = 0, 1
    elif isinstance(t, IntType):
        r = t.min, t.max
    if len(_FULL) < 4096:  # bounds the table (aggregate types can be many)
        _FULL[t] = r
    return r


def fits(r: Interval, t: Type) -> bool:
    """Return True when every value of ``r`` is representable in ``t``."""
    f = full(t)
    return f is not None and f[0] <= r[0] and r[1] <= f[1]


def _clip(r: Interval, t: Type) -> Interval:
    """Return ``r`` when it fits ``t`` (the operation did not wrap), else ``t``'s whole range."""
    f = full(t)
    return r if f is not None and f[0] <= r[0] and r[1] <= f[1] else f  # type: ignore[return-value]


class Ranges:
    """Memoised intervals of the nodes of one graph, computed on demand without recursion."""

    __slots__ = ("graph", "memo")

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.memo: dict[bytes, Interval | None] = {}

    def __call__(self, nid: bytes) -> Interval | None:
        """Return the interval of node ``nid`` (None for aggregates)."""
        memo = self.memo
        if nid in memo:
            return memo[nid]
        nodes = self.graph.nodes
        node = nodes[nid]
        for i in node.inputs:
            if i not in memo:
                break
        else:  # the usual case: the inputs' intervals are known
            memo[nid] = r = self._compute(node)
            return r
        stack = [nid]
        while stack:
            top = stack[-1]
            if top in memo:
                stack.pop()
                continue
            missing = [i for i in nodes[top].inputs if i not in memo]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            memo[top] = self._compute(nodes[top])
        return memo[nid]

    def _compute(self, node: Node) -> Interval | None:
        t = node.type
        if type(t) is not IntType and not isinstance(t, IntType | BoolType):
            return None
        rule = RULES.get(node.op)
        if rule is None or isinstance(rule, Unsupported):
            return full(t)
        ins = [self.memo[i] for i in node.inputs]
        if None in ins and node.op != "array_index":  # the one rule that reads an aggregate
            return full(t)
        return _clip(rule(self, node, ins), t)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- transfer rules

Transfer = Callable[[Ranges, Node, list[Interval]], Interval]


def _const(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    v = int(node.attr("value"))
    return v, v


def _cast(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    return ins[0]  # clipped to the result type: kept exactly when it fits


def _add(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    return a + c, b + d


def _sub(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    return a - d, b - c


def _mul(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    p = (a * c, a * d, b * c, b * d)
    return min(p), max(p)


def _neg(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    a, b = ins[0]
    return -b, -a


def _not(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    a, b = ins[0]
    t = node.type
    if isinstance(t, IntType) and not t.signed:
        return t.mask - b, t.mask - a
    return (-b - 1, -a - 1) if isinstance(t, IntType) else (0, 1)


def _and(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    his = [hi for lo, hi in ins if lo >= 0]
    return (0, min(his)) if his else full(node.type)  # type: ignore[return-value]


def _or_xor(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    if a < 0 or c < 0:
        return full(node.type)  # type: ignore[return-value]
    return 0, (1 << max(b, d).bit_length()) - 1


def _shr(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    if c == d:
        return a >> c, b >> c  # floor division by 2**c, for signed and unsigned alike
    return min(a, 0), max(b, 0)


def _shl(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    t = node.type
    assert isinstance(t, IntType)
    if c == d:
        return (0, 0) if c >= t.width else (a << c, b << c)
    return full(t)  # type: ignore[return-value]


def _min(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    return min(a, c), min(b, d)


def _max(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    return max(a, c), max(b, d)


def _udivrem(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), (c, d) = ins
    t = node.type
    if isinstance(t, IntType) and t.signed:
        return full(t)  # type: ignore[return-value]
    if node.op == "rem" and c >= 1:
        return 0, min(b, d - 1)
    return 0, b  # a / 0 = 0 and a % 0 = a


def _select(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    _, (a, b), (c, d) = ins
    return min(a, c), max(b, d)


def _count(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    t = node.type
    assert isinstance(t, IntType)
    return 0, t.width


def _slice(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    a, b = ins[0]
    lo = int(node.attr("lo"))
    t = node.type
    assert isinstance(t, IntType)
    if a >= 0 and b >> lo <= t.mask:
        return a >> lo, b >> lo
    return full(t)  # type: ignore[return-value]


def _concat(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    (a, b), _ = ins
    lo_t = rg.graph.nodes[node.inputs[1]].type
    assert isinstance(lo_t, IntType)
    if a < 0:
        return full(node.type)  # type: ignore[return-value]
    return a << lo_t.width, (b << lo_t.width) | lo_t.mask


def _array_index(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    arr = rg.graph.nodes[node.inputs[0]]
    elems = [rg(e) for e in arr.inputs] if arr.op == "array" else [None]
    if any(e is None for e in elems):
        return full(node.type)  # type: ignore[return-value]
    return min(e[0] for e in elems), max(e[1] for e in elems)  # type: ignore[index]


def _bool(rg: Ranges, node: Node, ins: list[Interval]) -> Interval:
    return 0, 1


_AGGREGATE = Unsupported("an aggregate has no interval")

RULES: dict[str, Transfer | Unsupported] = {
    "param": Unsupported("a parameter may hold any value of its type"),
    "state": Unsupported("a state element may hold any value of its type"),
    "const": _const, "cast": _cast, "add": _add, "sub": _sub, "mul": _mul, "neg": _neg,
    "widening_mul": _mul, "not": _not, "and": _and, "or": _or_xor, "xor": _or_xor,
    "shr": _shr, "shl": _shl, "min": _min, "max": _max, "div": _udivrem, "rem": _udivrem,
    "rotl": Unsupported("a rotate moves high bits to the bottom: no bound but the type's"),
    "rotr": Unsupported("a rotate moves low bits to the top: no bound but the type's"),
    "eq": _bool, "ne": _bool, "lt": _bool, "le": _bool, "gt": _bool, "ge": _bool,
    "select": _select, "popcount": _count, "clz": _count, "ctz": _count, "slice": _slice,
    "concat": _concat, "array_index": _array_index,
    "array": _AGGREGATE, "array_update": _AGGREGATE, "tuple": _AGGREGATE,
    "tuple_get": Unsupported("tuple fields are not tracked: a field has its type's range"),
}
"""The transfer rule of each opcode (an integer or bool result's interval from its operands')."""


__all__ = ["RULES", "Interval", "Ranges", "fits", "full"]
