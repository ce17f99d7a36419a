"""Emit a WebAssembly module (WAT text) for a scheduled region.

The module exports ``memory`` and ``kera_run(rows: i32)``. Linear memory holds one column per
leaf (``kera.backends.layout``: the inputs, then the result), each ``CHUNK`` rows long, at the
offsets in ``WasmLayout.offsets``; ``kera_run`` evaluates rows ``0 .. rows-1`` with straight-line
code in schedule order, one local per node. The host copies a chunk of rows in, calls, copies the
result columns out. When every value fits 32 bits and every node has a lane-wise form, the loop
runs four rows per iteration in SIMD128 ``i32x4`` lanes (``kera.backends.wasm.simd``); otherwise
it is scalar (``kera.backends.wasm.ops``). No relaxed-SIMD, no traps.
"""

from __future__ import annotations

from dataclasses import dataclass

from kera.backends.layout import Layout, flatten_type, region_layout
from kera.backends.lower import Emitter, LoweringError, Table, Tree, build_tree, leaves_of, walk
from kera.backends.wasm import simd
from kera.backends.wasm.ops import TABLE, k, wt
from kera.hls.pipeline import Schedule
from kera.ir.types import BoolType, IntType, Type

CHUNK = 4096  # rows per call: columns of 4096 x 8 bytes keep memory small and caches warm
MEMORY_BUDGET = 256 << 20  # very wide regions get fewer rows per call instead
PAGE = 65536
ENTRY = "kera_run"


@dataclass(frozen=True)
class WasmLayout:
    """Where each leaf's column lives in linear memory, and how many rows a call may take."""

    layout: Layout
    chunk: int
    offsets: tuple[int, ...]  # byte offset of every buffer (inputs, then result leaves)
    pages: int


