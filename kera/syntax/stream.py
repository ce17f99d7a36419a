"""The parser's input: the significant tokens as green tokens, each with the trivia before it.

Trivia (whitespace, comments) and ``ERROR_TOKEN`` never reach the parser; the parser puts them
back into the tree itself, so each significant token carries the run of skipped tokens just
before it (``lead``), and the run after the last token is the ``lead`` of ``EOF``.

Clean ASCII input (no malformed literal, stray character or unusual block comment) takes a fast
path: one ``findall`` of *(trivia run, token)* pairs, each distinct text classified and
interned once, every per-token list made by C-level ``map``. Anything else goes through
``lex`` and ``from_lexed``; both give the same stream.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from itertools import accumulate, chain, compress

from kera.diagnostics import Diagnostic
from kera.syntax import lexer
from kera.syntax.kinds import SyntaxKind
from kera.syntax.lexer import Lexed, lex
from kera.syntax.tree import GreenToken, NodeCache, green_tokens, intern_token

__all__ = ["TokenStream", "token_stream"]

_EOF = SyntaxKind.EOF.value
_SKIPPED_MAX = SyntaxKind.ERROR_TOKEN.value  # trivia and ERROR_TOKEN: not for the parser
_NO_TRIVIA: tuple[GreenToken, ...] = ()

# (trivia run, token) pairs. The trivia alternatives are the master pattern's own, tried first
# as there; the token alternatives are the rest of it, so the pieces are the master's. The
# last pair is (trailing trivia, "") at the end of the text.
_WS_SOURCE = r"[ \t\n\r\x0b\x0c]*"
_TRIVIA_SOURCE = rf"{_WS_SOURCE}(?:(?://[^\n]*|/\*(?:[^*/]|/(?!\*)|\*(?!/))*\*/){_WS_SOURCE})*"
_TOKEN_SOURCE = (
    r"[A-Za-z_]\w*"
    r"|[(){}\[\],;#]"
    rf"|{lexer._FRAC_SOURCE}"
    r"|[0-9]\w*"
    r"|/\*"
    r"|<<=|>>=|\.\.|::|->|==|!=|<=|>=|&&|\|\||<<|>>|[-+*/%&|^]="
    r"|."
    r"|\Z"
)
_PAIRS = re.compile(f"({_TRIVIA_SOURCE})({_TOKEN_SOURCE})", re.DOTALL | re.ASCII)


class TokenStream:
    """Parallel lists over the significant tokens, ``EOF`` last (index ``end``).

    ``kinds[i]`` (an int), ``greens[i]`` (its interned ``GreenToken``; a dummy at ``EOF``) and
    ``lead[i]`` (the skipped tokens just before it, a tuple). Byte offsets are only needed
    for diagnostics, so ``starts`` (where each token starts; ``EOF`` at the input's length) and
    ``ends_before`` (where the token before ended, 0 for the first) are made on demand from
    ``lengths``: the byte length of each part, lead then token, in order. ``diagnostics`` are
    the lexer's.
    """

    __slots__ = ("kinds", "greens", "lead", "end", "diagnostics", "lengths", "_offsets")

    def __init__(
        self,
        kinds: list[int],
        greens: list[GreenToken],
        lead: list[tuple[GreenToken, ...]],
        lengths: Callable[[], Iterable[int]],
        diagnostics: list[Diagnostic],
    ) -> None:
        self.kinds = kinds
        self.greens = greens
        self.lead = lead
        self.end = len(kinds) - 1
        self.diagnostics = diagnostics
        self.lengths = lengths  # called once, when an offset is first asked for
        self._offsets: tuple[list[int], list[int]] | None = None

    def _bounds(self) -> tuple[list[int], list[int]]:
        if self._offsets is None:
            bounds = list(accumulate(self.lengths(), initial=0))
            self._offsets = (bounds[1::2], bounds[0::2])
        return self._offsets

    def split_token(self, pos: int, first: GreenToken, rest: GreenToken, rest_kind: int) -> None:
        """Split the token at ``pos`` into ``first`` and ``rest`` (no trivia between), in place:
        the parser's view of a `>>` that closes two generic argument lists."""
        self.kinds[pos: pos + 1] = [first.kind.value, rest_kind]
        self.greens[pos: pos + 1] = [first, rest]
        self.lead.insert(pos + 1, _NO_TRIVIA)
        self.end += 1
        lengths = self.lengths
        cut = 2 * pos + 1  # the token's own part: lead 0, token 0, lead 1, ...

        def split_lengths() -> Iterable[int]:
            parts = list(lengths())
            parts[cut: cut + 1] = [first.text_len, 0, rest.text_len]
            return parts

        self.lengths = split_lengths
        self._offsets = None

    @property
    def starts(self) -> list[int]:
        """Return the byte offset of each token (``EOF``: the input's length)."""
        return self._bounds()[0]

    @property
    def ends_before(self) -> list[int]:
        """Return, for each token, the byte offset where the token before it ended."""
        return self._bounds()[1]


_EOF_GREEN = GreenToken(SyntaxKind.EOF, "", 0)


def token_stream(data: bytes, cache: NodeCache) -> TokenStream:
    """Lex ``data`` into a ``TokenStream`` (trivia grouped, green tokens interned in ``cache``)."""
    text = data.decode("utf-8", "surrogateescape")
    if text.isascii():
        stream = _ascii_stream(text, cache)
        if stream is not None:
            return stream
    return from_lexed(lex(data), cache)


def _ascii_stream(text: str, cache: NodeCache) -> TokenStream | None:
    """The fast path; None where the input needs the general lexer (it has diagnostics)."""
    # `split` gives ["", trivia, token, "", trivia, token, ..., ""]: no tuple per pair.
    parts = _PAIRS.split(text)
    trivia_texts, token_texts = parts[1::3], parts[2::3]
    if len(token_texts) > 1 and not token_texts[-2]:
        del trivia_texts[-1], token_texts[-1]  # an empty match after the trailing trivia
    tables = cache.tokens
    fixed_get, first_get = lexer._FIXED.get, lexer._FIRST.get
    kind_of: dict[str, int] = dict.fromkeys(token_texts, 0)
    green_of: dict[str, GreenToken] = {}
    for piece in kind_of:
        if not piece:
            kind_of[piece], green_of[piece] = _EOF, _EOF_GREEN
            continue
        kind = fixed_get(piece) or first_get(piece[0], lexer._ERR)
        if kind == lexer._COMMENT or kind == lexer._ERR:
            return None  # `/*` that nests or never ends; a stray character
        if kind == lexer._INT and not piece.isdigit():
            if lexer._FRAC.fullmatch(piece):
                kind = lexer._FRAC_KIND
            elif lexer.int_literal_error(piece) is not None:
                return None
        kind_of[piece] = kind
        green_of[piece] = tables[kind].get(piece) or intern_token(cache, kind, piece, len(piece))
    lead_of = {piece: _trivia_run(piece, cache) for piece in dict.fromkeys(trivia_texts)}
    kinds = list(map(kind_of.__getitem__, token_texts))
    greens = list(map(green_of.__getitem__, token_texts))
    lead = list(map(lead_of.__getitem__, trivia_texts))

    def lengths() -> Iterable[int]:
        pairs = zip(map(len, trivia_texts), map(len, token_texts), strict=True)
        return chain.from_iterable(pairs)

    return TokenStream(kinds, greens, lead, lengths, [])


def _trivia_run(text: str, cache: NodeCache) -> tuple[GreenToken, ...]:
    """Split a run of ASCII trivia into its interned green tokens."""
    out = []
    for piece in lexer._MASTER_ASCII.findall(text):
        kind = lexer._WS if piece[0] != "/" else lexer._LINE if piece[1] == "/" else lexer._BLOCK
        out.append(cache.tokens[kind].get(piece) or intern_token(cache, kind, piece, len(piece)))
    return tuple(out)


def from_lexed(lexed: Lexed, cache: NodeCache) -> TokenStream:
    """Group the tokens of any ``Lexed`` into a ``TokenStream``."""
    all_kinds = lexed.kinds
    greens_all = green_tokens(lexed, cache)
    significant = [kind > _SKIPPED_MAX for kind in all_kinds]
    kinds = list(compress(all_kinds, significant))
    greens = list(compress(greens_all, significant))
    lead: list[tuple[GreenToken, ...]] = []
    lengths: list[int] = []  # of each lead
    starts = lexed.starts
    previous = 0  # lexer index just after the last significant token
    for i in compress(range(len(all_kinds)), significant):
        lead.append(tuple(greens_all[previous:i]) if i != previous else _NO_TRIVIA)
        lengths.append(starts[i] - starts[previous])
        previous = i + 1
    lead.append(tuple(greens_all[previous:]))
    lengths.append(starts[-1] - starts[previous])
    kinds.append(_EOF)
    greens.append(_EOF_GREEN)
    token_lengths = [green.text_len for green in greens]
    parts = [n for pair in zip(lengths, token_lengths, strict=True) for n in pair]
    return TokenStream(kinds, greens, lead, lambda: parts, lexed.diagnostics)
