"""What fixed point costs: the Q1.15 FIR in `fx` against the same FIR on raw integers, as JSON.

Usage: python benchmarks/fixed_fir.py [--clocks board,30] [--seeds 1,2,3] [DESIGN ...]

Designs: ``fixed`` (examples/fir_q15.kera: `fx<16, 1>` samples and taps, exact sum, one
`rnd_conv`/`sat` cast at the output), ``hand`` (examples/fir_q15_shifts.kera: the same FIR on
`i16` raw bits, rounding half to even written as "add one when the dropped bits are over one
half, or exactly one half and the kept value is odd", saturation by compares) and ``hand_trick``
(the same, rounding with the one-line formula ``(acc + 16383 + ((acc >> 15) & 1)) >> 15``: two
35-bit adds). All three give the same bits (tests/fixed/test_fixed_examples.py checks the first
two; this script checks the third against the first with the interpreter before measuring).

Each is scheduled for the iCEBreaker (iCE40 UP5K) at each clock, and placed and routed out of
context with yosys + nextpnr (``kera.hls.pnr.measure_schedule``: core LUT/FF/carry after the
shell is subtracted, Fmax the median over the seeds). Each row: stages, measured LUT, FF,
carry, DSP and Fmax, and the ratios of ``fixed`` to each hand-written design at that clock.
(nextpnr-ice40 does not time the SB_MAC16s, so Fmax is the fabric's, the same for all three.)
A few minutes per point on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import kera  # noqa: E402
from kera.hls.pnr import measure_schedule  # noqa: E402
from kera.hls.synth import plan_schedule  # noqa: E402
from kera.interp import evaluate  # noqa: E402
from kera.rtl import emit_verilog  # noqa: E402

BOARD = "icebreaker"
HAND = (ROOT / "examples" / "fir_q15_shifts.kera").read_text(encoding="utf-8")
ROUNDING = """    let kept = acc >> 15;
    let dropped = acc & 0x7fff;
    let up = dropped > 0x4000 || (dropped == 0x4000 && (kept & 1) == 1);
    let q = if up { kept + 1 } else { kept };
"""
SOURCES: dict[str, str] = {
    "fixed": (ROOT / "examples" / "fir_q15.kera").read_text(encoding="utf-8"),
    "hand": HAND,
    "hand_trick": HAND.replace(ROUNDING, "    let q = (acc + 16383 + ((acc >> 15) & 1)) >> 15;\n"),
}


#: The sources' folder, removed when the interpreter exits (locations read the file again).
_FOLDER = tempfile.TemporaryDirectory(prefix="kera-fxfir-")


def _load(name: str) -> Any:
    path = Path(_FOLDER.name) / f"{name}.kera"
    path.write_text(SOURCES[name], encoding="utf-8")
    return kera.load(path)


def check_same_bits(samples: int = 2000) -> None:
    """Fail unless ``hand_trick`` and ``hand`` give the same outputs on random raw inputs."""
    assert SOURCES["hand_trick"] != HAND, "the rounding lines of fir_q15_shifts.kera moved"
    rng = np.random.default_rng(15)
    x = rng.integers(-32768, 32768, (samples, 8), dtype=np.int64)
    outs = []
    for name in ("hand", "hand_trick"):
        loaded = _load(name)
        outs.append(evaluate(loaded.graph, loaded.top, {"x": [x[:, k] for k in range(8)]}))
    assert np.array_equal(np.asarray(outs[0]), np.asarray(outs[1])), "hand_trick differs from hand"


def point(name: str, clock: float | None, seeds: tuple[int, ...]) -> dict[str, Any]:
    """Schedule ``name`` at ``clock`` (None: the board's) and measure it."""
    loaded = _load(name)
    sched, board, _ = plan_schedule(loaded.graph, loaded.top, board=BOARD, clock_mhz=clock)
    verilog = emit_verilog(sched, board=BOARD, version=kera.__version__)
    m = measure_schedule(verilog, sched, board.family, seeds)
    core = m.get("core", m)
    return {"design": name, "clock_mhz": clock or board.clock_mhz, "stages": sched.latency,
            **{k: core.get(k) for k in ("lut", "ff", "carry", "dsp")},
            "fmax_mhz": round(float(m["fmax_mhz"]), 2)}


def main(argv: list[str] | None = None) -> int:
    """Print one JSON object: a row per design and clock, and the ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clocks", default="board,30")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("designs", nargs="*", default=list(SOURCES))
    args = ap.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    check_same_bits()
    clocks = [None if c == "board" else float(c) for c in args.clocks.split(",")]
    rows = [point(d, c, seeds) for c in clocks for d in args.designs]
    ratios = []
    for row in rows:
        if row["design"] == "fixed":
            continue
        ref = next((r for r in rows if r["design"] == "fixed"
                    and r["clock_mhz"] == row["clock_mhz"]), None)
        if ref is not None:
            ratios.append({"clock_mhz": row["clock_mhz"], "fixed_vs": row["design"],
                           "lut": round(ref["lut"] / row["lut"], 3),
                           "fmax": round(ref["fmax_mhz"] / row["fmax_mhz"], 3),
                           "stages": [ref["stages"], row["stages"]]})
    json.dump({"board": BOARD, "seeds": list(seeds), "rows": rows, "ratios": ratios},
              sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
