"""The op registry: every opcode declared once, with its schema, type rule and semantics.

Each ``OpDef`` gives the opcode's name, its arity (``None`` = variadic), its attribute names, its
type rule (``infer``/``check``, and ``type_rule``: ``(in_types, attrs, out_type) -> error message
| None``), the built-in function's source name where it is one, and ``evaluate``: the
reference semantics of SEMANTICS.md on batched values (``kera.ir.values``). The interpreter is
nothing but a walk that calls ``evaluate``; every backend keeps one table keyed by these names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kera.ir.types import ArrayType, BoolType, IntType, TupleType, Type, int_type, uint
from kera.ir.values import U64, Value, bits, full, renorm, select

Attrs = Mapping[str, Any]  # attribute values are int or str
TypeRule = Callable[[Sequence[Type], Attrs, Type], "str | None"]
Infer = Callable[[Sequence[Type], Attrs], Type]
Check = Callable[[Sequence[Type], Attrs, Type], None]
Evaluate = Callable[[list[Value], Attrs, Sequence[Type], Type], Value]


@dataclass(frozen=True, slots=True)
class OpDef:
    """One opcode: schema, type rule, reference semantics, algebraic flags, source name.

    The type rule is stated once, as ``check(in_types, attrs, out)`` raising ``OpTypeError``;
    where the operands determine the result, ``infer(in_types, attrs)`` returns it and ``check``
    compares with it. ``type_rule`` is ``check`` answering with a message or None. The checker,
    the elaborator and the validator all call these. ``source_name`` is the built-in function's
    name in Kera source (``None``: the opcode is no built-in); it takes ``arity`` arguments, and
    ``arg_roles`` says how each is typed: ``"result"`` (it has the result's type, so a literal
    there takes the call's context), ``"same"`` (the arguments so marked share one type, not the
    result's), ``"amount"`` (any unsigned type) or ``"own"`` (a type of its own).
    """

    name: str
    arity: int | None
    attrs: tuple[str, ...]
    type_rule: TypeRule
    evaluate: Evaluate
    doc: str
    commutative: bool = False
    associative: bool = False
    infer: Infer | None = None
    check: Check | None = None
    source_name: str | None = None
    arg_roles: tuple[str, ...] = ()


OPS: dict[str, OpDef] = {}


def get(name: str) -> OpDef:
    """Return the ``OpDef`` of an opcode; raise ``KeyError`` naming it when unknown."""
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown opcode `{name}`") from None


def builtins() -> dict[str, OpDef]:
    """Return the built-in functions of Kera source, by source name."""
    return {d.source_name: d for d in OPS.values() if d.source_name is not None}


@dataclass(frozen=True, slots=True)
class _Produced:
    """The type rule of an opcode whose producer chooses the result type (constants, casts,
    slices): a check of the chosen type, nothing to infer."""

    check: Check


def _op(
    name: str,
    arity: int | None,
    typing: Infer | _Produced,
    doc: str,
    attrs: tuple[str, ...] = (),
    *,
    builtin: tuple[str, ...] = (),
    commutative: bool = False,
    associative: bool = False,
) -> Callable[[Evaluate], Evaluate]:
    """Register an opcode; ``typing`` infers its result, or (``_Produced``) checks the result
    type the producer of the node chose. ``builtin``, the roles of its arguments, makes it a
    built-in function of the source under its name."""
    infer = None if isinstance(typing, _Produced) else typing
    check = typing.check if isinstance(typing, _Produced) else _comparing(typing)

    def register(fn: Evaluate) -> Evaluate:
        OPS[name] = OpDef(name, arity, tuple(sorted(attrs)), _reported(check), fn, doc,
                          commutative, associative, infer, check,
                          name if builtin else None, builtin)
        return fn

    return register


# ----------------------------------------------------------------------------- type rules


class OpTypeError(Exception):
    """Operand types (or attributes) break an opcode's type rule.

    ``str(e)`` is the graph-level message; the other fields let a front end phrase the same rule
    in source terms: ``problem`` is ``"mismatch"`` (operands must have one type), ``"operand"``
    (operand number ``operand`` is not ``need``), ``"width"`` (``value`` bits exceed ``limit``),
    ``"attr"`` (an attribute is malformed), ``"range"`` (an attribute is out of range for the
    operand) or ``"count"`` (the wrong number of operands).
    """

    def __init__(self, message: str, problem: str, operand: int | None = None,
                 need: str = "", value: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.problem = problem
        self.operand = operand
        self.need = need
        self.value = value
        self.limit = limit


INT, UNSIGNED, SIGNED, INT_OR_BOOL = (
    "an integer", "an unsigned integer", "a signed integer", "an integer or bool")


def _is(t: Type, need: str) -> bool:
    """Return True when ``t`` is of the kind ``need`` names."""
    if need == INT_OR_BOOL:
        return isinstance(t, IntType | BoolType)
    if not isinstance(t, IntType):
        return False
    return need == INT or t.signed == (need == SIGNED)


def _require(t: Type, need: str, operand: int, what: str = "operand") -> None:
    if not _is(t, need):
        raise OpTypeError(f"{what} must be {need}, not {t}", "operand", operand, need)


def _result(out: Type, want: Type) -> str | None:
    return None if out == want else f"result type must be {want}, not {out}"


def _int_attr(attrs: Attrs, key: str, lo: int = 0) -> str | None:
    v = attrs[key]
    if type(v) is not int or v < lo:
        return f"attribute `{key}` must be an integer >= {lo}, not {v!r}"
    return None


def _comparing(infer: Infer) -> Check:
    """Return the check that compares a node's type with what ``infer`` gives."""

    def check(ins: Sequence[Type], attrs: Attrs, out: Type) -> None:
        if msg := _result(out, infer(ins, attrs)):
            raise OpTypeError(msg, "result")

    return check


def _reported(check: Check) -> TypeRule:
    """Return ``check`` as a type rule: a message when broken, else None."""

    def rule(ins: Sequence[Type], attrs: Attrs, out: Type) -> str | None:
        try:
            check(ins, attrs, out)
        except OpTypeError as e:
            return str(e)
        return None

    return rule


def _same(ins: Sequence[Type], need: str) -> Type:
    a, b = ins
    if a != b or not _is(a, need):
        message = f"operands must have one {need.removeprefix('an ')} type, not {a} and {b}"
        if a != b:
            raise OpTypeError(message, "mismatch")
        raise OpTypeError(message, "operand", 0, need)
    return a


def _infer_same_int(ins: Sequence[Type], attrs: Attrs) -> Type:
    return _same(ins, INT)


def _infer_same_int_or_bool(ins: Sequence[Type], attrs: Attrs) -> Type:
    return _same(ins, INT_OR_BOOL)


def _unary(need: str) -> Infer:
    def infer(ins: Sequence[Type], attrs: Attrs) -> Type:
        _require(ins[0], need, 0)
        return ins[0]

    return infer


def _infer_shift(ins: Sequence[Type], attrs: Attrs) -> Type:
    a, n = ins
    _require(a, INT, 0, "shifted operand")
    _require(n, UNSIGNED, 1, "shift amount")
    return a


def _infer_eq(ins: Sequence[Type], attrs: Attrs) -> Type:
    _same(ins, INT_OR_BOOL)
    return BoolType()


def _infer_order(ins: Sequence[Type], attrs: Attrs) -> Type:
    _same(ins, INT)
    return BoolType()


def _check_param(ins: Sequence[Type], attrs: Attrs, out: Type) -> None:
    name = attrs["name"]
    if not isinstance(name, str) or not name:
        raise OpTypeError(f"attribute `name` must be a non-empty string, not {name!r}", "attr")
    if msg := _int_attr(attrs, "index"):
        raise OpTypeError(msg, "attr")


def _check_state(ins: Sequence[Type], attrs: Attrs, out: Type) -> None:
    if msg := _int_attr(attrs, "index"):
        raise OpTypeError(msg, "attr")
    kind = attrs["kind"]
    if kind not in ("reg", "mem"):
        raise OpTypeError(f"attribute `kind` must be `reg` or `mem`, not {kind!r}", "attr")
    if kind == "mem" and not isinstance(out, ArrayType):
        raise OpTypeError(f"a `mem` state must be an array, not {out}", "attr")


def _check_const(ins: Sequence[Type], attrs: Attrs, out: Type) -> None:
    v = attrs["value"]
    if isinstance(out, BoolType):
        if not (type(v) is int and v in (0, 1)):
            raise OpTypeError(f"bool constant must be 0 or 1, not {v!r}", "attr")
    elif not isinstance(out, IntType):
        raise OpTypeError(f"constants must be integers or bools, not {out}", "attr")
    elif type(v) is not int or not out.min <= v <= out.max:
        raise OpTypeError(f"constant {v!r} is out of range for {out}", "attr")


def _infer_select(ins: Sequence[Type], attrs: Attrs) -> Type:
    c, a, b = ins
    if not isinstance(c, BoolType):
        raise OpTypeError(f"condition must be bool, not {c}", "operand", 0, "bool")
    if a != b:
        raise OpTypeError(f"both arms must have one type, not {a} and {b}", "mismatch")
    return a


def _check_cast(ins: Sequence[Type], attrs: Attrs, out: Type) -> None:
    if not isinstance(out, IntType):
        raise OpTypeError(f"result type must be an integer, not {out}", "result", need=INT)
    _require(ins[0], INT_OR_BOOL, 0)


def _infer_concat(ins: Sequence[Type], attrs: Attrs) -> Type:
    hi, lo = ins
    if not isinstance(hi, IntType) or not isinstance(lo, IntType):
        bad = 0 if not isinstance(hi, IntType) else 1
        raise OpTypeError(f"operands must be integers, not {hi} and {lo}", "operand", bad, INT)
    width = hi.width + lo.width
    if width > 64:
        raise OpTypeError(f"result would be {width} bits wide; the limit is 64", "width",
                          value=width, limit=64)
    return uint(width)


def _check_slice(ins: Sequence[Type], attrs: Attrs, out: Type) -> None:
    x = ins[0]
    if msg := _int_attr(attrs, "lo"):
        raise OpTypeError(msg, "attr")
    _require(x, INT, 0)
    assert isinstance(x, IntType)  # _require checked it
    if not isinstance(out, IntType) or out.signed:
        raise OpTypeError(f"result type must be unsigned, not {out}", "result", need=UNSIGNED)
    lo = attrs["lo"]
    if lo + out.width > x.width:
        raise OpTypeError(f"bits {lo}..{lo + out.width} are outside {x}", "range",
                          value=lo + out.width, limit=x.width)


def _infer_widening_mul(ins: Sequence[Type], attrs: Attrs) -> Type:
    a, b = ins
    message = f"operands must have one integer type of at most 32 bits, not {a} and {b}"
    if a != b:
        raise OpTypeError(message, "mismatch")
    if not isinstance(a, IntType):
        raise OpTypeError(message, "operand", 0, INT)
    if a.width > 32:
        raise OpTypeError(message, "width", value=a.width, limit=32)
    return int_type(2 * a.width, a.signed)


def _infer_array(ins: Sequence[Type], attrs: Attrs) -> Type:
    if not ins:
        raise OpTypeError("an array needs at least one element", "count")
    if any(t != ins[0] for t in ins):
        raise OpTypeError("elements must have one type, not "
                          + ", ".join(sorted({str(t) for t in ins})), "mismatch")
    return ArrayType(ins[0], len(ins))


def _indexed(arr: Type, idx: Type) -> ArrayType:
    if not isinstance(arr, ArrayType):
        raise OpTypeError(f"indexed operand must be an array, not {arr}", "operand", 0,
                          "an array")
    _require(idx, UNSIGNED, 1, "index")
    return arr


def _infer_array_index(ins: Sequence[Type], attrs: Attrs) -> Type:
    return _indexed(*ins).elem


def _infer_array_update(ins: Sequence[Type], attrs: Attrs) -> Type:
    arr, idx, val = ins
    arr = _indexed(arr, idx)
    if val != arr.elem:
        raise OpTypeError(f"stored value must be {arr.elem}, not {val}", "operand", 2,
                          f"`{arr.elem}`")
    return arr


def _infer_tuple(ins: Sequence[Type], attrs: Attrs) -> Type:
    return TupleType(tuple(ins))


def _infer_tuple_get(ins: Sequence[Type], attrs: Attrs) -> Type:
    t = ins[0]
    if not isinstance(t, TupleType):
        raise OpTypeError(f"operand must be a tuple, not {t}", "operand", 0, "a tuple")
    if msg := _int_attr(attrs, "index"):
        raise OpTypeError(msg, "attr")
    i = attrs["index"]
    if i >= len(t.elems):
        raise OpTypeError(f"field {i} is out of range for {t}", "range", value=i,
                          limit=len(t.elems))
    return t.elems[i]


# ----------------------------------------------------------------------------- leaves


@_op("param", 0, _Produced(_check_param), "Function parameter number `index`, named `name`; "
     "the interpreter passes the bound input batch as the single argument.", ("index", "name"))
def _param(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return args[0]


@_op("state", 0, _Produced(_check_state),
     "State element number `index` of its region (STATE.md), of kind `reg` or `mem`: the value "
     "it holds as a transfer starts; the interpreter passes it as the single argument.",
     ("index", "kind"))
def _state(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return args[0]


@_op("const", 0, _Produced(_check_const),
     "Integer or bool constant `value` (canonical, in range; bool 0/1).", ("value",))
def _const(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return full(out, attrs["value"])


# ----------------------------------------------------------------------------- arithmetic


@_op("add", 2, _infer_same_int, "Wrapping addition modulo 2**N.",
     commutative=True, associative=True)
def _add(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(bits(args[0]) + bits(args[1]), out)


@_op("sub", 2, _infer_same_int, "Wrapping subtraction modulo 2**N.")
def _sub(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(bits(args[0]) - bits(args[1]), out)


@_op("mul", 2, _infer_same_int, "Wrapping multiplication modulo 2**N.",
     commutative=True, associative=True)
def _mul(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(bits(args[0]) * bits(args[1]), out)


@_op("neg", 1, _unary(SIGNED), "Wrapping negation of a signed integer (-MIN = MIN).")
def _neg(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(U64(0) - bits(args[0]), out)


def _divmod(a: np.ndarray, b: np.ndarray, t: IntType) -> tuple[np.ndarray, np.ndarray]:
    """Return truncating (quotient, remainder) bit patterns, total by SEMANTICS.md."""
    ua, ub = bits(a), bits(b)
    zero = ub == 0
    if t.signed:
        na, nb = a < 0, b < 0
        ua = np.where(na, U64(0) - ua, ua)  # magnitudes; |MIN| = 2**(N-1) is exact in uint64
        ub = np.where(nb, U64(0) - ub, ub)
    safe = np.where(zero, U64(1), ub)
    q, r = ua // safe, ua % safe
    if t.signed:
        q = np.where(na ^ nb, U64(0) - q, q)
        r = np.where(na, U64(0) - r, r)
    return np.where(zero, U64(0), q), np.where(zero, bits(a), r)


@_op("div", 2, _infer_same_int,
     "Division truncating toward zero; a/0 = 0 and MIN/-1 = MIN.")
def _div(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(_divmod(args[0], args[1], out)[0], out)


@_op("rem", 2, _infer_same_int,
     "Remainder with the dividend's sign (truncating division); a%0 = a and MIN%-1 = 0.")
def _rem(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(_divmod(args[0], args[1], out)[1], out)


@_op("min", 2, _infer_same_int, "Smaller of two integers (signed compare for signed types).",
     commutative=True, associative=True, builtin=("result", "result"))
def _min(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return np.minimum(args[0], args[1])


@_op("max", 2, _infer_same_int, "Larger of two integers (signed compare for signed types).",
     commutative=True, associative=True, builtin=("result", "result"))
def _max(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return np.maximum(args[0], args[1])


@_op("widening_mul", 2, _infer_widening_mul,
     "Exact product of two N-bit integers (N <= 32) as a 2N-bit integer of the same signedness.",
     builtin=("same", "same"))
def _widening_mul(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(bits(args[0] * args[1]), out)


# ----------------------------------------------------------------------------- bitwise


@_op("not", 1, _unary(INT_OR_BOOL), "Bitwise complement of an integer; logical not of a bool.")
def _not(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    if isinstance(out, BoolType):
        return np.logical_not(args[0])
    return renorm(~bits(args[0]), out)


@_op("and", 2, _infer_same_int_or_bool, "Bitwise and of integers; logical and of bools.",
     commutative=True, associative=True)
def _and(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return args[0] & args[1]


@_op("or", 2, _infer_same_int_or_bool, "Bitwise or of integers; logical or of bools.",
     commutative=True, associative=True)
def _or(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return args[0] | args[1]


@_op("xor", 2, _infer_same_int_or_bool, "Bitwise xor of integers; logical xor of bools.",
     commutative=True, associative=True)
def _xor(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return args[0] ^ args[1]


def _clamped(n: np.ndarray) -> np.ndarray:
    """Return a shift amount numpy can use safely (never >= 64)."""
    return np.minimum(n, U64(63))


@_op("shl", 2, _infer_shift, "Shift left; an amount >= N gives 0 (never taken modulo N).")
def _shl(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    a, n = args
    r = np.where(n >= U64(out.width), U64(0), bits(a) << _clamped(n))
    return renorm(r, out)


@_op("shr", 2, _infer_shift, "Shift right, arithmetic for signed and logical for unsigned; an "
     "amount >= N gives all sign bits (signed) or 0 (unsigned).")
def _shr(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    a, n = args
    if out.signed:
        # a is sign-extended to 64 bits, so shifting by min(n, 63) gives the sign for n >= N.
        return a >> _clamped(n).astype(np.int64)
    return np.where(n >= U64(out.width), U64(0), a >> _clamped(n))


def _rotl_bits(x: np.ndarray, r: np.ndarray, t: IntType) -> np.ndarray:
    """Rotate the N-bit pattern ``x`` left by ``r`` (already reduced modulo N)."""
    x = bits(x)
    if t.width < 64:
        x = x & U64(t.mask)
    back = np.where(r == 0, U64(0), U64(t.width) - r)  # r == 0: both halves are x itself
    return renorm((x << r) | (x >> back), t)


@_op("rotl", 2, _infer_shift, "Rotate left by the amount modulo N.", builtin=("result", "amount"))
def _rotl(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return _rotl_bits(args[0], args[1] % U64(out.width), out)


@_op("rotr", 2, _infer_shift, "Rotate right by the amount modulo N.", builtin=("result", "amount"))
def _rotr(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    w = U64(out.width)
    return _rotl_bits(args[0], (w - args[1] % w) % w, out)


def _field(x: np.ndarray, t: IntType) -> np.ndarray:
    u = bits(x)
    return u & U64(t.mask) if t.width < 64 else u


def _bit_length(u: np.ndarray) -> np.ndarray:
    """Return the number of significant bits of each uint64 (0 for 0)."""
    n = np.zeros(u.shape, dtype=U64)
    for s in (32, 16, 8, 4, 2, 1):
        big = (u >> U64(s)) != 0
        n = n + np.where(big, U64(s), U64(0))
        u = np.where(big, u >> U64(s), u)
    return n + (u != 0)


def _count_ones(u: np.ndarray) -> np.ndarray:
    """Return the number of one bits of each uint64 (SWAR where numpy < 2 lacks bitwise_count)."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(u).astype(U64)
    u = u - ((u >> U64(1)) & U64(0x5555_5555_5555_5555))
    u = (u & U64(0x3333_3333_3333_3333)) + ((u >> U64(2)) & U64(0x3333_3333_3333_3333))
    u = (u + (u >> U64(4))) & U64(0x0F0F_0F0F_0F0F_0F0F)
    return (u * U64(0x0101_0101_0101_0101)) >> U64(56)


@_op("popcount", 1, _unary(INT), "Number of one bits among the N bits (result wraps to N).",
     builtin=("result",))
def _popcount(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(_count_ones(_field(args[0], out)), out)


@_op("clz", 1, _unary(INT), "Leading zero bits among the N bits; clz(0) = N.", builtin=("result",))
def _clz(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    w = U64(out.width)
    return renorm(w - _bit_length(_field(args[0], out)), out)


@_op("ctz", 1, _unary(INT), "Trailing zero bits among the N bits; ctz(0) = N.", builtin=("result",))
def _ctz(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    u = _field(args[0], out)
    low = _bit_length(u & (U64(0) - u))
    return renorm(np.where(u == 0, U64(out.width), low - U64(1)), out)


# ----------------------------------------------------------------------------- comparisons


def _compare(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Evaluate:
    def evaluate(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
        return fn(args[0], args[1])

    return evaluate


_op("eq", 2, _infer_eq, "Equality of integers or bools.", commutative=True)(_compare(np.equal))
_op("ne", 2, _infer_eq, "Inequality of integers or bools.", commutative=True)(
    _compare(np.not_equal))
_op("lt", 2, _infer_order, "Less than (signed compare for signed types).")(_compare(np.less))
_op("le", 2, _infer_order, "Less than or equal (signed for signed types).")(
    _compare(np.less_equal))
_op("gt", 2, _infer_order, "Greater than (signed compare for signed types).")(
    _compare(np.greater))
_op("ge", 2, _infer_order, "Greater than or equal (signed for signed types).")(
    _compare(np.greater_equal))


# ----------------------------------------------------------------------------- conversions


@_op("select", 3, _infer_select, "Choose `a` where `cond` is true, else `b` (any one type).")
def _select(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return select(*args)


@_op("cast", 1, _Produced(_check_cast), "Convert to the result integer type: truncate, or extend "
     "by the source's signedness (bool extends as 0/1).")
def _cast(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(bits(args[0]), out)


@_op("concat", 2, _infer_concat, "Unsigned `(hi << width(lo)) | lo` of the two bit patterns.",
     builtin=("own", "own"))
def _concat(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    hi_t, lo_t = ins
    hi = _field(args[0], hi_t)
    return hi << U64(lo_t.width) | _field(args[1], lo_t)


@_op("slice", 1, _Produced(_check_slice),
     "Unsigned W-bit field of the operand starting at bit `lo`.", ("lo",), builtin=("own",))
def _slice(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return renorm(bits(args[0]) >> U64(attrs["lo"]), out)


# ----------------------------------------------------------------------------- aggregates


@_op("array", None, _infer_array, "Array of its n >= 1 operands, element 0 first.")
def _array(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return list(args)


@_op("array_index", 2, _infer_array_index,
     "Element `idx` of an array; an index past the end reads the last element.")
def _array_index(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    arr, idx = args
    last = len(arr) - 1
    if idx.shape == (1,):
        return arr[min(int(idx[0]), last)]
    result = arr[last]
    for k in range(last - 1, -1, -1):
        result = select(idx == U64(k), arr[k], result)
    return result


@_op("array_update", 3, _infer_array_update,
     "Copy of an array with element `idx` replaced; an index past the end changes nothing.")
def _array_update(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    arr, idx, val = args
    if idx.shape == (1,):
        k = int(idx[0])
        return [val if i == k else e for i, e in enumerate(arr)]
    return [select(idx == U64(i), val, e) for i, e in enumerate(arr)]


@_op("tuple", None, _infer_tuple, "Tuple of its operands (none gives the unit value).")
def _tuple(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return tuple(args)


@_op("tuple_get", 1, _infer_tuple_get, "Field `index` of a tuple.", ("index",))
def _tuple_get(args: list[Value], attrs: Attrs, ins: Any, out: Any) -> Value:
    return args[0][attrs["index"]]


__all__ = ["OPS", "Attrs", "Check", "Evaluate", "Infer", "OpDef", "OpTypeError", "TypeRule",
           "builtins", "get"]
