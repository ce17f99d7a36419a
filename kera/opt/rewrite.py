"""The rewriting walk every pass shares: old graph in, fresh graph out, one local rule per pass.

``rewrite(graph, rule)`` visits the nodes the regions reach, inputs first, and re-adds each one
into a new ``Graph`` through ``Graph.add`` — so hash-consing (CSE) keeps working — after asking
the pass's rule whether to replace it. The old graph is never touched. Spans follow the node
they belong to: a replacement with no span of its own inherits the span of the node it
replaces, and so does every helper node a rule emits while rewriting it. Nodes the rewrite
left unused are dropped before the new graph is returned, so every pass's output holds only
live nodes.

The walk visits the nodes in the graph's insertion order (always topological); dead ones are
dropped at the end. The pass manager first puts its input in canonical order, keeping only live
nodes, and every walk keeps the order it was given, so the optimised graph depends only on the
content of the input graph.

``Rewriter.run_asking`` is the same walk for a rule whose caller knows which nodes the rule
would keep as they are: up to the first node the rule changes it copies the others without
asking (a walk that changes nothing is a copy of its input), then walks the rest as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Iterable, Mapping
from itertools import islice
from typing import NamedTuple

from kera.diagnostics import Span
from kera.ir.graph import AttrValue, Graph, Node
from kera.ir.types import BoolType, IntType, Type


class Term(NamedTuple):
    """A node about to be added: opcode, result type, (new) input ids and sorted attributes."""

    op: str
    type: Type
    args: tuple[bytes, ...]
    attrs: tuple[tuple[str, AttrValue], ...] = ()

    def attr(self, key: str) -> AttrValue:
        """Return the value of attribute ``key``; raise ``KeyError`` when absent."""
        for k, v in self.attrs:
            if k == key:
                return v
        raise KeyError(key)


_term = tuple.__new__  # Term(...) without NamedTuple's Python-level __new__ (the hot path)

Rule = Callable[["Rewriter", Term], "bytes | None"]
"""A pass's local rule: return the id (in ``rw.new``) that replaces the term, or None to keep it."""

_MAX_DEPTH = 64  # rules applied to the nodes rules emit: a bound, not an expected depth
_LEAVES = frozenset({"param", "state"})  # inputs of a transfer: no rule rewrites them


