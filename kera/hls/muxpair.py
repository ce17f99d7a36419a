"""Two levels of selects in one stage as one layer of ECP5 4:1 multiplexers.

A variable shift or rotate split into levels (``kera.hls.logic_split.barrel``: ``y = f ? x
op c : x`` per amount bit) leaves yosys a chain of 2:1 multiplexers. abc9 maps it for the least
depth with its wide LUTs, and a 4:1 multiplexer, six inputs, is a ``$__ABC9_LUT6`` of four LUT4
sites, duplicated wherever a level is shared: sra64 at 150 MHz (two stages of three and
three levels) takes 821 LUT4 sites and places at 180.5 MHz (yosys 0.70, nextpnr 0.11.1, three
seeds). An ECP5 slice builds a 4:1 multiplexer from its two LUT4s, each a 2:1 multiplexer of
the low select, and its ``PFUMX``, the 2:1 multiplexer of the LUT outputs by the high select:
two sites, one LUT level and the PFUMX's 0.15 ns. Written so, two levels at a time, the same
sra64 takes 450 sites and places at 243.5 MHz.

:func:`mux_pairs` finds the pairs in a schedule, all their nodes in one stage and the inner
ones read by nothing else:

* two barrel levels: ``y1 = f1 ? (x op c1) : x`` and the next ``y2 = f2 ? (y1 op c2) : y1`` of
  the same op and type. ``y2`` is ``x`` shifted by ``c1 * f1 + c2 * f2`` (shifts and rotates by
  constants compose, a shift saturating at the width), so bit ``i`` of ``y2`` selects among
  four bits of ``x`` (:func:`barrel_taps`), both LUTs by ``f1``;
* a select of two selects, ``s ? (p ? a1 : a0) : (q ? b1 : b0)``: each LUT takes one inner
  select with its own condition (a radix-4 zero count's multiplexer of counts,
  ``kera.hls.logic_split._count4``).

``kera.rtl.emit`` writes each bit whose four sources are signals as two ``LUT4`` and a
``PFUMX`` under ``ifdef SYNTHESIS`` (the levels as they were otherwise, for simulation); the
estimate counts two sites for each such bit and one for a bit with a constant source
(``kera.hls.resources``). ECP5 only: iCE40 has no multiplexer beside its LUT.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kera.hls.lutmap import moved
from kera.ir.types import IntType

#: The shifts and rotates a barrel level moves its operand with.
LEVEL_OPS = frozenset({"shl", "shr", "rotl", "rotr"})
#: The families whose slices hold a 2:1 multiplexer of their two LUT outputs (ECP5's PFUMX).
SLICE_MUX_FAMILIES = frozenset({"ecp5"})
#: ``LUT4`` truth table of ``C ? B : A`` (``INIT[{D, C, B, A}]``).
MUX2_INIT = 0xCACA


#: A bit of a node (None: the constant 0 a shift brings in).
Source = tuple[bytes, int] | None


@dataclass(frozen=True)
class MuxPair:
    """Two levels of 2:1 multiplexers as one 4:1 multiplexer a bit: ``second = flag ? high :
    low`` where ``high`` and ``low`` are each a select of two values by a condition of its own
    (``selects``: low's, high's); ``members`` are the nodes the pair replaces, in the order
    they compute, ``second`` last.

    ``taps[i]`` are the four sources of bit ``i``: low's when its condition is 0 and 1, then
    high's. Two barrel levels (``y2 = f2 ? (y1 op c2) : y1``, ``y1 = f1 ? (x op c1) : x``) are
    a pair whose four sources are bits of ``x`` (:func:`barrel_taps`) and whose two LUTs both
    select by ``f1``; a select of two selects (``_count4``'s multiplexer) takes the selects'
    own values and conditions."""

    second: bytes
    members: tuple[bytes, ...]
    flag: bytes
    selects: tuple[bytes, bytes]
    taps: tuple[tuple[Source, Source, Source, Source], ...]
    what: str

    @property
    def width(self) -> int:
        """The bits of the pair's result."""
        return len(self.taps)

    def constants(self, graph: Any) -> frozenset[bytes]:
        """Return the source nodes of the pair that are constants."""
        return frozenset(x[0] for src in self.taps for x in src
                         if x is not None and graph.nodes[x[0]].op == "const")

    def plan(self, constant: frozenset[bytes] = frozenset()) -> list[str]:
        """Return, per bit, how it is built: ``"wire"`` (its four sources are one signal),
        ``"lut"`` (a constant among them, or one of the ``constant`` nodes: yosys's LUT) or
        ``"mux4"`` (two LUT4 and a PFUMX)."""
        out = []
        for src in self.taps:
            if len(set(src)) == 1:
                out.append("wire")
            elif any(x is None or x[0] in constant for x in src):
                out.append("lut")
            else:
                out.append("mux4")
        return out

    def sites(self, constant: frozenset[bytes] = frozenset()) -> int:
        """LUT4 sites of the pair: two per 4:1 multiplexer, one per bit with a constant."""
        plan = self.plan(constant)
        return 2 * plan.count("mux4") + plan.count("lut")


def barrel_taps(x: bytes, op: str, signed: bool, n: int, steps: tuple[int, int]
                ) -> tuple[tuple[Source, Source, Source, Source], ...]:
    """The sources of two barrel levels by ``steps`` of the ``n``-bit ``x``: bit ``i`` is ``x``
    moved by 0, ``c1``, ``c2`` or ``c1 + c2`` (shifts and rotates by constants compose)."""
    c1, c2 = steps
    bits: list[Source] = [(x, j) for j in range(n)]
    levels = [moved(op, bits, s, None, signed) for s in (0, c1, c2, c1 + c2)]
    return tuple(zip(*levels, strict=True))


def _level(graph: Any, nid: bytes) -> tuple[bytes, bytes, bytes, str, int] | None:
    """Return (shift, source, flag, op, step) of a barrel level ``nid``, or None."""
    node = graph.nodes[nid]
    if node.op != "select" or not isinstance(node.type, IntType):
        return None
    flag, moved, source = node.inputs
    shift = graph.nodes[moved]
    if shift.op not in LEVEL_OPS or shift.inputs[0] != source or shift.type != node.type:
        return None
    amount = graph.nodes[shift.inputs[1]]
    if amount.op != "const" or graph.nodes[flag].type.flat_width != 1:
        return None
    return moved, source, flag, shift.op, int(amount.attr("value"))


def mux_pairs(schedule: Any) -> dict[bytes, MuxPair]:
    """Return each member node of ``schedule``'s pairs -> its pair: two barrel levels, or a
    select of two selects, in one stage with nothing else reading the inner nodes (ECP5
    schedules only; none elsewhere)."""
    if schedule.family not in SLICE_MUX_FAMILIES:
        return {}
    graph, stage = schedule.graph, schedule.stage
    nodes = graph.nodes
    readers: dict[bytes, set[bytes]] = {}
    for nid in schedule.order:
        for u in nodes[nid].inputs:
            readers.setdefault(u, set()).add(nid)
    result = graph.regions[schedule.region].result
    levels = {}
    for nid in schedule.order:
        got = _level(graph, nid)
        if got is not None and readers.get(got[0]) == {nid} and stage[got[0]] == stage[nid]:
            levels[nid] = got
    out: dict[bytes, MuxPair] = {}
    for y2, (m2, y1, f2, op, c2) in levels.items():
        first = levels.get(y1)
        if first is None or y1 in out or y2 in out or y1 == result:
            continue
        m1, x, f1, op1, c1 = first
        if op1 != op or stage[y1] != stage[y2] or readers.get(y1) != {m2, y2}:
            continue
        t = nodes[y2].type
        taps = barrel_taps(x, op, t.signed, t.flat_width, (c1, c2))
        pair = MuxPair(y2, (m1, y1, m2, y2), f2, (f1, f1), taps,
                       f"two barrel levels ({op} by {c1} and {c2})")
        for member in pair.members:
            out[member] = pair
    for y2 in schedule.order:  # a select of two selects
        node = nodes[y2]
        if node.op != "select" or y2 in out or not isinstance(node.type, IntType):
            continue
        flag, high, low = node.inputs
        inner = [nodes[v] for v in (low, high)]
        if high == low or any(v in out or v == result or readers.get(v) != {y2}
                              or stage[v] != stage[y2] for v in (low, high)) \
                or any(n.op != "select" or n.type != node.type for n in inner):
            continue
        lo, hi = inner
        taps = tuple(((lo.inputs[2], i), (lo.inputs[1], i), (hi.inputs[2], i),
                      (hi.inputs[1], i)) for i in range(node.type.flat_width))
        pair = MuxPair(y2, (low, high, y2), flag, (lo.inputs[0], hi.inputs[0]), taps,
                       "a select of two selects")
        for member in pair.members:
            out[member] = pair
    return out


__all__ = ["LEVEL_OPS", "MUX2_INIT", "SLICE_MUX_FAMILIES", "MuxPair", "Source", "barrel_taps",
           "mux_pairs"]
