"""Build the content-addressed graph from a parsed Kera file.

One walk over the tree resolves names, evaluates constants, inlines calls, unrolls loops, turns
`let mut` and element updates into SSA values and `if` into selects, and type-checks everything
on the way (rules in ``kera.check.typeck``). Every problem becomes a diagnostic; the walk goes on
with a poisoned value so that one run reports every error.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from kera.diagnostics import Diagnostic, SourceFile, Span
from kera.elaborate.exprs import ExprMixin
from kera.elaborate.items import FnItem, ItemsMixin
from kera.elaborate.state import StateInfo, StateMixin, state_bits
from kera.elaborate.stmts import StmtMixin
from kera.elaborate.values import Val
from kera.ir.gcpause import paused_gc
from kera.ir.graph import Graph, Region
from kera.syntax import ParseResult, parse

MAX_DEPTH = 1500


@dataclass
class Program:
    """The result of building one file: graph (the top function's region), diagnostics."""

    source: SourceFile
    graph: Graph | None
    top: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    functions: dict[str, FnItem] = field(default_factory=dict)
    # Stateful functions (STATE.md): name -> its state elements, in index order.
    stateful: dict[str, list[StateInfo]] = field(default_factory=dict)

    def state_summary(self) -> list[str]:
        """Return one line per stateful function: its state elements and bits."""
        lines = []
        for name in sorted(self.stateful):
            elements = self.stateful[name]
            bits = sum(state_bits(e.type) for e in elements)
            parts = ", ".join(f"{e.kind} {e.name}: {e.type}" for e in elements)
            lines.append(f"`{name}` is stateful: {len(elements)} state element"
                         f"{'s' * (len(elements) != 1)}, {bits} bits ({parts})")
        return lines

    @property
    def ok(self) -> bool:
        """Return True when there are no errors."""
        return self.graph is not None and not any(
            d.severity.value == "error" for d in self.diagnostics
        )


class Builder(ItemsMixin, StateMixin, StmtMixin, ExprMixin):
    """Walk one file's tree and build its graph (see the module docstring)."""

    stateful: dict[str, list[StateInfo]]

    # --- functions ---------------------------------------------------------------------------

    def function_region(self, fn: FnItem) -> Region | None:
        """Build a function with `param` nodes as its own region."""
        types = [ty for _, ty, _ in fn.params if ty is not None]
        if len(types) != len(fn.params) or fn.ret is None:
            return None
        if len({name for name, _, _ in fn.params}) != len(fn.params):
            return None  # duplicate parameter names were reported by read_signature
        ids = [
            self.graph.add("param", ty, (), {"index": i, "name": name}, span=span)
            for i, ((name, _, span), ty) in enumerate(zip(fn.params, types, strict=True))
        ]
        self.start_states()
        result = self.inline(fn, [Val(p, ty) for p, ty in zip(ids, types, strict=True)],
                             fn.name_span, top=True)
        if self.fstate.elements:
            self.stateful[fn.name] = list(self.fstate.elements)
        if result.id is None:
            return None
        return Region(fn.name, tuple(ids), result.id, self.region_states())


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
                  need_top: bool = True) -> Program:
    """Parse and build one file. The graph holds the top function's region only."""
    with paused_gc():  # a node record, an id and a span per value, and no cycles
        return _build(path, data, top, need_top)


def _build(path: str, data: bytes | str, top: str | None, need_top: bool) -> Program:
    """``build_program`` with the collector paused."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return elaborate(SourceFile(path, raw), parse(raw), top, need_top)


def elaborate(source: SourceFile, parsed: ParseResult, top: str | None = None,
              need_top: bool = True) -> Program:
    """Build the graph of a parsed file (``build_program`` after its parse; the build
    benchmark times the two apart). Its diagnostics come after the parser's."""
    builder = Builder(source)
    builder.stateful = {}
    builder.start_states()  # constants (built first, and lazily for signatures) are outside any
    # function: no state and no path condition; each region starts afresh
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
    region = regions.get(top_name) if top_name is not None else None
    if top_name is not None and region is not None:
        builder.graph.add_region(region)
        graph = builder.graph.subgraph([top_name], consume=True)  # the builder is done
        requested = builder.fns[top_name].ii  # None without `#[pipeline(ii = N)]`
        if requested is not None:
            graph.directives[top_name] = {"ii": requested}
    return Program(source, graph, top_name, diagnostics, builder.fns, builder.stateful)


__all__ = ["Program", "StateInfo", "build_program", "elaborate", "select_top"]
