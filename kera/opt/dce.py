"""Dead-node elimination: keep only what some region reaches.

Guarantees: the result holds exactly the nodes reachable from the regions' params and results,
with their spans; regions, ids and so the fingerprint are unchanged.
"""

from __future__ import annotations

from kera.ir.graph import Graph


def dce(graph: Graph) -> Graph:
    """Return a new graph without the nodes that no region reaches."""
    return graph.subgraph()


__all__ = ["dce"]
