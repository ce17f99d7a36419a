"""Reports: ``report.json`` (INTERFACES.md) and ``report.txt`` for a person.

``build_report`` gathers the cycle report (latency, II, per-stage delay), the resource estimate,
the critical path mapped to source locations, and everything needed to reproduce the run
(compiler version, options, model metadata). The dict it returns is already canonical: floats
rounded to ``DIGITS`` decimals, so ``dumps`` (sorted keys) is byte-identical for the same inputs.
``render_text`` turns a report into ``report.txt``. The JSON schema is ``report_schema.json``
next to this module (``load_schema``). Every field is explained in docs/reports.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from importlib import resources as importlib_resources
from typing import Any

import kera
from kera.diagnostics import SourceFile
from kera.hls.pipeline import Schedule
from kera.hls.resources import (
    CAPACITY_KEYS,
    RESOURCE_KEYS,
    estimate,
    schedule_costs,
    utilisation,
)
from kera.hls.state_report import state_section, state_text
from kera.hls.timing import (
    CostModel,
    DelayAreaModel,
    Locator,
    analyse,
    is_wiring,
    locate,
    make_locator,
)
from kera.hls.verdict import (
    CARRY_PER_LUT,
    deadline,
    expected_error,
    line_ranges,
    source_lines,
    timing_verdict,
    verdict_line,
)

#: Decimals kept for every float in a report.
DIGITS = 3
#: Version of the report layout; bumped when a field changes meaning (fields are only added).
#: 2: `timing.slack_ns` and the warnings come from the measurement when there is one.
REPORT_VERSION = 2


def build_report(
    schedule: Schedule,
    board: Any,
    *,
    model: DelayAreaModel | None = None,
    source: SourceFile | Locator | None = None,
    fingerprint: str | None = None,
    top: str | None = None,
    margin: float | None = None,
    options: Mapping[str, Any] | None = None,
    measured: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the report of a schedule on ``board`` (a ``Board`` or a board name).

    ``model`` is the delay/area model the schedule was made with (default: the board family's
    fitted model); ``source`` maps spans to ``file:line:col``; ``fingerprint`` is the graph the
    user compiled (default: the scheduled graph's); ``margin`` the scheduling margin;
    ``options`` extra options to record; ``measured`` place-and-route figures, when there are.
    """
    if isinstance(board, str):
        from kera.hls.boards import load_board

        board = load_board(board)
    if model is None:
        from kera.hls.models import load_model

        model = load_model(board.family)
    costs = CostModel(model)
    graph = schedule.graph
    locator = make_locator(graph, source)
    area = estimate(schedule, costs, board.capacities)
    timing = analyse(schedule, schedule_costs(schedule, costs, board.capacities.dsp), locator)
    top = top or schedule.region
    opts = {"board": board.name, "clock_mhz": schedule.clock_mhz, "ii": schedule.ii,
            "top": top, **({"margin": margin} if margin is not None else {}),
            **dict(options or {})}
    overhead = costs.overhead_ns
    period = schedule.clock_ns
    meta = model_metadata(model, board.family)
    caps = {k: int(getattr(board.capacities, k)) for k in CAPACITY_KEYS}
    caps["carry"] = int(caps["lut"] * CARRY_PER_LUT.get(board.family, 1.0))
    path = [{"op": p.op, "width": p.width, "delay_ns": p.delay_ns, "start_ns": p.start_ns,
             "stage": p.stage, "source": p.source} for p in timing.critical_path]
    meas = _measured(schedule, measured, locator, area.total, caps)
    verdict = timing_verdict(schedule.clock_mhz, timing.fmax_mhz, path, meas,
                             meas["critical_path"] if meas else ())
    ops = sum(row["count"] for row in area.by_op.values())
    warnings = list(meas["warnings"] if meas else area.warnings)
    if not verdict["met"]:
        warnings.append(verdict_line(verdict))
    report: dict[str, Any] = {
        "report_version": REPORT_VERSION,
        "fingerprint": fingerprint or graph.fingerprint(),
        "schedule_fingerprint": graph.fingerprint(),
        "top": top,
        "board": board.name,
        "family": board.family,
        "device": board.device,
        "package": board.package,
        "clock_mhz": float(schedule.clock_mhz),
        "latency_cycles": schedule.latency,
        "ii": schedule.ii,
        "schedule_method": schedule.method,
        "stages": _stages(schedule, timing.stage_delays, locator),
        "timing": {
            "period_ns": period,
            "margin": margin,
            "usable_ns": period * (1 - margin) - overhead if margin is not None else None,
            "register_overhead_ns": overhead,
            "max_stage_delay_ns": timing.max_stage_delay,
            "handshake_ns": timing.handshake_ns,
            **verdict,
        },
        "deadline": deadline(schedule.clock_mhz, schedule.latency, schedule.ii,
                             verdict["fmax_mhz"]),
        "estimate": {
            **{k: area.total[k] for k in RESOURCE_KEYS},
            "fmax_mhz": timing.fmax_mhz,
            "utilisation": {**{k: area.utilisation[k] for k in CAPACITY_KEYS
                               if k in area.utilisation}, **_carry_use(area.total, caps)},
            "expected_error": expected_error(meta, ops, len(path), timing.fmax_mhz, overhead,
                                             {**area.total, "fmax_mhz": timing.fmax_mhz},
                                             board.family),
            "by_op": area.by_op,
            "registers": {"bits": area.register_bits, "valid_bits": area.valid_bits,
                          **area.registers},
        },
        "critical_path": path,
        "warnings": warnings,
        "notes": list(schedule.notes),
        "compiler": {"name": "kera-hls", "version": kera.__version__},
        "options": opts,
        "model": meta,
        "capacities": caps,
    }
    if meas is not None:
        report["measured"] = {k: v for k, v in meas.items() if k != "warnings"}
    report.update(state_section(schedule, locator))  # STATE.md: only for a stateful kernel
    from kera.hls.share_report import binding_section

    report.update(binding_section(schedule, locator, model, board))  # ii > 1: the units
    if "reset_cycles" in report:
        report["deadline"]["reset_to_first_accept_cycles"] = report["reset_cycles"]
    report["ports"] = port_table(schedule)
    return canonical(report)


