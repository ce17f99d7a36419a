"""Write the vectors of the folding examples (sha256, xtea, gcd16) from independent references.

    python examples/gen_fold_vectors.py [--out DIR]

The expected values come from plain Python written here, never from the Kera interpreter; the
SHA-256 compression is checked against ``hashlib`` (a padded message's blocks compressed in turn
give ``hashlib.sha256``'s digest) and the GCD against ``math.gcd``. Seeded: two runs write
byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261201
M32 = 0xFFFF_FFFF
H0 = [0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
      0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19]
K = [int(math.floor(abs(math.modf(p ** (1 / 3))[0]) * (1 << 32)))
     for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73,
               79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163,
               167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251,
               257, 263, 269, 271, 277, 281, 283, 293, 307, 311)]


def _rotr(x: int, n: int) -> int:
    return ((x >> n) | (x << (32 - n))) & M32


def compress(state: list[int], block: list[int]) -> list[int]:
    """One SHA-256 compression (FIPS 180-4 6.2.2) of 16 words into 8."""
    w = list(block)
    for t in range(16, 64):
        s0 = _rotr(w[t - 15], 7) ^ _rotr(w[t - 15], 18) ^ (w[t - 15] >> 3)
        s1 = _rotr(w[t - 2], 17) ^ _rotr(w[t - 2], 19) ^ (w[t - 2] >> 10)
        w.append((w[t - 16] + s0 + w[t - 7] + s1) & M32)
    a, b, c, d, e, f, g, h = state
    for t in range(64):
        t1 = (h + (_rotr(e, 6) ^ _rotr(e, 11) ^ _rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t]
              + w[t]) & M32
        t2 = ((_rotr(a, 2) ^ _rotr(a, 13) ^ _rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) & M32
        a, b, c, d, e, f, g, h = (t1 + t2) & M32, a, b, c, (d + t1) & M32, e, f, g
    return [(x + y) & M32 for x, y in zip(state, [a, b, c, d, e, f, g, h], strict=True)]


def _blocks(message: bytes) -> list[list[int]]:
    padded = message + b"\x80" + b"\0" * ((55 - len(message)) % 64) + struct.pack(
        ">Q", 8 * len(message))
    return [list(struct.unpack(">16I", padded[i:i + 64])) for i in range(0, len(padded), 64)]


def sha256_rows(rng: random.Random) -> list[dict[str, object]]:
    """Compressions of real messages (checked against hashlib), then random states and blocks."""
    rows = []
    for message in (b"", b"abc", b"a" * 55, b"a" * 56, b"kera-hls " * 20, bytes(range(200))):
        state = list(H0)
        for block in _blocks(message):
            nxt = compress(state, block)
            rows.append({"inputs": {"state": state, "block": block}, "expected": nxt})
            state = nxt
        digest = b"".join(struct.pack(">I", x) for x in state)
        assert digest == hashlib.sha256(message).digest(), message
    for _ in range(24):
        state = [rng.getrandbits(32) for _ in range(8)]
        block = [rng.getrandbits(32) for _ in range(16)]
        rows.append({"inputs": {"state": state, "block": block},
                     "expected": compress(state, block)})
    return rows


def xtea(v: list[int], key: list[int]) -> list[int]:
    """XTEA encryption, 32 cycles (the reference C code of Needham and Wheeler)."""
    v0, v1, total = v[0], v[1], 0
    for _ in range(32):
        v0 = (v0 + ((((v1 << 4) ^ (v1 >> 5)) + v1) ^ (total + key[total & 3]))) & M32
        total = (total + 0x9E3779B9) & M32
        v1 = (v1 + ((((v0 << 4) ^ (v0 >> 5)) + v0) ^ (total + key[(total >> 11) & 3]))) & M32
    return [v0, v1]


def xtea_rows(rng: random.Random) -> list[dict[str, object]]:
    """The all-zero and all-one blocks and keys, then random ones."""
    fixed = [([0, 0], [0, 0, 0, 0]), ([M32, M32], [M32] * 4),
             ([0x41424344, 0x45464748], [0x00010203, 0x04050607, 0x08090A0B, 0x0C0D0E0F])]
    rand = [([rng.getrandbits(32) for _ in range(2)], [rng.getrandbits(32) for _ in range(4)])
            for _ in range(61)]
    return [{"inputs": {"v": v, "key": k}, "expected": xtea(v, k)} for v, k in fixed + rand]


def gcd16_rows(rng: random.Random) -> list[dict[str, object]]:
    """Zeros, ones, powers of two, the extremes, then random pairs (``math.gcd``)."""
    edge = [0, 1, 2, 3, 0x8000, 0xFFFF, 0xFFFE, 12, 4096 * 3]
    pairs = [(x, y) for x in edge for y in edge]
    pairs += [(rng.getrandbits(16), rng.getrandbits(16)) for _ in range(100)]
    pairs += [(rng.getrandbits(8) << 6, rng.getrandbits(10) << 4) for _ in range(28)]
    return [{"inputs": {"x": x, "y": y}, "expected": math.gcd(x, y)} for x, y in pairs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    rng = random.Random(SEED)
    for name, make in (("sha256", sha256_rows), ("xtea", xtea_rows), ("gcd16", gcd16_rows)):
        rows = make(rng)
        text = "".join(json.dumps(r, separators=(", ", ": ")) + "\n" for r in rows)
        (args.out / f"{name}.vectors.jsonl").write_text(text, encoding="utf-8")
        print(f"{name}: {len(rows)} vectors")


if __name__ == "__main__":
    main()
