"""Recurrences of a stateful region: RecMII, the recurrence table, and state-aware ASAP.

A region's state slots are back edges ``next -> read`` over the DAG of one transfer. With the
back edges added, every strongly connected component (networkx) that holds a ``state`` read is
a *group*: its reads get one common release stage ``r`` (a read has no inputs, so it sits in
stage ``r``). The modulo constraint of every slot is ``0 <= stage(next) - stage(read) <= II - 1``:
transfer ``k`` writes the register when it leaves the stage of ``next``, and transfer ``k + 1``
reads it ``II`` enabled cycles after transfer ``k`` did.

``RecMII`` of a group is ``1 +`` the stage, counted from 0, that chaining (the scheduler's rule)
gives each ``next`` of the group when only the group's own nodes are placed and its reads start
stage 0 at time 0: the best any schedule with a common release can do. ``state_asap`` finds
the least release per group by a fixpoint of ASAP schedules.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import networkx as nx

from kera.hls.timing import EPS_NS, Locator
from kera.ir.graph import Graph

if TYPE_CHECKING:
    from kera.hls.schedule import Problem


@dataclass(frozen=True)
class Slot:
    """One state slot by node index: its read, its next (None when no write is needed)."""

    index: int
    read: int
    next: int | None
    name: str


@dataclass(frozen=True)
class Recurrence:
    """One state's loop: its state, delay, stages and the ops on its longest path."""

    slot: Slot
    delay_ns: float
    cycles: int
    path: tuple[int, ...]  # node indices, read first

    def as_json(self, problem: Problem) -> dict:
        """Return the report's entry (STATE.md "recurrences"); each op on the path names its
        node (``node``: the id) for the report to map to a source line."""
        ops = [v for v in self.path if problem.delay[v] > 0] or list(self.path[1:])
        return {"state": self.slot.name, "delay_ns": round(self.delay_ns, 3),
                "cycles": self.cycles,
                "path": [{"op": problem.graph.nodes[problem.ids[v]].op,
                          "delay_ns": round(problem.delay[v], 3), "node": problem.ids[v]}
                         for v in ops]}


def with_sources(entry: Mapping[str, Any], graph: Graph, locate: Locator) -> dict:
    """Return a recurrence entry with each op's ``node`` replaced by its ``source``."""
    path = []
    for p in entry["path"]:
        span = graph.spans.get(p["node"])
        path.append({"op": p["op"], "delay_ns": p["delay_ns"],
                     "source": locate(span) if span is not None else ""})
    return {**entry, "path": path}


def slots(problem: Problem) -> list[Slot]:
    """Return the region's state slots as node indices, with their report names."""
    graph = problem.graph
    region = graph.regions[problem.region]
    index = {nid: k for k, nid in enumerate(problem.ids)}
    names = getattr(graph, "state_names", {}) or {}
    out = []
    for i, slot in enumerate(region.states):
        read = index[slot.read]
        nxt = index[slot.next]
        no_write = nxt == read or problem.const[nxt]
        out.append(Slot(i, read, None if no_write else nxt,
                        str(names.get(slot.read, f"state{i}"))))
    return out


def components(problem: Problem, the_slots: list[Slot]) -> list[list[int]]:
    """Return the groups: for each SCC holding reads, the positions in ``the_slots`` of its
    slots (groups in the order of their first slot)."""
    g = nx.DiGraph()
    g.add_nodes_from(range(problem.size))
    for v in range(problem.size):
        g.add_edges_from((u, v) for u in problem.inputs[v])
    g.add_edges_from((s.next, s.read) for s in the_slots if s.next is not None)
    comp = {}
    for k, scc in enumerate(nx.strongly_connected_components(g)):
        for v in scc:
            comp[v] = k
    groups: dict[int, list[int]] = {}
    for pos, s in enumerate(the_slots):
        groups.setdefault(comp[s.read], []).append(pos)
    return list(groups.values())


def recurrences(problem: Problem, the_slots: list[Slot],
                groups: list[list[int]]) -> list[Recurrence]:
    """Return one ``Recurrence`` per slot whose next depends on a read of its own group."""
    out = []
    for group in groups:
        reads = {the_slots[p].read for p in group}
        members = _members(problem, the_slots, group)
        stage, dist, prev = _restricted_asap(problem, reads, members)
        for p in group:
            s = the_slots[p]
            if s.next is None or s.next not in dist:
                continue
            path = [s.next]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])  # type: ignore[arg-type]
            out.append(Recurrence(s, dist[s.next], stage[s.next] + 1, tuple(reversed(path))))
    return out


