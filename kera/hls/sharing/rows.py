"""The list schedule's sharing rows: the units per class, chaining across units in a stage
(``Chains``), each unit's start time in a stage (``unit_slots``), and the late releases of
side chains (``release_late``, ``release_all``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kera.hls.timing import EPS_NS

from .classes import Plan

if TYPE_CHECKING:
    from kera.hls.schedule import Problem


def residue_limits(problem: Problem) -> tuple[dict[int, int], list[int]]:
    """Return node -> group and the units of each group (for the list scheduler)."""
    plan: Plan | None = problem.share
    if plan is None:
        return {}, []
    return plan.of, [g.units for g in plan.groups]


class Chains:
    """The units chained in one stage: class ``h`` -> ``g`` when an op of ``g`` reads, in its
    own stage, an op of ``h`` (or a private op after one). The list scheduler keeps these edges
    free of cycles (a cycle would be a combinational loop through the units' multiplexers,
    a false path but a loop), so a unit may follow another in one stage whatever its ports.
    """

    def __init__(self, n: int, groups: int) -> None:
        self.after: list[frozenset[int]] = [frozenset()] * n  # private node -> classes before
        self.succ: list[set[int]] = [set() for _ in range(groups)]

    def before(self, inputs: list[int], s: int, stage: list[int],
               of: dict[int, int]) -> frozenset[int]:
        """Return the classes combinationally before a node of stage ``s`` reading ``inputs``."""
        out: set[int] = set()
        for u in inputs:
            if stage[u] == s:
                g = of.get(u)
                if g is not None:
                    out.add(g)
                else:
                    out |= self.after[u]
        return frozenset(out)

    def can(self, g: int, hs: frozenset[int]) -> bool:
        """Whether edges ``h -> g`` for ``h`` in ``hs`` keep the chains free of cycles."""
        if not hs:
            return True
        if g in hs:
            return False
        seen, todo = {g}, [g]
        while todo:
            for x in self.succ[todo.pop()]:
                if x in hs:
                    return False
                if x not in seen:
                    seen.add(x)
                    todo.append(x)
        return True

    def add(self, g: int, hs: frozenset[int]) -> None:
        """Record the edges ``h -> g``."""
        for h in hs:
            self.succ[h].add(g)


def unit_slots(problem: Problem, finish: list[float]) -> list[float]:
    """Return each group's start time in a stage: the latest its ops start (``finish``).

    A unit's operand multiplexer joins its ops' operands of every stage, so a static timing
    analysis sees the latest of their arrivals followed by the unit and whatever it feeds, in
    any stage: when every op of the unit starts at one time, the paths the schedule costs are
    the ones the placed design has.
    """
    plan: Plan | None = problem.share
    assert plan is not None
    return [max(finish[m] - problem.delay[m] for m in g.members) for g in plan.groups]


def slots_hold(problem: Problem, start: list[float]) -> bool:
    """Whether no op of a unit has an operand later than its group's start time."""
    plan: Plan | None = problem.share
    if plan is None or plan.slot_ns is None:
        return True
    return all(start[m] <= plan.slot_ns[g] + EPS_NS for m, g in plan.of.items())


def release_late(problem: Problem, stage: list[int]) -> dict[int, int]:
    """Return shared op -> a stage to hold it back to, for the classes no unit feeds.

    Such an op (a round constant plus a key word) is placed early by the list schedule: it
    takes a counter slot early and its value crosses banks until it is used. Held back to the
    latest free residue at or before its ALAP stage and its users' stages, it runs near them.
    """
    from kera.hls.schedule import alap_schedule

    plan: Plan | None = problem.share
    if plan is None:
        return {}
    depth = max((stage[v] for v in range(problem.size) if not problem.const[v]), default=0)
    alap = alap_schedule(problem, depth)
    out: dict[int, int] = {}
    ii = problem.ii
    fed = [False] * problem.size  # downstream of a shared op
    for v in range(problem.size):
        fed[v] = any(u in plan.of or fed[u] for u in problem.inputs[v])
    for g in plan.groups:  # only classes fed by no unit: the round constants, key words
        if any(fed[m] for m in g.members):
            continue
        busy = [0] * ii  # ALAP with the class's resource row: latest free residue first
        late = {m: min([alap[m]] + [stage[w] for w in problem.users[m]]) for m in g.members}
        for m in sorted(g.members, key=lambda m: (-late[m], m)):
            t = late[m]
            while t > stage[m] and busy[t % ii] >= g.units:
                t -= 1
            if t > stage[m]:
                busy[t % ii] += 1
                out[m] = t
    return out


def release_all(problem: Problem, stage: list[int], finish: list[float]) -> dict[int, int]:
    """Return node -> a stage to hold it back to: every op as late as its users allow.

    A reverse list schedule of the ASAP one (``stage``, ``finish``): in reverse topological
    order each op gets the latest (stage, finish) that ends before every user starts -- in the
    user's stage when it fits before the user's start (a shared op starts at its unit's time,
    ``Plan.slot_ns``), else at the end of the stage before -- a shared op at the latest
    residue there or before with a free unit (the others' residues: ASAP, or where this pass
    moved them). So a folded loop's side chain (SHA-256's message schedule) is computed near
    the round that reads it: its values cross fewer banks (shorter delay lines).
    """
    plan: Plan | None = problem.share
    if plan is None or problem.slots or problem.gaps:  # state: the modulo constraints rule
        return {}
    ii, period, slots = problem.ii, problem.period, plan.slot_ns
    busy = [[0] * ii for _ in plan.groups]
    for m, h in plan.of.items():
        busy[h][stage[m] % ii] += 1
    late, late_start = list(stage), [f - d for f, d in zip(finish, problem.delay, strict=True)]
    out: dict[int, int] = {}
    for v in reversed(range(problem.size)):
        if problem.const[v] or problem.param[v] or v in problem.virtual or v == problem.result:
            continue
        users = [w for w in problem.users[v] if not problem.const[w]]
        if not users:
            continue
        t, f = min((late[w], late_start[w]) for w in users)
        g = plan.of.get(v)
        start = slots[g] if g is not None and slots is not None else None
        d = problem.delay[v]
        if (start if start is not None else f - d) + d > f + EPS_NS or f - d < -EPS_NS:
            t, f = t - 1, period
        if g is not None and t > stage[v]:
            busy[g][stage[v] % ii] -= 1
            while t > stage[v] and busy[g][t % ii] >= plan.groups[g].units:
                t, f = t - 1, period
            busy[g][t % ii] += 1
        if t > stage[v]:
            late[v] = out[v] = t
            late_start[v] = start if start is not None else f - d
    return out
