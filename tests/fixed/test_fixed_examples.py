"""The fixed-point examples: their vectors are the exact model's, and every target agrees."""

from __future__ import annotations

import json
from fractions import Fraction

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


def test_the_fir_is_the_hand_written_one_bit_for_bit() -> None:
    rows = examples_model.fir_rows(2000)
    fixed = run(load(EXAMPLES / "fir_q15.kera"), [r["inputs"] for r in rows])
    raw_rows = [{"x": [int(Fraction(v) * 2**15) for v in r["inputs"]["x"]]} for r in rows]
    hand = run(load(EXAMPLES / "fir_q15_shifts.kera"), raw_rows)
    assert [int(Fraction(v) * 2**15) for v in fixed] == hand
