"""Build the content-addressed graph from a parsed Kera file.

One walk over the tree resolves names, evaluates constants, inlines calls, unrolls loops, turns
`let mut` and element updates into SSA values and `if` into selects, and type-checks everything
on the way (rules in ``kera.check.typeck``). Every problem becomes a diagnostic; the walk goes on
with a poisoned value so that one run reports every error.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from kera.diagnostics import Diagnostic, Note, SourceFile, Span
from kera.elaborate.exprs import ExprMixin
from kera.elaborate.fold import ClosedEvaluator
from kera.elaborate.items import ConstItem, FnItem, ItemsMixin
from kera.elaborate.stmts import LoopBudget, StmtMixin
from kera.elaborate.values import POISON, Binding, Lit, Val, Value
from kera.ir.graph import Graph, Region
from kera.ir.types import UNIT, BoolType, IntType, Type
from kera.syntax import SyntaxNode, parse

MAX_DEPTH = 1500


@dataclass
class Program:
    """The result of building one file: graph (the top function's region), diagnostics."""

    source: SourceFile
    graph: Graph | None
    top: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    functions: dict[str, FnItem] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Return True when there are no errors."""
        return self.graph is not None and not any(
            d.severity.value == "error" for d in self.diagnostics
        )


class Builder(ItemsMixin, StmtMixin, ExprMixin):
    """Walk one file's tree and build its graph (see the module docstring)."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.graph = Graph()
        self.graph.source_path = source.path
        self._diags: dict[tuple[int, int, str], Diagnostic] = {}
        self.fns: dict[str, FnItem] = {}
        self.consts: dict[str, ConstItem] = {}
        self.aliases: dict[str, SyntaxNode] = {}
        self._alias_stack: list[str] = []
        self.scopes: list[dict[str, Binding]] = [{}]
        self.call_stack: list[str] = []
        self.loops = LoopBudget()
        self._depth = 0
        self._folder = ClosedEvaluator(self.graph)

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

    def enter(self, node: SyntaxNode) -> None:
        """Guard the walk's depth (the parser already limits nesting)."""
        self._depth += 1

    def leave(self) -> None:
        """Leave one level of the walk."""
        self._depth -= 1

    # --- graph values ------------------------------------------------------------------------

    def add(self, op: str, ty: Type, inputs: list[Val], attrs: dict | None = None,
            span: Span | None = None) -> Val:  # fmt: skip
        """Add a node unless an input is poisoned."""
        if any(v.poisoned for v in inputs):
            return POISON
        node_id = self.graph.add(op, ty, tuple(v.id for v in inputs), attrs, span=span)
        return Val(node_id, ty)

    def const(self, ty: Type, value: int, span: Span | None = None) -> Val:
        """Add a constant of a scalar type."""
        return self.add("const", ty, [], {"value": int(value)}, span=span)

    def unit(self) -> Val:
        """Return the `()` value."""
        return self.add("tuple", UNIT, [])

    def materialize(self, lit: Lit, ty: Type | None) -> Val:
        """Give a pending literal the type ``ty``, checking that it fits."""
        if not isinstance(ty, IntType):
            found = "bool" if isinstance(ty, BoolType) else ty
            self.error(f"expected `{found}`, found an integer literal", lit.span)
            return POISON
        if lit.build is not None:
            return lit.build(ty)
        if not ty.contains(lit.value):
            self.error(
                f"literal `{lit.value}` does not fit in `{ty}` ({ty.min}..={ty.max})", lit.span
            )
            return POISON
        return self.const(ty, lit.value, lit.span)

    def expect(self, value: Value, ty: Type | None, node: SyntaxNode,
               note: Note | None = None) -> Val:  # fmt: skip
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
                       *notes)  # fmt: skip
            return POISON
        return value

    def closed_int(self, value: Val) -> int | None:
        """Return the value as a Python int when it is known at compile time, else None."""
        return self._folder.int_value(value.id)

    # --- functions ---------------------------------------------------------------------------

    def function_region(self, fn: FnItem) -> Region | None:
        """Build a function with `param` nodes as its own region."""
        if any(ty is None for _, ty, _ in fn.params) or fn.ret is None:
            return None
        if len({name for name, _, _ in fn.params}) != len(fn.params):
            return None  # duplicate parameter names were reported by read_signature
        params = [
            Val(self.graph.add("param", ty, (), {"index": i, "name": name}, span=span), ty)
            for i, (name, ty, span) in enumerate(fn.params)
        ]
        result = self.inline(fn, params, fn.name_span)
        if result.poisoned:
            return None
        return Region(fn.name, tuple(p.id for p in params), result.id)


def select_top(fns: dict[str, FnItem], top: str | None) -> tuple[str | None, str | None]:
    """Return (top name, error message) following INTERFACES.md's `--top` rule."""
    if top is not None:
        if top in fns:
            return top, None
        names = ", ".join(sorted(fns)) or "none"
        return None, f"no function `{top}` in this file; candidates: {names}"
    marked = sorted(n for n, f in fns.items() if f.is_top)
    if len(marked) == 1:
        return marked[0], None
    if marked:
        return None, f"several functions are marked `#[top]`: {', '.join(marked)}; pass --top"
    candidates = ", ".join(sorted(n for n, f in fns.items() if f.is_pub)) or "none"
    return None, f"no function is marked `#[top]`; pass --top (candidates: {candidates})"


def build_program(path: str, data: bytes | str, top: str | None = None,
                  need_top: bool = True) -> Program:  # fmt: skip
    """Parse and build one file. The graph holds the top function's region only."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    source = SourceFile(path, raw)
    parsed = parse(raw)
    builder = Builder(source)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        builder.collect_items(parsed.tree)
        for fn in builder.fns.values():
            builder.read_attributes(fn)
            builder.read_signature(fn)
        for item in builder.consts.values():
            builder.const_item_value(item, item.name_span)
        regions = {name: builder.function_region(fn) for name, fn in builder.fns.items()}
    except RecursionError:
        builder.error("program is nested too deeply to compile", Span(0, 0))
        regions = {}
    finally:
        sys.setrecursionlimit(limit)
    diagnostics = list(parsed.diagnostics) + builder.diagnostics
    top_name, problem = select_top(builder.fns, top)
    if problem and need_top:
        diagnostics.append(Diagnostic.error(problem, Span(0, 0)))
    graph = None
    if top_name is not None and regions.get(top_name) is not None:
        builder.graph.add_region(regions[top_name])
        graph = builder.graph.subgraph([top_name])
        graph.directives[top_name] = {"ii": builder.fns[top_name].ii}
    return Program(source, graph, top_name, diagnostics, builder.fns)


__all__ = ["Program", "build_program", "select_top"]
