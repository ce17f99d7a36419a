"""Bit-level view of the bitwise logic of a graph: supports, LUT levels and a LUT count.

yosys/abc do not build a CRC's 32 shift/xor steps as 32 word-level circuits: they flatten the
bitwise logic between arithmetic (carry chains, DSPs), registers and ports into one network of
bits and cover each output bit with K-input LUTs. This module does the same, coarsely:

* a *bitwise* node (``and``/``or``/``xor``/``not``, shifts and rotates by a constant,
  ``select``, ``slice``/``concat``/``cast``, tuples and arrays with constant indices, ``eq``/
  ``ne``, orderings against a constant) is evaluated bit by bit; every other node's output bits
  are *leaves*;
* each bit is a constant, a wire (a leaf bit or an inverted one: inverters fold into the LUT
  that reads them) or a gate with a *support*: the set of leaf bits it depends on;
* a gate of support ``s`` is ``ceil(log_K s)`` LUT levels deep (a balanced tree of K-LUTs, what
  abc reaches for xor/and/or networks after balancing) and costs ``ceil((s - 1) / (K - 1))``
  LUTs when it is materialised, i.e. read by a leaf-producing node, registered or a result.
  Constant bits cost nothing and bits nothing reads are never materialised (yosys trims both).

Delays reach the scheduler as per-node *increments*: ``levels(v) - max(levels(inputs))``, so a
path's sum of increments telescopes to the levels of its last node, and chaining sees the LUT
depth of the network rather than the sum of its word-level ops.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import itemgetter
from typing import TypeVar

from kera.ir.gcpause import paused_gc
from kera.ir.graph import Graph, Node
from kera.ir.types import ArrayType, IntType, TupleType, Type

#: A bit: ``(support, levels, gate, inverted)``. ``support`` is the frozenset of the leaf-bit
#: numbers it depends on (a set, not an int bit mask: leaf numbers run to the whole graph's bit
#: count, and an or of two such masks costs their length); empty means a constant whose value is
#: ``levels``. ``gate`` numbers a gate's output (-1 for a
#: leaf bit or a constant), so that the wires of one gate are materialised once; ``inverted``
#: (0 or 1) is the polarity of a wire.
Bit = tuple[frozenset[int], int, int, int]
T = TypeVar("T")
#: The associative operators of 2-input gates (``BitNetwork.kinds``).
AND, OR, XOR = 1, 2, 3
_KINDS = {"and": AND, "or": OR, "xor": XOR}
_NONE: frozenset[int] = frozenset()
ZERO: Bit = (_NONE, 0, -1, 0)
ONE: Bit = (_NONE, 1, -1, 0)
#: What a gate reads: its leaf bits (leaf ``n`` as ``~n``), the distinct gates, and the node it
#: belongs to.
Fanin = tuple[list[int], tuple[int, ...], bytes]

#: Ops that are always evaluated bit by bit.
_ALWAYS = frozenset({"and", "or", "xor", "not", "select", "slice", "concat", "cast", "tuple",
                     "tuple_get", "array", "eq", "ne", "const"})
#: Ops evaluated bit by bit when their second operand is a constant.
_CONST_SECOND = frozenset({"shl", "shr", "rotl", "rotr", "array_index", "array_update"})
#: Arithmetic whose top bits yosys's ``wreduce`` knows from its operands' significant widths.
_WREDUCED = frozenset({"add", "sub", "neg", "min", "max", "mul", "widening_mul"})
#: Orderings, evaluated bit by bit when one operand is a constant.
_ORDERS = frozenset({"lt", "le", "gt", "ge"})


def is_bitwise(graph: Graph, node: Node) -> bool:
    """Return whether ``node`` is evaluated bit by bit (part of a LUT network)."""
    op = node.op
    if op in _ALWAYS:
        return True
    nodes = graph.nodes
    if op in _CONST_SECOND:
        return nodes[node.inputs[1]].op == "const"
    if op in _ORDERS:
        return any(nodes[i].op == "const" for i in node.inputs)
    return False


def lut_levels(support: int, k: int) -> int:
    """Return the depth of a balanced tree of ``k``-input LUTs over ``support`` inputs."""
    levels, reach = 0, 1
    while reach < support:
        levels, reach = levels + 1, reach * k
    return levels


def lut_count(support: int, k: int) -> int:
    """Return the LUTs of a ``k``-LUT tree over ``support`` inputs (0 for a wire)."""
    return 0 if support <= 1 else -(-(support - 1) // (k - 1))


@dataclass
class BitNetwork:
    """The bits of every node of a graph, from which LUT levels and LUT counts follow.

    ``cut(u, v)`` says that ``v`` reads ``u`` through a register (``u`` is then materialised
    and ``v`` sees fresh leaf bits); ``None`` means no registers (the scheduler's view).
    """

    graph: Graph
    k: int
    cut: Callable[[bytes, bytes], bool] | None = None
    #: Widest function one LUT level takes (ECP5: 7, LUT4s joined by PFUMX/L6MUX21), for
    #: the depth; 0 means K.
    wide: int = 0
    bits: dict[bytes, list[Bit]] = field(default_factory=dict)
    levels: dict[bytes, int] = field(default_factory=dict)
    #: Gate number -> (support size, producing node) of every materialised gate.
    roots: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    _leaves: int = 0
    _gates: int = 0
    #: Gate number -> what it reads, in creation order (a gate reads only earlier gates).
    _fanin: dict[int, Fanin] = field(default_factory=dict)
    #: Gate number -> its operator where it is an associative one (``AND``, ``OR``, ``XOR``;
    #: absent for selects, reductions and comparisons); ``kera.hls.sta`` balances a cone only
    #: across one operator.
    kinds: dict[int, int] = field(default_factory=dict)
    #: Gates read inverted by an ``AND``/``OR`` gate: ``(reader, gate)`` (no associativity).
    inverted_reads: set[tuple[int, int]] = field(default_factory=set)
    _node: bytes = b""
    _registered: dict[bytes, list[Bit]] = field(default_factory=dict)
    #: The leaf of each registered signal ``(support, gate)``, whichever node registers it.
    _flops: dict[tuple[frozenset[int], int], Bit] = field(default_factory=dict)
    _luts: dict[bytes, int] = field(default_factory=dict)
    _borrows: dict[tuple[bytes, bytes], Bit] = field(default_factory=dict)
    #: Nodes whose gates ``materialise`` has recorded (a node's bits never change).
    _materialised: set[bytes] = field(default_factory=set)
    #: ``lut_levels(s, k)`` for small supports ``s``.
    _levels: list[int] = field(default_factory=list)
    #: The results and the nodes nothing reads (materialised at the end of ``build``).
    _finals: list[bytes] = field(default_factory=list)
    #: Whether selects of the same bits are one gate (``ToolNetwork``).
    merge_equal: bool = False
    #: The gate of each select's bits made so far, where ``merge_equal``.
    _same: dict[tuple[object, ...], Bit] = field(default_factory=dict)
    _demanded: frozenset[int] | None = None
    #: The gates that are multiplexers (``c ? x : y``): ``kera.hls.sta`` does not merge them
    #: into the cones around them.
    muxes: set[int] = field(default_factory=set)
    #: The condition of each multiplexer where it is a gate (mux gate -> its gate number):
    #: ``kera.hls.sta`` does not fold a shared one into the multiplexer's LUT.
    mux_conditions: dict[int, int] = field(default_factory=dict)
    #: Nodes to materialise with the results (the conditions of ``ToolNetwork.resets``).
    _also: list[bytes] = field(default_factory=list)

    def build(self, order: Iterable[bytes], results: Iterable[bytes]) -> BitNetwork:
        """Evaluate the nodes of ``order`` (topological); materialise what leaf-producing
        nodes read, the ``results`` and the nodes nothing reads; cover the gates with LUTs."""
        with paused_gc():  # ~10 bits, gates and sets per node, none freed before the end
            self._build(order, results)
        return self

    def _build(self, order: Iterable[bytes], results: Iterable[bytes]) -> None:
        self._levels = [lut_levels(s, self.k) for s in range(64)]
        nodes = self.graph.nodes
        read: set[bytes] = set()
        for nid in order:
            node = nodes[nid]
            read.update(node.inputs)
            if self._bitwise(nid, node):
                self._node = nid
                self.bits[nid] = self._evaluate(nid, node)
                self.levels[nid] = 0  # set by ``cover``
            else:
                for u in node.inputs:
                    if u in self.bits:
                        self.materialise(u)
                self.bits[nid] = self._leaf_bits(nid, node)
                self.levels[nid] = 0
                self._materialised.add(nid)  # leaf bits only: no gate to record
        self._finals = [n for n in [*results, *(n for n in self.bits if n not in read),
                                    *self._also] if n in self.bits]  # results and sinks
        for nid in self._finals:
            self.materialise(nid)
        self.cover()

    def demanded_leaves(self, exclude: frozenset[bytes] | set[bytes] = frozenset()
                        ) -> frozenset[int]:
        """Return the leaf bits something reads: the supports of the bits that arithmetic,
        registers, results and sinks take (a leaf outside them is a bit yosys trims).
        ``exclude``: results and sinks to leave out (the state registers' next values, whose
        bits are live only where the state bit is: ``kera.hls.resources.dead_state_bits``)."""
        if self._demanded is not None and not exclude:
            return self._demanded
        nodes = self.graph.nodes
        reads = [u for nid in self.bits if not self._bitwise(nid, nodes[nid])
                 for u in nodes[nid].inputs if u in self.bits and self._reads_comb(u, nid)]
        out: set[int] = set()
        finals = [u for u in self._finals if u not in exclude]
        for u in {*reads, *self._registered, *finals}:
            for b in self.bits[u]:
                out.update(b[0])
        if exclude:
            return frozenset(out)
        self._demanded = frozenset(out)
        return self._demanded

    def increment(self, nid: bytes) -> int:
        """Return the LUT levels ``nid`` adds to the deepest of its bitwise inputs."""
        node = self.graph.nodes[nid]
        if not self._bitwise(nid, node):
            return 0
        below = max((self.levels.get(u, 0) for u in node.inputs if self._reads_comb(u, nid)),
                    default=0)
        return max(0, self.levels[nid] - below)

    def _bitwise(self, nid: bytes, node: Node) -> bool:
        """Whether ``node`` is gates of its inputs' bits here (``is_bitwise``)."""
        return is_bitwise(self.graph, node)

    def materialise(self, nid: bytes) -> None:
        """Record the gates among ``nid``'s bits as LUT outputs."""
        if nid in self._materialised:
            return
        self._materialised.add(nid)
        for mask, _, gate, _ in self.bits[nid]:
            if gate >= 0 and gate not in self.roots:
                self.roots[gate] = (len(mask), nid)

    def associative(self, gate: int, reader: int) -> bool:
        """Whether ``gate`` and the gate ``reader`` that reads it are one associative
        operator (both and, or or xor; an and/or read uninverted), so that abc's balancing
        may regroup their inputs as one tree."""
        kind = self.kinds.get(gate, 0)
        return bool(kind) and kind == self.kinds.get(reader, 0) and \
            (reader, gate) not in self.inverted_reads

    def luts_by_node(self) -> dict[bytes, int]:
        """Return the LUTs of the network's cover, charged to the node each LUT belongs to."""
        return dict(self._luts)

    def cover(self) -> None:
        """Cover the gates with LUTs, as abc's area-recovering mapping does, roughly.

        A gate read by exactly one gate (and not materialised) folds into its reader, unless
        the reader would then read more than K signals (the largest folded cones are given
        LUTs of their own until it does not, or none is left); any other gate is a LUT output
        of its own, a tree of ``lut_count(c)`` LUTs over the ``c`` signals (leaf bits and LUT
        outputs) its folded cone reads, ``lut_levels(c)`` levels above the deepest of them.
        That K-input cover gives the LUT count. The depth comes from the same cover with
        cones of up to ``wide`` inputs as one level (the wide-function muxes abc maps the
        critical paths onto; ``wide`` 0: K). Gates no materialised bit depends on are dead
        (yosys trims them). A node's ``levels`` is the depth of its deepest live bit.
        """
        signals = self._live()
        readers = Counter(chain.from_iterable(map(itemgetter(1), signals.values())))
        roots = self.roots
        folds = bytearray(self._gates + 1)  # read by one gate only, and not materialised
        for h, n in readers.items():
            if n == 1 and h not in roots:
                folds[h] = 1
        k = self.k
        limit = max(k, self.wide)
        cuts, depth, kept = self._cover(signals, folds, k, limit == k)
        luts: dict[bytes, int] = {}
        fanin = self._fanin
        counts = [lut_count(c, k) for c in range(65)]
        for g in sorted(kept):
            nid = fanin[g][2]
            c = len(cuts[g])
            luts[nid] = luts.get(nid, 0) + (counts[c] if c < 65 else lut_count(c, k))
        self._luts = luts
        if limit != k:
            _, depth, _ = self._cover(signals, folds, limit, True)
        at = depth.__getitem__  # index -1 (a leaf bit's gate) holds 0, as dead gates do
        gate = itemgetter(2)
        for nid, bits in self.bits.items():
            self.levels[nid] = max(map(at, map(gate, bits)), default=0)

    def _cover(self, signals: dict[int, Fanin], folds: bytearray, limit: int, deep: bool
               ) -> tuple[dict[int, set[int]], list[int], set[int]]:
        """Return (cut, depth, LUT outputs) of a cover whose LUTs read up to ``limit`` signals.

        A cut is a set of signals: a LUT output ``h`` (a gate number, >= 1) or a leaf bit
        ``n`` as ``~n``. ``depth`` (computed when ``deep``) is a list indexed by signal: a
        gate's depth, and 0 at every negative index down to ``~n`` of the last leaf bit.
        """
        k = self.k
        roots = self.roots
        fanin = self._fanin
        cuts: dict[int, set[int]] = {}
        depth = [0] * (self._gates + 1 + self._leaves)
        at = depth.__getitem__
        levels = [lut_levels(c, k) for c in range(limit + 1)]
        kept: set[int] = {g for g in roots if g in fanin}
        for g, (leaves, ins, _) in signals.items():
            cut = set(leaves)
            folded: list[int] = []
            for h in ins:
                if folds[h]:
                    folded.append(h)
                    cut |= cuts[h]  # folds into this gate's LUT
                else:  # read twice or more, or materialised: a LUT output of its own
                    kept.add(h)
                    cut.add(h)
            if len(cut) > limit and folded:
                for h in sorted(folded, key=lambda h: (-len(cuts[h]), h)):
                    if len(cut) <= limit:
                        break
                    kept.add(h)  # too many inputs: the largest folded cone gets its own LUT
                    cut -= cuts[h]
                    cut.add(h)
            cuts[g] = cut
            if deep:
                c = len(cut)
                depth[g] = max(map(at, cut), default=0) + (
                    (levels[c] if c <= k else 1) if c <= limit else lut_levels(c, k))
        return cuts, depth, kept

    def _live(self) -> dict[int, Fanin]:
        """Return the gates a materialised bit depends on (the others are trimmed) and what
        each reads, in creation order. A gate reads only earlier gates, so one sweep from the
        last gate finds them."""
        fanin = self._fanin
        alive = bytearray(self._gates + 1)
        for g in self.roots:
            if g in fanin:
                alive[g] = 1
        for g in range(self._gates, 0, -1):
            if alive[g]:
                for h in fanin[g][1]:
                    alive[h] = 1
        return {g: fanin[g] for g in fanin if alive[g]}

    def live_bits(self, nid: bytes) -> int:
        """Return how many distinct non-constant bits ``nid`` has (what a register keeps)."""
        return len({(b[0], b[2], b[3]) for b in self.bits[nid] if b[0]})

    # --- evaluation ------------------------------------------------------------------------

    def _reads_comb(self, u: bytes, v: bytes) -> bool:
        return self.cut is None or not self.cut(u, v)

    def _fresh(self, width: int) -> list[Bit]:
        first = self._leaves
        self._leaves += width
        supports = map(frozenset, zip(range(first, first + width)))
        return list(zip(supports, repeat(0), repeat(-1), repeat(0)))

    def _input(self, u: bytes, v: bytes) -> list[Bit]:
        if self._reads_comb(u, v):
            return self.bits[u]
        hit = self._registered.get(u)
        if hit is None:  # a register: constant bits stay constant, each signal one new leaf
            self.materialise(u)  # (one for every register of that signal: ``opt_merge``)
            flops = self._flops
            hit = []
            for b in self.bits[u]:
                if not b[0]:
                    hit.append(b)
                    continue
                q = flops.setdefault((b[0], b[2]), self._fresh(1)[0])
                hit.append(q if b[3] == 0 else _not(q))
            self._registered[u] = hit
        return hit

    def _leaf_bits(self, nid: bytes, node: Node) -> list[Bit]:
        """Return the bits of a non-bitwise node: fresh leaves, except the top bits yosys
        knows (``wreduce``): an add, subtract, min/max or product of narrower operands leaves
        its top bits 0 or copies of its sign, a count (``popcount``, ``clz``, ``ctz``) of
        ``n`` bits is 0 above ``n``'s bit length, and a subtraction's sign is the borrow that every
        comparison of the same operands reads (``alumacc`` builds them as one ALU)."""
        t, w = node.type, node.type.flat_width
        op = node.op
        if op in ("lt", "le", "gt", "ge"):
            a, b = node.inputs if op in ("lt", "ge") else node.inputs[::-1]
            borrow = self._borrow(a, b)
            return [borrow if op in ("lt", "gt") else _not(borrow)]
        if isinstance(t, IntType) and op in ("popcount", "clz", "ctz"):
            x = self._input(node.inputs[0], nid)
            most = sum(b != ZERO for b in x) if op == "popcount" else len(x)
            n = min(w, most.bit_length())  # a count of at most ``most``: the rest are 0
            return self._fresh(n) + [ZERO] * (w - n)
        if not isinstance(t, IntType) or op not in _WREDUCED:
            return self._fresh(w)
        ins = [self._input(u, nid) for u in node.inputs]
        eff = [significant_width(bits, t.signed) for bits in ins]
        n = {"add": max(eff) + 1, "sub": max(eff) + 1, "neg": eff[0] + 1, "min": max(eff),
             "max": max(eff), "mul": sum(eff), "widening_mul": sum(eff)}[op]
        if n >= w:
            return self._fresh(w)
        low = self._fresh(n)
        if op == "sub":
            low[-1] = self._borrow(node.inputs[0], node.inputs[1])
        fill = low[-1] if t.signed or op in ("sub", "neg") else ZERO
        return low + [fill] * (w - n)

    def _borrow(self, a: bytes, b: bytes) -> Bit:
        """Return the leaf bit that is 1 when ``a < b`` (the sign of ``a - b``)."""
        hit = self._borrows.get((a, b))
        if hit is None:
            hit = self._borrows[(a, b)] = self._fresh(1)[0]
        return hit

    def _gate(self, ins: list[Bit]) -> Bit:
        if len(ins) == 2:
            return self._gate2(ins[0], ins[1])
        mask = ins[0][0].union(*[b[0] for b in ins[1:]])
        size = len(mask)
        if size <= 1 and len(ins) == 1:
            return ins[0]  # an inverter or a buffer folds into its reader
        self._gates = g = self._gates + 1
        leaves: list[int] = []
        gates: list[int] = []
        for b in ins:
            h = b[2]
            if h < 0:
                (n,) = b[0]  # a wire's support is its one leaf bit (gates read no constants)
                leaves.append(~n)
            elif h not in gates:
                gates.append(h)
        self._fanin[g] = (leaves, tuple(gates), self._node)
        levels = self._levels
        return (mask, levels[size] if size < len(levels) else lut_levels(size, self.k), g, 0)

    def _gate2(self, a: Bit, b: Bit, kind: int = 0) -> Bit:
        """Return the gate of two bits (``_gate`` of two, unrolled); ``kind`` is its
        associative operator (``AND``, ``OR``, ``XOR``; 0: none)."""
        mask = a[0] | b[0]
        size = len(mask)
        self._gates = g = self._gates + 1
        ga, gb = a[2], b[2]
        if kind:
            self.kinds[g] = kind
            if kind != XOR:
                if ga >= 0 and a[3]:
                    self.inverted_reads.add((g, ga))
                if gb >= 0 and b[3]:
                    self.inverted_reads.add((g, gb))
        # a wire's support is its one leaf bit (gates read no constants)
        if ga >= 0:
            if gb >= 0:
                self._fanin[g] = ([], (ga,) if ga == gb else (ga, gb), self._node)
            else:
                (nb,) = b[0]
                self._fanin[g] = ([~nb], (ga,), self._node)
        else:
            (na,) = a[0]
            if gb >= 0:
                self._fanin[g] = ([~na], (gb,), self._node)
            else:
                (nb,) = b[0]
                self._fanin[g] = ([~na, ~nb], (), self._node)
        levels = self._levels
        return (mask, levels[size] if size < len(levels) else lut_levels(size, self.k), g, 0)

    def _evaluate(self, nid: bytes, node: Node) -> list[Bit]:
        nodes = self.graph.nodes
        if node.op == "const":
            return _const_bits(node)
        ins = [self._input(u, nid) for u in node.inputs]
        types = [nodes[u].type for u in node.inputs]
        return _RULES[node.op](self, node, ins, types)


def significant_width(bits: list[Bit], signed: bool) -> int:
    """Return the width of a value without its constant-0 top bits or, when ``signed``, its
    repeated sign bits (what yosys's ``wreduce`` leaves of an arithmetic operand)."""
    n = len(bits)
    while n > 1 and ((signed and bits[n - 1] == bits[n - 2])
                     or (not signed and bits[n - 1] == ZERO)):
        n -= 1
    return n


def _trailing_zeros(bits: list[Bit]) -> int:
    """Return how many low bits of a value are the constant 0 (a product of it has as many
    more: yosys's ``opt_expr`` takes them out of a ``$mul`` before it maps it)."""
    n = 0
    while n < len(bits) and bits[n] == ZERO:
        n += 1
    return n


def _const_bits(node: Node) -> list[Bit]:
    value = int(node.attr("value"))
    width = node.type.flat_width
    value &= (1 << width) - 1
    return [ONE if value >> i & 1 else ZERO for i in range(width)]


def _const_value(bits: list[Bit]) -> int | None:
    if any(b[0] for b in bits):
        return None
    return sum(b[1] << i for i, b in enumerate(bits))


def _not(b: Bit) -> Bit:
    if b[0]:
        return (b[0], b[1], b[2], 1 - b[3])
    return ONE if b[1] == 0 else ZERO


# --- per-op rules: (network, node, input bits, input types) -> output bits -----------------

Rule = Callable[[BitNetwork, Node, list[list[Bit]], list[Type]], list[Bit]]


def _bitwise2(kind: str) -> Rule:
    def rule(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
        return [_logic(net, kind, a, b) for a, b in zip(ins[0], ins[1], strict=True)]

    return rule


def _logic(net: BitNetwork, kind: str, a: Bit, b: Bit) -> Bit:
    if not a[0]:
        x, y = a, b
    elif not b[0]:
        x, y = b, a
    else:
        if a[2] == b[2] and a[1] == b[1] and a[0] == b[0]:  # the same signal
            if a[3] == b[3]:
                return ZERO if kind == "xor" else a
            return ZERO if kind == "and" else ONE  # a signal and its inverse
        return net._gate2(a, b, _KINDS[kind])
    # a constant operand: the result is constant or the other bit (inverted)
    if kind == "and":
        return y if x[1] else ZERO
    if kind == "or":
        return ONE if x[1] else y
    return _not(y) if x[1] else y


def _not_rule(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    return [_not(b) for b in ins[0]]


def _select(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    (c,), a, b = ins
    if not c[0]:
        return list(a if c[1] else b)
    return [_mux(net, c, x, y) for x, y in zip(a, b, strict=True)]


def _mux(net: BitNetwork, c: Bit, x: Bit, y: Bit) -> Bit:
    """Return ``c ? x : y`` for one bit, simplified where an arm is constant, and an xor
    where the arms are one signal in both polarities (``c ? ~y : y``: a bit of
    crc32_word's ``if crc & 1 { crc >> 1 ^ POLY } else { crc >> 1 }``), which abc balances
    with the xors around it as it does any xor (crc32_word at 12 MHz on iCE40: 17.3 ns of
    logic timed as a chain of selects, 15.1 as xors; 50 MHz placed, 46 -> 51 estimated)."""
    if x == y:
        return x
    if x[0] and x[:3] == y[:3]:  # c ? ~y : y = c ^ y: a CRC step's bit is an xor
        return _logic(net, "xor", c, y)
    if not x[0]:  # c ? 1 : y = c | y;  c ? 0 : y = ~c & y
        return _logic(net, "or", c, y) if x[1] else _logic(net, "and", _not(c), y)
    if not y[0]:  # c ? x : 1 = ~c | x;  c ? x : 0 = c & x
        return _logic(net, "or", _not(c), x) if y[1] else _logic(net, "and", c, x)
    if not net.merge_equal:
        return _mux_gate(net, c, x, y)
    key = ("mux", c, x, y)
    hit = net._same.get(key)
    if hit is None:  # a sign bit's copies through a select are one LUT (opt_merge)
        hit = net._same[key] = _mux_gate(net, c, x, y)
    return hit


def _mux_gate(net: BitNetwork, c: Bit, x: Bit, y: Bit) -> Bit:
    """Return the gate of ``c ? x : y``, recorded as a multiplexer."""
    out = net._gate([c, x, y])
    if out[2] >= 0:
        net.muxes.add(out[2])
        if c[2] >= 0:
            net.mux_conditions[out[2]] = c[2]
    return out


def _extend(bits: list[Bit], t: Type, width: int) -> list[Bit]:
    fill = bits[-1] if isinstance(t, IntType) and t.signed and bits else ZERO
    return (bits + [fill] * width)[:width]


def _cast(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    return _extend(ins[0], types[0], node.type.flat_width)


def _reduce(net: BitNetwork, bits: list[Bit]) -> Bit:
    """Return a gate over the non-constant bits (constant when there are none)."""
    live = [b for b in bits if b[0]]
    if not live:
        return ONE if any(b[1] for b in bits) else ZERO
    return live[0] if len(live) == 1 else net._gate(live)


def _slice(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    lo = int(node.attr("lo"))
    return _extend(ins[0][lo:], IntType(1, False), node.type.flat_width)


def _concat(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    return ins[1] + ins[0]  # the second operand is the low part


def _pack(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    return [b for bits in ins for b in bits]


def _tuple_get(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    return tuple_field(ins[0], types[0], int(node.attr("index")))


def tuple_field(bits: list[T], t: Type, index: int) -> list[T]:
    """Return the bits of element ``index`` of a tuple of type ``t`` (``tuple_get``)."""
    assert isinstance(t, TupleType)
    lo = sum(e.flat_width for e in t.elems[:index])
    return bits[lo:lo + t.elems[index].flat_width]


def _element(t: Type, index: int) -> tuple[int, int]:
    assert isinstance(t, ArrayType)
    k = min(index, t.length - 1)  # an index past the end reads the last element
    w = t.elem.flat_width
    return k * w, w


def element(bits: list[T], t: Type, index: int) -> list[T]:
    """Return the bits of element ``index`` of an array of type ``t`` (``array_index`` by a
    constant; past the end: the last element)."""
    lo, w = _element(t, index)
    return bits[lo:lo + w]


def updated(bits: list[T], t: Type, index: int, value: list[T]) -> list[T]:
    """Return an array of type ``t`` with element ``index`` replaced by ``value``
    (``array_update`` by a constant; past the end: no change)."""
    assert isinstance(t, ArrayType)
    if index >= t.length:
        return list(bits)
    lo, w = _element(t, index)
    return bits[:lo] + value + bits[lo + w:]


def _array_index(net: BitNetwork, node: Node, ins: list[list[Bit]],
                 types: list[Type]) -> list[Bit]:
    index = _const_value(ins[1])
    assert index is not None
    return element(ins[0], types[0], index)


def _array_update(net: BitNetwork, node: Node, ins: list[list[Bit]],
                  types: list[Type]) -> list[Bit]:
    index = _const_value(ins[1])
    assert index is not None
    return updated(ins[0], types[0], index, ins[2])


def moved(op: str, bits: list[T], amount: int, zero: T, signed: bool) -> list[T]:
    """Return ``bits`` (bit 0 first) shifted (``shl``/``shr``) or rotated (``rotl``/``rotr``)
    by the constant ``amount``, SEMANTICS.md's rule: a shift of the width or more leaves
    ``zero`` (a signed ``shr``: the sign bit) in every bit."""
    w = len(bits)
    if op in ("rotl", "rotr"):
        r = amount % w if w else 0
        r = r if op == "rotl" else (w - r) % w
        return bits[w - r:] + bits[:w - r]
    if op == "shl":
        return ([zero] * min(amount, w) + bits)[:w]
    fill = bits[-1] if signed else zero
    return (bits[min(amount, w):] + [fill] * w)[:w]


def _shift(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    amount = _const_value(ins[1])
    assert amount is not None
    t = types[0]
    return moved(node.op, ins[0], amount, ZERO, isinstance(t, IntType) and t.signed)


def _compare(net: BitNetwork, node: Node, ins: list[list[Bit]], types: list[Type]) -> list[Bit]:
    a, b = ins
    if node.op in ("eq", "ne"):
        diff = [_logic(net, "xor", x, y) for x, y in zip(a, b, strict=True)]
        if any(not d[0] and d[1] for d in diff):  # a known differing bit
            return [ONE if node.op == "ne" else ZERO]
        live = [d for d in diff if d[0]]
        if not live:
            return [ZERO if node.op == "ne" else ONE]
        # the xors fold into the tree: its support is that of both operands' bits
        out = live[0] if len(live) == 1 else net._gate(live)
        return [out if node.op == "ne" else _not(out)]
    # an ordering against a constant: one function of the variable operand's bits (for the
    # area, those above the bound's trailing zeros: ``_bound_zeros``)
    skip = _bound_zeros(node.op, a, b) if getattr(net, "trim_bounds", False) else 0
    return [_reduce(net, a[skip:] + b[skip:])]


def _bound_zeros(op: str, a: list[Bit], b: list[Bit]) -> int:
    """Return how many low bits of the variable operand an ordering against a constant does
    not depend on: the trailing zeros of the bound ``c`` it is written as (``x < c`` or
    ``x >= c``; ``x > k`` is ``x >= k + 1``, ``x <= k`` is ``x < k + 1``). When ``2**t``
    divides ``c``, ``x < c`` iff ``x >> t < c >> t``, signed or not (floor division by
    ``2**t`` is monotone and exact on ``c``). yosys finds the same: ``opt_expr`` and the
    ``$alu`` it builds trim the carry cells whose carry is constant. ``x > 0x7fff`` of 21 bits
    is a function of its 6 top bits (yosys 0.70 ``synth_ice40``: 3 LUT4s), not of 21. Only
    the resource estimate's network trims them (``ToolNetwork.trim_bounds``): yosys often
    leaves the compare an ``$alu`` whose chain is longer than the function's LUT tree
    (fir_q15's ``x < -32768`` in place: a 19-cell chain and 1 LUT4), so the delay keeps the
    whole operand."""
    k = _const_value(b)
    if k is not None:  # x OP k
        plus_one = op in ("gt", "le")
    else:
        k = _const_value(a)
        if k is None:
            return 0
        plus_one = op in ("lt", "ge")  # k < x is x > k; k >= x is x <= k
    w = len(a)
    c = (k + plus_one) % (1 << w) if w else 0
    if c == 0:  # ``x < 0``, ``x >= 0``: the sign (signed) or a constant (unsigned)
        return max(0, w - 1)
    return (c & -c).bit_length() - 1


_RULES: dict[str, Rule] = {
    "and": _bitwise2("and"), "or": _bitwise2("or"), "xor": _bitwise2("xor"), "not": _not_rule,
    "select": _select, "cast": _cast, "slice": _slice, "concat": _concat, "tuple": _pack,
    "array": _pack, "tuple_get": _tuple_get, "array_index": _array_index,
    "array_update": _array_update, "shl": _shift, "shr": _shift, "rotl": _shift,
    "rotr": _shift, "eq": _compare, "ne": _compare, "lt": _compare, "le": _compare,
    "gt": _compare, "ge": _compare,
}


def network(graph: Graph, k: int, cut: Callable[[bytes, bytes], bool] | None = None,
            order: list[bytes] | None = None, wide: int = 0) -> BitNetwork:
    """Return the bit network of ``graph`` (every region, or the nodes of ``order``)."""
    ids = order if order is not None else graph.canonical_order()
    results = [r.result for r in graph.regions.values()]
    return BitNetwork(graph, k, cut, wide=wide).build(ids, results)


def neg_wiring(bits: list[Bit], signed: bool) -> list[Bit] | None:
    """Return the bits of ``-x`` when they are wires of ``x``'s bits, else None.

    The low bit of ``-x`` is always ``x[0]``. When ``x`` is one bit wide, or ``x[0]`` repeated
    (its significant width is 1), ``-x`` is ``x[0]`` on every bit (unsigned ``x`` in ``{0,
    1}``: 0 or all ones; a 1-bit signed ``x`` wraps to itself) or ``x[0]`` and zeros (signed
    ``x`` in ``{0, -1}``). ``0 - (c & 1)``, the mask of a bitwise CRC step, is one of them;
    yosys folds its constant-operand ``$alu`` to those wires, and places no carry cell.
    """
    w = len(bits)
    if not bits or not bits[0][0] or significant_width(bits, signed) != 1:
        return None
    if signed and w > 1:
        return [bits[0]] + [ZERO] * (w - 1)
    return [bits[0]] * w


def negated(node: Node, ins: list[list[Bit]]) -> list[Bit] | None:
    """Return the bits of ``x`` when ``node`` is ``-x`` (``neg x`` or ``0 - x``), else None."""
    if not isinstance(node.type, IntType):
        return None
    if node.op == "neg":
        return ins[0]
    if node.op == "sub" and all(b == ZERO for b in ins[0]):
        return ins[1]
    return None


@dataclass
class ToolNetwork(BitNetwork):
    """The bit network as yosys builds it, where it knows more than ``BitNetwork``:

    * a negation whose bits are wires of its operand's (:func:`neg_wiring`) is those wires;
    * a gate materialised in both polarities (``x`` and ``~x`` both registered, or one a
      result: the CRC's state and its inverted output) takes two LUTs, since neither family's
      flip-flops invert their input (``inverted_outputs``);
    * selects of the same bits are one gate (``opt_merge``): a select of two sign-extended
      values has one LUT for all the copies of the sign (fir_q15_shifts' rounding select:
      17 LUTs for 35 bits). Not and/or/xor gates: abc maps a cone whose inner gates another
      output shares as it likes (gray's `x ^ (x >> 1)` is also the first step of its
      `from_gray`: 22 LUTs placed, 16 estimated without the merge, 13 with it);
    * sums, products, subtractions: the known bits of ``_known_sums``, ``known_prefix`` and
      trailing zeros (``kera.hls.carries``).
    """

    #: The nodes the network's results are (the region results and state next values).
    results: tuple[bytes, ...] = ()
    #: By subtraction or negation: its low bits known before its chain (``known_prefix``).
    known_low: dict[bytes, int] = field(default_factory=dict)
    merge_equal: bool = True
    #: Selects whose every bit only registers without a reset read (pipeline banks, the
    #: output register): where an arm is constant, the flip-flops take it as their
    #: synchronous set/reset (``_evaluate``).
    resets: frozenset[bytes] = frozenset()
    #: Whether an ordering against a constant reads only the bits above the bound's trailing
    #: zeros (``_bound_zeros``): the resource estimate's network, not the timing's.
    trim_bounds: bool = False
    #: The widest ROM index (live bits) whose lookup's bits are gates of the index bits rather
    #: than leaves (``_rom_bits``): the widest LUT of the abc9 library the area mapping uses
    #: (``kera.hls.cutmap``), which maps such a gate whole, with the logic around it where
    #: that is faster, as abc9 does (an S-box chain's xors). 0: every ROM bit a leaf, its LUTs
    #: ``CostModel.rom_cost``'s.
    rom_gates: int = 0
    #: The lookups whose bits are gates (their LUTs are the mapping's).
    rom_gated: set[bytes] = field(default_factory=set)
    #: Lookups read from block RAM (``Schedule.roms``): leaves, whatever their index.
    rom_reads: frozenset[bytes] = frozenset()
    #: Ops computed by a shared unit (``Schedule.bound``): the unit's output, fresh leaves
    #: whatever the op (its operands reach it through the unit's multiplexers).
    units: frozenset[bytes] = frozenset()

    def _evaluate(self, nid: bytes, node: Node) -> list[Bit]:
        """A select of ``resets`` with a constant arm is its other arm: yosys's ``opt_dff``
        makes ``q <= c ? K : y`` a flip-flop with ``c`` as its synchronous reset (set where
        ``K``'s bit is 1: iCE40 ``SB_DFFESR``/``SB_DFFESS``), and the select no LUT; ``c`` is
        a signal the flip-flops read (materialised). fir_q15's saturation ``lt ? 0x8000 :
        (gt ? 0x7fff : x)``: the outer select's 16 LUTs (yosys 0.70: 16 SB_DFFESR/ESS, 214
        LUT4s). Not where anything else reads the select (biquad_q14's saturated output is
        also its state's next value, whose flip-flops have the reset: yosys keeps the
        select)."""
        if nid in self.rom_gated:
            out = self._rom_bits(nid, node, gated=True)
            assert out is not None
            return out
        if nid in self.resets:
            (c,), x, y = (self._input(u, nid) for u in node.inputs)
            for const, other in ((x, y), (y, x)):
                if c[0] and not any(b[0] for b in const):
                    self._also.append(node.inputs[0])
                    return list(other)
        return super()._evaluate(nid, node)

    def inverted_outputs(self) -> dict[bytes, int]:
        """Return, by node, the LUTs that build the second polarity of a gate that flip-flops
        or ports hold in both (a carry chain or a LUT that reads a gate inverts for free)."""
        graph = self.graph
        read = {u for nid in self.bits for u in graph.nodes[nid].inputs}
        finals = [*self.results, *self._registered, *(n for n in self.bits if n not in read)]
        seen: dict[int, dict[int, bytes]] = {}
        for nid in finals:
            for _, _, gate, inv in self.bits.get(nid, ()):
                if gate >= 0:
                    seen.setdefault(gate, {}).setdefault(inv, nid)
        out: dict[bytes, int] = {}
        for both in seen.values():
            if len(both) == 2:
                out[both[1]] = out.get(both[1], 0) + 1  # charged to the inverted one
        return out

    def cover(self) -> None:
        super().cover()
        for nid, n in self.inverted_outputs().items():
            self._luts[nid] = self._luts.get(nid, 0) + n

    def _borrow(self, a: bytes, b: bytes) -> Bit:
        """Return the borrow of ``a - b``; a constant ``b`` is keyed by its value, so ``x >= 1``
        and ``x + 0xFFFFFFFF`` (``x - 1``, as the optimiser writes it) share one."""
        node = self.graph.nodes.get(b)
        if node is not None and node.op == "const":
            b = b"const:%d" % (int(node.attr("value")) % (1 << node.type.flat_width))
        return super()._borrow(a, b)

    def _leaf_bits(self, nid: bytes, node: Node) -> list[Bit]:
        t = node.type
        if nid in self.units:  # the unit's output: what this op's operands know is not its
            return self._fresh(node.type.flat_width)
        if node.op == "add" and isinstance(t, IntType) and not t.signed:
            sub = self._subtracted(nid, node)
            if sub is not None:
                return sub
        operand = negated(node, [self._input(u, nid) for u in node.inputs])
        if operand is not None:
            assert isinstance(node.type, IntType)
            bits = neg_wiring(operand, node.type.signed)
            if bits is not None:
                return bits
        rom = self._rom_bits(nid, node)
        if rom is not None:
            return rom
        out = super()._leaf_bits(nid, node)
        if node.op == "add" and isinstance(t, IntType):
            out = self._known_sums(nid, node, out)
        elif node.op in ("sub", "neg") and isinstance(t, IntType):
            prefix = self.known_prefix(nid, node)[: len(out) - 1]  # not the borrow
            if prefix:
                self.known_low[nid] = len(prefix)
                out = [ZERO if x is None else x for x in prefix] + out[len(prefix):]
        elif node.op in ("mul", "widening_mul"):
            zeros = sum(_trailing_zeros(self._input(u, nid)) for u in node.inputs)
            out = [ZERO] * min(zeros, len(out)) + out[zeros:]
        return out

    def _bitwise(self, nid: bytes, node: Node) -> bool:
        """Also a ROM lookup whose index has at most ``rom_gates`` live bits (``_rom_bits``);
        never an op of a shared unit (``units``)."""
        if nid in self.units:
            return False
        if nid in self.rom_gated or is_bitwise(self.graph, node):
            return True
        if self.rom_gates and node.op == "array_index" and nid not in self.bits and \
                nid not in self.rom_reads:
            rom = self._rom_index(nid, node)
            if rom is not None and rom[0] <= self.rom_gates and rom[1] >= 1 << rom[0]:
                self.rom_gated.add(nid)
                return True
        return False

    def _rom_index(self, nid: bytes, node: Node) -> tuple[int, int] | None:
        """Return ``(b, n)`` of a lookup in an array of ``n`` constants by a variable index of
        ``b`` live bits (the bits that reach an entry), else None."""
        if node.op != "array_index":
            return None
        nodes = self.graph.nodes
        arr, idx = nodes[node.inputs[0]], nodes[node.inputs[1]]
        if arr.op != "array" or idx.op == "const" or not isinstance(idx.type, IntType) or any(
                nodes[e].op != "const" for e in arr.inputs):
            return None
        n = len(arr.inputs)
        b = min(significant_width(self._input(idx.id, nid), idx.type.signed),
                max(1, (n - 1).bit_length()))
        return b, n

    def _rom_bits(self, nid: bytes, node: Node, gated: bool = False) -> list[Bit] | None:
        """Return the bits of a lookup in an array of constants by a variable index (a ROM):
        a bit that every entry the index reaches has the same is that constant (yosys maps
        the ROM to LUTs and trims the constant bits and their flip-flops: edge_semantics'
        ``[10, 20, 30, 40][k]`` has bits 0, 6 and 7 zero), the others fresh leaves, or where
        ``gated`` each one gate of the index's live bits; None for any other node."""
        rom = self._rom_index(nid, node)
        if rom is None:
            return None
        b, _ = rom
        nodes = self.graph.nodes
        arr = nodes[node.inputs[0]]
        values = [int(nodes[e].attr("value")) for e in arr.inputs[: 1 << b]]
        index = self._input(node.inputs[1], nid)[:b]
        fresh = [] if gated else self._fresh(node.type.flat_width)
        out = []
        for k in range(node.type.flat_width):
            seen = {v >> k & 1 for v in values}
            if len(seen) == 1:
                out.append(ONE if seen.pop() else ZERO)
            else:
                out.append(self._gate(index) if gated else fresh[k])
        return out

    def known_prefix(self, nid: bytes, node: Node) -> list[Bit | None]:
        """Return the low bits of a subtraction or negation that are known before its chain
        starts (``x - (y << 9)`` keeps ``x``'s low 9 bits as wires, ``-(y << 9)`` has 9 zero
        bits): a wire or a constant by position, None for a constant 0; empty where the first
        bit already needs a carry cell."""
        ins = [self._input(u, nid) for u in node.inputs]
        a, b = (ins if node.op == "sub" else ([ZERO] * len(ins[0]), ins[0]))
        out: list[Bit | None] = []
        for x, y in zip(a, b, strict=False):  # the carry into each: 1 (no borrow) so far
            if y[0]:
                break
            if y[1] == 0:  # x - 0 with no borrow: x
                if x[0]:
                    out.append(x)
                    continue
                out.append(ONE if x[1] else None)
                continue
            if x[0] or x[1] == 0:  # 1 to subtract: the borrow depends on x, or is 1
                break
            out.append(None)  # 1 - 1
        return out

    def _known_sums(self, nid: bytes, node: Node, out: list[Bit]) -> list[Bit]:
        """Return the bits of ``a + b`` with the sum bits that the chain makes constant
        (both operand bits and the carry in known: ``kera.hls.carries``), as yosys does once
        it has taken out the known carry cells (``(a & 0x3) + (b & 0x3)`` has bit 3 zero),
        and those that are wires of one operand (its other bit and the carry in 0)."""
        from kera.hls.carries import chain_profile

        ins = [self._input(u, nid) for u in node.inputs]
        a, b = ([None if x[0] else x[1] for x in bits] for bits in ins)
        if all(x is None for x in (*a, *b)):
            return out
        n = len(out)
        prof = chain_profile(a[:n], b[:n])
        top = out[-1]  # a signed sum's sign, which its top bits copy: kept
        for i, (c, wire) in enumerate(zip(prof.constants, prof.wires, strict=True)):
            if out[i][2] >= 0 or len(out[i][0]) != 1 or out[i] == top:
                continue
            if c is not None:
                out[i] = ONE if c else ZERO
            elif wire is not None:
                out[i] = ins[wire][i]
        return out


    def _subtracted(self, nid: bytes, node: Node) -> list[Bit] | None:
        """Return the bits of ``x + c`` when the constant ``c`` is ``2**w - k`` for a ``k``
        narrower than ``x`` (the optimiser's ``x - k``): the low ``sig(x) + 1`` bits, the
        top one the borrow of ``x - k``, which the higher bits copy (``x < k`` wraps)."""
        nodes = self.graph.nodes
        w = node.type.flat_width
        for x, c in (node.inputs, node.inputs[::-1]):
            if nodes[c].op != "const" or nodes[x].op == "const":
                continue
            k = (1 << w) - int(nodes[c].attr("value")) % (1 << w)
            bits = self._input(x, nid)
            n = max(significant_width(bits, False), k.bit_length()) + 1
            if k <= 0 or k >= 1 << (w - 1) or n >= w:
                return None
            low = self._fresh(n)
            low[-1] = super()._borrow(x, b"const:%d" % k)
            return low + [low[-1]] * (w - n)
        return None


def tool_network(graph: Graph, k: int, cut: Callable[[bytes, bytes], bool] | None = None,
                 order: list[bytes] | None = None, wide: int = 0,
                 resets: frozenset[bytes] = frozenset(), area: bool = False,
                 rom_gates: int = 0, rom_reads: frozenset[bytes] = frozenset(),
                 units: frozenset[bytes] = frozenset()) -> ToolNetwork:
    """Return the :class:`ToolNetwork` of ``graph`` (every region, or the nodes of ``order``):
    the results and the next values of the state registers are materialised. ``area``: the
    resource estimate's network (``trim_bounds``); ``rom_gates``, ``rom_reads``, ``units``:
    see the class."""
    ids = order if order is not None else graph.canonical_order()
    results = [x for r in graph.regions.values() for x in (r.result, *(s.next for s in r.states))]
    net = ToolNetwork(graph, k, cut, wide=wide, results=tuple(results), resets=resets,
                      trim_bounds=area, rom_gates=rom_gates, rom_reads=rom_reads, units=units)
    net.build(ids, results)
    return net


__all__ = ["ONE", "ZERO", "BitNetwork", "Bit", "ToolNetwork", "element", "is_bitwise",
           "lut_count", "lut_levels", "network", "neg_wiring", "negated", "significant_width",
           "tool_network", "tuple_field", "updated"]
