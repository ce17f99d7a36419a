"""A walk that asks its rule only about unsettled nodes gives the graph of a full walk.

``Rewriter.run_asking`` copies the nodes its caller says the rule would keep, until the rule
first changes something; ``bits`` uses it with the nodes it kept before under their present
demand. The -O2 graph must be the very same as with full walks: the same node ids in the
same order, the same spans and regions — and a walk that finds nothing gives its input back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kera.elaborate import build_program
from kera.ir.graph import Graph
from kera.opt import optimize
from kera.opt.bits import bits_walk, clear_caches
from kera.opt.rewrite import Rewriter, Term, rewrite

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "examples").glob("*.kera")) + sorted(
    (Path(__file__).parent / "kernels").glob("*.kera"))


def _exact(g: Graph) -> tuple:
    return list(g.nodes), list(g.spans.items()), g.regions


def _full_walk(self: Rewriter, ask: object, all_live: bool = False) -> Graph:
    return self.run()


@pytest.mark.parametrize("path", [p for p in PROGRAMS if p.stem != "aes128"],  # the slowest
                         ids=lambda p: p.stem)
def test_bits_asking_only_unsettled_nodes_gives_the_graph_of_full_walks(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = build_program(str(path), path.read_bytes())
    assert program.graph is not None, program.diagnostics
    clear_caches()
    asking = optimize(program.graph, 2)
    with monkeypatch.context() as m:
        m.setattr(Rewriter, "run_asking", _full_walk)
        clear_caches()
        full = optimize(program.graph, 2)
    assert _exact(asking) == _exact(full)


def test_a_confirming_bits_walk_gives_its_input_back() -> None:
    path = ROOT / "examples" / "fir_q15.kera"
    program = build_program(str(path), path.read_bytes())
    assert program.graph is not None
    clear_caches()
    graph = optimize(program.graph, 2)
    out = bits_walk(graph, {}, set(), {})  # nothing remembered: every node asked
    again = bits_walk(out, {}, set(), {})
    assert _exact(again) == _exact(out) == _exact(graph)
    assert all(again.nodes[nid] is node for nid, node in out.nodes.items())


def test_asking_stops_copying_at_the_first_change() -> None:
    """Nodes not asked are copied; the first rewrite hands over to the usual walk."""
    path = ROOT / "examples" / "gcd16.kera"
    program = build_program(str(path), path.read_bytes())
    assert program.graph is not None
    graph = program.graph
    target = next(nid for nid, node in reversed(graph.nodes.items()) if node.op == "sub")

    def rule(rw: Rewriter, t: Term) -> bytes | None:  # swap the operands of one `sub`
        if rw.current == target:
            return rw.emit("sub", t.type, (t.args[1], t.args[0]))
        return None

    expected = rewrite(graph, rule)
    for ask in (set(graph.nodes), {target}):
        out = Rewriter(graph, rule).run_asking(ask)
        assert _exact(out) == _exact(expected)
    unchanged = Rewriter(graph, rule).run_asking(set(), all_live=False)
    assert _exact(unchanged) == _exact(rewrite(graph, lambda rw, t: None))
