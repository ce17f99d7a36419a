"""The parser engine: significant tokens in, the interned green tree out (rust-analyzer's markers).

Grammar functions (``kera.syntax.grammar``) drive a ``Parser``: they look at the current token,
open nodes with ``m = p.start()`` and close them with ``p.complete(m, KIND)``. ``p.precede(cm)``
wraps an already finished node (so Pratt loops build left-nested binary expressions) and
``p.abandon(m)`` drops an open node, its children going to the parent. The parser builds the
green nodes as it goes: each open node is a list (its kind, then its children), interned by
its tuple when it is completed. Trivia never reaches the grammar: each token's leading trivia
goes into the innermost open node when the token is consumed, or into the parent when a node
starts at it (so a node spans its first to its last token, as in rust-analyzer's builder).

A marker is the node's index among its parent's children (where ``precede`` finds it again).
A node's byte length is the sum of its children's, worked out only when it is first interned;
byte offsets are only needed for diagnostics.

Two guards keep every input finite: a step budget ("fuel") of 256 look-aheads per token plus a
global cap on nodes, and a nesting limit of 1000 levels, past which the rest of a construct is
skipped into an ``ERROR`` node with a single diagnostic.
"""

from __future__ import annotations

import sys
from operator import attrgetter
from types import SimpleNamespace

from kera.diagnostics import Diagnostic, Span
from kera.syntax.kinds import KEYWORDS, SyntaxKind
from kera.syntax.lexer import _PUNCT, Lexed
from kera.syntax.stream import TokenStream, from_lexed
from kera.syntax.tree import GreenNode, GreenToken, NodeCache, intern_token

__all__ = [
    "Error",
    "Event",
    "Finish",
    "MAX_NESTING",
    "Parsed",
    "Parser",
    "Start",
    "Token",
    "parse_stream",
    "token_set",
    "tree_events",
]

# Kinds as plain ints: attribute access on an IntEnum class is several times slower.
T = SimpleNamespace(**{kind.name: kind.value for kind in SyntaxKind})

MAX_NESTING = 1000
STEPS_PER_TOKEN = 256
# Unwinding from deep nesting legitimately looks ahead a few times per level without
# consuming anything, so a stall only counts as stuck after this many steps at one position.
STALL_STEPS = STEPS_PER_TOKEN + 32 * MAX_NESTING
NODES_PER_TOKEN = 32

_NAMES: dict[int, str] = {int(kind): f"`{text}`" for text, kind in _PUNCT.items()}
_NAMES.update({int(kind): f"`{text}`" for text, kind in KEYWORDS.items()})
_NAMES.update({T.IDENT: "a name", T.INT_LITERAL: "an integer literal", T.EOF: "end of file"})
_NAMES[T.FRAC_LITERAL] = "a fractional literal"
_NAMES[T.UNDERSCORE] = "`_`"

TEXT_LEN = attrgetter("text_len")
KIND_OF: list[SyntaxKind] = [SyntaxKind.EOF] * (max(SyntaxKind) + 1)
for _kind in SyntaxKind:
    KIND_OF[_kind.value] = _kind
_NO_TRIVIA: tuple[GreenToken, ...] = ()
_COMMENTS = frozenset({T.LINE_COMMENT, T.BLOCK_COMMENT})
_GT = T.GT
#: A token that starts with `>`: the kind of what is left when `>` is split off it.
_AFTER_GT = {T.SHR: T.GT, T.SHREQ: T.GTEQ, T.GTEQ: T.EQ}


def token_set(*kinds: int) -> int:
    """Return the bitmask ``sum(1 << kind)`` used for first and recovery sets."""
    mask = 0
    for kind in kinds:
        mask |= 1 << kind
    return mask


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


class _Stuck(Exception):
    """Raised only when the parser is out of fuel at end of file (a grammar bug)."""


# --- the parser ------------------------------------------------------------------------------


