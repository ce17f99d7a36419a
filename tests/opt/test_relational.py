"""The relational pass: restoring steps bounded by the selects built beside them, exactly."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kera.elaborate import build_program
from kera.interp import evaluate
from kera.ir.graph import Graph
from kera.ir.types import IntType
from kera.opt import Fixpoint, optimize
from kera.opt.relational import Relations, _cover, narrow_widths, relational
from tests.conftest import SHARED_KERNELS
from tests.opt.kit import assert_same_bits

_PRE = (Fixpoint(("fold+simplify+strength",)),)  # what runs before the pass in -O2


def _isqrt(bits: int, compare: str = "rem >= trial") -> str:
    """A digit-by-digit square root of the low ``bits`` (even) bits of a u32."""
    rows = bits // 2
    if compare == "rem >= trial":
        step = "if rem >= trial { rem = rem - trial; root = root | 1; }"
    else:  # the other arm order: the select's true arm is the one that keeps rem
        step = "if trial > rem { root = root; } else { rem = rem - trial; root = root | 1; }"
    return f"""
#[top]
pub fn isqrt(x: u32) -> (u32, u32) {{
    let mut rem = 0u32;
    let mut root = 0u32;
    for i in 0..{rows} {{
        let pair = (x >> ({bits - 2} - 2 * i)) & 3;
        rem = (rem << 2u32) | pair;
        root = root << 1u32;
        let trial = (root << 1u32) | 1;
        {step}
    }}
    (root, rem)
}}
"""


def _graph(source: str) -> Graph:
    program = build_program("t.kera", source)
    assert program.ok, [d.message for d in program.diagnostics]
    assert program.graph is not None
    return program.graph


def _run(graph: Graph, x: np.ndarray) -> list[np.ndarray]:
    out = evaluate(graph, "isqrt", {"x": x}, rows=len(x))
    return [np.asarray(v) for v in out]  # type: ignore[union-attr]


@pytest.mark.parametrize("compare", ["rem >= trial", "trial > rem"])
def test_square_root_rows_are_bounded_by_the_root_and_exact_on_every_input(compare):
    g = _graph(_isqrt(16, compare))
    pre = optimize(g, pipeline=_PRE)
    widths = sorted(narrow_widths(pre).values())
    assert widths == list(range(2, 10))  # 8 rows: rem of row i <= 2 root < 2**(i + 2)
    x = np.arange(1 << 16, dtype=np.uint64)  # every input the rows read
    want = _run(g, x)
    got = _run(optimize(g, 2), x)
    assert all(np.array_equal(w, v) for w, v in zip(want, got, strict=True))
    assert np.array_equal(want[0], np.floor(np.sqrt(x.astype(np.float64))).astype(np.uint64))
    subs = [n.type for n in optimize(g, 2).nodes.values() if n.op == "sub"]
    assert all(isinstance(t, IntType) and t.width <= 10 for t in subs), subs


def test_each_row_s_remainder_is_at_most_twice_its_root():
    pre = optimize(_graph(_isqrt(12)), pipeline=_PRE)
    rel = Relations(pre)
    seen = 0
    for nid in narrow_widths(pre):
        bounds = rel.bounds(nid)
        cond = pre.nodes[nid].inputs[0]
        sibling = [s for s in bounds if s is not None and s != nid
                   and pre.nodes[s].op == "select" and pre.nodes[s].inputs[0] == cond]
        assert [bounds[s] for s in sibling] == [(Fraction(2), Fraction(0))]
        seen += 1
    assert seen == 6  # 6 rows, each remainder live (the last one is a result)


def test_the_shared_isqrt32_kernel_is_narrowed_to_its_root_s_width():
    source = (SHARED_KERNELS / "peers" / "isqrt32.kera").read_text()
    g = _graph(source)
    widths = sorted(narrow_widths(optimize(g, pipeline=_PRE)).values())
    assert widths == list(range(2, 17))
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.integers(0, 1 << 32, 4000, dtype=np.uint64),
                        np.array([0, 1, 2, 3, 4, (1 << 32) - 1, 1 << 31, (1 << 32) - 2,
                                  65535 * 65535, 65536 * 65536 - 1, 65535 * 65535 - 1],
                                 dtype=np.uint64)])
    want = evaluate(g, "isqrt32", {"x": x}, rows=len(x))
    got = evaluate(optimize(g, 2), "isqrt32", {"x": x}, rows=len(x))
    assert np.array_equal(np.asarray(want), np.asarray(got))


def test_a_pass_without_a_relation_to_prove_leaves_the_graph_as_it_is():
    g = optimize(_graph("#[top]\npub fn f(a: u8, b: u8) -> u8 {\n"
                        "    if a >= b { a - b } else { a }\n}\n"), pipeline=_PRE)
    assert relational(g) is g


def test_the_line_through_the_branches_is_the_tightest_sound_one():
    # row 0 of a square root: rem <= 2 when root = 1, rem <= 0 when root = 0 -> rem <= 2 root
    assert _cover(((Fraction(0), Fraction(2), 0, 1), (Fraction(0), Fraction(0), 0, 0))) \
        == (Fraction(2), Fraction(0))
    # later rows: rem <= 4 s + 2 where root = 2 s + 1, rem <= 4 s where root = 2 s
    assert _cover(((Fraction(4), Fraction(2), 2, 1), (Fraction(4), Fraction(0), 2, 0))) \
        == (Fraction(2), Fraction(0))
    # a bound that grows with s where the sibling is a constant: no line covers it
    assert _cover(((Fraction(1), Fraction(0), 0, 1), (Fraction(0), Fraction(0), 0, 0))) is None


@st.composite
def _recurrences(draw) -> tuple[str, int]:
    """Restoring recurrences, right and wrong: digits of 1-3 bits, trials ``root << t | c``,
    either compare, and results that read the remainder, the root or both."""
    width = draw(st.sampled_from([8, 16, 32]))
    digit = draw(st.integers(1, 3))
    rows = draw(st.integers(1, max(1, min(8, width // digit))))
    shift_t = draw(st.integers(0, 3))
    c = draw(st.integers(0, 3))
    grow = draw(st.integers(0, 2))
    flip = draw(st.booleans())
    result = draw(st.sampled_from(["root", "rem", "rem ^ root", "rem + root"]))
    u = f"u{width}"
    top = digit * (rows - 1)
    step = ("if trial > rem { root = root; } else { rem = rem - trial; root = root | 1; }"
            if flip else "if rem >= trial { rem = rem - trial; root = root | 1; }")
    source = f"""
