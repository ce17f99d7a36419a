"""Joined passes that remember the nodes their rules left alone give the graph of full walks.

``kera.opt.local.fused`` skips its rules for nodes (by content) they left alone in an earlier
run; the -O2 graph must be the very same as when every walk asks every rule: the same node
ids in the same order, the same spans and regions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import kera.opt.local as local
from kera.elaborate import build_program
from kera.ir.graph import Graph
from kera.opt import PASSES, PIPELINES, Fixpoint, optimize
from kera.opt.bits import MAX_WALKS, bits_walk, clear_caches
from kera.opt.knownbits import KnownBits
from kera.opt.local import fused

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "examples").glob("*.kera")) + sorted(
    (Path(__file__).parent / "kernels").glob("*.kera"))


def _joined(remember: bool) -> dict:
    names = {n for s in PIPELINES["O2"] if isinstance(s, Fixpoint) for n in s.passes if "+" in n}
    return {**PASSES, **{n: fused(n.split("+"), remember=remember) for n in names}}


def _exact(g: Graph) -> tuple:
    return list(g.nodes), list(g.spans.items()), g.regions


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_remembering_joined_passes_give_the_graph_of_full_walks(path: Path) -> None:
    program = build_program(str(path), path.read_bytes())
    assert program.graph is not None, program.diagnostics
    outs = []
    for remember in (False, True):
        clear_caches()
        outs.append(optimize(program.graph, 2, passes=_joined(remember)))
    assert _exact(outs[0]) == _exact(outs[1])


def _bits_afresh(graph: Graph) -> Graph:
    """``bits`` with every walk's memos (known bits, kept nodes, demands) made afresh."""
    for _ in range(MAX_WALKS):
        out = bits_walk(graph)
        if out.fingerprint() == graph.fingerprint():
            return out
        graph = out
    return graph


@pytest.mark.parametrize("path", [p for p in PROGRAMS if p.stem != "aes128"],  # the slowest
                         ids=lambda p: p.stem)
def test_bits_with_its_memos_carried_gives_the_graph_of_fresh_walks(path: Path) -> None:
    """Known bits, kept nodes and demands carried from walk to walk change nothing in the -O2
    graph."""
    program = build_program(str(path), path.read_bytes())
    assert program.graph is not None, program.diagnostics
    clear_caches()
    carried = optimize(program.graph, 2)
    fresh = optimize(program.graph, 2, passes={**PASSES, "bits": _bits_afresh})
    assert _exact(carried) == _exact(fresh)


@pytest.mark.parametrize("name", ["fir_q15", "crc32_stream", "cordic", "sha256"])
def test_known_bits_a_bits_walk_files_are_those_computed_afresh(name: str) -> None:
    """A walk files the known bits of a node it keeps with renamed inputs from its term: they
    are the bits a fresh analysis of the new graph finds."""
    path = ROOT / "examples" / f"{name}.kera"
    program = build_program(str(path), path.read_bytes())
    assert program.graph is not None, program.diagnostics
    graph = optimize(program.graph, pipeline=(Fixpoint(("fold+simplify+strength",)), "balance",
                                               "narrow+fold+simplify"))
    known: dict = {}
    out = bits_walk(graph, known)
    fresh = KnownBits(out)
    shared = [nid for nid in out.nodes if nid in known and nid not in graph.nodes]
    assert shared  # nodes the walk made (or renamed) and filed
    assert all(known[nid] == fresh(nid) for nid in shared)


def test_a_joined_pass_run_again_on_its_output_asks_its_rules_nothing(monkeypatch) -> None:
    path = ROOT / "examples" / "fir_q15.kera"
    program = build_program(str(path), path.read_bytes())
    assert program.graph is not None
    asked: list[str] = []
    make, wanted = local.LOCAL_RULES["fold"]

    def counting(new: Graph):
        rule = make(new)
        return lambda rw, t: asked.append(t.op) or rule(rw, t)

    monkeypatch.setitem(local.LOCAL_RULES, "fold", (counting, wanted))
    for remember, expect_more in ((False, True), (True, False)):
        run = fused(["fold", "simplify"], remember=remember)
        once = run(program.graph)
        first = len(asked)
        assert first > 0
        assert _exact(run(once)) == _exact(run(run(once)))
        assert (len(asked) > 2 * first) is expect_more  # two more runs: asked again or not
        asked.clear()
