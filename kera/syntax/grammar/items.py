"""Items: the source file, functions, constants, type aliases and attributes."""

from __future__ import annotations

from kera.syntax.grammar import exprs, stmts, types
from kera.syntax.grammar._common import ITEM_FIRST, RECOVERY, list_items
from kera.syntax.parser import Parser, T, token_set

_NAME_RECOVERY = RECOVERY | token_set(T.L_PAREN, T.ARROW, T.COLON, T.EQ)


def source_file(p: Parser) -> None:
    """Parse a whole file: ``item*``."""
    m = p.start()
    while not p.at_eof():
        if p.at_set(ITEM_FIRST):
            item(p)
        else:
            _skip_to_item(p)
    p.complete(m, T.SOURCE_FILE)


def _skip_to_item(p: Parser) -> None:
    """Wrap everything up to the next item keyword in one ``ERROR`` node."""
    p.error_expected("an item")
    m = p.start_bump()
    while not p.at_eof() and not p.at_set(ITEM_FIRST):
        p.bump()
    p.complete(m, T.ERROR)


def item(p: Parser) -> None:
    """Parse ``ATTR* PUB_KW? (fn | const | type)``; attributes become children of the item."""
    m = p.start_item()
    while p.at(T.POUND):
        attr(p)
    p.eat(T.PUB_KW)
    kind = p.current()
    if kind == T.FN_KW:
        fn_item(p, m)
    elif kind == T.CONST_KW:
        const_item(p, m)
    elif kind == T.TYPE_KW:
        type_alias(p, m)
    else:
        p.error_expected("`fn`, `const` or `type`")
        p.complete(p.detach_comments(m), T.ERROR)


def name(p: Parser, recovery: int = _NAME_RECOVERY) -> None:
    """Consume an ``IDENT`` that names something, or report its absence."""
    if not p.eat(T.IDENT):
        p.err_recover("a name", recovery)


def attr(p: Parser) -> None:
    """Parse ``#[name]`` or ``#[name(key = value, ...)]``."""
    m = p.start_bump()  # `#`
    if p.expect(T.L_BRACK):
        name(p, RECOVERY | token_set(T.R_BRACK, T.L_PAREN))
        if p.at(T.L_PAREN):
            args = p.start_bump()
            list_items(p, T.R_PAREN, _attr_arg, token_set(T.IDENT), "an attribute argument")
            p.complete(args, T.ATTR_ARG_LIST)
        p.expect(T.R_BRACK)
    p.complete(m, T.ATTR)


def _attr_arg(p: Parser) -> None:
    m = p.start_bump()  # IDENT
    if p.expect(T.EQ) or p.at_set(exprs.EXPR_FIRST):
        exprs.expr(p)
    p.complete(m, T.ATTR_ARG)


def fn_item(p: Parser, m: int) -> None:
    """Parse ``fn name(params) -> T { ... }`` into the already opened ``FN`` node."""
    p.bump()  # `fn`
    name(p)
    if p.at(T.L_PAREN):
        params = p.start_bump()
        list_items(p, T.R_PAREN, _param, token_set(T.IDENT), "a parameter", RECOVERY | _ARROW_SET)
        p.complete(params, T.PARAM_LIST)
    else:
        p.error_expected("`(`")
    has_ret_type = p.at(T.ARROW)
    if has_ret_type:
        ret = p.start_bump()
        types.type_(p)
        p.complete(ret, T.RET_TYPE)
    if p.at(T.L_CURLY):
        stmts.block(p)
    else:
        p.error_expected("`{`" if has_ret_type else "`->` or `{`")
    p.complete(m, T.FN)


_ARROW_SET = token_set(T.ARROW)


def _param(p: Parser) -> None:
    m = p.start_bump()  # IDENT
    if p.expect(T.COLON) or p.at_set(types.TYPE_FIRST):
        types.type_(p)
    p.complete(m, T.PARAM)


def const_item(p: Parser, m: int) -> None:
    """Parse ``const NAME: T = expr;``."""
    p.bump()  # `const`
    name(p)
    if p.expect(T.COLON) or p.at_set(types.TYPE_FIRST):
        types.type_(p)
    if p.expect(T.EQ) or p.at_set(exprs.EXPR_FIRST):
        exprs.expr(p)
    p.expect(T.SEMI)
    p.complete(m, T.CONST_ITEM)


def type_alias(p: Parser, m: int) -> None:
    """Parse ``type Name = T;``."""
    p.bump()  # `type`
    name(p)
    if p.expect(T.EQ) or p.at_set(types.TYPE_FIRST):
        types.type_(p)
    p.expect(T.SEMI)
    p.complete(m, T.TYPE_ALIAS)
