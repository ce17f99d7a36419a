"""Blocks and statements: ``let``, expression statements, assignments and the tail."""

from __future__ import annotations

from kera.syntax.grammar import exprs, types
from kera.syntax.grammar._common import ASSIGN_OPS, EXPR_FIRST, ITEM_FIRST, RECOVERY
from kera.syntax.parser import Parser, T, token_set

__all__ = ["block", "block_expr", "body"]

_IDENT, _IDENT_PAT = T.IDENT, T.IDENT_PAT
_BLOCK_LIKE = token_set(T.IF_KW, T.FOR_KW, T.L_CURLY)
# What may follow a block's tail expression (`}`, or where a `}` is missing).
_TAIL_END = ITEM_FIRST | token_set(T.R_CURLY, T.EOF)
# Where skipping towards a missing body block gives up.
_BODY_STOP = ITEM_FIRST | token_set(T.L_CURLY, T.R_CURLY, T.SEMI, T.LET_KW, T.EOF)


def body(p: Parser) -> None:
    """Parse the body block; if it is not next, skip to a `{` on the way (into ``ERROR``)."""
    if not p.at(T.L_CURLY):
        p.error_expected("`{`")
        m = p.start()
        skipped = False
        while not p.at_set(_BODY_STOP):
            p.bump()
            skipped = True
        if skipped:
            p.complete(m, T.ERROR)
        else:
            p.abandon(m)
        if not p.at(T.L_CURLY):
            return
    block(p)


def block_expr(p: Parser) -> int:
    """Parse a block used as an expression: ``BLOCK_EXPR(BLOCK)``."""
    m = p.start()
    block(p)
    return p.complete(m, T.BLOCK_EXPR)


def block(p: Parser) -> None:
    """Parse ``{ stmt* tail? }``; the tail expression is a direct child of ``BLOCK``."""
    if not p.enter():
        return
    m = p.start_bump()  # `{`
    kinds = p.kinds  # read directly: every iteration consumes a token or leaves
    while True:
        kind = kinds[p.pos]
        if kind == T.R_CURLY or kind == T.EOF:
            break
        if kind == T.SEMI:  # an empty statement
            p.bump()
        elif kind == T.LET_KW:
            _let_stmt(p)
        elif kind == T.REG_KW or kind == T.MEM_KW:
            _state_decl(p)
        elif (1 << kind) & EXPR_FIRST:
            _expr_stmt(p, kind)
        elif (1 << kind) & ITEM_FIRST:
            break  # most likely a missing `}` before the next item
        elif kind == T.RESERVED_KW:
            _reserved_stmt(p)
        elif not p.err_recover("an expression", ITEM_FIRST):
            break
    p.expect(T.R_CURLY)
    p.complete(m, T.BLOCK)
    p.leave()


def _reserved_stmt(p: Parser) -> None:
    """Skip ``while c { }``, ``break;`` and the like as one ``ERROR`` with one diagnostic."""
    m = p.start()
    p.error_expected("an expression")  # names the reserved word
    p.bump()
    if p.at_set(exprs.COND_FIRST):
        exprs.expr(p)
    if p.at(T.L_CURLY):
        block(p)
    p.eat(T.SEMI)
    p.complete(m, T.ERROR)


def _let_stmt(p: Parser) -> None:
    m = p.start_bump()  # `let`
    if p.kinds[p.pos] == _IDENT:  # `pattern`, inlined for the common case
        p.leaf(_IDENT_PAT)
    elif p.at_set(types.PAT_FIRST):
        types.pattern(p)
    else:
        p.err_recover("a pattern", RECOVERY | token_set(T.EQ, T.COLON))
    if p.eat(T.COLON):
        types.type_(p)
    if p.expect(T.EQ) or p.at_set(EXPR_FIRST):
        exprs.expr(p)
    p.expect(T.SEMI)
    p.complete(m, T.LET_STMT)


def _state_decl(p: Parser) -> None:
    """Parse ``reg NAME: T = INIT;`` or ``mem NAME: [T; N] = INIT;`` (STATE.md)."""
    m = p.start_bump()  # `reg` / `mem`
    p.expect(T.IDENT)
    if p.expect(T.COLON) or p.at_set(types.TYPE_FIRST):
        types.type_(p)
    if p.expect(T.EQ) or p.at_set(EXPR_FIRST):
        exprs.expr(p)
    p.expect(T.SEMI)
    p.complete(m, T.STATE_DECL)


def _expr_stmt(p: Parser, kind: int) -> None:
    m = p.start()
    if (1 << kind) & _BLOCK_LIKE:
        # `if`/`for`/`{}` at the start of a statement end it: no `;` needed, no operators.
        if kind == T.IF_KW:
            exprs.if_expr(p)
        elif kind == T.FOR_KW:
            exprs.for_expr(p)
        else:
            block_expr(p)
        kind = p.current()
        if (1 << kind) & _TAIL_END:
            p.abandon(m)  # the block's tail
        else:
            p.eat(T.SEMI)
            p.complete(m, T.EXPR_STMT)
        return
    lhs = exprs.expr(p)
    if lhs is not None and p.at_set(ASSIGN_OPS):
        a = p.precede(lhs)
        p.bump()
        exprs.expr(p)
        p.complete(a, T.ASSIGN_EXPR)
    kind = p.current()
    if kind == T.SEMI:
        p.bump()
        p.complete(m, T.EXPR_STMT)
    elif (1 << kind) & _TAIL_END:
        p.abandon(m)  # the block's tail (if no `}` follows, that is what is missing)
    else:
        p.error_expected("`;`")
        p.complete(m, T.EXPR_STMT)
