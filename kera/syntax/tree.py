"""The lossless syntax tree: interned green nodes and on-demand red nodes (as in rowan).

A green node is ``(kind, text_len, children)``: no parent, no absolute position, so equal
subtrees are shared. ``text_len`` counts UTF-8 **bytes**. A red ``SyntaxNode`` adds a parent and
a byte offset and is made on demand while walking. Every byte of the input is in exactly one
token, so ``tree.text()`` gives back the source (bytes that were not UTF-8 come back as
surrogate escapes: ``text().encode("utf-8", "surrogateescape")`` is the input).

Nothing here recurses per level of nesting: deep trees are walked with explicit stacks.
"""

from __future__ import annotations

from collections.abc import Iterator

from kera.syntax.diagnostics import Diagnostic, Span
from kera.syntax.kinds import SyntaxKind
from kera.syntax.lexer import Lexed
from kera.syntax.parser import ERROR, FINISH, TOKEN, TOMBSTONE, Events

__all__ = [
    "GreenNode",
    "GreenToken",
    "NodeCache",
    "SyntaxElement",
    "SyntaxNode",
    "SyntaxToken",
    "build_tree",
    "dump_tree",
]

_KIND_LIST: list[SyntaxKind] = [SyntaxKind.EOF] * (max(SyntaxKind) + 1)
for _kind in SyntaxKind:
    _KIND_LIST[_kind.value] = _kind
_EOF = SyntaxKind.EOF.value
_TRIVIA_MAX = SyntaxKind.BLOCK_COMMENT.value
_SKIPPED_MAX = SyntaxKind.ERROR_TOKEN.value  # placed like trivia: the parser never sees these
_ITEMS = frozenset({SyntaxKind.FN.value, SyntaxKind.CONST_ITEM.value, SyntaxKind.TYPE_ALIAS.value})
_COMMENTS = frozenset({SyntaxKind.LINE_COMMENT.value, SyntaxKind.BLOCK_COMMENT.value})
_ERROR = SyntaxKind.ERROR.value
_SOURCE_FILE = SyntaxKind.SOURCE_FILE.value


class GreenToken:
    """A leaf: kind and text (``text_len`` is its length in UTF-8 bytes)."""

    __slots__ = ("kind", "text", "text_len")

    def __init__(self, kind: SyntaxKind, text: str, text_len: int) -> None:
        self.kind = kind
        self.text = text
        self.text_len = text_len

    def __repr__(self) -> str:
        return f"GreenToken({self.kind.name}, {self.text!r})"


class GreenNode:
    """An inner node: kind, UTF-8 byte length of its text and its children, in order."""

    __slots__ = ("kind", "text_len", "children")

    def __init__(
        self, kind: SyntaxKind, text_len: int, children: tuple[GreenNode | GreenToken, ...]
    ) -> None:
        self.kind = kind
        self.text_len = text_len
        self.children = children

    def __repr__(self) -> str:
        return f"GreenNode({self.kind.name}, {self.text_len}, {len(self.children)} children)"

    def text(self) -> str:
        """Return the source text this node covers."""
        parts: list[str] = []
        stack: list[GreenNode | GreenToken] = [self]
        while stack:
            green = stack.pop()
            if type(green) is GreenToken:
                parts.append(green.text)
            else:
                stack.extend(reversed(green.children))  # type: ignore[union-attr]
        return "".join(parts)


class NodeCache:
    """Interning tables: tokens by ``(kind, text)``, nodes by ``(kind, children)``.

    Pass one cache to several ``build_tree`` calls to share subtrees between them.
    """

    __slots__ = ("tokens", "nodes")

    def __init__(self) -> None:
        self.tokens: list[dict[str, GreenToken]] = [{} for _ in range(_N_TOKEN_KINDS)]
        self.nodes: dict[tuple, GreenNode] = {}


_N_TOKEN_KINDS = SyntaxKind.EOF.value + 1


