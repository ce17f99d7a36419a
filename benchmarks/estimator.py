"""Estimator accuracy: estimated vs measured (yosys + nextpnr) LUT, FF and Fmax, as JSON.

Usage: python benchmarks/estimator.py [--families ice40,ecp5] [FILE.kera ...]
(default: every examples/*.kera and ../shared/kernels/*.kera). Runs the real tools: minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kera import load
from kera.hls.boards import list_boards
from kera.hls.models import load_model
from kera.hls.pnr import measure_schedule
from kera.hls.report import build_report
from kera.hls.synth import plan_schedule
from kera.rtl import emit_verilog

ROOT = Path(__file__).resolve().parents[1]
BOARD_OF = {b.family: b.name for b in list_boards()}


def _error(est: float, meas: float) -> float | None:
    return None if not meas else round(100.0 * (est - meas) / meas, 1)


def measure_one(path: Path, family: str) -> dict:
    """Return estimate, measurement and percentage errors for one design on one family."""
    loaded = load(str(path))
    sched, board, model = plan_schedule(loaded.graph, loaded.top, board=BOARD_OF[family])
    est = build_report(sched, board, model=model, top=loaded.top)["estimate"]
    meas = measure_schedule(emit_verilog(sched, board=board.name, version="bench"), sched, family)
    keys = ("lut", "ff", "fmax_mhz")
    return {
        "design": path.stem, "family": family, "latency": sched.latency,
        "estimate": {k: est[k] for k in keys}, "measured": {k: meas[k] for k in keys},
        "error_pct": {k: _error(est[k], meas[k]) for k in keys},
    }


def main() -> None:
    """Measure every design on every family and print the JSON summary with the MAPE."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--families", default="ice40,ecp5")
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    files = args.files or sorted((ROOT / "examples").glob("*.kera")) + sorted(
        (ROOT.parent / "shared" / "kernels").glob("*.kera"))
    rows = []
    for family in args.families.split(","):
        load_model(family)  # fail early on a family without a model
        for path in files:
            print(f"estimator: {path.stem} on {family}", file=sys.stderr)
            rows.append(measure_one(path, family))
    mape = {}
    for family in args.families.split(","):
        for k in ("lut", "ff", "fmax_mhz"):
            errs = [abs(r["error_pct"][k]) for r in rows
                    if r["family"] == family and r["error_pct"][k] is not None]
            mape[f"{family}.{k}"] = round(sum(errs) / len(errs), 1) if errs else None
    print(json.dumps({"designs": rows, "mape_pct": mape}, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
