"""Small random graphs that exercise one opcode at many types, and a checker against interp.

``op_program(op, data)`` draws a region that applies ``op`` several times, each time at fresh
random types (widths 1..64, signed and unsigned, bools, aggregates where the op takes them), with
some operands constant; ``check_backend`` runs it on a backend over edge and random vectors
(plus the amounts around N for shifts) and compares every result leaf bit for bit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from kera.backends import Kernel, compile_target
from kera.backends.layout import leaf_bits
from kera.hls.pipeline import Schedule, single_stage
from kera.interp import evaluate
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, ArrayType, BoolType, IntType, TupleType, Type, uint
from kera.ir.values import edge_values
from kera.sim.parity import VectorSet, edge_vectors, random_vectors
from tests.ir.opkit import EDGE_WIDTHS

SAME_INT = ("add", "sub", "mul", "div", "rem", "min", "max")
INT_OR_BOOL = ("and", "or", "xor", "eq", "ne", "not")
ORDER = ("lt", "le", "gt", "ge")
SHIFTS = ("shl", "shr", "rotl", "rotr")
UNARY = ("popcount", "clz", "ctz")


@functools.cache
def widths(max_width: int = 64) -> st.SearchStrategy[int]:
    """Widths 1..max_width, biased toward the container edges."""
    edge = [w for w in EDGE_WIDTHS if w <= max_width]
    return st.one_of(st.sampled_from(edge), st.integers(1, max_width))


@functools.cache
def int_types(max_width: int = 64, signed: bool | None = None) -> st.SearchStrategy[IntType]:
    """``uN``/``iN`` strategies (``signed`` fixes the signedness)."""
    sign = st.booleans() if signed is None else st.just(signed)
    return st.builds(IntType, widths(max_width), sign)


@functools.cache
def scalar_types(max_width: int = 64) -> st.SearchStrategy[Type]:
    return st.one_of(int_types(max_width), st.just(BOOL))


@functools.cache
def value_types(depth: int = 2, max_width: int = 64) -> st.SearchStrategy[Type]:
    """Scalars, small arrays and tuples (nested up to ``depth``)."""
    if depth == 0:
        return scalar_types(max_width)
    inner = value_types(depth - 1, max_width)
    return st.one_of(
        scalar_types(max_width), scalar_types(max_width),
        st.builds(ArrayType, inner, st.integers(1, 4)),
        st.builds(lambda ts: TupleType(tuple(ts)), st.lists(inner, min_size=0, max_size=3)),
    )


@dataclass
class Program:
    """A graph under construction: params, results, extra input values to try per param."""

    graph: Graph = field(default_factory=Graph)
    params: list[bytes] = field(default_factory=list)
    results: list[bytes] = field(default_factory=list)
    extra: dict[str, list[int]] = field(default_factory=dict)
    max_width: int = 64  # widest integer drawn
    const_amounts: bool = False  # shift and rotate amounts are constants (SIMD lanes need them)

    def operand(self, data: st.DataObject, t: Type, can_const: bool = True) -> bytes:
        """Return a param of type ``t``, or (sometimes, for scalars) a constant edge value."""
        if can_const and isinstance(t, IntType | BoolType) and data.draw(st.integers(0, 4)) == 0:
            return const(self.graph, t, data.draw(st.sampled_from(edge_values(t))))
        name = f"p{len(self.params)}"
        pid = param(self.graph, len(self.params), name, t)
        self.params.append(pid)
        return pid

    def region(self) -> tuple[Graph, str]:
        out_types = tuple(self.graph[r].type for r in self.results)
        result = self.graph.add("tuple", TupleType(out_types), self.results)
        self.graph.add_region(Region("top", tuple(self.params), result))
        return self.graph, "top"


def _amount_extras(prog: Program, amount: bytes, t: IntType) -> None:
    node = prog.graph[amount]
    if node.op != "param":
        return
    amount_t = node.type
    assert isinstance(amount_t, IntType)
    near = {t.width - 2, t.width - 1, t.width, t.width + 1, 31, 32, 33, 63, 64, 65, 127, 128}
    prog.extra[str(node.attr("name"))] = sorted(v for v in near if 0 <= v <= amount_t.max)


def add_instance(prog: Program, op: str, data: st.DataObject) -> None:  # noqa: C901
    """Append one application of ``op`` at freshly drawn types to ``prog``'s results."""
    g, d, mw = prog.graph, data.draw, prog.max_width
    if op in SAME_INT:
        t = d(int_types(mw))
        out = g.add(op, t, [prog.operand(data, t), prog.operand(data, t)])
    elif op == "neg":
        t = d(int_types(mw, signed=True))
        out = g.add(op, t, [prog.operand(data, t)])
    elif op in INT_OR_BOOL:
        t = d(scalar_types(mw))
        args = [prog.operand(data, t) for _ in range(1 if op == "not" else 2)]
        out = g.add(op, BOOL if op in ("eq", "ne") else t, args)
    elif op in ORDER:
        t = d(int_types(mw))
        out = g.add(op, BOOL, [prog.operand(data, t), prog.operand(data, t)])
    elif op in SHIFTS:
        t, n_t = d(int_types(mw)), d(int_types(mw, signed=False))
        if prog.const_amounts:
            near = [v for v in (t.width - 1, t.width, t.width + 1, 31, 32, 33) if v <= n_t.max]
            amount = const(g, n_t, d(st.sampled_from(near + edge_values(n_t))))
        else:
            amount = prog.operand(data, n_t)
            _amount_extras(prog, amount, t)
        out = g.add(op, t, [prog.operand(data, t), amount])
    elif op in UNARY:
        t = d(int_types(mw))
        out = g.add(op, t, [prog.operand(data, t)])
    elif op == "widening_mul":
        t = d(int_types(mw // 2))
        out = g.add(op, IntType(2 * t.width, t.signed), [prog.operand(data, t),
                                                           prog.operand(data, t)])
    elif op == "cast":
        src, dst = d(scalar_types(mw)), d(int_types(mw))
        out = g.add(op, dst, [prog.operand(data, src)])
    elif op == "concat":
        hi = d(int_types(mw - 1))
        lo = d(int_types(mw - hi.width))
        out = g.add(op, uint(hi.width + lo.width), [prog.operand(data, hi),
                                                     prog.operand(data, lo)])
    elif op == "slice":
        t = d(int_types(mw))
        lo = d(st.integers(0, t.width - 1))
        w = d(st.integers(1, t.width - lo))
        out = g.add(op, uint(w), [prog.operand(data, t)], {"lo": lo})
    elif op == "select":
        t = d(value_types(2, mw))
        out = g.add(op, t, [prog.operand(data, BOOL), prog.operand(data, t),
                            prog.operand(data, t)])
    elif op == "const":
        t = d(scalar_types(mw))
        out = const(g, t, d(st.sampled_from(edge_values(t))))
    elif op == "param":
        out = prog.operand(data, d(value_types(2, mw)), can_const=False)
    elif op == "array":
        t = d(value_types(1, mw))
        n = d(st.integers(1, 5))
        out = g.add(op, ArrayType(t, n), [prog.operand(data, t) for _ in range(n)])
    elif op in ("array_index", "array_update"):
        t = ArrayType(d(value_types(1, mw)), d(st.integers(1, 9)))
        idx_t = uint(d(st.one_of(st.integers(1, 5), widths(mw))))
        arr, idx = prog.operand(data, t), prog.operand(data, idx_t)
        node = g[idx]
        if node.op == "param":
            prog.extra[str(node.attr("name"))] = [v for v in range(t.length + 2)
                                                  if v <= idx_t.max]
        if op == "array_index":
            out = g.add(op, t.elem, [arr, idx])
        else:
            out = g.add(op, t, [arr, idx, prog.operand(data, t.elem)])
    elif op == "tuple":
        ts = d(st.lists(value_types(1, mw), min_size=0, max_size=4))
        out = g.add(op, TupleType(tuple(ts)), [prog.operand(data, t) for t in ts])
    elif op == "tuple_get":
        ts = d(st.lists(value_types(1, mw), min_size=1, max_size=4))
        i = d(st.integers(0, len(ts) - 1))
        out = g.add(op, ts[i], [prog.operand(data, TupleType(tuple(ts)))], {"index": i})
    else:
        raise AssertionError(f"no generator for opcode `{op}`")
    prog.results.append(out)


@dataclass(frozen=True)
class OpProgram:
    """A region whose result field k is one application of opcode ``labels[k]``."""

    graph: Graph
    top: str
    labels: tuple[str, ...]
    extra: dict[str, list[int]]  # values to try per parameter (shift amounts, indices)


def op_program(ops: list[str], data: st.DataObject, count: int, max_width: int = 64,
               const_amounts: bool = False) -> OpProgram:
    """Return a region applying each of ``ops`` ``count`` times at independently drawn types.

    ``state`` is skipped: it needs a stateful region (tests/backends/test_state.py)."""
    prog = Program(max_width=max_width, const_amounts=const_amounts)
    labels = []
    for op in (o for o in ops if o != "state"):
        for _ in range(count):
            add_instance(prog, op, data)
            labels.append(op)
    graph, top = prog.region()
    return OpProgram(graph, top, tuple(labels), prog.extra)


def vectors_for(graph: Graph, top: str, seed: int, extra: dict[str, list[int]]) -> VectorSet:
    """Edge and random rows for ``top``, plus rows with each extra value of a parameter."""
    params, _ = graph.signature(top)
    sets = edge_vectors(params, limit=1024) + random_vectors(params, 256, seed)
    first, at = {}, 0
    for name, t in params:
        first[name] = at
        at += len(_flat(t))
    head = min(sets.rows, 16)
    parts = []
    for name, vals in extra.items():
        cols = [np.tile(c[:head], len(vals)) for c in sets.columns]
        j = first[name]
        cols[j] = np.repeat(np.array(vals, dtype=sets.columns[j].dtype), head)
        parts.append(cols)
    if parts:
        joined = tuple(np.concatenate([c, *(p[j] for p in parts)])
                       for j, c in enumerate(sets.columns))
        sets = VectorSet(sets.params, joined, sets.rows + head * sum(map(len, extra.values())))
    return sets


def _flat(t: Type) -> list:
    from kera.backends.layout import flatten_type

    return flatten_type(t)


def check_backend(backend: str | Callable[[Schedule], Kernel], prog: OpProgram,
                  seed: int = 0) -> None:
    """Assert that ``backend`` (a name, or a compile function) agrees with the interpreter on
    every leaf of every vector."""
    graph, top = prog.graph, prog.top
    compile_ = (lambda s: compile_target(backend, s)) if isinstance(backend, str) else backend
    vs = vectors_for(graph, top, seed, prog.extra)
    inputs = vs.inputs
    _, result_type = graph.signature(top)
    want = evaluate(graph, top, inputs, rows=vs.rows)
    got = compile_(single_stage(graph, top))(inputs, vs.rows)
    leaves = zip(leaf_bits(want, result_type, vs.rows), leaf_bits(got, result_type, vs.rows),
                 strict=True)
    paths = [leaf.path for leaf in _flat(result_type)]
    for k, (a, b) in enumerate(leaves):
        bad = np.flatnonzero(a != b)
        if len(bad):
            i = int(bad[0])
            op = prog.labels[paths[k][0]]
            row = {n: _show(inputs[n], i) for n, _ in graph.signature(top)[0]}
            raise AssertionError(f"{backend}: `{op}` (result leaf {k}) differs on {len(bad)} rows; "
                                 f"first "
                                 f"row {i}: inputs {row}: expected {int(a[i]):#x}, got "
                                 f"{int(b[i]):#x}")


def _show(value: object, i: int) -> object:
    if isinstance(value, list | tuple):
        return [_show(v, i) for v in value]
    return int(value[i])  # type: ignore[index]


__all__ = ["OpProgram", "check_backend", "op_program", "vectors_for"]
