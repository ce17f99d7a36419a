"""Register binding on the modulo circle: pipeline registers shared at II > 1.

With aligned starts (``Schedule.aligned``) a transfer is in stage ``s`` exactly when the modulo
counter is ``s mod N``, so a pipeline register that holds a value from bank ``p`` to bank ``q``
is busy only at the counter residues ``p .. q`` (mod ``N``): it is loaded at the edge that ends
stage ``p`` and read up to stage ``q + 1``, whose edge may load it again. Values whose residue
arcs do not overlap can be one physical register. A value living more than ``N`` banks is cut
into copies of at most ``N`` banks, each loaded from the one before.

``bind_registers`` colours the copies left-edge style, in order of their first bank: a copy
goes to a register of its width whose arcs it does not meet, preferring one that already loads
from the same source (the same signal -- a shared unit's output, or the same wiring of the same
registers, units and constants (``Signals``: the copies of a chain of values a folded loop
computes on one unit) -- or the same register: then the register's input needs no
multiplexer, only a wider write enable), then the fullest; with
``mix`` off only such registers (``Schedule.register_mux``: fewer LUTs, more FFs). Each
register's write enable is decoded from the counter at its copies' first residues; a stall
freezes the counter and every register alike. The estimate (``kera.hls.resources``) and the
emitter (``kera.rtl.registers``) read the same binding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kera.hls.sharing.classes import constant_array

if TYPE_CHECKING:
    from kera.hls.pipeline import Schedule

Source = tuple[str, object]


@dataclass(frozen=True)
class Copy:
    """One load of a value into a register: it holds banks ``first .. last`` (inclusive)."""

    nid: bytes
    first: int
    last: int
    source: Source  # ("sig", Signals key) or ("reg", register index)


@dataclass(frozen=True)
class Register:
    """One physical register of ``width`` bits and the copies it holds (by first bank)."""

    width: int
    copies: tuple[Copy, ...]
    tap: tuple[str, int] | None = None  # (unit, k): tap k of the unit's delay line

    @property
    def sources(self) -> tuple[Source, ...]:
        """The distinct sources its input selects from, in order of first load."""
        if self.tap is not None:
            return (("tap", self.tap),)
        return tuple(dict.fromkeys(c.source for c in self.copies))


@dataclass(frozen=True)
class RegisterBinding:
    """Every bank copy of every value mapped to a physical register."""

    ii: int
    registers: tuple[Register, ...]
    at: dict[tuple[int, bytes], int]  # (bank, node) -> register index
    unfolded_bits: int  # the bits without sharing between values (one register per copy)
    plain_bits: int  # the bits of one register per bank and value (the II = 1 datapath)
    signals: Signals | None = field(default=None, compare=False, repr=False)

    def signal(self, nid: bytes, stage: int) -> int:
        """Return the key of the signal that carries ``nid``'s value in ``stage``."""
        assert self.signals is not None
        return self.signals.key(nid, stage)

    def constant(self, key: int) -> int | None:
        """Return the value of a constant's signal key (None for other signals)."""
        return None if self.signals is None else self.signals.consts.get(key)

    @property
    def bits(self) -> int:
        """The flip-flops of the physical registers."""
        return sum(r.width for r in self.registers)

    @property
    def saves(self) -> bool:
        """Whether the binding needs fewer bits than a register per bank and value."""
        return self.bits < self.plain_bits

    def mux_bits(self) -> int:
        """Return the register-input multiplexer size: ``sum(width * (sources - 1))``."""
        return sum(r.width * (len(r.sources) - 1) for r in self.registers)


