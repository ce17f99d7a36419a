"""The report's ``binding`` section: the shared units at ii > 1, and why this II.

``binding`` is present when ``ii`` > 1 or ``--fit`` chose the II: ``ii``, ``reason`` (what set
the II: `--fit`'s search with why each smaller II did not fit, the request, or the state's
bound), ``aligned`` (inputs start only at modulo count 0), ``dsp_mii`` (the least II at which
every multiply fits the board's DSPs when shared), ``units`` (name, kind, width, ops served,
their counter slots and sources, DSP or LUTs, multiplexer LUTs and delay), ``declined``
(op groups the cost model kept private, and why) and ``registers`` (with aligned starts: the
register binding's physical registers, their bits against a register per bank and value, and
the bits of their input multiplexers; else null).
"""

from __future__ import annotations

import math
from typing import Any

from kera.hls.pipeline import Schedule
from kera.hls.timing import MUL_OPS, CostModel, Locator, locate


def dsp_mii(schedule: Schedule, model: Any, dsps: int) -> int | None:
    """Return ``ceil(DSPs the multiplies need / dsps)`` (None without multiplies on DSPs)."""
    graph = schedule.graph
    free = CostModel(model, None)
    need = sum(free.area(graph, graph.nodes[n])["dsp"] for n in schedule.order
               if graph.nodes[n].op in MUL_OPS)
    if need <= 0 or dsps <= 0:
        return None
    return max(1, math.ceil(need / dsps))


def binding_section(schedule: Schedule, locator: Locator, model: Any,
                    board: Any) -> dict[str, Any]:
    """Return ``{"binding": ...}`` for the report, or ``{}`` at ii = 1 without ``--fit``."""
    if schedule.ii <= 1 and not schedule.ii_reason:
        return {}
    reason = schedule.ii_reason
    if not reason:
        plan = schedule.state
        if plan is not None and plan.binding != "requested":
            reason = f"the state's {plan.binding} ({max(plan.rec_mii, plan.res_mii)})"
        else:
            reason = f"requested with `#[pipeline(ii = {schedule.ii})]`"
    units = []
    for u in schedule.units:
        units.append({
            "name": u.name, "kind": u.kind, "width": u.width, "ops": len(u.ops),
            "slots": list(u.slots), "on_dsp": u.on_dsp, "mux_lut": u.mux_lut,
            "mux_ns": u.mux_ns, "in_widths": list(u.in_widths),
            "sources": sorted({locate(schedule.graph, n, locator) for n in u.ops} - {""}),
        })
    declined = [n for n in schedule.notes if n.startswith("not shared: ")]
    regs = schedule.register_binding if schedule.aligned else None
    registers = None if regs is None else {
        "count": len(regs.registers), "bits": regs.bits, "plain_bits": regs.plain_bits,
        "mux_bits": regs.mux_bits(), "multiplexed": schedule.register_mux}
    return {"binding": {
        "ii": schedule.ii, "reason": reason, "aligned": schedule.aligned,
        "dsp_mii": dsp_mii(schedule, model, int(board.capacities.dsp)),
        "units": units,
        "declined": [d.removeprefix("not shared: ") for d in declined],
        "registers": registers,
    }}


def binding_text(report: dict[str, Any]) -> list[str]:
    """Return the report.txt lines of the binding (none when the report has no binding)."""
    b = report.get("binding")
    if not b:
        return []
    out = [f"Binding (II {b['ii']}: {b['reason']})"]
    if b.get("dsp_mii"):
        out.append(f"  multiplies fit the DSPs from II {b['dsp_mii']}")
    shared = [u for u in b["units"] if u["ops"] > 1]
    if not shared:
        out.append("  no operator shared")
    else:
        out.append("  unit        kind           width  ops  on      mux_lut  mux_ns  slots")
        for u in shared:
            out.append(f"  {u['name']:<10}  {u['kind']:<13}  {u['width']:>5}  {u['ops']:>3}  "
                       f"{'DSP' if u['on_dsp'] else 'LUTs':<6}  {u['mux_lut']:>7}  "
                       f"{u['mux_ns']:>6.2f}  {','.join(map(str, u['slots']))}")
        out.append("  inputs start when the modulo counter is 0: stage s runs at s mod II")
    out += [f"  private: {d}" for d in b["declined"]]
    r = b.get("registers")
    if r:
        out.append(f"  pipeline registers: {r['count']} shared registers, {r['bits']} bits "
                   f"(a register per bank and value: {r['plain_bits']}); register multiplexer "
                   f"inputs: {r['mux_bits']} bits")
    return out


__all__ = ["binding_section", "binding_text", "dsp_mii"]
