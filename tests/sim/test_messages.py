"""What `sim` says it checked: nothing with 0 inputs, no II with 1, only bounds with backpressure.

Each message is made from a real simulation of a 3-stage design (``kera.sim.runner.summary``)
and through the command line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kera.cli import main
from kera.sim import simulate
from kera.sim.runner import describe, summary
from tests.conftest import SHARED_KERNELS, needs_verilator
from tests.rtl.schedules import depth_schedule, load

pytestmark = needs_verilator

KERNEL = SHARED_KERNELS / "gray.kera"


def _design():
    graph, top = load(KERNEL)
    return depth_schedule(graph, top, 3)


def _rows(n: int) -> list[dict]:
    lines = KERNEL.with_suffix(".vectors.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["inputs"] for line in lines if line.strip()][:n]


def test_no_inputs_checks_nothing_and_says_so() -> None:
    s = _design()
    result = simulate(s, [])
    assert summary(result, s) == [
        "0 inputs: nothing was simulated, so no value, latency or II was checked"]
    assert not any("passed" in line or "observed" in line for line in summary(result, s))


def test_one_input_cannot_show_the_ii() -> None:
    s = _design()
    result = simulate(s, _rows(1))
    assert result.passed and result.latency_observed == s.latency
    head, verdict = summary(result, s)
    assert head.endswith(f"latency observed {s.latency} (report: {s.latency}), "
                         f"ii not observable with one input (report: {s.ii})")
    assert verdict == ("simulation passed: the value and its latency as reported (one input: "
                       "the II was not exercised)")
    assert "None" not in head


def test_many_inputs_every_cycle_as_reported() -> None:
    s = _design()
    result = simulate(s, _rows(8))
    assert summary(result, s)[-1] == "simulation passed: every value and every cycle as reported"


def test_backpressure_says_which_observations_are_bounds() -> None:
    s = _design()
    result = simulate(s, _rows(8), backpressure=True, seed=1)
    assert result.passed and result.latency_observed >= s.latency
    head, verdict = summary(result, s)
    assert (f"(report: {s.latency}; with backpressure a result may wait, so only "
            f">= {s.latency} is checked)") in head
    assert f"(report: {s.ii}; not checked)" in head
    assert "every cycle as reported" not in verdict
    assert verdict.endswith("exact cycles are checked only without --backpressure")


def test_the_command_line_prints_the_design_and_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "none.jsonl"
    empty.write_text("", encoding="utf-8")
    assert main(["sim", str(KERNEL), "--inputs", str(empty)]) == 1  # no inputs is an error
    err = capsys.readouterr().err
    assert "no inputs" in err and "passed" not in err
    assert "latency observed None" not in err
    s = _design()
    assert describe(s, "icarus").startswith(
        f"simulating `{s.region}` (icarus, latency 3, ii 1, verilog ")
