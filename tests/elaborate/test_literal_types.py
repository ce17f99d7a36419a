"""Unsuffixed literals take the type their context requires (LANGUAGE.md), on every target.

In `a ^ b` a literal `a` takes `b`'s type, also inside a context that accepts any unsigned
type (shift amounts, indices, ...); the `u32` default applies only where nothing else fixes
the type. The literals' types are read off the built graph, and the programs give the
interpreter's bits on the CPU, WASM and RTL targets.
"""

from __future__ import annotations

import random

import pytest

from kera.elaborate import build_program
from kera.hls.pipeline import single_stage
from kera.ir.graph import Graph
from kera.ir.types import Type, sint, uint
from kera.sim.parity import edge_values
from kera.testing import assert_parity
from tests.conftest import needs_verilator

# The three programs of issue 14, once rejected, as one top function (one RTL build).
ISSUE_14 = """\
#[top]
fn f(x: u32, y: u32, m: u8, w: u32) -> (u32, u8, u32) {
    let T = [3u8, 5u8, 7u8, 11u8];
    let s = x >> (0x1e ^ (y as u5));
    let v = T[0b10 | (m as u2)];
    let z = x >> (11391964636487421071 + (w as u64));
    (s, v, z)
}
"""


def _graph(src: str) -> Graph:
    program = build_program("t.kera", src)
    assert program.ok, [d.message for d in program.diagnostics]
    assert program.graph is not None
    return program.graph


def _const_types(graph: Graph, value: int) -> set[Type]:
    return {n.type for n in graph.nodes.values() if n.op == "const" and n.attr("value") == value}


def test_the_issue_14_literals_take_their_siblings_types() -> None:
    graph = _graph(ISSUE_14)
    assert _const_types(graph, 0x1E) == {uint(5)}
    assert _const_types(graph, 0b10) == {uint(2)}
    assert _const_types(graph, 11391964636487421071) == {uint(64)}


def _fn(body: str, params: str = "x: u32, y: u8, c: bool", ret: str = "u32") -> str:
    return f"#[top]\nfn f({params}) -> {ret} {{\n    {body}\n}}\n"


@pytest.mark.parametrize(
    ("body", "value", "ty"),
    [
        ("x >> 3", 3, uint(32)),  # nothing else fixes it: the u32 default
        ("x >> (1 + 2)", 2, uint(32)),
        ("x >> ((1 + 2) ^ (y as u5))", 2, uint(5)),  # nested: the pending `1 + 2` takes u5
        ("x >> (if c { 9 } else { 4 } - (y as u4))", 9, uint(4)),
        ("x >> -(3 - (y as i6)) as u6", 3, sint(6)),
        ("x << min(5, y as u3)", 5, uint(3)),
        ("x << popcount(6) + (y as u7)", 6, uint(7)),
        ("rotl(x, 2 * (y as u6))", 2, uint(6)),
        ("rotl(x, 2)", 2, uint(32)),
        ("x >> rotl(12, y)", 12, uint(32)),  # nor does a rotate's amount
        ("x >> (1 << (y as u3))", 1, uint(32)),  # a shift's amount gives the left no type
        ("let a = [x, x, x, x]; a[3 - (y as u2)]", 3, uint(2)),
        ("let mut s = x; for i in 1..(5 as u3) { s += i as u32; } s", 1, uint(3)),
        ("let mut s = x; for i in (2 - 1)..4 { s += i; } s", 2, uint(32)),
        ("(slice::<(1 + 2), 8>(x) as u32) + 77", 77, uint(32)),
        ("let b = (7 + 1) < y; if b { x } else { 0 }", 7, uint(8)),
        ("(99 + (y as u16)) as u32", 99, uint(16)),
        ("(7 + 1) as u32", 7, uint(32)),
    ],
)
def test_a_literal_takes_the_type_its_context_gives(body: str, value: int, ty: Type) -> None:
    assert ty in _const_types(_graph(_fn(body)), value)


@pytest.mark.parametrize(
    ("src", "message"),
    [
        (_fn("let a = 1 + 2; x"), "cannot infer the type of the literal `1`"),
        (_fn("let a = if c { 1 } else { 2 }; x"),
         "cannot infer the type of this `if`; add a suffix to a literal"),
        (_fn("x >> (255 + (y as u7))"), "literal `255` does not fit in `u7` (0..=127)"),
        (_fn("(widening_mul(1, 2) as u32)"), "cannot infer the type of the literal `1`"),
        (_fn("x >> (-(1 + 2))"), "cannot negate `u32`: `-` is allowed on signed types only"),
        (_fn("let b = 1 < 2; x"), "cannot infer the type of the literal `1`"),
        (_fn("if (1 + 2) && c { x } else { x }"), "expected `bool`, found an integer literal"),
        (_fn("let s = slice::<1, 2>; x"),
         "`slice::<...>` is a function; call it with `slice::<...>(...)`"),
    ],
)
def test_literals_nothing_can_type_are_errors(src: str, message: str) -> None:
    program = build_program("t.kera", src)
    assert any(message in d.message for d in program.diagnostics), program.diagnostics


def test_the_issue_14_programs_agree_on_cpu_and_wasm(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "issue14.kera"
    path.write_text(ISSUE_14, encoding="utf-8")
    report = assert_parity(path, targets=["interp", "cpu", "wasm"], vectors=3000, seed=14)
    assert report.vectors >= 3000 and report.edge_vectors > 0


@needs_verilator
def test_the_issue_14_programs_agree_in_rtl_simulation() -> None:
    from kera.sim import simulate

    graph = _graph(ISSUE_14)
    params, _ = graph.signature("f")
    rng = random.Random(14)
    edges = {name: edge_values(t) for name, t in params}
    rows = [{name: edges[name][(k * 5 + i) % len(edges[name])] for i, (name, _) in
             enumerate(params)} for k in range(64)]
    rows += [{name: rng.getrandbits(t.width) for name, t in params} for _ in range(200)]
    result = simulate(single_stage(graph, "f"), rows)
    assert result.passed, "\n".join(result.mismatches[:5])
    assert result.outputs == result.expected and len(result.outputs) == len(rows)
