"""Timing: what each node costs under a family's delay model, stage delays, critical path, Fmax.

The delay/area models (``kera.hls.models``) are queried with ``(op, width, n)``. What "width"
means depends on the op (``model_query``): the output width for most ops, the operand width for
comparisons and ``widening_mul``, the element width (with ``n`` = length) for ``array_index``,
the flat width of the value for ``select``. Wiring costs nothing: ``param``, ``const``,
``cast``, ``concat``, ``slice``, ``tuple``, ``tuple_get``, ``array``; ``array_index``,
``array_update``, shifts and rotates by a constant; ``and``/``or`` with a constant operand.
``CostModel`` wraps a model with a cache and the derived costs of ops the model does not
measure (``array_update``, and ``div``/``rem`` that were not lowered). It also sees LUTs, not
words, where yosys does: the bitwise nodes of a graph (``kera.hls.lutmap``) are costed as
LUT levels (each level one LUT and one net, ``model.lut_network``) and LUTs of the network
their bits form; multiplies beyond the device's DSPs (``dsp_budget``) become LUT multipliers
or shift-and-add networks (canonical signed digits), whichever is smaller; and a DSP multiply
the tools do not time (``model.dsp_timing``) is costed as one tile's LUT multiplier followed by
the fabric adders the tools do time (``CostModel.dsp_delay``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kera.diagnostics import KeraError, SourceFile, Span, read_source
from kera.hls.carries import ChainProfile, chain_profile
from kera.hls.lutmap import (
    ZERO,
    BitNetwork,
    is_bitwise,
    neg_wiring,
    negated,
    significant_width,
    tool_network,
)
from kera.hls.pipeline import Schedule
from kera.ir.graph import Graph, Node
from kera.ir.types import ArrayType, IntType

#: Ops that are only wires in hardware: no delay, no area.
WIRING_OPS: frozenset[str] = frozenset(
    {"param", "state", "const", "cast", "concat", "slice", "tuple", "tuple_get", "array"}
)
#: Ops that are only wires when their second operand is a constant.
_CONST_SECOND_IS_WIRING = frozenset({"array_index", "array_update", "shl", "shr", "rotl", "rotr"})
#: Ops a model may lack whose cost is derived here from the costs of their parts.
DERIVED_OPS: frozenset[str] = frozenset({"array_update", "div", "rem"})
#: Area resources every model reports.
AREA_KEYS: tuple[str, ...] = ("lut", "ff", "carry", "dsp")
#: Slack used in every "fits in the period" comparison, against float noise.
EPS_NS = 1e-9

Query = tuple[str, int, int | None]
#: A sum's chain once known carries are out, or None where it is the fitted whole chain.
Chain = ChainProfile | None
Locator = Callable[[Span], str]


class DelayAreaModel(Protocol):
    """What the scheduler needs from a family's fitted model (``kera.hls.models``)."""

    clk_to_q_setup_ns: float

    def delay_ns(self, op: str, width: int, n: int | None = None) -> float: ...

    def area(self, op: str, width: int, n: int | None = None) -> dict[str, float]: ...

    def reg_cost(self, bits: int) -> Any: ...


def model_query(graph: Graph, node: Node) -> Query | None:
    """Return the ``(op, width, n)`` to ask the model about ``node``; None for wiring."""
    op = node.op
    if op in WIRING_OPS:
        return None
    nodes = graph.nodes
    if op in _CONST_SECOND_IS_WIRING and nodes[node.inputs[1]].op == "const":
        return None  # a constant index, shift or rotate amount only routes bits
    if op in ("and", "or") and any(nodes[i].op == "const" for i in node.inputs):
        return None  # each bit is a wire or a constant
    if op in ("eq", "ne"):
        return (op, nodes[node.inputs[0]].type.flat_width, None)
    if op in ("lt", "le", "gt", "ge"):  # one comparator, operands swapped or output inverted
        t = nodes[node.inputs[0]].type
        signed = isinstance(t, IntType) and t.signed
        return ("lt_signed" if signed else "lt", t.flat_width, None)
    if op == "widening_mul":
        return (op, nodes[node.inputs[0]].type.flat_width, None)
    if op == "array_index":
        arr = nodes[node.inputs[0]].type
        assert isinstance(arr, ArrayType)
        return (op, arr.elem.flat_width, arr.length)
    if op == "array_update":
        arr = node.type
        assert isinstance(arr, ArrayType)
        return (op, arr.elem.flat_width, arr.length)
    if op == "shr" and isinstance(node.type, IntType) and node.type.signed:
        return ("shr_signed", node.type.width, None)
    return (op, node.type.flat_width, None)


def is_wiring(graph: Graph, node: Node) -> bool:
    """Return whether a node is only wires in hardware (no delay, no area)."""
    return model_query(graph, node) is None


def display_width(graph: Graph, node: Node) -> int:
    """Return the width a report shows for a node (the model query's, else the flat width)."""
    q = model_query(graph, node)
    return q[1] if q is not None else node.type.flat_width


#: Multiplies that a DSP block may take.
MUL_OPS = frozenset({"mul", "widening_mul"})
#: Carry-chain ops costed at their operands' significant width (``CostModel.narrow_query``).
_NARROWED = frozenset({"add", "sub", "neg", "min", "max", "lt", "le", "gt", "ge"})
#: Carry-chain comparisons of two variables and the selects they drive: ``a - b``'s borrow.
ORDERINGS = frozenset({"min", "max", "lt", "le", "gt", "ge"})
#: Ops whose carry chain subtracts their last operand (``CostModel._inverted_operand``).
SUBTRACTING = frozenset({"sub", "neg", *ORDERINGS})


def csd_digits(value: int) -> int:
    """Return the non-zero digits of ``value``'s canonical signed-digit form (NAF)."""
    value, digits = abs(value), 0
    while value:
        if value & 1:
            digits += 1
            value -= 2 - (value & 3)  # digit +1 when ...01, -1 when ...11
        value >>= 1
    return digits


