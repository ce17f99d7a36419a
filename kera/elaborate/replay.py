"""Loop bodies built once and replayed per iteration (issue 17).

Unrolling walks the body's syntax tree once per iteration; most of that walk (dispatch, scope
look-ups, typing) gives the same answers every time, only the node ids change. So the first two
iterations are built normally while every ``add`` is recorded (a ``Trace``). The first trace
becomes a ``Template``: each recorded node's inputs as references to the iteration value, the
variables' values on entry, earlier nodes of the same iteration, or fixed ids. The template is
then checked against the second trace (it must predict every node, input for input, and every
variable's value on exit); only then are the remaining iterations replayed from it: one
``Graph.add`` per node that depends on the iteration, in the order the walk would add them, with
the same spans. The graph, its insertion order and the diagnostics are those of the walk.

Nothing is replayed when an iteration's building could depend on more than node ids: a
diagnostic, a compile-time value asked of a node that changes per iteration (``closed_int``),
a change to the unroll budget, a node added other than through ``add``, state, or a call to a
user function (instances and state have effects outside the graph).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter

from kera.diagnostics import Span
from kera.elaborate.values import Binding, Val
from kera.ir.graph import Attrs, Graph, Node, canonical_attrs, node_id, node_id_parts
from kera.ir.types import Type

Call = tuple[str, Type, tuple[bytes, ...], "dict | None", "Span | None", bytes]
_sha3 = hashlib.sha3_256
ITER = 0  # slot of the iteration value; the entry values of the variables follow it


@dataclass(slots=True)
class Trace:
    """What one iteration added and asked, and its variables' values on entry and exit."""

    iter_id: bytes | None
    entry: list[bytes]
    calls: list[Call] = field(default_factory=list)
    queried: list[bytes] = field(default_factory=list)
    exit: list[Val] = field(default_factory=list)

    @property
    def made(self) -> set[bytes]:
        """Return the ids of every node this iteration added (or met again)."""
        return {c[5] for c in self.calls}


