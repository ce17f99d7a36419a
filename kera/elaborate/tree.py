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
_IDENT = K.IDENT  # read once: an enum member read from its class costs several times a global


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
    return green_name(node.green)


def green_name(green: GreenNode) -> str | None:
    """Return ``name`` of a node with this green node."""
    for child in green.children:
        if child.kind == _IDENT and type(child) is GreenToken:
            return child.text
    return None


def first_green_token(node: SyntaxNode) -> GreenToken | None:
    """Return the green token of ``operator(node)`` (no red token made): the first direct
    token the parser saw."""
    return green_first_token(node.green)


def green_first_token(green: GreenNode) -> GreenToken | None:
    """Return ``first_green_token`` of a node with this green node."""
    for child in green.children:
        if type(child) is GreenToken and child.kind > _SKIPPED_MAX:
            return child
    return None


def operator_and_operands(green: GreenNode) -> tuple[K | None, list[tuple[GreenNode, int]]]:
    """Return the kind of ``operator`` of a node with this green node (None without one) and
    its expression children as (green node, offset from the node's start), in one pass: the
    parts of an operator node that do not depend on where the node is (a green node is shared
    by every copy of its text)."""
    op = None
    parts = []
    offset = 0
    for child in green.children:
        if type(child) is GreenNode:
            if child.kind in EXPR_KINDS:
                parts.append((child, offset))
        elif op is None and child.kind > _SKIPPED_MAX:
            op = child.kind
        offset += child.text_len
    return op, parts


def first_expr(node: SyntaxNode) -> SyntaxNode | None:
    """Return ``exprs(node)[0]`` (None when there is none) without listing the others."""
    inner = first_operand(node.green)
    return None if inner is None else SyntaxNode(inner[0], node, node.offset + inner[1])


def first_operand(green: GreenNode) -> tuple[GreenNode, int] | None:
    """Return the first expression child of a node with this green node, with its offset from
    the node's start (None when there is none)."""
    offset = 0
    for child in green.children:
        if type(child) is GreenNode and child.kind in EXPR_KINDS:
            return child, offset
        offset += child.text_len
    return None
