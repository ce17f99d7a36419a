"""The content-addressed graph: nodes named by the SHA3-256 of what they compute.

A node is (schema version, opcode, output type, input ids, attributes sorted by key); its id is
SHA3-256 over a domain-separated, length-prefixed encoding (ARCHITECTURE.md, invariant 2), so
adding a node that exists returns the existing id and common subexpressions merge for free.
A ``Graph`` keeps its nodes in insertion order, which is always topological (inputs first), and
names entry points as ``Region`` s. Source spans live in a side table outside the hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import NoReturn, TypeVar

from kera.diagnostics import KeraError, Span
from kera.ir.ops import OPS
from kera.ir.types import BoolType, IntType, Type

SCHEMA_VERSION = 1
NODE_DOMAIN = b"keg/node/v1\x00"
REGION_DOMAIN = b"keg/region/v1\x00"
GRAPH_DOMAIN = b"keg/graph/v1\x00"

AttrValue = int | str
Attrs = tuple[tuple[str, AttrValue], ...]

_ATTR_INT, _ATTR_STR = 1, 2
_INT_ATTR_MIN, _INT_ATTR_MAX = -(1 << 127), (1 << 127) - 1
_INT_TAG = bytes([_ATTR_INT])

_type_hashes: dict[Type, bytes] = {}
_op_prefixes: dict[str, bytes] = {}
_attr_keys: dict[str, bytes] = {}  # attribute key -> its length-prefixed encoding
_sha3 = hashlib.sha3_256
_NO_ATTRS_ENCODED = bytes(4)  # u32 attribute count 0
_COUNTS = tuple(n.to_bytes(4, "big") for n in range(8))  # u32 input counts, preassembled
_NO_ATTRS: dict[str, AttrValue] = {}  # shared, read-only: type rules never mutate attrs
_UNKNOWN = object()
_MAX_VERDICTS = 1 << 16
# (opcode, result type, input types, attributes) -> the type rule's message (None: it holds).
_verdicts: dict[tuple[str, Type, tuple[Type, ...], Attrs], str | None] = {}


# opcode -> (arity, whether it takes attributes, what its id hashes before the type): made once
_shapes: dict[str, tuple[int | None, bool, bytes]] = {}


def _shape(op: str) -> tuple[int | None, bool, bytes]:
    """Return (and remember) ``Graph.add``'s facts about opcode ``op``; raise ``ValueError``
    for an unknown opcode."""
    opdef = OPS.get(op)
    if opdef is None:
        raise ValueError(f"unknown opcode `{op}`")
    prefix = NODE_DOMAIN + SCHEMA_VERSION.to_bytes(2, "big") + _lp(op)
    shape = _shapes[op] = (opdef.arity, bool(opdef.attrs), prefix)
    return shape


# (opcode, result type, input count) -> what the id of an attribute-less node of that shape
# hashes before its inputs (prefix, type hash, count): filled by ``_head`` once it checked them.
_heads: dict[tuple[str, Type, int], bytes] = {}


def _head(op: str, t: Type, n: int, attrs: Mapping[str, AttrValue] | None
          ) -> tuple[bytes, Attrs, bytes]:
    """Return what ``Graph.add`` hashes before a node's ``n`` input ids, its canonical
    attributes and what it hashes after them; raise ``ValueError`` for an unknown opcode, a
    result that is no type, a wrong number of inputs or wrong attributes (in that order)."""
    arity, takes_attrs, prefix = _checked_shape(op, t)
    if arity is not None and n != arity:
        raise ValueError(f"`{op}` takes {arity} operands, not {n}")
    th = _type_hashes.get(t)
    if th is None:
        th = _type_hashes[t] = t.type_hash()
    head = prefix + th + (_COUNTS[n] if n < 8 else _u32(n))
    if attrs or takes_attrs:
        items = canonical_attrs(op, attrs)
        return head, items, encode_attrs(items) if items else _NO_ATTRS_ENCODED
    if len(_heads) >= _MAX_VERDICTS:
        _heads.clear()
    _heads[(op, t, n)] = head
    return head, (), _NO_ATTRS_ENCODED


def _checked_shape(op: str, t: Type) -> tuple[int | None, bool, bytes]:
    """Return ``_shape(op)``; raise ``ValueError`` for an unknown opcode or a result that is no
    type (``Graph.add``'s first two checks)."""
    shape = _shapes.get(op)
    if shape is None:
        shape = _shape(op)  # raises for an unknown opcode
    if not isinstance(t, Type):
        raise ValueError(f"`{op}`: result type must be a Type, not {t!r}")
    return shape


def _u32(n: int) -> bytes:
    return n.to_bytes(4, "big")


def _lp(text: str) -> bytes:
    """Return the u32-length-prefixed UTF-8 encoding of ``text``."""
    data = text.encode("utf-8")
    return _u32(len(data)) + data


def type_hash(t: Type) -> bytes:
    """Return the type's SHA3-256 hash (``keg/type/v1``), memoised per type value."""
    h = _type_hashes.get(t)
    if h is None:
        h = _type_hashes[t] = t.type_hash()
    return h


def encode_attrs(attrs: Attrs) -> bytes:
    """Return the canonical encoding of sorted attributes (count, then key, tag, payload)."""
    out = [_u32(len(attrs))]
    for key, value in attrs:
        k = _attr_keys.get(key)
        if k is None:
            k = _attr_keys[key] = _lp(key)
        out.append(k)
        if isinstance(value, str):
            out.append(bytes([_ATTR_STR]) + _lp(value))
        else:
            out.append(_INT_TAG + value.to_bytes(16, "big", signed=True))
    return b"".join(out)


def node_id(op: str, t: Type, inputs: tuple[bytes, ...], attrs: Attrs) -> bytes:
    """Return a node's id: SHA3-256 over its domain-separated canonical encoding."""
    prefix = _op_prefixes.get(op)
    if prefix is None:
        prefix = _op_prefixes[op] = NODE_DOMAIN + SCHEMA_VERSION.to_bytes(2, "big") + _lp(op)
    th = _type_hashes.get(t)
    if th is None:
        th = _type_hashes[t] = t.type_hash()
    n = len(inputs)
    count = _COUNTS[n] if n < 8 else n.to_bytes(4, "big")
    tail = encode_attrs(attrs) if attrs else _NO_ATTRS_ENCODED
    return _sha3(b"".join((prefix, th, count, *inputs, tail))).digest()


def node_id_parts(op: str, t: Type, n_inputs: int, attrs: Attrs) -> tuple[bytes, bytes]:
    """Return what ``node_id`` hashes before and after the input ids of a node with
    ``n_inputs`` inputs: ``node_id(op, t, ins, attrs)`` is
    ``sha3_256(b"".join((head, *ins, tail))).digest()`` (for interning many nodes of one shape).
    """
    prefix = NODE_DOMAIN + SCHEMA_VERSION.to_bytes(2, "big") + _lp(op)
    count = n_inputs.to_bytes(4, "big")
    return prefix + type_hash(t) + count, encode_attrs(attrs) if attrs else _NO_ATTRS_ENCODED


@dataclass(slots=True, eq=False)
class Node:
    """One operation: opcode, output type, input ids, sorted attributes, and its own id.

    Never mutate one: nodes are shared between graphs, and the id is the hash of the rest.
    (Not a frozen dataclass only because a frozen ``__init__`` costs several times as much,
    and ``Graph.add`` makes one per new node; the validator catches a tampered node.)
    """

    op: str
    type: Type
    inputs: tuple[bytes, ...]
    attrs: Attrs
    id: bytes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def attr(self, key: str) -> AttrValue:
        """Return the value of attribute ``key``; raise ``KeyError`` when absent."""
        for k, v in self.attrs:
            if k == key:
                return v
        raise KeyError(key)

    @property
    def attr_dict(self) -> dict[str, AttrValue]:
        """The attributes as a dict."""
        return dict(self.attrs)

    def short(self) -> str:
        """Return a short label such as ``add#1a2b3c4d5e6f`` for messages."""
        return f"{self.op}#{self.id.hex()[:12]}"


STATE_DOMAIN = b"keg/state/v1\x00"
INIT_OPS = frozenset({"const", "array", "tuple"})  # what a state's initial value is built of
_OP_OF = attrgetter("op")


@dataclass(frozen=True, slots=True)
class StateSlot:
    """One state element of a region (STATE.md): the ``state`` node that reads it as a transfer
    starts, the constant node of its initial value, and the node of its next value (the value
    the next transfer reads). ``read -> ... -> next`` is the recurrence; the back edge is the
    slot itself, so the graph of one transfer stays a DAG."""

    read: bytes
    init: bytes
    next: bytes


@dataclass(frozen=True, slots=True)
class Region:
    """A named entry point: its ``param`` node ids in order, its result node id, and its state
    elements in elaboration order (empty for a pure function)."""

    name: str
    params: tuple[bytes, ...]
    result: bytes
    states: tuple[StateSlot, ...] = ()

    @property
    def stateful(self) -> bool:
        """True when the region carries state across transfers."""
        return bool(self.states)

    def region_hash(self) -> bytes:
        """Return SHA3-256 over ``keg/region/v1``, the name, the param ids and the result id,
        then (stateful regions only) ``keg/state/v1`` and each slot's read, init and next ids:
        a pure region hashes as it always has."""
        data = [REGION_DOMAIN, _lp(self.name), _u32(len(self.params)), *self.params, self.result]
        if self.states:
            data += [STATE_DOMAIN, _u32(len(self.states))]
            for slot in self.states:
                data += [slot.read, slot.init, slot.next]
        return hashlib.sha3_256(b"".join(data)).digest()

    def remap(self, new_id: Mapping[bytes, bytes]) -> Region:
        """Return this region with every node id it names replaced through ``new_id``."""
        states = tuple(StateSlot(new_id[s.read], new_id[s.init], new_id[s.next])
                       for s in self.states)
        return Region(self.name, tuple(new_id[p] for p in self.params), new_id[self.result],
                      states)

    def roots(self) -> tuple[bytes, ...]:
        """Every node id the region names: params, state reads and inits, result, next values."""
        reads = tuple(x for slot in self.states for x in (slot.read, slot.init))
        return (*self.params, *reads, self.result, *(slot.next for slot in self.states))


def type_verdict(op: str, t: Type, in_types: tuple[Type, ...], items: Attrs) -> str | None:
    """Return what the opcode's type rule says of a node (None: it holds), memoised per
    (opcode, result type, input types, attributes): unrolled code asks the same question for
    most of its nodes, and the validator asks it again."""
    key = (op, t, in_types, items)
    msg = _verdicts.get(key, _UNKNOWN)
    if msg is _UNKNOWN:
        msg = OPS[op].type_rule(in_types, dict(items) if items else _NO_ATTRS, t)
        if len(_verdicts) >= _MAX_VERDICTS:
            _verdicts.clear()
        _verdicts[key] = msg
    return msg  # type: ignore[return-value]


def canonical_attrs(op: str, attrs: Mapping[str, AttrValue] | None) -> Attrs:
    """Return attributes sorted by key, checked against the opcode's schema."""
    if not attrs:
        items: Attrs = ()
    elif len(attrs) == 1:
        items = tuple(attrs.items())
    else:
        items = tuple(sorted(attrs.items()))
    want = OPS[op].attrs
    if len(items) != len(want) or any(k != w for (k, _), w in zip(items, want, strict=True)):
        got = ", ".join(k for k, _ in items) or "none"
        raise ValueError(f"`{op}` takes attributes ({', '.join(want)}), not ({got})")
    for key, value in items:
        if value.__class__ is str:
            continue
        if value.__class__ is not int and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"`{op}` attribute `{key}` must be an int or str, not {value!r}")
        if not _INT_ATTR_MIN <= value <= _INT_ATTR_MAX:
            raise ValueError(f"`{op}` attribute `{key}` does not fit 128 bits: {value}")
    return items



