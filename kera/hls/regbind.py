"""Register binding on the modulo circle: pipeline registers shared at II > 1.

With aligned starts (``Schedule.aligned``) a transfer is in stage ``s`` exactly when the modulo
counter is ``s mod N``, so a pipeline register that holds a value from bank ``p`` to bank ``q``
is busy only at the counter residues ``p .. q`` (mod ``N``): it is loaded at the edge that ends
stage ``p`` and read up to stage ``q + 1``, whose edge may load it again. Values whose residue
arcs do not overlap can be one physical register. A value living more than ``N`` banks is cut
into copies of at most ``N`` banks, each loaded from the one before.

``bind_registers`` colours the copies left-edge style, in order of their first bank: a copy
goes to a register of its width whose arcs it does not meet, preferring one that already loads
from the same source (the same wire, the same shared unit's output or the same register: then
the register's input needs no multiplexer, only a wider write enable), then the fullest; with
``mix`` off only such registers (``Schedule.register_mux``: fewer LUTs, more FFs). Each
register's write enable is decoded from the counter at its copies' first residues; a stall
freezes the counter and every register alike. The estimate (``kera.hls.resources``) and the
emitter (``kera.rtl.registers``) read the same binding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kera.hls.pipeline import Schedule

Source = tuple[str, object]


@dataclass(frozen=True)
class Copy:
    """One load of a value into a register: it holds banks ``first .. last`` (inclusive)."""

    nid: bytes
    first: int
    last: int
    source: Source  # ("node", nid), ("unit", name) or ("reg", register index)


@dataclass(frozen=True)
class Register:
    """One physical register of ``width`` bits and the copies it holds (by first bank)."""

    width: int
    copies: tuple[Copy, ...]

    @property
    def sources(self) -> tuple[Source, ...]:
        """The distinct sources its input selects from, in order of first load."""
        return tuple(dict.fromkeys(c.source for c in self.copies))


@dataclass(frozen=True)
class RegisterBinding:
    """Every bank copy of every value mapped to a physical register."""

    ii: int
    registers: tuple[Register, ...]
    at: dict[tuple[int, bytes], int]  # (bank, node) -> register index
    unfolded_bits: int  # the bits without sharing between values (one register per copy)
    plain_bits: int  # the bits of one register per bank and value (the II = 1 datapath)

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


def _arc(first: int, last: int, ii: int) -> int:
    """Return the residues ``first .. last`` (mod ``ii``) as a bit mask."""
    mask = 0
    for s in range(first, last + 1):
        mask |= 1 << (s % ii)
    return mask


def bind_registers(schedule: Schedule, skip: frozenset[bytes] = frozenset(),
                   mix: bool = True) -> RegisterBinding:
    """Bind the pipeline registers of ``schedule`` (its ``crossing()``) to physical registers.

    ``skip`` are values the RTL never registers (constant tables read through their ROM);
    without ``mix`` a register only holds copies of one source (no input multiplexer).
    """
    graph, ii = schedule.graph, schedule.ii
    banks = schedule.crossing()
    held: dict[bytes, list[int]] = {}
    for s, bank in enumerate(banks):
        for nid in bank:
            if graph.nodes[nid].type.flat_width > 0 and nid not in skip:
                held.setdefault(nid, []).append(s)
    position = {nid: k for k, nid in enumerate(schedule.order)}
    bound = {nid: u.name for u in schedule.units if len(u.ops) > 1 for nid in u.ops}
    spans: list[tuple[int, int, int, bytes]] = []
    for nid, where in held.items():
        lo, hi = where[0], where[-1]
        for first in range(lo, hi + 1, ii):
            spans.append((first, min(first + ii - 1, hi), position[nid], nid))
    spans.sort(key=lambda t: (t[0], -(t[1] - t[0]), t[2]))
    full = (1 << ii) - 1
    occupied: list[int] = []
    widths: list[int] = []
    sources: list[set[Source]] = []
    copies: list[list[Copy]] = []
    at: dict[tuple[int, bytes], int] = {}
    by_width: dict[int, list[int]] = {}
    unfolded = 0
    for first, last, _, nid in spans:
        width = graph.nodes[nid].type.flat_width
        unfolded += width
        if first == held[nid][0]:
            source: Source = ("unit", bound[nid]) if nid in bound else ("node", nid)
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
    regs = tuple(Register(w, tuple(c)) for w, c in zip(widths, copies, strict=True))
    plain = sum(graph.nodes[n].type.flat_width * len(w) for n, w in held.items())
    return RegisterBinding(ii, regs, at, unfolded, plain)


def unregistered(schedule: Schedule) -> frozenset[bytes]:
    """Return the values the RTL never registers: constant tables read only by their ROM."""
    from kera.rtl.emit import constant_tables

    graph = schedule.graph
    result = graph.regions[schedule.region].result
    return frozenset(constant_tables(graph, schedule.order, result)[1])


__all__ = ["Copy", "Register", "RegisterBinding", "bind_registers", "unregistered"]
