"""FIXED.md's golden values (from `ap_fixed`), on the interpreter, and the model agrees."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kera import load, run
from tests.fixed import model

GOLDEN = [
    ("1.25 as fx<3, 2, rnd, sat>", "1.5", (3, 2, "rnd", "sat")),
    ("-1.25 as fx<3, 2, rnd, sat>", "-1", (3, 2, "rnd", "sat")),
    ("19 as fx<4, 4, trn, sat>", "7", (4, 4, "trn", "sat")),
    ("-19 as fx<4, 4, trn, sat>", "-8", (4, 4, "trn", "sat")),
    ("-19 as fx<4, 4, trn, sat_sym>", "-7", (4, 4, "trn", "sat_sym")),
    ("2.5 as fx<4, 4, rnd_conv>", "2", (4, 4, "rnd_conv", "wrap")),
    ("3.5 as fx<4, 4, rnd_conv>", "4", (4, 4, "rnd_conv", "wrap")),
    ("-2.5 as fx<4, 4, rnd_inf>", "-3", (4, 4, "rnd_inf", "wrap")),
]


def _value_of(expr: str, ret: str, params: str = "", inputs: dict | None = None) -> object:
    loaded = load(text=f"#[top]\nfn f({params}) -> {ret} {{ {expr} }}\n", name="golden.kera")
    return run(loaded, [inputs or {}])[0]


@pytest.mark.parametrize("expr, want, fmt", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_literal_conversions(expr: str, want: str, fmt: tuple) -> None:
    w, i, q, o = fmt
    ret = f"fx<{w}, {i}, {q}, {o}>"
    assert _value_of(expr, ret) == want
    lit = Fraction(expr.split(" as ")[0])
    assert model.convert(lit, w, i, True, q, o) == Fraction(want)


@pytest.mark.parametrize("expr, want, fmt", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_conversions_at_run_time(expr: str, want: str, fmt: tuple) -> None:
    """The same conversions on a parameter: the lowered graph, not the compile-time model."""
    w, i, q, o = fmt
    lit, _, target = expr.partition(" as ")
    assert _value_of(f"x as {target}", f"fx<{w}, {i}, {q}, {o}>", "x: fx<12, 6>",
                     {"x": lit}) == want


def test_golden_comparisons_are_true() -> None:
    text = " && ".join(f"(({e}) == {w})" for e, w, _ in GOLDEN)
    assert _value_of(text, "bool") is True


def test_as_int_floors_then_wraps() -> None:
    assert _value_of("x as i8", "i8", "x: fx<8, 5>", {"x": "-7.5"}) == -8
    assert _value_of("x as u2", "u2", "x: fx<8, 5>", {"x": "5.75"}) == 1
    assert _value_of("-7.5 as i8", "i8") == -8
