"""Fixed point (FIXED.md) lowered to integer operations on the raw bits.

A value of ``fx<W, I>`` is a graph value of that type whose bits are the raw two's complement
integer ``value * 2**F``; ``FixedType`` is an ``IntType``, so the ops here are the registry's
integer ops and every pass and backend handles them unchanged. Exact arithmetic aligns the
binary points (a cast that widens, a left shift) and then adds, subtracts or multiplies; a
conversion adds the quantisation increment of its mode, shifts right, then clamps or wraps.
Compile-time values (literals under ``as``) go through the same rules in ``quantize``.
"""

from __future__ import annotations

import difflib
import math
from fractions import Fraction
from typing import TYPE_CHECKING

from kera.check import typeck
from kera.check.typeck import TypeRuleError
from kera.diagnostics import Note, Span
from kera.elaborate import tree as t
from kera.elaborate.values import POISON, Lit, Val, Value
from kera.ir.types import (
    BOOL,
    FIXED_INT_BITS,
    OVERFLOW_MODES,
    QUANT_MODES,
    FixedType,
    IntType,
    Type,
    sint,
    uint,
)
from kera.ir.values import decimal_text
from kera.syntax import SyntaxKind as K
from kera.syntax import SyntaxNode, parse_frac_literal, parse_int_literal

if TYPE_CHECKING:
    from kera.elaborate.base import BuilderBase as Builder

BUILTINS = ("abs", "bits", "from_bits")
_SHIFT = uint(8)  # the type of constant shift amounts


# --- the exact model (compile-time values) ---------------------------------------------------


def quantize(value: Fraction, target: FixedType) -> int:
    """Return the raw bits of ``value`` converted into ``target`` (its Q, then its O)."""
    scaled = value * Fraction(2) ** target.frac
    q = _round(scaled, target.quant)
    return _overflow(q, target)


def _round(x: Fraction, mode: str) -> int:
    down, up = math.floor(x), math.ceil(x)
    if mode == "trn":
        return down
    if mode == "trn_zero":
        return down if x >= 0 else up
    if x - down != Fraction(1, 2):  # not a tie: every `rnd` mode goes to the nearest
        return down if x - down < Fraction(1, 2) else up
    return {
        "rnd": up, "rnd_min_inf": down, "rnd_zero": down if x > 0 else up,
        "rnd_inf": up if x > 0 else down, "rnd_conv": down if down % 2 == 0 else up,
    }[mode]


def _bounds(target: FixedType | IntType) -> tuple[int, int]:
    """The raw range a saturating conversion clamps to (``sat_sym`` drops the lowest)."""
    sym = isinstance(target, FixedType) and target.overflow == "sat_sym" and target.signed
    return (target.min + 1 if sym else target.min), target.max


def _overflow(q: int, target: FixedType) -> int:
    lo, hi = _bounds(target)
    if target.overflow == "wrap" or lo <= q <= hi:
        return target.wrap(q)
    if target.overflow == "sat_zero":
        return 0
    return hi if q > hi else lo


def nearest(value: Fraction, ty: FixedType) -> tuple[Fraction, Fraction]:
    """Return the representable values of ``ty`` just below and above ``value``."""
    scaled = value * Fraction(2) ** ty.frac
    lo, hi = math.floor(scaled), math.ceil(scaled)
    lo, hi = min(max(lo, ty.min), ty.max), max(min(hi, ty.max), ty.min)
    return ty.value_of(lo), ty.value_of(hi)


def as_format(ty: IntType) -> FixedType:
    """Return the fixed-point layout of an integer or fixed-point type (``iN`` is ``fx<N, N>``)."""
    return ty if isinstance(ty, FixedType) else FixedType(ty.width, ty.signed, ty.width)


# --- types -----------------------------------------------------------------------------------


