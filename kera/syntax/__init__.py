"""Kera's front end: lexer, parser and lossless syntax tree.

``parse(source)`` never raises on user input: every problem is a ``Diagnostic`` and the tree
always covers the whole input (``parse(src).tree.text() == src``).
"""

from __future__ import annotations

from functools import cached_property

from kera.diagnostics import Diagnostic, Note, Severity, SourceFile, Span, render_all
from kera.ir.gcpause import paused_gc
from kera.syntax.kinds import ASSIGN_OPS, KEYWORDS, RESERVED_WORDS, SyntaxKind
from kera.syntax.lexer import Lexed, Token, lex, parse_frac_literal, parse_int_literal
from kera.syntax.parser import MAX_NESTING, Error, Event, parse_stream, tree_events
from kera.syntax.stream import token_stream
from kera.syntax.tree import (
    GreenNode,
    GreenToken,
    NodeCache,
    SyntaxElement,
    SyntaxNode,
    SyntaxToken,
    dump_tree,
)

__all__ = [
    "ASSIGN_OPS",
    "Diagnostic",
    "Event",
    "GreenNode",
    "GreenToken",
    "KEYWORDS",
    "Lexed",
    "MAX_NESTING",
    "NodeCache",
    "Note",
    "ParseResult",
    "RESERVED_WORDS",
    "Severity",
    "SourceFile",
    "Span",
    "SyntaxElement",
    "SyntaxKind",
    "SyntaxNode",
    "SyntaxToken",
    "Token",
    "dump_tree",
    "lex",
    "parse",
    "parse_frac_literal",
    "parse_int_literal",
    "render_all",
]


class ParseResult:
    """What ``parse`` returns: the tree, every lexer and parser diagnostic; events and tokens
    on demand."""

    __slots__ = ("source", "tree", "diagnostics", "errors", "__dict__")

    def __init__(
        self,
        source: bytes,
        tree: SyntaxNode,
        diagnostics: list[Diagnostic],
        errors: list[tuple[int, Error]],
    ) -> None:
        self.source = source
        self.tree = tree
        self.diagnostics = diagnostics
        self.errors = errors  # each syntax error with the index of the token it was found at

    @cached_property
    def events(self) -> list[Event]:
        """Return the tree as parser events: ``Start``, ``Token``, ``Finish`` and ``Error``."""
        return tree_events(self.tree.green, self.errors)

    @cached_property
    def lexed(self) -> Lexed:
        """Return the lexer's output for the source (lexed again on demand)."""
        return lex(self.source)

    @cached_property
    def tokens(self) -> list[Token]:
        """Return every token, trivia included, with its byte span."""
        return self.lexed.tokens

    @property
    def ok(self) -> bool:
        """Return True when there were no diagnostics."""
        return not self.diagnostics


def parse(data: bytes | str, cache: NodeCache | None = None) -> ParseResult:
    """Lex, parse and build the tree of one Kera source file.

    ``data`` is the file's bytes (a ``str`` is encoded as UTF-8 first). A ``NodeCache`` shared
    between calls lets their trees share interned subtrees.
    """
    if isinstance(data, str):
        text = data
        try:
            data = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            data = text.encode("utf-8", "surrogatepass")
    cache = cache or NodeCache()
    # The front end allocates hundreds of thousands of objects and no cycles: pausing the
    # cyclic garbage collector saves about a tenth of the time.
    with paused_gc():
        stream = token_stream(data, cache)
        parsed = parse_stream(stream, cache)
    diagnostics = stream.diagnostics + parsed.diagnostics
    return ParseResult(data, SyntaxNode(parsed.green), diagnostics, parsed.errors)
