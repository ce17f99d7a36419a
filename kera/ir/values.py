"""Batched values: the one representation of Kera values used by the interpreter and backends.

A batch holds B values of one Kera type, laid out by the type's structure:

- ``uN``: ``np.ndarray`` of shape ``(B,)``, dtype ``np.uint64``, every element in ``0..2**N-1``.
- ``iN``: ``np.ndarray`` of shape ``(B,)``, dtype ``np.int64``, sign-extended from bit N-1.
- ``bool``: ``np.ndarray`` of shape ``(B,)``, dtype ``np.bool_``.
- ``[T; n]``: a ``list`` of n batched ``T`` values (so arrays of tuples and nested arrays work).
- ``(T1, ..., Tk)``: a ``tuple`` of k batched values.

A leaf may also have shape ``(1,)``: it then stands for the same value in every row and
broadcasts (constants are evaluated once, not B times). ``broadcast`` expands a value to B rows.
Values are never mutated in place; every operation returns fresh arrays or shares its inputs.

JSON (INTERFACES.md): integers are JSON integers, arrays and tuples JSON lists, ``bool`` is
``true``/``false`` (``0``/``1`` accepted on input). A fixed-point value (FIXED.md) is held as
its raw bits, like the integer it is for the graph; in JSON it is a number read exactly from
its decimal text or a decimal string, and it is written as the shortest exact decimal string.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from kera.diagnostics import KeraError
from kera.ir.types import ArrayType, BoolType, FixedType, IntType, TupleType, Type

Value = Any  # np.ndarray | list[Value] | tuple[Value, ...]; see the module docstring.

U64 = np.uint64
I64 = np.int64
_ONES = U64(0xFFFF_FFFF_FFFF_FFFF)


def dtype_of(t: Type) -> type:
    """Return the numpy dtype of a scalar type's leaves (int64, uint64 or bool_)."""
    if isinstance(t, BoolType):
        return np.bool_
    if isinstance(t, IntType):
        return I64 if t.signed else U64
    raise TypeError(f"{t} is not a scalar type")


def bits(x: np.ndarray) -> np.ndarray:
    """Return the 64-bit two's-complement pattern of an integer or bool leaf, as uint64."""
    if x.dtype == U64:
        return x
    if x.dtype == I64:
        return x.view(U64)
    return x.astype(U64)


def renorm(u: np.ndarray, t: IntType) -> np.ndarray:
    """Renormalise a uint64 bit pattern to ``t``: mask to N bits, sign-extend when signed."""
    w = t.width
    if w < 64:
        u = u & U64((1 << w) - 1)
    if not t.signed:
        return u
    sign = U64(1 << (w - 1))
    return ((u ^ sign) - sign).view(I64)


def full(t: Type, value: int, rows: int = 1) -> np.ndarray:
    """Return a leaf of ``rows`` copies of an in-range scalar ``value`` of type ``t``."""
    return np.full(rows, value, dtype=dtype_of(t))


def select(cond: np.ndarray, a: Value, b: Value) -> Value:
    """Return ``cond ? a : b`` row by row, for values of any (matching) structure."""
    if cond.shape == (1,):
        return a if cond[0] else b
    if isinstance(a, list):
        return [select(cond, x, y) for x, y in zip(a, b, strict=True)]
    if isinstance(a, tuple):
        return tuple(select(cond, x, y) for x, y in zip(a, b, strict=True))
    return np.where(cond, a, b)


def batch_size(value: Value) -> int:
    """Return the number of rows of a value (1 when every leaf broadcasts)."""
    if isinstance(value, list | tuple):
        return max((batch_size(v) for v in value), default=1)
    return int(value.shape[0])


def broadcast(value: Value, rows: int) -> Value:
    """Return ``value`` with every leaf expanded to exactly ``rows`` rows."""
    if isinstance(value, list):
        return [broadcast(v, rows) for v in value]
    if isinstance(value, tuple):
        return tuple(broadcast(v, rows) for v in value)
    if value.shape[0] == rows:
        return value
    return np.repeat(value, rows)


def row_of(value: Value, i: int) -> Value:
    """Return row ``i`` of a batch as a batch of one row (a broadcast leaf gives its one row)."""
    if isinstance(value, list):
        return [row_of(v, i) for v in value]
    if isinstance(value, tuple):
        return tuple(row_of(v, i) for v in value)
    return value[i:i + 1] if value.shape[0] > 1 else value[:1]


