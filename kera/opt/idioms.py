"""Idioms recognised as the registry op they compute (``simplify`` asks at the idiom's root).

The SWAR population count (Hacker's Delight, figure 5-2; LLVM's AggressiveInstCombine
recognises the same shape) on an unsigned ``uW``, ``W`` a multiple of 8 from 16 bits::

    a = x - ((x >> 1) & 0x55..55)
    b = (a & 0x33..33) + ((a >> 2) & 0x33..33)
    c = (b + (b >> 4)) & 0x0f..0f
    (c * 0x01..01) >> (W - 8)

is ``popcount(x)``, bit for bit: each step sums fields that cannot carry into the next field,
the multiply adds the ``W / 8`` byte counts into the top byte, and the count (at most ``W``)
fits a byte. As ``popcount`` it is one op the backends have an instruction for, and the
hardware builds it as an adder tree of bit counts instead of a ``W``-bit subtract, field sums
and a multiply (``kera.hls.decompose``).
"""

from __future__ import annotations

from kera.ir.types import IntType
from kera.opt.rewrite import Rewriter


def _repeat(byte: int, width: int) -> int:
    """Return ``byte`` repeated in every byte of a ``width``-bit word."""
    return sum(byte << (8 * k) for k in range(width // 8))


def _with_const(rw: Rewriter, nid: bytes, op: str, value: int) -> bytes | None:
    """Return ``y`` when ``nid`` is ``y op value`` or ``value op y`` (a commutative ``op``)."""
    node = rw.node(nid)
    if node.op != op:
        return None
    a, b = node.inputs
    if rw.const_value(b) == value:
        return a
    return b if rw.const_value(a) == value else None


def _shifted(rw: Rewriter, nid: bytes, amount: int) -> bytes | None:
    """Return ``y`` when ``nid`` is ``y >> amount`` (a constant amount)."""
    node = rw.node(nid)
    if node.op != "shr" or rw.const_value(node.inputs[1]) != amount:
        return None
    return node.inputs[0]


def _fields(rw: Rewriter, nid: bytes, width: int) -> bytes | None:
    """Return ``a`` when ``nid`` is ``(a & 0x33..) + ((a >> 2) & 0x33..)`` (either order)."""
    node = rw.node(nid)
    if node.op != "add":
        return None
    m2 = _repeat(0x33, width)
    p, q = (_with_const(rw, i, "and", m2) for i in node.inputs)
    if p is None or q is None:
        return None
    if _shifted(rw, q, 2) == p:
        return p
    return q if _shifted(rw, p, 2) == q else None


def swar_popcount(rw: Rewriter, product: bytes, shift: int, t: IntType) -> bytes | None:
    """Return ``popcount(x)`` for ``product >> shift`` when it is the SWAR count of ``x``."""
    w = t.width
    if t.signed or w < 16 or w % 8 or shift != w - 8:
        return None
    c = _with_const(rw, product, "mul", _repeat(0x01, w))
    if c is None:
        return None
    s = _with_const(rw, c, "and", _repeat(0x0F, w))
    if s is None or rw.node(s).op != "add":
        return None
    u, v = rw.node(s).inputs
    b = u if _shifted(rw, v, 4) == u else v if _shifted(rw, u, 4) == v else None
    if b is None:
        return None
    a = _fields(rw, b, w)
    if a is None or rw.node(a).op != "sub":
        return None
    x, r = rw.node(a).inputs
    half = _with_const(rw, r, "and", _repeat(0x55, w))
    if half is None or _shifted(rw, half, 1) != x:
        return None
    if any(rw.type(n) != t for n in (product, c, s, b, a, x)):
        return None
    return rw.emit("popcount", t, (x,))


__all__ = ["swar_popcount"]
