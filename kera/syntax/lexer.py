"""Lexer: UTF-8 bytes to a lossless list of tokens (trivia included) with byte offsets.

The lexer never raises on user input. Problems (invalid UTF-8, unexpected characters,
unterminated block comments, malformed integer literals) become diagnostics, and the offending
text stays in the token list, so the concatenated token texts always give back the input.

Invalid UTF-8 is decoded with ``errors="surrogateescape"``: every bad byte becomes one lone
surrogate character (U+DC80..U+DCFF) in an ``ERROR_TOKEN``, and encoding a token text with the
same error handler restores the original bytes.
"""

from __future__ import annotations

import re
from contextlib import suppress
from fractions import Fraction
from itertools import accumulate
from typing import NamedTuple

from kera.diagnostics import Diagnostic, Span
from kera.syntax.kinds import KEYWORDS, RESERVED_WORDS, SyntaxKind

__all__ = ["Lexed", "Token", "lex", "parse_frac_literal", "parse_int_literal", "int_literal_error"]

K = SyntaxKind

# One master pattern; `findall` returns every token text in order (every character matches
# some alternative, the last one being "any character"). Block comments that nest or do not
# end are matched by the bare `/\*` alternative and finished by hand. Each character of a
# comment matches exactly one of its three alternatives, so the pattern stays linear when it
# fails without possessive quantifiers (which CPython 3.11.2's `re` gets wrong on `/*/**/*/`).
_MASTER_SOURCE = (
    r"[ \t\n\r\x0b\x0c]+"
    r"|{ident}"
    r"|[(){{}}\[\],;#]"
    r"|{frac}"
    r"|[0-9]\w*"
    r"|//[^\n]*"
    r"|/\*(?:[^*/]|/(?!\*)|\*(?!/))*\*/"
    r"|/\*"
    r"|<<=|>>=|\.\.|::|->|==|!=|<=|>=|&&|\|\||<<|>>|[-+*/%&|^]="
    r"|."
)
# Fractional literals: decimal `1.25`, `3e-2`, hexadecimal `0x1.8p-3`. Never right after a `.`
# (so `t.0.1` stays two field accesses) and a `.` needs a digit after it (so `0..4` is a range).
_FRAC_SOURCE = (
    r"(?<!\.)(?:0x[0-9a-fA-F_]*(?:\.[0-9a-fA-F_]*)?[pP][+-]?[0-9][0-9_]*"
    r"|[0-9][0-9_]*(?:\.[0-9][0-9_]*(?:[eE][+-]?[0-9][0-9_]*)?|[eE][+-]?[0-9][0-9_]*))"
)
_FRAC = re.compile(_FRAC_SOURCE, re.ASCII)
_MASTER = re.compile(
    _MASTER_SOURCE.format(ident=r"[^\W\d]\w*", frac=_FRAC_SOURCE), re.DOTALL
)
_MASTER_ASCII = re.compile(
    _MASTER_SOURCE.format(ident=r"[A-Za-z_]\w*", frac=_FRAC_SOURCE), re.DOTALL | re.ASCII
)

_PUNCT: dict[str, SyntaxKind] = {
    "(": K.L_PAREN,
    ")": K.R_PAREN,
    "[": K.L_BRACK,
    "]": K.R_BRACK,
    "{": K.L_CURLY,
    "}": K.R_CURLY,
    ",": K.COMMA,
    ";": K.SEMI,
    ":": K.COLON,
    "::": K.COLON2,
    ".": K.DOT,
    "..": K.DOT2,
    "->": K.ARROW,
    "#": K.POUND,
    "=": K.EQ,
    "==": K.EQ2,
    "!=": K.NEQ,
    "<": K.LT,
    "<=": K.LTEQ,
    ">": K.GT,
    ">=": K.GTEQ,
    "+": K.PLUS,
    "-": K.MINUS,
    "*": K.STAR,
    "/": K.SLASH,
    "%": K.PERCENT,
    "&": K.AMP,
    "&&": K.AMP2,
    "|": K.PIPE,
    "||": K.PIPE2,
    "^": K.CARET,
    "!": K.BANG,
    "<<": K.SHL,
    ">>": K.SHR,
    "+=": K.PLUSEQ,
    "-=": K.MINUSEQ,
    "*=": K.STAREQ,
    "/=": K.SLASHEQ,
    "%=": K.PERCENTEQ,
    "&=": K.AMPEQ,
    "|=": K.PIPEEQ,
    "^=": K.CARETEQ,
    "<<=": K.SHLEQ,
    ">>=": K.SHREQ,
}

