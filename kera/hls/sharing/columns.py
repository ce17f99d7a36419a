"""The shared units' multiplexers bit by bit: the columns yosys builds once.

An operand multiplexer of a unit (``kera.rtl.sharing``) is, for each bit, a function of the
modulo counter and of one bit of each source: a *column*, the source bit that every counter
slot of the unit reads. yosys bit-blasts the AND-OR and merges identical gates (``opt_merge``
after ``techmap``), so two operand bits with the same column are one multiplexer bit, whatever
port or unit they belong to: sha256's ``rotr(e, 6)``, ``rotr(e, 11)`` and ``e`` operands of
three units read the same 64 registers by the same counter slots, and their 96 multiplexer
bits are 32 columns. Wiring is looked through to the bits of the signals it rewires
(constant shifts and rotations, slices, casts, concatenations in the op's own stage).

A column whose slots all read one bit is a wire; one whose slots read only constants is a
ROM bit on the counter (a LUT per 16 slots); otherwise it costs ``lut_per_input`` LUTs per
source beyond the first (a constant 0 or 1 is a source).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kera.hls.memory import bram_reads
from kera.hls.sharing.classes import SHIFTS, constant_array
from kera.ir.types import IntType

if TYPE_CHECKING:
    from kera.hls.pipeline import Schedule
    from kera.hls.regbind import Signals

#: A source bit: ``(signal key, bit)`` or ``("k", 0 | 1)`` for a constant bit.
Bit = tuple[int | str, int]
#: A column: the source bit each slot of a unit reads, ``(slot, bit)`` in slot order.
Column = tuple[tuple[int, Bit], ...]
_ZERO: Bit = ("k", 0)


def merged_signals(schedule: Schedule) -> Signals:
    """Return the signal keys of an aligned schedule's register binding as yosys merges them:
    the reads that share a ROM read port (``rom.read_ports``) are its one data register, so
    the same logic of them is one circuit (``opt_merge``) and one source of a multiplexer.
    AES-128 at II 8 on ECP5: its register multiplexers 1,280 LUTs estimated, 766 so; yosys
    0.70 builds them in 707 (the core with and without them, their sources kept)."""
    from kera.hls.regbind import Signals
    from kera.hls.rom import read_ports

    binding = schedule.register_binding
    assert binding is not None and binding.signals is not None
    ports = tuple(tuple(p) for p in read_ports(schedule) if len(p) > 1) if schedule.roms else ()
    if not ports:
        return binding.signals
    merged = binding.signals.merged  # one per binding: its keys are memoised as they are asked
    if merged is None or merged[0] != ports:
        merged = binding.signals.merged = (
            ports, Signals(schedule, binding.at, {r: p[0] for p in ports for r in p}))
    return merged[1]


class BitSources:
    """The signal bits (``(signal key, bit)`` or ``("k", 0 | 1)``) that carry a value's bits
    in a stage, wiring looked through (``RegisterBinding.signal`` keys the signals)."""

    def __init__(self, schedule: Schedule) -> None:
        binding = schedule.register_binding
        assert binding is not None and binding.signals is not None
        self.schedule, self.binding = schedule, binding
        self.signals = merged_signals(schedule)
        self.bound = binding.signals.bound
        self.memo: dict[tuple[bytes, int], tuple[Bit, ...]] = {}

    def bits(self, nid: bytes, stage: int) -> tuple[Bit, ...]:
        """Return the source of each bit (bit 0 first) of ``nid`` as read in ``stage``."""
        key = (nid, stage)
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = self._bits(nid, stage)
        return got

    def _bits(self, nid: bytes, stage: int) -> tuple[Bit, ...]:
        s = self.schedule
        node = s.graph.nodes[nid]
        w = node.type.flat_width
        value = node.attr("value") if node.op == "const" else None
        if isinstance(value, int) and not isinstance(value, bool):
            return tuple(("k", (value >> i) & 1) for i in range(w))
        if constant_array(s.graph, nid):  # a table: its constants in every stage
            return tuple(b for e in node.inputs for b in self.bits(e, stage))
        if s.stage[nid] == stage and nid not in self.bound:
            wired = self._wired(nid, stage, w)
            if wired is not None:
                return wired
        sig = self.signals.key(nid, stage)
        return tuple((sig, i) for i in range(w))

    def _wired(self, nid: bytes, stage: int, w: int) -> tuple[Bit, ...] | None:
        g = self.schedule.graph
        node = g.nodes[nid]
        ins = node.inputs
        if node.op in SHIFTS:
            amount = g.nodes[ins[1]].attr("value") if g.nodes[ins[1]].op == "const" else None
            if not isinstance(amount, int) or isinstance(amount, bool) or w == 0:
                return None
            x = self.bits(ins[0], stage)
            k = amount
            if node.op == "rotr":
                return tuple(x[(i + k) % w] for i in range(w))
            if node.op == "rotl":
                return tuple(x[(i - k) % w] for i in range(w))
            if node.op == "shl":
                return tuple(x[i - k] if i >= k else _ZERO for i in range(w))
            fill = x[-1] if _signed(node.type) else _ZERO
            return tuple(x[i + k] if i + k < w else fill for i in range(w))
        if node.op == "slice":
            lo = int(node.attr("lo"))
            return self.bits(ins[0], stage)[lo:lo + w]
        if node.op == "cast" and isinstance(g.nodes[ins[0]].type, IntType):
            x = self.bits(ins[0], stage)
            fill = x[-1] if x and _signed(g.nodes[ins[0]].type) else _ZERO
            return (x + (fill,) * w)[:w]
        if node.op == "concat":
            high, low = self.bits(ins[0], stage), self.bits(ins[1], stage)
            return low + high
        if node.op in ("array", "tuple"):  # element (field) 0 in the low bits
            return tuple(b for i in ins for b in self.bits(i, stage))
        if node.op == "tuple_get":
            fields = g.nodes[ins[0]].type.elems  # type: ignore[attr-defined]
            lo = sum(f.flat_width for f in fields[:int(node.attr("index"))])
            return self.bits(ins[0], stage)[lo:lo + w]
        if node.op in ("array_index", "array_update"):
            return self._element(node.op, ins, stage, w)
        return None

    def _element(self, op: str, ins: tuple[bytes, ...], stage: int, w: int
                 ) -> tuple[Bit, ...] | None:
        """Return the bits of an array read or write at a constant index (an index past the
        end reads the last element and writes nothing), or None for a variable index."""
        g = self.schedule.graph
        k = g.nodes[ins[1]].attr("value") if g.nodes[ins[1]].op == "const" else None
        if not isinstance(k, int) or isinstance(k, bool):
            return None
        arr_t = g.nodes[ins[0]].type
        n, ew = arr_t.length, arr_t.elem.flat_width  # type: ignore[attr-defined]
        x = self.bits(ins[0], stage)
        if op == "array_index":
            lo = min(k, n - 1) * ew
            return x[lo:lo + w]
        if k >= n:
            return x
        return x[:k * ew] + self.bits(ins[2], stage) + x[(k + 1) * ew:]


def _signed(t: object) -> bool:
    return isinstance(t, IntType) and t.signed


def unit_columns(schedule: Schedule) -> dict[str, list[Column]]:
    """Return, per shared unit (by name), the columns its operand multiplexers need that no
    earlier unit's (in ``schedule.units`` order) already has: each column counted once."""
    src = BitSources(schedule)
    graph, ii = schedule.graph, schedule.ii
    seen: set[Column] = set()
    out: dict[str, list[Column]] = {}
    for unit in schedule.units:
        if len(unit.ops) < 2:
            continue
        mine: list[Column] = []
        for j, width in enumerate(unit.in_widths):
            reads = [(schedule.stage[n] % ii, src.bits(graph.nodes[n].inputs[j], schedule.stage[n]))
                     for n in unit.ops]
            mine += _new_columns(reads, width, seen)
        out[unit.name] = mine
    return out


