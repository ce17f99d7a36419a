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
from kera.hls.resources import CAPACITY_KEYS, RESOURCE_KEYS, estimate
from kera.hls.timing import CostModel, DelayAreaModel, Locator, analyse, is_wiring, make_locator

#: Decimals kept for every float in a report.
DIGITS = 3
#: Version of the report layout; bumped when a field changes meaning (fields are only added).
REPORT_VERSION = 1


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
    timing = analyse(schedule, costs, locator)
    area = estimate(schedule, costs, board.capacities)
    top = top or schedule.region
    opts = {"board": board.name, "clock_mhz": schedule.clock_mhz, "ii": schedule.ii,
            "top": top, **({"margin": margin} if margin is not None else {}),
            **dict(options or {})}  # fmt: skip
    overhead = costs.overhead_ns
    period = schedule.clock_ns
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
        "stages": _stages(schedule, timing.stage_delays),
        "timing": {
            "period_ns": period,
            "margin": margin,
            "usable_ns": period * (1 - margin) - overhead if margin is not None else None,
            "register_overhead_ns": overhead,
            "max_stage_delay_ns": timing.max_stage_delay,
            "slack_ns": period - overhead - timing.max_stage_delay,
        },
        "estimate": {
            **{k: area.total[k] for k in RESOURCE_KEYS},
            "fmax_mhz": timing.fmax_mhz,
            "utilisation": {k: area.utilisation[k] for k in CAPACITY_KEYS
                            if k in area.utilisation},  # fmt: skip
            "by_op": area.by_op,
            "registers": {"bits": area.register_bits, "valid_bits": area.valid_bits,
                          **area.registers},  # fmt: skip
        },
        "critical_path": [
            {"op": p.op, "width": p.width, "delay_ns": p.delay_ns, "start_ns": p.start_ns,
             "stage": p.stage, "source": p.source}
            for p in timing.critical_path
        ],
        "warnings": list(area.warnings) + _timing_warnings(timing.fmax_mhz, schedule.clock_mhz),
        "notes": list(schedule.notes),
        "compiler": {"name": "kera-hls", "version": kera.__version__},
        "options": opts,
        "model": model_metadata(model, board.family),
        "capacities": {k: int(getattr(board.capacities, k)) for k in CAPACITY_KEYS},
    }
    if measured is not None:
        report["measured"] = dict(measured)
    return canonical(report)


def _stages(schedule: Schedule, delays: tuple[float, ...]) -> list[dict[str, Any]]:
    graph = schedule.graph
    ops = [0] * schedule.latency
    for nid in schedule.order:
        if not is_wiring(graph, graph.nodes[nid]):
            ops[schedule.stage[nid]] += 1
    banks = schedule.crossing()
    bits = [sum(graph.nodes[n].type.flat_width for n in bank) for bank in banks]
    return [{"index": s, "delay_ns": delays[s], "ops": ops[s], "register_bits": bits[s]}
            for s in range(schedule.latency)]  # fmt: skip


def _timing_warnings(fmax: float, clock: float) -> list[str]:
    if fmax + 1e-9 >= clock:
        return []
    return [f"the estimated Fmax ({fmax:.1f} MHz) is below the {clock:g} MHz clock"]


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
    """Return ``report.txt``: the cycle report, the resource table and the critical path.

    With the program's ``source``, each critical-path op is followed by its source line.
    """
    r = report
    est = r["estimate"]
    out = [
        f"kera-hls {r['compiler']['version']}: `{r['top']}` on {r['board']} "
        f"({r['family']} {r['device']}) at {r['clock_mhz']:g} MHz",
        f"fingerprint {r['fingerprint']}",
        "",
        "Cycle report",
        f"  latency {r['latency_cycles']} cycle{'s' * (r['latency_cycles'] != 1)}, "
        f"II {r['ii']}, schedule: {r['schedule_method']}",
        f"  clock period {r['timing']['period_ns']:.3f} ns, register overhead "
        f"{r['timing']['register_overhead_ns']:.3f} ns",
        "  stage   delay_ns   ops   reg_bits",
    ]
    for s in r["stages"]:
        out.append(f"  {s['index']:>5}   {s['delay_ns']:>8.3f}   {s['ops']:>3}   "
                   f"{s['register_bits']:>8}")  # fmt: skip
    out += ["", *_resource_table(r, est), "", *_critical_text(r, source)]
    for title, key in (("Warnings", "warnings"), ("Notes", "notes")):
        if r.get(key):
            out += ["", title, *(f"  - {w}" for w in r[key])]
    return "\n".join(out) + "\n"


def _resource_table(r: Mapping[str, Any], est: Mapping[str, Any]) -> list[str]:
    measured = r.get("measured") or {}
    caps, util = r.get("capacities", {}), est.get("utilisation", {})
    head = f"  {'resource':<10} {'estimate':>10}"
    head += f" {'measured':>10}" if measured else ""
    head += f" {'device':>8} {'used':>7}"
    lines = ["Resources", head]
    for k in (*RESOURCE_KEYS, "fmax_mhz"):
        label = "Fmax MHz" if k == "fmax_mhz" else k.upper()
        line = f"  {label:<10} {_num(est.get(k)):>10}"
        if measured:
            line += f" {_num(measured.get(k)):>10}"
        if k in caps:
            line += f" {caps[k]:>8} {util.get(k, 0.0):>7.1%}"
        lines.append(line.rstrip())
    if measured.get("tool"):
        lines.append(f"  measured with {measured['tool']}")
    return lines


def _num(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def _critical_text(r: Mapping[str, Any], source: SourceFile | None) -> list[str]:
    path = r["critical_path"]
    if not path:
        return ["Critical path: none (the design is only wiring)"]
    stage = path[-1]["stage"]
    total = next((s["delay_ns"] for s in r["stages"] if s["index"] == stage), 0.0)
    out = [f"Critical path (stage {stage}, {total:.3f} ns of logic)",
           f"  {'start':>7} {'delay':>7}  {'op':<12} {'width':>5}  source"]
    shown = None
    for p in path:
        out.append(f"  {p['start_ns']:>7.3f} {p['delay_ns']:>7.3f}  {p['op']:<12} "
                   f"{p['width']:>5}  {p['source'] or '-'}")  # fmt: skip
        text = _source_line(p["source"], source)
        if text and text != shown:  # each source line once per run of ops from it
            out.append(f"  {'':>7} {'':>7}  | {text}")
        shown = text
    return out


def _source_line(location: str, source: SourceFile | None) -> str:
    if source is None or not location:
        return ""
    try:
        line = int(location.rsplit(":", 2)[1])
        return source.line_text(line).strip()
    except (ValueError, IndexError):
        return ""


__all__ = [
    "DIGITS",
    "REPORT_VERSION",
    "build_report",
    "canonical",
    "dumps",
    "load_schema",
    "model_metadata",
    "render_text",
]
