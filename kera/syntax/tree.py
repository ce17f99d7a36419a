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

from kera.diagnostics import Span
from kera.syntax.kinds import SyntaxKind
from kera.syntax.lexer import Lexed

__all__ = [
    "GreenNode",
    "GreenToken",
    "NodeCache",
    "SyntaxElement",
    "SyntaxNode",
    "SyntaxToken",
    "dump_tree",
    "green_tokens",
    "intern_token",
]

_KIND_LIST: list[SyntaxKind] = [SyntaxKind.EOF] * (max(SyntaxKind) + 1)
for _kind in SyntaxKind:
    _KIND_LIST[_kind.value] = _kind
_SKIPPED_MAX = SyntaxKind.ERROR_TOKEN.value  # trivia and ERROR_TOKEN: the parser never sees these


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

    Pass one cache to several ``parse`` calls to share subtrees between them.
    """

    __slots__ = ("tokens", "nodes", "leaves")

    def __init__(self) -> None:
        self.tokens: list[dict[str, GreenToken]] = [{} for _ in range(_N_TOKEN_KINDS)]
        self.nodes: dict[tuple, GreenNode] = {}  # (kind, *children) -> node
        # Nodes holding one token (``NAME_REF``, ``LITERAL``...), by kind then token.
        self.leaves: list[dict[GreenToken, GreenNode]] = [{} for _ in _KIND_LIST]


_N_TOKEN_KINDS = SyntaxKind.EOF.value + 1


def intern_token(cache: NodeCache, kind: int, text: str, size: int) -> GreenToken:
    """Make the green token ``(kind, text)`` of ``size`` bytes and enter it in ``cache``."""
    green = cache.tokens[kind][text] = GreenToken(_KIND_LIST[kind], text, size)
    return green


def green_tokens(lexed: Lexed, cache: NodeCache) -> list[GreenToken]:
    """Return the interned green token for every lexed token."""
    tables = cache.tokens

    def make(kind: int, text: str) -> GreenToken:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))
        return intern_token(cache, kind, text, size)

    if lexed.kind_of is not None:  # the kind follows from the text: one look-up per text
        by_text = {text: tables[kind].get(text) or make(kind, text)
                   for text, kind in lexed.kind_of.items()}
        return list(map(by_text.__getitem__, lexed.texts))
    return [
        tables[kind].get(text) or make(kind, text)
        for kind, text in zip(lexed.kinds, lexed.texts, strict=True)
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

    def child_nodes_of(self, kinds: frozenset[int]) -> list[SyntaxNode]:
        """Return the child nodes whose kind is in ``kinds``, in order."""
        out = []
        offset = self.offset
        for green in self.green.children:
            if type(green) is GreenNode and green.kind in kinds:
                out.append(SyntaxNode(green, self, offset))
            offset += green.text_len
        return out

    def first_child(self, kind: SyntaxKind | None = None) -> SyntaxNode | None:
        """Return the first child node (of ``kind``, if given)."""
        offset = self.offset
        for green in self.green.children:
            if type(green) is GreenNode and (kind is None or green.kind == kind):
                return SyntaxNode(green, self, offset)
            offset += green.text_len
        return None

    def first_token(self, kind: SyntaxKind | None = None) -> SyntaxToken | None:
        """Return the first direct child token the parser saw (of ``kind``, if given)."""
        offset = self.offset
        for green in self.green.children:
            if type(green) is GreenToken and green.kind > _SKIPPED_MAX and (
                    kind is None or green.kind == kind):
                return SyntaxToken(green, self, offset)
            offset += green.text_len
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
    rust-analyzer's debug dump, used by ``kera-hls tree`` and the parser tests; there is no
    newline after the last line.
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
    return "\n".join(lines)
