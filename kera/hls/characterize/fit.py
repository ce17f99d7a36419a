"""Fit step: turn characterisation records into a family's model file.

Per point, the op's own numbers are the design's totals minus the shell's:

* area: LUTs, carry cells and DSPs as counted (the shell has none); flip-flops minus the shell's
  IW + OW (clamped at 0: yosys drops constant result bits, and an SB_MAC16 absorbs its output
  register);
* delay: the median over the seeds of 1000 / Fmax, minus the register overhead at the same
  width (clamped at 0). The overhead is the period of the plain register → register (``reg``)
  design, smoothed by fitting it like any other series (one P&R outlier would otherwise shift
  every op at that width). The model's ``clk_to_q_setup_ns`` is the median ``reg`` period.

Each (op[, n]) series and quantity is then fitted as ``a*w + b*log2(w) + c`` (a, b >= 0, c of
either sign, by ``scipy.optimize.nnls`` with the intercept split into c+ - c-; the result is
clamped at 0) on every width but the held-out ones. When a training residual exceeds the
tolerance, the series is stored as a table instead, interpolated as a power law between
neighbouring measured widths (linearly where a neighbour is 0). Multipliers that may use DSPs
are always tables with step lookup (the DSP count is a step function of width).
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import nnls

from kera.diagnostics import KeraError

from . import BOARD_OF, read_records
from .designs import MUL_OPS, uses_dsp

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
FIELDS = ("delay_ns", "lut", "ff", "carry", "dsp")
#: Widths left out of every fit, to measure the model's error on points it has not seen.
HOLD_OUT = (12, 48)
#: A fit is kept when every training residual is within max(absolute, relative * value).
FIT_TOLERANCE = {"delay_ns": (0.5, 0.15), "lut": (2.0, 0.15), "ff": (2.0, 0.15),
                 "carry": (1.0, 0.15), "dsp": (0.5, 0.0)}
#: The tolerance the held-out check reports against (and tests assert).
HELD_OUT_TOLERANCE = {"delay_ns": (1.0, 0.25), "lut": (4.0, 0.25), "ff": (4.0, 0.25),
                      "carry": (4.0, 0.25), "dsp": (0.5, 0.0)}
#: Keys of a model file that are not fitted but kept from the file a re-fit replaces: the
#: wiring ops, aliases and reasoned absences (the registry check reads them), and the hardware
#: facts the fitted curves do not show (LUT size, CCU2C sites, untimed DSPs, resource notes).
KEPT_KEYS = ("wiring", "no_entry", "aliases", "lut_network", "carry_lut_sites", "dsp_timing",
             "resource_notes", "handshake")
#: Ops whose points measure a LUT tree of known depth (no carry chain): the LUT/net fit.
LUT_TREE_OPS = ("eq", "ne")
DSP_TILES = {"ice40": "SB_MAC16, 16x16 (synth_ice40 -dsp)", "ecp5": "MULT18X18D, 18x18"}
NOTES = {
    "ice40": [
        "nextpnr-ice40 0.11 times an SB_MAC16 with 0.1 ns placeholder delays, so the delay of a "
        "DSP-mapped `mul`/`widening_mul` is what nextpnr reports (close to 0), not the silicon's."
        " `mul_lut`/`widening_mul_lut` are the LUT-only multipliers (synth_ice40 without -dsp), "
        "for when the 8 DSPs run out.",
        "`lut` counts SB_LUT4 cells; an SB_CARRY shares its logic cell with a LUT already "
        "counted. nextpnr's ICESTORM_LC count packs a LUT and a flip-flop into one cell.",
    ],
    "ecp5": [
        "MULT18X18D paths are timed by nextpnr-ecp5; `mul_lut`/`widening_mul_lut` are the "
        "LUT-only multipliers (synth_ecp5 -nodsp).",
        "`lut` counts LUT4 cells (PFUMX/L6MUX21 wide-function muxes are free); each CCU2C "
        "(`carry`, 2 bits) also fills 2 LUT4 sites, so nextpnr's TRELLIS_COMB is about "
        "lut + 2 * carry.",
    ],
}


def model_path(family: str) -> Path:
    """Return the path of a family's model file."""
    return MODELS_DIR / f"{family}.json"


def _sig(x: float) -> float:
    """Round to 6 significant digits; solver noise below 1e-9 becomes 0."""
    return 0.0 if abs(x) < 1e-9 else float(f"{x:.6g}")


