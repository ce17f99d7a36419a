"""Expressions: typing (rules in kera.check.typeck) and graph construction in one walk.

An unsuffixed literal takes the type its context requires (LANGUAGE.md). Where the context
names a type (an annotation, a parameter, the other operand) it is passed down as ``hint``;
where nothing fixes it yet, the literal — or an operator, ``if`` or built-in over such
literals — stays *pending* (a ``Lit`` that can build itself at any integer type) until a
sibling operand or the context gives the type. Contexts that accept any unsigned type (shift
and rotate amounts, indices, constant parameters) settle what is still pending as ``u32``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction

from kera.check import typeck
from kera.check.typeck import TypeRuleError
from kera.diagnostics import Note, Span
from kera.elaborate import fixed
from kera.elaborate import tree as t
from kera.elaborate.base import BuilderBase
from kera.elaborate.items import FnItem
from kera.elaborate.values import POISON, Lit, Val, Value
from kera.ir.types import (
    BOOL,
    UNIT,
    ArrayType,
    BoolType,
    FixedType,
    IntType,
    TupleType,
    Type,
    int_type,
    uint,
)
from kera.ir.values import decimal_text
from kera.syntax import GreenNode, SyntaxNode, parse_frac_literal, parse_int_literal
from kera.syntax import SyntaxKind as K

U32 = uint(32)
BIN_TOKENS = {
    K.PLUS: "+", K.MINUS: "-", K.STAR: "*", K.SLASH: "/", K.PERCENT: "%",
    K.AMP: "&", K.PIPE: "|", K.CARET: "^", K.SHL: "<<", K.SHR: ">>",
    K.EQ2: "==", K.NEQ: "!=", K.LT: "<", K.LTEQ: "<=", K.GT: ">", K.GTEQ: ">=",
    K.AMP2: "&&", K.PIPE2: "||",
}
POLYMORPHIC_OPS = {**typeck.ARITH_OPS, **typeck.BITWISE_OPS}  # literal operands give the type
LOGIC_OPS, COMPARE_OPS, SHIFT_OPS = typeck.LOGIC_OPS, typeck.COMPARE_OPS, typeck.SHIFT_OPS
# The kinds the operators' hot paths compare with, read once: an enum member read from its
# class costs several times a global.
_PAREN_EXPR, _BIN_EXPR, _NAME_REF, _LITERAL, _INT_LITERAL = (
    K.PAREN_EXPR, K.BIN_EXPR, K.NAME_REF, K.LITERAL, K.INT_LITERAL)
# (operator, operand types) -> what ``_binary_rule`` says of them (rules are pure).
_BINARY_RESULTS: dict[tuple[str, Type | None, Type | None], tuple[str, Type] | str | object] = {}
_FIXED_POINT = object()  # a fixed-point operand: the operator is built by ``fixed.binary``
# Integer literal texts already parsed, with their suffix's type (unrolled and repeated code
# has the same few).
_INT_LITERALS: dict[str, tuple[int, IntType | None]] = {}
# Plain decimal literals, with or without a suffix: parsed here without the general parser.
_PLAIN_INT = re.compile(r"([0-9]+)(?:([ui])([0-9]+))?")
Rule = Callable[["ExprMixin", SyntaxNode, Type | None], Value]
# A binary operator node's parts (``bin_shape``): the operator, and each operand's green node
# with its offset from the node's start.
BinShape = tuple[str, GreenNode, int, GreenNode, int]


def rules_of(cls: type) -> dict[int, Rule]:
    """Return the method of ``cls`` that builds each node kind, by kind: ``_expr_<kind name>``
    (a kind without one is a bug, reported by ``expr``)."""
    table = {}
    for kind in K:
        method = getattr(cls, f"_expr_{kind.name.lower()}", None)
        if method is not None:
            table[kind.value] = method
    return table


def parse_int(text: str) -> tuple[int, IntType | None]:
    """Return ``parse_int_literal(text)`` with the suffix as its type, memoised; raise
    ``ValueError`` for a malformed literal (which the lexer reported)."""
    parsed = _INT_LITERALS.get(text)
    if parsed is not None:
        return parsed
    plain = _PLAIN_INT.fullmatch(text)
    if plain is not None and (plain[3] is None or 1 <= int(plain[3]) <= 64):
        ty = None if plain[3] is None else int_type(int(plain[3]), plain[2] == "i")
        parsed = (int(plain[1]), ty)
    else:
        value, suffix = parse_int_literal(text)
        parsed = (value, None if suffix is None else int_type(suffix[1], suffix[0]))
    if len(_INT_LITERALS) >= 1 << 16:
        _INT_LITERALS.clear()
    _INT_LITERALS[text] = parsed
    return parsed


class ElaborationBug(AssertionError):
    """The elaborator met a tree it has no rule for: a compiler bug, never the user's fault."""


