"""Measure the front end (lex + parse + tree) on a generated ~20k-line Kera program.

Prints one JSON object: {"lines", "bytes", "tokens", "seconds", "lines_per_s", "cpu_seconds",
"cpu_lines_per_s"}. ``seconds`` is the best wall-clock time of several runs (each a fresh
parse); ``cpu_seconds`` the best process CPU time, which says more on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kera.syntax import parse  # noqa: E402

_TEMPLATE = """\
// Block {i}: a FIR tap sum, a saturating add and a SWAR popcount.
const TAPS_{i}: [i16; 8] = [1, -2, 3, 4, 4, 3, -2, 1];
type Word{i} = u32;

#[pipeline(ii = 1)]
pub fn fir_{i}(x: [i16; 8]) -> i32 {{
    let mut acc = 0i32;
    for k in 0..8 {{
        acc += (x[k] as i32) * (TAPS_{i}[k] as i32);
    }}
    acc
}}

fn saturate_{i}(a: i8, b: i8) -> (i8, u8) {{
    let wide = (a as i16) + (b as i16);
    let sum = if wide > 127 {{ 127i8 }} else if wide < -128 {{ -128i8 }} else {{ wide as i8 }};
    let diff = (a as i16) - (b as i16);
    let mag = if diff < 0 {{ -diff }} else {{ diff }};
    (sum, mag as u8)
}}

/* popcount with the classic
   SWAR reduction */
fn popcount_{i}(x: Word{i}) -> u32 {{
    let a = x - ((x >> 1) & 0x5555_5555);
    let b = (a & 0x3333_3333) + ((a >> 2) & 0x3333_3333);
    let c = (b + (b >> 4)) & 0x0f0f_0f0f;
    let t = (slice::<0, 8>(c), rotl(c, 3u32));
    (c * 0x0101_0101) >> 24
}}

"""


def generate(lines: int) -> bytes:
    """Return a Kera program of about ``lines`` lines."""
    per_block = _TEMPLATE.count("\n")
    blocks = max(1, lines // per_block)
    return "".join(_TEMPLATE.format(i=i) for i in range(blocks)).encode()


def main() -> None:
    """Run the benchmark and print its JSON result."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lines", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    data = generate(args.lines)
    best = best_cpu = float("inf")
    result = None
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = parse(data)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    assert result is not None and not result.diagnostics, "benchmark program must parse cleanly"
    lines = data.count(b"\n")
    print(
        json.dumps(
            {
                "lines": lines,
                "bytes": len(data),
                "tokens": len(result.lexed),
                "seconds": round(best, 4),
                "lines_per_s": round(lines / best),
                "cpu_seconds": round(best_cpu, 4),
                "cpu_lines_per_s": round(lines / best_cpu),
            }
        )
    )


if __name__ == "__main__":
    main()