def _check_rule(op: str, type: Type, in_types: tuple[Type, ...], items: Attrs) -> None:
    """Raise ``ValueError`` unless opcode ``op``'s type rule holds (verdicts memoised)."""
    msg = _verdicts.get((op, type, in_types, items), _UNKNOWN)  # a hit without a call
    if msg is _UNKNOWN:
        msg = type_verdict(op, type, in_types, items)
    if msg is not None:
        _broken_rule(op, type, in_types, msg)  # type: ignore[arg-type]


def _broken_rule(op: str, type: Type, in_types: tuple[Type, ...], msg: str) -> NoReturn:
    """Raise the ``ValueError`` of a node that breaks opcode ``op``'s type rule."""
    args = ", ".join(str(t) for t in in_types)
    raise ValueError(f"`{op}`({args}) -> {type}: {msg}")


# Result type -> what the id of a `const` of that type hashes before its value's 16 bytes.
_const_heads: dict[Type, bytes] = {}
_const_rule = OPS["const"].type_rule


def _const_head(t: Type) -> bytes:
    """Return (and remember) ``_const_heads[t]``: ``node_id("const", t, (), (("value", v),))``
    is ``sha3_256(head + v.to_bytes(16, "big", signed=True)).digest()``."""
    head, tail = node_id_parts("const", t, 0, (("value", 0),))
    _const_heads[t] = head = head + tail[:-16]
    return head


