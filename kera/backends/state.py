"""Where a stateful region's state lives in the golden models (STATE.md), and its initial words.

A backend runs the rows of one call as ONE stream, in order, from the initial state; each
transfer reads the state the previous one left. ``plan_state(schedule)`` decides, per slot:

* ``regs``: the state is a tree of scalar variables (C locals, WASM locals kept in globals
  between calls, PTX registers). The ``state`` node lowers to those variables; after each row
  the slot's next value is copied into them (two-phase, so a swap of two states is right).
* ``in_place``: an array whose every version is made by ``array_update``/``select`` from the
  ``state`` read and is only indexed, updated or merged (a ``mem``, or a big ``reg`` array):
  it lives in a buffer of ``length + 1`` words per element leaf and is updated in place.
  A read forwards from the transfer's earlier writes (``kera.backends.memory``); the writes are
  stored at the end of the row; the extra word is a scratch slot for writes that do not happen.

Each reg leaf has a 64-bit word in the reg buffer (``regs_buffer``); each in-place slot has one
buffer per element leaf (``memory_buffers``), both filled with the initial words per call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kera.backends.layout import Scalar, flatten_type, leaf_arrays, to_word, word_dtype
from kera.hls.pipeline import Schedule
from kera.ir.graph import Graph, Region
from kera.ir.types import ArrayType, Type

IN_PLACE_LEAVES = 32  # a `reg` array with more leaves than this is updated in place too
_CHAIN_USES = {"array_index": (0,), "array_update": (0,), "select": (1, 2)}


@dataclass(frozen=True)
class SlotPlan:
    """One state slot as a backend stores it."""

    position: int  # in ``region.states``
    index: int  # the ``state`` node's ``index`` attribute
    kind: str  # "reg" | "mem"
    type: Type
    in_place: bool
    leaves: tuple[Scalar, ...]  # regs: the state's leaves; in place: one element's leaves
    first: int  # regs: number of the first leaf among all reg leaves; in place: of the buffer
    init: tuple[tuple[int, ...], ...]  # regs: (word,) per leaf; in place: words per leaf

    @property
    def length(self) -> int:
        """Elements of an in-place array (0 for a regs slot)."""
        return self.type.length if self.in_place and isinstance(self.type, ArrayType) else 0

    @property
    def elem(self) -> Type:
        """The element type of an in-place array."""
        assert isinstance(self.type, ArrayType)
        return self.type.elem


@dataclass(frozen=True)
class StatePlan:
    """Every slot of a region, and the buffers that hold them between rows and calls."""

    slots: tuple[SlotPlan, ...]

    def slot(self, index: int) -> SlotPlan:
        """Return the slot whose ``state`` node has attribute ``index``."""
        for s in self.slots:
            if s.index == index:
                return s
        raise KeyError(index)

    @property
    def reg_leaves(self) -> list[tuple[SlotPlan, int, Scalar]]:
        """(slot, leaf number within the slot, type) of every reg leaf, in buffer order."""
        return [(s, k, t) for s in self.slots if not s.in_place for k, t in enumerate(s.leaves)]

    @property
    def memories(self) -> list[tuple[SlotPlan, int, Scalar]]:
        """(slot, element leaf, type) of every in-place buffer, in buffer order."""
        return [(s, j, t) for s in self.slots if s.in_place for j, t in enumerate(s.leaves)]

    def regs_buffer(self) -> np.ndarray:
        """A fresh buffer of the reg leaves' initial container words (one uint64 each)."""
        words = [s.init[k][0] for s, k, _ in self.reg_leaves]
        return np.array(words or [0], dtype=np.uint64)

    def memory_buffers(self) -> list[np.ndarray]:
        """Fresh buffers of the in-place arrays' initial words (``length + 1`` per leaf)."""
        return [np.array([*s.init[j], 0], dtype=word_dtype(t)) for s, j, t in self.memories]


def plan_state(schedule: Schedule) -> StatePlan | None:
    """Return the state plan of ``schedule``'s region (None for a pure region)."""
    graph = schedule.graph
    region = graph.regions[schedule.region]
    if not region.stateful:
        return None
    from kera.interp import evaluate_closed

    inits = evaluate_closed(graph, [s.init for s in region.states])
    slots, regs, bufs = [], 0, 0
    users = _users(graph, schedule.order)
    for pos, s in enumerate(region.states):
        read = graph.nodes[s.read]
        t = read.type
        words = [int(to_word(a, leaf.type, 1)[0])
                 for a, leaf in zip(leaf_arrays(inits[s.init], t), flatten_type(t), strict=True)]
        in_place = isinstance(t, ArrayType) and _chain_ok(graph, region, users, pos) and (
            read.attr("kind") == "mem" or len(words) > IN_PLACE_LEAVES)
        if in_place:
            assert isinstance(t, ArrayType)
            elem = tuple(leaf.type for leaf in flatten_type(t.elem))
            n = len(elem)
            init = tuple(tuple(words[j::n]) for j in range(n))
            slots.append(SlotPlan(pos, int(read.attr("index")), str(read.attr("kind")), t, True,
                                  elem, bufs, init))
            bufs += n
        else:
            leaves = tuple(leaf.type for leaf in flatten_type(t))
            slots.append(SlotPlan(pos, int(read.attr("index")), str(read.attr("kind")), t, False,
                                  leaves, regs, tuple((w,) for w in words)))
            regs += len(leaves)
    return StatePlan(tuple(slots))


def _users(graph: Graph, order: tuple[bytes, ...]) -> dict[bytes, list[tuple[bytes, int]]]:
    out: dict[bytes, list[tuple[bytes, int]]] = {}
    for nid in order:
        for k, i in enumerate(graph.nodes[nid].inputs):
            out.setdefault(i, []).append((nid, k))
    return out


def _chain_ok(graph: Graph, region: Region, users: dict[bytes, list[tuple[bytes, int]]],
              pos: int) -> bool:
    """True when every version of slot ``pos`` is only indexed, updated or merged with
    another version, and neither the result nor another slot's next value is one."""
    slot = region.states[pos]
    chain, todo = {slot.read}, [slot.read]
    while todo:
        nid = todo.pop()
        for user, k in users.get(nid, []):
            node = graph.nodes[user]
            if k not in _CHAIN_USES.get(node.op, ()):
                return False
            if node.op == "array_index":
                continue
            if node.op == "select" and not {node.inputs[1], node.inputs[2]} <= chain | {nid}:
                # the other arm must be a version too (it is checked when it is reached)
                other = node.inputs[2] if k == 1 else node.inputs[1]
                if not _derives(graph, other, slot.read):
                    return False
            if user not in chain:
                chain.add(user)
                todo.append(user)
    others = {s.next for i, s in enumerate(region.states) if i != pos}
    return slot.next in chain and region.result not in chain and not chain & others


def _derives(graph: Graph, nid: bytes, root: bytes) -> bool:
    """True when ``nid`` is ``root`` or made from it by array_update/select only."""
    todo, seen = [nid], set()
    while todo:
        x = todo.pop()
        if x == root:
            continue
        if x in seen:
            continue
        seen.add(x)
        node = graph.nodes[x]
        if node.op == "array_update":
            todo.append(node.inputs[0])
        elif node.op == "select":
            todo += [node.inputs[1], node.inputs[2]]
        else:
            return False
    return True


__all__ = ["IN_PLACE_LEAVES", "SlotPlan", "StatePlan", "plan_state"]
