"""Folding whole rounds onto shared units (kera.hls.sharing): XTEA at II 32 is one round's
datapath plus a counter, GCD16 one step's; one-source operands are wires, and the folded XTEA
is bit-exact in Verilator."""

from __future__ import annotations

from functools import cache

import kera
from kera.hls.boards import load_board
from kera.hls.models import load_model
from kera.hls.pipeline import Schedule
from kera.hls.resources import estimate
from kera.hls.sharing import port_cost
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog
from kera.sim.parity import run_parity
from tests.conftest import EXAMPLES, needs_verilator


@cache
def _program(name: str):  # noqa: ANN202
    loaded = kera.load(EXAMPLES / f"{name}.kera")
    return loaded.graph, loaded.top


@cache
def _folded(name: str, ii: int = 32) -> Schedule:
    graph, top = _program(name)
    return plan_schedule(graph, top, board="icebreaker", ii=ii)[0]


def test_a_port_with_one_source_costs_no_multiplexer() -> None:
    assert port_cost({7}, {}, 32, 1.0, 32) == (0.0, 1)
    lut, inputs = port_cost({1, 2}, {}, 32, 1.0, 32)
    assert (lut, inputs) == (32.0, 2)
    rom, _ = port_cost({1, 2, 3}, {1: 5, 2: 9, 3: 12}, 32, 1.0, 32)  # three constants: a ROM
    assert 0 < rom < 32


def test_xtea_at_ii_32_is_one_round_on_one_unit_per_op() -> None:
    s = _folded("xtea")
    many = [u for u in s.units if len(u.ops) > 1]
    assert len(many) == 10 and s.aligned
    for u in many:  # one op per counter slot: the unit is never used twice in a cycle
        assert len(set(u.slots)) == len(u.ops) and len(u.ops) >= 23
    wires = [u for u in many if u.sources and max(u.sources) == 1]
    assert wires and all(u.mux_lut == 0 for u in wires)  # fed by other units only
    verilog = emit_verilog(s, board="icebreaker", version="0.1.0")
    for u in wires:
        assert f"{u.name}_in0" not in verilog and f"{u.name}_in1" not in verilog


def test_folded_xtea_and_gcd16_fit_an_up5k() -> None:
    board = load_board("icebreaker")
    for name in ("xtea", "gcd16"):
        area = estimate(_folded(name), CostModel(load_model("ice40"), board.capacities.dsp),
                        board.capacities)
        assert area.total["lut"] < board.capacities.lut, (name, area.total)
        assert area.total["ff"] < board.capacities.ff, (name, area.total)
    # the unrolled design at II 1 does not fit: the reason to fold
    unrolled = estimate(_folded("xtea", 1), CostModel(load_model("ice40"), 8), board.capacities)
    assert unrolled.total["lut"] > board.capacities.lut


@needs_verilator
def test_folded_xtea_is_bit_exact_in_verilator() -> None:
    graph, top = _program("xtea")
    report = run_parity(graph, top, targets=["interp", "rtl"], vectors=20, seed=3,
                        schedule=_folded("xtea"), edge_limit=8)
    for r in report.results:
        assert (r.status, r.mismatches) == ("ok", 0), report.table()


def _static_worst(s: Schedule) -> float:
    """The longest path a static timing analysis sees: a unit is one node whose operands are
    all its ops' same-stage inputs (the union over the counter's residues)."""
    g = s.graph
    phys = {n: u.name for u in s.units for n in u.ops}
    delay: dict[object, float] = {}
    pred: dict[object, set[object]] = {}
    for n in s.order:
        p = phys.get(n, n)
        delay[p] = max(delay.get(p, 0.0), s.finish_ns[n] - s.start_ns[n])
        pred.setdefault(p, set()).update(phys.get(i, i) for i in g.nodes[n].inputs
                                         if i in s.stage and s.stage[i] == s.stage[n])
    done: dict[object, float] = {}

    def arrival(p: object) -> float:
        if p not in done:
            done[p] = max((arrival(q) for q in pred[p]), default=0.0) + delay[p]
        return done[p]

    return max(arrival(p) for p in delay)


def test_folded_units_have_no_longer_false_paths_than_the_stages() -> None:
    s = _folded("gcd16")  # the union of a unit's chains was 131 ns against 47 ns stages
    assert any(len(u.ops) > 1 for u in s.units)
    worst = max(s.finish_ns.values())
    assert _static_worst(s) <= worst + 1e-6 <= 1000.0 / s.clock_mhz
    for u in s.units:  # every op of a unit starts at one time in its stage
        assert len({round(s.start_ns[n], 6) for n in u.ops}) == 1