class CostModel:
    """A delay/area model with a per-query cache and the derived costs of unmeasured ops.

    ``dsp_budget`` is the device's DSP count (None: unbounded): multiplies take DSPs in the
    graph's canonical order while they last, and the rest are built from LUTs. The multiplies
    in ``exclude`` take no part in that count (shared units, costed by ``kera.hls.sharing``).
    The multiplies in ``pipelined`` are DSPs with their own input and output registers
    (``Schedule.pipelined``): each costs ``pipelined_ns`` alone in its stage. ``design_luts``
    (0: unknown) is the size of the design the lookups in LUT tables are timed in: their
    index nets grow with it (``table_growth_ns``), as the bit-level timing has them.
    """

    def __init__(self, model: DelayAreaModel, dsp_budget: int | None = None,
                 exclude: frozenset[bytes] = frozenset(),
                 pipelined: frozenset[bytes] = frozenset(), design_luts: float = 0.0) -> None:
        self.model = model
        self.dsp_budget = dsp_budget
        self.exclude = exclude
        self.pipelined = pipelined
        self.design_luts = design_luts
        self._delay: dict[Query, float] = {}
        self._area: dict[Query, dict[str, float]] = {}
        self._networks: dict[int, tuple[Graph, BitNetwork, dict[bytes, int]]] = {}
        self._lut_muls: dict[int, tuple[Graph, dict[bytes, Query | int]]] = {}
        self._dsps_left: dict[int, tuple[Graph, dict[bytes, int]]] = {}
        self._merged: dict[int, tuple[Graph, dict[bytes, dict[str, float]]]] = {}
        self._borrows: dict[int, tuple[Graph, dict[bytes, int]]] = {}
        self._flops: dict[int, tuple[Graph, frozenset[int]]] = {}
        self._absorbed: dict[int, tuple[Graph, dict[bytes, int]]] = {}
        self._negations: dict[int, tuple[Graph, dict[bytes, bytes]]] = {}
        self._owners: dict[int, tuple[Graph, dict[int, bytes]]] = {}
        self._chains: dict[int, tuple[BitNetwork, dict[tuple[bytes, int], Chain]]] = {}

    @property
    def lut_k(self) -> int:
        """Inputs per LUT of the family (``model.lut_network["k"]``; 4 when absent)."""
        return int(getattr(self.model, "lut_network", {}).get("k", 4))

    @property
    def lut_wide(self) -> int:
        """Widest function of one LUT level (``model.lut_network["wide"]``; 0: only K)."""
        return int(getattr(self.model, "lut_network", {}).get("wide", 0))

    @property
    def gate_sum_bits(self) -> int:
        """The widest sum yosys builds as gates, not as a carry chain
        (``model.lut_network["gate_sum_bits"]``; 0: every sum is a chain).

        yosys's ``$alu`` techmap declines a result of that many bits or fewer
        (``_TECHMAP_FAIL_ = Y_WIDTH <= 2`` in ``_80_ice40_alu``, ``<= 4`` in ``_80_ecp5_alu``;
        ``Y_WIDTH`` after ``wreduce``: the operands' significant width plus one, at most the
        result's), so the generic techmap makes it gates that abc maps to LUTs: no carry cell,
        and a carry out is a LUT of its own (``gate_sum``)."""
        return int(getattr(self.model, "lut_network", {}).get("gate_sum_bits", 0))

    @property
    def ripple_sum_bits(self) -> int:
        """The widest sum ``kera.hls.decompose`` writes as full-adder gates: ``gate_sum_bits``
        where the family's carry cells sum (ECP5: 4), else 0. On iCE40 (2 bits) the gates
        gained the estimate nothing and placed slower (3 seeds at 55 MHz: edge_semantics
        53.3 MHz where its ``$alu`` took 65.9, div10 56.4 where 59.9)."""
        return self.gate_sum_bits if self.sums_in_carry_cells else 0

    def gate_sum(self, op: str, q: Query) -> bool:
        """Whether the ``add``/``sub``/``neg`` of query ``q`` (at its narrowed width, which is
        yosys's ``Y_WIDTH``) is gates, not a carry chain (``gate_sum_bits``)."""
        return op in ("add", "sub", "neg") and q[0].removesuffix("_signed") == op and (
            q[1] <= self.gate_sum_bits)

    @property
    def sums_in_carry_cells(self) -> bool:
        """Whether the family's carry cells sum and fill LUT sites (``carry_lut_sites``:
        ECP5's CCU2C), where iCE40's SB_CARRY only carries beside a sum LUT."""
        return float(getattr(self.model, "carry_lut_sites", 0.0)) > 0

    @property
    def trims_bounds(self) -> bool:
        """Whether the estimate's network costs an ordering against a constant by the bits
        above the bound's trailing zeros (``lutmap._bound_zeros``): iCE40, where yosys trims
        the constant carry cells; not where the carry cells fill LUT sites (ECP5: abc9 keeps
        some of those compares as CCU2C chains of the whole width, the eighth run)."""
        return not float(getattr(self.model, "carry_lut_sites", 0.0))

    @property
    def level_ns(self) -> float:
        """Delay of one LUT level and the net after it, in ns."""
        return float(getattr(self.model, "lut_network", {}).get("level_ns", 0.5))

    def network(self, graph: Graph) -> BitNetwork:
        """Return (and cache) the bit network of ``graph`` without registers."""
        return self._network(graph)[0]

    def _network(self, graph: Graph) -> tuple[BitNetwork, dict[bytes, int]]:
        hit = self._networks.get(id(graph))
        if hit is None or hit[0] is not graph or len(hit[1].bits) != len(graph.nodes):
            net = tool_network(graph, self.lut_k, order=list(graph.nodes),  # topological
                               wide=self.lut_wide)
            hit = self._networks[id(graph)] = (graph, net,
                                               self.fitted_equalities(net, net.luts_by_node()))
        return hit[1], hit[2]

    def network_luts(self, graph: Graph) -> dict[bytes, int]:
        """Return the LUTs of the bit network of ``graph`` without registers, by node (the
        cover's, with ``fitted_equalities``)."""
        return self._network(graph)[1]

    def fitted_equalities(self, net: BitNetwork, luts: dict[bytes, int]) -> dict[bytes, int]:
        """Return ``luts`` (``net``'s 4-input cover) with each equality's count replaced by the
        fitted ``eq`` of as many bit pairs where that is fewer, on a family without wide
        LUTs (ECP5's LUT sites come from ``kera.hls.cutmap``, which packs them already). The
        cover gives each of an equality's xors a LUT of its own under the reduction (64 bits:
        64 + 21), but abc packs two pairs into a LUT where it can (yosys 0.70
        ``synth_ice40``: 4 bits 3 SB_LUT4, 8 bits 5, 64 bits 57), as the characterised ``eq``
        points measured. A comparison is one gate over its pairs' cones (``lutmap._compare``);
        the pairs are what that gate reads."""
        lib = getattr(self.model, "lut_network", {}).get("library")
        if lib and len(lib["luts"]) > self.lut_k:
            return luts
        graph = net.graph
        out = dict(luts)
        for nid, bits in net.bits.items():
            if graph.nodes[nid].op not in ("eq", "ne") or nid not in out or len(bits) != 1:
                continue
            gate = bits[0][2]
            if gate < 0 or gate not in net._fanin:
                continue
            leaves, gates, owner = net._fanin[gate]
            pairs = len(leaves) + len(gates)
            if owner != nid or pairs < 2 or any(net._fanin[h][2] != nid for h in gates):
                continue  # a gate of another node's (shared), or the xors are not its own
            fitted = int(round(self._query_area(("eq", pairs, None))["lut"]))
            out[nid] = min(out[nid], fitted)
        return out

    def lut_multipliers(self, graph: Graph) -> dict[bytes, Query | int]:
        """Return the multiplies that get no DSP: node -> LUT-multiplier query, or the CSD
        digit count of its constant operand when shift-and-add is the smaller circuit.

        The budget goes first to the multiplies whose LUT circuit would be the largest per DSP
        (in the graph's canonical order among equals): the DSPs save the most LUTs where they
        go, and the pieces of a multiply split over the budget (``kera.hls.decompose``: u64
        ``a * b`` on the 8 SB_MAC16 of an UP5K, six 32-bit and four 16-bit products) leave the
        narrow ones to LUTs. ``dsps_left`` says what the budget had left for each multiply it
        could not take."""
        hit = self._lut_muls.get(id(graph))
        if hit is not None and hit[0] is graph:
            return hit[1]
        out: dict[bytes, Query | int] = {}
        left = self.dsp_budget
        nodes = graph.nodes
        wants: list[tuple[float, int, bytes, Query | int | None, float]] = []
        for k, nid in enumerate(graph.canonical_order()):
            node = nodes[nid]
            q = self.mul_query(graph, node) if node.op in MUL_OPS else None
            if q is None or nid in self.exclude:
                continue
            need = self.mul_dsps(graph, node, q)
            consts = [v for v in (self._known(graph, i) for i in node.inputs) if v is not None]
            lut_q: Query = (f"{q[0]}_lut", q[1], None)
            digits = csd_digits(consts[0]) if consts else 0
            lut_area = self._lut_area(lut_q)
            off: Query | int | None = lut_q if lut_area is not None else None
            if consts and (lut_area is None or self._csd_area(digits, node)["lut"] <= lut_area):
                off, lut_area = digits, self._csd_area(digits, node)["lut"]
            saving = (lut_area or 0.0) / need if need > 0 else 0.0
            wants.append((-saving, k, nid, off, need))
        lefts: dict[bytes, int] = {}
        for _, _, nid, off, need in sorted(wants) if left is not None else wants:
            if left is None or need <= left:
                left = None if left is None else left - int(math.ceil(need))
                continue
            lefts[nid] = left
            if off is not None:
                out[nid] = off  # else the model has no LUT multiplier: it stays a DSP one
        self._lut_muls[id(graph)] = (graph, out)
        self._dsps_left[id(graph)] = (graph, lefts)
        return out

    def dsps_left(self, graph: Graph, nid: bytes) -> int:
        """Return the DSPs the budget had left when it could not take multiply ``nid`` (0 for
        one it took, or where there is no budget)."""
        self.lut_multipliers(graph)
        return self._dsps_left[id(graph)][1].get(nid, 0)

    def narrow_query(self, graph: Graph, node: Node) -> Query | None:
        """Return the model query of a carry-chain op at its operands' significant width:
        yosys's ``wreduce`` builds ``a + b`` of 8-bit values held in u32 as a 9-bit adder
        (both the area and the delay of the chain: since ``kera.opt.narrow`` computes a guarded
        difference narrow in the graph itself, what the bit network knows is what the netlist
        has, so one network serves both)."""
        q = model_query(graph, node)
        if q is None or node.op not in _NARROWED or not isinstance(
                graph.nodes[node.inputs[0]].type, IntType):
            return q
        net = self.network(graph)
        eff = max(_significant(net.bits[i], graph.nodes[i].type) for i in node.inputs)
        extra = 1 if node.op in ("add", "sub", "neg") else 0
        if node.op == "add":  # x + (2**w - k) is x - k: its top bits copy the borrow
            eff = min(eff + extra, significant_width(net.bits[node.id], True)) - extra
        return (q[0], max(1, min(q[1], eff + extra)), q[2])

    def mul_query(self, graph: Graph, node: Node) -> Query | None:
        """Return the model query of a multiply at its operands' significant width.

        yosys drops an operand's constant top bits and repeated sign bits before it maps a
        product (``wreduce``), so ``x * 3`` of a sign-extended i16 is a 16-bit product on one
        DSP, not an 18-bit one on three: a product of narrower operands is costed as the
        cheaper (fewer DSPs, then fewer LUTs) of the full-width ``mul`` and a ``widening_mul``
        of the operands' significant width.
        """
        q = model_query(graph, node)
        if q is None:
            return None
        net = self.network(graph)
        nodes = graph.nodes
        eff = max(1, max(_significant(net.bits[i], nodes[i].type) for i in node.inputs))
        narrow: Query = ("widening_mul", min(eff, q[1]), None)
        if eff >= q[1] or narrow == q:
            return q
        return min((q, narrow), key=lambda c: (self._query_area(c)["dsp"],
                                               self._query_area(c)["lut"]))

    def mul_dsps(self, graph: Graph, node: Node, q: Query) -> float:
        """Return the DSP tiles of a multiply at query ``q``: the fitted table's, or where the
        model gives ``mul2dsp``'s split (``dsp_timing.split``, iCE40) the tiles of a product of
        the operands' significant widths (``mul2dsp_tiles``: a wide operand times a narrow one
        takes fewer tiles than the square table at the wide width says)."""
        fitted = float(self._query_area(q)["dsp"])
        split = getattr(self.model, "dsp_timing", {}).get("split")
        if not split or fitted <= 0 or q[0] not in MUL_OPS:
            return fitted
        net = self.network(graph)
        nodes = graph.nodes
        a, b = (max(1, _significant(net.bits[i], nodes[i].type)) for i in node.inputs)
        y = a + b if node.op == "widening_mul" else min(node.type.flat_width, a + b)
        return float(min(fitted, mul2dsp_tiles(a, b, y, split)))

    def merged_area(self, graph: Graph) -> dict[bytes, dict[str, float]]:
        """Return the area of carry-chain ops that yosys merges into an earlier one.

        ``alumacc`` builds every comparison of two operands and their subtraction as one ALU
        (also a subtraction of their low bits, the optimiser's narrowed ``if x >= k { x - k }``):
        a comparison whose operands are also subtracted (or compared before) costs one LUT
        for its flag. The comparator of ``min(a, b)`` and ``max(a, b)`` is built once: the
        second costs only its multiplexer, a ``select`` of its width (``min`` minus ``lt``
        was one LUT short: the fitted ``lt`` has a LUT for its flag, which a ``min`` feeds
        to its multiplexer's LUTs; sort8's 19 pairs: yosys 0.70 has 16 LUT4s a pair, not 15).
        A subtraction of the low bits of a wider comparison's operands (the optimiser's
        ``relational`` rows: ``rem - trial`` on the bits the remainder keeps, ``rem >= trial``
        on one more) is the comparison's chain up to its width: the techmapped cells of the
        two ALUs are the same cells bit for bit there, and ``opt_merge`` keeps one of each; the
        subtraction costs only its sum LUTs (iCE40: SB_CARRY does not sum; ECP5: none, the
        CCU2C sums). isqrt32 at 55 MHz, yosys 0.70: 150 SB_CARRY, all in the comparisons'
        chains (283 estimated with a chain each); on ECP5 77 CCU2C, 310 LUT sites (443).
        A subtraction of which only the borrow is read (``_borrow_only``: a segment of
        ``kera.hls.decompose``'s split comparison) is a comparison one bit narrower where
        that has fewer LUTs: yosys trims the sum LUTs nothing reads, and on iCE40 what stays
        is the chain with the inverters of its second operand (the segmented compare of
        ``max`` of i64 at 55 MHz: four 18-bit subtractions, 131 LUTs estimated as sums, 71
        placed). First is canonical order.
        """
        hit = self._merged.get(id(graph))
        if hit is not None and hit[0] is graph:
            return hit[1]
        nodes = graph.nodes
        order = graph.canonical_order()
        subs = {frozenset(nodes[n].inputs) for n in order if nodes[n].op == "sub"}
        low = self._low_subtractions(graph, order)
        seen: set[tuple[str, frozenset[bytes]]] = set()
        out: dict[bytes, dict[str, float]] = {}
        for nid in order:
            node = nodes[nid]
            if node.op not in ("lt", "le", "gt", "ge", "min", "max") or is_bitwise(graph, node):
                continue
            pair = frozenset(node.inputs)
            kind = "minmax" if node.op in ("min", "max") else "compare"
            q = self.narrow_query(graph, node)
            assert q is not None
            if kind == "compare" and (pair in subs or (kind, pair) in seen or low(node)):
                out[nid] = _area_dict({"lut": 1.0})
            elif kind == "minmax" and (kind, pair) in seen:
                out[nid] = _area_dict(self._query_area(("select", q[1], None)))
            seen.add((kind, pair))
        for nid, _ in self._chain_prefixes(graph, order):
            w = nodes[nid].type.flat_width
            out[nid] = _area_dict({"lut": self._query_area(("add", w, None))["lut"]})
        for compare, n in self.shared_borrows(graph).items():
            out.setdefault(compare, _area_dict({"carry": float(-(-(n + 1) // 2))}))
        users = graph.users()
        for nid in order:
            if nid not in out and _borrow_only(graph, nid, users):
                w = nodes[nid].type.flat_width
                less = self._query_area(("lt", w - 1, None))
                if less["lut"] < self._query_area(("sub", w, None))["lut"]:
                    out[nid] = _area_dict(less)
        self._merged[id(graph)] = (graph, out)
        return out

    def shared_borrows(self, graph: Graph) -> dict[bytes, int]:
        """Return the unsigned comparisons ``kera.rtl.borrow`` writes as the top sum bit of
        one difference with a narrower subtraction, each with its operands' significant
        width ``n``, on a family whose carry cells sum (ECP5; iCE40's are unchanged there):
        each costs the ``n + 1``-bit subtraction's chain, its flag no LUT. Its delay stays the
        fitted comparison's: as the subtraction's (0.75 ns less a row at 16 bits) isqrt32's
        estimate at 25 MHz came within -10.6 % instead of -18.8 %, but the schedule at 150 MHz
        moved (478 -> 493 flip-flops) and placed at 202.9 MHz over nine seeds, not 206.1."""
        hit = self._borrows.get(id(graph))
        if hit is not None and hit[0] is graph:
            return hit[1]
        out: dict[bytes, int] = {}
        if self.sums_in_carry_cells:
            nodes, bits = graph.nodes, self.network(graph).bits
            for _, compare in self._chain_prefixes(graph, graph.canonical_order()):
                x = nodes[nodes[compare].inputs[0]].type
                if isinstance(x, IntType) and not x.signed:
                    out[compare] = max(significant_width(bits[i], False)
                                       for i in nodes[compare].inputs)
        self._borrows[id(graph)] = (graph, out)
        return out

    def _chain_prefixes(self, graph: Graph, order: list[bytes]) -> list[tuple[bytes, bytes]]:
        """Return the subtractions whose operands are, bit for bit, the low bits of a wider
        comparison's (minuend and subtrahend as its ALU takes them, some bit above not
        constant), each with the widest such comparison: ``merged_area``'s shared chains.

        ``kera.rtl.borrow`` emits an unsigned pair as one difference one bit wider than the
        comparison's operands, whose last sum is the comparison: on ECP5 that comparison
        then costs the ``ceil((n + 1) / 2)`` CCU2C of its ``n + 1`` bits and no LUT (yosys
        0.70, ``synth_ecp5``, rows of n = 4 ... 17 bits: exactly that; as two ALUs, an odd
        ``n`` took up to 33 LUT4 and 16 PFUMX beside the chain)."""
        bits = self.network(graph).bits
        nodes = graph.nodes
        prefixes: dict[tuple[tuple[Any, ...], ...], tuple[int, bytes]] = {}  # widest compare
        for n in order:
            node = nodes[n]
            if node.op not in ("lt", "le", "gt", "ge") or is_bitwise(graph, node):
                continue
            a, b = node.inputs if node.op in ("lt", "ge") else node.inputs[::-1]
            ab = bits[a], bits[b]
            top = max(len(ab[0]), len(ab[1]))
            for w in range(1, top):
                if all(not x[0] for x in (*ab[0][w:], *ab[1][w:])):
                    break  # above w only constants: ``_low_subtractions`` merges that one
                key = (tuple(ab[0][:w]), tuple(ab[1][:w]))
                if prefixes.get(key, (0, b""))[0] < top:
                    prefixes[key] = (top, n)
        out = []
        for n in order:
            node = nodes[n]
            if node.op != "sub" or not prefixes:
                continue
            w = node.type.flat_width
            x, y = node.inputs
            key = (tuple(bits[x][:w]), tuple(bits[y][:w]))
            top, compare = prefixes.get(key, (0, b""))
            if len(key[0]) == len(key[1]) == w and top > w:
                out.append((n, compare))
        return out

    def _low_subtractions(self, graph: Graph, order: list[bytes]) -> Callable[[Node], bool]:
        """Return a test of whether a comparison's operands are, bit for bit, those of a
        subtraction of fewer bits, above which both are constants (the optimiser's narrowed
        ``x - k`` beside ``x >= k``: ``wreduce`` makes them the same ALU)."""
        bits = self.network(graph).bits
        keys: dict[int, set[tuple[tuple[Any, ...], ...]]] = {}
        for n in order:
            node = graph.nodes[n]
            if node.op == "sub":
                w = node.type.flat_width
                keys.setdefault(w, set()).add(tuple(tuple(bits[i][:w]) for i in node.inputs))

        def test(node: Node) -> bool:
            a, b = (bits[i] for i in node.inputs)
            for w, pairs in keys.items():
                if w <= len(a) and not any(x[0] for x in (*a[w:], *b[w:])) and (
                        (tuple(a[:w]), tuple(b[:w])) in pairs
                        or (tuple(b[:w]), tuple(a[:w])) in pairs):
                    return True
            return False

        return test

    def _known(self, graph: Graph, nid: bytes) -> int | None:
        """Return the value of a node whose bits are all known constants (signed), or None."""
        bits = self.network(graph).bits[nid]
        if any(b[0] for b in bits):
            return None
        value = sum(b[1] << i for i, b in enumerate(bits))
        t = graph.nodes[nid].type
        if isinstance(t, IntType) and t.signed and value >> (t.width - 1):
            value -= 1 << t.width
        return value

    def _lut_area(self, q: Query) -> float | None:
        try:
            return self._query_area(q)["lut"]
        except (KeyError, LookupError, ValueError, KeraError):
            return None

    def _csd_area(self, digits: int, node: Node) -> dict[str, float]:
        one = self._query_area(("add", node.type.flat_width, None))
        return {k: v * max(0, digits - 1) for k, v in one.items()}

    def _csd_delay(self, digits: int, node: Node) -> float:
        depth = max(0, digits - 1).bit_length()  # a balanced tree of digits - 1 adders
        return depth * self._query_delay(("add", node.type.flat_width, None))

    def dsp_delay(self, graph: Graph, node: Node) -> float:
        """Return the delay of a multiply that is on DSPs (within ``dsp_budget``), in ns.

        Where the tools time the DSP (``model.dsp_timing`` not ``untimed``), or yosys builds
        the product from LUTs anyway (the model gives it no DSP), the fitted curve is the
        delay. An untimed DSP (nextpnr-ice40 gives an SB_MAC16 0.1 ns placeholders) is costed
        as its LUT equivalent: the tiles work side by side, so the DSP part is one tile's LUT
        multiplier (``delay_from`` at ``min(width, tile_width)``), followed by the fabric
        adders that join wider partial products, which nextpnr does time (the fitted curve).
        For a constant operand the shift-and-add network over its canonical signed digits is
        the LUT equivalent when it is faster.
        """
        q = self.mul_query(graph, node)
        assert q is not None
        fitted = max(0.0, self._query_delay(q))
        timing = getattr(self.model, "dsp_timing", {})
        if not timing.get("untimed") or self._query_area(q)["dsp"] <= 0:
            return fitted
        tile = min(q[1], int(timing.get("tile_width", q[1])))
        dsp = self._query_delay((f"{q[0]}{timing['delay_from']}", tile, None)) + fitted
        consts = [v for v in (self._known(graph, i) for i in node.inputs) if v is not None]
        if consts:
            return min(dsp, max(fitted, self._csd_delay(csd_digits(consts[0]), node)))
        return dsp

    @property
    def dsp_pipeline(self) -> dict[str, Any] | None:
        """The family's DSP with its own pipeline registers (``model.dsp_timing["pipelined"]``:
        the primitive, the widest operand it takes, ``stage_ns``), or None where the flow has
        none that the tools time (iCE40: nextpnr gives an SB_MAC16 0.1 ns placeholders)."""
        spec = getattr(self.model, "dsp_timing", {}).get("pipelined")
        return dict(spec) if spec else None

    @property
    def pipelined_ns(self) -> float:
        """The delay a pipelined DSP multiply takes in its stage, on the scheduler's scale (the
        usable period is the clock period less the fabric's register overhead): the DSP's
        own register-to-register figure, ``stage_ns``, less that overhead."""
        spec = self.dsp_pipeline
        return max(0.0, float(spec["stage_ns"]) - self.overhead_ns) if spec else 0.0

    def dsp_out_ns(self, dsps: int) -> float:
        """The time a pipelined DSP's product arrives at the fabric after a flip-flop's would,
        in a design with ``dsps`` of them: the output register's clock-to-out over the
        fabric's (``clk_to_out_ns - ff_clk_to_q_ns``) and the longer net from the DSP row,
        ``out_net_ns * sqrt(dsps)`` (the DSPs spread over more of the die as there are more;
        fitted on mat2 and matmul4 at 150 MHz, docs/models.md)."""
        spec = self.dsp_pipeline
        if spec is None or dsps <= 0:
            return 0.0
        extra = float(spec.get("clk_to_out_ns", 0.0)) - float(spec.get("ff_clk_to_q_ns", 0.0))
        return max(0.0, extra) + float(spec.get("out_net_ns", 0.0)) * math.sqrt(dsps)

    def dsp_net_growth_ns(self, dsps: float) -> float:
        """What the fabric net out of a combinational DSP multiply takes over its fitted
        curve's in a design of ``dsps`` DSP tiles: the curve was placed with one, and the
        DSPs spread over more of the die as there are more, ``out_net_ns * (sqrt(dsps) - 1)``
        (the pipelined product's net, ``dsp_out_ns``, with the fitted design's one DSP taken
        off). examples/matmul4 on ECP5 at 25 MHz, 64 MULT18X18D: nets of 2.7 ns into a DSP,
        3.5 out of it and 3.9 between the adders after it (nextpnr, seed 1), where a lone
        multiply's are under 1 ns."""
        spec = self.dsp_pipeline
        if spec is None or dsps <= 1:
            return 0.0
        return float(spec.get("out_net_ns", 0.0)) * (math.sqrt(dsps) - 1.0)

    def can_pipeline(self, graph: Graph, node: Node) -> bool:
        """Whether ``node`` is a multiply on one DSP that the family's pipelined DSP takes
        (``dsp_pipeline``): within the DSP budget, each operand of at most ``max_width``
        significant bits (``_significant``: without its constant-0 top bits or, signed, its
        repeated sign bits) and a product of at most twice that. Such a product is the exact
        product of the operands' low ``max_width`` bits (sign-extended when the type is
        signed), so ``kera.rtl.dsp`` feeds the DSP those bits and takes the product's low bits:
        an i16 product formed in i32 is one 18 x 18 multiply."""
        spec = self.dsp_pipeline
        if spec is None or node.op not in MUL_OPS or node.id in self.exclude:
            return False
        if node.id in self.lut_multipliers(graph):
            return False
        q = self.mul_query(graph, node)
        if q is None or self._query_area(q)["dsp"] != 1:
            return False
        width = int(spec["max_width"])
        bits = self.network(graph).bits
        eff = max(_significant(bits[i], graph.nodes[i].type) for i in node.inputs)
        return eff <= width and node.type.flat_width <= 2 * width

    def rom_index_bits(self, graph: Graph, node: Node) -> int | None:
        """Return the index bits a lookup in an array of constants depends on (its significant
        bits, at most those that address the table), else None (not such a lookup)."""
        if node.op != "array_index":
            return None
        nodes = graph.nodes
        arr, idx = nodes[node.inputs[0]], nodes[node.inputs[1]]
        if arr.op != "array" or idx.op == "const" or not isinstance(idx.type, IntType) or any(
                nodes[e].op != "const" for e in arr.inputs):
            return None
        return min(_significant(self.network(graph).bits[idx.id], idx.type),
                   max(1, (len(arr.inputs) - 1).bit_length()))

    @staticmethod
    def _rom_live(graph: Graph, node: Node, b: int) -> int:
        """The output bits of a table lookup that differ among the entries ``b`` index bits
        reach (the others are constants)."""
        nodes = graph.nodes
        values = [int(nodes[e].attr("value")) for e in nodes[node.inputs[0]].inputs[: 1 << b]]
        return sum(1 for k in range(node.type.flat_width) if len({v >> k & 1 for v in values}) > 1)

    def rom_cost(self, graph: Graph, node: Node) -> tuple[int, int] | None:
        """Return ``(LUT levels, LUTs)`` of a lookup in an array of constants, else None.

        Each output bit that is not constant is a function of the ``b`` index bits: one LUT
        when ``b <= K``; else the ``2**(b - K)`` K-input cofactors joined by a mux tree, which
        is free up to ``lut_wide`` inputs (ECP5 PFUMX/L6MUX21) and a LUT per 2:1 mux above.
        The depth is that of a balanced tree over ``b`` inputs, ``ceil((b - 1) / (K - 1))``
        levels (one level up to ``lut_wide``); a clamped index past the end adds a level.
        """
        b = self.rom_index_bits(graph, node)
        if b is None:
            return None
        n = len(graph.nodes[node.inputs[0]].inputs)
        live = self._rom_live(graph, node, b)
        k, wide = self.lut_k, max(self.lut_k, self.lut_wide)
        if b <= k:
            per_bit = 1
        else:
            per_bit = (1 << (b - k)) + max(0, (1 << max(0, b - wide)) - 1)
        levels = 1 if b <= wide else 1 + math.ceil((b - wide) / (k - 1))
        if b > k and wide == k:
            levels = math.ceil((b - 1) / (k - 1))
        clamp = 1 if n < 1 << b else 0
        return levels + clamp, live * per_bit

    def rom_fanout_ns(self, graph: Graph, node: Node) -> float:
        """Return what the nets of a LUT table's index add over its LUT levels, in ns.

        Each index bit drives every cofactor LUT of every live output bit (``live * 2**(b -
        K)`` LUTs, ``rom_cost``): nets that the fitted routing, whose fanout term is fitted to
        worst paths of low fanout, does not hold. ``lut_network.rom_fanout`` (where the family
        has it): ``a_ns + per_log2_ns * (log2(fanout) - at_log2)``, at least 0.
        """
        fit = getattr(self.model, "lut_network", {}).get("rom_fanout")
        b = self.rom_index_bits(graph, node)
        if not fit or b is None:
            return 0.0
        fanout = max(1, self._rom_live(graph, node, b)) << max(0, b - self.lut_k)
        return max(0.0, float(fit["a_ns"]) + float(fit["per_log2_ns"])
                   * (math.log2(fanout) - float(fit["at_log2"])))

    def table_growth_ns(self, graph: Graph, node: Node, size: float) -> float:
        """Return what the index nets of a LUT table wider than a LUT's inputs add in a design
        of ``size`` LUTs over those of the design its delay was measured in
        (``rom_fanout.at_size``): an index bit's hundred-odd LUTs spread with the design,
        ``per_log2_size_ns`` a doubling (0 where ``size`` is 0, unknown). Fitted on three AES
        rounds (7,672 LUTs placed: the S-box's stage 1.36 ns longer than in sixteen S-boxes
        alone, 2,621)."""
        fit = getattr(self.model, "lut_network", {}).get("rom_fanout")
        if size <= 0 or not fit or "per_log2_size_ns" not in fit:
            return 0.0
        b = self.rom_index_bits(graph, node)
        if b is None or b <= self.lut_k:
            return 0.0
        grow = math.log2(max(1.0, size / float(fit["at_size"])))
        return float(fit["per_log2_size_ns"]) * grow

    def is_replication(self, graph: Graph, node: Node) -> bool:
        """Return whether ``node`` is a negation whose bits are wires (``0 - (c & 1)``), which
        yosys folds to wiring (``kera.hls.lutmap.neg_wiring``)."""
        bits = self.network(graph).bits
        operand = negated(node, [bits[u] for u in node.inputs]) if node.op in (
            "neg", "sub") else None
        signed = isinstance(node.type, IntType) and node.type.signed
        return operand is not None and neg_wiring(operand, signed) is not None

    def op_delay(self, q: Query) -> float:
        """Return the fitted delay of one model query ``(op, width, n)`` in ns (at least 0)."""
        return max(0.0, float(self._query_delay(q)))

    @property
    def overhead_ns(self) -> float:
        """The register overhead (clock-to-Q plus setup) every stage pays, in ns."""
        value = self.model.clk_to_q_setup_ns
        return float(value() if callable(value) else value)

    def delay(self, graph: Graph, node: Node) -> float:
        """Return the combinational delay of ``node`` in ns (0 for wiring).

        A bitwise node costs the LUT levels it adds to its deepest bitwise input. A sum costs
        at least one level (``level_ns``): iCE40's fitted ``add`` of 1 to 4 bits is under a
        level, since the LUT before the measured flip-flop is in the register overhead, and
        chained (popcount64's field sums) each is a LUT and a net. A carry out adds its net
        (``carry_out``).
        """
        if is_bitwise(graph, node):
            return self.network(graph).increment(node.id) * self.level_ns
        q = model_query(graph, node)
        if q is None or self.is_replication(graph, node):
            return 0.0
        rom = self.rom_cost(graph, node)
        if rom is not None:
            return rom[0] * self.level_ns + self.rom_fanout_ns(graph, node) + \
                self.table_growth_ns(graph, node, self.design_luts)
        if node.op in MUL_OPS:
            if node.id in self.pipelined:
                return self.pipelined_ns
            lut = self.lut_multipliers(graph).get(node.id)
            if isinstance(lut, int):
                return self._csd_delay(lut, node)
            if lut is None:
                return self.dsp_delay(graph, node)
            q = lut  # a LUT multiplier: its own fitted curve
        else:
            q = self.narrow_query(graph, node) or q
        chain = self.chain(graph, node, q)
        if chain is not None:  # the longest of the chains left once known carries are out
            q = (q[0], max(1, chain.longest), q[2])
        q = self._after_known_low(graph, node, q)
        hit = self._delay.get(q)
        if hit is None:
            hit = self._delay[q] = max(0.0, float(self._query_delay(q)))
        if node.op in ("add", "sub"):  # at least its sum LUT and the net after it
            hit = max(hit, self.level_ns)
        out = chain.longest_carries_out if chain is not None else self.carry_out(graph, node)
        return hit + (self.carry_out_ns(q[1]) if out else 0.0)

    def fed_carry_in(self, graph: Graph, node: Node) -> bool:
        """Return whether an ``add``'s longest carry chain takes a signal as its carry in
        (``ChainProfile.signal_carry_in``: ``x + 5`` passes ``x[0]`` on as the carry into bit
        1), where the fitted ``add`` of two registers has a constant one."""
        if node.op != "add" or not isinstance(node.type, IntType):
            return False
        q = model_query(graph, node)
        if q is None:
            return False
        w = (self.narrow_query(graph, node) or q)[1]
        net = self.network(graph)
        a, b = ([None if x[0] else x[1] for x in net.bits[u][:w]] for u in node.inputs)
        if len(a) < w or len(b) < w or a.count(None) == w and b.count(None) == w:
            return False  # no known bit: the carry in is the constant 0
        return chain_profile(a, b).signal_carry_in

    def chain(self, graph: Graph, node: Node, q: Query) -> ChainProfile | None:
        """Return the carry chain of an ``add`` (query ``q``) where known operand bits split
        it or take cells out of it (``kera.hls.carries``), else None (one whole chain, as the
        fitted curves measure). Sum bits nothing reads (``demanded_leaves``) keep no cell."""
        if node.op != "add" or not isinstance(node.type, IntType):
            return None
        net = self.network(graph)
        hit = self._chains.get(id(net))
        if hit is None or hit[0] is not net:
            hit = self._chains[id(net)] = (net, {})
        key = (node.id, q[1])
        if key not in hit[1]:
            hit[1][key] = self._chain(net, node, q[1])
        return hit[1][key]

    def _chain(self, net: BitNetwork, node: Node, w: int) -> ChainProfile | None:
        """Return ``chain``'s answer, uncached."""
        a, b = ([None if x[0] else x[1] for x in net.bits[u][:w]] for u in node.inputs)
        if len(a) < w or len(b) < w:
            return None
        if a.count(None) == w and b.count(None) == w:  # no known bit: the whole chain
            return None
        prof = chain_profile(a, b)
        if _whole(prof):
            return None
        read = net.demanded_leaves()
        prof = chain_profile(a, b, 0, [not x[0] or bool(x[0] & read)
                                       for x in net.bits[node.id][:w]])
        return None if _whole(prof) else prof

    def _after_known_low(self, graph: Graph, node: Node, q: Query) -> Query:
        """Return the query of a subtraction or negation without the low bits it knows
        before its chain starts (``ToolNetwork.known_low``: ``-(y << 9)`` is a chain of the
        bits above 9)."""
        low = getattr(self.network(graph), "known_low", {}).get(node.id, 0)
        if not low or node.op not in ("sub", "neg"):
            return q
        return (q[0], max(1, q[1] - low), q[2])

    def chain_area(self, chain: ChainProfile, q: Query) -> dict[str, float]:
        """Return the area of what is left of a chain, at the fitted rates of its width:
        LUTs per sum LUT and carry cells per kept cell where the family's carry cells do
        not sum (iCE40), else per bit of each run (ECP5's CCU2C holds two). A carry out
        (``ChainProfile.pass_outs``) has no LUT where the carry cells do not sum: yosys's
        netlist reads ``SB_CARRY``'s ``CO`` (yosys 0.70: ``{1'b0, a} + {1'b0, b}`` of 8 bits, 8
        LUT4s and 8 carries; popcount32's 12 field sums, one carry out each). yosys splits
        the sum where its carries are known, and a piece (a run) of at most ``gate_sum_bits``
        positions is gates, no chain (``_80_ice40_alu`` declines it): its carry cells go and
        its carry out is a LUT (0.70 `synth_ice40`: ``(a & 8'h55) + (b & 8'h55)`` 8 SB_LUT4
        and no SB_CARRY; ``(a & 8'hF1) + (b & 8'hF1)`` 6 SB_LUT4 and 3 SB_CARRY, the piece of
        bits 4-7 a chain). Not on ECP5, whose pieces of up to 4 positions are gates too (``&
        8'h33``: 6 LUT4 and no CCU2C) whose LUTs depend on abc9's delay-driven mapping around
        them (popcount32's 3- and 4-position pieces: 24 and 20 LUT4 at 150 MHz, far more in
        the one deep stage at 25 MHz), which a count per sum does not give."""
        fitted = _area_dict(self._query_area(q))
        w = max(1, q[1])
        out = dict(fitted)
        sums_in_cell = float(getattr(self.model, "carry_lut_sites", 0.0)) > 0
        if self.gate_sum(q[0], q):  # no chain (``gate_sum_bits``): a LUT a sum bit, the
            out["lut"] = fitted["lut"] * chain.luts / w  # carry out's too, and no carry cell
            out["carry"] = 0.0
            return self._sites(out)
        if sums_in_cell:
            out["lut"] = fitted["lut"] * chain.luts / w
            per_bit = fitted["carry"] / w
            out["carry"] = float(sum(math.ceil(r * per_bit - 1e-9) for r in chain.runs))
        else:  # a piece of at most gate_sum_bits positions is gates: its carry out a LUT
            cells, outs = chain.short_runs(self.gate_sum_bits)
            out["lut"] = fitted["lut"] * (chain.luts - chain.pass_outs + outs) / w
            out["carry"] = fitted["carry"] * (chain.carries - cells) / max(1, w - 1)
        return self._sites(out)

    @property
    def net_ns(self) -> float:
        """Delay of one net between logic cells, in ns (``model.lut_network["net_ns"]``)."""
        return float(getattr(self.model, "lut_network", {}).get("net_ns", 0.0))

    def carry_out(self, graph: Graph, node: Node) -> bool:
        """Return whether an unsigned ``add``/``sub`` has a result bit above its operands'
        significant width: the carry (borrow) out of its chain, as the decomposition's
        segments and a zero-extended sum have.

        Where the family's sums are LUTs beside carry cells that do not sum (iCE40's SB_CARRY,
        ``carry_out_ns``), the fitted curves measure a sum whose top bit is a LUT
        beside the flip-flop it feeds, in one logic cell; a carry out leaves the chain through
        a pass-through cell and a net (nextpnr's worst paths of isqrt32 at 55 MHz: borrow ->
        pass-through -> 1.76 ns net -> flip-flop; popcount64: three byte sums chained through
        their carry outs), so it costs one net more (``net_ns``). ECP5's CCU2C sums in the
        carry cell, the carry out too: nothing more."""
        t = node.type
        if node.op not in ("add", "sub") or not isinstance(t, IntType) or t.signed:
            return False
        q = self.narrow_query(graph, node)
        bits = self.network(graph).bits
        eff = max(_significant(bits[i], graph.nodes[i].type) for i in node.inputs)
        return q is not None and q[1] > eff

    def carry_out_ns(self, width: int) -> float:
        """The delay a carry out of a ``width``-bit chain adds (``carry_out``): ``net_ns``
        where the family's carry cells do not sum (no ``carry_lut_sites``: iCE40's SB_CARRY
        shares a LUT's cell, the LUT sums), else 0 (ECP5's CCU2C, a slice of two full adders
        that fills two LUT4 sites, sums its carry out too). ``width`` is the chain's."""
        del width  # the same for every width of the families measured
        sums_in_cell = float(getattr(self.model, "carry_lut_sites", 0.0)) > 0
        return 0.0 if sums_in_cell else self.net_ns

    def area(self, graph: Graph, node: Node, absorbed: dict[bytes, int] | None = None
             ) -> dict[str, float]:
        """Return ``{lut, ff, carry, dsp}`` for ``node`` (all 0 for wiring).

        A bitwise node costs the LUTs its materialised bits take in the graph's bit network
        (without pipeline registers; ``kera.hls.resources`` recounts them with the stages).
        ``absorbed``: the sum bits selects absorb (default ``absorbed_sums``, the graph's
        without pipeline registers; ``kera.hls.resources`` passes the schedule's).
        """
        if is_bitwise(graph, node):
            return _area_dict({"lut": self._network(graph)[1].get(node.id, 0)})
        q = model_query(graph, node)
        if q is None or self.is_replication(graph, node) or node.id in self.merged_negations(
                graph):
            return dict.fromkeys(AREA_KEYS, 0.0)
        merged = self.merged_area(graph).get(node.id)
        if merged is not None:
            if node.op == "sub":  # a shared chain's sums, which a select may absorb
                return self._less_absorbed(graph, node, q, self._sites(dict(merged)), absorbed)
            return self._sites(dict(merged))
        rom = self.rom_cost(graph, node)
        if rom is not None:
            return _area_dict({"lut": rom[1]})
        if node.op in MUL_OPS:
            lut = self.lut_multipliers(graph).get(node.id)
            if isinstance(lut, int):
                return self._sites(self._csd_area(lut, node))
            q = lut or self.mul_query(graph, node) or q
        else:
            q = self.narrow_query(graph, node) or q
            chain = self.chain(graph, node, q)
            if chain is not None:
                return self._less_absorbed(graph, node, q, self._negated_operand(
                    graph, node, q, self.chain_area(chain, q)), absorbed)
            q = self._after_known_low(graph, node, q)
        hit = self._area.get(q)
        if hit is None:
            hit = self._area[q] = self._sites(_area_dict(self._query_area(q)))
        if node.op in MUL_OPS and hit["dsp"] > 0:
            hit = {**hit, "dsp": self.mul_dsps(graph, node, q)}
        gates = self.gate_sum(node.op, q)
        if gates and hit["carry"]:  # gates (``gate_sum_bits``): the fitted curve's carry
            sites = float(getattr(self.model, "carry_lut_sites", 0.0))  # there is the fit's
            hit = {**hit, "lut": hit["lut"] - sites * hit["carry"], "carry": 0.0}
        if node.op == "add" and not gates and self.carry_out(graph, node) and not float(
                getattr(self.model, "carry_lut_sites", 0.0)):  # its top bit: SB_CARRY's CO
            hit = {**hit, "lut": max(0.0, hit["lut"] - hit["lut"] / max(1, q[1]))}
        if node.op in ORDERINGS and q[0].removesuffix("_signed") in ORDERINGS:
            return self._inverted_operand(graph, node, q, dict(hit))
        if node.op in ("sub", "neg") and q[0] == node.op:
            return self._less_absorbed(graph, node, q, self._inverted_operand(graph, node, q,
                                                                          dict(hit)), absorbed)
        return self._less_absorbed(graph, node, q,
                                   self._negated_operand(graph, node, q, dict(hit)), absorbed)

    def _less_absorbed(self, graph: Graph, node: Node, q: Query, area: dict[str, float],
                       absorbed: dict[bytes, int] | None = None) -> dict[str, float]:
        """Return ``area`` less the sum LUTs a select absorbs (``absorbed``, else
        ``absorbed_sums``; none where the carry cell sums: ECP5's fitted ``add`` has no LUT)."""
        bits = (self.absorbed_sums(graph) if absorbed is None else absorbed).get(node.id)
        if bits:
            sums = self._query_area(("add", q[1], None))["lut"]
            area["lut"] -= min(float(bits), sums, area["lut"])
        return area

    def merged_negations(self, graph: Graph) -> dict[bytes, bytes]:
        """Return, by negation, the sum that yosys builds it into.

        ``alumacc`` folds an ``$add``/``$sub``/``$neg`` whose only reader is another into that
        reader's ``$macc``, through sign and zero extensions; with two operands left the
        ``$macc`` is one ALU: ``(0 - x) + b`` is ``b - x`` and ``b - (0 - x)`` is ``b + x``,
        one carry chain where the estimate had two (yosys 0.70 ``synth_ice40``, 8 bits, ``x``
        and ``b`` ports: ``(0 - x) + b`` 15 LUT4s and 7 carries, as ``b - x``; fir_q15's two
        ``-(x << 9)`` taps). A negation (``neg x``, ``0 - x``) whose one reader, past casts
        that nothing else reads, is an ``add`` or the subtrahend of a ``sub`` costs nothing;
        the ``add`` takes the inverters of ``x`` (``_negated_operand``). The emitter keeps
        (``kera.rtl.emit.chained_sums``) only sums of two variables, never a negation. The
        two are taken to be in one stage, as ``absorbed_sums`` takes its pairs."""
        hit = self._negations.get(id(graph))
        if hit is not None and hit[0] is graph:
            return hit[1]
        nodes = graph.nodes
        readers: dict[bytes, list[bytes]] = {}
        for node in nodes.values():
            for u in node.inputs:
                readers.setdefault(u, []).append(node.id)
        results = {x for r in graph.regions.values()
                   for x in (r.result, *(st.next for st in r.states))}
        out: dict[bytes, bytes] = {}
        for node in nodes.values():
            if not isinstance(node.type, IntType) or not (node.op == "neg" or (
                    node.op == "sub" and self._known(graph, node.inputs[0]) == 0)):
                continue
            at, via = node.id, node.id
            while len(readers.get(at, ())) == 1 and at not in results:
                reader = nodes[readers[at][0]]
                if reader.op != "cast" or not isinstance(reader.type, IntType) or (
                        reader.type.flat_width < nodes[at].type.flat_width):
                    break
                via, at = at, reader.id
            del via
            if at in results or len(readers.get(at, ())) != 1:
                continue
            reader = nodes[readers[at][0]]
            if not isinstance(reader.type, IntType) or is_bitwise(graph, reader):
                continue
            if reader.op == "add" or (reader.op == "sub" and reader.inputs[1] == at
                                      and reader.inputs[0] != at):
                out[node.id] = reader.id
        self._negations[id(graph)] = (graph, out)
        return out

    def _negated_operand(self, graph: Graph, node: Node, q: Query, area: dict[str, float]
                         ) -> dict[str, float]:
        """Return the area of an ``add`` that reads a negation ``0 - x`` yosys merges into it
        (``merged_negations``): it is ``b - x``, which ``maccmap`` builds as ``b + ~x + 1``
        with the inversion a ``$not`` of its own, so the bits of ``x`` that flip-flops, ports
        or DSPs drive take an inverter LUT each, on ECP5 too,
        whose CCU2C would invert an ``$alu``'s operand for free (yosys 0.70 ``synth_ecp5``, 8
        bits of ports: ``(0 - a) + b`` 4 CCU2C and 8 LUT4s, ``b - a`` 4 CCU2C)."""
        if node.op != "add":
            return area
        negs = [(u, n) for u, n in self.merged_negations(graph).items() if n == node.id]
        if not negs:
            return area
        bits = self.network(graph).bits
        owners = self._inverter_owners(graph)
        sums_in_cell = float(getattr(self.model, "carry_lut_sites", 0.0)) > 0
        for u, _ in negs:  # constant bits of x are no cell of the chain: no inverter
            x = bits[graph.nodes[u].inputs[-1]][: q[1]]
            n = float(sum(1 for b in x if b[0] and owners.get(_leaf(b)) == node.id))
            # iCE40: at most one a carry cell (the first sum LUT inverts its own bit:
            # ``(0 - a) + b`` of 8 bits, 7 inverters)
            area["lut"] += n if sums_in_cell else min(n, area["carry"])
        return area

    def _inverter_owners(self, graph: Graph) -> dict[int, bytes]:
        """Return, by leaf bit that flip-flops, ports or DSPs drive (``_flop_leaves``), the
        first node in canonical order whose carry chain reads it inverted: the subtrahend of a
        ``sub``/``neg``, of an ordering of two variables or a ``min``/``max``, the negated
        operand of a sum that takes a negation (``merged_negations``). One inverter LUT per
        bit serves every chain that reads it (yosys's ``$_NOT_`` of one bit is one cell):
        the rows of a ``u8`` division subtract ``b``'s low bits 8 times (27 inverters
        before; yosys 0.70 ``synth_ice40``: 76 LUT4s for ``[a / b, a % b]``, 77 estimated)."""
        hit = self._owners.get(id(graph))
        if hit is not None and hit[0] is graph:
            return hit[1]
        nodes, bits = graph.nodes, self.network(graph).bits
        flops = self._flop_leaves(graph)
        negations = self.merged_negations(graph)
        merged = self.merged_area(graph)  # one ALU with an earlier node: no chain of its own
        takes: dict[bytes, list[bytes]] = {}
        for u, n in negations.items():
            takes.setdefault(n, []).append(nodes[u].inputs[-1])
        out: dict[int, bytes] = {}
        for nid in graph.canonical_order():
            node = nodes[nid]
            if not node.inputs or not isinstance(nodes[node.inputs[-1]].type, IntType) or (
                    is_bitwise(graph, node)):
                continue
            if nid in merged or self.is_replication(graph, node):
                continue
            if node.op in SUBTRACTING and nid not in negations:
                operands = [node.inputs[-1]]
            else:
                operands = takes.get(nid, [])
            for u in operands:
                for b in bits[u]:
                    leaf = _leaf(b)
                    if leaf in flops:
                        out.setdefault(leaf, nid)
        self._owners[id(graph)] = (graph, out)
        return out

    def _inverter_rate(self, width: int) -> float:
        """Return the inverter LUTs per carry cell of a subtraction whose subtrahend flip-flops
        drive: what the fitted ``sub`` takes above ``add`` (iCE40: 1, ECP5: 0)."""
        add = self._query_area(("add", width, None))
        sub = self._query_area(("sub", width, None))
        return max(0.0, sub["lut"] - add["lut"]) / max(1.0, sub["carry"])

    def absorbed_sums(self, graph: Graph) -> dict[bytes, int]:
        """Return, by sum, difference or negation, the sum bits that a select absorbs into
        its own LUTs.

        In ``c ? x - k : y`` bit ``i`` of the select is a function of ``c``, ``x[i]``, ``k[i]``,
        the chain's carry into bit ``i`` and ``y[i]``; where ``y[i]`` is ``x[i]`` or a
        constant, that is four inputs, one LUT4, where the sum bit on its own took one
        (iCE40: ``SB_CARRY`` does not sum) and the select another. So it is for ``x + k``
        (``y[i]`` either operand's bit), whatever the condition: the guarded difference
        ``if x >= k { x - k } else { x }`` (its flag is the ALU's, ``merged_area``) and a
        division row's ``if fits && r >= d { r - d } else { r }`` alike. yosys 0.70
        ``synth_ice40``, 8 bits of ports: ``c ? a + b : a`` 8 LUT4s, as ``a + b``; ``c ? a - b
        : a`` 15, as ``a - b``. ``y[i]`` may be the subtrahend's bit (``-x``: ``0 - x``) only
        where a gate of the bit network makes it, whose LUT takes the chain's inversion (``x =
        p ^ q``: ``c ? a - x : x`` 16, ``a - x`` 15; ``c ? -x : x`` 16, ``-x`` 15): not where
        flip-flops, ports or another chain drive it, which the chain reads through inverter
        LUTs (``c ? a - b : b`` 21; ``c ? -a : a`` 19; saturate's ``if d < 0 { -d } else { d
        }``, ``d`` a difference: no LUT less, placed). Not where ``y`` is only constants (a
        constant arm before a register is the flip-flop's reset). At most as many as the select has
        LUTs of its own in the cover: a select folded into its reader's LUTs (biquad_q14's
        rounding select, read by the saturation's) has no LUT input left for the sum. The
        arithmetic (through a cast nothing else reads) must have no other reader. The select
        and it are taken to be in one stage (a register between them would keep both
        LUTs)."""
        hit = self._absorbed.get(id(graph))
        if hit is not None and hit[0] is graph:
            return hit[1]
        luts = tool_network(graph, self.lut_k, order=list(graph.nodes), wide=self.lut_wide,
                            area=self.trims_bounds).luts_by_node()  # the estimate's cover
        bits = self.network(graph).bits
        out = absorbed_in(graph, lambda u, v: bits[u], luts)
        self._absorbed[id(graph)] = (graph, out)
        return out

    def _inverted_operand(self, graph: Graph, node: Node, q: Query, area: dict[str, float]
                          ) -> dict[str, float]:
        """Return the area of ``a - b`` (``-b``) whose ``b`` bits are partly LUT outputs.

        Where the fitted subtraction takes more LUTs than the addition of its width (iCE40:
        ``2w - 1`` against ``w``: SB_CARRY cannot invert, so each bit of ``b`` passes an
        inverter LUT), those are inverters of operand bits that the measured design read from
        flip-flops. An ordering of two variables (``a < b``, ``a >= b``) and ``min``/``max``
        (``a < b ? a : b``) are the same ALU: ``alumacc`` subtracts ``b``, and the fitted
        curves (``lt``: ``w + 1`` LUTs, ``min``: ``2w``) hold an inverter per carry cell at
        the subtraction's rate (iCE40: 1; ECP5's CCU2C inverts inside: 0). yosys 0.70
        ``synth_ice40``, 8 bits: ``a < b`` with ``b`` from ports 9 LUT4s, with ``b = x ^ y``
        9 (the 8 xors and the flag); sort8's 19 compare-exchanges 341 LUT4s, of which 32
        inverters, for the 4 of the first layer, whose operands are ports. (``a > b`` and
        ``a <= b``, which the RTL also writes, take an equality tree more: 15 LUT4s of ports
        at 8 bits; not modelled, no design has one of two variables.) A bit of ``b`` that a
        LUT makes has the inversion folded into that LUT (a gate of the bit network, an
        adder's sum, a carry chain's borrow, which leaves the chain through a LUT), and a
        constant bit is inverted for free: only the bits of ``b`` that flip-flops, ports or
        DSPs drive (``_flop_leaves``) keep theirs, one inverter a bit for the whole design
        (``_inverter_owners``)."""
        add = self._query_area(("add", q[1], None))
        if node.op in ORDERINGS:  # an inverter per carry cell, at the subtraction's rate
            extra = min(self._inverter_rate(q[1]) * _area_dict(self._query_area(q))["carry"],
                        area["lut"])
        else:
            extra = area["lut"] - self._sites(dict(add))["lut"]
        if extra <= 0:
            return area
        bits = self.network(graph).bits[node.inputs[-1]][: q[1]]
        owners = self._inverter_owners(graph)
        leaves = sum(1 for b in bits if owners.get(_leaf(b)) == node.id)
        area["lut"] -= extra * (1.0 - leaves / max(1, len(bits)))
        return area

    def _flop_leaves(self, graph: Graph) -> frozenset[int]:
        """Return the leaf bits of the network that no LUT drives: those of parameters,
        state reads and the multiplies on DSPs (cached per graph)."""
        hit = self._flops.get(id(graph))
        if hit is not None and hit[0] is graph:
            return hit[1]
        net, nodes, on_lut = self.network(graph), graph.nodes, self.lut_multipliers(graph)
        out = frozenset(next(iter(b[0])) for nid, bits in net.bits.items()
                        if nodes[nid].op in ("param", "state") or (
                            nodes[nid].op in MUL_OPS and nid not in on_lut)
                        for b in bits if b[2] < 0 and len(b[0]) == 1)
        self._flops[id(graph)] = (graph, out)
        return out

    def _sites(self, area: dict[str, float]) -> dict[str, float]:
        """Count LUT sites as nextpnr does: carry cells that fill LUT sites are added."""
        area["lut"] += float(getattr(self.model, "carry_lut_sites", 0.0)) * area["carry"]
        return area

    def register_area(self, bits: int) -> dict[str, float]:
        """Return the area of ``bits`` pipeline flip-flops (``model.reg_cost``; else 1 FF/bit)."""
        cost = getattr(self.model, "reg_cost", None)
        if cost is None or bits == 0:
            return _area_dict({"ff": bits})
        value = cost(bits)
        if isinstance(value, dict):
            return _area_dict(value)
        return _area_dict({"ff": float(value)})

    # --- model look-ups with derived fall-backs ----------------------------------------------

    def _ask(self, what: str, q: Query) -> Any:
        """Ask the model; None when it has no entry and the op has a derived cost here."""
        op, width, n = q
        try:
            return getattr(self.model, what)(op, width, n)
        except (KeyError, LookupError, ValueError, NotImplementedError, KeraError):
            if op.endswith("_signed") or op in DERIVED_OPS:
                return None
            raise

    def _query_delay(self, q: Query) -> float:
        got = self._ask("delay_ns", q)
        if got is not None:
            return float(got)
        op, width, n = q
        if op.endswith("_signed"):
            return self._query_delay((op.removesuffix("_signed"), width, n))
        if op == "array_update":  # per element: index compare, then a 2:1 mux
            assert n is not None
            return self._query_delay(("select", width, None)) + self._query_delay(
                ("eq", _index_bits(n), None))
        # div / rem that were not lowered: a combinational restoring divider
        return width * (self._query_delay(("sub", width, None))
                        + self._query_delay(("select", width, None)))

    def _query_area(self, q: Query) -> dict[str, float]:
        op, width, n = q
        g = self.gate_sum_bits
        if self.sums_in_carry_cells and op in ("add", "sub") and g < width < 2 * g:
            return self._short_chain(q)
        got = self._ask("area", q)
        if got is not None:
            return _area_dict(got)
        op, width, n = q
        if op.endswith("_signed"):
            return self._query_area((op.removesuffix("_signed"), width, n))
        count = n if op == "array_update" else width
        assert count is not None
        one = _add_area(self._query_area(("select", width, None)),
                        self._query_area(("eq", _index_bits(count), None)
                                         if op == "array_update" else ("sub", width, None)))
        return {k: v * count for k, v in one.items()}


    def _short_chain(self, q: Query) -> dict[str, float]:
        """Return the area of an ``add``/``sub`` just above ``gate_sum_bits`` (ECP5: 5 to 7
        bits) as a carry chain, at the per-bit rates of the fitted ``2 * gate_sum_bits``
        point, a cell per two bits rounded up: the fitted table has a gate sum at 4 bits (14
        LUT4) and a chain at 8 (4 CCU2C), and between them it would mix the two, where yosys
        builds a chain (0.70 ``synth_ecp5``: popcount64's adder tree, 5- to 7-bit sums of
        narrower counts, 22 CCU2C and no LUT4 for 4 + 4 + 4 + 4 + 5 + 5 + 6 + 6 + 7 bits;
        the table said 59.5 LUT4 and 11 CCU2C)."""
        op, width, n = q
        top = 2 * self.gate_sum_bits
        at = _area_dict(self._ask("area", (op, top, n)))
        out = {k: v * width / top for k, v in at.items()}
        out["carry"] = float(math.ceil(out["carry"] - 1e-9))
        return out


def _leaf(bit: Any) -> int:
    """Return the leaf number of a wire bit (a leaf bit, either polarity), else -1."""
    return next(iter(bit[0])) if bit[0] and bit[2] < 0 and len(bit[0]) == 1 else -1


def absorbed_in(graph: Graph, read: Callable[[bytes, bytes], list[Any]], luts: dict[bytes, int],
                stage: Mapping[bytes, int] | None = None) -> dict[bytes, int]:
    """Return ``CostModel.absorbed_sums`` of a bit network: ``read(u, v)`` the bits of ``u``
    as ``v`` reads them, ``luts`` its cover.

    With the network of a schedule (``kera.hls.resources``: a value read across a pipeline
    register is flip-flops, fresh leaf bits) and its ``stage`` map, a subtrahend that a gate
    makes in an earlier stage is flip-flops at the chain, which reads them through inverter
    LUTs: edge_semantics at 55 MHz negates a division row's select a stage later (``c ? -x :
    x``, ``x`` the register of the select: yosys 0.70 19 LUT4s and 6 SB_CARRY a byte, as of
    flip-flops, not 16); a select in another stage than its sum keeps both LUTs (isqrt32's
    and edge_semantics' rows split where a stage ends: the difference registered, the select
    after the register); and the cap, the select's own LUTs, is the schedule's cover's: a
    select registered at the end of its stage keeps its LUTs where the graph's folded them
    into a reader (fir_q15's rounding ``c ? x + 1 : x`` at 55 MHz: its stage 20 LUTs
    estimated, 19 SB_LUT4 in yosys's netlist). Nodes outside ``stage`` are left out."""
    nodes = graph.nodes
    readers: dict[bytes, int] = {}
    for node in nodes.values():
        for u in node.inputs:
            readers[u] = readers.get(u, 0) + 1
    out: dict[bytes, int] = {}
    for node in nodes.values():
        if stage is not None and node.id not in stage:
            continue
        if node.op != "select" or not read(node.inputs[0], node.id)[0][0]:
            continue  # a constant condition is no select
        for arm, other in (node.inputs[1:], node.inputs[:0:-1]):
            d = arm
            if nodes[d].op == "cast" and readers.get(d) == 1:
                d = nodes[d].inputs[0]
            diff = nodes[d]
            if diff.op not in ("sub", "add", "neg") or readers.get(d) != 1 or not (
                    isinstance(diff.type, IntType)) or is_bitwise(graph, diff):
                continue
            if stage is not None and not stage.get(d) == stage.get(arm) == stage.get(node.id):
                continue
            n = diff.type.flat_width
            if diff.op == "neg":
                a, b = [ZERO] * n, read(diff.inputs[0], d)[:n]
            else:
                a, b = (read(i, d)[:n] for i in diff.inputs)
            # the subtrahend's bit only where a gate of the network makes it (abc folds
            # the chain's inversion into that LUT)
            ops = [(p[:3], q[:3]) if diff.op == "add" or q[2] >= 0 else (p[:3],)
                   for p, q in zip(a, b, strict=False)]
            y = read(other, node.id)
            mine = [bool(o[0]) and o[:3] in keys for o, keys in zip(y, ops, strict=False)]
            if any(mine) and all(m or not o[0] for m, o in zip(mine, y, strict=False)):
                out[d] = min(n, luts.get(node.id, 0))
    return out


def _whole(chain: ChainProfile) -> bool:
    """Whether a chain is the fitted curves' case: one run, a cell and a sum LUT a bit."""
    return chain.whole and chain.carries == chain.width - 1 and chain.luts == chain.width


def mul2dsp_tiles(a: int, b: int, y: int, split: Mapping[str, int], used: int | None = None,
                  top: bool = True) -> int:
    """Return the DSP tiles yosys's ``mul2dsp`` techmap makes of an ``a`` x ``b``-bit product
    with a ``y``-bit result (``split``: its ``DSP_[AB]_MAXWIDTH``, ``_MINWIDTH`` and
    ``DSP_Y_MINWIDTH`` as ``a_max``, ``b_max``, ``a_min``, ``b_min``, ``y_min``).

    The wider operand is A; while A (then B) is wider than a tile it is cut into tiles from
    its low end, each piece a product of its own (``min(y, other + tile)`` result bits; the last
    piece ``other + rest``), summed at its offset; a piece narrower than the minimum widths, or
    of fewer result bits than ``y_min``, is left to the fabric (``$__soft_mul``), and a piece
    whose offset is at or above the bits the whole product keeps (``used``) is read by nothing
    and removed. Truncated 32 x 32: 3 tiles; a u32 times 10 (4 bits): 2, where the square
    table of ``mul`` says 3.
    """
    used = y if used is None else used
    if used <= 0:
        return 0
    if top and a < b:
        a, b = b, a
    if a < split["a_min"] or b < split["b_min"] or y < split["y_min"]:
        return 0
    if a > split["a_max"]:
        return sum(mul2dsp_tiles(w, b, py, split, used - at, top=False)
                   for w, py, at in _mul2dsp_pieces(a, b, y, split["a_max"]))
    if b > split["b_max"]:
        return sum(mul2dsp_tiles(a, w, py, split, used - at, top=False)
                   for w, py, at in _mul2dsp_pieces(b, a, y, split["b_max"]))
    return 1


def _mul2dsp_pieces(wide: int, other: int, y: int, tile: int) -> list[tuple[int, int, int]]:
    """Return ``mul2dsp``'s pieces of a ``wide``-bit operand: (width, result bits, offset)."""
    n = (wide - 1) // tile
    rest = wide - n * tile
    return [*((tile, min(y, other + tile), i * tile) for i in range(n)),
            (rest, other + rest, n * tile)]


def _significant(bits: list[Any], t: Any) -> int:
    return significant_width(bits, isinstance(t, IntType) and t.signed)


def _index_bits(n: int) -> int:
    return max(1, (n - 1).bit_length())


def _borrow_only(graph: Graph, nid: bytes, users: dict[bytes, list[bytes]]) -> bool:
    """Whether ``nid`` is an unsigned subtraction whose every user reads only its top bit."""
    node = graph.nodes[nid]
    t = node.type
    if node.op != "sub" or not isinstance(t, IntType) or t.signed or t.width < 2:
        return False
    readers = users.get(nid, ())
    return bool(readers) and all(
        (r := graph.nodes[u]).op == "slice" and r.type.flat_width == 1
        and r.attr("lo") == t.width - 1 for u in readers)


def _area_dict(value: Any) -> dict[str, float]:
    src = dict(value) if not isinstance(value, dict) else value
    return {k: float(src.get(k, 0.0) or 0.0) for k in AREA_KEYS}


def _add_area(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {k: a.get(k, 0.0) + b.get(k, 0.0) for k in AREA_KEYS}


class SimpleModel:
    """A small analytic delay/area model: NOT fitted to any tool.

    It exists for unit tests and benchmarks that must not depend on the fitted data files, and
    as a documented stand-in. Delays grow linearly with width for carry chains and
    logarithmically for muxes and shifters; every op is one LUT per output bit.
    """

    name = "simple"
    clk_to_q_setup_ns = 1.0
    metadata = {"family": "simple", "kind": "analytic (unfitted)", "version": 1}

    def delay_ns(self, op: str, width: int, n: int | None = None) -> float:
        """Return an analytic delay in ns; raise ``KeyError`` for ops it does not know."""
        lg = math.log2(max(width, 2))
        if op in ("add", "sub", "neg", "min", "max", "lt", "lt_signed", "eq", "ne"):
            return 0.8 + 0.05 * width + (0.4 if op in ("min", "max") else 0.0)
        if op in ("mul", "widening_mul"):
            return 2.0 + 0.25 * width
        if op in ("mul_lut", "widening_mul_lut"):  # a LUT array multiplier
            return 2.0 * (2.0 + 0.25 * width)
        if op in ("shl", "shr", "shr_signed", "rotl", "rotr"):
            return 0.5 + 0.4 * lg
        if op in ("popcount", "clz", "ctz"):
            return 0.6 * lg + 0.5
        if op in ("array_index",):
            return 0.5 + 0.4 * math.log2(max(n or 2, 2))
        if op in ("not", "and", "or", "xor", "select"):
            return 0.5
        raise KeyError(op)

    def area(self, op: str, width: int, n: int | None = None) -> dict[str, float]:
        """Return an analytic area (one LUT per bit, DSPs for multipliers)."""
        self.delay_ns(op, width, n)  # raises for unknown ops
        carry = width if op in ("add", "sub", "neg", "min", "max", "lt", "lt_signed") else 0
        if op in ("mul", "widening_mul"):
            return {"lut": 0, "ff": 0, "carry": 0, "dsp": math.ceil(width / 16) ** 2}
        if op in ("mul_lut", "widening_mul_lut"):
            return {"lut": width * width, "ff": 0, "carry": 0, "dsp": 0}
        lut = width * (n or 1) if op == "array_index" else width
        return {"lut": lut, "ff": 0, "carry": carry, "dsp": 0}

    def reg_cost(self, bits: int) -> dict[str, float]:
        """Return the area of a ``bits``-wide register: one flip-flop per bit."""
        return {"ff": bits}


# ------------------------------------------------------------------------------ locations


def make_locator(graph: Graph, source: SourceFile | Locator | None = None) -> Locator:
    """Return a ``span -> "file:line:col"`` function.

    ``source`` may be the program's ``SourceFile``, a ready callback, or None: then the file at
    ``graph.source_path`` is read when it exists, and otherwise locations are ``file@byte``.
    """
    if callable(source) and not isinstance(source, SourceFile):
        return source
    src = read_source(graph.source_path) if source is None else source
    if isinstance(src, SourceFile):
        return src.location
    path = graph.source_path or "<graph>"
    return lambda span: f"{path}@{span.start}"


def locate(graph: Graph, nid: bytes, locator: Locator) -> str:
    """Return the source location of a node, or "" when it has no span."""
    span = graph.spans.get(nid)
    return locator(span) if span is not None else ""


# ------------------------------------------------------------------------------ analysis


@dataclass(frozen=True)
class PathOp:
    """One op on the critical path."""

    node: bytes
    op: str
    width: int
    stage: int
    start_ns: float
    delay_ns: float
    source: str


@dataclass(frozen=True)
class Timing:
    """Per-stage chained delays, the critical path and the estimated Fmax."""

    stage_delays: tuple[float, ...]
    critical_path: tuple[PathOp, ...]
    overhead_ns: float
    #: The register-to-register delay of the valid/ready logic (``kera.hls.sta.handshake_ns``;
    #: 0: not modelled), which every register's clock enable waits for.
    handshake_ns: float = 0.0

    @property
    def max_stage_delay(self) -> float:
        """The slowest stage's chained combinational delay in ns."""
        return max(self.stage_delays, default=0.0)

    @property
    def handshake_limits(self) -> bool:
        """Whether the handshake logic, not a stage, sets the Fmax."""
        return self.handshake_ns > self.max_stage_delay + self.overhead_ns

    @property
    def fmax_mhz(self) -> float:
        """``1000 / (max stage delay + register overhead)``, or the handshake's period where
        that is longer."""
        period = max(self.max_stage_delay + self.overhead_ns, self.handshake_ns)
        return 1000.0 / max(period, EPS_NS)


def analyse(schedule: Schedule, costs: CostModel, locator: Locator) -> Timing:
    """Return the timing summary of a schedule: the bit-level timing of ``kera.hls.sta``
    (``costs`` with the DSP budget the schedule was made with)."""
    from kera.hls.sta import analyse_bits

    bits = analyse_bits(schedule, costs)
    graph = schedule.graph
    path = []
    if bits.handshake_ns > max(bits.stage_delays, default=0.0) + costs.overhead_ns:
        path.append(PathOp(b"", "handshake", 1, schedule.latency - 1, 0.0,
                           bits.handshake_ns - costs.overhead_ns, ""))
        return Timing(bits.stage_delays, tuple(path), costs.overhead_ns, bits.handshake_ns)
    for arc in bits.path:
        node = graph.nodes[arc.nid]
        if (is_wiring(graph, node) and not arc.what) or arc.delay_ns <= EPS_NS:
            continue
        path.append(PathOp(arc.nid, arc.what or node.op, display_width(graph, node),
                           schedule.stage[arc.nid], arc.start_ns, arc.delay_ns,
                           locate(graph, arc.nid, locator)))
    return Timing(bits.stage_delays, tuple(path), costs.overhead_ns, bits.handshake_ns)


__all__ = [
    "AREA_KEYS",
    "DERIVED_OPS",
    "MUL_OPS",
    "SUBTRACTING",
    "EPS_NS",
    "WIRING_OPS",
    "CostModel",
    "DelayAreaModel",
    "PathOp",
    "SimpleModel",
    "Timing",
    "analyse",
    "csd_digits",
    "display_width",
    "is_wiring",
    "locate",
    "make_locator",
    "model_query",
]
