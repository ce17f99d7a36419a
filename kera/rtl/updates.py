"""Chains of constant-index array updates written as one wire.

An ``array_update`` with a constant index whose only reader is the next such update of the
same array in the same stage gets no wire of its own (``folded_updates``); the chain's last
update is one concatenation of the last value written to each element and part-selects of the
array the chain starts from (``chain_lines``). AES's rounds write a 16-byte state a byte at a
time: one 128-bit wire per byte made 211.6 kB of Verilog at the ECP5 board clock, 181.5 kB
now. Concatenations are wiring, so the netlist is the same.
"""

from __future__ import annotations

from typing import Any

from kera.hls.pipeline import Schedule
from kera.ir.types import ArrayType
from kera.rtl.netlist import concat


def folded_updates(schedule: Schedule) -> set[bytes]:
    """Return the constant-index ``array_update`` nodes whose only reader is another one in
    the same stage (not the result, a state's next value or a block RAM's late write): no
    wire of their own, the last update of the chain writes every element (``chain_lines``)."""
    g, stage = schedule.graph, schedule.stage
    region = g.regions[schedule.region]
    keep = {region.result, *(slot.next for slot in region.states), *schedule.extra_uses}
    users = g.users()

    def in_range(nid: bytes) -> bool:
        node = g.nodes[nid]
        if node.op != "array_update":
            return False
        t, idx = g.nodes[node.inputs[0]].type, g.nodes[node.inputs[1]]
        return idx.op == "const" and isinstance(t, ArrayType) and int(idx.attr("value")) < t.length

    out: set[bytes] = set()
    for nid in schedule.order:
        if not in_range(nid) or nid in keep or nid in schedule.virtual:
            continue
        (reader, *more) = users[nid] or [b""]
        if (not more and reader and in_range(reader) and g.nodes[reader].inputs[0] == nid
                and nid not in g.nodes[reader].inputs[1:] and stage.get(reader) == stage[nid]):
            out.add(nid)
    return out


def chain_lines(m: Any, nid: bytes, s: int) -> None:
    """Emit the chain of constant-index updates that ends in ``nid`` (``folded_updates``) as one
    wire of ``m`` (a ``kera.rtl.emit`` module): the last value written to each element, the
    untouched runs of the array at the chain's start as part-selects. What the wire no longer
    reads is marked for Verilator's UNUSED lint: an array the chain writes over whole, a value
    a later update of the chain writes over (a register may hold only that)."""
    nodes = m.g.nodes
    written: dict[int, bytes] = {}
    at = nid
    shadowed: list[bytes] = []
    while at == nid or at in m.folded:
        node = nodes[at]
        k = int(nodes[node.inputs[1]].attr("value"))
        if k in written:
            shadowed.append(node.inputs[2])
        written.setdefault(k, node.inputs[2])
        at = node.inputs[0]
    base = m.ref(at, s)
    t = base.type
    assert isinstance(t, ArrayType)
    if len(written) == t.length and base.value is None:
        m.body.sink(base.expr)
    for v in shadowed:
        if v not in written.values() and (shadow := m.ref(v, s)).value is None:
            m.body.sink(shadow.expr)
    ew, parts = t.elem.flat_width, []
    k = t.length - 1
    while k >= 0:
        if k in written:
            parts.append(m.ref(written[k], s).expr)
            k -= 1
            continue
        lo = k
        while lo > 0 and lo - 1 not in written:
            lo -= 1
        parts.append(m.body.part(base, (k + 1) * ew - 1, lo * ew))
        k = lo - 1
    m.body.define(m.wire[nid], nodes[nid].type.flat_width, concat(parts))


__all__ = ["chain_lines", "folded_updates"]
