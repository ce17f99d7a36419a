"""``--fit``: the least II at which a design fits its board at the clock target.

The search schedules the design at II = 1, 2, ... 16, then doubles up to ``MAX_FIT_II`` and
bisects the last gap; each II is estimated (``kera.hls.resources``) against the board's
LUT/FF/DSP/BRAM capacities (where the LUTs do not fit, again without multiplexed pipeline
registers, ``Schedule.register_mux``). An II below a state recurrence's bound (the
scheduler's error) does not fit either. The chosen schedule's ``ii_reason`` says why each
smaller II tried did not fit; ``hint_ii`` is the same search for the over-budget error's hint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from kera.diagnostics import KeraError
from kera.hls.pipeline import Schedule
from kera.hls.resources import estimate
from kera.hls.sharing import refine
from kera.hls.timing import MUL_OPS, CostModel

#: The largest II ``--fit`` tries.
MAX_FIT_II = 256

Planner = Callable[[int], tuple[Schedule, Any, Any]]


def _why_not(ii: int, plan: Planner
             ) -> tuple[str | None, tuple[Schedule, Any, Any] | None, float]:
    """Return (why ``ii`` does not fit, or None; the plan when it was made; how far over the
    board it is: the largest need / capacity, 0 where it fits or was not made)."""
    try:
        made = plan(ii)
    except KeraError as e:
        if "cannot be met" not in e.message:
            raise
        return e.message.split("cannot be met: ", 1)[-1].split("; use ")[0], None, 0.0
    sched, board, model = made
    overs = _overs(sched, board, model)
    if overs and sched.aligned and any(k == "LUT" for k, *_ in overs):
        # the registers' multiplexers may be the LUTs
        plain = refine(dataclasses.replace(sched, register_mux=False), CostModel(model, None))
        plain_overs = _overs(plain, board, model)
        if not any(k == "LUT" for k, *_ in plain_overs):
            overs, made = plain_overs, (plain, board, model)
    return _format(overs), made, max((need / cap for _, need, cap, _ in overs), default=0.0)


def over_budget(sched: Schedule, board: Any, model: Any) -> str | None:
    """Return what ``sched`` needs beyond the board's capacities (None when it fits)."""
    return _format(_overs(sched, board, model))


def _format(overs: list[tuple[str, int, int, str]]) -> str | None:
    return ", ".join(f"{k} {need} > {cap}{note}" for k, need, cap, note in overs) or None


def _overs(sched: Schedule, board: Any, model: Any) -> list[tuple[str, int, int, str]]:
    """Return (resource, need, capacity, note) of each resource ``sched`` needs beyond the
    board's capacities."""
    res = estimate(sched, CostModel(model, board.capacities.dsp), board.capacities)
    over = [(k.upper(), need, cap, "") for k, (need, cap) in res.overfull.items()]
    cells = res.total["lut"] + flop_cells(sched) if board.family == "ice40" else 0
    if "lut" not in res.overfull and cells > board.capacities.lut:
        over.append(("LUT", cells, int(board.capacities.lut), " (logic cells: the LUTs and the "
                     "delay-line flip-flops fed by flip-flops, which pack with no LUT)"))
    need, cap = dsp_circuits(sched, model), int(board.capacities.dsp)
    if need > cap and _every_mul_on_dsp(model) and "dsp" not in res.overfull:
        over.append(("DSP", need, cap, " (yosys maps every multiply to a DSP block)"))
    return over


def flop_cells(sched: Schedule) -> int:
    """Return the flip-flops that take an iCE40 logic cell of their own: delay-line taps after
    the first (``kera.hls.regbind``: each is loaded from the tap before, no LUT to pack with)."""
    binding = sched.register_binding if sched.aligned else None
    if binding is None:
        return 0
    return sum(r.width for r in binding.registers if r.tap is not None and r.tap[1] > 1)


def _every_mul_on_dsp(model: Any) -> bool:
    """Whether the family's yosys flow puts every multiply on a DSP (``synth_ice40 -dsp``)."""
    command = getattr(model, "metadata", {}).get("command", {})
    return "-dsp" in str(command.get("yosys", "")) if isinstance(command, dict) else False


def dsp_circuits(sched: Schedule, model: Any) -> int:
    """Return the DSP blocks the multipliers take when each is on DSPs (a unit counts once)."""
    graph = sched.graph
    free = CostModel(model, None)
    bound = sched.bound()
    seen: set[str] = set()
    total = 0.0
    for nid in sched.order:
        node = graph.nodes[nid]
        if node.op not in MUL_OPS:
            continue
        unit = bound.get(nid)
        if unit is not None:
            if unit.name in seen:
                continue
            seen.add(unit.name)
        total += free.area(graph, node)["dsp"]
    return int(round(total))


def _candidates(after: int = 0) -> list[int]:
    """The IIs above ``after`` the search tries: each up to 16, then doubling."""
    out = [k for k in range(after + 1, 17)] or [after * 2]
    while out[-1] < MAX_FIT_II:
        out.append(out[-1] * 2)
    return [k for k in out if k <= MAX_FIT_II]


#: A doubling of the II that brings the design's excess over the board down by less than this
#: fraction ends the search: sharing has stopped paying (``search``).
MIN_DOUBLING_GAIN = 0.05


