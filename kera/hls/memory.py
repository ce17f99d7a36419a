"""What each `mem` becomes in hardware, and the bound its ports put on the II (ResMII).

A ``mem``'s chain in one transfer is ``state -> array_update / select -> ... -> next``; its reads
are ``array_index`` nodes on the chain. ``normalise`` turns the chain into an ordered list of
guarded writes ``(guard, addr, data)`` and the reads of the state as the transfer found it.

A memory goes to block RAM (iCE40 ``SB_RAM40_4K``, ECP5 ``DP16KD``; yosys infers them) when
its chain normalises to one read of the entry state and at most one write, with addresses that
are always in range, a uniform initial value, and more bits than ``TINY_BITS``. Everything else
stays in flip-flops like a ``reg`` array (always correct) and the report says why. A block RAM
read is synchronous: its address is registered one stage before its data is used. A write from
an earlier transfer at the very edge a read is captured is forwarded (address compare + bypass);
the modulo constraint closes every other case (``docs/scheduling.md``).

Where that read does not fit the period (ECP5's DP16KD: 5.83 ns from the clock to its data),
the RAM's output register takes it (``REGMODE_B = "OUTREG"``, 0.96 ns; ``with_output_registers``):
the address is registered two stages before the data is used, the RAM is written from the
registered write an edge late, and the three writes it may miss are forwarded
(``kera.rtl.memory`` instantiates the primitive).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kera.hls import recurrence as rc
from kera.ir.types import ArrayType, IntType

if TYPE_CHECKING:
    from kera.hls.pipeline import Schedule
    from kera.hls.schedule import Problem
    from kera.hls.timing import CostModel

#: Memories of at most this many bits stay in flip-flops (a block RAM would be mostly empty).
TINY_BITS = 256
#: Bits of one block RAM per family (iCE40 SB_RAM40_4K; ECP5 DP16KD used as 16 Kbit).
BRAM_BITS = {"ice40": 4096, "ecp5": 16384}
#: Read and write ports of one block RAM per family (iCE40: 1 read + 1 write).
BRAM_PORTS = {"ice40": (1, 1), "ecp5": (2, 2)}
#: Clock-to-output of a block RAM read and of a flip-flop, in ns: nextpnr 0.11's timing of
#: SB_RAM40_4K RDATA (UP5K) and DP16KD DOB against the fabric flip-flop's, measured on a RAM
#: read straight into a register (docs/models.md, "Block RAM read path").
BRAM_CLK_TO_OUT_NS = {"ice40": 1.178, "ecp5": 5.83}
FF_CLK_TO_Q_NS = {"ice40": 1.39, "ecp5": 0.525}
#: Clock-to-output of a block RAM read through the RAM's own output register, where the
#: emitter can instantiate one: nextpnr 0.11's DP16KD DOB with ``REGMODE_B = "OUTREG"``
#: (0.956 ns against 5.83 without, the same read straight into a register).
OUTREG_CLK_TO_OUT_NS = {"ecp5": 0.956}
#: What the net from that output register takes beyond a fabric net (the RAMs are columns of
#: their own): the estimate's shortfall on the two designs that read through it, placed with
#: seeds 1, 2, 3 at 150 MHz (histogram 0.76 ns, delay_line 0.52 ns; yosys 0.70, nextpnr 0.11).
OUTREG_NET_NS = {"ecp5": 0.64}
#: The shapes of one DP16KD as the emitter instantiates it, (words, bits): the narrowest that
#: holds every word, several side by side for wider words (``primitive_shape``).
PRIMITIVE_SHAPES = ((1024, 18), (2048, 9), (4096, 4), (8192, 2), (16384, 1))


@dataclass(frozen=True)
class Write:
    """One guarded write of a memory chain, by node index; guard None means always."""

    guard: int | None
    negate: bool
    addr: int
    data: int


@dataclass(frozen=True)
class BramPorts:
    """A block RAM's accesses by node id: the read, its address, the write (if any)."""

    state: bytes
    read: bytes
    raddr: bytes
    next: bytes
    guard: bytes | None = None
    negate: bool = False
    waddr: bytes | None = None
    wdata: bytes | None = None


