"""Content addressing, interning, regions, fingerprints and graph helpers."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera.diagnostics import Span
from kera.ir.graph import Graph, Node, Region, const, node_id, param
from kera.ir.ops import OPS
from kera.ir.types import BOOL, ArrayType, TupleType, sint, uint

from .kernels import popcount32
from .randgraph import graphs, rebuild_shuffled


def test_node_id_encoding_is_pinned() -> None:
    """The id of ``const u8 5``, spelled out byte by byte from ARCHITECTURE.md invariant 2."""
    type_hash = hashlib.sha3_256(b"keg/type/v1\x00" + bytes([2, 8, 0])).digest()
    data = (b"keg/node/v1\x00" + b"\x00\x01" + b"\x00\x00\x00\x05const" + type_hash
            + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x05value" + b"\x01"
            + (5).to_bytes(16, "big"))
    want = hashlib.sha3_256(data).digest()
    g = Graph()
    assert const(g, uint(8), 5) == want
    assert want.hex() == "256fb363d378e2df4bbcb43513c655e936bae82daa147449d74de829b4322c84"


def test_string_and_negative_attributes_encode() -> None:
    t = sint(8)
    nid = node_id("param", t, (), (("index", 0), ("name", "é")))
    type_hash = hashlib.sha3_256(b"keg/type/v1\x00" + bytes([2, 8, 1])).digest()
    data = (b"keg/node/v1\x00\x00\x01" + b"\x00\x00\x00\x05param" + type_hash + bytes(4)
            + b"\x00\x00\x00\x02" + b"\x00\x00\x00\x05index\x01" + bytes(16)
            + b"\x00\x00\x00\x04name\x02" + b"\x00\x00\x00\x02" + "é".encode())
    assert nid == hashlib.sha3_256(data).digest()
    neg = node_id("const", t, (), (("value", -1),))
    assert neg != node_id("const", t, (), (("value", 255),))


def test_fingerprint_is_pinned() -> None:
    """Same graph, same fingerprint on every machine and run."""
    assert popcount32().fingerprint() == (
        "6a2adff602e4372c4df9e3c49d471b51fe9c84760ce36045946c93563b85fcc6")


def test_interning_is_cse_and_first_span_wins() -> None:
    g = Graph()
    x = param(g, 0, "x", uint(8), Span(0, 1))
    a = g.add("add", uint(8), [x, x], span=Span(5, 6))
    assert g.add("add", uint(8), (x, x), span=Span(9, 9)) == a
    assert len(g) == 2 and g.spans[a] == Span(5, 6)
    assert g[a] == Node("add", uint(8), (x, x), (), a)
    assert g[a].short().startswith("add#")


def test_attribute_order_does_not_matter() -> None:
    g = Graph()
    a = g.add("param", BOOL, (), {"name": "p", "index": 0})
    assert g.add("param", BOOL, (), {"index": 0, "name": "p"}) == a
    assert g[a].attrs == (("index", 0), ("name", "p"))
    assert g[a].attr("name") == "p" and g[a].attr_dict == {"index": 0, "name": "p"}


@pytest.mark.parametrize(
    ("op", "t", "make_inputs", "attrs", "message"),
    [
        ("frob", uint(8), lambda g, x: [x], None, "unknown opcode `frob`"),
        ("add", uint(8), lambda g, x: [x], None, "`add` takes 2 operands, not 1"),
        ("add", uint(8), lambda g, x: [x, b"\x00" * 32], None, "input 000000000000 is not"),
        ("add", uint(9), lambda g, x: [x, x], None, "result type must be u8, not u9"),
        ("add", uint(8), lambda g, x: [x, const(g, sint(8), 1)], None,
         "operands must have one integer type, not u8 and i8"),
        ("neg", uint(8), lambda g, x: [x], None, "operand must be a signed integer"),
        ("shl", uint(8), lambda g, x: [x, const(g, sint(8), 1)], None,
         "shift amount must be an unsigned integer, not i8"),
        ("const", uint(8), lambda g, x: [], {"value": 256}, "256 is out of range for u8"),
        ("const", BOOL, lambda g, x: [], {"value": 2}, "bool constant must be 0 or 1"),
        ("const", uint(8), lambda g, x: [], {"value": "1"}, "'1' is out of range"),
        ("const", uint(8), lambda g, x: [], None, "takes attributes (value), not (none)"),
        ("add", uint(8), lambda g, x: [x, x], {"lo": 1}, "takes attributes (), not (lo)"),
        ("slice", uint(4), lambda g, x: [x], {"lo": 5}, "bits 5..9 are outside u8"),
        ("slice", sint(4), lambda g, x: [x], {"lo": 0}, "result type must be unsigned"),
        ("concat", uint(64), lambda g, x: [const(g, uint(60), 0), x], None, "68 bits wide"),
        ("widening_mul", uint(64), lambda g, x: [const(g, uint(33), 0)] * 2, None,
         "at most 32 bits"),
        ("array", ArrayType(uint(8), 0 + 1), lambda g, x: [], None, "at least one element"),
        ("array_index", uint(8), lambda g, x: [x, x], None, "must be an array"),
        ("tuple_get", uint(8), lambda g, x: [x], {"index": 0}, "must be a tuple"),
        ("select", uint(8), lambda g, x: [x, x, x], None, "condition must be bool"),
        ("cast", BOOL, lambda g, x: [x], None, "result type must be an integer, not bool"),
        ("param", uint(8), lambda g, x: [], {"index": -1, "name": "a"}, "`index` must be"),
        ("param", uint(8), lambda g, x: [], {"index": 0, "name": ""}, "`name` must be"),
        ("const", uint(8), lambda g, x: [], {"value": True}, "must be an int or str"),
        ("const", uint(8), lambda g, x: [], {"value": 1 << 130}, "does not fit 128 bits"),
    ],
)
def test_type_rule_violations_raise(op, t, make_inputs, attrs, message) -> None:
    g = Graph()
    x = param(g, 0, "x", uint(8))
    inputs = make_inputs(g, x)
    with pytest.raises(ValueError) as info:
        g.add(op, t, inputs, attrs)
    assert message in str(info.value)


def test_regions_checked() -> None:
    g = Graph()
    x, y = param(g, 0, "x", uint(8)), param(g, 1, "y", uint(8))
    s = g.add("add", uint(8), (x, y))
    g.add_region(Region("f", (x, y), s))
    g.add_region(Region("f", (x, y), s))  # same again: fine
    with pytest.raises(ValueError, match="already exists"):
        g.add_region(Region("f", (x, y), x))
    g.add_region(Region("f", (x, y), x), replace=True)
    with pytest.raises(ValueError, match="parameter 0 has index 1"):
        g.add_region(Region("g", (y,), y))
    with pytest.raises(ValueError, match="uses parameter `y`, which is not in the region"):
        g.add_region(Region("g", (x,), s))
    with pytest.raises(ValueError, match="not a `param` node"):
        g.add_region(Region("g", (s,), s))
    with pytest.raises(ValueError, match="result 000000000000 is not in the graph"):
        g.add_region(Region("g", (), bytes(32)))
    with pytest.raises(ValueError, match="non-empty"):
        g.add_region(Region("", (), x))
    x2 = param(g, 1, "x", uint(16))
    with pytest.raises(ValueError, match="two parameters are named `x`"):
        g.add_region(Region("h", (x, x2), x))
    assert g.signature("f") == ([("x", uint(8)), ("y", uint(8))], uint(8))


def test_fingerprint_covers_names_and_results() -> None:
    g = popcount32()
    fp = g.fingerprint()
    region = g.regions["popcount32"]
    h = Graph()
    h.nodes = dict(g.nodes)
    h.add_region(Region("other", region.params, region.result))
    assert h.fingerprint() != fp
    g.spans.clear()
    g.source_path = "elsewhere.kera"
    assert g.fingerprint() == fp  # spans and paths are outside the hash
    assert Graph().fingerprint() == hashlib.sha3_256(b"keg/graph/v1\x00" + bytes(4)).hexdigest()


def test_helpers_topo_users_reachable_subgraph() -> None:
    g = Graph()
    x = param(g, 0, "x", uint(8))
    one = const(g, uint(8), 1)
    dead = g.add("mul", uint(8), (x, x))
    a = g.add("add", uint(8), (x, one))
    b = g.add("sub", uint(8), (a, x))
    g.add_region(Region("f", (x,), b))
    assert g.topo_order("f") == [x, one, a, b]
    assert g.topo_order([b]) == [x, one, a, b]
    assert g.reachable("f") == {x, one, a, b}
    assert g.users()[x] == [dead, a, b] and g.users()[b] == []
    sub = g.subgraph()
    assert list(sub.nodes) == [x, one, a, b] and sub.fingerprint() == g.fingerprint()
    c = g.copy()
    c.add("not", uint(8), (x,))
    assert len(c) == len(g) + 1
    assert g.canonical_order() == [x, one, a, b]


def test_topo_order_is_iterative() -> None:
    """A 20 000-deep chain: no recursion limit anywhere."""
    g = Graph()
    x = n = param(g, 0, "x", uint(32))
    one = const(g, uint(32), 1)
    for _ in range(20_000):
        n = g.add("add", uint(32), (n, one))
    g.add_region(Region("deep", (x,), n))
    assert len(g.topo_order("deep")) == 20_002
    assert len(g.subgraph(["deep"])) == 20_002


@settings(max_examples=30, deadline=None)
@given(graphs())
def test_fingerprint_ignores_construction_order(g: Graph) -> None:
    other = rebuild_shuffled(g, seed=len(g))
    assert other.fingerprint() == g.fingerprint()
    assert other.subgraph().canonical_order() == g.canonical_order()


_ANY_TYPES = [BOOL, uint(1), uint(8), sint(8), uint(64), ArrayType(uint(8), 2),
              ArrayType(BOOL, 1), TupleType(()), TupleType((uint(8), BOOL))]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(OPS)), st.lists(st.sampled_from(_ANY_TYPES), max_size=4),
       st.sampled_from(_ANY_TYPES),
       st.one_of(st.integers(-(1 << 70), 1 << 70), st.text(max_size=3)))
def test_type_rules_are_total(op: str, ins: list, out, attr_value) -> None:
    """Whatever a .keg file claims, a type rule answers with a message or None, never raises."""
    opdef = OPS[op]
    if opdef.arity is not None:
        ins = (ins * 4)[: opdef.arity] if ins else [BOOL] * opdef.arity
    attrs = {key: attr_value for key in opdef.attrs}
    result = opdef.type_rule(ins, attrs, out)
    assert result is None or (isinstance(result, str) and result)


def test_another_regions_param_is_an_error_only_where_reached() -> None:
    g = Graph()
    x, y = param(g, 0, "x", uint(8)), param(g, 0, "y", uint(8))
    s = g.add("add", uint(8), (x, y))
    g.add_region(Region("f", (x,), g.add("not", uint(8), (x,))))  # `y` is there, unreached
    with pytest.raises(ValueError, match="uses parameter `y`, which is not in the region"):
        g.add_region(Region("g", (x,), s))


def test_subgraph_of_a_graph_that_is_all_live_copies_every_table() -> None:
    g = Graph()
    x = param(g, 0, "x", uint(8), Span(0, 1))
    a = g.add("add", uint(8), (x, const(g, uint(8), 1)), span=Span(2, 3))
    g.add_region(Region("f", (x,), a))
    sub = g.subgraph(["f"])
    assert sub.nodes == g.nodes and sub.spans == g.spans and sub.nodes is not g.nodes
    g.add("mul", uint(8), (x, x), span=Span(4, 5))  # dead: left out with its span
    sub = g.subgraph(["f"])
    assert list(sub.nodes) == list(g.nodes)[:-1] and list(sub.spans) == [x, a]


def test_subgraph_out_of_topological_order_and_stale_spans() -> None:
    """A table not in topological order still keeps every reached node (the sweep falls back
    to a walk), and spans or state names of ids that are not nodes are left out."""
    g = Graph()
    x = param(g, 0, "x", uint(8))
    one = const(g, uint(8), 1)
    a = g.add("add", uint(8), (x, one), span=Span(2, 3))
    dead = g.add("mul", uint(8), (x, x), span=Span(4, 5))
    g.add_region(Region("f", (x,), a))
    g.nodes = {k: g.nodes[k] for k in (a, dead, x, one)}  # users before their inputs
    g.spans[b"\x00" * 32] = Span(6, 7)  # of no node
    g.state_names[b"\x01" * 32] = "gone"
    sub = g.subgraph(["f"])
    assert list(sub.nodes) == [a, x, one] and list(sub.spans) == [a] and not sub.state_names
    g.nodes = {k: g.nodes[k] for k in (x, one, a, dead)}
    sub = g.subgraph(["f"])
    assert list(sub.nodes) == [x, one, a] and list(sub.spans) == [a] and not sub.state_names


@settings(max_examples=40, deadline=None)
@given(graphs(), st.integers(0, 2))
def test_tracked_sinks_give_the_subgraph_of_the_sweep(g: Graph, region: int) -> None:
    """A graph that keeps its sinks (rebuilt through `add`) names exactly the unused nodes and
    gives every region's subgraph the untracked graph gives."""
    tracked = Graph(g.source_path)
    tracked.track_sinks()
    for node in g.nodes.values():
        tracked.add(node.op, node.type, node.inputs, dict(node.attrs))
    tracked.regions, tracked.spans = dict(g.regions), dict(g.spans)  # spans only of nodes
    assert tracked.nodes == g.nodes and tracked.spans.keys() <= tracked.nodes.keys()
    used = {i for node in g.nodes.values() for i in node.inputs}
    assert tracked.sinks == g.nodes.keys() - used
    for names in ([list(g.regions)[region % len(g.regions)]], None):
        mine, theirs = tracked.subgraph(names), g.subgraph(names)
        assert list(mine.nodes) == list(theirs.nodes)
        assert list(mine.spans.items()) == list(theirs.spans.items())
        assert mine.sinks is None and mine.fingerprint() == theirs.fingerprint()


