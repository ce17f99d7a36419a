"""The state part of the reports (STATE.md, "Reports"): the state table, II bound, recurrences.

``state_section`` gives the ``report.json`` fields of a stateful schedule (``state``,
``ii_bound``, ``recurrences``, ``reset_cycles``); ``state_text`` the lines ``report.txt`` shows
for them. A pure schedule has none of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kera.hls import recurrence as rc
from kera.hls.pipeline import Schedule
from kera.hls.timing import Locator


def state_names(schedule: Schedule) -> list[str]:
    """Return the report name of each state element (instance path, else ``state{index}``)."""
    g = schedule.graph
    names: Any = getattr(g, "state_names", None) or {}
    return [str(names.get(slot.read, f"state{i}"))
            for i, slot in enumerate(g.regions[schedule.region].states)]


def state_section(schedule: Schedule, locator: Locator) -> dict[str, Any]:
    """Return the report fields of a stateful schedule (empty for a pure one)."""
    plan = schedule.state
    if plan is None:
        return {}
    g = schedule.graph
    mems = {m.slot.index: m for m in plan.mems}
    table = []
    for i, (slot, name) in enumerate(zip(g.regions[schedule.region].states,
                                         state_names(schedule), strict=True)):
        span = g.spans.get(slot.read)
        source = locator(span) if span is not None else ""
        if i in mems:
            table.append({**mems[i].as_json(), "name": name, "source": source})
        else:
            table.append({"name": name, "kind": "reg",
                          "bits": g.nodes[slot.read].type.flat_width, "source": source})
    recs = sorted((rc.with_sources(r, g, locator) for r in plan.recurrences),
                  key=lambda r: (-r["cycles"], -r["delay_ns"]))
    return {
        "state": table,
        "ii_bound": {"requested": plan.requested, "rec_mii": plan.rec_mii,
                     "res_mii": plan.res_mii, "chosen": schedule.ii, "binding": plan.binding},
        "recurrences": recs,
        "reset_cycles": plan.reset_cycles,
    }


_WHY = {"requested": "the requested `#[pipeline(ii = N)]`",
        "rec_mii": "the slowest recurrence (state read -> logic -> state written)",
        "res_mii": "the memory ports (accesses per transfer / ports of the block RAM)"}


def state_text(r: Mapping[str, Any], lines: Mapping[int, str]) -> list[str]:
    """Return the lines of ``report.txt`` for the state fields (none for a pure kernel)."""
    if "state" not in r:
        return []
    out = ["State", "  name                     kind  bits/shape      mapped_to  source"]
    for s in r["state"]:
        shape = f"{s['bits']}" if s["kind"] == "reg" else f"{s['words']} x {s['width']}"
        where = s.get("mapped_to", "ff")
        out.append(f"  {s['name']:<24} {s['kind']:<5} {shape:<15} {where:<10} {s['source']}")
        if s["kind"] == "mem":
            out.append(f"  {'':<24} {s['reads_per_transfer']} read(s), "
                       f"{s['writes_per_transfer']} write(s) per transfer")
    b = r["ii_bound"]
    req = "none" if b["requested"] is None else str(b["requested"])
    out += ["", f"II bound: chosen {b['chosen']} = max(requested {req}, RecMII {b['rec_mii']}, "
                f"ResMII {b['res_mii']}); binding: {b['binding']}, {_WHY[b['binding']]}",
            f"reset: in_ready rises {r['reset_cycles']} cycle"
            f"{'s' * (r['reset_cycles'] != 1)} after the last edge with rst = 1"]
    recs = r["recurrences"]
    if not recs:
        out.append("no recurrence: no state's next value depends on its own read")
        return out
    worst = recs[0]
    out += ["", f"Worst recurrence: state `{worst['state']}`, {worst['delay_ns']:.3f} ns of logic, "
                f"closes in {worst['cycles']} cycle{'s' * (worst['cycles'] != 1)}",
            "    delay  op           source"]
    for p in worst["path"]:
        out.append(f"  {p['delay_ns']:>7.3f}  {p['op']:<12} {p['source']}")
        line = _line_of(p["source"])
        if line is not None and line in lines:
            out.append(f"  {'':>7}  {'':<12} | {lines[line]}")
    for other in recs[1:]:
        out.append(f"  also: `{other['state']}` {other['delay_ns']:.3f} ns, "
                   f"{other['cycles']} cycle{'s' * (other['cycles'] != 1)}")
    return out


def _line_of(source: str) -> int | None:
    parts = source.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return int(parts[1])
    return None


__all__ = ["state_names", "state_section", "state_text"]