@dataclass(frozen=True)
class MemPlan:
    """One `mem`: its shape, where it goes, its accesses per transfer, its bounds."""

    slot: rc.Slot
    name: str
    words: int
    width: int
    mapped_to: str  # "bram", "lutram" or "ff"
    reads: int
    writes: int
    res_mii: int
    reset_cycles: int
    why: str = ""
    chain: frozenset[int] = field(default_factory=frozenset)
    read: int | None = None  # the block RAM read (an array_index node)
    write: Write | None = None
    init: int = 0  # the value every word is cleared to
    blocks: int = 0
    ports: BramPorts | None = None  # the same accesses by node id, for the emitter
    outreg: bool = False  # read through the RAM's output register: two stages after its address

    def as_json(self) -> dict:
        """Return the report's "state" entry (STATE.md)."""
        return {"name": self.name, "kind": "mem", "words": self.words, "width": self.width,
                "mapped_to": self.mapped_to, "reads_per_transfer": self.reads,
                "writes_per_transfer": self.writes}


def chain(problem: Problem, slot: rc.Slot) -> set[int]:
    """Return the nodes of a memory's chain: its read and the arrays derived from it."""
    ids = {problem.ids[slot.read]}
    out = {slot.read}
    nodes = problem.graph.nodes
    for v in range(slot.read + 1, problem.size):
        node = nodes[problem.ids[v]]
        if (node.op == "array_update" and node.inputs[0] in ids) or (
                node.op == "select" and any(i in ids for i in node.inputs[1:])):
            out.add(v)
            ids.add(problem.ids[v])
    return out


def normalise(problem: Problem, slot: rc.Slot, links: set[int]) -> list[Write] | None:
    """Return the chain's writes in order (None when it is not a chain of guarded writes)."""
    index = {nid: k for k, nid in enumerate(problem.ids)}
    nodes = problem.graph.nodes

    def walk(v: int) -> list[Write] | None:
        if v == slot.read:
            return []
        node = nodes[problem.ids[v]]
        if node.op == "array_update":
            before = walk(index[node.inputs[0]])
            if before is None:
                return None
            return [*before, Write(None, False, index[node.inputs[1]], index[node.inputs[2]])]
        if node.op == "select" and v in links:
            c, a, b = (index[i] for i in node.inputs)
            wa, wb = walk(a), walk(b)
            if wa is None or wb is None:
                return None
            if wa[: len(wb)] == wb and len(wa) == len(wb) + 1 and wa[-1].guard is None:
                return [*wb, Write(c, False, wa[-1].addr, wa[-1].data)]
            if wb[: len(wa)] == wa and len(wb) == len(wa) + 1 and wb[-1].guard is None:
                return [*wa, Write(c, True, wb[-1].addr, wb[-1].data)]
            return wa if wa == wb else None
        return None

    return walk(slot.next) if slot.next is not None else []


def _reads(problem: Problem, links: set[int]) -> list[int]:
    ids = {problem.ids[v] for v in links}
    nodes = problem.graph.nodes
    return [v for v in range(problem.size) if nodes[problem.ids[v]].op == "array_index"
            and nodes[problem.ids[v]].inputs[0] in ids]


def _uniform_init(problem: Problem, slot: rc.Slot) -> int | None:
    """Return the value of every word of the initial value, None when they differ."""
    from kera.rtl.state import init_bits

    g = problem.graph
    init = g.nodes[g.regions[problem.region].states[slot.index].init]
    t = init.type
    assert isinstance(t, ArrayType)
    bits = init_bits(g, init.id)
    w = t.elem.flat_width
    first = bits & ((1 << w) - 1)
    every = sum(first << (k * w) for k in range(t.length))
    return first if every == bits else None


