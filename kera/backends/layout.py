"""The scalar layout shared by the CPU, WASM and PTX backends, and the marshalling to and from it.

A region's parameters and result are flattened into scalar *leaves* (arrays element by element,
tuples field by field, recursively). Each leaf lives in a 32-bit container (``bool`` and widths up
to 32) or a 64-bit one, holding the renormalised bit pattern: masked for ``uN``, sign-extended
from bit N-1 for ``iN``, 0/1 for ``bool``. A batch of B rows is passed as one contiguous
``uint32``/``uint64`` buffer per leaf (struct of arrays), inputs first, then the result's leaves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kera.ir import values
from kera.ir.graph import Graph
from kera.ir.types import ArrayType, BoolType, IntType, TupleType, Type
from kera.ir.values import Value

Scalar = IntType | BoolType
WordDtype = type[np.uint32] | type[np.uint64]  # a scalar container's numpy dtype


def word_bits(t: Type) -> int:
    """Return the container width (32 or 64 bits) of a scalar type."""
    if isinstance(t, BoolType):
        return 32
    if isinstance(t, IntType):
        return 32 if t.width <= 32 else 64
    raise TypeError(f"{t} is not a scalar type")


def word_dtype(t: Type) -> WordDtype:
    """Return the numpy dtype of a scalar type's container (``uint32`` or ``uint64``)."""
    return np.uint32 if word_bits(t) == 32 else np.uint64


@dataclass(frozen=True, slots=True)
class Leaf:
    """One scalar inside a parameter or the result: where it is, its type, its container."""

    name: str  # e.g. ``x[3]``, ``a[1][0]``, ``result.1`` (for messages and comments)
    path: tuple[int, ...]  # array indices / tuple fields from the root value
    type: Scalar

    @property
    def word(self) -> int:
        """Container width in bits (32 or 64)."""
        return word_bits(self.type)

    @property
    def dtype(self) -> WordDtype:
        """Container dtype (``np.uint32`` or ``np.uint64``)."""
        return word_dtype(self.type)


def flatten_type(t: Type, name: str = "", path: tuple[int, ...] = ()) -> list[Leaf]:
    """Return the scalar leaves of ``t`` in layout order (element 0 / field 0 first)."""
    if isinstance(t, ArrayType):
        out: list[Leaf] = []
        for i in range(t.length):
            out += flatten_type(t.elem, f"{name}[{i}]", (*path, i))
        return out
    if isinstance(t, TupleType):
        out = []
        for i, e in enumerate(t.elems):
            out += flatten_type(e, f"{name}.{i}", (*path, i))
        return out
    if isinstance(t, IntType | BoolType):
        return [Leaf(name, path, t)]
    raise TypeError(f"unknown type {t!r}")


@dataclass(frozen=True)
class Layout:
    """The flattened signature of one region: parameters' leaves, then the result's."""

    params: tuple[tuple[str, Type], ...]
    param_leaves: tuple[tuple[Leaf, ...], ...]
    result_type: Type
    result: tuple[Leaf, ...]

    @property
    def inputs(self) -> tuple[Leaf, ...]:
        """Every input leaf, parameter by parameter."""
        return tuple(leaf for group in self.param_leaves for leaf in group)

    def param_buffers(self, index: int) -> range:
        """Return the numbers of the buffers holding parameter ``index``'s leaves."""
        first = sum(len(group) for group in self.param_leaves[:index])
        return range(first, first + len(self.param_leaves[index]))

    @property
    def buffers(self) -> tuple[Leaf, ...]:
        """Every buffer in call order: the input leaves, then the result leaves."""
        return self.inputs + self.result


def region_layout(graph: Graph, region: str) -> Layout:
    """Return the layout of region ``region`` of ``graph``."""
    params, result = graph.signature(region)
    groups = tuple(tuple(flatten_type(t, name)) for name, t in params)
    return Layout(tuple(params), groups, result, tuple(flatten_type(result, "result")))


# ----------------------------------------------------------------------------- marshalling


def leaf_arrays(value: Value, t: Type) -> list[np.ndarray]:
    """Return the leaf batches of ``value`` (numpy int64/uint64/bool arrays) in layout order."""
    if isinstance(t, ArrayType):
        return [a for v in value for a in leaf_arrays(v, t.elem)]
    if isinstance(t, TupleType):
        return [a for v, e in zip(value, t.elems, strict=True) for a in leaf_arrays(v, e)]
    return [value]


def to_word(leaf: np.ndarray, t: Scalar, rows: int, pad: int = 0) -> np.ndarray:
    """Return one leaf batch as a contiguous container buffer of ``rows + pad`` rows.

    The padding rows are zero (a valid value of every type), so kernels may process them.
    """
    dtype = word_dtype(t)
    out = np.empty(rows + pad, dtype=dtype)
    out[rows:] = 0
    # Keeping the low 32 bits of a sign-extended value gives its 32-bit container pattern.
    np.copyto(out[:rows], values.bits(leaf), casting="unsafe")
    return out


