"""Measure `check` on programs with one long loop: seconds against the iteration count.

Prints one JSON object: per iteration count, the CPU seconds of ``build_program`` (what
``kera-hls check`` does after reading the file), the graph's node count, and the first error
when the program is refused (the unroll limit). Goal (issue 17): a 50,000-iteration loop checks
in <= 1 s; a 1,000,000-iteration one finishes or is refused within seconds.

    python benchmarks/loops.py [--iterations 1000,10000,50000,1000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kera.elaborate import build_program  # noqa: E402


def loop_source(iterations: int) -> str:
    """Return a program whose top function runs a loop of a few ops ``iterations`` times."""
    return (
        "#[top]\npub fn big(x: [u32; 16]) -> u32 {\n    let mut acc = 0u32;\n"
        f"    for i in 0..{iterations} {{\n        acc = (acc ^ x[i % 16]) + i;\n    }}\n"
        "    acc\n}\n"
    )


def measure(iterations: int) -> dict[str, object]:
    """Check the loop program of ``iterations`` iterations once; return its figures."""
    src = loop_source(iterations)
    wall, cpu = time.perf_counter(), time.process_time()
    program = build_program("loop.kera", src, need_top=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    errors = [d.message for d in program.diagnostics if d.severity.value == "error"]
    row: dict[str, object] = {"iterations": iterations, "seconds": round(wall, 3),
                              "cpu_seconds": round(cpu, 3)}
    if errors:
        row["refused"] = errors[0]
    else:
        row["nodes"] = len(program.graph.nodes) if program.graph is not None else 0
        row["iterations_per_s"] = round(iterations / max(cpu, 1e-9))
    return row


def main() -> None:
    """Run every iteration count and print the JSON result."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--iterations", default="1000,10000,50000,1000000")
    args = ap.parse_args()
    rows = [measure(int(n)) for n in args.iterations.split(",")]
    print(json.dumps({"benchmark": "loops", "runs": rows}, indent=2))


if __name__ == "__main__":
    main()
