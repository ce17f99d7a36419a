"""Two barrel-shifter levels in one stage as one layer of ECP5 4:1 multiplexers.

A variable shift or rotate split into levels (``kera.hls.logic_split.barrel``: ``y = f ? x
op c : x`` per amount bit) leaves yosys a chain of 2:1 multiplexers. abc9 maps it for the least
depth with its wide LUTs, and a 4:1 multiplexer, six inputs, is a ``$__ABC9_LUT6`` of four LUT4
sites, duplicated wherever a level is shared: sra64 at 150 MHz (two stages of three and
three levels) takes 821 LUT4 sites and places at 180.5 MHz (yosys 0.70, nextpnr 0.11.1, three
seeds). An ECP5 slice builds a 4:1 multiplexer from its two LUT4s, each a 2:1 multiplexer of
the low select, and its ``PFUMX``, the 2:1 multiplexer of the LUT outputs by the high select:
two sites, one LUT level and the PFUMX's 0.15 ns. Written so, two levels at a time, the same
sra64 takes 450 sites and places at 243.5 MHz.

:func:`mux_pairs` finds the pairs in a schedule: a level ``y1 = f1 ? (x op c1) : x`` and the
next ``y2 = f2 ? (y1 op c2) : y1`` of the same op and type, all four nodes in one stage, the
first level and both shifts read by nothing else. ``y2`` is ``x`` shifted by ``c1 * f1 + c2 *
f2`` (shifts and rotates by constants compose, a shift saturating at the width), so bit ``i``
of ``y2`` selects among four bits of ``x`` (:meth:`MuxPair.sources`). ``kera.rtl.emit`` writes
each bit whose four sources are bits of ``x`` as two ``LUT4`` and a ``PFUMX`` under ``ifdef
SYNTHESIS`` (the levels as they were otherwise, for simulation); the estimate counts two sites
for each such bit and one for a bit with a constant source (``kera.hls.resources``). ECP5 only:
iCE40 has no multiplexer beside its LUT.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kera.ir.types import IntType

#: The shifts and rotates a barrel level moves its operand with.
LEVEL_OPS = frozenset({"shl", "shr", "rotl", "rotr"})
#: The families whose slices hold a 2:1 multiplexer of their two LUT outputs (ECP5's PFUMX).
SLICE_MUX_FAMILIES = frozenset({"ecp5"})
#: ``LUT4`` truth table of ``C ? B : A`` (``INIT[{D, C, B, A}]``).
MUX2_INIT = 0xCACA


@dataclass(frozen=True)
class MuxPair:
    """Two barrel levels: ``first = flags[0] ? (source op steps[0]) : source`` and ``second =
    flags[1] ? (first op steps[1]) : first``; ``shifts`` are the two shift nodes."""

    first: bytes
    second: bytes
    shifts: tuple[bytes, bytes]
    source: bytes
    flags: tuple[bytes, bytes]
    op: str
    signed: bool
    width: int
    steps: tuple[int, int]

    @property
    def members(self) -> tuple[bytes, ...]:
        """The four nodes the pair replaces, in the order they compute."""
        return (self.shifts[0], self.first, self.shifts[1], self.second)

    def sources(self, i: int) -> tuple[int | None, ...]:
        """Return, for the selects (f1, f2) = 00, 10, 01, 11, the bit of ``source`` that bit
        ``i`` of ``second`` is (None: the constant 0 a shift brings in)."""
        return tuple(self._bit(i, s) for s in (0, self.steps[0], self.steps[1], sum(self.steps)))

    def _bit(self, i: int, s: int) -> int | None:
        n = self.width
        if self.op == "rotl":
            return (i - s) % n
        if self.op == "rotr":
            return (i + s) % n
        if self.op == "shl":
            return i - s if i >= s else None
        if i + s < n:
            return i + s
        return n - 1 if self.signed else None

    def plan(self) -> list[str]:
        """Return, per bit, how it is built: ``"wire"`` (its four sources are one signal),
        ``"lut"`` (a constant among them: yosys's LUT) or ``"mux4"`` (two LUT4 and a PFUMX)."""
        out = []
        for i in range(self.width):
            src = self.sources(i)
            if len(set(src)) == 1:
                out.append("wire")
            elif None in src:
                out.append("lut")
            else:
                out.append("mux4")
        return out

    def sites(self) -> int:
        """LUT4 sites of the pair: two per 4:1 multiplexer, one per bit with a constant."""
        plan = self.plan()
        return 2 * plan.count("mux4") + plan.count("lut")


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
    """Return each member node of ``schedule``'s level pairs -> its pair (ECP5 schedules
    only; none elsewhere)."""
    if schedule.family not in SLICE_MUX_FAMILIES:
        return {}
    graph, stage = schedule.graph, schedule.stage
    readers: dict[bytes, set[bytes]] = {}
    for nid in schedule.order:
        for u in graph.nodes[nid].inputs:
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
        t = graph.nodes[y2].type
        pair = MuxPair(y1, y2, (m1, m2), x, (f1, f2), op, t.signed, t.flat_width, (c1, c2))
        for member in pair.members:
            out[member] = pair
    return out


__all__ = ["LEVEL_OPS", "MUX2_INIT", "SLICE_MUX_FAMILIES", "MuxPair", "mux_pairs"]
