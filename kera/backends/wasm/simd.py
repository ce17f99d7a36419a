"""SIMD128 lowering: four rows at a time in ``i32x4`` lanes, for regions whose values all fit
32-bit containers and whose opcodes have a lane-wise form.

Every value is a ``v128`` of four containers with the scalar lowering's invariants: renormalised
integers, ``bool`` as 0/1. Shifts and rotates need a constant amount (SIMD128 shifts take one
amount for all lanes, and mask it); division, remainder, ``clz`` and ``ctz`` have no lane-wise
form. ``emit_wat`` tries this table first and falls back to the scalar one (``ops.TABLE``)
when ``NotVectorisable`` is raised. Only deterministic SIMD128: no relaxed-SIMD.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kera.backends.lower import STRUCTURAL, Lowering, OpCall, ScalarLowering, scalars
from kera.ir.tables import Unsupported
from kera.ir.types import BoolType, IntType, Type

if TYPE_CHECKING:
    from kera.backends.wasm.emit import SimdEmitter


class NotVectorisable(Exception):
    """This region has a node without a lane-wise lowering: use the scalar module."""


def splat(value: int) -> str:
    """Return a ``v128`` constant with the 32-bit pattern of ``value`` in every lane."""
    v = value & 0xFFFF_FFFF
    return f"(v128.const i32x4 {v} {v} {v} {v})"


ONE = splat(1)


def norm(expr: str, t: Type) -> str:
    """Return ``expr`` renormalised to ``t`` lane by lane."""
    if isinstance(t, BoolType):
        return expr
    assert isinstance(t, IntType)
    if t.width == 32:
        return expr
    if not t.signed:
        return f"(v128.and {expr} {splat(t.mask)})"
    s = f"(i32.const {32 - t.width})"
    return f"(i32x4.shr_s (i32x4.shl {expr} {s}) {s})"


def _int(t: Type) -> IntType:
    if not isinstance(t, IntType):
        raise NotVectorisable(f"{t} is not an integer")
    return t


def _sign(t: Type) -> str:
    return "s" if _int(t).signed else "u"


def _lanes(op: str) -> ScalarLowering[SimdEmitter]:
    def lower(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        return em.let(call.out, norm(f"(i32x4.{op} {a} {b})", call.out))

    return lower


def _bitwise(op: str) -> ScalarLowering[SimdEmitter]:
    def lower(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
        return em.let(call.out, f"(v128.{op} {args[0]} {args[1]})")

    return lower


def _neg(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    return em.let(call.out, norm(f"(i32x4.neg {args[0]})", call.out))


def _not(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    if isinstance(call.out, BoolType):
        return em.let(call.out, f"(v128.xor {args[0]} {ONE})")
    return em.let(call.out, norm(f"(v128.not {args[0]})", call.out))


def _minmax(op: str) -> ScalarLowering[SimdEmitter]:
    def lower(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
        return em.let(call.out, f"(i32x4.{op}_{_sign(call.out)} {args[0]} {args[1]})")

    return lower


def _compare(kind: str) -> ScalarLowering[SimdEmitter]:
    def lower(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
        t = call.ins[0]
        op = kind if kind in ("eq", "ne") else f"{kind}_{_sign(t)}"
        mask = f"(i32x4.{op} {args[0]} {args[1]})"  # all ones or zero per lane
        return em.let(call.out, f"(i32x4.shr_u {mask} (i32.const 31))")

    return lower


def _amount(call: OpCall) -> int:
    n = call.consts[1]
    if n is None:
        raise NotVectorisable("a shift or rotate by a non-constant amount")
    return n


def _shl(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    t, n = _int(call.out), _amount(call)
    if n >= t.width:
        return splat(0)
    return em.let(t, norm(f"(i32x4.shl {args[0]} (i32.const {n}))", t))


def _shr(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    t, n = _int(call.out), _amount(call)
    if t.signed:  # sign-extended: N-1 already gives all sign bits
        return em.let(t, f"(i32x4.shr_s {args[0]} (i32.const {min(n, t.width - 1)}))")
    if n >= t.width:
        return splat(0)
    return em.let(t, f"(i32x4.shr_u {args[0]} (i32.const {n}))")


def _field(a: str, t: IntType) -> str:
    return f"(v128.and {a} {splat(t.mask)})" if t.signed and t.width < 32 else a


def _rotate(left: bool) -> ScalarLowering[SimdEmitter]:
    def lower(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
        t = _int(call.out)
        r = _amount(call) % t.width
        if r == 0:
            return args[0]
        r = r if left else t.width - r
        u = em.let(t, _field(args[0], t))
        expr = f"(v128.or (i32x4.shl {u} (i32.const {r})) (i32x4.shr_u {u} (i32.const " \
               f"{t.width - r})))"
        return em.let(t, norm(expr, t))

    return lower


def _popcount(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    t = _int(call.out)
    bytes_ = f"(i8x16.popcnt {_field(args[0], t)})"
    halves = f"(i16x8.extadd_pairwise_i8x16_u {bytes_})"
    return em.let(t, norm(f"(i32x4.extadd_pairwise_i16x8_u {halves})", t))


def _widening_mul(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    out = _int(call.out)
    if out.width > 32:
        raise NotVectorisable("a widening multiply past 32 bits")
    return em.let(out, norm(f"(i32x4.mul {args[0]} {args[1]})", out))


def _cast(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    return em.let(call.out, norm(args[0], call.out))  # one container: extension is implicit


def _concat(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    hi_t, lo_t = _int(call.ins[0]), _int(call.ins[1])
    shifted = f"(i32x4.shl {_field(args[0], hi_t)} (i32.const {lo_t.width}))"
    return em.let(call.out, f"(v128.or {shifted} {_field(args[1], lo_t)})")


def _slice(em: SimdEmitter, call: OpCall, args: list[str]) -> str:
    shifted = f"(i32x4.shr_u {args[0]} (i32.const {call.attrs['lo']}))"
    return em.let(call.out, norm(shifted, call.out))


_NO_LANES = "SIMD128 has no lane-wise integer {}; regions using it run the scalar module"

TABLE: dict[str, Lowering[SimdEmitter] | Unsupported] = {
    **STRUCTURAL,
    **scalars(
        {
            "add": _lanes("add"),
            "sub": _lanes("sub"),
            "mul": _lanes("mul"),
            "neg": _neg,
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
    "div": Unsupported(_NO_LANES.format("division")),
    "rem": Unsupported(_NO_LANES.format("remainder")),
    "clz": Unsupported(_NO_LANES.format("count of leading zeros")),
    "ctz": Unsupported(_NO_LANES.format("count of trailing zeros")),
}

__all__ = ["TABLE", "NotVectorisable", "norm", "splat"]
