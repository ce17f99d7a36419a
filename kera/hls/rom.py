"""Big constant tables in block RAM: a lookup becomes a synchronous read port of a ROM.

A lookup in an array of constants by a variable index (``array_index`` of an ``array`` of
``const``) is a LUT mux tree (``CostModel.rom_cost``: an 8-bit S-box is 136 LUTs on ECP5 and
248 on iCE40). Where the family has block RAM, the table holds more than ``TINY_BITS`` bits
and fits one block, and the RAM's clock-to-output fits the usable period, the lookup becomes a
read port of a ROM instead: the table is emitted once as a constant function, with one
initialised memory per group of reads as many as a block RAM's read ports (ECP5 ``DP16KD``:
two; iCE40 ``SB_RAM40_4K``: one; ``kera.rtl.memory``). Each lookup is a read whose address is
registered at the end of the stage before the read (a gap in the schedule, as for a `mem`'s
read) and whose data costs the RAM's clock-to-output beyond a flip-flop's and the routing to
the next RAM's address, which grows with the design (``route_ns``). Lookups go to ROMs in the
region's order while the board's block RAMs last, the rest stay LUTs; none where the read
does not fit the period. Stateless regions, at any II; at II > 1 with aligned starts reads at
different counter slots share a read port (``read_ports``).
"""

from __future__ import annotations

from collections.abc import Iterable

from kera.hls.memory import (
    BRAM_BITS,
    BRAM_CLK_TO_OUT_NS,
    BRAM_PORTS,
    FF_CLK_TO_Q_NS,
    OUTREG_CLK_TO_OUT_NS,
    PRIMITIVE_SHAPES,
    TINY_BITS,
)
from kera.hls.pipeline import Schedule
from kera.hls.timing import CostModel
from kera.ir.graph import Graph, Node
from kera.ir.types import ArrayType, IntType

#: The routing of a path from a block RAM's data out through logic to another's address,
#: beyond the nets the logic's fitted delays hold, by family: ``a + c * blocks ** p * luts **
#: q`` ns in a design of ``luts`` LUTs whose ROMs take ``blocks`` block RAMs (they spread over
#: the die's block RAM rows as they grow in number). Least squares on the worst paths'
#: routing less 0.655 ns a LUT level and 0.25 (the nets the estimate's levels and register
#: overhead hold), nextpnr 0.11 at 25 MHz: S-box chains ``SBOX[SBOX[x[i]] ^ x[i + 1]]`` of 2,
#: 8 and 50 blocks (18, 66, 402 LUTs; seed 1: 1.00, 1.36, 2.87 ns) and AES-128 at II 1, 2, 4,
#: 8 (4,204 LUTs; 100, 50, 35, 23 blocks; the median of seeds 1-3: 10.28, 6.97, 3.96, 3.51
#: ns; residuals at most 0.87 ns). The LUTs alone (the fit before) gave every AES 8.39 ns:
#: its II 4 estimated at 46.0 MHz, placed at 72.3. iCE40 (its RAM's clock-to-output below a
#: flip-flop's): not measured, the chains' paths there were the handshake's.
ROUTE = {"ecp5": (1.024, 0.0044589, 0.8925, 0.4249)}


def route_ns(family: str, luts: float, blocks: int) -> float:
    """The routing a ROM read's data takes to the next RAM's address (``ROUTE``), in ns, in a
    design of ``luts`` LUTs whose ROMs take ``blocks`` block RAMs."""
    fit = ROUTE.get(family)
    if fit is None:
        return 0.0
    a, c, p, q = fit
    return a + c * max(1, blocks) ** p * max(1.0, luts) ** q


def read_ns(family: str, luts: float = 0.0, blocks: int = 1, outreg: bool = False) -> float:
    """The delay of a ROM read in ns after the stage's start, in a design of ``luts`` LUTs
    whose ROMs take ``blocks`` block RAMs: the RAM's clock-to-output beyond the flip-flop's
    (which the stage overhead already has; ``outreg``: its output register's) and the routing
    of its data (``route_ns``)."""
    out = OUTREG_CLK_TO_OUT_NS[family] if outreg else BRAM_CLK_TO_OUT_NS[family]
    return max(0.0, out - FF_CLK_TO_Q_NS[family]) + route_ns(family, luts, blocks)


def can_outreg(graph: Graph, reads: Iterable[bytes], family: str) -> bool:
    """Whether the emitter can read every table of ``reads`` through the RAM's output register
    (``kera.rtl.memory``: ECP5, one DP16KD of 1024 x 18 per two reads of a table)."""
    if family not in OUTREG_CLK_TO_OUT_NS:
        return False
    for r in reads:
        t = graph.nodes[graph.nodes[r].inputs[0]].type
        assert isinstance(t, ArrayType) and isinstance(t.elem, IntType)
        if t.length > PRIMITIVE_SHAPES[0][0] or t.elem.width > PRIMITIVE_SHAPES[0][1]:
            return False
    return True


def use_outreg(graph: Graph, reads: Iterable[bytes], family: str, luts: float,
               usable_ns: float) -> bool:
    """Whether ROM reads go through the RAM's output register: where the plain read does not
    fit ``usable_ns`` and the emitter can (``can_outreg``)."""
    reads = list(reads)
    return bool(reads) and read_ns(family, luts, blocks(graph, reads, family)) > \
        usable_ns + 1e-9 and can_outreg(graph, reads, family)


def design_luts(graph: Graph, region: str, costs: CostModel, roms: Iterable[bytes] = ()
                ) -> float:
    """The LUTs of the region's operators by the model's per-node area, ``roms`` left out:
    the size the routing of ``read_ns`` grows with."""
    skip = set(roms)
    return sum(costs.area(graph, graph.nodes[n])["lut"]
               for n in graph.topo_order(graph.regions[region]) if n not in skip)


