"""The type checker's diagnostics: exact messages, positions and notes."""

from __future__ import annotations

import pytest

from kera.diagnostics import SourceFile, render_all
from kera.elaborate import Builder, build_program
from kera.elaborate.exprs import ElaborationBug
from kera.syntax import SyntaxKind, parse


def errors(src: str) -> list[str]:
    program = build_program("t.kera", src, need_top=False)
    return [d.message for d in program.diagnostics if d.severity.value == "error"]


CASES = [
    ("fn f(a: u8) -> u16 { a }", "mismatched types: expected `u16`, found `u8`"),
    ("fn f(a: u8, b: u16) -> u16 { a + b }", "mismatched types: `u8` + `u16` (no implicit conversions)"),
    ("fn f() -> u8 { 300 }", "literal `300` does not fit in `u8` (0..=255)"),
    ("fn f() -> i8 { 128i8 }", "literal `128` does not fit in `i8` (-128..=127)"),
    ("fn f() -> u32 { let x = 5; x }", "cannot infer the type of the literal `5`; add a suffix (e.g. `5u32`) or a type annotation"),
    ("fn f(a: u8) -> u8 { -a }", "cannot negate `u8`: `-` is allowed on signed types only"),
    ("fn f(a: bool) -> bool { a + a }", "cannot apply `+` to `bool`: arithmetic needs integers"),
    ("fn f(a: bool) -> bool { a < a }", "cannot order `bool` values with `<`"),
    ("fn f(a: [u8; 2]) -> bool { a == a }", "cannot compare `[u8; 2]` values with `==`: compare arrays and tuples by element"),
    ("fn f(a: u8) -> u8 { a << -1i8 }", "shift amount must be an unsigned integer, not `i8`"),
    ("fn f(a: u8) -> u8 { a = 1; a }", "cannot assign twice to immutable variable `a`"),
    ("fn f(a: u8) -> u8 { b }", "cannot find `b` in this scope"),
    ("fn f(a: u8) -> u8 { g(a) }", "cannot find function `g` in this file"),
    ("fn f(a: u8) -> u8 { f(a) }", "recursive call to `f`: every call is inlined, so recursion is not allowed"),
    ("fn f(a: u8) -> u8 { a[0] }", "cannot index into a value of type `u8`"),
    ("fn f(a: (u8, u8)) -> u8 { a.2 }", "no field `2` on `(u8, u8)`: it has 2 fields"),
    ("fn f(a: u65) -> u8 { 0 }", "integer width must be in 1..=64, not 65"),
    ("fn f(a: Foo) -> u8 { 0 }", "cannot find type `Foo` in this file"),
    ("#[inline] fn f() -> u8 { 0 }", "unknown attribute `inline` (known: `top`, `pipeline`)"),
    ("fn f(n: u8) -> u8 { let mut s = 0u8; for i in 0..n { s += 1; } s }", "loop bound must be known at compile time"),
    ("fn f(a: u8) -> u8 { if a { a } else { 0 } }", "mismatched types: expected `bool`, found `u8`"),
    ("fn f(a: u8, c: bool) -> u8 { if c { a } else { c } }", "`if` and `else` have different types: `u8` and `bool`"),
    ("fn f(a: u8) -> u8 { return a; a }", "`return` is allowed only as the last statement of a function body"),
    ("fn f(a: u8) -> u8 { rotl(a) }", "`rotl` takes 2 arguments, but 1 was given"),
    ("fn f(a: u8) -> u8 { slice::<4, 8>(a) as u8 }", "`slice::<4, 8>` reads bits 4..12 of a 8-bit value"),
    ("fn f(a: u40) -> u64 { concat(a, a) }", "`concat` result would be 80 bits; at most 64"),
    ("fn f(a: u64) -> u64 { widening_mul(a, a) as u64 }", "`widening_mul` operands are at most 32 bits, not `u64`"),
    ("const A: u8 = B; const B: u8 = A; fn f() -> u8 { A }", "constant `A` depends on itself"),
    ("fn f(a: u8, a: u8) -> u8 { a }", "parameter `a` is declared more than once"),
    ("#[top] fn f(c: u1, c: bool) -> u1 { c }", "parameter `c` is declared more than once"),
    ("fn f() -> u8 { 1 } fn f() -> u8 { 2 }", "`f` is defined more than once"),
    ("fn f(a: bool) -> u8 { a as bool }", "cannot cast to `bool`: `as` converts to integer types only"),
    ("fn f(a: [u8; 0]) -> u8 { 0 }", "array length must be at least 1, not 0"),
    ("#[pipeline(ii = 0)] fn f() -> u8 { 0 }", "`ii` must be at least 1, not 0"),
    ("fn f(w: u32) -> u32 { for i in 0..(w > 3) { } w }",
     "a loop variable must be an integer, not `bool`"),  # an IndexError before (no `: T`)
    ("fn f(w: u32) -> u32 { for i in true..false { } w }",
     "a loop variable must be an integer, not `bool`"),
    ("fn f(a: [i16; 4294967295]) -> i16 { 0 }",
     "`[i16; 4294967295]` holds 4,294,967,295 scalars; a value holds at most 1,048,576 (2^20)"),
    ("fn f(a: [[u8; 1024]; 1025]) -> u8 { 0 }",
     "`[[u8; 1024]; 1025]` holds 1,049,600 scalars; a value holds at most 1,048,576 (2^20)"),
    ("fn f() -> u8 { let c = [[0u8; 4]; 4294967295]; 0 }",
     "`[[u8; 4]; 4294967295]` holds 17,179,869,180 scalars; a value holds at most 1,048,576 "
     "(2^20)"),
    ("#[pipeline(ii = 4294967295)] fn f() -> u8 { 0 }",
     "`ii` must be at most 1048576 (2^20), not 4294967295: a longer interval shares no more "
     "operators"),
    ("fn f(a: u8) -> u8 { if a > 1 { 5u8 } a }", "`if` without `else` has the type `()`; its block must not end in a value"),
]


