"""Compile-time evaluation of closed values (loop bounds, array lengths, `slice` parameters).

A value is closed when no `param` node reaches it. It is evaluated on a batch of one row with
the op registry's own ``evaluate`` — the same semantics as the interpreter, never a second copy.
"""

from __future__ import annotations

from kera.ir.graph import Graph
from kera.ir.ops import OPS
from kera.ir.types import IntType
from kera.ir.values import Value

_OPEN = object()


class ClosedEvaluator:
    """Memoised evaluation of parameter-free nodes of one growing graph."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._values: dict[bytes, Value] = {}  # a batch of one row, or _OPEN

    def value(self, node_id: bytes) -> Value:
        """Return the batched value of a closed node, or the ``_OPEN`` marker."""
        nodes, memo = self.graph.nodes, self._values
        stack = [node_id]
        while stack:
            nid = stack[-1]
            if nid in memo:
                stack.pop()
                continue
            node = nodes[nid]
            if node.op in ("param", "state"):
                memo[nid] = _OPEN
                stack.pop()
                continue
            pending = [i for i in node.inputs if i not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            args = [memo[i] for i in node.inputs]
            if any(a is _OPEN for a in args):
                memo[nid] = _OPEN
                continue
            in_types = [nodes[i].type for i in node.inputs]
            memo[nid] = OPS[node.op].evaluate(args, node.attr_dict, in_types, node.type)
        return memo[node_id]

    def int_value(self, node_id: bytes) -> int | None:
        """Return a closed integer node's value as a Python int, else None."""
        if not isinstance(self.graph.nodes[node_id].type, IntType):
            return None
        v = self.value(node_id)
        return None if v is _OPEN else int(v[0])
