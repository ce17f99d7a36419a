"""The C lowering of every opcode: one entry per opcode of ``kera.ir.ops.OPS``.

Values live in unsigned containers (``uint32_t`` for ``bool`` and widths up to 32, ``uint64_t``
above) and every result is renormalised (SEMANTICS.md): masked for ``uN``, sign-extended from
bit N-1 for ``iN``. Nothing here has undefined behaviour in C: arithmetic is unsigned, every
shift compares its amount with the width itself, division goes through guarded helpers, and
signed order is compared on sign-flipped patterns instead of converting to signed types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kera.backends.layout import word_bits
from kera.backends.lower import STRUCTURAL, Lowering, OpCall, ScalarLowering, int_type, scalars
from kera.ir.tables import Unsupported
from kera.ir.types import BoolType, IntType, Type

if TYPE_CHECKING:
    from kera.backends.cpu.emit import CEmitter


def ctype(t: Type) -> str:
    """Return the C container type of a scalar type."""
    return "uint32_t" if word_bits(t) == 32 else "uint64_t"


def lit(value: int, word: int) -> str:
    """Return a C literal of the ``word``-bit pattern of ``value``."""
    v = value & ((1 << word) - 1)
    return f"{v:#x}u" if word == 32 else f"UINT64_C({v:#x})"


def norm(expr: str, t: Type) -> str:
    """Return ``expr`` renormalised to ``t`` in its container (no-op when the widths agree)."""
    if isinstance(t, BoolType):
        return expr
    assert isinstance(t, IntType)
    w = word_bits(t)
    if t.width == w:
        return f"({ctype(t)})({expr})"
    mask = lit(t.mask, w)
    if not t.signed:
        return f"(({ctype(t)})({expr}) & {mask})"
    sign = lit(1 << (t.width - 1), w)
    return f"(((({ctype(t)})({expr}) & {mask}) ^ {sign}) - {sign})"


def field(a: str, t: IntType) -> str:
    """Return the N-bit field of a value (masks a sign-extended container)."""
    return f"({a} & {lit(t.mask, word_bits(t))})" if t.signed and t.width < word_bits(t) else a


def widen(a: str, src: Type, dst_word: int) -> str:
    """Return a value's container converted to ``dst_word`` bits, extending by signedness."""
    w = word_bits(src)
    if w == dst_word:
        return a
    if dst_word == 32:
        return f"(uint32_t)({a})"
    if isinstance(src, IntType) and src.signed:
        return f"(((uint64_t)({a}) ^ UINT64_C(0x80000000)) - UINT64_C(0x80000000))"
    return f"(uint64_t)({a})"


def _w(t: Type) -> int:
    return word_bits(t)


