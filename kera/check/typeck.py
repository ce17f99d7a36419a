"""Typing of the core language (LANGUAGE.md) in source terms, over the op registry's rules.

Each rule (which types an operation accepts, what it gives) is stated once, on the opcode's
``OpDef`` in ``kera.ir.ops``; these functions map a source construct to its opcode, call the
opcode's ``infer``/``check`` and phrase a broken rule as a one-line diagnostic in the words of
the source (``TypeRuleError``). Only rules that belong to the source language live here:
``&&``/``||`` take ``bool``, the shapes of tuple fields and ``slice`` parameters.
"""

from __future__ import annotations

from collections.abc import Sequence

from kera.ir import ops
from kera.ir.ops import OpTypeError
from kera.ir.types import BOOL, FIXED_INT_BITS, MAX_WIDTH, FixedType, TupleType, Type, uint

ARITH_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem"}
BITWISE_OPS = {"&": "and", "|": "or", "^": "xor"}
SHIFT_OPS = {"<<": "shl", ">>": "shr"}
COMPARE_OPS = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
LOGIC_OPS = {"&&": "and", "||": "or"}
OPCODES = {**ARITH_OPS, **BITWISE_OPS, **SHIFT_OPS, **COMPARE_OPS, **LOGIC_OPS}
BUILTINS = ops.builtins()  # source name -> OpDef
ROLES = {"rotl": ("operand", "amount"), "rotr": ("operand", "amount")}  # operand names in messages


class TypeRuleError(Exception):
    """A typing rule was broken; the message is the diagnostic's one line."""


def binary_result(op: str, lhs: Type, rhs: Type) -> Type:
    """Return the type of ``lhs op rhs`` for arithmetic, bitwise, shift, comparison, logic ops."""
    if op in LOGIC_OPS:
        for side in (lhs, rhs):
            if side != BOOL:
                raise TypeRuleError(f"`{op}` takes `bool` operands, not `{side}`")
        return BOOL
    if op not in OPCODES:
        raise TypeRuleError(f"unknown operator `{op}`")
    try:
        return _infer(OPCODES[op], (lhs, rhs))
    except OpTypeError as e:
        raise TypeRuleError(_binary_message(op, e, lhs, rhs)) from None


def _binary_message(op: str, e: OpTypeError, lhs: Type, rhs: Type) -> str:
    if op in SHIFT_OPS:
        if e.operand == 0:
            return f"`{op}` needs an integer on the left, not `{lhs}`"
        return f"shift amount must be {e.need}, not `{rhs}`"
    if e.problem == "mismatch":
        return f"mismatched types: `{lhs}` {op} `{rhs}` (no implicit conversions)"
    if op in ARITH_OPS:
        return f"cannot apply `{op}` to `{lhs}`: arithmetic needs integers"
    if op in BITWISE_OPS:
        return f"cannot apply `{op}` to `{lhs}`"
    if op in ("==", "!="):
        return f"cannot compare `{lhs}` values with `{op}`: compare arrays and tuples by element"
    return f"cannot order `{lhs}` values with `{op}`"


def unary_result(op: str, operand: Type) -> Type:
    """Return the type of ``-x`` or ``!x``."""
    try:
        return _infer("neg" if op == "-" else "not", (operand,))
    except OpTypeError:
        if op == "-":
            raise TypeRuleError(
                f"cannot negate `{operand}`: `-` is allowed on signed types only") from None
        raise TypeRuleError(f"cannot apply `!` to `{operand}`") from None


def cast_result(source: Type, target: Type) -> Type:
    """Check ``source as target`` (the `cast` rule: integer or bool to integer)."""
    try:
        _check("cast", (source,), {}, target)
    except OpTypeError as e:
        if e.problem == "result":
            raise TypeRuleError(
                f"cannot cast to `{target}`: `as` converts to integer types only") from None
        raise TypeRuleError(f"cannot cast `{source}` to `{target}`") from None
    return target


def index_result(base: Type, index: Type) -> Type:
    """Return the element type of ``base[index]``."""
    try:
        return _infer("array_index", (base, index))
    except OpTypeError as e:
        if e.operand == 0:
            raise TypeRuleError(f"cannot index into a value of type `{base}`") from None
        raise TypeRuleError(f"array index must be {e.need}, not `{index}`") from None


def field_result(base: Type, field: int) -> Type:
    """Return the type of ``base.field``."""
    try:
        return _infer("tuple_get", (base,), {"index": field})
    except OpTypeError as e:
        if e.problem == "operand":
            raise TypeRuleError(f"no field `{field}` on a value of type `{base}`") from None
        fields = len(base.elems) if isinstance(base, TupleType) else 0
        raise TypeRuleError(f"no field `{field}` on `{base}`: it has {fields} fields") from None


def builtin_result(name: str, args: Sequence[Type]) -> Type:
    """Return the type of the call ``name(args...)`` of a built-in other than ``slice``."""
    try:
        return _infer(BUILTINS[name].name, args)
    except OpTypeError as e:
        raise TypeRuleError(_builtin_message(name, e, args)) from None


