"""Small designs at the edges of the emitter: identity, constant result, no parameters."""

from __future__ import annotations

from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, ArrayType, uint


def edge_designs() -> dict[str, tuple[Graph, str, list[dict]]]:
    """Return name -> (graph, region, input rows)."""
    out = {}
    g = Graph()
    a = param(g, 0, "a", ArrayType(BOOL, 3))
    g.add_region(Region("ident", (a,), a))
    out["identity"] = (g, "ident", [{"a": [True, False, True]}, {"a": [0, 1, 1]}])
    g = Graph()
    a = param(g, 0, "a", uint(4))  # unused: the result is a constant
    g.add_region(Region("konst", (a,), const(g, uint(8), 42)))
    out["constant"] = (g, "konst", [{"a": 1}, {"a": 2}])
    g = Graph()
    g.add_region(Region("none", (), g.add("not", BOOL, [const(g, BOOL, 0)])))
    out["no-params"] = (g, "none", [{}, {}, {}])
    return out
