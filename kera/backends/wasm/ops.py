"""The WebAssembly lowering of every opcode: one entry per opcode of ``kera.ir.ops.OPS``.

Values are ``i32`` (``bool`` and widths up to 32) or ``i64`` holding the renormalised pattern
(SEMANTICS.md), so the native signed compares and ``div_s`` see the true values. WebAssembly
takes shift amounts modulo the register width and traps on ``x / 0`` and ``MIN / -1``: every
shift compares its amount with N itself and every division runs on a guarded divisor.
Operands are WAT expressions; ``em.let`` binds a value to a local and returns its ``local.get``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kera.backends.layout import word_bits
from kera.backends.lower import STRUCTURAL, Lowering, OpCall, ScalarLowering, int_type, scalars
from kera.ir.tables import Unsupported
from kera.ir.types import BoolType, IntType, Type

if TYPE_CHECKING:
    from kera.backends.wasm.emit import WasmEmitter


def wt(t: Type) -> str:
    """Return the WebAssembly value type of a scalar type's container."""
    return "i32" if word_bits(t) == 32 else "i64"


def k(value: int, ty: str) -> str:
    """Return a constant of the two's-complement pattern of ``value``."""
    bits = 32 if ty == "i32" else 64
    return f"({ty}.const {value & ((1 << bits) - 1)})"


def norm(expr: str, t: Type) -> str:
    """Return ``expr`` renormalised to ``t`` (mask or sign-extend from bit N-1)."""
    if isinstance(t, BoolType):
        return expr
    assert isinstance(t, IntType)
    w, ty = word_bits(t), wt(t)
    if t.width == w:
        return expr
    if not t.signed:
        return f"({ty}.and {expr} {k(t.mask, ty)})"
    if t.width in (8, 16) or (t.width == 32 and w == 64):
        return f"({ty}.extend{t.width}_s {expr})"
    s = k(w - t.width, ty)
    return f"({ty}.shr_s ({ty}.shl {expr} {s}) {s})"


def field(a: str, t: IntType) -> str:
    """Return the N-bit field of a value (masks a sign-extended container)."""
    w = word_bits(t)
    return f"({wt(t)}.and {a} {k(t.mask, wt(t))})" if t.signed and t.width < w else a


def convert(a: str, src: Type, dst: str, signed: bool | None = None) -> str:
    """Return ``a`` moved to container ``dst`` (wrap, or extend by the source's signedness)."""
    have = wt(src)
    if have == dst:
        return a
    if dst == "i32":
        return f"(i32.wrap_i64 {a})"
    if signed is None:
        signed = isinstance(src, IntType) and src.signed
    return f"(i64.extend_i32_{'s' if signed else 'u'} {a})"


