"""Expressions: a Pratt parser over binding powers, atoms, `if` and `for`.

Binding powers, loosest first, as in LANGUAGE.md: ``||`` 1, ``&&`` 2, comparisons 3 (not
chainable), ``|`` 4, ``^`` 5, ``&`` 6, shifts 7, ``+ -`` 8, ``* / %`` 9, ``as`` 10, prefix
``- !`` 11; calls, indexing and fields bind tightest. All binary operators are left-associative.
"""

from __future__ import annotations

from kera.syntax.grammar import stmts, types
from kera.syntax.grammar._common import EXPR_FIRST, EXPR_LEAVES, RECOVERY, list_items
from kera.syntax.parser import KIND_OF, MAX_NESTING, TEXT_LEN, Parser, T, token_set
from kera.syntax.tree import GreenNode

__all__ = ["COND_FIRST", "EXPR_FIRST", "expr", "expr_bp", "for_expr", "if_expr"]

_CMP_BP = 3
_ADDITIVE_BP = 8
_PREFIX_BP = 11

# Left binding power per token kind (0: not a binary operator).
_BP = [0] * (T.EOF + 1)
for _kinds, _bp in (
    ((T.PIPE2,), 1),
    ((T.AMP2,), 2),
    ((T.EQ2, T.NEQ, T.LT, T.LTEQ, T.GT, T.GTEQ), _CMP_BP),
    ((T.PIPE,), 4),
    ((T.CARET,), 5),
    ((T.AMP,), 6),
    ((T.SHL, T.SHR), 7),
    ((T.PLUS, T.MINUS), _ADDITIVE_BP),
    ((T.STAR, T.SLASH, T.PERCENT), 9),
    ((T.AS_KW,), 10),
):
    for _kind in _kinds:
        _BP[_kind] = _bp

_POSTFIX = token_set(T.L_PAREN, T.L_BRACK, T.DOT)
COND_FIRST = EXPR_FIRST & ~token_set(T.L_CURLY)  # `if {` has no condition
_LITERALS = token_set(T.INT_LITERAL, T.FRAC_LITERAL, T.TRUE_KW, T.FALSE_KW)
_NESTED_ATOMS = token_set(T.L_PAREN, T.L_BRACK, T.RETURN_KW)
_LEAF = EXPR_LEAVES  # the node a one-token expression becomes (0: not a leaf)
_COLON2, _AS_KW, _BIN_EXPR, _CAST_EXPR = T.COLON2, T.AS_KW, T.BIN_EXPR, T.CAST_EXPR
_L_PAREN, _IDENT, _LT, _NAME_TYPE = T.L_PAREN, T.IDENT, T.LT, T.NAME_TYPE
_PAREN_EXPR, _TUPLE_EXPR = T.PAREN_EXPR, T.TUPLE_EXPR


def _generic_arg(p: Parser) -> None:
    # Above comparisons and shifts, so the `>` that closes `::<...>` is never an operator.
    if types.at_fixed_type(p):  # `from_bits::<fx<16, 2> >(u)`
        types.type_(p)
        return
    expr_bp(p, _ADDITIVE_BP)


def generic_arg(p: Parser) -> None:
    """Parse one parameter of ``name::<...>`` or ``fx<...>`` (a type where one starts)."""
    _generic_arg(p)


