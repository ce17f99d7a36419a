"""The shared kernels under -O1/-O2: still exact on their vectors, never more logic (-O1: never
more nodes; -O2 adds wires: the slices and concats of bit-level narrowing), fir8 balanced."""

from __future__ import annotations

import json

import pytest

from kera.elaborate import build_program
from kera.interp import run_jsonl
from kera.opt import optimize
from tests.conftest import SHARED_KERNELS, kernel_params
from tests.opt.kit import assert_same_bits, depth, logic_bits


def _build(kernel):
    program = build_program(str(kernel), kernel.read_bytes())
    assert program.ok, program.diagnostics
    return program


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("kernel", kernel_params())
def test_kernel_matches_its_vectors_and_does_not_grow(kernel, level):
    program = _build(kernel)
    out = optimize(program.graph, level)
    assert logic_bits(out) <= logic_bits(program.graph)
    if level == 1:
        assert len(out) <= len(program.graph)
    lines = kernel.with_suffix(".vectors.jsonl").read_text().splitlines()
    expected = [json.loads(line)["expected"] for line in lines]
    assert run_jsonl(out, program.top, lines) == expected
    assert_same_bits(program.graph, out, rows=256, seed=level)


@pytest.mark.skipif(not (SHARED_KERNELS / "fir8.kera").exists(), reason="no shared fir8")
def test_fir8_accumulation_becomes_a_balanced_tree():
    program = _build(SHARED_KERNELS / "fir8.kera")
    before = program.graph
    result = before.regions[program.top].result
    assert depth(before, result, {"add"}) == 8  # 0 + t0 + ... + t7, one after another
    out = optimize(before, 2)
    assert depth(out, out.regions[program.top].result, {"add"}) == 3
