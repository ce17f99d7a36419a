"""The graph invariant validator, run after every pass that produces a graph.

``validate`` lists every broken invariant; ``check`` raises ``InvariantError`` naming the pass
that broke one. A broken invariant is always a compiler bug, never the user's fault. Given the
sound graph a pass started from (``trusted``), both re-check only the nodes that are not the
very node objects of that graph: the rest keep their verdict, so a pass that changed little
is checked at the cost of its change (plus one cheap sweep for the order of inputs).
"""

from __future__ import annotations

from kera.ir.graph import Graph, Node, canonical_attrs, node_id, region_problem, type_verdict
from kera.ir.ops import OPS


class InvariantError(AssertionError):
    """A graph invariant does not hold: a bug in the pass that produced the graph."""


def validate(graph: Graph, trusted: Graph | None = None) -> list[str]:
    """Return every broken invariant of ``graph`` as a one-line message (empty when sound).

    Checks: every input resolves and precedes its user (so the graph is acyclic), every id
    recomputes from the node's content, attributes match the opcode's schema, type rules
    hold, and every region's params are its ``param`` nodes and its result resolves.

    ``trusted``, a graph known to be sound, lends its verdict to every node of ``graph`` that
    is the very object ``trusted`` files under the same id: such a node's content (so its id,
    attributes and arity) was checked, and its inputs' types follow from their ids, which are
    checked where the inputs are new. Only the order of its inputs is checked again. The
    verdict (sound or not) is the one a full check gives.
    """
    problems: list[str] = []
    seen: set[bytes] = set()
    old = {} if trusted is None else trusted.nodes
    for key, node in graph.nodes.items():
        if old.get(key) is node and all(i in seen for i in node.inputs):
            seen.add(key)
            continue
        found = _node_problems(graph, key, node, seen)
        if found:
            label = f"node {node.short()}" if isinstance(node, Node) else f"node {key.hex()[:12]}"
            problems.extend(f"{label}: {msg}" for msg in found)
        seen.add(key)
    for name, region in graph.regions.items():
        if name != region.name:
            problems.append(f"region `{region.name}` is filed under the name `{name}`")
        elif msg := region_problem(graph, region):
            problems.append(f"region `{name}`: {msg}")
    return problems


def _node_problems(graph: Graph, key: bytes, node: object, seen: set[bytes]) -> list[str]:
    if not isinstance(node, Node):
        return [f"is a {type(node).__name__}, not a Node"]
    if node.id != key:
        return [f"is filed under another id ({key.hex()[:12]})"]
    opdef = OPS.get(node.op)
    if opdef is None:
        return [f"has the unknown opcode `{node.op}`"]
    out: list[str] = []
    for i in node.inputs:
        if i not in graph.nodes:
            out.append(f"input {i.hex()[:12]} is not in the graph")
        elif i not in seen:
            out.append(f"input {graph.nodes[i].short()} does not precede it (cycle or disorder)")
    if out:
        return out
    if opdef.arity is not None and len(node.inputs) != opdef.arity:
        return [f"has {len(node.inputs)} operands; `{node.op}` takes {opdef.arity}"]
    if node.attrs or opdef.attrs:  # (none, where none are taken, is in order)
        try:
            if canonical_attrs(node.op, dict(node.attrs)) != node.attrs:
                out.append("attributes are not sorted by key")
        except ValueError as e:
            return [str(e)]
    if node_id(node.op, node.type, node.inputs, node.attrs) != node.id:
        out.append("id does not match the hash of its content")
    nodes = graph.nodes
    msg = type_verdict(node.op, node.type, tuple([nodes[i].type for i in node.inputs]),
                       node.attrs)
    if msg:
        out.append(f"type rule broken: {msg}")
    return out


def check(graph: Graph, after: str, trusted: Graph | None = None) -> None:
    """Raise ``InvariantError`` naming the pass ``after`` when ``graph`` breaks an invariant
    (``trusted``: a sound graph whose nodes need no new check, as for ``validate``)."""
    problems = validate(graph, trusted)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise InvariantError(f"graph invariant broken after `{after}`: {problems[0]}{more}")


__all__ = ["InvariantError", "check", "validate"]
