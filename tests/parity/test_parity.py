"""Parity over the shared kernels, the report, the target registry and a planted bug."""

from __future__ import annotations

import json

import pytest

from kera import _targets, register_target, registered_targets, unregister_target
from kera.backends import unavailable
from kera.backends.cpu import ops as cpu_ops
from kera.backends.lower import OpCall
from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.ir.graph import Graph, Region, param
from kera.ir.types import sint, uint
from kera.sim.parity import run_parity
from tests.conftest import kernel_params

RUNNABLE = ["interp"] + [b for b in ("cpu", "wasm") if not unavailable(b)]


def _kernel(path):
    program = build_program(str(path), path.read_bytes())
    assert program.ok, program.diagnostics
    return program.graph, program.top


@pytest.mark.parametrize("kernel", kernel_params())
def test_shared_kernels_agree_on_10k_vectors(kernel) -> None:
    graph, top = _kernel(kernel)
    report = run_parity(graph, top, vectors=10_000, seed=1)
    by_name = {r.target: r for r in report.results}
    assert report.vectors >= 10_000 and report.edge_vectors > 0
    for name in RUNNABLE:
        r = by_name[name]
        assert (r.status, r.mismatches, r.vectors) == ("ok", 0, report.vectors), report.table()
    assert by_name["ptx"].status in ("ok", "assembled-not-run", "unavailable")
    assert report.ok and report.exit_code == 0
    assert report.fingerprint == graph.fingerprint()


def _div_graph() -> tuple[Graph, str]:
    g = Graph()
    a, b = param(g, 0, "a", sint(8)), param(g, 1, "b", sint(8))
    n = param(g, 2, "n", uint(8))
    q = g.add("div", sint(8), [a, b])
    s = g.add("add", sint(8), [q, g.add("shl", sint(8), [a, n])])
    g.add_region(Region("f", (a, b, n), s))
    return g, "f"


@pytest.mark.skipif("cpu" not in RUNNABLE, reason="no C compiler")
def test_a_planted_bug_is_caught(monkeypatch) -> None:
    def add_without_renormalising(em, call: OpCall, args):  # noqa: ANN001
        return em.assign(call.out, f"{args[0]} + {args[1]}")

    monkeypatch.setitem(cpu_ops.TABLE, "add", add_without_renormalising)
    graph, top = _div_graph()
    report = run_parity(graph, top, targets=["cpu", "interp"], vectors=2000)
    cpu = report.results[0]
    assert cpu.target == "cpu" and cpu.status == "mismatch" and cpu.mismatches > 0
    assert not report.ok and report.exit_code == 4
    first = cpu.first_mismatches[0]
    assert set(first.input) == {"a", "b", "n"}
    assert all(v.startswith("0x") and len(v) == 4 for v in first.input.values())
    assert first.expected != first.actual and first.expected.startswith("0x")
    text = report.table()
    assert graph.fingerprint() in text and "mismatch" in text and first.actual in text
    data = json.loads(json.dumps(report.to_json()))
    assert data["exit_code"] == 4 and data["targets"][0]["first_mismatches"][0]["row"] >= 0
    assert data["targets"][1] | {"seconds": 0} == {
        "target": "interp", "vectors": report.vectors, "mismatches": 0, "seconds": 0,
        "status": "ok", "reason": None, "first_mismatches": []}


def test_registry_custom_targets() -> None:
    graph, top = _div_graph()
    calls = []

    def json_runner(schedule, inputs, rows):  # noqa: ANN001, ANN202
        from kera.interp import run_jsonl
        from kera.ir import values

        calls.append(schedule.method)
        params, _ = schedule.graph.signature(schedule.region)
        lines = [json.dumps({n: values.to_json(inputs[n], t, i) for n, t in params})
                 for i in range(rows)]
        return run_jsonl(schedule.graph, schedule.region, lines)

    register_target("fake-rtl", json_runner, lambda: None, json_rows=True)
    register_target("off", json_runner, lambda: "needs a simulator")
    register_target("crash", lambda s, i, r: 1 / 0)
    try:
        assert {"interp", "cpu", "wasm", "ptx", "fake-rtl"} <= set(registered_targets())
        report = run_parity(graph, top, targets=["fake-rtl", "off"], vectors=300)
        fake, off = report.results
        assert (fake.status, fake.mismatches) == ("ok", 0) and calls == ["single-stage"]
        assert off.status == "unavailable" and off.reason == "needs a simulator"
        assert report.ok and report.exit_code == 3  # a requested target could not run
        crashed = run_parity(graph, top, targets=["crash"], vectors=10)
        assert crashed.results[0].status == "error" and "ZeroDivisionError" in str(
            crashed.results[0].reason)
        assert crashed.exit_code == 4
        default = run_parity(graph, top, vectors=10, targets=None)
        assert "off" in [r.target for r in default.results]
    finally:
        for name in ("fake-rtl", "off", "crash"):
            unregister_target(name)
    assert default.exit_code == 4  # "crash" was registered for the default run


def test_unknown_target_and_region() -> None:
    graph, top = _div_graph()
    with pytest.raises(KeraError) as info:
        run_parity(graph, top, targets=["verilog"])
    assert info.value.exit_code == 2 and "unknown target `verilog`" in info.value.message
    with pytest.raises(KeraError, match="no function named"):
        run_parity(graph, "nope")


def test_ptx_without_a_device(monkeypatch) -> None:
    graph, top = _div_graph()
    report = run_parity(graph, top, targets=["ptx"], vectors=10)
    (ptx,) = report.results
    if ptx.status == "ok":
        return  # a CUDA device is present and agreed
    assert ptx.status in ("assembled-not-run", "unavailable") and "CUDA" in ptx.reason
    assert report.exit_code == 3
    monkeypatch.setattr(_targets, "_REGISTRY", dict(_targets._REGISTRY))
    assert run_parity(graph, top, targets=None, vectors=10).exit_code == 0