def table_of(graph: Graph, node: Node, family: str) -> bytes | None:
    """Return the ``array`` node a lookup reads when it can be a ROM read port, else None."""
    if node.op != "array_index" or family not in BRAM_BITS:
        return None
    arr, idx = (graph.nodes[i] for i in node.inputs)
    at, it = arr.type, idx.type
    if arr.op != "array" or not isinstance(at, ArrayType) or not isinstance(at.elem, IntType):
        return None
    if idx.op == "const" or not isinstance(it, IntType) or it.signed or 1 << it.width > at.length:
        return None  # a constant read is a wire; an index past the end would be clamped
    bits = at.length * at.elem.width
    if not TINY_BITS < bits <= BRAM_BITS[family]:
        return None
    if any(graph.nodes[e].op != "const" for e in arr.inputs):
        return None
    return arr.id


def blocks(graph: Graph, reads: Iterable[bytes], family: str) -> int:
    """Return the block RAMs the ROM reads ``reads`` take, each its own read port."""
    return _blocks((graph.nodes[r].inputs[0] for r in reads), family)


def _blocks(port_tables: Iterable[bytes], family: str) -> int:
    """Return the block RAMs of read ports on the tables ``port_tables`` (one entry a port):
    per table, one block for every ``BRAM_PORTS`` ports."""
    per_table: dict[bytes, int] = {}
    for t in port_tables:
        per_table[t] = per_table.get(t, 0) + 1
    ports = BRAM_PORTS[family][0]
    return sum(-(-n // ports) for n in per_table.values())


def read_ports(schedule: Schedule) -> list[list[bytes]]:
    """Return the ROM read ports of ``schedule``: the reads (in schedule order) that one read
    port of a table serves. At II > 1 with aligned starts (the modulo counter) the reads whose
    addresses load at different counter slots share a port, its address multiplexed by the
    counter (AES-128 at II 4: the rounds' lookups are in different stages); else, and
    through the RAMs' output registers, each read has its own port, as at II 1."""
    position = {nid: k for k, nid in enumerate(schedule.order)}
    graph, ii = schedule.graph, schedule.ii
    share = schedule.aligned and not schedule.rom_outreg
    ports: dict[bytes, list[tuple[set[int], list[bytes]]]] = {}
    for r in sorted(schedule.roms, key=position.__getitem__):
        mine = ports.setdefault(graph.nodes[r].inputs[0], [])
        slot = (schedule.stage[r] - 1) % ii
        for used, port in mine:
            if share and slot not in used:
                used.add(slot)
                port.append(r)
                break
        else:
            mine.append(({slot}, [r]))
    return [port for mine in ports.values() for _, port in mine]


def port_mux_inputs(schedule: Schedule) -> int:
    """Return the inputs beyond the first of the shared read ports' address multiplexers
    (``read_ports``): address bits x (reads - 1), summed."""
    graph = schedule.graph
    return sum(max(1, (len(graph.nodes[graph.nodes[p[0]].inputs[0]].inputs) - 1).bit_length())
               * (len(p) - 1) for p in read_ports(schedule))


def port_blocks(schedule: Schedule) -> int:
    """Return the block RAMs of ``schedule``'s ROMs, by their read ports (``read_ports``)."""
    graph = schedule.graph
    return _blocks((graph.nodes[p[0]].inputs[0] for p in read_ports(schedule)), schedule.family)


def choose(graph: Graph, region: str, family: str, budget: int, usable_ns: float,
           costs: CostModel) -> frozenset[bytes]:
    """Return the lookups of ``region`` that become ROM reads: in the region's order, while
    the ``budget`` block RAMs last; none when a RAM read (``read_ns`` in a design of twice
    the LUTs without its ROMs) does not fit ``usable_ns``."""
    if family not in BRAM_BITS or budget <= 0:
        return frozenset()
    reg = graph.region_or_error(region)
    if reg.stateful:
        return frozenset()
    chosen: list[bytes] = []
    for nid in graph.topo_order(reg):
        if table_of(graph, graph.nodes[nid], family) is None:
            continue
        if blocks(graph, [*chosen, nid], family) <= budget:
            chosen.append(nid)
    # twice the LUTs: the decomposition that follows can grow the design the scheduler
    # times the read in (``kera.hls.schedule``), and a read that then missed would refuse
    # the clock where LUTs would have met it
    if chosen:
        luts = 2 * design_luts(graph, region, costs, chosen)
        outreg = use_outreg(graph, chosen, family, luts, usable_ns)
        if read_ns(family, luts, blocks(graph, chosen, family), outreg) > usable_ns:
            return frozenset()
    return frozenset(chosen)


def note(schedule: Schedule) -> str:
    """The report's note on a schedule's ROM reads: how many, in how many block RAMs."""
    graph, reads = schedule.graph, schedule.roms
    tables = len({graph.nodes[r].inputs[0] for r in reads})
    n = port_blocks(schedule)
    ports = len(read_ports(schedule))
    after = "two stages after its index (through the RAM's output register)" \
        if schedule.rom_outreg else "a stage after its index"
    shared = (f", {ports} read ports shared by the counter's slots" if ports < len(reads)
              else "")
    return (f"{len(reads)} lookup{'s' * (len(reads) != 1)} in {tables} constant "
            f"table{'s' * (tables != 1)} read from block RAM ROMs ({n} block{'s' * (n != 1)}"
            f"{shared}), each {after}")


__all__ = ["ROUTE", "blocks", "can_outreg", "choose", "design_luts", "note", "port_blocks",
           "port_mux_inputs", "read_ns", "read_ports", "route_ns", "table_of", "use_outreg"]