def _members(problem: Problem, the_slots: list[Slot], group: list[int]) -> set[int]:
    """Return the nodes on paths from the group's reads to its nexts (one transfer)."""
    reads = {the_slots[p].read for p in group}
    nexts = {the_slots[p].next for p in group if the_slots[p].next is not None}
    down = set(reads)
    for v in range(problem.size):
        if any(u in down for u in problem.inputs[v]):
            down.add(v)
    up: set[int] = {n for n in nexts if n is not None}
    for v in range(problem.size - 1, -1, -1):
        if v in up:
            up.update(problem.inputs[v])
    return down & up


def _restricted_asap(problem: Problem, reads: set[int], members: set[int]
                     ) -> tuple[dict[int, int], dict[int, float], dict[int, int | None]]:
    """Chain the group's nodes only, reads at stage 0 time 0: stage, longest delay, parent."""
    stage: dict[int, int] = {}
    finish: dict[int, float] = {}
    dist: dict[int, float] = {}
    prev: dict[int, int | None] = {}
    for v in range(problem.size):
        if v not in members:
            continue
        if v in reads:  # a block RAM read costs its clock-to-output
            d = problem.delay[v]
            stage[v], finish[v], dist[v], prev[v] = 0, d, d, None
            continue
        ins = [u for u in problem.inputs[v] if u in stage]
        s = max((stage[u] for u in ins), default=0)
        start = max((finish[u] for u in ins if stage[u] == s), default=0.0)
        if start + problem.delay[v] > problem.period + EPS_NS:
            s, start = s + 1, 0.0
        stage[v], finish[v] = s, start + problem.delay[v]
        best = max(ins, key=lambda u: dist[u], default=None)
        prev[v] = best
        dist[v] = (dist[best] if best is not None else 0.0) + problem.delay[v]
    return stage, dist, prev


def rec_mii(recs: list[Recurrence]) -> int:
    """Return the recurrence-constrained minimum II (1 without recurrences)."""
    return max((r.cycles for r in recs), default=1)


def suggest_clock(problem: Problem, rec: Recurrence, ii: int, margin: float,
                  overhead: float) -> int | None:
    """Return the fastest whole clock (MHz) at which ``rec`` closes within ``ii`` cycles."""
    if rec.delay_ns <= 0:
        return None
    mhz = math.floor(1000.0 * (1.0 - margin) * ii / (rec.delay_ns + ii * overhead)) + 1
    while mhz >= 1:
        if _fits(problem, rec, 1000.0 / mhz * (1.0 - margin) - overhead, ii):
            return mhz
        mhz -= 1
    return None


def _fits(problem: Problem, rec: Recurrence, period: float, ii: int) -> bool:
    stage, finish = 0, 0.0
    for v in rec.path[1:]:
        d = problem.delay[v]
        if d > period + EPS_NS:
            return False
        if finish + d > period + EPS_NS:
            stage, finish = stage + 1, 0.0
        finish += d
    return stage + 1 <= ii


def state_asap(problem: Problem, the_slots: list[Slot], groups: list[list[int]], ii: int,
               asap: object) -> tuple[list[int], list[float]]:
    """Return the ASAP stages with the least group releases meeting every modulo constraint.

    ``asap(release)`` is the scheduler's list schedule with ``release`` (node index -> earliest
    stage of a read). Raises ``AssertionError`` when no release works (the caller checks
    ``ii >= RecMII`` first, so that is a bug).
    """
    assert callable(asap)
    release = [0] * len(groups)
    for _ in range(64 * (len(groups) + problem.size + 2)):
        rel = {the_slots[p].read: release[k] for k, g in enumerate(groups) for p in g}
        stage, finish = asap(rel)
        changed = False
        for k, g in enumerate(groups):
            need = max((stage[the_slots[p].next] - (ii - 1) for p in g
                        if the_slots[p].next is not None), default=0)
            if need > release[k]:
                release[k], changed = need, True
        if not changed:
            return stage, finish
    raise AssertionError("scheduler bug: the state releases do not converge")


__all__ = ["Recurrence", "Slot", "components", "rec_mii", "recurrences", "slots",
           "state_asap", "suggest_clock", "with_sources"]