def join_rows(rows: Sequence[Value]) -> Value:
    """Return the batch whose rows are the one-row batches ``rows``, in order."""
    first = rows[0]
    if isinstance(first, list):
        return [join_rows([r[k] for r in rows]) for k in range(len(first))]
    if isinstance(first, tuple):
        return tuple(join_rows([r[k] for r in rows]) for k in range(len(first)))
    return np.concatenate(rows)


def conforms(value: Value, t: Type) -> str | None:
    """Return why ``value`` is not a well-formed batch of ``t`` (None when it is)."""
    if isinstance(t, ArrayType):
        if not isinstance(value, list) or len(value) != t.length:
            return f"expected a list of {t.length} element batches for {t}"
        return next((m for v in value if (m := conforms(v, t.elem))), None)
    if isinstance(t, TupleType):
        if not isinstance(value, tuple) or len(value) != len(t.elems):
            return f"expected a tuple of {len(t.elems)} field batches for {t}"
        return next((m for v, e in zip(value, t.elems, strict=True) if (m := conforms(v, e))), None)
    if not isinstance(value, np.ndarray) or value.ndim != 1 or value.dtype != dtype_of(t):
        return f"expected a 1-D {np.dtype(dtype_of(t)).name} array for {t}"
    if isinstance(t, IntType) and len(value) and (value.min() < t.min or value.max() > t.max):
        return f"a value is out of range for {t}"
    return None


def bind_inputs(params: Sequence[tuple[str, Type]], inputs: Mapping[str, Value],
                rows: int | None = None) -> int:
    """Check ``inputs`` against a signature's ``(name, type)`` parameters; return the batch size.

    The batch size is the common size of the inputs (leaves of one row broadcast), or ``rows``
    (needed only with no parameters; default 1). Raises ``KeraError`` on missing, extra or
    malformed inputs and on batch sizes that differ (from each other or from ``rows``).
    """
    for name, t in params:
        if name not in inputs:
            raise KeraError(f"missing input for parameter `{name}`")
        problem = conforms(inputs[name], t)
        if problem:
            raise KeraError(f"input for parameter `{name}`: {problem}")
    extra = sorted(set(inputs) - {name for name, _ in params})
    if extra:
        raise KeraError(f"unknown input `{extra[0]}`")
    sizes = {batch_size(inputs[name]) for name, _ in params} - {1}
    if len(sizes) > 1 or (rows is not None and sizes and sizes != {rows}):
        raise KeraError(f"inputs have different batch sizes: {sorted(sizes)}")
    return rows if rows is not None else (sizes.pop() if sizes else 1)


# ----------------------------------------------------------------------------- edge values


def edge_values(t: Type, neighbours: bool = False) -> list[int]:
    """Return the edge values of a scalar type, each once, in a fixed order.

    0, 1, -1, min, max, min+1, max-1, 2, then every single bit (``1 << k``, as ``t`` holds it),
    then for signed types the negated powers of two; ``bool`` gives 0 and 1. With ``neighbours``
    the powers' neighbours ``±2**k ± 1`` follow (for the carries and borrows of arithmetic).
    Values ``t`` cannot hold are left out.
    """
    if isinstance(t, BoolType):
        return [0, 1]
    if isinstance(t, FixedType):
        return _fixed_edges(t, neighbours)
    assert isinstance(t, IntType)
    core = [0, 1, -1, t.min, t.max, t.min + 1, t.max - 1, 2]
    powers = [t.wrap(1 << k) for k in range(t.width)]
    negated = [-(1 << k) for k in range(t.width)] if t.signed else []
    near = [s * (1 << k) + d for k in range(t.width + 1) for s in (1, -1) for d in (-1, 1)]
    cands = core + powers + negated + (near if neighbours else [])
    return list(dict.fromkeys(v for v in cands if t.contains(v)))


def _fixed_edges(t: FixedType, neighbours: bool) -> list[int]:
    """The raw edge values of a fixed-point type: those of its raw integer, then the raw bits of
    ±0.5 and ±1 (rounding ties and unity) and ±1 ulp around them, where ``t`` holds them."""
    raw = IntType(t.width, t.signed)
    units = [Fraction(s, d) for d in (2, 1) for s in (1, -1)]
    scaled = [u * Fraction(2) ** t.frac for u in units]
    ties = [int(v) + d for v in scaled if v.denominator == 1 for d in (0, -1, 1)]
    cands = edge_values(raw, neighbours) + ties
    return list(dict.fromkeys(v for v in cands if raw.contains(v)))


# ----------------------------------------------------------------------------- fixed point

_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


