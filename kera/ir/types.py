"""Kera's types: ``bool``, ``uN``/``iN`` (1..64 bits), arrays, tuples.

Types are immutable, interned-by-value dataclasses. Two types are the same exactly when their
canonical encodings (and so their SHA3-256 type hashes, domain ``keg/type/v1\\0``) are equal.
Aliases never reach this level: they are resolved to their structure by the front end.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

MAX_WIDTH = 64

TYPE_DOMAIN = b"keg/type/v1\x00"

# One tag byte per constructor in the canonical encoding.
_TAG_BOOL, _TAG_INT, _TAG_ARRAY, _TAG_TUPLE = 1, 2, 3, 4


class Type:
    """Base of every Kera type."""

    __slots__ = ()

    def encode(self) -> bytes:
        """Return the canonical, self-delimiting byte encoding of this type."""
        raise NotImplementedError

    @property
    def flat_width(self) -> int:
        """Number of bits when packed flat (RTL port width)."""
        raise NotImplementedError

    def type_hash(self) -> bytes:
        """Return SHA3-256 over the domain-separated canonical encoding."""
        return hashlib.sha3_256(TYPE_DOMAIN + self.encode()).digest()


@dataclass(frozen=True, slots=True)
class BoolType(Type):
    """``bool``: one bit, not an integer."""

    def encode(self) -> bytes:
        return bytes([_TAG_BOOL])

    @property
    def flat_width(self) -> int:
        return 1

    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class IntType(Type):
    """``uN`` or ``iN``: an integer of exactly ``width`` bits."""

    width: int
    signed: bool

    def __post_init__(self) -> None:
        if not 1 <= self.width <= MAX_WIDTH:
            raise ValueError(f"Integer width must be in 1..={MAX_WIDTH}, not {self.width}")

    def encode(self) -> bytes:
        return bytes([_TAG_INT, self.width, int(self.signed)])

    @property
    def flat_width(self) -> int:
        return self.width

    @property
    def min(self) -> int:
        """Smallest representable value."""
        return -(1 << (self.width - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        """Largest representable value."""
        return (1 << (self.width - 1)) - 1 if self.signed else (1 << self.width) - 1

    @property
    def mask(self) -> int:
        """``2**width - 1``."""
        return (1 << self.width) - 1

    def wrap(self, value: int) -> int:
        """Reduce any Python int modulo 2**width into this type's range (two's complement)."""
        value &= self.mask
        if self.signed and value >> (self.width - 1):
            value -= 1 << self.width
        return value

    def contains(self, value: int) -> bool:
        """Return True when ``value`` is representable without wrapping."""
        return self.min <= value <= self.max

    def __str__(self) -> str:
        return f"{'i' if self.signed else 'u'}{self.width}"


@dataclass(frozen=True, slots=True)
class ArrayType(Type):
    """``[elem; length]`` with length >= 1."""

    elem: Type
    length: int

    def __post_init__(self) -> None:
        if not 1 <= self.length < 1 << 32:
            raise ValueError(f"Array length must be in 1..2**32, not {self.length}")

    def encode(self) -> bytes:
        return bytes([_TAG_ARRAY]) + self.length.to_bytes(4, "big") + self.elem.encode()

    @property
    def flat_width(self) -> int:
        return self.elem.flat_width * self.length

    def __str__(self) -> str:
        return f"[{self.elem}; {self.length}]"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """``(T1, T2, ...)``; the empty tuple is the unit type ``()``."""

    elems: tuple[Type, ...]

    def encode(self) -> bytes:
        body = b"".join(e.encode() for e in self.elems)
        return bytes([_TAG_TUPLE]) + len(self.elems).to_bytes(4, "big") + body

    @property
    def flat_width(self) -> int:
        return sum(e.flat_width for e in self.elems)

    def __str__(self) -> str:
        if len(self.elems) == 1:
            return f"({self.elems[0]},)"
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


BOOL = BoolType()
UNIT = TupleType(())


def uint(width: int) -> IntType:
    """Return ``uN``."""
    return IntType(width, False)


def sint(width: int) -> IntType:
    """Return ``iN``."""
    return IntType(width, True)


def decode_type(data: bytes, pos: int = 0) -> tuple[Type, int]:
    """Decode one canonical type encoding at ``pos``; return (type, next position).

    Raises ``ValueError`` on malformed input (used by the ``.keg`` loader).
    """
    if pos >= len(data):
        raise ValueError("truncated type encoding")
    tag = data[pos]
    if tag == _TAG_BOOL:
        return BOOL, pos + 1
    if tag == _TAG_INT:
        if pos + 3 > len(data) or data[pos + 2] > 1:
            raise ValueError("bad integer type encoding")
        return IntType(data[pos + 1], bool(data[pos + 2])), pos + 3
    if tag == _TAG_ARRAY:
        if pos + 5 > len(data):
            raise ValueError("truncated array type encoding")
        length = int.from_bytes(data[pos + 1 : pos + 5], "big")
        elem, nxt = decode_type(data, pos + 5)
        return ArrayType(elem, length), nxt
    if tag == _TAG_TUPLE:
        if pos + 5 > len(data):
            raise ValueError("truncated tuple type encoding")
        count = int.from_bytes(data[pos + 1 : pos + 5], "big")
        if count > len(data):
            raise ValueError("tuple arity exceeds the data")
        elems = []
        nxt = pos + 5
        for _ in range(count):
            elem, nxt = decode_type(data, nxt)
            elems.append(elem)
        return TupleType(tuple(elems)), nxt
    raise ValueError(f"unknown type tag {tag}")


def is_int(t: Type) -> bool:
    """Return True for ``uN``/``iN``."""
    return isinstance(t, IntType)


__all__ = [
    "BOOL",
    "MAX_WIDTH",
    "UNIT",
    "ArrayType",
    "BoolType",
    "IntType",
    "TupleType",
    "Type",
    "decode_type",
    "is_int",
    "sint",
    "uint",
]