def _binary(symbol: str) -> ScalarLowering[CEmitter]:
    def lower(em: CEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        return em.assign(call.out, norm(f"{a} {symbol} {b}", call.out))

    return lower


def _bitwise(symbol: str) -> ScalarLowering[CEmitter]:
    # Renormalised (or 0/1) operands give a renormalised result: no fix-up needed.
    def lower(em: CEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        return em.assign(call.out, f"{a} {symbol} {b}")

    return lower


def _neg(em: CEmitter, call: OpCall, args: list[str]) -> str:
    return em.assign(call.out, norm(f"{lit(0, _w(call.out))} - {args[0]}", call.out))


def _not(em: CEmitter, call: OpCall, args: list[str]) -> str:
    if isinstance(call.out, BoolType):
        return em.assign(call.out, f"{args[0]} ^ 1u")
    return em.assign(call.out, norm(f"~{args[0]}", call.out))


def _div(em: CEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    kind = "sdiv" if t.signed else "udiv"
    return em.assign(t, norm(f"k_{kind}{_w(t)}({args[0]}, {args[1]})", t))


def _rem(em: CEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    kind = "srem" if t.signed else "urem"
    return em.assign(t, f"k_{kind}{_w(t)}({args[0]}, {args[1]})")  # |r| < |b|: in range


def _less(a: str, b: str, t: IntType) -> str:
    """Return a C condition ``a < b``; signed order compares sign-flipped patterns."""
    if not t.signed:
        return f"({a} < {b})"
    s = lit(1 << (_w(t) - 1), _w(t))
    return f"(({a} ^ {s}) < ({b} ^ {s}))"


def _compare(kind: str) -> ScalarLowering[CEmitter]:
    def lower(em: CEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        t = call.ins[0]
        if kind in ("eq", "ne"):
            cond = f"({a} {'==' if kind == 'eq' else '!='} {b})"
        elif kind == "lt":
            cond = _less(a, b, int_type(t))
        elif kind == "gt":
            cond = _less(b, a, int_type(t))
        elif kind == "le":
            cond = f"!{_less(b, a, int_type(t))}"
        else:
            cond = f"!{_less(a, b, int_type(t))}"
        return em.assign(call.out, f"(uint32_t){cond}")

    return lower


def _minmax(smaller: bool) -> ScalarLowering[CEmitter]:
    def lower(em: CEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        cond = _less(a, b, int_type(call.out))
        pick = f"{a} : {b}" if smaller else f"{b} : {a}"
        return em.assign(call.out, f"{cond} ? {pick}")

    return lower


def _widening_mul(em: CEmitter, call: OpCall, args: list[str]) -> str:
    a, b = args
    src, out = call.ins[0], call.out
    wa, wb = widen(a, src, _w(out)), widen(b, src, _w(out))
    return em.assign(out, norm(f"{wa} * {wb}", out))


def _shl(em: CEmitter, call: OpCall, args: list[str]) -> str:
    a, n = args
    t = int_type(call.out)
    zero = lit(0, _w(t))
    return em.assign(t, norm(f"({n}) < {t.width}u ? ({ctype(t)})({a} << ({n})) : {zero}", t))


def _shr(em: CEmitter, call: OpCall, args: list[str]) -> str:
    a, n = args
    t = int_type(call.out)
    if t.signed:
        # Sign-extended, so shifting by N-1 already gives all sign bits (amount >= N).
        amount = f"(unsigned)(({n}) < {t.width}u ? ({n}) : {t.width - 1}u)"
        return em.assign(t, f"k_asr{_w(t)}({a}, {amount})")
    return em.assign(t, f"({n}) < {t.width}u ? ({a} >> ({n})) : {lit(0, _w(t))}")


def _rotate(left: bool) -> ScalarLowering[CEmitter]:
    def lower(em: CEmitter, call: OpCall, args: list[str]) -> str:
        a, n = args
        t = int_type(call.out)
        w = t.width
        r = f"({n}) % {w}u" if left else f"({w}u - ({n}) % {w}u) % {w}u"
        expr = f"k_rotl{_w(t)}({field(a, t)}, (unsigned)({r}), {w}u)"
        return em.assign(t, norm(expr, t))

    return lower


def _popcount(em: CEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    return em.assign(t, norm(f"k_pop{_w(t)}({field(args[0], t)})", t))


def _clz(em: CEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    w = _w(t)
    return em.assign(t, norm(f"k_clz{w}({field(args[0], t)}) - {lit(w - t.width, w)}", t))


def _ctz(em: CEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    u = field(args[0], t)
    return em.assign(t, norm(f"{u} ? k_ctz{_w(t)}({u}) : {lit(t.width, _w(t))}", t))


def _cast(em: CEmitter, call: OpCall, args: list[str]) -> str:
    out = call.out
    return em.assign(out, norm(widen(args[0], call.ins[0], _w(out)), out))


def _concat(em: CEmitter, call: OpCall, args: list[str]) -> str:
    hi_t, lo_t = int_type(call.ins[0]), int_type(call.ins[1])
    out = call.out
    r = ctype(out)
    hi, lo = field(args[0], hi_t), field(args[1], lo_t)
    return em.assign(out, f"(({r})({hi}) << {lo_t.width}) | ({r})({lo})")


def _slice(em: CEmitter, call: OpCall, args: list[str]) -> str:
    out = call.out
    lo = call.attrs["lo"]
    return em.assign(out, norm(f"({ctype(out)})({args[0]} >> {lo})", out))


TABLE: dict[str, Lowering[CEmitter] | Unsupported] = {
    **STRUCTURAL,
    **scalars(
        {
            "add": _binary("+"),
            "sub": _binary("-"),
            "mul": _binary("*"),
            "neg": _neg,
            "div": _div,
            "rem": _rem,
            "min": _minmax(True),
            "max": _minmax(False),
            "widening_mul": _widening_mul,
            "not": _not,
            "and": _bitwise("&"),
            "or": _bitwise("|"),
            "xor": _bitwise("^"),
            "shl": _shl,
            "shr": _shr,
            "rotl": _rotate(True),
            "rotr": _rotate(False),
            "popcount": _popcount,
            "clz": _clz,
            "ctz": _ctz,
            "eq": _compare("eq"),
            "ne": _compare("ne"),
            "lt": _compare("lt"),
            "le": _compare("le"),
            "gt": _compare("gt"),
            "ge": _compare("ge"),
            "cast": _cast,
            "concat": _concat,
            "slice": _slice,
        }
    ),
}

__all__ = ["TABLE", "ctype", "lit", "norm"]