def from_word(buf: np.ndarray, t: Scalar) -> np.ndarray:
    """Return a container buffer as a leaf batch of ``t`` (uint64, int64 or bool).

    Integers keep the container's bits (so a value a backend failed to renormalise shows up as
    out of range); a ``bool`` container other than 0 or 1 raises ``ValueError``.
    """
    if isinstance(t, BoolType):
        if len(buf) and buf.max() > 1:
            raise ValueError("a backend produced a bool container that is neither 0 nor 1")
        return buf != 0
    if t.signed:
        signed = buf.view(np.int32) if buf.dtype == np.uint32 else buf.view(np.int64)
        return signed.astype(np.int64)
    return buf.astype(np.uint64)


def pack(layout: Layout, inputs: Mapping[str, Value], rows: int, pad: int = 0) -> list[np.ndarray]:
    """Return the input buffers (one per input leaf) for ``rows`` rows plus ``pad`` zero rows."""
    out: list[np.ndarray] = []
    for (name, t), group in zip(layout.params, layout.param_leaves, strict=True):
        arrays = leaf_arrays(inputs[name], t)
        out += [to_word(a, leaf.type, rows, pad) for a, leaf in zip(arrays, group, strict=True)]
    return out


def unflatten(t: Type, leaves: Sequence[np.ndarray]) -> Value:
    """Rebuild a batched value of ``t`` from its leaf batches in layout order."""
    it = iter(leaves)

    def build(t: Type) -> Value:
        if isinstance(t, ArrayType):
            return [build(t.elem) for _ in range(t.length)]
        if isinstance(t, TupleType):
            return tuple(build(e) for e in t.elems)
        return next(it)

    value = build(t)
    if next(it, None) is not None:
        raise ValueError("more leaves than the type holds")
    return value


def unpack(layout: Layout, buffers: Sequence[np.ndarray], rows: int) -> Value:
    """Return the batched result held by the output ``buffers`` (first ``rows`` rows)."""
    pairs = zip(buffers, layout.result, strict=True)
    leaves = [from_word(b[:rows], leaf.type) for b, leaf in pairs]
    return unflatten(layout.result_type, leaves)


@dataclass(frozen=True)
class Buffers:
    """The container buffers of one call: input leaves packed, result leaves zeroed.

    Every buffer has ``rows`` rows plus the zero padding rows the backend asked for.
    """

    layout: Layout
    rows: int
    inputs: list[np.ndarray]
    outputs: list[np.ndarray]

    @property
    def all(self) -> list[np.ndarray]:
        """Every buffer in call order: the inputs, then the outputs."""
        return self.inputs + self.outputs

    def result(self) -> Value:
        """Return the batched result the outputs hold (their first ``rows`` rows)."""
        return unpack(self.layout, self.outputs, self.rows)


def call_buffers(layout: Layout, inputs: Mapping[str, Value], rows: int | None = None,
                 block: int = 1) -> Buffers:
    """Check ``inputs`` against the layout's parameters and set up the buffers of one call.

    Follows ``kera.interp.evaluate`` (``values.bind_inputs``): leaves of one row broadcast; with
    no parameters the batch size is ``rows`` (default 1). The buffers are padded with zero rows
    to a multiple of ``block``. Raises ``KeraError`` on missing, extra or malformed inputs.
    """
    rows = values.bind_inputs(layout.params, inputs, rows)
    pad = -rows % block
    outputs = [np.zeros(rows + pad, dtype=leaf.dtype) for leaf in layout.result]
    return Buffers(layout, rows, pack(layout, inputs, rows, pad), outputs)


def leaf_bits(value: Value, t: Type, rows: int, masked: bool = False) -> list[np.ndarray]:
    """Return every leaf of a batch as a uint64 bit pattern, ``rows`` rows each.

    Unmasked (the default), a leaf is its 64-bit two's-complement value, so two batches agree
    exactly when every value is equal *and* canonical; ``masked`` keeps only the N bits.
    """
    out = []
    for leaf, arr in zip(flatten_type(t), leaf_arrays(value, t), strict=True):
        u = np.broadcast_to(values.bits(arr), (rows,))
        width = 1 if isinstance(leaf.type, BoolType) else leaf.type.width
        out.append(u & np.uint64((1 << width) - 1) if masked and width < 64 else u)
    return out


__all__ = [
    "Buffers",
    "Layout",
    "Leaf",
    "Scalar",
    "call_buffers",
    "flatten_type",
    "from_word",
    "leaf_arrays",
    "leaf_bits",
    "pack",
    "region_layout",
    "to_word",
    "unflatten",
    "unpack",
    "word_bits",
    "word_dtype",
]
