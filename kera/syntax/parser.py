"""The parser engine: tokens in, a flat list of events out (rust-analyzer's design).

Grammar functions (``kera.syntax.grammar``) drive a ``Parser``: they look at the current token,
open nodes with ``m = p.start()`` and close them with ``p.complete(m, KIND)``. ``p.precede(cm)``
wraps an already finished node (so Pratt loops build left-nested binary expressions without
reordering the list) and ``p.abandon(m)`` leaves a tombstone. Trivia never reaches the
parser; ``kera.syntax.tree.build_tree`` puts it back.

Two guards keep every input finite: a step budget ("fuel") of 256 look-aheads per token plus a
global cap on events, and a nesting limit of 1000 levels, past which the rest of a construct is
skipped into an ``ERROR`` node with a single diagnostic.
"""

from __future__ import annotations

import sys
from itertools import compress
from types import SimpleNamespace

from kera.diagnostics import Span
from kera.syntax.kinds import KEYWORDS, SyntaxKind
from kera.syntax.lexer import _PUNCT, Lexed

__all__ = [
    "ERROR",
    "Error",
    "Event",
    "Events",
    "FINISH",
    "Finish",
    "LEAF",
    "MAX_NESTING",
    "Parser",
    "Start",
    "TOKEN",
    "TOMBSTONE",
    "Token",
    "parse_events",
    "token_set",
]

# Kinds as plain ints: attribute access on an IntEnum class is several times slower.
T = SimpleNamespace(**{kind.name: kind.value for kind in SyntaxKind})

MAX_NESTING = 1000
STEPS_PER_TOKEN = 256
# Unwinding from deep nesting legitimately looks ahead a few times per level without
# consuming anything, so a stall only counts as stuck after this many steps at one position.
STALL_STEPS = STEPS_PER_TOKEN + 32 * MAX_NESTING
EVENTS_PER_TOKEN = 64

# The parser never sees trivia, nor ERROR_TOKEN (the lexer has reported it); the tree builder
# puts both back where they were, like trivia.
_SKIPPED_MAX = T.ERROR_TOKEN
_SIGNIFICANT = [kind > _SKIPPED_MAX for kind in range(max(SyntaxKind) + 1)]
_NAMES: dict[int, str] = {int(kind): f"`{text}`" for text, kind in _PUNCT.items()}
_NAMES.update({int(kind): f"`{text}`" for text, kind in KEYWORDS.items()})
_NAMES.update({T.IDENT: "a name", T.INT_LITERAL: "an integer literal", T.EOF: "end of file"})
_NAMES[T.FRAC_LITERAL] = "a fractional literal"
_NAMES[T.UNDERSCORE] = "`_`"


def token_set(*kinds: int) -> int:
    """Return the bitmask ``sum(1 << kind)`` used for first and recovery sets."""
    mask = 0
    for kind in kinds:
        mask |= 1 << kind
    return mask


# --- events ----------------------------------------------------------------------------------
#
# While parsing, events are plain ints in one list (cheap to append and to patch):
#   kind >= 0   Start of a node of that kind        TOMBSTONE  a Start not (yet) completed
#   FINISH      close the innermost open node       TOKEN      consume the next non-trivia token
#   ERROR       a syntax error (text and span in ``Parser.errors[index]``)
#   LEAF + kind Start, Token, Finish at once: a node holding just the next token (most nodes)
# ``Parser.forward_parents[i] = d`` says that the Start at ``i + d`` wraps the Start at ``i``
# (what ``precede`` records). ``to_events`` turns this into the objects below for inspection.

TOMBSTONE = -1
FINISH = -2
TOKEN = -3
ERROR = -4
LEAF = 1000


class Start:
    """Open a node of ``kind``; ``forward_parent`` is the distance to the event that wraps it."""

    __slots__ = ("kind", "forward_parent")

    def __init__(self, kind: SyntaxKind | None, forward_parent: int | None = None) -> None:
        self.kind = kind  # None for a tombstone (an abandoned marker)
        self.forward_parent = forward_parent

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Start
            and self.kind == other.kind
            and self.forward_parent == other.forward_parent
        )

    def __repr__(self) -> str:
        name = "TOMBSTONE" if self.kind is None else self.kind.name
        fp = "" if self.forward_parent is None else f", forward_parent={self.forward_parent}"
        return f"Start({name}{fp})"


