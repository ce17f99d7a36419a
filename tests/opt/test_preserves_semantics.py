"""Every pass, alone and in the pipelines, computes the same bits on random graphs."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kera.elaborate import build_program
from kera.ir.ops import OPS
from kera.ir.validate import validate
from kera.opt import PASSES, optimize
from kera.opt.local import fused
from tests.opt.kit import assert_same_bits
from tests.opt.randgraph import RECIPES, graphs
from tests.opt.randprog import programs

EXAMPLES = int(os.environ.get("KERA_OPT_EXAMPLES", "50"))  # raise it for a soak run
RUNS = dict(PASSES)
RUNS["fold+simplify+strength"] = fused(("fold", "simplify", "strength"))
RUNS["narrow+fold+simplify"] = fused(("narrow", "fold", "simplify"))
RUNS["O1"] = lambda g: optimize(g, 1)
RUNS["O2"] = lambda g: optimize(g, 2)


def test_the_random_graphs_cover_every_op_of_the_registry():
    assert set(OPS) - {"param", "state"} <= set(RECIPES)  # state: tests/opt/test_state_passes.py


@pytest.mark.parametrize("name", sorted(RUNS))
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs(), seed=st.integers(0, 1 << 30))
def test_pass_preserves_bits_on_random_graphs(name, graph, seed):
    fingerprint = graph.fingerprint()
    after = RUNS[name](graph)
    assert graph.fingerprint() == fingerprint  # the input graph is untouched
    assert validate(after) == []
    assert_same_bits(graph, after, rows=40, seed=seed)
    if name not in ("O1", "O2"):  # a fixpoint skips a pass when its own output comes back
        assert RUNS[name](after).fingerprint() == after.fingerprint(), "not idempotent"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=programs(), seed=st.integers(0, 1 << 30))
def test_every_pass_and_pipeline_preserves_bits_on_random_programs(source, seed):
    program = build_program("t.kera", source)
    assert program.ok, [d.message for d in program.diagnostics]
    graph = program.graph
    for name, run in RUNS.items():
        after = run(graph)
        assert validate(after) == [], name
        assert_same_bits(graph, after, rows=48, seed=seed)