class Rewriter:
    """The state of one rewriting walk: both graphs, the id map, and helpers for rules.

    ``ops`` (optional) names the opcodes the rule looks at; other nodes skip the rule.
    """

    __slots__ = ("_consts", "_depth", "_span", "current", "kept", "map", "memo", "new", "old",
                 "ops", "rule")

    def __init__(self, old: Graph, rule: Rule, ops: Collection[str] | None = None) -> None:
        self.old = old
        self.new = Graph(old.source_path)
        self.rule = rule
        self.ops = ops
        self.map: dict[bytes, bytes] = {}
        self._span: Span | None = None
        self._depth = 0
        self.current: bytes | None = None
        """The old id of the node being visited, while the rule looks at that node itself."""
        self.memo: dict[object, object] = {}
        """Scratch space rules may keep for the length of one walk."""
        self._consts: dict[tuple[Type, int], bytes] = {}  # (type, value) -> id in ``new``
        self.kept: list[object] = []
        """Where a rule that keeps an emitted term as it is may append that very term: ``emit``
        replaces it with the term's id once added (the id the term hashes to)."""

    # --- building ---------------------------------------------------------------------------

    def emit(
        self,
        op: str,
        type: Type,
        args: Iterable[bytes] = (),
        attrs: Mapping[str, AttrValue] | None = None,
    ) -> bytes:
        """Add a node to the new graph after giving the pass's rule a chance to rewrite it."""
        items = tuple(sorted(attrs.items())) if attrs else ()
        term = _term(Term, (op, type, tuple(args), items))
        if self._depth < _MAX_DEPTH and op not in _LEAVES and (self.ops is None or op in self.ops):
            self._depth += 1
            current, self.current = self.current, None
            try:
                out = self.rule(self, term)
            finally:
                self._depth -= 1
                self.current = current
            if out is not None:
                return out
            out = self.raw(term)
            kept = self.kept
            if kept and kept[-1] is term:
                kept[-1] = out
            return out
        return self.raw(term)

    def raw(self, term: Term) -> bytes:
        """Add a term to the new graph as it is (no rule), with the current span."""
        attrs = term.attrs
        return self.new.add(term.op, term.type, term.args, dict(attrs) if attrs else None,
                            self._span)

    def const(self, t: Type, value: int | bool) -> bytes:
        """Add a constant of type ``t`` (ints reduced modulo 2**N, bools as 0/1)."""
        if isinstance(t, BoolType):
            v = int(bool(value))
        elif isinstance(t, IntType):
            v = t.wrap(int(value))
        else:
            raise ValueError(f"constants must be integers or bools, not {t}")
        key = (t, v)
        nid = self._consts.get(key)
        if nid is None:  # ``new`` only grows during the walk, so a hit is still its node
            nid = self._consts[key] = self.new.add("const", t, (), {"value": v}, self._span)
        else:  # what ``Graph.add`` does for a node it has: a span only where there is none
            span, spans = self._span, self.new.spans
            if span is not None and nid not in spans:
                spans[nid] = span
        return nid

    def cast(self, x: bytes, t: Type) -> bytes:
        """Return ``x as t`` (``x`` itself when it already has type ``t``)."""
        return x if self.type(x) == t else self.emit("cast", t, (x,))

    # --- looking at the new graph -----------------------------------------------------------

    def node(self, nid: bytes) -> Node:
        """Return a node of the new graph."""
        return self.new.nodes[nid]

    def type(self, nid: bytes) -> Type:
        """Return the type of a node of the new graph."""
        return self.new.nodes[nid].type

    def const_value(self, nid: bytes) -> int | None:
        """Return the value of a ``const`` node of the new graph (None for any other node)."""
        node = self.new.nodes[nid]
        return node.attrs[0][1] if node.op == "const" else None  # type: ignore[return-value]

    # --- the walk ---------------------------------------------------------------------------

    def visit(self, nid: bytes) -> bytes:
        """Rewrite one old node whose inputs are already mapped; return its new id."""
        self._walk((nid,))
        return self.map[nid]

    def _walk(
        self,
        order: Iterable[bytes],
        skip: Collection[bytes] = (),
        custom: Mapping[bytes, Callable[[Rewriter, bytes], bytes]] | None = None,
    ) -> None:
        """Visit nodes in order (the hot loop of every pass, so everything is a local)."""
        old_nodes, old_spans = self.old.nodes, self.old.spans
        new = self.new
        new_nodes, new_spans, add_like = new.nodes, new.spans, new.add_like
        m, rule, ops = self.map, self.rule, self.ops
        for nid in order:
            if skip and nid in skip:
                continue
            if custom and nid in custom:
                self.replace(nid, custom[nid])
                continue
            node = old_nodes[nid]
            ins = node.inputs
            n = len(ins)  # one or two inputs mostly: a tuple display beats a comprehension
            args = (ins if not n else (m[ins[0]],) if n == 1 else (m[ins[0]], m[ins[1]])
                    if n == 2 else tuple([m[i] for i in ins]))
            span = old_spans.get(nid)
            op = node.op
            out = None
            if op not in _LEAVES and (ops is None or op in ops):
                self._span, self.current = span, nid
                out = rule(self, _term(Term, (op, node.type, args, node.attrs)))
            if out is None:
                if args == ins:  # unchanged: the same content has the same id
                    out = nid
                    if nid not in new_nodes:
                        new_nodes[nid] = node
                else:
                    out = add_like(node, args)
            if span is not None and out not in new_spans:
                new_spans[out] = span
            m[nid] = out

    def replace(self, nid: bytes, build: Callable[[Rewriter, bytes], bytes]) -> bytes:
        """Map old node ``nid`` to what ``build(self, nid)`` adds (its inputs may be unmapped)."""
        self._span = span = self.old.spans.get(nid)
        self.current = nid
        out = build(self, nid)
        if span is not None:
            self.new.spans.setdefault(out, span)
        self.map[nid] = out
        return out

    def run(
        self,
        order: Iterable[bytes] | None = None,
        skip: Collection[bytes] = (),
        custom: Mapping[bytes, Callable[[Rewriter, bytes], bytes]] | None = None,
    ) -> Graph:
        """Visit the old graph's nodes in ``order`` (default: all, as inserted); return the new
        graph, without the nodes that ended up unused.

        Nodes in ``skip`` are not re-added (nothing may use them later); nodes in ``custom`` are
        rebuilt by their own function instead of the rule.
        """
        self._walk(self.old.nodes if order is None else order, skip, custom)
        return self._finish()

    def run_asking(self, ask: Container[bytes], all_live: bool = False) -> Graph:
        """Return what ``run()`` returns, asking the rule only about the nodes in ``ask`` until
        it changes something.

        For the caller's rule, every node of ``ops`` that is not in ``ask`` must be one the rule
        would keep as it is without adding anything (nor any side effect that matters) while
        its inputs are unchanged. Up to the first node the rule changes (or about which it adds
        a node or span), the walk would map every node to itself and copy it, node and span, in
        order: this does just that; from there on the usual walk visits the rest. When nothing
        changed and ``all_live`` says the old graph holds only live nodes, no sweep for dead
        nodes is needed either.
        """
        old_nodes, old_spans = self.old.nodes, self.old.spans
        new = self.new
        new_nodes, new_spans = new.nodes, new.spans
        m, rule, ops = self.map, self.rule, self.ops
        for i, (nid, node) in enumerate(old_nodes.items()):
            span = old_spans.get(nid)
            op = node.op
            if nid in ask and op not in _LEAVES and (ops is None or op in ops):
                sizes = len(new_nodes), len(new_spans)
                self._span, self.current = span, nid
                out = rule(self, _term(Term, (op, node.type, node.inputs, node.attrs)))
                if out is not None or sizes != (len(new_nodes), len(new_spans)):
                    if out is None:  # what ``_walk`` does with the node, then the rest
                        out = nid
                        if nid not in new_nodes:
                            new_nodes[nid] = node
                    if span is not None and out not in new_spans:
                        new_spans[out] = span
                    m[nid] = out
                    self._walk(islice(old_nodes, i + 1, None))
                    return self._finish()
            if nid not in new_nodes:
                new_nodes[nid] = node
            if span is not None and nid not in new_spans:
                new_spans[nid] = span
            m[nid] = nid
        return self._finish(sweep=not all_live)

    def _finish(self, sweep: bool = True) -> Graph:
        """Give the new graph the old one's regions, remapped; drop the nodes left unused."""
        new = self.new
        for name, region in self.old.regions.items():
            new.regions[name] = region.remap(self.map)
        if not sweep:
            return new
        alive = live(new)
        if len(alive) < len(new.nodes):  # drop what the rewrite left behind (a few nodes:
            nodes, spans = new.nodes, new.spans  # deleting them keeps the others' order)
            for nid in nodes.keys() - alive:
                del nodes[nid]
            for nid in spans.keys() - alive:
                del spans[nid]
        return new