# Every token whose kind follows from its text alone, as plain ints (IntEnum hashing is slow).
_FIXED: dict[str, int] = {text: int(kind) for text, kind in _PUNCT.items()}
_FIXED.update({text: int(kind) for text, kind in KEYWORDS.items()})
_FIXED.update({word: int(K.RESERVED_KW) for word in RESERVED_WORDS})
_FIXED["_"] = int(K.UNDERSCORE)

_WS, _LINE, _BLOCK = int(K.WHITESPACE), int(K.LINE_COMMENT), int(K.BLOCK_COMMENT)
_ERR, _IDENT, _INT = int(K.ERROR_TOKEN), int(K.IDENT), int(K.INT_LITERAL)
_FRAC_KIND = int(K.FRAC_LITERAL)
_WS_CHARS = frozenset(" \t\n\r\x0b\x0c")
_DIGITS = frozenset("0123456789")
_ESCAPED = re.compile("[\udc80-\udcff]")  # bytes that were not valid UTF-8
_BASES = {"0x": (16, "hexadecimal"), "0o": (8, "octal"), "0b": (2, "binary")}
_HEX_RUN = re.compile(r"[0-9a-fA-F_]*")
_DEC_RUN = re.compile(r"[0-9_]*")
_SUFFIX = re.compile(r"[ui][0-9]+")
# Literals that are surely well formed: decimal digits, then maybe a suffix of 1..=64 bits.
_PLAIN_INT = re.compile(r"[0-9]+(?:[ui](?:[1-9]|[1-5][0-9]|6[0-4]))?")


class Token(NamedTuple):
    """One token: kind, text (surrogate-escaped where the input was not UTF-8), byte span."""

    kind: SyntaxKind
    text: str
    start: int
    end: int

    @property
    def span(self) -> Span:
        """Return the byte span of the token."""
        return Span(self.start, self.end)


class Lexed:
    """The lexer's output: parallel lists of kinds, texts and byte offsets, plus diagnostics.

    ``kinds[i]`` is a plain ``int`` (a ``SyntaxKind`` value), ``texts[i]`` its text and
    ``starts[i]`` its byte offset; ``starts`` has one extra entry, the length of the input.
    """

    __slots__ = ("data", "kinds", "texts", "starts", "diagnostics", "kind_of")

    def __init__(
        self,
        data: bytes,
        kinds: list[int],
        texts: list[str],
        starts: list[int],
        diagnostics: list[Diagnostic],
        kind_of: dict[str, int] | None = None,
    ) -> None:
        self.data = data
        self.kinds = kinds
        self.texts = texts
        self.starts = starts
        self.diagnostics = diagnostics
        # Every distinct token text and its kind, when the kind follows from the text alone
        # (ASCII input); the tree builder then interns one green token per distinct text.
        self.kind_of = kind_of

    def __len__(self) -> int:
        return len(self.kinds)

    @property
    def tokens(self) -> list[Token]:
        """Return the tokens as ``Token`` tuples (trivia included)."""
        kinds, starts = self.kinds, self.starts
        return [
            Token(SyntaxKind(kinds[i]), text, starts[i], starts[i + 1])
            for i, text in enumerate(self.texts)
        ]


def int_literal_error(text: str) -> tuple[str, int, int] | None:
    """Return ``(message, start, end)`` (character offsets into text) if a literal is malformed.

    ``text`` is one lexed integer literal: a digit followed by letters, digits and underscores.
    """
    if _PLAIN_INT.fullmatch(text):
        return None  # the common case, without the general checks below
    base, name = _BASES.get(text[:2], (10, "decimal"))
    body_start = 0 if base == 10 else 2
    run = (_HEX_RUN if base == 16 else _DEC_RUN).match(text, body_start)
    assert run is not None  # both patterns match the empty string
    digits_end = run.end()
    if not text[body_start:digits_end].replace("_", ""):
        return f"expected digits after `{text[:2]}`", 0, len(text)
    for i in range(body_start, digits_end):
        ch = text[i]
        if ch != "_" and int(ch, 16) >= base:
            return f"invalid digit `{ch}` in {name} literal", i, i + 1
    suffix = text[digits_end:]
    if not suffix:
        return None
    if not _SUFFIX.fullmatch(suffix):
        return f"invalid suffix `{suffix}` for integer literal", digits_end, len(text)
    width = int(suffix[1:])
    if not 1 <= width <= 64:
        return f"integer suffix width must be in 1..=64, not {width}", digits_end, len(text)
    return None


