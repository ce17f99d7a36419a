"""The fixed-point examples: their vectors are the exact model's, and every target agrees."""

from __future__ import annotations

import json

import pytest

from kera import load, run
from kera.testing import assert_parity
from tests.conftest import EXAMPLES
from tests.fixed import examples_model

NAMES = ["fir_q15", "cordic"]
ROWS = {"fir_q15": examples_model.fir_rows, "cordic": examples_model.cordic_rows}


@pytest.mark.parametrize("name", NAMES)
def test_vectors_are_the_models(name: str) -> None:
    lines = (EXAMPLES / f"{name}.vectors.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == ROWS[name](len(lines))


@pytest.mark.parametrize("name", NAMES)
def test_interpreter_matches_the_model_on_many_vectors(name: str) -> None:
    rows = ROWS[name](2000)
    got = run(load(EXAMPLES / f"{name}.kera"), [r["inputs"] for r in rows])
    assert [i for i, (g, r) in enumerate(zip(got, rows, strict=True)) if g != r["expected"]] == []


@pytest.mark.parametrize("name", NAMES)
def test_targets_agree_on_10k_vectors(name: str) -> None:
    assert_parity(EXAMPLES / f"{name}.kera", targets=["cpu", "wasm"], vectors=10_000)


@pytest.mark.parametrize("name", NAMES)
def test_rtl_agrees_cycle_exactly(name: str) -> None:
    assert_parity(EXAMPLES / f"{name}.kera", targets=["rtl"], vectors=500)
