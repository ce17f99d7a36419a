"""Lowering for hardware: rewrite ops that have no good single-cycle circuit into ones that do.

``lower_for_hardware(graph)`` is a graph-to-graph pass. It returns a new graph with the same
regions (and so the same interface), where

* ``div`` and ``rem`` become a restoring-division network built only from registry ops
  (``slice``/``concat``/``cast`` wiring, ``ge``/``eq`` compares, ``and``, ``sub``, ``select``,
  ``neg``), one small step per quotient bit, so that a divider is pipelined by the scheduler like
  any other chain of adders instead of being one enormous combinational op. A constant divisor
  folds what it makes constant (an unsigned power of two leaves only wiring).

Every other node is copied as is. Nodes are interned through ``Graph.add`` (so a ``div`` and a
``rem`` of the same operands share one network) and every new node takes the source span of the
node it replaces, so reports still point at the user's ``/`` or ``%``.

The network follows SEMANTICS.md exactly: truncation toward zero, ``a / 0 = 0``, ``a % 0 = a``,
``MIN / -1 = MIN``, ``MIN % -1 = 0``. Signed operands are divided as magnitudes and the signs
fixed up afterwards (quotient negative when the operand signs differ, remainder takes the
dividend's sign), which is what the reference interpreter does too.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kera.diagnostics import Span
from kera.ir.graph import Graph, const
from kera.ir.ops import OPS
from kera.ir.types import BOOL, BoolType, IntType, Type, uint
from kera.ir.values import dtype_of

#: Ops this pass rewrites.
LOWERED_OPS: frozenset[str] = frozenset({"div", "rem"})


def needs_lowering(graph: Graph) -> bool:
    """Return whether any node of ``graph`` is an op this pass rewrites."""
    return any(n.op in LOWERED_OPS for n in graph.nodes.values())


def lower_for_hardware(graph: Graph) -> Graph:
    """Return a copy of ``graph`` with ``div``/``rem`` replaced by restoring-division networks.

    The result has the same regions (same names, same parameters, equivalent results), keeps
    the source path and carries the spans of the nodes it copies or replaces. Only nodes
    reachable from the regions are kept. A graph without division is returned as an equal copy.
    """
    out = Graph(graph.source_path)
    new_id: dict[bytes, bytes] = {}
    for nid in graph.canonical_order():
        node = graph.nodes[nid]
        span = graph.spans.get(nid)
        inputs = tuple(new_id[i] for i in node.inputs)
        if node.op in LOWERED_OPS:
            assert isinstance(node.type, IntType)
            quotient, remainder = divmod_network(out, inputs[0], inputs[1], node.type, span)
            new_id[nid] = quotient if node.op == "div" else remainder
        else:
            new_id[nid] = out.add(node.op, node.type, inputs, node.attr_dict or None, span)
    for name in sorted(graph.regions):
        out.add_region(graph.regions[name].remap(new_id))
    out.state_names = {new_id[k]: v for k, v in graph.state_names.items() if k in new_id}
    return out.subgraph()  # drops what constant folding left unused


def divmod_network(
    g: Graph, a: bytes, b: bytes, t: IntType, span: Span | None = None
) -> tuple[bytes, bytes]:
    """Add a network computing SEMANTICS.md's ``(a / b, a % b)`` for operands of type ``t``.

    Returns the ids of the quotient and the remainder (both of type ``t``).
    """
    add = adder(g, span)
    w = t.width
    u = uint(w)
    if not t.signed:
        return _udivmod(g, a, b, w, span)
    zero = const(g, t, 0, span)
    na = add("lt", BOOL, a, zero)
    nb = add("lt", BOOL, b, zero)
    # |x| as an unsigned pattern; |MIN| = 2**(w-1) is exact in w unsigned bits.
    ua = add("cast", u, add("select", t, na, add("neg", t, a), a))
    ub = add("cast", u, add("select", t, nb, add("neg", t, b), b))
    uq, ur = _udivmod(g, ua, ub, w, span)
    sq, sr = add("cast", t, uq), add("cast", t, ur)
    quotient = add("select", t, add("xor", BOOL, na, nb), add("neg", t, sq), sq)
    remainder = add("select", t, na, add("neg", t, sr), sr)
    return quotient, remainder


def _udivmod(g: Graph, a: bytes, b: bytes, w: int, span: Span | None) -> tuple[bytes, bytes]:
    """Restoring division of two ``w``-bit unsigned patterns (``a``/``b`` may be any int type).

    Step ``k`` (``k = 0 .. w-1``) brings down bit ``w-1-k`` of ``a``: the partial remainder
    entering it is below ``2**k``, so the step works on ``k+1`` bits only. It subtracts the
    divisor when that does not go negative (the divisor's bits above ``k+1`` must be zero and its
    low bits at most the shifted remainder), which sets quotient bit ``w-1-k``. Division by zero
    gives an all-ones quotient and ``a`` as remainder; the quotient is then forced to 0.
    """
    add = adder(g, span)
    u = uint(w)
    a_u = a if g.nodes[a].type == u else add("cast", u, a)
    b_u = b if g.nodes[b].type == u else add("cast", u, b)
    divisor = g.nodes[b_u]
    value = int(divisor.attr("value")) if divisor.op == "const" else 0
    if value > 0 and _is_pow2(value):
        k = int(divisor.attr("value")).bit_length() - 1  # a / 2**k, a % 2**k: only wiring
        if k == 0:
            return a_u, const(g, u, 0, span)
        high = add("cast", u, add("slice", uint(w - k), a_u, attrs={"lo": k}))
        return high, add("cast", u, add("slice", uint(k), a_u, attrs={"lo": 0}))
    rem: bytes | None = None
    quot: bytes | None = None
    for k in range(w):
        m = k + 1  # width of this step
        bit = add("slice", uint(1), a_u, attrs={"lo": w - 1 - k})
        shifted = bit if rem is None else add("concat", uint(m), rem, bit)
        if m < w:
            b_lo = add("slice", uint(m), b_u, attrs={"lo": 0})
            b_hi = add("slice", uint(w - m), b_u, attrs={"lo": m})
            hi_zero = add("eq", BOOL, b_hi, const(g, uint(w - m), 0, span))
            take = add("and", BOOL, hi_zero, add("ge", BOOL, shifted, b_lo))
        else:
            b_lo = b_u
            take = add("ge", BOOL, shifted, b_lo)
        rem = add("select", uint(m), take, add("sub", uint(m), shifted, b_lo), shifted)
        qbit = add("cast", uint(1), take)
        quot = qbit if quot is None else add("concat", uint(m), quot, qbit)
    assert rem is not None and quot is not None
    by_zero = add("eq", BOOL, b_u, const(g, u, 0, span))
    quot = add("select", u, by_zero, const(g, u, 0, span), quot)
    return quot, rem


def _is_pow2(x: int) -> bool:
    return x & (x - 1) == 0


def adder(g: Graph, span: Span | None) -> Callable[..., bytes]:
    """Return ``add(op, type, *inputs, attrs=None)`` interning into ``g`` with ``span``.

    It folds what a constant divisor makes constant: an op whose inputs are all constants
    becomes a constant (evaluated by the registry), ``select`` on a constant condition becomes
    the chosen arm, and ``and`` with a constant bool becomes the other operand or ``false``.
    """

    def add(op: str, t: Type, *inputs: bytes, attrs: dict | None = None) -> bytes:
        ins = [g.nodes[i] for i in inputs]
        known = [n.attr("value") if n.op == "const" else None for n in ins]
        if ins and None not in known and isinstance(t, IntType | BoolType):
            args: list[np.ndarray] = [np.array([v], dtype=dtype_of(n.type))
                                      for v, n in zip(known, ins, strict=True)]
            value = OPS[op].evaluate(args, attrs or {}, [n.type for n in ins], t)
            return const(g, t, int(value[0]), span)
        if op == "select" and known[0] is not None:
            return inputs[1] if known[0] else inputs[2]
        if op == "and" and isinstance(t, BoolType) and (0 in known or 1 in known):
            if 0 in known:
                return const(g, t, 0, span)
            return inputs[1] if known[0] == 1 else inputs[0]
        return g.add(op, t, inputs, attrs, span)

    return add


__all__ = ["LOWERED_OPS", "adder", "divmod_network", "lower_for_hardware", "needs_lowering"]
