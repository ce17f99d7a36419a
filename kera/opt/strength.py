"""Strength reduction: multiply and divide by constants with cheaper, bit-exact operations.

Guarantees, for every input of the operand type (SEMANTICS.md: wrapping, truncating division):
multiplication by a power of two (or, signed, its negation) becomes a left shift; unsigned
division and remainder by ``2**k`` become ``shr``/``and``; signed ones get the bias that turns
the arithmetic shift's rounding toward −∞ into rounding toward zero; division by ``MIN`` becomes
a comparison. Division by any other constant becomes a multiply-high by a magic number
(Granlund–Montgomery, Hacker's Delight ch. 10) computed in an exact wider type — only when the
magic number meets the error bound that makes it exact for every input (see ``unsigned_magic``
and ``signed_magic``) and the product fits 64 bits; otherwise the division stays. Divisors 0, 1
and -1 are ``simplify``'s business.
"""

from __future__ import annotations

from dataclasses import dataclass

from kera.ir.graph import Graph
from kera.ir.types import BOOL, IntType, sint, uint
from kera.opt.ranges import Ranges
from kera.opt.rewrite import Rewriter, Rule, Term

STRENGTHENED = frozenset({"mul", "div", "rem"})
AMOUNT = uint(32)  # the type of the constant shift amounts it emits (as the front end's literals)


@dataclass(frozen=True, slots=True)
class Magic:
    """``x // d == ((x >> pre) * multiplier) >> shift`` for every ``x`` of the plan's range."""

    pre: int
    multiplier: int
    shift: int
    width: int  # bits of the exact product


