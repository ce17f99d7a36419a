"""A stage's bitwise logic covered by LUT4s for area within the clock, written as LUT4 cells.

``synth_ecp5`` gives abc9 no delay target, so abc9 maps every cone for the least depth and,
with ECP5's wide functions, duplicates logic rather than add a LUT level however much of the
period is left: popcount64 at 150 MHz (yosys 0.70, nextpnr 0.11, seeds 1-3) takes 138 LUT4 and
22 CCU2C where its eight byte counts need 11 LUT4 each (nibble counts, then a 3 + 3-bit sum),
which placed as LUT4 instances give 90 LUT4 and 22 CCU2C at 210.8 MHz; the hand-pipelined core
takes 98 LUT4 and 16 CCU2C (docs/models.md, twenty-ninth run). abc9 does not remap a ``LUT4``
the Verilog instantiates (``kera.hls.muxpair``, ``kera.hls.zeroflag`` rely on it too).

:func:`plan_covers` covers, stage by stage, the bitwise nodes of a schedule (``lutmap``'s
bit-by-bit ops, but orderings, which yosys builds as carry chains, and the cells other modules
write) as one and-inverter graph of their bits (:class:`Aig`): 4-input cuts with area
recovery (``kera.hls.cutmap.cover``) under the stage's usable period as the required time,
each LUT's ``INIT`` its cone's truth table; where its linear output bits share xors
(``kera.hls.xorshare``: a CRC's, an ECC's) the graph rebuilt with them is covered too and the
smaller cover within the period kept. A stage keeps its cover where it takes fewer LUT4
sites than the estimate's abc9-like mapping of the same nodes and the bit-level timing
(``kera.hls.sta``, which times the LUTs as cells) still meets the period, or is no slower.
``kera.rtl.emit`` writes the LUTs under ``ifdef SYNTHESIS`` (the ops as they are for
simulation); the estimate counts them one site each. ECP5 (``LUT4``) and iCE40 (``SB_LUT4``:
no wide function there, but abc9's least-depth mapping still duplicates: eq64 at 12 MHz 59 ->
46 LUTs placed), stateless pipelines at II 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kera import progress
from kera.hls.lutmap import element, is_bitwise, moved, tuple_field, updated
from kera.ir.types import IntType, Type

if TYPE_CHECKING:
    from kera.hls.pipeline import Schedule
    from kera.hls.timing import CostModel
    from kera.ir.graph import Node

#: The families whose bit networks may be written as LUT cells: the cell, its truth-table
#: parameter, its input pins (``INIT[{D, C, B, A}]``) and its output pin.
LUT_CELLS = {"ecp5": ("LUT4", "INIT", ("A", "B", "C", "D"), "Z"),
             "ice40": ("SB_LUT4", "LUT_INIT", ("I0", "I1", "I2", "I3"), "O")}
#: The inputs of one LUT.
K = 4
#: A stage keeps its cover only where it saves at least this fraction of the LUT4 sites the
#: estimate gives the same nodes (and at least ``MIN_SAVED`` sites).
MIN_GAIN = 0.1
MIN_SAVED = 2
#: The largest graph of one stage's bits (and-nodes) covered: the cut enumeration is Python.
MAX_AND_NODES = 60_000
SHOW_NODES = 2_000
"""A design of at least this many nodes (lowered for hardware) shows a bar while it is
scheduled (``kera.hls.synth``) and while its stages are covered (on a terminal, without
``--quiet``; ``kera.progress``)."""
#: Orderings: yosys builds them (against a constant too) as ``$alu`` carry chains.
_ORDERS = frozenset({"lt", "le", "gt", "ge"})
#: Input patterns of the four pins over the 16 rows of a truth table.
_PINS = (0xAAAA, 0xCCCC, 0xF0F0, 0xFF00)

#: A bit the cover reads: (node, bit, read through the bank before the stage).
Leaf = tuple[bytes, int, bool]
#: Where an output bit comes from: ("0" | "1", 0), ("leaf", k) or ("lut", k).
Source = tuple[str, int]


@dataclass(frozen=True)
class Lut:
    """One LUT4 cell: its inputs (``~k`` for leaf ``k``, ``k >= 0`` for LUT ``k``), its
    truth table and the node its root bit belongs to (whose estimate it is charged to);
    ``pins``: the pin of each input (empty: input ``j`` on pin ``j``), the unused pins tied 0."""

    inputs: tuple[int, ...]
    init: int
    owner: bytes
    pins: tuple[int, ...] = ()

    def pin_of(self, j: int) -> int:
        """Return the pin input ``j`` is on."""
        return self.pins[j] if self.pins else j


@dataclass(frozen=True)
class StageCover:
    """The LUT cover of one stage's bitwise nodes (``nodes``, in the schedule's order)."""

    stage: int
    nodes: tuple[bytes, ...]
    leaves: tuple[Leaf, ...]
    luts: tuple[Lut, ...]
    #: Each node read outside the cover (another stage, another op, the result) -> its bits.
    outputs: tuple[tuple[bytes, tuple[Source, ...]], ...]

    def sites(self) -> dict[bytes, int]:
        """Return the LUTs by the node they are charged to."""
        out: dict[bytes, int] = dict.fromkeys(self.nodes, 0)
        for lut in self.luts:
            out[lut.owner] += 1
        return out


# --- the and-inverter graph ---------------------------------------------------------------


class Aig:
    """An and-inverter graph: literal ``2 * v + c`` is variable ``v`` (complemented when
    ``c``); variable 0 is the constant 0, so literals 0 and 1 are the constants. Variables are
    leaves or 2-input ands, numbered in creation order (topological); equal ands are one."""

    def __init__(self) -> None:
        self.fanin: list[tuple[int, int] | None] = [None]  # None: the constant or a leaf
        self.owner: list[bytes] = [b""]
        self.leaves: list[Leaf] = []
        self.leaf_var: dict[Leaf, int] = {}
        self._strash: dict[tuple[int, int], int] = {}
        self.node = b""  # the graph node whose bits are being made

    def leaf(self, key: Leaf) -> int:
        v = self.leaf_var.get(key)
        if v is None:
            v = self.leaf_var[key] = len(self.fanin)
            self.fanin.append(None)
            self.owner.append(key[0])
            self.leaves.append(key)
        return 2 * v

    def and_(self, a: int, b: int) -> int:
        if a > b:
            a, b = b, a
        if a == 0 or a ^ 1 == b:
            return 0
        if a == 1 or a == b:
            return b
        v = self._strash.get((a, b))
        if v is None:
            v = self._strash[(a, b)] = len(self.fanin)
            self.fanin.append((a, b))
            self.owner.append(self.node)
        return 2 * v

    def or_(self, a: int, b: int) -> int:
        return self.and_(a ^ 1, b ^ 1) ^ 1

    def xor(self, a: int, b: int) -> int:
        if a < 2 or b < 2:  # a constant: the other or its complement
            return b ^ a if a < 2 else a ^ b
        return self.or_(self.and_(a, b ^ 1), self.and_(a ^ 1, b))

    def mux(self, c: int, x: int, y: int) -> int:
        """``c ? x : y``."""
        if x == y:
            return x
        return self.or_(self.and_(c, x), self.and_(c ^ 1, y))

    def any(self, bits: Sequence[int]) -> int:
        """The or of ``bits`` as a balanced tree (0 for none)."""
        return self._tree(self.or_, bits)

    def parity(self, bits: Sequence[int]) -> int:
        """The xor of ``bits`` as a balanced tree (0 for none)."""
        return self._tree(self.xor, bits)

    @staticmethod
    def _tree(op: Callable[[int, int], int], bits: Sequence[int]) -> int:
        level = list(bits)
        while len(level) > 1:
            level = [op(level[i], level[i + 1]) if i + 1 < len(level) else level[i]
                     for i in range(0, len(level), 2)]
        return level[0] if level else 0

    def truth(self, root: int, cut: Sequence[int], negated: set[int],
              pins: Sequence[int] = ()) -> int:
        """Return the 16-row truth table of variable ``root`` over the variables ``cut``
        (``cut[j]`` on pin ``pins[j]``, or ``j`` without ``pins``; a ``negated`` one's LUT
        gives its complement)."""
        full = 0xFFFF
        pin = list(pins) or list(range(len(cut)))
        value = {v: (_PINS[pin[j]] ^ full if v in negated else _PINS[pin[j]])
                 for j, v in enumerate(cut)}
        value[0] = 0
        stack = [root]
        while stack:
            v = stack[-1]
            if v in value:
                stack.pop()
                continue
            fanin = self.fanin[v]
            assert fanin is not None, "a cut reaches every leaf of its cone"
            a, b = fanin
            todo = [w for w in (a >> 1, b >> 1) if w not in value]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            va = value[a >> 1] ^ (full if a & 1 else 0)
            vb = value[b >> 1] ^ (full if b & 1 else 0)
            value[v] = va & vb
        return value[root]


# --- the ops, bit by bit (SEMANTICS.md; as ``kera.hls.lutmap`` evaluates them) --------------

Rule = Callable[[Aig, "Node", list[list[int]], list[Type]], list[int]]


def _const_value(bits: list[int]) -> int | None:
    if any(b > 1 for b in bits):
        return None
    return sum(b << i for i, b in enumerate(bits))


def _extend(bits: list[int], t: Type, width: int) -> list[int]:
    fill = bits[-1] if isinstance(t, IntType) and t.signed and bits else 0
    return (bits + [fill] * width)[:width]


def _logic(kind: str) -> Rule:
    def rule(aig: Aig, node: Node, ins: list[list[int]], types: list[Type]) -> list[int]:
        f = {"and": aig.and_, "or": aig.or_, "xor": aig.xor}[kind]
        return [f(a, b) for a, b in zip(ins[0], ins[1], strict=True)]

    return rule


def _array_index(aig: Aig, node: Node, ins: list[list[int]], types: list[Type]) -> list[int]:
    index = _const_value(ins[1])
    assert index is not None
    return element(ins[0], types[0], index)


def _array_update(aig: Aig, node: Node, ins: list[list[int]], types: list[Type]) -> list[int]:
    index = _const_value(ins[1])
    assert index is not None
    return updated(ins[0], types[0], index, ins[2])


def _shift(aig: Aig, node: Node, ins: list[list[int]], types: list[Type]) -> list[int]:
    amount = _const_value(ins[1])
    assert amount is not None
    t = types[0]
    return moved(node.op, ins[0], amount, 0, isinstance(t, IntType) and t.signed)


def _equal(aig: Aig, node: Node, ins: list[list[int]], types: list[Type]) -> list[int]:
    differ = aig.any([aig.xor(a, b) for a, b in zip(ins[0], ins[1], strict=True)])
    return [differ if node.op == "ne" else differ ^ 1]


def _select(aig: Aig, node: Node, ins: list[list[int]], types: list[Type]) -> list[int]:
    (c,), x, y = ins
    return [aig.mux(c, a, b) for a, b in zip(x, y, strict=True)]


RULES: dict[str, Rule] = {
    "and": _logic("and"), "or": _logic("or"), "xor": _logic("xor"),
    "not": lambda aig, node, ins, types: [b ^ 1 for b in ins[0]],
    "select": _select,
    "cast": lambda aig, node, ins, types: _extend(ins[0], types[0], node.type.flat_width),
    "slice": lambda aig, node, ins, types: _extend(ins[0][int(node.attr("lo")):],
                                                   IntType(1, False), node.type.flat_width),
    "concat": lambda aig, node, ins, types: ins[1] + ins[0],  # the second is the low part
    "tuple": lambda aig, node, ins, types: [b for bits in ins for b in bits],
    "array": lambda aig, node, ins, types: [b for bits in ins for b in bits],
    "tuple_get": lambda aig, node, ins, types: tuple_field(ins[0], types[0],
                                                          int(node.attr("index"))),
    "array_index": _array_index, "array_update": _array_update,
    "shl": _shift, "shr": _shift, "rotl": _shift, "rotr": _shift, "eq": _equal, "ne": _equal,
}


# --- which nodes, and the cover of one stage ----------------------------------------------


def coverable(schedule: Schedule) -> dict[int, list[bytes]]:
    """Return, by stage, the nodes a cover may take (schedule order): bitwise ones (not an
    ordering, a multiplexer pair, a zero flag, a select folded into the flip-flops' reset, a
    chained update, a constant aggregate), in a stateless schedule without shared units (at
    II > 1 its datapath is II 1's) of a family with LUT cells."""
    from kera.hls.muxpair import mux_pairs
    from kera.hls.resources import registered_selects
    from kera.hls.zeroflag import zero_flags
    from kera.rtl.updates import folded_updates

    if schedule.family not in LUT_CELLS or schedule.state is not None \
            or schedule.bound():
        return {}
    graph = schedule.graph
    nodes = graph.nodes
    skip = {*mux_pairs(schedule), *zero_flags(schedule), *registered_selects(schedule),
            *schedule.virtual}
    folded = folded_updates(schedule)
    constant: set[bytes] = set()
    out: dict[int, list[bytes]] = {}
    for nid in schedule.order:
        node = nodes[nid]
        if node.op == "const" or (node.op in ("array", "tuple") and all(
                u in constant for u in node.inputs)):
            constant.add(nid)
            continue
        if nid in skip or node.op not in RULES or node.type.flat_width == 0 \
                or not is_bitwise(graph, node):
            continue
        if nid in folded or (node.op == "array_update" and node.inputs[0] in folded):
            continue  # a chain of updates is written as one wire (``kera.rtl.updates``)
        out.setdefault(schedule.stage[nid], []).append(nid)
    return out


def _outputs(schedule: Schedule, members: set[bytes]) -> list[bytes]:
    """Return the members read outside the cover: by another op, in another stage, or as the
    result, a state's next value or a late write's value."""
    graph = schedule.graph
    region = graph.regions[schedule.region]
    needed = {region.result, *(s.next for s in region.states), *schedule.extra_uses}
    stage = schedule.stage
    for nid in schedule.order:
        for u in graph.nodes[nid].inputs:
            if u in members and (nid not in members or stage[nid] != stage[u]):
                needed.add(u)
    return [n for n in schedule.order if n in members and n in needed]


def build_aig(schedule: Schedule, s: int, members: list[bytes]) -> tuple[Aig, dict[bytes,
                                                                                list[int]]]:
    """Return the and-inverter graph of stage ``s``'s ``members`` and their bits (literals)."""
    graph = schedule.graph
    nodes, stage = graph.nodes, schedule.stage
    inside = set(members)
    aig = Aig()
    bits: dict[bytes, list[int]] = {}

    def value(u: bytes) -> list[int]:
        if u in bits:
            return bits[u]
        node = nodes[u]
        if node.op == "const":
            w = node.type.flat_width
            v = int(node.attr("value")) & ((1 << w) - 1)
            bits[u] = [v >> i & 1 for i in range(w)]
            return bits[u]
        if node.op in ("array", "tuple") and u not in inside:  # a constant aggregate
            parts = [value(i) for i in node.inputs]
            if all(b < 2 for p in parts for b in p):
                bits[u] = [b for p in parts for b in p]
                return bits[u]
        registered = stage.get(u, s) != s
        return [aig.leaf((u, i, registered)) for i in range(node.type.flat_width)]

    for nid in members:
        node = nodes[nid]
        aig.node = nid
        ins = [value(u) for u in node.inputs]
        bits[nid] = RULES[node.op](aig, node, ins, [nodes[u].type for u in node.inputs])
    return aig, bits


#: Covers already found, by the graph they cover: (fanin, leaf arrivals, roots, required
#: time, LUT and net delays) -> each LUT's root -> its cut (``cover_stage``'s ``memo``).
CoverMemo = dict[tuple[object, ...], dict[int, frozenset[int]]]


def cover_stage(schedule: Schedule, s: int, members: list[bytes], required_ns: float,
                lut_ns: float, wire_ns: float, arrival_ns: dict[bytes, float],
                leaf_net_ns: float = 0.0, memo: CoverMemo | None = None,
                pin_ns: Sequence[float] = ()) -> StageCover | None:
    """Return the area-oriented LUT4 cover of stage ``s``'s ``members`` whose every output
    arrives by ``required_ns`` (LUT ``lut_ns`` and net ``wire_ns`` a level, the last net not
    counted; a leaf of this stage when ``arrival_ns`` says, a register's at 0, and then its
    net, ``leaf_net_ns``), or the delay-optimal one where that is later; None where the stage
    is too big (``MAX_AND_NODES``) or has no output.

    ``memo`` keeps the cuts chosen for each and-inverter graph (numbered as ``cover`` reads
    it): the cover is a function of that graph alone, so a stage whose graph another stage
    has (an unrolled loop's rounds: AES-128's nine middle rounds at 25 MHz, XTEA's 128
    stages at 150 MHz of two shapes) takes the cuts found for it.

    ``pin_ns``, the delay of the cell from each of its pins where they differ (iCE40's
    SB_LUT4: I3 0.41 ns faster than I0), puts each LUT's inputs on its fastest pins, the
    latest input on the fastest (``_pins``), as abc9 does with the pin delays of the cell
    library; without it input ``j`` is on pin ``j``.

    Where the stage's linear output bits share xors (``kera.hls.xorshare.restructure``), the
    graph rebuilt with them is covered too, and its cover taken where it has fewer LUTs and
    its latest output still arrives within the period (or no later than the other's)."""
    outputs = _outputs(schedule, set(members))
    if not outputs:
        return None
    aig, bits = build_aig(schedule, s, members)
    leaf_at = [(0.0 if reg else arrival_ns.get(u, 0.0)) + leaf_net_ns for u, _, reg in aig.leaves]
    timing = (required_ns, lut_ns, wire_ns, tuple(leaf_at), tuple(pin_ns))
    plain = _cover_graph(aig, bits, outputs, timing, memo)
    if plain is None:
        return None
    from kera.hls.xorshare import restructure

    shared = restructure(aig, bits, outputs)
    if shared is not None:  # the linear bits' common xors: kept where smaller in time
        alt = _cover_graph(*shared, outputs, timing, memo)
        if alt is not None and len(alt[0]) < len(plain[0]) \
                and alt[2] <= max(required_ns + wire_ns, plain[2]) + 1e-6:
            aig, plain = shared[0], alt
    luts, outs, _ = plain
    return StageCover(s, tuple(members), tuple(aig.leaves), tuple(luts), outs)


#: What a cover is timed by: required time, LUT and net delays, leaf arrivals, pin delays.
Timing = tuple[float, float, float, tuple[float, ...], tuple[float, ...]]


def _cover_graph(aig: Aig, bits: dict[bytes, list[int]], outputs: list[bytes], timing: Timing,
                 memo: CoverMemo | None
                 ) -> tuple[list[Lut], tuple[tuple[bytes, tuple[Source, ...]], ...], float] | None:
    """Return the LUTs of an area cover of ``aig`` whose outputs are ``bits`` of ``outputs``,
    each output's sources, and the latest output's arrival (its net after it included);
    None where the graph is too big (``MAX_AND_NODES``)."""
    required_ns, lut_ns, wire_ns, leaf_at, pin_ns = timing
    ands = [v for v, f in enumerate(aig.fanin) if f is not None]
    if len(ands) > MAX_AND_NODES:
        return None
    leaf_vars = [aig.leaf_var[k] for k in aig.leaves]
    number = {v: i for i, v in enumerate(leaf_vars)}
    for v in ands:
        number[v] = len(number)
    from kera.hls.cutmap import cover

    fanin = []
    for v in ands:
        a, b = aig.fanin[v]  # type: ignore[misc]
        fanin.append((number[a >> 1], number[b >> 1]))
    roots = {number[b >> 1] for nid in outputs for b in bits[nid] if aig.fanin[b >> 1]}
    key = (tuple(fanin), tuple(leaf_at), tuple(sorted(roots)), required_ns, lut_ns, wire_ns)
    chosen = None if memo is None else memo.get(key)
    if chosen is None:
        chosen = cover(fanin, leaf_at, roots, [(1.0, lut_ns)] * K, wire_ns,
                       required=required_ns + wire_ns)
        if memo is not None:
            memo[key] = chosen
    var = leaf_vars + ands  # signal number -> variable
    order = sorted(chosen)  # topological: a cut's signals come before its root
    # polarity: a LUT gives its root's complement where only complemented output bits read it
    pos = {b >> 1 for nid in outputs for b in bits[nid] if not b & 1}
    neg = {b >> 1 for nid in outputs for b in bits[nid] if b & 1}
    negated = {var[r] for r in order if var[r] in neg and var[r] not in pos}
    index: dict[int, int] = {}
    luts: list[Lut] = []
    at = dict(enumerate(leaf_at))  # signal -> arrival, with the pins' delays
    for r in order:
        cut = sorted(chosen[r])
        pins: tuple[int, ...] = ()
        if pin_ns:
            cut, pins, at[r] = _pins(cut, at, pin_ns, wire_ns)
        else:
            at[r] = max(at[c] for c in cut) + lut_ns + wire_ns
        v = var[r]
        table = aig.truth(v, [var[c] for c in cut], negated, pins)
        if v in negated:
            table ^= 0xFFFF
        ins = tuple(index[var[c]] if c >= len(leaf_vars) else ~c for c in cut)
        index[v] = len(luts)
        luts.append(Lut(ins, table, aig.owner[v], pins))
    extra: dict[tuple[int, int], int] = {}  # the other polarity of a LUT or leaf, by need
    fast = min(range(len(pin_ns)), key=lambda p: (pin_ns[p], p)) if pin_ns else 0

    def source(lit: int, owner: bytes) -> Source:
        v, c = lit >> 1, lit & 1
        if v == 0:
            return (str(c), 0)
        if aig.fanin[v] is None:  # a leaf
            k = number[v]
            if not c:
                return ("leaf", k)
            key = (~k, 0x5555)
        else:
            k = index[v]
            if c == (v in negated):
                return ("lut", k)
            key = (k, 0x5555)
        if key not in extra:  # an inverter, written as a LUT of the other polarity's cut
            extra[key] = len(luts)
            if key[0] >= 0:
                base = luts[key[0]]
                luts.append(Lut(base.inputs, base.init ^ 0xFFFF, owner, base.pins))
            else:  # on the fastest pin
                luts.append(Lut((key[0],), _PINS[fast] ^ 0xFFFF, owner, (fast,) if pin_ns else ()))
        return ("lut", extra[key])

    outs = tuple((nid, tuple(source(b, nid) for b in bits[nid])) for nid in outputs)
    latest = max((at[r] for r in roots), default=0.0)
    return luts, outs, latest


def _pins(cut: list[int], at: dict[int, float], pin_ns: Sequence[float], wire_ns: float
          ) -> tuple[list[int], tuple[int, ...], float]:
    """Return a LUT's inputs in pin order, their pins and its output's arrival: the inputs on
    the ``len(cut)`` fastest pins, the later an input arrives (``at``; ties by signal number)
    the faster its pin."""
    fast = sorted(range(len(pin_ns)), key=lambda p: (-pin_ns[p], p))[len(pin_ns) - len(cut):]
    ins = sorted(cut, key=lambda c: (at[c], c))
    arrival = max(at[c] + pin_ns[p] for c, p in zip(ins, fast, strict=True)) + wire_ns
    return ins, tuple(fast), arrival


# --- the choice ----------------------------------------------------------------------------


def plan_covers(schedule: Schedule, costs: CostModel, budget_ns: float) -> Schedule:
    """Return ``schedule`` with the covers of the stages where one saves LUT4 sites and keeps
    the bit-level timing within ``budget_ns`` (or no slower than without it)."""
    from dataclasses import replace

    from kera.hls.resources import network_sites
    from kera.hls.sta import analyse_bits, cover_net, design_size, lut_delays, net_delay, pin_delays

    stages = coverable(schedule)
    if not stages:
        return schedule
    size = design_size(schedule, costs)
    sites = network_sites(schedule, costs)
    lut_ns = lut_delays(costs)[K - 1]
    wire_ns = (cover_net(costs) or net_delay(costs, size))(2)
    arrival = _arrivals(schedule, costs)
    memo: CoverMemo = {}
    found: list[StageCover] = []
    with progress.task(f"covering the stages of `{schedule.region}` with LUTs", len(stages),
                       unit="stages", show=len(schedule.order) >= SHOW_NODES) as bar:
        for s, members in sorted(stages.items()):
            bar.advance()
            before = sum(sites.get(n, 0) for n in members)
            if before < MIN_SAVED:
                continue  # wiring: nothing to save
            got = cover_stage(schedule, s, members, budget_ns, lut_ns, wire_ns, arrival,
                              net_delay(costs, size)(1), memo, pin_delays(costs))
            if got is not None and before - len(got.luts) >= max(MIN_SAVED, MIN_GAIN * before):
                found.append(got)
    base = analyse_bits(schedule, costs, size) if found else None
    for _ in range(3):  # drop the stages the timing says a cover slows past the budget
        if not found or base is None:  # (base: None where nothing was found)
            return schedule
        cand = replace(schedule, covers=tuple(found))
        bits = analyse_bits(cand, costs, size - sum(
            sum(sites.get(n, 0) for n in c.nodes) - len(c.luts) for c in found))
        late = {c.stage for c in found
                if bits.stage_delays[c.stage] > max(budget_ns, base.stage_delays[c.stage]) + 1e-6}
        if not late:
            cell = LUT_CELLS[schedule.family][0]
            notes = [f"stage {c.stage}: its bitwise logic is {len(c.luts)} {cell} cells covered "
                     "for area within the period, where yosys's least-depth mapping takes about "
                     f"{sum(sites.get(n, 0) for n in c.nodes)} LUT sites (kera.hls.lutcover)"
                     for c in found]
            return replace(cand, notes=(*cand.notes, *notes))
        found = [c for c in found if c.stage not in late]
    return schedule


def _arrivals(schedule: Schedule, costs: CostModel) -> dict[bytes, float]:
    """Return each node's arrival (ns) in its stage as the scheduler chains delays: what a
    leaf of a cover computed in the same stage (a carry chain's sum) arrives at."""
    graph, stage = schedule.graph, schedule.stage
    out: dict[bytes, float] = {}
    for nid in schedule.order:
        node = graph.nodes[nid]
        out[nid] = max((out[u] for u in node.inputs if u in out and stage.get(u) == stage[nid]),
                       default=0.0) + costs.delay(graph, node)
    return out


def cover_of(schedule: Schedule) -> dict[bytes, StageCover]:
    """Return each covered node -> its stage's cover."""
    return {nid: c for c in schedule.covers for nid in c.nodes}


__all__ = ["LUT_CELLS", "Aig", "Lut", "StageCover", "build_aig", "cover_of", "cover_stage",
           "coverable", "plan_covers"]

