"""The state registers of a stateful region (STATE.md, "Hardware").

Each state element is one register holding its packed value; its ``state`` node's wire *is*
that register. Slot ``read -> next`` is written when the transfer in the stage that computes
``next`` advances (valid and enabled), so bubbles and ``out_ready = 0`` never move state. The
scheduler guarantees ``0 <= stage(next) - stage(read) <= II - 1``, so the next transfer reads the
new value. ``rst`` loads every register with its initial value in one cycle.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kera.ir.graph import Graph, Region, StateSlot
from kera.rtl.netlist import lit, rng

if TYPE_CHECKING:
    from kera.rtl.emit import _Module

_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")


def state_base(graph: Graph, read: bytes, var: dict[bytes, str]) -> str:
    """Return a Verilog-safe base name of the state whose ``state`` node is ``read``."""
    names: Any = getattr(graph, "state_names", None) or {}
    name = names.get(read) or var.get(read) or f"state{graph.nodes[read].attr('index')}"
    return _NOT_IDENT.sub("_", str(name)).strip("_") or "state"


def init_bits(graph: Graph, nid: bytes) -> int:
    """Return the packed bits of a constant tree (element 0 / field 0 in the LSBs)."""
    node = graph.nodes[nid]
    if node.op == "const":
        return int(node.attr("value")) & ((1 << node.type.flat_width) - 1)
    bits, at = 0, 0
    for i in node.inputs:
        bits |= init_bits(graph, i) << at
        at += graph.nodes[i].type.flat_width
    return bits


def write_stage(m: _Module, slot: StateSlot) -> int:
    """Return the stage whose advance writes ``slot`` (its read's stage for a constant)."""
    if m.g.nodes[slot.next].op == "const":
        return m.s.stage[slot.read]
    return m.s.stage[slot.next]


def write_enable(m: _Module, stage: int) -> str:
    """Return the condition under which the transfer in ``stage`` advances."""
    c = m.control
    return c.accept if stage == 0 else f"{c.en} & {c.valid[stage - 1]}"


def state_registers(m: _Module, region: Region) -> list[str]:
    """Return the declarations and update blocks of every state register."""
    regs = [slot for slot in region.states if m.g.nodes[slot.read].type.flat_width > 0
            and slot.read not in m.s.virtual]  # a block RAM's state: kera.rtl.memory
    lines = ["", f"// ---- state: {len(regs)} register{'s' * (len(regs) != 1)}, written when the "
             "transfer that computes the next value advances; rst loads the initial values"]
    for slot in regs:
        name = m.wire[slot.read]
        w = m.g.nodes[slot.read].type.flat_width
        init = lit(init_bits(m.g, slot.init), w)
        lines.append(f"reg {rng(w)}{name};")
        lines.append("always @(posedge clk) begin")
        lines.append(f"    if (rst) {name} <= {init};")
        if slot.next != slot.read:
            ws = write_stage(m, slot)
            expr = m.ref(slot.next, ws).expr
            lines.append(f"    else if ({write_enable(m, ws)}) {name} <= {expr};")
        lines.append("end")
    return lines


__all__ = ["init_bits", "state_base", "state_registers", "write_enable", "write_stage"]