def resolve(b: Builder, node: SyntaxNode) -> FixedType | None:
    """Turn ``fx<W, I, Q, O>`` syntax into a ``FixedType``."""
    head = node.first_token(K.IDENT)
    signed = head is not None and head.text == "fx"
    args = t.exprs(node)
    if len(args) not in (2, 3, 4):
        b.error(f"`{'fx' if signed else 'ufx'}<...>` takes a width, a position and up to two "
                f"modes, not {len(args)} parameters", node.span,
                Note("write `fx<W, I>`, `fx<W, I, Q>` or `fx<W, I, Q, O>`"))
        return None
    width = b.const_int(args[0], sint(32), "a fixed-point width")
    ints = b.const_int(args[1], sint(32), "a fixed-point integer-bit count")
    modes = [_mode(b, arg, kinds) for arg, kinds in zip(args[2:], (QUANT_MODES, OVERFLOW_MODES),
                                                        strict=False)]
    if width is None or ints is None or None in modes:
        return None
    if not 1 <= width <= 64:
        b.error(f"a fixed-point width must be in 1..=64, not {width}", args[0].span,
                Note("wider values need two words: split the computation"))
        return None
    if ints not in FIXED_INT_BITS:
        b.error(f"a fixed-point integer-bit count must be in -128..=127, not {ints}", args[1].span)
        return None
    quant = modes[0] if modes else "trn"
    overflow = modes[1] if len(modes) > 1 else "wrap"
    return FixedType(width, signed, ints, quant, overflow)  # type: ignore[arg-type]


def _mode(b: Builder, node: SyntaxNode, kinds: tuple[str, ...]) -> str | None:
    name = t.name(node) if node.kind == K.NAME_REF else None
    what = "quantisation" if kinds is QUANT_MODES else "overflow"
    if name in kinds:
        return name
    close = difflib.get_close_matches(name or node.text(), kinds, n=1)
    hint = f"did you mean `{close[0]}`? " if close else ""
    b.error(f"unknown {what} mode `{node.text().strip()}`", node.span,
            Note(f"{hint}the {what} modes are {', '.join(f'`{k}`' for k in kinds)}"))
    return None


# --- literals --------------------------------------------------------------------------------


def literal_value(node: SyntaxNode) -> Fraction | None:
    """Return the exact value of a literal or a negated literal, else None."""
    negate = False
    if node.kind == K.PREFIX_EXPR:
        op, inner = t.operator(node), t.exprs(node)
        if op is None or op.kind != K.MINUS or len(inner) != 1:
            return None
        node, negate = inner[0], True
    if node.kind != K.LITERAL:
        return None
    tok = node.first_token()
    try:
        if tok is not None and tok.kind == K.FRAC_LITERAL:
            value = parse_frac_literal(tok.text)
        elif tok is not None and tok.kind == K.INT_LITERAL:
            raw, suffix = parse_int_literal(tok.text)
            if suffix is not None:
                return None
            value = Fraction(raw)
        else:
            return None
    except ValueError:
        return None
    return -value if negate else value


def literal(b: Builder, lit: Lit, ty: FixedType) -> Val:
    """Give a pending literal the fixed-point type ``ty``: it must be exactly representable."""
    if lit.build is not None:
        return lit.build(ty)
    value = Fraction(lit.value)
    raw = ty.raw_of(value)
    if raw is not None:
        return b.const(ty, raw, lit.span)
    lo, hi = nearest(value, ty)
    text = decimal_text(value)
    if lo == hi:
        span_text = f"{decimal_text(ty.value_of(ty.min))}..={decimal_text(ty.value_of(ty.max))}"
        note = Note(f"`{ty}` holds {span_text}; write `{text} as {_with(ty, 'trn', 'sat')}` "
                    "to saturate")
    else:
        note = Note(f"the nearest values are {decimal_text(lo)} and {decimal_text(hi)}; write "
                    f"`{text} as {_with(ty, 'rnd', ty.overflow)}` to round")
    b.error(f"literal `{text}` is not exactly representable in `{ty}`", lit.span, note)
    return POISON


def _with(ty: FixedType, quant: str, overflow: str) -> FixedType:
    return FixedType(ty.width, ty.signed, ty.int_bits, quant, overflow)


# --- graph building --------------------------------------------------------------------------


def _cast(b: Builder, v: Val, ty: IntType, span: Span) -> Val:
    return v if v.type == ty else b.add("cast", ty, [v], span=span)


def _shift(b: Builder, op: str, v: Val, amount: int, span: Span) -> Val:
    if amount == 0:
        return v
    return b.add(op, v.type, [v, b.const(_SHIFT, amount)], span=span)  # type: ignore[arg-type]


def _align(b: Builder, v: Val, to: FixedType, span: Span) -> Val:
    """Return ``v``'s exact value in the (wider) layout ``to``."""
    src = v.type
    assert isinstance(src, FixedType)
    return _shift(b, "shl", _cast(b, v, to, span), to.frac - src.frac, span)