def derive(records: list[dict]) -> tuple[dict[tuple[str, int | None], dict[int, dict]], dict]:
    """Return the op's own numbers per series and width, and the register overhead per width.

    The result maps ``(op, n)`` to ``{width: {"delay_ns", "lut", "ff", "carry", "dsp",
    "period_ns"}}``; the overhead maps width to the ``reg`` design's period.
    """
    latest = {r["key"]: r for r in records if "error" not in r}  # a re-run replaces a point
    good = list(latest.values())
    overhead = {r["width"]: r["period_ns"] for r in good if r["op"] == "reg"}
    if not overhead:
        raise KeraError("characterisation data has no `reg` points; measure them first")
    ws = sorted(overhead)
    smooth = _lstsq(ws, [overhead[w] for w in ws])
    series: dict[tuple[str, int | None], dict[int, dict]] = defaultdict(dict)
    for r in good:
        if r["op"] == "reg":
            continue
        base = float((_basis([r["width"]]) @ smooth)[0])
        series[(r["op"], r["n"])][r["width"]] = {
            "delay_ns": max(0.0, r["period_ns"] - base),
            "lut": float(r["lut"]),
            "ff": float(max(0, r["ff"] - r["in_bits"] - r["out_bits"])),
            "carry": float(r["carry"]),
            "dsp": float(r["dsp"]),
            "period_ns": r["period_ns"],
        }
    return dict(series), overhead


def _basis(ws: list[int]) -> np.ndarray:
    return np.array([[w, math.log2(w), 1.0] for w in ws])


def _lstsq(ws: list[int], ys: list[float]) -> np.ndarray:
    """Return (a, b, c) minimising the squared error with a, b >= 0 and c free."""
    basis = _basis(ws)
    coef, _ = nnls(np.hstack([basis, -basis[:, 2:]]), np.array(ys, dtype=float))
    return np.array([coef[0], coef[1], coef[2] - coef[3]])


def _within(err: float, value: float, tol: tuple[float, float]) -> bool:
    return abs(err) <= max(tol[0], tol[1] * abs(value)) + 1e-9


def fit_curve(field: str, ws: list[int], ys: list[float], step: bool = False) -> dict[str, Any]:
    """Fit one quantity of one series; return the curve spec stored in the model file."""
    if step:
        return {"kind": "table", "lookup": "step", "widths": ws,
                "values": [round(y, 4) for y in ys],
                "extrapolate": "linear" if field == "delay_ns" else "quadratic",
                "reason": "DSP mapping makes this a step function of width"}
    coef = _lstsq(ws, ys)
    pred = _basis(ws) @ coef
    res = [float(y - max(0.0, p)) for y, p in zip(ys, pred, strict=True)]
    stats = {"max_abs_residual": round(max(abs(r) for r in res), 4),
             "rms_residual": round(math.sqrt(sum(r * r for r in res) / len(res)), 4)}
    if all(_within(r, y, FIT_TOLERANCE[field]) for r, y in zip(res, ys, strict=True)):
        return {"kind": "fit", "coef": [_sig(c) for c in coef], **stats}
    return {"kind": "table", "lookup": "power", "widths": ws,
            "values": [round(y, 4) for y in ys], "extrapolate": "power",
            "reason": "fit residual above tolerance", "rejected_fit": {
                "coef": [_sig(c) for c in coef], **stats}}


def fit_series(op: str, points: dict[int, dict]) -> dict[str, Any]:
    """Fit every quantity of one series on its training widths."""
    train = sorted(w for w in points if w not in HOLD_OUT)
    step = op in MUL_OPS and uses_dsp(op)
    entry = {f: fit_curve(f, train, [points[w][f] for w in train], step) for f in FIELDS}
    entry["measured"] = {"widths": sorted(points), "held_out": sorted(set(points) & {*HOLD_OUT}),
                         **{f: [round(points[w][f], 4) for w in sorted(points)]
                            for f in (*FIELDS, "period_ns")}}
    return entry


