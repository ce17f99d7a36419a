"""The optimiser on stateful graphs (STATE.md): every pass and pipeline keeps the state slots
and gives the same output stream, so -O0, -O1 and -O2 agree on random programs and streams."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kera.elaborate import build_program
from kera.ir import values
from kera.ir.types import uint
from kera.ir.validate import validate
from kera.opt import PASSES, optimize
from tests.conftest import EXAMPLES
from tests.opt.kit import assert_same_bits, inputs_for, results
from tests.opt.randstate import state_programs

EXAMPLES_N = int(os.environ.get("KERA_OPT_EXAMPLES", "40"))
STATEFUL = ["fir_stream", "biquad_q14", "crc32_stream", "histogram", "delay_line"]


def _build(source: str):
    program = build_program("t.kera", source)
    assert program.ok, [d.message for d in program.diagnostics]
    return program.graph


def _kinds(graph) -> list[tuple[str, str]]:
    """Return (kind, type) of each state slot of the graph's one region, in index order."""
    (region,) = graph.regions.values()
    nodes = graph.nodes
    return [(nodes[s.read].attr_dict["kind"], str(nodes[s.read].type)) for s in region.states]


@settings(max_examples=EXAMPLES_N, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=state_programs(), seed=st.integers(0, 1 << 30))
def test_O0_O1_O2_give_the_same_output_stream(program, seed):
    graph = _build(program.text())
    assert graph.regions["f"].stateful
    o0 = optimize(graph, 0)
    for level in (1, 2):
        after = optimize(graph, level)
        assert validate(after) == []
        assert after.regions["f"].stateful
        assert_same_bits(o0, after, rows=40, seed=seed)  # one stream of 40 transfers


@pytest.mark.parametrize("name", sorted(PASSES))
@settings(max_examples=max(EXAMPLES_N // 4, 5), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=state_programs(), seed=st.integers(0, 1 << 30))
def test_each_pass_keeps_the_stream(name, program, seed):
    graph = _build(program.text())
    after = PASSES[name](graph)
    assert validate(after) == []
    assert _kinds(after) == _kinds(graph)  # no slot is lost, reordered or retyped
    assert_same_bits(graph, after, rows=24, seed=seed)


@pytest.mark.parametrize("name", STATEFUL)
def test_examples_keep_their_stream_and_state_at_every_level(name):
    path = EXAMPLES / f"{name}.kera"
    program = build_program(str(path), path.read_bytes())
    graph = program.graph
    inputs = inputs_for(graph, name, 300, seed=1)
    want = results(graph, name, inputs, 300)
    for level in (0, 1, 2):
        after = optimize(graph, level)
        assert validate(after) == []
        assert _kinds(after) == _kinds(graph)
        assert results(after, name, inputs, 300) == want, level


def test_a_read_is_not_moved_past_a_write_of_the_same_state():
    """`old = s; s = x; old + s`: the read sees the value before the write, at every level."""
    graph = _build("#[top]\nfn f(x: u8) -> u8 {\n    reg s: u8 = 5;\n    let old = s;\n"
                   "    s = x;\n    old + s\n}\n")
    mem = _build("#[top]\nfn f(x: u8, i: u2) -> u8 {\n    mem m: [u8; 4] = [5; 4];\n"
                 "    let old = m[i];\n    m[i] = x;\n    old + m[i] + m[i + 1]\n}\n")
    xs = [1, 2, 3, 250]
    for level in (0, 1, 2):
        g = optimize(graph, level)
        inputs = {"x": values.stack(xs, uint(8))}
        assert results(g, "f", inputs, 4) == [6, 3, 5, 253]
        g = optimize(mem, level)
        inputs = {"x": values.stack(xs, uint(8)), "i": values.stack([0, 0, 1, 0], uint(2))}
        # m = [5,5,5,5] -> t0: old 5, m[0]=1: 5+1+5; t1: old 1, m[0]=2: 1+2+5;
        # t2: i=1 old 5, m[1]=3: 5+3+5; t3: i=0 old 2, m[0]=250: 2+250+3 (wraps).
        assert results(g, "f", inputs, 4) == [11, 8, 13, (2 + 250 + 3) & 0xFF]
