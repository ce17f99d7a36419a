"""The invariant validator finds every kind of broken graph."""

from __future__ import annotations

import dataclasses

import pytest

from kera.ir.graph import Graph, Node, Region, const, param
from kera.ir.types import sint, uint
from kera.ir.validate import InvariantError, check, validate

from .kernels import ALL


@pytest.mark.parametrize("name", sorted(ALL))
def test_kernels_are_valid(name: str) -> None:
    assert validate(ALL[name]()) == []


def _graph() -> tuple[Graph, bytes, bytes, bytes]:
    g = Graph()
    x = param(g, 0, "x", uint(8))
    one = const(g, uint(8), 1)
    s = g.add("add", uint(8), (x, one))
    g.add_region(Region("f", (x,), s))
    return g, x, one, s


def test_tampered_content_is_found() -> None:
    g, x, one, s = _graph()
    g.nodes[s] = dataclasses.replace(g.nodes[s], op="sub")
    assert validate(g) == [f"node sub#{s.hex()[:12]}: id does not match the hash of its content"]
    with pytest.raises(InvariantError, match="after `fold`: node sub#"):
        check(g, after="fold")


def test_type_rule_and_schema_breaks_are_found() -> None:
    g, x, one, s = _graph()
    bad = Node("add", sint(8), (x, one), (), s)
    g.nodes[s] = bad
    problems = validate(g)
    assert any("type rule broken: result type must be u8, not i8" in p for p in problems)
    assert any("id does not match" in p for p in problems)
    g.nodes[s] = Node("add", uint(8), (x, one), (("lo", 1),), s)
    assert "takes attributes (), not (lo)" in validate(g)[0]
    g.nodes[s] = Node("frob", uint(8), (), (), s)
    assert "unknown opcode `frob`" in validate(g)[0]
    g.nodes[s] = Node("add", uint(8), (x,), (), s)
    assert "has 1 operands; `add` takes 2" in validate(g)[0]


def test_order_missing_inputs_and_regions() -> None:
    g, x, one, s = _graph()
    g.nodes = {s: g.nodes[s], x: g.nodes[x], one: g.nodes[one]}  # user before its inputs
    assert any("does not precede it" in p for p in validate(g))
    g, x, one, s = _graph()
    del g.nodes[one]
    problems = validate(g)
    assert any(f"input {one.hex()[:12]} is not in the graph" in p for p in problems)
    g, x, one, s = _graph()
    g.regions["f"] = Region("f", (one,), s)
    assert validate(g) == ["region `f`: parameter 0 (" + one.hex()[:12]
                           + ") is not a `param` node of the graph"]
    g.regions["f"] = Region("g", (x,), s)
    assert validate(g) == ["region `g` is filed under the name `f`"]
    g.regions["f"] = Region("f", (x,), bytes(32))
    assert "is not in the graph" in validate(g)[0]
    g.nodes[bytes(32)] = g.nodes[x]
    assert any("is filed under another id" in p for p in validate(g))


def test_check_passes_a_sound_graph() -> None:
    g, *_ = _graph()
    check(g, after="build")


def test_a_trusted_graph_lends_its_verdict_only_to_its_own_node_objects() -> None:
    g, x, one, s = _graph()
    out = g.copy()  # the same node objects: nothing to re-check
    assert validate(out, trusted=g) == []
    out.nodes[s] = dataclasses.replace(g.nodes[s], op="sub")  # a new object: checked
    assert validate(out, trusted=g) == validate(out) != []
    with pytest.raises(InvariantError, match="after `fold`: node sub#"):
        check(out, after="fold", trusted=g)


def test_a_trusted_node_moved_before_its_inputs_is_found() -> None:
    g, x, one, s = _graph()
    out = g.copy()
    out.nodes = {s: g.nodes[s], x: g.nodes[x], one: g.nodes[one]}
    assert validate(out, trusted=g) == validate(out)
    assert any("does not precede it" in p for p in validate(out, trusted=g))
