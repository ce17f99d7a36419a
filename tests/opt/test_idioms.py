"""Idioms recognised as the op they compute: the SWAR population count becomes ``popcount``."""

from __future__ import annotations

import pytest

from kera.elaborate import build_program
from kera.ir.graph import Graph
from kera.opt import optimize
from tests.opt.kit import assert_same_bits

SWAR = """
#[top]
pub fn f(x: u{w}) -> u{w} {{
    let a = x - ((x >> 1) & 0x{m1:x});
    let b = {fields};
    let c = (b + (b >> 4)) & 0x{m4:x};
    (c * 0x{h01:x}) >> {shift}
}}
"""


def _rep(byte: int, w: int) -> int:
    return sum(byte << (8 * k) for k in range(w // 8))


def _swar(w: int, *, swap: bool = False, m2: int | None = None, shift: int | None = None,
          m1: int | None = None) -> str:
    m2 = _rep(0x33, w) if m2 is None else m2
    lo, hi = f"(a & 0x{m2:x})", f"((a >> 2) & 0x{m2:x})"
    return SWAR.format(w=w, m1=_rep(0x55, w) if m1 is None else m1,
                       fields=f"{hi} + {lo}" if swap else f"{lo} + {hi}", m4=_rep(0x0F, w),
                       h01=_rep(0x01, w), shift=w - 8 if shift is None else shift)


def _compile(text: str, level: int) -> tuple[Graph, Graph]:
    program = build_program("swar.kera", text.encode())
    assert program.ok, program.diagnostics
    return program.graph, optimize(program.graph, level)


def _ops(g: Graph) -> list[str]:
    return sorted(n.op for n in g.nodes.values() if n.op not in ("param", "const"))


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("w", [16, 24, 32, 64])
def test_the_swar_count_is_popcount(w: int, level: int) -> None:
    before, after = _compile(_swar(w), level)
    assert _ops(after) == ["popcount"]
    assert_same_bits(before, after, rows=200, seed=w)


def test_the_field_sum_may_be_written_either_way_round() -> None:
    before, after = _compile(_swar(32, swap=True), 2)
    assert _ops(after) == ["popcount"]
    assert_same_bits(before, after, rows=200)


@pytest.mark.parametrize(("change", "value"), [
    ("m2", 0x3333_3332), ("shift", 23), ("m1", 0x5555_5554)], ids=["mask", "shift", "pairs"])
def test_a_near_miss_is_left_as_written(change: str, value: int) -> None:
    before, after = _compile(_swar(32, **{change: value}), 2)  # type: ignore[arg-type]
    assert "popcount" not in _ops(after)
    assert_same_bits(before, after, rows=200)