def _new_columns(reads: list[tuple[int, tuple[Bit, ...]]], width: int,
                 seen: set[Column]) -> list[Column]:
    """Return the columns of a ``width``-bit multiplexer whose slots read ``reads`` (slot,
    source bits) that are not wires and not in ``seen`` (added to it)."""
    out: list[Column] = []
    for k in range(width):
        col = tuple(sorted((slot, bits[k] if k < len(bits) else _ZERO) for slot, bits in reads))
        if len({b for _, b in col}) > 1 and col not in seen:
            seen.add(col)
            out.append(col)
    return out


@dataclass(frozen=True)
class RegisterBits:
    """What yosys keeps of the pipeline registers shared on the modulo circle
    (``kera.hls.regbind``), bit by bit (``kept_register_bits``)."""

    flops: tuple[int, ...]  # per register (binding order): the bits that are flip-flops
    mux: tuple[Column, ...]  # the input multiplexers' columns, each once


def kept_register_bits(schedule: Schedule) -> RegisterBits:
    """Return the flip-flops and multiplexer columns of the registers shared on the modulo
    circle as yosys keeps them.

    A register bit is a column: the source bit each copy's load slot reads. yosys removes the
    bits no logic, port or live register reads (``opt_clean``), keeps none for a column of
    constants, and merges the bits, of one register or of two, that load the same sources at
    the same slots -- the same input and write enable (``opt_merge``): a sign extension, or
    sort8's array at II 2 (iCE40, 55 MHz) in a 64-bit register beside the registers of its
    bytes, of which yosys keeps 4 flip-flops. A column whose slots read different sources is
    a multiplexer bit. A unit's delay-line taps are kept whole."""
    binding = schedule.register_binding
    assert binding is not None and binding.signals is not None
    src = BitSources(schedule)
    ii = schedule.ii
    reads = [[(c.first % ii, src.bits(c.nid, c.first)) for c in reg.copies]
             for reg in binding.registers]
    live = _live_register_bits(schedule, src, reads)
    seen: set[Column] = set()
    flops: list[int] = []
    mux: list[Column] = []
    for index, reg in enumerate(binding.registers):
        if reg.tap is not None:
            flops.append(reg.width)
            continue
        kept = 0
        for k in range(reg.width):
            col = tuple(sorted((slot, bits[k] if k < len(bits) else _ZERO)
                               for slot, bits in reads[index]))
            if (live is not None and (index, k) not in live or col in seen
                    or all(b[0] == "k" for _, b in col)):
                continue
            seen.add(col)
            kept += 1
            if len({b for _, b in col}) > 1:
                mux.append(col)
        flops.append(kept)
    return RegisterBits(tuple(flops), tuple(mux))


