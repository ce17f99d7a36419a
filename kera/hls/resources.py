"""Resource estimate of a scheduled pipeline: LUT, FF, carry, DSP, BRAM, by op and in total.

* Operators: the family model's area for each node (``CostModel.area``), summed per opcode.
  Wiring (``cast``, ``slice``, ``concat``, ``tuple``, ...) costs nothing. Bitwise nodes cost
  the LUTs of the bit network (``kera.hls.lutmap``) rebuilt with the schedule's registers, so
  a value registered between stages is a LUT output on one side and fresh leaves on the other.
  Multiplies beyond the board's DSPs are LUT circuits (``CostModel.lut_multipliers``).
  At ii > 1 a shared unit (``Schedule.units``) counts once, on a DSP or as LUTs as the binding
  says, plus its multiplexers (the ``share_mux`` row); private multiplies get the DSPs left.
* Pipeline registers: the distinct non-constant bits of every value a bank holds
  (``Schedule.crossing()``; yosys trims constant flip-flops and merges duplicates) plus one
  valid bit per bank for the handshake, costed by the model's ``reg_cost``. With aligned
  starts the physical registers of the binding (``Schedule.register_binding``) count instead,
  each as the live bits of its widest-kept value, and their input multiplexers (``reg_mux``:
  one select per bit and extra source) as LUTs.
* BRAM: the block RAMs of the schedule's memories (``kera.hls.memory``), and the logic the
  emitted Verilog puts around each (``bram_glue``, the ``bram_glue`` row).

Every resource counts what the place-and-route tool's utilisation counts (``Resources.notes``,
from the model file's ``resource_notes``: e.g. ECP5 LUTs are LUT4 sites, CCU2C halves
included). Utilisation is each total divided by the board's capacity; a resource above 100 %
gives a warning, and one above 80 % a softer one (routing gets hard). ``check_fits`` turns the
first into the error ``synthesize`` stops with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kera.diagnostics import KeraError
from kera.hls.cutmap import leaf_arrivals, map_sites
from kera.hls.lutcover import cover_of
from kera.hls.lutmap import (
    Bit,
    BitNetwork,
    ToolNetwork,
    _logic,
    _mux,
    _not,
    is_bitwise,
    lut_levels,
    significant_width,
    tool_network,
)
from kera.hls.muxpair import mux_pairs
from kera.hls.pipeline import Schedule
from kera.hls.rom import port_mux_inputs
from kera.hls.sharing.classes import mux_lut_per_input
from kera.hls.sharing.columns import column_lut, kept_register_bits, merged_signals
from kera.hls.timing import AREA_KEYS, MUL_OPS, ORDERINGS, SUBTRACTING, CostModel, absorbed_in
from kera.hls.zeroflag import zero_flags
from kera.ir.graph import Node
from kera.ir.types import IntType

#: Orderings, bitwise when against a constant.
ORDERS = frozenset({"lt", "le", "gt", "ge"})

#: Resource keys of an estimate, in report order.
RESOURCE_KEYS: tuple[str, ...] = ("lut", "ff", "carry", "dsp", "bram")
#: Resources with a board capacity.
CAPACITY_KEYS: tuple[str, ...] = ("lut", "ff", "dsp", "bram")
#: Above this utilisation a design is reported as hard to route.
TIGHT = 0.8


@dataclass(frozen=True)
class Resources:
    """An area estimate: totals, per-op breakdown, pipeline registers, utilisation, warnings."""

    total: dict[str, int]
    by_op: dict[str, dict[str, Any]]
    register_bits: int  # the flat widths of the values the banks hold
    valid_bits: int
    registers: dict[str, int]
    utilisation: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    #: Per resource, what it counts (the model's ``resource_notes``), for the report.
    notes: dict[str, str] = field(default_factory=dict)
    #: Per capacity resource, (need, capacity) where the design does not fit.
    overfull: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Register bits after yosys's trimming: constant bits dropped, duplicate bits merged.
    kept_bits: int = 0


def schedule_costs(schedule: Schedule, costs: CostModel, dsp: Any = None) -> CostModel:
    """Return the cost model the estimate of ``schedule`` uses: ``costs`` with the board's
    ``dsp`` count as budget when it has none, less the DSPs of shared units (whose ops take
    no part in the count). ``kera.rtl`` asks it which multiplies to build from LUTs."""
    graph = schedule.graph
    if costs.dsp_budget is None and dsp is not None:
        costs = CostModel(costs.model, int(dsp))
    bound = schedule.bound()
    if bound:
        used = sum(costs.area(graph, graph.nodes[u.ops[0]])["dsp"] for u in schedule.units
                   if u.on_dsp and len(u.ops) > 1) if costs.dsp_budget is not None else 0
        left = None if costs.dsp_budget is None else max(0, costs.dsp_budget - int(used))
        costs = CostModel(costs.model, left, exclude=frozenset(bound))
    if schedule.pipelined and costs.pipelined != schedule.pipelined:  # the DSPs' own registers
        costs = CostModel(costs.model, costs.dsp_budget, costs.exclude, schedule.pipelined)
    return costs


def estimate(schedule: Schedule, costs: CostModel, capacities: Any = None) -> Resources:
    """Return the resource estimate of ``schedule``; ``capacities`` is the board's (optional).

    ``capacities`` may be a ``Capacities`` object or a mapping with ``lut``/``ff``/``dsp``/
    ``bram``; its DSP count bounds the multiplies on DSPs when ``costs`` has no budget yet.
    """
    graph = schedule.graph
    caps = _caps(capacities)
    costs = schedule_costs(schedule, costs, caps.get("dsp"))
    bound = schedule.bound()
    stage = schedule.stage
    twins = twin_ops(schedule)
    net = _estimate_network(schedule, costs, twins)
    luts = _network_luts(schedule, costs, net)
    by_op: dict[str, dict[str, float]] = {}
    from kera.hls.memory import bram_reads

    rams = bram_reads(schedule)
    maccs = merged_negations(schedule, costs, net)
    # the sums selects absorb, as the schedule's registers leave them (``absorbed_in``);
    # ECP5: as the graph's (its only absorbed sums are gate sums of <= 4 bits, whose fitted
    # LUT table is above what abc9 makes of a division row: edge_semantics at 150 MHz, a row
    # 18 sites estimated with both LUTs kept, 9 LUT4 + 1 PFUMX in yosys's netlist)
    absorbed = None if costs.sums_in_carry_cells else absorbed_in(graph, net._input, luts,
                                                                    stage)
    in_dsp = dsp_accumulators(schedule, costs)
    for nid in schedule.order:
        if (nid in schedule.virtual or nid in rams or nid in bound or nid in in_dsp
                or nid in twins):
            continue  # a block RAM's chain and read: the RAM, counted below; units: below
        node = graph.nodes[nid]
        bitwise = is_bitwise(graph, node) or nid in net.rom_gated
        area = dict.fromkeys(AREA_KEYS, 0.0) if bitwise else maccs.get(nid) or costs.area(
            graph, node, absorbed)
        if bitwise:
            area["lut"] = float(luts.get(nid, 0))
        if not any(area.values()):
            continue
        row = by_op.setdefault(node.op, {"count": 0, **dict.fromkeys(AREA_KEYS, 0.0)})
        row["count"] += 1
        for k in AREA_KEYS:
            row[k] += area[k]
    if bound:
        _unit_rows(schedule, costs, by_op, luts)
    inverters = registered_inverters(schedule, costs)
    if inverters:
        by_op["inverter"] = {"count": inverters, **dict.fromkeys(AREA_KEYS, 0.0),
                             "lut": float(inverters)}
    glue = bram_glue(schedule, costs)
    if glue["count"]:
        by_op["bram_glue"] = glue
    ports = port_mux_inputs(schedule) if schedule.roms else 0
    if ports:  # the shared ROM read ports' address multiplexers (``kera.hls.rom``)
        by_op["rom_mux"] = {"count": 1, **dict.fromkeys(AREA_KEYS, 0.0),
                            "lut": ports * mux_lut_per_input(costs)}
    control = handshake_luts(schedule, costs)
    if control:
        by_op["handshake"] = {"count": 1, **dict.fromkeys(AREA_KEYS, 0.0), "lut": control}
    banks = schedule.crossing()
    binding = schedule.register_binding if schedule.aligned else None
    if binding is not None:  # registers shared on the modulo circle (kera.hls.regbind)
        register_bits = binding.bits
        kept = kept_register_bits(schedule)
        kept_bits = sum(min(n, max(net.live_bits(c.nid) for c in r.copies))
                        for n, r in zip(kept.flops, binding.registers, strict=True))
        if kept.mux:
            sel = mux_lut_per_input(costs)
            mux = by_op.setdefault("reg_mux", {"count": 0, **dict.fromkeys(AREA_KEYS, 0.0)})
            mux["count"] += sum(1 for r in binding.registers if len(r.sources) > 1)
            mux["lut"] += sum(column_lut(col, sel) for col in kept.mux)
    else:
        register_bits = sum(graph.nodes[n].type.flat_width for bank in banks for n in bank)
        inside = dsp_registers(schedule, costs, banks)
        read = _read_leaves(net, schedule.roms)
        whole = frozenset(n for n in maccs if graph.nodes[n].op != "neg")
        kept_bits = sum(_bank_bits(net, [n for n in bank if (k, n) not in inside], read,
                                   {n for n in bank if stage[n] < k}, whole)
                        for k, bank in enumerate(banks))
        kept_bits -= dsp_output_halves(schedule, costs, banks, inside)
    valid_bits = schedule.latency
    counter_bits = (schedule.ii - 1).bit_length()  # the II counter (``handshake_luts``)
    from kera.hls.memory import state_ff_bits  # the state registers (STATE.md)

    state_bits = state_ff_bits(schedule) - dead_state_bits(schedule, net)
    regs = costs.register_area(kept_bits + valid_bits + counter_bits + state_bits)
    total = dict.fromkeys(RESOURCE_KEYS, 0.0)
    for row in by_op.values():
        for k in AREA_KEYS:
            total[k] += row[k]
    for k in AREA_KEYS:
        total[k] += regs.get(k, 0.0)
    from kera.hls.memory import bram_blocks

    total["bram"] = total.get("bram", 0.0) + bram_blocks(schedule)
    totals = {k: int(round(v)) for k, v in total.items()}
    ops = {op: {"count": int(r["count"]), **{k: int(round(r[k])) for k in AREA_KEYS}}
           for op, r in sorted(by_op.items())}
    registers = {k: int(round(regs.get(k, 0.0))) for k in AREA_KEYS}
    util, warnings = utilisation(totals, capacities)
    notes = dict(getattr(costs.model, "resource_notes", {}) or {})
    over = {k: (totals.get(k, 0), int(caps[k])) for k in CAPACITY_KEYS
            if k in caps and totals.get(k, 0) > int(caps[k])}
    return Resources(totals, ops, register_bits, valid_bits, registers, util, tuple(warnings),
                     notes, over, kept_bits)


def merged_negations(schedule: Schedule, costs: CostModel, net: ToolNetwork
                     ) -> dict[bytes, dict[str, float]]:
    """Return the area of each ``neg`` that yosys merges into the sum reading it, and of that
    sum: the pair is one carry chain of the sum's full width, and each leaf bit of a
    subtracted operand takes an inverter LUT.

    The emitted Verilog writes ``neg x`` as ``W'd0 - x``. Where its only reader is an
    ``add``/``sub`` in the same stage (through sign or zero extensions), ``alumacc`` merges the
    two ``$macc`` models into one (where the neg is narrower, when it cannot overflow its
    width), with three terms: the
    constant 0, ``x`` and the reader's other operand. ``macc_to_alu`` turns only two-term
    sums into an ``$alu``, so this one stays a ``$macc`` and ``maccmap`` builds it: every
    subtracted term's bits inverted by ``$not`` cells (the carry cell cannot take them: a
    LUT each where the bit is a flip-flop's, a port's, a DSP's or a carry chain's; a bit a
    LUT makes folds the inversion into it), a 1 added at bit 0, and one ``$alu`` of the
    sum's full width (its constant low bits are not trimmed: the inverted zeros are ones).
    fir_q15 on ECP5 (yosys 0.70 ``synth_ecp5``): ``n52 = sext(0 - (x << 9)) + (y << 11)``,
    28 bits, is 14 CCU2C and 16 LUT4 (the model had 8.5 + 9 CCU2C for two trimmed chains);
    a plain ``(y << 11) - (x << 9)`` is 10 CCU2C and no LUT4. ECP5 only (models whose carry
    cells fill LUT sites, ``carry_lut_sites``: the CCU2C is a hard cell that yosys keeps
    whole); on iCE40 ``ice40_opt`` removes the SB_CARRY cells with constant inputs, and the
    same core is 17 SB_CARRY and 34 SB_LUT4, as the separate chains are costed."""
    if not float(getattr(costs.model, "carry_lut_sites", 0.0)):
        return {}  # iCE40: ice40_opt removes the SB_CARRYs of the constant bits again
    graph, stage = schedule.graph, schedule.stage
    nodes = graph.nodes
    bound = schedule.bound()
    readers: dict[bytes, list[bytes]] = {}
    for nid in schedule.order:
        for u in dict.fromkeys(nodes[nid].inputs):
            readers.setdefault(u, []).append(nid)
    out: dict[bytes, dict[str, float]] = {}
    for nid in schedule.order:
        node = nodes[nid]
        if node.op not in ("add", "sub") or nid in bound or nid in out:
            continue
        terms: list[tuple[bytes, bool]] = []  # (operand, subtracted) of the merged sum
        negs: list[bytes] = []
        for pos, u in enumerate(node.inputs):
            minus = node.op == "sub" and pos == 1
            v = u
            while nodes[v].op == "cast" and len(readers.get(v, ())) == 1:
                v = nodes[v].inputs[0]
            neg = nodes[v]
            if (neg.op == "neg" and len(readers.get(v, ())) == 1 and v not in bound
                    and stage.get(v) == stage.get(nid)
                    and (neg.type.flat_width >= node.type.flat_width or _cannot_overflow(net, neg))
                    and (v == u or len(readers.get(u, ())) == 1)):
                negs.append(v)
                terms.append((neg.inputs[0], not minus))
            else:
                terms.append((u, minus))
        if not negs:
            continue
        width = node.type.flat_width
        area = costs._sites(dict(costs._query_area(("add", width, None))))
        leaves: set[int] = set()
        for u, minus in terms:
            if minus:
                leaves.update(next(iter(b[0])) for b in net.bits.get(u, ()) if b[0] and b[2] < 0)
        area["lut"] += float(len(leaves))
        out[nid] = {k: float(area.get(k, 0.0)) for k in AREA_KEYS}
        for v in negs:
            out[v] = dict.fromkeys(AREA_KEYS, 0.0)
    return out


def _cannot_overflow(net: ToolNetwork, neg: Node) -> bool:
    """Whether ``0 - x`` fits its width (``alumacc`` merges a narrower ``$macc`` into its
    reader only then): ``x``'s significant bits are fewer than the result's."""
    t = net.graph.nodes[neg.inputs[0]].type
    bits = net.bits.get(neg.inputs[0])
    if bits is None:
        return False
    return significant_width(bits, isinstance(t, IntType) and t.signed) < neg.type.flat_width


#: Ops that are only wires between a select and the register that holds it.
_WIRES = frozenset({"cast", "concat", "slice", "tuple", "tuple_get", "array"})


def registered_selects(schedule: Schedule) -> frozenset[bytes]:
    """Return the selects with a constant arm whose bits only registers without a reset read:
    a later stage's (through its bank) or the output register, through wiring in their own
    stage; none a state register (whose flip-flops have the reset already) nor any logic of
    the stage. yosys folds such a select into the flip-flops' synchronous set/reset
    (``ToolNetwork.resets``). None at ii > 1 (registers shared on the modulo circle take
    multiplexers)."""
    if schedule.aligned or schedule.ii > 1:
        return frozenset()
    graph, stage = schedule.graph, schedule.stage
    region = graph.regions[schedule.region]
    nexts = {st.next for st in region.states}
    readers: dict[bytes, list[bytes]] = {}
    for nid in schedule.order:
        for u in graph.nodes[nid].inputs:
            readers.setdefault(u, []).append(nid)
    out = set()
    for nid in schedule.order:
        node = graph.nodes[nid]
        if node.op != "select" or nid in schedule.virtual or not any(
                graph.nodes[u].op == "const" for u in node.inputs[1:]):
            continue
        todo, ok = [nid], True
        while todo and ok:
            u = todo.pop()
            ok = u not in nexts
            for r in readers.get(u, ()):
                if stage[r] > stage[u]:
                    continue  # through the bank between them
                if graph.nodes[r].op in _WIRES:
                    todo.append(r)
                else:
                    ok = False
        if ok:
            out.add(nid)
    return frozenset(out)


def dsp_registers(schedule: Schedule, costs: CostModel, banks: list[list[bytes]]
                  ) -> set[tuple[int, bytes]]:
    """Return the (bank, value) registers that yosys packs into the DSPs (``dsp_timing.
    registers_absorbed``: iCE40's SB_MAC16 has registers on its inputs and its output, with a
    clock enable; ``ice40_dsp`` moves flip-flops without a reset into them).

    A value held in the bank right after the DSP multiply that makes it (through casts and
    slices of its product, nothing else of the stage reading the product) is the DSP's output
    register; a value held in its last bank whose readers in the next stage are all DSP
    multiplies (through casts) is their input register. fir_q15 at 55 MHz: bank 0 holds its
    four products (80 bits in SB_MAC16s): yosys keeps 66 of the 146 flip-flops. Where yosys
    packs none (ECP5), only the pipelined multiplies (``Schedule.pipelined``: ``kera.rtl``
    instantiates their DSPs with those registers) have them."""
    graph, stage = schedule.graph, schedule.stage
    nodes = graph.nodes
    dsp = _dsp_products(schedule, costs) if _absorbs(costs) else set(schedule.pipelined)
    if not dsp:
        return set()
    readers: dict[bytes, list[bytes]] = {}
    for nid in schedule.order:
        for u in dict.fromkeys(nodes[nid].inputs):
            readers.setdefault(u, []).append(nid)
    wires = ("cast", "slice")

    sums = dsp_accumulators(schedule, costs)  # a product's sum in the DSP: its output

    def source(v: bytes) -> bytes | None:  # the multiply a value is a view of, in its stage
        while v not in dsp and nodes[v].op in wires and stage[nodes[v].inputs[0]] == stage[v]:
            v = nodes[v].inputs[0]
        v = sums.get(v, v)
        return v if v in dsp else None

    def feeds_only_dsps(v: bytes, s: int) -> bool:  # every reader in stage s a multiply's port
        todo, seen = [v], 0
        while todo:
            for r in readers.get(todo.pop(), ()):
                if stage[r] != s:
                    continue
                if r in dsp:
                    seen += 1
                elif nodes[r].op in wires:
                    todo.append(r)
                else:
                    return False
        return seen > 0

    out: set[tuple[int, bytes]] = set()
    for k, bank in enumerate(banks):
        for v in bank:
            m = source(v)
            if m is not None and stage[m] == k and all(
                    stage[r] > k or nodes[r].op in wires for r in readers.get(m, ())):
                out.add((k, v))
            elif k + 1 < len(banks) and v not in banks[k + 1] and feeds_only_dsps(v, k + 1):
                out.add((k, v))
    return out


def _absorbs(costs: CostModel) -> bool:
    """Whether yosys moves flip-flops into the family's DSPs (iCE40's ``ice40_dsp``)."""
    return bool(getattr(costs.model, "dsp_timing", {}).get("registers_absorbed"))


def _dsp_products(schedule: Schedule, costs: CostModel) -> set[bytes]:
    """Return the multiplies of ``schedule`` on DSPs (within the budget, a DSP's worth)."""
    graph = schedule.graph
    nodes = graph.nodes
    on_lut = costs.lut_multipliers(graph)
    return {nid for nid in schedule.order if nodes[nid].op in MUL_OPS and nid not in on_lut
            and costs.area(graph, nodes[nid])["dsp"] > 0}


#: The SB_MAC16's output register is two halves of this many bits, each registered or not on
#: its own (``TOPOUTPUT_SELECT``/``BOTOUTPUT_SELECT``).
OUTPUT_HALF_BITS = 16


def dsp_output_halves(schedule: Schedule, costs: CostModel, banks: list[list[bytes]],
                      inside: set[tuple[int, bytes]]) -> int:
    """Return the flip-flops of pipeline registers that yosys packs into a half of a DSP's
    output register (iCE40): a half of a product whose bits its stage reads only through
    wiring (casts, slices, concatenations) into the bank after it. ``dsp_registers`` takes a
    held value that is all one product's; this takes the bits of one: u64 ``a * b`` split over
    an UP5K's DSPs (``kera.hls.decompose``) holds its result's low 16 bits, the low half of
    the lowest piece, and its top half feeds the adders: yosys 0.70 keeps 49 of the 65
    flip-flops."""
    if not _absorbs(costs):
        return 0
    graph, stage = schedule.graph, schedule.stage
    nodes = graph.nodes
    readers: dict[bytes, list[bytes]] = {}
    for nid in schedule.order:
        for u in dict.fromkeys(nodes[nid].inputs):
            readers.setdefault(u, []).append(nid)
    total = 0
    for p in sorted(_dsp_products(schedule, costs)):
        s = stage[p]
        if s >= len(banks):
            continue
        held = {v for v in banks[s] if (s, v) not in inside}
        width = nodes[p].type.flat_width
        comb: set[int] = set()
        kept: set[int] = set()
        todo: list[tuple[bytes, tuple[int | None, ...]]] = [(p, tuple(range(width)))]
        while todo:
            x, bits = todo.pop()  # bit j of x is bit bits[j] of the product (None: not one)
            if x in held:
                kept.update(b for b in bits if b is not None)
            for r in readers.get(x, ()):
                if stage[r] != s:
                    continue  # through the bank
                view = _wired_bits(nodes[r], x, bits, graph)
                if view is None:
                    comb.update(b for b in bits if b is not None)
                else:
                    todo.append((r, view))
        for lo in range(0, width, OUTPUT_HALF_BITS):
            half = set(range(lo, min(width, lo + OUTPUT_HALF_BITS)))
            if kept & half and not comb & half:
                total += len(kept & half)
    return total


def _wired_bits(node: Node, x: bytes, bits: tuple[int | None, ...], graph: Any
                ) -> tuple[int | None, ...] | None:
    """Return the product's bits in ``node``'s bits where ``node`` only rewires ``x``'s
    (``bits``: the product's bit at each of ``x``'s), else None (logic reads them)."""
    w = node.type.flat_width
    if node.op == "slice":
        start = int(node.attr("lo"))
        return bits[start:start + w]
    if node.op == "cast":
        src = graph.nodes[x].type
        if w <= len(bits):
            return bits[:w]
        top = bits[-1] if getattr(src, "signed", False) else None
        return bits + (top,) * (w - len(bits))
    if node.op == "concat":
        high_id, low_id = node.inputs
        low = bits if low_id == x else (None,) * graph.nodes[low_id].type.flat_width
        high = bits if high_id == x else (None,) * graph.nodes[high_id].type.flat_width
        return low + high
    return None


def dsp_accumulators(schedule: Schedule, costs: CostModel) -> dict[bytes, bytes]:
    """Return the sums yosys builds inside the DSP of one of their operands: add -> multiply.

    iCE40's ``ice40_dsp`` (``dsp_timing.accumulator_bits``: 32) folds an ``$add`` whose
    operand is the whole output of a DSP ``$mul`` (read by nothing else) into the SB_MAC16's
    adder, the other operand on its C/D inputs, and a register after it into its output
    register (``dsp_registers``): fir8's two ``3 * x[i] + 4 * x[j]`` at 55 MHz, once the
    products are signed (``kera.rtl.lower``) and so 16 x 3 bits, are 2 SB_MAC16 with no
    adder LUT and none of their 38 register bits in the fabric. Same stage, sums of at most
    ``accumulator_bits``. A sum of two DSP products is left in the fabric: yosys 0.70 folds
    neither (mat2 at 12 MHz: four 17-bit sums of two products, 69 LUTs placed, 72 estimated
    unfolded; fir_q15's 30-bit sums of two product slices: 214 placed, 212 unfolded)."""
    bits = int(getattr(costs.model, "dsp_timing", {}).get("accumulator_bits", 0))
    if not bits:
        return {}
    graph, stage = schedule.graph, schedule.stage
    nodes = graph.nodes
    on_lut = costs.lut_multipliers(graph)
    readers: dict[bytes, list[bytes]] = {}
    for nid in schedule.order:
        for u in dict.fromkeys(nodes[nid].inputs):
            readers.setdefault(u, []).append(nid)
    def source(v: bytes, s: int) -> bytes:  # through the same stage's casts read once
        while nodes[v].op == "cast" and stage[nodes[v].inputs[0]] == s and len(
                readers.get(v, ())) == 1:
            v = nodes[v].inputs[0]
        return v

    shared = schedule.bound()  # a unit's product feeds a different sum at each slot

    def on_dsp(v: bytes) -> bool:
        return nodes[v].op in MUL_OPS and v not in on_lut and v not in shared and costs.area(
            graph, nodes[v])["dsp"] == 1

    out: dict[bytes, bytes] = {}
    for nid in schedule.order:
        node = nodes[nid]
        if node.op != "add" or not isinstance(node.type, IntType) or node.type.width > bits:
            continue
        ins = [source(v, stage[nid]) for v in node.inputs]
        if all(on_dsp(v) for v in ins):
            continue  # a sum of two DSP products stays in the fabric (mat2, fir_q15, yosys 0.70)
        for v in ins:
            if (on_dsp(v) and v not in out.values() and stage[v] == stage[nid]
                    and len(readers.get(v, ())) == 1):
                out[nid] = v
                break
    return out


def registered_inverters(schedule: Schedule, costs: CostModel) -> int:
    """Return the inverter LUTs that the pipeline registers add to subtractions.

    A chain that subtracts an operand (``sub``, ``neg``, an ordering of two variables,
    ``min``/``max``: ``CostModel._inverted_operand``) takes an inverter LUT per bit that a
    flip-flop drives where the carry cell cannot invert (iCE40's SB_CARRY); a bit a LUT makes
    has the inversion folded in. ``CostModel.area`` sees the graph without registers; a bit
    that a LUT or an adder makes in one stage and a bank holds for a later one is a flip-flop
    there: one inverter per such bit and bank, whichever readers share it. The bit's stage is its
    maker's (the first node whose bits hold it), so where a comparison's subtrahend is wiring
    in its own stage over registered bits, those count too (isqrt32's ``rem >= trial``,
    ``trial = root << 2 | 1`` with ``root`` from the bank before: yosys 0.70, 15 stages, 263
    LUT4s). Not so for a difference (cordic's ``x - (y >> i)`` beside ``x + (y >> i)``: yosys
    inverts the shifted bits in the multiplexer that picks the sum, 2,221 LUT4s at 55 MHz;
    2,451 estimated with an inverter each): its subtrahend counts only when a bank holds the
    operand itself. sort8 at 55 MHz (6 stages, each compare-exchange reading registered
    values): yosys 0.70 has 459 LUT4s where the single stage has 340."""
    if costs._inverter_rate(8) <= 0:
        return 0
    graph, stage = schedule.graph, schedule.stage
    nodes = graph.nodes
    net = costs.network(graph)
    flops = costs._flop_leaves(graph)
    bound = schedule.bound()
    maker: dict[tuple[frozenset[int], int], bytes] = {}
    for nid in schedule.order:  # inputs first: a bit's maker comes before its readers
        for b in net.bits.get(nid, ()):
            if b[0]:
                maker.setdefault((b[0], b[2]), nid)
    seen: set[tuple[object, ...]] = set()
    for nid in schedule.order:
        node = nodes[nid]
        if node.op not in SUBTRACTING or nid in bound or not node.inputs or is_bitwise(
                graph, node):
            continue
        u = node.inputs[-1]
        if node.op not in ORDERINGS and (u not in stage or stage[u] >= stage[nid]
                                       or nodes[u].op in ("param", "state")):
            continue  # a difference whose subtrahend this stage makes: a mux may invert it
        for b in net.bits.get(u, ()):
            if not b[0] or (b[2] < 0 and len(b[0]) == 1 and next(iter(b[0])) in flops):
                continue
            m = maker.get((b[0], b[2]))
            if m is not None and m in stage and stage[m] < stage[nid] and \
                    nodes[m].op not in ("param", "state"):
                seen.add((b[0], b[2], b[3], stage[nid]))  # each bank's copy its own
    return len(seen)


def _bank_bits(net: ToolNetwork, bank: list[bytes], read: set[int],
               passed: set[bytes] | frozenset[bytes] = frozenset(),
               whole: frozenset[bytes] = frozenset()) -> int:
    """Return the flip-flops of one bank: its distinct non-constant bits, across the values it
    holds (one enable moves the bank, so ``opt_merge`` makes the flip-flops of one signal
    one: edge_semantics holds ``a`` and ``a < 0``, which is ``a[7]``; sort8's stages hold the
    array and the min/max values it is built of), less those no later stage reads
    (``opt_clean``: an element of an array that the next stage overwrites).

    A value in ``passed`` was made in an earlier stage: this bank copies the register before
    it, whose bits a later stage reads (``BitNetwork._input``), so a value built here from
    them (an array holding a min from two stages back) shares its flip-flops. ``read``: the
    leaf bits something reads (``_read_leaves``). sort8 at 55 MHz: 670 -> 454 FF with the
    first rule, 406 with all three, 390 placed.

    A sum in ``whole`` (``merged_negations``: ECP5, a negation merged into the sum reading
    it) is one ``$alu`` of its full width whose constant bits yosys does not trim: each of its
    bits the network knows constant is a flip-flop too (fir_q15 at 150 MHz: the 9 zero low
    bits of ``sext(0 - (x << 9)) + (y << 11)`` in both such registers, 140 -> 158 FF
    estimated, 167 placed; a test module of that sum alone keeps all 28 of its flip-flops on
    ECP5, 21 on iCE40)."""
    registered, flops = net._registered, net._flops
    kept = set()
    own = 0  # the constant bits of ``whole`` sums, each a flip-flop of its own
    for n in bank:
        copy = n in passed and n in registered
        for b in registered[n] if copy else net.bits[n]:
            if not b[0]:
                own += n in whole and not copy
                continue
            # the register's output, where a later stage reads it (a copy's: its own bits)
            q = b if copy else flops.get((b[0], b[2]))
            if q is None or not q[0].isdisjoint(read):
                kept.add((b[0], b[2], b[3]))
    return len(kept) + own


def _read_leaves(net: ToolNetwork, roms: frozenset[bytes] = frozenset()) -> set[int]:
    """Return the leaf bits something reads: ``demanded_leaves`` and the register outputs
    that arithmetic in a later stage takes. A ROM read (``roms``) takes its index from the
    stage before it into the RAM's own address register, so no fabric register of it is
    read: AES-128's state array, held in a bank only to be overwritten byte by byte with
    S-box reads, was 128 flip-flops a stage that yosys removed (ECP5 at 25 MHz: 2,699
    estimated, 1,419 placed)."""
    out = set(net.demanded_leaves())
    graph = net.graph
    for v in net.bits:
        node = graph.nodes[v]
        if is_bitwise(graph, node) or v in roms:
            continue
        for u in node.inputs:
            if u in net.bits and not net._reads_comb(u, v):
                for b in net._registered.get(u, ()):
                    out.update(b[0])
    return out


def dead_state_bits(schedule: Schedule, net: ToolNetwork) -> int:
    """Return the flip-flop bits of the state registers (not block RAM) that nothing reads:
    a bit of a state's read value on which no result, no arithmetic, no pipeline register
    and no next value of a live state bit depends. yosys removes those flip-flops
    (``opt_clean``): fir_stream's delay line writes its last element, which the next
    transfer never reads (128 bits held, 112 kept). Live bits are found by a fixed point:
    a state bit is live when a result, arithmetic or a register reads it, or the next value
    of a live state bit does."""
    if schedule.state is None:
        return 0
    graph = schedule.graph
    region = graph.regions[schedule.region]
    ram = {m.slot.index for m in schedule.state.mems if m.mapped_to != "ff"}
    slots = [(graph.nodes[st.read], st.next) for i, st in enumerate(region.states)
             if i not in ram]
    nexts = {nxt for _, nxt in slots} - {region.result}
    others = net.demanded_leaves(exclude=nexts)
    leaves: dict[int, tuple[int, int]] = {}  # leaf bit of a state read -> (slot, bit)
    for k, (read, _) in enumerate(slots):
        for i, b in enumerate(net.bits.get(read.id, ())):
            if b[0] and b[2] < 0:
                leaves[next(iter(b[0]))] = (k, i)
    live = {leaves[x] for x in others if x in leaves}
    todo = list(live)
    while todo:
        k, i = todo.pop()
        bits = net.bits.get(slots[k][1], ())
        if i < len(bits):
            for x in bits[i][0]:
                hit = leaves.get(x)
                if hit is not None and hit not in live:
                    live.add(hit)
                    todo.append(hit)
    total = sum(read.type.flat_width for read, _ in slots)
    return max(0, total - len(live)) if leaves else 0


def handshake_luts(schedule: Schedule, costs: CostModel) -> float:
    """Return the LUTs of a pipeline's valid/ready logic (``handshake.luts`` of the model; 0
    for a core without stages): the enable ``en = ~out_valid | out_ready``, ``in_ready`` and
    the first valid flip-flop's input ``in_valid & in_ready`` (its enable and reset are the
    flip-flop's own pins). Measured on bitrev32, whose data path is only wires: 3 LUTs placed
    on iCE40, 2 LUT4 sites on ECP5.

    At II > 1 the emitter adds a counter of ``c = bit_length(II - 1)`` flip-flops (the
    modulo counter, or the cycles to wait for the next input) and its test in ``in_ready``:
    ``2c + 1`` LUTs, each next bit a function of the counter's bits, the enable and the
    accepted transfer. Without it the II > 1 variants of benchmarks/ii_variants.py were
    short of yosys by ``c`` flip-flops exactly and by 2 to 13 LUTs (the more the larger II)."""
    hs = getattr(costs.model, "handshake", None) or {}
    if schedule.latency < 1:
        return 0.0
    c = (schedule.ii - 1).bit_length()
    return float(hs.get("luts", 0)) + (2 * c + 1 if c else 0)


def bram_glue(schedule: Schedule, costs: CostModel) -> dict[str, float]:
    """Return the logic around each block RAM that the emitted Verilog has and no node
    costs (``kera.rtl``'s memory ports; ``a`` address and ``w`` data bits), with what yosys's
    read-old-data emulation adds to a written RAM (``memory.emulated_read_first_bits``):

    * the read: the emulation's select of its registered write data onto the RAM's output
      where its registered hit says (a ``w``-bit select), then the emitter's forwarding
      select (``w`` bits) and its hit test (valid and an ``a``-bit compare of registered
      addresses, ``2a + 1`` inputs); the emulation's own hit test (the delayed write's
      enable and address against the read address: ``2a + 1`` inputs, into a flip-flop);
    * the reset's clear counter (an ``a``-bit increment: the fitted ``add``) and its end
      test (``a`` inputs), the write port's address multiplexer (the counter or the
      transfer's address, ``a`` selects), write enable and busy flag (a LUT each). Its data
      multiplexer (0 while clearing) feeds only the emulation's data register, whose
      synchronous reset it becomes (``opt_dff``): no LUT where the write is emulated.

    These gates are a bit network of their own (``_glue_network``), mapped as the nodes'
    are (``_network_luts``: abc9's delay-oriented mapping where the model has a LUT library
    with wide LUTs, the 4-input cover elsewhere). On ECP5 abc9 moves the last AND of the
    forwarding hit test into every data bit's select (a LUT5: 2 sites each, with the
    emulation's select before it: 3 LUT4s per bit) and builds the compares from LUT6/7s.
    histogram (256 x 16), yosys 0.70: ECP5 47 LUT4s of read path, 27 of hit tests, 8 of
    address select, 4 of counter (its 4 CCU2C apart) and a few of control; iCE40 the cover's
    count, as the formula had it (59 LUTs, 7 carries before the emulation was modelled)."""
    row = {"count": 0, **dict.fromkeys(AREA_KEYS, 0.0)}
    if schedule.state is None:
        return row
    k = costs.lut_k
    lib = _wide_library(costs)
    for m in schedule.state.mems:
        if m.mapped_to != "bram":
            continue
        a = max(1, (m.words - 1).bit_length())
        counter = costs._sites(dict(costs._query_area(("add", a, None))))
        net = _glue_network(schedule, k, a, m.width, m.write is not None, m.outreg)
        if lib:
            luts = float(sum(map_sites(net, lib["luts"], float(lib["wire_ps"])).values()))
        else:
            net.cover()
            luts = float(sum(net.luts_by_node().values()))
        row["count"] += 1
        row["lut"] += luts + 2 + counter["lut"]
        row["carry"] += counter["carry"]
    return row


def _glue_network(schedule: Schedule, k: int, a: int, w: int, written: bool,
                  outreg: bool = False) -> BitNetwork:
    """Return the gates around one block RAM (``bram_glue``) as a bit network whose leaves
    are flip-flops, the RAM's output and the read address; the registered bits (the read
    data, the emulation's hit, the write address, the end test) are its outputs. A RAM read
    through its output register (instantiated: no emulation) has two forwarding selects
    whose hit tests are registered, and the write data's clear multiplexer."""
    net = BitNetwork(schedule.graph, k)
    net._levels = [lut_levels(s, k) for s in range(64)]
    net._node = b"bram_glue"

    def compare(xs: list[Bit], ys: list[Bit], valid: Bit) -> Bit:  # one function of them all
        return net._gate([valid, *xs, *ys])

    outs: list[Bit] = []
    dout = net._fresh(w)  # the RAM's output
    if outreg:
        if written:  # the older writes' data and hit, the last one's; their hit tests
            for _ in range(2):
                hit = net._fresh(1)[0]
                dout = [_mux(net, hit, x, y) for x, y in zip(net._fresh(w), dout, strict=True)]
            hits = [compare(net._fresh(a), net._fresh(a), net._fresh(1)[0]) for _ in range(3)]
            outs += [hits[0], _logic(net, "or", hits[1], hits[2])]
            outs += [_mux(net, hits[1], x, y) for x, y in zip(net._fresh(w), net._fresh(w),
                                                              strict=True)]
        outs += dout
        written = False  # no emulation: the clear multiplexes the write data
    elif written:  # the emulation: registered hit and data, selected onto the output
        ehit, edata = net._fresh(1)[0], net._fresh(w)
        dout = [_mux(net, ehit, x, y) for x, y in zip(edata, dout, strict=True)]
        outs.append(compare(net._fresh(a), net._fresh(a), net._fresh(1)[0]))
    if not outreg:  # the emitter's forward
        fhit = compare(net._fresh(a), net._fresh(a), net._fresh(1)[0])
        outs += [_mux(net, fhit, x, y) for x, y in zip(net._fresh(w), dout, strict=True)]
    busy, count = net._fresh(1)[0], net._fresh(a)
    outs += [_mux(net, busy, x, y) for x, y in zip(count, net._fresh(a), strict=True)]
    outs.append(net._gate(count))  # the clear counter's end test
    if not written:  # the write data's 0 while clearing (the emulation's reset where written)
        outs += [_logic(net, "and", _not(busy), x) for x in net._fresh(w)]
    for b in outs:
        if b[2] >= 0:
            net.roots.setdefault(b[2], (len(b[0]), net._node))
    return net


def _wide_library(costs: CostModel) -> dict[str, Any] | None:
    """Return the model's abc9 LUT library where it has LUTs wider than ``lut_k`` (ECP5: the
    slice's wide functions), which the area mapping uses (``kera.hls.cutmap``); else None."""
    lib = getattr(costs.model, "lut_network", {}).get("library")
    return lib if lib and len(lib["luts"]) > costs.lut_k else None


def _estimate_network(schedule: Schedule, costs: CostModel,
                      twins: frozenset[bytes] = frozenset()) -> ToolNetwork:
    """Return the bit network the estimate maps: the schedule's registers cut it, a shared
    unit is a cone of its own, and so is an op whose circuit an earlier op's is (``twins``,
    ``twin_ops``): its readers that are no twins read that circuit's output, not its cone
    again (AES-128 at II 8: the round-key xors of the rounds whose MixColumns is one circuit
    were charged the whole cone, 74 LUTs a stage for 7 ops)."""
    graph, stage, bound = schedule.graph, schedule.stage, schedule.bound()
    lib = _wide_library(costs)
    return tool_network(graph, costs.lut_k,
                        cut=lambda u, v: stage[u] < stage[v] or u in bound or v in bound
                        or (u in twins and v not in twins),
                        order=graph.topo_order(graph.regions[schedule.region]),
                        wide=costs.lut_wide, resets=registered_selects(schedule),
                        area=costs.trims_bounds, rom_gates=len(lib["luts"]) if lib else 0,
                        rom_reads=schedule.roms)


def network_sites(schedule: Schedule, costs: CostModel) -> dict[bytes, int]:
    """Return the LUT sites ``estimate`` charges the bitwise nodes of ``schedule``, by node."""
    return _network_luts(schedule, costs, _estimate_network(schedule, costs))


def _network_luts(schedule: Schedule, costs: CostModel, net: ToolNetwork) -> dict[bytes, int]:
    """Return the LUT sites of the bit network by node: the 4-input cover's, or, where the
    model has an abc9 LUT library with wide LUTs (ECP5), the delay-oriented mapping's
    (``kera.hls.cutmap``), whose leaves arrive when the stage's timing says. Orderings
    against a constant are not mapped: yosys makes them ``$alu`` carry chains (a box to
    abc9), so they keep the cover's count and their outputs are the mapping's inputs. The
    stages written as LUT cells (``kera.hls.lutcover``) count their cells, and on ECP5 their
    outputs are inputs of the mapping of the rest."""
    lib = _wide_library(costs)
    if not lib:
        out = costs.fitted_equalities(net, net.luts_by_node())
        for c in schedule.covers:  # written as LUT cells: one site each
            out.update(c.sites())
        return out
    graph, stage = schedule.graph, schedule.stage
    arrival: dict[bytes, float] = {}
    on_lut = costs.lut_multipliers(graph)
    for nid in net.bits:
        node = graph.nodes[nid]
        if node.op in MUL_OPS and nid not in on_lut:
            arrival[nid] = 0.0  # a DSP is no box to abc9: its outputs are inputs at time 0
            continue
        arrival[nid] = max((arrival[u] for u in node.inputs if u in arrival
                            and stage.get(u) == stage.get(nid)), default=0.0) + costs.delay(
            graph, node)
    orders = {nid: 1000.0 * arrival[nid] for nid in net.bits
              if graph.nodes[nid].op in ORDERS and is_bitwise(graph, graph.nodes[nid])}
    pairs = mux_pairs(schedule)  # written as LUT4 + PFUMX multiplexers: not abc9's to map
    flags = zero_flags(schedule)  # written as one LUT4 each
    covered = cover_of(schedule)  # written as LUT4 cells (kera.hls.lutcover)
    boxed = {**orders, **{nid: 1000.0 * arrival[nid] for nid in (*pairs, *flags, *covered)
                          if nid in arrival}}
    out = map_sites(net, lib["luts"], float(lib["wire_ps"]), leaf_arrivals(net, arrival),
                    boxed=boxed, atomic=net.rom_gated, cells=set(flags))
    cover = net.luts_by_node()
    for nid in orders:  # yosys builds them as carry chains: the 4-input cover's count
        if cover.get(nid):
            out[nid] = cover[nid]
    for nid, pair in pairs.items():
        out[nid] = pair.sites(pair.constants(graph)) if nid == pair.second else 0
    for nid in flags:
        out[nid] = 1
    for c in schedule.covers:
        out.update(c.sites())
    for nid, n in net.inverted_outputs().items():
        out[nid] = out.get(nid, 0) + n
    return out


def _unit_rows(schedule: Schedule, costs: CostModel, by_op: dict[str, dict[str, float]],
               luts: dict[bytes, int]) -> None:
    """Add one op per shared unit (on a DSP, or the LUT multiplier; a bitwise one: the LUTs of
    its largest op's cone) and the multiplexers."""
    graph = schedule.graph
    on, off = CostModel(costs.model, None), CostModel(costs.model, 0)
    for u in schedule.units:
        if len(u.ops) < 2:
            continue
        node = graph.nodes[u.ops[0]]
        area = (on if u.on_dsp else off).area(graph, node)
        if is_bitwise(graph, node):
            area = {**area, "lut": float(max(luts.get(n, 0) for n in u.ops))}
        row = by_op.setdefault(node.op, {"count": 0, **dict.fromkeys(AREA_KEYS, 0.0)})
        row["count"] += 1
        for k in AREA_KEYS:
            row[k] += area[k]
        mux = by_op.setdefault("share_mux", {"count": 0, **dict.fromkeys(AREA_KEYS, 0.0)})
        mux["count"] += 1
        mux["lut"] += u.mux_lut


def twin_ops(schedule: Schedule) -> frozenset[bytes]:
    """Return the ops of an aligned schedule that an earlier op's hardware already computes.

    At II > 1 a shared unit's output is one wire at every counter slot, so two private ops of
    different stages over the same signals (``RegisterBinding.signal``: the same unit outputs,
    registers or constants) are one circuit that yosys merges (``opt_merge``): matmul4 at II 4
    on ECP5 sums the 16 multiply units' outputs with 12 adders, not 48 (192 CCU2C placed).
    The reads that share a ROM read port (``rom.read_ports``) are its one data register: the
    same logic of them is one circuit too (AES-128 at II 4: the MixColumns of the rounds whose
    lookups share ports; 6,595 -> 4,800 LUTs estimated, 2,762 placed)."""
    binding = schedule.register_binding if schedule.aligned else None
    if binding is None or binding.signals is None:
        return frozenset()
    signals = merged_signals(schedule)
    nodes = schedule.graph.nodes
    seen: set[int] = set()
    out: set[bytes] = set()
    for nid in schedule.order:
        if nodes[nid].op in ("const", "param", "state") or not nodes[nid].inputs:
            continue
        key = signals.key(nid, schedule.stage[nid])
        if key in seen:
            out.add(nid)
        seen.add(key)
    return frozenset(out)


def _caps(capacities: Any) -> dict[str, int]:
    if capacities is None:
        return {}
    if isinstance(capacities, dict):
        return {k: int(v) for k, v in capacities.items()}
    return {k: int(getattr(capacities, k)) for k in CAPACITY_KEYS}


def check_fits(resources: Resources, board: str, location: str = "") -> None:
    """Raise the one-line error (exit code 1) when the design needs more than the board has.

    The message names the first resource over capacity (report order), the need and the
    capacity; ``--allow-overfull`` is the way to emit the design anyway.
    """
    for k in CAPACITY_KEYS:
        if k in resources.overfull:
            need, cap = resources.overfull[k]
            where = f"{location}: " if location else ""
            raise KeraError(f"{where}the design needs {need} {k.upper()} but {board} has {cap}: "
                            "it cannot fit (pass --allow-overfull to emit it anyway)")


def utilisation(totals: dict[str, int], capacities: Any) -> tuple[dict[str, float], list[str]]:
    """Return (used / capacity per resource, warnings) for a board's capacities.

    A resource the device does not have (capacity 0) has no ratio; using it is a warning.
    """
    if capacities is None:
        return {}, []
    caps = capacities if isinstance(capacities, dict) else {
        k: getattr(capacities, k) for k in CAPACITY_KEYS}
    util: dict[str, float] = {}
    warnings: list[str] = []
    for k in CAPACITY_KEYS:
        cap, used = int(caps.get(k, 0)), totals.get(k, 0)
        if cap <= 0:  # no such resource on the device: no ratio to give
            if used:
                warnings.append(f"the design needs {used} {k.upper()} but the device has none")
            continue
        util[k] = used / cap
        if used > cap:
            warnings.append(f"the design needs {used} {k.upper()} but the device has {cap} "
                            f"({util[k]:.0%}): it will not fit")
        elif util[k] > TIGHT:
            warnings.append(f"{k.upper()} use is {util[k]:.0%} of the device: placement and "
                            "routing may fail or miss the clock")
    return util, warnings


def check_schedule_fits(schedule: Schedule, board: Any, model: Any, source: Any = None,
                        allow_overfull: bool = False) -> Resources:
    """Estimate ``schedule`` on ``board`` and raise when it cannot fit (``check_fits``).

    ``allow_overfull`` skips the error (the report still warns). The error's location is
    the top function's result in ``source`` (a ``SourceFile``), else the graph's path.
    """
    from kera.hls.timing import locate, make_locator

    res = estimate(schedule, CostModel(model, board.capacities.dsp), board.capacities)
    if not allow_overfull:
        graph = schedule.graph
        result = graph.regions[schedule.region].result
        where = locate(graph, result, make_locator(graph, source)) or graph.source_path or ""
        check_fits(res, board.name, where)
    return res


__all__ = ["CAPACITY_KEYS", "RESOURCE_KEYS", "Resources", "check_fits", "check_schedule_fits",
           "dsp_accumulators", "estimate", "network_sites", "schedule_costs", "utilisation"]
