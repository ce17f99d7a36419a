"""`run` on a stateful kernel: the input lines are one stream, in order, on every target."""

from __future__ import annotations

import pytest

from kera import _api
from kera.backends import unavailable
from kera.cli import main

ACC = """
#[top]
pub fn acc(x: i8, clear: bool) -> i8 {
    reg sum: i8 = 0;
    sum = if clear { x } else { sum + x };
    sum
}
"""
ROWS = [{"x": 100, "clear": False}, {"x": 100, "clear": False}, {"x": 5, "clear": True},
        {"x": -7, "clear": False}]


@pytest.mark.parametrize("target", ["interp", "cpu", "wasm"])
def test_run_treats_the_inputs_as_one_stream(tmp_path, target: str) -> None:
    if target != "interp" and unavailable(target):
        pytest.skip(f"{target} cannot run here")
    src = tmp_path / "acc.kera"
    src.write_text(ACC)
    loaded = _api.load(src)
    assert _api.run(loaded, ROWS, target=target) == [100, -56, 5, -2]
    assert _api.run(loaded, ROWS[:2], target=target) == [100, -56]  # each run starts afresh


@pytest.mark.parametrize("target", ["cpu", "wasm"])
def test_the_cli_runs_a_stateful_kernel(tmp_path, capsys, target: str) -> None:
    if unavailable(target):
        pytest.skip(f"{target} cannot run here")
    src, vectors = tmp_path / "acc.kera", tmp_path / "acc.jsonl"
    src.write_text(ACC)
    vectors.write_text("".join(f'{{"x": {r["x"]}, "clear": {str(r["clear"]).lower()}}}\n'
                               for r in ROWS))
    assert main(["run", str(src), "--input", str(vectors), "--target", target]) == 0
    assert capsys.readouterr().out.split() == ["100", "-56", "5", "-2"]