def unsigned_magic(width: int, d: int) -> Magic | None:
    """Return the smallest exact plan for ``x // d`` over ``0 <= x < 2**width`` (None: none fits).

    With ``m = ceil(2**p / d)`` and ``e = m*d - 2**p``, ``floor(x*m / 2**p)`` is ``floor(x / d)``
    whenever ``x*e < 2**p``: the error ``x*e / (d * 2**p)`` stays below ``1/d``, the distance
    from ``x/d`` to the next integer. With ``p = width + s`` it suffices that ``e <= 2**s``.
    An even divisor may first shift its factor of two out of ``x`` to keep the product small.
    """
    pre = 0
    while True:
        bits = width - pre
        for s in range(bits + 1):
            p = bits + s
            m = -(-(1 << p) // d)
            if m * d - (1 << p) <= 1 << s:
                if bits + m.bit_length() <= 64:
                    return Magic(pre, m, p, bits + m.bit_length())
                break
        if d % 2:
            return None
        d //= 2
        pre += 1


def narrowest_unsigned_magic(width: int, d: int) -> Magic | None:
    """Return the exact plan for ``x // d`` over ``0 <= x < 2**width`` with the narrowest factors.

    Each candidate (every pre-shift of an even divisor's factors of two, each with its smallest
    ``s`` meeting ``unsigned_magic``'s bound, so each exact) is ranked by the wider of its two
    factors (``width - pre`` bits and the multiplier's), then by the product's width.
    """
    best: tuple[tuple[int, int], Magic] | None = None
    for pre in range((d & -d).bit_length()):
        bits, dd = width - pre, d >> pre
        for s in range(bits + 1):
            p = bits + s
            m = -(-(1 << p) // dd)
            if m * dd - (1 << p) <= 1 << s:
                plan = Magic(pre, m, p, bits + m.bit_length())
                rank = (max(bits, m.bit_length()), plan.width)
                if plan.width <= 64 and (best is None or rank < best[0]):
                    best = rank, plan
                break
    return None if best is None else best[1]


def signed_magic(width: int, a: int) -> Magic | None:
    """Return an exact plan for dividing ``-2**(width-1) <= x < 2**(width-1)`` by ``a >= 3``.

    ``t = floor(x*m / 2**p)`` is ``floor(x/a)`` for ``x >= 0`` and ``ceil(x/a) - 1`` for
    ``x < 0`` when ``0 < e`` and ``|x|*e < 2**p`` for every ``|x| <= 2**(width-1)``, that is
    ``e < 2**s`` with ``p = width - 1 + s``; ``t + (x < 0)`` then truncates toward zero.
    The product of an n-bit signed ``x`` and a b-bit ``m`` needs ``n + b`` signed bits.
    """
    for s in range(width + 1):
        p = width - 1 + s
        m = -(-(1 << p) // a)
        e = m * a - (1 << p)
        if 0 < e < 1 << s:
            size = width + m.bit_length()
            return Magic(0, m, p, size) if size <= 64 else None
    return None


def strength_rule(rw: Rewriter, t: Term, ranges: Ranges | None = None) -> bytes | None:
    """Return the cheaper equivalent of a multiply, divide or remainder by a constant.

    With ``ranges`` (intervals of ``rw.new``) an unsigned division is planned for the
    dividend's known range only, which narrows the multiply-high; a signed one whose dividend
    is known to be non-negative is planned as an unsigned one.
    """
    if t.op not in ("mul", "div", "rem") or not isinstance(t.type, IntType):
        return None
    a, b = t.args
    c = rw.const_value(b)
    if t.op == "mul":
        if c is None:
            a, c = b, rw.const_value(a)
        return None if c is None else _mul(rw, a, c, t.type)
    if c is None or c in (0, 1) or (c == -1 and t.type.signed):
        return None
    rem = t.op == "rem"
    if t.type.signed and ranges is not None and c != t.type.min and ranges(a)[0] >= 0:  # type: ignore[index]
        # A dividend known to be >= 0 truncates like an unsigned one: plan for |d|, then the
        # quotient takes the divisor's sign (the remainder takes the dividend's: >= 0).
        q = _udiv(rw, a, abs(c), t.type, rem, ranges)
        return q if q is None or rem or c > 0 else rw.emit("neg", t.type, (q,))
    if t.type.signed:
        return _sdiv(rw, a, c, t.type, rem)
    return _udiv(rw, a, c, t.type, rem, ranges)


def _amount(rw: Rewriter, k: int) -> bytes:
    return rw.const(AMOUNT, k)


def _pow2(v: int) -> int | None:
    """Return k when ``v == 2**k`` (k >= 1), else None."""
    return v.bit_length() - 1 if v > 1 and v & (v - 1) == 0 else None


def _mul(rw: Rewriter, x: bytes, c: int, ty: IntType) -> bytes | None:
    k = _pow2(c & ty.mask)  # wrapping: only the bit pattern of c matters
    if k is not None:
        return rw.emit("shl", ty, (x, _amount(rw, k)))
    k = _pow2(-c) if ty.signed else None
    if k is not None:
        return rw.emit("neg", ty, (rw.emit("shl", ty, (x, _amount(rw, k))),))
    return None


def _udiv(rw: Rewriter, x: bytes, d: int, ty: IntType, rem: bool,
          ranges: Ranges | None) -> bytes | None:
    k = _pow2(d)
    if k is not None:
        if rem:
            return rw.emit("and", ty, (x, rw.const(ty, d - 1)))
        return rw.emit("shr", ty, (x, _amount(rw, k)))
    top = ty.max if ranges is None else ranges(x)[1]  # type: ignore[index]
    if d > top:  # the quotient is 0
        return x if rem else rw.const(ty, 0)
    if 2 * d > top:  # the quotient is 0 or 1
        big = rw.emit("ge", BOOL, (x, rw.const(ty, d)))
        if rem:
            return rw.emit("select", ty, (big, rw.emit("sub", ty, (x, rw.const(ty, d))), x))
        return rw.emit("cast", ty, (big,))
    plan = narrowest_unsigned_magic(max(1, top.bit_length()), d)
    if plan is None:
        return None
    xs = rw.emit("shr", ty, (x, _amount(rw, plan.pre))) if plan.pre else x
    factor = max(plan.width - plan.multiplier.bit_length(), plan.multiplier.bit_length())
    if factor <= 32:  # a multiply-high: the exact product of two narrow factors
        f = uint(factor)
        prod = rw.emit("widening_mul", uint(2 * factor),
                       (rw.cast(xs, f), rw.const(f, plan.multiplier)))
        wide = uint(2 * factor)
    else:
        wide = uint(plan.width)
        prod = rw.emit("mul", wide, (rw.cast(xs, wide), rw.const(wide, plan.multiplier)))
    q = rw.cast(rw.emit("shr", wide, (prod, _amount(rw, plan.shift))), ty)
    return _remainder(rw, x, q, d, ty) if rem else q


def _sdiv(rw: Rewriter, x: bytes, d: int, ty: IntType, rem: bool) -> bytes | None:
    if d == ty.min:  # |x| < |MIN| except for MIN itself
        hit = rw.emit("eq", BOOL, (x, rw.const(ty, d)))
        if rem:
            return rw.emit("select", ty, (hit, rw.const(ty, 0), x))
        return rw.emit("cast", ty, (hit,))
    k = _pow2(abs(d))
    if k is not None:
        sign = rw.emit("shr", ty, (x, _amount(rw, ty.width - 1)))
        biased = rw.emit("add", ty, (x, rw.emit("and", ty, (sign, rw.const(ty, (1 << k) - 1)))))
        if rem:  # x minus the biased value rounded down to a multiple of 2**k
            return rw.emit("sub", ty, (x, rw.emit("and", ty, (biased, rw.const(ty, -(1 << k))))))
        q = rw.emit("shr", ty, (biased, _amount(rw, k)))
        return rw.emit("neg", ty, (q,)) if d < 0 else q
    plan = signed_magic(ty.width, abs(d))
    if plan is None:
        return None
    wide = sint(plan.width)
    prod = rw.emit("mul", wide, (rw.cast(x, wide), rw.const(wide, plan.multiplier)))
    t = rw.cast(rw.emit("shr", wide, (prod, _amount(rw, plan.shift))), ty)
    q = rw.emit("sub", ty, (t, rw.emit("shr", ty, (x, _amount(rw, ty.width - 1)))))
    if d < 0:
        q = rw.emit("neg", ty, (q,))
    return _remainder(rw, x, q, d, ty) if rem else q


def _remainder(rw: Rewriter, x: bytes, q: bytes, d: int, ty: IntType) -> bytes:
    """Return ``x - q*d``, exact (modulo 2**N) once ``q`` is the truncated quotient."""
    return rw.emit("sub", ty, (x, rw.emit("mul", ty, (q, rw.const(ty, d)))))


def strength_rules(new: Graph) -> Rule:
    """Return the strength rule for a walk building ``new`` (intervals follow it as it grows)."""
    ranges = Ranges(new)
    return lambda rw, t: strength_rule(rw, t, ranges)


def strength(graph: Graph) -> Graph:
    """Return ``graph`` with multiplications and divisions by constants made cheaper."""
    rw = Rewriter(graph, lambda rw, t: None, STRENGTHENED)
    rw.rule = strength_rules(rw.new)
    return rw.run()


__all__ = [
    "AMOUNT",
    "STRENGTHENED",
    "Magic",
    "narrowest_unsigned_magic",
    "signed_magic",
    "strength",
    "strength_rule",
    "strength_rules",
    "unsigned_magic",
]