MAX_II = 1 << 20
"""The longest initiation interval a region may ask for (`#[pipeline(ii = N)]`, the ``ii``
directive): the scheduler's reservation tables grow with it, and one that long already leaves
every operation of the largest program the unroll limit allows (2^20 iterations) a cycle of its
own, so a longer one shares no more."""


class Graph:
    """Interned nodes in topological insertion order, named regions, and a span side table."""

    __slots__ = ("directives", "nodes", "regions", "sinks", "source_path", "spans", "state_names")

    def __init__(self, source_path: str | None = None) -> None:
        self.nodes: dict[bytes, Node] = {}
        self.regions: dict[str, Region] = {}
        self.spans: dict[bytes, Span] = {}
        self.source_path = source_path
        # Hardware directives per region (e.g. {"ii": 2} from `#[pipeline(ii = 2)]`): how to
        # build the computation, not what it computes, so outside the fingerprint.
        self.directives: dict[str, dict[str, int]] = {}
        # The instance path of each state element (`biquad[2]/x1`), keyed by its `state` node:
        # what reports call it, outside the fingerprint (STATE.md).
        self.state_names: dict[bytes, str] = {}
        # The nodes no other node uses, kept up to date by ``add`` and ``add_like`` once set
        # (``track_sinks``); None when not kept. See ``track_sinks`` for what it promises.
        self.sinks: set[bytes] | None = None

    def track_sinks(self) -> None:
        """Keep ``sinks`` from now on, so that ``subgraph`` need not sweep the whole graph.

        Only for a graph whose nodes are all added through ``add``/``add_like`` or by a caller
        that updates ``sinks`` as they do (the loop replay), never deleted or replaced, and
        whose spans are only of its nodes: the elaborator's graph. Copies do not keep it.
        """
        users = {i for node in self.nodes.values() for i in node.inputs}
        self.sinks = {nid for nid in self.nodes if nid not in users}

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def __getitem__(self, node_id: bytes) -> Node:
        return self.nodes[node_id]

    def add(
        self,
        op: str,
        type: Type,
        inputs: Iterable[bytes] = (),
        attrs: Mapping[str, AttrValue] | None = None,
        span: Span | None = None,
    ) -> bytes:
        """Intern one node and return its id (the existing id when it is already present).

        Raises ``ValueError`` when the opcode, inputs, attributes or types are wrong: that is a
        bug in the compiler, not in the user's program.

        This is the elaborator's and the optimiser's hot path, so ``node_id`` and ``_check``
        are inlined here (same bytes hashed, same checks, same messages).
        """
        if inputs.__class__ is not tuple:
            _checked_shape(op, type)  # before the inputs are read, as the checks come
            inputs = tuple(inputs)
        n = len(inputs)
        # An attribute-less shape met before passed the checks of `_head` (equal types are of
        # one class): its head is all that is needed.
        head = None if attrs else _heads.get((op, type, n))
        if head is None:
            head, items, tail = _head(op, type, n, attrs)  # raises what is wrong
        else:
            items, tail = (), _NO_ATTRS_ENCODED
        try:  # node_id, inlined
            nid = _sha3(b"".join((head, *inputs, tail))).digest()
        except TypeError:  # an input that is not bytes
            bad = next(i for i in inputs if not isinstance(i, bytes))
            raise ValueError(f"`{op}`: input {_show_id(bad)} is not in the graph") from None
        nodes = self.nodes
        if nid not in nodes:  # a hit has the content, so the checks, of a node already added
            try:  # _check, inlined (the two-operand case without a list)
                in_types = (nodes[inputs[0]].type, nodes[inputs[1]].type) if n == 2 \
                    else tuple([nodes[i].type for i in inputs])
            except (KeyError, TypeError):  # an input not in the graph (or not hashable)
                self._check(op, type, inputs, items)  # raises, naming it
                raise
            if _verdicts.get((op, type, in_types, items), _UNKNOWN) is not None:
                _check_rule(op, type, in_types, items)  # not a memoised pass: ask, maybe raise
            nodes[nid] = Node(op, type, inputs, items, nid)
            sinks = self.sinks
            if sinks is not None:
                if n:
                    sinks.difference_update(inputs)
                sinks.add(nid)
        if span is not None:
            spans = self.spans
            if nid not in spans:
                spans[nid] = span
        return nid

    def add_const(self, type: Type, value: int, span: Span | None = None) -> bytes:
        """Return ``add("const", type, (), {"value": value}, span)`` (the same id, node, span
        and checks), for the elaborator's literals: the bytes the id hashes before the value
        are made once per type, and the type rule is asked without its memo (its verdict
        depends on the value, and a program has thousands of distinct constants)."""
        if value.__class__ is not int or not isinstance(type, Type) \
                or not _INT_ATTR_MIN <= value <= _INT_ATTR_MAX:
            return self.add("const", type, (), {"value": value}, span)  # raises as it does
        head = _const_heads.get(type)
        if head is None:
            head = _const_head(type)
        nid = _sha3(head + value.to_bytes(16, "big", signed=True)).digest()
        nodes = self.nodes
        if nid not in nodes:
            items = (("value", value),)
            msg = _const_rule((), {"value": value}, type)
            if msg is not None:
                _broken_rule("const", type, (), msg)
            nodes[nid] = Node("const", type, (), items, nid)
            if self.sinks is not None:
                self.sinks.add(nid)
        if span is not None:
            spans = self.spans
            if nid not in spans:
                spans[nid] = span
        return nid

    def add_like(self, node: Node, inputs: tuple[bytes, ...]) -> bytes:
        """Intern ``node`` with other inputs (as many) and return the id: ``add(node.op,
        node.type, inputs, node.attr_dict)`` without checking again what ``node``, a node of a
        graph, already satisfies (opcode, arity, attributes); the type rule is checked.
        """
        op, t, items = node.op, node.type, node.attrs
        nid = node_id(op, t, inputs, items)
        if nid not in self.nodes:
            self._insert(op, t, inputs, items, nid)
        return nid

    def _insert(self, op: str, t: Type, inputs: tuple[bytes, ...], items: Attrs,
                nid: bytes) -> None:
        """Check and store a node not yet in the graph; keep the sinks (if kept) up to date."""
        self._check(op, t, inputs, items)
        self.nodes[nid] = Node(op, t, inputs, items, nid)
        sinks = self.sinks
        if sinks is not None:
            sinks.difference_update(inputs)
            sinks.add(nid)

    def _check(self, op: str, type: Type, inputs: tuple[bytes, ...], items: Attrs) -> None:
        """Raise ``ValueError`` unless the inputs exist and the opcode's type rule holds.

        Verdicts are memoised per (opcode, result type, input types, attributes): unrolled code
        asks the same question for most of its nodes.
        """
        nodes = self.nodes
        try:
            in_types = tuple([nodes[i].type for i in inputs])
        except (KeyError, TypeError):
            bad = next(i for i in inputs if not isinstance(i, bytes) or i not in nodes)
            raise ValueError(f"`{op}`: input {_show_id(bad)} is not in the graph") from None
        _check_rule(op, type, in_types, items)

    def add_region(self, region: Region, replace: bool = False) -> None:
        """Name an entry point; its params must be this graph's ``param`` nodes 0, 1, ...

        Adding an equal region again is a no-op; a different one under the same name raises
        ``ValueError`` unless ``replace`` is true.
        """
        problem = region_problem(self, region)
        if problem:
            raise ValueError(f"region `{region.name}`: {problem}")
        old = self.regions.get(region.name)
        if old is not None and old != region and not replace:
            raise ValueError(f"region `{region.name}` already exists with another body")
        self.regions[region.name] = region

    def region_or_error(self, name: str) -> Region:
        """Return region ``name``; raise ``KeraError`` naming the regions there are when absent."""
        region = self.regions.get(name)
        if region is None:
            known = ", ".join(sorted(self.regions)) or "none"
            raise KeraError(f"no function named `{name}` in the graph (have: {known})")
        return region

    def signature(self, name: str) -> tuple[list[tuple[str, Type]], Type]:
        """Return a region's ([(param name, type), ...], result type)."""
        region = self.regions[name]
        params = [(str(self.nodes[p].attr("name")), self.nodes[p].type) for p in region.params]
        return params, self.nodes[region.result].type

    def state_name(self, read: bytes) -> str:
        """Return what reports call the state element read by ``read`` (`state{index}` when the
        graph does not know its source name)."""
        name = self.state_names.get(read)
        return name if name is not None else f"state{self.nodes[read].attr('index')}"

    def fingerprint(self) -> str:
        """Return the hex SHA3-256 of the exported regions (sorted by name)."""
        h = hashlib.sha3_256(GRAPH_DOMAIN + _u32(len(self.regions)))
        for name in sorted(self.regions, key=lambda n: n.encode("utf-8")):
            h.update(_lp(name) + self.regions[name].region_hash())
        return h.hexdigest()

    def users(self) -> dict[bytes, list[bytes]]:
        """Return node id -> ids of the nodes that use it (in insertion order, no repeats)."""
        out: dict[bytes, list[bytes]] = {nid: [] for nid in self.nodes}
        for nid, node in self.nodes.items():
            for i in dict.fromkeys(node.inputs):
                out[i].append(nid)
        return out

    def topo_order(
        self, roots: Region | str | bytes | Iterable[bytes], seen: set[bytes] | None = None
    ) -> list[bytes]:
        """Return the nodes reachable from ``roots`` in a canonical topological order.

        For a region (or its name) the roots are its params, then its result. The order is a
        depth-first post-order visiting inputs left to right, so it depends only on content.
        Nodes already in ``seen`` are skipped; ``seen`` is updated.
        """
        nodes = self.nodes
        done: set[bytes] = set() if seen is None else seen
        order: list[bytes] = []
        for root in _roots(self, roots):
            if root in done:
                continue
            stack: list[tuple[bytes, bool]] = [(root, False)]
            while stack:
                nid, expanded = stack.pop()
                if expanded:
                    if nid not in done:
                        done.add(nid)
                        order.append(nid)
                    continue
                if nid in done:
                    continue
                stack.append((nid, True))
                for i in reversed(nodes[nid].inputs):
                    if i not in done:
                        stack.append((i, False))
        return order

    def reachable(self, roots: Region | str | bytes | Iterable[bytes]) -> set[bytes]:
        """Return the ids of every node reachable from ``roots`` (a region, its name, or ids)."""
        nodes = self.nodes
        seen: set[bytes] = set()
        stack = list(_roots(self, roots))
        pop, push, mark = stack.pop, stack.extend, seen.add
        while stack:
            nid = pop()
            if nid not in seen:
                mark(nid)
                push(nodes[nid].inputs)
        return seen

    def canonical_order(self) -> list[bytes]:
        """Return every node reachable from the regions, region by region (sorted by name)."""
        seen: set[bytes] = set()
        order: list[bytes] = []
        for name in sorted(self.regions, key=lambda n: n.encode("utf-8")):
            order.extend(self.topo_order(self.regions[name], seen))
        return order

    def copy(self) -> Graph:
        """Return an independent copy (nodes are immutable and shared)."""
        g = Graph(self.source_path)
        g.nodes = dict(self.nodes)
        g.regions = dict(self.regions)
        g.spans = dict(self.spans)
        g.directives = {k: dict(v) for k, v in self.directives.items()}
        g.state_names = dict(self.state_names)
        return g

    def subgraph(self, names: Iterable[str] | None = None, consume: bool = False) -> Graph:
        """Return a graph with only the named regions (default all) and the nodes they reach.

        With ``consume`` this graph is not used again: its tables become the subgraph's
        (without copying them) and it is left empty.
        """
        wanted = list(self.regions) if names is None else list(names)
        dead = self._unreached(wanted)
        g = Graph(self.source_path)
        g.regions = {name: self.regions[name] for name in wanted}
        if dead is None:  # not in topological order: a walk from the roots
            keep: set[bytes] = set()
            for name in wanted:
                keep |= self.reachable(self.regions[name])
            g.nodes = _only(self.nodes, keep)
            g.spans = _only(self.spans, keep)
            g.state_names = _only(self.state_names, keep)
        else:
            g.nodes = _without(self.nodes, dead, consume)
            g.spans = _without(self.spans, dead, consume)
            g.state_names = _without(self.state_names, dead, consume)
            spans_ok = self.sinks is not None  # such a graph has spans only of its nodes
            if not spans_ok and (len(g.spans) > len(g.nodes)
                                 or not g.spans.keys() <= g.nodes.keys()):
                g.spans = {k: v for k, v in g.spans.items() if k in g.nodes}
            if not g.state_names.keys() <= g.nodes.keys():
                g.state_names = {k: v for k, v in g.state_names.items() if k in g.nodes}
        g.directives = {k: dict(v) for k, v in self.directives.items() if k in g.regions}
        if consume:
            self.nodes, self.spans, self.state_names, self.regions = {}, {}, {}, {}
            self.sinks = set() if self.sinks is not None else None
        return g

    def _unreached(self, names: list[str]) -> list[bytes] | None:
        """Return the nodes no named region reaches, found in one sweep against insertion order
        (users before their inputs); None when that order turns out not to be topological (an
        input met after its user), which the sweep sees as a node both reached and passed.

        A graph that keeps ``sinks`` needs no sweep when every sink that is not a root has no
        inputs: those few are then all that is unreached (in a DAG, every node is used, through
        a chain of users, by some sink; here every sink that uses anything is a root).
        """
        alive: set[bytes] = set()
        for name in names:
            alive.update(self.regions[name].roots())
        if self.sinks is not None:
            nodes = self.nodes
            unused = [nid for nid in self.sinks if nid not in alive]
            if not any(nodes[nid].inputs for nid in unused):
                return unused
        more = alive.update
        dead: list[bytes] = []
        passed = dead.append
        for nid, node in reversed(self.nodes.items()):
            if nid in alive:
                if node.inputs:
                    more(node.inputs)
            else:
                passed(nid)
        if len(alive) + len(dead) != len(self.nodes):
            return None
        return dead


