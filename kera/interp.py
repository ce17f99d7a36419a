"""The reference interpreter: the executable definition of SEMANTICS.md, batched with numpy.

It walks a region's nodes in topological order and calls each opcode's ``evaluate`` from the
registry (``kera.ir.ops``): the registry *is* the semantics, there is no second copy here. Every
value is a batch (``kera.ir.values``), so one walk evaluates many input rows at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from kera.diagnostics import KeraError
from kera.ir import values
from kera.ir.graph import Graph
from kera.ir.ops import OPS
from kera.ir.values import Value


def evaluate(
    graph: Graph,
    region_name: str,
    inputs: Mapping[str, Value],
    *,
    rows: int | None = None,
) -> Value:
    """Evaluate region ``region_name`` on batched ``inputs`` (param name -> batch).

    Returns the batched result with every leaf expanded to the batch size: the common size of
    the inputs, or ``rows`` (needed only when the region has no parameters; default 1).
    Raises ``KeraError`` for an unknown region or missing, extra or malformed inputs.
    """
    region = graph.region_or_error(region_name)
    params, _ = graph.signature(region_name)
    rows = values.bind_inputs(params, inputs, rows)
    bound = {pid: inputs[name] for pid, (name, _) in zip(region.params, params, strict=True)}

    if region.stateful:
        if not rows:
            return _empty(graph, region_name)
        return values.join_rows(list(stream(graph, region_name, bound, rows)))

    nodes = graph.nodes
    order = graph.topo_order(region)
    last_use = {i: pos for pos, nid in enumerate(order) for i in nodes[nid].inputs}
    env: dict[bytes, Value] = {}
    for pos, nid in enumerate(order):
        node = nodes[nid]
        if node.op == "param":
            if nid not in bound:
                raise KeraError(f"`{region_name}` uses a parameter that is not in its signature")
            args = [bound[nid]]
        else:
            args = [env[i] for i in node.inputs]
        in_types = [nodes[i].type for i in node.inputs]
        env[nid] = OPS[node.op].evaluate(args, node.attr_dict, in_types, node.type)
        for i in node.inputs:  # free intermediates after their last use
            if last_use[i] == pos and i != region.result:
                env.pop(i, None)
    return values.broadcast(env[region.result], rows)


def stream(graph: Graph, region_name: str, bound: Mapping[bytes, Value],
           rows: int) -> Iterator[Value]:
    """Run a stateful region once per row of ``bound`` (param id -> batch), in order, each
    transfer starting from the state the previous one left (STATE.md's one rule); yield each
    transfer's result as a one-row batch."""
    region = graph.regions[region_name]
    nodes = graph.nodes
    order = graph.topo_order(region)
    pos = {nid: k for k, nid in enumerate(order)}
    steps = []  # (slot, evaluate, operand slots, attrs, in types, type) of each computed node
    inputs: list[tuple[int, bytes]] = []
    states: list[int] = []
    for k, nid in enumerate(order):
        node = nodes[nid]
        if node.op == "param":
            inputs.append((k, nid))
        elif node.op == "state":
            states.append(k)
        else:
            steps.append((k, OPS[node.op].evaluate, [pos[i] for i in node.inputs],
                          node.attr_dict, [nodes[i].type for i in node.inputs], node.type))
    if any(nid not in bound for _, nid in inputs):
        raise KeraError(f"`{region_name}` uses a parameter that is not in its signature")
    env: list[Value] = [np.zeros(0)] * len(order)
    init = evaluate_closed(graph, [slot.init for slot in region.states])
    state = [init[slot.init] for slot in region.states]
    result, nexts = pos[region.result], [pos[slot.next] for slot in region.states]
    for row in range(rows):
        for k, nid in inputs:
            env[k] = values.row_of(bound[nid], row)
        for k, value in zip(states, state, strict=True):
            env[k] = value
        for k, fn, args, attrs, ins, out in steps:
            env[k] = fn([env[a] for a in args], attrs, ins, out)
        state = [env[k] for k in nexts]
        yield env[result]


def evaluate_closed(graph: Graph, roots: list[bytes]) -> dict[bytes, Value]:
    """Evaluate parameter-free nodes (a state's initial value) on one row."""
    nodes = graph.nodes
    env: dict[bytes, Value] = {}
    for nid in graph.topo_order(roots):
        node = nodes[nid]
        env[nid] = OPS[node.op].evaluate([env[i] for i in node.inputs], node.attr_dict,
                                         [nodes[i].type for i in node.inputs], node.type)
    return env


def _empty(graph: Graph, region_name: str) -> Value:
    """Return a zero-row batch of the region's result type."""
    _, result_type = graph.signature(region_name)
    return values.stack([], result_type)


def run_jsonl(
    graph: Graph,
    region_name: str,
    lines: str | Path | Iterable[str],
    name: str | None = None,
) -> list[object]:
    """Evaluate a region on JSONL input lines (or a path); return one JSON value per line."""
    graph.region_or_error(region_name)
    params, result_type = graph.signature(region_name)

    def run(inputs: Mapping[str, Value], rows: int) -> Value:
        return evaluate(graph, region_name, inputs, rows=rows)

    return values.evaluate_jsonl(lines, params, result_type, run, name)


__all__ = ["evaluate", "run_jsonl"]
