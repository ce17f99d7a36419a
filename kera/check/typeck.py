"""Typing rules of the core language (LANGUAGE.md), as pure functions over types.

The graph builder walks the tree and asks these functions what each construct's type is; each
returns the result type or raises ``TypeRuleError`` with a one-line message. Keeping the rules
here (and nothing else) means the builder stays a walker and the rules stay in one readable place.
"""

from __future__ import annotations

from kera.ir.types import BOOL, ArrayType, BoolType, IntType, TupleType, Type

ARITH_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem"}
BITWISE_OPS = {"&": "and", "|": "or", "^": "xor"}
SHIFT_OPS = {"<<": "shl", ">>": "shr"}
COMPARE_OPS = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
LOGIC_OPS = {"&&": "and", "||": "or"}


class TypeRuleError(Exception):
    """A typing rule was broken; the message is the diagnostic's one line."""


def binary_result(op: str, lhs: Type, rhs: Type) -> Type:
    """Return the type of ``lhs op rhs`` for arithmetic, bitwise, comparison and logic ops."""
    if op in SHIFT_OPS:
        if not isinstance(lhs, IntType):
            raise TypeRuleError(f"`{op}` needs an integer on the left, not `{lhs}`")
        if not (isinstance(rhs, IntType) and not rhs.signed):
            raise TypeRuleError(f"shift amount must be an unsigned integer, not `{rhs}`")
        return lhs
    if op in LOGIC_OPS:
        for side in (lhs, rhs):
            if side != BOOL:
                raise TypeRuleError(f"`{op}` takes `bool` operands, not `{side}`")
        return BOOL
    if lhs != rhs:
        raise TypeRuleError(f"mismatched types: `{lhs}` {op} `{rhs}` (no implicit conversions)")
    if op in ARITH_OPS:
        if not isinstance(lhs, IntType):
            raise TypeRuleError(f"cannot apply `{op}` to `{lhs}`: arithmetic needs integers")
        return lhs
    if op in BITWISE_OPS:
        if not isinstance(lhs, IntType | BoolType):
            raise TypeRuleError(f"cannot apply `{op}` to `{lhs}`")
        return lhs
    if op in ("==", "!="):
        if not isinstance(lhs, IntType | BoolType):
            raise TypeRuleError(
                f"cannot compare `{lhs}` values with `{op}`: compare arrays and tuples by element"
            )
        return BOOL
    if op in COMPARE_OPS:
        if not isinstance(lhs, IntType):
            raise TypeRuleError(f"cannot order `{lhs}` values with `{op}`")
        return BOOL
    raise TypeRuleError(f"unknown operator `{op}`")


def unary_result(op: str, operand: Type) -> Type:
    """Return the type of ``-x`` or ``!x``."""
    if op == "-":
        if not (isinstance(operand, IntType) and operand.signed):
            raise TypeRuleError(f"cannot negate `{operand}`: `-` is allowed on signed types only")
        return operand
    if not isinstance(operand, IntType | BoolType):
        raise TypeRuleError(f"cannot apply `!` to `{operand}`")
    return operand


def cast_result(source: Type, target: Type) -> Type:
    """Check ``source as target``: integer or bool to integer."""
    if not isinstance(target, IntType):
        raise TypeRuleError(f"cannot cast to `{target}`: `as` converts to integer types only")
    if not isinstance(source, IntType | BoolType):
        raise TypeRuleError(f"cannot cast `{source}` to `{target}`")
    return target


def index_result(base: Type, index: Type) -> Type:
    """Return the element type of ``base[index]``."""
    if not isinstance(base, ArrayType):
        raise TypeRuleError(f"cannot index into a value of type `{base}`")
    if not (isinstance(index, IntType) and not index.signed):
        raise TypeRuleError(f"array index must be an unsigned integer, not `{index}`")
    return base.elem


def field_result(base: Type, field: int) -> Type:
    """Return the type of ``base.field``."""
    if not isinstance(base, TupleType):
        raise TypeRuleError(f"no field `{field}` on a value of type `{base}`")
    if field >= len(base.elems):
        raise TypeRuleError(f"no field `{field}` on `{base}`: it has {len(base.elems)} fields")
    return base.elems[field]


def require_unsigned(t: Type, what: str) -> None:
    """Raise unless ``t`` is an unsigned integer type."""
    if not (isinstance(t, IntType) and not t.signed):
        raise TypeRuleError(f"{what} must be an unsigned integer, not `{t}`")


def require_int(t: Type, what: str) -> IntType:
    """Raise unless ``t`` is an integer type; return it."""
    if not isinstance(t, IntType):
        raise TypeRuleError(f"{what} must be an integer, not `{t}`")
    return t


def concat_result(hi: Type, lo: Type) -> Type:
    """Return the type of ``concat(hi, lo)``: unsigned of the summed width, at most 64."""
    a = require_int(hi, "`concat` operand")
    b = require_int(lo, "`concat` operand")
    if a.width + b.width > 64:
        raise TypeRuleError(f"`concat` result would be {a.width + b.width} bits; at most 64")
    return IntType(a.width + b.width, False)


def widening_mul_result(a: Type, b: Type) -> Type:
    """Return the type of ``widening_mul(a, b)``."""
    if a != b:
        raise TypeRuleError(f"mismatched types: widening_mul(`{a}`, `{b}`)")
    t = require_int(a, "`widening_mul` operand")
    if t.width > 32:
        raise TypeRuleError(f"`widening_mul` operands are at most 32 bits, not `{t}`")
    return IntType(2 * t.width, t.signed)
