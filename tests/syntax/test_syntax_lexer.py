"""Lexer: token kinds, byte offsets, literals, Unicode, invalid UTF-8 and lexical errors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kera.syntax import SyntaxKind as K
from kera.syntax import lex, parse_int_literal
from kera.syntax.lexer import _lex_general, parse_frac_literal


def kinds(src: str | bytes, trivia: bool = False) -> list[K]:
    data = src.encode() if isinstance(src, str) else src
    return [t.kind for t in lex(data).tokens if trivia or not t.kind.is_trivia()]


def messages(src: str | bytes) -> list[tuple[str, int, int]]:
    data = src.encode() if isinstance(src, str) else src
    return [(d.message, d.span.start, d.span.end) for d in lex(data).diagnostics]


def test_tokens_carry_text_and_byte_spans() -> None:
    tokens = lex(b"fn f(x: u8) {}").tokens
    assert [(t.kind, t.text, t.start, t.end) for t in tokens[:6]] == [
        (K.FN_KW, "fn", 0, 2),
        (K.WHITESPACE, " ", 2, 3),
        (K.IDENT, "f", 3, 4),
        (K.L_PAREN, "(", 4, 5),
        (K.IDENT, "x", 5, 6),
        (K.COLON, ":", 6, 7),
    ]
    assert tokens[0].span.end == 2


def test_every_punctuation_token() -> None:
    src = "( ) [ ] { } , ; : :: . .. -> # = == != < <= > >= + - * / % & && | || ^ ! << >> "
    src += "+= -= *= /= %= &= |= ^= <<= >>= _"
    assert kinds(src) == [
        K.L_PAREN, K.R_PAREN, K.L_BRACK, K.R_BRACK, K.L_CURLY, K.R_CURLY, K.COMMA, K.SEMI,
        K.COLON, K.COLON2, K.DOT, K.DOT2, K.ARROW, K.POUND, K.EQ, K.EQ2, K.NEQ, K.LT, K.LTEQ,
        K.GT, K.GTEQ, K.PLUS, K.MINUS, K.STAR, K.SLASH, K.PERCENT, K.AMP, K.AMP2, K.PIPE,
        K.PIPE2, K.CARET, K.BANG, K.SHL, K.SHR, K.PLUSEQ, K.MINUSEQ, K.STAREQ, K.SLASHEQ,
        K.PERCENTEQ, K.AMPEQ, K.PIPEEQ, K.CARETEQ, K.SHLEQ, K.SHREQ, K.UNDERSCORE,
    ]


def test_longest_match_without_spaces() -> None:
    assert kinds("a<<=b>>c..d::<e>->f") == [
        K.IDENT, K.SHLEQ, K.IDENT, K.SHR, K.IDENT, K.DOT2, K.IDENT, K.COLON2, K.LT, K.IDENT,
        K.GT, K.ARROW, K.IDENT,
    ]
    assert kinds("0..8") == [K.INT_LITERAL, K.DOT2, K.INT_LITERAL]
    assert kinds("t.0.1") == [K.IDENT, K.DOT, K.INT_LITERAL, K.DOT, K.INT_LITERAL]


def test_keywords_reserved_words_and_underscore() -> None:
    assert kinds("fn pub let mut const for in if else return as true false type reg mem") == [
        K.FN_KW, K.PUB_KW, K.LET_KW, K.MUT_KW, K.CONST_KW, K.FOR_KW, K.IN_KW, K.IF_KW,
        K.ELSE_KW, K.RETURN_KW, K.AS_KW, K.TRUE_KW, K.FALSE_KW, K.TYPE_KW, K.REG_KW, K.MEM_KW,
    ]
    reserved = "struct enum match while loop break continue proc use mod impl trait"
    assert kinds(reserved) == [K.RESERVED_KW] * 12
    assert kinds("_ __ _x x_ fnx u8 i64 bool") == [K.UNDERSCORE] + [K.IDENT] * 7
    assert lex(b"while").diagnostics == []  # the parser reports reserved words


def test_trivia_is_kept() -> None:
    src = "a // line\n/* block /* nested */ */\tb"
    assert kinds(src, trivia=True) == [
        K.IDENT, K.WHITESPACE, K.LINE_COMMENT, K.WHITESPACE, K.BLOCK_COMMENT, K.WHITESPACE,
        K.IDENT,
    ]
    assert [t.text for t in lex(src.encode()).tokens][4] == "/* block /* nested */ */"


@pytest.mark.parametrize(
    ("src", "comment"),
    [
        ("/**/x", "/**/"),
        ("/***/x", "/***/"),
        ("/*/ */x", "/*/ */"),
        ("/* a **/x", "/* a **/"),
        ("/* a *//* b */", "/* a */"),
        ("/* /* */ */x", "/* /* */ */"),
        ("/*/**/*/x", "/*/**/*/"),
    ],
)
def test_block_comment_boundaries(src: str, comment: str) -> None:
    tokens = lex(src.encode()).tokens
    assert tokens[0].kind == K.BLOCK_COMMENT
    assert tokens[0].text == comment
    assert lex(src.encode()).diagnostics == []


def test_unterminated_block_comments() -> None:
    assert messages("x /* never") == [("unterminated block comment", 2, 4)]
    assert messages("/* /* */") == [("unterminated block comment", 0, 2)]
    assert messages("/* a //*/") == [("unterminated block comment", 0, 2)]
    assert kinds("x /* /* */", trivia=True)[-1] == K.BLOCK_COMMENT


@pytest.mark.parametrize(
    ("text", "value", "suffix"),
    [
        ("0", 0, None),
        ("123", 123, None),
        ("1_000", 1000, None),
        ("1_", 1, None),
        ("0x7f", 127, None),
        ("0xFF_ff", 0xFFFF, None),
        ("0b1010", 10, None),
        ("0o17", 15, None),
        ("255u8", 255, (False, 8)),
        ("3i5", 3, (True, 5)),
        ("0x1_0000u17", 65536, (False, 17)),
        ("0xfei8", 0xFE, (True, 8)),
        ("0b1u1", 1, (False, 1)),
        ("18446744073709551615u64", 2**64 - 1, (False, 64)),
        ("99999999999999999999999", 99999999999999999999999, None),
    ],
)
def test_parse_int_literal(text: str, value: int, suffix: tuple[bool, int] | None) -> None:
    assert lex(text.encode()).diagnostics == []
    assert kinds(text) == [K.INT_LITERAL]
    assert parse_int_literal(text) == (value, suffix)


@pytest.mark.parametrize(
    ("text", "message", "start", "end"),
    [
        ("0x", "expected digits after `0x`", 0, 2),
        ("0b_", "expected digits after `0b`", 0, 3),
        ("0ou8", "expected digits after `0o`", 0, 4),
        ("12u65", "integer suffix width must be in 1..=64, not 65", 2, 5),
        ("1u0", "integer suffix width must be in 1..=64, not 0", 1, 3),
        ("7i128", "integer suffix width must be in 1..=64, not 128", 1, 5),
        ("0b102", "invalid digit `2` in binary literal", 4, 5),
        ("0o78", "invalid digit `8` in octal literal", 3, 4),
        ("12e", "invalid suffix `e` for integer literal", 2, 3),
        ("1u", "invalid suffix `u` for integer literal", 1, 2),
        ("3f32", "invalid suffix `f32` for integer literal", 1, 4),
        ("0X10", "invalid suffix `X10` for integer literal", 1, 4),
    ],
)
def test_bad_literals_are_int_literals_with_a_diagnostic(
    text: str, message: str, start: int, end: int
) -> None:
    assert kinds(text) == [K.INT_LITERAL]
    assert messages(text) == [(message, start, end)]
    with pytest.raises(ValueError, match="."):
        parse_int_literal(text)


def test_literal_spans_are_offset_in_the_file() -> None:
    assert messages("let x = 12u65;") == [
        ("integer suffix width must be in 1..=64, not 65", 10, 13)
    ]


def test_parse_int_literal_rejects_non_literals() -> None:
    for text in ("", "x1", "_1", "-1"):
        with pytest.raises(ValueError):
            parse_int_literal(text)


def test_unicode_identifiers_use_byte_offsets() -> None:
    src = "let café = été;".encode()
    tokens = lex(src).tokens
    idents = [(t.text, t.start, t.end) for t in tokens if t.kind == K.IDENT]
    assert idents == [("café", 4, 9), ("été", 12, 17)]
    assert lex(src).diagnostics == []


def test_combining_marks_continue_an_identifier() -> None:
    src = "e\u0301x = 1".encode()  # e + COMBINING ACUTE ACCENT (XID_Continue, not \\w)
    tokens = lex(src).tokens
    assert (tokens[0].kind, tokens[0].text, tokens[0].end) == (K.IDENT, "e\u0301x", 4)


def test_characters_that_are_not_identifiers() -> None:
    assert messages("a\u00b2") == [("unexpected character `²`", 1, 3)]
    assert kinds("a\u00b2") == [K.IDENT, K.ERROR_TOKEN]
    assert messages("x \u20ac y") == [("unexpected character `€`", 2, 5)]
    assert messages("$") == [("unexpected character `$`", 0, 1)]
    assert messages("\x00") == [("unexpected character U+0000", 0, 1)]
    assert messages("'") == [("unexpected character `'`", 0, 1)]


def test_invalid_utf8_is_an_error_token_with_its_byte_offset() -> None:
    data = b"ab\xff\xfe cd"
    result = lex(data)
    assert [(t.kind, t.start, t.end) for t in result.tokens][:3] == [
        (K.IDENT, 0, 2),
        (K.ERROR_TOKEN, 2, 3),
        (K.ERROR_TOKEN, 3, 4),
    ]
    assert messages(data) == [
        ("invalid UTF-8 byte 0xff", 2, 3),
        ("invalid UTF-8 byte 0xfe", 3, 4),
    ]
    text = "".join(t.text for t in result.tokens)
    assert text.encode("utf-8", "surrogateescape") == data


def test_invalid_utf8_inside_comments_keeps_the_comment_whole() -> None:
    data = "// caf\u00e9 ".encode() + b"\xc3(\n/* \x80 */"
    result = lex(data)
    assert [t.kind for t in result.tokens] == [K.LINE_COMMENT, K.WHITESPACE, K.BLOCK_COMMENT]
    assert messages(data) == [
        ("invalid UTF-8 byte 0xc3", 9, 10),
        ("invalid UTF-8 byte 0x80", 15, 16),
    ]


def test_encoded_surrogates_are_invalid_utf8() -> None:
    data = b"\xed\xa0\x80"  # UTF-8 encoding of U+D800, which UTF-8 forbids
    assert [m[0] for m in messages(data)] == ["invalid UTF-8 byte 0xed"] + [
        "invalid UTF-8 byte 0xa0",
        "invalid UTF-8 byte 0x80",
    ]


@pytest.mark.parametrize(
    "src",
    [
        b"fn f(x: u8) -> u8 { x + 1 } // done",
        b"/* /* nested */ */ x",
        b"0x 12u65 $ @ 1u0",
        b"a /* open",
    ],
)
def test_ascii_fast_path_matches_the_general_lexer(src: bytes) -> None:
    fast, general = lex(src), _lex_general(src, src.decode())
    assert (fast.kinds, fast.texts, fast.starts) == (general.kinds, general.texts, general.starts)
    assert fast.diagnostics == general.diagnostics


def test_empty_input() -> None:
    result = lex(b"")
    assert result.tokens == [] and result.starts == [0] and result.diagnostics == []


@pytest.mark.parametrize(
    "text, value",
    [
        ("1.25", Fraction(5, 4)),
        ("3e-2", Fraction(3, 100)),
        ("12e3", Fraction(12000)),
        ("1_000.5", Fraction(2001, 2)),
        ("0x1.8p-3", Fraction(3, 16)),
        ("0xAp1", Fraction(20)),
        ("0x.8p0", Fraction(1, 2)),
    ],
)
def test_fractional_literals_are_one_token_with_an_exact_value(text: str, value: Fraction) -> None:
    lexed = lex(text.encode())
    assert [(tok.kind, tok.text) for tok in lexed.tokens] == [(K.FRAC_LITERAL, text)]
    assert not lexed.diagnostics
    assert parse_frac_literal(text) == value


@pytest.mark.parametrize(
    "text, kinds",
    [
        ("t.0.1", ["IDENT", "DOT", "INT_LITERAL", "DOT", "INT_LITERAL"]),
        ("0..4", ["INT_LITERAL", "DOT2", "INT_LITERAL"]),
        ("0x1e5", ["INT_LITERAL"]),
        ("1.x", ["INT_LITERAL", "DOT", "IDENT"]),
    ],
)
def test_what_is_not_a_fractional_literal(text: str, kinds: list[str]) -> None:
    assert [tok.kind.name for tok in lex(text.encode()).tokens] == kinds
