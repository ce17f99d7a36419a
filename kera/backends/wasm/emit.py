"""Emit a WebAssembly module (WAT text) for a scheduled region.

The module exports ``memory`` and ``kera_run(rows: i32)``. Linear memory holds one column per
leaf (``kera.backends.layout``: the inputs, then the result), each ``CHUNK`` rows long, at the
offsets in ``WasmLayout.offsets``; ``kera_run`` evaluates rows ``0 .. rows-1`` with straight-line
code in schedule order. Every value is first bound to its own virtual local; ``allocate_locals``
then maps them onto as few real locals per type as liveness along the order allows (WebAssembly
engines cap a function's locals, at 50,000 in wasmtime). The host copies a chunk of rows in,
calls, copies the result columns out. When every value fits 32 bits and every node has a
lane-wise form, the loop runs four rows per iteration in SIMD128 ``i32x4`` lanes
(``kera.backends.wasm.simd``); otherwise it is scalar (``kera.backends.wasm.ops``). No
relaxed-SIMD, no traps. A stateful region is always scalar (``kera.backends.wasm.stream``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kera.backends.layout import Layout, flatten_type, region_layout
from kera.backends.lower import Emitter, LoweringError, Table, Tree, build_tree, leaves_of, walk
from kera.backends.state import SlotPlan, StatePlan
from kera.backends.wasm import simd
from kera.backends.wasm.ops import TABLE, k, wt
from kera.hls.pipeline import Schedule
from kera.ir.types import BoolType, IntType, Type

CHUNK = 4096  # rows per call: columns of 4096 x 8 bytes keep memory small and caches warm
MEMORY_BUDGET = 256 << 20  # very wide regions get fewer rows per call instead
PAGE = 65536
ENTRY = "kera_run"
MAX_LOCALS = 50_000  # wasmtime's (wasmparser's) limit on the locals of one function
_VIRTUAL = re.compile(r"\$v(\d+)\b")
_CONST = re.compile(r"\((i32|i64)\.const (\d+)\)")


@dataclass(frozen=True)
class WasmLayout:
    """Where each leaf's column lives in linear memory, and how many rows a call may take."""

    layout: Layout
    chunk: int
    offsets: tuple[int, ...]  # byte offset of every buffer (inputs, then result leaves)
    pages: int
    state_offsets: tuple[int, ...] = ()  # byte offset of every in-place array's leaf buffer


