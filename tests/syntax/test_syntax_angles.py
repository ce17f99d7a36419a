"""A `>>` (or `>>=`, `>=`) that closes nested generic argument lists is split by the parser."""

from __future__ import annotations

import pytest

from kera import load
from kera.syntax import SyntaxKind as K
from kera.syntax import parse


@pytest.mark.parametrize(
    "src",
    [
        "fn f(u: u16) -> fx<16, 1> { from_bits::<fx<16, 1>>(u) }",
        "fn f(u: u16) -> fx<16, 1> { let a: fx<16, 1>= from_bits::<fx<16,1>>(u); a }",
        "fn f(u: u16) -> u16 { let mut w = u; w >>= 2; w >> 1 }",
    ],
)
def test_the_tree_keeps_the_text_and_has_no_errors(src: str) -> None:
    result = parse(src)
    assert result.diagnostics == []
    assert result.tree.text() == src


def test_a_split_shift_becomes_two_closing_angles() -> None:
    src = "fn f(u: u16) -> fx<16, 1> { from_bits::<fx<16, 1>>(u) }"
    tokens = [t for t in parse(src).tree.tokens() if t.kind in (K.GT, K.SHR)]
    assert [t.kind for t in tokens] == [K.GT, K.GT, K.GT]
    # the shift operator elsewhere stays one token
    shift = "fn f(u: u16) -> u16 { u >> 1 }"
    assert [t.kind for t in parse(shift).tree.tokens() if t.kind in (K.GT, K.SHR)] == [
        K.SHR
    ]


def test_nested_generic_close_evaluates() -> None:
    text = "#[top]\nfn f(u: u16) -> fx<16, 1> { from_bits::<fx<16, 1>>(u) }\n"
    assert load(text=text, name="nest.kera").fingerprint == load(
        text=text.replace(">>(", "> >("), name="nest.kera").fingerprint


def test_an_error_after_a_split_points_at_the_right_byte() -> None:
    src = "fn f(u: u16) -> fx<16, 1> { from_bits::<fx<16, 1>>(u) + }"
    (diag,) = parse(src).diagnostics
    assert src[diag.span.start:] == "}"
