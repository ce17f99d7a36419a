"""Small accessors over the syntax tree, so the builder reads like the grammar."""

from __future__ import annotations

from kera.syntax import GreenNode, GreenToken, SyntaxNode, SyntaxToken
from kera.syntax import SyntaxKind as K

EXPR_KINDS = frozenset(
    {
        K.LITERAL,
        K.NAME_REF,
        K.PAREN_EXPR,
        K.TUPLE_EXPR,
        K.ARRAY_EXPR,
        K.ARRAY_REPEAT_EXPR,
        K.PREFIX_EXPR,
        K.BIN_EXPR,
        K.CAST_EXPR,
        K.CALL_EXPR,
        K.GENERIC_NAME,
        K.INDEX_EXPR,
        K.FIELD_EXPR,
        K.BLOCK_EXPR,
        K.IF_EXPR,
        K.FOR_EXPR,
        K.RANGE_EXPR,
        K.RETURN_EXPR,
        K.ASSIGN_EXPR,
        K.ERROR,
    }
)
TYPE_KINDS = frozenset({K.NAME_TYPE, K.FIXED_TYPE, K.ARRAY_TYPE, K.TUPLE_TYPE})
PAT_KINDS = frozenset({K.IDENT_PAT, K.WILDCARD_PAT, K.TUPLE_PAT})


# Token kinds up to this one are trivia or ERROR_TOKEN: the parser never saw them.
_SKIPPED_MAX = K.ERROR_TOKEN.value


def exprs(node: SyntaxNode) -> list[SyntaxNode]:
    """Return the expression children of a node, in order."""
    return node.child_nodes_of(EXPR_KINDS)


def types(node: SyntaxNode) -> list[SyntaxNode]:
    """Return the type children of a node, in order."""
    return node.child_nodes_of(TYPE_KINDS)


def pattern(node: SyntaxNode) -> SyntaxNode | None:
    """Return the first pattern child of a node."""
    for c in node.child_nodes():
        if c.kind in PAT_KINDS:
            return c
    return None


def token(node: SyntaxNode, kind: K) -> SyntaxToken | None:
    """Return the first direct non-trivia token of ``kind``."""
    return node.first_token(kind)


def operator(node: SyntaxNode) -> SyntaxToken | None:
    """Return the operator token of a BIN/PREFIX/ASSIGN expression: its first direct token."""
    return node.first_token()


def name(node: SyntaxNode) -> str | None:
    """Return the text of the first IDENT token directly under a node."""
    for green in node.green.children:
        if green.kind == K.IDENT and type(green) is GreenToken:
            return green.text
    return None


def first_green_token(node: SyntaxNode) -> GreenToken | None:
    """Return the green token of ``operator(node)`` (no red token made): the first direct
    token the parser saw."""
    for green in node.green.children:
        if type(green) is GreenToken and green.kind > _SKIPPED_MAX:
            return green
    return None


def operator_and_exprs(node: SyntaxNode) -> tuple[K | None, list[SyntaxNode]]:
    """Return ``operator(node)``'s kind (None without one) and ``exprs(node)``, in one pass
    over the children (the operator nodes' walk, run for every operator of a program)."""
    op = None
    parts = []
    offset = node.offset
    for green in node.green.children:
        if type(green) is GreenNode:
            if green.kind in EXPR_KINDS:
                parts.append(SyntaxNode(green, node, offset))
        elif op is None and green.kind > _SKIPPED_MAX:
            op = green.kind
        offset += green.text_len
    return op, parts


def first_expr(node: SyntaxNode) -> SyntaxNode | None:
    """Return ``exprs(node)[0]`` (None when there is none) without listing the others."""
    offset = node.offset
    for green in node.green.children:
        if type(green) is GreenNode and green.kind in EXPR_KINDS:
            return SyntaxNode(green, node, offset)
        offset += green.text_len
    return None
