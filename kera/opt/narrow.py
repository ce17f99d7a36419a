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

A guarded difference is narrowed too: in ``select(x >= k, x - k, y)`` (``x > k``, ``k <= x``,
``k < x``, or the negated test with the arms swapped; ``x - k`` also written ``x + (2**w - k)``
for a constant ``k``, as the optimiser writes it) the arm is only observed when ``x >= k``, so
the value it gives there lies in ``[0, hi(x) - lo(k)]``: the select's arm becomes that
subtraction in the narrow type, cast back. It is a new node: the wide ``x - k`` stays for any
other user, and the select's value is unchanged on every input.
"""

from __future__ import annotations

from kera.ir.graph import Graph
from kera.ir.types import MAX_WIDTH, IntType, Type, int_type
from kera.opt.ranges import Interval, Ranges, fits
from kera.opt.rewrite import Rewriter, Rule, Term

NARROWED = frozenset({"add", "sub", "mul", "neg", "shl"})
COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
LOOKED_AT = NARROWED | COMPARISONS | {"select"}
"""The opcodes the narrowing rule looks at."""

# ``cmp(a, b)`` as ``(big, small, strict)``: ``big > small`` (strict) or ``big >= small`` holds
# when the select's true arm is taken (``_HOLDS``) or its false arm (``_FAILS``).
_HOLDS = {"ge": (0, 1, False), "gt": (0, 1, True), "le": (1, 0, False), "lt": (1, 0, True)}
_FAILS = {"lt": (0, 1, False), "le": (0, 1, True), "gt": (1, 0, False), "ge": (1, 0, True)}


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


def _low_of(rw: Rewriter, y: bytes, x: bytes, bits: int) -> bool:
    """Return True when the low ``bits`` bits (no more than ``y`` has) of ``y`` are those of
    ``x``: ``y`` is ``x``, a cast of ``x``, a cast of what ``x`` casts (two casts of one value
    agree on the bits both have: truncations keep them, extensions fill them alike), or a
    constant equal to ``x`` modulo ``2**bits``."""
    if y == x:
        return True
    node, src = rw.node(y), rw.node(x)
    if src.type.flat_width < bits:
        return False
    if node.op == "cast":
        return node.inputs[0] == x or (src.op == "cast" and node.inputs[0] == src.inputs[0])
    a, b = rw.const_value(y), rw.const_value(x)
    return a is not None and b is not None and (a - b) % (1 << bits) == 0


def _difference(rw: Rewriter, arm: bytes, big: bytes, small: bytes) -> Type | None:
    """Return the type ``S`` when ``arm`` is ``big - small`` computed modulo ``2**|S|`` in ``S``
    (``x - y`` or ``x + c`` with ``c == -y``) and cast to the arm's type (or not cast: ``S`` is
    the arm's type); None when it is not such a difference."""
    node = rw.node(arm)
    if node.op == "cast":
        node = rw.node(node.inputs[0])
    s = node.type
    if not isinstance(s, IntType) or node.op not in ("add", "sub"):
        return None
    x, y = node.inputs
    if node.op == "sub":
        return s if _low_of(rw, x, big, s.width) and _low_of(rw, y, small, s.width) else None
    k = rw.const_value(small)
    for a, c in ((x, y), (y, x)):
        v = rw.const_value(c)
        if k is not None and v is not None and (v + k) % (1 << s.width) == 0 and _low_of(
                rw, a, big, s.width):
            return s
    return None


def guarded_rule(ranges: Ranges, rw: Rewriter, t: Term) -> bytes | None:
    """Return ``select(c, a, b)`` with an arm narrowed where ``c`` guards the difference the
    arm computes (None when no arm is such a difference or narrowing does not pay)."""
    if not isinstance(t.type, IntType):
        return None
    cond = rw.node(t.args[0])
    args = list(t.args)
    changed = False
    for side, table in ((1, _HOLDS), (2, _FAILS)):
        if cond.op not in table or not isinstance(rw.type(cond.inputs[0]), IntType):
            continue
        i, j, strict = table[cond.op]
        big, small = cond.inputs[i], cond.inputs[j]
        within = _difference(rw, t.args[side], big, small)
        if within is None or rw.type(big) != rw.type(small):
            continue
        hi_big, lo_small = ranges(big)[1], ranges(small)[0]  # type: ignore[index]
        taken = (1 if strict else 0, hi_big - lo_small)
        if taken[1] < taken[0] or not (fits(taken, within) and fits(taken, t.type)):
            continue  # never taken (other rules settle the compare), or the arm wraps
        narrow_t = narrowest(taken)
        if narrow_t is None or not worth_it(narrow_t, t.type) or (
                rw.node(t.args[side]).op == "cast" and narrow_t.width >= within.flat_width):
            continue
        ops = (_truncate(rw, big, narrow_t), _truncate(rw, small, narrow_t))
        diff = rw.emit("sub", narrow_t, ops)
        args[side], changed = rw.emit("cast", t.type, (diff,)), True
    return rw.emit("select", t.type, args, dict(t.attrs)) if changed else None


def negated_operand(rw: Rewriter, t: Term) -> bytes | None:
    """Return ``a - b`` for ``a + (-b)`` or ``(-b) + a``, and ``a + b`` for ``a - (-b)``, the
    negation of the op's own type (wrapping: the same bits). One carry chain where there were
    two: a negation is a subtraction from 0. Here, not in ``simplify``: narrowing runs after
    ``balance``, which re-associates chains of ``add`` only, so a sum of products such as
    fir8's (taps -2) is balanced first and its negated leaves are folded into the tree."""
    a, b = t.args
    na, nb = rw.node(a), rw.node(b)
    if nb.op == "neg" and nb.type == t.type:
        return rw.emit("sub" if t.op == "add" else "add", t.type, (a, nb.inputs[0]))
    if t.op == "add" and na.op == "neg" and na.type == t.type:
        return rw.emit("sub", t.type, (b, na.inputs[0]))
    return None


def narrow_rule(ranges: Ranges, rw: Rewriter, t: Term) -> bytes | None:
    """Return the narrowed form of an arithmetic op (None when it needs its whole width)."""
    if t.op in ("add", "sub") and len(t.args) == 2:
        folded = negated_operand(rw, t)
        if folded is not None:
            return folded
    if t.op == "select":
        return guarded_rule(ranges, rw, t)
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
    rw = Rewriter(graph, lambda rw, t: None, LOOKED_AT)
    rw.rule = narrow_rules(rw.new)
    return rw.run()


__all__ = [
    "COMPARISONS",
    "LOOKED_AT",
    "NARROWED",
    "decided",
    "guarded_rule",
    "narrow",
    "narrow_rule",
    "narrow_rules",
    "narrowest",
    "negated_operand",
    "worth_it",
]
