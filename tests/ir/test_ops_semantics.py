"""Every op's numpy semantics against the plain big-integer model of SEMANTICS.md."""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera.ir import values
from kera.ir.ops import OPS
from kera.ir.types import BOOL, IntType, sint, uint

from . import model
from .opkit import edge_values, int_types, run_op, values_of

ROWS = st.integers(1, 24)
# KERA_EXAMPLES=1000 for a deeper run; the default keeps the suite fast.
FAST = settings(max_examples=int(os.environ.get("KERA_EXAMPLES", "25")), deadline=None)


def _columns(data: st.DataObject, types: list, rows: int) -> list[list]:
    return [data.draw(st.lists(values_of(t), min_size=rows, max_size=rows)) for t in types]


@pytest.mark.parametrize("name", sorted(model.BINARY_INT))
@FAST
@given(data=st.data(), t=int_types(), rows=ROWS, bcast=st.booleans())
def test_binary_arithmetic(name: str, data: st.DataObject, t: IntType, rows: int,
                           bcast: bool) -> None:
    a, b = _columns(data, [t, t], rows)
    if bcast:
        a = [a[0]] * rows
    got = run_op(name, [t, t], t, [a, b], broadcast_first=bcast)
    assert got == [model.BINARY_INT[name](x, y, t) for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("name", sorted(model.BITWISE))
@FAST
@given(data=st.data(), t=st.one_of(int_types(), st.just(BOOL)), rows=ROWS)
def test_bitwise(name: str, data: st.DataObject, t, rows: int) -> None:
    a, b = _columns(data, [t, t], rows)
    got = run_op(name, [t, t], t, [a, b])
    assert got == [model.bitwise(name, x, y, t) for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("name", sorted(model.COMPARE))
@FAST
@given(data=st.data(), t=int_types(), rows=ROWS)
def test_compare(name: str, data: st.DataObject, t: IntType, rows: int) -> None:
    a, b = _columns(data, [t, t], rows)
    got = run_op(name, [t, t], BOOL, [a, b])
    assert got == [model.COMPARE[name](x, y) for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("name", ["eq", "ne"])
def test_compare_bools(name: str) -> None:
    a, b = zip(*itertools.product([False, True], repeat=2), strict=True)
    got = run_op(name, [BOOL, BOOL], BOOL, [list(a), list(b)])
    assert got == [model.COMPARE[name](x, y) for x, y in zip(a, b, strict=True)]


def _amounts(t: IntType, amount_t: IntType) -> st.SearchStrategy[int]:
    near = {t.width - 1, t.width, t.width + 1, 63, 64, 65, 127, 128}
    edges = sorted({v for v in near if v <= amount_t.max} | set(edge_values(amount_t)))
    return st.one_of(st.sampled_from(edges), st.integers(0, amount_t.max))


@pytest.mark.parametrize("name", sorted(model.SHIFTS))
@FAST
@given(data=st.data(), t=int_types(), amount_t=int_types().map(lambda t: uint(t.width)),
       rows=ROWS)
def test_shifts_and_rotates(name: str, data: st.DataObject, t: IntType, amount_t: IntType,
                            rows: int) -> None:
    (a,) = _columns(data, [t], rows)
    n = data.draw(st.lists(_amounts(t, amount_t), min_size=rows, max_size=rows))
    got = run_op(name, [t, amount_t], t, [a, n])
    assert got == [model.SHIFTS[name](x, k, t) for x, k in zip(a, n, strict=True)]


@pytest.mark.parametrize("name", sorted(model.UNARY_INT))
@FAST
@given(data=st.data(), t=int_types(), rows=ROWS)
def test_unary(name: str, data: st.DataObject, t: IntType, rows: int) -> None:
    if name == "neg":
        t = sint(t.width)
    (a,) = _columns(data, [t], rows)
    got = run_op(name, [t], t, [a])
    assert got == [model.UNARY_INT[name](x, t) for x in a]


@FAST
@given(data=st.data(), t=st.one_of(int_types(), st.just(BOOL)), rows=ROWS)
def test_not(data: st.DataObject, t, rows: int) -> None:
    (a,) = _columns(data, [t], rows)
    assert run_op("not", [t], t, [a]) == [model.not_(x, t) for x in a]


@FAST
@given(data=st.data(), src=st.one_of(int_types(), st.just(BOOL)), out=int_types(), rows=ROWS)
def test_cast(data: st.DataObject, src, out: IntType, rows: int) -> None:
    (a,) = _columns(data, [src], rows)
    assert run_op("cast", [src], out, [a]) == [model.cast(x, out) for x in a]


@FAST
@given(data=st.data(), hi=int_types(63), rows=ROWS)
def test_concat(data: st.DataObject, hi: IntType, rows: int) -> None:
    lo = data.draw(int_types(64 - hi.width))
    a, b = _columns(data, [hi, lo], rows)
    got = run_op("concat", [hi, lo], uint(hi.width + lo.width), [a, b])
    assert got == [model.concat(x, y, hi, lo) for x, y in zip(a, b, strict=True)]


@FAST
@given(data=st.data(), t=int_types(), rows=ROWS)
def test_slice(data: st.DataObject, t: IntType, rows: int) -> None:
    lo = data.draw(st.integers(0, t.width - 1))
    out = uint(data.draw(st.integers(1, t.width - lo)))
    (a,) = _columns(data, [t], rows)
    got = run_op("slice", [t], out, [a], {"lo": lo})
    assert got == [model.slice_(x, lo, t, out) for x in a]


@FAST
@given(data=st.data(), t=int_types(32), rows=ROWS)
def test_widening_mul(data: st.DataObject, t: IntType, rows: int) -> None:
    a, b = _columns(data, [t, t], rows)
    out = IntType(2 * t.width, t.signed)
    got = run_op("widening_mul", [t, t], out, [a, b])
    assert got == [model.widening_mul(x, y) for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("t", [uint(1), sint(1), uint(3), sint(3), uint(4), sint(4)])
def test_exhaustive_small_widths(t: IntType) -> None:
    """Every pair of values for every binary op and every shift amount up to width + 2."""
    pairs = list(itertools.product(range(t.min, t.max + 1), repeat=2))
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    for name, fn in model.BINARY_INT.items():
        assert run_op(name, [t, t], t, [a, b]) == [fn(x, y, t) for x, y in pairs], name
    amount_t = uint(8)
    shifts = [(x, k) for x in range(t.min, t.max + 1) for k in range(t.width + 3)]
    xs, ks = [s[0] for s in shifts], [s[1] for s in shifts]
    for name, fn in model.SHIFTS.items():
        assert run_op(name, [t, amount_t], t, [xs, ks]) == [fn(x, k, t) for x, k in shifts]


@pytest.mark.parametrize("t", [sint(8), uint(8), sint(32), uint(32), sint(63), sint(64),
                               uint(64)])
def test_edge_value_products(t: IntType) -> None:
    """All pairs of edge values (MIN/-1, x/0, wraps) for arithmetic ops at container edges."""
    edges = edge_values(t)
    pairs = list(itertools.product(edges, repeat=2))
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    for name, fn in model.BINARY_INT.items():
        assert run_op(name, [t, t], t, [a, b]) == [fn(x, y, t) for x, y in pairs], name


def test_defined_division_edges() -> None:
    """The SEMANTICS.md examples, spelled out."""
    i8 = sint(8)
    a, b = [-128, 5, -7, 7, -7, 0], [-1, 0, 2, -2, -2, 0]
    assert run_op("div", [i8, i8], i8, [a, b]) == [-128, 0, -3, -3, 3, 0]
    assert run_op("rem", [i8, i8], i8, [a, b]) == [0, 5, -1, 1, -1, 0]
    i64 = sint(64)
    assert run_op("div", [i64, i64], i64, [[-(1 << 63)], [-1]]) == [-(1 << 63)]
    assert run_op("rem", [i64, i64], i64, [[-(1 << 63)], [-1]]) == [0]


def test_select_scalars_arrays_tuples() -> None:
    from kera.ir.types import ArrayType, TupleType

    t = TupleType((ArrayType(uint(8), 2), BOOL))
    a = [([1, 2], True), ([3, 4], False)]
    b = [([5, 6], False), ([7, 8], True)]
    got = run_op("select", [BOOL, t, t], t, [[True, False], a, b])
    assert got == [([1, 2], True), ([7, 8], True)]
    got = run_op("select", [BOOL, t, t], t, [[False, False], a, b], broadcast_first=True)
    assert got == b


def test_aggregates() -> None:
    from kera.ir.types import ArrayType, TupleType

    u8, idx_t = uint(8), uint(64)
    arr_t = ArrayType(u8, 3)
    assert run_op("array", [u8] * 3, arr_t, [[1, 4], [2, 5], [3, 6]]) == [[1, 2, 3], [4, 5, 6]]
    arrs = [[10, 20, 30]] * 6
    idx = [0, 1, 2, 3, 255, (1 << 64) - 1]
    assert run_op("array_index", [arr_t, idx_t], u8, [arrs, idx]) == [10, 20, 30, 30, 30, 30]
    got = run_op("array_update", [arr_t, idx_t, u8], arr_t, [arrs, idx, [9] * 6])
    assert got == [[9, 20, 30], [10, 9, 30], [10, 20, 9]] + [[10, 20, 30]] * 3
    # constant (broadcast) index takes the direct path
    assert run_op("array_index", [arr_t, idx_t], u8, [arrs[:2], [7, 7]]) == [30, 30]
    tup_t = TupleType((u8, BOOL, arr_t))
    got = run_op("tuple", [u8, BOOL, arr_t], tup_t, [[1], [True], [[1, 2, 3]]])
    assert got == [(1, True, [1, 2, 3])]
    got = run_op("tuple_get", [tup_t], BOOL, [[(1, True, [1, 2, 3])]], {"index": 1})
    assert got == [True]
    nested = ArrayType(TupleType((u8, u8)), 2)
    rows = [[(1, 2), (3, 4)], [(5, 6), (7, 8)]]
    got = run_op("array_index", [nested, uint(1)], TupleType((u8, u8)), [rows, [1, 0]])
    assert got == [(3, 4), (5, 6)]


def test_const_and_param() -> None:
    assert run_op("const", [], sint(8), [], {"value": -128}) == [-128]
    assert run_op("const", [], uint(64), [], {"value": (1 << 64) - 1}) == [(1 << 64) - 1]
    assert run_op("const", [], BOOL, [], {"value": 1}) == [True]
    batch = values.stack([7, 9], uint(8))
    attrs = {"index": 0, "name": "x"}
    assert OPS["param"].evaluate([batch], attrs, [], uint(8)) is batch  # the bound input


# The ops each test above exercises; a new opcode must be added to a test here.
TESTED = (
    set(model.BINARY_INT) | set(model.BITWISE) | set(model.COMPARE) | set(model.SHIFTS)
    | set(model.UNARY_INT)
    | {"not", "cast", "concat", "slice", "widening_mul", "select", "array", "array_index",
       "array_update", "tuple", "tuple_get", "const", "param", "state"}
)


def test_registry_is_complete_and_tested() -> None:
    for name, opdef in OPS.items():
        assert opdef.name == name
        assert callable(opdef.type_rule) and callable(opdef.evaluate), name
        assert opdef.doc and opdef.doc[0].isupper(), name
        assert opdef.arity is None or opdef.arity >= 0
        assert list(opdef.attrs) == sorted(opdef.attrs)
        assert not opdef.associative or opdef.commutative, name
    assert set(OPS) == TESTED
    assert {n for n, d in OPS.items() if d.associative} == {
        "add", "mul", "and", "or", "xor", "min", "max"}


def test_popcount_without_numpy_bitwise_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SWAR fallback for numpy < 2 agrees with the model."""
    import numpy as np

    monkeypatch.delattr(np, "bitwise_count", raising=False)
    t = uint(64)
    xs = edge_values(t)
    assert run_op("popcount", [t], t, [xs]) == [model.popcount(x, t) for x in xs]
