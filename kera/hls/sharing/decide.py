"""Which classes are shared at ``problem.ii``: ``configure`` (a fixpoint over the classes).

Every candidate class is shared at first; the ones whose saving -- the area of the ops saved,
a DSP counted as the LUT multiplier it replaces, against the units' multiplexers and ROMs -- is
negative are dropped, until nothing changes (a class that costs nothing either way is shared,
so that its users see one source). A class whose op plus multiplexer does not fit the usable
period stays private; the DSP budget goes to the units first, the private multiplies get what
is left.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kera.hls.lutmap import is_bitwise, significant_width
from kera.hls.timing import EPS_NS, MUL_OPS, CostModel
from kera.ir.types import IntType

from .classes import (
    BITWISE_MERGED,
    SHIFTS,
    Group,
    Plan,
    class_key,
    mux_lut_per_input,
    port_cost,
    role,
    source_keys,
    wiring,
)

if TYPE_CHECKING:
    from kera.hls.schedule import Problem

#: Fixpoint rounds of ``configure`` at most (each drops at least one class; at the limit the
#: classes still worth it in the last round are kept).
_ROUNDS = 64


@dataclass
class _Class:
    members: list[int]
    units: int
    widths: tuple[int, ...]
    signed: tuple[bool, ...]


def configure(problem: Problem, exclude: set[int], eager: bool = False) -> Plan:
    """Decide the sharing at ``problem.ii``; set ``problem.share`` and the members' delays.

    The classes are those left when none saves less than nothing (``_fixpoint``); with
    ``eager``, those of the fixpoint's round that saved the most in total. ``Plan.eager`` says
    whether the two differ (the scheduler then tries both, ``kera.hls.schedule``)."""
    plan = Plan()
    problem.share = plan
    ii, costs = problem.ii, problem.costs
    if ii <= 1 or costs is None:
        return plan
    index = {nid: k for k, nid in enumerate(problem.ids)}
    classes, cls_of = _classes(problem, _by_key(problem, exclude))
    free = CostModel(costs.model, None)
    sel = mux_lut_per_input(costs)
    op_cost, unit_cost = _op_costs(problem, classes, free)
    rounds = _fixpoint(problem, classes, cls_of, index, op_cost, unit_cost, sel)
    best = max(rounds, key=lambda r: r[0])  # the first of equals: the most classes
    alive, port_info = (best if eager else rounds[-1])[1:]
    plan.eager = best[1] != rounds[-1][1]
    graph = problem.graph
    why = {c: "wiring (no LUT of its own) that no shared unit reads"
           if wiring(graph, graph.nodes[problem.ids[classes[c].members[0]]])
           else "a multiplexer costs more than the op" for c in range(len(classes))
           if c not in alive}
    left = _groups(problem, plan, classes, alive, why, port_info, free)
    if plan.groups and costs.dsp_budget is not None:  # private multiplies: the DSPs left
        shared = frozenset(problem.ids[m] for m in plan.of)
        rest = CostModel(costs.model, max(0, left or 0), exclude=shared)
        for v in range(problem.size):
            nid = problem.ids[v]
            if v not in plan.of and graph.nodes[nid].op in MUL_OPS:
                problem.delay[v] = rest.delay(graph, graph.nodes[nid])
    return plan


def _by_key(problem: Problem, exclude: set[int]) -> dict[tuple[Any, ...], list[int]]:
    """Return the candidates by class: split by role where a class needs several units, and
    the classes too small to share alone pooled by signature."""
    ii = problem.ii
    by_key: dict[tuple[Any, ...], list[int]] = {}
    for v in range(problem.size):
        if v in exclude or problem.const[v] or v in problem.virtual:
            continue
        k = class_key(problem, v)
        if k is not None:
            by_key.setdefault(k, []).append(v)
    for k, members in list(by_key.items()):  # several units: one class per role
        if len(members) > ii:
            del by_key[k]
            roles = {m: role(problem, m) for m in members}
            full = Counter(r for r in roles.values() if "param" not in r)
            for m in members:
                r = roles[m]
                if "param" in r:  # an early iteration reading inputs: the role it matches
                    fits = [q for q in full if all(a == "param" or a == b
                                                   for a, b in zip(r, q, strict=True))]
                    if fits:
                        r = max(fits, key=lambda q: (full[q], repr(q)))
                by_key.setdefault(k + (r,), []).append(m)
    pooled: dict[tuple[Any, ...], list[int]] = {}  # classes too small alone: by signature
    for k, members in list(by_key.items()):
        if math.ceil(len(members) / math.ceil(len(members) / ii)) < 2:
            pooled.setdefault(k[:4] + (None,), []).extend(by_key.pop(k))
    for k, members in pooled.items():
        by_key.setdefault(k, []).extend(members)
        by_key[k].sort()
    return by_key


def _classes(problem: Problem, by_key: dict[tuple[Any, ...], list[int]]
             ) -> tuple[list[_Class], dict[int, int]]:
    """Return the classes worth a unit (two ops or more per unit) and member -> class; a port's
    width is the widest significant width its members read."""
    graph, ii = problem.graph, problem.ii
    assert problem.costs is not None
    net = problem.costs.network(graph)
    classes: list[_Class] = []
    cls_of: dict[int, int] = {}
    for members in by_key.values():
        units = math.ceil(len(members) / ii)
        if len(members) < 2 or math.ceil(len(members) / units) < 2:
            continue
        node = graph.nodes[problem.ids[members[0]]]
        widths, signed = [], []
        for j, i in enumerate(node.inputs):
            t = graph.nodes[i].type
            s = isinstance(t, IntType) and t.signed
            widths.append(max(significant_width(net.bits[graph.nodes[problem.ids[m]].inputs[j]],
                                                s) for m in members))
            signed.append(s)
        for m in members:
            cls_of[m] = len(classes)
        classes.append(_Class(members, units, tuple(widths), tuple(signed)))
    return classes, cls_of


def _op_costs(problem: Problem, classes: list[_Class], free: CostModel
              ) -> tuple[list[float], list[float]]:
    """Return the LUT-equivalents of one private op and of one unit, per class."""
    graph = problem.graph
    assert problem.costs is not None
    none = CostModel(problem.costs.model, 0)
    op_cost: list[float] = []
    unit_cost: list[float] = []
    for cl in classes:
        node = graph.nodes[problem.ids[cl.members[0]]]
        area = free.area(graph, node)
        dsp = area["dsp"]
        value = none.area(graph, node)["lut"] / dsp if node.op in MUL_OPS and dsp > 0 else 0.0
        if wiring(graph, node):  # no LUT of its own either way: a unit is its multiplexers
            op_cost.append(0.0)
            unit_cost.append(0.0)
        elif is_bitwise(graph, node):  # a LUT per bit alone; merged into its cone when private
            op_cost.append(BITWISE_MERGED * node.type.flat_width)
            unit_cost.append(float(node.type.flat_width))
        else:
            op_cost.append(area["lut"] + dsp * value)
            unit_cost.append(op_cost[-1])
    return op_cost, unit_cost


def _fixpoint(problem: Problem, classes: list[_Class], cls_of: dict[int, int],
              index: dict[bytes, int], op_cost: list[float], unit_cost: list[float],
              sel: float) -> list[tuple[float, set[int], dict[int, list[tuple[float, int]]]]]:
    """Drop the classes whose saving is negative until none is; return every round's (total
    saving, classes, their ports' (LUTs, inputs)).

    A dropped class's ops become private values, each one more source for the units that read
    them, so the last round need not save the most (sha256 at II = 64 on ECP5 at 25 MHz: all
    34 classes save 28,253 LUTs, the 26 left after two rounds 26,480)."""
    graph = problem.graph
    alive = set(range(len(classes)))
    wired = {c for c, cl in enumerate(classes)
             if wiring(graph, graph.nodes[problem.ids[cl.members[0]]])}
    rounds = []
    for _ in range(_ROUNDS):
        one = {c for c in alive if classes[c].units == 1}
        keys, consts = source_keys(problem, index, {m: c for m, c in cls_of.items()
                                                    if c in alive}, one,
                                   {c: classes[c].units for c in alive})
        drop = set()
        port_info: dict[int, list[tuple[float, int]]] = {}
        total = 0.0
        for c in sorted(alive):
            cl = classes[c]
            node = graph.nodes[problem.ids[cl.members[0]]]
            per_unit = math.ceil(len(cl.members) / cl.units)
            ports = []
            for j in range(len(node.inputs)):
                srcs = {keys[index[graph.nodes[problem.ids[m]].inputs[j]]] for m in cl.members}
                ports.append(port_cost(srcs, consts, cl.widths[j], sel, per_unit))
            port_info[c] = ports
            mux = sum(p[0] for p in ports)
            saved = len(cl.members) * op_cost[c] - cl.units * (unit_cost[c] + mux)
            total += saved
            if c in wired:  # worth its multiplexers where it is one source for a unit
                if not _feeds_unit(problem, cl.members, cls_of, alive - {c}):
                    drop.add(c)
            elif saved < 0 or (saved == 0 and mux > 0):
                drop.add(c)
        rounds.append((total, set(alive), port_info))
        alive -= drop
        if not drop:
            break
    return rounds


#: Ops a unit's operand is looked through to find its source (``classes.source_keys``).
_LOOKED_THROUGH = frozenset({"slice", "concat", "cast"}) | SHIFTS


def _feeds_unit(problem: Problem, members: list[int], cls_of: dict[int, int],
                alive: set[int]) -> bool:
    """Whether a member's value reaches an op of a class in ``alive`` directly or through
    wiring (slices, casts, concatenations, constant shifts): shared, a class of wiring ops
    (``classes.wiring``) is one source for that unit's multiplexer instead of many (sha256's
    ``!e`` at II 64: the ``and`` units read one ``not`` unit), and private it costs nothing."""
    graph = problem.graph
    seen = set(members)
    todo = list(members)
    while todo:
        for u in problem.users[todo.pop()]:
            if u in seen:
                continue
            seen.add(u)
            if cls_of.get(u) in alive:
                return True
            node = graph.nodes[problem.ids[u]]
            if node.op in _LOOKED_THROUGH and (
                    node.op not in SHIFTS or graph.nodes[node.inputs[1]].op == "const"):
                todo.append(u)
    return False


def _groups(problem: Problem, plan: Plan, classes: list[_Class], alive: set[int],
            why: dict[int, str], port_info: dict[int, list[tuple[float, int]]],
            free: CostModel) -> int | None:
    """Fill ``plan`` with a group per kept class that fits the period (the members' delays set);
    return the DSPs left (None: no budget)."""
    graph, costs = problem.graph, problem.costs
    assert costs is not None
    none = CostModel(costs.model, 0)
    left = costs.dsp_budget
    declined: Counter[str] = Counter()
    for c, cl in enumerate(classes):
        node = graph.nodes[problem.ids[cl.members[0]]]
        name = f"`{node.op}` ({node.type})"
        if c not in alive or c not in port_info:
            declined[f"{name}: {why.get(c, 'a multiplexer costs more than the op')}"] += \
                len(cl.members)
            continue
        ports = port_info[c]
        mux_lut = sum(p[0] for p in ports)
        inputs = max((p[1] for p in ports), default=1)
        if inputs > 1:
            levels = max(1, math.ceil(math.log2(inputs)))
            step = max(costs._query_delay(("select", max(cl.widths), None)), costs.level_ns)
            mux_ns = levels * step + costs.level_ns  # the counter's decode, then the AND-OR tree
        else:
            mux_ns = 0.0
        dsp = free.area(graph, node)["dsp"]
        dsp_units = 0
        if dsp > 0:
            dsp_units = cl.units if left is None else min(cl.units, int(left // dsp))
            if left is not None:
                left -= int(dsp_units * dsp)
        on = free.delay(graph, node)
        off = none.delay(graph, node)
        op_ns = on if dsp_units == cl.units else max(on, off)
        if inputs > 1 and node.op not in MUL_OPS:
            op_ns = max(op_ns, costs.level_ns)  # a multiplexer breaks the LUT merging
        if op_ns + mux_ns > problem.period + EPS_NS:
            declined[f"{name}: with its multiplexer it does not fit in the clock period"] += \
                len(cl.members)
            if dsp_units and left is not None:
                left += int(dsp_units * dsp)
            continue
        cut = tuple(w if p[1] > 1 else graph.nodes[i].type.flat_width
                    for w, p, i in zip(cl.widths, ports, node.inputs, strict=True))
        g = Group(node.op, cl.members, cl.units, cut, cl.signed, node.type.flat_width,
                  mux_ns, dsp_units, tuple(p[1] for p in ports), mux_lut)
        for m in cl.members:
            plan.of[m] = len(plan.groups)
            problem.delay[m] = op_ns + mux_ns
        plan.groups.append(g)
    plan.declined = [f"{n} {what}" for what, n in declined.items()]
    return left