def expr_bp(p: Parser, min_bp: int = 1) -> int | None:
    """Parse an expression whose binary operators bind at least as tightly as ``min_bp``.

    ``expr(p)``, the same function, parses a full expression (no assignment); both return
    None if there was none.

    This is the hottest loop of the front end, so leaves and binary operators build their
    nodes inline: the leaf is ``p.leaf(kind)``, and the operator step is ``p.precede(lhs)``,
    ``p.bump()`` and, after the right operand, ``p.complete(m, BIN_EXPR)``.
    Recursion here is bounded by the number of precedence levels; nesting is counted where
    brackets, prefix operators and `if`/`for`/`return` recurse.
    """
    kinds = p.kinds
    pos = p.pos
    leaf = _LEAF[kinds[pos]]
    stack = p.stack
    if leaf and kinds[pos + 1] != _COLON2:
        node = stack[-1]
        lead = p.lead[pos]
        if lead:
            node += lead
        lhs = len(node)
        token = p.greens[pos]
        table = p.leaves[leaf]
        green = table.get(token)
        if green is None:
            green = table[token] = GreenNode(KIND_OF[leaf], token.text_len, (token,))
        node.append(green)
        p.pos = pos + 1
        p.steps = 0
        if (1 << kinds[pos + 1]) & _POSTFIX:
            lhs = _postfix(p, lhs)
    elif kinds[pos] == _L_PAREN and p.depth < MAX_NESTING:
        # `_unary` -> `_atom` -> `_paren_or_tuple`, inlined for the commonest nested atom
        p.depth += 1
        lhs = _paren_or_tuple(p)
        p.depth -= 1
        if (1 << kinds[p.pos]) & _POSTFIX:
            lhs = _postfix(p, lhs)
    else:
        unary = _unary(p, p.current())
        if unary is None:
            return None
        lhs = unary
    chained_cmp = False
    while True:
        pos = p.pos
        kind = kinds[pos]
        bp = _BP[kind]
        if bp < min_bp:  # also stops at every non-operator (bp 0)
            break
        parent = stack[-1]
        if lhs == len(parent) - 1:
            node = [0, parent.pop()]
        else:  # something came after the operand (a too-deep ERROR): it goes in too
            node = [0, *parent[lhs:]]
            del parent[lhs:]
        stack.append(node)
        lead = p.lead[pos]
        if lead:
            node += lead
        node.append(p.greens[pos])
        p.pos = pos + 1
        p.steps = 0
        if kind == _AS_KW:
            pos += 1
            if kinds[pos] == _IDENT and kinds[pos + 1] != _LT:  # `types.type_`, inlined
                lead = p.lead[pos]
                if lead:
                    node += lead
                token = p.greens[pos]
                table = p.leaves[_NAME_TYPE]
                green = table.get(token)
                if green is None:
                    green = table[token] = GreenNode(KIND_OF[_NAME_TYPE], token.text_len,
                                                     (token,))
                node.append(green)
                p.pos = pos + 1
            else:
                types.type_(p)
            node[0] = _CAST_EXPR
            chained_cmp = False
        else:
            if bp == _CMP_BP:
                if chained_cmp:
                    p.error_at("comparison operators cannot be chained", pos)
                chained_cmp = True
            else:
                chained_cmp = False
            pos += 1
            leaf = _LEAF[kinds[pos]]
            after = kinds[pos + 1] if leaf else 0  # a leaf is never EOF: pos + 1 is in range
            if leaf and after != _COLON2 and _BP[after] <= bp and not (1 << after) & _POSTFIX:
                # The right operand is one leaf (the common case): `expr_bp(p, bp + 1)` inlined.
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
            else:
                expr_bp(p, bp + 1)
            node[0] = _BIN_EXPR
        stack.pop()
        key = tuple(node)
        nodes = p.nodes
        green = nodes.get(key)
        if green is None:
            children = key[1:]
            green = nodes[key] = GreenNode(KIND_OF[node[0]], sum(map(TEXT_LEN, children)),
                                           children)
        stack[-1].append(green)
    return lhs


expr = expr_bp


def _unary(p: Parser, kind: int) -> int | None:
    if kind == T.MINUS or kind == T.BANG:
        if not p.enter():
            return None
        m = p.start_bump()
        expr_bp(p, _PREFIX_BP)
        p.leave()
        return p.complete(m, T.PREFIX_EXPR)
    lhs = _atom(p, kind)
    if lhs is None or not (1 << p.kinds[p.pos]) & _POSTFIX:
        return lhs
    return _postfix(p, lhs)


def _postfix(p: Parser, lhs: int) -> int:
    """Wrap ``lhs`` in every call, index and field access that follows it."""
    kinds = p.kinds
    while (1 << kinds[p.pos]) & _POSTFIX:
        lhs = _postfix_one(p, lhs)
    return lhs


def _postfix_one(p: Parser, lhs: int) -> int:
    kind = p.current()
    if kind != T.DOT and not p.enter():
        return lhs
    m = p.precede(lhs)
    if kind == T.L_PAREN:
        _arg_list(p)
        p.leave()
        return p.complete(m, T.CALL_EXPR)
    p.bump()
    if kind == T.L_BRACK:
        expr(p)
        p.expect(T.R_BRACK)
        p.leave()
        return p.complete(m, T.INDEX_EXPR)
    if not p.eat(T.INT_LITERAL):  # `t.0`
        p.err_recover("a tuple field index", RECOVERY)
    return p.complete(m, T.FIELD_EXPR)


def _arg_list(p: Parser) -> None:
    m = p.start_bump()  # `(`
    list_items(p, T.R_PAREN, expr, EXPR_FIRST, "an expression", leaves=_LEAF)
    p.complete(m, T.ARG_LIST)


