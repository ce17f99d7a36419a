"""The fixed-point examples in exact rationals (``tests.fixed.model``), and their vectors.

``python -m tests.fixed.examples_model`` rewrites ``examples/fir_q15.vectors.jsonl`` and
``examples/cordic.vectors.jsonl`` (seeded: the same bytes every time).
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

from tests.fixed import model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Q15 = Fraction(1, 1 << 15)
F16 = Fraction(1, 1 << 16)
TAPS = [Fraction(n, 64) for n in (-1, 4, 12, 17, 17, 12, 4, -1)]
ATAN = [Fraction(round(math.atan(2.0**-i) * 2**16), 2**16) for i in range(16)]
INV_GAIN = Fraction(39797, 1 << 16)  # 0.6072540283203125


def fir_q15(x: list[Fraction]) -> Fraction:
    """The FIR: an exact sum of exact products, then rounding half to even and saturation."""
    acc = sum((a * c for a, c in zip(x, TAPS, strict=True)), Fraction(0))
    return model.convert(acc, 16, 1, True, "rnd_conv", "sat")


def cordic(theta: Fraction) -> tuple[Fraction, Fraction]:
    """CORDIC rotation, 16 steps, every product truncated into fx<18, 2> (wrap)."""

    def q(v: Fraction) -> Fraction:
        return model.convert(v, 18, 2, True)

    x, y, z = INV_GAIN, Fraction(0), theta
    for i in range(16):
        dx, dy = q(y * Fraction(1, 1 << i)), q(x * Fraction(1, 1 << i))
        if z >= 0:
            x, y, z = q(x - dx), q(y + dy), q(z - ATAN[i])
        else:
            x, y, z = q(x + dx), q(y - dy), q(z + ATAN[i])
    return y, x


def fir_rows(count: int, seed: int = 15) -> list[dict]:
    rng = random.Random(seed)
    edges = [[Fraction(-1)] * 8, [1 - Q15] * 8, [Fraction(0)] * 8,
             [(1 - Q15) * (1 if c > 0 else -1) for c in TAPS]]
    rows = edges + [[rng.randint(-(1 << 15), (1 << 15) - 1) * Q15 for _ in range(8)]
                    for _ in range(count - len(edges))]
    return [{"inputs": {"x": [model.decimal(v) for v in r]},
             "expected": model.raw_text(int(fir_q15(r) / Q15), 15)} for r in rows]


def cordic_rows(count: int, seed: int = 16) -> list[dict]:
    rng = random.Random(seed)
    top = math.floor(math.pi / 2 / float(F16))
    thetas = [Fraction(0), top * F16, -top * F16] + [rng.randint(-top, top) * F16
                                                      for _ in range(count - 3)]
    out = []
    for t in thetas:
        s, c = cordic(t)
        out.append({"inputs": {"theta": model.decimal(t)},
                    "expected": [model.raw_text(int(s / F16), 16),
                                 model.raw_text(int(c / F16), 16)]})
    return out


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    write(EXAMPLES / "fir_q15.vectors.jsonl", fir_rows(64))
    write(EXAMPLES / "cordic.vectors.jsonl", cordic_rows(64))
