"""Shared units in Verilator: bit- and cycle-exact with bubbles and backpressure."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kera.sim import simulate
from tests.conftest import needs_verilator
from tests.hls.test_sharing import DOT2
from tests.rtl.state_kernels import planned

pytestmark = needs_verilator

ROOT = Path(__file__).resolve().parents[2]
MATMUL = (ROOT / "examples" / "matmul4.kera").read_text(encoding="utf-8")


def _matrices(n: int, seed: int) -> list[dict]:
    r = random.Random(seed)

    def m() -> list[list[int]]:
        return [[r.randrange(-32768, 32768) for _ in range(4)] for _ in range(4)]

    return [{"a": m(), "b": m()} for _ in range(n)]


def _check(s, data: list[dict]) -> None:  # noqa: ANN001
    plain = simulate(s, data)
    assert plain.passed, (plain.mismatches[:3], plain.timing_errors[:3])
    assert plain.latency_observed == s.latency and plain.ii_observed == s.ii
    bubbles = simulate(s, data, bubbles=True, seed=4)
    assert bubbles.passed, (bubbles.mismatches[:3], bubbles.timing_errors[:3])
    gaps = [b - a for a, b in zip(bubbles.accepted, bubbles.accepted[1:], strict=False)]
    assert all(g % s.ii == 0 for g in gaps)
    assert bubbles.accepted[-1] >= plain.accepted[-1]  # bubbles under II are absorbed
    pressed = simulate(s, data, backpressure=True, seed=5, passes=2)
    assert pressed.passed, pressed.mismatches[:3]
    assert pressed.outputs == plain.outputs == plain.expected


@pytest.mark.parametrize("ii", [3, 8])
def test_matmul_shared_is_exact(ii: int) -> None:
    s = planned(MATMUL, ii=ii)
    assert s.aligned
    _check(s, _matrices(40, ii))


def test_stateful_shared_is_exact() -> None:
    s = planned(DOT2, ii=2)
    assert s.aligned
    r = random.Random(3)
    data = [{k: r.randrange(-32768, 32768) for k in "abcd"} for _ in range(200)]
    _check(s, data)