def _measured(schedule: Schedule, measured: Mapping[str, Any] | None, locator: Locator,
              estimated: Mapping[str, int], caps: Mapping[str, int]) -> dict[str, Any] | None:
    """Return the measurement with its utilisation, warnings and path mapped to the source.

    Resources the tools did not report (BRAM today) keep the estimate's figure.
    """
    if measured is None:
        return None
    out = {k: v for k, v in measured.items() if k != "critical_path"}
    totals = {k: int(measured.get(k, estimated.get(k, 0))) for k in RESOURCE_KEYS}
    util, warnings = utilisation(totals, caps)
    out["utilisation"] = {**util, **_carry_use(totals, caps)}
    out["warnings"] = warnings
    path = []
    for p in measured.get("critical_path", ()):
        k = p.get("position")
        nid = schedule.order[k] if isinstance(k, int) else None
        node = schedule.graph.nodes[nid] if nid is not None else None
        path.append({"verilog_line": p["verilog_line"], "stage": p["stage"],
                     "op": node.op if node is not None else "",
                     "source": locate(schedule.graph, nid, locator) if nid else ""})
    out["critical_path"] = path
    return out


def _carry_use(totals: Mapping[str, int], caps: Mapping[str, int]) -> dict[str, float]:
    return {"carry": totals.get("carry", 0) / caps["carry"]} if caps.get("carry") else {}


def _stages(schedule: Schedule, delays: tuple[float, ...],
            locator: Locator) -> list[dict[str, Any]]:
    graph = schedule.graph
    ops = [0] * schedule.latency
    where: list[list[str]] = [[] for _ in range(schedule.latency)]
    for nid in schedule.order:
        if not is_wiring(graph, graph.nodes[nid]):
            ops[schedule.stage[nid]] += 1
            where[schedule.stage[nid]].append(locate(graph, nid, locator))
    banks = schedule.crossing()
    bits = [sum(graph.nodes[n].type.flat_width for n in bank) for bank in banks]
    return [{"index": s, "delay_ns": delays[s], "ops": ops[s], "register_bits": bits[s],
             "source_lines": source_lines(where[s])}
            for s in range(schedule.latency)]


def model_metadata(model: Any, family: str) -> dict[str, Any]:
    """Return the JSON-safe metadata of a delay/area model (what was fitted, with what)."""
    meta = getattr(model, "metadata", None)
    if callable(meta):
        meta = meta()
    out: dict[str, Any] = {}
    if isinstance(meta, Mapping):
        out.update({str(k): v for k, v in meta.items() if _json_safe(v)})
    out.setdefault("family", getattr(model, "family", family))
    out.setdefault("name", getattr(model, "name", type(model).__name__))
    out["clk_to_q_setup_ns"] = CostModel(model).overhead_ns
    return out


def _json_safe(v: Any) -> bool:
    if v is None or isinstance(v, bool | int | str):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, list | tuple):
        return all(_json_safe(x) for x in v)
    if isinstance(v, Mapping):
        return all(isinstance(k, str) and _json_safe(x) for k, x in v.items())
    return False