def parse_int_literal(text: str) -> tuple[int, tuple[bool, int] | None]:
    """Return the value of a valid integer literal and its suffix as ``(signed, width)``.

    ``parse_int_literal("0x1_0000u17")`` is ``(65536, (False, 17))``; an unsuffixed literal
    gives ``None`` for the suffix. Raise ``ValueError`` for text the lexer reports as malformed.
    """
    if not text or text[0] not in _DIGITS:
        raise ValueError(f"integer literal must start with a digit, not {text!r}")
    problem = int_literal_error(text)
    if problem is not None:
        raise ValueError(problem[0])
    base = _BASES.get(text[:2], (10, ""))[0]
    body = text if base == 10 else text[2:]
    suffix_at = len(body)
    for i, ch in enumerate(body):
        if ch in "ui":
            suffix_at = i
            break
    value = int(body[:suffix_at].replace("_", ""), base)
    if suffix_at == len(body):
        return value, None
    return value, (body[suffix_at] == "i", int(body[suffix_at + 1 :]))


def parse_frac_literal(text: str) -> Fraction:
    """Return the exact value of a fractional literal: ``parse_frac_literal("0x1.8p-3")`` is
    ``Fraction(3, 16)``. Raise ``ValueError`` for text that is not one."""
    if not _FRAC.fullmatch(text):
        raise ValueError(f"not a fractional literal: {text!r}")
    body = text.replace("_", "")
    if body.startswith("0x"):
        mant, _, exp = body[2:].lower().partition("p")
        whole, _, frac = mant.partition(".")
        digits = (whole + frac) or "0"
        return Fraction(int(digits, 16)) * Fraction(2) ** (int(exp) - 4 * len(frac))
    return Fraction(body)


def _byte_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))


def _describe_char(ch: str) -> str:
    if "\udc80" <= ch <= "\udcff":
        return f"invalid UTF-8 byte 0x{ord(ch) - 0xDC00:02x}"
    if ch.isprintable():
        return f"unexpected character `{ch}`"
    return f"unexpected character U+{ord(ch):04X}"


def _block_comment_end(text: str, pos: int) -> int:
    """Return the end of the (possibly nested) block comment opening at ``pos``, or -1."""
    depth = 0
    find = text.find
    while True:
        opening = find("/*", pos)
        closing = find("*/", pos)
        if closing < 0:
            return -1
        if 0 <= opening < closing:
            depth += 1
            pos = opening + 2
        else:
            depth -= 1
            pos = closing + 2
            if depth == 0:
                return pos


def _ident_end(text: str, pos: int) -> int:
    """Return the end of the identifier starting at ``pos`` (XID_Start or `_` checked there)."""
    n = len(text)
    end = pos + 1
    while end < n:
        ch = text[end]
        if ch < "\x80":
            if not (ch.isalnum() or ch == "_"):
                break
        elif not ("a" + ch).isidentifier():
            break
        end += 1
    return end


# Kind by first character for the pieces `_FIXED` does not know; `/` marks a comment.
_FIRST: dict[str, int] = {ch: _ERR for ch in map(chr, range(128))}
_FIRST.update({ch: _WS for ch in _WS_CHARS})
_FIRST.update({ch: _INT for ch in _DIGITS})
_FIRST.update({ch: _IDENT for ch in "_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"})
_COMMENT = -1  # placeholder kind, fixed up after the first pass
_FIRST["/"] = _COMMENT


def lex(data: bytes) -> Lexed:
    """Split UTF-8 source bytes into tokens, trivia included, and report lexical problems."""
    text = data.decode("utf-8", "surrogateescape")
    if text.isascii():
        lexed = _lex_ascii(data, text)
        if lexed is not None:
            return lexed
    return _lex_general(data, text)


def _lex_ascii(data: bytes, text: str) -> Lexed | None:
    """Lex ASCII text with one ``findall``; None if a block comment nests or never ends.

    In ASCII text a token's kind follows from its text alone, so each distinct text is
    classified once (a file has a few hundred) and the kinds are one C-level ``map``.
    """
    texts: list[str] = _MASTER_ASCII.findall(text)
    fixed_get, first_get = _FIXED.get, _FIRST.get
    kind_of: dict[str, int] = dict.fromkeys(texts, 0)
    bad: dict[str, tuple[str, int, int]] = {}  # malformed literal text -> its problem
    for piece in kind_of:
        kind = fixed_get(piece) or first_get(piece[0], _ERR)
        if kind == _COMMENT:
            if piece == "/*":
                return None
            kind = _LINE if piece[1] == "/" else _BLOCK
        elif kind == _INT and not piece.isdigit():
            if _FRAC.fullmatch(piece):
                kind = _FRAC_KIND
            else:
                problem = int_literal_error(piece)
                if problem is not None:
                    bad[piece] = problem
        kind_of[piece] = kind
    kinds: list[int] = list(map(kind_of.__getitem__, texts))
    starts = list(accumulate(map(len, texts), initial=0))
    diags: list[Diagnostic] = []
    if bad:
        for i, piece in enumerate(texts):
            problem = bad.get(piece)
            if problem is not None:
                msg, lo, hi = problem
                diags.append(Diagnostic.error(msg, Span(starts[i] + lo, starts[i] + hi)))
    if _ERR in kind_of.values():
        index = kinds.index
        i = -1
        with suppress(ValueError):
            while True:
                i = index(_ERR, i + 1)
                at = starts[i]
                diags.append(Diagnostic.error(_describe_char(texts[i]), Span(at, at + 1)))
        diags.sort(key=lambda d: d.span.start)
    return Lexed(data, kinds, texts, starts, diags, kind_of)


