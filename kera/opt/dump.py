"""Readable text dumps of a graph, one line per node, for ``--dump-after`` and for tests."""

from __future__ import annotations

from kera.diagnostics import SourceFile, Span, read_source
from kera.ir.graph import Graph, Node


def format_graph(graph: Graph, source: SourceFile | None = None) -> str:
    """Return the regions of ``graph`` as text: ``%12 = add.u32 %3, %7  ; file:9:16``.

    Nodes are numbered in canonical order (region by region, inputs first), so the dump of a
    graph depends only on its content. Source locations come from the span side table, shown
    as ``path:line:col`` when the source text is known (``source``, or the graph's
    ``source_path`` when it names a readable file) and as byte ranges otherwise.
    """
    if source is None:
        source = read_source(graph.source_path)
    index: dict[bytes, int] = {}
    lines: list[str] = []
    for name in sorted(graph.regions, key=lambda n: n.encode("utf-8")):
        region = graph.regions[name]
        params, result = graph.signature(name)
        sig = ", ".join(f"{p}: {t}" for p, t in params)
        lines.append(f"fn {name}({sig}) -> {result} {{")
        for nid in graph.topo_order(region):
            if nid in index:
                continue
            index[nid] = len(index)
            node = graph.nodes[nid]
            text = f"  %{index[nid]} = {node.op}.{node.type}{_operands(node, index)}"
            span = graph.spans.get(nid)
            if span is not None:
                text = f"{text:<48} ; {_where(span, source)}"
            lines.append(text)
        lines.append(f"  return %{index[region.result]}")
        lines.append("}")
    return "\n".join(lines) + "\n"


def _operands(node: Node, index: dict[bytes, int]) -> str:
    parts = [f"%{index[i]}" for i in node.inputs]
    for key, value in node.attrs:
        if node.op in ("const", "param") and key in ("value", "name"):
            parts.append(str(value))
        elif not (node.op == "param" and key == "index"):
            parts.append(f"{key}={value}")
    return " " + ", ".join(parts) if parts else ""


def _where(span: Span, source: SourceFile | None) -> str:
    return source.location(span) if source is not None else f"@{span.start}..{span.end}"


__all__ = ["format_graph"]
