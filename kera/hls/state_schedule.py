"""The state part of scheduling: choose the II of a stateful region and its ASAP stages.

``plan_state`` finds the recurrences (``kera.hls.recurrence``), the memory ports' bound
(``kera.hls.memory``), picks ``II = max(requested, RecMII, ResMII)`` (STATE.md) and returns the
ASAP schedule that meets every modulo constraint at that II. A requested II below the bound is
an error that names the recurrence (or the memory) and says what would work.
"""

from __future__ import annotations

import dataclasses

from kera.diagnostics import KeraError
from kera.hls import memory
from kera.hls import recurrence as rc
from kera.hls.pipeline import StatePlan
from kera.hls.schedule import Problem, check_op_fits, list_schedule
from kera.hls.timing import make_locator


def plan_state(problem: Problem, requested: int | None, clock_mhz: float, margin: float,
               overhead: float, family: str
               ) -> tuple[StatePlan, list[tuple[int, int]], list[int], list[float]]:
    """Return the state plan, the writing slots ``(read, next)``, and the ASAP stages/finishes.

    Raises ``KeraError`` (exit 1) when ``requested`` is below RecMII or ResMII.
    """
    assert problem.costs is not None  # plan_schedule always gives one
    mems = memory.with_output_registers(memory.plan_memories(problem, family), family,
                                        problem.costs, problem.period)
    the_slots = [_for_bram(problem, s, mems, family) for s in rc.slots(problem)]
    check_op_fits(problem, clock_mhz, margin, overhead)  # a block RAM read: the RAM's delay
    groups = rc.components(problem, the_slots)
    recs = rc.recurrences(problem, the_slots, groups)
    rec_mii = rc.rec_mii(recs)
    res_mii = max((m.res_mii for m in mems), default=1)
    if requested is not None and requested < rec_mii:
        worst = max(recs, key=lambda r: (r.cycles, r.delay_ns))
        raise KeraError(_rec_message(problem, worst, requested, clock_mhz, margin, overhead))
    if requested is not None and requested < res_mii:
        worst_mem = max(mems, key=lambda m: m.res_mii)
        raise KeraError(f"{_state_where(problem, worst_mem.slot)}`#[pipeline(ii = {requested})]` "
                        f"cannot be met: memory `{worst_mem.name}` needs {worst_mem.res_mii} "
                        f"cycles per transfer for its {worst_mem.reads} reads and "
                        f"{worst_mem.writes} writes on {family} block RAM ports; use "
                        f"`#[pipeline(ii = {res_mii})]`")
    ii = max(requested or 1, rec_mii, res_mii)
    problem.ii = ii
    from kera.hls import sharing

    on_loops = set().union(*(rc._members(problem, the_slots, g) for g in groups)) if groups \
        else set()
    sharing.configure(problem, on_loops | {s.read for s in the_slots})
    asap, finish = rc.state_asap(problem, the_slots, groups, ii,
                                 lambda rel: list_schedule(problem, rel))
    pairs = [(s.read, s.next) for s in the_slots if s.next is not None]
    plan = StatePlan(requested, rec_mii, res_mii,
                     tuple(r.as_json(problem) for r in recs), tuple(mems),
                     max((m.reset_cycles for m in mems), default=0))
    return plan, pairs, asap, finish


def _for_bram(problem: Problem, slot: rc.Slot, mems: list[memory.MemPlan],
              family: str) -> rc.Slot:
    """Return the slot as the scheduler sees it; for a block RAM, set up its timing.

    The chain and the state node become wiring (``problem.virtual``), the read costs the RAM's
    clock-to-output and the selects after it (``memory.read_delay``) and comes one stage after
    its address (two through the RAM's output register); the modulo constraint then runs
    from the read's stage (where its data arrives) to the write's.
    """
    plan = next((m for m in mems if m.slot.index == slot.index and m.mapped_to == "bram"), None)
    if plan is None or plan.read is None:
        return slot
    for v in plan.chain:
        problem.delay[v] = 0.0
        problem.virtual.add(v)
    assert problem.costs is not None  # plan_schedule always gives one
    problem.delay[plan.read] = memory.read_delay(plan, family, problem.costs)
    addr = problem.ids.index(problem.graph.nodes[problem.ids[plan.read]].inputs[1])
    problem.gaps.append((addr, plan.read, 2 if plan.outreg else 1))
    return dataclasses.replace(slot, read=plan.read)


def _state_where(problem: Problem, slot: rc.Slot) -> str:
    read = problem.graph.regions[problem.region].states[slot.index].read
    span = problem.graph.spans.get(read)
    return f"{make_locator(problem.graph)(span)}: " if span is not None else ""


def _rec_message(problem: Problem, rec: rc.Recurrence, requested: int, clock_mhz: float,
                 margin: float, overhead: float) -> str:
    """The one-line error of a recurrence that does not close within the requested II."""
    entry = rc.with_sources(rec.as_json(problem), problem.graph, make_locator(problem.graph))
    ops = ", ".join(f"{p['op']} {p['delay_ns']:g} ns"
                    + (f" at {p['source']}" if p["source"] else "") for p in entry["path"])
    mhz = rc.suggest_clock(problem, rec, requested, margin, overhead)
    clock = (f" or a clock of at most {mhz} MHz" if mhz is not None and mhz < clock_mhz else "")
    return (f"{_state_where(problem, rec.slot)}`#[pipeline(ii = {requested})]` cannot be met: "
            f"the recurrence of state `{rec.slot.name}` ({ops}; {rec.delay_ns:.1f} ns in all) "
            f"takes {rec.cycles} cycles at {clock_mhz:g} MHz; use "
            f"`#[pipeline(ii = {rec.cycles})]`{clock}")


__all__ = ["plan_state"]
