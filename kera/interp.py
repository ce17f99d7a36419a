"""The reference interpreter: the executable definition of SEMANTICS.md, batched with numpy.

It walks a region's nodes in topological order and calls each opcode's ``evaluate`` from the
registry (``kera.ir.ops``): the registry *is* the semantics, there is no second copy here. Every
value is a batch (``kera.ir.values``), so one walk evaluates many input rows at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

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
