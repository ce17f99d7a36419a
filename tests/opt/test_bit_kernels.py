"""Bit-level kernels (tests/opt/kernels and the shared lfsr16) at -O2: exact against a Python
reference, and narrowed to their live bits (the logic the graph asks for, wires excluded)."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kera.elaborate import build_program
from kera.interp import evaluate
from kera.ir import values
from kera.ir.graph import Graph
from kera.opt import Fixpoint, bits, optimize
from tests.conftest import SHARED_KERNELS
from tests.opt.kit import logic_bits

KERNELS = Path(__file__).parent / "kernels"


def _bitrev(x: int) -> int:
    return int(f"{x:032b}"[::-1], 2)


def _gf_mul(a: int, b: int) -> int:
    p = 0
    for _ in range(8):
        if b & 1:
            p ^= a
        a = ((a << 1) ^ (0x1B if a & 0x80 else 0)) & 0xFF
        b >>= 1
    return p


def _crc8(crc: int, data: int) -> int:
    c = crc ^ data
    for _ in range(8):
        c = ((c << 1) ^ (0x07 if c & 0x80 else 0)) & 0xFF
    return c


def _secded72(d: int) -> int:
    positions = [q for q in range(3, 72) if q & (q - 1)][:64]
    check = 0
    for k in range(7):
        bits = [d >> i & 1 for i, q in enumerate(positions) if q >> k & 1]
        check |= (sum(bits) & 1) << k
    overall = (bin(d).count("1") + bin(check).count("1")) & 1
    return check | overall << 7


def _lfsr16(state: int, steps: int) -> int:
    s = state
    for _ in range(steps if steps < 15 else 15):
        bit = (s ^ (s >> 2) ^ (s >> 3) ^ (s >> 5)) & 1
        s = (s >> 1) | (bit << 15)
    return s


def _div10(x: int, y: int) -> tuple[int, int, int]:
    return x // 10, x % 10, y // 10


# name: (file, reference, input widths, most logic bits after -O2: the comment has the figure
# of the pipeline without `bits`; None: not a bit-level kernel, see test_strength)
CASES: dict[str, tuple[Path, Callable[..., object], tuple[int, ...], int | None]] = {
    "bitrev32": (KERNELS / "bitrev32.kera", _bitrev, (32,), 0),  # 1984
    "gf_mul": (KERNELS / "gf_mul.kera", _gf_mul, (8, 8), 200),  # 331
    "crc8": (KERNELS / "crc8.kera", _crc8, (8, 8), 64),  # 160
    "secded72": (KERNELS / "secded72.kera", _secded72, (64,), 220),  # 17064
    "lfsr16": (SHARED_KERNELS / "lfsr16.kera", _lfsr16, (16, 4), 320),  # 1215
    "div10": (KERNELS / "div10.kera", _div10, (32, 8), None),
}


def _optimised(path: Path) -> tuple[Graph, Graph, str]:
    program = build_program(str(path), path.read_bytes())
    assert program.ok, program.diagnostics
    return program.graph, optimize(program.graph, 2), program.top


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_is_exact_against_its_reference(name):
    path, ref, widths, _ = CASES[name]
    if not path.exists():
        pytest.skip(f"no {path}")
    _, out, top = _optimised(path)
    rng = random.Random(name)
    rows = 300
    cols = [[(1 << w) - 1, 0, *(rng.getrandbits(w) for _ in range(rows - 2))] for w in widths]
    params, _ = out.signature(top)
    inputs = {p: values.stack(c, t) for (p, t), c in zip(params, cols, strict=True)}
    got = values.to_json_rows(evaluate(out, top, inputs, rows=rows), out.signature(top)[1], rows)
    want = [ref(*row) for row in zip(*cols, strict=True)]
    want = [list(w) if isinstance(w, tuple) else w for w in want]
    assert got == want


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c[3] is not None))
def test_kernel_is_narrowed_to_its_live_bits(name):
    path, _, _, most = CASES[name]
    if not path.exists():
        pytest.skip(f"no {path}")
    before, out, _ = _optimised(path)
    assert logic_bits(out) <= most < logic_bits(before)  # type: ignore[operator]


def test_one_bit_xors_stay_one_bit_wide():
    for name in ("lfsr16", "secded72"):
        path = CASES[name][0]
        if path.exists():
            _, out, _ = _optimised(path)
            widths = {out.nodes[n].type.flat_width for n in out.nodes if out.nodes[n].op == "xor"}
            assert widths == {1}, name


def test_no_multiplier_is_left_where_a_multiplicand_is_one_bit():
    for name in ("gf_mul", "crc8"):
        _, out, _ = _optimised(CASES[name][0])
        assert not [n for n in out.nodes.values() if n.op == "mul"], name


def _snapshot(g: Graph) -> tuple[list[bytes], dict[bytes, object]]:
    return list(g.nodes), dict(g.spans)


def test_the_bits_caches_change_nothing():
    """``bits`` keeps known bits and kept nodes between runs; a warm run is a cold run's copy
    (nodes, their order and their spans), also after other graphs filled the caches."""
    bits_module = sys.modules["kera.opt.bits"]
    graphs = []
    for path in sorted(KERNELS.glob("*.kera")):
        p = build_program(str(path), path.read_bytes())
        assert p.ok and p.graph is not None
        graphs.append(optimize(p.graph, 2, pipeline=[Fixpoint(("fold+simplify+strength",)),
                                                     "balance", "narrow+fold+simplify"]))
    cold = []
    for g in graphs:
        bits_module.clear_caches()
        cold.append(_snapshot(bits(g)))
    bits_module.clear_caches()
    for g in graphs:
        bits(g)
    assert bits_module._KNOWN and bits_module._KEPT
    assert [_snapshot(bits(g)) for g in graphs] == cold