def default_chunk(layout: Layout) -> int:
    """Return the rows per call: ``CHUNK``, fewer when the columns would pass the budget."""
    per_row = max(1, sum(leaf.word // 8 for leaf in layout.buffers))
    return max(4, min(CHUNK, MEMORY_BUDGET // per_row) // 4 * 4)


def memory_layout(layout: Layout, chunk: int | None = None,
                  plan: StatePlan | None = None) -> WasmLayout:
    """Return the linear-memory layout of ``layout``'s columns for ``chunk`` rows per call,
    followed by the in-place arrays of ``plan`` (``length + 1`` words each)."""
    chunk = default_chunk(layout) if chunk is None else chunk
    offsets, at = [], 0
    for leaf in layout.buffers:
        offsets.append(at)
        at += chunk * leaf.word // 8
    state = []
    for slot, _, t in plan.memories if plan is not None else []:
        at = -(-at // 8) * 8
        state.append(at)
        at += (slot.length + 1) * (4 if wt(t) == "i32" else 8)
    return WasmLayout(layout, chunk, tuple(offsets), max(1, -(-at // PAGE)), tuple(state))


class WasmEmitter(Emitter):
    """Collects the instructions of one row and the locals they need."""

    def __init__(self, mem: WasmLayout) -> None:
        self.mem = mem
        self.types: list[str] = []  # the WASM type of every virtual local ``$vK``
        self.sets: list[tuple[int, str]] = []  # (virtual local, expression) in order
        #: Constant tables read at a dynamic index, by (type, values): each one data segment
        #: at this byte offset, after the columns' pages (``data_lines``, ``pages``).
        self.tables: dict[tuple[str, tuple[int, ...]], int] = {}
        self.table_end = mem.pages * PAGE

    def local_type(self, t: Type) -> str:
        """Return the WASM type of a local holding a value of scalar type ``t``."""
        return wt(t)

    def load(self, t: Type, offset: int) -> str:
        """Return the load of this row's ``t`` value from the buffer at ``offset``."""
        ty = wt(t)
        return f"({ty}.load offset={offset} (local.get {'$o4' if ty == 'i32' else '$o8'}))"

    def let(self, t: Type, expr: str) -> str:
        """Bind ``expr`` to a fresh virtual local; return the ``local.get`` that reads it."""
        v = len(self.types)
        self.types.append(self.local_type(t))
        self.sets.append((v, expr))
        return f"(local.get $v{v})"

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

    def state_leaf(self, slot: SlotPlan, leaf: int, t: Type) -> str:
        return f"(local.get $s{slot.first + leaf})"

    def position(self, idx: str, idx_t: IntType, limit: int) -> str:
        ty = wt(idx_t)
        pick = f"(select {idx} {k(limit, ty)} ({ty}.lt_u {idx} {k(limit, ty)}))"
        return self.let(IntType(32, False), pick if ty == "i32" else f"(i32.wrap_i64 {pick})")

    def same(self, a: str, b: str) -> str:
        return self.let(BoolType(), f"(i32.eq {a} {b})")

    def mem_load(self, slot: SlotPlan, leaf: int, pos: str, t: Type) -> str:
        return self.let(t, f"({wt(t)}.load offset={self.mem.state_offsets[slot.first + leaf]} "
                           f"{address(pos, t)})")

    def table_constant(self, operand: str) -> str | None:
        found = _CONST.fullmatch(operand)
        return found.group(2) if found else None

    def table_read(self, leaf: Type, values: tuple[str, ...], pos: str) -> str:
        """Load from the table's data segment (``data_lines``), after the columns' pages."""
        ty = wt(leaf)
        key = (ty, tuple(int(v) for v in values))
        if key not in self.tables:
            self.tables[key] = self.table_end
            self.table_end += len(values) * (4 if ty == "i32" else 8)
        return self.let(leaf, f"({ty}.load offset={self.tables[key]} {address(pos, leaf)})")

    def data_lines(self) -> list[str]:
        """Return the data segments of the constant tables ``array_read`` made."""
        out = []
        for (ty, values), at in self.tables.items():
            size = 4 if ty == "i32" else 8
            data = b"".join(v.to_bytes(size, "little") for v in values)
            text = "".join(f"\\{b:02x}" for b in data)
            out.append(f'(data (i32.const {at}) "{text}")')
        return out

    def pages(self) -> int:
        """Return the module's memory pages: the columns' and the tables'."""
        return max(self.mem.pages, -(-self.table_end // PAGE))


def address(pos: str, t: Type) -> str:
    """Return the byte offset of word ``pos`` of an in-place buffer of ``t`` containers."""
    return f"(i32.shl {pos} (i32.const {2 if wt(t) == 'i32' else 3}))"


class SimdEmitter(WasmEmitter):
    """Like ``WasmEmitter``, but every operand is a ``v128`` holding four rows (``simd``)."""

    def table_constant(self, operand: str) -> str | None:
        return None  # four rows' indices differ: a select chain, no table

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


def allocate_locals(types: list[str], sets: list[tuple[int, str]],
                    tail: list[str]) -> tuple[list[str], list[str]]:
    """Map virtual locals onto real ones by liveness; return (declarations, rewritten code).

    ``sets`` binds each virtual local ``$vK`` once, in order; ``tail`` (the result stores) reads
    some after the last set. A local becomes free after the last instruction that reads its
    value, and a later value of the same type reuses it (an instruction may write the local it
    last reads: ``local.set`` evaluates its operand first). Values nothing reads still get
    computed, into a local that is free again at once. Deterministic: free locals are reused
    last-freed first.
    """
    reads = [sorted({int(v) for v in _VIRTUAL.findall(expr)}) for _, expr in sets]
    last: dict[int, int] = {}
    for i, used in enumerate(reads):
        for v in used:
            last[v] = i
    for line in tail:
        for v in _VIRTUAL.findall(line):
            last[int(v)] = len(sets)
    real: dict[int, int] = {}
    real_types: list[str] = []
    free: dict[str, list[int]] = {}

    def rename(text: str) -> str:
        return _VIRTUAL.sub(lambda m: f"$v{real[int(m.group(1))]}", text)

    code = []
    for i, (v, expr) in enumerate(sets):
        code.append(rename(expr))
        for u in reads[i]:
            if last[u] == i:
                free.setdefault(types[u], []).append(real[u])
        pool = free.setdefault(types[v], [])
        if pool:
            real[v] = pool.pop()
        else:
            real[v] = len(real_types)
            real_types.append(types[v])
        code[-1] = f"(local.set $v{real[v]} {code[-1]})"
        if v not in last:
            pool.append(real[v])
    if len(real_types) > MAX_LOCALS:
        raise LoweringError(f"{len(real_types)} values are live at once, more than the "
                            f"{MAX_LOCALS} locals a WebAssembly function may have")
    decls = [f"(local $v{r} {ty})" for r, ty in enumerate(real_types)]
    return decls, code + [rename(line) for line in tail]


def _all_32_bit(schedule: Schedule) -> bool:
    nodes = schedule.graph.nodes
    return all(leaf.word == 32 for nid in schedule.order for leaf in flatten_type(nodes[nid].type))


def emit_wat(schedule: Schedule, table: Table | None = None, chunk: int | None = None,
             simd_lanes: bool | None = None) -> str:
    """Return the WAT text of ``schedule``'s region (see the module docstring for the ABI).

    With ``simd_lanes`` None (the default) the SIMD128 lowering is used when every value fits
    32 bits and every node has a lane-wise form, else the scalar one; an explicit ``table``
    (one keyed like ``ops.TABLE``) always gives the scalar module.
    """
    if chunk is None:
        chunk = default_chunk(region_layout(schedule.graph, schedule.region))
    if chunk % 4:
        raise ValueError(f"chunk must be a multiple of 4 rows, not {chunk}")
    if schedule.graph.regions[schedule.region].stateful:
        if simd_lanes:
            raise simd.NotVectorisable("a stateful region runs its rows in order (scalar)")
        from kera.backends.wasm.stream import emit_stream

        return emit_stream(schedule, TABLE if table is None else table, chunk)
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
    decls, code = allocate_locals(em.types, em.sets, stores)
    pad = " " * 8
    step = 4 if lanes else 1
    mode = "SIMD128, 4 rows per iteration" if lanes else "scalar"
    return "\n".join([
        f";; kera-hls WebAssembly golden model of `{schedule.region}`, graph "
        f"{schedule.graph.fingerprint()}; {len(schedule.order)} nodes in schedule order; {mode}.",
        "(module",
        f"  (memory (export \"memory\") {em.pages()})",
        *(f"  {line}" for line in em.data_lines()),
        f"  (func (export \"{ENTRY}\") (param $n i32)",
        "    (local $i i32) (local $o4 i32) (local $o8 i32)",
        *(f"    {decl}" for decl in decls),
        "    (block $done",
        "      (loop $row",
        "        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))",
        "        (local.set $o4 (i32.shl (local.get $i) (i32.const 2)))",
        "        (local.set $o8 (i32.shl (local.get $i) (i32.const 3)))",
        *(pad + line for line in code),
        f"        (local.set $i (i32.add (local.get $i) (i32.const {step})))",
        "        (br $row)))))",
        "",
    ])


__all__ = ["CHUNK", "ENTRY", "MAX_LOCALS", "SimdEmitter", "WasmEmitter", "WasmLayout",
           "address", "allocate_locals", "default_chunk", "emit_wat", "memory_layout"]