_V = TypeVar("_V")


def _only(table: dict[bytes, _V], keep: set[bytes]) -> dict[bytes, _V]:
    """Return a copy of ``table`` with only the entries whose keys are in ``keep``, in order."""
    drop = table.keys() - keep
    if len(drop) * 8 > len(table):
        return {k: v for k, v in table.items() if k in keep}
    out = dict(table)  # most are kept: copy, then delete the few others (the order stays)
    for k in drop:
        del out[k]
    return out


def _without(table: dict[bytes, _V], drop: list[bytes], in_place: bool = False
             ) -> dict[bytes, _V]:
    """Return a copy of ``table`` without the entries whose keys are in ``drop``, in order
    (``table`` itself, those deleted, when ``in_place`` and they are few)."""
    if len(drop) * 8 > len(table):
        gone = set(drop)
        return {k: v for k, v in table.items() if k not in gone}
    out = table if in_place else dict(table)
    for k in drop:
        out.pop(k, None)
    return out


def _roots(graph: Graph, roots: Region | str | bytes | Iterable[bytes]) -> Iterable[bytes]:
    if isinstance(roots, bytes):
        return (roots,)
    if isinstance(roots, str):
        roots = graph.regions[roots]
    if isinstance(roots, Region):
        return roots.roots()
    return roots