def held_out_error(model: Any, series: dict[tuple[str, int | None], dict[int, dict]]) -> dict:
    """Compare a model with the held-out points: per quantity, errors and the pass count."""
    out: dict[str, Any] = {}
    for f in FIELDS:
        rows = []
        for (op, n), pts in sorted(series.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
            for w in sorted(set(pts) & set(HOLD_OUT)):
                vals = model._values(op, w, n, False)
                pred = vals[FIELDS.index(f)]
                meas = pts[w][f]
                rows.append((op if n is None else f"{op}/n{n}", w, meas, pred))
        errs = [p - m for _, _, m, p in rows]
        rel = [abs(p - m) / m for _, _, m, p in rows if m > 0]
        ok = sum(_within(p - m, m, HELD_OUT_TOLERANCE[f]) for _, _, m, p in rows)
        out[f] = {
            "points": len(rows), "within_tolerance": ok,
            "tolerance": {"abs": HELD_OUT_TOLERANCE[f][0], "rel": HELD_OUT_TOLERANCE[f][1]},
            "max_abs": round(max(map(abs, errs), default=0.0), 4),
            "mean_abs": round(statistics.fmean(map(abs, errs)) if errs else 0.0, 4),
            "median_rel": round(statistics.median(rel), 4) if rel else 0.0,
            "worst": [{"op": o, "width": w, "measured": round(m, 4), "predicted": round(p, 4)}
                      for o, w, m, p in sorted(rows, key=lambda r: -abs(r[3] - r[2]))[:5]],
        }
    return out


def _dsp_summary(family: str, series: dict) -> dict[str, Any]:
    out: dict[str, Any] = {"tile": DSP_TILES.get(family, "")}
    for op in ("mul", "widening_mul"):
        pts = series.get((op, None), {})
        counts = [[w, int(p["dsp"])] for w, p in sorted(pts.items())]
        first = min((w for w, p in pts.items() if p["dsp"] > 0), default=None)
        out[op] = {"dsp_by_width": counts, "first_width_on_dsp": first,
                   "widths_on_one_dsp": [w for w, c in counts if c == 1]}
    return out


def fit_family(family: str, data: Path, out: Path) -> Path:
    """Fit a family's characterisation data and write its model file (deterministic JSON)."""
    from kera.hls.models import DelayModel

    records = read_records(data)
    if not records:
        raise KeraError(f"no characterisation data in {data}; run the characterisation first")
    series, overhead = derive(records)
    ws = sorted(overhead)
    periods = [overhead[w] for w in ws]
    ops: dict[str, Any] = {}
    for (op, n), pts in sorted(series.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        entry = fit_series(op, pts)
        if n is None:
            ops[op] = entry
        else:
            ops.setdefault(op, {"by_n": {}})["by_n"][str(n)] = entry
    first = next(r for r in records if "error" not in r)
    model = {
        "schema": "kera-hls/model/v1", "family": family, "fitted": True, "provisional": False,
        "device": {"board": BOARD_OF[family], **_device(first)},
        "tools": first["tools"],
        "command": {"characterize": f"python -m kera.hls.characterize --family {family}",
                    **first["command"], "seeds": first["seeds"]},
        "method": __doc__.strip().split("\n\n", 1)[1],
        "formula": "max(0, a*w + b*log2(w) + c) with a, b >= 0 and c of either sign "
                   "(scipy.optimize.nnls), or a measured table",
        "clk_to_q_setup_ns": round(statistics.median(overhead.values()), 4),
        "reg": {"ff_per_bit": 1.0,
                "overhead_ns": {"kind": "fit", "coef": [_sig(c) for c in _lstsq(ws, periods)],
                                "measured": {"widths": ws, "period_ns": periods}}},
        "held_out_widths": list(HOLD_OUT),
        "measurements": {"points": len({r["key"] for r in records if "error" not in r}),
                         "tool_seconds": round(sum(r.get("seconds", 0.0) for r in records))},
        "dsp": _dsp_summary(family, series), "notes": NOTES.get(family, []),
        "ops": ops,
    }
    committed = out if out.is_file() else model_path(family)
    kept = json.loads(committed.read_text()) if committed.is_file() else {}
    model.update({key: kept[key] for key in KEPT_KEYS if key in kept})
    if "lut_network" in model:
        model["lut_network"].update(fit_lut_network(records, model["lut_network"]["k"]))
        from .routing import fit_routing, nets_path

        nets = read_records(nets_path(family))
        if nets:
            model["lut_network"]["routing"] = fit_routing(nets)
    model["held_out_error"] = held_out_error(DelayModel(model), series)
    out.write_text(json.dumps(model, indent=1, sort_keys=True) + "\n")
    return out


def fit_lut_network(records: list[dict], k: int) -> dict[str, Any]:
    """Return the delay of one LUT level and of one net, from the ``eq``/``ne`` points.

    An ``eq`` of two ``w``-bit operands is a balanced tree of ``ceil(log_k 2w)`` LUT levels,
    whose critical path crosses that many LUTs and one net more. nextpnr reports the path's
    ``logic`` and ``routing`` parts, so per point ``logic / levels`` and ``routing /
    (levels + 1)``; the medians over the points are kept. The per-net delay grows slowly with
    the design's size (fanout is not in the data): the median is the middle of that spread.
    """
    from kera.hls.lutmap import lut_levels

    lut, net = [], []
    latest = {r["key"]: r for r in records if "error" not in r}
    for r in latest.values():
        path = r.get("path_ns", {})
        if r["op"] not in LUT_TREE_OPS or "logic" not in path:
            continue
        levels = lut_levels(2 * r["width"], k)
        lut.append(path["logic"] / levels)
        net.append(path["routing"] / (levels + 1))
    if not lut:
        raise KeraError("characterisation data has no `eq`/`ne` points with a logic delay")
    lut_ns, net_ns = statistics.median(lut), statistics.median(net)
    return {"lut_ns": round(lut_ns, 4), "net_ns": round(net_ns, 4),
            "level_ns": round(lut_ns + net_ns, 4), "points": len(lut),
            "method": "median over the `eq`/`ne` points of logic / levels and routing / "
                      "(levels + 1), levels = ceil(log_k(2 * width)) (kera.hls.characterize."
                      "fit.fit_lut_network)"}


def _device(rec: dict) -> dict[str, str]:
    from .tools import FLOWS

    args = FLOWS[rec["family"]].device_args
    return {"nextpnr_args": " ".join(args)}
