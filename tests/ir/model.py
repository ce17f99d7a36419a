"""A plain-Python big-integer model of SEMANTICS.md, written independently of ``kera.ir.ops``.

Each function takes canonical Python values (ints in range, bools) and the types involved and
returns the canonical result. The property tests check the registry's numpy kernels against it.
"""

from __future__ import annotations

from collections.abc import Callable

from kera.ir.types import IntType, Type


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def div(a: int, b: int, t: IntType) -> int:
    return 0 if b == 0 else t.wrap(_trunc_div(a, b))


def rem(a: int, b: int, t: IntType) -> int:
    return a if b == 0 else t.wrap(a - b * _trunc_div(a, b))


def shl(a: int, n: int, t: IntType) -> int:
    return 0 if n >= t.width else t.wrap(a << n)


def shr(a: int, n: int, t: IntType) -> int:
    if n >= t.width:
        return -1 if a < 0 else 0
    return a >> n  # Python's >> on a negative int is arithmetic


def rotl(a: int, n: int, t: IntType) -> int:
    r, u, w = n % t.width, a & t.mask, t.width
    return t.wrap((u << r) | (u >> (w - r)))


def rotr(a: int, n: int, t: IntType) -> int:
    r, u, w = n % t.width, a & t.mask, t.width
    return t.wrap((u >> r) | (u << (w - r)))


def clz(a: int, t: IntType) -> int:
    return t.wrap(t.width - (a & t.mask).bit_length())


def ctz(a: int, t: IntType) -> int:
    u = a & t.mask
    return t.wrap(t.width if u == 0 else (u & -u).bit_length() - 1)


def popcount(a: int, t: IntType) -> int:
    return t.wrap(bin(a & t.mask).count("1"))


BINARY_INT: dict[str, Callable[[int, int, IntType], int]] = {
    "add": lambda a, b, t: t.wrap(a + b),
    "sub": lambda a, b, t: t.wrap(a - b),
    "mul": lambda a, b, t: t.wrap(a * b),
    "div": div,
    "rem": rem,
    "min": lambda a, b, t: min(a, b),
    "max": lambda a, b, t: max(a, b),
}
BITWISE = {
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
}
COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
SHIFTS = {"shl": shl, "shr": shr, "rotl": rotl, "rotr": rotr}
UNARY_INT = {"popcount": popcount, "clz": clz, "ctz": ctz, "neg": lambda a, t: t.wrap(-a)}


def bitwise(name: str, a: int | bool, b: int | bool, t: Type) -> int | bool:
    """Apply and/or/xor to ints (two's complement) or bools."""
    r = BITWISE[name](a, b)
    return bool(r) if isinstance(a, bool) else t.wrap(r)  # type: ignore[attr-defined]


def not_(a: int | bool, t: Type) -> int | bool:
    return (not a) if isinstance(a, bool) else t.wrap(~a)  # type: ignore[attr-defined]


def cast(a: int | bool, out: IntType) -> int:
    return out.wrap(int(a))


def concat(hi: int, lo: int, th: IntType, tl: IntType) -> int:
    return ((hi & th.mask) << tl.width) | (lo & tl.mask)


def slice_(x: int, lo: int, tx: IntType, out: IntType) -> int:
    return ((x & tx.mask) >> lo) & out.mask


def widening_mul(a: int, b: int) -> int:
    return a * b
