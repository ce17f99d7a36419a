"""Constant folding: evaluate what the inputs already decide, with the registry's own semantics.

Guarantees: a node whose operands are all ``const`` becomes a ``const`` holding exactly what the
registry's ``evaluate`` computes for it (one row; there is no second copy of the arithmetic).
Constant aggregates stay ``array``/``tuple`` nodes of constants — that *is* their canonical
form, since ``const`` holds only scalars. Reads and writes at constant positions of a known
``array``/``tuple`` node are resolved, following SEMANTICS.md: a read past the end reads the
last element, a write past the end changes nothing.
"""

from __future__ import annotations

from kera.ir.graph import Graph
from kera.ir.ops import OPS
from kera.ir.types import ArrayType, BoolType, IntType
from kera.opt.consts import evaluate_term
from kera.opt.rewrite import Rewriter, Term, rewrite

_NOT_FOLDED = frozenset({"param", "state", "const", "array", "tuple"})


def fold_rule(rw: Rewriter, t: Term) -> bytes | None:
    """Return the folded replacement of one term, or None when nothing is known."""
    if t.op in _NOT_FOLDED:
        return None
    nodes = rw.new.nodes
    for a in t.args:
        if nodes[a].op != "const":
            break
    else:
        if t.args and isinstance(t.type, IntType | BoolType):
            consts = [int(nodes[a].attrs[0][1]) for a in t.args]
            return rw.const(t.type, evaluate_term(rw, t, consts))
    if t.op == "array_index":
        return _array_index(rw, t)
    if t.op == "array_update":
        return _array_update(rw, t)
    if t.op == "tuple_get":
        src = rw.node(t.args[0])
        return src.inputs[int(t.attr("index"))] if src.op == "tuple" else None
    return None


def _array_index(rw: Rewriter, t: Term) -> bytes | None:
    arr, idx = t.args
    k = rw.const_value(idx)
    src = rw.node(arr)
    if src.op == "array" and len(set(src.inputs)) == 1:
        return src.inputs[0]  # every element is the same node: the index does not matter
    if k is None:
        return None
    assert isinstance(src.type, ArrayType)
    last = src.type.length - 1
    if src.op == "array":
        return src.inputs[min(k, last)]
    if src.op == "array_update":
        base, j_id, val = src.inputs
        j = rw.const_value(j_id)
        if j is not None:
            if j > last:  # that write changed nothing
                return rw.emit("array_index", t.type, (base, idx))
            return val if min(k, last) == j else rw.emit("array_index", t.type, (base, idx))
    if k > last:  # canonical index: the clamp made explicit
        return rw.emit("array_index", t.type, (arr, rw.const(rw.type(idx), last)))
    return None


def _array_update(rw: Rewriter, t: Term) -> bytes | None:
    arr, idx, val = t.args
    k = rw.const_value(idx)
    if k is None:
        return None
    src = rw.node(arr)
    assert isinstance(src.type, ArrayType)
    if k >= src.type.length:
        return arr  # a write past the end does nothing
    if src.op == "array":
        elems = list(src.inputs)
        elems[k] = val
        return rw.emit("array", t.type, elems)
    if src.op == "array_update" and rw.const_value(src.inputs[1]) == k:
        return rw.emit("array_update", t.type, (src.inputs[0], idx, val))  # overwritten
    return None


FOLDED = frozenset(OPS) - _NOT_FOLDED


def fold(graph: Graph) -> Graph:
    """Return ``graph`` with constant subexpressions and known element accesses folded."""
    return rewrite(graph, fold_rule, ops=FOLDED)


__all__ = ["FOLDED", "fold", "fold_rule"]
