"""Binding: the units of a final schedule (``bind``), each keeping one role (``assign``), and
their multiplexers recounted from the register binding's real sources (``refine``)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from itertools import permutations
from typing import TYPE_CHECKING, Any

from kera.hls.pipeline import Schedule, Unit
from kera.hls.timing import CostModel

from .classes import Group, Plan, mux_lut_per_input
from .columns import column_lut, unit_columns

if TYPE_CHECKING:
    from kera.hls.schedule import Problem


def bind(problem: Problem, stage: list[int]) -> tuple[Unit, ...]:
    """Return the units of the final schedule (each group's ops per stage residue, in order).

    Raises ``AssertionError`` when a residue holds more ops than the group has units.
    """
    plan: Plan | None = problem.share
    if plan is None or not plan.groups:
        return ()
    ii = problem.ii
    out: list[Unit] = []
    count: dict[str, int] = {}
    unit_of: dict[int, int] = {}
    for gi in sorted(range(len(plan.groups)), key=lambda gi: plan.groups[gi].members[0]):
        g = plan.groups[gi]
        per: list[list[int]] = [[] for _ in range(ii)]
        for m in g.members:
            per[stage[m] % ii].append(m)
        if max(len(p) for p in per) > g.units:
            raise AssertionError(f"scheduler bug: a `{g.kind}` residue holds more ops than units")
        lists = assign(problem, plan, g, stage, unit_of) if g.units > 1 else [g.members]
        for k in range(g.units):
            ops = sorted(lists[k], key=lambda m: (stage[m], m))
            if not ops:
                continue
            n = count.get(g.kind, 0)
            count[g.kind] = n + 1
            lut = int(round(g.mux_lut)) if len(ops) > 1 else 0
            out.append(Unit(f"{g.kind}{n}", g.kind, g.width,
                            tuple(problem.ids[m] for m in ops),
                            tuple(stage[m] % ii for m in ops), g.in_widths, g.in_signed,
                            lut, round(g.mux_ns, 3), k < g.dsp_units, g.sources))
    return tuple(out)


def assign(problem: Problem, plan: Plan, g: Group, stage: list[int],
            unit_of: dict[int, int]) -> list[list[int]]:
    """Return the ops of each of ``g``'s units: sources kept consistent across iterations.

    The ops are taken stage by stage; those of one stage go to the units free at its residue
    by the assignment that best repeats each unit's earlier *patterns* (per operand: the
    class of the op it reads, the unit of that op and the stages between, or the kind of
    input), so that a unit serves one role of the loop body in every iteration and reads the
    same delay-line taps (``kera.hls.regbind``).
    """
    graph, ii = problem.graph, problem.ii
    index = {nid: k for k, nid in enumerate(problem.ids)}

    def pattern(m: int, with_unit: bool) -> tuple[Any, ...]:
        out: list[Any] = []
        for i in graph.nodes[problem.ids[m]].inputs:
            u = index[i]
            h = plan.of.get(u)
            if h is not None:
                out.append((h, unit_of.get(u) if with_unit else None, stage[m] - stage[u]))
            elif problem.const[u] or problem.param[u]:
                out.append(problem.const[u])
            else:
                ins = tuple(plan.of.get(index[x], -1) for x in graph.nodes[i].inputs)
                out.append((graph.nodes[i].op, graph.nodes[i].attrs, ins))
        return tuple(out)

    seen: list[Counter[tuple[Any, ...]]] = [Counter() for _ in range(g.units)]
    loose: list[Counter[tuple[Any, ...]]] = [Counter() for _ in range(g.units)]
    busy = [[False] * g.units for _ in range(ii)]
    lists: list[list[int]] = [[] for _ in range(g.units)]
    by_stage: dict[int, list[int]] = {}
    for m in g.members:
        by_stage.setdefault(stage[m], []).append(m)
    for s in sorted(by_stage):
        ops = sorted(by_stage[s])
        free = [k for k in range(g.units) if not busy[s % ii][k]]
        pats = [(pattern(m, True), pattern(m, False)) for m in ops]

        def score(choice: tuple[int, ...], pats: list[Any] = pats) -> float:
            return sum(seen[k][p] + 0.5 * loose[k][q]
                       for k, (p, q) in zip(choice, pats, strict=False))

        if len(free) <= 6:
            best = max(permutations(free, len(ops)), key=score)
        else:
            best = tuple(free[:len(ops)])
        for m, k, (p, q) in zip(ops, best, pats, strict=True):
            busy[s % ii][k] = True
            seen[k][p] += 1
            loose[k][q] += 1
            lists[k].append(m)
            unit_of[m] = k
    return lists



def unit_sources(schedule: Schedule, unit: Unit) -> list[list[int]]:
    """Return, per operand port of ``unit``, each op's source number (0, 1, ... by first use).

    Two ops have the same source when their operands are the same signal at every cycle
    (``RegisterBinding.signal``: the same register, unit output or constant, or the same
    wiring of those); a port whose ops all have source 0 needs no multiplexer.
    """
    binding = schedule.register_binding
    graph = schedule.graph
    rep = graph.nodes[unit.ops[0]]
    out = []
    for j in range(len(rep.inputs)):
        seen: dict[Any, int] = {}
        row = []
        for nid in unit.ops:
            i = graph.nodes[nid].inputs[j]
            key = binding.signal(i, schedule.stage[nid]) if binding is not None else i
            row.append(seen.setdefault(key, len(seen)))
        out.append(row)
    return out


def refine(schedule: Schedule, costs: CostModel) -> Schedule:
    """Return ``schedule`` with each unit's multiplexers counted from its real sources: the
    bit columns no earlier unit has (``columns.unit_columns``), each ``columns.column_lut``."""
    if not any(len(u.ops) > 1 for u in schedule.units):
        return schedule
    assert schedule.register_binding is not None
    per_input = mux_lut_per_input(costs)
    columns = unit_columns(schedule)
    units = []
    for u in schedule.units:
        if len(u.ops) < 2:
            units.append(u)
            continue
        lut = sum(column_lut(col, per_input) for col in columns[u.name])
        counts = tuple(max(row) + 1 for row in unit_sources(schedule, u))
        units.append(dataclasses.replace(u, mux_lut=int(round(lut)), sources=counts))
    out = dataclasses.replace(schedule, units=tuple(units))
    out.__dict__["register_binding"] = schedule.register_binding  # it reads units' names only
    return out