class Template:
    """A loop body as slots: built from one trace (see the module docstring)."""

    def __init__(self, trace: Trace, iter_span: Span | None) -> None:
        self.n_vars = len(trace.entry)
        self.base: list[bytes | None] = [trace.iter_id, *trace.entry]
        self.variant = [True] * (1 + self.n_vars)
        where: dict[bytes, int] = {}
        for j, vid in enumerate(trace.entry):
            where[vid] = 1 + j
        if trace.iter_id is not None:
            where[trace.iter_id] = ITER
        self.refs: list[tuple[int, ...]] = []  # per call: its input slots (fixed ids get one)
        # Per node to add each iteration: opcode, type, input slots, attributes, span, slot,
        # and the bytes its id hashes before and after the input ids.
        self.steps: list[tuple[str, Type, tuple[int, ...], Attrs, Span | None, int, bytes,
                               bytes]] = []
        self.ok = True
        self.iter_span = iter_span
        self._const_parts: tuple[Type, bytes] | None = None  # see _iter_id
        self.slots: list[int] = []  # per call: the slot of its result
        for op, ty, inputs, attrs, span, out in trace.calls:
            refs = tuple(self._slot(where, i) for i in inputs)
            self.refs.append(refs)
            slot = len(self.base)
            self.slots.append(slot)
            variant = any(self.variant[r] for r in refs)
            self.base.append(out)
            self.variant.append(variant)
            if variant:
                items = canonical_attrs(op, attrs)
                head, tail = node_id_parts(op, ty, len(inputs), items)
                if _sha3(b"".join((head, *inputs, tail))).digest() != out:
                    self.ok = False  # the id encoding is not what node_id_parts says
                self.steps.append((op, ty, refs, items, span, slot, head, tail))
            where[out] = slot
        self.exit = [self._slot(where, v.id) if v.id is not None else -1 for v in trace.exit]
        self.exit_types = [v.type for v in trace.exit]
        self.calls = trace.calls
        self.ok = self.ok and all(r >= 0 for r in self.exit) and not any(
            q in where and self.variant[where[q]] for q in trace.queried)
        # The steps as ``replay`` runs them: the inputs gathered by one C-level call.
        self.plan = [(op, ty, _gather(refs), items, span, slot, head, tail)
                     for op, ty, refs, items, span, slot, head, tail in self.steps]
        # Every slot a replayed node reads, to keep the graph's sinks once per iteration.
        self.inputs_of = _gather(tuple(dict.fromkeys(r for step in self.steps for r in step[2])))

    def _slot(self, where: dict[bytes, int], node_id: bytes) -> int:
        slot = where.get(node_id)
        if slot is None:  # a node from outside the loop body: a fixed id
            slot = where[node_id] = len(self.base)
            self.base.append(node_id)
            self.variant.append(False)
        return slot

    def predicts(self, trace: Trace) -> bool:
        """Return True when this template gives exactly ``trace`` (another iteration)."""
        if len(trace.calls) != len(self.calls) or len(trace.entry) != self.n_vars:
            return False
        if any(q == trace.iter_id or q in trace.entry or q in trace.made for q in trace.queried):
            return False
        vals = self._start(trace.iter_id, trace.entry)
        for k, (mine, theirs) in enumerate(zip(self.calls, trace.calls, strict=True)):
            op, ty, _, attrs, span, out = mine
            slot = self.slots[k]
            if op != theirs[0] or ty != theirs[1] or attrs != theirs[3] or span != theirs[4]:
                return False
            if not self.variant[slot] and out != theirs[5]:
                return False
            if tuple([vals[r] for r in self.refs[k]]) != theirs[2]:
                return False
            vals[slot] = theirs[5]
        return [vals[r] for r in self.exit] == [v.id for v in trace.exit] and \
            self.exit_types == [v.type for v in trace.exit]

    def _start(self, iter_id: bytes | None, entry: list[bytes]) -> list[bytes | None]:
        vals = self.base.copy()
        vals[ITER] = iter_id
        vals[1:1 + len(entry)] = entry
        return vals

    def _iter_id(self, t: Type, i: int) -> bytes:
        """Return the id of the constant ``i`` of type ``t``: ``node_id`` with the bytes around
        the value's 16 bytes made once (checked against ``node_id`` when they are made)."""
        parts = self._const_parts
        if parts is None or parts[0] != t:
            head, tail = node_id_parts("const", t, 0, (("value", i),))
            pre = head + tail[:-16]
            if _sha3(pre + i.to_bytes(16, "big", signed=True)).digest() != \
                    node_id("const", t, (), (("value", i),)):
                return node_id("const", t, (), (("value", i),))  # not the layout assumed
            parts = self._const_parts = (t, pre)
        return _sha3(parts[1] + i.to_bytes(16, "big", signed=True)).digest()

    def replay(self, graph: Graph, iter_type: Type, lo: int, hi: int, bindings: list[Binding],
               advance: Callable[[int], None]) -> None:
        """Add the nodes of iterations ``lo..hi`` and move ``bindings`` to their values on exit.

        Nodes are interned as ``Graph.add`` does, without its checks: the walks that made and
        checked this template added the same opcodes over the same types and attributes, and
        every input is a node of the graph. The variables go from one iteration to the next as
        ids (their types do not change); ``advance(n)`` counts iterations done, every 1,024.
        """
        nodes, spans, sinks = graph.nodes, graph.spans, graph.sinks
        assert sinks is not None, "replayed into a graph that does not keep its sinks"
        base, plan, inputs_of, iter_span = self.base, self.plan, self.inputs_of, self.iter_span
        exits = _gather(tuple(self.exit))
        entry: tuple[bytes | None, ...] = tuple([b.value.id for b in bindings])
        first, after = 1, 1 + len(entry)  # the slots of the variables' values on entry
        sha3, join, keep_span = _sha3, b"".join, spans.setdefault
        for i in range(lo, hi):
            vals = base.copy()
            made: list[bytes] = []  # the ids of the nodes new to the graph
            new = made.append
            if iter_span is not None:
                nid = self._iter_id(iter_type, i)  # lo <= i < hi, of the loop variable's type
                if nid not in nodes:
                    nodes[nid] = Node("const", iter_type, (), (("value", i),), nid)
                    new(nid)
                if nid not in spans:
                    spans[nid] = iter_span
                vals[ITER] = nid
            vals[first:after] = entry
            for op, ty, gather, items, span, out, head, tail in plan:
                inputs = gather(vals)
                nid = sha3(join((head, *inputs, tail))).digest()
                if nid in nodes:
                    if span is not None:
                        keep_span(nid, span)
                else:
                    nodes[nid] = Node(op, ty, inputs, items, nid)
                    new(nid)
                    if span is not None:  # a graph that keeps its sinks has spans only of nodes
                        spans[nid] = span
                vals[out] = nid
            # The sinks as `Graph.add` keeps them: the new nodes, less every input of this
            # iteration's nodes (those of nodes met again were used already).
            sinks.update(made)
            sinks.difference_update(inputs_of(vals))
            entry = exits(vals)
            if (i - lo) & 1023 == 1023:
                advance(1024)
        advance((hi - lo) & 1023)
        for binding, vid, exit_type in zip(bindings, entry, self.exit_types, strict=True):
            binding.value = Val(vid, exit_type)


def _gather(refs: tuple[int, ...]) -> Callable[[list[bytes | None]], tuple[bytes, ...]]:
    """Return a function of the slot values giving the values at ``refs``, as a tuple."""
    if len(refs) >= 2:
        return itemgetter(*refs)
    if refs:
        only = itemgetter(refs[0])
        return lambda vals: (only(vals),)
    return lambda vals: ()


def traced(builder: object, run: Callable[[], None], iter_id: bytes | None,
           bindings: list[Binding]) -> Trace:
    """Run ``run`` (one iteration) while recording every ``add`` and ``closed_int`` of it."""
    trace = Trace(iter_id, [b.value.id for b in bindings])  # type: ignore[misc]
    real_add = builder.add  # type: ignore[attr-defined]
    real_closed = builder.closed_int  # type: ignore[attr-defined]
    calls, queried = trace.calls, trace.queried

    def add(op: str, ty: Type, inputs: list[Val], attrs: dict | None = None,
            span: Span | None = None) -> Val:
        value: Val = real_add(op, ty, inputs, attrs, span)
        calls.append((op, ty, tuple([v.id for v in inputs]), attrs, span, value.id))  # type: ignore
        return value

    def closed_int(value: Val) -> int | None:
        if value.id is not None:
            queried.append(value.id)
        result: int | None = real_closed(value)
        return result

    hooks = vars(builder)
    hooks["add"], hooks["closed_int"] = add, closed_int
    try:
        run()
    finally:
        del hooks["add"], hooks["closed_int"]
    trace.exit = [b.value for b in bindings]
    return trace
