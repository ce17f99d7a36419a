"""Sharing classes: which ops may share a unit, their roles, sources and multiplexer cost.

A candidate's class (``class_key``) is its op, operand and result types, attributes and source
span: the ops one source expression gives in the iterations of an unrolled loop. A class that
needs several units is split by ``role`` (per operand, the class of the op it reads). A unit
port's multiplexer costs only where its members' *sources* (``source_keys``) differ
(``port_cost``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kera.ir.types import BoolType, IntType

if TYPE_CHECKING:
    from kera.hls.schedule import Problem
    from kera.hls.timing import CostModel

#: Op kinds that may be shared; the cost model decides which classes are worth it. Constant
#: shifts, slices, casts and concatenations are wiring: never units (their sources are looked
#: through). A lookup in a table of constants by a variable index (``array_index``, not a
#: block RAM ROM's read) is a candidate too (``class_key``).
CANDIDATES: frozenset[str] = frozenset({
    "mul", "widening_mul", "div", "rem", "add", "sub", "neg", "min", "max",
    "and", "or", "xor", "not", "select", "eq", "ne", "lt", "le", "gt", "ge",
    "shl", "shr", "rotl", "rotr"})
#: Ops whose value is a function of their operands only (looked through for sources).
PURE = CANDIDATES | frozenset({"slice", "concat", "cast", "array", "array_index",
                                "array_update", "tuple", "tuple_get", "popcount", "clz", "ctz"})
SHIFTS = frozenset({"shl", "shr", "rotl", "rotr"})
#: The LUTs per bit of a private bitwise op (and, xor, not, ...): merged with its neighbours
#: into LUT4 cones (about two 2-input ops per LUT); a shared one is a LUT per bit of its own.
BITWISE_MERGED = 0.5


@dataclass
class Group:
    """The ops of one class that share ``units`` units."""

    kind: str
    members: list[int]
    units: int
    in_widths: tuple[int, ...]
    in_signed: tuple[bool, ...]
    width: int
    mux_ns: float
    dsp_units: int  # units that take DSP blocks (multiplies)
    sources: tuple[int, ...] = ()  # distinct sources per operand port (predicted)
    mux_lut: float = 0.0  # the multiplexers and ROMs of one unit (predicted)


@dataclass
class Plan:
    """The sharing set-up of a problem: groups, node -> group, and why classes were not shared."""

    groups: list[Group] = field(default_factory=list)
    of: dict[int, int] = field(default_factory=dict)
    declined: list[str] = field(default_factory=list)
    slot_ns: list[float] | None = None  # each group's start time in a stage (``unit_slots``)
    eager: bool = False  # whether ``configure(eager=True)`` keeps other classes


def scalar(t: Any) -> bool:
    """Whether ``t`` is an integer or a bool (what a unit computes on)."""
    return isinstance(t, IntType | BoolType)


def class_key(problem: Problem, v: int) -> tuple[Any, ...] | None:
    """Return the class of node ``v`` (op, types, attributes, source span), or None when it is
    no candidate (wiring, a constant shift, a non-scalar)."""
    graph = problem.graph
    node = graph.nodes[problem.ids[v]]
    if v in problem.roms:
        return None  # a block RAM ROM's read port
    if node.op == "array_index" and scalar(node.type) and _table_lookup(graph, node):
        table = node.inputs[0]  # one table: the unit is one ROM, its index multiplexed
        span = graph.spans.get(node.id)
        where = None if span is None else (span.start, span.end)
        return (node.op, str(node.type), (table, str(graph.nodes[node.inputs[1]].type)),
                node.attrs, where)
    if node.op not in CANDIDATES or not scalar(node.type):
        return None
    if node.op in SHIFTS and graph.nodes[node.inputs[1]].op == "const":
        return None  # wiring
    ins = [graph.nodes[i].type for i in node.inputs]
    if not all(scalar(t) for t in ins):
        return None
    span = graph.spans.get(node.id)
    where = None if span is None else (span.start, span.end)
    return (node.op, str(node.type), tuple(str(t) for t in ins), node.attrs, where)


#: Bitwise ops whose output bit ``i`` is a function of their operands' bits ``i`` alone.
_PER_BIT = frozenset({"and", "or", "xor", "not"})


def wiring(graph: Any, node: Any) -> bool:
    """Whether ``node`` takes no LUT of its own: a bitwise op each of whose output bits is one
    input bit, inverted or not, or a constant (``x & 0x80``, ``x ^ 0xff``, ``!x``, ``select(c,
    0x1b, 0)``), which a LUT reading it absorbs: private it costs nothing, a unit of them is its
    multiplexers alone (``decide._op_costs``). AES's ``xtime`` select ``(b >> 7) * 0x1b`` at II
    4 was 144 selects on 36 units, a 4:1 multiplexer bit each and a LUT level on every
    MixColumns path."""
    consts = [graph.nodes[i].op == "const" for i in node.inputs]
    if node.op in _PER_BIT:
        return sum(not c for c in consts) <= 1
    return node.op == "select" and consts[1] and consts[2]


def _table_lookup(graph: Any, node: Any) -> bool:
    """Whether ``node`` (an ``array_index``) looks up an array of constants by a variable
    scalar index: an S-box, which a unit serves as one LUT ROM behind an index multiplexer."""
    idx = graph.nodes[node.inputs[1]]
    return constant_array(graph, node.inputs[0]) and idx.op != "const" and scalar(idx.type)


def constant_array(graph: Any, nid: bytes) -> bool:
    """Whether node ``nid`` is an array of constants (a table): a constant in every stage,
    never registered (the emitter writes it as a ROM function)."""
    node = graph.nodes[nid]
    return node.op == "array" and all(graph.nodes[e].op == "const" for e in node.inputs)


def role(problem: Problem, v: int) -> tuple[Any, ...]:
    """Return the role of ``v`` in its loop body: per operand, the class of the op it reads
    (``class_key``), or its kind (a parameter, a constant, the op of wiring). A member reading a
    parameter (an early iteration) takes the most common role that agrees on the other ports.

    A class of the ops one source expression gives that needs several units (SHA-256's
    reassociated ``t1`` adds: four per round) is split by role, so that each role folds onto
    one unit and reads one source.
    """
    graph = problem.graph
    fixed: dict[bytes, bool] = problem.__dict__.setdefault("_fixed", {})

    def inputs_only(nid: bytes) -> bool:  # a parameter, or wiring of parameters and constants
        if nid not in fixed:
            node = graph.nodes[nid]
            fixed[nid] = node.op == "param" or (node.op in PURE and key_of(problem, nid) is None
                                                and all(inputs_only(i) for i in node.inputs))
        return fixed[nid]

    out: list[Any] = []
    for i in graph.nodes[problem.ids[v]].inputs:
        node = graph.nodes[i]
        if node.op == "const":
            out.append(node.op)
            continue
        if inputs_only(i):
            out.append("param")
            continue
        out.append(key_of(problem, i) or node.op)
    return tuple(out)


def key_of(problem: Problem, nid: bytes) -> tuple[Any, ...] | None:
    """``class_key`` of the node ``nid``."""
    index = problem.__dict__.get("_index")
    if index is None:  # (not ``setdefault``: it would build the dict at every call)
        index = problem.__dict__["_index"] = {n: k for k, n in enumerate(problem.ids)}
    return class_key(problem, index[nid])



def source_keys(problem: Problem, index: dict[bytes, int], cls_of: dict[int, int],
                 one_unit: set[int], units: dict[int, int] | None = None
                 ) -> tuple[list[int], dict[int, int]]:
    """Return each node's source key (interned) and key -> constant value for constants.

    A member of a class shared on one unit is that class; of a class on ``units[c]`` units,
    that class and its rank modulo the units (one source per unit: the binding keeps a unit's
    role, ``binding.assign``, and its values are read from its delay line); a constant its value; a
    parameter or state read itself; any other node its op over its inputs' keys (so wiring of
    one shared output is one source).
    """
    graph = problem.graph
    intern: dict[tuple[Any, ...], int] = {}
    consts: dict[int, int] = {}
    keys = [0] * problem.size
    rank: dict[int, dict[int, int]] = {}
    if units:
        for m, cl in sorted(cls_of.items()):
            if cl not in one_unit:
                r = rank.setdefault(cl, {})
                r[m] = len(r) % units[cl]

    def get(t: tuple[Any, ...]) -> int:
        k = intern.get(t)
        if k is None:
            k = intern[t] = len(intern)
        return k

    for v in range(problem.size):
        node = graph.nodes[problem.ids[v]]
        c = cls_of.get(v)
        if problem.const[v]:
            value = int(node.attr("value")) if scalar(node.type) else None
            keys[v] = get(("c", node.id))
            if value is not None:
                consts[keys[v]] = value
        elif c is not None and c in one_unit:
            keys[v] = get(("k", c))
        elif c is not None and c in rank:  # several units: at most one source per unit
            keys[v] = get(("k", c, rank[c][v]))
        elif (c is not None or node.op in ("param", "state") or v in problem.virtual
              or node.op not in PURE):
            keys[v] = get(("n", v))
        else:
            keys[v] = get((node.op, str(node.type), node.attrs,
                           tuple(keys[index[i]] for i in node.inputs)))
    return keys, consts


def mux_lut_per_input(costs: CostModel) -> float:
    """Return the LUTs a multiplexer bit costs per input beyond the first: a 2:1 select's.

    yosys 0.70 on ECP5 (yosys-only LUT4 counts, docs/models.md): sha256's unit multiplexers at
    II = 64 cost 1.0 LUT per input beyond the first once identical bit columns are counted once
    (``columns``), in its two schedules (20 and 5 inputs a column on average)."""
    return costs._query_area(("select", 8, None))["lut"] / 8.0


def port_cost(keys: set[int], consts: dict[int, int], width: int, sel: float,
              share: int = 1) -> tuple[float, int]:
    """Return (LUTs, multiplexer inputs) of a unit operand reading ``keys`` (its sources).

    Distinct constants are one more input: a ROM on the counter of about
    ``bits * ceil(entries / 16)`` LUTs; ``share`` caps the inputs (the ops of one unit).
    """
    values = [consts[k] for k in keys if k in consts]
    others = len(keys) - len(values)
    inputs = min(share, others + (1 if values else 0))
    lut = sel * width * (inputs - 1)
    distinct = len(set(values))
    if distinct > 1:
        bits = max(1, min(width, max(abs(x).bit_length() for x in values)))
        lut += bits * math.ceil(min(distinct, share) / 16)
        inputs = max(inputs, 2)
    return lut, inputs