def _bram_problem(problem: Problem, slot: rc.Slot, t: ArrayType, links: set[int],
                  reads: list[int], writes: list[Write] | None, family: str) -> str:
    """Return why the memory cannot be a block RAM here ("" when it can)."""
    nodes, ids = problem.graph.nodes, problem.ids
    if family not in BRAM_BITS:
        return f"{family} has no block RAM model yet"
    if t.flat_width <= TINY_BITS:
        return f"tiny ({t.flat_width} bits): flip-flops are cheaper"
    if slot.next is None:
        return "never written"
    if writes is None:
        return "its updates are not a chain of guarded writes"
    if len(reads) != 1 or len(writes) > 1:
        return (f"{len(reads)} reads and {len(writes)} writes per transfer (block RAM mapping "
                "takes one of each for now)")
    if nodes[ids[reads[0]]].inputs[0] != ids[slot.read]:
        return "it reads a word after writing one in the same transfer"
    if _uniform_init(problem, slot) is None:
        return "its initial words differ (the reset clears to one value)"
    allowed = links | set(reads)
    if any(w not in allowed for v in links for w in problem.users[v]):
        return "a value of its chain is used outside it"
    addrs = [nodes[ids[reads[0]]].inputs[1], *(ids[w.addr] for w in writes)]
    for a in addrs:
        at = nodes[a].type
        if not isinstance(at, IntType) or at.signed or (1 << at.width) > t.length:
            return "an address may be out of range"
    return ""


def plan_memories(problem: Problem, family: str) -> list[MemPlan]:
    """Return the plan of every `mem` of the region."""
    out = []
    for s in rc.slots(problem):
        node = problem.graph.nodes[problem.ids[s.read]]
        if node.attr("kind") != "mem":
            continue
        t = node.type
        assert isinstance(t, ArrayType)
        links = chain(problem, s)
        reads = _reads(problem, links)
        writes = normalise(problem, s, links)
        nwrites = len(writes) if writes is not None else sum(
            1 for v in links if problem.graph.nodes[problem.ids[v]].op == "array_update")
        why = _bram_problem(problem, s, t, links, reads, writes, family)
        words, width = t.length, t.elem.flat_width
        if why:
            out.append(MemPlan(s, s.name, words, width, "ff", len(reads), nwrites, 1, 0, why))
            continue
        assert writes is not None
        r_ports, w_ports = BRAM_PORTS[family]
        res = max(math.ceil(len(reads) / r_ports), math.ceil(len(writes) / w_ports), 1)
        init = _uniform_init(problem, s)
        assert init is not None
        blocks = math.ceil(words * width / BRAM_BITS[family])
        ids, w = problem.ids, writes[0] if writes else None
        assert s.next is not None
        ports = BramPorts(ids[s.read], ids[reads[0]],
                          problem.graph.nodes[ids[reads[0]]].inputs[1], ids[s.next],
                          None if w is None or w.guard is None else ids[w.guard],
                          bool(w and w.negate), None if w is None else ids[w.addr],
                          None if w is None else ids[w.data])
        out.append(MemPlan(s, s.name, words, width, "bram", len(reads), len(writes), res,
                           words,  # the reset clears one word per cycle
                           f"block RAM ({blocks} x {family} block)", frozenset(links),
                           reads[0], writes[0] if writes else None, init, blocks, ports))
    return out


