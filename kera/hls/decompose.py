"""Timing-driven decomposition: split the ops that cannot fit the clock period before scheduling.

The scheduler puts whole nodes in stages, so one op slower than the usable period (a 64-bit
adder on an iCE40 at 55 MHz, a multiply by a wide constant, an S-box lookup) refuses the clock.
``decompose_for_timing(graph, costs, usable_ns)`` is a graph-to-graph pass, run after
``kera.hls.lower`` and before ``kera.hls.schedule``, that rewrites exactly the ops the cost
model says are too slow (``CostModel.delay`` above ``usable_ns``) into registry ops the
scheduler can put in successive stages:

* **carry chains** (``add``, ``sub``, ``neg``, ``lt``/``le``/``gt``/``ge``) become segments of
  ``k`` bits whose carry (borrow) is an ordinary one-bit value: segment ``j`` adds
  ``{a_j, 1} + {b_j, c_j}`` (subtracts ``{a_j, 0} - {b_j, c_j}``) on ``k + 2`` bits, so the
  carry in rides on the low bit and the carry out is the top bit. A comparison is the borrow of
  the same chain (a signed one corrects it with both sign bits), so ``a >= b`` and ``a - b``
  share one chain; so does a subtraction of their low bits (``kera.opt.narrow``'s arm of
  ``if x >= k { x - k }``), which is the chain's low bits (``borrow_pairs``). Operand bits
  known to be zero on top (``kera.opt.knownbits``) are not segmented: the result's top bits
  are the carry, or copies of the borrow. An addition is first
  cut where its known bits prove that no carry crosses (SWAR field sums): independent adders.
* **sums too narrow for a carry chain** (``gate_sum_width``: yosys's ``Y_WIDTH`` at most
  ``CostModel.ripple_sum_bits``, 4 on ECP5) become full-adder gates at any clock, as
  yosys's generic techmap makes them: the bit network then merges a divider's narrow rows
  with the selects after them, as abc does (edge_semantics on ECP5 at 25 MHz: 36.2 MHz
  estimated, 41.2 placed, 3 seeds, where the rows as fitted atoms said 30.3).
* **multiplies by a constant** become shift-and-add sums narrowed to the demanded bits
  (``kera.opt.demanded``): terms below the lowest demanded bit ``L`` are dropped when their
  known bits prove that they cannot carry into bit ``L`` (the sum of their largest values stays
  below ``2**L``); otherwise the canonical signed digits (``csd_digits``) over bits ``0..H``.
  Where it takes fewer adder bits, the product is built by the adders ``mul_plan`` finds
  (factors ``2**k +- 1`` and steps of one: u32 ``x / 10``'s multiply-high by ``0x66666667``
  in 5 adders, not 15); an unsigned ``widening_mul`` by a constant is the ``mul`` of its
  operands zero-extended to the product's width.
  Multiplies by a constant that the DSP budget leaves to LUTs (``CostModel.lut_multipliers``)
  are rewritten the same way (a variable one stays a ``mul``, which ``kera.rtl`` emits as
  shift-and-add), so the RTL holds exactly the multiplies the estimate puts on DSPs.
* **variable multiplies wider than the pipelined DSP** (ECP5's MULT18X18D, 18-bit operands;
  results of 17 to 64 bits) become the products of the operands' 16-bit pieces that reach
  below the result's top (3 for 32 bits, 10 for 64) and their sums (``_split_mul``), each
  product one DSP that ``kera.hls.schedule.pipeline_dsps`` puts on its own registers. A
  variable multiply over the DSP budget is split the same way on any family where the budget
  has DSPs left: they take the widest pieces, LUTs the rest.
* **lookups in an array** (``array_index`` of an ``array`` of constants, or of any array value
  but a `mem`'s state, whose one read port ``kera.hls.memory`` maps) become a mux tree: the low
  index bits pick within groups of ``2**m`` elements, the high bits among the groups (the
  array is padded with its last element, which is what a clamped read returns). A read of a
  `mem` just written in the same transfer (``m[b]`` after ``m[a] = x``) is forwarded at any
  clock, ``a == b ? x : m[b]``, so the `mem` keeps one read port and can be a block RAM.

Every piece is built with ``Graph.add`` (registry ops only, bit-exact by construction; the
tests evaluate both graphs) and takes the span of the node it replaces, so a report still
points at the user's ``+``. Each new adder is checked again, so a shift-and-add sum too wide
for the period is segmented in turn. What no rewrite meets is left for the scheduler's "needs
X ns" error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property

from kera.diagnostics import Span
from kera.hls.logic_split import barrel, equality, zero_count
from kera.hls.lower import adder
from kera.hls.muxpair import LEVEL_OPS, SLICE_MUX_FAMILIES
from kera.hls.timing import EPS_NS, MUL_OPS, CostModel
from kera.ir.graph import Graph, Node, const, param
from kera.ir.types import BOOL, ArrayType, IntType, Type, sint, uint
from kera.opt.demanded import demanded
from kera.opt.knownbits import KnownBits

#: Ops built as mux or reduction trees when too slow (``kera.hls.logic_split``).
LOGIC_OPS = frozenset({"shl", "shr", "rotl", "rotr", "clz", "ctz", "min", "max", "eq", "ne"})
#: Ops this pass may rewrite.
DECOMPOSED_OPS: frozenset[str] = frozenset(
    {"add", "sub", "neg", "lt", "le", "gt", "ge", "mul", "widening_mul", "array_index",
     "popcount"}) | LOGIC_OPS


def decompose_for_timing(graph: Graph, costs: CostModel, usable_ns: float) -> Graph:
    """Return ``graph`` with the ops slower than ``usable_ns`` split into schedulable pieces.

    ``costs`` is the scheduler's cost model (the same DSP budget); ``usable_ns`` the period
    left after the margin and the register overhead. A graph with nothing to split is returned
    as it is (the same object).
    """
    return decompose_keeping(graph, costs, usable_ns, frozenset())[0]


def decompose_keeping(graph: Graph, costs: CostModel, usable_ns: float, keep: frozenset[bytes],
                      flags: Mapping[bytes, frozenset[int]] | None = None
                      ) -> tuple[Graph, frozenset[bytes], dict[bytes, tuple[bytes, int]]]:
    """``decompose_for_timing`` leaving the nodes ``keep`` whole (lookups that become ROM
    reads, ``kera.hls.rom``); returns the graph, those nodes' ids in it and its count sums
    whose top bit may be an ``and`` (sum id -> (the ``popcount``'s id in
    ``graph``, the level)). ``flags``: per ``popcount`` id of ``graph``, the levels of its
    adder tree to build in that form (``_Splitter._count_tree``)."""
    demand: dict[bytes, int] = {}
    if any(n.op == "mul" for n in graph.nodes.values()):
        demand = demanded(graph)
    known = KnownBits(graph)
    slow = [nid for nid in graph.canonical_order() if nid not in keep
            and _wants(graph, graph.nodes[nid], costs, usable_ns, demand, known)]
    if not slow:
        return graph, keep, {}
    todo = set(slow)
    limit = costs.ripple_sum_bits
    narrow = {n for n in todo if limit and gate_sum_width(graph, graph.nodes[n], known) <= limit}
    pairs = borrow_pairs(graph)
    for members in pairs.values():
        if not todo & members:
            continue
        if todo & members <= narrow and any(
                gate_sum_width(graph, graph.nodes[m], known) > limit for m in members):
            todo -= members  # a narrow difference beside a wide comparison: one chain
        else:
            todo |= members  # one chain for all of them, or yosys builds two
    out = Graph(graph.source_path)
    out.directives = {k: dict(v) for k, v in graph.directives.items()}
    new_id: dict[bytes, bytes] = {}
    split = _Splitter(out, costs, usable_ns, graph, pairs, new_id, flags)
    for nid in graph.canonical_order():
        node = graph.nodes[nid]
        span = graph.spans.get(nid)
        inputs = tuple(new_id[i] for i in node.inputs)
        got = split.rewrite(nid, node, inputs, span) if nid in todo else None
        new_id[nid] = got if got is not None else out.add(node.op, node.type, inputs,
                                                          node.attr_dict or None, span)
    for name in sorted(graph.regions):
        out.add_region(graph.regions[name].remap(new_id))
    out.state_names = {new_id[k]: v for k, v in graph.state_names.items() if k in new_id}
    return out.subgraph(), frozenset(new_id[k] for k in keep), split.count_sums


def _operands(node: Node) -> tuple[bytes, bytes] | None:
    """``(a, b)`` of a comparison that is the borrow of ``a - b`` (None for other ops)."""
    if node.op not in ("lt", "le", "gt", "ge"):
        return None
    a, b = node.inputs
    return (b, a) if node.op in ("gt", "le") else (a, b)


def _low_of(graph: Graph, y: bytes, x: bytes) -> bool:
    """Whether ``y``'s bits are the low bits of ``x``: ``y`` is ``x``, a cast of ``x``, a
    cast of what ``x`` casts, or a slice of ``x`` from bit 0 (what ``kera.opt.narrow``
    writes for the narrowed arm of ``if x >= k { x - k }``)."""
    if y == x:
        return True
    node, src = graph.nodes[y], graph.nodes[x]
    if node.type.flat_width > src.type.flat_width or not node.inputs:
        return False
    if node.op == "slice":
        return node.inputs[0] == x and node.attr("lo") == 0
    return node.op == "cast" and (node.inputs[0] == x or (
        src.op == "cast" and node.inputs[0] == src.inputs[0]))


def borrow_pairs(graph: Graph) -> dict[tuple[bytes, bytes], frozenset[bytes]]:
    """Return, by operands ``(a, b)``, the comparisons that are the borrow of ``a - b`` and the
    subtractions of ``a``'s and ``b``'s low bits (integer operands), where there are both.

    yosys's ``alumacc`` builds such a comparison and subtraction as one ALU; the segments of
    ``_Splitter`` must do the same, or a narrowed difference beside a segmented compare is a
    second carry chain on the same bits (isqrt32's rows at 55 MHz)."""
    nodes = graph.nodes
    compares: dict[tuple[bytes, bytes], set[bytes]] = {}
    by_low: dict[bytes, set[tuple[bytes, bytes]]] = {}  # a, or what a casts -> operands
    for nid, node in nodes.items():
        ab = _operands(node)
        if ab is None or not isinstance(nodes[ab[0]].type, IntType):
            continue
        compares.setdefault(ab, set()).add(nid)
        a = nodes[ab[0]]
        for key in (ab[0], *(a.inputs if a.op == "cast" else ())):
            by_low.setdefault(key, set()).add(ab)
    out: dict[tuple[bytes, bytes], frozenset[bytes]] = {}
    for nid, node in nodes.items():
        if node.op != "sub" or not isinstance(node.type, IntType):
            continue
        y, z = node.inputs
        cands = set(by_low.get(y, ()))
        for i in nodes[y].inputs if nodes[y].op in ("cast", "slice") else ():
            cands |= by_low.get(i, set())
        for ab in sorted(cands):
            if _low_of(graph, y, ab[0]) and _low_of(graph, z, ab[1]):
                out[ab] = out.get(ab, frozenset(compares[ab])) | {nid}
    return out


def _wants(graph: Graph, node: Node, costs: CostModel, usable_ns: float,
           demand: dict[bytes, int], known: KnownBits) -> bool:
    """Whether ``node`` is an op this pass rewrites and the cost model says it must be."""
    if node.op not in DECOMPOSED_OPS:
        return False
    if node.op in MUL_OPS and node.id in costs.lut_multipliers(graph):
        return True  # over the DSP budget: a constant one becomes shift-and-add here
    if node.op == "mul" and _shifts_are_smaller(graph, node, costs, demand.get(node.id, 0)):
        return True
    if node.op == "popcount":
        return True  # at any clock: the nibbles' adder tree is smaller and faster
    if node.op == "mul" and isinstance(node.type, IntType) and 32 < node.type.width <= 64 \
            and costs.dsp_pipeline is not None and not any(
                graph.nodes[i].op == "const" for i in node.inputs):
        return True  # at any clock: DSP-sized partial products (``_Splitter._split_mul``);
        # u64 ``a * b`` on ECP5 at 25 MHz: 230 LUT4 sites, 62.0 MHz placed, where yosys's
        # own mapping of the 64-bit multiply took 608 and 59.6 MHz (10 MULT18X18D each)
    if node.op in ("clz", "ctz"):
        return True  # at any clock: the flag-and-count tree is smaller and faster (clz64 on
        # iCE40: 93 LUT, 59.9 MHz placed, where yosys's own took 107 LUT, 17.5 MHz)
    if node.op in LEVEL_OPS and getattr(costs.model, "family", "") in SLICE_MUX_FAMILIES \
            and graph.nodes[node.inputs[1]].op != "const":
        return True  # at any clock: barrel levels, two to a slice's 4:1 multiplexers
        # (``kera.hls.muxpair``; sra64 at ECP5 150 MHz: 412 LUT4 sites, 195 MHz placed,
        # where yosys's own shifter took 821, 180.5 MHz)

    if node.op == "array_index" and _reads_a_word_just_written(graph, node):
        return True  # at any clock: the `mem` keeps one read port (a block RAM), not a mux
    if node.op == "array_index" and _slice_mux_tree(graph, node, costs):
        return True  # at any clock: a tree of selects, two levels to a slice's 4:1
        # multiplexers (``kera.hls.muxpair``)
    limit = costs.ripple_sum_bits
    if limit and gate_sum_width(graph, node, known) <= limit:
        return True  # at any clock: gates, as yosys builds it (``_Splitter._ripple``)
    return costs.delay(graph, node) > usable_ns + EPS_NS


def _slice_mux_tree(graph: Graph, node: Node, costs: CostModel) -> bool:
    """Whether a read of an array value (not a `mem`, not a table of constants, not the word
    just written) by a variable index becomes a tree of selects by the index bits: on ECP5,
    where two levels of it are one slice a bit (``kera.hls.muxpair``)."""
    return _select_tree_read(graph, node.inputs[0], node.inputs[1], costs)


def _select_tree_read(graph: Graph, array: bytes, index: bytes, costs: CostModel) -> bool:
    """``_slice_mux_tree`` of a read of ``array`` by ``index`` (ids of ``graph``)."""
    if getattr(costs.model, "family", "") not in SLICE_MUX_FAMILIES:
        return False
    arr, idx = graph.nodes[array], graph.nodes[index]
    if idx.op == "const" or arr.op == "array_update" or not isinstance(arr.type, ArrayType):
        return False
    if arr.op == "state" and arr.attr("kind") == "mem":
        return False
    return not (arr.op == "array" and all(graph.nodes[e].op == "const" for e in arr.inputs))


def gate_sum_width(graph: Graph, node: Node, known: KnownBits) -> int:
    """Return the ``Y_WIDTH`` yosys gives the ``$alu`` of an integer ``add``/``sub``/``neg``
    (the operands' significant width plus one, at most the result's) or ordering (the
    operands' significant width), or a large number for any other node.

    yosys's ``$alu`` techmap declines a result of ``CostModel.gate_sum_bits`` or fewer bits
    (``_80_ecp5_alu``: ``Y_WIDTH <= 4``) and makes it gates that abc maps with the logic
    around them (yosys 0.70 ``synth_ecp5``: registered ``a < b`` of 4-bit ``a``, ``b`` is 9
    LUT4 and no CCU2C, of 5 bits 2 CCU2C). The decomposition writes those sums as gates
    (``_Splitter._ripple``), so that the estimate's bit network sees them as abc does:
    a divider's narrow rows merge with the selects after them.

    A constant operand leaves the node as it is, and so does a one-bit result: yosys folds
    such an ``$alu`` further (``0 - (c & 1)`` is wires: ``kera.hls.lutmap.neg_wiring``; an
    ordering against a constant is one function of the other operand's bits, which the bit
    network already has), and ripple gates there placed worse (crc32_stream on ECP5: 145 LUT4
    where the ``$alu`` took 117)."""
    ops = node.inputs if node.op != "neg" else node.inputs[:1]
    none = 1 << 30
    if node.op not in ("add", "sub", "neg", "lt", "le", "gt", "ge") or not ops or any(
            graph.nodes[x].op == "const" for x in node.inputs):
        return none
    t = graph.nodes[ops[0]].type
    if not isinstance(t, IntType):
        return none
    eff = _significant(t, known, ops)
    y = eff if node.op in ("lt", "le", "gt", "ge") else eff + 1 if eff < t.width else t.width
    return y if y >= 2 else none


def _significant(t: IntType, known: KnownBits, xs: tuple[bytes, ...]) -> int:
    """The significant width of unsigned operands ``xs`` (the width itself for signed ones)."""
    if t.signed:
        return t.width
    eff = 1
    for x in xs:
        k = known(x)
        eff = max(eff, k.maybe.bit_length() if k is not None else t.width)
    return min(eff, t.width)


def _in_range(t: object, length: int) -> bool:
    """Whether every value of the index type ``t`` is an index of an array of ``length``."""
    return isinstance(t, IntType) and not t.signed and 1 << t.width <= length


def _reads_a_word_just_written(graph: Graph, node: Node) -> bool:
    """Whether ``node`` reads a `mem` after a write in the same transfer (``m[b]`` after
    ``m[a] = x``, the indices in range by their types), which ``_Splitter._lookup`` forwards:
    delay_line's 64 x i16 buffer was flip-flops for it (2,344 LUTs at 12 MHz)."""
    arr, idx = (graph.nodes[i] for i in node.inputs)
    at, it = arr.type, idx.type
    if arr.op != "array_update" or not isinstance(at, ArrayType) or not _in_range(
            it, at.length):
        return False
    root = arr
    while root.op == "array_update":
        if not _in_range(graph.nodes[root.inputs[1]].type, at.length):
            return False
        root = graph.nodes[root.inputs[0]]
    return root.op == "state" and root.attr("kind") == "mem"


def _shifts_are_smaller(graph: Graph, node: Node, costs: CostModel, demand: int) -> bool:
    """Whether a multiply by a constant takes no more LUTs as shift-and-add over the bits its
    users demand than on DSPs (whose partial products wider than one DSP are summed in LUTs):
    then the DSPs buy nothing. popcount64's ``x * 0x0101..01 >> 56`` is seven 8-bit adders,
    where a 64-bit product takes 10 MULT18X18D and ~900 LUT4 sites on ECP5."""
    t = node.type
    if not isinstance(t, IntType):
        return False
    nodes = graph.nodes
    consts = [int(nodes[i].attr("value")) % (1 << t.width) for i in node.inputs
              if nodes[i].op == "const"]
    demand &= (1 << t.width) - 1
    if not consts or not demand:
        return bool(consts)
    c = consts[0]
    hi, lo = demand.bit_length(), (demand & -demand).bit_length() - 1
    terms = min(bin(c & ((1 << hi) - 1)).count("1"), sum(map(len, _csd(c, hi))))
    adds = costs._sites(dict(costs._query_area(("add", max(1, hi - lo), None))))
    on_dsp = costs._sites(dict(costs.area(graph, node)))
    return max(0, terms - 1) * adds["lut"] <= on_dsp["lut"]


class _Splitter:
    """Builds the pieces in the output graph, checking each new adder against the period."""

    def __init__(self, g: Graph, costs: CostModel, usable_ns: float, src: Graph,
                 pairs: dict[tuple[bytes, bytes], frozenset[bytes]] | None = None,
                 new_id: dict[bytes, bytes] | None = None,
                 flags: Mapping[bytes, frozenset[int]] | None = None) -> None:
        self.g = g
        self.costs = costs
        self.usable = usable_ns
        self.known = KnownBits(g)
        self.src = src
        self.new_id = new_id if new_id is not None else {}
        #: a source subtraction of low bits -> the operands of its comparison
        self._low_sub = {m: ab for ab, members in (pairs or {}).items() for m in members
                         if src.nodes[m].op == "sub"}
        self._demand: dict[bytes, int] | None = None
        self._widest: dict[str, int] = {}
        self._flags = flags or {}
        #: the count sums whose top bit can be an ``and`` (``_count_tree``): the id of the
        #: node that makes the top bit (the sum, or that ``and``) -> (the source
        #: ``popcount``, the level)
        self.count_sums: dict[bytes, tuple[bytes, int]] = {}

    # --- entry -------------------------------------------------------------------------------

    def rewrite(self, nid: bytes, node: Node, ins: tuple[bytes, ...], span: Span | None
                ) -> bytes | None:
        """Return the id of the replacement of ``node`` (inputs ``ins``), or None to copy it."""
        t = node.type
        op = node.op
        if op == "array_index":
            return self._lookup(node, ins, span)
        if op in ("mul", "widening_mul"):
            got = self._const_mul(nid, node, ins, span)
            if got is None and op == "mul":
                got = self._split_mul(nid, node, ins, span)
            if got is None and self._lut_product(node):
                got = self._and_mul(nid, node, ins, span)
            return got
        if op == "popcount" and isinstance(t, IntType):
            return self._count_tree(nid, ins[0], t, span)
        if op in LOGIC_OPS:
            return self._logic(op, t, ins, span)
        if nid in self._low_sub:
            return self._low_difference(nid, node, span)
        if op == "sub" and isinstance(t, IntType):
            pairs = self._pair_counts(t, ins, span)
            if pairs is not None:
                return pairs
        if op in ("add", "sub") and isinstance(t, IntType):
            return self.arith(op, ins[0], ins[1], span, force=True)
        if op == "neg" and isinstance(t, IntType):
            return self.arith("sub", const(self.g, t, 0, span), ins[0], span, force=True)
        if op in ("lt", "le", "gt", "ge"):
            a, b = (ins[1], ins[0]) if op in ("gt", "le") else ins
            if not isinstance(self.g.nodes[a].type, IntType):
                return None
            borrow = self.less(a, b, span)
            if borrow is None:
                return None
            add = adder(self.g, span)
            zero = const(self.g, uint(1), 0, span)
            return add("ne" if op in ("lt", "gt") else "eq", BOOL, borrow, zero)
        return None

    # --- mux and reduction trees (``kera.hls.logic_split``) ---------------------------------

    def _logic(self, op: str, t: Type, ins: tuple[bytes, ...], span: Span | None
               ) -> bytes | None:
        """Return a variable shift or rotate, a zero count, an equality or a ``min``/``max``
        as levels the scheduler may register between; None where there is none."""
        g = self.g
        add = adder(g, span)

        def konst(ct: IntType, value: int) -> bytes:
            return const(g, ct, value, span)

        a = g.nodes[ins[0]].type
        if not isinstance(a, IntType):
            return None
        if op in ("clz", "ctz"):
            radix = 4 if getattr(self.costs.model, "family", "") in SLICE_MUX_FAMILIES else 2
            return zero_count(add, konst, op, a, ins[0], radix)
        if op in ("eq", "ne"):
            return equality(add, konst, op, ins[0], ins[1], a.width)
        if op in ("min", "max"):
            borrow = self.less(ins[0], ins[1], span)
            if borrow is None:
                return None
            first = add("ne", BOOL, borrow, konst(uint(1), 0))  # a < b
            lo, hi = (ins[0], ins[1]) if op == "min" else (ins[1], ins[0])
            return add("select", t, first, lo, hi)
        amount = g.nodes[ins[1]].type
        assert isinstance(amount, IntType)
        return barrel(add, konst, op, a, ins[0], ins[1], amount)

    # --- bit counts --------------------------------------------------------------------------

    def _count_tree(self, nid: bytes, x: bytes, t: IntType, span: Span | None) -> bytes:
        """Return ``popcount(x)`` as the counts of its nibbles (each count bit one LUT4 of the
        nibble's bits) summed by a balanced tree of adders, each as narrow as its count.

        Two counts of at most ``2**k`` each, ``k + 1`` bits wide, sum to at most ``2**(k + 1)``:
        the top bit of their sum is set exactly when both are ``2**k``, that is
        ``a[k] & b[k]``, and the bits below are the ``k + 1``-bit sum (it wraps to 0 then).
        Where the family's carry out leaves its chain through a cell of its own
        (``CostModel.carry_out_ns``: iCE40's pass-through, whose flip-flop nextpnr does not
        pack with it), such a sum is a ``count_sums`` entry, and at the levels ``flags``
        names for this ``popcount`` (``nid``) it is built that way: one LUT more, and a
        flip-flop that holds it sits in the LUT's cell (``kera.hls.synth``'s
        ``_registered_count_sums`` names the levels a schedule registers; popcount64 on
        iCE40 at 55 MHz: 58.6 -> 76.0 MHz placed for 5 LUTs, docs/models.md)."""
        add = adder(self.g, span)
        bits = [add("slice", uint(1), x, attrs={"lo": i}) for i in range(t.width)]
        counts = [(_nibble_count(add, bits[i:i + 4]), min(4, t.width - i))
                  for i in range(0, t.width, 4)]
        flags = self._flags.get(nid, frozenset())
        level = 0
        while len(counts) > 1:
            paired = []
            for (a, ma), (b, mb) in zip(counts[::2], counts[1::2], strict=False):
                w = uint((ma + mb).bit_length())
                k = ma.bit_length() - 1
                power = ma == mb == 1 << k and self.costs.carry_out_ns(w.width) > 0
                if power and level in flags:
                    top = add("and", uint(1), add("slice", uint(1), a, attrs={"lo": k}),
                              add("slice", uint(1), b, attrs={"lo": k}))
                    total = add("concat", w, top, self.arith("add", a, b, span))
                else:
                    top = total = self.arith("add", add("cast", w, a), add("cast", w, b), span)
                if power:
                    self.count_sums[top] = (nid, level)
                paired.append((total, ma + mb))
            counts = paired + counts[len(paired) * 2:]
            level += 1
        return add("cast", t, counts[0][0])

    # --- carry chains ------------------------------------------------------------------------

    def _max_width(self, op: str) -> int:
        """The widest ``op`` adder that fits the usable period (0: none); a segment's carry
        out leaves its chain through a net (``CostModel.carry_out``)."""
        if op not in self._widest:
            best = 0
            for w in range(1, 65):
                if self.costs.op_delay((op, w, None)) + self.costs.carry_out_ns(w) > \
                        self.usable + EPS_NS:
                    break
                best = w
            self._widest[op] = best
        return self._widest[op]

    def _eff(self, t: IntType, *xs: bytes) -> int:
        """The significant width of unsigned operands (the width itself for signed ones)."""
        return _significant(t, self.known, xs)

    def _gates(self, y_width: int) -> bool:
        """Whether yosys builds an ``$alu`` of ``y_width`` result bits as gates
        (``gate_sum_width``)."""
        return y_width <= self.costs.ripple_sum_bits

    def arith(self, op: str, a: bytes, b: bytes, span: Span | None, force: bool = False
              ) -> bytes:
        """Return ``a op b`` (``add``/``sub``, same type), segmented when one adder is too slow.

        ``force``: the cost model already said the whole op is too slow (an original node).
        """
        g = self.g
        add = adder(g, span)
        t = g.nodes[a].type
        assert isinstance(t, IntType)
        eff = self._eff(t, a, b)
        need = eff + (1 if op == "add" and eff < t.width else 0)
        w = max(1, need)
        out = self.costs.carry_out_ns(w) if eff < t.width and not t.signed else 0.0
        gates = self._gates(eff + 1 if eff < t.width else t.width)
        if not (force or gates) and \
                self.costs.op_delay((op, w, None)) + out <= self.usable + EPS_NS:
            return add(op, t, a, b)
        if op == "add":
            pieces = self._carry_free(t, a, b, eff)
            if len(pieces) > 2:
                parts = [self._piece(a, b, lo, hi, span)
                         for lo, hi in zip(pieces, pieces[1:], strict=False)]
                whole = parts[0]
                for lo, part in zip(pieces[1:], parts[1:], strict=False):
                    whole = add("concat", uint(lo + g.nodes[part].type.flat_width), part, whole)
                return add("cast", t, whole)
        chain = self._ripple(op, a, b, eff, span) if gates else self._chain(op, a, b, eff, span)
        if chain is None:
            return add(op, t, a, b)
        low, carry = chain
        if eff == t.width:
            return low if t == g.nodes[low].type else add("cast", t, low)
        if op == "add":
            top = add("concat", uint(eff + 1), carry, low)  # zero-extended by the cast
        else:  # the bits above are copies of the borrow
            fill = add("cast", uint(t.width - eff), add("cast", sint(1), carry))
            top = add("concat", uint(t.width), fill, low)
        return add("cast", t, top)

    def _piece(self, a: bytes, b: bytes, lo: int, hi: int, span: Span | None) -> bytes:
        """Bits ``lo..hi`` of ``a + b`` where no carry enters or leaves them."""
        add = adder(self.g, span)
        xa = add("slice", uint(hi - lo), a, attrs={"lo": lo})
        xb = add("slice", uint(hi - lo), b, attrs={"lo": lo})
        ka, kb = self.known(xa), self.known(xb)
        if ka is not None and kb is not None and not ka.maybe | kb.maybe:
            return const(self.g, uint(hi - lo), 0, span)  # known zeros: nothing to add
        return self.arith("add", xa, xb, span)

    def _carry_free(self, t: IntType, a: bytes, b: bytes, eff: int) -> list[int]:
        """Return the bit positions ``0 = p0 < p1 < ... = W`` of ``a + b`` that no carry
        crosses: the largest values the known bits allow below ``p`` add up to less than
        ``2**p`` (``W``: the width, or one bit above the significant width when unsigned)."""
        top = t.width if t.signed else min(t.width, eff + 1)
        ka, kb = self.known(a), self.known(b)
        if ka is None or kb is None:
            return [0, top]
        cuts = [0]
        for p in range(1, top):
            low = (1 << p) - 1
            if (ka.maybe & low) + (kb.maybe & low) < 1 << p:
                cuts.append(p)
        return [*cuts, top]

    def _pair_counts(self, t: IntType, ins: tuple[bytes, ...], span: Span | None
                     ) -> bytes | None:
        """Return ``x - ((x >> 1) & m)`` as ``(x & m) + ((x >> 1) & m)`` for an unsigned ``x``
        and ``m = 0b..0101`` (``m`` and ``m << 1`` disjoint, together every bit), since ``x``
        is ``(x & m) + 2 ((x >> 1) & m)``: a SWAR popcount's first step, whose borrow chain
        runs the whole width, as a sum whose 2-bit fields never carry (cut into independent
        adders by ``arith``). None for any other subtraction."""
        g = self.g
        x, b = ins
        masked = g.nodes[b]
        if t.signed or masked.op != "and":
            return None
        ones = t.mask
        for s, m in (masked.inputs, masked.inputs[::-1]):
            shift, k = g.nodes[s], self.known(m)
            if shift.op != "shr" or shift.inputs[0] != x or k is None or not k.is_const():
                continue
            amount = self.known(shift.inputs[1])
            mask = k.one & ones
            if amount is None or not amount.is_const() or amount.one != 1:
                continue
            if mask & (mask << 1) & ones == 0 and (mask | (mask << 1)) & ones == ones:
                low = adder(g, span)("and", t, x, m)
                return self.arith("add", low, b, span, force=True)
        return None

    def less(self, a: bytes, b: bytes, span: Span | None) -> bytes | None:
        """Return the one-bit ``a < b`` (the borrow of ``a - b``; signed for signed operands)."""
        g = self.g
        add = adder(g, span)
        t = g.nodes[a].type
        assert isinstance(t, IntType)
        eff = self._eff(t, a, b)
        chain = (self._ripple if self._gates(eff) else self._chain)("sub", a, b, eff, span)
        if chain is None:
            return None
        borrow = chain[1]
        if t.signed:
            msb = {"lo": t.width - 1}
            sa = add("slice", uint(1), a, attrs=msb)
            sb = add("slice", uint(1), b, attrs=msb)
            borrow = add("xor", uint(1), borrow, add("xor", uint(1), sa, sb))
        return borrow

    def _low_difference(self, nid: bytes, node: Node, span: Span | None) -> bytes:
        """Return a subtraction of ``a``'s and ``b``'s low bits as the low bits of the chain
        whose borrow is ``a < b`` (``borrow_pairs``): the graph interns the segments that
        ``less`` builds, so both are one chain. The chain is as wide as the comparison's
        operands are significant; a difference wider than that is left to ``arith``."""
        a, b = (self.new_id[x] for x in self._low_sub[nid])
        y, z = (self.new_id[i] for i in node.inputs)
        t = self.g.nodes[a].type
        assert isinstance(t, IntType)
        width, n = self._eff(t, a, b), node.type.flat_width
        build = self._ripple if self._gates(width) else self._chain
        chain = build("sub", a, b, width, span) if n <= width else None
        if chain is None:
            return self.arith("sub", y, z, span)
        add = adder(self.g, span)
        low = add("slice", uint(n), chain[0], attrs={"lo": 0}) if n < width else chain[0]
        return low if self.g.nodes[low].type == node.type else add("cast", node.type, low)

    def _chain(self, op: str, a: bytes, b: bytes, width: int, span: Span | None
               ) -> tuple[bytes, bytes] | None:
        """Return ``(low, carry)``: the low ``width`` bits of ``a op b`` (uint) and the carry
        (``add``) or borrow (``sub``) out of them (uint(1)), in segments that fit the period.
        None when not even a 3-bit segment fits."""
        g = self.g
        add = adder(g, span)
        top = self._max_width(op) - 2  # bits per segment: a k-bit segment is a (k + 2)-bit op
        if top < 1:
            return None
        count = -(-width // top)
        size = -(-width // count)
        parts: list[bytes] = []
        carry: bytes | None = None
        lo = 0
        while lo < width:
            k = min(size, width - lo)
            xa = add("slice", uint(k), a, attrs={"lo": lo})
            xb = add("slice", uint(k), b, attrs={"lo": lo})
            if carry is None:  # the first segment has no carry in
                s = add(op, uint(k + 1), add("cast", uint(k + 1), xa), add("cast", uint(k + 1), xb))
                parts.append(add("slice", uint(k), s, attrs={"lo": 0}))
                carry = add("slice", uint(1), s, attrs={"lo": k})
            else:
                low_a = const(g, uint(1), 1 if op == "add" else 0, span)
                wa = add("cast", uint(k + 2), add("concat", uint(k + 1), xa, low_a))
                wb = add("cast", uint(k + 2), add("concat", uint(k + 1), xb, carry))
                s = add(op, uint(k + 2), wa, wb)
                parts.append(add("slice", uint(k), s, attrs={"lo": 1}))
                carry = add("slice", uint(1), s, attrs={"lo": k + 1})
            lo += k
        low = parts[0]
        done = g.nodes[low].type.flat_width
        for p in parts[1:]:
            done += g.nodes[p].type.flat_width
            low = add("concat", uint(done), p, low)
        assert carry is not None
        return low, carry

    def _ripple(self, op: str, a: bytes, b: bytes, width: int, span: Span | None
                ) -> tuple[bytes, bytes]:
        """Return ``_chain``'s ``(low, carry)`` as gates: a ripple of full adders (``a - b``
        is ``a + ~b + 1``), which yosys's generic techmap also makes of an ``$alu`` too
        narrow for the family's carry cells (``gate_sum_width``) and abc maps with the logic
        around it."""
        add = adder(self.g, span)
        one = uint(1)
        sums: list[bytes] = []
        carry: bytes | None = None
        for i in range(width):
            x = add("slice", one, a, attrs={"lo": i})
            y = add("slice", one, b, attrs={"lo": i})
            if op == "sub":
                y = add("not", one, y)
            half = add("xor", one, x, y)
            if carry is None:  # carry in 0 (add) or 1 (sub)
                s, c = (half, add("and", one, x, y)) if op == "add" else (
                    add("not", one, half), add("or", one, x, y))
            else:
                s = add("xor", one, half, carry)
                c = add("or", one, add("and", one, x, y), add("and", one, half, carry))
            sums.append(s)
            carry = c
        assert carry is not None
        low = sums[0]
        for i, s in enumerate(sums[1:], 2):
            low = add("concat", uint(i), s, low)
        return low, carry if op == "add" else add("not", one, carry)

    # --- constant multiplies -----------------------------------------------------------------

    def _demanded(self, nid: bytes) -> int:
        if self._demand is None:
            self._demand = demanded(self.src)
        return self._demand.get(nid, 0)

    def _const_mul(self, nid: bytes, node: Node, ins: tuple[bytes, ...], span: Span | None
                   ) -> bytes | None:
        """Return a shift-and-add sum for a multiply by a constant (None: no constant, or a
        signed ``widening_mul``). An unsigned ``widening_mul`` is the ``mul`` of its operands
        zero-extended to the product's width: u32 ``x / 10``'s multiply-high by
        ``0x66666667``."""
        g = self.g
        t = node.type
        assert isinstance(t, IntType)
        w = t.width
        ks = [self.known(i) for i in ins]
        which = next((j for j, k in enumerate(ks) if k is not None and k.is_const()), None)
        if which is None or (node.op == "widening_mul" and t.signed):
            return None  # a variable multiply over the budget: kera.rtl builds it from LUTs
        c = ks[which].one & ((1 << w) - 1)  # type: ignore[union-attr]
        add = adder(g, span)
        x = ins[1 - which]
        if node.op == "widening_mul":  # the operand zero-extended to the product's width
            x = add("cast", t, x)
        d = self._demanded(nid) & ((1 << w) - 1)
        if d == 0 or c == 0:
            return const(g, t, 0, span)
        hi = d.bit_length()
        lo = self._low_cut(x, c, (d & -d).bit_length() - 1, hi)
        plus = [s for s in range(hi) if c >> s & 1]
        minus: list[int] = []
        signed_digits = _csd(c, hi)
        if lo == 0 and sum(map(len, signed_digits)) < len(plus):
            plus, minus = signed_digits
        adds, recipe = mul_plan(c, hi)
        if adds * hi < (len(plus) + len(minus) - 1) * (hi - lo):
            xh = add("slice", uint(hi), x, attrs={"lo": 0})
            return add("cast", t, self._build(recipe, xh, hi, span))
        n = hi - lo
        p = self._sum([self._term(x, s, lo, hi, span) for s in plus], span)
        m = self._sum([self._term(x, s, lo, hi, span) for s in minus], span)
        zero = const(g, uint(n), 0, span)
        total = self.arith("sub", p if p is not None else zero, m, span) if m is not None else (
            p if p is not None else zero)
        if lo:
            total = add("concat", uint(hi), total, const(g, uint(lo), 0, span))
        return add("cast", t, total)

    def _build(self, recipe: tuple, x: bytes, n: int, span: Span | None) -> bytes:
        """The ``uint(n)`` product ``x * c mod 2**n`` by the adders of ``mul_plan``'s recipe
        for ``c`` (``x``: a ``uint(n)``)."""
        kind = recipe[0]
        if kind == "zero":
            return const(self.g, uint(n), 0, span)
        if kind == "x":
            return x
        if kind == "shl":  # the product of x's low n - s bits, s zeros below it
            s, add = recipe[1], adder(self.g, span)
            inner = self._build(recipe[2], add("slice", uint(n - s), x, attrs={"lo": 0}),
                                n - s, span)
            return add("concat", uint(n), inner, const(self.g, uint(s), 0, span))
        if kind == "csd":
            plus, minus = _csd(recipe[1], n)
            p = self._sum([self._term(x, s, 0, n, span) for s in plus], span)
            m = self._sum([self._term(x, s, 0, n, span) for s in minus], span)
            p = p if p is not None else const(self.g, uint(n), 0, span)
            return self.arith("sub", p, m, span) if m is not None else p
        op = "add" if recipe[-2] > 0 else "sub"
        if kind == "fact":  # t * (2**k +- 1) = (t << k) +- t
            t = self._build(recipe[3], x, n, span)
            shifted = self._term(t, recipe[1], 0, n, span)
            if shifted is None:
                shifted = const(self.g, uint(n), 0, span)
            return self.arith(op, shifted, t, span)
        return self.arith(op, self._build(recipe[2], x, n, span), x, span)  # t +- x

    def _split_mul(self, nid: bytes, node: Node, ins: tuple[bytes, ...], span: Span | None
                   ) -> bytes | None:
        """Return a variable multiply too wide for the family's pipelined DSP
        (``CostModel.dsp_pipeline``: ECP5's MULT18X18D, 18-bit operands) as DSP-sized partial
        products, for results of 17 to 64 bits: with ``a = sum a_i 2**(16 i)`` and ``b`` alike
        (16-bit pieces), the product's low ``w`` bits are the sum of ``a_i * b_j << 16 (i + j)``
        over ``16 (i + j) < w``, each product only as wide as the bits it reaches below ``w``
        (at most 32: one DSP). Each partial product is one DSP multiply the scheduler can put
        on the DSP's own registers (``kera.hls.schedule.pipeline_dsps``), and the sums
        (``_sum_shifted``) are carry chains it can segment: a u32 ``a * b`` that needed 9.5 ns
        in one piece fits 150 MHz, and a u64 one is 10 DSPs. None where the multiply is not
        such a case (one pipelined DSP takes it, it is a LUT multiplier over the DSP budget,
        or the family has no pipelined DSP).

        On any family, a variable multiply over the DSP budget is split the same way where the
        budget has DSPs left for some pieces (``CostModel.dsps_left``): the budget then takes
        the pieces whose LUT circuits would be the largest and leaves the rest to LUTs
        (``CostModel.lut_multipliers``), where the whole multiply was a LUT circuit: u64
        ``a * b`` on an UP5K (8 SB_MAC16) was 5,119 estimated LUTs, 97 % of the device."""
        t = node.type
        costs = self.costs
        if not isinstance(t, IntType) or not 16 < t.width <= 64:
            return None
        if nid in costs.lut_multipliers(self.src):
            if costs.dsps_left(self.src, nid) <= 0 or not self._pieces_fit or any(
                    self.src.nodes[i].op == "const" for i in node.inputs):
                return None
        elif costs.dsp_pipeline is None or costs.can_pipeline(self.src, node):
            return None
        g = self.g
        add = adder(g, span)
        w = t.width
        a, b = ins
        terms: list[tuple[bytes, int]] = []  # (u{w - lo} value, lo): value << lo
        for i in range(0, w, 16):
            for j in range(0, w - i, 16):
                lo = i + j
                pw = min(32, w - lo)  # the product bits below w
                ai = add("slice", uint(min(16, w - i, pw)), a, attrs={"lo": i})
                bj = add("slice", uint(min(16, w - j, pw)), b, attrs={"lo": j})
                if any(self.known(x).maybe == 0 for x in (ai, bj)):  # type: ignore[union-attr]
                    continue  # a piece known to be zero (an extended u32): no product
                p = add("mul", uint(pw), add("cast", uint(pw), ai), add("cast", uint(pw), bj))
                terms.append((p if pw == w - lo else add("cast", uint(w - lo), p), lo))
        if not terms:
            return const(g, t, 0, span)
        total = self._sum_shifted(terms, w, span)
        return total if t == uint(w) else add("cast", t, total)

    @cached_property
    def _pieces_fit(self) -> bool:
        """Whether one 16 x 16 piece on a DSP fits the period, as it is or on the DSP's own
        registers (iCE40's untimed SB_MAC16 is costed as its LUT equivalent, 32.5 ns: at 55
        MHz a multiply over the budget stays one LUT multiplier, which the timing splits)."""
        g = Graph()
        a, b = (g.add("cast", uint(32), (param(g, i, n, uint(16)),)) for i, n in enumerate("ab"))
        piece = g.nodes[g.add("mul", uint(32), (a, b))]
        if CostModel(self.costs.model).delay(g, piece) <= self.usable + EPS_NS:
            return True
        return self.costs.dsp_pipeline is not None and self.costs.pipelined_ns <= self.usable

    def _sum_shifted(self, terms: list[tuple[bytes, int]], w: int, span: Span | None
                     ) -> bytes:
        """Return the low ``w`` bits of ``sum(value << lo)`` over ``terms`` (each value
        ``u{w - lo}``) by a balanced tree of adders, each only as wide as the bits above the
        higher term's ``lo``: the bits below it are the lower term's own."""
        add = adder(self.g, span)
        by_lo: dict[int, list[bytes]] = {}
        for x, lo in terms:
            by_lo.setdefault(lo, []).append(x)
        for xs in by_lo.values():  # the terms of one weight first: each sum narrower
            while len(xs) > 1:
                xs[:] = [self.arith("add", x, y, span) for x, y in zip(xs[::2], xs[1::2],
                                                                       strict=False)
                         ] + xs[len(xs) & ~1:]
        terms = sorted(((xs[0], lo) for lo, xs in by_lo.items()), key=lambda x: x[1])
        while len(terms) > 1:
            paired = []
            for (x, lx), (y, ly) in zip(terms[::2], terms[1::2], strict=False):
                d = ly - lx  # > 0: one term per weight, in order
                high = add("slice", uint(w - ly), x, attrs={"lo": d})
                low = add("slice", uint(d), x, attrs={"lo": 0})
                paired.append((add("concat", uint(w - lx), self.arith("add", high, y, span),
                                   low), lx))
            terms = sorted(paired + terms[len(paired) * 2:], key=lambda x: x[1])
        value, lo = terms[0]
        return value if lo == 0 else add("concat", uint(w), value, const(self.g, uint(lo), 0,
                                                                          span))

    def _lut_product(self, node: Node) -> bool:
        """Whether a multiply is too slow for the period on a DSP, pipelined or not
        (``kera.hls.schedule.pipeline_dsps`` puts one that ``CostModel.can_pipeline`` on
        the DSP's own registers when those fit)."""
        costs = self.costs
        if costs.delay(self.src, node) <= self.usable + EPS_NS:
            return False
        return not (costs.can_pipeline(self.src, node) and costs.pipelined_ns <= self.usable)

    def _and_mul(self, nid: bytes, node: Node, ins: tuple[bytes, ...], span: Span | None
                 ) -> bytes:
        """Return a variable multiply that nothing else fits in the period (iCE40's SB_MAC16
        has no pipelined form the tools time) as shift-and-add in LUTs: the operands extended
        to the product's type (a ``widening_mul``'s as their signedness says), then for each
        bit ``i`` of ``b`` that may be 1 below the highest demanded bit, ``a << i`` masked by
        that bit, summed by a balanced tree of adders the scheduler can segment and pipeline.
        The product's low bits do not depend on the operands' signedness, so this is exact
        for signed types too. A ``b`` that is the sign extension of ``k`` bits is ``b[0..k-2]
        - b[k-1] * 2**(k-1)``: ``k`` terms, the last one subtracted (an i16 product formed in
        i32: 16 terms, not 32)."""
        g = self.g
        t = node.type
        assert isinstance(t, IntType)
        add = adder(g, span)
        a, b = (x if g.nodes[x].type == t else add("cast", t, x) for x in ins)
        if self._terms(a, t) < self._terms(b, t):  # the narrower picks the partial products
            a, b = b, a
        hi = (self._demanded(nid) & t.mask).bit_length()
        if hi == 0:
            return const(g, t, 0, span)
        width, signed = self._terms(b, t), self._sign_extended(b) is not None
        kb = self.known(b)
        maybe = kb.maybe if kb is not None and not signed else t.mask
        u1, n = uint(1), uint(hi)
        terms: list[bytes | None] = []
        for i in range(min(hi, width)):
            if not maybe >> i & 1:
                continue
            bit = add("slice", u1, b, attrs={"lo": i})
            mask = add("cast", uint(hi - i), add("cast", sint(1), bit))  # all ones when set
            part = add("and", uint(hi - i), add("slice", uint(hi - i), a, attrs={"lo": 0}),
                       mask)
            terms.append(part if i == 0 else add("concat", n, part, const(g, uint(i), 0, span)))
        last = terms.pop() if signed and width <= hi else None  # b[k-1]: weight -2**(k-1)
        total = self._sum(terms, span)
        if last is not None:
            total = self.arith("sub", total if total is not None else const(g, n, 0, span),
                               last, span)
        if total is None:
            return const(g, t, 0, span)
        return add("cast", t, total)

    def _sign_extended(self, x: bytes) -> int | None:
        """The width ``k`` of the signed value that ``x`` (a cast) extends, else None."""
        node = self.g.nodes[x]
        if node.op != "cast":
            return None
        src = self.g.nodes[node.inputs[0]].type
        if isinstance(src, IntType) and src.signed and src.width < node.type.flat_width:
            return src.width
        return None

    def _terms(self, x: bytes, t: IntType) -> int:
        """How many low bits of ``x`` make its partial products (the rest are 0 or copies of
        the sign): its known-bits width when unsigned, else its sign extension's."""
        k = self._sign_extended(x)
        if k is not None:
            return k
        if t.signed:
            return t.width
        known = self.known(x)
        return known.maybe.bit_length() if known is not None else t.width

    def _low_cut(self, x: bytes, c: int, lo: int, hi: int) -> int:
        """The highest ``L <= lo`` such that the terms' bits below ``L`` never carry into it."""
        k = self.known(x)
        maybe = k.maybe if k is not None else (1 << hi) - 1
        shifts = [s for s in range(hi) if c >> s & 1]
        for cut in range(lo, 0, -1):
            bound = sum((maybe & ((1 << (cut - s)) - 1)) << s for s in shifts if s < cut)
            if bound < 1 << cut:
                return cut
        return 0

    def _term(self, x: bytes, s: int, lo: int, hi: int, span: Span | None) -> bytes | None:
        """Bits ``lo..hi`` of ``x << s`` as a ``uint(hi - lo)`` (None when all zero)."""
        g = self.g
        add = adder(g, span)
        n = hi - lo
        if s >= hi:
            return None
        if s >= lo:
            part = add("slice", uint(hi - s), x, attrs={"lo": 0})
            if s > lo:
                part = add("concat", uint(n), part, const(g, uint(s - lo), 0, span))
            return part
        return add("slice", uint(n), x, attrs={"lo": lo - s})

    def _sum(self, terms: list[bytes | None], span: Span | None) -> bytes | None:
        """A balanced tree of adders over ``terms`` (same type); None for no term."""
        level = [t for t in terms if t is not None]
        if not level:
            return None
        while len(level) > 1:
            nxt = [self.arith("add", level[j], level[j + 1], span)
                   for j in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0]

    # --- constant tables ---------------------------------------------------------------------

    def _lookup(self, node: Node, ins: tuple[bytes, ...], span: Span | None) -> bytes | None:
        """Return a two-level mux tree for a lookup in an array: of constants (a ROM), or any
        other array value but a `mem`'s state (its elements the reads at constant indices,
        which are wires). A read of an array just written at an index (``m[b]`` after ``m[a]
        = x``, both in range by their types) is ``a == b ? x : m[b]``: the read no longer
        waits for the write, and a `mem` read so becomes its block RAM's read port."""
        g = self.g
        arr, idx = g.nodes[ins[0]], g.nodes[ins[1]]
        at, it = arr.type, idx.type
        if not isinstance(at, ArrayType) or not isinstance(it, IntType) or it.signed:
            return None
        add = adder(g, span)
        n = at.length
        if arr.op == "state" and arr.attr("kind") == "mem":
            return None  # one read port of a `mem`: kera.hls.memory maps it (block RAM)
        if arr.op == "array_update":  # a read of the word just written is that word
            m, a, x = arr.inputs
            a_t = g.nodes[a].type
            if isinstance(a_t, IntType) and _in_range(a_t, n) and _in_range(it, n):
                w = max(a_t.width, it.width)
                hit = add("eq", BOOL, add("cast", uint(w), a), add("cast", uint(w), ins[1]))
                old = self._lookup(node, (m, ins[1]), span)
                if old is None:  # the `mem`'s own read, of the word as the transfer found it
                    old = add("array_index", at.elem, m, ins[1])
                return add("select", at.elem, hit, x, old)
        if arr.op == "array" and all(g.nodes[e].op == "const" for e in arr.inputs):
            items = list(arr.inputs)
        else:  # the elements an index of this type reaches
            items = [add("array_index", at.elem, ins[0], const(g, it, k, span))
                     for k in range(min(n, 1 << it.width))]
        bits = max(1, (n - 1).bit_length())
        if bits < 2:
            return None
        i = ins[1]
        if it.width > bits:  # a clamped read: every index past the end reads the last one
            last = const(g, it, n - 1, span)
            i = add("select", it, add("gt", BOOL, i, last), last, i)
            i = add("slice", uint(bits), i, attrs={"lo": 0})
        elif it.width < bits:
            bits = it.width
        elems = items[: 1 << bits]
        elems += [elems[-1]] * ((1 << bits) - len(elems))
        # the inputs as rewritten: ``node``'s own are ids of the graph before
        if _select_tree_read(g, ins[0], ins[1], self.costs) and arr.op != "array_update":
            zero = const(g, uint(1), 0, span)
            for j in range(bits):  # one level of selects per index bit, bit 0 first
                flag = add("ne", BOOL, add("slice", uint(1), i, attrs={"lo": j}), zero)
                elems = [add("select", at.elem, flag, hi, lo)
                         for lo, hi in zip(elems[::2], elems[1::2], strict=True)]
            return elems[0]
        low = bits // 2
        lo_i = add("slice", uint(low), i, attrs={"lo": 0})
        hi_i = add("slice", uint(bits - low), i, attrs={"lo": low})
        group = ArrayType(at.elem, 1 << low)
        picks = [add("array_index", at.elem,
                     add("array", group, *elems[j:j + (1 << low)]), lo_i)
                 for j in range(0, len(elems), 1 << low)]
        return add("array_index", at.elem, add("array", ArrayType(at.elem, len(picks)), *picks),
                   hi_i)


def _nibble_count(add: Callable[..., bytes], bits: list[bytes]) -> bytes:
    """Return the count of up to four one-bit values as a ``uN`` whose every bit is its own
    function of them (one LUT4 each; no gate shared between two count bits, which a LUT
    cover would keep as a LUT of its own): for ``a, b, c, d`` the bits are ``a ^ c ^ b ^ d``,
    ``(a & b) ^ (c & d) ^ ((a ^ b) & (c ^ d))`` and ``(a & c) & (b & d)``."""
    u1 = uint(1)
    if len(bits) == 1:
        return bits[0]
    a, b, *rest = bits
    if not rest:
        return add("concat", uint(2), add("and", u1, a, b), add("xor", u1, a, b))
    if len(rest) == 1:
        c = rest[0]
        carry = add("or", u1, add("and", u1, a, b), add("and", u1, c, add("or", u1, a, b)))
        return add("concat", uint(2), carry, add("xor", u1, add("xor", u1, a, c), b))
    c, d = rest
    ones = add("xor", u1, add("xor", u1, a, c), add("xor", u1, b, d))
    twos = add("xor", u1, add("xor", u1, add("and", u1, a, b), add("and", u1, c, d)),
               add("and", u1, add("xor", u1, a, b), add("xor", u1, c, d)))
    fours = add("and", u1, add("and", u1, a, c), add("and", u1, b, d))
    return add("concat", uint(3), fours, add("concat", uint(2), twos, ones))


def mul_plan(c: int, n: int, depth: int = 4) -> tuple[int, tuple]:
    """Return ``(adders, recipe)``: the fewest adders found for ``x * c mod 2**n``.

    A recipe is ``("zero",)``, ``("x",)``, ``("shl", s, r)`` (``r``'s product shifted by
    ``s``), ``("csd", c)`` (the canonical signed digits' sum), ``("fact", k, sign, r)``
    (``r``'s product times ``2**k + sign``: one adder) or ``("pm", sign, r)`` (``r``'s
    product plus or minus ``x``: one adder). Factors of the form ``2**k +- 1`` and steps of
    one are searched ``depth`` deep, as in Bernstein's constant multiplication: a repeating
    constant factors, ``0x66666667 = 2 * 3 * 0x11 * 0x101 * 0x10001 + 1``, 5 adders where its
    16 signed digits take 15."""
    memo: dict[tuple[int, int, int], tuple[int, tuple]] = {}

    def best(c: int, depth: int, n: int) -> tuple[int, tuple]:
        c &= (1 << n) - 1
        if c == 0:
            return 0, ("zero",)
        s = (c & -c).bit_length() - 1
        if s:  # x * (c' << s) mod 2**n is (x * c' mod 2**(n - s)) << s
            a, r = best(c >> s, depth, n - s)
            return a, ("shl", s, r)
        if c == 1:
            return 0, ("x",)
        key = (c, depth, n)
        if key in memo:
            return memo[key]
        plus, minus = _csd(c, n)
        found: tuple[int, tuple] = (len(plus) + len(minus) - 1, ("csd", c))
        if depth > 0:
            for k in range(1, n):
                for sign in (1, -1):
                    f = (1 << k) + sign
                    if 1 < f < c and c % f == 0:
                        a, r = best(c // f, depth - 1, n)
                        if a + 1 < found[0]:
                            found = (a + 1, ("fact", k, sign, r))
            for sign in (1, -1):
                a, r = best(c - sign, depth - 1, n)
                if a + 1 < found[0]:
                    found = (a + 1, ("pm", sign, r))
        memo[key] = found
        return found

    return best(c, depth, n)


def _csd(c: int, hi: int) -> tuple[list[int], list[int]]:
    """The canonical signed digits of ``c mod 2**hi``: (shifts of +1 digits, of -1 digits)."""
    value = c & ((1 << hi) - 1)
    plus: list[int] = []
    minus: list[int] = []
    s = 0
    while value and s < hi:
        if value & 1:
            if value & 2 and s + 1 < hi:
                minus.append(s)
                value += 1
            else:
                plus.append(s)
                value -= 1
        value >>= 1
        s += 1
    return plus, minus

__all__ = ["DECOMPOSED_OPS", "decompose_for_timing", "mul_plan"]