class Parser:
    """A cursor over the significant tokens, building the green tree of what it consumes.

    Significant tokens are all but trivia and ``ERROR_TOKEN``. ``stack`` holds the open nodes,
    the innermost last, each a list: its kind (0 until completed), then its children.
    """

    __slots__ = (
        "kinds",
        "greens",
        "lead",
        "stream",
        "end",
        "eof",
        "pos",
        "stack",
        "nodes",
        "leaves",
        "errors",
        "error_positions",
        "steps",
        "stall_pos",
        "stall_chunks",
        "chunks_left",
        "nodes_left",
        "depth",
        "too_deep_reported",
        "last_error_pos",
        "cache",
    )

    def __init__(self, source: Lexed | TokenStream, cache: NodeCache | None = None) -> None:
        cache = cache or NodeCache()
        stream = source if isinstance(source, TokenStream) else from_lexed(source, cache)
        self.stream = stream
        self.kinds = stream.kinds.copy()  # EOF last; the EOF moves up when the rest is skipped
        self.greens = stream.greens
        self.lead = stream.lead.copy()  # a run emptied once placed by a `start`
        self.end = self.eof = stream.end  # index of EOF (``end`` moves if the rest is skipped)
        self.pos = 0
        self.stack: list[list] = []
        self.nodes = cache.nodes
        self.leaves = cache.leaves
        self.errors: dict[int, Error] = {}
        self.error_positions: list[int] = []  # the token index of each error
        self.steps = 0  # look-aheads since the last bump
        self.stall_pos = -1
        self.stall_chunks = 0
        # Global caps: chunks of STEPS_PER_TOKEN look-aheads without a bump, and nodes.
        self.chunks_left = self.end // 16 + STALL_STEPS // STEPS_PER_TOKEN * 4
        self.nodes_left = NODES_PER_TOKEN * (self.end + 1) + 10_000
        self.depth = 0
        self.too_deep_reported = False
        self.last_error_pos = -1
        self.cache = cache

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
        pos = self.pos
        if pos < self.end:
            node = self.stack[-1]
            lead = self.lead[pos]
            if lead:
                node += lead
            node.append(self.greens[pos])
            self.pos = pos + 1
            self.steps = 0

    def eat(self, kind: int) -> bool:
        """Consume the current token if it is ``kind`` (never ``EOF``)."""
        pos = self.pos
        if self.kinds[pos] == kind:
            node = self.stack[-1]  # bump(), inlined: this is hot
            lead = self.lead[pos]
            if lead:
                node += lead
            node.append(self.greens[pos])
            self.pos = pos + 1
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

    def split_angle(self) -> None:
        """Split the current `>>`, `>>=` or `>=` into `>` and the rest, in place: where a
        generic argument list closes (`from_bits::<fx<16, 1>>(u)`), which the lexer cannot
        know. The tree keeps both pieces as tokens of their own; the text is unchanged."""
        pos = self.pos
        text = self.greens[pos].text
        rest_kind = _AFTER_GT[self.kinds[pos]]
        tables = self.cache.tokens
        first = tables[_GT].get(">") or intern_token(self.cache, _GT, ">", 1)
        rest = tables[rest_kind].get(text[1:]) or intern_token(
            self.cache, rest_kind, text[1:], len(text) - 1)
        if self.greens is not self.stream.greens:
            self.greens = self.stream.greens
        self.stream.split_token(pos, first, rest, rest_kind)
        self.kinds[pos: pos + 1] = [_GT, rest_kind]
        self.lead.insert(pos + 1, ())
        self.end += 1
        self.eof += 1

    # -- markers ---------------------------------------------------------------------------

    def start(self) -> int:
        """Open a node at the current token; return its marker.

        The trivia before the token goes to the parent (the root keeps the file's leading
        trivia).
        """
        self.nodes_left -= 1
        if self.nodes_left < 0:
            self._out_of_fuel()
        stack = self.stack
        pos = self.pos
        if not stack:
            stack.append([0])
            return 0
        parent = stack[-1]
        lead = self.lead[pos]
        if lead:
            parent += lead
            self.lead[pos] = _NO_TRIVIA
        stack.append([0])
        return len(parent)

    def start_bump(self) -> int:
        """Open a node at the current token and consume the token: ``start`` then ``bump``."""
        self.nodes_left -= 1
        if self.nodes_left < 0:
            self._out_of_fuel()
        stack = self.stack
        pos = self.pos
        parent = stack[-1]  # never the root: that is opened with `start`
        lead = self.lead[pos]
        if lead:
            parent += lead
        marker = len(parent)
        if pos < self.end:
            stack.append([0, self.greens[pos]])
            self.pos = pos + 1
            self.steps = 0
        else:
            stack.append([0])
            if lead:
                self.lead[pos] = _NO_TRIVIA
        return marker

    def start_item(self) -> int:
        """Open an item: like ``start``, but the comments just above it are its own.

        As in rust-analyzer: comments directly above an item, with no blank line in between,
        belong to the item (``detach_comments`` undoes this for an item that turns out an
        ``ERROR``).
        """
        lead = self.lead[self.pos]
        keep = 0
        for i in range(len(lead) - 1, -1, -1):
            green = lead[i]
            if green.kind in _COMMENTS:
                keep = len(lead) - i
            elif green.text.count("\n") >= 2:
                break
        if not keep or not self.stack:
            return self.start()
        self.nodes_left -= 1
        parent = self.stack[-1]
        parent += lead[: len(lead) - keep]
        self.lead[self.pos] = _NO_TRIVIA
        self.stack.append([0, *lead[len(lead) - keep :]])
        return len(parent)

    def detach_comments(self, marker: int) -> int:
        """Give the comments an open item took (``start_item``) back to its parent."""
        node, parent = self.stack[-1], self.stack[-2]
        count = 1
        while count < len(node) and node[count].kind <= T.ERROR_TOKEN:  # a trivia token
            count += 1
        if count == 1:
            return marker
        parent += node[1:count]
        del node[1:count]
        return len(parent)

    def complete(self, marker: int, kind: int) -> int:
        """Close the innermost open node (opened at ``marker``) as ``kind``; return its marker."""
        stack = self.stack
        node = stack.pop()
        node[0] = kind
        if not stack:  # the root stays open for the file's trailing trivia
            stack.append(node)
            return marker
        key = tuple(node)
        green = self.nodes.get(key)
        if green is None:
            children = key[1:]
            green = self.nodes[key] = GreenNode(KIND_OF[kind], sum(map(TEXT_LEN, children)),
                                                children)
        stack[-1].append(green)
        return marker

    def leaf(self, kind: int) -> int:
        """Make the current token a node of ``kind`` on its own; return the completed marker.

        The same as ``m = p.start(); p.bump(); p.complete(m, kind)``.
        """
        pos = self.pos
        node = self.stack[-1]
        lead = self.lead[pos]
        if lead:
            node += lead
        marker = len(node)
        token = self.greens[pos]
        table = self.leaves[kind]
        green = table.get(token)
        if green is None:
            green = table[token] = GreenNode(KIND_OF[kind], token.text_len, (token,))
        node.append(green)
        self.pos = pos + 1
        self.steps = 0
        return marker

    def precede(self, completed: int) -> int:
        """Open a node around the completed node ``completed`` (and anything after it)."""
        parent = self.stack[-1]
        node = [0, *parent[completed:]]
        del parent[completed:]
        self.stack.append(node)
        return completed

    def abandon(self, marker: int) -> None:
        """Drop the open node ``marker``: its children go to the parent.

        An empty node gives back the trivia its ``start`` placed: it belongs wherever the
        next token or node puts it.
        """
        stack = self.stack
        node = stack.pop()
        parent = stack[-1]
        if len(node) > 1:
            parent += node[1:]
            return
        lead = self.stream.lead[self.pos]
        index = marker
        if lead and not self.lead[self.pos] and index - len(lead) >= 1 and all(
            a is b for a, b in zip(parent[index - len(lead) : index], lead, strict=True)
        ):
            del parent[index - len(lead) : index]
            self.lead[self.pos] = lead

    # -- errors ----------------------------------------------------------------------------

    def token_text(self, pos: int) -> str:
        """Return the text of the non-trivia token at ``pos`` ("" at the end)."""
        if pos >= self.end:
            return ""
        return self.greens[pos].text

    def token_span(self, pos: int) -> Span:
        """Return the byte span of the token at ``pos``; at the end, the point after the last."""
        if pos >= self.end:
            at = self.stream.ends_before[self.eof]
            return Span(at, at)
        start = self.stream.starts[pos]
        return Span(start, start + self.greens[pos].text_len)

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
        self.errors[len(self.errors)] = Error(message, self.token_span(pos))
        self.error_positions.append(self.pos)

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
        # Everything from here on becomes an ERROR at the end of the tree: the parser sees EOF.
        self.end = self.pos
        self.kinds[self.pos] = T.EOF
        self.stall_chunks = 0

    # -- the end ---------------------------------------------------------------------------

    def finish(self) -> GreenNode:
        """Close the root: nodes still open are dropped (their children go to the parent);
        the root takes the trailing trivia and, in an ``ERROR``, anything never consumed."""
        stack = self.stack
        if not stack:  # the grammar never opened a root
            stack.append([T.SOURCE_FILE])
        while len(stack) > 1:
            node = stack.pop()
            stack[-1] += node[1:]
        root = stack[0]
        if root[0] == 0:  # a grammar stuck at end of file never completed it
            root[0] = T.SOURCE_FILE
        end, eof = self.end, self.eof
        root += self.lead[end]
        if end < eof:  # tokens the parser never consumed (it ran out of fuel)
            leftover: list[GreenNode | GreenToken] = [self.greens[end]]
            for i in range(end + 1, eof + 1):
                leftover += self.lead[i]
                if i < eof:
                    leftover.append(self.greens[i])
            size = sum(map(TEXT_LEN, leftover))
            root.append(GreenNode(KIND_OF[T.ERROR], size, tuple(leftover)))
        key = tuple(root)
        green = self.nodes.get(key)
        if green is None:
            children = key[1:]
            green = self.nodes[key] = GreenNode(KIND_OF[root[0]], sum(map(TEXT_LEN, children)),
                                                children)
        return green

    def diagnostics(self) -> list[Diagnostic]:
        """Return the syntax errors as diagnostics, in the order they were found."""
        return [Diagnostic.error(e.message, e.span) for e in self.errors.values()]


