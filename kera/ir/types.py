"""Kera's types: ``bool``, ``uN``/``iN`` (1..64 bits), fixed point, arrays, tuples.

Types are immutable, interned-by-value dataclasses. Two types are the same exactly when their
canonical encodings (and so their SHA3-256 type hashes, domain ``keg/type/v1\\0``) are equal.
Aliases never reach this level: they are resolved to their structure by the front end.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from fractions import Fraction

MAX_WIDTH = 64

TYPE_DOMAIN = b"keg/type/v1\x00"

# One tag byte per constructor in the canonical encoding.
_TAG_BOOL, _TAG_INT, _TAG_ARRAY, _TAG_TUPLE, _TAG_FIXED = 1, 2, 3, 4, 5

# Fixed-point modes (FIXED.md), in the order of their code in the type encoding.
QUANT_MODES = ("trn", "trn_zero", "rnd", "rnd_zero", "rnd_min_inf", "rnd_inf", "rnd_conv")
OVERFLOW_MODES = ("wrap", "sat", "sat_zero", "sat_sym")
# `I` lies in -_INT_BITS_BIAS..=255 - _INT_BITS_BIAS in the encoding (one byte).
_INT_BITS_BIAS = 128
FIXED_INT_BITS = range(-_INT_BITS_BIAS, 256 - _INT_BITS_BIAS)
"""The integer-bit counts `I` a fixed-point type may have (-128..=127)."""


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
    _hash: int = field(init=False, repr=False, compare=False)
    """The dataclass's own hash, ``hash((width, signed))``, computed once: the optimiser's
    dicts and sets are keyed by types (and tuples of them) by the million."""
    min: int = field(init=False, repr=False, compare=False)
    """Smallest representable value (computed once, as ``max``: range checks are hot)."""
    max: int = field(init=False, repr=False, compare=False)
    """Largest representable value."""

    def __post_init__(self) -> None:
        if not 1 <= self.width <= MAX_WIDTH:
            raise ValueError(f"Integer width must be in 1..={MAX_WIDTH}, not {self.width}")
        object.__setattr__(self, "_hash", hash((self.width, self.signed)))
        w = self.width
        object.__setattr__(self, "min", -(1 << (w - 1)) if self.signed else 0)
        object.__setattr__(self, "max", (1 << (w - 1)) - 1 if self.signed else (1 << w) - 1)

    def __hash__(self) -> int:
        return self._hash

    def encode(self) -> bytes:
        return bytes([_TAG_INT, self.width, int(self.signed)])

    @property
    def flat_width(self) -> int:
        return self.width

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
class FixedType(IntType):
    """``fx<W, I, Q, O>`` / ``ufx<...>``: ``width`` raw bits read as ``raw / 2**frac``.

    A fixed-point type *is* an integer type for the graph (its raw bits, ``width`` and
    ``signed``), so every op, pass and backend handles it unchanged; the extra fields only
    change the type's identity (encoding, hash, fingerprint) and how values are read and shown.
    """

    int_bits: int = 0
    quant: str = "trn"
    overflow: str = "wrap"

    def __post_init__(self) -> None:
        IntType.__post_init__(self)
        if self.int_bits not in FIXED_INT_BITS:
            raise ValueError(f"fixed-point I must be in -128..=127, not {self.int_bits}")
        if self.quant not in QUANT_MODES:
            raise ValueError(f"unknown quantisation mode `{self.quant}`")
        if self.overflow not in OVERFLOW_MODES:
            raise ValueError(f"unknown overflow mode `{self.overflow}`")

    @property
    def frac(self) -> int:
        """``F = W - I``: bits below the binary point (negative when I > W)."""
        return self.width - self.int_bits

    def encode(self) -> bytes:
        return bytes([
            _TAG_FIXED, self.width, int(self.signed), self.int_bits + _INT_BITS_BIAS,
            QUANT_MODES.index(self.quant), OVERFLOW_MODES.index(self.overflow),
        ])

    def layout(self) -> FixedType:
        """Return the same layout with the default modes (the type of arithmetic results)."""
        return FixedType(self.width, self.signed, self.int_bits)

    def raw_of(self, value: Fraction) -> int | None:
        """Return the raw bits of an exactly representable ``value``, else None."""
        scaled = value * Fraction(2) ** self.frac
        if scaled.denominator != 1 or not self.contains(scaled.numerator):
            return None
        return scaled.numerator

    def value_of(self, raw: int) -> Fraction:
        """Return the exact value of the raw bits ``raw`` (already in ``min..=max``)."""
        return Fraction(raw) / Fraction(2) ** self.frac

    @property
    def ulp(self) -> Fraction:
        """The value of one raw step, ``2**-F``."""
        return Fraction(1) / Fraction(2) ** self.frac

    def __str__(self) -> str:
        args = [str(self.width), str(self.int_bits)]
        if (self.quant, self.overflow) != ("trn", "wrap"):
            args.append(self.quant)
        if self.overflow != "wrap":
            args.append(self.overflow)
        return f"{'fx' if self.signed else 'ufx'}<{', '.join(args)}>"


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


_UINT = [IntType(w, False) for w in range(1, MAX_WIDTH + 1)]
_SINT = [IntType(w, True) for w in range(1, MAX_WIDTH + 1)]
# One object per integer type made here: a dict or set finds a key that *is* the one it holds
# without calling the dataclass's ``__eq__`` (the optimiser looks types up by the million).


def int_type(width: int, signed: bool) -> IntType:
    """Return ``iN`` (``signed``) or ``uN``: ``IntType(width, signed)``, one object per type."""
    if 1 <= width <= MAX_WIDTH:
        return (_SINT if signed else _UINT)[width - 1]
    return IntType(width, signed)


def uint(width: int) -> IntType:
    """Return ``uN``."""
    return _UINT[width - 1] if 1 <= width <= MAX_WIDTH else IntType(width, False)


def sint(width: int) -> IntType:
    """Return ``iN``."""
    return _SINT[width - 1] if 1 <= width <= MAX_WIDTH else IntType(width, True)


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
    if tag == _TAG_FIXED:
        if (pos + 6 > len(data) or data[pos + 2] > 1 or data[pos + 4] >= len(QUANT_MODES)
                or data[pos + 5] >= len(OVERFLOW_MODES)):
            raise ValueError("bad fixed-point type encoding")
        fixed = FixedType(data[pos + 1], bool(data[pos + 2]), data[pos + 3] - _INT_BITS_BIAS,
                          QUANT_MODES[data[pos + 4]], OVERFLOW_MODES[data[pos + 5]])
        return fixed, pos + 6
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


def is_fixed(t: Type | None) -> bool:
    """Return True for ``fx<...>``/``ufx<...>``."""
    return isinstance(t, FixedType)


def is_int(t: Type) -> bool:
    """Return True for ``uN``/``iN``."""
    return isinstance(t, IntType)


__all__ = [
    "BOOL",
    "FIXED_INT_BITS",
    "MAX_WIDTH",
    "UNIT",
    "ArrayType",
    "BoolType",
    "FixedType",
    "OVERFLOW_MODES",
    "QUANT_MODES",
    "IntType",
    "TupleType",
    "Type",
    "decode_type",
    "is_fixed",
    "is_int",
    "sint",
    "uint",
]
