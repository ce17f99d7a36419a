"""Helpers to run one registry op on Python values, and hypothesis strategies for edge values."""

from __future__ import annotations

from hypothesis import strategies as st

from kera.ir import values
from kera.ir.ops import OPS
from kera.ir.types import BOOL, IntType, Type

EDGE_WIDTHS = (1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 63, 64)


def edge_values(t: IntType) -> list[int]:
    """Return the edge values of ``t`` with the powers of two's neighbours, in ascending order."""
    return sorted(values.edge_values(t, neighbours=True))


def int_types(max_width: int = 64) -> st.SearchStrategy[IntType]:
    """Strategy for ``uN``/``iN``, biased toward edge widths."""
    widths = st.one_of(
        st.sampled_from([w for w in EDGE_WIDTHS if w <= max_width]),
        st.integers(1, max_width),
    )
    return st.builds(IntType, widths, st.booleans())


def values_of(t: Type) -> st.SearchStrategy:
    """Strategy for one canonical value of a scalar type, biased toward edge values."""
    if t == BOOL:
        return st.booleans()
    assert isinstance(t, IntType)
    return st.one_of(st.sampled_from(edge_values(t)), st.integers(t.min, t.max))


def run_op(name: str, in_types: list[Type], out: Type, columns: list[list],
           attrs: dict | None = None, broadcast_first: bool = False) -> list:
    """Evaluate ``name`` on columns of Python values; return the rows as Python values.

    Also checks the result is a well-formed batch of ``out`` (dtype, shape, renormalised).
    With ``broadcast_first`` the first operand is passed as a (1,)-row batch when it is constant.
    """
    args = [values.stack(col, t) for col, t in zip(columns, in_types, strict=True)]
    if broadcast_first and columns and len(set(map(repr, columns[0]))) == 1:
        args[0] = values.stack(columns[0][:1], in_types[0])
    result = OPS[name].evaluate(args, attrs or {}, in_types, out)
    rows = len(columns[0]) if columns else 1
    result = values.broadcast(result, rows)
    problem = values.conforms(result, out)
    assert problem is None, f"{name}: malformed result: {problem}"
    return values.unstack(result, out)