def _mixing(b: Builder, op: str, a: Type, c: Type, span: Span) -> None:
    other = c if isinstance(a, FixedType) else a
    fixed = a if isinstance(a, FixedType) else c
    b.error(f"mismatched types: `{a}` {op} `{c}` (integers mix with fixed point only through "
            "`as`)", span, Note(f"convert the `{other}` operand: `... as {fixed}`"))


def binary(b: Builder, op: str, x: Val, y: Val, span: Span) -> Val:
    """Build ``x op y`` where at least one operand is fixed point."""
    tx, ty = x.type, y.type
    if op in typeck.FIXED_FORBIDDEN:
        b.error(f"`{op}` is not defined on fixed-point values; {typeck.FIXED_FORBIDDEN[op]}",
                span, Note(_instead(op)))
        return POISON
    if not isinstance(tx, FixedType) or not isinstance(ty, FixedType):
        _mixing(b, op, tx, ty, span)  # type: ignore[arg-type]
        return POISON
    try:
        result = typeck.fixed_binary_result(op, tx, ty)
    except TypeRuleError as e:
        b.error(str(e), span, Note("convert an operand first: `(x as fx<W, I>)`")
                if "the limit is" in str(e) else Note(_instead(op)))
        return POISON
    if op == "*":
        assert isinstance(result, FixedType)
        return b.add("mul", result, [_cast(b, x, result, span), _cast(b, y, result, span)],
                     span=span)
    if tx == ty and op in typeck.COMPARE_OPS:
        return b.add(typeck.OPCODES[op], BOOL, [x, y], span=span)
    common = typeck.fixed_sum_type(op if op in ("+", "-") else "-", tx, ty)
    xa, ya = _align(b, x, common, span), _align(b, y, common, span)
    return b.add(typeck.OPCODES[op], result, [xa, ya], span=span)


def _instead(op: str) -> str:
    if op in ("/", "%"):
        return "write it on the raw bits: `from_bits::<T>(bits(x) / n)`, or multiply instead"
    return "`bits(x)` gives the raw bits as `uW`; `from_bits::<T>(u)` makes a value of them"


def negate(b: Builder, x: Val, span: Span) -> Val:
    """Build ``-x``: exact, in ``fx<W + 1, I + 1>``."""
    assert isinstance(x.type, FixedType)
    try:
        result = typeck.fixed_neg_result(x.type)
    except TypeRuleError as e:
        b.error(str(e), span, Note("convert it first: `-(x as fx<64, I>)` wraps at the bound"))
        return POISON
    return b.add("neg", result, [_cast(b, x, result, span)], span=span)


def convert(b: Builder, x: Val, target: IntType, span: Span) -> Val:
    """Build ``x as target`` between integer and fixed-point types (FIXED.md's rules)."""
    assert isinstance(x.type, IntType)
    src, dst = as_format(x.type), as_format(target)
    if not isinstance(target, FixedType):  # `as iN`: floor, then wrap
        dst = FixedType(target.width, target.signed, target.width)
    d = src.frac - dst.frac
    node = b.graph[x.id]  # type: ignore[index]
    if dst.overflow == "wrap" and d == 0 and node.op in ("add", "sub"):
        # A wrapping conversion of an exact sum is the sum modulo 2^W: compute it in the target
        # (the hand-written `acc += p as iN`), so sums of sums stay one type and reassociate.
        ins = [Val(i, b.graph[i].type) for i in node.inputs]
        return b.add(node.op, target, [_cast(b, v, target, span) for v in ins], span=span)
    lo, hi = src.min, src.max
    if d <= 0:
        qlo, qhi = lo << -d, hi << -d
    else:  # the kept bits plus a rounding increment of 0 or 1
        qlo, qhi = lo >> d, (hi >> d) + (dst.quant != "trn")
    need = (min(qlo, dst.min), max(qhi, dst.max)) if dst.overflow != "wrap" else (qlo, qhi)
    if d < 0:
        need = (min(need[0], lo), max(need[1], hi))  # the source is cast before the shift
    width = max(_signed_width(need[0]), _signed_width(need[1]))
    if width > 64:
        b.error(f"converting `{x.type}` to `{target}` needs a {width}-bit intermediate; the "
                "limit is 64", span, Note("convert in two steps through a narrower format"))
        return POISON
    m = sint(width)
    if d < 0:
        q = _shift(b, "shl", _cast(b, x, m, span), -d, span)
    elif d > 0:
        q = _round_right(b, x, d, dst.quant, m, span)
    else:
        q = _cast(b, x, m, span)
    q = _saturate(b, q, (qlo, qhi), dst, span)
    return _cast(b, q, target, span)