def _lex_general(data: bytes, text: str) -> Lexed:
    """Lex any text (nested comments, non-ASCII identifiers, invalid UTF-8) piece by piece.

    The master pattern proposes pieces; ``_classify`` may lex a token by hand instead (a nested
    comment, an identifier that ``\\w`` splits wrongly), after which the pieces it covered are
    dropped, or the pattern is run again where they no longer line up.
    """
    ascii_only = text.isascii()
    kinds: list[int] = []
    texts: list[str] = []
    starts: list[int] = []
    diags: list[Diagnostic] = []
    fixed_get = _FIXED.get
    pos = 0  # character offset into text
    off = 0  # byte offset into data
    n = len(text)
    while pos < n:
        skip_to = -1  # after a hand-lexed token: drop pieces up to this character offset
        for piece in _MASTER.findall(text, pos):
            size = len(piece)
            if skip_to >= 0:
                pos += size
                if pos < skip_to:
                    continue
                if pos > skip_to:  # the pieces no longer line up with token boundaries
                    pos = skip_to
                    break
                skip_to = -1
                continue
            kind = fixed_get(piece)
            token, end = piece, pos + size
            if kind is None:
                kind, token = _classify(text, pos, piece, off, diags)
                end = pos + len(token)
            kinds.append(kind)
            texts.append(token)
            starts.append(off)
            off += len(token) if ascii_only else _byte_len(token)
            pos += size
            if pos < end:
                skip_to = end
            elif pos > end:
                pos = end
                break
    starts.append(off)
    return Lexed(data, kinds, texts, starts, diags)


def _classify(
    text: str, pos: int, piece: str, off: int, diags: list[Diagnostic]
) -> tuple[int, str]:
    """Return the kind and the text of the token at ``pos``, whose pattern piece is ``piece``.

    ``off`` is the byte offset of ``pos``; problems are added to ``diags``.
    """
    first = piece[0]
    if first in _WS_CHARS:
        return _WS, piece
    if first in _DIGITS:
        if _FRAC.fullmatch(piece):
            return _FRAC_KIND, piece
        if not piece.isdigit():
            problem = int_literal_error(piece)
            if problem is not None:
                msg, lo, hi = problem
                lo, hi = _byte_len(piece[:lo]), _byte_len(piece[:hi])
                diags.append(Diagnostic.error(msg, Span(off + lo, off + hi)))
        return _INT, piece
    if first == "/" and len(piece) > 1:
        kind = _LINE if piece[1] == "/" else _BLOCK
        if piece == "/*":  # a block comment that nests or never ends: finish it by hand
            end = _block_comment_end(text, pos)
            if end < 0:
                end = len(text)
                diags.append(Diagnostic.error("unterminated block comment", Span(off, off + 2)))
            piece = text[pos:end]
        _report_escaped_bytes(piece, off, diags)
        return kind, piece
    if first.isidentifier():  # XID_Start or `_`; `\w` may end too early or too late
        end = pos + len(piece)
        if piece.isascii() and not (end < len(text) and text[end] >= "\x80"):
            return _IDENT, piece
        piece = text[pos : _ident_end(text, pos)]
        return _FIXED.get(piece, _IDENT), piece
    # Invalid UTF-8, or a character that cannot start a token (only it, not the `\w` run).
    diags.append(Diagnostic.error(_describe_char(first), Span(off, off + _byte_len(first))))
    return _ERR, first


def _report_escaped_bytes(piece: str, off: int, diags: list[Diagnostic]) -> None:
    """Report every invalid UTF-8 byte inside a comment (the comment itself stays whole)."""
    for m in _ESCAPED.finditer(piece):
        at = off + _byte_len(piece[: m.start()])
        diags.append(Diagnostic.error(_describe_char(m.group()), Span(at, at + 1)))
