"""Write the vectors of the stateful examples from independent Python references.

    python examples/gen_state_vectors.py [--out DIR] [--only NAME,...]

Each ``NAME.vectors.jsonl`` is ONE stream, in order, from the initial state (STATE.md): line k is
``{"inputs": {...}, "expected": ...}`` for transfer k. The expected values come from plain Python
integer code written here (``zlib.crc32`` for the CRC), never from the Kera interpreter. The
streams are seeded, so two runs write byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import random
import zlib
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261201
Row = tuple[dict[str, object], object]


def _wrap(value: int, bits: int, signed: bool) -> int:
    """Reduce ``value`` modulo 2**bits into the signed or unsigned range."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


# ----------------------------------------------------------------------------- FIR


FIR_TAPS = [1, -2, 3, 4, 4, 3, -2, 1]


def fir_inputs(rng: random.Random) -> Iterator[int]:
    """Impulses, steps at both extremes, alternating extremes, then random samples."""
    yield from [1] + [0] * 9  # impulse: the taps come out one by one
    yield from [32767] * 10  # positive full-scale step
    yield from [-32768] * 10  # negative full-scale step
    yield from [32767, -32768] * 8  # the largest swings the taps can see
    yield from [-1] * 9
    while True:
        r = rng.random()
        if r < 0.1:
            yield rng.choice([32767, -32768, 0, 1, -1])
        elif r < 0.3:
            yield rng.randint(-64, 64)
        else:
            yield rng.randint(-32768, 32767)


def fir_rows(n: int, rng: random.Random) -> Iterator[Row]:
    """The streaming FIR: y[n] = sum TAPS[k] * x[n - k], x before the stream = 0, i32 wrap."""
    history: list[int] = []
    for x in islice(fir_inputs(rng), n):
        history.append(x)
        acc = sum(tap * (history[-1 - k] if k < len(history) else 0)
                  for k, tap in enumerate(FIR_TAPS))
        yield {"x": x}, _wrap(acc, 32, True)


# ----------------------------------------------------------------------------- biquad


Q = 14  # fraction bits of Q2.14
B0, B1, B2, A1, A2 = (round(c * (1 << Q)) for c in (0.5, 1.0, 0.5, -1.5, 0.75))


def q14_text(raw: int) -> str:
    """Return raw / 2^14 as the shortest exact decimal string ("0.8125", "-1", "7")."""
    sign = "-" if raw < 0 else ""
    whole, frac = divmod(abs(raw), 1 << Q)
    if frac == 0:
        return f"{sign}{whole}"
    digits = str(frac * 5**Q).rjust(Q, "0").rstrip("0")  # frac / 2^14 = frac * 5^14 / 10^14
    return f"{sign}{whole}.{digits}"


def biquad_inputs(rng: random.Random) -> Iterator[int]:
    """Raw Q2.14 samples: an impulse, steps into both saturation bounds, then random."""
    lo, hi = -(1 << 15), (1 << 15) - 1
    yield from [1 << Q] + [0] * 30  # impulse of 1.0: the ringing response
    yield from [1 << (Q - 2)] * 40  # 0.25 step: settles at 2 - 2^-14 (saturated)
    yield from [-(1 << (Q - 2))] * 40  # -0.25 step: into the negative bound
    yield from [0] * 30  # the saturated state decays
    yield from [hi] * 10 + [lo] * 10 + [hi, lo] * 10  # full scale both ways
    yield from [1] * 20 + [-1] * 20  # the smallest step: rounding at the output
    while True:
        r = rng.random()
        if r < 0.05:
            yield from [rng.choice([hi, lo, 0])] * rng.randint(1, 12)
        elif r < 0.8:
            yield rng.randint(-(1 << 11), 1 << 11)  # small: the filter stays in range
        else:
            yield rng.randint(lo, hi)


def biquad_rows(n: int, rng: random.Random) -> Iterator[Row]:
    """Direct form I on raw integers: acc in 2^-28 units, round half up to 2^-14, saturate."""
    x1 = x2 = y1 = y2 = 0
    for x in islice(biquad_inputs(rng), n):
        acc = B0 * x + B1 * x1 + B2 * x2 - A1 * y1 - A2 * y2
        y = (acc + (1 << (Q - 1))) >> Q  # floor((acc + half) / 2^14): half toward +inf
        y = max(-(1 << 15), min((1 << 15) - 1, y))
        x2, x1, y2, y1 = x1, x, y1, y
        yield {"x": q14_text(x)}, q14_text(y)


# ----------------------------------------------------------------------------- CRC-32


