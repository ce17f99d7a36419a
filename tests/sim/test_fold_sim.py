"""Shared pipeline registers (register binding) in Verilator: exact with bubbles, backpressure.

XTEA here shares no operator: only the binding makes it aligned, so it checks the
registers' write enables and multiplexers alone, against vectors from the Python references
of examples/gen_fold_vectors.py, and the report's II and latency against the cycles observed.
"""

from __future__ import annotations

import json

import pytest

import kera
from kera.hls.report import build_report
from kera.hls.synth import plan_schedule
from kera.sim import simulate
from tests.conftest import EXAMPLES, needs_verilator

pytestmark = needs_verilator


def _rows(name: str, n: int) -> tuple[list[dict], list[object]]:
    lines = (EXAMPLES / f"{name}.vectors.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    rows = [json.loads(line) for line in lines]
    return [r["inputs"] for r in rows], [r["expected"] for r in rows]


@pytest.mark.parametrize(("name", "ii"), [("xtea", 5), ("gcd16", 4)])
def test_bound_registers_are_exact(name: str, ii: int) -> None:
    loaded = kera.load(EXAMPLES / f"{name}.kera")
    s, board, model = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=100.0,
                                    ii=ii)
    assert s.aligned and s.register_binding is not None and (name != "xtea" or not s.bound())
    assert s.register_binding.mux_bits() > 0  # some registers hold values of several sources
    report = build_report(s, board, model=model)
    data, expected = _rows(name, 40)
    plain = simulate(s, data)
    assert plain.passed, (plain.mismatches[:3], plain.timing_errors[:3])
    assert plain.outputs == expected
    assert (plain.latency_observed, plain.ii_observed) == (
        report["latency_cycles"], report["ii"]) == (s.latency, ii)
    bubbles = simulate(s, data, bubbles=True, seed=2)
    assert bubbles.passed and bubbles.outputs == expected, bubbles.timing_errors[:3]
    pressed = simulate(s, data, backpressure=True, seed=3)
    assert pressed.passed and pressed.outputs == expected, pressed.mismatches[:3]