class ExprMixin(BuilderBase):
    """Build one expression into the graph, with an optional expected type as a hint."""

    _rules: dict[int, Rule]  # kind -> the method that builds it (``rules_of``), per class

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._rules = rules_of(cls)

    def expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        """Build ``node``; ``hint`` only types unsuffixed literals (consumers check types)."""
        rule = self._rules.get(node.green.kind)
        if rule is None:
            raise ElaborationBug(f"no rule to elaborate a `{node.kind.name}` node at bytes "
                                 f"{node.span.start}..{node.span.end}")
        return rule(self, node, hint)

    def typed(self, node: SyntaxNode, hint: Type | None) -> Val:
        """Build ``node`` and insist on a definite type (literals need context or a suffix)."""
        return self.settle(self.expr(node, hint), hint)

    def any_unsigned(self, node: SyntaxNode) -> Val:
        """Build ``node`` where any unsigned type is accepted: what nothing types is ``u32``."""
        return self._any_unsigned_at(node.green, node.offset, node)

    def _any_unsigned_at(self, green: GreenNode, offset: int, parent: SyntaxNode) -> Val:
        """``any_unsigned`` of the node ``green`` at byte ``offset`` (see ``operand``)."""
        # A literal takes its hint: building it at `u32` is the same as settling it there.
        hint = U32 if green.kind == _LITERAL else None
        value = self.operand(green, offset, parent, hint)
        return value if value.__class__ is Val else self.settle(value, U32)

    def operand(self, green: GreenNode, offset: int, parent: SyntaxNode,
                hint: Type | None) -> Value:
        """Return ``expr`` of the node ``green`` at byte ``offset``, below ``parent`` (the red
        node of an ancestor: what the nodes made here hang from).

        The operands of operators are built here as their rules build them, without making
        their red nodes: parentheses, operators, variables that are no state, and integer
        literals. Any other node is made and built by its rule.
        """
        kind = green.kind
        while kind == _PAREN_EXPR:  # `_expr_paren_expr`
            inner = t.first_operand(green)
            if inner is None:
                return POISON
            green, offset = inner[0], offset + inner[1]
            kind = green.kind
        if kind == _BIN_EXPR:
            return self._bin(green, offset, parent, hint)
        if kind == _NAME_REF:  # `_expr_name_ref` of a variable
            binding = self.lookup(t.green_name(green) or "")
            if binding is not None and binding.state is None:
                return binding.value
        elif kind == _LITERAL:  # `_expr_literal` of an integer
            tok = t.green_first_token(green)
            if tok is not None and tok.kind == _INT_LITERAL:
                return self._int_literal(tok.text, offset, offset + green.text_len, hint,
                                         negate=False)
        return self.expr(SyntaxNode(green, parent, offset), hint)

    def settle(self, value: Value, ty: Type | None) -> Val:
        """Give a still pending literal the type ``ty``; without one, ask for a suffix."""
        if not isinstance(value, Lit):
            return value
        if isinstance(ty, IntType):
            return self.materialize(value, ty)
        if isinstance(value.value, Fraction) and value.what is None:
            self.error(f"cannot infer the fixed-point type of the literal "
                       f"`{decimal_text(value.value)}`; add a type annotation",
                       value.span, Note("e.g. `let x: fx<16, 4> = ...` or `... as fx<16, 4>`"))
            return POISON
        if value.what is not None:
            self.error(f"cannot infer the type of {value.what}; add a suffix to a literal",
                       value.span)
        else:
            self.error(
                f"cannot infer the type of the literal `{value.value}`; add a suffix "
                f"(e.g. `{value.value}u32`) or a type annotation",
                value.span,
            )
        return POISON

    def lifted(self, vals: list[Value], make: Callable[[list[Val]], Value],
               span: Span | None = None, what: str | None = None) -> Value:
        """Return ``make(vals)``; while some of ``vals`` are pending literals (which must then
        have one type), the result is pending too and builds them at the type it is given."""
        built = [v for v in vals if isinstance(v, Val)]
        if len(built) == len(vals):
            return make(built)
        lits = [v for v in vals if isinstance(v, Lit)]

        def build(ty: IntType) -> Val:
            built = [self.materialize(v, ty) if isinstance(v, Lit) else v for v in vals]
            return self.settle(make(built), None)

        return Lit(lits[0].value, span or lits[0].span, build, what)

    # --- leaves ------------------------------------------------------------------------------

    def _expr_literal(self, node: SyntaxNode, hint: Type | None) -> Value:
        tok = t.first_green_token(node)
        if tok is None:
            return POISON
        if tok.kind in (K.TRUE_KW, K.FALSE_KW):
            return self.const(BOOL, int(tok.kind == K.TRUE_KW), node.span)
        if tok.kind == K.FRAC_LITERAL:
            return self._frac_literal(tok.text, node.span, hint, negate=False)
        return self._int_literal(tok.text, node.offset, node.offset + node.green.text_len, hint,
                                 negate=False)

    def _frac_literal(self, text: str, span: Span, hint: Type | None, negate: bool) -> Value:
        lit = Lit(-parse_frac_literal(text) if negate else parse_frac_literal(text), span)
        return self.materialize(lit, hint) if isinstance(hint, IntType) else lit

    def _int_literal(self, text: str, start: int, end: int, hint: Type | None,
                     negate: bool) -> Value:
        """Build the integer literal ``text`` (negated: ``-text``), spanning bytes
        ``start..end``."""
        parsed = _INT_LITERALS.get(text)
        if parsed is None:
            try:
                parsed = parse_int(text)
            except ValueError:
                return POISON  # the lexer already reported it
        value, ty = parsed
        if negate:
            value = -value
        if ty is None:
            if not isinstance(hint, IntType):
                return Lit(value, Span(start, end))
            ty = hint
        if ty.__class__ is IntType and ty.min <= value <= ty.max:
            return self.const_at(ty, value, start, end)  # `materialize`'s, span made lazily
        return self.materialize(Lit(value, Span(start, end)), ty)

    def _expr_name_ref(self, node: SyntaxNode, hint: Type | None) -> Value:
        name = t.name(node) or ""
        binding = self.lookup(name)
        if binding is not None:
            return binding.value if binding.state is None else \
                self.read_state(binding, node, whole=True)
        item = self.consts.get(name)
        if item is not None:
            return self.const_item_value(item, node.span)
        if name in self.fns or name in typeck.BUILTINS:
            self.error(f"`{name}` is a function; call it with `{name}(...)`", node.span)
        else:
            self.error(f"cannot find `{name}` in this scope", node.span)
        return POISON

    def _expr_generic_name(self, node: SyntaxNode, hint: Type | None) -> Value:
        name = t.name(node) or ""
        self.error(f"`{name}::<...>` is a function; call it with `{name}::<...>(...)`",
                   node.span)
        return POISON

    def _expr_paren_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        return self.operand(node.green, node.offset, node, hint)

    def _expr_block_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        block = node.first_child(K.BLOCK)
        return self.block(block, hint) if block is not None else POISON

    def _expr_error(self, node: SyntaxNode, hint: Type | None) -> Value:
        return POISON

    # --- aggregates --------------------------------------------------------------------------

    def _expr_tuple_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        parts = t.exprs(node)
        hints = hint.elems if isinstance(hint, TupleType) and len(hint.elems) == len(parts) else ()
        vals = [self.typed(p, hints[i] if hints else None) for i, p in enumerate(parts)]
        if any(v.poisoned for v in vals):
            return POISON
        return self.add("tuple", TupleType(tuple(v.live_type for v in vals)), vals, span=node.span)

    def _expr_array_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        parts = t.exprs(node)
        if not parts:
            self.error("an array needs at least one element", node.span)
            return POISON
        elem_hint = hint.elem if isinstance(hint, ArrayType) else None
        raw = [self.expr(p, elem_hint) for p in parts]
        known = next((v.type for v in raw if isinstance(v, Val) and not v.poisoned), None)
        vals = [self.expect(v, known, p) if known else self.settle(v, elem_hint) for v, p in
                zip(raw, parts, strict=True)]
        if any(v.poisoned for v in vals):
            return POISON
        return self.add("array", ArrayType(vals[0].live_type, len(vals)), vals, span=node.span)

    def _expr_array_repeat_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        parts = t.exprs(node)
        if len(parts) != 2:
            return POISON
        elem = self.typed(parts[0], hint.elem if isinstance(hint, ArrayType) else None)
        count = self.const_int(parts[1], U32, "array repeat length")
        if count is None or elem.poisoned:
            return POISON
        if count < 1:
            self.error(f"array length must be at least 1, not {count}", parts[1].span)
            return POISON
        array = self.sized_array(elem.live_type, count, parts[1].span)
        if array is None:
            return POISON
        return self.add("array", array, [elem] * count, span=node.span)

    def _expr_index_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        parts = t.exprs(node)
        if len(parts) != 2:
            return POISON
        base = self._indexed(parts[0])
        index = self.any_unsigned(parts[1])
        if base.poisoned or index.poisoned:
            return POISON
        try:
            elem = typeck.index_result(base.live_type, index.live_type)
        except TypeRuleError as e:
            self.error(str(e), node.span)
            return POISON
        return self.add("array_index", elem, [base, index], span=node.span)

    def _indexed(self, node: SyntaxNode) -> Val:
        """Build the array an index reads from; a `mem` is read there, not as a whole."""
        if node.kind == K.NAME_REF:
            binding = self.lookup(t.name(node) or "")
            if binding is not None and binding.memory:
                return self.read_state(binding, node, whole=False)
        return self.typed(node, None)

    def _expr_field_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        parts = t.exprs(node)
        tok = node.first_token(K.INT_LITERAL)
        if not parts or tok is None:
            return POISON
        base = self.typed(parts[0], None)
        if base.poisoned:
            return POISON
        try:
            index, suffix = parse_int_literal(tok.text)
            if suffix is not None or not tok.text.isdigit():
                raise TypeRuleError(f"a tuple field is a plain index like `.0`, not `{tok.text}`")
            elem = typeck.field_result(base.live_type, index)
        except (TypeRuleError, ValueError) as e:
            self.error(str(e), node.span)
            return POISON
        return self.add("tuple_get", elem, [base], {"index": index}, span=node.span)

    # --- operators ---------------------------------------------------------------------------

    def _expr_prefix_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        op_tok = t.operator(node)
        parts = t.exprs(node)
        if op_tok is None or not parts:
            return POISON
        inner = parts[0]
        if op_tok.kind == K.MINUS and inner.kind == K.LITERAL:
            tok = inner.first_token()
            if tok is not None and tok.kind == K.INT_LITERAL:
                return self._int_literal(tok.text, node.offset,
                                         node.offset + node.green.text_len, hint, negate=True)
            if tok is not None and tok.kind == K.FRAC_LITERAL:
                return self._frac_literal(tok.text, node.span, hint, negate=True)
        op = "-" if op_tok.kind == K.MINUS else "!"
        # `-` folds into a literal before the range check (LANGUAGE.md), so its operand is built
        # without the hint: `-(-128)` is the literal 128 whatever the context.
        value = self.expr(inner, hint if op == "!" else None)
        if isinstance(value, Lit) and value.build is None and op == "-":
            return Lit(-value.value, node.span)
        return self.lifted([value], lambda v: self._unary(op, v[0], node.span))

    def _unary(self, op: str, value: Val, span: Span) -> Val:
        if value.poisoned:
            return POISON
        if op == "-" and isinstance(value.type, FixedType):
            return fixed.negate(self, value, span)
        try:
            result = typeck.unary_result(op, value.live_type)
        except TypeRuleError as e:
            self.error(str(e), span)
            return POISON
        return self.add("neg" if op == "-" else "not", result, [value], span=span)

    def _expr_bin_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        return self._bin(node.green, node.offset, node, hint)

    def _bin(self, green: GreenNode, offset: int, parent: SyntaxNode,
             hint: Type | None) -> Value:
        """Build the binary operator node ``green`` at byte ``offset`` (see ``operand``)."""
        # Left-associative chains (`a + b + c + ...`) nest to the left as deep as they are long:
        # walk down the chain and fold back up in a loop, so 20k terms need no deep recursion.
        chain: list[tuple[int, int, BinShape]] = []
        while green.kind == _BIN_EXPR:
            shape = bin_shape(green)
            if shape is None:
                return POISON  # the parser reported it
            chain.append((offset, green.text_len, shape))
            op = shape[0]
            if op in LOGIC_OPS:
                hint = BOOL
            elif op in COMPARE_OPS:
                hint = None
            green, offset = shape[1], offset + shape[2]
        lhs = self.operand(green, offset, parent, hint)
        for start, length, (op, lhs_green, lhs_at, rhs_green, rhs_at) in reversed(chain):
            lhs = self._fold(op, lhs, lhs_green, start + lhs_at, rhs_green, start + rhs_at,
                             parent, Span(start, start + length))
        return lhs

    def binary(self, op: str, lhs: Value, lhs_node: SyntaxNode, rhs_node: SyntaxNode,
               span: Span) -> Value:
        """Type and build ``lhs op rhs`` where ``lhs`` is already built."""
        return self._fold(op, lhs, lhs_node.green, lhs_node.offset, rhs_node.green,
                          rhs_node.offset, rhs_node, span)

    def _fold(self, op: str, lhs: Value, lhs_green: GreenNode, lhs_at: int,
              rhs_green: GreenNode, rhs_at: int, parent: SyntaxNode, span: Span) -> Value:
        """``binary`` with the operands' nodes as green nodes at byte offsets (below
        ``parent``; see ``operand``)."""
        b: Value
        if lhs.__class__ is Val and lhs.id is not None and op not in LOGIC_OPS:
            # The common case, as below without the pending-literal steps: a built left
            # operand types the right one (`unify`), or a shift amount is any unsigned type.
            if op in SHIFT_OPS:
                return self._binary(op, lhs, self._any_unsigned_at(rhs_green, rhs_at, parent),
                                    span)
            ty = lhs.type
            b = self.operand(rhs_green, rhs_at, parent, ty)
            if b.__class__ is not Val:
                b = self.expect(b, ty, SyntaxNode(rhs_green, parent, rhs_at))
            return self._binary(op, lhs, b, span)
        lhs_node = SyntaxNode(lhs_green, parent, lhs_at)
        rhs_node = SyntaxNode(rhs_green, parent, rhs_at)
        if op in typeck.SHIFT_OPS:
            a, b = lhs, self.any_unsigned(rhs_node)
        elif op in typeck.LOGIC_OPS and isinstance(lhs, Val) and lhs.type == BOOL:
            with self.guarded(lhs, negate=op == "||"):  # the right side may not be evaluated
                a, b = self.unify(lhs, lhs_node, rhs_node)
        else:
            a, b = self.unify(lhs, lhs_node, rhs_node)
            if isinstance(a, Lit) and op not in POLYMORPHIC_OPS:
                return self.settle(a, None)  # both are literals: ask for a suffix
        if a.__class__ is Val and b.__class__ is Val:
            return self._binary(op, a, b, span)  # `lifted`'s answer
        return self.lifted([a, b], lambda v: self._binary(op, v[0], v[1], span))

    def _binary(self, op: str, a: Val, b: Val, span: Span) -> Val:
        if a.id is None or b.id is None:  # poisoned
            return POISON
        key = (op, a.type, b.type)
        result = _BINARY_RESULTS.get(key)
        if result is None:
            result = _binary_rule(key)
        if isinstance(result, tuple):
            return self.add(result[0], result[1], (a, b), None, span)
        if isinstance(result, str):
            self.error(result, span)
            return POISON
        return fixed.binary(self, op, a, b, span)  # `_FIXED_POINT`

    def unify(self, lhs: Value, lhs_node: SyntaxNode,
              rhs_node: SyntaxNode) -> tuple[Value, Value]:
        """Build the right operand and give both one type (a literal takes the other's); both
        stay pending when both are literals."""
        if isinstance(lhs, Lit):
            rhs = self.expr(rhs_node, None)
            if isinstance(rhs, Lit):
                return lhs, rhs
            if rhs.poisoned:
                return POISON, POISON
            return self.expect(lhs, rhs.type, lhs_node), rhs
        if lhs.poisoned:
            self.expr(rhs_node, None)
            return POISON, POISON
        rhs = self.expr(rhs_node, lhs.type)
        if isinstance(rhs, Lit):
            return lhs, self.expect(rhs, lhs.type, rhs_node)
        return lhs, rhs

    def _expr_cast_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        parts = t.exprs(node)
        tys = t.types(node)
        if not parts or not tys:
            return POISON
        target = self.resolve_type(tys[0])
        exact = fixed.literal_value(parts[0])
        if isinstance(target, FixedType) or (exact is not None and exact.denominator != 1):
            return fixed.cast_expr(self, parts[0], target, node.span)
        value = self.settle(self.expr(parts[0], None),
                            target if isinstance(target, IntType) else None)
        if value.poisoned or target is None:
            return POISON
        if isinstance(value.type, FixedType):
            return fixed.cast_expr(self, parts[0], target, node.span)
        try:
            typeck.cast_result(value.live_type, target)
        except TypeRuleError as e:
            self.error(str(e), node.span)
            return POISON
        if value.type == target:
            return value
        return self.add("cast", target, [value], span=node.span)

    # --- calls -------------------------------------------------------------------------------

    def _expr_call_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        callee = next((c for c in node.child_nodes() if c.kind in (K.NAME_REF, K.GENERIC_NAME)),
                      None)
        arg_list = node.first_child(K.ARG_LIST)
        if callee is None or arg_list is None:
            if callee is None and node.first_child() is not None:
                self.error("only named functions can be called", node.span)
            return POISON
        name = t.name(callee) or ""
        args = t.exprs(arg_list)
        if name in self.fns and callee.kind == K.NAME_REF and self.lookup(name) is None:
            return self.call_user(self.fns[name], args, node)
        if name in fixed.BUILTINS and name not in self.fns:
            return fixed.call(self, name, callee, args, node.span)
        if name in typeck.BUILTINS:
            n = typeck.BUILTINS[name].arity or 0
            if len(args) != n:
                self.error(
                    f"`{name}` takes {n} argument{'s' * (n != 1)}, but {len(args)} "
                    f"{'was' if len(args) == 1 else 'were'} given",
                    node.span,
                )
                return POISON
            return self.call_builtin(name, callee, args, hint, node.span)
        self.error(f"cannot find function `{name}` in this file", callee.span)
        return POISON

    def call_builtin(self, name: str, callee: SyntaxNode, args: list[SyntaxNode],
                     hint: Type | None, span: Span) -> Value:
        """Type and build a call of a built-in function (rules on its ``OpDef``)."""
        generics = t.exprs(callee) if callee.kind == K.GENERIC_NAME else []
        if (name == "slice") != bool(generics):
            msg = ("`slice` needs its parameters: `slice::<LO, W>(x)`" if name == "slice"
                   else f"`{name}` takes no `::<...>` parameters")
            self.error(msg, callee.span)
            return POISON
        if name == "slice":
            return self._slice(generics, args[0], span)
        roles = typeck.BUILTINS[name].arg_roles
        if roles in (("result", "result"), ("same", "same")):  # one type: a literal takes it
            hint = hint if roles[0] == "result" else None
            vals = list(self.unify(self.expr(args[0], hint), args[0], args[1]))
        else:
            vals = [self.expr(arg, hint) if role == "result" else self.any_unsigned(arg)
                    if role == "amount" else self.typed(arg, None)
                    for role, arg in zip(roles, args, strict=True)]
        for value, role in zip(vals, roles, strict=True):
            if isinstance(value, Lit) and role != "result":
                return self.settle(value, None)  # the call's type cannot type this argument
        return self.lifted(vals, lambda v: self._builtin(name, v, span))

    def _builtin(self, name: str, vals: list[Val], span: Span) -> Val:
        if any(v.poisoned for v in vals):
            return POISON
        try:
            result = typeck.builtin_result(name, [v.live_type for v in vals])
        except TypeRuleError as e:
            self.error(str(e), span)
            return POISON
        return self.add(typeck.BUILTINS[name].name, result, vals, span=span)

    def _slice(self, generics: list[SyntaxNode], arg: SyntaxNode, span: Span) -> Value:
        if len(generics) != 2:
            self.error("`slice` takes two parameters: `slice::<LO, W>(x)`", span)
            return POISON
        lo = self.const_int(generics[0], U32, "`slice` LO")
        width = self.const_int(generics[1], U32, "`slice` W")
        x = self.typed(arg, None)
        if lo is None or width is None or x.poisoned:
            return POISON
        try:
            out = typeck.slice_result(x.live_type, lo, width)
        except TypeRuleError as e:
            self.error(str(e), span)
            return POISON
        return self.add("slice", out, [x], {"lo": lo}, span=span)

    def call_user(self, fn: FnItem, args: list[SyntaxNode], node: SyntaxNode) -> Value:
        """Type-check arguments and inline a user function call."""
        if len(args) != len(fn.params):
            self.error(
                f"`{fn.name}` takes {len(fn.params)} argument{'s' * (len(fn.params) != 1)}, "
                f"but {len(args)} {'was' if len(args) == 1 else 'were'} given",
                node.span,
                Note(f"`{fn.name}` is defined here", fn.name_span),
            )
            return POISON
        vals = []
        for arg, (pname, ptype, pspan) in zip(args, fn.params, strict=True):
            note = Note(f"expected `{ptype}` because of parameter `{pname}`", pspan)
            vals.append(self.expect(self.expr(arg, ptype), ptype, arg, note))
        if any(v.poisoned for v in vals) or fn.ret is None:
            return POISON
        return self.inline(fn, vals, node.span)

    # --- control flow ------------------------------------------------------------------------

    def _expr_if_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        parts = t.exprs(node)
        blocks = [c for c in node.child_nodes() if c.kind == K.BLOCK]
        if not parts or not blocks:
            return POISON
        cond_node = parts[0]
        cond = self.expect(self.expr(cond_node, BOOL), BOOL, cond_node,
                           Note("an `if` condition is a `bool`"))
        else_node = blocks[1] if len(blocks) > 1 else next(
            (c for c in parts[1:] if c.kind == K.IF_EXPR), None)
        saved = self.snapshot()
        with self.guarded(cond):
            then_val = self.block(blocks[0], hint)
        then_env = self.snapshot_values(saved)
        self.restore(saved)
        if else_node is None:
            if isinstance(then_val, Lit) or (not then_val.poisoned and then_val.type != UNIT):
                self.error(
                    "`if` without `else` has the type `()`; its block must not end in a value",
                    blocks[0].span,
                )
            else_val: Value = self.unit()
        else:
            with self.guarded(cond, negate=True):
                else_val = self.block(else_node, hint) if else_node.kind == K.BLOCK \
                    else self.expr(else_node, hint)
        else_env = self.snapshot_values(saved)
        if cond.poisoned:
            self.restore(saved)
            return POISON
        self.merge(saved, cond, then_env, else_env)
        return self.select(cond, then_val, else_val, blocks[0], else_node, node.span)

    def select(self, cond: Val, a: Value, b: Value, a_node: SyntaxNode,
               b_node: SyntaxNode | None, span: Span) -> Value:
        """Build ``cond ? a : b`` after checking both arms have one type."""
        if isinstance(a, Lit) and isinstance(b, Lit):
            return self.lifted([a, b], lambda v: self.select(cond, v[0], v[1], a_node, b_node,
                                                             span), span, "this `if`")
        if isinstance(a, Lit):
            assert isinstance(b, Val)  # two pending arms were lifted above
            a = self.expect(a, b.type, a_node) if not b.poisoned else POISON
        if isinstance(b, Lit):
            b = self.expect(b, a.type, b_node or a_node) if not a.poisoned else POISON
        if a.poisoned or b.poisoned or cond.poisoned:
            return POISON
        if a.type != b.type:
            self.error(
                f"`if` and `else` have different types: `{a.type}` and `{b.type}`",
                (b_node or a_node).span,
                Note(f"this branch is `{a.type}`", a_node.span),
            )
            return POISON
        if a.id == b.id:
            return a
        return self.add("select", a.live_type, [cond, a, b], span=span)

    def _expr_for_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        self.for_loop(node)
        return self.unit()

    def _expr_assign_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        self.assign(node)
        return self.unit()

    def _expr_return_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        self.error("`return` is allowed only as the last statement of a function body",
                   node.span)
        return POISON

    def _expr_range_expr(self, node: SyntaxNode, hint: Type | None) -> Value:
        self.error("a range is allowed only in a `for` loop", node.span)
        return POISON


