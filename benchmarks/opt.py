"""Measure the optimiser: nodes before/after and seconds per pass, printed as JSON.

Runs ``-O2`` on a large generated Kera program (about 20k nodes; ``--blocks`` scales it) and on
every shared kernel, once with the validator after every pass (the default) and once without,
and reports the best of ``--repeat`` runs, each with the ``bits`` pass's caches emptied first.
``calibration_seconds`` times a fixed pure-Python loop before and after, to scale wall times
from busy machines. Building the large program
through the front end takes far longer than optimising it; it is reported apart.
Usage: ``python benchmarks/opt.py [--blocks N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kera.elaborate import build_program  # noqa: E402
from kera.ir.graph import Graph  # noqa: E402
from kera.opt import PassStats, optimize  # noqa: E402
from kera.opt.bits import clear_caches  # noqa: E402

KERNELS = ROOT.parent / "shared" / "kernels"


def synthetic_source(blocks: int) -> str:
    """Return a Kera program of ``blocks`` unrolled blocks (about 300 nodes each).

    Each block mixes what the passes look for: a 16-tap FIR (constants, multiplies by
    constants, an accumulation chain), divisions and remainders by constants, masks and shifts
    of extended values, comparisons and selects, and a reduction with ``max``.
    """
    taps = ", ".join(str(((i * 37) % 23) - 11) for i in range(16))
    lines = [f"const TAPS: [i16; 16] = [{taps}];", "",
             "#[top]", "pub fn big(x: [i16; 16], y: [u16; 16], k: u8) -> (i64, u32, u16) {",
             "    let mut acc = 0i64;", "    let mut bits = 0u32;", "    let mut hi = 0u16;"]
    for b in range(blocks):
        lines += [
            f"    for i in 0..16 {{ acc += (x[i] as i64) * (TAPS[i] as i64) * {b + 1}; }}",
            f"    for i in 0..8 {{ bits ^= ((y[i] / {b + 3}) as u32) << i; }}",
            f"    for i in 8..16 {{ bits += (y[i] % {b + 2}) as u32 & 0xff; }}",
            f"    for i in 0..16 {{ hi = max(hi, if y[i] > {b * 97 % 60000}u16 "
            f"{{ y[i] >> 1 }} else {{ y[i] + (k as u16) }}); }}",
        ]
    lines += ["    (acc, bits, hi)", "}", ""]
    return "\n".join(lines)


def calibration() -> float:
    """Return the CPU seconds a fixed pure-Python loop takes here (about 0.4 s on a quiet
    desktop).

    Wall times of Python code scale with it, so a reader can compare runs on busy machines.
    """
    start = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return round(time.process_time() - start, 3)


def measure(graph: Graph, validate: bool, repeat: int) -> dict[str, object]:
    """Return the best of ``repeat`` -O2 runs (by CPU time, which a busy machine disturbs less
    than wall time): nodes before/after, seconds, per-pass records (wall time)."""
    best: tuple[float, float, list[PassStats], Graph] | None = None
    for _ in range(repeat):
        clear_caches()  # each run cold, as a compiler run optimises a graph once
        stats: list[PassStats] = []
        cpu, start = time.process_time(), time.perf_counter()
        out = optimize(graph, 2, stats=stats, validate=validate)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        if best is None or cpu < best[0]:
            best = (cpu, seconds, stats, out)
    assert best is not None
    cpu, seconds, stats, out = best
    per_pass: dict[str, float] = {}
    for r in stats:
        per_pass[r.name] = per_pass.get(r.name, 0.0) + r.seconds
    return {
        "nodes_before": len(graph),
        "nodes_after": len(out),
        "rounds": max((r.round for r in stats), default=0),
        "cpu_seconds_total": round(cpu, 4),
        "seconds_total": round(seconds, 4),
        "seconds_in_passes": round(sum(r.seconds for r in stats), 4),
        "seconds_per_pass": {k: round(v, 4) for k, v in per_pass.items()},
        "runs": [r.to_json() | {"seconds": round(r.seconds, 5)} for r in stats],
    }


def main() -> None:
    """Print the JSON report."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--blocks", type=int, default=136, help="size of the generated program")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    args = ap.parse_args()
    start = time.perf_counter()
    program = build_program("big.kera", synthetic_source(args.blocks))
    built = time.perf_counter() - start
    assert program.ok and program.graph is not None, program.diagnostics
    report: dict[str, object] = {
        "calibration_seconds": calibration(),
        "large": {
            "blocks": args.blocks,
            "build_seconds": round(built, 3),
            "validated": measure(program.graph, True, args.repeat),
            "unvalidated": measure(program.graph, False, args.repeat),
        },
        "kernels": {},
    }
    for path in sorted(KERNELS.glob("*.kera")):
        p = build_program(str(path), path.read_bytes())
        assert p.ok and p.graph is not None, path
        result = measure(p.graph, True, args.repeat)
        del result["runs"]
        report["kernels"][path.stem] = result  # type: ignore[index]
    report["calibration_seconds_after"] = calibration()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
