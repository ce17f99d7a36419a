"""Flat bit packing of Kera values: the layout of the RTL ports (INTERFACES.md).

A value of type T is ``T.flat_width`` bits. Integers are two's complement, ``bool`` one bit,
and arrays and tuples put element 0 (field 0) in the least significant bits, recursively.
"""

from __future__ import annotations

from kera.ir.types import ArrayType, BoolType, IntType, TupleType, Type


def pack(value: object, t: Type) -> int:
    """Return the non-negative integer whose bits are ``value`` (a JSON value) laid out as ``t``."""
    if isinstance(t, BoolType):
        return int(bool(value))
    if isinstance(t, IntType):
        return int(value) & t.mask  # type: ignore[call-overload]
    elems = _elements(t)
    out, shift = 0, 0
    for v, e in zip(value, elems, strict=True):  # type: ignore[call-overload]
        out |= pack(v, e) << shift
        shift += e.flat_width
    return out


def unpack(bits: int, t: Type) -> object:
    """Return the JSON value (int, bool or nested lists) that ``bits`` holds as type ``t``."""
    if isinstance(t, BoolType):
        return bool(bits & 1)
    if isinstance(t, IntType):
        return t.wrap(bits)
    out = []
    for e in _elements(t):
        out.append(unpack(bits & ((1 << e.flat_width) - 1), e))
        bits >>= e.flat_width
    return out


def _elements(t: Type) -> tuple[Type, ...]:
    if isinstance(t, ArrayType):
        return (t.elem,) * t.length
    if isinstance(t, TupleType):
        return t.elems
    raise TypeError(f"cannot pack a value of type {t}")


def layout(t: Type) -> object:
    """Return a JSON description of ``t`` (used by the generated testbench to pack values)."""
    if isinstance(t, BoolType):
        return "bool"
    if isinstance(t, IntType):
        return ["int", t.width, t.signed]
    if isinstance(t, ArrayType):
        return ["array", layout(t.elem), t.length]
    if isinstance(t, TupleType):
        return ["tuple", [layout(e) for e in t.elems]]
    raise TypeError(f"no layout for {t}")


__all__ = ["layout", "pack", "unpack"]