def _signed_width(v: int) -> int:
    return (v.bit_length() if v >= 0 else (-v - 1).bit_length()) + 1


def _round_right(b: Builder, x: Val, d: int, mode: str, m: IntType, span: Span) -> Val:
    """Return ``x / 2**d`` rounded by ``mode``, in ``m``: the kept bits ``x >> d``, plus one
    when the dropped bits, the kept LSB and the sign say so.

    The rounding adder is an incrementer as wide as the kept bits (not the source), and the
    decision selects between ``kept`` and ``kept + 1`` instead of feeding the carry-in, so the
    decision's logic runs beside the carry chain, not before it (one LUT level shorter on iCE40;
    benchmarks/fixed_fir.py measures it).
    """
    src = x.type
    assert isinstance(src, IntType)
    w, signed = src.width, src.signed
    xs = _cast(b, x, sint(w) if signed else uint(w), span)
    u1 = uint(1)

    def bit(k: int) -> Val | None:  # bit k of the value (the sign above the top bit)
        if k >= w - 1 and not signed:
            return b.add("slice", u1, [xs], {"lo": k}, span=span) if k == w - 1 else None
        return b.add("slice", u1, [xs], {"lo": min(k, w - 1)}, span=span)

    def nonzero(n: int) -> Val | None:  # any of the bits below n set
        if n == 0:
            return None
        low = xs if n >= w else b.add("slice", uint(n), [xs], {"lo": 0}, span=span)
        ne = b.add("ne", BOOL, [low, b.const(low.type, 0)], span=span)  # type: ignore[arg-type]
        return b.add("cast", u1, [ne], span=span)

    def both(p: Val | None, c: Val | None) -> Val | None:
        return None if p is None or c is None else b.add("and", u1, [p, c], span=span)

    def either(p: Val | None, c: Val | None) -> Val | None:
        if p is None or c is None:
            return c if p is None else p
        return b.add("or", u1, [p, c], span=span)

    neg = bit(w - 1) if signed else None
    pos = b.add("not", u1, [neg], span=span) if neg is not None else b.const(u1, 1)
    half, below = bit(d - 1), nonzero(d - 1)  # the dropped bits are >= 1/2, > 1/2 past it
    inc = {
        "trn": None,
        "trn_zero": both(neg, nonzero(d)),
        "rnd": half,
        "rnd_min_inf": both(half, below),
        "rnd_zero": both(half, either(below, neg)),
        "rnd_inf": both(half, either(below, pos)),
        "rnd_conv": both(half, either(below, bit(d))),  # a tie goes up when the kept LSB is 1
    }[mode]
    if d >= w:
        kept = _shift(b, "shr", xs, w - 1, span) if signed else b.const(xs.type, 0)  # type: ignore[arg-type]
    else:
        kept = _shift(b, "shr", xs, d, span)
    q = _cast(b, kept, m, span)
    if inc is None:
        return q
    up = b.add("add", m, [q, b.const(m, 1)], span=span)
    taken = b.add("ne", BOOL, [inc, b.const(u1, 0)], span=span)
    return b.add("select", m, [taken, up, q], span=span)


def _saturate(b: Builder, q: Val, q_range: tuple[int, int], dst: FixedType, span: Span) -> Val:
    """Apply ``dst``'s overflow mode to ``q`` (raw, in a type holding every value of it)."""
    if dst.overflow == "wrap":
        return q
    ty = q.type
    assert isinstance(ty, IntType)
    lo, hi = _bounds(dst)
    over = b.add("gt", BOOL, [q, b.const(ty, hi)], span=span) if q_range[1] > hi else None
    under = b.add("lt", BOOL, [q, b.const(ty, lo)], span=span) if q_range[0] < lo else None
    if dst.overflow == "sat_zero":
        conds = [c for c in (over, under) if c is not None]
        if not conds:
            return q
        out = conds[0] if len(conds) == 1 else b.add("or", BOOL, conds, span=span)
        return b.add("select", ty, [out, b.const(ty, 0), q], span=span)
    if over is not None:
        q = b.add("select", ty, [over, b.const(ty, hi), q], span=span)
    if under is not None:
        q = b.add("select", ty, [under, b.const(ty, lo), q], span=span)
    return q