class Signals:
    """Keys of the physical signals that carry values (equal keys: the same signal always).

    A value read in a later stage than its own is the register of the bank before
    (``("r", register)``); in its own stage a shared unit's output (``("u", name)``), a
    constant, a parameter, state or block RAM read (itself), or else its op over its inputs'
    keys in that stage: the same wiring of the same signals is the same signal.
    """

    def __init__(self, schedule: Schedule, at: dict[tuple[int, bytes], int],
                 alias: dict[bytes, bytes] | None = None) -> None:
        from kera.hls.memory import bram_reads

        self.schedule, self.at = schedule, at
        self.alias = alias or {}  # reads of one register (a shared ROM port's): one signal
        #: the ROM read ports and the signals with their reads merged (``columns.merged_signals``)
        self.merged: tuple[tuple[tuple[bytes, ...], ...], Signals] | None = None
        self.bound = {nid: u.name for u in schedule.units if len(u.ops) > 1 for nid in u.ops}
        self.opaque = set(bram_reads(schedule)) | set(schedule.virtual)
        self.intern: dict[tuple[Any, ...], int] = {}
        self.consts: dict[int, int] = {}
        self.own: dict[bytes, int] = {}  # node -> its key in its own stage
        self.stages: dict[int, list[bytes]] = {}
        for nid in schedule.order:
            self.stages.setdefault(schedule.stage[nid], []).append(nid)
        self.done: set[int] = set()

    def _get(self, t: tuple[Any, ...]) -> int:
        k = self.intern.get(t)
        if k is None:
            k = self.intern[t] = len(self.intern)
        return k

    def key(self, nid: bytes, stage: int) -> int:
        """Return the key of ``nid``'s value as read in ``stage``."""
        graph = self.schedule.graph
        node = graph.nodes[nid]
        if node.op == "const" or constant_array(graph, nid):  # the same in every stage
            k = self._get(("c", nid))
            value = node.attr("value") if node.op == "const" else None
            if isinstance(value, int) and not isinstance(value, bool):
                self.consts[k] = value
            return k
        made = self.schedule.stage[nid]
        if made < stage:
            r = self.at.get((stage - 1, nid))
            return self._get(("n", nid) if r is None else ("r", r))
        if made not in self.done:
            self._stage(made)
        return self.own[nid]

    def _stage(self, s: int) -> None:
        self.done.add(s)
        graph = self.schedule.graph
        for nid in self.stages.get(s, []):
            node = graph.nodes[nid]
            if node.op == "const":
                continue
            if nid in self.bound:
                t: tuple[Any, ...] = ("u", self.bound[nid])
            elif nid in self.alias:
                t = ("p", self.alias[nid])
            elif node.op in ("param", "state") or nid in self.opaque:
                t = ("n", nid)
            else:
                t = (node.op, str(node.type), node.attrs,
                     tuple(self.key(i, s) for i in node.inputs))
            self.own[nid] = self._get(t)


def _arc(first: int, last: int, ii: int) -> int:
    """Return the residues ``first .. last`` (mod ``ii``) as a bit mask."""
    mask = 0
    for s in range(first, last + 1):
        mask |= 1 << (s % ii)
    return mask


