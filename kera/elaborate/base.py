"""The graph builder's shared state and primitives, which its parts (items, statements,
expressions: one mixin each) derive from.

``BuilderBase`` owns the state (graph, scopes, items, diagnostics) and the primitives every part
uses (reporting, adding nodes, checking a value against a type). What one mixin calls on another
is declared here for the type checker only; ``kera.elaborate.Builder`` combines the mixins.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from fractions import Fraction
from typing import TYPE_CHECKING

from kera.diagnostics import Diagnostic, Note, SourceFile, Span
from kera.elaborate import fixed
from kera.elaborate.fold import ClosedEvaluator
from kera.elaborate.values import POISON, Binding, Lit, Val, Value
from kera.ir.graph import Graph
from kera.ir.types import UNIT, ArrayType, BoolType, FixedType, IntType, Type
from kera.syntax import GreenNode, SyntaxNode

if TYPE_CHECKING:
    from kera.elaborate.items import ConstItem, FnItem


class BuilderBase:
    """State and primitives of the graph builder (see the module docstring)."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.graph = Graph()
        self.graph.source_path = source.path
        self.graph.track_sinks()  # only `add` and the loop replay add nodes to it
        self._diags: dict[tuple[int, int, str], Diagnostic] = {}
        self.fns: dict[str, FnItem] = {}
        self.consts: dict[str, ConstItem] = {}
        self.aliases: dict[str, SyntaxNode] = {}
        self._alias_stack: list[str] = []
        self.scopes: list[dict[str, Binding]] = [{}]
        self.call_stack: list[str] = []
        from kera.elaborate.stmts import LoopBudget  # stmts builds on this module

        self.loops = LoopBudget()
        self._folder = ClosedEvaluator(self.graph)
        self._consts: dict[tuple[Type, int], Val] = {}  # (type, value) -> its `const` node
        self._unit: Val | None = None  # the `()` node, once made

    # --- diagnostics -------------------------------------------------------------------------

    def error(self, message: str, span: Span, *notes: Note) -> None:
        """Report an error once (unrolled loops and inlined calls revisit the same code)."""
        key = (span.start, span.end, message)
        if key not in self._diags:
            self._diags[key] = Diagnostic.error(message, span, *notes)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Return the diagnostics in source order."""
        return sorted(self._diags.values(), key=lambda d: (d.span.start, d.span.end, d.message))

    # --- graph values ------------------------------------------------------------------------

    def add(self, op: str, ty: Type, inputs: Sequence[Val], attrs: dict | None = None,
            span: Span | None = None) -> Val:
        """Add a node unless an input is poisoned."""
        if len(inputs) == 2:  # a binary operator's (without the list of the general case)
            ids: tuple[bytes | None, ...] = (inputs[0].id, inputs[1].id)
        else:
            ids = tuple([v.id for v in inputs])
        if None in ids:
            return POISON
        node_id = self.graph.add(op, ty, ids, attrs, span)  # type: ignore[arg-type]
        return Val(node_id, ty)

    def const(self, ty: Type, value: int, span: Span | None = None) -> Val:
        """Add a constant of a scalar type (memoised: literals recur all over a program)."""
        key = (ty, int(value))
        known = self._consts.get(key)
        if "add" in self.__dict__:  # a loop being recorded sees every add
            known = self._consts[key] = self.add("const", ty, [], {"value": key[1]}, span=span)
        elif known is None:  # `add`'s answer: a constant has no inputs to be poisoned
            known = self._consts[key] = Val(self.graph.add_const(ty, key[1], span), ty)
        elif span is not None and known.id is not None and known.id not in self.graph.spans:
            self.graph.spans[known.id] = span  # what Graph.add does for a node it has
        return known

    def const_at(self, ty: Type, value: int, start: int, end: int) -> Val:
        """Return ``const(ty, value, Span(start, end))``, making the span only when it is needed
        (a constant met again keeps its first span)."""
        known = self._consts.get((ty, value))
        if known is None or known.id not in self.graph.spans or "add" in self.__dict__:
            return self.const(ty, value, Span(start, end))
        return known

    def unit(self) -> Val:
        """Return the `()` value (every statement makes one: memoised like ``const``)."""
        known = self._unit
        if known is None or "add" in self.__dict__:  # a loop being recorded sees every add
            known = self._unit = self.add("tuple", UNIT, [])
        return known

    def materialize(self, lit: Lit, ty: Type | None) -> Val:
        """Give a pending literal the type ``ty``, checking that it fits."""
        if isinstance(ty, FixedType):
            return fixed.literal(self, lit, ty)
        if isinstance(lit.value, Fraction) and lit.build is None:
            self.error(f"a fractional literal needs a fixed-point type, not `{ty}`", lit.span,
                       Note("write it as `fx<W, I>`, or convert: `(... as fx<W, I>) as iN`"))
            return POISON
        if not isinstance(ty, IntType):
            found = "bool" if isinstance(ty, BoolType) else ty
            self.error(f"expected `{found}`, found an integer literal", lit.span)
            return POISON
        if lit.build is not None:
            return lit.build(ty)
        assert isinstance(lit.value, int)  # a fraction without a fixed-point type was refused
        if not ty.contains(lit.value):
            self.error(
                f"literal `{lit.value}` does not fit in `{ty}` ({ty.min}..={ty.max})", lit.span
            )
            return POISON
        return self.const(ty, lit.value, lit.span)

    def expect(self, value: Value, ty: Type | None, node: SyntaxNode,
               note: Note | None = None) -> Val:
        """Check that ``value`` has type ``ty`` (a pending literal takes it)."""
        if ty is None:
            return POISON
        if isinstance(value, Lit):
            return self.materialize(value, ty)
        if value.poisoned:
            return POISON
        if value.type != ty:
            notes = (note,) if note is not None else ()
            self.error(f"mismatched types: expected `{ty}`, found `{value.type}`", node.span,
                       *notes)
            return POISON
        return value

    def closed_int(self, value: Val) -> int | None:
        """Return the value as a Python int when it is known at compile time, else None."""
        return None if value.id is None else self._folder.int_value(value.id)

    if TYPE_CHECKING:
        # --- provided by ExprMixin (kera.elaborate.exprs) --------------------------------------

        def expr(self, node: SyntaxNode, hint: Type | None) -> Value: ...

        def settle(self, value: Value, ty: Type | None) -> Val: ...

        def typed(self, node: SyntaxNode, hint: Type | None) -> Val: ...

        def any_unsigned(self, node: SyntaxNode) -> Val: ...

        def operand(self, green: GreenNode, offset: int, parent: SyntaxNode,
                    hint: Type | None) -> Value: ...

        def binary(self, op: str, lhs: Value, lhs_node: SyntaxNode, rhs_node: SyntaxNode,
                   span: Span) -> Value: ...

        def _expr_return_expr(self, node: SyntaxNode, hint: Type | None) -> Value: ...

        # --- provided by StateMixin (kera.elaborate.state) -------------------------------------

        guards: list[Val]

        def state_decl(self, node: SyntaxNode, top_level: bool) -> None: ...

        def read_state(self, binding: Binding, node: SyntaxNode, whole: bool) -> Val: ...

        def instance(self, fn_name: str, top: bool) -> AbstractContextManager[None]: ...

        def guarded(self, cond: Val, negate: bool = False) -> AbstractContextManager[None]: ...

        # --- provided by StmtMixin (kera.elaborate.stmts) --------------------------------------

        def lookup(self, name: str) -> Binding | None: ...

        def snapshot(self) -> list[tuple[Binding, Val]]: ...

        @staticmethod
        def snapshot_values(saved: list[tuple[Binding, Val]]) -> list[Val]: ...

        @staticmethod
        def restore(saved: list[tuple[Binding, Val]]) -> None: ...

        def merge(self, saved: list[tuple[Binding, Val]], cond: Val, then_vals: list[Val],
                  else_vals: list[Val]) -> None: ...

        def block(self, node: SyntaxNode, hint: Type | None, fn_body: bool = False) -> Value: ...

        def assign(self, node: SyntaxNode) -> None: ...

        def for_loop(self, node: SyntaxNode) -> None: ...

        def inline(self, fn: FnItem, args: list[Val], span: Span, top: bool = False) -> Val: ...

        # --- provided by ItemsMixin (kera.elaborate.items) -------------------------------------

        def resolve_type(self, node: SyntaxNode | None) -> Type | None: ...

        def sized_array(self, elem: Type, length: int, span: Span) -> ArrayType | None: ...

        def _named_type(self, node: SyntaxNode) -> Type | None: ...

        def const_item_value(self, item: ConstItem, use_span: Span) -> Val: ...

        def const_int(self, node: SyntaxNode, default: IntType, what: str) -> int | None: ...