def default_chunk(layout: Layout) -> int:
    """Return the rows per call: ``CHUNK``, fewer when the columns would pass the budget."""
    per_row = max(1, sum(leaf.word // 8 for leaf in layout.buffers))
    return max(4, min(CHUNK, MEMORY_BUDGET // per_row) // 4 * 4)


def memory_layout(layout: Layout, chunk: int | None = None) -> WasmLayout:
    """Return the linear-memory layout of ``layout``'s columns for ``chunk`` rows per call."""
    chunk = default_chunk(layout) if chunk is None else chunk
    offsets, at = [], 0
    for leaf in layout.buffers:
        offsets.append(at)
        at += chunk * leaf.word // 8
    return WasmLayout(layout, chunk, tuple(offsets), max(1, -(-at // PAGE)))


class WasmEmitter(Emitter):
    """Collects the instructions of one row and the locals they need."""

    def __init__(self, mem: WasmLayout) -> None:
        self.mem = mem
        self.locals: list[str] = []
        self.body: list[str] = []

    def local_type(self, t: Type) -> str:
        """Return the WASM type of a local holding a value of scalar type ``t``."""
        return wt(t)

    def load(self, t: Type, offset: int) -> str:
        """Return the load of this row's ``t`` value from the buffer at ``offset``."""
        ty = wt(t)
        return f"({ty}.load offset={offset} (local.get {'$o4' if ty == 'i32' else '$o8'}))"

    def let(self, t: Type, expr: str) -> str:
        """Bind ``expr`` to a fresh local; return the ``local.get`` that reads it."""
        name = f"$v{len(self.locals)}"
        self.locals.append(f"(local {name} {self.local_type(t)})")
        self.body.append(f"(local.set {name} {expr})")
        return f"(local.get {name})"

    def param(self, index: int, t: Type) -> Tree:
        offsets = iter(self.mem.offsets[b] for b in self.mem.layout.param_buffers(index))
        return build_tree(t, lambda leaf: self.let(leaf, self.load(leaf, next(offsets))))

    def const(self, t: Type, value: int) -> str:
        return k(value, wt(t))

    def select(self, cond: str, a: str, b: str, t: Type) -> str:
        return self.let(t, f"(select {a} {b} {cond})")

    def index_is(self, idx: str, idx_t: IntType, k_: int) -> str:
        ty = wt(idx_t)
        return self.let(BoolType(), f"({ty}.eq {idx} {k(k_, ty)})")


class SimdEmitter(WasmEmitter):
    """Like ``WasmEmitter``, but every operand is a ``v128`` holding four rows (``simd``)."""

    def local_type(self, t: Type) -> str:
        return "v128"

    def load(self, t: Type, offset: int) -> str:
        return f"(v128.load offset={offset} (local.get $o4))"

    def const(self, t: Type, value: int) -> str:
        return simd.splat(value)

    def select(self, cond: str, a: str, b: str, t: Type) -> str:
        return self.let(t, f"(v128.bitselect {a} {b} (i32x4.neg {cond}))")

    def index_is(self, idx: str, idx_t: IntType, k_: int) -> str:
        mask = f"(i32x4.eq {idx} {simd.splat(k_)})"
        return self.let(BoolType(), f"(i32x4.shr_u {mask} (i32.const 31))")


def _all_32_bit(schedule: Schedule) -> bool:
    nodes = schedule.graph.nodes
    return all(leaf.word == 32 for nid in schedule.order for leaf in flatten_type(nodes[nid].type))


def emit_wat(schedule: Schedule, table: Table | None = None, chunk: int | None = None,
             simd_lanes: bool | None = None) -> str:  # fmt: skip
    """Return the WAT text of ``schedule``'s region (see the module docstring for the ABI).

    With ``simd_lanes`` None (the default) the SIMD128 lowering is used when every value fits
    32 bits and every node has a lane-wise form, else the scalar one; an explicit ``table``
    (one keyed like ``ops.TABLE``) always gives the scalar module.
    """
    if chunk is None:
        chunk = default_chunk(region_layout(schedule.graph, schedule.region))
    if chunk % 4:
        raise ValueError(f"chunk must be a multiple of 4 rows, not {chunk}")
    if simd_lanes and (table is not None or not _all_32_bit(schedule)):
        raise simd.NotVectorisable("SIMD lanes need 32-bit values and the SIMD table")
    if simd_lanes is not False and table is None and _all_32_bit(schedule):
        try:
            return _emit(schedule, simd.TABLE, chunk, lanes=True)
        except (simd.NotVectorisable, LoweringError):
            if simd_lanes:
                raise
    return _emit(schedule, TABLE if table is None else table, chunk, lanes=False)


def _emit(schedule: Schedule, table: Table, chunk: int, lanes: bool) -> str:
    layout = region_layout(schedule.graph, schedule.region)
    mem = memory_layout(layout, chunk)
    em = SimdEmitter(mem) if lanes else WasmEmitter(mem)
    result = walk(schedule, em, table)
    n_in = len(layout.inputs)
    stores = []
    for j, (leaf, value) in enumerate(zip(layout.result, leaves_of(result), strict=True)):
        ty = "v128" if lanes else wt(leaf.type)
        scale = "$o4" if ty != "i64" else "$o8"
        off = mem.offsets[n_in + j]
        stores.append(f"({ty}.store offset={off} (local.get {scale}) {value})")
    pad = " " * 8
    step = 4 if lanes else 1
    mode = "SIMD128, 4 rows per iteration" if lanes else "scalar"
    return "\n".join([
        f";; kera-hls WebAssembly golden model of `{schedule.region}`, graph "
        f"{schedule.graph.fingerprint()}; {len(schedule.order)} nodes in schedule order; {mode}.",
        "(module",
        f"  (memory (export \"memory\") {mem.pages})",
        f"  (func (export \"{ENTRY}\") (param $n i32)",
        "    (local $i i32) (local $o4 i32) (local $o8 i32)",
        *(f"    {decl}" for decl in em.locals),
        "    (block $done",
        "      (loop $row",
        "        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))",
        "        (local.set $o4 (i32.shl (local.get $i) (i32.const 2)))",
        "        (local.set $o8 (i32.shl (local.get $i) (i32.const 3)))",
        *(pad + line for line in em.body + stores),
        f"        (local.set $i (i32.add (local.get $i) (i32.const {step})))",
        "        (br $row)))))",
        "",
    ])  # fmt: skip


__all__ = ["CHUNK", "ENTRY", "SimdEmitter", "WasmEmitter", "WasmLayout", "default_chunk",
           "emit_wat", "memory_layout"]  # fmt: skip