def _attached_trivia(kind: int, kinds: list[int], texts: list[str], lo: int, hi: int) -> int:
    """Return how many trivia tokens just before an item belong to it (its leading comments).

    Like rust-analyzer: comments directly above an item, with no blank line in between, are
    part of the item.
    """
    if kind not in _ITEMS:
        return 0
    attached = 0
    for i in range(hi - 1, lo - 1, -1):
        if kinds[i] in _COMMENTS:
            attached = hi - i
        elif texts[i].count("\n") >= 2:
            break
    return attached


def build_tree(
    lexed: Lexed, events: Events, cache: NodeCache | None = None
) -> tuple[GreenNode, list[Diagnostic]]:
    """Build the green tree from tokens (trivia included) and parser events.

    Trivia (and ``ERROR_TOKEN``, which the parser skips) goes into the innermost node open at
    its position: a node starts at its first token
    and ends at its last (leading comments of items excepted), and the file's leading and
    trailing trivia belong to ``SOURCE_FILE``, as in rust-analyzer's builder. Tokens the events
    never consumed are kept in an ``ERROR`` node at the end of the root. Return the root and
    the parser's diagnostics.
    """
    cache = cache or NodeCache()
    kinds = lexed.kinds + [_EOF]  # the sentinel ends every trivia scan
    texts, starts = lexed.texts, lexed.starts
    n_tokens = len(lexed.kinds)
    greens = _green_tokens(lexed, cache)
    # Lexer index just past each non-trivia token: a Token event takes greens[pos:next].
    next_end = iter([i + 1 for i, k in enumerate(kinds) if k > _SKIPPED_MAX]).__next__
    node_table = cache.nodes
    kind_of = _KIND_LIST
    diagnostics: list[Diagnostic] = []

    # Starts that take part in a forward-parent chain are handled where the chain begins.
    raw, forward_parents = events.raw, events.forward_parents
    marked = raw.copy()
    for index in forward_parents:
        marked[index] = _CHAIN
    for index, distance in forward_parents.items():
        marked[index + distance] = TOMBSTONE  # entered by the chain that leads to it

    stack: list[list[GreenNode | GreenToken]] = []  # children of the open nodes
    stack_kinds: list[int] = []
    stack_starts: list[int] = []
    children: list[GreenNode | GreenToken] = []
    pos = 0  # lexer index of the next token to place

    for index, ev in enumerate(marked):
        if ev == TOKEN:
            end = next_end()
            if end == pos + 1:
                children.append(greens[pos])
            else:
                children += greens[pos:end]
            pos = end
        elif ev >= 0 or ev == _CHAIN:  # a Start
            if ev >= 0:
                chain: list[int] | tuple[int] = (ev,)
            else:
                chain = [raw[index]]
                at = index
                while at in forward_parents:
                    at += forward_parents[at]
                    chain.append(raw[at])
                chain.reverse()
            for kind in chain:
                if kind == TOMBSTONE:
                    continue
                if kinds[pos] <= _SKIPPED_MAX and stack:
                    first = pos
                    while kinds[pos] <= _SKIPPED_MAX:
                        pos += 1
                    keep = _attached_trivia(kind, kinds, texts, first, pos) if kind in _ITEMS else 0
                    children += greens[first : pos - keep]
                    pos -= keep
                children = []
                stack.append(children)
                stack_kinds.append(kind)
                stack_starts.append(starts[pos])
        elif ev == FINISH:
            if len(stack) > 1:  # the root stays open for the file's trailing trivia
                node_children = tuple(stack.pop())
                kind = stack_kinds.pop()
                key = (kind, node_children)
                green = node_table.get(key)
                if green is None:
                    text_len = starts[pos] - stack_starts.pop()
                    green = node_table[key] = GreenNode(kind_of[kind], text_len, node_children)
                else:
                    stack_starts.pop()
                children = stack[-1]
                children.append(green)
        elif ev == ERROR:
            error = events.errors[index]
            diagnostics.append(Diagnostic.error(error.message, error.span))

    # Close everything still open except the root, then give the root the remaining tokens.
    while len(stack) > 1:
        green = _close(stack, stack_kinds, stack_starts, starts[pos], node_table)
        stack[-1].append(green)
    if not stack:  # the events never opened a root
        stack.append([])
        stack_kinds.append(_SOURCE_FILE)
        stack_starts.append(0)
    children = stack[0]
    while kinds[pos] <= _SKIPPED_MAX:
        children.append(greens[pos])
        pos += 1
    if pos < n_tokens:  # tokens the parser never consumed (it ran out of fuel)
        leftover = tuple(greens[pos:])
        children.append(GreenNode(kind_of[_ERROR], starts[n_tokens] - starts[pos], leftover))
        pos = n_tokens
    return _close(stack, stack_kinds, stack_starts, starts[pos], node_table), diagnostics


