"""Operator sharing at II > 1: which ops share a unit, their delays, and the binding.

With ``ii = N`` a transfer enters every ``N`` cycles, always when the modulo counter is at 0
(``Schedule.aligned``), so an op in stage ``s`` always runs when the counter is ``s mod N``:
ops of one kind whose stages differ modulo ``N`` can share one unit, whose operands are
multiplexers selected by the counter.

``configure`` groups the candidates into classes: same op, operand and result types and
attributes, and the same source span where the node has one (the ops one source expression
gives in the iterations of an unrolled loop: one class per loop-body position; the classes
too small to share alone are pooled by signature). A class of
``n`` ops gets ``ceil(n / N)`` units. Its multiplexers cost only where sources really differ:
per operand port, the distinct *sources* its members read -- the class of the input when that
class is shared on one unit (every member reads its one output, or the one register the chain
of its outputs is bound to), a constant (distinct constants are a small ROM on the counter),
else the input's own structure over those (wiring of a shared output is one source) or the
input node itself. A port with one source is a plain wire: no LUT, no delay. The classes are
decided jointly (a fixpoint: every candidate shared, then the ones whose saving -- the area of
the ops saved, a DSP counted as the LUT multiplier it replaces, against the multiplexers and
ROMs -- is negative dropped, until nothing changes; a class that costs nothing either way is
shared, so that its users see one source). The list scheduler obeys the resource rows: at most
``units`` ops of a class per stage residue, and a shared op is chained in one stage after
another shared op only through a port with one source (no multiplexer on that path).
``bind`` turns the final stages into ``Unit`` objects and ``refine`` recounts each unit's
multiplexers from the sources the register binding really gives (``kera.hls.regbind``).
Ops on a state recurrence are never shared. A class that needs several units is split by
role (``_role``) and bound so that each unit keeps its role across iterations (``_assign``);
the values of a unit are then read from its delay line (``kera.hls.regbind``), one tap per
iteration distance, and ``release_all`` computes side chains just before their users.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kera.hls.lutmap import is_bitwise, significant_width
from kera.hls.pipeline import Schedule, Unit
from kera.hls.timing import EPS_NS, MUL_OPS, CostModel
from kera.ir.types import BoolType, IntType

if TYPE_CHECKING:
    from kera.hls.schedule import Problem

#: Op kinds that may be shared; the cost model decides which classes are worth it. Constant
#: shifts, slices, casts and concatenations are wiring: never units (their sources are looked
#: through).
CANDIDATES: frozenset[str] = frozenset({
    "mul", "widening_mul", "div", "rem", "add", "sub", "neg", "min", "max",
    "and", "or", "xor", "not", "select", "eq", "ne", "lt", "le", "gt", "ge",
    "shl", "shr", "rotl", "rotr"})
_SHIFTS = frozenset({"shl", "shr", "rotl", "rotr"})
#: The LUTs per bit of a private bitwise op (and, xor, not, ...): merged with its neighbours
#: into LUT4 cones (about two 2-input ops per LUT); a shared one is a LUT per bit of its own.
BITWISE_MERGED = 0.5
#: Fixpoint rounds of ``configure`` at most (each drops at least one class; at the limit the
#: classes still worth it in the last round are kept).
_ROUNDS = 64


@dataclass
class Group:
    """The ops of one class that share ``units`` units."""

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
    sources: tuple[int, ...] = ()  # distinct sources per operand port (predicted)
    mux_lut: float = 0.0  # the multiplexers and ROMs of one unit (predicted)


@dataclass
class Plan:
    """The sharing set-up of a problem: groups, node -> group, and why classes were not shared.

    """

    groups: list[Group] = field(default_factory=list)
    of: dict[int, int] = field(default_factory=dict)
    declined: list[str] = field(default_factory=list)
    slot_ns: list[float] | None = None  # each group's start time in a stage (``unit_slots``)


def _scalar(t: Any) -> bool:
    return isinstance(t, IntType | BoolType)


def _key(problem: Problem, v: int) -> tuple[Any, ...] | None:
    graph = problem.graph
    node = graph.nodes[problem.ids[v]]
    if node.op not in CANDIDATES or not _scalar(node.type):
        return None
    if node.op in _SHIFTS and graph.nodes[node.inputs[1]].op == "const":
        return None  # wiring
    ins = [graph.nodes[i].type for i in node.inputs]
    if not all(_scalar(t) for t in ins):
        return None
    span = graph.spans.get(node.id)
    where = None if span is None else (span.start, span.end)
    return (node.op, str(node.type), tuple(str(t) for t in ins), node.attrs, where)


def _role(problem: Problem, v: int) -> tuple[Any, ...]:
    """Return the role of ``v`` in its loop body: per operand, the class of the op it reads
    (``_key``), or its kind (a parameter, a constant, the op of wiring). A member reading a
    parameter (an early iteration) takes the most common role that agrees on the other ports.

    A class of the ops one source expression gives that needs several units (SHA-256's
    reassociated ``t1`` adds: four per round) is split by role, so that each role folds onto
    one unit and reads one source.
    """
    graph = problem.graph
    fixed: dict[bytes, bool] = problem.__dict__.setdefault("_fixed", {})

    def inputs_only(nid: bytes) -> bool:  # a parameter, or wiring of parameters and constants
        if nid not in fixed:
            node = graph.nodes[nid]
            fixed[nid] = node.op == "param" or (node.op in _PURE and _key_of(problem, nid) is None
                                                and all(inputs_only(i) for i in node.inputs))
        return fixed[nid]

    out: list[Any] = []
    for i in graph.nodes[problem.ids[v]].inputs:
        node = graph.nodes[i]
        if node.op == "const":
            out.append(node.op)
            continue
        if inputs_only(i):
            out.append("param")
            continue
        out.append(_key_of(problem, i) or node.op)
    return tuple(out)


def _key_of(problem: Problem, nid: bytes) -> tuple[Any, ...] | None:
    index = problem.__dict__.setdefault("_index", {n: k for k, n in enumerate(problem.ids)})
    return _key(problem, index[nid])


@dataclass
class _Class:
    members: list[int]
    units: int
    widths: tuple[int, ...]
    signed: tuple[bool, ...]


def _source_keys(problem: Problem, index: dict[bytes, int], cls_of: dict[int, int],
                 one_unit: set[int], units: dict[int, int] | None = None
                 ) -> tuple[list[int], dict[int, int]]:
    """Return each node's source key (interned) and key -> constant value for constants.

    A member of a class shared on one unit is that class; of a class on ``units[c]`` units,
    that class and its rank modulo the units (one source per unit: the binding keeps a unit's
    role, ``_assign``, and its values are read from its delay line); a constant its value; a
    parameter or state read itself; any other node its op over its inputs' keys (so wiring of
    one shared output is one source).
    """
    graph = problem.graph
    intern: dict[tuple[Any, ...], int] = {}
    consts: dict[int, int] = {}
    keys = [0] * problem.size
    rank: dict[int, dict[int, int]] = {}
    if units:
        for m, cl in sorted(cls_of.items()):
            if cl not in one_unit:
                r = rank.setdefault(cl, {})
                r[m] = len(r) % units[cl]

    def get(t: tuple[Any, ...]) -> int:
        k = intern.get(t)
        if k is None:
            k = intern[t] = len(intern)
        return k

    for v in range(problem.size):
        node = graph.nodes[problem.ids[v]]
        c = cls_of.get(v)
        if problem.const[v]:
            value = int(node.attr("value")) if _scalar(node.type) else None
            keys[v] = get(("c", node.id))
            if value is not None:
                consts[keys[v]] = value
        elif c is not None and c in one_unit:
            keys[v] = get(("k", c))
        elif c is not None and c in rank:  # several units: at most one source per unit
            keys[v] = get(("k", c, rank[c][v]))
        elif (c is not None or node.op in ("param", "state") or v in problem.virtual
              or node.op not in _PURE):
            keys[v] = get(("n", v))
        else:
            keys[v] = get((node.op, str(node.type), node.attrs,
                           tuple(keys[index[i]] for i in node.inputs)))
    return keys, consts


#: Ops whose value is a function of their operands only (looked through for sources).
_PURE = CANDIDATES | frozenset({"slice", "concat", "cast", "array", "array_index",
                                "array_update", "tuple", "tuple_get", "popcount", "clz", "ctz"})


def port_cost(keys: set[int], consts: dict[int, int], width: int, sel: float,
              share: int = 1) -> tuple[float, int]:
    """Return (LUTs, multiplexer inputs) of a unit operand reading ``keys`` (its sources).

    Distinct constants are one more input: a ROM on the counter of about
    ``bits * ceil(entries / 16)`` LUTs; ``share`` caps the inputs (the ops of one unit).
    """
    values = [consts[k] for k in keys if k in consts]
    others = len(keys) - len(values)
    inputs = min(share, others + (1 if values else 0))
    lut = sel * width * (inputs - 1)
    distinct = len(set(values))
    if distinct > 1:
        bits = max(1, min(width, max(abs(x).bit_length() for x in values)))
        lut += bits * math.ceil(min(distinct, share) / 16)
        inputs = max(inputs, 2)
    return lut, inputs


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
    for k, members in list(by_key.items()):  # several units: one class per role
        if len(members) > ii:
            del by_key[k]
            roles = {m: _role(problem, m) for m in members}
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
    net = costs.network(graph)
    index = {nid: k for k, nid in enumerate(problem.ids)}
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
    free = CostModel(costs.model, None)
    none = CostModel(costs.model, 0)
    sel = costs._query_area(("select", 8, None))["lut"] / 8.0
    op_cost: list[float] = []  # one private op
    unit_cost: list[float] = []  # one unit
    for cl in classes:
        node = graph.nodes[problem.ids[cl.members[0]]]
        area = free.area(graph, node)
        dsp = area["dsp"]
        value = none.area(graph, node)["lut"] / dsp if node.op in MUL_OPS and dsp > 0 else 0.0
        if is_bitwise(graph, node):  # a LUT per bit alone; merged into its cone when private
            op_cost.append(BITWISE_MERGED * node.type.flat_width)
            unit_cost.append(float(node.type.flat_width))
        else:
            op_cost.append(area["lut"] + dsp * value)
            unit_cost.append(op_cost[-1])
    alive = set(range(len(classes)))
    why: dict[int, str] = {}
    for _ in range(_ROUNDS):
        one = {c for c in alive if classes[c].units == 1}
        keys, consts = _source_keys(problem, index, {m: c for m, c in cls_of.items()
                                                     if c in alive}, one,
                                    {c: classes[c].units for c in alive})
        drop = set()
        port_info: dict[int, list[tuple[float, int]]] = {}
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
            if saved < 0 or (saved == 0 and mux > 0):
                drop.add(c)
                why[c] = "a multiplexer costs more than the op"
        alive -= drop
        if not drop:
            break
    budget = costs.dsp_budget
    left = budget
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
        area = free.area(graph, node)
        dsp = area["dsp"]
        dsp_units = 0
        if dsp > 0:
            can = cl.units if left is None else min(cl.units, int(left // dsp))
            dsp_units = can
            if left is not None:
                left -= int(can * dsp)
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
        saved = len(cl.members) * op_cost[c] - cl.units * (unit_cost[c] + mux_lut)
        cut = tuple(w if p[1] > 1 else graph.nodes[i].type.flat_width
                    for w, p, i in zip(cl.widths, ports, node.inputs, strict=True))
        g = Group(node.op, cl.members, cl.units, cut, cl.signed, node.type.flat_width,
                  mux_ns, sel, dsp_units, saved, tuple(p[1] for p in ports), mux_lut)
        for m in cl.members:
            plan.of[m] = len(plan.groups)
            problem.delay[m] = op_ns + mux_ns
        plan.groups.append(g)
    plan.declined = [f"{n} {what}" for what, n in declined.items()]
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
    unit_of: dict[int, int] = {}
    for gi in sorted(range(len(plan.groups)), key=lambda gi: plan.groups[gi].members[0]):
        g = plan.groups[gi]
        per: list[list[int]] = [[] for _ in range(ii)]
        for m in g.members:
            per[stage[m] % ii].append(m)
        if max(len(p) for p in per) > g.units:
            raise AssertionError(f"scheduler bug: a `{g.kind}` residue holds more ops than units")
        lists = _assign(problem, plan, g, stage, unit_of) if g.units > 1 else [g.members]
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


def _assign(problem: Problem, plan: Plan, g: Group, stage: list[int],
            unit_of: dict[int, int]) -> list[list[int]]:
    """Return the ops of each of ``g``'s units: sources kept consistent across iterations.

    The ops are taken stage by stage; those of one stage go to the units free at its residue
    by the assignment that best repeats each unit's earlier *patterns* (per operand: the
    class of the op it reads, the unit of that op and the stages between, or the kind of
    input), so that a unit serves one role of the loop body in every iteration and reads the
    same delay-line taps (``kera.hls.regbind``).
    """
    from itertools import permutations

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
    """Return ``schedule`` with each unit's multiplexers counted from its real sources."""
    if not any(len(u.ops) > 1 for u in schedule.units):
        return schedule
    binding = schedule.register_binding
    assert binding is not None
    sel = costs._query_area(("select", 8, None))["lut"] / 8.0
    units = []
    for u in schedule.units:
        if len(u.ops) < 2:
            units.append(u)
            continue
        lut, counts = 0.0, []
        for j, row in enumerate(unit_sources(schedule, u)):
            keys = {binding.signal(schedule.graph.nodes[n].inputs[j], schedule.stage[n])
                    for n in u.ops}
            consts = {k: v for k in keys if (v := binding.constant(k)) is not None}
            cost, _ = port_cost(keys, consts, u.in_widths[j], sel, len(u.ops))
            lut += cost
            counts.append(max(row) + 1)
        units.append(dataclasses.replace(u, mux_lut=int(round(lut)), sources=tuple(counts)))
    out = dataclasses.replace(schedule, units=tuple(units))
    out.__dict__["register_binding"] = binding  # the binding reads the units' names only
    return out


__all__ = ["CANDIDATES", "Chains", "Group", "Plan", "bind", "configure", "port_cost", "refine",
           "release_all", "release_late", "residue_limits", "slots_hold", "unit_sources",
           "unit_slots"]
