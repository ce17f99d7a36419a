"""Demanded bits: which bits of each node some user reads (LLVM's DemandedBits, our own).

The analysis runs backward over one whole graph: a region's result is demanded whole, and each
node passes to each operand the bits of that operand that can change one of the node's own
demanded bits (``DEMAND``, keyed by opcode; an op without an entry demands every bit of every
operand once any of its bits is demanded — always sound). A node's demand is the union over
its users. A bit that is not demanded can change without changing any region's result: the
tests check that exhaustively on widths 1–6. Aggregates are demanded whole or not at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from kera.ir.graph import Graph, Node
from kera.ir.types import IntType, Type
from kera.opt.knownbits import Known, KnownBits, amounts, width_of


def full(t: Type) -> int:
    """Return the demand of a whole value: every bit (an aggregate: -1, "all of it")."""
    w = width_of(t)
    return -1 if w is None else (1 << w) - 1


def low_bits(d: int) -> int:
    """Return the bits up to the highest bit of ``d``: what carries into ``d`` depends on."""
    return (1 << d.bit_length()) - 1


Known_ = Callable[[int], "Known | None"]
"""The known bits of operand ``i`` (computed only when a rule asks)."""

Demand = Callable[[int, Node, list[Type], Known_], Sequence[int]]


def _same(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    return [d] * len(ins)


def _carry(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    return [low_bits(d)] * len(ins)


def _and(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    a, b = kb(0), kb(1)
    assert a is not None and b is not None
    # Where the other operand is 0 this one is not read; where both are, one of them still is
    # (else both could change there), as in LLVM.
    return [d & ~b.zero, d & ~(a.zero & ~b.zero)]


def _or(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    a, b = kb(0), kb(1)
    assert a is not None and b is not None
    return [d & ~b.one, d & ~(a.one & ~b.one)]  # where the other is 1, this one is not read


def _shift_amount(node: Node, kb: Known_, width: int) -> list[int]:
    n = kb(1)
    assert n is not None
    return amounts(n, width)


def _shl(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    w = width_of(ins[0])
    assert w is not None
    m = (1 << w) - 1
    x = 0
    for k in _shift_amount(node, kb, w):
        x |= (d >> k) & m if k < w else 0
    return [x, full(ins[1])]


def _shr(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    t = ins[0]
    assert isinstance(t, IntType)
    w, m = t.width, t.mask
    x = 0
    for k in _shift_amount(node, kb, w):
        if t.signed:
            k = min(k, w - 1)
            x |= (d << k) & m
            if k and d >> (w - k):  # the bits shifted in copy the sign bit
                x |= 1 << (w - 1)
        elif k < w:
            x |= (d << k) & m
    return [x, full(ins[1])]


def _rotate(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    w = width_of(ins[0])
    n = kb(1)
    assert w is not None and n is not None
    m = (1 << w) - 1
    if n.is_const():
        r = n.one % w
        r = r if node.op == "rotr" else (w - r) % w  # the operand's bits, rotated back
        x = ((d << r) | (d >> (w - r))) & m if r else d
        return [x, full(ins[1])]
    return [m if d else 0, full(ins[1])]


def _cast(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    src = ins[0]
    w = width_of(src)
    assert w is not None
    x = d & ((1 << w) - 1)
    if d >> w and isinstance(src, IntType) and src.signed:
        x |= 1 << (w - 1)  # the extension copies the sign bit
    return [x]


def _slice(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    return [d << int(node.attr("lo"))]


def _concat(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    lw = width_of(ins[1])
    assert lw is not None
    return [d >> lw, d & ((1 << lw) - 1)]


def _select(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    c = kb(0)
    if c is not None and c.is_const():  # only the chosen arm is read
        return [1, d, 0] if c.one else [1, 0, d]
    return [1, d, d]


def _widening_mul(d: int, node: Node, ins: list[Type], kb: Known_) -> Sequence[int]:
    w = width_of(ins[0])
    assert w is not None
    if d >> w:
        return [full(ins[0]), full(ins[1])]
    return [low_bits(d)] * 2  # the low half depends on the low bits only


DEMAND: dict[str, Demand] = {
    "add": _carry, "sub": _carry, "mul": _carry, "neg": _carry,
    "not": _same, "xor": _same, "and": _and, "or": _or,
    "shl": _shl, "shr": _shr, "rotl": _rotate, "rotr": _rotate,
    "cast": _cast, "slice": _slice, "concat": _concat, "select": _select,
    "widening_mul": _widening_mul,
}
"""Opcode -> the demand on each operand, given the node's own demand (scalar results only)."""


def _operand(known: KnownBits, inputs: tuple[bytes, ...], i: int) -> Known | None:
    return known(inputs[i])


Wants = dict[tuple[bytes, int], Sequence[int]]
"""(node id, its demand) -> the demand on each operand. A function of the node's content and
its demand only (the operands' known bits are a function of their ids), so one memo serves
every graph that holds the node: ``bits`` keeps one over its walks."""


def demanded(graph: Graph, known: KnownBits | None = None,
             wants_memo: Wants | None = None) -> dict[bytes, int]:
    """Return the demanded bits of every live node of ``graph`` (0: nothing reads it).

    ``wants_memo`` (optional) keeps each node's demands on its operands between calls.
    """
    known = KnownBits(graph) if known is None else known
    memo: Wants = {} if wants_memo is None else wants_memo
    nodes = graph.nodes
    out = dict.fromkeys(nodes, 0)
    alive: set[bytes] = set()  # the nodes the regions reach, found by the same sweep
    for region in graph.regions.values():
        alive.update(region.roots())
        for root in (region.result, *(slot.next for slot in region.states)):
            out[root] = full(nodes[root].type)
    get, reached = memo.get, alive.update
    for nid, node in reversed(nodes.items()):  # users before operands: demands are whole
        d = out[nid]
        if not d:
            if node.inputs and nid in alive:  # live, though no bit of it is read
                reached(node.inputs)
            continue
        t = node.type
        w = t.width if type(t) is IntType else width_of(t)
        if w is not None:  # the users' demands are kept unmasked until here
            out[nid] = d = d & ((1 << w) - 1)
        inputs = node.inputs
        if not inputs:
            continue
        reached(inputs)
        if not d:
            continue
        key = (nid, d)
        wants = get(key)
        if wants is None:
            wants = memo[key] = _wants(node, d, w, nodes, known)
        if len(inputs) == 1:
            out[inputs[0]] |= wants[0]
        else:
            for i, want in zip(inputs, wants, strict=True):
                out[i] |= want
    if len(alive) < len(out):  # only the live nodes are listed
        out = {nid: d for nid, d in out.items() if nid in alive}
    return out


def _wants(node: Node, d: int, w: int | None, nodes: dict[bytes, Node],
           known: KnownBits) -> Sequence[int]:
    """Return the demand of ``node`` (demanded ``d``, width ``w``) on each of its operands."""
    inputs = node.inputs
    ins = [nodes[i].type for i in inputs]
    rule = DEMAND.get(node.op) if w is not None else None
    if rule is None:
        return [full(t) for t in ins]
    for t in ins:
        if type(t) is not IntType and width_of(t) is None:  # an aggregate operand
            return [full(t) for t in ins]
    return rule(d, node, ins, partial(_operand, known, inputs))


__all__ = ["DEMAND", "Demand", "Wants", "demanded", "full", "low_bits"]
