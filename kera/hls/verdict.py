"""What a report concludes: the timing verdict, the deadline figures, each estimate's error.

* ``timing_verdict``: is the clock target met, by how much it misses, and where the failing
  path is (stage, source lines), from nextpnr's measurement when there is one, else from the
  estimate.
* ``deadline``: latency in ns, throughput, reset-to-first-accept, fill latency and the stall
  behaviour of the generated handshake (kera.rtl.emit: one enable moves every bank).
* ``expected_error``: each estimate's expected error, from the error of whole designs against
  place-and-route (``design_error``, LUT/FF/Fmax) or the model's held-out error per op.
* ``carry_capacity``: how many carry cells the device has (boards list LUTs, not carries).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: Carry cells per LUT, per family: an iCE40 logic cell has one SB_CARRY beside its LUT4, an
#: ECP5 slice one CCU2C (2 bits) per two LUT4s, a Gowin CLS one ALU per LUT, a 7-series slice
#: one CARRY4 per four LUT6s.
CARRY_PER_LUT: dict[str, float] = {"ice40": 1.0, "ecp5": 0.5, "gowin": 1.0, "xc7": 0.25}

#: The stall behaviour of every generated pipeline (INTERFACES.md handshake, kera.rtl.emit).
STALL = ("out_ready = 0 while a result waits holds every stage at once (one enable), in_ready "
         "falls in the same cycle, no transfer is lost or duplicated; each stalled cycle delays "
         "every result in flight by one cycle")


def timing_verdict(
    clock_mhz: float,
    estimated_fmax_mhz: float,
    estimated_path: Sequence[Mapping[str, Any]],
    measured: Mapping[str, Any] | None,
    measured_path: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Return ``{target_mhz, fmax_mhz, met, slack_ns, miss_mhz, source, path}``.

    ``path`` is the failing (or, when met, the slowest) path: its ``stage`` (that of its first
    operation after the launching register) and the ``sources`` (``file:line:col``) of its
    operations. The measurement decides when there is one; its path is ``measured_path``
    (nextpnr's worst path mapped to the schedule; empty when it runs through the shell or the
    handshake only, and then the stage is None).
    """
    source = "nextpnr" if measured and measured.get("fmax_mhz") else "estimate"
    fmax = float(measured["fmax_mhz"]) if measured and source == "nextpnr" else estimated_fmax_mhz
    path = measured_path if source == "nextpnr" else estimated_path
    slack = 1000.0 / clock_mhz - 1000.0 / fmax
    # the handshake's path (``kera.hls.sta.handshake_ns``) is in no stage
    stages = [p["stage"] for p in path if p.get("stage") is not None
              and p.get("op") != "handshake"]
    sources = [p["source"] for p in path if p.get("source")]
    return {
        "target_mhz": clock_mhz,
        "fmax_mhz": fmax,
        "met": fmax + 1e-9 >= clock_mhz,
        "slack_ns": slack,
        "miss_mhz": max(0.0, clock_mhz - fmax),
        "source": source,
        "path": {"stage": stages[0] if stages else None, "sources": list(dict.fromkeys(sources))},
    }


def verdict_line(t: Mapping[str, Any], lines: Mapping[int, str] | None = None,
                 expected: Mapping[str, Any] | None = None) -> str:
    """Return the one-line timing verdict; ``lines`` maps source line numbers to their text.
    ``expected``: the estimated Fmax's expected range (``expected_error``'s ``fmax_mhz``); an
    estimate that meets the target by less than its expected error says so."""
    what = "nextpnr's measured" if t["source"] == "nextpnr" else "the estimated"
    if t["met"]:
        out = (f"Timing met: {what} Fmax {t['fmax_mhz']:.1f} MHz >= {t['target_mhz']:g} MHz "
               f"target, slack {t['slack_ns']:.3f} ns")
        low = expected.get("low") if expected and t["source"] == "estimate" else None
        if low is not None and low < t["target_mhz"]:
            out += (f", less than the estimate's expected error (down to {low:.1f} MHz): "
                    "place and route it (--pnr) to know")
        return out
    out = (f"Timing NOT met: {what} Fmax {t['fmax_mhz']:.1f} MHz misses the "
           f"{t['target_mhz']:g} MHz target by {t['miss_mhz']:.1f} MHz "
           f"(slack {t['slack_ns']:.3f} ns)")
    where = t["path"]
    if where["stage"] is not None:
        out += f"; failing path in stage {where['stage']}"
        numbers = source_lines(where["sources"])
        if numbers:
            shown = ", ".join(f"{n} ({lines[n]})" if lines and lines.get(n) else str(n)
                              for n in numbers)
            out += f", line{'s' * (len(numbers) != 1)} {shown}"
    elif t["source"] == "nextpnr":
        out += "; nextpnr's worst path is in the handshake or the measurement shell, not a stage"
    else:  # the estimate's path is in no stage: the handshake's (``kera.hls.sta``)
        out += ("; the worst path is the valid/ready handshake (the enable of every register), "
                "not a stage: more stages do not help")
    return out


def source_lines(locations: Sequence[str]) -> list[int]:
    """Return the sorted line numbers of ``file:line:col`` locations (others are skipped)."""
    out = set()
    for loc in locations:
        parts = loc.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit():
            out.add(int(parts[1]))
    return sorted(out)