def canonical(value: Any) -> Any:
    """Return ``value`` with floats rounded to ``DIGITS`` places (-0.0 as 0.0), tuples as lists."""
    if isinstance(value, bool) or value is None or isinstance(value, int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a report cannot hold {value}")
        return round(value, DIGITS) + 0.0
    if isinstance(value, Mapping):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    raise TypeError(f"a report cannot hold {type(value).__name__}")


def dumps(report: Mapping[str, Any]) -> str:
    """Return the canonical ``report.json`` text: sorted keys, 2-space indent, final newline."""
    return json.dumps(canonical(report), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def load_schema() -> dict[str, Any]:
    """Return the JSON schema of ``report.json``."""
    text = importlib_resources.files("kera.hls").joinpath("report_schema.json").read_text("utf-8")
    return json.loads(text)


# ------------------------------------------------------------------------------ text


def render_text(report: Mapping[str, Any], source: SourceFile | None = None) -> str:
    """Return ``report.txt``: the verdict, cycle report, resource table and critical path.

    With the program's ``source``, source lines are quoted beside their line numbers.
    """
    r = report
    t, d = r["timing"], r["deadline"]
    lines = _line_texts(source)
    lat, clock = r["latency_cycles"], r["clock_mhz"]
    out = [
        f"kera-hls {r['compiler']['version']}: `{r['top']}` on {r['board']} "
        f"({r['family']} {r['device']}) at {clock:g} MHz",
        f"fingerprint {r['fingerprint']}",
        "",
        verdict_line(t, lines, r["estimate"].get("expected_error", {}).get("fmax_mhz")),
        "",
        "Cycle report",
        f"  latency {lat} cycle{'s' * (lat != 1)} ({d['latency_ns']:.3f} ns at {clock:g} MHz), "
        f"II {r['ii']}, schedule: {r['schedule_method']}",
        f"  throughput {d['throughput_per_s'] / 1e6:.3f} M results/s (clock / II); first input "
        f"accepted {d['reset_to_first_accept_cycles']} cycles after reset; pipeline fill "
        f"{d['fill_cycles']} cycle{'s' * (d['fill_cycles'] != 1)} ({d['fill_ns']:.3f} ns) to the "
        "first result",
    ]
    if "at_fmax" in d:
        f = d["at_fmax"]
        out.append(f"  at the {f['clock_mhz']:.1f} MHz it reaches: latency {f['latency_ns']:.3f} "
                   f"ns, throughput {f['throughput_per_s'] / 1e6:.3f} M results/s")
    out += [
        f"  stall: {d['stall']}",
        f"  clock period {t['period_ns']:.3f} ns, register overhead "
        f"{t['register_overhead_ns']:.3f} ns",
        "  stage   delay_ns   ops   reg_bits   source lines",
    ]
    for s in r["stages"]:
        out.append(f"  {s['index']:>5}   {s['delay_ns']:>8.3f}   {s['ops']:>3}   "
                   f"{s['register_bits']:>8}   {line_ranges(s['source_lines'])}")
    state = state_text(r, lines)
    out += ["", *state] if state else []
    from kera.hls.share_report import binding_text

    shared = binding_text(dict(r))
    out += ["", *shared] if shared else []
    out += ["", *_resource_table(r), "", *_critical_text(r, lines), *_port_lines(r)]
    if r.get("close_timing"):
        ct = r["close_timing"]
        out += ["", "Timing closure (--close-timing)"]
        out += [f"  try {k}: margin {x['margin']:.0%}, {x['stages']} stages, Fmax "
                f"{x['fmax_mhz']:.2f} MHz: {'met' if x['met'] else 'missed'}"
                for k, x in enumerate(ct["tries"], 1)]
        out.append("  closed: the last try is the design written" if ct["met"] else
                   "  not closed: the last try is the design written")
    for title, key in (("Warnings", "warnings"), ("Notes", "notes")):
        if r.get(key):
            out += ["", title, *(f"  - {w}" for w in r[key])]
    return "\n".join(out) + "\n"


def _line_texts(source: SourceFile | None) -> dict[int, str]:
    """Return line number -> stripped text of every line of ``source`` (empty without one)."""
    if source is None:
        return {}
    count = source.data.count(b"\n") + 1
    return {n: source.line_text(n).strip() for n in range(1, count + 1)}


def _resource_table(r: Mapping[str, Any]) -> list[str]:
    est, measured = r["estimate"], r.get("measured") or {}
    caps = r.get("capacities", {})
    util = (measured.get("utilisation") if measured else est.get("utilisation")) or {}
    err = est.get("expected_error", {})
    head = f"  {'resource':<10} {'estimate':>10} {'expected error':>16}"
    head += f" {'measured':>10}" if measured else ""
    head += f" {'device':>8} {'used':>7}"
    lines = ["Resources", head]
    for k in RESOURCE_KEYS:
        line = f"  {k.upper():<10} {_num(est.get(k)):>10} {_error(err.get(k)):>16}"
        if measured:
            line += f" {_num(measured.get(k)):>10}"
        if k in caps:
            line += f" {caps[k]:>8} {util.get(k, 0.0):>7.1%}"
        lines.append(line.rstrip())
    fmax = err.get("fmax_mhz")
    rng = f"{fmax['low']:.1f}-{fmax['high']:.1f}" if fmax else "unknown"
    line = f"  {'Fmax MHz':<10} {_num(est['fmax_mhz']):>10} {rng:>16}"
    line += f" {_num(measured.get('fmax_mhz')):>10}" if measured else ""
    lines.append(line + f" {'target':>8} {r['clock_mhz']:>7g}")
    lines.append(f"  used: {'measured' if measured else 'estimate'} / device; expected error: "
                 f"{err.get('basis', 'unknown')}")
    lines += [f"  {note}" for note in _counting_notes(r)]
    if measured.get("tool"):
        lines.append(f"  measured with {measured['tool']} (the serial shell's own cost "
                     "subtracted)")
    return lines


def _error(e: Mapping[str, Any] | None) -> str:
    return f"+/- {e['abs']:.1f}" if e else "unknown"


def _counting_notes(r: Mapping[str, Any]) -> list[str]:
    """Return how the model counts LUTs and carries (from its notes), or a generic line."""
    notes = [n for n in r["model"].get("notes", []) if isinstance(n, str) and "`lut`" in n]
    if notes:
        return [f"LUT: {n.replace('`lut` counts', 'counts')}" for n in notes]
    return ["LUT: counts the family's LUT cells after synthesis (carry cells counted apart)"]


def _num(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def _critical_text(r: Mapping[str, Any], lines: Mapping[int, str]) -> list[str]:
    path = r["critical_path"]
    if not path:
        return ["Critical path: none (the design is only wiring)"]
    stage = path[-1]["stage"]
    total = next((s["delay_ns"] for s in r["stages"] if s["index"] == stage), 0.0)
    if path[0]["op"] == "handshake":
        return [f"Critical path (estimate): the valid/ready handshake, "
                f"{r['timing']['handshake_ns']:.3f} ns register to register: out_valid -> "
                "the enable of every register (slower than every stage: more stages do not "
                "raise the Fmax)"]
    out = [f"Critical path (estimate; stage {stage}, {total:.3f} ns of logic)",
           f"  {'start':>7} {'delay':>7}  {'op':<12} {'width':>5}  source"]
    shown = None
    for p in path:
        out.append(f"  {p['start_ns']:>7.3f} {p['delay_ns']:>7.3f}  {p['op']:<12} "
                   f"{p['width']:>5}  {p['source'] or '-'}")
        numbers = source_lines([p["source"]]) if p["source"] else []
        text = lines.get(numbers[0], "") if numbers else ""
        if text and text != shown:  # each source line once per run of ops from it
            out.append(f"  {'':>7} {'':>7}  | {text}")
        shown = text
    measured = (r.get("measured") or {}).get("critical_path")
    if measured:
        out += ["", "Critical path (nextpnr's worst register-to-register path)",
                f"  {'stage':>5}  {'.v line':>7}  {'op':<12} source"]
        for p in measured:
            out.append(f"  {p['stage']:>5}  {p['verilog_line']:>7}  {p['op'] or '-':<12} "
                       f"{p['source'] or '-'}")
    return out


def port_table(schedule: Schedule) -> list[dict[str, Any]]:
    """Return each data port (name, direction, type, bits) with its fixed-point ``format``:
    ``x: fx<16, 2> (raw i16, value = raw / 2^14)`` as in the Verilog header, else None."""
    from kera.ir.values import port_formats

    params, result = schedule.graph.signature(schedule.region)
    ports = [("in", n, t) for n, t in params] + [("out", "out", result)]
    return [{"name": n, "direction": d, "type": str(t), "bits": t.flat_width,
             "format": next(iter(port_formats([(n, t)])), None)} for d, n, t in ports]


def _port_lines(r: Mapping[str, Any]) -> list[str]:
    """The ports' formats for report.txt, when a port holds fixed point (else nothing)."""
    ports = [p for p in r.get("ports", []) if p["format"]]
    return ["", "Fixed-point ports (raw bits on the wires)",
            *(f"  {p['direction']:<4} {p['bits']:>5} bits  {p['format']}" for p in ports)
            ] if ports else []


__all__ = [
    "DIGITS",
    "REPORT_VERSION",
    "build_report",
    "canonical",
    "dumps",
    "load_schema",
    "model_metadata",
    "port_table",
    "render_text",
]
