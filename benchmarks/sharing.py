"""The area-throughput curve of operator and register sharing: kernels at II 1..16, as JSON.

Usage: python benchmarks/sharing.py [--ii 1,2,4,8,16] [--no-measure] [--seeds 1] [KERNEL ...]

Kernels: ``matmul4`` (examples/matmul4.kera: 64 multiplies), ``dot8`` (a dot product of two
``[i16; 8]``: 8 multiplies), ``mac2`` (a stateful accumulator of two products a cycle) on
iCEBreaker at its clock, and ``xtea``, ``gcd16`` (examples/: 32 unrolled rounds, 32 unrolled
steps) on iCEBreaker and ``xtea100`` (XTEA on ULX3S at 100 MHz, a deep pipeline whose
registers the binding folds). ``sha256`` (examples/sha256.kera on ULX3S at 100 MHz) is not in
the default set: its place and route takes long. Each is scheduled with
``#[pipeline(ii = N)]`` (``plan_schedule``), estimated, and -- unless the estimate does not fit
the board as ``--fit`` checks it (``kera.hls.fit.over_budget``: LUT/FF/DSP/BRAM, on iCE40 the
LUTs plus the delay-line flip-flops that take a logic cell, and no more multipliers than DSPs,
yosys mapping every one to an SB_MAC16) -- placed and routed out of context with yosys +
nextpnr (``kera.hls.pnr.measure_schedule``; the serial shell's cells subtracted). Each row:
the estimate and the measurement (LUT, FF, DSP, carry cells, Fmax), the physical
pipeline-register bits of the register binding, and the throughput ``Fmax / II`` in results
per second (nextpnr-ice40 does not time the SB_MAC16: a measured Fmax with DSPs on iCE40 is
the fabric's only, ``fmax_untimed_dsp``; the estimate's Fmax costs the DSP as its LUT
equivalent). On ECP5 ``lut`` counts LUT4 cells only, an add is CCU2C carry cells
(``carry``). Minutes with one seed; ``KERA_TOOL_TIMEOUT_S`` raises the 1,200 s limit a tool
run has.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import kera
from kera.diagnostics import KeraError
from kera.hls.fit import over_budget
from kera.hls.report import build_report
from kera.hls.synth import plan_schedule
from kera.rtl import emit_verilog

ROOT = Path(__file__).resolve().parents[1]
BOARD = "icebreaker"
#: Kernels on another board and clock than iCEBreaker's: (board, MHz).
PLACES: dict[str, tuple[str, float]] = {"xtea100": ("ulx3s", 100.0), "sha256": ("ulx3s", 100.0)}
DEFAULT = ("matmul4", "dot8", "mac2", "xtea", "gcd16", "xtea100")
KERNELS: dict[str, str] = {
    "matmul4": (ROOT / "examples" / "matmul4.kera").read_text(encoding="utf-8"),
    "dot8": """#[top]
pub fn dot8(a: [i16; 8], b: [i16; 8]) -> i32 {
    let mut acc = 0i32;
    for k in 0..8 { acc += (a[k] as i32) * (b[k] as i32); }
    acc
}
""",
    "xtea": (ROOT / "examples" / "xtea.kera").read_text(encoding="utf-8"),
    "xtea100": (ROOT / "examples" / "xtea.kera").read_text(encoding="utf-8"),
    "gcd16": (ROOT / "examples" / "gcd16.kera").read_text(encoding="utf-8"),
    "sha256": (ROOT / "examples" / "sha256.kera").read_text(encoding="utf-8"),
    "mac2": """#[top]
pub fn mac2(a: i16, b: i16, c: i16, d: i16) -> i32 {
    reg acc: i32 = 0;
    acc = acc + (a as i32) * (b as i32) + (c as i32) * (d as i32);
    acc
}
""",
}


def _with_ii(text: str, ii: int) -> str:
    import re

    if re.search(r"#\[pipeline\(ii\s*=\s*\d+\)\]", text):
        return re.sub(r"#\[pipeline\(ii\s*=\s*\d+\)\]", f"#[pipeline(ii = {ii})]", text)
    return text.replace("#[top]\n", f"#[top]\n#[pipeline(ii = {ii})]\n", 1)


def point(name: str, ii: int, measure: bool, seeds: tuple[int, ...]) -> dict[str, Any]:
    """Schedule, estimate and (when it can fit) measure one kernel at one II."""
    with tempfile.TemporaryDirectory(prefix="kera-share-") as tmp:
        path = Path(tmp) / f"{name}.kera"
        path.write_text(_with_ii(KERNELS[name], ii), encoding="utf-8")
        loaded = kera.load(path)
    board_name, clock = PLACES.get(name, (BOARD, None))
    sched, board, model = plan_schedule(loaded.graph, loaded.top, board=board_name,
                                        clock_mhz=clock)
    report = build_report(sched, board, model=model)
    est = report["estimate"]
    row: dict[str, Any] = {
        "kernel": name, "board": board.name, "clock_mhz": sched.clock_mhz, "ii": sched.ii,
        "latency": sched.latency, "units": sum(1 for u in sched.units if len(u.ops) > 1),
        "register_bits": (sched.register_binding.bits if sched.aligned and
                          sched.register_binding is not None else None),
        "estimate": {k: est[k] for k in ("lut", "ff", "dsp")} | {
            "fmax_mhz": round(est["fmax_mhz"], 2),
            "throughput_per_s": round(min(est["fmax_mhz"], 1e9) * 1e6 / sched.ii)},
    }
    over = over_budget(sched, board, model)  # what `--fit` checks (kera.hls.fit)
    if over:
        row["fits"], row["over"] = False, over
        return row
    row["fits"] = True
    if not measure:
        return row
    from kera.hls.pnr import measure_schedule

    verilog = emit_verilog(sched, board=board.name, version=kera.__version__)
    try:
        m = measure_schedule(verilog, sched, board.family, seeds)
    except (RuntimeError, KeraError) as e:
        row["measure_error"] = str(e)[:200]
        return row
    row["measured"] = {k: m[k] for k in ("lut", "ff", "dsp", "carry")} | {
        "fmax_mhz": round(float(m["fmax_mhz"]), 2),
        "throughput_per_s": round(float(m["fmax_mhz"]) * 1e6 / sched.ii),
        "fmax_untimed_dsp": bool(m["dsp"]) and board.family == "ice40",
        "seconds": m["seconds"],
    }
    return row


def main(argv: list[str] | None = None) -> int:
    """Print one JSON object: a row per kernel and II."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ii", default="1,2,4,8,16")
    ap.add_argument("--no-measure", action="store_true")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("kernels", nargs="*", default=list(DEFAULT))
    args = ap.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    rows = [point(k, int(ii), not args.no_measure, seeds)
            for k in args.kernels for ii in args.ii.split(",")]
    json.dump({"rows": rows}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
