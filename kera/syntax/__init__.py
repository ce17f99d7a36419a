"""Kera's front end: lexer, event-based parser and lossless syntax tree.

``parse(source)`` never raises on user input: every problem is a ``Diagnostic`` and the tree
always covers the whole input (``parse(src).tree.text() == src``).
"""

from __future__ import annotations

import gc
from functools import cached_property

from kera.diagnostics import Diagnostic, Note, Severity, SourceFile, Span, render_all
from kera.syntax.kinds import ASSIGN_OPS, KEYWORDS, RESERVED_WORDS, SyntaxKind
from kera.syntax.lexer import Lexed, Token, lex, parse_frac_literal, parse_int_literal
from kera.syntax.parser import MAX_NESTING, Event, Events, parse_events
from kera.syntax.tree import (
    GreenNode,
    GreenToken,
    NodeCache,
    SyntaxElement,
    SyntaxNode,
    SyntaxToken,
    build_tree,
    dump_tree,
)

__all__ = [
    "ASSIGN_OPS",
    "Diagnostic",
    "Event",
    "Events",
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
    """What ``parse`` returns: the tree, every lexer and parser diagnostic, events, tokens."""

    __slots__ = ("source", "tree", "diagnostics", "raw_events", "lexed", "__dict__")

    def __init__(
        self,
        source: bytes,
        tree: SyntaxNode,
        diagnostics: list[Diagnostic],
        raw_events: Events,
        lexed: Lexed,
    ) -> None:
        self.source = source
        self.tree = tree
        self.diagnostics = diagnostics
        self.raw_events = raw_events
        self.lexed = lexed

    @cached_property
    def events(self) -> list[Event]:
        """Return the parser's events: ``Start``, ``Token``, ``Finish`` and ``Error`` objects."""
        return self.raw_events.to_events()

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
    # The front end allocates hundreds of thousands of objects and no cycles: pausing the
    # cyclic garbage collector saves about a tenth of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        lexed = lex(data)
        events = parse_events(lexed)
        green, errors = build_tree(lexed, events, cache)
    finally:
        if collecting:
            gc.enable()
    return ParseResult(data, SyntaxNode(green), lexed.diagnostics + errors, events, lexed)