def _atom(p: Parser, kind: int) -> int | None:
    if kind == T.IDENT:
        if p.nth(1) == T.COLON2:
            return _generic_name(p)
        return p.leaf(T.NAME_REF)
    if (1 << kind) & _LITERALS:
        return p.leaf(T.LITERAL)
    if kind == T.L_CURLY:
        return stmts.block_expr(p)
    if kind == T.IF_KW:
        return if_expr(p)
    if kind == T.FOR_KW:
        return for_expr(p)
    if (1 << kind) & _NESTED_ATOMS:
        if not p.enter():
            return None
        if kind == T.L_PAREN:
            done = _paren_or_tuple(p)
        elif kind == T.L_BRACK:
            done = _array(p)
        else:
            m = p.start_bump()  # `return`
            if p.at_set(EXPR_FIRST):
                expr(p)
            done = p.complete(m, T.RETURN_EXPR)
        p.leave()
        return done
    p.err_recover("an expression", RECOVERY)
    return None


def _generic_name(p: Parser) -> int:
    """Parse ``name::<a, b>`` (the callee of ``slice::<LO, W>(x)``)."""
    m = p.start_bump()  # IDENT
    p.bump()  # `::`
    if p.at(T.LT) and p.enter():
        p.bump()
        list_items(p, T.GT, _generic_arg, EXPR_FIRST, "an expression")
        p.leave()
    elif not p.at(T.LT):
        p.error_expected("`<`")
    return p.complete(m, T.GENERIC_NAME)


def _paren_or_tuple(p: Parser) -> int:
    m = p.start_bump()  # `(`
    elems, commas = list_items(p, T.R_PAREN, expr, EXPR_FIRST, "an expression", leaves=_LEAF)
    kind = _PAREN_EXPR if elems == 1 and commas == 0 else _TUPLE_EXPR
    stack = p.stack  # `p.complete(m, kind)`, inlined: the commonest node with children
    node = stack.pop()
    node[0] = kind
    key = tuple(node)
    green = p.nodes.get(key)
    if green is None:
        children = key[1:]
        green = p.nodes[key] = GreenNode(KIND_OF[kind], sum(map(TEXT_LEN, children)), children)
    stack[-1].append(green)
    return m


def _array(p: Parser) -> int:
    m = p.start_bump()  # `[`
    if p.at_set(EXPR_FIRST):
        expr(p)
        if p.eat(T.SEMI):  # `[value; count]`
            expr(p)
            p.expect(T.R_BRACK)
            return p.complete(m, T.ARRAY_REPEAT_EXPR)
        if not p.eat(T.COMMA):
            if p.eat(T.R_BRACK):
                return p.complete(m, T.ARRAY_EXPR)
            p.error_expected("`,`, `;` or `]`")
            if not p.at_set(EXPR_FIRST):
                p.expect(T.R_BRACK)
                return p.complete(m, T.ARRAY_EXPR)
    list_items(p, T.R_BRACK, expr, EXPR_FIRST, "an expression", leaves=_LEAF)
    return p.complete(m, T.ARRAY_EXPR)


def if_expr(p: Parser) -> int:
    """Parse ``if c { } else if d { } else { }``; an else-if chain is a loop, not recursion."""
    opened = []
    while True:
        opened.append(p.start_bump())  # `if`
        if not p.at_set(COND_FIRST):
            p.error_expected("a condition")
        elif p.enter():  # `if if c {} {} {}` nests without brackets
            expr(p)
            p.leave()
        stmts.body(p)
        if not p.eat(T.ELSE_KW):
            break
        if p.at(T.IF_KW):
            continue
        if p.at(T.L_CURLY):
            stmts.block(p)
        else:
            p.error_expected("`{` or `if`")
        break
    done = None
    for m in reversed(opened):
        done = p.complete(m, T.IF_EXPR)
    assert done is not None
    return done


def for_expr(p: Parser) -> int:
    """Parse ``for pat (: T)? in lo..hi { }``."""
    m = p.start_bump()  # `for`
    if p.at_set(types.PAT_FIRST):
        types.pattern(p)
    else:
        p.err_recover("a pattern", RECOVERY | token_set(T.IN_KW, T.COLON))
    if p.eat(T.COLON):
        types.type_(p)
    p.expect(T.IN_KW)
    if not p.at_set(COND_FIRST):
        p.error_expected("a range")
    elif p.enter():  # `for i in for ...` nests without brackets
        lo = expr(p)
        if p.at(T.DOT2) and lo is not None:
            r = p.precede(lo)
            p.bump()
            expr(p)
            p.complete(r, T.RANGE_EXPR)
        else:
            p.error_expected("`..`")
        p.leave()
    stmts.body(p)
    return p.complete(m, T.FOR_EXPR)
