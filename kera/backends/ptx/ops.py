"""The PTX lowering of every opcode: one entry per opcode of ``kera.ir.ops.OPS``.

Values live in ``.b32`` registers (``bool`` as 0/1 and widths up to 32) or ``.b64`` ones, holding
the renormalised pattern (SEMANTICS.md), so native signed compares, ``min.s``/``max.s`` and
``div.s`` see true values. PTX clamps shift amounts and leaves ``x / 0`` and ``MIN / -1``
unspecified: every shift compares its amount with N and every division uses a guarded divisor.
Integer arithmetic only; no ``.ftz``, no ``.approx`` (and no floats yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kera.backends.layout import word_bits
from kera.backends.lower import STRUCTURAL, Lowering, OpCall, ScalarLowering, int_type, scalars
from kera.ir.tables import Unsupported
from kera.ir.types import BoolType, IntType, Type

if TYPE_CHECKING:
    from kera.backends.ptx.emit import PtxEmitter


def w(t: Type) -> int:
    """Return the register width (32 or 64) of a scalar type."""
    return word_bits(t)


def imm(value: int, bits: int) -> str:
    """Return a PTX integer literal of the ``bits``-bit pattern of ``value``."""
    return f"{value & ((1 << bits) - 1):#x}"


def norm(em: PtxEmitter, reg: str, t: Type) -> str:
    """Return a register holding ``reg`` renormalised to ``t``."""
    if isinstance(t, BoolType):
        return reg
    assert isinstance(t, IntType)
    b = w(t)
    if t.width == b:
        return reg
    if not t.signed:
        return em.op(t, f"and.b{b} {{d}}, {reg}, {imm(t.mask, b)};")
    up = em.op(t, f"shl.b{b} {{d}}, {reg}, {b - t.width};")
    return em.op(t, f"shr.s{b} {{d}}, {up}, {b - t.width};")


def field(em: PtxEmitter, a: str, t: IntType) -> str:
    """Return the N-bit field of a value (masks a sign-extended register)."""
    if t.signed and t.width < w(t):
        return em.op(t, f"and.b{w(t)} {{d}}, {a}, {imm(t.mask, w(t))};")
    return a


def convert(em: PtxEmitter, a: str, src: Type, dst: int, signed: bool | None = None) -> str:
    """Return ``a`` moved to a ``dst``-bit register (truncate, or extend by signedness)."""
    have = w(src)
    if have == dst:
        return a
    if dst == 32:
        return em.op(BoolType(), f"cvt.u32.u64 {{d}}, {a};")
    if signed is None:
        signed = isinstance(src, IntType) and src.signed
    kind = "s" if signed else "u"
    return em.op(IntType(64, False), f"cvt.{kind}64.{kind}32 {{d}}, {a};")


def _kind(t: Type) -> str:
    return "s" if isinstance(t, IntType) and t.signed else "u"


def _arith(mnemonic: str) -> ScalarLowering[PtxEmitter]:
    def lower(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
        t = call.out
        return norm(em, em.op(t, f"{mnemonic}.u{w(t)} {{d}}, {args[0]}, {args[1]};"), t)

    return lower


def _bitwise(mnemonic: str) -> ScalarLowering[PtxEmitter]:
    def lower(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
        t = call.out
        return em.op(t, f"{mnemonic}.b{w(t)} {{d}}, {args[0]}, {args[1]};")

    return lower


def _neg(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    t = call.out
    return norm(em, em.op(t, f"neg.s{w(t)} {{d}}, {args[0]};"), t)


def _not(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    t = call.out
    if isinstance(t, BoolType):
        return em.op(t, f"xor.b32 {{d}}, {args[0]}, 1;")
    return norm(em, em.op(t, f"not.b{w(t)} {{d}}, {args[0]};"), t)


def _guarded(em: PtxEmitter, a: str, b: str, t: IntType) -> tuple[str, str]:
    """Return (predicate b == 0, a divisor that is 1 for 0, and for -1 when a is MIN)."""
    b_ = w(t)
    zero = em.pred(f"setp.eq.u{b_} {{d}}, {b}, 0;")
    bad = zero
    if t.signed and t.width == b_:
        is_min = em.pred(f"setp.eq.u{b_} {{d}}, {a}, {imm(1 << (b_ - 1), b_)};")
        is_m1 = em.pred(f"setp.eq.u{b_} {{d}}, {b}, {imm(-1, b_)};")
        both = em.pred(f"and.pred {{d}}, {is_min}, {is_m1};")
        bad = em.pred(f"or.pred {{d}}, {zero}, {both};")
    return zero, em.op(t, f"selp.b{b_} {{d}}, 1, {b}, {bad};")


def _divide(remainder: bool) -> ScalarLowering[PtxEmitter]:
    def lower(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        t = int_type(call.out)
        zero, safe = _guarded(em, a, b, t)
        mnemonic = "rem" if remainder else "div"
        q = em.op(t, f"{mnemonic}.{_kind(t)}{w(t)} {{d}}, {a}, {safe};")
        if remainder:
            return em.op(t, f"selp.b{w(t)} {{d}}, {a}, {q}, {zero};")
        return norm(em, em.op(t, f"selp.b{w(t)} {{d}}, 0, {q}, {zero};"), t)

    return lower


def _minmax(mnemonic: str) -> ScalarLowering[PtxEmitter]:
    def lower(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
        t = call.out
        return em.op(t, f"{mnemonic}.{_kind(t)}{w(t)} {{d}}, {args[0]}, {args[1]};")

    return lower


def _widening_mul(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    src, out = call.ins[0], call.out
    if w(out) == 32:
        return norm(em, em.op(out, f"mul.lo.u32 {{d}}, {args[0]}, {args[1]};"), out)
    return norm(em, em.op(out, f"mul.wide.{_kind(src)}32 {{d}}, {args[0]}, {args[1]};"), out)


def _amount(em: PtxEmitter, n: str, nt: Type, t: IntType) -> tuple[str, str]:
    """Return (predicate amount < N, the amount as a .u32 register) for a shift of ``t``."""
    small = em.pred(f"setp.lt.u{w(nt)} {{d}}, {n}, {t.width};")
    return small, convert(em, n, nt, 32, signed=False)


def _shl(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    a, n = args
    t = int_type(call.out)
    small, amt = _amount(em, n, call.ins[1], t)
    shifted = em.op(t, f"shl.b{w(t)} {{d}}, {a}, {amt};")
    return norm(em, em.op(t, f"selp.b{w(t)} {{d}}, {shifted}, 0, {small};"), t)


def _shr(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    a, n = args
    t = int_type(call.out)
    small, amt = _amount(em, n, call.ins[1], t)
    if t.signed:  # sign-extended: shifting by N-1 gives all sign bits
        clamped = em.op(BoolType(), f"selp.b32 {{d}}, {amt}, {t.width - 1}, {small};")
        return em.op(t, f"shr.s{w(t)} {{d}}, {a}, {clamped};")
    shifted = em.op(t, f"shr.u{w(t)} {{d}}, {a}, {amt};")
    return em.op(t, f"selp.b{w(t)} {{d}}, {shifted}, 0, {small};")


def _rotate(left: bool) -> ScalarLowering[PtxEmitter]:
    def lower(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
        a, n = args
        t = int_type(call.out)
        nt, b = call.ins[1], w(t)
        r = em.op(nt, f"rem.u{w(nt)} {{d}}, {n}, {t.width};")
        r = convert(em, r, nt, 32, signed=False)
        u = field(em, a, t)
        back = em.op(BoolType(), f"sub.u32 {{d}}, {t.width}, {r};")
        first, second = (r, back) if left else (back, r)
        hi = em.op(t, f"shl.b{b} {{d}}, {u}, {first};")
        lo = em.op(t, f"shr.u{b} {{d}}, {u}, {second};")
        both = em.op(t, f"or.b{b} {{d}}, {hi}, {lo};")
        still = em.pred(f"setp.eq.u32 {{d}}, {r}, 0;")  # by 0: the field itself, no N-bit shift
        return norm(em, em.op(t, f"selp.b{b} {{d}}, {u}, {both}, {still};"), t)

    return lower


def _count(em: PtxEmitter, t: IntType, count32: str) -> str:
    """Return a .u32 bit count moved to ``t``'s register and renormalised."""
    return norm(em, convert(em, count32, BoolType(), w(t), signed=False), t)


