"""Types (``u8``, ``[T; N]``, ``(T, U)``) and patterns (``x``, ``mut x``, ``_``, ``(a, b)``)."""

from __future__ import annotations

from kera.syntax.grammar import exprs
from kera.syntax.grammar._common import (
    EXPR_FIRST,
    PAT_FIRST,
    RECOVERY,
    TYPE_FIRST,
    list_items,
)
from kera.syntax.parser import Parser, T, token_set

__all__ = ["PAT_FIRST", "TYPE_FIRST", "pattern", "type_"]

_TYPE_RECOVERY = RECOVERY | token_set(T.EQ, T.GT)
_PAT_RECOVERY = RECOVERY | token_set(T.EQ, T.COLON, T.IN_KW)


_IDENT, _LT, _NAME_TYPE = T.IDENT, T.LT, T.NAME_TYPE
FIXED_NAMES = ("fx", "ufx")  # keywords only in type position, and only before `<`


def at_fixed_type(p: Parser) -> bool:
    """Return True at ``fx<`` or ``ufx<``."""
    return p.at(T.IDENT) and p.nth(1) == T.LT and p.token_text(p.pos) in FIXED_NAMES


def type_(p: Parser) -> None:
    """Parse a type: ``NAME_TYPE``, ``FIXED_TYPE``, ``ARRAY_TYPE`` or ``TUPLE_TYPE``."""
    kinds = p.kinds
    if kinds[p.pos] == _IDENT and kinds[p.pos + 1] != _LT:  # the common case, inlined
        p.leaf(_NAME_TYPE)
        return
    kind = p.current()
    if kind == T.IDENT:
        if at_fixed_type(p):
            _fixed_type(p)
        else:
            p.leaf(T.NAME_TYPE)
        return
    if kind != T.L_BRACK and kind != T.L_PAREN:
        p.err_recover("a type", _TYPE_RECOVERY)
        return
    if not p.enter():
        return
    m = p.start_bump()
    if kind == T.L_PAREN:
        list_items(p, T.R_PAREN, type_, TYPE_FIRST, "a type")
        p.complete(m, T.TUPLE_TYPE)
    else:
        type_(p)
        if p.expect(T.SEMI) or p.at_set(exprs.EXPR_FIRST):
            exprs.expr(p)
        p.expect(T.R_BRACK)
        p.complete(m, T.ARRAY_TYPE)
    p.leave()


def _fixed_type(p: Parser) -> None:
    """Parse ``fx<W, I, Q, O>``: integers and mode names, like ``name::<...>`` parameters."""
    if not p.enter():
        return
    m = p.start_bump()  # `fx` / `ufx`
    p.bump()  # `<`
    list_items(p, T.GT, exprs.generic_arg, EXPR_FIRST, "a width, a position or a mode")
    p.complete(m, T.FIXED_TYPE)
    p.leave()


def pattern(p: Parser) -> None:
    """Parse a binding pattern: ``IDENT_PAT``, ``WILDCARD_PAT`` or ``TUPLE_PAT``."""
    kind = p.current()
    if kind == T.IDENT:
        p.leaf(T.IDENT_PAT)
    elif kind == T.UNDERSCORE:
        p.leaf(T.WILDCARD_PAT)
    elif kind == T.MUT_KW:
        m = p.start_bump()
        if not p.eat(T.IDENT):
            p.err_recover("a name", _PAT_RECOVERY)
        p.complete(m, T.IDENT_PAT)
    elif kind == T.L_PAREN:
        if not p.enter():
            return
        m = p.start_bump()
        list_items(p, T.R_PAREN, pattern, PAT_FIRST, "a pattern")
        p.complete(m, T.TUPLE_PAT)
        p.leave()
    else:
        p.err_recover("a pattern", _PAT_RECOVERY)
