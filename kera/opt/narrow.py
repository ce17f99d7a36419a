"""Bit-width narrowing: compute additions, subtractions and products in the width they need.

Guarantees: an ``add``/``sub``/``mul``/``neg``, or a ``shl`` by a constant, of type T whose
exact (unwrapped) result provably lies in a narrower type T' (intervals from
``kera.opt.ranges``) is computed in T' on its operands truncated to T', then cast back to T.
This is exact: these ops agree modulo ``2**w'`` with their truncated operands, the result fits
T' so T' holds it exactly, and the cast extends it by T''s signedness — the value the wrapping
op in T gives. T' is the narrowest type that holds the result: unsigned when it cannot be
negative, signed otherwise (``neg`` always signed). Narrowing adds casts, so it is done only
where it saves at least an eighth of the width and at least two bits. The same intervals also
decide comparisons they settle (``x < 300`` for an ``x`` known to be below 256 is ``true``).
"""

from __future__ import annotations

from kera.ir.graph import Graph
from kera.ir.types import MAX_WIDTH, IntType, int_type
from kera.opt.ranges import Interval, Ranges
from kera.opt.rewrite import Rewriter, Rule, Term

NARROWED = frozenset({"add", "sub", "mul", "neg", "shl"})
COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})


def narrowest(r: Interval) -> IntType | None:
    """Return the narrowest integer type holding every value of ``r`` (None: over 64 bits)."""
    lo, hi = r
    if lo >= 0:
        width, signed = max(1, hi.bit_length()), False
    else:
        width, signed = max(_signed_bits(lo), _signed_bits(hi)), True
    return int_type(width, signed) if width <= MAX_WIDTH else None


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
    if node.op == "cast":  # the low bits of an extension are those of its source
        x, node = node.inputs[0], rw.node(node.inputs[0])
    if node.op == "const":
        return rw.const(t, int(node.attr("value")))
    return rw.cast(x, t)


def worth_it(small: IntType, t: IntType) -> bool:
    """Return True when computing in ``small`` instead of ``t`` pays for the casts it adds."""
    return t.width - small.width >= max(2, t.width // 8)


def decided(op: str, a: Interval, b: Interval) -> bool | None:
    """Return the outcome of ``a op b`` when the intervals settle it (None when they do not)."""
    if op in ("eq", "ne"):
        if a[1] < b[0] or b[1] < a[0]:
            return op == "ne"
        return None
    if op in ("gt", "ge"):
        op, a, b = {"gt": "lt", "ge": "le"}[op], b, a
    if (a[1] < b[0]) if op == "lt" else (a[1] <= b[0]):
        return True
    if (a[0] >= b[1]) if op == "lt" else (a[0] > b[1]):
        return False
    return None


def narrow_rule(ranges: Ranges, rw: Rewriter, t: Term) -> bytes | None:
    """Return the narrowed form of an arithmetic op (None when it needs its whole width)."""
    if t.op in COMPARISONS and isinstance(rw.type(t.args[0]), IntType):
        known = decided(t.op, ranges(t.args[0]), ranges(t.args[1]))  # type: ignore[arg-type]
        return None if known is None else rw.const(t.type, known)
    if t.op not in NARROWED or not isinstance(t.type, IntType):
        return None
    rs = [ranges(a) for a in t.args]
    if t.op == "shl" and (rs[1][0] != rs[1][1] or rs[1][0] >= t.type.width):  # type: ignore[index]
        return None  # only a known amount says how far the value moves (all of it: simplify's)
    small = narrowest(_exact(t.op, rs[0], rs[-1]))  # type: ignore[arg-type]
    if small is not None and t.op == "neg" and not small.signed:
        small = int_type(small.width + 1, True) if small.width < MAX_WIDTH else None
    if small is None or not worth_it(small, t.type):
        return None
    args: tuple[bytes, ...]
    if t.op == "shl":
        args = (_truncate(rw, t.args[0], small), t.args[1])
    else:
        args = tuple(_truncate(rw, a, small) for a in t.args)
    return rw.emit("cast", t.type, (rw.emit(t.op, small, args),))


def narrow_rules(new: Graph) -> Rule:
    """Return the narrowing rule for a walk building ``new`` (intervals follow it as it grows)."""
    ranges = Ranges(new)
    return lambda rw, t: narrow_rule(ranges, rw, t)


def narrow(graph: Graph) -> Graph:
    """Return ``graph`` with arithmetic computed no wider than its values need."""
    rw = Rewriter(graph, lambda rw, t: None, NARROWED | COMPARISONS)
    rw.rule = narrow_rules(rw.new)
    return rw.run()


__all__ = [
    "COMPARISONS",
    "NARROWED",
    "decided",
    "narrow",
    "narrow_rule",
    "narrow_rules",
    "narrowest",
    "worth_it",
]
