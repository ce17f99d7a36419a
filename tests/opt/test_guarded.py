"""Guarded differences: ``select(x >= k, x - k, y)`` computes its arm in the width it needs."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera.elaborate import build_program
from kera.ir.graph import Graph
from kera.ir.types import IntType, sint, uint
from kera.ir.validate import validate
from kera.opt import narrow, optimize
from kera.opt.rewrite import live
from tests.opt.kit import B, column, graph_of, results

U8, I8, U32 = uint(8), sint(8), uint(32)

# (compare, true arm is the difference): the forms that guard ``x - k``
FORMS = [("ge", True), ("gt", True), ("le", True), ("lt", True),
         ("lt", False), ("le", False), ("gt", False), ("ge", False)]


def _guarded(g: B, x: bytes, k: bytes, y: bytes, cmp: str, true_arm: bool,
             constant: int | None = None) -> bytes:
    """Return the select of ``x - k`` (``x + (-k)`` for a constant ``k``) guarded by ``cmp``."""
    t = g.g.nodes[x].type
    assert isinstance(t, IntType)
    if constant is None:
        diff = g.op("sub", x, k)
    else:
        diff = g.op("add", x, g.c(t, -constant))
    a, b = (x, k) if cmp in ("ge", "gt") else (k, x)  # "x >= k" or "k <= x" ...
    if not true_arm:
        a, b = b, a  # ... or its negation "k < x"-style with the arms swapped
    cond = g.op(cmp, a, b)
    return g.op("select", cond, diff, y) if true_arm else g.op("select", cond, y, diff)


def _exhaustive(before: Graph, after: Graph, t: IntType) -> None:
    """Assert both graphs agree on every pair of ``t`` inputs."""
    assert validate(after) == []
    pairs = list(itertools.product(range(t.min, t.max + 1), repeat=2))
    inputs = {"p": column([p for p, _ in pairs], t), "q": column([q for _, q in pairs], t)}
    assert results(before, "f", inputs, len(pairs)) == results(after, "f", inputs, len(pairs))


def _widths(graph: Graph, op: str) -> list[int]:
    return sorted(graph.nodes[n].type.flat_width for n in live(graph) if graph.nodes[n].op == op)


@pytest.mark.parametrize(("cmp", "true_arm"), FORMS)
@pytest.mark.parametrize("t", [U8, I8])
def test_a_guarded_difference_of_a_nibble_is_a_nibble_subtraction(cmp, true_arm, t):
    # x = p & 15, k = q & 7 (or q & 7 - 4 signed): taken, x - k lies in [0, 15 - lo(k)]
    def build(g, p):
        x = g.op("and", p[0], g.c(t, 15))
        k = g.op("and", p[1], g.c(t, 7))
        if t.signed:
            k = g.op("sub", k, g.c(t, 4))
        return _guarded(g, x, k, p[1], cmp, true_arm)

    before = graph_of([("p", t), ("q", t)], build)
    after = narrow(before)
    _exhaustive(before, after, t)
    hi = 15 + (4 if t.signed else 0)  # hi(x) - lo(k): u4 unsigned, u5 signed
    assert max(_widths(after, "sub")) == hi.bit_length() < t.width  # the arm, narrowed


@pytest.mark.parametrize(("cmp", "true_arm"), FORMS)
def test_the_optimisers_form_x_plus_minus_k_is_narrowed_too(cmp, true_arm):
    def build(g, p):
        x = g.op("shr", p[0], g.c(U8, 4))  # [0, 15]
        return _guarded(g, x, g.c(U8, 3), p[1], cmp, true_arm, constant=3)

    before = graph_of([("p", U8), ("q", U8)], build)
    after = narrow(before)
    _exhaustive(before, after, U8)
    assert _widths(after, "add") == [] and _widths(after, "sub") == [4]  # 15 - 3 = 12: u4


def test_the_wide_difference_stays_for_its_other_users():
    # the select's arm is narrowed by a new node; the result also reads the wide x - k
    def build(g, p):
        x = g.op("and", p[0], g.c(U8, 15))
        diff = g.op("sub", x, p[1])  # wraps: the other user reads all 8 bits
        k = p[1]
        sel = g.op("select", g.op("ge", x, k), diff, p[1])
        return g.op("xor", sel, diff)

    before = graph_of([("p", U8), ("q", U8)], build)
    after = narrow(before)
    _exhaustive(before, after, U8)
    assert _widths(after, "sub") == [4, 8]


def test_an_unguarded_or_mismatched_select_is_left_alone():
    def build(g, p):
        x, k = g.op("and", p[0], g.c(U8, 15)), p[1]
        swapped = g.op("select", g.op("ge", k, x), g.op("sub", x, k), p[1])  # k >= x: wraps
        other = g.op("select", g.op("ge", x, k), g.op("sub", k, x), p[0])  # not x - k
        return g.op("xor", swapped, other)

    before = graph_of([("p", U8), ("q", U8)], build)
    after = narrow(before)
    _exhaustive(before, after, U8)
    assert _widths(after, "sub") == _widths(before, "sub") == [8, 8]


def test_isqrt_rows_narrow_row_by_row():
    """The rows of the digit-by-digit square root: row i's remainder is at most twice the root
    (``kera.opt.relational``), so it has i + 2 bits where its interval alone has 2 (i + 1)."""
    program = build_program("isqrt16.kera", ISQRT16.encode())
    assert program.ok and program.graph is not None
    graph = optimize(program.graph, 2)
    # row 0's x - 1 is a 2-bit add; the last row's difference is dead (only its compare counts)
    assert _widths(graph, "sub") == [3, 4, 5, 6, 7, 8]
    xs = list(range(1 << 16))
    inputs = {"x": column(xs, uint(16))}
    assert results(graph, "isqrt16", inputs, len(xs)) == [math.isqrt(v) for v in xs]


ISQRT16 = """
#[top]
pub fn isqrt16(x: u16) -> u8 {
    let mut rem = 0u16;
    let mut root = 0u16;
    for i in 0..8 {
        rem = (rem << 2u16) | ((x >> (14 - 2 * i)) & 3);
        root = root << 1u16;
        let trial = (root << 1u16) | 1;
        if rem >= trial {
            rem = rem - trial;
            root = root | 1;
        }
    }
    root as u8
}
"""


@settings(max_examples=60, deadline=None)
@given(cmp_arm=st.sampled_from(FORMS), mask=st.integers(1, 2**20), kmask=st.integers(0, 2**20),
       bias=st.integers(-(2**20), 2**20), xs=st.lists(st.integers(0, 2**32 - 1), min_size=8,
                                                       max_size=8))
def test_narrowed_guarded_differences_keep_every_bit(cmp_arm, mask, kmask, bias, xs):
    cmp, true_arm = cmp_arm

    def build(g, p):
        x = g.op("and", p[0], g.c(U32, mask))
        k = g.op("add", g.op("and", p[1], g.c(U32, kmask)), g.c(U32, bias))
        return _guarded(g, x, k, p[0], cmp, true_arm)

    before = graph_of([("p", U32), ("q", U32)], build)
    after = narrow(before)
    assert validate(after) == []
    ps, qs = xs[:4] + [mask, 0, 2**32 - 1, mask], xs[4:] + [kmask, 0, kmask, 2**32 - 1]
    inputs = {"p": column(ps, U32), "q": column(qs, U32)}
    assert results(before, "f", inputs, 8) == results(after, "f", inputs, 8)
