"""Lowering a scheduled region to straight-line scalar code: the walk every backend shares.

A backend supplies an ``Emitter`` (how to write one scalar value, a select, an index test) and
one table keyed by opcode (``kera.ir.ops.OPS``): ``TABLE[op](em, call, args) -> Tree``. The walk
visits ``schedule.order`` (ARCHITECTURE.md, invariant 3) and keeps every node's value as a
*tree* of scalar operands shaped like its type: arrays are lists, tuples are tuples, scalars are
the backend's operand text (a C expression, a WAT expression, a PTX register). Aggregate opcodes
only rearrange trees (``structural``); scalar opcodes emit code from their operands' text
(``scalars`` makes their entries, typed ``ScalarLowering``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, Union

from kera.hls.pipeline import Schedule
from kera.ir.tables import Unsupported
from kera.ir.types import ArrayType, BoolType, IntType, TupleType, Type

if TYPE_CHECKING:
    from kera.backends.state import SlotPlan, StatePlan

Tree = Union[str, list["Tree"], tuple["Tree", ...], "MemVersion"]  # noqa: UP007 (recursive)
U32 = IntType(32, False)  # the type of a memory position (``kera.backends.memory``)


@dataclass(frozen=True, eq=False)
class Write:
    """One write of a transfer to an in-place array: where (a u32 operand, ``const`` when
    known; ``length`` is the scratch word of a write that does not happen) and the value."""

    pos: str
    const: int | None
    value: Tree


@dataclass(frozen=True, eq=False)
class MemVersion:
    """A version of an in-place array within a transfer: its state slot and the writes made
    to it so far, in order (writes under exclusive conditions may come in either order)."""

    slot: SlotPlan
    writes: tuple[Write, ...] = ()


@dataclass(frozen=True, slots=True)
class OpCall:
    """One node as a backend sees it: opcode, operand and result types, attributes, constants."""

    op: str
    ins: tuple[Type, ...]
    out: Type
    attrs: Mapping[str, Any]
    consts: tuple[int | None, ...]  # value of each operand that is a `const` node, else None


E = TypeVar("E", bound="Emitter")
Lowering = Callable[[E, OpCall, list[Tree]], Tree]  # any opcode: operand trees to a tree
ScalarLowering = Callable[[E, OpCall, list[str]], str]  # a scalar opcode: operands to an operand
Table = Mapping[str, Union[Lowering[E], Unsupported]]  # noqa: UP007 (generic alias)


class Emitter:
    """What a backend must provide besides its op table; one instance per emitted region.

    A stateful region also needs ``state_plan`` set and the four state methods below.
    """

    state_plan: StatePlan | None = None

    def state_leaf(self, slot: SlotPlan, leaf: int, t: Type) -> str:
        """Return the operand holding leaf ``leaf`` of a regs slot as the transfer starts."""
        raise NotImplementedError

    def position(self, idx: str, idx_t: IntType, limit: int) -> str:
        """Return a u32 operand holding ``min(idx, limit)``."""
        raise NotImplementedError

    def same(self, a: str, b: str) -> str:
        """Return a ``bool`` operand holding ``a == b`` for two u32 operands."""
        raise NotImplementedError

    def mem_load(self, slot: SlotPlan, leaf: int, pos: str, t: Type) -> str:
        """Return an operand holding word ``pos`` of an in-place slot's leaf buffer ``leaf``
        as the transfer started."""
        raise NotImplementedError

    def param(self, index: int, t: Type) -> Tree:
        """Return the operands holding parameter ``index`` for the current row."""
        raise NotImplementedError

    def const(self, t: Type, value: int) -> str:
        """Return an operand holding a scalar constant (``value`` canonical for ``t``)."""
        raise NotImplementedError

    def select(self, cond: str, a: str, b: str, t: Type) -> str:
        """Return an operand holding ``cond ? a : b`` for scalars of type ``t``."""
        raise NotImplementedError

    def index_is(self, idx: str, idx_t: IntType, k: int) -> str:
        """Return a ``bool`` operand holding ``idx == k``."""
        raise NotImplementedError

    def table_constant(self, operand: str) -> str | None:
        """Return the literal ``operand`` holds when it is a constant a table can keep as data
        (``table_read``); the default keeps none, so every dynamic index is a select chain."""
        return None

    def table_read(self, leaf: Type, values: tuple[str, ...], pos: str) -> str:
        """Return an operand holding ``values[pos]``, read from the one table of ``values``
        the backend keeps (``pos`` is already clamped)."""
        raise NotImplementedError

    def array_read(self, arr: list[Tree], idx: str, idx_t: IntType, elem: Type) -> Tree:
        """Return ``arr[min(idx, len-1)]`` for a dynamic index: a leaf column whose every
        element is a constant (``table_constant``: AES-128's S-box) is read from its one table
        at the clamped index (``position``, ``table_read``), any other is a select chain."""
        columns = list(zip(*(leaves_of(e) for e in arr), strict=True))
        literals = [[self.table_constant(x) for x in col] for col in columns]
        if all(None in col for col in literals):  # no constant column: one chain of trees
            result = arr[-1]
            for k in range(len(arr) - 2, -1, -1):
                result = select_tree(self, self.index_is(idx, idx_t, k), arr[k], result, elem)
            return result
        leaves = iter(zip(columns, literals, strict=True))
        tests: dict[int, str] = {}
        pos: list[str] = []

        def column(leaf: Type) -> str:
            operands, values = next(leaves)
            if None not in values:
                if not pos:
                    pos.append(self.position(idx, idx_t, len(arr) - 1))
                return self.table_read(leaf, tuple(v for v in values if v is not None), pos[0])
            result = operands[-1]
            for k in range(len(operands) - 2, -1, -1):
                if k not in tests:
                    tests[k] = self.index_is(idx, idx_t, k)
                result = self.select(tests[k], operands[k], result, leaf)
            return result

        return build_tree(elem, column)


def select_tree(em: Emitter, cond: str, a: Tree, b: Tree, t: Type) -> Tree:
    """Return ``cond ? a : b`` leaf by leaf for a value of any type."""
    if isinstance(t, ArrayType):
        assert isinstance(a, list) and isinstance(b, list), (a, b)
        return [select_tree(em, cond, x, y, t.elem) for x, y in zip(a, b, strict=True)]
    if isinstance(t, TupleType):
        assert isinstance(a, tuple) and isinstance(b, tuple), (a, b)
        pairs = zip(a, b, t.elems, strict=True)
        return tuple(select_tree(em, cond, x, y, e) for x, y, e in pairs)
    assert isinstance(a, str) and isinstance(b, str), (a, b)
    return em.select(cond, a, b, t)


# ----------------------------------------------------------------------------- structural ops


def lower_param(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``param``: the current row's values of parameter ``index``."""
    return em.param(call.attrs["index"], call.out)


def lower_const(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``const``: a scalar constant."""
    return em.const(call.out, call.attrs["value"])


def lower_select(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``select`` of any type; a constant condition picks an arm without code."""
    cond, a, b = args
    if call.consts[0] is not None:
        return a if call.consts[0] else b
    assert isinstance(cond, str), cond
    if isinstance(a, MemVersion) and isinstance(b, MemVersion):
        from kera.backends.memory import merge

        return merge(em, cond, a, b)
    return select_tree(em, cond, a, b, call.out)


def lower_state(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``state``: the slot's variables as the transfer starts, or its in-place array."""
    if em.state_plan is None:
        raise LoweringError("a `state` node outside a stateful region")
    slot = em.state_plan.slot(int(call.attrs["index"]))
    if slot.in_place:
        return MemVersion(slot)
    leaves = iter(range(len(slot.leaves)))
    return build_tree(call.out, lambda t: em.state_leaf(slot, next(leaves), t))


def lower_array(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``array``: the element trees as a list (no code)."""
    return list(args)


def lower_tuple(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``tuple``: the field trees as a tuple (no code)."""
    return tuple(args)


def lower_tuple_get(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``tuple_get``: one field's tree (no code)."""
    fields = args[0]
    assert isinstance(fields, tuple), fields
    return fields[call.attrs["index"]]


def lower_array_index(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``array_index``: a constant index picks the (clamped) element; otherwise ``array_read``."""
    arr, idx = args
    if isinstance(arr, MemVersion):
        from kera.backends.memory import read

        return read(em, call, arr, idx)
    assert isinstance(arr, list)
    k = call.consts[1]
    if k is not None:
        return arr[min(k, len(arr) - 1)]
    idx_t = call.ins[1]
    assert isinstance(idx_t, IntType) and isinstance(idx, str)
    return em.array_read(arr, idx, idx_t, call.out)


def lower_array_update(em: Emitter, call: OpCall, args: list[Tree]) -> Tree:
    """``array_update``: replace one element; an index past the end changes nothing."""
    arr, idx, val = args
    if isinstance(arr, MemVersion):
        from kera.backends.memory import update

        return update(em, call, arr, idx, val)
    assert isinstance(arr, list)
    k = call.consts[1]
    if k is not None:
        return [val if i == k else e for i, e in enumerate(arr)]
    idx_t, elem = call.ins[1], call.ins[2]
    assert isinstance(idx_t, IntType) and isinstance(idx, str)
    limit = 1 << idx_t.width  # elements the index type can reach
    return [select_tree(em, em.index_is(idx, idx_t, i), val, e, elem) if i < limit else e
            for i, e in enumerate(arr)]


STRUCTURAL: dict[str, Lowering[Emitter]] = {
    "param": lower_param,
    "state": lower_state,
    "const": lower_const,
    "select": lower_select,
    "array": lower_array,
    "array_index": lower_array_index,
    "array_update": lower_array_update,
    "tuple": lower_tuple,
    "tuple_get": lower_tuple_get,
}



def scalars(table: Mapping[str, ScalarLowering[E]]) -> dict[str, Lowering[E]]:
    """Return the table entries of scalar opcodes, whose every operand is one operand text."""

    def entry(op: str, fn: ScalarLowering[E]) -> Lowering[E]:
        def lower(em: E, call: OpCall, args: list[Tree]) -> Tree:
            texts = [a for a in args if isinstance(a, str)]
            if len(texts) != len(args):
                raise LoweringError(f"scalar opcode `{op}` has an aggregate operand")
            return fn(em, call, texts)

        return lower

    return {op: entry(op, fn) for op, fn in table.items()}


# ----------------------------------------------------------------------------- the walk


class LoweringError(Exception):
    """The schedule cannot be lowered (a compiler bug, never the user's program)."""


def walk(schedule: Schedule, em: E, table: Table[E]) -> Tree:
    """Lower every node of ``schedule.order`` through ``table``; return the result's tree."""
    return walk_state(schedule, em, table)[0]


def walk_state(schedule: Schedule, em: E, table: Table[E]) -> tuple[Tree, list[Tree]]:
    """Lower ``schedule.order`` through ``table``; return the result's tree and the tree of
    each state slot's next value (``region.states`` order; none for a pure region).

    In a stateful region only the nodes the result and the next values need are lowered (the
    initial values are the backend's business, ``kera.backends.state``)."""
    graph = schedule.graph
    region = graph.regions[schedule.region]
    nodes = graph.nodes
    env: dict[bytes, Tree] = {}
    order: Any = schedule.order
    if region.stateful:
        needed = set(graph.topo_order([*region.params, region.result,
                                       *(s.next for s in region.states)]))
        order = [nid for nid in schedule.order if nid in needed]
    for nid in order:
        node = nodes[nid]
        entry = table.get(node.op)
        if entry is None or isinstance(entry, Unsupported):
            why = entry.reason if entry is not None else "no table entry"
            raise LoweringError(f"opcode `{node.op}` cannot be lowered: {why}")
        try:
            args = [env[i] for i in node.inputs]
        except KeyError:
            raise LoweringError(f"schedule order uses {node.short()} before its inputs") from None
        ins = tuple(nodes[i].type for i in node.inputs)
        consts = tuple(_const_value(nodes[i]) for i in node.inputs)
        call = OpCall(node.op, ins, node.type, node.attr_dict, consts)
        env[nid] = entry(em, call, args)
    if region.result not in env:
        raise LoweringError("schedule order does not contain the region's result")
    if any(s.next not in env for s in region.states):
        raise LoweringError("schedule order does not contain a state's next value")
    return env[region.result], [env[s.next] for s in region.states]


def _const_value(node: Any) -> int | None:
    return int(node.attr("value")) if node.op == "const" else None


def leaves_of(tree: Tree) -> list[str]:
    """Return the scalar operands of a tree in layout order."""
    if isinstance(tree, str):
        return [tree]
    if isinstance(tree, MemVersion):
        raise LoweringError("an in-place array used as a value")
    return [x for sub in tree for x in leaves_of(sub)]


def build_tree(t: Type, make: Callable[[Type], str]) -> Tree:
    """Return a tree shaped like ``t`` whose leaves are ``make(leaf type)`` in layout order."""
    if isinstance(t, ArrayType):
        return [build_tree(t.elem, make) for _ in range(t.length)]
    if isinstance(t, TupleType):
        return tuple(build_tree(e, make) for e in t.elems)
    return make(t)


def int_type(t: Type) -> IntType:
    """Return ``t``, which the registry's type rules guarantee is an integer type."""
    assert isinstance(t, IntType), t
    return t


def is_scalar(t: Type) -> bool:
    """Return True for ``bool``, ``uN`` and ``iN``."""
    return isinstance(t, IntType | BoolType)


__all__ = [
    "STRUCTURAL",
    "Emitter",
    "Lowering",
    "LoweringError",
    "MemVersion",
    "OpCall",
    "ScalarLowering",
    "Table",
    "Tree",
    "U32",
    "Write",
    "build_tree",
    "int_type",
    "is_scalar",
    "leaves_of",
    "scalars",
    "select_tree",
    "walk",
    "walk_state",
]
