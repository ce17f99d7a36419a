"""Operator sharing at II > 1: which ops share a unit, their delays, and the binding.

With ``ii = N`` a transfer enters every ``N`` cycles, always when the modulo counter is at 0
(``Schedule.aligned``), so an op in stage ``s`` always runs when the counter is ``s mod N``:
ops of one kind whose stages differ modulo ``N`` can share one unit, whose operands are
multiplexers selected by the counter. ``configure`` groups the candidates (same op, same
operand and result types, same attributes), keeps the groups the cost model says are worth it
(the LUT-equivalent area saved against the multiplexers' LUTs; a DSP is worth the LUT multiplier
it replaces), and sets up the resource rows the list scheduler obeys: at most ``units`` ops of a
group per stage residue, and no shared op chained in one stage after another shared op (that
would be a combinational path through two units' multiplexers). ``bind`` turns the final
stages into ``Unit`` objects. Ops on a state recurrence are never shared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kera.hls.lutmap import significant_width
from kera.hls.pipeline import Unit
from kera.hls.timing import EPS_NS, MUL_OPS, CostModel
from kera.ir.types import IntType

if TYPE_CHECKING:
    from kera.hls.schedule import Problem

#: Op kinds that may be shared; the cost model decides which groups are worth it.
CANDIDATES: frozenset[str] = frozenset({"mul", "widening_mul", "div", "rem", "add", "sub"})


@dataclass
class Group:
    """The ops of one signature that share ``units`` units."""

    kind: str
    members: list[int]
    units: int
    in_widths: tuple[int, ...]
    in_signed: tuple[bool, ...]
    width: int
    mux_ns: float
    mux_lut_bit: float  # LUTs per multiplexed bit and extra input
    dsp_units: int  # units that take DSP blocks (multiplies)
    saved: float  # LUT-equivalents saved, multiplexers paid


@dataclass
class Plan:
    """The sharing set-up of a problem: groups, node -> group, and why groups were not shared."""

    groups: list[Group] = field(default_factory=list)
    of: dict[int, int] = field(default_factory=dict)
    declined: list[str] = field(default_factory=list)


def _key(problem: Problem, v: int) -> tuple[Any, ...] | None:
    node = problem.graph.nodes[problem.ids[v]]
    if node.op not in CANDIDATES or not isinstance(node.type, IntType):
        return None
    ins = [problem.graph.nodes[i].type for i in node.inputs]
    if not all(isinstance(t, IntType) for t in ins):
        return None
    return (node.op, str(node.type), tuple(str(t) for t in ins), node.attrs)


def configure(problem: Problem, exclude: set[int]) -> Plan:
    """Decide the sharing at ``problem.ii``; set ``problem.share`` and the members' delays."""
    plan = Plan()
    problem.share = plan
    ii, costs = problem.ii, problem.costs
    if ii <= 1 or costs is None:
        return plan
    graph = problem.graph
    by_key: dict[tuple[Any, ...], list[int]] = {}
    for v in range(problem.size):
        if v in exclude or problem.const[v] or v in problem.virtual:
            continue
        k = _key(problem, v)
        if k is not None:
            by_key.setdefault(k, []).append(v)
    free = CostModel(costs.model, None)
    none = CostModel(costs.model, 0)
    budget = costs.dsp_budget
    left = budget
    net = costs.network(graph)
    for members in by_key.values():
        if len(members) < 2:
            continue
        node = graph.nodes[problem.ids[members[0]]]
        units = math.ceil(len(members) / ii)
        per_unit = math.ceil(len(members) / units)
        if per_unit < 2:
            continue
        widths, signed = [], []
        for j, i in enumerate(node.inputs):
            t = graph.nodes[i].type
            assert isinstance(t, IntType)
            widths.append(max(significant_width(net.bits[graph.nodes[problem.ids[m]].inputs[j]],
                                                t.signed) for m in members))
            signed.append(t.signed)
        area = free.area(graph, node)
        dsp = area["dsp"]
        if node.op in MUL_OPS and dsp > 0:
            dsp_value = none.area(graph, node)["lut"] / dsp
        else:
            dsp_value = 0.0
        op_cost = area["lut"] + dsp * dsp_value
        sel = costs._query_area(("select", 8, None))["lut"] / 8.0
        mux_lut = sel * sum(widths) * (per_unit - 1)
        saved = (len(members) - units) * op_cost - units * mux_lut
        name = f"`{node.op}` ({node.type})"
        if saved <= 0:
            plan.declined.append(f"{len(members)} {name}: a multiplexer costs more than the op")
            continue
        levels = max(1, math.ceil(math.log2(per_unit)))
        step = max(costs._query_delay(("select", max(widths), None)), costs.level_ns)
        mux_ns = levels * step + costs.level_ns  # the counter's decode, then the AND-OR tree
        dsp_units = 0
        if dsp > 0:
            can = units if left is None else min(units, int(left // dsp))
            dsp_units = can
            if left is not None:
                left -= int(can * dsp)
        on = free.delay(graph, node)
        off = none.delay(graph, node)
        op_ns = on if dsp_units == units else max(on, off)
        if op_ns + mux_ns > problem.period + EPS_NS:
            plan.declined.append(f"{len(members)} {name}: with its multiplexer it does not fit "
                                 "in the clock period")
            if dsp_units and left is not None:
                left += int(dsp_units * dsp)
            continue
        g = Group(node.op, members, units, tuple(widths), tuple(signed),
                  node.type.flat_width, mux_ns, sel, dsp_units, saved)
        for m in members:
            plan.of[m] = len(plan.groups)
            problem.delay[m] = op_ns + mux_ns
        plan.groups.append(g)
    if plan.groups and budget is not None:  # private multiplies: the DSPs the units left
        shared = frozenset(problem.ids[m] for m in plan.of)
        rest = CostModel(costs.model, max(0, left or 0), exclude=shared)
        for v in range(problem.size):
            nid = problem.ids[v]
            if v not in plan.of and graph.nodes[nid].op in MUL_OPS:
                problem.delay[v] = rest.delay(graph, graph.nodes[nid])
    return plan


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
    for g in plan.groups:
        per: list[list[int]] = [[] for _ in range(ii)]
        for m in g.members:
            per[stage[m] % ii].append(m)
        if max(len(p) for p in per) > g.units:
            raise AssertionError(f"scheduler bug: a `{g.kind}` residue holds more ops than units")
        for k in range(g.units):
            ops = sorted((p[k] for p in per if len(p) > k), key=lambda m: (stage[m], m))
            if not ops:
                continue
            n = count.get(g.kind, 0)
            count[g.kind] = n + 1
            lut = int(round(g.mux_lut_bit * sum(g.in_widths) * (len(ops) - 1)))
            out.append(Unit(f"{g.kind}{n}", g.kind, g.width,
                            tuple(problem.ids[m] for m in ops),
                            tuple(stage[m] % ii for m in ops), g.in_widths, g.in_signed,
                            lut, round(g.mux_ns, 3), k < g.dsp_units))
    return tuple(out)


def residue_limits(problem: Problem) -> tuple[dict[int, int], list[int]]:
    """Return node -> group and the units of each group (for the list scheduler)."""
    plan: Plan | None = problem.share
    if plan is None:
        return {}, []
    return plan.of, [g.units for g in plan.groups]


__all__ = ["CANDIDATES", "Group", "Plan", "bind", "configure", "residue_limits"]
