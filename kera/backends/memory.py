"""In-place arrays (``kera.backends.state``): reads that forward, writes that land at row end.

Within one transfer a version of an in-place array is the buffer as the transfer started plus
the writes made so far (``MemVersion``). A read at index ``i`` loads word ``min(i, N-1)`` of the
buffer and then, write by write in order, takes the written value where the write's position
is the same (the hardware's forwarding, in software); positions known at compile time are
compared at compile time. A write at ``i`` lands at ``min(i, N)``: word ``N`` is a scratch word,
so an index past the end changes nothing. An ``if`` merge of two versions keeps their common
writes and guards the others: a write of the arm not taken goes to the scratch word. The
writes of the slot's next version are stored when the row ends (``stores``), so every read of
the transfer saw the buffer as it started, and the cost per transfer does not grow with N.
"""

from __future__ import annotations

from collections.abc import Iterator

from kera.backends.lower import (
    U32,
    Emitter,
    LoweringError,
    MemVersion,
    OpCall,
    Tree,
    Write,
    build_tree,
    int_type,
    leaves_of,
    select_tree,
)


def _position(em: Emitter, call: OpCall, idx: Tree, limit: int) -> tuple[str, int | None]:
    k = call.consts[1]
    if k is not None:
        c = min(k, limit)
        return em.const(U32, c), c
    assert isinstance(idx, str), idx
    return em.position(idx, int_type(call.ins[1]), limit), None


def read(em: Emitter, call: OpCall, ver: MemVersion, idx: Tree) -> Tree:
    """``array_index`` of a version: the buffer's word, then the forwarding of its writes."""
    slot = ver.slot
    pos, c = _position(em, call, idx, slot.length - 1)
    writes = ver.writes
    value: Tree | None = None
    start = 0
    if c is not None:  # the newest write known to hit this word
        for i in range(len(writes) - 1, -1, -1):
            if writes[i].const == c:
                value, start = writes[i].value, i + 1
                break
    if value is None:
        leaves = iter(range(len(slot.leaves)))
        value = build_tree(slot.elem, lambda t: em.mem_load(slot, next(leaves), pos, t))
    for w in writes[start:]:
        if w.const is not None and (c is not None or w.const >= slot.length):
            continue  # a different known word, or the scratch word
        if w.const is not None:
            hit = em.index_is(pos, U32, w.const)
        elif c is not None:
            hit = em.index_is(w.pos, U32, c)
        else:
            hit = em.same(w.pos, pos)
        value = select_tree(em, hit, w.value, value, slot.elem)
    return value


def update(em: Emitter, call: OpCall, ver: MemVersion, idx: Tree, val: Tree) -> Tree:
    """``array_update`` of a version: one more write (none for a known index past the end)."""
    pos, c = _position(em, call, idx, ver.slot.length)
    if c == ver.slot.length:
        return ver
    return MemVersion(ver.slot, (*ver.writes, Write(pos, c, val)))


def merge(em: Emitter, cond: str, a: MemVersion, b: MemVersion) -> Tree:
    """``select(cond, a, b)`` of two versions: the common writes, then each arm's own writes
    sent to the scratch word when its arm is not taken."""
    if a.slot is not b.slot:
        raise LoweringError("a select of two different in-place arrays")
    common = 0
    for x, y in zip(a.writes, b.writes, strict=False):
        if x is not y:
            break
        common += 1
    scratch = em.const(U32, a.slot.length)
    taken = [Write(em.select(cond, w.pos, scratch, U32), None, w.value)
             for w in a.writes[common:]]
    other = [Write(em.select(cond, scratch, w.pos, U32), None, w.value)
             for w in b.writes[common:]]
    return MemVersion(a.slot, (*a.writes[:common], *taken, *other))


def stores(ver: Tree) -> Iterator[tuple[int, str, str]]:
    """Yield (element leaf, position, value) of every store a next version makes, in order."""
    if not isinstance(ver, MemVersion):
        raise LoweringError("the next value of an in-place array is not one of its versions")
    for w in ver.writes:
        for j, v in enumerate(leaves_of(w.value)):
            yield j, w.pos, v


__all__ = ["merge", "read", "stores", "update"]