def read_delay(plan: MemPlan, family: str, costs: CostModel) -> float:
    """Return the delay of a block RAM read in ns, counted like any node after a register.

    The stage overhead already has a flip-flop's clock-to-Q, so the RAM costs what its
    clock-to-output exceeds it by. A written RAM's read data then passes two ``w``-bit
    selects: yosys's read-old-data emulation (the RAM's ports define no collision, so
    ``memory_libmap`` registers the write and muxes it onto the data when the addresses
    match) and the emitter's forwarding select; a LUT level each (``level_ns``: the fitted
    ``select`` curve starts at a register, its LUT in the overhead). Each select's hit test,
    valid and an ``a``-bit compare of registered addresses (``2a + 1`` inputs), is a tree of
    ``k``-input LUTs from the clock edge. histogram (256 x 16) on iCE40: max(1.178 - 1.39,
    3 x 2.596) + 2 x 2.596 = 12.98 ns (placed, seed 1: 14.70 ns from the address register's
    output through 3 hit-test LUTs and 2 selects, each LUT with its net). Through the output
    register (``plan.outreg``) the RAM costs its register's clock-to-output and the two selects
    are the two forwarded writes', whose hit tests are registered in the stage before (no
    emulation: the primitive is instantiated): a function of 5 registered inputs per bit, one
    LUT5 (``_lut5_ns``).
    """
    if plan.outreg:  # the hit tests are registered a stage before: two selects, one LUT5
        ram = max(0.0, OUTREG_CLK_TO_OUT_NS[family] - FF_CLK_TO_Q_NS[family])
        ram += OUTREG_NET_NS[family]
        return ram + (_lut5_ns(costs) if plan.write is not None else 0.0)
    ram = max(0.0, BRAM_CLK_TO_OUT_NS[family] - FF_CLK_TO_Q_NS[family])
    if plan.write is None:
        return ram
    from kera.hls.lutmap import lut_levels

    a = max(1, (plan.words - 1).bit_length())
    levels = lut_levels(2 * a + 1, costs.lut_k)
    return max(ram, levels * costs.level_ns) + 2 * costs.level_ns


def _lut5_ns(costs: CostModel) -> float:
    """The delay of one 5-input function: a LUT level and what abc9's library adds for a LUT5
    over a LUT4 (ECP5: 2 LUT4s and a PFUMX, 477 against 379 ps); two levels without one."""
    luts = getattr(costs.model, "lut_network", {}).get("library", {}).get("luts", [])
    if len(luts) < 5:
        return 2 * costs.level_ns
    return costs.level_ns + (luts[4][1] - luts[3][1]) / 1000.0


def state_ff_bits(schedule: Schedule) -> int:
    """Return the flip-flop bits of a schedule's state: every element not in block RAM, and
    each block RAM's forwarding registers and clear counter; a written block RAM adds yosys's
    read-old-data emulation (``emulated_read_first_bits``)."""
    if schedule.state is None:
        return 0
    rams = [m for m in schedule.state.mems if m.mapped_to != "ff"]
    ram = {m.slot.index for m in rams}
    g = schedule.graph
    regs = sum(g.nodes[slot.read].type.flat_width
               for i, slot in enumerate(g.regions[schedule.region].states) if i not in ram)
    # a block RAM's forwarding registers (valid, address, data) and the reset's clear counter
    abits = [max(1, (m.words - 1).bit_length()) for m in rams]
    forward = sum(forward_bits(m) for m in rams)
    emulated = sum(emulated_read_first_bits(m) for m in rams)
    return regs + forward + emulated + (1 + max(abits) if rams else 0)


def forward_bits(plan: MemPlan) -> int:
    """Return the flip-flops that forward writes onto a block RAM's read (``kera.rtl.memory``):
    the last write's valid, address and data; through the output register also the write
    before, two registered hit tests and the older writes' forwarded data."""
    a = max(1, (plan.words - 1).bit_length())
    if plan.outreg:
        return 2 * (1 + a + plan.width) + 2 + plan.width
    return 1 + a + plan.width