#[top]
pub fn isqrt(x: {u}) -> {u} {{
    let mut rem = 0{u};
    let mut root = 0{u};
    for i in 0..{rows} {{
        let pair = (x >> ({top} - {digit} * i)) & {(1 << digit) - 1};
        rem = (rem << {digit}{u}) | pair;
        root = root << {grow}{u};
        let trial = (root << {shift_t}{u}) | {c};
        {step}
    }}
    {result}
}}
"""
    return source, width


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_recurrences(), seed=st.integers(0, 1 << 30))
def test_restoring_recurrences_right_or_wrong_keep_their_bits(case, seed):
    source, width = case
    g = _graph(source)
    after = relational(optimize(g, pipeline=_PRE))
    assert relational(after).fingerprint() == after.fingerprint(), "not idempotent"
    assert_same_bits(g, after, rows=200, seed=seed)
    assert_same_bits(g, optimize(g, 2), rows=200, seed=seed)
    if width == 8:  # every input
        x = np.arange(256, dtype=np.uint64)
        want = evaluate(g, "isqrt", {"x": x}, rows=256)
        got = evaluate(optimize(g, 2), "isqrt", {"x": x}, rows=256)
        assert np.array_equal(np.asarray(want), np.asarray(got))


def test_a_64_bit_root_narrows_all_its_32_rows():
    """Thirty-two rows, each bounded by its root (the analysis recurses about three levels a
    row, within ``_MAX_DEPTH`` from either end), and the root exact on random inputs."""
    source = (SHARED_KERNELS / "peers" / "isqrt32.kera").read_text()
    source = (source.replace("u32", "u64").replace("0..16", "0..32")
              .replace("(30 - 2 * i)", "(62 - 2 * i)").replace("root as u16", "root as u32")
              .replace("-> u16", "-> u32"))
    g = _graph(source)
    assert sorted(narrow_widths(optimize(g, pipeline=_PRE)).values()) == list(range(2, 33))
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1 << 63, 2000, dtype=np.uint64) * np.uint64(2) + rng.integers(
        0, 2, 2000, dtype=np.uint64)
    got = np.asarray(evaluate(optimize(g, 2), "isqrt32", {"x": x}, rows=len(x)))
    assert [int(r) for r in got] == [math.isqrt(int(v)) for v in x]