def bind_registers(schedule: Schedule, skip: frozenset[bytes] = frozenset(),
                   mix: bool = True, lines: bool = False) -> RegisterBinding:
    """Bind the pipeline registers of ``schedule`` (its ``crossing()``) to physical registers.

    ``skip`` are values the RTL never registers (constant tables read through their ROM);
    without ``mix`` a register only holds copies of one source (no input multiplexer). With
    ``lines`` every value a shared unit computes is held in the unit's delay line instead: a
    chain of registers after its output, loaded at every enabled cycle, so that a value made in
    stage ``m`` is at tap ``s - m + 1`` in bank ``s`` -- the same register for every value the
    unit makes, whichever transfer or iteration it belongs to.
    """
    graph, ii = schedule.graph, schedule.ii
    banks = schedule.crossing()
    held: dict[bytes, list[int]] = {}
    for s, bank in enumerate(banks):
        for nid in bank:
            if graph.nodes[nid].type.flat_width > 0 and nid not in skip:
                held.setdefault(nid, []).append(s)
    position = {nid: k for k, nid in enumerate(schedule.order)}
    spans: list[tuple[int, int, int, bytes]] = []
    at: dict[tuple[int, bytes], int] = {}
    units = {nid: u for u in schedule.units if len(u.ops) > 1 for nid in u.ops} if lines else {}
    taps: dict[tuple[str, int], list[Copy]] = {}
    for nid, where in held.items():
        unit = units.get(nid)
        if unit is None:
            continue
        made = schedule.stage[nid]
        for s in where:
            tap = (unit.name, s - made + 1)
            taps.setdefault(tap, []).append(Copy(nid, s, s, ("tap", tap)))
    line_regs = [Register(units[c[0].nid].width, tuple(c), tap)
                 for tap, c in sorted(taps.items(), key=lambda t: (position[
                     units[t[1][0].nid].ops[0]], t[0][1]))]
    for r, reg in enumerate(line_regs):
        for c in reg.copies:
            at[(c.first, c.nid)] = r
    for nid, where in held.items():
        if nid in units:
            continue
        lo, hi = where[0], where[-1]
        for first in range(lo, hi + 1, ii):
            spans.append((first, min(first + ii - 1, hi), position[nid], nid))
    spans.sort(key=lambda t: (t[0], -(t[1] - t[0]), t[2]))
    full = (1 << ii) - 1
    base = len(line_regs)
    occupied: list[int] = [0] * base
    widths: list[int] = [r.width for r in line_regs]
    sources: list[set[Source]] = [set(r.sources) for r in line_regs]
    copies: list[list[Copy]] = [list(r.copies) for r in line_regs]
    signals = Signals(schedule, at)
    by_width: dict[int, list[int]] = {}
    unfolded = sum(r.width * len(r.copies) for r in line_regs)
    for first, last, _, nid in spans:
        width = graph.nodes[nid].type.flat_width
        unfolded += width
        if first == held[nid][0]:
            source: Source = ("sig", signals.key(nid, first))
        else:
            source = ("reg", at[(first - 1, nid)])
        mask = _arc(first, last, ii)
        best, best_key = None, None
        if mask != full:
            for r in by_width.get(width, []):
                if occupied[r] & mask or not mix and sources[r] != {source}:
                    continue
                key = (source in sources[r], bin(occupied[r]).count("1"), -r)
                if best_key is None or key > best_key:
                    best, best_key = r, key
        if best is None:
            best = len(widths)
            occupied.append(0)
            widths.append(width)
            sources.append(set())
            copies.append([])
            by_width.setdefault(width, []).append(best)
        occupied[best] |= mask
        sources[best].add(source)
        copies[best].append(Copy(nid, first, last, source))
        for s in range(first, last + 1):
            at[(s, nid)] = best
    regs = tuple(line_regs) + tuple(Register(w, tuple(c)) for w, c in
                                    zip(widths[base:], copies[base:], strict=True))
    plain = sum(graph.nodes[n].type.flat_width * len(w) for n, w in held.items())
    return RegisterBinding(ii, regs, at, unfolded, plain, signals)


def bind(schedule: Schedule, skip: frozenset[bytes] = frozenset(),
         mix: bool = True) -> RegisterBinding:
    """Return the cheaper of the bindings with and without delay lines (``bind_registers``).

    The cost is the register bits plus the multiplexer bits of the registers' inputs and of
    the shared units' operands (``port_bits``); on a tie, no delay lines.
    """
    plain = bind_registers(schedule, skip, mix)
    if not any(len(u.ops) > 1 for u in schedule.units):
        return plain
    lined = bind_registers(schedule, skip, mix, lines=True)
    costs = [b.bits + b.mux_bits() + port_bits(schedule, b) for b in (plain, lined)]
    return lined if costs[1] < costs[0] else plain


def port_bits(schedule: Schedule, binding: RegisterBinding) -> int:
    """Return the multiplexer bits of the shared units' operands: ``width * (sources - 1)``.

    Distinct constants count as one source (a ROM on the counter).
    """
    graph = schedule.graph
    total = 0
    for u in schedule.units:
        if len(u.ops) < 2:
            continue
        for j, width in enumerate(u.in_widths):
            keys = {binding.signal(graph.nodes[n].inputs[j], schedule.stage[n]) for n in u.ops}
            consts = {k for k in keys if binding.constant(k) is not None}
            total += width * (len(keys) - len(consts) + (1 if consts else 0) - 1)
    return total


def unregistered(schedule: Schedule) -> frozenset[bytes]:
    """Return the values the RTL never registers: constant tables read only by their ROM."""
    from kera.rtl.emit import constant_tables

    graph = schedule.graph
    result = graph.regions[schedule.region].result
    return frozenset(constant_tables(graph, schedule.order, result)[1])


__all__ = ["Copy", "Register", "RegisterBinding", "Signals", "bind", "bind_registers", "port_bits",
           "unregistered"]