def line_ranges(numbers: Sequence[int]) -> str:
    """Return ``[3, 5, 6, 7]`` as ``"3, 5-7"`` (``"-"`` when empty)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or "-"


def deadline(clock_mhz: float, latency: int, ii: int, fmax_mhz: float) -> dict[str, Any]:
    """Return the figures a deadline needs, at the clock target (and at Fmax when slower).

    The generated pipeline accepts an input in the first cycle after reset is released
    (``in_ready = enable & ~rst``, every valid bit cleared); its first result is presented
    ``latency`` cycles after the first accept, then one result every ``ii`` cycles.
    """
    period = 1000.0 / clock_mhz
    out: dict[str, Any] = {
        "latency_ns": latency * period,
        "throughput_per_s": clock_mhz * 1e6 / ii,
        "reset_to_first_accept_cycles": 0,
        "fill_cycles": latency,
        "fill_ns": latency * period,
        "stall": STALL,
    }
    if fmax_mhz + 1e-9 < clock_mhz:  # the target cannot be met: what the design really does
        out["at_fmax"] = {"clock_mhz": fmax_mhz, "latency_ns": latency * 1000.0 / fmax_mhz,
                          "throughput_per_s": fmax_mhz * 1e6 / ii}
    return out


#: ``design_error``: how far the LUT, FF and Fmax estimates of whole designs were from
#: place-and-route, per family (``benchmarks/qor.py --accuracy``).
ACCURACY = Path(__file__).with_name("accuracy.json")
#: The metrics ``design_error`` gives (the ones benchmarks/qor.py measures per design), with
#: the names the report prints.
DESIGN_METRICS = {"lut": "LUT", "ff": "FF", "fmax_mhz": "Fmax"}


def design_error(family: str) -> dict[str, Any] | None:
    """Return the family's measured design-level error record (``accuracy.json``), or None.

    Per metric ``mape_pct`` (the mean absolute error over the placed designs), ``worst_pct``
    and ``points``; ``designs`` and ``clocks_mhz``, what was placed.
    """
    try:
        data = json.loads(ACCURACY.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    fam = data.get("families", {}).get(family)
    return dict(fam) if isinstance(fam, Mapping) else None


def expected_error(model_meta: Mapping[str, Any], ops: int, path_ops: int,
                   fmax_mhz: float, overhead_ns: float, estimate: Mapping[str, float] | None = None,
                   family: str | None = None) -> dict[str, Any]:
    """Return each estimate's expected error.

    LUT, FF and Fmax, where the family's whole-design error has been measured
    (``design_error``: benchmarks/qor.py, every estimate against yosys + nextpnr): the
    estimate times that mean absolute percentage error (``pct``; ``worst_pct`` beside it), Fmax
    as the range ``estimate x (1 -/+ pct)``. Carries, DSPs and BRAMs, and every metric of a
    family not measured that way: the model records, per quantity, the mean absolute error of
    one op on the widths held out of its fit (``held_out_error[k]["mean_abs"]``); an estimate
    is a sum of per-op figures, so its expected error is that per-op error times the ops summed
    (``ops`` for resources, ``path_ops`` for the critical path's delay, turned into an Fmax
    range). A model without a recorded held-out error (a provisional one, never measured) has
    no data to compute one from: its errors are None and ``basis`` says so.
    """
    held = model_meta.get("held_out_error")
    if not isinstance(held, Mapping):
        return {"basis": "unknown: the model is provisional, fitted to no measurement"}
    out: dict[str, Any] = {"basis": "held-out mean absolute error per op x ops summed"}
    for key in ("lut", "ff", "carry", "dsp"):
        per_op = _mean_abs(held, key)
        if per_op is not None:
            out[key] = {"abs": per_op * ops, "per_op": per_op, "ops": ops}
    out["bram"] = {"abs": 0.0, "per_op": 0.0, "ops": ops}  # no memories yet: never a BRAM
    per_op = _mean_abs(held, "delay_ns")
    if per_op is not None:
        err = per_op * path_ops
        period = 1000.0 / fmax_mhz
        low = 1000.0 / (period + err)
        high = 1000.0 / max(period - err, overhead_ns)
        out["fmax_mhz"] = {"low": low, "high": high, "delay_ns": err, "per_op": per_op,
                           "ops": path_ops}
    measured = design_error(family) if family is not None and estimate is not None else None
    if measured is None or estimate is None or not all(
            isinstance(measured.get(k), Mapping) for k in DESIGN_METRICS):
        return out
    for key in DESIGN_METRICS:
        m = measured[key]
        pct = float(m["mape_pct"])
        row = {"pct": pct, "worst_pct": float(m["worst_pct"]), "points": int(m["points"])}
        if key == "fmax_mhz":
            out[key] = {"low": fmax_mhz * (1 - pct / 100), "high": fmax_mhz * (1 + pct / 100),
                        **row}
        else:
            out[key] = {"abs": float(estimate[key]) * pct / 100, **row}
    pcts = ", ".join(f"{name} {measured[k]['mape_pct']:.1f} %"
                     for k, name in DESIGN_METRICS.items())
    worst = ", ".join(f"{measured[k]['worst_pct']:.1f}" for k in DESIGN_METRICS)
    clocks = " and ".join(f"{c:g}" for c in measured.get("clocks_mhz", ()))
    out["basis"] = (f"{pcts} (worst {worst} %): the mean absolute errors of the estimates of "
                    f"{measured.get('designs', '?')} designs placed at {clocks} MHz "
                    "(benchmarks/qor.py, yosys + nextpnr); carry, DSP, BRAM: held-out mean "
                    "absolute error per op x ops summed")
    return out



def _mean_abs(held: Mapping[str, Any], key: str) -> float | None:
    entry = held.get(key)
    value = entry.get("mean_abs") if isinstance(entry, Mapping) else None
    return float(value) if isinstance(value, int | float) else None


__all__ = [
    "CARRY_PER_LUT",
    "STALL",
    "deadline",
    "design_error",
    "expected_error",
    "line_ranges",
    "source_lines",
    "timing_verdict",
    "verdict_line",
]