def crc_messages(rng: random.Random) -> Iterator[tuple[bytes, bool]]:
    """Messages as (bytes, marked): the first is unmarked (the initial state starts it)."""
    yield b"12345", False  # no `start` on the first transfer: the reset value is the state
    yield b"123456789", True  # the standard check value 0xCBF43926
    yield b"\x00", True
    yield b"\xff" * 6, True
    yield b"a", True
    yield b"", True  # nothing: the next message's start follows the last one's
    while True:
        size = rng.choice([1, 1, 2, 3, 4, 8, 16, rng.randint(1, 64), rng.randint(64, 300)])
        yield bytes(rng.getrandbits(8) for _ in range(size)), True


def crc32_rows(n: int, rng: random.Random) -> Iterator[Row]:
    """Each transfer's output is zlib.crc32 of its message so far."""
    count = 0
    for message, marked in crc_messages(rng):
        crc = 0
        for k, byte in enumerate(message):
            if count == n:
                return
            crc = zlib.crc32(bytes([byte]), 0 if k == 0 else crc)
            yield {"data": byte, "start": marked and k == 0}, crc
            count += 1


# ----------------------------------------------------------------------------- histogram


def histogram_inputs(rng: random.Random) -> Iterator[tuple[int, bool]]:
    """Every bin once, repeats back to back, clears (twice, then counted again), random."""
    yield from ((b, False) for b in range(256))  # every bin: 1 each
    yield from [(0, False)] * 20 + [(255, False)] * 20  # repeated bins back to back
    yield from [(7, True), (7, True), (7, False), (7, False)]  # clear twice, then count
    yield from [(9, False), (10, False)] * 10  # alternating neighbours
    while True:
        r = rng.random()
        if r < 0.05:
            yield rng.getrandbits(8), True
        elif r < 0.15:
            yield from [(rng.getrandbits(8), False)] * rng.randint(2, 8)
        elif r < 0.5:
            yield rng.choice([0, 1, 2, 3, 128, 254, 255]), False  # a few hot bins
        else:
            yield rng.getrandbits(8), False


def histogram_rows(n: int, rng: random.Random) -> Iterator[Row]:
    """Bins in a list; a clear sets the bin to 0 and returns 0, else count + 1 (u16 wrap)."""
    counts = [0] * 256
    for b, clear in islice(histogram_inputs(rng), n):
        counts[b] = 0 if clear else (counts[b] + 1) & 0xFFFF
        yield {"bin": b, "clear": clear}, counts[b]


# ----------------------------------------------------------------------------- delay line


def delay_inputs(rng: random.Random) -> Iterator[tuple[int, int]]:
    """(sample, delay): a ramp at delay 63 past the first wrap, 0 (same transfer), random."""
    yield from ((k + 1, 63) for k in range(70))  # zeros until transfer 63, then the ramp
    yield from ((-(k + 1), 0) for k in range(10))  # delay 0: the sample just written
    yield from ((k, 1) for k in range(10))
    yield from ((32767 if k % 2 else -32768, 63) for k in range(140))  # two wraps at full scale
    while True:
        r = rng.random()
        d = rng.choice([0, 1, 62, 63]) if r < 0.3 else rng.randint(0, 63)
        yield rng.randint(-32768, 32767), d


def delay_line_rows(n: int, rng: random.Random) -> Iterator[Row]:
    """y[n] = x[n - delay] over the whole history (0 before the stream started)."""
    history: list[int] = []
    for x, d in islice(delay_inputs(rng), n):
        history.append(x)
        k = len(history) - 1 - d
        yield {"x": x, "delay": d}, history[k] if k >= 0 else 0


# ----------------------------------------------------------------------------- files


EXAMPLES: dict[str, tuple[Callable[[int, random.Random], Iterator[Row]], int]] = {
    "fir_stream": (fir_rows, 3000),
    "biquad_q14": (biquad_rows, 3000),
    "crc32_stream": (crc32_rows, 4000),
    "histogram": (histogram_rows, 3000),
    "delay_line": (delay_line_rows, 3000),
}


def vectors(name: str) -> str:
    """Return the text of ``NAME.vectors.jsonl`` (deterministic: seeded per example)."""
    rows, n = EXAMPLES[name]
    rng = random.Random(f"{SEED}/{name}")
    lines = [json.dumps({"inputs": inputs, "expected": expected})
             for inputs, expected in rows(n, rng)]
    assert len(lines) == n, (name, len(lines))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the vectors files (all, or ``--only``) into ``--out`` (default: this folder)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--only", default=",".join(EXAMPLES))
    args = parser.parse_args(argv)
    for name in args.only.split(","):
        path = args.out / f"{name}.vectors.jsonl"
        path.write_text(vectors(name), encoding="utf-8")
        print(f"wrote {path} ({EXAMPLES[name][1]} transfers)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
