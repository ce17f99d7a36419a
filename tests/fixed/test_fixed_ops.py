"""Exact arithmetic, comparisons and built-ins on fixed point; their result types (FIXED.md)."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from kera import check_source, load, run
from kera.check import typeck
from kera.ir.types import FixedType
from tests.fixed import model

PAIRS = [
    ((4, 2, True), (3, 0, False)),
    ((3, -1, True), (4, 5, True)),
    ((3, 3, False), (2, 4, False)),
]
IDS = [f"{model.type_text(*a)}-{model.type_text(*b)}" for a, b in PAIRS]


def fx(w: int, i: int, s: bool = True) -> FixedType:
    return FixedType(w, s, i)


@pytest.mark.parametrize(
    "op, a, b, want",
    [
        ("+", fx(16, 2), fx(8, 4), fx(19, 5)),
        ("+", fx(8, 4, False), fx(8, 2, False), fx(11, 5, False)),
        ("-", fx(8, 4, False), fx(8, 2, False), fx(11, 5)),
        ("+", fx(8, 4), fx(8, 4, False), fx(10, 6)),  # ufx<8, 4> counts as fx<9, 5>
        ("*", fx(16, 1), fx(8, 3, False), fx(24, 4)),
        ("*", fx(8, 2, False), fx(8, 2, False), fx(16, 4, False)),
    ],
)
def test_result_types(op: str, a: FixedType, b: FixedType, want: FixedType) -> None:
    assert typeck.fixed_binary_result(op, a, b) == want
    assert typeck.fixed_neg_result(fx(8, 3, False)) == fx(9, 4)
    assert typeck.fixed_abs_result(fx(8, 3)) == fx(8, 3, False)


@pytest.mark.parametrize("a, b", PAIRS, ids=IDS)
def test_arithmetic_and_comparisons_exactly(a: tuple, b: tuple) -> None:
    ta, tb = (model.type_text(*f)[: model.type_text(*f).index(", trn")] + ">" for f in (a, b))
    exprs = ["x + y", "x - y", "x * y", "-x", "abs(x)", "x < y", "x == y", "x >= y", "x != y"]
    src = (f"#[top]\nfn f(x: {ta}, y: {tb}) -> _ {{ ({', '.join(exprs)}) }}\n")
    program = check_source(text=src.replace("-> _", "-> ()"), name="ops.kera")
    found = {d.message for d in program.diagnostics}
    ret = next(m for m in found if "expected `()`" in m).split("found `")[1].rstrip("`")
    loaded = load(text=src.replace("-> _", f"-> {ret}"), name="ops.kera")
    xs, ys = model.values(*a), model.values(*b)
    rows = list(product(xs, ys))
    got = run(loaded, [{"x": model.decimal(x), "y": model.decimal(y)} for x, y in rows])
    for (x, y), row in zip(rows, got, strict=True):
        want = [x + y, x - y, x * y, -x, abs(x), x < y, x == y, x >= y, x != y]
        assert [Fraction(v) if isinstance(v, str) else v for v in row] == want, (x, y)


def test_min_max_bits_from_bits() -> None:
    src = ("#[top]\nfn f(x: fx<6, 2>, y: fx<6, 2>) -> (fx<6, 2>, fx<6, 2>, u6, fx<6, 2>) "
           "{ (min(x, y), max(x, 0.5), bits(x), from_bits::<fx<6, 2> >(bits(y))) }\n")
    got = run(load(text=src, name="mm.kera"), [{"x": "-1.25", "y": "1.5"}])
    assert got == [["-1.25", "0.5", 44, "1.5"]]  # raw -20 is 44 as u6


def _errors(src: str) -> list[tuple[str, list[str]]]:
    program = check_source(text=src, name="bad.kera")
    return [(d.message, [n.message for n in d.notes]) for d in program.diagnostics]


@pytest.mark.parametrize(
    "body, message, note",
    [
        ("x / x", "`/` is not defined on fixed-point values", "from_bits"),
        ("x << 1", "`<<` is not defined on fixed-point values", "bits(x)"),
        ("x & x", "`&` is not defined on fixed-point values", "bits(x)"),
        ("x + 1u8", "integers mix with fixed point only through `as`", "as fx<8, 4>"),
        ("x + 0.03", "literal `0.03` is not exactly representable in `fx<8, 4>`",
         "the nearest values are 0 and 0.0625; write `0.03 as fx<8, 4, rnd>`"),
        ("x + 9", "literal `9` is not exactly representable in `fx<8, 4>`", "to saturate"),
        ("x as fx<8, 4, rnd_cnv>", "unknown quantisation mode `rnd_cnv`",
         "did you mean `rnd_conv`"),
        ("x as fx<8, 4, rnd, saturate>", "unknown overflow mode `saturate`", "`sat_sym`"),
        ("x as fx<65, 4>", "a fixed-point width must be in 1..=64, not 65", "two words"),
        ("(x as fx<40, 4>) * (x as fx<40, 4>)", "would be 80 bits wide", "convert an operand"),
        ("(x as fx<16, 127>) + (x as fx<16, 127>)", "`fx<16, 127>` + `fx<16, 127>` would have "
         "128 integer bits; the limit is -128..=127", "convert an operand"),
        ("-(x as fx<16, 127>)", "`-` of `fx<16, 127>` would have 128 integer bits",
         "convert it first"),
    ],
)
def test_refusals_are_diagnostics_with_a_note(body: str, message: str, note: str) -> None:
    errors = _errors(f"fn f(x: fx<8, 4>) -> () {{ let _y = {body}; }}\n")
    assert any(message in m and any(note in n for n in notes) for m, notes in errors), errors


@pytest.mark.parametrize("body, message", [
    ("b * b", "`fx<8, -100>` * `fx<8, -100>` would have -200 integer bits; the limit is "
     "-128..=127"),
    ("a < a", "comparing `fx<8, 127>` with `fx<8, 127>` would have 128 integer bits"),
    ("a - a", "`fx<8, 127>` - `fx<8, 127>` would have 128 integer bits"),
])
def test_a_result_past_the_integer_bits_a_format_has_is_refused(body: str, message: str) -> None:
    """`I` is one byte (-128..=127): an exact sum or product past it was a `ValueError` (exit
    70) in the type rule; found by mutating fir_q15 (`fx<16, 127i8>`)."""
    errors = _errors(f"fn f(a: fx<8, 127>, b: fx<8, -100>) -> () {{ let _y = {body}; }}\n")
    assert any(message in m and any("convert an operand" in n for n in notes)
               for m, notes in errors), errors


def test_compound_assignment_is_refused() -> None:
    errors = _errors("fn f(x: fx<8, 4>) -> fx<8, 4> { let mut a = x; a += x; a }\n")
    assert any("compound assignment" in m and any("as fx<8, 4>" in n for n in notes)
               for m, notes in errors), errors


def test_formats_and_modes_change_the_fingerprint() -> None:
    def fp(t: str) -> str:
        return load(text=f"#[top]\nfn f(x: {t}) -> {t} {{ x }}\n", name="fp.kera").fingerprint

    prints = {fp(t) for t in ("fx<16, 2>", "fx<16, 3>", "ufx<16, 2>", "fx<16, 2, rnd>",
                              "fx<16, 2, trn, sat>", "i16")}
    assert len(prints) == 6


def test_wrapping_a_sum_is_the_sum_modulo_the_width() -> None:
    """`(a + b) as T` with `wrap` and no rounding is computed in T: still the exact model's."""
    src = ("#[top]\nfn f(x: fx<4, 2>, y: ufx<3, 1>) -> "
           "(fx<4, 2>, fx<3, 1>, ufx<2, 0>, fx<4, 2, trn, sat>) "
           "{ ((x + y) as fx<4, 2>, (x - y) as fx<3, 1>, (x + y) as ufx<2, 0>, "
           "(x + y) as fx<4, 2, trn, sat>) }\n")
    xs, ys = model.values(4, 2, True), model.values(3, 1, False)
    rows = list(product(xs, ys))
    got = run(load(text=src, name="wrap.kera"),
              [{"x": model.decimal(x), "y": model.decimal(y)} for x, y in rows])
    for (x, y), row in zip(rows, got, strict=True):
        want = [model.convert(x + y, 4, 2, True), model.convert(x - y, 3, 1, True),
                model.convert(x + y, 2, 0, False), model.convert(x + y, 4, 2, True, "trn", "sat")]
        assert [Fraction(v) for v in row] == want, (x, y)