def _builtin_message(name: str, e: OpTypeError, args: Sequence[Type]) -> str:
    if e.problem == "mismatch":
        return f"mismatched types: {name}({', '.join(f'`{a}`' for a in args)})"
    if e.problem == "width" and name == "concat":
        return f"`concat` result would be {e.value} bits; at most {e.limit}"
    if e.problem == "width":
        return f"`{name}` operands are at most {e.limit} bits, not `{args[0]}`"
    i = e.operand or 0
    role = ROLES.get(name, ("operand",) * len(args))[i]
    return f"`{name}` {role} must be {e.need}, not `{args[i]}`"


def slice_result(source: Type, lo: int, width: int) -> Type:
    """Return the type of ``slice::<lo, width>(x)`` for ``x: source``."""
    if not 1 <= width <= 64 or lo < 0:
        raise TypeRuleError(f"`slice::<{lo}, {width}>` needs 0 <= LO and 1 <= W <= 64")
    out = uint(width)
    try:
        _check("slice", (source,), {"lo": lo}, out)
    except OpTypeError as e:
        if e.problem == "range":
            raise TypeRuleError(f"`slice::<{lo}, {width}>` reads bits {lo}..{lo + width} of a "
                                f"{e.limit}-bit value") from None
        raise TypeRuleError(f"`slice` operand must be {e.need}, not `{source}`") from None
    return out


def _infer(opcode: str, ins: Sequence[Type], attrs: ops.Attrs | None = None) -> Type:
    infer = ops.get(opcode).infer
    assert infer is not None, opcode
    return infer(ins, attrs or {})


def _check(opcode: str, ins: Sequence[Type], attrs: ops.Attrs, out: Type) -> None:
    check = ops.get(opcode).check
    assert check is not None, opcode
    check(ins, attrs, out)


# --- fixed point (FIXED.md: the exact result types of `ap_fixed`) ----------------------------

FIXED_FORBIDDEN = {
    "/": "divide `bits(x)` as an integer, or multiply by a reciprocal",
    "%": "take `bits(x)` as an integer",
    "<<": "multiply by a power of two, or convert with `as`",
    ">>": "multiply by a power of two, or convert with `as`",
    "&": "use `bits(x)`", "|": "use `bits(x)`", "^": "use `bits(x)`",
}


def fixed_layout(width: int, int_bits: int, signed: bool, what: str) -> FixedType:
    """Return ``fx<width, int_bits>`` (default modes), refusing more than 64 bits and an
    integer-bit count outside -128..=127."""
    if width > MAX_WIDTH:
        raise TypeRuleError(f"{what} would be {width} bits wide; the limit is {MAX_WIDTH}")
    if int_bits not in FIXED_INT_BITS:
        raise TypeRuleError(f"{what} would have {int_bits} integer bits; the limit is "
                            f"{FIXED_INT_BITS[0]}..={FIXED_INT_BITS[-1]}")
    return FixedType(width, signed, int_bits)


def _as_signed(t: FixedType) -> tuple[int, int]:
    """``(W, I)`` of ``t`` as a signed format holding all its values (``ufx`` gains a bit)."""
    return (t.width, t.int_bits) if t.signed else (t.width + 1, t.int_bits + 1)


def fixed_binary_result(op: str, a: FixedType, b: FixedType) -> Type:
    """Return the exact type of ``a op b`` for two fixed-point operands."""
    if op in FIXED_FORBIDDEN:
        raise TypeRuleError(f"`{op}` is not defined on fixed-point values; "
                            f"{FIXED_FORBIDDEN[op]}")
    if op in LOGIC_OPS:
        return binary_result(op, a, b)
    if op == "*":
        return fixed_layout(a.width + b.width, a.int_bits + b.int_bits, a.signed or b.signed,
                            f"`{a}` * `{b}`")
    exact = fixed_sum_type(op, a, b)
    return BOOL if op in COMPARE_OPS else exact


def fixed_sum_type(op: str, a: FixedType, b: FixedType) -> FixedType:
    """Return the exact type of ``a + b`` or ``a - b`` (a comparison works in the latter)."""
    frac = max(a.frac, b.frac)
    if op == "+" and a.signed == b.signed:
        ints, signed = max(a.int_bits, b.int_bits) + 1, a.signed
    elif a.signed == b.signed:  # `ufx - ufx` and `fx - fx`
        ints, signed = max(a.int_bits, b.int_bits) + 1, True
    else:
        ints, signed = max(_as_signed(a)[1], _as_signed(b)[1]) + 1, True
    what = f"`{a}` {op} `{b}`" if op in ("+", "-") else f"comparing `{a}` with `{b}`"
    return fixed_layout(ints + frac, ints, signed, what)


def fixed_neg_result(a: FixedType) -> FixedType:
    """Return the type of ``-a``: ``fx<W + 1, I + 1>`` (also for ``ufx``)."""
    return fixed_layout(a.width + 1, a.int_bits + 1, True, f"`-` of `{a}`")


def fixed_abs_result(a: FixedType) -> FixedType:
    """Return the type of ``abs(a)``: ``ufx<W, I>``."""
    return FixedType(a.width, False, a.int_bits)
