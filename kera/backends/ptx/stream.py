"""The PTX kernel of a stateful region: one sequential thread runs the rows in order.

Same entry and pointer table as a pure kernel (``kera.backends.ptx.emit``), then one pointer
per in-place array buffer. Thread 0 of block 0 sets the reg leaves' registers to their initial
values, loops ``%r4 = 0 .. kera_rows-1``, and at the end of each row stores the next writes of
the in-place arrays and moves the next values into the state registers (through fresh
registers, so one state may take another's old value); every other thread returns at once.
"""

from __future__ import annotations

from kera.backends.layout import region_layout
from kera.backends.lower import Table, leaves_of, walk_state
from kera.backends.memory import stores
from kera.backends.ptx.emit import PtxEmitter, entry_head
from kera.backends.ptx.ops import imm, w
from kera.backends.state import plan_state
from kera.hls.pipeline import Schedule


def emit_stream(schedule: Schedule, arch: str, table: Table) -> str:
    """Return the PTX text of a stateful region for ``.target arch``."""
    plan = plan_state(schedule)
    assert plan is not None
    layout = region_layout(schedule.graph, schedule.region)
    em = PtxEmitter(layout)
    em.state_plan = plan
    em.counts = {"r": 5, "rd": 3, "p": 1}
    n_bufs = len(layout.buffers)
    prologue = []
    bases = []
    for k in range(len(plan.memories)):
        base = em.reg("rd")
        prologue += [f"ld.global.u64 {base}, [%rd0+{8 * (n_bufs + k)}];",
                     f"cvta.to.global.u64 {base}, {base};"]
        bases.append(base)
    em.bases = tuple(bases)
    used = set()
    for slot, j, t in plan.reg_leaves:
        name = em.state_leaf(slot, j, t)
        used.add(name[2])
        prologue.append(f"mov.b{w(t)} {name}, {imm(slot.init[j][0], w(t))};")
    result, nexts = walk_state(schedule, em, table)
    n_in = len(layout.inputs)
    for j, (leaf, value) in enumerate(zip(layout.result, leaves_of(result), strict=True)):
        addr = em.column(n_in + j, leaf.type)
        em.lines.append(f"st.global.u{w(leaf.type)} [{addr}], {value};")
    moves = []
    for slot, nxt in zip(plan.slots, nexts, strict=True):
        if slot.in_place:
            for j, pos, v in stores(nxt):
                t = slot.leaves[j]
                em.lines.append(f"st.global.u{w(t)} [{em.word(slot.first + j, pos, t)}], {v};")
            continue
        for k, (v, t) in enumerate(zip(leaves_of(nxt), slot.leaves, strict=True)):
            name = em.state_leaf(slot, k, t)
            if v != name:
                moves.append((name, em.op(t, f"mov.b{w(t)} {{d}}, {v};"), t))
    em.lines += [f"mov.b{w(t)} {name}, {tmp};" for name, tmp, t in moves]
    n = len(plan.reg_leaves)  # leaf K is %srK or %sdK
    decls = [f"    .reg .b32 %sr<{n}>;"] * ("r" in used)
    decls += [f"    .reg .b64 %sd<{n}>;"] * ("d" in used)
    return "\n".join([
        *entry_head(f"// kera-hls PTX golden model of the stateful `{schedule.region}`, graph "
                    f"{schedule.graph.fingerprint()}; {len(schedule.order)} nodes in schedule "
                    "order; one sequential thread, rows in order.", arch, em.counts, decls,
                    em.table_lines()),
        "    mov.u32 %r1, %ctaid.x;",
        "    mov.u32 %r3, %tid.x;",
        "    or.b32 %r2, %r1, %r3;",
        "    setp.ne.u32 %p0, %r2, 0;",
        "    @%p0 bra $L_done;",
        *(f"    {line}" for line in prologue),
        "    mov.u32 %r4, 0;",
        "$L_row:",
        "    setp.ge.u32 %p0, %r4, %r0;",
        "    @%p0 bra $L_done;",
        "    mul.wide.u32 %rd1, %r4, 4;",
        "    mul.wide.u32 %rd2, %r4, 8;",
        *(f"    {line}" for line in em.lines),
        "    add.u32 %r4, %r4, 1;",
        "    bra.uni $L_row;",
        "$L_done:",
        "    ret;",
        "}",
        "",
    ])


__all__ = ["emit_stream"]
