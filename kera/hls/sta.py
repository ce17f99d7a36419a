"""Static timing of a scheduled pipeline at the level of bits, as nextpnr times the netlist.

The scheduler chains one delay per node (``CostModel.delay``): a bitwise node costs the LUT
levels it adds to the deepest of its inputs. That is a word-level view of a bit-level circuit
and it errs both ways: a node's delay is that of its deepest bit, so a path that takes a
shallow bit of it (a slice, a cast, a shift) pays for the deep one again (lfsr16: 26 levels
chained where its network is 18 deep); and the cover it counts levels in is an area cover,
while yosys's ``abc`` maps for delay first -- it duplicates a shared gate rather than add a
level, and balances a chain of gates around its late inputs (gray's `from_gray` is 2 LUT
levels, not 3).

:func:`analyse_bits` times the schedule the way the tools build it:

* the bit network of the pipeline (``kera.hls.lutmap.ToolNetwork``, registers cut where the
  schedule puts them) is split into 2-input nodes, a gate read once being merged into its
  reader and every merged cone balanced around its earliest signals, as abc balances (a
  select is not merged with its neighbours: abc keeps chains of selects nearly in order, and
  with K-input LUTs alone (iCE40) a select's cuts do not reach into the cone of a condition
  other gates share: the flag-and-count trees of ``clz``/``ctz`` are a LUT level per select
  in yosys 0.70's netlist, u32 ``ctz`` at 55 MHz on iCE40 4 levels in its first stage,
  timed 3 before: 96.8 MHz estimated, 67.2 placed; now 80.3 (ECP5's wide functions are
  multiplexers: PFUMX/L6MUX21 take a select and its condition's LUTs in one level));
* every 2-input node keeps its ``CUTS`` best cuts of up to the family's widest one-level
  function (K = 4; ECP5's abc9 library: 7, with the wide LUTs' extra delay), ranked by arrival:
  a cut arrives a LUT (``lut_ns``) after its latest leaf has crossed its net (``net_delay``:
  the fitted routing, by the leaf's fanout and the design's size) -- the delay-optimal
  mapping abc's ``&if`` computes;
* the cells the Verilog instantiates on ECP5 are timed as what they are: a bit of a 4:1
  multiplexer pair (``kera.hls.muxpair``) is a LUT4 and the PFUMX after the latest of its
  sources and selects (the inner selects are inside it), a four-bit zero flag
  (``kera.hls.zeroflag``) a LUT4 after its bits, and no reader's LUT absorbs either (rotl32:
  two pairs and a LUT on nextpnr's path as on this one); a select that yosys folds into the
  flip-flops' synchronous reset (``resources.registered_selects``) is no level;
* a leaf bit arrives at 0 where a register or a port drives it; an arithmetic node (a carry
  chain, a DSP, a ROM, a block RAM read) starts when the latest bit it reads arrives (plus
  what that bit's net takes over the one its fitted curve has) and its output bits arrive its
  fitted delay later (``CostModel.delay``, as the scheduler has it; a block RAM read:
  ``memory.read_delay``), plus what the curve's own nets take more in a design bigger than
  the one it was placed in (a LUT-only op: ``_Mapper._grown_nets``) and, for a carry chain
  fed a signal carry in, the logic cell nextpnr adds at its foot (``carry_in_ns``).

A stage's delay is the latest arrival of a bit in it; a LUT only a flip-flop reads shares its
cell (``ff_packing_ns`` earlier). The critical path is followed back from it through the
chosen cuts and the arithmetic nodes' latest inputs. The valid/ready logic has a path of its
own to every register's enable (``handshake_ns``).

A shared unit (ii > 1, ``Schedule.bound``) is one circuit for all its ops: its output bits are
leaves that every op's users read, and it starts when the latest operand of *any* of its ops
has crossed the operand multiplexers (``_Mapper._unit_op``), since the multiplexer's paths
from every source are real paths of the netlist, which nextpnr times whatever the counter
selects. A multiplexer bit is one LUT level (a wide function on ECP5) over its sources and the
counter's decoded selects, which reach it through a decode LUT and two nets. The units' starts
depend on each other through the stages, so the walk is repeated with the last one's starts
(``UNIT_ROUNDS``) until they stop moving. A pipeline register shared on the modulo circle that
loads several sources (``kera.hls.regbind``) has such a multiplexer before its flip-flops: the
value it loads at the end of its own stage crosses it (``_Mapper._register_muxes``).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kera.hls.lutcover import Source, StageCover, cover_of
from kera.hls.lutmap import ToolNetwork, is_bitwise, lut_levels, tool_network
from kera.hls.memory import read_delay
from kera.hls.muxpair import mux_pairs
from kera.hls.pipeline import Schedule
from kera.hls.resources import registered_selects
from kera.hls.rom import port_blocks, read_ports
from kera.hls.rom import read_ns as rom_read_ns
from kera.hls.timing import MUL_OPS, ORDERINGS, SUBTRACTING, CostModel, model_query
from kera.hls.zeroflag import zero_flags
from kera.ir.graph import Node

#: Cuts kept per 2-input node (priority cuts).
CUTS = 6
#: ECP5's PFUMX from its select to its output (yosys 0.70 ``cells_sim``: C0 -> Z 151 ps; the
#: LUT outputs ALUT/BLUT -> Z 98 ps).
PFUMX_NS = 0.151
#: The most walks of a schedule with shared units (``analyse_bits``): each takes the units'
#: start times from the last; they rise until no unit's does.
UNIT_ROUNDS = 4
#: Ops built on carry chains or DSPs whatever their fitted area at a width says (an ordering
#: or a min/max can be charged to its partner, a sum of 4 bits on ECP5 is LUT logic): their
#: fitted nets do not grow with the design (``_Mapper._grown_nets``).
_CHAINED = frozenset({"add", *SUBTRACTING, *MUL_OPS})


@dataclass(frozen=True)
class Arc:
    """One step of a timed path: node ``nid`` from ``start_ns`` for ``delay_ns``."""

    nid: bytes
    start_ns: float
    delay_ns: float
    #: what the step is where it is not the node's op: ``"mux"``, a shared unit's operand
    #: multiplexers and its wait for the latest operand of any of its ops
    what: str = ""


@dataclass(frozen=True)
class BitTiming:
    """Per-stage latest arrivals (ns after the stage's registers), the slowest path, and the
    register-to-register delay of the handshake logic (``handshake_ns``; 0: not modelled)."""

    stage_delays: tuple[float, ...]
    path: tuple[Arc, ...]
    handshake_ns: float = 0.0


def lut_delays(costs: CostModel) -> list[float]:
    """Return the delay (ns) of one LUT over ``s`` inputs, by ``s - 1``: ``lut_ns`` up to K
    inputs; ECP5's wide functions (LUT5-7: LUT4s joined by PFUMX/L6MUX21) add the library's
    extra delay over a LUT4's."""
    net = getattr(costs.model, "lut_network", {})
    k = costs.lut_k
    lut = float(net.get("lut_ns", costs.level_ns / 2))
    lib = net.get("library")
    wide = max(k, costs.lut_wide)
    if not lib:
        return [lut] * wide
    luts = lib["luts"]
    base = float(luts[k - 1][1])
    return [lut + max(0.0, float(luts[min(s, len(luts)) - 1][1]) - base) / 1000.0
            for s in range(1, wide + 1)]


def net_delay(costs: CostModel, size: float) -> Callable[[int], float]:
    """Return the routed delay (ns) of a net by its fanout in a design of ``size`` LUTs:
    ``lut_network.routing`` (``a + b log2(fanout) + c log2(size)``, fitted to the nets of
    placed critical paths) where the model has it, else the median ``net_ns``."""
    net = getattr(costs.model, "lut_network", {})
    fit = net.get("routing")
    if not fit:
        flat = float(net.get("net_ns", costs.level_ns / 2))
        return lambda fanout: flat
    a, b, c = (float(fit[k]) for k in ("a", "fanout", "size"))
    base = a + c * math.log2(max(2.0, size))
    table = [base + b * math.log2(f) for f in range(1, 65)]
    return lambda fanout: table[fanout - 1] if fanout <= 64 else base + b * math.log2(fanout)


def pin_delays(costs: CostModel) -> tuple[float, ...]:
    """Return the delay (ns) through a LUT cell from each of its pins where they differ
    (``lut_network.pin_ns``; iCE40's SB_LUT4: I3 is the fast one), else none: the cells of
    a cover (``kera.hls.lutcover``) take their inputs on the fastest pins, the latest on the
    fastest, and are timed by the pin each input is on."""
    return tuple(float(x) for x in getattr(costs.model, "lut_network", {}).get("pin_ns", ()))


def cover_net(costs: CostModel) -> Callable[[int], float] | None:
    """Return the routed delay (ns) of a net between the LUT cells of a cover
    (``kera.hls.lutcover``) by its fanout: ``lut_network.cover_net`` (``a + b log2(fanout)``),
    None where the model has none (the nets of ``net_delay`` then)."""
    fit = getattr(costs.model, "lut_network", {}).get("cover_net")
    if not fit:
        return None
    a, b = float(fit["a"]), float(fit["fanout"])
    return lambda fanout: a + b * math.log2(max(1, fanout))


def carry_in_ns(costs: CostModel) -> float:
    """Return what a carry chain whose carry in is a signal takes over the fitted ``add``
    (``lut_network.carry_in_ns``; 0: not modelled).

    iCE40: a chain's first ``SB_CARRY`` takes its carry in from the chain below it or a
    constant; a signal (``x + c``'s lowest bits pass ``x``'s bit on as the carry where ``c``
    has a 1: ``ice40_opt`` removes those cells) enters through a logic cell that nextpnr adds
    to the chain's foot (``$nextpnr_ICESTORM_LC``, 0.675 ns I1 -> CIN on every placed path
    that has one: cordic's ``z - atan`` at 55 MHz, fir_q15's and fir_q15_shifts'). The fitted
    ``add`` (two registers, carry in 0) has none."""
    return float(getattr(costs.model, "lut_network", {}).get("carry_in_ns", 0.0))


def handshake_ns(schedule: Schedule, costs: CostModel, size: float,
                 net: ToolNetwork | None = None) -> float:
    """Return the register-to-register delay of the valid/ready logic (0: not modelled).

    The emitted core moves every bank on one enable, ``en = ~out_valid | out_ready`` (a
    state register: on the transfer), and the first valid flip-flop loads ``in_valid & en``:
    from the last valid flip-flop, ``levels`` LUTs (``levels_state`` with state) to every
    flip-flop's clock enable and the first valid's input. Its nets are the model's measured
    ones (``handshake.nets``: ``[first, between LUTs, last]``); the LUTs take ``lut_ns``, the
    first ``handshake.first_lut_ns`` where the model has it (iCE40: the valid enters on I2).
    Like every estimate it predicts the median of nextpnr's seeds 1, 2, 3: one seed of a long
    ECP5 pipeline may route the path from its last stage back to its first across the die
    (sort8 at 150 MHz: 7.26 ns on seed 1), the median seed does not (4.47 ns, a data path).
    Where the model has ``handshake.enable_fanout`` (ECP5), the enable's net grows with the
    registers it reaches: the path is at least ``a + per_log2 * log2(bits)`` of the pipeline
    banks' flip-flops (``register_bits``; xtea at 150 MHz, 28k flip-flops: 8.85 ns placed,
    8.86 by the fit)."""
    hs = getattr(costs.model, "handshake", None)
    if not hs:
        return 0.0
    levels = int(hs["levels_state"] if schedule.state is not None else hs["levels"])
    first, inner, last = (float(x) for x in hs["nets"])
    lut = float(getattr(costs.model, "lut_network", {}).get("lut_ns", costs.level_ns / 2))
    path = (float(hs["clk_to_q_ns"]) + first + float(hs.get("first_lut_ns", lut))
            + (levels - 1) * (lut + inner) + last + float(hs["setup_ns"]))
    fanout = hs.get("enable_fanout")
    if fanout:  # the enable's net spans a design of many registers
        def grown(bits: float) -> float:
            return float(fanout["a_ns"]) + float(fanout["per_log2_ns"]) * math.log2(bits)

        graph = schedule.graph
        banks = schedule.crossing()
        bits = sum(graph.nodes[n].type.flat_width for bank in banks for n in bank)
        if bits > 1 and grown(bits) > path:  # an upper bound: count the flip-flops kept
            bits = register_bits(schedule, net or registered_network(schedule, costs), banks)
            if bits > 1:
                path = max(path, grown(bits))
    return path


def register_bits(schedule: Schedule, net: ToolNetwork, banks: list[list[bytes]]) -> int:
    """Return the pipeline banks' flip-flops as the resource estimate counts them
    (``resources._bank_bits``: the distinct bits a later stage reads)."""
    from kera.hls.resources import _bank_bits, _read_leaves

    read = _read_leaves(net, schedule.roms)
    stage = schedule.stage
    return sum(_bank_bits(net, bank, read, {n for n in bank if stage[n] < k})
               for k, bank in enumerate(banks))


def registered_network(schedule: Schedule, costs: CostModel) -> ToolNetwork:
    """Return the bit network of ``schedule`` with its pipeline registers; a select that
    yosys folds into the flip-flops' synchronous reset (``registered_selects``) is its other
    arm, its condition a signal the flip-flops read, as in the resource estimate."""
    graph, stage = schedule.graph, schedule.stage
    return tool_network(graph, costs.lut_k, cut=lambda u, v: stage[u] < stage[v],
                        order=graph.topo_order(graph.regions[schedule.region]),
                        wide=costs.lut_wide, resets=registered_selects(schedule),
                        units=frozenset(schedule.bound()))


def design_size(schedule: Schedule, costs: CostModel) -> float:
    """Return the LUTs of ``schedule``'s design as placed, roughly, as the registers do not
    change it: the cover of its bit network and every other node's fitted LUTs (ECP5: carry
    cells' LUT sites too), block RAMs and their reads left out. The nets' delays grow with it
    (``net_delay``)."""
    from kera.hls.memory import bram_reads

    graph = schedule.graph
    nodes = graph.nodes
    skip = schedule.virtual | set(bram_reads(schedule))
    luts = costs.network_luts(graph)
    total = float(sum(n for nid, n in luts.items() if nid not in skip))
    sites = float(getattr(costs.model, "carry_lut_sites", 0.0))
    for nid in schedule.order:
        node = nodes[nid]
        if nid not in skip and not is_bitwise(graph, node):
            area = costs.area(graph, node)
            total += area["lut"] + sites * area["carry"]
    return total


def analyse_bits(schedule: Schedule, costs: CostModel, size: float | None = None,
                 net: ToolNetwork | None = None) -> BitTiming:
    """Return the bit-level timing of ``schedule``; ``size`` is the design's LUT count, which
    the nets' delays grow with (default ``design_size``)."""
    if size is None:
        size = design_size(schedule, costs)
    net = net if net is not None else registered_network(schedule, costs)
    wire = net_delay(costs, size)
    starts: dict[str, float] = {}
    for _ in range(UNIT_ROUNDS):
        mapper = _Mapper(schedule, costs, net, wire, size, starts)
        bits = mapper.run()
        if all(t <= starts.get(u, 0.0) + 1e-9 for u, t in mapper.unit_in.items()):
            break
        starts = {u: max(t, starts.get(u, 0.0)) for u, t in mapper.unit_in.items()}
    return BitTiming(bits.stage_delays, bits.path, handshake_ns(schedule, costs, size, net))


class _Mapper:
    """The delay-oriented mapping of one network, with arithmetic between its cones."""

    def __init__(self, schedule: Schedule, costs: CostModel, net: ToolNetwork,
                 wire: Callable[[int], float], size: float = 0.0,
                 unit_starts: dict[str, float] | None = None) -> None:
        self.schedule, self.costs, self.net = schedule, costs, net
        self.size = size
        self.rom_blocks = port_blocks(schedule) if schedule.roms else 0
        #: the shared units' ops, their units' start times from the last walk, and this
        #: walk's (the latest operand of any op of the unit past its multiplexers)
        self.units = schedule.bound()
        self.unit_starts = unit_starts or {}
        self.unit_in: dict[str, float] = {}
        binding = schedule.register_binding if schedule.aligned else None
        self.sel_fanout = max(1, sum(w for u in schedule.units if len(u.ops) > 1
                                     for w, n in zip(u.in_widths, u.sources, strict=False)
                                     if n > 1) + (binding.mux_bits() if binding else 0))
        self.levels = lut_delays(costs)
        self.kmax = len(self.levels)
        #: the 4:1 multiplexers written as LUT4 + LUT4 + PFUMX (``kera.hls.muxpair``): a LUT4
        #: level and the PFUMX's select-to-output delay
        pairs = mux_pairs(schedule)
        self.triples = {p.second for p in pairs.values()}
        self.triple_ns = self.levels[costs.lut_k - 1] + PFUMX_NS
        #: the bits written as a triple: one cell from the pair's sources and selects, a
        #: signal no reader's LUT absorbs; the inner selects' gates are inside it (folded)
        self.pair_gates = {b[2] for p in set(pairs.values()) for b, how in zip(
            net.bits.get(p.second, ()), p.plan(p.constants(schedule.graph)), strict=False)
            if how == "mux4" and b[2] >= 0}
        inner = {nid for nid, p in pairs.items() if nid != p.second}
        #: the four-bit zero flags written as a LUT4 of their bits (``kera.hls.zeroflag``): one
        #: level from the bits, a signal no reader's LUT absorbs
        self.cells = set(zero_flags(schedule))
        #: Only K-input LUTs (iCE40): no wide function takes a select with its condition.
        self.narrow = self.kmax <= costs.lut_k
        self.wire = wire
        live = net._live()
        fanin = net._fanin
        readers = Counter(h for g in live for h in fanin[g][1])
        self.leaf_fanout = Counter(~n for g in live for n in fanin[g][0])
        self.gate_fanout = readers
        self._arith_fanout()
        # a gate read once folds into its reader and the cone is rebalanced, as abc balances
        # and/or/xor trees: only across one associative operator (a term `b & x` of an xor
        # stays a term: gf_mul's 16-input bits are 4 LUT levels, not the 2 of any pairing), and
        # not into or out of a select (measured: abc keeps chains of selects nearly in order,
        # gcd16's steps; a select's own three inputs are balanced)
        reader = {h: g for g in live for h in fanin[g][1]}
        self.merged = {g for g in live if g not in net.roots and (fanin[g][2] in inner or (
            readers[g] == 1 and net.associative(g, reader[g]) and fanin[g][2] not in self.cells))}
        self._plan_covers(live)
        self.pending = [g for g in live if g not in self.merged]  # creation order
        self.next = 0
        # signals: leaf bits and 2-input nodes, by index
        self.arrival: list[float] = []
        #: arrival at the inputs the signal's net reaches (its routed delay by fanout added)
        self.reach: list[float] = []
        self.cuts: list[list[frozenset[int]]] = []
        self.best: list[frozenset[int] | None] = []
        self.owner: list[bytes | None] = []
        self.leaf_signal: dict[int, int] = {}
        self.leaf_arrival: dict[int, float] = {}
        self.leaf_owner: dict[int, bytes] = {}
        self.top: dict[int, int] = {}
        self.node_arrival: dict[bytes, float] = {}
        self.node_start: dict[bytes, float] = {}
        # a combinational DSP's product crosses a longer net to the fabric the more DSPs
        # the design spreads over the die (``CostModel.dsp_net_growth_ns``)
        graph = schedule.graph
        dsp = {nid: costs.area(graph, graph.nodes[nid])["dsp"] for nid in net.bits
               if graph.nodes[nid].op in MUL_OPS}
        self.dsp_growth = costs.dsp_net_growth_ns(sum(dsp.values()))
        lut_net = getattr(costs.model, "lut_network", {})
        self.inverter_ns = float(lut_net.get("lut_ns", 0.0)) + wire(1) if costs._inverter_rate(
            8) > 0 else 0.0  # a LUT and the net on to the chain (``_subtrahend``)
        self.on_dsp = {nid for nid, n in dsp.items() if n > 0 and nid not in schedule.pipelined}
        # a pipelined DSP's product leaves its output register later than a flip-flop's and
        # crosses a longer net to the fabric (``CostModel.dsp_out_ns``)
        out = costs.dsp_out_ns(len(schedule.pipelined))
        for m in sorted(schedule.pipelined) if out > 0 else ():
            for b in net._registered.get(m, ()):
                if b[2] < 0 and len(b[0]) == 1:
                    (n,) = b[0]
                    self.leaf_arrival[n], self.leaf_owner[n] = out, m

    # --- the stages written as LUT cells (``kera.hls.lutcover``) ---------------------------

    def _plan_covers(self, live: dict[int, Any]) -> None:
        """Find the gates of the covered nodes: each output bit's gate is timed as the cover's
        LUT (or wire) that makes it, a signal no reader's LUT absorbs; the covered gates are
        not mapped, and a gate they read is a signal of its own (not merged into them)."""
        self.covered = cover_of(self.schedule)
        self.cover_net = cover_net(self.costs)
        self.pin_ns = pin_delays(self.costs)
        net, fanin = self.net, self.net._fanin
        self.cover_gate: dict[int, tuple[StageCover, Source]] = {}
        self.cover_signal: dict[tuple[int, str, int], int] = {}
        self.lut_fanout: dict[tuple[int, int], int] = {}
        if not self.covered:
            return
        for c in self.schedule.covers:
            for lut in c.luts:
                for i in lut.inputs:
                    if i >= 0:
                        self.lut_fanout[(c.stage, i)] = self.lut_fanout.get((c.stage, i), 0) + 1
            for nid, sources in c.outputs:
                for b, src in zip(net.bits[nid], sources, strict=True):
                    g = b[2]
                    if src[0] == "lut":
                        key = (c.stage, src[1])
                        self.lut_fanout[key] = self.lut_fanout.get(key, 0) + 1
                    if g >= 0 and fanin[g][2] in self.covered:
                        self.cover_gate.setdefault(g, (c, src))
        read = {h for g in live if fanin[g][2] in self.covered for h in fanin[g][1]}
        self.merged -= read | self.cover_gate.keys()

    def _covered(self, g: int) -> None:
        """Time gate ``g`` of a covered node: the signal of the cover's source of its bit."""
        hit = self.cover_gate.get(g)
        if hit is not None:
            self.top[g] = self._source(hit[0], hit[1])

    def _source(self, c: StageCover, src: Source) -> int:
        """Return the signal of a cover's source: a LUT (one level after its latest input
        has crossed its net), a leaf bit as the network has it, or a constant (at 0)."""
        key = (c.stage, *src)
        hit = self.cover_signal.get(key)
        if hit is not None:
            return hit
        kind, k = src
        if kind == "lut":
            lut = c.luts[k]
            ins = [self._source(c, ("lut", i) if i >= 0 else ("leaf", ~i)) for i in lut.inputs]
            if lut.pins and self.pin_ns:  # each input through its own pin
                arrival = max(self.reach[i] + self.pin_ns[lut.pin_of(j)]
                              for j, i in enumerate(ins))
            else:
                arrival = max(self.reach[i] for i in ins) + self.levels[self.costs.lut_k - 1]
            fanout = self.lut_fanout.get((c.stage, k), 1)
            sig = self._signal(arrival, lut.owner, [], frozenset(ins), fanout)
            if self.cover_net is not None:  # the cells of a cover are placed close together
                self.reach[sig] = arrival + self.cover_net(fanout)
        elif kind == "leaf":
            u, i, registered = c.leaves[k]
            bits = self.net._registered.get(u, []) if registered else self.net.bits[u]
            _, found = self._bit_arrival(bits[i])
            sig = found if found is not None else self._signal(0.0, u, [], None)
        else:
            sig = self._signal(0.0, None, [], None)
        self.cover_signal[key] = sig
        return sig

    # --- signals -----------------------------------------------------------------------

    def _signal(self, arrival: float, owner: bytes | None, cuts: list[frozenset[int]],
                best: frozenset[int] | None, fanout: int = 1) -> int:
        i = len(self.arrival)
        self.arrival.append(arrival)
        self.reach.append(arrival + self.wire(max(1, fanout)))
        self.cuts.append(cuts)
        self.best.append(best)
        self.owner.append(owner)
        return i

    def _leaf(self, n: int) -> int:
        s = self.leaf_signal.get(n)
        if s is None:
            s = self.leaf_signal[n] = self._signal(self.leaf_arrival.get(n, 0.0),
                                                   self.leaf_owner.get(n), [], None,
                                                   self.leaf_fanout[n])
        return s

    def _node(self, ins: list[int], owner: bytes, fanout: int = 1,
              opaque: set[int] | frozenset[int] = frozenset()) -> int:
        """Make the node of a function of the signals ``ins``; return its index. Its cuts are
        unions of one cut (or the signal itself) per input; an ``opaque`` input is only
        itself."""
        reach, levels, kmax = self.reach, self.levels, self.kmax
        if owner in self.triples:  # a LUT4 and the slice's PFUMX, not abc9's wide LUT
            levels = [*levels[:self.costs.lut_k], *[self.triple_ns] * (kmax - self.costs.lut_k)]
        found: set[frozenset[int]] = {frozenset()}
        for i in ins:
            options = (frozenset((i,)),) if i in opaque else (frozenset((i,)), *self.cuts[i])
            found = {c for c in (x | y for x in found for y in options) if len(c) <= kmax}
        ranked = sorted((max(map(reach.__getitem__, c)) + levels[len(c) - 1], len(c),
                         tuple(sorted(c)), c) for c in found)
        return self._signal(ranked[0][0], owner, [r[3] for r in ranked[:CUTS]], ranked[0][3],
                            fanout)

    def _gate_signals(self, g: int) -> list[int]:
        """Return the signals a non-merged gate's cone reads (merged gates folded in)."""
        fanin, merged = self.net._fanin, self.merged
        out: list[int] = []
        stack = [g]
        while stack:
            leaves, gates, _ = fanin[stack.pop()]
            out.extend(self._leaf(~n) for n in leaves)
            folded = []
            for h in gates:
                if h in merged:
                    folded.append(h)
                else:
                    out.append(self.top[h])
            stack.extend(reversed(folded))
        return list(dict.fromkeys(out))

    def _map_until(self, gate: int) -> None:
        """Map every pending gate up to ``gate`` (creation order: a gate reads earlier ones)."""
        pending, fanin = self.pending, self.net._fanin
        while self.next < len(pending) and pending[self.next] <= gate:
            g = pending[self.next]
            self.next += 1
            if fanin[g][2] in self.covered:
                self._covered(g)
                continue
            if fanin[g][2] in self.cells and self._cell(g):
                continue
            signals = self._gate_signals(g)
            if g in self.pair_gates:  # two LUT4s and the PFUMX
                arrival = max(self.reach[i] for i in signals) + self.triple_ns
                self.top[g] = self._signal(arrival, fanin[g][2], [], frozenset(signals),
                                           self.gate_fanout[g])
                continue
            heap = [(self.reach[s], s) for s in signals]
            heapq.heapify(heap)
            cond = self.net.mux_conditions.get(g) if self.narrow else None
            opaque = {self.top[cond]} if cond in self.top and self.gate_fanout[cond] > 1 \
                else set()  # a shared condition stays a LUT of its own (K-input LUTs only)
            while len(heap) > 1:  # balanced around the earliest signals, as abc balances
                (_, a), (_, b) = heapq.heappop(heap), heapq.heappop(heap)
                last = not heap
                v = self._node([a, b], fanin[g][2], self.gate_fanout[g] if last else 1, opaque)
                heapq.heappush(heap, (self.reach[v], v))
            self.top[g] = heap[0][1]

    def _cell(self, g: int) -> bool:
        """Map gate ``g`` of a LUT4 cell: one LUT level over its support's leaf bits, a signal
        of its own (no cuts through it). False where its support is not a LUT4's."""
        nid = self.net._fanin[g][2]
        bits = [b for b in self.net.bits[nid] if b[2] == g]
        if not bits or not 0 < len(bits[0][0]) <= self.costs.lut_k:
            return False
        ins = [self._leaf(n) for n in sorted(bits[0][0])]
        arrival = max(self.reach[i] for i in ins) + self.levels[self.costs.lut_k - 1]
        self.top[g] = self._signal(arrival, nid, [], frozenset(ins), self.gate_fanout[g])
        return True

    def _arith_fanout(self) -> None:
        """Count the arithmetic nodes' reads of leaf bits and gates into the fanouts."""
        graph, net = self.schedule.graph, self.net
        for nid in net.bits:
            node = graph.nodes[nid]
            if self._gates(nid, node):
                continue
            for u in node.inputs:
                if u in net.bits:
                    for support, _, gate, _ in self._read(u, nid):
                        if gate >= 0:
                            self.gate_fanout[gate] += 1
                        elif support:
                            self.leaf_fanout[next(iter(support))] += 1

    def _read(self, u: bytes, v: bytes) -> list:
        """Return the bits of ``u`` that ``v`` reads: its own in the same stage, else the
        register's (fresh leaves, arriving at 0)."""
        stage = self.schedule.stage
        if stage[u] == stage[v]:
            return self.net.bits[u]
        return self.net._registered.get(u, [])

    def _bit_arrival(self, bit: tuple) -> tuple[float, int | None]:
        """Return a bit's arrival and its signal (None for a constant)."""
        support, _, gate, _ = bit
        if gate >= 0:
            self._map_until(gate)
            s = self.top[gate]
            return self.arrival[s], s
        if support:
            (n,) = support
            s = self._leaf(n)
            return self.arrival[s], s
        return 0.0, None

    # --- the walk ----------------------------------------------------------------------

    def run(self) -> BitTiming:
        schedule, net, costs = self.schedule, self.net, self.costs
        graph, stage = schedule.graph, schedule.stage
        nodes = graph.nodes
        order = graph.topo_order(graph.regions[schedule.region])
        ref = float(getattr(costs.model, "lut_network", {}).get("net_ns", costs.level_ns / 2))
        rams = {m.ports.read: m for m in (schedule.state.mems if schedule.state else ())
                if m.ports is not None}
        feed = carry_in_ns(costs)
        for nid in order:
            node = nodes[nid]
            if self._gates(nid, node) or nid not in net.bits:
                continue
            if nid in schedule.virtual or nid in rams or nid in schedule.roms:  # a block RAM:
                # its chain is no circuit, its read (a `mem`'s, a ROM's) registered
                end = read_delay(rams[nid], schedule.family, costs) if nid in rams else \
                    rom_read_ns(schedule.family, self.size, self.rom_blocks,
                                schedule.rom_outreg) \
                    if nid in schedule.roms else 0.0
                self.node_start[nid], self.node_arrival[nid] = 0.0, end
                self._leaves_arrive(nid, end)
                continue
            if nid in self.units:
                self._unit_op(nid, node, ref)
                continue
            start = latest = 0.0
            inverted = self._subtrahend(node)
            for u in node.inputs:
                if u in net.bits:
                    for b in self._read(u, nid):
                        t, sig = self._bit_arrival(b)
                        if sig is not None:  # the fitted curve has a net of ``ref`` in it
                            latest = max(latest, t)
                            start = max(start, t, self.reach[sig] - ref)
                            if u == inverted and b[2] < 0 and self._flop(sig):
                                start = max(start, self.reach[sig] + self.inverter_ns - ref)
            end = start + costs.delay(graph, node) + self._grown_nets(node)
            if nid in self.on_dsp:
                end += self.dsp_growth
            if feed and costs.fed_carry_in(graph, node):
                end += feed
            # the path shows the op from its latest input: a longer net than the curve's is its
            self.node_start[nid], self.node_arrival[nid] = latest, end
            self._leaves_arrive(nid, end)
        self._map_until(max(net._fanin, default=0))
        pack = float(getattr(costs.model, "lut_network", {}).get("ff_packing_ns", 0.0))
        k = costs.lut_k
        delays = [0.0] * schedule.latency
        worst: tuple[float, int, bytes] | None = None  # (arrival, stage, node) of the slowest
        worst_signal: dict[bytes, int | None] = {}
        for nid in order:
            if nid not in net.bits:
                continue
            s = stage[nid]
            if nid in self.node_arrival:
                t, sig = self.node_arrival[nid], None
            else:
                t, sig = 0.0, None
                for b in net.bits[nid]:
                    if b[2] >= 0 and b[2] not in self.top:
                        continue  # folded into its reader's LUTs (timed there), or dead
                    bt, bs = self._bit_arrival(b)
                    if pack and b[2] >= 0 and not self.gate_fanout[b[2]] and bs is not None \
                            and len(self.best[bs] or ()) <= k:
                        bt = max(0.0, bt - pack)  # a LUT (not a wide one) only a flip-flop
                        # reads: in the flip-flop's cell, no net
                    if bt > t:
                        t, sig = bt, bs
            worst_signal[nid] = sig
            if t > delays[s]:
                delays[s] = t
            if worst is None or t > worst[0] + 1e-9:
                worst = (t, s, nid)
        tail: Arc | None = None  # a register multiplexer after the slowest node
        for t, s, nid, start in [*self._register_muxes(pack), *self._rom_port_muxes()]:
            delays[s] = max(delays[s], t)
            if worst is None or t > worst[0] + 1e-9:
                worst, tail = (t, s, nid), Arc(nid, start, t - start, "mux")
                worst_signal[nid] = self._latest_signal(nid)[1]
        path = self._trace(worst[2], worst_signal[worst[2]]) if worst else ()
        return BitTiming(tuple(delays), (*path, tail) if tail else path)

    def _latest_signal(self, nid: bytes) -> tuple[float, int | None]:
        """Return the latest arrival of a node's bits, past their net (its reach), and the
        signal it is (None for an arithmetic node's own arrival, or nothing)."""
        if nid in self.node_arrival:
            return self.node_arrival[nid] + self.wire(1), None
        t, sig = 0.0, None
        for b in self.net.bits[nid]:
            if b[2] >= 0 and b[2] not in self.top:
                continue
            _, bs = self._bit_arrival(b)
            if bs is not None and self.reach[bs] > t:
                t, sig = self.reach[bs], bs
        return t, sig

    def _register_muxes(self, pack: float) -> list[tuple[float, int, bytes, float]]:
        """Return ``(arrival, stage, node, data arrival)`` of the input multiplexers of the
        pipeline registers shared on the modulo circle (``kera.hls.regbind``): a register that
        loads several sources has a multiplexer LUT before its flip-flops (iCE40 isqrt32 at II
        8, 55 MHz, nextpnr: the last select, a 2.4 ns net, the multiplexer's LUT, the
        flip-flop), which the value loaded at the end of its own stage crosses, and the
        counter's decoded selects too; the multiplexer's LUT shares the flip-flop's cell."""
        s = self.schedule
        binding = s.register_binding if s.aligned else None
        if binding is None:
            return []
        out = []
        for reg in binding.registers:
            n = len(reg.sources)
            if n < 2:
                continue
            for c in reg.copies:
                data = self._latest_signal(c.nid)[0] if s.stage[c.nid] == c.first else \
                    self.wire(1)  # a register's bit (the copy before): its net
                out.append((max(0.0, self._mux_out(n, data) - pack), c.first, c.nid, data))
        return out

    def _rom_port_muxes(self) -> list[tuple[float, int, bytes, float]]:
        """Return ``(arrival, stage, index, data arrival)`` of the address multiplexers of the
        ROM read ports that several counter slots share (``rom.read_ports``): each read's
        index crosses one on its way into the RAM's address register, at the end of the stage
        before the read."""
        s = self.schedule
        if not s.roms or not s.aligned:
            return []
        graph = s.graph
        out = []
        for port in read_ports(s):
            if len(port) < 2:
                continue
            for r in port:
                i, st = graph.nodes[r].inputs[1], s.stage[r] - 1
                data = self._latest_signal(i)[0] if i in self.net.bits and s.stage[i] == st \
                    else self.wire(1)  # a register's bit: its net
                out.append((self._mux_out(len(port), data), st, i, data))
        return out

    def _gates(self, nid: bytes, node: Node) -> bool:
        """Whether ``node`` is gates of the network (bitwise, not a shared unit's op)."""
        return nid not in self.units and is_bitwise(self.schedule.graph, node)

    def _unit_op(self, nid: bytes, node: Node, ref: float) -> None:
        """Time an op of a shared unit: from the unit's start (the latest of its ops' operands
        past the multiplexers, the last walk's) for the op's fitted delay between registers;
        record this op's own operands' time in ``unit_in``."""
        costs, graph = self.costs, self.schedule.graph
        unit = self.units[nid]
        start = 0.0
        for j, u in enumerate(node.inputs):
            if u not in self.net.bits:
                continue
            muxed = j < len(unit.sources) and unit.sources[j] > 1
            reach = 0.0
            for b in self._read(u, nid):
                t, sig = self._bit_arrival(b)
                if sig is not None:
                    reach = max(reach, self.reach[sig] if muxed else max(t, self.reach[sig] - ref))
            if muxed:  # the multiplexer's LUT, then its net into the op
                reach = self._mux_out(unit.sources[j], reach) + self.wire(1) - ref
            start = max(start, reach)
        self.unit_in[unit.name] = max(self.unit_in.get(unit.name, 0.0), start)
        start = max(start, self.unit_starts.get(unit.name, 0.0))
        q = model_query(graph, node)
        own = costs.op_delay(q) if is_bitwise(graph, node) and q is not None else \
            costs.delay(graph, node)
        end = start + own
        if nid in self.on_dsp:
            end += self.dsp_growth
        self.node_start[nid], self.node_arrival[nid] = start, end
        self._leaves_arrive(nid, end)

    def _mux_out(self, sources: int, data_reach: float) -> float:
        """Return when a multiplexer of ``sources`` inputs on the modulo counter (a unit's
        operand, a register's input) has its output bits, its data bits in at ``data_reach``:
        a LUT level (ECP5: a wide function up to 7 inputs) over the data bits and the
        counter's decoded selects, which cross a net from the counter, a decode LUT and a net
        to the multiplexers (``sel_fanout`` of them)."""
        sel_bits = max(1, math.ceil(math.log2(sources)))
        lut = self.levels[0]
        sel = self.wire(self.sel_fanout) + lut + self.wire(self.sel_fanout)
        n = sources + sel_bits
        if n <= self.kmax:
            return max(data_reach, sel) + self.levels[n - 1]
        levels = lut_levels(n, self.costs.lut_k)
        return max(data_reach, sel) + levels * lut + (levels - 1) * self.wire(1)

    def _subtrahend(self, node: Node) -> bytes | None:
        """Return the operand an ordering or ``min``/``max`` subtracts where the carry cell
        cannot invert it (iCE40's SB_CARRY: ``CostModel._inverter_rate``), else None.

        Its bits that a flip-flop drives (a bank's, a port's: a leaf no arithmetic makes)
        reach the chain through an inverter LUT and a net (``inverter_ns``), which the fitted
        curve, placed with its operands from LUTs, does not hold. nextpnr 0.11, iCE40 at 55
        MHz: sort8 (seed 1, 14.3 ns) and isqrt32 (16.95 ns) both start flip-flop -> net ->
        inverter LUT (0.87 ns) -> 1.76 ns net -> the chain's I2 (the estimate was +10.8 and
        +14.9 % over the placed medians)."""
        if not self.inverter_ns or node.op not in ORDERINGS:
            return None
        return node.inputs[0] if node.op in ("gt", "le") else node.inputs[1]

    def _flop(self, sig: int) -> bool:
        """Whether a signal is a flip-flop's: a bank's (no maker), a port's or a state's."""
        owner = self.owner[sig]
        return owner is None or self.schedule.graph.nodes[owner].op in ("param", "state")

    def _grown_nets(self, node: Node) -> float:
        """Return what the nets inside a LUT-only arithmetic node add over its fitted curve in
        a design of ``size`` LUTs.

        A fitted curve was placed in a design that holds the op alone (its own LUTs, ``area``),
        and every net in it has the routed delay of a design that small. The routing fit's
        size term (``lut_network.routing.size``: a net is ``c log2(N)`` longer in a design of
        N LUTs) holds inside the op as between ops: each of the curve's LUT levels' nets
        (its delay over ``level_ns``, a LUT and a net a level) is ``c log2(size / own)``
        longer. Only for ops without carry or DSP cells (a multiplexer tree, a barrel shift):
        a chain's hops are dedicated wires. delay_line's 64:1 multiplexer of 16 bits, fitted
        in a design of 926 LUTs (18.5 ns), sits in one of about 2,340 (2,468 placed): 7.1 nets
        0.17 ns longer each, 1.24 ns (nextpnr, seed 1: its levels' nets average 3.5 ns where
        the fitted design's average 2.2; the rest is placement, which the fit does not hold)."""
        costs, graph = self.costs, self.schedule.graph
        net = getattr(costs.model, "lut_network", {})
        fit = net.get("routing")
        if self.size <= 0:
            return 0.0
        if costs.rom_index_bits(graph, node) is not None:  # a table: its index nets span it
            # (beyond the size ``costs.delay`` timed it in, where the scheduler's knew one)
            return max(0.0, costs.table_growth_ns(graph, node, self.size)
                       - costs.table_growth_ns(graph, node, costs.design_luts))
        q = model_query(graph, node)
        if not fit or q is None or node.op in _CHAINED:
            return 0.0
        area = costs._query_area(q)  # the fitted point's: the design the curve was placed in
        own = float(area.get("lut", 0.0))
        if own <= 0 or area.get("carry", 0.0) or area.get("dsp", 0.0) or own >= self.size:
            return 0.0
        nets = costs.delay(graph, node) / costs.level_ns
        return nets * float(fit["size"]) * math.log2(self.size / own)

    def _leaves_arrive(self, nid: bytes, end: float) -> None:
        """Set the arrival of the leaf bits node ``nid`` makes (the first maker of a shared
        one, a borrow, sets it)."""
        for b in self.net.bits[nid]:
            if b[2] < 0 and len(b[0]) == 1:
                (n,) = b[0]
                if n not in self.leaf_arrival and n not in self.leaf_signal:
                    self.leaf_arrival[n], self.leaf_owner[n] = end, nid

    def _trace(self, nid: bytes, sig: int | None) -> tuple[Arc, ...]:
        """Follow the slowest path back from node ``nid`` (its latest bit ``sig``)."""
        arcs: list[Arc] = []
        graph, stage, net = self.schedule.graph, self.schedule.stage, self.net
        arrival = self.arrival
        current: bytes | None = nid if sig is None else None
        while True:
            if current is not None:  # an arithmetic node: then its latest input bit
                start = self.node_start.get(current, 0.0)
                arcs.append(Arc(current, start, self.node_arrival[current] - start))
                sig = None
                best_t = -1.0
                for u in graph.nodes[current].inputs:
                    if u in net.bits and stage[u] == stage[current]:
                        for b in net.bits[u]:
                            t, s = self._bit_arrival(b)
                            if s is not None and t > best_t + 1e-9:
                                best_t, sig = t, s
                if current in self.units and start > max(best_t, 0.0) + 1e-9:
                    mux_from = max(best_t, 0.0)
                    arcs.append(Arc(current, mux_from, start - mux_from, "mux"))
                if sig is None or best_t <= 0.0:
                    break
                current = None
            assert sig is not None
            cut = self.best[sig]
            if cut is None:  # a leaf bit: an arithmetic node's, or a register's
                owner = self.owner[sig]
                if owner is None or owner not in self.node_arrival:
                    break
                current = owner
                continue
            owner = self.owner[sig]
            assert owner is not None
            crit = max(cut, key=lambda i: (self.reach[i], -i))  # its net is in this step
            arcs.append(Arc(owner, arrival[crit], arrival[sig] - arrival[crit]))
            sig = crit
            if arrival[sig] <= 0.0 and self.best[sig] is None:
                break
        return tuple(_merge(reversed(arcs)))


def _merge(arcs: Iterable[Arc]) -> list[Arc]:
    """Join consecutive steps of one node (the LUT levels of one op's cone)."""
    out: list[Arc] = []
    for a in arcs:
        if out and out[-1].nid == a.nid and out[-1].what == a.what:
            prev = out[-1]
            out[-1] = Arc(prev.nid, prev.start_ns, a.start_ns + a.delay_ns - prev.start_ns,
                          prev.what)
        else:
            out.append(a)
    return out


__all__ = ["CUTS", "Arc", "BitTiming", "analyse_bits", "carry_in_ns", "cover_net", "design_size",
           "handshake_ns", "lut_delays", "net_delay", "pin_delays", "register_bits",
           "registered_network"]
