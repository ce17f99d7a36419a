"""Dead-node elimination keeps exactly the live nodes, their spans, and the fingerprint."""

from __future__ import annotations

from kera.diagnostics import Span
from kera.ir.types import uint
from kera.opt import dce
from tests.opt.kit import B

U8 = uint(8)


def test_dead_nodes_and_their_spans_go_and_live_ones_stay():
    b = B()
    x, y = b.param("x", U8), b.param("y", U8)  # y is unused, but a param: it stays
    dead = b.g.add("mul", U8, (x, x), None, Span(1, 2))
    live = b.g.add("add", U8, (x, b.c(U8, 1)), None, Span(3, 4))
    g = b.finish(live)
    out = dce(g)
    assert set(out.nodes) == {x, y, live, b.c(U8, 1)}
    assert dead not in out.spans and out.spans[live] == Span(3, 4)
    assert out.fingerprint() == g.fingerprint()
    assert dead in g.nodes  # the input graph is untouched