_OPENERS = token_set(T.L_PAREN, T.L_BRACK, T.L_CURLY)
_CLOSERS = token_set(T.R_PAREN, T.R_BRACK, T.R_CURLY)


class Parsed:
    """What ``parse_stream`` returns: the root, its diagnostics and where each error was."""

    __slots__ = ("green", "diagnostics", "errors")

    def __init__(
        self, green: GreenNode, diagnostics: list[Diagnostic], errors: list[tuple[int, Error]]
    ) -> None:
        self.green = green
        self.diagnostics = diagnostics
        self.errors = errors  # (token index, error), for the events view


def parse_stream(stream: TokenStream, cache: NodeCache) -> Parsed:
    """Parse a token stream into the green tree of its ``SOURCE_FILE``."""
    from kera.syntax.grammar import source_file

    p = Parser(stream, cache)
    old_limit = sys.getrecursionlimit()
    # A nesting level costs at most ~16 Python frames (a bracket plus a chain of binary
    # operators of rising precedence); since 3.11 such frames do not use the C stack.
    sys.setrecursionlimit(max(old_limit, 24 * MAX_NESTING + 5_000))
    try:
        source_file(p)
    except _Stuck:
        pass  # a grammar bug looped at end of file; `finish` closes what is open
    finally:
        sys.setrecursionlimit(old_limit)
    green = p.finish()
    errors = list(zip(p.error_positions, p.errors.values(), strict=True))
    return Parsed(green, p.diagnostics(), errors)


