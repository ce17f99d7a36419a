"""``synthesize``: lower for hardware, schedule, and write the reports and the ``.keg``.

This is what ``kera-hls synthesize`` calls. It writes into ``outdir``:

* ``report.json`` and ``report.txt`` (``kera.hls.report``),
* ``<top>.keg``: the graph exactly as given (the user's optimised graph, not the lowered one),
* whatever the ``emitters`` write: each is called as ``emitter(result, outdir)`` after the
  schedule and the reports exist and returns the paths it wrote (``{name: Path}``). This is the
  hook for the Verilog emitter and the testbench (``kera.rtl``), added by the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kera import progress
from kera.diagnostics import ExitCode, KeraError, SourceFile, read_source
from kera.hls import rom
from kera.hls.decompose import decompose_keeping
from kera.hls.lower import lower_for_hardware
from kera.hls.lutcover import SHOW_NODES
from kera.hls.memory import outreg_note
from kera.hls.pipeline import Schedule
from kera.hls.report import build_report, dumps, render_text
from kera.hls.resources import check_schedule_fits
from kera.hls.schedule import OpTooSlow
from kera.hls.schedule import schedule as make_schedule
from kera.hls.timing import CostModel, DelayAreaModel
from kera.ir.graph import Graph

#: The fraction of the clock period the scheduler keeps free by default.
DEFAULT_MARGIN = 0.1


@dataclass
class SynthResult:
    """What ``synthesize`` produced: the schedule (of the lowered graph), the report, the files."""

    schedule: Schedule
    report: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)
    graph: Graph | None = None  # the graph as given (before lowering)
    board: Any = None

    @property
    def timing_met(self) -> bool:
        """Whether the clock target is met (by the measurement when there is one)."""
        return bool(self.report["timing"]["met"])

    def strict_exit_code(self) -> int:
        """Return the exit code of ``synthesize --strict``: 4 when timing is not met, else 0."""
        return 0 if self.timing_met else 4


Emitter = Callable[[SynthResult, Path], Mapping[str, Path]]


def synthesize(
    graph: Graph,
    top: str,
    *,
    board: str = "icebreaker",
    clock_mhz: float | None = None,
    outdir: Path | str,
    source: Any = None,
    ii: int | None = None,
    margin: float | None = None,
    model: DelayAreaModel | None = None,
    method: str = "auto",
    measured: Mapping[str, Any] | None = None,
    emitters: Sequence[Emitter] = (),
    allow_overfull: bool = False,
    close_timing: Sequence[Mapping[str, Any]] | None = None,
    fit: bool = False,
) -> SynthResult:
    """Schedule region ``top`` of ``graph`` for ``board`` and write the results into ``outdir``.

    ``clock_mhz`` defaults to the board's clock; ``ii`` to the graph's ``#[pipeline(ii)]``
    directive (the one every command reads, so `sim` and `parity` check this design).
    ``source`` may be the ``Program``, its ``SourceFile`` or None (then the file at
    ``graph.source_path``, when it is there: a `.keg` records it). Raises
    ``KeraError``: unknown board (exit 2, from ``kera.hls.boards``), clock <= 0 (exit 2), an op
    too slow for the clock (exit 1), an unwritable ``outdir`` (exit 2). ``close_timing``: the
    tries of `--close-timing` (``kera.hls.closure``), for the report. ``fit``: the least II at
    which the design fits the board (``kera.hls.fit``); without it, an over-budget error names
    the II that would fit.
    """
    src = _source_file(source) or read_source(graph.source_path)
    requested = margin
    margin = graph_margin(graph, top, margin)

    def hinted(e: KeraError, at_ii: int) -> KeraError:
        """``e`` (an over-budget error) with the least II that fits, where there is one."""
        from kera.hls.fit import hint_ii

        n = hint_ii(lambda k: plan_schedule(graph, top, board=board, clock_mhz=clock_mhz, ii=k,
                                            margin=requested, model=model, method=method),
                    at_ii)
        if n is None or n == at_ii:
            return e
        head = e.message.split(" (pass --allow-overfull")[0]
        return KeraError(f"{head}; at II {n} it fits (`#[pipeline(ii = {n})]` or --fit), or "
                         "pass --allow-overfull to emit it anyway", exit_code=e.exit_code)

    if not allow_overfull and not fit:
        try:
            check_operators_fit(graph, top, board=board, clock_mhz=clock_mhz, ii=ii,
                                margin=margin, model=model, source=src)
        except _OperatorsOverfull as e:
            if e.timing:
                raise
            if e.nodes > HINT_MAX_NODES:
                head = e.message.split(" (pass --allow-overfull")[0]
                raise KeraError(f"{head} (`--fit` searches the least II that fits, or pass "
                                "--allow-overfull to emit it anyway)") from None
            raise hinted(e, 1) from None
    sched, the_board, model = plan_schedule(graph, top, board=board, clock_mhz=clock_mhz, ii=ii,
                                            margin=requested, model=model, method=method,
                                            fit=fit)
    try:
        check_schedule_fits(sched, the_board, model, src, allow_overfull)
    except KeraError as e:
        raise hinted(e, sched.ii) from None
    options = {"method": method}
    report = build_report(sched, the_board, model=model, source=src,
                          fingerprint=graph.fingerprint(), top=top,
                          margin=margin if sched.margin is None else sched.margin,
                          options=options, measured=measured)
    if close_timing is not None:
        report["close_timing"] = {"tries": [dict(t) for t in close_timing],
                                  "met": bool(close_timing and close_timing[-1]["met"])}
    result = SynthResult(sched, report, graph=graph, board=the_board)
    out = Path(outdir)
    _write(out / "report.json", dumps(report).encode("utf-8"), result, "report.json")
    _write(out / "report.txt", render_text(report, src).encode("utf-8"), result, "report.txt")
    from kera.ir import keg

    _write(out / f"{top}.keg", keg.write(graph), result, "keg")
    for emit in emitters:  # the hook for kera.rtl (Verilog, testbench) and friends
        result.paths.update(emit(result, out))
    return result


def plan_schedule(
    graph: Graph,
    top: str,
    *,
    board: str = "icebreaker",
    clock_mhz: float | None = None,
    ii: int | None = None,
    margin: float | None = None,
    model: DelayAreaModel | None = None,
    method: str = "auto",
    fit: bool = False,
    covers: bool = True,
) -> tuple[Schedule, Any, DelayAreaModel]:
    """Lower region ``top`` for hardware and schedule it for ``board``: (schedule, board, model).

    This is the one schedule every target lowers from (`synthesize`, `sim`, `run`, `parity`).
    ``ii`` defaults to the graph's `#[pipeline(ii = N)]` directive; with ``fit`` it is the
    least II at which the design fits the board (``kera.hls.fit``), whatever was requested.
    ``covers=False`` leaves out the LUT cells the Verilog writes (``kera.hls.lutcover``): the
    same stages and order, for targets that never write Verilog (AES-128's covers took 16 of
    the 43 s of `run --target cpu`).
    """
    requested = margin
    margin = graph_margin(graph, top, margin)
    if fit:
        from kera.hls.boards import load_board as _load
        from kera.hls.fit import fit_schedule

        b = _load(board)
        return fit_schedule(lambda k: plan_schedule(graph, top, board=board, clock_mhz=clock_mhz,
                                                    ii=k, margin=requested, model=model,
                                                    method=method),
                            b.name, float(clock_mhz) if clock_mhz is not None else b.clock_mhz)
    from kera.hls.boards import load_board

    if clock_mhz is not None and (isinstance(clock_mhz, bool) or not _positive(clock_mhz)):
        raise KeraError(f"--clock-mhz must be a positive number, not {clock_mhz}",
                        exit_code=ExitCode.USAGE)
    the_board = load_board(board)
    clock = float(clock_mhz) if clock_mhz is not None else the_board.clock_mhz
    graph.region_or_error(top)
    if ii is None:  # None: not requested (the scheduler then picks it, STATE.md)
        ii = graph.directives.get(top, {}).get("ii")
    if model is None:
        from kera.hls.models import load_model

        model = load_model(the_board.family)
    _check_widths(graph, top, the_board)
    lowered = lower_for_hardware(graph.subgraph([top]))
    # with II > 1 multiplies may share DSPs (kera.hls.sharing): no budget rewrite then
    costs = CostModel(model, the_board.capacities.dsp if (ii or 1) == 1 else None)

    def attempt(m: float, size: float = 0.0, cap: float | None = None) -> Schedule:
        usable = 1000.0 / clock * (1.0 - m) - costs.overhead_ns
        keep = rom.choose(lowered, top, the_board.family, the_board.capacities.bram,
                          usable, costs)

        def scheduled(flags: dict[bytes, frozenset[int]] | None
                      ) -> tuple[Schedule, dict[bytes, tuple[bytes, int]]]:
            split, roms, sums = decompose_keeping(lowered, costs, usable, keep, flags)
            return make_schedule(split, top, family=the_board.family, clock_mhz=clock, ii=ii,
                                 margin=m, model=model, method=method,
                                 dsp_budget=the_board.capacities.dsp, period_cap_ns=cap,
                                 roms=roms, design_luts=size), sums

        flags: dict[bytes, frozenset[int]] = {}
        sched, sums = scheduled(None)
        for _ in range(COUNT_ROUNDS):  # until the levels built with an `and` are the registered
            want = _registered_count_sums(sched, sums)
            if want == flags:
                break
            flags = want
            sched, sums = scheduled(flags)
        notes = (rom.note(sched) if sched.roms else "", outreg_note(sched))
        return replace(sched, notes=(*sched.notes, *(n for n in notes if n)))

    def meet(m: float) -> tuple[Schedule, float, float]:
        return _meet_estimate(attempt, m, model, the_board)

    chosen = requested is not None or MARGIN_DIRECTIVE in graph.directives.get(top, {})
    with progress.task(f"scheduling `{top}` for {the_board.name} at {clock:g} MHz",
                       show=len(lowered.nodes) >= SHOW_NODES):
        sched, margin, size = meet(margin) if chosen else _fitting_margin(meet, margin, clock)
        sched = replace(_free_speed(lambda cap: attempt(margin, size, cap), sched, model,
                                    the_board), margin=margin)
    return (_covered(sched, model, the_board) if covers else sched), the_board, model


#: Schedules at most to settle which count sums are built with an `and` on top
#: (``_registered_count_sums``); each may move a boundary.
COUNT_ROUNDS = 4


def _registered_count_sums(sched: Schedule, sums: Mapping[bytes, tuple[bytes, int]]
                           ) -> dict[bytes, frozenset[int]]:
    """Return the levels of each ``popcount``'s adder tree (``decompose_keeping``'s count
    sums: the node that makes each sum's top bit) that ``sched`` registers: held in its own
    stage's bank, as it is or through the ``cast`` and ``concat`` wiring after it.

    Built with an ``and`` on top instead of the carry out, such a sum puts its flip-flop in
    a LUT's cell: a carry out reaches a flip-flop through a pass-through cell and a net
    (iCE40, nextpnr 0.11; popcount64 at 55 MHz, docs/models.md's thirty-seventh run). An
    ``and`` where no register is costs a LUT for nothing, so ``plan_schedule`` schedules
    again until the levels built so are the registered ones (``COUNT_ROUNDS``)."""
    if not sums:
        return {}
    graph = sched.graph
    banks: dict[bytes, set[int]] = {}
    for s, bank in enumerate(sched.crossing()):
        for nid in bank:
            banks.setdefault(nid, set()).add(s)
    users = graph.users()

    def registered(nid: bytes, stage: int) -> bool:
        return stage in banks.get(nid, ()) or any(
            graph.nodes[u].op in ("cast", "concat") and sched.stage.get(u) == stage
            and registered(u, stage)
            for u in users.get(nid, ()))

    out: dict[bytes, set[int]] = {}
    for nid, (source, level) in sorted(sums.items(), key=lambda kv: kv[1]):
        if nid in sched.stage and registered(nid, sched.stage[nid]):
            out.setdefault(source, set()).add(level)
    return {k: frozenset(v) for k, v in out.items()}


def _covered(sched: Schedule, model: DelayAreaModel, board: Any) -> Schedule:
    """Return ``sched`` with its stages' bitwise logic written as LUT cells where that saves
    LUTs within the period its margin leaves (``kera.hls.lutcover``)."""
    from kera.hls.lutcover import LUT_CELLS, plan_covers
    from kera.hls.resources import schedule_costs

    if sched.family not in LUT_CELLS:
        return sched
    costs = schedule_costs(sched, CostModel(model), board.capacities.dsp)
    budget = 1000.0 / sched.clock_mhz * (1.0 - (sched.margin or 0.0)) - costs.overhead_ns
    return plan_covers(sched, costs, budget)


def _fitting_margin(plan: Callable[[float], tuple[Schedule, float, float]], margin: float,
                    clock: float) -> tuple[Schedule, float, float]:
    """Return ``plan(margin)``; where an op is slower than the period the margin leaves
    (``OpTooSlow``: nothing split it) but fits one period as it is with less margin, ``plan``
    at the largest margin that fits it, with a note that says so. The default margin keeps
    room for what the model cannot see; for an op that is the device's own limit it would
    refuse a clock the design reaches (histogram at 55 MHz on iCE40: its block RAM read is
    13.0 ns, the 10 % margin leaves 12.0; scheduled at 50 MHz it places at 59.1). A margin the
    user chose (``plan_schedule(margin=...)``, the `.keg`'s directive of `--close-timing`) is
    kept. Where the op does not fit even without a margin, the error suggests the fastest
    clock at which it does (the one this would accept)."""
    m, first = margin, None
    for _ in range(FIT_TRIES):
        try:
            sched, final, size = plan(m)
        except OpTooSlow as e:
            first = first or e
            tighter = e.fitting_margin()
            if tighter is None or tighter >= m:
                raise e.without_margin() from None
            m = tighter
            continue
        if first is not None:
            sched = replace(sched, notes=(*sched.notes, (
                f"{first.op} needs {first.delay_ns:.1f} ns: scheduled with a {final:.1%} "
                f"timing margin instead of {margin:.0%}, so that it fits one period at "
                f"{clock:g} MHz")))
        return sched, final, size
    assert first is not None
    raise first.without_margin()


#: The most operators (nodes, after lowering and decomposition) for which the over-budget
#: error searches the least II that fits: each II tried is a whole schedule, and the peers'
#: matmul4 at 55 MHz on iCE40 (64 LUT multipliers as shift-and-add, 2,234 nodes) took 48 s to
#: find none (at 12 MHz its 307 nodes find none in seconds; examples/matmul4's 195 find II 8).
#: Larger designs are told that ``--fit`` searches.
HINT_MAX_NODES = 1000


class _OperatorsOverfull(KeraError):
    """The does-not-fit error of ``check_operators_fit``; ``timing``: the clock is missed too;
    ``nodes``: the size of the graph it was found in."""

    def __init__(self, message: str, timing: bool, nodes: int = 0) -> None:
        super().__init__(message)
        self.timing = timing
        self.nodes = nodes


def check_operators_fit(graph: Graph, top: str, *, board: str, clock_mhz: float | None,
                        ii: int | None, margin: float, model: DelayAreaModel | None,
                        source: SourceFile | None = None) -> None:
    """Refuse (exit 1) a design whose operators alone need more LUTs or DSPs than the board has
    at II = 1 (``kera.hls.fit.operators_overfull``): no schedule can make it fit, so that is
    what the user is told, before (and beside) any clock its ops cannot meet: 56 of matmul4's
    64 multiplies are LUT multipliers on an 8-DSP UP5K, 18k LUTs of 5,280, and each is also
    slower than the period at 55 MHz. Designs at II > 1 (shared operators) or with state (the
    scheduler picks their II) are left to the scheduled estimate (``check_schedule_fits``)."""
    from kera.hls.boards import load_board
    from kera.hls.fit import operators_overfull
    from kera.hls.schedule import build_problem
    from kera.hls.timing import locate, make_locator

    the_board = load_board(board)
    region = graph.region_or_error(top)
    if ii is None:
        ii = graph.directives.get(top, {}).get("ii")
    if (ii or 1) != 1 or region.stateful:
        return
    if clock_mhz is not None and (isinstance(clock_mhz, bool) or not _positive(clock_mhz)):
        return  # plan_schedule says what is wrong with it
    clock = float(clock_mhz) if clock_mhz is not None else the_board.clock_mhz
    if model is None:
        from kera.hls.models import load_model

        model = load_model(the_board.family)
    _check_widths(graph, top, the_board)
    costs = CostModel(model, the_board.capacities.dsp)
    usable = 1000.0 / clock * (1.0 - margin) - costs.overhead_ns
    plain = lower_for_hardware(graph.subgraph([top]))
    keep = rom.choose(plain, top, the_board.family, the_board.capacities.bram, usable, costs)
    lowered, roms, _ = decompose_keeping(plain, costs, usable, keep)
    over = operators_overfull(lowered, top, costs, the_board.capacities, roms)
    if over is None:
        return
    k, need, cap, why = over
    where = locate(graph, region.result, make_locator(graph, source)) or graph.source_path or ""
    head = (f"{where + ': ' if where else ''}the design needs {need} {k.upper()} but "
            f"{the_board.name} has {cap}: it cannot fit at II = 1, whatever the schedule (its "
            f"operators alone, before pipeline registers{why})")
    try:
        build_problem(lowered, top, costs, clock, margin, roms=roms)
    except KeraError as e:  # an op slower than the period: say it too
        raise _OperatorsOverfull(f"{head}; nor can it meet the clock: {e.message}",
                                 timing=True) from None
    raise _OperatorsOverfull(f"{head} (pass --allow-overfull to emit it anyway)", timing=False,
                             nodes=len(lowered.nodes))


#: How many schedules ``_fitting_margin`` makes at most.
FIT_TRIES = 3
#: How many schedules ``plan_schedule`` makes, at most, to meet the clock by its own estimate
#: (one more where its lookups in LUT tables are timed again in the design's size).
ESTIMATE_TRIES = 3
#: ``_meet_estimate``: the estimated LUTs and flip-flops a tighter schedule of a design at
#: ii > 1 may add, as a fraction. A tighter margin shortens the chains a unit may start
#: after, so fewer classes fit a unit with their multiplexers: sha256 at ii = 64 on ECP5 at
#: 100 MHz, estimated at 91.6 MHz, made 104.7 MHz at margin 0.53 with 53,050 LUTs instead of
#: 9,014; cordic at ii = 8 at 25 MHz, 22.5 -> 26.9 MHz for no LUT or flip-flop. Without
#: units, more stages mean more registers on the modulo circle, whose multiplexers the
#: timing counts too: isqrt32 at ii = 8 on iCE40 at 55 MHz went from 15 to 31 cycles.
II_TIGHTEN_COST = 0.1


def _meet_estimate(attempt: Callable[[float, float], Schedule], margin: float,
                   model: DelayAreaModel, board: Any) -> tuple[Schedule, float, float]:
    """Return ``attempt(margin, 0)``, or a schedule that meets the clock by the bit-level
    timing (``kera.hls.sta``, what the report says) where that one misses a clock that the
    scheduler's chained delays met: those are per node, and the nets of a large design are
    slower than they assume.

    First, where the design has lookups in LUT tables, it is scheduled again with their delays
    in a design of its size (``attempt(margin, size)``, ``CostModel.table_growth_ns``): the
    bit-level timing's, so a lookup whose index nets span a large design is no longer chained
    with logic the period has no room for (aes128 on ECP5 at 100 MHz: four of round one's
    sixteen S-boxes chained with MixColumns, 3.6 ns where the bit-level timing says 7.3 in
    31k LUTs: estimated at 91.5 MHz, 104.5 now). Then the margin is tightened by the
    shortfall, as ``--close-timing`` does with a measurement. An attempt that fails (an op
    that no longer fits) keeps the schedule before it, as does one of a design at ii > 1 that
    costs more than ``II_TIGHTEN_COST`` of its LUTs or flip-flops. Returns the schedule, its
    margin and the size its tables were timed in (0: their own delays)."""
    from kera.hls.closure import next_margin
    from kera.hls.resources import estimate, schedule_costs
    from kera.hls.sta import analyse_bits, design_size

    def area(s: Schedule, costs: CostModel) -> tuple[float, float]:
        total = estimate(s, costs, board.capacities).total
        return total["lut"], total["ff"]

    def costs_of(s: Schedule) -> CostModel:
        return schedule_costs(s, CostModel(model), board.capacities.dsp)

    sched = attempt(margin, 0.0)
    costs = costs_of(sched)
    size = design_size(sched, costs)
    used = 0.0
    sizing = _has_grown_tables(sched, costs, size)
    tries = ESTIMATE_TRIES - 1  # tightened margins; the sizing is one schedule more
    while tries > 0:
        bits = analyse_bits(sched, costs, size)
        # the stages' timing only: more stages cannot shorten the handshake's path
        fmax = 1000.0 / max(max(bits.stage_delays, default=0.0) + costs.overhead_ns, 1e-9)
        tighter = margin if sizing else next_margin(margin, fmax, sched.clock_mhz)
        if fmax >= sched.clock_mhz or tighter is None:
            break
        guard = area(sched, costs) if sched.ii > 1 else None
        try:
            cand = attempt(tighter, size if sizing else used)
        except KeraError:
            cand = None
        cand_costs = costs_of(cand) if cand is not None else costs
        if cand is not None and guard is not None:
            lut, ff = area(cand, cand_costs)
            if lut > guard[0] * (1 + II_TIGHTEN_COST) or ff > guard[1] * (1 + II_TIGHTEN_COST):
                cand = None
        if cand is not None:
            sched, costs, margin = cand, cand_costs, tighter
            used = size if sizing else used
        elif not sizing:
            break
        tries -= 0 if sizing else 1
        sizing = False
    return sched, margin, used


def _has_grown_tables(sched: Schedule, costs: CostModel, size: float) -> bool:
    """Whether a lookup in a LUT table of ``sched`` is slower in a design of ``size`` LUTs
    than the scheduler timed it (``CostModel.table_growth_ns``)."""
    graph = sched.graph
    return any(costs.table_growth_ns(graph, graph.nodes[nid], size) > 0.0
               for nid in sched.order if nid not in sched.roms
               and graph.nodes[nid].op == "array_index")


#: ``_free_speed``: each round asks for a slowest stage at most this fraction of the last one.
FREE_STEP = 0.9
#: ``_free_speed``: the estimated LUTs and flip-flops a round may add, as a fraction. The
#: estimate counts a deep select chain's LUTs as a delay-oriented mapping of it makes them, but
#: abc9 duplicates more the deeper the chain, so a shallower split that costs a few estimated
#: LUTs often saves real ones (shl64 at 150 MHz on ECP5: 553 -> 590 estimated, 895 -> 786
#: placed, 149 -> 194 MHz).
FREE_COST = 0.1
#: ``_free_speed``: the most rounds (each a schedule and its estimate).
FREE_ROUNDS = 3
#: ``_free_speed``: the largest region (nodes) it tries; each round schedules it again.
FREE_MAX_NODES = 4_000


def _free_speed(attempt: Callable[[float], Schedule], sched: Schedule, model: DelayAreaModel,
                board: Any) -> Schedule:
    """Return a schedule whose slowest stage is faster at little cost, or ``sched``.

    The register-minimal schedule at the clock is one of many; nothing in the LP prefers the one
    whose slowest stage is fastest: isqrt32 at 25 MHz on ECP5 chains eleven rows in one stage
    and four in the other. Each round schedules again with the stages chained in ``FREE_STEP``
    of the slowest one's period (``period_cap_ns``) and keeps the result only where it has the
    same latency, at most ``FREE_COST`` more estimated LUTs and flip-flops, no more DSPs or
    block RAMs, and a bit-level timing (``kera.hls.sta``, the report's) at least that much
    faster: a register boundary moved inside a bitwise network for a few per cent changes what
    yosys packs (gf_mul at 150 MHz: 74 -> 96 LUT4 sites for 1 % of Fmax), so small gains are not
    taken. With the cost allowed (placed, 3 seeds, yosys 0.70 / nextpnr 0.11): ECP5 150 MHz
    shl64 895 -> 786 LUT4 sites and 149 -> 194 MHz, sra64 981 -> 821 and 155 -> 181, mul64 161
    -> 213 MHz (+16 flip-flops); iCE40 55 MHz rotl32 177 -> 163 LUTs and 66 -> 87 MHz, saturate
    71 -> 84 MHz (+1 flip-flop); lfsr16 at 12 MHz 306 -> 296 LUTs, 26 -> 38 MHz; xtea at 150 MHz
    on ECP5 110 -> 113 MHz for 6.6 % more flip-flops. At II > 1 the same (isqrt32 at II 4, ECP5
    25 MHz: 20.9 / 36.0 -> 23.9 ns stages); there a shorter chain can leave an operator
    unshared, whose multiplexer no longer fits it (four `mul` on one SB_MAC16 became three),
    which the DSP rule refuses.
    """
    if len(sched.stage) > FREE_MAX_NODES or sched.state is not None:
        return sched
    judged = _judge(sched, model, board)
    first = judged[2]
    for _ in range(FREE_ROUNDS):
        slowest = max(sched.finish_ns.values(), default=0.0)
        try:
            cand = attempt(slowest * FREE_STEP)
        except KeraError:
            break
        got = _judge(cand, model, board) if cand.latency == sched.latency else None
        if got is None or got[0] > judged[0] * (1 + FREE_COST) \
                or got[1] > judged[1] * (1 + FREE_COST) or got[2] > judged[2] * FREE_STEP \
                or any(g > j for g, j in zip(got[3], judged[3], strict=True)):
            break
        sched, judged = cand, got
    if judged[2] == first:
        return sched
    note = (f"stages re-balanced at the same latency (at most {FREE_COST:.0%} more estimated "
            f"LUTs and flip-flops): the slowest {first:.3f} -> {judged[2]:.3f} ns of logic by "
            "the bit-level estimate")
    return replace(sched, notes=(*sched.notes, note))


def _judge(sched: Schedule, model: DelayAreaModel, board: Any
           ) -> tuple[int, int, float, tuple[int, int]]:
    """Return a schedule's estimated LUTs, flip-flops, slowest stage (bit-level, ns) and its
    (DSPs, block RAMs)."""
    from kera.hls.resources import estimate, schedule_costs
    from kera.hls.sta import analyse_bits, design_size

    costs = schedule_costs(sched, CostModel(model), board.capacities.dsp)
    res = estimate(sched, costs, board.capacities)
    bits = analyse_bits(sched, costs, design_size(sched, costs))
    return (res.total["lut"], res.total["ff"], max(bits.stage_delays, default=0.0),
            (res.total["dsp"], res.total["bram"]))


#: The widest value the hardware model takes (bits; e.g. `mem m: [u16; 4096]`). The LUT-level
#: model gives each bit of a value its own leaf, so its memory grows with the square of the
#: widest value (80 kbit took 1.8 GB); wider memories need a RAM model that does not look at
#: bits. An UP5K's whole block RAM is 122,880 bits.
MAX_VALUE_BITS = 1 << 16


def _check_widths(graph: Graph, top: str, board: Any) -> None:
    """Refuse (exit 1, naming it) a state element or value too wide for any hardware."""
    for nid in graph.topo_order(graph.regions[top]):
        node = graph.nodes[nid]
        bits = node.type.flat_width
        if bits <= MAX_VALUE_BITS:
            continue
        span = graph.spans.get(nid)
        where = f"{graph.source_path}:{span.start}" if span and graph.source_path else top
        what = f"state `{graph.state_name(nid)}`" if node.op == "state" else f"a `{node.op}`"
        src = read_source(graph.source_path) if span is not None else None
        if src is not None and span is not None:
            where = src.location(span)
        raise KeraError(f"{where}: {what} holds {bits:,} bits, more than the hardware model "
                        f"takes ({MAX_VALUE_BITS:,}); {board.name} has "
                        f"{board.capacities.ff:,} flip-flops and {board.capacities.bram} block "
                        "RAMs: it cannot fit")


#: The directive `--close-timing` leaves in the `.keg` it writes: the margin (in thousandths)
#: of the schedule it closed, so `sim`/`parity`/`run` of that `.keg` plan the same schedule.
MARGIN_DIRECTIVE = "margin_permille"


def graph_margin(graph: Graph, top: str, margin: float | None) -> float:
    """Return ``margin``, else the graph's margin directive, else ``DEFAULT_MARGIN``."""
    if margin is not None:
        return margin
    permille = graph.directives.get(top, {}).get(MARGIN_DIRECTIVE)
    return DEFAULT_MARGIN if permille is None else permille / 1000


def _positive(x: Any) -> bool:
    return isinstance(x, int | float) and math.isfinite(x) and x > 0


def _source_file(source: Any) -> SourceFile | None:
    """Return the ``SourceFile`` of a ``Program``, a ``SourceFile`` or None."""
    if source is None or isinstance(source, SourceFile):
        return source
    src = getattr(source, "source", None)
    return src if isinstance(src, SourceFile) else None


def _write(path: Path, data: bytes, result: SynthResult, key: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as e:
        raise KeraError(f"{path}: cannot write: {e.strerror}", exit_code=ExitCode.USAGE) from None
    result.paths[key] = path


__all__ = ["DEFAULT_MARGIN", "Emitter", "SynthResult", "synthesize"]