def _show_id(nid: object) -> str:
    return nid.hex()[:12] if isinstance(nid, bytes) else repr(nid)


def region_problem(graph: Graph, region: Region) -> str | None:
    """Return what is wrong with ``region`` in ``graph`` (None when it is well formed)."""
    if not isinstance(region.name, str) or not region.name:
        return "the name must be a non-empty string"
    names: set[object] = set()
    for i, pid in enumerate(region.params):
        node = graph.nodes.get(pid)
        if node is None or node.op != "param":
            return f"parameter {i} ({_show_id(pid)}) is not a `param` node of the graph"
        attrs = node.attr_dict
        if attrs.get("index") != i:
            return f"parameter {i} has index {attrs.get('index')}"
        if attrs.get("name") in names:
            return f"two parameters are named `{attrs.get('name')}`"
        names.add(attrs.get("name"))
    if region.result not in graph.nodes:
        return f"result {_show_id(region.result)} is not in the graph"
    problem = _states_problem(graph, region)
    if problem:
        return problem
    params = set(region.params)
    reads = {slot.read for slot in region.states}
    ops = list(map(_OP_OF, graph.nodes.values()))  # counted in C: a graph has 100k's of nodes
    if ops.count("param") == len(params) and ops.count("state") == len(reads):
        return None  # no other region's param or state in the graph: none can be reached
    seen: set[bytes] = set()
    stack = [region.result, *(slot.next for slot in region.states)]
    while stack:  # tolerant of missing inputs: the validator reports those itself
        nid = stack.pop()
        node = graph.nodes.get(nid)
        if nid in seen or node is None:
            continue
        seen.add(nid)
        if node.op == "param" and nid not in params:
            name = node.attr_dict.get("name")
            return f"the result uses parameter `{name}`, which is not in the region"
        if node.op == "state" and nid not in reads:
            return f"the result uses state {node.attr_dict.get('index')}, which is not the region's"
        stack.extend(node.inputs)
    return None


