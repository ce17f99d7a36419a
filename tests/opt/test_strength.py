"""Strength reduction: exact graphs for small cases, exhaustive proof for widths <= 12."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera.interp import evaluate
from kera.ir import values
from kera.ir.types import IntType, TupleType, sint, uint
from kera.opt import strength
from kera.opt.strength import AMOUNT, narrowest_unsigned_magic, signed_magic, unsigned_magic
from tests.opt.kit import (
    B,
    all_values,
    assert_same_bits,
    edge_ints,
    expected,
    result_after,
    same_arrays,
)

U8, I8 = uint(8), sint(8)
X8, S8 = [("x", U8)], [("x", I8)]


def test_multiply_by_a_power_of_two_is_a_shift():
    _, res = result_after(strength, X8, lambda g, p: g.op("mul", p[0], g.c(U8, 8)))
    assert res == expected(X8, lambda g, p: g.op("shl", p[0], g.c(AMOUNT, 3)))


def test_multiply_by_a_negative_power_of_two_is_a_negated_shift():
    _, res = result_after(strength, S8, lambda g, p: g.op("mul", g.c(I8, -4), p[0]))
    assert res == expected(S8, lambda g, p: g.op("neg", g.op("shl", p[0], g.c(AMOUNT, 2))))


def test_multiply_by_min_is_a_shift_by_width_minus_one():
    _, res = result_after(strength, S8, lambda g, p: g.op("mul", p[0], g.c(I8, -128)))
    assert res == expected(S8, lambda g, p: g.op("shl", p[0], g.c(AMOUNT, 7)))


def test_unsigned_divide_and_remainder_by_a_power_of_two():
    _, res = result_after(strength, X8, lambda g, p: g.op("div", p[0], g.c(U8, 16)))
    assert res == expected(X8, lambda g, p: g.op("shr", p[0], g.c(AMOUNT, 4)))
    _, res = result_after(strength, X8, lambda g, p: g.op("rem", p[0], g.c(U8, 16)))
    assert res == expected(X8, lambda g, p: g.op("and", p[0], g.c(U8, 15)))


def test_signed_divide_by_a_power_of_two_rounds_toward_zero():
    def want(g: B, p: list[bytes]) -> bytes:
        sign = g.op("shr", p[0], g.c(AMOUNT, 7))
        biased = g.op("add", p[0], g.op("and", sign, g.c(I8, 3)))
        return g.op("shr", biased, g.c(AMOUNT, 2))

    _, res = result_after(strength, S8, lambda g, p: g.op("div", p[0], g.c(I8, 4)))
    assert res == expected(S8, want)


def test_unsigned_divide_by_seven_is_a_multiply_high_of_two_narrow_factors():
    def want(g: B, p: list[bytes]) -> bytes:
        f = uint(9)  # x is 8 bits, the multiplier 293 is 9: a 9x9 product
        prod = g.op("widening_mul", g.op("cast", p[0], t=f), g.c(f, 293), t=uint(18))
        return g.op("cast", g.op("shr", prod, g.c(AMOUNT, 11)), t=U8)

    _, res = result_after(strength, X8, lambda g, p: g.op("div", p[0], g.c(U8, 7)))
    assert res == expected(X8, want)


def test_u32_divide_by_ten_is_a_31_by_31_multiply_high():
    u32, f = uint(32), uint(31)
    params = [("x", u32)]

    def want(g: B, p: list[bytes]) -> bytes:  # x/10 = (x>>1)/5: 31-bit factors, not 64-bit ones
        half = g.op("cast", g.op("shr", p[0], g.c(AMOUNT, 1)), t=f)
        prod = g.op("widening_mul", half, g.c(f, 0x6666_6667), t=uint(62))
        return g.op("cast", g.op("shr", prod, g.c(AMOUNT, 33)), t=u32)

    _, res = result_after(strength, params, lambda g, p: g.op("div", p[0], g.c(u32, 10)))
    assert res == expected(params, want)


def test_division_is_planned_for_the_dividends_known_range():
    u32 = uint(32)
    params = [("x", U8)]

    def build(g: B, p: list[bytes]) -> bytes:  # (x as u32) / 10 = (x >> 1) / 5 on 7 bits
        return g.op("div", g.op("cast", p[0], t=u32), g.c(u32, 10))

    after, res = result_after(strength, params, build)
    muls = [n for n in after.nodes.values() if n.op in ("mul", "widening_mul")]
    assert [(n.op, str(after.nodes[n.inputs[0]].type)) for n in muls] == [("widening_mul", "u7")]
    small = lambda g, p: g.op("div", g.op("cast", p[0], t=u32), g.c(u32, 300))  # noqa: E731
    after, res = result_after(strength, params, small)
    assert after.nodes[res].op == "const" and after.nodes[res].attr("value") == 0


@pytest.mark.parametrize("divisors", [range(-40, 41), range(-32768, 32768, 997)])
def test_signed_division_of_a_non_negative_dividend_is_planned_unsigned(divisors):
    """Every byte, extended to i16 (so >= 0), divided by each divisor, both ops."""
    i16 = IntType(16, True)
    b = B()
    x = b.op("cast", b.param("x", U8), t=i16)
    fields = [b.op(op, x, b.c(i16, d)) for d in divisors if d not in (0, 1, -1)
              for op in ("div", "rem")]
    g = b.finish(b.op("tuple", *fields, t=TupleType(tuple(i16 for _ in fields))))
    after = strength(g)
    xs = all_values(U8)
    inputs = {"x": values.stack(xs, U8)}
    assert same_arrays(evaluate(after, "f", inputs, rows=256), evaluate(g, "f", inputs, rows=256))
    muls = [n for n in after.nodes.values() if n.op == "widening_mul"]
    assert all(after.nodes[n.inputs[0]].type.flat_width <= 9 for n in muls)
    assert muls or min(abs(d) for d in divisors if d) > 127  # above 127: a comparison or 0
    assert not [n for n in after.nodes.values() if n.op in ("div", "rem")]


@pytest.mark.parametrize("width", range(1, 11))
def test_the_narrowest_magic_numbers_are_exact_for_every_input_and_divisor(width):
    xs = np.arange(1 << width, dtype=np.int64)
    for d in range(3, 1 << width):
        plan = narrowest_unsigned_magic(width, d)
        assert plan is not None
        assert ((((xs >> plan.pre) * plan.multiplier) >> plan.shift) == xs // d).all(), d
        assert plan.width <= unsigned_magic(width, d).width  # type: ignore[union-attr]


def test_division_by_a_variable_or_a_64_bit_odd_constant_stays():
    u64 = uint(64)
    params = [("x", u64)]
    build = lambda g, p: g.op("div", p[0], g.c(u64, 7))  # noqa: E731
    _, res = result_after(strength, params, build)
    assert res == expected(params, build)
    build = lambda g, p: g.op("div", p[0], p[1])  # noqa: E731
    _, res = result_after(strength, X8 + [("y", U8)], build)
    assert res == expected(X8 + [("y", U8)], build)


# ----------------------------------------------------------------------------- the proofs


@pytest.mark.parametrize("width", range(1, 13))
def test_magic_numbers_are_exact_for_every_input_and_divisor(width):
    """Exhaustive, on the numbers alone: every divisor, every dividend, both signednesses."""
    xs = np.arange(1 << width, dtype=np.int64)
    for d in range(3, 1 << width):
        plan = unsigned_magic(width, d)
        assert plan is not None  # narrow widths always fit 64 bits
        assert ((((xs >> plan.pre) * plan.multiplier) >> plan.shift) == xs // d).all(), d
    sx = xs - (1 << (width - 1))
    for a in range(3, (1 << (width - 1)) + 1):
        plan = signed_magic(width, a)
        if a & (a - 1) == 0:
            assert plan is None  # a power of two has no error term; shifts handle it
            continue
        assert plan is not None
        t = (sx * plan.multiplier) >> plan.shift
        q = t + (sx < 0)
        truncated = np.where(sx < 0, -((-sx) // a), sx // a)
        assert (q == truncated).all(), a


def _all_divisions(t: IntType, divisors: list[int]) -> B:
    b = B()
    x = b.param("x", t)
    fields = [b.op(op, x, b.c(t, d)) for d in divisors for op in ("div", "rem")]
    b.finish(b.op("tuple", *fields, t=TupleType(tuple(t for _ in fields))))
    return b


def _check_divisions(t: IntType, divisors: list[int]) -> None:
    xs = all_values(t)
    inputs = {"x": values.stack(xs, t)}
    for start in range(0, len(divisors), 512):
        g = _all_divisions(t, divisors[start : start + 512]).g
        after = strength(g)
        want = evaluate(g, "f", inputs, rows=len(xs))
        assert same_arrays(evaluate(after, "f", inputs, rows=len(xs)), want)
        left = {after.nodes[n.inputs[1]].attr("value") for n in after.nodes.values()
                if n.op in ("div", "rem") and n.id in after.reachable("f")}
        assert left <= {0, 1, -1}  # those are simplify's


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
@pytest.mark.parametrize("width", range(1, 13))
def test_strength_reduced_division_is_exact_for_every_input(width, signed):
    """Through the graph and the interpreter, every dividend: every divisor up to 8 bits,
    a fixed sample (edges and a stride) above; ``KERA_EXHAUSTIVE=1`` takes every divisor."""
    t = IntType(width, signed)
    divisors = all_values(t)
    if width > 8 and not os.environ.get("KERA_EXHAUSTIVE"):
        divisors = sorted(set(edge_ints(t)) | set(divisors[:: len(divisors) // 48]))
    _check_divisions(t, divisors)


def _divisors(t: IntType) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(edge_ints(t)), st.integers(t.min, t.max))


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_strength_reduction_is_exact_for_wide_types(data):
    """Widths 13..64: random divisors and multipliers, edge and random dividends."""
    t = IntType(data.draw(st.integers(13, 64)), data.draw(st.booleans()))
    ds = data.draw(st.lists(_divisors(t), min_size=1, max_size=4))
    b = B()
    x = b.param("x", t)
    fields = [b.op(op, x, b.c(t, d)) for d in ds for op in ("div", "rem", "mul")]
    g = b.finish(b.op("tuple", *fields, t=TupleType(tuple(t for _ in fields))))
    assert_same_bits(g, strength(g), rows=200, seed=data.draw(st.integers(0, 1 << 30)))