class ExactNumber(float):
    """A JSON number with a fraction or an exponent, keeping its decimal text (so a fixed-point
    input is read exactly, never through binary64); it is still a ``float`` for the rest."""

    text: str

    def __new__(cls, text: str) -> ExactNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number


def decimal_text(value: Fraction) -> str:
    """Return the shortest exact decimal string of ``value``: "0.8125", "-1", "7"."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    twos = (d & -d).bit_length() - 1
    fives = 0
    rest = d >> twos
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    if rest != 1:
        return str(value)  # not a finite decimal (never a fixed-point value)
    places = max(twos, fives)
    digits = str(abs(value.numerator) * 10**places // d).rjust(places + 1, "0")
    text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0")
    return ("-" if value < 0 else "") + text


def fixed_from_json(obj: object, t: FixedType, where: str) -> int:
    """Return the raw bits of a JSON fixed-point value (exactly representable in ``t``)."""
    if type(obj) is int:
        value = Fraction(obj)
    elif isinstance(obj, ExactNumber):
        value = Fraction(obj.text)
    elif isinstance(obj, str) and _DECIMAL.fullmatch(obj):
        value = Fraction(obj)
    else:
        raise KeraError(f"{where}: expected a number or a decimal string of type {t}, "
                        f"not {_show(obj)}")
    raw = t.raw_of(value)
    if raw is None:
        scaled = value * Fraction(2) ** t.frac
        lo = min(max(math.floor(scaled), t.min), t.max)
        hi = max(min(math.ceil(scaled), t.max), t.min)
        near = sorted({decimal_text(t.value_of(lo)), decimal_text(t.value_of(hi))}, key=Fraction)
        raise KeraError(f"{where}: {decimal_text(value)} is not exactly representable in {t} "
                        f"(nearest: {' and '.join(near)})")
    return raw


def port_formats(ports: Sequence[tuple[str, Type]]) -> list[str]:
    """Describe every port holding fixed point: ``x: fx<16, 2> (raw i16, value = raw / 2^14)``.

    Ports without fixed point are left out (an integer design's texts do not change).
    """
    lines = []
    for name, t in ports:
        leaves = list(dict.fromkeys(_fixed_leaves(t)))
        if leaves:
            raw = "; ".join(f"{leaf}: {_raw_note(leaf)}" for leaf in leaves) if (
                len(leaves) > 1 or leaves[0] != t) else _raw_note(leaves[0])
            lines.append(f"{name}: {t} ({raw})")
    return lines


def _fixed_leaves(t: Type) -> list[FixedType]:
    if isinstance(t, FixedType):
        return [t]
    if isinstance(t, ArrayType):
        return _fixed_leaves(t.elem)
    if isinstance(t, TupleType):
        return [leaf for e in t.elems for leaf in _fixed_leaves(e)]
    return []


def _raw_note(t: FixedType) -> str:
    raw = f"raw {'i' if t.signed else 'u'}{t.width}"
    if t.frac == 0:
        return f"{raw}, value = raw"
    return f"{raw}, value = raw {'/' if t.frac > 0 else '*'} 2^{abs(t.frac)}"


def from_raw_json(obj: object, t: Type) -> object:
    """Turn a JSON value whose fixed-point leaves are raw bits into the usual JSON form."""
    if obj is None:
        return None
    if isinstance(t, FixedType):
        return fixed_text(int(obj), t)  # type: ignore[call-overload]
    if isinstance(t, ArrayType):
        return [from_raw_json(v, t.elem) for v in obj]  # type: ignore[attr-defined]
    if isinstance(t, TupleType):
        return [from_raw_json(v, e) for v, e in zip(obj, t.elems, strict=True)]  # type: ignore[call-overload]
    return obj


def fixed_text(raw: int, t: FixedType) -> str:
    """Return the JSON text value of raw bits ``raw`` of ``t`` (``decimal_text``, on ints)."""
    frac = t.frac
    if frac <= 0:
        return str(raw << -frac)
    digits = str(abs(raw) * 5**frac).rjust(frac + 1, "0")
    whole, tail = digits[:-frac], digits[-frac:].rstrip("0")
    sign = "-" if raw < 0 else ""
    return f"{sign}{whole}.{tail}" if tail else f"{sign}{whole}"


# ----------------------------------------------------------------------------- JSON values


def from_json(obj: object, t: Type, where: str) -> object:
    """Check one JSON value against ``t``; return it as int / bool / list / tuple.

    Raises ``KeraError`` whose message starts with ``where`` on a value out of range or of the
    wrong shape.
    """
    if isinstance(t, BoolType):
        if obj is True or obj is False:
            return obj
        if type(obj) is int and obj in (0, 1):
            return bool(obj)
        raise KeraError(f"{where}: {_show(obj)} is not a bool (true, false, 0 or 1)")
    if isinstance(t, FixedType):
        return fixed_from_json(obj, t, where)
    if isinstance(t, IntType):
        if type(obj) is not int:
            raise KeraError(f"{where}: expected an integer of type {t}, not {_show(obj)}")
        if not t.min <= obj <= t.max:
            raise KeraError(f"{where}: {obj} is out of range for {t}")
        return obj
    if isinstance(t, ArrayType):
        e = t.elem
        if (isinstance(e, IntType) and not isinstance(e, FixedType) and type(obj) is list
                and len(obj) == t.length and all(type(v) is int for v in obj)
                and e.min <= min(obj) and max(obj) <= e.max):
            return obj  # fast path: a flat list of in-range integers
        if not isinstance(obj, list) or len(obj) != t.length:
            raise KeraError(f"{where}: expected a list of {t.length} elements for {t}, "
                            f"not {_show(obj)}")
        return [from_json(v, t.elem, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(t, TupleType):
        n = len(t.elems)
        if not isinstance(obj, list) or len(obj) != n:
            raise KeraError(f"{where}: expected a list of {n} fields for {t}, not {_show(obj)}")
        fields = enumerate(zip(obj, t.elems, strict=True))
        return tuple(from_json(v, e, f"{where}.{i}") for i, (v, e) in fields)
    raise TypeError(f"unknown type {t!r}")


def _show(obj: object) -> str:
    text = json.dumps(obj)
    return text if len(text) <= 40 else text[:37] + "..."


def stack(rows: Sequence[Any], t: Type) -> Value:
    """Return the batch holding ``rows`` (python values as from ``from_json``: lists for arrays
    and tuples, shaped like ``t``), row by row."""
    if isinstance(t, ArrayType):
        if isinstance(t.elem, IntType) and rows:
            table: np.ndarray = np.array(rows, dtype=dtype_of(t.elem)).reshape(len(rows), t.length)
            return [np.ascontiguousarray(table[:, i]) for i in range(t.length)]
        return [stack([r[i] for r in rows], t.elem) for i in range(t.length)]
    if isinstance(t, TupleType):
        return tuple(stack([r[i] for r in rows], e) for i, e in enumerate(t.elems))
    return np.array(rows, dtype=dtype_of(t)).reshape(len(rows))


def unstack(value: Value, t: Type) -> list[object]:
    """Return the rows of a batch as python values (int, bool, list, tuple)."""
    rows = batch_size(value)
    value = broadcast(value, rows)
    return [_row(value, t, i) for i in range(rows)]


def _row(value: Value, t: Type, i: int) -> object:
    if isinstance(t, ArrayType):
        return [_row(v, t.elem, i) for v in value]
    if isinstance(t, TupleType):
        return tuple(_row(v, e, i) for v, e in zip(value, t.elems, strict=True))
    leaf = value[i] if value.shape[0] > 1 else value[0]
    return bool(leaf) if isinstance(t, BoolType) else int(leaf)


def to_json(value: Value, t: Type, i: int, raw: bool = False) -> object:
    """Return row ``i`` of a batch as a JSON-ready value (ints, lists, True/False).

    With ``raw``, fixed-point values are their raw bits (ints), as the RTL sees them.
    """
    if isinstance(t, ArrayType):
        return [to_json(v, t.elem, i, raw) for v in value]
    if isinstance(t, TupleType):
        return [to_json(v, e, i, raw) for v, e in zip(value, t.elems, strict=True)]
    leaf = value[i] if value.shape[0] > 1 else value[0]
    if isinstance(t, FixedType) and not raw:
        return fixed_text(int(leaf), t)
    return bool(leaf) if isinstance(t, BoolType) else int(leaf)


def to_json_rows(value: Value, t: Type, rows: int | None = None,
                 raw: bool = False) -> list[object]:
    """Return every row of a batch as JSON-ready values (faster than calling ``to_json``).

    ``rows`` defaults to the value's batch size; pass it when every leaf broadcasts. With
    ``raw``, fixed-point values are their raw bits (ints), as the RTL sees them.
    """
    rows = batch_size(value) if rows is None else rows
    return _columns(broadcast(value, rows), t, rows, raw)


def _columns(value: Value, t: Type, rows: int, raw: bool) -> list[object]:
    if isinstance(t, ArrayType | TupleType):
        elems = t.elems if isinstance(t, TupleType) else (t.elem,) * t.length
        cols = [_columns(v, e, rows, raw) for v, e in zip(value, elems, strict=True)]
        return [list(r) for r in zip(*cols, strict=True)] if cols else [[] for _ in range(rows)]
    if isinstance(t, FixedType) and not raw:
        return [fixed_text(v, t) for v in value.tolist()]
    return value.tolist()


# ----------------------------------------------------------------------------- JSONL files


@dataclass(frozen=True, slots=True)
class JsonlBatch:
    """Parsed JSONL input lines: batched inputs, per-line ``expected`` (if any) and row count."""

    inputs: dict[str, Value]
    expected: list[object] | None
    rows: int


def load_jsonl(
    source: str | Path | Iterable[str],
    params: Sequence[tuple[str, Type]],
    name: str | None = None,
) -> JsonlBatch:
    """Parse JSONL input lines for a function with ``params``; check every value exactly.

    ``source`` is a path or an iterable of lines. Each non-blank line is either
    ``{"x": 1, ...}`` or ``{"inputs": {...}, "expected": ...}`` (the shared vectors format).
    Raises ``KeraError`` naming the line and parameter on any problem.
    """
    if isinstance(source, str | Path):
        name = name or str(source)
        try:
            lines: Iterable[str] = Path(source).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise KeraError(f"{name}: cannot read inputs: {e}") from None
    else:
        name, lines = name or "<inputs>", source
    names = [p for p, _ in params]
    known = set(names)
    columns: dict[str, list[object]] = {p: [] for p in names}
    expected: list[object] = []
    wrapped = 0
    rows = 0
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{name}:{lineno}"
        obj = _parse_line(line, where)
        if isinstance(obj.get("inputs"), dict):
            extra = set(obj) - {"inputs", "expected"}
            if extra:
                raise KeraError(f"{where}: unexpected key `{sorted(extra)[0]}` beside `inputs`")
            wrapped += 1
            expected.append(obj.get("expected"))
            obj = obj["inputs"]
        for key in obj:
            if key not in known:
                want = ", ".join(names) or "no parameters"
                raise KeraError(f"{where}: unknown parameter `{key}` (expected {want})")
        for pname, ptype in params:
            if pname not in obj:
                raise KeraError(f"{where}: missing parameter `{pname}`")
            columns[pname].append(from_json(obj[pname], ptype, f"{where}: parameter `{pname}`"))
        rows += 1
    if wrapped not in (0, rows):
        raise KeraError(f"{name}: mixes plain lines with {{\"inputs\": ...}} lines")
    batched = {p: stack(columns[p], t) for p, t in params}
    return JsonlBatch(batched, expected if wrapped else None, rows)


def evaluate_jsonl(
    source: str | Path | Iterable[str],
    params: Sequence[tuple[str, Type]],
    result_type: Type,
    evaluate: Callable[[Mapping[str, Value], int], Value],
    name: str | None = None,
) -> list[object]:
    """Read JSONL inputs (``load_jsonl``), evaluate them as one batch, return one JSON value a row.

    ``evaluate(inputs, rows)`` returns the batched result; it is not called when there are no rows.
    """
    batch = load_jsonl(source, params, name)
    if batch.rows == 0:
        return []
    return to_json_rows(evaluate(batch.inputs, batch.rows), result_type, batch.rows)


def _parse_line(line: str, where: str) -> dict:
    try:
        obj = json.loads(line, parse_float=ExactNumber)
    except (json.JSONDecodeError, RecursionError) as e:
        msg = getattr(e, "msg", "nesting too deep")
        raise KeraError(f"{where}: invalid JSON: {msg}") from None
    if not isinstance(obj, dict):
        raise KeraError(f"{where}: expected a JSON object of parameter values")
    return obj


def read_jsonl(
    source: str | Path | Iterable[str],
    params: Sequence[tuple[str, Type]],
    name: str | None = None,
) -> dict[str, Value]:
    """Parse JSONL input lines and return the batched inputs (see ``load_jsonl``)."""
    return load_jsonl(source, params, name).inputs


__all__ = [
    "ExactNumber",
    "JsonlBatch",
    "Value",
    "batch_size",
    "bind_inputs",
    "bits",
    "broadcast",
    "conforms",
    "decimal_text",
    "dtype_of",
    "edge_values",
    "evaluate_jsonl",
    "fixed_from_json",
    "fixed_text",
    "from_raw_json",
    "port_formats",
    "from_json",
    "full",
    "load_jsonl",
    "read_jsonl",
    "renorm",
    "select",
    "stack",
    "to_json",
    "to_json_rows",
    "unstack",
]
