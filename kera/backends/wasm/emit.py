"""Emit a WebAssembly module (WAT text) for a scheduled region.

The module exports ``memory`` and ``kera_run(rows: i32)``. Linear memory holds one column per
leaf (``kera.backends.layout``: the inputs, then the result), each ``CHUNK`` rows long, at the
offsets in ``WasmLayout.offsets``; ``kera_run`` evaluates rows ``0 .. rows-1`` with straight-line
code in schedule order, one local per node. The host copies a chunk of rows in, calls, copies the
result columns out. No relaxed-SIMD, no traps (see ``kera.backends.wasm.ops``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kera.backends.layout import Layout, region_layout
from kera.backends.lower import Emitter, Table, Tree, build_tree, leaves_of, walk
from kera.backends.wasm.ops import TABLE, k, wt
from kera.hls.pipeline import Schedule
from kera.ir.types import BoolType, IntType, Type

CHUNK = 4096  # rows per call: columns of 4096 x 8 bytes keep memory small and caches warm
PAGE = 65536
ENTRY = "kera_run"


@dataclass(frozen=True)
class WasmLayout:
    """Where each leaf's column lives in linear memory, and how many rows a call may take."""

    layout: Layout
    chunk: int
    offsets: tuple[int, ...]  # byte offset of every buffer (inputs, then result leaves)
    pages: int


def memory_layout(layout: Layout, chunk: int = CHUNK) -> WasmLayout:
    """Return the linear-memory layout of ``layout``'s columns for ``chunk`` rows per call."""
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
        first = 0
        self.param_buffers: list[list[int]] = []
        for group in mem.layout.param_leaves:
            self.param_buffers.append(list(range(first, first + len(group))))
            first += len(group)

    def let(self, t: Type, expr: str) -> str:
        """Bind ``expr`` to a fresh local; return the ``local.get`` that reads it."""
        name = f"$v{len(self.locals)}"
        self.locals.append(f"(local {name} {wt(t)})")
        self.body.append(f"(local.set {name} {expr})")
        return f"(local.get {name})"

    def param(self, index: int, t: Type) -> Tree:
        buffers = iter(self.param_buffers[index])

        def load(leaf: Type) -> str:
            b = next(buffers)
            ty = wt(leaf)
            scale = "$o4" if ty == "i32" else "$o8"
            return self.let(leaf, f"({ty}.load offset={self.mem.offsets[b]} (local.get {scale}))")

        return build_tree(t, load)

    def const(self, t: Type, value: int) -> str:
        return k(value, wt(t))

    def select(self, cond: str, a: str, b: str, t: Type) -> str:
        return self.let(t, f"(select {a} {b} {cond})")

    def index_is(self, idx: str, idx_t: IntType, k_: int) -> str:
        ty = wt(idx_t)
        return self.let(BoolType(), f"({ty}.eq {idx} {k(k_, ty)})")


def emit_wat(schedule: Schedule, table: Table | None = None, chunk: int = CHUNK) -> str:
    """Return the WAT text of ``schedule``'s region (see the module docstring for the ABI)."""
    layout = region_layout(schedule.graph, schedule.region)
    mem = memory_layout(layout, chunk)
    em = WasmEmitter(mem)
    result = walk(schedule, em, TABLE if table is None else table)
    n_in = len(layout.inputs)
    stores = []
    for j, (leaf, value) in enumerate(zip(layout.result, leaves_of(result), strict=True)):
        ty = wt(leaf.type)
        scale = "$o4" if ty == "i32" else "$o8"
        off = mem.offsets[n_in + j]
        stores.append(f"({ty}.store offset={off} (local.get {scale}) {value})")
    pad = " " * 8
    return "\n".join([
        f";; kera-hls WebAssembly golden model of `{schedule.region}`, graph "
        f"{schedule.graph.fingerprint()}; {len(schedule.order)} nodes in schedule order.",
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
        "        (local.set $i (i32.add (local.get $i) (i32.const 1)))",
        "        (br $row)))))",
        "",
    ])  # fmt: skip


__all__ = ["CHUNK", "ENTRY", "WasmEmitter", "WasmLayout", "emit_wat", "memory_layout"]