def emulated_read_first_bits(plan: MemPlan) -> int:
    """Return the flip-flops of yosys's read-old-data emulation of a written block RAM.

    The read port reads the old word when the other port writes it at the same edge, which
    neither SB_RAM40_4K nor DP16KD defines across ports, so ``memory_libmap`` calls
    ``Mem::emulate_read_first``: it delays the write port by a cycle (its enable, address
    and data: ``1 + a + w`` flip-flops) and makes the read transparent to the delayed write;
    no RAM cell does that across ports either, so ``emulate_transparency`` adds a registered
    hit (the read address against the delayed write's) and the registered write data
    (``1 + w``), selected onto the RAM's output. histogram (256 x 16): 25 + 17 = 42 (yosys
    0.70, both families: 103 FFs placed, where 25 for the emulation gave 86). An instantiated
    RAM (``plan.outreg``) has no emulation: the emitter forwards the writes itself."""
    if plan.write is None or plan.outreg:
        return 0
    a = max(1, (plan.words - 1).bit_length())
    return (1 + a + plan.width) + (1 + plan.width)


def primitive_shape(words: int) -> tuple[int, int]:
    """Return the DP16KD shape (words, bits) of a memory of ``words`` words: the narrowest
    deep enough (``PRIMITIVE_SHAPES``)."""
    return next(s for s in PRIMITIVE_SHAPES if s[0] >= words)


def primitive_fits(plan: MemPlan, family: str) -> bool:
    """Whether the emitter can instantiate the memory's RAM with its output register."""
    return family in OUTREG_CLK_TO_OUT_NS and plan.words <= PRIMITIVE_SHAPES[-1][0]


def with_output_registers(mems: list[MemPlan], family: str, costs: CostModel,
                          usable_ns: float) -> list[MemPlan]:
    """Return the plans with ``outreg`` set on every block RAM whose plain read (``read_delay``)
    does not fit the usable period and whose primitive the emitter instantiates (ECP5:
    DP16KD columns of one shape, ``primitive_shape``); the block count is then the columns'."""
    out = []
    for m in mems:
        if (m.mapped_to == "bram" and primitive_fits(m, family)
                and read_delay(m, family, costs) > usable_ns + 1e-9):
            m = dataclasses.replace(m, outreg=True,
                                    blocks=-(-m.width // primitive_shape(m.words)[1]),
                                    why=f"{m.why}, read through its output register")
        out.append(m)
    return out


def outreg_note(schedule: Schedule) -> str:
    """The report's note on the memories read through their RAM's output register ("" when
    none is)."""
    mems = [m for m in (schedule.state.mems if schedule.state else ()) if m.outreg]
    if not mems:
        return ""
    names = ", ".join(f"`{m.name}`" for m in mems)
    return (f"memor{'ies' if len(mems) > 1 else 'y'} {names} read through the block RAM's "
            "output register (the read alone does not fit the period): the address is "
            "registered two stages before the data, the writes not yet in the RAM are forwarded")


def bram_reads(schedule: Schedule) -> set[bytes]:
    """Return the node ids of block RAM reads (the RAM's data port, not a multiplexer): the
    `mem`s' and the ROMs' (``kera.hls.rom``)."""
    reads = set(schedule.roms)
    if schedule.state is not None:
        reads |= {m.ports.read for m in schedule.state.mems if m.ports is not None}
    return reads


def bram_blocks(schedule: Schedule) -> int:
    """Return the block RAMs a schedule's memories and ROMs take."""
    from kera.hls.rom import port_blocks

    roms = port_blocks(schedule) if schedule.roms else 0
    if schedule.state is None:
        return roms
    return roms + sum(m.blocks for m in schedule.state.mems if m.mapped_to == "bram")


__all__ = ["BRAM_BITS", "OUTREG_CLK_TO_OUT_NS", "OUTREG_NET_NS", "PRIMITIVE_SHAPES",
           "TINY_BITS", "BramPorts", "MemPlan", "Write", "bram_blocks", "bram_reads", "chain",
           "emulated_read_first_bits", "forward_bits", "normalise", "outreg_note",
           "plan_memories", "primitive_fits", "primitive_shape", "read_delay", "state_ff_bits",
           "with_output_registers"]