class Finish:
    """Close the innermost open node."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Finish"


class Token:
    """Consume the next non-trivia token (its kind is the lexer's)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Token"


class Error:
    """A syntax error at ``span``."""

    __slots__ = ("message", "span")

    def __init__(self, message: str, span: Span) -> None:
        self.message = message
        self.span = span

    def __eq__(self, other: object) -> bool:
        return type(other) is Error and (self.message, self.span) == (other.message, other.span)

    def __repr__(self) -> str:
        return f"Error({self.message!r}, {self.span.start}..{self.span.end})"


Event = Start | Finish | Token | Error
_FINISH_EVENT = Finish()
_TOKEN_EVENT = Token()


class Events:
    """The parser's output: the raw int event list, forward parents and error texts."""

    __slots__ = ("raw", "forward_parents", "errors")

    def __init__(
        self, raw: list[int], forward_parents: dict[int, int], errors: dict[int, Error]
    ) -> None:
        self.raw = raw
        self.forward_parents = forward_parents
        self.errors = errors

    def __len__(self) -> int:
        return len(self.raw)

    def to_events(self) -> list[Event]:
        """Return the events as ``Start``/``Finish``/``Token``/``Error`` objects."""
        new_index = []  # where each raw event lands once leaves are spelled out
        at = 0
        for ev in self.raw:
            new_index.append(at)
            at += 3 if ev >= LEAF else 1
        out: list[Event] = []
        fps = self.forward_parents
        for i, ev in enumerate(self.raw):
            if ev == TOKEN:
                out.append(_TOKEN_EVENT)
            elif ev == FINISH:
                out.append(_FINISH_EVENT)
            elif ev == ERROR:
                out.append(self.errors[i])
            else:
                fp = fps.get(i)
                if fp is not None:
                    fp = new_index[i + fp] - new_index[i]
                if ev >= LEAF:
                    out += (Start(SyntaxKind(ev - LEAF), fp), _TOKEN_EVENT, _FINISH_EVENT)
                else:
                    out.append(Start(None if ev == TOMBSTONE else SyntaxKind(ev), fp))
        return out


class _Stuck(Exception):
    """Raised only when the parser is out of fuel at end of file (a grammar bug)."""


# --- the parser ------------------------------------------------------------------------------


class Parser:
    """A cursor over the significant tokens and the event list the grammar writes to.

    Significant tokens are all but trivia and ``ERROR_TOKEN``.

    Markers are event indices, with rust-analyzer's four operations: ``m = p.start()`` opens a
    node, ``cm = p.complete(m, KIND)`` closes it, ``p.precede(cm)`` opens a node that will wrap
    the completed one, and ``p.abandon(m)`` drops an open one (its children go to the parent).
    """

    __slots__ = (
        "kinds",
        "lexed",
        "sig",
        "end",
        "pos",
        "events",
        "forward_parents",
        "errors",
        "steps",
        "stall_pos",
        "stall_chunks",
        "chunks_left",
        "event_cap",
        "depth",
        "too_deep_reported",
        "last_error_pos",
    )

    def __init__(self, lexed: Lexed) -> None:
        self.kinds = list(compress(lexed.kinds, map(_SIGNIFICANT.__getitem__, lexed.kinds)))
        self.end = len(self.kinds)  # index of EOF
        self.kinds.append(T.EOF)
        self.lexed = lexed
        self.sig: list[int] | None = None  # lexer index of each non-trivia token, made on demand
        self.pos = 0
        self.events: list[int] = []
        self.forward_parents: dict[int, int] = {}
        self.errors: dict[int, Error] = {}
        self.steps = 0  # look-aheads since the last bump
        self.stall_pos = -1
        self.stall_chunks = 0
        # Global caps: chunks of STEPS_PER_TOKEN look-aheads without a bump, and events.
        self.chunks_left = self.end // 16 + STALL_STEPS // STEPS_PER_TOKEN * 4
        # The global cap: no sane parse needs more than a few events per token.
        self.event_cap = EVENTS_PER_TOKEN * (self.end + 1) + 10_000
        self.depth = 0
        self.too_deep_reported = False
        self.last_error_pos = -1

    # -- looking ---------------------------------------------------------------------------

    def current(self) -> int:
        """Return the kind of the current token (``EOF`` at the end)."""
        self.steps += 1
        if self.steps > STEPS_PER_TOKEN:
            self._burn_fuel()
        return self.kinds[self.pos]

    def nth(self, n: int) -> int:
        """Return the kind of the token ``n`` ahead of the current one."""
        self.steps += 1
        if self.steps > STEPS_PER_TOKEN:
            self._burn_fuel()
        return self.kinds[min(self.pos + n, self.end)]

    def at(self, kind: int) -> bool:
        """Return True if the current token is ``kind``."""
        self.steps += 1  # current(), inlined: these are hot
        if self.steps > STEPS_PER_TOKEN:
            self._burn_fuel()
        return self.kinds[self.pos] == kind

    def at_set(self, kinds: int) -> bool:
        """Return True if the current token is in the bitmask ``kinds``."""
        self.steps += 1
        if self.steps > STEPS_PER_TOKEN:
            self._burn_fuel()
        return (1 << self.kinds[self.pos]) & kinds != 0

    def at_eof(self) -> bool:
        """Return True at the end of the input."""
        return self.at(T.EOF)

    # -- consuming -------------------------------------------------------------------------

    def bump(self) -> None:
        """Consume the current token (no-op at the end)."""
        if self.pos < self.end:
            self.events.append(TOKEN)
            self.pos += 1
            self.steps = 0

    def eat(self, kind: int) -> bool:
        """Consume the current token if it is ``kind`` (never ``EOF``)."""
        if self.kinds[self.pos] == kind:
            self.events.append(TOKEN)  # bump(), inlined: this is hot
            self.pos += 1
            self.steps = 0
            return True
        self.steps += 1
        if self.steps > STEPS_PER_TOKEN:
            self._burn_fuel()
        return False

    def expect(self, kind: int) -> bool:
        """Consume a ``kind`` token, or report "expected ..., found ..." and consume nothing."""
        if self.eat(kind):
            return True
        self.error_expected(_NAMES.get(kind, SyntaxKind(kind).name))
        return False

    # -- markers ---------------------------------------------------------------------------

    def start(self) -> int:
        """Open a node at the current position; return its marker."""
        events = self.events
        if len(events) > self.event_cap:
            self._out_of_fuel()
        events.append(TOMBSTONE)
        return len(events) - 1

    def complete(self, marker: int, kind: int) -> int:
        """Close the node opened at ``marker`` as ``kind``; return the completed marker."""
        self.events[marker] = kind
        self.events.append(FINISH)
        return marker

    def leaf(self, kind: int) -> int:
        """Make the current token a node of ``kind`` on its own; return the completed marker.

        The same as ``m = p.start(); p.bump(); p.complete(m, kind)`` in one event.
        """
        events = self.events
        events.append(LEAF + kind)
        self.pos += 1
        self.steps = 0
        return len(events) - 1

    def precede(self, completed: int) -> int:
        """Open a node that will become the parent of the completed node ``completed``."""
        events = self.events
        events.append(TOMBSTONE)
        new = len(events) - 1
        self.forward_parents[completed] = new - completed
        return new

    def abandon(self, marker: int) -> None:
        """Drop the open node ``marker``: its children go to the parent."""
        if marker == len(self.events) - 1 and marker not in self.forward_parents:
            self.events.pop()

    # -- errors ----------------------------------------------------------------------------

    def token_text(self, pos: int) -> str:
        """Return the text of the non-trivia token at ``pos`` ("" at the end)."""
        if pos >= self.end:
            return ""
        return self.lexed.texts[self._lexer_index(pos)]

    def token_span(self, pos: int) -> Span:
        """Return the byte span of the token at ``pos``; at the end, the point after the last."""
        starts = self.lexed.starts
        if pos >= self.end:
            at = starts[self._lexer_index(self.end - 1) + 1] if self.end else 0
            return Span(at, at)
        i = self._lexer_index(pos)
        return Span(starts[i], starts[i + 1])

    def _lexer_index(self, pos: int) -> int:
        if self.sig is None:
            self.sig = [i for i, k in enumerate(self.lexed.kinds) if k > _SKIPPED_MAX]
        return self.sig[pos]

    def found(self) -> str:
        """Describe the current token for a message: "`;`", "`foo`", "end of file"."""
        if self.pos == self.end:
            return "end of file"
        text = self.token_text(self.pos)
        if len(text) > 40:
            text = text[:40] + "…"
        return f"`{text}`"

    def error(self, message: str) -> None:
        """Report ``message`` at the current token (at most one error per token position).

        At the end of the input the span is the empty one just after the last token.
        """
        pos = self.pos
        if pos != self.last_error_pos:
            self.last_error_pos = pos
            self.error_at(message, pos)

    def error_at(self, message: str, pos: int) -> None:
        """Report ``message`` at the token with index ``pos`` (no de-duplication)."""
        events = self.events
        self.errors[len(events)] = Error(message, self.token_span(pos))
        events.append(ERROR)

    def error_expected(self, what: str) -> None:
        """Report "expected WHAT, found X" (or that a reserved word is not available yet)."""
        if self.kinds[self.pos] == T.RESERVED_KW:
            self.error(f"`{self.token_text(self.pos)}` is reserved for a later version of Kera")
        else:
            self.error(f"expected {what}, found {self.found()}")

    def err_recover(self, what: str, recovery: int) -> bool:
        """Report "expected WHAT"; wrap the current token in ``ERROR`` unless it may recover.

        Return True when a token was consumed. Braces, end of file and the tokens in the
        ``recovery`` bitmask are left for an enclosing rule.
        """
        self.error_expected(what)
        kind = self.current()
        if kind == T.L_CURLY or kind == T.R_CURLY or kind == T.EOF or (1 << kind) & recovery:
            return False
        m = self.start()
        self.bump()
        self.complete(m, T.ERROR)
        return True

    # -- guards ----------------------------------------------------------------------------

    def enter(self) -> bool:
        """Go one nesting level deeper (a bracket, a prefix operator, an `if` condition...).

        Past ``MAX_NESTING`` levels, report that once, skip the construct into ``ERROR`` and
        return False; the caller then parses nothing and does not call ``leave``.
        """
        if self.depth >= MAX_NESTING:
            self.too_deep()
            return False
        self.depth += 1
        return True

    def leave(self) -> None:
        """Come back up one nesting level."""
        self.depth -= 1

    def too_deep(self) -> None:
        """Report the nesting limit once and skip the current construct into ``ERROR``."""
        if not self.too_deep_reported:
            self.too_deep_reported = True
            self.error_at(f"nesting deeper than {MAX_NESTING} levels", self.pos)
        m = self.start()
        balance = 0
        consumed = False
        while True:
            kind = self.current()
            if kind == T.EOF:
                break
            if (1 << kind) & _OPENERS:
                balance += 1
            elif (1 << kind) & _CLOSERS:
                if balance == 0:
                    break
                balance -= 1
            elif balance == 0 and (kind == T.SEMI or kind == T.COMMA):
                break
            self.bump()
            consumed = True
        if consumed:
            self.complete(m, T.ERROR)
        else:
            self.abandon(m)

    def _burn_fuel(self) -> None:
        """Account for STEPS_PER_TOKEN look-aheads without a bump; stop a parser that is stuck."""
        self.steps = 0
        self.chunks_left -= 1
        if self.pos != self.stall_pos:
            self.stall_pos = self.pos
            self.stall_chunks = 0
        self.stall_chunks += 1
        if self.stall_chunks * STEPS_PER_TOKEN > STALL_STEPS or self.chunks_left < 0:
            self._out_of_fuel()

    def _out_of_fuel(self) -> None:
        if self.pos == self.end:
            self.error_at("the parser stopped making progress at end of file", self.pos)
            raise _Stuck
        self.error_at("the parser stopped making progress here; the rest was skipped", self.pos)
        self.pos = self.end  # everything after this point becomes an ERROR in the tree
        self.stall_chunks = 0


_OPENERS = token_set(T.L_PAREN, T.L_BRACK, T.L_CURLY)
_CLOSERS = token_set(T.R_PAREN, T.R_BRACK, T.R_CURLY)


def parse_events(lexed: Lexed) -> Events:
    """Parse a lexed file into the event list for its ``SOURCE_FILE``."""
    from kera.syntax.grammar import source_file

    p = Parser(lexed)
    old_limit = sys.getrecursionlimit()
    # A nesting level costs at most ~16 Python frames (a bracket plus a chain of binary
    # operators of rising precedence); since 3.11 such frames do not use the C stack.
    sys.setrecursionlimit(max(old_limit, 24 * MAX_NESTING + 5_000))
    try:
        source_file(p)
    except _Stuck:
        # A grammar bug looped at end of file. Nodes still open stay tombstones (their
        # children go to the parent); only the root is closed so the tree has one.
        if p.events and p.events[0] == TOMBSTONE:  # pragma: no cover
            p.events[0] = T.SOURCE_FILE
            p.events.append(FINISH)
    finally:
        sys.setrecursionlimit(old_limit)
    return Events(p.events, p.forward_parents, p.errors)