# --- `as`, built-ins -------------------------------------------------------------------------


def cast_expr(b: Builder, operand: SyntaxNode, target: Type | None, span: Span) -> Value:
    """Build ``operand as target`` when fixed point is involved on either side (or None)."""
    value = literal_value(operand)
    if isinstance(target, FixedType) and value is not None:  # exact, converted at compile time
        return b.const(target, quantize(value, target), span)
    if isinstance(target, IntType) and value is not None and value.denominator != 1:
        return b.const(target, target.wrap(math.floor(value)), span)  # `-7.5 as i8` is -8
    x = b.typed(operand, None if isinstance(target, FixedType) else target)
    if x.poisoned:
        return POISON
    if not isinstance(x.type, IntType) or not isinstance(target, IntType):
        b.error(f"cannot cast `{x.type}` to `{target}`", span,
                Note("`as` converts between integer and fixed-point types"))
        return POISON
    return convert(b, x, target, span)


def call(b: Builder, name: str, callee: SyntaxNode, args: list[SyntaxNode], span: Span) -> Value:
    """Build ``abs(x)``, ``bits(x)`` or ``from_bits::<T>(u)``."""
    generic = callee.kind == K.GENERIC_NAME
    if (name == "from_bits") != generic:
        b.error("`from_bits` needs its type: `from_bits::<fx<W, I>>(u)`" if not generic
                else f"`{name}` takes no `::<...>` parameters", callee.span)
        return POISON
    if len(args) != 1:
        b.error(f"`{name}` takes 1 argument, but {len(args)} were given", span)
        return POISON
    if name == "from_bits":
        return _from_bits(b, callee, args[0], span)
    x = b.typed(args[0], None)
    if x.poisoned:
        return POISON
    if not isinstance(x.type, FixedType):
        b.error(f"`{name}` takes a fixed-point value, not `{x.type}`", args[0].span)
        return POISON
    if name == "bits":
        return _cast(b, x, uint(x.type.width), span)
    result = typeck.fixed_abs_result(x.type)
    if not x.type.signed:
        return _cast(b, x, result, span)
    negative = b.add("lt", BOOL, [x, b.const(x.type, 0)], span=span)
    flipped = b.add("neg", x.type, [x], span=span)  # wraps only at the bound, whose bits are right
    chosen = b.add("select", x.type, [negative, flipped, x], span=span)
    return _cast(b, chosen, result, span)


def _from_bits(b: Builder, callee: SyntaxNode, arg: SyntaxNode, span: Span) -> Value:
    params = t.types(callee) or [n for n in t.exprs(callee) if n.kind == K.NAME_REF]
    if len(params) != 1:
        b.error("`from_bits` takes one type: `from_bits::<fx<W, I>>(u)`", callee.span)
        return POISON
    node = params[0]
    ty = b.resolve_type(node) if node.kind != K.NAME_REF else b._named_type(node)
    if ty is None:
        return POISON
    if not isinstance(ty, FixedType):
        b.error(f"`from_bits` makes a fixed-point value, not `{ty}`", node.span)
        return POISON
    u = b.typed(arg, uint(ty.width))
    if u.poisoned:
        return POISON
    if not isinstance(u.type, IntType) or isinstance(u.type, FixedType) \
            or u.type.width != ty.width:
        b.error(f"`from_bits::<{ty}>` takes `u{ty.width}` or `i{ty.width}` bits, not `{u.type}`",
                arg.span, Note(f"`{ty}` is {ty.width} bits wide"))
        return POISON
    return _cast(b, u, ty, span)


def refuse_compound(b: Builder, op: str, ty: FixedType, span: Span) -> Val:
    """Report ``a op= b`` on a fixed-point place: the exact result has another type."""
    b.error(f"compound assignment `{op}=` is not defined on fixed-point values: `a {op} b` has "
            "a wider type", span, Note(f"write `a = (a {op} b) as {ty};`"))
    return POISON
