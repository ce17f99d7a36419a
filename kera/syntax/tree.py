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

from kera.diagnostics import Diagnostic, Span
from kera.syntax.kinds import SyntaxKind
from kera.syntax.lexer import Lexed
from kera.syntax.parser import ERROR, FINISH, LEAF, TOKEN, TOMBSTONE, Events

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


# An open node while building: its kind (an int), then its children so far.
_Open = list  # list[int | GreenNode | GreenToken]; its tuple is the node's interning key


class NodeCache:
    """Interning tables: tokens by ``(kind, text)``, nodes by ``(kind, children)``.

    Pass one cache to several ``build_tree`` calls to share subtrees between them.
    """

    __slots__ = ("tokens", "nodes", "leaves")

    def __init__(self) -> None:
        self.tokens: list[dict[str, GreenToken]] = [{} for _ in range(_N_TOKEN_KINDS)]
        self.nodes: dict[tuple, GreenNode] = {}  # (kind, *children) -> node
        # Nodes holding one token (``NAME_REF``, ``LITERAL``...), by kind then token.
        self.leaves: list[dict[GreenToken, GreenNode]] = [{} for _ in _KIND_LIST]


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

    Trivia, and ``ERROR_TOKEN`` (which the parser skips), goes into the innermost node open at
    its position: a node starts at its first token and ends at its last (leading comments of
    items excepted), and the file's leading and trailing trivia belong to ``SOURCE_FILE``, as
    in rust-analyzer's builder. Tokens the events never consumed are kept in an ``ERROR`` node
    at the end of the root. Return the root and the parser's diagnostics.
    """
    b = _Builder(lexed, events, cache or NodeCache())
    kinds, greens, starts = b.kinds, b.greens, b.starts
    node_table, leaf_tables = b.node_table, b.leaf_tables
    stack, stack_starts = b.stack, b.stack_starts
    kind_of = _KIND_LIST
    children: _Open = []
    pos = 0  # lexer index of the next token to place

    # The common events are handled inline; forward-parent chains and errors by _Builder.
    for ev in b.marked:
        if ev == TOKEN:
            if kinds[pos] > _SKIPPED_MAX:
                children.append(greens[pos])
                pos += 1
            else:  # trivia first: it goes into the node too
                end = pos + 1
                while kinds[end] <= _SKIPPED_MAX:
                    end += 1
                children += greens[pos : end + 1]
                pos = end + 1
        elif ev >= _LEAF:
            if kinds[pos] <= _SKIPPED_MAX:  # leading trivia goes to the parent
                end = pos + 1
                while kinds[end] <= _SKIPPED_MAX:
                    end += 1
                children += greens[pos:end]
                pos = end
            token = greens[pos]
            pos += 1
            table = leaf_tables[ev - _LEAF]
            green = table.get(token)
            if green is None:
                green = table[token] = GreenNode(kind_of[ev - _LEAF], token.text_len, (token,))
            children.append(green)
        elif ev >= 0:
            if kinds[pos] <= _SKIPPED_MAX and stack:
                if kinds[pos + 1] > _SKIPPED_MAX and ev not in _ITEMS:  # one trivia token
                    children.append(greens[pos])
                    pos += 1
                else:
                    pos, children = b.leading_trivia(ev, pos, children)
            children = [ev]
            stack.append(children)
            stack_starts.append(starts[pos])
        elif ev == FINISH:
            if len(stack) > 1:  # the root stays open for the file's trailing trivia
                key = tuple(stack.pop())  # the kind, then the children
                green = node_table.get(key)
                if green is None:
                    text_len = starts[pos] - stack_starts.pop()
                    green = node_table[key] = GreenNode(kind_of[key[0]], text_len, key[1:])
                else:
                    stack_starts.pop()
                children = stack[-1]
                children.append(green)
        elif ev <= _CHAIN:
            pos, children = b.chain(_CHAIN - ev, pos, children)
        elif ev == ERROR:
            b.error()
    return b.finish(pos), b.diagnostics


_CHAIN = -100  # `_CHAIN - i` marks the Start at index i, which has forward parents
_LEAF = LEAF


class _Builder:
    """State of one ``build_tree`` run, and its rarely taken paths."""

    def __init__(self, lexed: Lexed, events: Events, cache: NodeCache) -> None:
        self.kinds = lexed.kinds + [_EOF]  # the sentinel ends every trivia scan
        self.texts, self.starts = lexed.texts, lexed.starts
        self.n_tokens = len(lexed.kinds)
        self.greens = _green_tokens(lexed, cache)
        self.node_table = cache.nodes
        self.leaf_tables = cache.leaves
        self.events = events
        self.errors = iter(events.errors.values())
        self.diagnostics: list[Diagnostic] = []
        self.stack: list[_Open] = []  # the open nodes: each its kind, then its children
        self.stack_starts: list[int] = []
        # A Start with forward parents opens its whole chain, outermost first; the Starts it
        # leads to are then skipped.
        self.marked = events.raw.copy()
        for index in events.forward_parents:
            self.marked[index] = _CHAIN - index
        for index, distance in events.forward_parents.items():
            self.marked[index + distance] = TOMBSTONE

    def leading_trivia(self, kind: int, pos: int, children: _Open) -> tuple[int, _Open]:
        """Give the trivia before a new node to its parent (an item keeps its comments)."""
        kinds = self.kinds
        first = pos
        while kinds[pos] <= _SKIPPED_MAX:
            pos += 1
        keep = _attached_trivia(kind, kinds, self.texts, first, pos) if kind in _ITEMS else 0
        children += self.greens[first : pos - keep]
        return pos - keep, children

    def chain(self, index: int, pos: int, children: _Open) -> tuple[int, _Open]:
        """Open the Start at ``index`` inside the nodes that ``precede`` put around it.

        ``enter`` and ``leaf``, inlined: binary operators and postfix expressions all come here.
        """
        raw, fp_get = self.events.raw, self.events.forward_parents.get
        chain = [raw[index]]
        at = index
        distance = fp_get(at)
        while distance is not None:
            at += distance
            chain.append(raw[at])
            distance = fp_get(at)
        kinds, greens, stack = self.kinds, self.greens, self.stack
        for kind in reversed(chain):
            if kind >= _LEAF:
                end = pos
                while kinds[end] <= _SKIPPED_MAX:
                    end += 1
                if end != pos:
                    children += greens[pos:end]
                token = greens[end]
                pos = end + 1
                table = self.leaf_tables[kind - _LEAF]
                green = table.get(token)
                if green is None:
                    green = table[token] = GreenNode(_KIND_LIST[kind - _LEAF], token.text_len,
                                                     (token,))
                children.append(green)
            elif kind != TOMBSTONE:
                if kinds[pos] <= _SKIPPED_MAX and stack:
                    pos, children = self.leading_trivia(kind, pos, children)
                children = [kind]
                stack.append(children)
                self.stack_starts.append(self.starts[pos])
        return pos, children

    def error(self) -> None:
        """Turn the next Error event into a diagnostic (they are met in the order made)."""
        error = next(self.errors)
        self.diagnostics.append(Diagnostic.error(error.message, error.span))

    def close(self, end: int) -> GreenNode:
        """Close the innermost open node, which ends at byte offset ``end``."""
        key = tuple(self.stack.pop())  # the kind, then the children
        start = self.stack_starts.pop()
        green = self.node_table.get(key)
        if green is None:
            green = self.node_table[key] = GreenNode(_KIND_LIST[key[0]], end - start, key[1:])
        return green

    def finish(self, pos: int) -> GreenNode:
        """Close every open node; the root takes the trailing trivia and anything left over."""
        stack, starts, n_tokens = self.stack, self.starts, self.n_tokens
        while len(stack) > 1:
            green = self.close(starts[pos])
            stack[-1].append(green)
        if not stack:  # the events never opened a root
            stack.append([_SOURCE_FILE])
            self.stack_starts.append(0)
        children = stack[0]
        while self.kinds[pos] <= _SKIPPED_MAX:
            children.append(self.greens[pos])
            pos += 1
        if pos < n_tokens:  # tokens the parser never consumed (it ran out of fuel)
            leftover = tuple(self.greens[pos:])
            text_len = starts[n_tokens] - starts[pos]
            children.append(GreenNode(_KIND_LIST[_ERROR], text_len, leftover))
        return self.close(starts[n_tokens])


def _green_tokens(lexed: Lexed, cache: NodeCache) -> list[GreenToken]:
    """Return the interned green token for every lexed token."""
    tables = cache.tokens
    kind_of = _KIND_LIST

    def make(kind: int, text: str) -> GreenToken:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))
        green = tables[kind][text] = GreenToken(kind_of[kind], text, size)
        return green

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
