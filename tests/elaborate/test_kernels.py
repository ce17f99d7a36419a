"""Every shared kernel builds from source and matches its vectors exactly on the interpreter."""

from __future__ import annotations

import json

import pytest

from kera.elaborate import build_program
from kera.interp import run_jsonl
from tests.conftest import EXAMPLES, kernel_params


@pytest.mark.parametrize("kernel", kernel_params())
def test_kernel_vectors_on_interpreter(kernel):
    program = build_program(str(kernel), kernel.read_bytes())
    assert program.ok, program.diagnostics
    lines = kernel.with_suffix(".vectors.jsonl").read_text().splitlines()
    results = run_jsonl(program.graph, program.top, lines)
    expected = [json.loads(line)["expected"] for line in lines]
    assert len(results) == len(expected) > 0
    pairs = enumerate(zip(results, expected, strict=True))
    mismatches = [(i, r, e) for i, (r, e) in pairs if r != e]
    assert mismatches == []


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.kera")), ids=lambda p: p.stem)
def test_examples_build(example):
    program = build_program(str(example), example.read_bytes())
    assert program.ok, program.diagnostics
