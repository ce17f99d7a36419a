"""Mux and reduction trees for the logic ops no carry chain builds, split into levels.

``kera.hls.decompose`` calls these when the cost model says one op cannot fit the usable
period (``clz``/``ctz`` at any clock: the tree is smaller and faster than what yosys makes of
the op, 93 LUT and 59.9 MHz placed against 107 and 17.5 for a u64 ``clz`` on an iCE40); each
returns the op as a tree of registry ops (``select``, ``slice``, ``concat``,
``and``/``or``, comparisons against zero, shifts and rotates by constants, which are wiring),
so the scheduler may put a register between any two levels, as a hand-pipelined barrel
shifter or priority encoder has them:

* **variable shifts and rotates** (``shl``, ``shr``, ``rotl``, ``rotr``): a barrel shifter,
  one ``select`` level per bit ``j`` of the amount (``x`` or ``x`` shifted by ``2**j``).
  Shifts compose (shifting by ``p`` then ``q`` is shifting by ``p + q``, saturating at the
  width), so the levels below ``ceil(log2 N)`` are exact for any ``N``; any amount bit above
  them gives the fill (0, or the sign for a signed ``shr``). A rotate takes its amount modulo
  ``N``: the low ``log2 N`` bits when ``N`` is a power of two; for other widths rotations
  compose modulo ``N``, so each amount bit ``j`` is a level rotating by ``2**j mod N`` (only
  up to twice the levels of a power of two: a wider amount is left as it is);
* **leading and trailing zero counts** (``clz``, ``ctz``): a tree over the bits padded to a
  power of two with ones (below for ``clz``, above for ``ctz``, so ``clz(0) = N``); each node
  of the tree is "my half is all zero" and its count, ``{zh, zh ? c_lo : c_hi}``;
* **equality** (``eq``, ``ne``) of wide operands: ``ne`` of 8-bit groups (two LUT4 levels
  each), then a balanced ``or`` tree of the group flags.

Every function takes ``add`` (``kera.hls.lower.adder``: interning into the output graph with
the span of the op replaced) and returns the id of the result; all of it is bit-exact by
construction and tested against the interpreter (``tests/hls/test_logic_split.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from kera.ir.types import BOOL, IntType, uint

Add = Callable[..., bytes]
Const = Callable[[IntType, int], bytes]

#: Bits of each group an equality compares before the ``or`` tree (16 inputs: 2 LUT4 levels).
EQ_GROUP = 8
_AMOUNT = uint(32)  # constant shift amounts, as the front end's literals


def _flag(add: Add, const: Const, x: bytes, lo: int, width: int) -> bytes:
    """The bool "bits ``lo .. lo+width-1`` of ``x`` are not all zero"."""
    part = add("slice", uint(width), x, attrs={"lo": lo})
    return add("ne", BOOL, part, const(uint(width), 0))


def barrel(add: Add, const: Const, op: str, t: IntType, x: bytes, amount: bytes,
           amount_t: IntType) -> bytes | None:
    """Return ``op(x, amount)`` (``x: t``) as one ``select`` per amount bit; None for a rotate
    of a width that is not a power of two."""
    n = t.width
    levels = max(1, (n - 1).bit_length())  # bits 0 .. levels-1 reach every amount below n
    rotate = op in ("rotl", "rotr")
    if rotate and n & (n - 1):  # rotations compose modulo n: a level per amount bit
        if amount_t.width > 2 * levels:
            return None  # more levels than a modulo network and its barrel would take
        levels = amount_t.width
    out = x
    for j in range(min(levels, amount_t.width)):
        step = (1 << j) % n if rotate else 1 << j
        if rotate and step == 0:
            continue
        moved = add(op, t, out, const(_AMOUNT, step))
        out = add("select", t, _flag(add, const, amount, j, 1), moved, out)
    if rotate or amount_t.width <= levels:
        return out
    fill = add(op, t, x, const(_AMOUNT, n))  # 0, or the sign in every bit
    over = _flag(add, const, amount, levels, amount_t.width - levels)
    return add("select", t, over, fill, out)


def zero_count(add: Add, const: Const, op: str, t: IntType, x: bytes, radix: int = 2) -> bytes:
    """Return ``clz(x)`` / ``ctz(x)`` (of type ``t``) as a tree of "all zero" flags and
    counts, each node over ``radix`` (2 or 4) groups; radix 4 only where the padded width is
    a power of 4 (every multiplexer of counts then a 4:1 one), else radix 2."""
    n = t.width
    size = 1 << max(0, (n - 1).bit_length())
    one = const(uint(1), 1)
    bits = [add("slice", uint(1), x, attrs={"lo": i}) for i in range(n)]
    pad = [one] * (size - n)  # ones past the end: the count stops at n
    # the bits in the order the count walks them: from the top for clz, from bit 0 for ctz
    bits = (pad + bits)[::-1] if op == "clz" else bits + pad
    zero = const(uint(1), 0)
    # each level: (all zero, count) of groups of 2**k bits; the count is u{k} (None: k = 0)
    flags = [add("eq", BOOL, b, zero) for b in bits]
    if len(flags) == 1:  # one bit: the count is the bit's "is zero"
        return add("cast", t, add("cast", uint(1), flags[0]))
    groups: list[tuple[bytes, bytes | None]] = [(f, None) for f in flags]
    # radix 4 only where every level can be (a power of 4 bits): ctz32 as 2-4-4 or 4-4-2
    # placed worse on ECP5 than the radix-2 tree (docs/models.md, the twenty-fifth run)
    quad = radix == 4 and (size.bit_length() - 1) % 2 == 0
    k = 0
    while len(groups) > 1:
        if quad:
            groups = [_count4(add, groups[i:i + 4], k) for i in range(0, len(groups), 4)]
            k += 2
        else:
            groups = [_count2(add, g1, g2, k) for g1, g2 in zip(groups[::2], groups[1::2],
                                                                 strict=True)]
            k += 1
    z, c = groups[0]
    assert c is not None
    if size > n:  # the padding's ones: never all zero, the count is exact
        return add("cast", t, c)
    full = add("select", uint(k), z, const(uint(k), 0), c)  # all zero: the count is 2**k
    return add("cast", t, add("concat", uint(k + 1), add("cast", uint(1), z), full))


def _count2(add: Add, g1: tuple[bytes, bytes | None], g2: tuple[bytes, bytes | None], k: int
            ) -> tuple[bytes, bytes]:
    """Two groups of ``2**k`` bits (the first walked first): ``{z1, z1 ? c2 : c1}``."""
    (z1, c1), (z2, c2) = g1, g2
    high = add("cast", uint(1), z1)
    if c1 is None or c2 is None:
        return add("and", BOOL, z1, z2), high
    return add("and", BOOL, z1, z2), add("concat", uint(k + 1), high,
                                          add("select", uint(k), z1, c2, c1))


def _count4(add: Add, groups: list[tuple[bytes, bytes | None]], k: int) -> tuple[bytes, bytes]:
    """Four groups of ``2**k`` bits: the first not all zero, ``j``, is two select bits (``s1 =
    z0 & z1``, ``s0 = z0 & (z2 | ~z1)``), and the count ``{j, c_j}`` takes ``c_j`` by a 4:1
    multiplexer written as a select of two selects by ``s0`` (``kera.hls.muxpair``: on ECP5
    one LUT4 pair and a PFUMX a bit)."""
    (z0, c0), (z1, c1), (z2, c2), (z3, c3) = groups
    s1 = add("and", BOOL, z0, z1)
    s0 = add("and", BOOL, z0, add("or", BOOL, z2, add("not", BOOL, z1)))
    z = add("and", BOOL, s1, add("and", BOOL, z2, z3))
    j = add("concat", uint(2), add("cast", uint(1), s1), add("cast", uint(1), s0))
    if c0 is None or c1 is None or c2 is None or c3 is None:
        return z, j
    low = add("select", uint(k), s1, add("select", uint(k), s0, c3, c2),
              add("select", uint(k), s0, c1, c0))
    return z, add("concat", uint(k + 2), j, low)


def equality(add: Add, const: Const, op: str, a: bytes, b: bytes, width: int
             ) -> bytes | None:
    """Return ``a == b`` / ``a != b`` (``width``-bit integers) as group compares and an
    ``or`` tree; None when the operands are one group (nothing to split)."""
    if width <= EQ_GROUP:
        return None
    flags = []
    for lo in range(0, width, EQ_GROUP):
        w = min(EQ_GROUP, width - lo)
        flags.append(add("ne", BOOL, add("slice", uint(w), a, attrs={"lo": lo}),
                         add("slice", uint(w), b, attrs={"lo": lo})))
    while len(flags) > 1:
        flags = [add("or", BOOL, p, q) for p, q in zip(flags[::2], flags[1::2], strict=False)
                 ] + flags[len(flags) & ~1:]
    return flags[0] if op == "ne" else add("not", BOOL, flags[0])


__all__ = ["EQ_GROUP", "barrel", "equality", "zero_count"]
