"""End to end: the emitted RTL simulated with cocotb, value- and cycle-exact against the report.

Every shared kernel runs all of its vectors in one simulation per (schedule, backpressure), with
a single-stage and a multi-stage schedule (and the real scheduler's once it is there). Builds
are cached by the Verilog text (``$KERA_HLS_CACHE/sim``, default ``~/.cache/kera-hls/sim``), so a
second run of this file only simulates.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kera.diagnostics import KeraError
from kera.hls.pipeline import Schedule, single_stage
from kera.ir.graph import Graph, Region, param
from kera.ir.types import TupleType, uint
from kera.rtl import emit_verilog
from kera.sim import simulate
from tests.conftest import kernel_params, needs_verilator
from tests.rtl.allops import allops_graph, allops_rows
from tests.rtl.edge_designs import edge_designs
from tests.rtl.schedules import depth_schedule, load, real_schedule

pytestmark = needs_verilator


def _vectors(path: Path) -> tuple[list[dict], list[object]]:
    lines = path.with_suffix(".vectors.jsonl").read_text(encoding="utf-8").splitlines()
    objs = [json.loads(line) for line in lines if line.strip()]
    return [o["inputs"] for o in objs], [o["expected"] for o in objs]


def _schedule(graph: Graph, top: str, kind: str) -> Schedule:
    if kind == "single":
        return single_stage(graph, top)
    if kind == "depth3":
        return depth_schedule(graph, top, 3)
    schedule = real_schedule(graph, top)
    if schedule is None:
        pytest.skip("kera.hls.schedule cannot schedule for ice40 here yet")
    return schedule


def _check_exact(result, schedule: Schedule, rows: int) -> None:  # type: ignore[no-untyped-def]
    """With out_ready high: every result exactly `latency` after its input, one input per II."""
    assert result.latency_observed == schedule.latency
    assert [d - a for a, d in zip(result.accepted, result.delivered, strict=True)] == \
        [schedule.latency] * rows
    assert result.accepted == [k * schedule.ii for k in range(rows)]
    assert result.cycles >= (rows - 1) * schedule.ii + schedule.latency


@pytest.mark.parametrize("kind", ["single", "depth3", "sdc"])
@pytest.mark.parametrize("path", kernel_params())
def test_kernel_vectors_cycle_exact(path: Path, kind: str) -> None:
    graph, top = load(path)
    schedule = _schedule(graph, top, kind)
    rows, expected = _vectors(path)
    plain = simulate(schedule, rows)
    assert plain.passed, "\n".join(plain.mismatches[:5])
    assert plain.outputs == expected
    _check_exact(plain, schedule, len(rows))
    stalled = simulate(schedule, rows, backpressure=True, seed=7)
    assert stalled.passed, "\n".join(stalled.mismatches[:5])
    assert stalled.outputs == expected
    assert stalled.cycles > plain.cycles  # out_ready really was held low
    assert min(d - a for a, d in zip(stalled.accepted, stalled.delivered, strict=True)) >= \
        schedule.latency


@pytest.mark.parametrize("stages", [1, 5])
def test_every_opcode_on_edge_values(stages: int) -> None:
    graph, top = allops_graph(with_state=stages == 1)  # `state` too where one stage closes it
    schedule = single_stage(graph, top) if stages == 1 else depth_schedule(graph, top, stages)
    result = simulate(schedule, allops_rows(graph, top), backpressure=stages > 1, seed=3)
    assert result.passed, "\n".join(result.mismatches[:3])
    assert result.outputs == result.expected


def test_ii_above_one_accepts_an_input_every_ii_cycles() -> None:
    path = next((p for p in (k.values[0] for k in kernel_params()) if p and p.stem == "fir8"),
                None)
    if path is None:
        pytest.skip("../shared/kernels/fir8.kera is absent")
    graph, top = load(path)
    schedule = depth_schedule(graph, top, 4, ii=3)
    rows, expected = _vectors(path)
    result = simulate(schedule, rows[:40])
    assert result.passed, "\n".join(result.mismatches[:5])
    assert result.outputs == expected[:40]
    assert result.ii_observed == 3
    _check_exact(result, schedule, 40)
    stalled = simulate(schedule, rows[:40], backpressure=True, seed=11)
    assert stalled.passed and stalled.outputs == expected[:40]
    assert stalled.ii_observed is not None and stalled.ii_observed >= 3


def _identity_pair() -> tuple[Graph, str]:
    """A design with the signature of a `gray(x: u8) -> (u8, u8)` that computes (x, x)."""
    g = Graph()
    x = param(g, 0, "x", uint(8))
    g.add_region(Region("gray", (x,), g.add("tuple", TupleType((uint(8), uint(8))), [x, x])))
    return g, "gray"


def _gray() -> tuple[Graph, str]:
    paths = [k.values[0] for k in kernel_params() if k.values[0] and k.values[0].stem == "gray"]
    if not paths:
        pytest.skip("../shared/kernels/gray.kera is absent")
    return load(paths[0])


def test_wrong_values_are_reported_with_hex_cycle_and_fingerprint() -> None:
    graph, top = _gray()
    text = emit_verilog(single_stage(graph, top), board="sim", version="test")
    other, _ = _identity_pair()  # the reference now disagrees with the RTL for most inputs
    result = simulate(single_stage(other, "gray"), [{"x": 5}, {"x": 0}], verilog=text)
    assert not result.passed
    assert len(result.mismatches) == 1  # x = 0 agrees
    message = result.mismatches[0]
    assert "row 0" in message and "x=0x05" in message
    assert "expected 0x0505" in message and "got 0x0607" in message
    assert "at cycle" in message and other.fingerprint() in message


def test_wrong_latency_is_reported() -> None:
    graph, top = _gray()
    text = emit_verilog(single_stage(graph, top), board="sim", version="test")
    claimed = depth_schedule(graph, top, 2)  # the report would say 2; the RTL takes 1
    result = simulate(claimed, [{"x": k} for k in range(4)], verilog=text)
    assert not result.passed and result.timing_errors
    assert result.latency_observed == 1
    assert "the schedule says 2" in result.timing_errors[0]


def test_inputs_as_rows_batch_or_file_agree(tmp_path: Path) -> None:
    from kera.ir.values import read_jsonl

    graph, top = _gray()
    schedule = single_stage(graph, top)
    rows = [{"x": k} for k in (0, 1, 200, 255)]
    lines = [json.dumps(r) for r in rows]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    batch = read_jsonl(lines, graph.signature(top)[0])
    results = [simulate(schedule, x) for x in (rows, batch, path)]
    assert all(r.passed for r in results)
    assert results[0].outputs == results[1].outputs == results[2].outputs
    assert results[0].outputs == results[0].expected
    assert results[0].outputs[:2] == [[0, 0], [1, 1]]


def test_bad_input_is_a_user_error() -> None:
    graph, top = _gray()
    with pytest.raises(KeraError) as info:
        simulate(single_stage(graph, top), [{"x": 256}])
    assert info.value.exit_code == 1 and "`x`" in info.value.message


def test_waves_are_written(tmp_path: Path) -> None:
    graph, top = _gray()
    waves = tmp_path / "gray.vcd"
    result = simulate(single_stage(graph, top), [{"x": 3}], waves=waves)
    assert result.passed and result.waves == waves.resolve()
    assert waves.read_text(encoding="utf-8", errors="replace").startswith("$")


def test_missing_verilator_is_exit_code_3(monkeypatch: pytest.MonkeyPatch) -> None:
    import kera.sim.runner as runner

    graph, top = _gray()
    monkeypatch.setattr(runner, "verilator_bin_dir", lambda: None)
    monkeypatch.setattr(runner.shutil, "which", lambda name: None)
    with pytest.raises(KeraError) as info:
        simulate(single_stage(graph, top), [{"x": 1}])
    assert info.value.exit_code == 3 and "verilator" in info.value.message


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="Icarus (iverilog) is not installed")
@pytest.mark.parametrize("name", list(edge_designs()))
def test_edge_designs_on_icarus(name: str) -> None:
    graph, top, rows = edge_designs()[name]
    for stages in (1, 3):
        schedule = depth_schedule(graph, top, stages)
        result = simulate(schedule, rows, simulator="icarus")
        assert result.passed, result.mismatches[:3]
        _check_exact(result, schedule, len(rows))


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="Icarus (iverilog) is not installed")
@pytest.mark.parametrize("kind", ["single", "depth3"])
def test_icarus_agrees(kind: str) -> None:
    graph, top = allops_graph()
    schedule = single_stage(graph, top) if kind == "single" else depth_schedule(graph, top, 3)
    rows = allops_rows(graph, top, count=50)
    plain = simulate(schedule, rows, simulator="icarus")
    assert plain.passed, "\n".join(plain.mismatches[:3])
    _check_exact(plain, schedule, len(rows))
    stalled = simulate(schedule, rows, simulator="icarus", backpressure=True, seed=2)
    assert stalled.passed and stalled.outputs == plain.outputs