def _states_problem(graph: Graph, region: Region) -> str | None:
    """Return what is wrong with the region's state slots (None when they are well formed)."""
    for i, slot in enumerate(region.states):
        read, init, nxt = (graph.nodes.get(x) for x in (slot.read, slot.init, slot.next))
        if read is None or read.op != "state":
            return f"state {i}: its read {_show_id(slot.read)} is not a `state` node of the graph"
        if read.attr_dict.get("index") != i:
            return f"state {i} has index {read.attr_dict.get('index')}"
        if init is None or nxt is None:
            return f"state {i}: its initial or next value is not in the graph"
        if init.type != read.type or nxt.type != read.type:
            return (f"state {i} is {read.type}, but its initial value is {init.type} and its "
                    f"next value {nxt.type}")
        stack, seen = [slot.init], set()
        while stack:
            nid = stack.pop()
            node = graph.nodes.get(nid)
            if nid in seen or node is None:
                continue
            seen.add(nid)
            if node.op not in INIT_OPS:
                return f"state {i}: its initial value uses `{node.op}`, not only constants"
            stack.extend(node.inputs)
    return None


def const(graph: Graph, t: Type, value: int | bool, span: Span | None = None) -> bytes:
    """Add a constant of type ``t``; ints are reduced modulo 2**N, bools become 0/1."""
    if isinstance(t, BoolType):
        v = int(bool(value))
    elif isinstance(t, IntType):
        v = t.wrap(int(value))
    else:
        raise ValueError(f"constants must be integers or bools, not {t}")
    return graph.add("const", t, (), {"value": v}, span)


def param(graph: Graph, index: int, name: str, t: Type, span: Span | None = None) -> bytes:
    """Add parameter number ``index`` named ``name`` of type ``t``."""
    return graph.add("param", t, (), {"index": index, "name": name}, span)


__all__ = [
    "GRAPH_DOMAIN",
    "MAX_II",
    "NODE_DOMAIN",
    "REGION_DOMAIN",
    "SCHEMA_VERSION",
    "STATE_DOMAIN",
    "Attrs",
    "AttrValue",
    "Graph",
    "Node",
    "Region",
    "StateSlot",
    "canonical_attrs",
    "type_verdict",
    "const",
    "encode_attrs",
    "node_id",
    "node_id_parts",
    "param",
    "region_problem",
    "type_hash",
]