def live(graph: Graph) -> set[bytes]:
    """Return the ids of the nodes the regions reach (one sweep against insertion order)."""
    alive: set[bytes] = set()
    for region in graph.regions.values():
        alive.update(region.roots())
    more = alive.update
    for nid, node in reversed(graph.nodes.items()):
        if nid in alive and node.inputs:
            more(node.inputs)
    return alive


def walk_order(graph: Graph) -> list[bytes]:
    """Return the live nodes in insertion order (inputs before their users)."""
    alive = live(graph)
    return [nid for nid in graph.nodes if nid in alive]


def canonical(graph: Graph) -> Graph:
    """Return a copy holding only the live nodes, inserted in canonical (content) order."""
    out = Graph(graph.source_path)
    nodes, spans = graph.nodes, graph.spans
    for nid in graph.canonical_order():
        out.nodes[nid] = nodes[nid]
        if nid in spans:
            out.spans[nid] = spans[nid]
    out.regions = dict(graph.regions)
    out.state_names = dict(graph.state_names)
    return out


def use_counts(graph: Graph, order: list[bytes]) -> dict[bytes, int]:
    """Return how often each node in ``order`` is used (operands, counted with repeats).

    A region result counts as one more use, so it is never taken for an interior node.
    """
    counts = dict.fromkeys(order, 0)
    nodes = graph.nodes
    for nid in order:
        for i in nodes[nid].inputs:
            counts[i] += 1
    for region in graph.regions.values():
        for root in (region.result, *(slot.next for slot in region.states)):
            counts[root] += 1
    return counts


def rewrite(
    graph: Graph,
    rule: Rule,
    *,
    ops: Collection[str] | None = None,
    order: list[bytes] | None = None,
) -> Graph:
    """Return a new graph: every node re-added, inputs first, through ``rule``; the dead dropped.

    ``ops`` limits the rule to those opcodes. Params, region names and region params stay.
    """
    return Rewriter(graph, rule, ops).run(order)


__all__ = [
    "Rewriter",
    "Rule",
    "Term",
    "canonical",
    "live",
    "rewrite",
    "use_counts",
    "walk_order",
]
