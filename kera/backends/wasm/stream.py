"""The WebAssembly module of a stateful region: its rows run in order as one stream.

Besides ``memory`` and ``kera_run(rows)`` it exports ``kera_reset()``, which sets every reg
leaf back to its initial value. Reg leaves live in mutable globals between calls (so a stream
may be split into chunks of rows) and in locals ``$sK`` within one; the in-place arrays live in
linear memory after the columns (``WasmLayout.state_offsets``), and the host writes their
initial words when it resets the state (``kera.backends.state``). The next values are pushed
on the stack before any reg local is set, so one state may take another's old value.
"""

from __future__ import annotations

from kera.backends.layout import region_layout
from kera.backends.lower import Table, leaves_of, walk_state
from kera.backends.memory import stores
from kera.backends.state import plan_state
from kera.backends.wasm.emit import ENTRY, WasmEmitter, address, allocate_locals, memory_layout
from kera.backends.wasm.ops import k, wt
from kera.hls.pipeline import Schedule

RESET = "kera_reset"


def emit_stream(schedule: Schedule, table: Table, chunk: int) -> str:
    """Return the WAT text of a stateful region (scalar; see the module docstring)."""
    plan = plan_state(schedule)
    assert plan is not None
    layout = region_layout(schedule.graph, schedule.region)
    mem = memory_layout(layout, chunk, plan)
    em = WasmEmitter(mem)
    em.state_plan = plan
    result, nexts = walk_state(schedule, em, table)
    n_in = len(layout.inputs)
    tail = []
    for j, (leaf, value) in enumerate(zip(layout.result, leaves_of(result), strict=True)):
        scale = "$o4" if wt(leaf.type) == "i32" else "$o8"
        tail.append(f"({wt(leaf.type)}.store offset={mem.offsets[n_in + j]} "
                    f"(local.get {scale}) {value})")
    moves = []
    for slot, nxt in zip(plan.slots, nexts, strict=True):
        if slot.in_place:
            for j, pos, v in stores(nxt):
                t = slot.leaves[j]
                tail.append(f"({wt(t)}.store offset={mem.state_offsets[slot.first + j]} "
                            f"{address(pos, t)} {v})")
            continue
        for n, v in enumerate(leaves_of(nxt)):
            if v != f"(local.get $s{slot.first + n})":
                moves.append((slot.first + n, v))
    tail += [v for _, v in moves] + [f"(local.set $s{s})" for s, _ in reversed(moves)]
    decls, code = allocate_locals(em.types, em.sets, tail)
    regs = plan.reg_leaves
    types = [wt(t) for _, _, t in regs]
    pad = " " * 8
    return "\n".join([
        f";; kera-hls WebAssembly golden model of the stateful `{schedule.region}`, graph "
        f"{schedule.graph.fingerprint()}; {len(schedule.order)} nodes in schedule order; "
        "scalar, one stream, rows in order.",
        "(module",
        f"  (memory (export \"memory\") {em.pages()})",
        *(f"  {line}" for line in em.data_lines()),
        *(f"  (global $g{n} (mut {ty}) {k(slot.init[j][0], ty)})"
          for n, ((slot, j, _), ty) in enumerate(zip(regs, types, strict=True))),
        f"  (func (export \"{RESET}\")",
        *(f"    (global.set $g{n} {k(slot.init[j][0], ty)})"
          for n, ((slot, j, _), ty) in enumerate(zip(regs, types, strict=True))),
        "  )",
        f"  (func (export \"{ENTRY}\") (param $n i32)",
        "    (local $i i32) (local $o4 i32) (local $o8 i32)",
        *(f"    (local $s{n} {ty})" for n, ty in enumerate(types)),
        *(f"    {decl}" for decl in decls),
        *(f"    (local.set $s{n} (global.get $g{n}))" for n in range(len(types))),
        "    (block $done",
        "      (loop $row",
        "        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))",
        "        (local.set $o4 (i32.shl (local.get $i) (i32.const 2)))",
        "        (local.set $o8 (i32.shl (local.get $i) (i32.const 3)))",
        *(pad + line for line in code),
        "        (local.set $i (i32.add (local.get $i) (i32.const 1)))",
        "        (br $row)))",
        *(f"    (global.set $g{n} (local.get $s{n}))" for n in range(len(types))),
        "  ))",
        "",
    ])


__all__ = ["RESET", "emit_stream"]