def test_tracked_sinks_with_dead_users_fall_back_to_the_sweep() -> None:
    g = Graph()
    g.track_sinks()
    x = param(g, 0, "x", uint(8))
    one = const(g, uint(8), 1)
    two = const(g, uint(8), 2)  # unused and without inputs: unreached, no sweep needed
    a = g.add("add", uint(8), (x, one))
    g.add_region(Region("f", (x,), x))
    assert g.sinks == {two, a}
    assert list(g.subgraph(["f"]).nodes) == [x]  # `one` is only used by the dead `a`
    g.add_region(Region("f", (x,), a), replace=True)
    assert list(g.subgraph(["f"]).nodes) == [x, one, a]
    b = g.add_like(g.nodes[a], (a, one))
    assert g.sinks == {two, b}


def test_consuming_subgraph_takes_the_tables_and_empties_the_graph() -> None:
    g = Graph()
    x = param(g, 0, "x", uint(8), Span(0, 1))
    a = g.add("add", uint(8), (x, const(g, uint(8), 1)), span=Span(2, 3))
    g.add("mul", uint(8), (x, x), span=Span(4, 5))  # dead
    for _ in range(10):
        a = g.add("add", uint(8), (a, a), span=Span(6, 7))
    g.add_region(Region("f", (x,), a))
    want = g.subgraph(["f"])
    assert len(want.nodes) == len(g.nodes) - 1
    nodes = g.nodes
    sub = g.subgraph(["f"], consume=True)
    assert sub.nodes is nodes and list(sub.nodes) == list(want.nodes)
    assert list(sub.spans.items()) == list(want.spans.items())
    assert not g.nodes and not g.spans and not g.regions
