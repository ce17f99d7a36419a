"""Token sets and the comma-separated list rule shared by the grammar modules."""

from __future__ import annotations

from collections.abc import Callable

from kera.syntax.parser import _NAMES, KIND_OF, Parser, T, token_set
from kera.syntax.tree import GreenNode

ITEM_FIRST = token_set(T.FN_KW, T.PUB_KW, T.CONST_KW, T.TYPE_KW, T.POUND)
EXPR_FIRST = token_set(
    T.INT_LITERAL,
    T.FRAC_LITERAL,
    T.TRUE_KW,
    T.FALSE_KW,
    T.IDENT,
    T.L_PAREN,
    T.L_BRACK,
    T.L_CURLY,
    T.IF_KW,
    T.FOR_KW,
    T.RETURN_KW,
    T.MINUS,
    T.BANG,
)
TYPE_FIRST = token_set(T.IDENT, T.L_BRACK, T.L_PAREN)
PAT_FIRST = token_set(T.IDENT, T.MUT_KW, T.UNDERSCORE, T.L_PAREN)
ASSIGN_OPS = token_set(
    T.EQ,
    T.PLUSEQ,
    T.MINUSEQ,
    T.STAREQ,
    T.SLASHEQ,
    T.PERCENTEQ,
    T.AMPEQ,
    T.PIPEEQ,
    T.CARETEQ,
    T.SHLEQ,
    T.SHREQ,
)
# The node a one-token expression becomes (0: not a leaf).
EXPR_LEAVES = [0] * (T.EOF + 1)
EXPR_LEAVES[T.IDENT] = T.NAME_REF
EXPR_LEAVES[T.INT_LITERAL] = EXPR_LEAVES[T.FRAC_LITERAL] = T.LITERAL
EXPR_LEAVES[T.TRUE_KW] = EXPR_LEAVES[T.FALSE_KW] = T.LITERAL
_EOF, _COMMA, _GT = T.EOF, T.COMMA, T.GT
#: Tokens that start with the `>` closing a generic argument list (`fx<16, fx<8, 1>>`).
_JOINED_GT = token_set(T.SHR, T.SHREQ, T.GTEQ)
# Tokens an error never swallows: an enclosing rule knows what to do with them.
RECOVERY = ITEM_FIRST | token_set(
    T.R_PAREN, T.R_BRACK, T.R_CURLY, T.L_CURLY, T.SEMI, T.COMMA, T.LET_KW, T.REG_KW, T.MEM_KW
)


def list_items(
    p: Parser,
    close: int,
    elem: Callable[[Parser], object],
    first: int,
    what: str,
    recovery: int = RECOVERY,
    leaves: list[int] | None = None,
) -> tuple[int, int]:
    """Parse ``elem (, elem)* ,?`` up to and including ``close``; the opener is already eaten.

    Return ``(elements, commas)``. Every iteration consumes a token or leaves the loop: an
    element is only parsed at a token of its ``first`` set, which it always consumes.
    With ``leaves`` (``EXPR_LEAVES``, for expressions), an element that is one token before a
    `,` or ``close`` is made that leaf directly, as ``elem`` would.
    """
    elems = commas = 0
    after_elem = False
    kinds = p.kinds  # read directly: every iteration consumes a token or leaves
    while True:
        kind = kinds[p.pos]
        if kind == close or kind == _EOF:
            break
        if close == _GT and (1 << kind) & _JOINED_GT:
            p.split_angle()
            break
        if after_elem:
            if kind == _COMMA:  # `p.bump()`, inlined: one per comma
                pos = p.pos
                node = p.stack[-1]
                lead = p.lead[pos]
                if lead:
                    node += lead
                node.append(p.greens[pos])
                p.pos = pos + 1
                p.steps = 0
                commas += 1
                after_elem = False
                continue
            p.error_expected(f"`,` or {_NAMES[close]}")
            if (1 << kind) & first and not (1 << kind) & recovery:
                after_elem = False  # a missing comma: carry on with the next element
                continue
            break
        if (1 << kind) & first:
            leaf = leaves[kind] if leaves is not None else 0
            after = kinds[p.pos + 1] if leaf else 0  # a leaf is never EOF
            if leaf and (after == _COMMA or after == close):  # `p.leaf(leaf)`, inlined
                pos = p.pos
                node = p.stack[-1]
                lead = p.lead[pos]
                if lead:
                    node += lead
                token = p.greens[pos]
                table = p.leaves[leaf]
                green = table.get(token)
                if green is None:
                    green = table[token] = GreenNode(KIND_OF[leaf], token.text_len, (token,))
                node.append(green)
                p.pos = pos + 1
                p.steps = 0
            else:
                elem(p)
            elems += 1
            after_elem = True
        elif kind == _COMMA:
            p.error_expected(what)
            p.bump()
            commas += 1
        elif not p.err_recover(what, recovery):
            break
    if kinds[p.pos] == close:  # `p.expect(close)`, inlined for the common case
        p.bump()
    else:
        p.expect(close)
    return elems, commas
