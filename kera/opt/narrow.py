"""Bit-width narrowing: compute additions, subtractions and products in the width they need.

Guarantees: an ``add``/``sub``/``mul``/``neg``, or a ``shl`` by a constant, of type T whose
exact (unwrapped) result provably lies in a narrower type T' (intervals from
``kera.opt.ranges``) is computed in T' on its operands truncated to T', then cast back to T.
This is exact: these ops agree modulo ``2**w'`` with their truncated operands, the result fits
T' so T' holds it exactly, and the cast extends it by T''s signedness — the value the wrapping
op in T gives. T' is the narrowest type that holds the result: unsigned when it cannot be
negative, signed otherwise (``neg`` always signed).
"""

from __future__ import annotations

from kera.ir.graph import Graph
from kera.ir.types import IntType
from kera.opt.ranges import Interval, Ranges
from kera.opt.rewrite import Rewriter, Term

NARROWED = frozenset({"add", "sub", "mul", "neg", "shl"})


def narrowest(r: Interval) -> IntType:
    """Return the narrowest integer type holding every value of ``r``."""
    lo, hi = r
    if lo >= 0:
        return IntType(max(1, hi.bit_length()), False)
    return IntType(max(_signed_bits(lo), _signed_bits(hi)), True)


def _signed_bits(v: int) -> int:
    return (v if v >= 0 else -v - 1).bit_length() + 1


def _exact(op: str, a: Interval, b: Interval) -> Interval:
    """Return the interval of the exact, unwrapped result."""
    if op == "neg":
        return -a[1], -a[0]
    if op == "shl":
        return a[0] << b[0], a[1] << b[0]
    if op == "add":
        return a[0] + b[0], a[1] + b[1]
    if op == "sub":
        return a[0] - b[1], a[1] - b[0]
    p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(p), max(p)


def _truncate(rw: Rewriter, x: bytes, t: IntType) -> bytes:
    """Return ``x`` truncated to the narrower ``t``, looking through an extension."""
    node = rw.node(x)
    if node.op == "const":
        return rw.const(t, int(node.attr("value")))
    if node.op == "cast":  # the low bits of an extension are those of its source
        return rw.cast(node.inputs[0], t)
    return rw.cast(x, t)


def narrow_rule(ranges: Ranges, rw: Rewriter, t: Term) -> bytes | None:
    """Return the narrowed form of an arithmetic op (None when it needs its whole width)."""
    if t.op not in NARROWED or not isinstance(t.type, IntType):
        return None
    rs = [ranges(a) for a in t.args]
    if t.op == "shl" and rs[1][0] != rs[1][1]:  # type: ignore[index]
        return None  # only a known amount says how far the value moves
    small = narrowest(_exact(t.op, rs[0], rs[-1]))  # type: ignore[arg-type]
    if t.op == "neg" and not small.signed:
        small = IntType(small.width + 1, True)
    if small.width >= t.type.width:
        return None
    if t.op == "shl":
        args = (_truncate(rw, t.args[0], small), t.args[1])
    else:
        args = tuple(_truncate(rw, a, small) for a in t.args)
    return rw.emit("cast", t.type, (rw.emit(t.op, small, args),))


def narrow(graph: Graph) -> Graph:
    """Return ``graph`` with arithmetic computed no wider than its values need."""
    rw = Rewriter(graph, lambda rw, t: narrow_rule(ranges, rw, t))
    ranges = Ranges(rw.new)  # intervals of the graph being built, as it grows
    return rw.run()


__all__ = ["NARROWED", "narrow", "narrow_rule", "narrowest"]