_CHAIN = -100  # marks a Start that has a forward parent


def _close(
    stack: list[list[GreenNode | GreenToken]],
    stack_kinds: list[int],
    stack_starts: list[int],
    end: int,
    node_table: dict[tuple, GreenNode],
) -> GreenNode:
    children = tuple(stack.pop())
    kind = stack_kinds.pop()
    start = stack_starts.pop()
    key = (kind, children)
    green = node_table.get(key)
    if green is None:
        green = node_table[key] = GreenNode(_KIND_LIST[kind], end - start, children)
    return green


def _green_tokens(lexed: Lexed, cache: NodeCache) -> list[GreenToken]:
    """Return the interned green token for every lexed token."""
    tables = cache.tokens
    kind_of = _KIND_LIST
    starts = lexed.starts

    def make(i: int, kind: int, text: str) -> GreenToken:
        green = GreenToken(kind_of[kind], text, starts[i + 1] - starts[i])
        tables[kind][text] = green
        return green

    return [
        tables[kind].get(text) or make(i, kind, text)
        for i, (kind, text) in enumerate(zip(lexed.kinds, lexed.texts, strict=True))
    ]


# --- the red layer ---------------------------------------------------------------------------


class SyntaxToken:
    """A token in a tree: its green token, parent node and byte offset."""

    __slots__ = ("green", "parent", "offset")

    def __init__(self, green: GreenToken, parent: SyntaxNode, offset: int) -> None:
        self.green = green
        self.parent = parent
        self.offset = offset

    @property
    def kind(self) -> SyntaxKind:
        """Return the token kind."""
        return self.green.kind

    @property
    def text(self) -> str:
        """Return the token text."""
        return self.green.text

    @property
    def span(self) -> Span:
        """Return the byte span of the token."""
        return Span(self.offset, self.offset + self.green.text_len)

    def ancestors(self) -> Iterator[SyntaxNode]:
        """Yield the parent, its parent, and so on up to the root."""
        return self.parent.ancestors()

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is SyntaxToken
            and self.green is other.green
            and self.offset == other.offset
            and self.parent == other.parent
        )

    def __hash__(self) -> int:
        return hash((id(self.green), self.offset))

    def __repr__(self) -> str:
        return f"{self.kind.name}@{self.offset}..{self.offset + self.green.text_len} {self.text!r}"


