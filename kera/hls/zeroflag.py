"""Four-bit "all zero" flags of a zero count as one ECP5 LUT4 each.

A ``clz``/``ctz`` whose padded width is not a power of 4 is a radix-2 tree
(``kera.hls.logic_split.zero_count``): every group of ``2**k`` bits has a flag "all zero"
(``z = z1 & z2`` of its halves), read by the multiplexer of counts above it as a select and by
the next flag. abc9 maps it for the least depth with its wide LUTs and copies the flags into
every reader: ctz32 takes 67 LUT4 sites at ECP5 25 MHz (yosys 0.70), 45 LUT4s on iCE40, and
the estimate of the same mapping (``kera.hls.cutmap``) says 40. Written as a ``LUT4`` (``NOR``
of the four bits) each four-bit flag is one shared cell abc9 does not copy: ctz32 places at 50
sites and 174.7 MHz at 25 MHz (was 67, 206.3) and 51 sites, 200.4 MHz at 150 MHz (was 53,
205.5; three seeds, docs/models.md).

:func:`zero_flags` finds them in a schedule: an ``and`` of two ``and``\\ s of four bits' ``== 0``
(each bit a one-bit ``slice`` of a value computed in an earlier stage or by no LUT, or such a
one-bit value), all in one stage. ``kera.rtl.emit`` writes each as a ``LUT4`` under ``ifdef
SYNTHESIS`` (the gates as they are for simulation); the estimate counts one site for it and
maps the rest around it (``kera.hls.resources``), and the timing takes it as one LUT4 level
that no reader absorbs (``kera.hls.sta``). ECP5 only: iCE40's LUT4-only mapping is already
within a few LUTs of the estimate.
"""

from __future__ import annotations

from typing import Any

from kera.hls.lutmap import is_bitwise
from kera.ir.types import BOOL

#: The families whose zero flags are written as LUT4 cells.
FLAG_FAMILIES = frozenset({"ecp5"})
#: ``LUT4`` truth table of ``~(A | B | C | D)`` (``INIT[{D, C, B, A}]``: only index 0 is 1).
NOR4_INIT = 0x0001

#: A bit of a node: (node, bit).
Source = tuple[bytes, int]


def zero_flags(schedule: Any) -> dict[bytes, tuple[Source, Source, Source, Source]]:
    """Return each four-bit zero flag of ``schedule`` -> the four bits it tests (ECP5
    schedules only; none elsewhere)."""
    if schedule.family not in FLAG_FAMILIES:
        return {}
    graph, stage = schedule.graph, schedule.stage
    nodes = graph.nodes
    out: dict[bytes, tuple[Source, Source, Source, Source]] = {}

    def tested(nid: bytes, s: int) -> Source | None:  # nid = (bit == 0): the bit
        node = nodes[nid]
        if node.op != "eq" or stage.get(nid) != s:
            return None
        a, b = node.inputs
        if nodes[a].op == "const":
            a, b = b, a
        zero = nodes[b]
        if zero.op != "const" or int(zero.attr("value")) != 0 or nodes[a].type.flat_width != 1:
            return None
        v = nodes[a]
        if v.op == "slice" and stage.get(a) == s:
            src: Source = (v.inputs[0], int(v.attr("lo")))
        else:
            src = (a, 0)
        u = nodes[src[0]]
        if stage.get(src[0]) == s and is_bitwise(graph, u):
            return None  # a bit of the same stage's logic: not one signal to a LUT
        return src

    def halves(nid: bytes, s: int) -> list[bytes] | None:
        node = nodes[nid]
        if node.op != "and" or node.type != BOOL or stage.get(nid) != s:
            return None
        return list(node.inputs)

    for nid in schedule.order:
        s = stage.get(nid)
        top = halves(nid, s)
        if top is None:
            continue
        bits: list[Source] = []
        for h in top:
            pair = halves(h, s)
            if pair is None:
                break
            found = [tested(e, s) for e in pair]
            if any(f is None for f in found):
                break
            bits += [f for f in found if f is not None]
        if len(bits) == 4 and len(set(bits)) == 4:
            out[nid] = (bits[0], bits[1], bits[2], bits[3])
    return out


__all__ = ["FLAG_FAMILIES", "NOR4_INIT", "Source", "zero_flags"]