def _live_register_bits(schedule: Schedule, src: BitSources,
                        reads: list[list[tuple[int, tuple[Bit, ...]]]]
                        ) -> set[tuple[int, int]] | None:
    """Return the (register, bit) pairs some logic, the output port or a live register reads
    (None for a design with state, whose registers are all taken as read). A node read
    earlier than its reader's stage (a ROM address, a block RAM's read, ``extra_uses``) has
    each of its stages' bits taken as read."""
    graph = schedule.graph
    region = graph.regions[schedule.region]
    binding = schedule.register_binding
    assert binding is not None and binding.signals is not None
    if region.states:
        return None
    stage = schedule.stage
    read: set[Bit] = set()
    early = set(schedule.roms) | set(schedule.virtual) | set(bram_reads(schedule))
    for nid in schedule.order:
        node = graph.nodes[nid]
        if node.op in ("const", "param") or nid not in src.bound and src._wired(
                nid, stage[nid], node.type.flat_width) is not None:
            continue  # wiring: read where its own readers read it
        for i in node.inputs:
            if nid in early:
                for s in range(stage[i], stage[nid] + 1):
                    read.update(src.bits(i, s))
            else:
                read.update(src.bits(i, stage[nid]))
    for nid, used in schedule.extra_uses.items():
        for s in range(stage[nid], used + 1):
            read.update(src.bits(nid, s))
    read.update(src.bits(region.result, schedule.latency))
    keys = src.signals.intern
    live: set[tuple[int, int]] = set()
    more = True
    while more:  # a live register reads its sources: registers loaded from registers
        more = False
        for index, reg in enumerate(binding.registers):
            key = keys.get(("r", index))
            for k in range(reg.width):
                if (index, k) in live or (key, k) not in read:
                    continue
                live.add((index, k))
                for _, bits in reads[index]:
                    if k < len(bits) and bits[k] not in read:
                        read.add(bits[k])
                        more = True
    return live


def column_lut(col: Column, lut_per_input: float) -> float:
    """Return the LUTs of one multiplexer bit: a ROM bit on the counter where every slot
    reads a constant, else ``lut_per_input`` per source beyond the first."""
    sources = {b for _, b in col}
    if all(b[0] == "k" for b in sources):
        return float(math.ceil(len(col) / 16))
    return lut_per_input * (len(sources) - 1)


__all__ = ["Bit", "BitSources", "Column", "RegisterBits", "column_lut", "kept_register_bits",
           "merged_signals", "unit_columns"]
