"""A count tree's registered sums take their top bit from an ``and``, not the carry out.

Two counts of at most ``2**k`` each sum to at most ``2**(k + 1)``: the top bit of the sum is
``a[k] & b[k]``. On iCE40 a carry out reaches a flip-flop through a pass-through cell and a net
(nextpnr does not pack the flip-flop with it), so the adder tree of a ``popcount`` builds the
sums a schedule registers that way (``kera.hls.decompose._Splitter._count_tree``,
``kera.hls.synth._registered_count_sums``).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from kera import load
from kera.hls.decompose import decompose_keeping
from kera.hls.models import load_model
from kera.hls.pipeline import Schedule
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.interp import evaluate
from kera.ir.graph import Graph, Region, param
from kera.ir.types import uint
from kera.rtl import emit_verilog
from tests.conftest import needs_verilator

PEERS = Path(__file__).resolve().parents[3] / "shared" / "kernels" / "peers"


def _count(width: int) -> tuple[Graph, bytes]:
    g = Graph("p.kera")
    x = param(g, 0, "x", uint(width))
    pop = g.add("popcount", uint(width), (x,))
    g.add_region(Region("f", (x,), pop))
    return g, pop


def _inputs(width: int) -> np.ndarray:
    t = uint(width)
    if width <= 13:
        return np.arange(1 << width, dtype=np.uint64)
    rng = np.random.default_rng(width)
    xs = rng.integers(0, 2**63, 4000, dtype=np.uint64) * np.uint64(2) + rng.integers(
        0, 2, 4000, dtype=np.uint64)
    edges = np.array([0, t.mask, t.mask - 1, 1, t.mask >> 1], dtype=np.uint64)
    return np.concatenate([xs & np.uint64(t.mask), edges])


@pytest.mark.parametrize("width", [2, 3, 4, 5, 8, 9, 12, 13, 16, 32, 64])
def test_every_level_built_with_an_and_is_exact(width: int) -> None:
    """Every level of the tree in the ``and`` form: the same counts as ``popcount``,
    exhaustively up to 13 bits and on 4,005 values above; the sums of two counts of a power of
    two each are the ones the form applies to (64 bits: 8 + 4 + 2 + 1 on nibble counts)."""
    g, pop = _count(width)
    costs = CostModel(load_model("ice40"))
    plain, _, sums = decompose_keeping(g, costs, 100.0, frozenset())
    levels = frozenset(level for _, level in sums.values())
    if width == 64:
        assert sorted(level for _, level in sums.values()) == [0] * 8 + [1] * 4 + [2] * 2 + [3]
    flagged, _, again = decompose_keeping(g, costs, 100.0, frozenset(), {pop: levels})
    assert sorted(again.values()) == sorted(sums.values())
    ands = sum(n.op == "and" and n.type.flat_width == 1 for n in flagged.nodes.values()) - sum(
        n.op == "and" and n.type.flat_width == 1 for n in plain.nodes.values())
    assert ands == len(sums)
    xs = _inputs(width)
    want = evaluate(g, "f", {"x": xs})
    assert np.array_equal(evaluate(plain, "f", {"x": xs}), want)
    assert np.array_equal(evaluate(flagged, "f", {"x": xs}), want)


def test_ecp5_keeps_its_carry_outs() -> None:
    """A CCU2C sums its carry out in the carry cell (``carry_out_ns`` 0): no count sum is
    built otherwise, and nothing is scheduled twice for it."""
    g, _ = _count(64)
    _, _, sums = decompose_keeping(g, CostModel(load_model("ecp5")), 100.0, frozenset())
    assert sums == {}


def _ands(sched: Schedule) -> int:
    """The one-bit ``a & b`` wires of the schedule's Verilog."""
    verilog = emit_verilog(sched, board="icebreaker", version="test")
    return len(re.findall(r"wire \[0:0\] \w+ = \w+ & \w+;", verilog))


@pytest.mark.parametrize(("clock", "registered"), [(12.0, [3]), (55.0, [1, 3])])
def test_the_registered_levels_are_built_with_an_and(clock: float, registered: list[int]
                                                      ) -> None:
    """popcount64 on iCE40: at 12 MHz one stage, whose bank holds the total (level 3); at
    55 MHz two stages, the pair sums (level 1) and the total registered. Exactly those levels
    have an ``and`` on top, and their carry outs are gone: the estimate of the slowest stage
    drops by the carry out's net (``CostModel.carry_out_ns``) or more."""
    from kera.hls import synth

    loaded = load(PEERS / "popcount64.kera")
    sched = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=clock)[0]
    n_flag = {0: 8, 1: 4, 2: 2, 3: 1}
    tops = [n for n in sched.graph.nodes.values()
            if n.op == "concat" and sched.graph.nodes[n.inputs[0]].op == "and"
            and sched.graph.nodes[n.inputs[1]].op == "add"]
    assert len(tops) == sum(n_flag[level] for level in registered)
    lowered = synth.lower_for_hardware(loaded.graph.subgraph([loaded.top]))
    costs = CostModel(load_model("ice40"), 8)
    usable = 1000.0 / clock * 0.9 - costs.overhead_ns
    _, _, sums = decompose_keeping(lowered, costs, usable, frozenset())
    plain = synth.make_schedule(
        decompose_keeping(lowered, costs, usable, frozenset())[0], loaded.top, family="ice40",
        clock_mhz=clock, model=load_model("ice40"), dsp_budget=8)
    assert sorted(synth._registered_count_sums(plain, sums).popitem()[1]) == registered
    assert _ands(sched) == _ands(plain) + len(tops)
    if clock == 55.0:
        assert max(sched.finish_ns.values()) <= max(plain.finish_ns.values()) - \
            costs.carry_out_ns(5) + 1e-9


@needs_verilator
def test_the_and_form_is_cycle_exact_in_simulation() -> None:
    """popcount64 at 55 MHz on iCE40 (two stages, five sums with an ``and`` on top) in
    Verilator against the interpreter on the kernel's vectors, at its reported latency."""
    import json

    from kera import _api

    loaded = load(PEERS / "popcount64.kera")
    lines = (PEERS / "popcount64.vectors.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines[:300]]
    inputs = [r["inputs"] for r in rows]
    sim = _api.simulate(loaded, inputs, board="icebreaker", clock_mhz=55.0)
    assert sim.schedule.latency == 2
    assert sim.passed
    assert sim.result.latency_observed == sim.schedule.latency
    assert sim.outputs == [r["expected"] for r in rows]