@pytest.mark.parametrize(("src", "message"), CASES, ids=[m[:40] for _, m in CASES])
def test_type_error_message(src, message):
    assert message in errors(src)


def test_all_errors_in_one_run_with_notes():
    src = "fn f(a: u8) -> u16 {\n    let x: u16 = a;\n    let y: u8 = 999;\n    x\n}\n"
    program = build_program("t.kera", src, need_top=False)
    text = render_all(program.source, program.diagnostics)
    assert "t.kera:2:18: error: mismatched types: expected `u16`, found `u8`" in text
    assert "t.kera:2:12: note: expected `u16` because of this annotation" in text
    assert "t.kera:3:17: error: literal `999` does not fit in `u8` (0..=255)" in text


def test_an_unknown_index_into_a_scalar_place_is_one_error_not_a_crash():
    # The poisoned index used to reach the assignment, which read `.elem` of `u32`.
    assert errors("fn f(x: u32) -> u32 { let mut y = x; y[nope] = 1; y }") == [
        "cannot find `nope` in this scope"
    ]
    assert errors("fn f(x: (u8, u8)) -> (u8, u8) { let mut y = x; y.0[nope] = 1; y }") == [
        "cannot find `nope` in this scope"
    ]


def test_top_selection_errors():
    src = "pub fn a() -> u8 { 0 } pub fn b() -> u8 { 1 }"
    assert "no function is marked `#[top]`; pass --top (candidates: a, b)" in [
        d.message for d in build_program("t.kera", src).diagnostics
    ]
    assert build_program("t.kera", src, top="b").ok
    assert "no function `c` in this file; candidates: a, b" in [
        d.message for d in build_program("t.kera", src, top="c").diagnostics
    ]


def test_an_unhandled_node_kind_is_a_compiler_bug_naming_the_kind():
    """The walk never returns a silent poisoned value for a tree it has no rule for."""
    src = b"fn f(a: u8) -> u8 { a }"

    def walk(node):
        yield node
        for child in node.child_nodes():
            yield from walk(child)

    type_node = next(n for n in walk(parse(src).tree) if n.kind == SyntaxKind.NAME_TYPE)
    with pytest.raises(ElaborationBug, match=r"no rule to elaborate a `NAME_TYPE` node at bytes"):
        Builder(SourceFile("t.kera", src)).expr(type_node, None)


def test_a_generic_name_without_a_call_is_an_error_not_silence():
    assert errors("fn f(a: u8) -> u8 { let b = slice::<1, 2>; a }") == [
        "`slice::<...>` is a function; call it with `slice::<...>(...)`"]
