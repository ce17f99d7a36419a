"""Constant folding: exact expected graphs for small cases."""

from __future__ import annotations

import pytest

from kera.diagnostics import Span
from kera.ir.types import BOOL, ArrayType, TupleType, sint, uint
from kera.opt import dce, fold
from tests.opt.kit import B, expected, result_after

U8, I8 = uint(8), sint(8)
ARR = ArrayType(U8, 3)


@pytest.mark.parametrize(
    ("op", "t", "a", "b", "want"),
    [
        ("add", U8, 3, 255, 2),
        ("sub", U8, 0, 1, 255),
        ("mul", I8, -128, -1, -128),
        ("div", I8, -128, -1, -128),  # MIN / -1 = MIN
        ("rem", I8, -128, -1, 0),
        ("div", U8, 7, 0, 0),  # a / 0 = 0
        ("rem", U8, 7, 0, 7),  # a % 0 = a
        ("rotl", U8, 0x81, 9, 0x03),
    ],
)
def test_binary_constants_fold_with_the_registry_semantics(op, t, a, b, want):
    params: list = []
    after, res = result_after(fold, params, lambda g, p: g.op(op, g.c(t, a), g.c(t, b)))
    assert res == expected(params, lambda g, p: g.c(t, want))
    assert len(dce(after)) == 1  # the operands are dead now


@pytest.mark.parametrize(
    ("op", "amount", "want"),
    [("shl", 8, 0), ("shl", 3, -8), ("shr", 200, -1), ("shr", 1, -1)],
)
def test_shifts_fold_without_taking_the_amount_modulo_the_width(op, amount, want):
    build = lambda g, p: g.op(op, g.c(I8, -1), g.c(U8, amount))  # noqa: E731
    _, res = result_after(fold, [], build)
    assert res == expected([], lambda g, p: g.c(I8, want))


def test_comparison_and_cast_fold_to_bool_and_int_constants():
    build = lambda g, p: g.op("lt", g.op("cast", g.c(U8, 200), t=I8), g.c(I8, 0))  # noqa: E731
    _, res = result_after(fold, [], build)
    assert res == expected([], lambda g, p: g.c(BOOL, 1))


def test_folding_reaches_through_chains_and_keeps_params():
    params = [("x", U8)]
    build = lambda g, p: g.op("add", p[0], g.op("mul", g.c(U8, 3), g.c(U8, 5)))  # noqa: E731
    _, res = result_after(fold, params, build)
    assert res == expected(params, lambda g, p: g.op("add", p[0], g.c(U8, 15)))


def _arr(g: B, p: list[bytes]) -> bytes:
    return g.op("array", *p[:3], t=ARR)


@pytest.mark.parametrize(("index", "element"), [(0, 0), (2, 2), (3, 2), (255, 2)])
def test_constant_index_into_an_array_node_reads_the_element_clamped(index, element):
    params = [("a", U8), ("b", U8), ("c", U8)]
    build = lambda g, p: g.op("array_index", _arr(g, p), g.c(U8, index), t=U8)  # noqa: E731
    _, res = result_after(fold, params, build)
    assert res == expected(params, lambda g, p: p[element])


def test_constant_update_of_an_array_node_is_a_new_array_and_past_the_end_does_nothing():
    params = [("a", U8), ("b", U8), ("c", U8), ("v", U8)]
    build = lambda g, p: g.op("array_update", _arr(g, p), g.c(U8, 1), p[3])  # noqa: E731
    _, res = result_after(fold, params, build)
    assert res == expected(params, lambda g, p: g.op("array", p[0], p[3], p[2], t=ARR))
    build = lambda g, p: g.op("array_update", _arr(g, p), g.c(U8, 3), p[3])  # noqa: E731
    _, res = result_after(fold, params, build)
    assert res == expected(params, _arr)


def test_reads_through_updates_of_an_unknown_array():
    params = [("x", ARR), ("v", U8)]

    def build(g: B, p: list[bytes], k: int) -> bytes:
        upd = g.op("array_update", p[0], g.c(U8, 1), p[1])
        return g.op("array_index", upd, g.c(U8, k), t=U8)

    _, res = result_after(fold, params, lambda g, p: build(g, p, 1))
    assert res == expected(params, lambda g, p: p[1])
    _, res = result_after(fold, params, lambda g, p: build(g, p, 2))
    assert res == expected(params, lambda g, p: g.op("array_index", p[0], g.c(U8, 2), t=U8))


def test_tuple_get_of_a_tuple_node_is_the_field():
    params = [("a", U8), ("b", BOOL)]
    tt = TupleType((U8, BOOL))
    build = lambda g, p: g.op("tuple_get", g.op("tuple", *p, t=tt), t=BOOL, index=1)  # noqa: E731
    _, res = result_after(fold, params, build)
    assert res == expected(params, lambda g, p: p[1])


def test_folded_constant_keeps_the_span_of_the_node_it_replaces():
    b = B()
    x = b.param("x", U8)
    k = b.g.add("add", U8, (b.c(U8, 1), b.c(U8, 2)), None, Span(10, 15))
    before = b.finish(b.op("add", x, k))
    after = fold(before)
    three = expected([("x", U8)], lambda g, p: g.c(U8, 3))
    assert after.spans[three] == Span(10, 15)
    assert after.regions["f"].params == before.regions["f"].params