def search(plan: Planner, after: int = 0) -> tuple[int | None, list[tuple[int, str]], Any]:
    """Return (the least II above ``after`` that fits or None, [(ii, why not)] of those tried,
    its plan).

    Past 16 the II doubles; where a doubling leaves the largest need / capacity within
    ``MIN_DOUBLING_GAIN`` of the II before, the larger IIs are not tried (each schedules the
    whole design again: matmul4 on the UP5K at 55 MHz shares nothing from II 32 to 256, 59,533
    LUTs at each, about 25 s a try) and the last reason says so."""
    from kera import progress

    tried: list[tuple[int, str]] = []
    prev, prev_ratio = after, 0.0
    candidates = _candidates(after)
    with progress.task(f"searching the least II above {after} that fits", len(candidates),
                       unit="IIs") as bar:
        for ii in candidates:
            why, made, ratio = _why_not(ii, plan)
            bar.advance()
            if why is None:
                lo, hi, best = prev + 1, ii - 1, (ii, made)
                while lo <= hi:  # bisect the gap a doubling jumped over
                    mid = (lo + hi) // 2
                    why_mid, made_mid, _ = _why_not(mid, plan)
                    if why_mid is None:
                        best, hi = (mid, made_mid), mid - 1
                    else:
                        tried.append((mid, why_mid))
                        lo = mid + 1
                return best[0], sorted(tried), best[1]
            gain = 1.0 - ratio / prev_ratio if ratio and prev_ratio else 1.0
            if ii == 2 * prev and gain < MIN_DOUBLING_GAIN:
                tried.append((ii, f"{why}; II {prev} needed as much: larger IIs not tried"))
                break
            tried.append((ii, why))
            prev, prev_ratio = ii, ratio
    return None, tried, None


def fit_schedule(plan: Planner, board_name: str, clock_mhz: float) -> tuple[Schedule, Any, Any]:
    """Return the plan at the least II that fits, its ``ii_reason`` saying why; raise when none.

    Raises ``KeraError`` (exit 1) when no II up to ``MAX_FIT_II`` fits.
    """
    ii, tried, made = search(plan)
    if ii is None:
        raise KeraError(f"--fit: no II up to {tried[-1][0]} fits {board_name} at "
                        f"{clock_mhz:g} MHz (at II {tried[-1][0]}: {tried[-1][1]})")
    sched, board, model = made
    why = "; ".join(f"II {k}: {w}" for k, w in tried)
    reason = f"--fit: the least II that fits {board_name} at {sched.clock_mhz:g} MHz" + (
        f" (smaller did not: {why})" if why else "")
    return dataclasses.replace(sched, ii_reason=reason), board, model


def operator_area(graph: Any, region: str, costs: CostModel,
                  roms: frozenset[bytes] = frozenset()) -> dict[str, int]:
    """Return the LUTs, carries and DSPs of the operators of ``region`` alone, by the model's
    per-node area (``CostModel.area``: bitwise nodes as the LUTs of the unregistered bit
    network, multiplies beyond ``costs.dsp_budget`` as LUT circuits), before any pipeline
    register: what every II = 1 schedule of the graph pays at least, whatever its stages.
    Lookups in ``roms`` are block RAM reads (``kera.hls.rom``): no LUTs."""
    total = {"lut": 0.0, "carry": 0.0, "dsp": 0.0}
    nodes = graph.nodes
    for nid in graph.topo_order(graph.regions[region]):
        if nid in roms:
            continue
        area = costs.area(graph, nodes[nid])
        for k in total:
            total[k] += area.get(k, 0.0)
    return {k: int(round(v)) for k, v in total.items()}


def operators_overfull(graph: Any, region: str, costs: CostModel, capacities: Any,
                       roms: frozenset[bytes] = frozenset()
                       ) -> tuple[str, int, int, str] | None:
    """Return (resource, need, capacity, why) when the operators alone (``operator_area``;
    ``roms``: lookups in block RAM) exceed the board's LUTs or DSPs at II = 1, else None.
    ``why`` says how many multiplies the DSP budget leaves to LUTs, where that is the cause."""
    need = operator_area(graph, region, costs, roms)
    for k in ("lut", "dsp"):
        cap = int(getattr(capacities, k))
        if need[k] <= cap:
            continue
        why = ""
        muls = [n for n in graph.topo_order(graph.regions[region])
                if graph.nodes[n].op in MUL_OPS]
        on_lut = [n for n in muls if n in costs.lut_multipliers(graph)]
        if k == "lut" and on_lut:
            why = (f"; {len(on_lut)} of its {len(muls)} multiplies are LUT circuits beyond the "
                   f"{int(capacities.dsp)} DSP{'s' * (int(capacities.dsp) != 1)}")
        return k, need[k], cap, why
    return None


def hint_ii(plan: Planner, after: int = 0) -> int | None:
    """Return the least II above ``after`` (the II that did not fit) at which the design
    fits, for the over-budget error, or None. A smaller II shares less, so it would need more
    of the board: the search does not try them (matmul4 at II 16 on the UP5K at 55 MHz spent
    over 12 minutes scheduling IIs 1-15 before it looked above 16)."""
    try:
        return search(plan, after)[0]
    except KeraError:
        return None


__all__ = ["MAX_FIT_II", "MIN_DOUBLING_GAIN", "dsp_circuits", "fit_schedule", "flop_cells",
           "hint_ii", "operator_area", "operators_overfull", "over_budget", "search"]