def _popcount(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    c = em.op(BoolType(), f"popc.b{w(t)} {{d}}, {field(em, args[0], t)};")
    return _count(em, t, c)


def _clz(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    c = em.op(BoolType(), f"clz.b{w(t)} {{d}}, {field(em, args[0], t)};")  # clz(0) = W
    c = em.op(BoolType(), f"sub.u32 {{d}}, {c}, {w(t) - t.width};")
    return _count(em, t, c)


def _ctz(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    u = field(em, args[0], t)
    if t.width < w(t):  # a stop bit at N makes ctz(0) = N
        u = em.op(t, f"or.b{w(t)} {{d}}, {u}, {imm(1 << t.width, w(t))};")
    rev = em.op(t, f"brev.b{w(t)} {{d}}, {u};")
    return _count(em, t, em.op(BoolType(), f"clz.b{w(t)} {{d}}, {rev};"))


def _compare(kind: str) -> ScalarLowering[PtxEmitter]:
    def lower(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
        t = call.ins[0]
        p = em.pred(f"setp.{kind}.{_kind(t)}{w(t)} {{d}}, {args[0]}, {args[1]};")
        return em.op(BoolType(), f"selp.u32 {{d}}, 1, 0, {p};")

    return lower


def _cast(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    out = call.out
    return norm(em, convert(em, args[0], call.ins[0], w(out)), out)


def _concat(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    hi_t, lo_t = int_type(call.ins[0]), int_type(call.ins[1])
    out = call.out
    b = w(out)
    hi = convert(em, field(em, args[0], hi_t), hi_t, b, signed=False)
    lo = convert(em, field(em, args[1], lo_t), lo_t, b, signed=False)
    up = em.op(out, f"shl.b{b} {{d}}, {hi}, {lo_t.width};")
    return em.op(out, f"or.b{b} {{d}}, {up}, {lo};")


def _slice(em: PtxEmitter, call: OpCall, args: list[str]) -> str:
    src, out = call.ins[0], call.out
    shifted = em.op(src, f"shr.u{w(src)} {{d}}, {args[0]}, {call.attrs['lo']};")
    return norm(em, convert(em, shifted, src, w(out), signed=False), out)


TABLE: dict[str, Lowering[PtxEmitter] | Unsupported] = {
    **STRUCTURAL,
    **scalars(
        {
            "add": _arith("add"),
            "sub": _arith("sub"),
            "mul": _arith("mul.lo"),
            "neg": _neg,
            "div": _divide(False),
            "rem": _divide(True),
            "min": _minmax("min"),
            "max": _minmax("max"),
            "widening_mul": _widening_mul,
            "not": _not,
            "and": _bitwise("and"),
            "or": _bitwise("or"),
            "xor": _bitwise("xor"),
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

__all__ = ["TABLE", "imm", "norm"]
