"""The scheduler: assign every node of a region to a pipeline stage at a clock target.

Formulation (system of difference constraints, "SDC": Cong & Zhang 2006, as in XLS):

* one integer stage ``s(v)`` per node; ``s(u) <= s(v)`` for every edge ``u -> v``;
* chaining: for every pair ``u ->...-> v`` whose longest combinational path (the sum of the
  delays of the nodes on it, both ends included) exceeds the usable period
  ``P = period * (1 - margin) - register overhead``, ``s(v) - s(u) >= 1``. Only the *frontier*
  pairs are generated (per node, a longest-path walk backwards that stops as soon as a path no
  longer fits in one cycle); the others follow from them by transitivity;
* objective: the least latency first -- found exactly by ASAP list scheduling with the same
  chaining rule, which is optimal for it -- then, with every stage bounded by that latency, the
  fewest pipeline-register bits, ``sum width(u) * (last_use(u) - s(u))``, as a linear program
  solved with HiGHS. The constraint matrix is a network matrix (totally unimodular), so the LP
  optimum at a simplex vertex is integral; it is rounded and checked (``milp`` if it were not).
  ``period_cap_ns`` chains the stages in a shorter period than the clock's, which
  ``kera.hls.synth`` uses to pick, among such schedules, one with a faster slowest stage.

Above ``LP_MAX_NODES`` nodes (or when HiGHS fails) the documented fallback is used: the same ASAP
list schedule, then a greedy pass that pushes nodes to later stages (ALAP direction) whenever
that shrinks the register bits and keeps every stage within the period. ``Schedule.method`` says
which one ran ("sdc" or "list").

``param`` nodes are in stage 0, ``const`` nodes take the stage of their earliest user; both are
outside the optimisation. With ``ii`` > 1, ops worth sharing (``kera.hls.sharing``) get resource
rows: the ASAP list schedule places at most ``units`` ops of a group per stage residue modulo
``ii`` (resource-constrained modulo scheduling), and the LP keeps those stages fixed.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, sparse

from kera.diagnostics import ExitCode, KeraError
from kera.hls.pipeline import Schedule, StatePlan
from kera.hls.timing import (
    EPS_NS,
    CostModel,
    DelayAreaModel,
    display_width,
    locate,
    make_locator,
)
from kera.ir.graph import MAX_II, Graph

#: Largest region (nodes, constants excluded) scheduled by the LP in "auto" mode (HiGHS takes
#: about 2 s at this size on the random DAGs of ``benchmarks/schedule.py``).
LP_MAX_NODES = 15_000
#: Largest LP (rows left after the bounds' pruning) solved in "auto" mode.
LP_MAX_ROWS = 60_000


@dataclass
class Problem:
    """A region as index arrays: nodes in canonical topological order, delays, widths."""

    graph: Graph
    region: str
    ids: list[bytes]
    delay: list[float]
    width: list[int]
    inputs: list[list[int]]  # distinct non-constant inputs
    users: list[list[int]]  # distinct users (of constants too)
    const: list[bool]
    param: list[bool]
    result: int
    period: float  # usable period P in ns
    # (read, next) node indices of the state slots that write (modulo constraints, LP rows)
    slots: list[tuple[int, int]] = field(default_factory=list)
    ii: int = 1
    # (u, v, k): v at least k stages after u (a block RAM read after its registered address:
    # two through the RAM's output register)
    gaps: list[tuple[int, int, int]] = field(default_factory=list)
    virtual: set[int] = field(default_factory=set)  # nodes with no circuit (block RAM chains)
    # multiplies on a DSP with its own input and output registers (``pipeline_dsps``)
    pipelined: set[int] = field(default_factory=set)
    # lookups read from a ROM in block RAM (``kera.hls.rom``): address registered a stage before
    roms: set[int] = field(default_factory=set)
    rom_outreg: bool = False  # ... two stages before, through the RAM's output register
    costs: CostModel | None = None
    share: Any = None  # kera.hls.sharing.Plan once configured (ii > 1)

    @property
    def size(self) -> int:
        """Number of nodes (constants included)."""
        return len(self.ids)


def schedule(
    graph: Graph,
    region: str,
    *,
    family: str,
    clock_mhz: float,
    ii: int | None = None,
    margin: float = 0.1,
    model: DelayAreaModel | None = None,
    method: str = "auto",
    dsp_budget: int | None = None,
    period_cap_ns: float | None = None,
    roms: frozenset[bytes] = frozenset(),
    design_luts: float = 0.0,
) -> Schedule:
    """Schedule region ``region`` of ``graph`` for ``family`` at ``clock_mhz``.

    ``margin`` is the fraction of the clock period kept free (for routing the model does not
    see); ``model`` defaults to the family's fitted model (``kera.hls.models.load_model``);
    ``method`` is "auto" (SDC up to ``LP_MAX_NODES`` nodes, else the list fallback), "sdc" or
    "list"; ``dsp_budget`` the device's DSP blocks (multiplies beyond it are costed as LUT
    circuits, ``CostModel``; None: unbounded). ``period_cap_ns`` bounds the usable period the
    stages are chained in below what the clock and margin leave (never below the slowest op),
    for a faster schedule than the clock asks (``kera.hls.synth``); the clock, margin and
    report stay the user's. ``design_luts``: the design's size that lookups in LUT tables are
    timed in (``CostModel``; 0: their own delays). Raises ``KeraError`` (exit code 1) when
    one op alone does not fit in the period and (exit code 2) for a bad clock, II or margin.
    """
    requested = ii
    ii = 1 if ii is None else ii
    _check_options(clock_mhz, ii, margin, method)
    costs = CostModel(model if model is not None else _load_model(family), dsp_budget,
                      design_luts=design_luts)
    stateful = graph.region_or_error(region).stateful  # plan_state checks once RAMs are known
    problem = build_problem(graph, region, costs, clock_mhz, margin, check=not stateful,
                            pipeline=ii == 1 and not stateful, roms=roms)
    if period_cap_ns is not None:
        problem.period = max(min(problem.period, period_cap_ns), max(problem.delay, default=0.0))
    plan: StatePlan | None = None
    from kera.hls import sharing

    if stateful:
        from kera.hls.state_schedule import plan_state

        plan, problem.slots, asap, asap_finish = plan_state(
            problem, requested, clock_mhz, margin, costs.overhead_ns, family)
        ii = max(ii, plan.rec_mii, plan.res_mii)
        return _stages(problem, asap, asap_finish, clock_mhz, ii, method, family, plan)
    problem.ii = ii
    share = sharing.configure(problem, set())
    out = _stages(problem, *list_schedule(problem), clock_mhz, ii, method, family, None)
    if not share.eager:
        return out
    other = build_problem(graph, region, costs, clock_mhz, margin, check=False, pipeline=False,
                          roms=roms)  # the same problem, sharing every class the eager way
    if period_cap_ns is not None:
        other.period = problem.period
    other.ii = ii
    sharing.configure(other, set(), eager=True)
    return _smaller(out, _stages(other, *list_schedule(other), clock_mhz, ii, method, family,
                                 None), costs)


def _smaller(a: Schedule, b: Schedule, costs: CostModel) -> Schedule:
    """Return ``b`` where it is no slower than ``a`` (its slowest stage, in the scheduler's
    delays) and needs fewer logic sites: LUTs (their sites) or flip-flops, whichever is more (an
    ECP5 slice and an iCE40 logic cell pair each LUT with a flip-flop), then their sum; else
    ``a``. sort8 at II 8 on ECP5 at 25 MHz: the eager plan's wider multiplexers took its
    estimated Fmax from 103.5 to 64.0 MHz (placed: 91.0 to 64.0, and 783 to 867 LUT sites)."""
    from kera.hls.resources import estimate

    def need(s: Schedule) -> tuple[float, float]:
        t = estimate(s, costs).total
        return max(t["lut"], t["ff"]), t["lut"] + t["ff"]

    def slowest(s: Schedule) -> float:
        return max(s.finish_ns.values(), default=0.0)

    if slowest(b) > slowest(a) + EPS_NS:
        return a
    return b if need(b) < need(a) else a


def _stages(problem: Problem, asap: list[int], asap_finish: list[float], clock_mhz: float,
            ii: int, method: str, family: str, plan: StatePlan | None) -> Schedule:
    """Return the schedule of ``problem`` (sharing configured, ASAP times known): the SDC
    stages (or the list fallback's), the units bound and their multiplexers counted."""
    from kera.hls import sharing

    costs = problem.costs
    assert costs is not None
    depth = max((asap[v] for v in range(problem.size) if not problem.const[v]), default=0)
    notes: list[str] = []
    stage: list[int] | None = None
    live = problem.size - sum(problem.const)
    if method == "sdc" or (method == "auto" and live <= LP_MAX_NODES):
        stage, why = sdc_schedule(problem, asap, depth,
                                  max_rows=LP_MAX_ROWS if method == "auto" else None)
        if stage is None:
            notes.append(f"{why}, so the list-scheduling fallback was used")
    elif method == "auto":
        notes.append(f"{live} nodes (more than {LP_MAX_NODES}), so the list-scheduling "
                     "fallback was used")
    shared = problem.share is not None and bool(problem.share.groups)
    if stage is not None and shared and not sharing.slots_hold(problem, _times(problem, stage)[0]):
        notes.append("the LP's stages chain an operand after its unit's start time, so the "
                     "ASAP stages were kept")
        stage = None
    chosen = "sdc" if stage is not None else "list"
    if stage is None and (problem.slots or shared or problem.gaps):
        stage = list(asap)  # push_late knows no modulo, resource or gap rows: ASAP meets them
    elif stage is None:
        stage = push_late(problem, asap, asap_finish, depth)
    units = sharing.bind(problem, stage)
    if ii > 1:
        notes.extend(_share_notes(ii, units, problem.share, bool(problem.roms)))
    return sharing.refine(_finish(problem, stage, clock_mhz, ii, chosen, family, tuple(notes),
                                  plan, units), costs)


def _share_notes(ii: int, units: Sequence[Any], plan: Any, roms: bool = False) -> list[str]:
    """The notes of an ii > 1 schedule: what is shared, or why nothing is (``roms``: block RAM
    ROM reads, whose ports the counter's slots share, ``kera.hls.rom``)."""
    many = [u for u in units if len(u.ops) > 1]
    if not many:
        why = "; ".join(plan.declined) if plan is not None and plan.declined else \
            "no op kind has two ops worth sharing"
        same = "the datapath is that of ii = 1 but for the ROMs' read ports (their note)" \
            if roms else "the datapath is the same as for ii = 1"
        return [f"ii = {ii}: a new input is accepted every {ii} cycles; no operator is shared "
                f"({why}), so {same}"]
    kinds: dict[str, list[int]] = {}
    for u in many:
        kinds.setdefault(u.kind, []).append(len(u.ops))
    said = ", ".join(f"{sum(n)} `{k}` on {len(n)} unit{'s' * (len(n) != 1)}"
                     for k, n in kinds.items())
    out = [f"ii = {ii}: operators shared ({said}); inputs are accepted when the modulo counter "
           f"is at 0, one every {ii} enabled cycles"]
    if plan is not None and plan.declined:
        out.append("not shared: " + "; ".join(plan.declined))
    return out


def _check_options(clock_mhz: float, ii: int, margin: float, method: str) -> None:
    if not isinstance(clock_mhz, int | float) or not math.isfinite(clock_mhz) or clock_mhz <= 0:
        raise KeraError(f"the clock must be a positive frequency in MHz, not {clock_mhz}",
                        exit_code=ExitCode.USAGE)
    if isinstance(ii, bool) or not isinstance(ii, int) or not 1 <= ii <= MAX_II:
        raise KeraError(f"the initiation interval must be an integer from 1 to {MAX_II}, not "
                        f"{ii}", exit_code=ExitCode.USAGE)
    if not 0.0 <= margin < 1.0:
        raise KeraError(f"the timing margin must be in [0, 1), not {margin}",
                        exit_code=ExitCode.USAGE)
    if method not in ("auto", "sdc", "list"):
        raise KeraError(f"unknown scheduling method `{method}` (auto, sdc, list)",
                        exit_code=ExitCode.USAGE)


def _load_model(family: str) -> DelayAreaModel:
    from kera.hls.models import load_model  # the models helper's API

    return load_model(family)


# ------------------------------------------------------------------------------ the problem


def build_problem(
    graph: Graph, region: str, costs: CostModel, clock_mhz: float, margin: float,
    check: bool = True, pipeline: bool = False, roms: frozenset[bytes] = frozenset(),
) -> Problem:
    """Index the region, query every delay, and (``check``) that each op fits in the period.

    ``pipeline``: a DSP multiply too slow for the period becomes a two-stage op on the
    family's pipelined DSP where there is one (``pipeline_dsps``). ``roms``: lookups read
    from a ROM in block RAM (``kera.hls.rom``), each a stage after its address."""
    reg = graph.region_or_error(region)
    ids = graph.topo_order(reg)
    index = {nid: k for k, nid in enumerate(ids)}
    nodes = graph.nodes
    const = [nodes[n].op == "const" for n in ids]
    inputs = [list(dict.fromkeys(index[i] for i in nodes[n].inputs if not const[index[i]]))
              for n in ids]
    users: list[list[int]] = [[] for _ in ids]  # constants' users too: they take their stage
    for v, nid in enumerate(ids):
        for u in dict.fromkeys(index[i] for i in nodes[nid].inputs):
            users[u].append(v)
    delay = [costs.delay(graph, nodes[n]) for n in ids]
    period = 1000.0 / clock_mhz
    usable = period * (1.0 - margin) - costs.overhead_ns
    problem = Problem(graph, region, ids, delay, [nodes[n].type.flat_width for n in ids], inputs,
                      users, const, [nodes[n].op == "param" for n in ids], index[reg.result],
                      usable, costs=costs)
    if pipeline:
        pipeline_dsps(problem)
    if roms:
        _rom_reads(problem, roms, index)
    if pipeline:
        register_lut_rom_indexes(problem, index)
    if check:
        check_op_fits(problem, clock_mhz, margin, costs.overhead_ns)
    return problem


def _rom_reads(problem: Problem, roms: frozenset[bytes], index: dict[bytes, int]) -> None:
    """Make each lookup in ``roms`` a ROM read: its address (the index) is registered at the
    end of the stage before it (a gap), and its data costs the RAM's clock-to-output beyond a
    flip-flop's and its routing (``kera.hls.rom.read_ns``)."""
    from kera.hls.rom import blocks, design_luts, read_ns, use_outreg

    assert problem.costs is not None
    family = str(getattr(problem.costs.model, "metadata", {}).get("family", ""))
    luts = design_luts(problem.graph, problem.region, problem.costs, roms)
    problem.rom_outreg = use_outreg(problem.graph, roms, family, luts, problem.period)
    # each read its own port: at ii > 1 reads may share them (``rom.read_ports``), which the
    # schedule decides, so the scheduler times them in the most block RAMs they may take
    ns = read_ns(family, luts, blocks(problem.graph, roms, family), problem.rom_outreg)
    for nid in sorted(roms, key=index.__getitem__):
        v = index[nid]
        problem.delay[v] = ns
        problem.roms.add(v)
        problem.gaps.append((index[problem.graph.nodes[nid].inputs[1]], v,
                             2 if problem.rom_outreg else 1))


def register_lut_rom_indexes(problem: Problem, index: dict[bytes, int]) -> None:
    """Register the index of each lookup in a constant table mapped to LUTs that is wider than
    a LUT's inputs and computed by logic: the lookup goes at least a stage after its index (a
    gap), so the table's LUTs read flip-flops. Chained into the table, the index's logic is
    folded by abc9 into each of the table's cofactor LUTs: sixteen 8-bit S-boxes of an xor of
    two registers map to 5,658 LUT4 where sixteen of registers take 2,261 (yosys 0.70
    ``synth_ecp5``; ``CostModel.rom_cost`` counts the latter). An index of parameters (through
    wiring) is left as it is."""
    costs, graph = problem.costs, problem.graph
    if costs is None:
        return
    tables = []
    for v, nid in enumerate(problem.ids):
        b = costs.rom_index_bits(graph, graph.nodes[nid]) if v not in problem.roms else None
        if b is not None and b > costs.lut_k:
            tables.append(v)
    if not tables:
        return
    # whether each node is or reads, through wiring, a node with a delay (topological order)
    fed = [False] * problem.size
    for v in range(problem.size):
        fed[v] = problem.delay[v] > 0.0 or any(fed[u] for u in problem.inputs[v])
    for v in tables:
        u = index[graph.nodes[problem.ids[v]].inputs[1]]
        if fed[u]:
            problem.gaps.append((u, v, 1))


def pipeline_dsps(problem: Problem) -> None:
    """Put each DSP multiply slower than the usable period on the DSP's own pipeline
    registers (``CostModel.can_pipeline``; ECP5's MULT18X18D, which ``kera.rtl`` instantiates):
    its operands are registered at the end of the stage before it (the DSP's input registers,
    a gap from each input), it takes ``CostModel.pipelined_ns`` alone in its stage, and its
    product is registered at the end of that stage (the output register, a gap to each user).
    So the product of operands ready in stage ``s`` is read in stage ``s + 2``; nothing is
    chained into or out of the DSP. Where even that does not fit, the op keeps its delay and
    ``check_op_fits`` refuses the clock."""
    costs = problem.costs
    if costs is None or costs.dsp_pipeline is None:
        return
    graph = problem.graph
    for v, nid in enumerate(problem.ids):
        if problem.delay[v] <= problem.period + EPS_NS or costs.pipelined_ns > problem.period:
            continue
        if not costs.can_pipeline(graph, graph.nodes[nid]):
            continue
        problem.delay[v] = costs.pipelined_ns
        problem.pipelined.add(v)
        problem.gaps.extend((u, v, 1) for u in problem.inputs[v])
        problem.gaps.extend((v, w, 1) for w in dict.fromkeys(problem.users[v]))
    if problem.pipelined:
        costs.pipelined = frozenset(problem.ids[v] for v in problem.pipelined)


class OpTooSlow(KeraError):
    """``check_op_fits``'s error: an op slower than the usable period (``delay_ns`` of logic,
    ``overhead_ns`` of register overhead a period; ``op`` says which and where), which
    ``plan_schedule`` answers with a tighter margin where one leaves it room
    (``fitting_margin``). The message suggests the fastest clock at ``margin``."""

    def __init__(self, head: str, op: str, delay_ns: float, usable_ns: float,
                 clock_mhz: float, margin: float, overhead_ns: float) -> None:
        super().__init__(f"{head} needs {delay_ns:.1f} ns but the clock period at "
                         f"{clock_mhz:g} MHz leaves {usable_ns:.1f} ns; try --clock-mhz "
                         f"{_suggest(delay_ns, margin, overhead_ns)} or lower")
        self.head, self.op = head, op
        self.delay_ns, self.usable_ns = delay_ns, usable_ns
        self.clock_mhz, self.overhead_ns = clock_mhz, overhead_ns

    def fitting_margin(self) -> float | None:
        """Return the largest margin (a fraction, floored to thousandths) at which the op fits
        one period (None: not even without a margin)."""
        m = 1.0 - (self.delay_ns + self.overhead_ns + EPS_NS) * self.clock_mhz / 1000.0
        return math.floor(m * 1000.0) / 1000.0 if m >= 0 else None

    def without_margin(self) -> OpTooSlow:
        """The same error suggesting the fastest clock at which the op fits with no margin."""
        return OpTooSlow(self.head, self.op, self.delay_ns, self.usable_ns, self.clock_mhz,
                         0.0, self.overhead_ns)


def check_op_fits(problem: Problem, clock_mhz: float, margin: float, overhead: float) -> None:
    """Raise the user-facing error (``OpTooSlow``) when the slowest op cannot fit in one clock
    period."""
    worst = max(range(problem.size), key=problem.delay.__getitem__, default=None)
    if worst is None:
        return
    d, usable = problem.delay[worst], problem.period
    clock = f"{clock_mhz:g} MHz"
    if usable <= EPS_NS:
        raise KeraError(f"the clock period at {clock} leaves no time for logic after the "
                        f"{overhead:.1f} ns register overhead and the {margin:.0%} margin; "
                        f"try --clock-mhz {_suggest(d, margin, overhead)} or lower")
    if d > usable + EPS_NS:
        graph = problem.graph
        node = graph.nodes[problem.ids[worst]]
        width = display_width(graph, node)
        where = locate(graph, node.id, make_locator(graph)) if node.id in graph.spans else ""
        raise OpTooSlow(f"{where + ': ' if where else ''}`{node.op}` ({width} bits)",
                        f"`{node.op}` ({width} bits){' at ' + where if where else ''}", d,
                        usable, clock_mhz, margin, overhead)


def _suggest(delay: float, margin: float, overhead: float) -> str:
    """Return the fastest round clock (MHz) at which an op of ``delay`` ns fits."""
    fmax = 1000.0 * (1.0 - margin) / (delay + overhead)
    if fmax >= 10:
        return str(math.floor(fmax))
    digits = 1 - math.floor(math.log10(fmax))
    return f"{math.floor(fmax * 10**digits) / 10**digits:g}"


# ------------------------------------------------------------------------------ ASAP / ALAP


def list_schedule(problem: Problem, release: dict[int, int] | None = None
                  ) -> tuple[list[int], list[float]]:
    """Return the ASAP stages and finish times with greedy chaining.

    A node goes in the latest stage of its inputs, unless its chained finish there would pass
    the period, then in the next one. This gives every node its earliest feasible stage (so the
    least latency): a node bumped to stage ``S+1`` closes a path inside stage ``S`` that is too
    long, and every schedule keeps that path's nodes in stages ``>= S``. With shared ops, a
    second pass holds the ones with slack back to their ALAP stages (``sharing.release_late``)
    and is kept when its latency is no longer. A unit starts at one time in every stage it
    runs (``Plan.slot_ns``, from a first schedule without that rule), so that its operand
    multiplexers' false paths (the union over the counter's residues) are no longer than the
    stages the schedule costs.
    """
    plan = problem.share
    if plan is not None and plan.groups and plan.slot_ns is None:
        from kera.hls.sharing import unit_slots

        plan.slot_ns = unit_slots(problem, _list(problem, release)[1])
    return _list(problem, release)


def _list(problem: Problem, release: dict[int, int] | None) -> tuple[list[int], list[float]]:
    stage, finish = _asap(problem, release)
    if problem.share is not None and problem.share.groups and release is None:
        from kera.hls.sharing import release_all, release_late

        late = release_late(problem, stage)
        if late:
            stage2, finish2 = _asap(problem, late)
            if max(stage2, default=0) <= max(stage, default=0):
                stage, finish = stage2, finish2
        late = release_all(problem, stage, finish)
        if late:
            stage2, finish2 = _asap(problem, late)
            if (max(stage2, default=0) <= max(stage, default=0)
                    and pressure(problem, stage2) < pressure(problem, stage)):
                return stage2, finish2
    return stage, finish


def pressure(problem: Problem, stage: list[int]) -> int:
    """Return the register bits of ``stage``: each value's width times the banks it crosses."""
    total = 0
    for v in range(problem.size):
        if problem.const[v] or not problem.users[v]:
            continue
        last = max(stage[w] for w in problem.users[v])
        total += problem.width[v] * max(0, last - stage[v])
    return total


def _asap(problem: Problem, release: dict[int, int] | None) -> tuple[list[int], list[float]]:
    n, period = problem.size, problem.period
    stage, finish = [0] * n, [0.0] * n
    from kera.hls.sharing import Chains, residue_limits

    of, units = residue_limits(problem)
    slots = problem.share.slot_ns if of else None
    busy = [[0] * problem.ii for _ in units]
    chains = Chains(n, len(units))  # units chained in one stage: kept free of loops
    after: dict[int, list[tuple[int, int]]] = {}
    for u, v, k in problem.gaps:
        after.setdefault(v, []).append((u, k))
    for v in range(n):
        if problem.const[v] or problem.param[v]:
            continue
        ins = problem.inputs[v]
        s = max((stage[u] for u in ins), default=0)
        if v in after and max(stage[u] + k for u, k in after[v]) > s:
            s = max(stage[u] + k for u, k in after[v])
            ins = [u for u in ins if stage[u] == s]  # only same-stage inputs chain
        start = max((finish[u] for u in ins if stage[u] == s), default=0.0)
        if release and release.get(v, 0) > s:  # held back (a modulo constraint, or slack)
            s, start = release[v], 0.0
        if start + problem.delay[v] > period + EPS_NS:
            s, start = s + 1, 0.0
        g = of.get(v) if of else None
        if g is not None:  # a resource row: a free unit in the residue, no loop of units
            at = slots[g] if slots is not None else None
            if at is not None and start > at + EPS_NS:
                s, start = s + 1, 0.0  # its operands come after the unit's start time
            while busy[g][s % problem.ii] >= units[g] or not chains.can(
                    g, chains.before(problem.inputs[v], s, stage, of)):
                s, start = s + 1, 0.0
            if at is not None:
                start = at
            busy[g][s % problem.ii] += 1
            chains.add(g, chains.before(problem.inputs[v], s, stage, of))
        elif of:
            chains.after[v] = chains.before(problem.inputs[v], s, stage, of)
        stage[v], finish[v] = s, start + problem.delay[v]
    return stage, finish


def alap_schedule(problem: Problem, depth: int) -> list[int]:
    """Return the latest stage of every node in a schedule of ``depth + 1`` stages."""
    n, period = problem.size, problem.period
    stage, tail = [depth] * n, [0.0] * n  # tail: delay from a node's start to its stage's end
    before: dict[int, list[tuple[int, int]]] = {}
    for u, w, k in problem.gaps:
        before.setdefault(u, []).append((w, k))
    for v in range(n - 1, -1, -1):
        if problem.const[v]:
            continue
        if problem.param[v]:
            stage[v] = 0
            continue
        us = problem.users[v]
        s = min((stage[w] for w in us), default=depth)
        after = max((tail[w] for w in us if stage[w] == s), default=0.0)
        if v in before and min(stage[w] - k for w, k in before[v]) < s:
            s = min(stage[w] - k for w, k in before[v])
            after = max((tail[w] for w in us if stage[w] == s), default=0.0)
        if after + problem.delay[v] > period + EPS_NS:
            s, after = s - 1, 0.0
        stage[v], tail[v] = s, after + problem.delay[v]
    return stage


# ------------------------------------------------------------------------------ SDC


def chaining_pairs(problem: Problem) -> list[tuple[int, int]]:
    """Return the frontier pairs ``(u, v)`` needing ``s(v) - s(u) >= 1``.

    For each ``v`` the longest path ``L(w, v)`` from every ancestor ``w`` (both delays included)
    is computed backwards in decreasing topological order, only while it fits in the period;
    an input ``u`` of such a ``w`` with ``d(u) + L(w, v) > P`` is a pair. A pair deeper than
    the frontier is implied by a frontier pair and the dependency constraints, and so is
    ``(u, v)`` when ``(u, w)`` is a pair for an input ``w`` of ``v``: neither is emitted.
    """
    period, delay, inputs = problem.period, problem.delay, problem.inputs
    pairs: list[tuple[int, int]] = []
    cuts: list[set[int]] = [set() for _ in range(problem.size)]
    for v in range(problem.size):
        if problem.const[v] or delay[v] <= 0.0:
            continue  # a zero-delay node's paths are its inputs' paths; those pairs suffice
        dist = {v: delay[v]}
        heap = [-v]
        cut: set[int] = set()
        while heap:
            w = -heapq.heappop(heap)
            if w in cut:
                continue  # every path through w is already covered by the pair (w, v)
            lw = dist[w]
            for u in inputs[w]:
                cand = lw + delay[u]
                if cand > period + EPS_NS:
                    cut.add(u)
                elif u not in dist:
                    dist[u] = cand
                    heapq.heappush(heap, -u)
                elif cand > dist[u]:
                    dist[u] = cand
        cuts[v] = cut
        implied = set().union(*(cuts[w] for w in inputs[v]))  # s(v) >= s(w) >= s(u) + 1
        pairs.extend((u, v) for u in sorted(cut - implied))
    return pairs


def sdc_schedule(
    problem: Problem, asap: Sequence[int], depth: int, max_rows: int | None = None
) -> tuple[list[int] | None, str]:
    """Return the register-minimal stages of latency ``depth + 1`` (or None and the reason)."""
    alap = alap_schedule(problem, depth)
    if problem.share is not None:
        for v in problem.share.of:  # shared ops keep their resource-feasible stages
            alap[v] = asap[v]
    lp = build_lp(problem, chaining_pairs(problem), asap, alap, depth)
    if lp is None:
        return None, "the ASAP and ALAP schedules disagree"
    if max_rows is not None and lp.rows > max_rows:
        return None, f"the LP has {lp.rows} rows (more than {max_rows})"
    stages = lp.solve()
    if stages is None:
        return None, "HiGHS returned no integral optimum"
    return _expand(problem, stages, lp.live), ""


@dataclass
class LP:
    """The register-minimisation LP: ``min cost @ x`` s.t. ``a_ub @ x <= b_ub``, bounds."""

    live: list[int]
    cost: np.ndarray
    a_ub: sparse.csr_array
    b_ub: np.ndarray
    bounds: list[tuple[int, int]]

    @property
    def rows(self) -> int:
        """Number of constraint rows."""
        return int(self.b_ub.shape[0])

    def solve(self) -> list[int] | None:
        """Solve with HiGHS dual simplex, check integrality (else ``milp``) and feasibility."""
        n = len(self.live)
        if self.rows == 0:  # only bounds: each variable goes to its cheaper end
            ends = zip(self.cost[:n], self.bounds[:n], strict=True)
            return [hi if c < 0 else lo for c, (lo, hi) in ends]
        res = optimize.linprog(self.cost, A_ub=self.a_ub, b_ub=self.b_ub, bounds=self.bounds,
                               method="highs-ds")
        x = res.x if res.status == 0 else None
        if x is None or np.max(np.abs(x - np.rint(x)), initial=0.0) > 1e-6:
            lo, hi = np.array(self.bounds, dtype=float).T
            res = optimize.milp(self.cost, integrality=np.ones(len(self.cost)),
                                constraints=optimize.LinearConstraint(self.a_ub, -np.inf,
                                                                      self.b_ub),
                                bounds=optimize.Bounds(lo, hi))
            if res.status != 0 or res.x is None:
                return None
            x = res.x
        values = np.rint(x)
        if np.any(self.a_ub @ values > self.b_ub + 1e-9):
            return None
        return [int(v) for v in values[:n]]


def build_lp(
    problem: Problem,
    pairs: Sequence[tuple[int, int]],
    asap: Sequence[int],
    alap: Sequence[int],
    depth: int,
) -> LP | None:
    """Build the LP minimising pipeline-register bits over the SDC polytope.

    Variables: ``s(v)`` per non-constant node, bounded by its ASAP and ALAP stages, and
    ``m(u)`` (last use) per node with users. Rows: ``s(u) - s(v) <= 0`` per edge,
    ``s(u) - s(v) <= -1`` per chaining pair, ``s(w) - m(u) <= 0`` per use, each left out when
    the bounds already imply it. The result is held to the end of the pipeline, so its term is
    ``width * (depth + 1 - s(result))``. Returns None when a node's bounds are empty.
    """
    live = [v for v in range(problem.size) if not problem.const[v]]
    col = {v: k for k, v in enumerate(live)}
    has_users = [v for v in live if problem.users[v] and v != problem.result]
    mcol = {v: len(live) + k for k, v in enumerate(has_users)}
    first_use = {u: max(asap[w] for w in problem.users[u]) for u in has_users}
    rows: list[int] = []
    cols: list[int] = []
    rhs: list[float] = []

    def row(a: int, b: int, bound: float) -> None:  # x[a] - x[b] <= bound
        rows.extend((len(rhs), len(rhs)))
        cols.extend((a, b))
        rhs.append(bound)

    for v in live:
        for u in problem.inputs[v]:
            if alap[u] > asap[v]:
                row(col[u], col[v], 0.0)
            if u in mcol and alap[v] > first_use[u]:
                row(col[v], mcol[u], 0.0)
    for u, v in pairs:
        if alap[u] >= asap[v]:
            row(col[u], col[v], -1.0)
    for u, v, k in problem.gaps:  # a block RAM read k stages after its address
        if not problem.const[u]:
            row(col[u], col[v], -float(k))
    for read, nxt in problem.slots:  # 0 <= s(next) - s(read) <= ii - 1
        row(col[nxt], col[read], float(problem.ii - 1))
        row(col[read], col[nxt], 0.0)
    nvar = len(live) + len(has_users)
    cost = np.zeros(nvar)
    for u, m in mcol.items():
        cost[m] += problem.width[u]
        cost[col[u]] -= problem.width[u]
    if problem.result in col:
        cost[col[problem.result]] -= problem.width[problem.result]
    bounds = [(asap[v], alap[v]) for v in live] + [(first_use[v], depth) for v in has_users]
    if any(lo > hi for lo, hi in bounds):
        return None
    vals = np.tile([1.0, -1.0], len(rhs))
    a_ub = sparse.csr_array((vals, (rows, cols)), shape=(len(rhs), nvar))
    return LP(live, cost, a_ub, np.array(rhs, dtype=float), bounds)


def _expand(problem: Problem, stages: Sequence[int], live: Sequence[int]) -> list[int]:
    out = [0] * problem.size
    for v, s in zip(live, stages, strict=True):
        out[v] = s
    return out


# ------------------------------------------------------------------------------ fallback


def push_late(
    problem: Problem, stage: Sequence[int], finish: Sequence[float], depth: int
) -> list[int]:
    """Greedily move nodes to later stages where that saves register bits (the fallback).

    Nodes are visited in reverse topological order, repeatedly until nothing moves (at most 8
    passes). Moving ``v`` from ``S`` to ``S + 1`` needs every user in a stage ``> S``; it frees
    ``width(v)`` bits and costs ``width(u)`` for each input ``u`` whose last use was ``S``. It is
    kept only when it saves bits and the chained delays of stage ``S + 1`` stay in the period.
    """
    st, fin = list(stage), list(finish)
    last = [max((st[w] for w in problem.users[u]), default=st[u]) for u in range(problem.size)]
    last[problem.result] = depth + 1
    for _ in range(8):
        moved = False
        for v in range(problem.size - 1, -1, -1):
            if problem.const[v] or problem.param[v]:
                continue
            while _try_push(problem, v, st, fin, last, depth):
                moved = True
        if not moved:
            break
    return st


def _try_push(problem: Problem, v: int, st: list[int], fin: list[float], last: list[int],
              depth: int) -> bool:
    s = st[v]
    limit = min((st[w] for w in problem.users[v]), default=depth)
    if s + 1 > min(limit, depth):
        return False
    gain = problem.width[v] - sum(problem.width[u] for u in problem.inputs[v] if last[u] == s)
    if gain <= 0:
        return False
    # v starts stage s+1 at 0 (its inputs are all in stages <= s); re-time its users there.
    changed = {v: problem.delay[v]}
    heap = [w for w in problem.users[v] if st[w] == s + 1]
    heapq.heapify(heap)
    while heap:
        w = heapq.heappop(heap)
        if w in changed:
            continue
        start = max((changed.get(u, fin[u]) for u in problem.inputs[w]
                     if (s + 1 if u == v else st[u]) == s + 1), default=0.0)
        new = start + problem.delay[w]
        if new > problem.period + EPS_NS:
            return False
        if abs(new - fin[w]) <= EPS_NS:
            continue
        changed[w] = new
        for x in problem.users[w]:
            if st[x] == s + 1:
                heapq.heappush(heap, x)
    st[v] = s + 1
    for w, f in changed.items():
        fin[w] = f
    for u in problem.inputs[v]:
        last[u] = max(last[u], s + 1)
    return True


# ------------------------------------------------------------------------------ result


def _times(problem: Problem, stage: list[int]) -> tuple[list[float], list[float]]:
    """Return each node's start and finish time in its stage (a unit's ops at its slot)."""
    n = problem.size
    plan = problem.share
    slots = plan.slot_ns if plan is not None else None
    start, finish = [0.0] * n, [0.0] * n
    for v in range(n):
        if problem.const[v]:
            continue
        s = stage[v]
        start[v] = max((finish[u] for u in problem.inputs[v] if stage[u] == s), default=0.0)
        if slots is not None and v in plan.of:
            start[v] = max(start[v], slots[plan.of[v]])
        finish[v] = start[v] + problem.delay[v]
    return start, finish


def _finish(problem: Problem, stage: list[int], clock_mhz: float, ii: int, method: str,
            family: str, notes: tuple[str, ...], plan: StatePlan | None = None,
            units: tuple[Any, ...] = ()) -> Schedule:
    """Place constants, compute start/finish times and the order; check the period."""
    n = problem.size
    for v in range(n):
        if problem.const[v]:
            stage[v] = min((stage[w] for w in problem.users[v]), default=0)
    start, finish = _times(problem, stage)
    for v in range(n):
        if finish[v] > problem.period + 1e-6:
            raise AssertionError(f"scheduler bug: stage {stage[v]} runs {finish[v]:.3f} ns "
                                 f"> {problem.period:.3f} ns")
    latency = max(stage, default=0) + 1
    ids = problem.ids
    order = tuple(ids[v] for v in sorted(range(n), key=lambda v: (stage[v], start[v], v)))
    return Schedule(
        graph=problem.graph, region=problem.region, clock_mhz=float(clock_mhz), ii=ii,
        latency=latency, stage=dict(zip(ids, stage, strict=True)),
        start_ns=dict(zip(ids, start, strict=True)), finish_ns=dict(zip(ids, finish, strict=True)),
        order=order, method=method, family=family, notes=notes, state=plan,
        virtual=frozenset(ids[v] for v in problem.virtual),
        pipelined=frozenset(ids[v] for v in problem.pipelined),
        roms=frozenset(ids[v] for v in problem.roms), rom_outreg=problem.rom_outreg,
        extra_uses=_write_uses(plan, ids, stage), units=units,
    )


def _write_uses(plan: StatePlan | None, ids: list[bytes], stage: list[int]) -> dict[bytes, int]:
    """Return the operands of block RAM writes -> the stage the write port reads them in."""
    out: dict[bytes, int] = {}
    for m in plan.mems if plan is not None else ():
        w = m.write
        if m.mapped_to != "bram" or w is None or m.slot.next is None:
            continue
        at = stage[m.slot.next]
        for v in (w.guard, w.addr, w.data):
            if v is not None:
                out[ids[v]] = max(out.get(ids[v], -1), at)
    return out


__all__ = [
    "LP",
    "LP_MAX_NODES",
    "LP_MAX_ROWS",
    "Problem",
    "alap_schedule",
    "build_lp",
    "build_problem",
    "chaining_pairs",
    "OpTooSlow",
    "check_op_fits",
    "list_schedule",
    "pipeline_dsps",
    "push_late",
    "schedule",
    "sdc_schedule",
]