class SyntaxNode:
    """A node in a tree: its green node, parent (None for the root) and byte offset."""

    __slots__ = ("green", "parent", "offset")

    def __init__(self, green: GreenNode, parent: SyntaxNode | None = None, offset: int = 0) -> None:
        self.green = green
        self.parent = parent
        self.offset = offset

    @property
    def kind(self) -> SyntaxKind:
        """Return the node kind."""
        return self.green.kind

    @property
    def span(self) -> Span:
        """Return the byte span of the node (leading comments of an item included)."""
        return Span(self.offset, self.offset + self.green.text_len)

    def text(self) -> str:
        """Return the source text of the node, trivia included."""
        return self.green.text()

    def children(self) -> Iterator[SyntaxNode | SyntaxToken]:
        """Yield the child nodes and tokens (trivia included), in source order."""
        offset = self.offset
        for green in self.green.children:
            if type(green) is GreenNode:
                yield SyntaxNode(green, self, offset)
            else:
                yield SyntaxToken(green, self, offset)  # type: ignore[arg-type]
            offset += green.text_len

    def child_nodes(self) -> Iterator[SyntaxNode]:
        """Yield the child nodes, in order."""
        offset = self.offset
        for green in self.green.children:
            if type(green) is GreenNode:
                yield SyntaxNode(green, self, offset)
            offset += green.text_len

    def child_tokens(self, trivia: bool = False) -> Iterator[SyntaxToken]:
        """Yield the tokens that are direct children, as the parser saw them.

        Unless ``trivia`` is True, whitespace, comments and ``ERROR_TOKEN`` (which the lexer
        reported and the parser skipped) are left out.
        """
        offset = self.offset
        for green in self.green.children:
            if type(green) is GreenToken and (trivia or green.kind > _SKIPPED_MAX):
                yield SyntaxToken(green, self, offset)
            offset += green.text_len

    def first_child(self, kind: SyntaxKind | None = None) -> SyntaxNode | None:
        """Return the first child node (of ``kind``, if given)."""
        for child in self.child_nodes():
            if kind is None or child.green.kind == kind:
                return child
        return None

    def first_token(self, kind: SyntaxKind | None = None) -> SyntaxToken | None:
        """Return the first direct child token the parser saw (of ``kind``, if given)."""
        for token in self.child_tokens():
            if kind is None or token.green.kind == kind:
                return token
        return None

    def ancestors(self) -> Iterator[SyntaxNode]:
        """Yield this node, its parent, and so on up to the root."""
        node: SyntaxNode | None = self
        while node is not None:
            yield node
            node = node.parent

    def descendants(self) -> Iterator[SyntaxNode]:
        """Yield this node and every node below it, in preorder."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(list(node.child_nodes())))

    def tokens(self, trivia: bool = True) -> Iterator[SyntaxToken]:
        """Yield every token below this node in source order.

        With ``trivia=False``, whitespace, comments and ``ERROR_TOKEN`` are left out.
        """
        stack: list[SyntaxNode | SyntaxToken] = [self]
        while stack:
            element = stack.pop()
            if type(element) is SyntaxToken:
                if trivia or element.green.kind > _SKIPPED_MAX:
                    yield element
            else:
                stack.extend(reversed(list(element.children())))  # type: ignore[union-attr]

    def __eq__(self, other: object) -> bool:
        a: SyntaxNode | None = self
        b: object = other
        while True:
            if a is b:
                return True
            if a is None or type(b) is not SyntaxNode:
                return False
            if a.green is not b.green or a.offset != b.offset:
                return False
            a, b = a.parent, b.parent

    def __hash__(self) -> int:
        return hash((id(self.green), self.offset))

    def __repr__(self) -> str:
        return f"{self.kind.name}@{self.offset}..{self.offset + self.green.text_len}"


SyntaxElement = SyntaxNode | SyntaxToken


def _quote(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif "\udc80" <= ch <= "\udcff":
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif not ch.isprintable():
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def dump_tree(node: SyntaxNode) -> str:
    """Return one ``KIND@start..end`` line per node and token, indented by depth.

    Tokens carry their quoted text: ``IDENT@3..6 "foo"``. Trivia is included. The format is
    rust-analyzer's debug dump, used by ``kera-hls tree`` and the parser tests.
    """
    lines: list[str] = []
    stack: list[tuple[GreenNode | GreenToken, int, int]] = [(node.green, node.offset, 0)]
    while stack:
        green, offset, depth = stack.pop()
        indent = "  " * depth
        end = offset + green.text_len
        if type(green) is GreenToken:
            lines.append(f"{indent}{green.kind.name}@{offset}..{end} {_quote(green.text)}")
            continue
        lines.append(f"{indent}{green.kind.name}@{offset}..{end}")
        children = green.children  # type: ignore[union-attr]
        at = end
        for child in reversed(children):
            at -= child.text_len
            stack.append((child, at, depth + 1))
    return "\n".join(lines) + "\n"