ExprMixin._rules = rules_of(ExprMixin)  # its subclasses make their own (``__init_subclass__``)


def bin_shape(green: GreenNode) -> BinShape | None:
    """Return the ``BinShape`` of a binary operator node (None when the parser reported it
    broken)."""
    op_kind, parts = t.operator_and_operands(green)
    op = BIN_TOKENS.get(op_kind) if op_kind is not None else None
    return None if op is None or len(parts) != 2 else (op, *parts[0], *parts[1])


def _binary_rule(key: tuple[str, Type | None, Type | None]) -> tuple[str, Type] | str | object:
    """Return (and remember in ``_BINARY_RESULTS``) what ``ExprMixin._binary`` builds for an
    operator over operands of two types, ``key``: ``(opcode, result type)``, ``_FIXED_POINT``
    when an operand is fixed point, or the type rule's message."""
    op, lhs, rhs = key
    result: tuple[str, Type] | str | object
    if isinstance(lhs, FixedType) or isinstance(rhs, FixedType):
        result = _FIXED_POINT
    else:
        assert lhs is not None and rhs is not None  # the operands are not poisoned
        try:
            result = (typeck.OPCODES[op], typeck.binary_result(op, lhs, rhs))
        except TypeRuleError as e:
            result = str(e)
    if len(_BINARY_RESULTS) >= 1 << 16:
        _BINARY_RESULTS.clear()
    _BINARY_RESULTS[key] = result
    return result


def is_bool_or_int(ty: Type | None) -> bool:
    """Return True for scalar types."""
    return isinstance(ty, IntType | BoolType)
