"""What each `mem` becomes in hardware, and the bound its ports put on the II (ResMII).

A ``mem``'s chain in one transfer is ``state -> array_update / select -> ... -> next``; its
reads are ``array_index`` nodes on that chain. This module counts them and maps the memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kera.hls import recurrence as rc
from kera.ir.types import ArrayType

if TYPE_CHECKING:
    from kera.hls.pipeline import Schedule
    from kera.hls.schedule import Problem


@dataclass(frozen=True)
class MemPlan:
    """One `mem`: its shape, where it goes, its accesses per transfer, its bounds."""

    slot: rc.Slot
    name: str
    words: int
    width: int
    mapped_to: str  # "bram", "lutram" or "ff"
    reads: int
    writes: int
    res_mii: int
    reset_cycles: int
    why: str = ""

    def as_json(self) -> dict:
        """Return the report's "state" entry (STATE.md)."""
        return {"name": self.name, "kind": "mem", "words": self.words, "width": self.width,
                "mapped_to": self.mapped_to, "reads_per_transfer": self.reads,
                "writes_per_transfer": self.writes}


def chain(problem: Problem, slot: rc.Slot) -> set[int]:
    """Return the nodes of a memory's chain: its read and the arrays derived from it."""
    ids = {problem.ids[slot.read]}
    out = {slot.read}
    nodes = problem.graph.nodes
    for v in range(slot.read + 1, problem.size):
        node = nodes[problem.ids[v]]
        if (node.op == "array_update" and node.inputs[0] in ids) or (
                node.op == "select" and any(i in ids for i in node.inputs[1:])):
            out.add(v)
            ids.add(problem.ids[v])
    return out


def accesses(problem: Problem, slot: rc.Slot) -> tuple[int, int]:
    """Return (reads, writes) of a memory's chain in one transfer."""
    nodes = problem.graph.nodes
    links = chain(problem, slot)
    ids = {problem.ids[v] for v in links}
    reads = sum(1 for v in range(problem.size)
                if nodes[problem.ids[v]].op == "array_index"
                and nodes[problem.ids[v]].inputs[0] in ids)
    writes = sum(1 for v in links if nodes[problem.ids[v]].op == "array_update")
    return reads, writes


def plan_memories(problem: Problem, family: str) -> list[MemPlan]:
    """Return the plan of every `mem` of the region (registers for now: always correct)."""
    out = []
    for s in rc.slots(problem):
        node = problem.graph.nodes[problem.ids[s.read]]
        if node.attr("kind") != "mem":
            continue
        t = node.type
        assert isinstance(t, ArrayType)
        reads, writes = accesses(problem, s)
        out.append(MemPlan(s, s.name, t.length, t.elem.flat_width, "ff", reads, writes, 1, 0,
                           "kept in registers"))
    return out


def state_ff_bits(schedule: Schedule) -> int:
    """Return the flip-flop bits of a schedule's state (every element not in block RAM)."""
    if schedule.state is None:
        return 0
    ram = {m.slot.index for m in schedule.state.mems if m.mapped_to != "ff"}
    g = schedule.graph
    return sum(g.nodes[slot.read].type.flat_width
               for i, slot in enumerate(g.regions[schedule.region].states) if i not in ram)


__all__ = ["MemPlan", "accesses", "chain", "plan_memories", "state_ff_bits"]