def _arith(name: str) -> ScalarLowering[WasmEmitter]:
    def lower(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        return em.let(call.out, norm(f"({wt(call.out)}.{name} {a} {b})", call.out))

    return lower


def _bitwise(name: str) -> ScalarLowering[WasmEmitter]:
    def lower(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        return em.let(call.out, f"({wt(call.out)}.{name} {a} {b})")

    return lower


def _neg(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    ty = wt(call.out)
    return em.let(call.out, norm(f"({ty}.sub {k(0, ty)} {args[0]})", call.out))


def _not(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    if isinstance(call.out, BoolType):
        return em.let(call.out, f"(i32.xor {args[0]} (i32.const 1))")
    ty = wt(call.out)
    return em.let(call.out, norm(f"({ty}.xor {args[0]} {k(-1, ty)})", call.out))


def _safe_divisor(em: WasmEmitter, a: str, b: str, t: IntType) -> tuple[str, str]:
    """Return (b is zero, a divisor that cannot trap): 1 replaces 0, and -1 when a is MIN."""
    ty = wt(t)
    zero = em.let(BoolType(), f"({ty}.eqz {b})")
    bad = zero
    if t.signed and t.width == word_bits(t):  # narrower MIN / -1 fits the container
        lo = k(1 << (word_bits(t) - 1), ty)
        bad = f"(i32.or {zero} (i32.and ({ty}.eq {a} {lo}) ({ty}.eq {b} {k(-1, ty)})))"
    return zero, em.let(t, f"(select {k(1, ty)} {b} {bad})")


def _divide(remainder: bool) -> ScalarLowering[WasmEmitter]:
    def lower(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        t = int_type(call.out)
        ty = wt(t)
        zero, safe = _safe_divisor(em, a, b, t)
        q = f"({ty}.{'rem' if remainder else 'div'}_{'s' if t.signed else 'u'} {a} {safe})"
        if remainder:  # a % 0 = a; |r| < |b| keeps it in range
            return em.let(t, f"(select {a} {q} {zero})")
        return em.let(t, norm(f"(select {k(0, ty)} {q} {zero})", t))

    return lower


def _less(a: str, b: str, t: Type) -> str:
    return f"({wt(t)}.lt_{'s' if int_type(t).signed else 'u'} {a} {b})"


def _compare(kind: str) -> ScalarLowering[WasmEmitter]:
    def lower(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        t = call.ins[0]
        ty = wt(t)
        if kind in ("eq", "ne"):
            return em.let(call.out, f"({ty}.{kind} {a} {b})")
        suffix = "s" if int_type(t).signed else "u"
        return em.let(call.out, f"({ty}.{kind}_{suffix} {a} {b})")

    return lower


def _minmax(smaller: bool) -> ScalarLowering[WasmEmitter]:
    def lower(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
        a, b = args
        x, y = (a, b) if smaller else (b, a)
        return em.let(call.out, f"(select {x} {y} {_less(a, b, call.out)})")

    return lower


def _widening_mul(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    a, b = args
    src, out = call.ins[0], call.out
    ty = wt(out)
    return em.let(out, norm(f"({ty}.mul {convert(a, src, ty)} {convert(b, src, ty)})", out))


def _amount(em: WasmEmitter, n: str, nt: Type, t: IntType) -> tuple[str, str]:
    """Return (amount < N, the amount in the value's container) for a shift of ``t``."""
    nty = wt(nt)
    small = em.let(BoolType(), f"({nty}.lt_u {n} {k(t.width, nty)})")
    return small, convert(n, nt, wt(t), signed=False)


def _shl(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    a, n = args
    t = int_type(call.out)
    ty = wt(t)
    small, amt = _amount(em, n, call.ins[1], t)
    return em.let(t, norm(f"(select ({ty}.shl {a} {amt}) {k(0, ty)} {small})", t))


def _shr(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    a, n = args
    t = int_type(call.out)
    ty = wt(t)
    small, amt = _amount(em, n, call.ins[1], t)
    if t.signed:  # sign-extended: shifting by N-1 gives all sign bits
        return em.let(t, f"({ty}.shr_s {a} (select {amt} {k(t.width - 1, ty)} {small}))")
    return em.let(t, f"(select ({ty}.shr_u {a} {amt}) {k(0, ty)} {small})")


def _rotate(left: bool) -> ScalarLowering[WasmEmitter]:
    def lower(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
        a, n = args
        t = int_type(call.out)
        ty, nt = wt(t), call.ins[1]
        r = em.let(t, convert(f"({wt(nt)}.rem_u {n} {k(t.width, wt(nt))})", nt, ty, signed=False))
        if t.width == word_bits(t):  # the native rotate is modulo N already
            return em.let(t, f"({ty}.{'rotl' if left else 'rotr'} {a} {r})")
        u = em.let(t, field(a, t))
        back = f"({ty}.sub {k(t.width, ty)} {r})"
        # r == 0: the back shift by N < W clears an N-bit field, or lands above bit N-1.
        first, second = ("shl", "shr_u") if left else ("shr_u", "shl")
        expr = f"({ty}.or ({ty}.{first} {u} {r}) ({ty}.{second} {u} {back}))"
        return em.let(t, norm(expr, t))

    return lower


def _popcount(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    return em.let(t, norm(f"({wt(t)}.popcnt {field(args[0], t)})", t))


def _clz(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    ty = wt(t)
    extra = k(word_bits(t) - t.width, ty)
    return em.let(t, norm(f"({ty}.sub ({ty}.clz {field(args[0], t)}) {extra})", t))


def _ctz(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    t = int_type(call.out)
    ty = wt(t)
    u = field(args[0], t)
    if t.width < word_bits(t):  # a stop bit at N makes ctz(0) = N
        u = f"({ty}.or {u} {k(1 << t.width, ty)})"
    return em.let(t, norm(f"({ty}.ctz {u})", t))


def _cast(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    out = call.out
    return em.let(out, norm(convert(args[0], call.ins[0], wt(out)), out))


def _concat(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    hi_t, lo_t = int_type(call.ins[0]), int_type(call.ins[1])
    out = call.out
    ty = wt(out)
    hi = convert(field(args[0], hi_t), hi_t, ty, signed=False)
    lo = convert(field(args[1], lo_t), lo_t, ty, signed=False)
    return em.let(out, f"({ty}.or ({ty}.shl {hi} {k(lo_t.width, ty)}) {lo})")


def _slice(em: WasmEmitter, call: OpCall, args: list[str]) -> str:
    src, out = call.ins[0], call.out
    sty = wt(src)
    shifted = f"({sty}.shr_u {args[0]} {k(call.attrs['lo'], sty)})"
    return em.let(out, norm(convert(shifted, src, wt(out), signed=False), out))


TABLE: dict[str, Lowering[WasmEmitter] | Unsupported] = {
    **STRUCTURAL,
    **scalars(
        {
            "add": _arith("add"),
            "sub": _arith("sub"),
            "mul": _arith("mul"),
            "neg": _neg,
            "div": _divide(False),
            "rem": _divide(True),
            "min": _minmax(True),
            "max": _minmax(False),
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

__all__ = ["TABLE", "k", "norm", "wt"]