# --- the events view -------------------------------------------------------------------------


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


Event = Start | Finish | Token | Error
_FINISH_EVENT = Finish()
_TOKEN_EVENT = Token()
# Nodes the grammar makes with `precede`: they open after their first child.
_PRECEDED = frozenset({
    T.BIN_EXPR, T.CAST_EXPR, T.CALL_EXPR, T.INDEX_EXPR, T.FIELD_EXPR, T.RANGE_EXPR,
    T.ASSIGN_EXPR,
})


def tree_events(root: GreenNode, errors: list[tuple[int, Error]]) -> list[Event]:
    """Spell out the tree as rust-analyzer's events: ``Start``, ``Token``, ``Finish``, ``Error``.

    A node the grammar makes with ``precede`` (``BIN_EXPR``, ``CALL_EXPR``...) opens after its
    first child, whose ``Start`` points to it with ``forward_parent``; each ``Error`` comes
    just before the token it was reported at. Derived from the tree on demand: the parser
    itself writes no events.
    """
    out: list[Event] = []
    pending = iter(errors)
    error = next(pending, None)
    tokens = 0
    # Work items: ("emit", green, holder) places a node or token; ("open", start, holder,
    # child) appends a Start, records it in `holder` ([start, index]) and points the recorded
    # `child` Start at it; ("finish",) closes a node.
    work: list[tuple] = [("emit", root, None)]
    while work:
        item = work.pop()
        if item[0] == "finish":
            out.append(_FINISH_EVENT)
        elif item[0] == "open":
            _, start, holder, first = item
            if holder is not None:
                holder += (start, len(out))
            if first is not None:
                first[0].forward_parent = len(out) - first[1]
            out.append(start)
        else:
            _, green, holder = item
            if type(green) is GreenToken:
                if green.kind > T.ERROR_TOKEN:
                    while error is not None and error[0] <= tokens:
                        out.append(error[1])
                        error = next(pending, None)
                    out.append(_TOKEN_EVENT)
                    tokens += 1
                continue
            children = green.children
            work.append(("finish",))
            if green.kind in _PRECEDED and children and type(children[0]) is GreenNode:
                first_start: list = []
                work.extend(("emit", c, None) for c in reversed(children[1:]))
                work.append(("open", Start(green.kind), holder, first_start))
                work.append(("emit", children[0], first_start))
            else:
                work.extend(("emit", c, None) for c in reversed(children))
                work.append(("open", Start(green.kind), holder, None))
    while error is not None:
        out.append(error[1])
        error = next(pending, None)
    return out
