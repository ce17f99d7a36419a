"""Parity on a stateful kernel: one stream, compared whole, the first differing transfer named."""

from __future__ import annotations

import json

import numpy as np

from kera import _api, register_target, unregister_target
from kera.interp import evaluate
from kera.sim.parity import run_parity

ACC = """
#[top]
pub fn acc(x: i8, clear: bool) -> i8 {
    reg sum: i8 = 0;
    sum = if clear { x } else { sum + x };
    sum
}
"""
SUM = """
#[top]
pub fn total(x: i8) -> i8 {
    reg sum: i8 = 0;
    sum = sum + x;
    sum
}
"""


def test_a_target_that_loses_the_state_is_named_with_the_first_transfer() -> None:
    loaded = _api.load(text=SUM, name="sum.kera")
    seen = []

    def late(schedule, inputs, rows):  # noqa: ANN001, ANN202 (drops the state at transfer 40)
        seen.append(rows)
        head = {k: v[:40] for k, v in inputs.items()}
        tail = {k: v[40:] for k, v in inputs.items()}
        a = evaluate(schedule.graph, schedule.region, head, rows=40)
        b = evaluate(schedule.graph, schedule.region, tail, rows=rows - 40)
        return np.concatenate([a, b])

    register_target("late", late)
    try:
        report = run_parity(loaded.graph, loaded.top, targets=["late", "interp"], vectors=500)
    finally:
        unregister_target("late")
    assert seen == [report.vectors] and report.stream  # the whole stream in one call
    late_r, interp_r = report.results
    assert interp_r.status == "ok" and late_r.status == "mismatch"
    first = late_r.first_mismatches[0]
    assert set(first.input) == {"x"} and first.input["x"].startswith("0x")
    assert first.row == 40 and first.expected != first.actual
    assert first.expected.startswith("0x") and len(first.expected) == 4
    assert late_r.mismatches > 400  # every later sum is off too: the stream is compared whole
    text = report.table()
    line = next(x for x in text.splitlines() if x.startswith("late: transfer"))
    assert f"transfer {first.row} of the stream (the first that differs)" in line
    assert loaded.fingerprint in line and first.actual in line
    assert "as one stream, in order" in text and "edge then" in text
    data = json.loads(json.dumps(report.to_json()))
    assert data["stream"] is True and data["exit_code"] == 4


def test_edge_rows_come_first_in_the_stream() -> None:
    loaded = _api.load(text=ACC, name="acc.kera")
    got = []

    def spy(schedule, inputs, rows):  # noqa: ANN001, ANN202
        got.append({k: np.asarray(v).copy() for k, v in inputs.items()})
        return evaluate(schedule.graph, schedule.region, inputs, rows=rows)

    register_target("spy", spy)
    try:
        report = run_parity(loaded.graph, loaded.top, targets=["spy"], vectors=300, seed=9)
    finally:
        unregister_target("spy")
    assert report.ok and report.results[0].vectors == report.edge_vectors + 300
    x = got[0]["x"]
    assert report.edge_vectors > 0
    assert set(x[:report.edge_vectors].tolist()) >= {0, 1, -1, -128, 127}

