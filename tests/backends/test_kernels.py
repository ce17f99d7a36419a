"""Every shared kernel gives exactly its vectors file's results on the CPU and WASM backends."""

from __future__ import annotations

import json

import pytest

import kera
from kera.backends import unavailable
from kera.elaborate import build_program
from tests.conftest import kernel_params


@pytest.mark.parametrize("backend", ["cpu", "wasm"])
@pytest.mark.parametrize("kernel", kernel_params())
def test_kernel_vectors(kernel, backend: str) -> None:
    if reason := unavailable(backend):
        pytest.skip(reason)
    program = build_program(str(kernel), kernel.read_bytes())
    assert program.ok, program.diagnostics
    lines = kernel.with_suffix(".vectors.jsonl").read_text().splitlines()
    results = kera.run(kera.Loaded(program.graph, program.top), lines, target=backend)
    expected = [json.loads(line)["expected"] for line in lines]
    assert len(results) == len(expected) > 0
    pairs = enumerate(zip(results, expected, strict=True))
    mismatches = [(i, r, e) for i, (r, e) in pairs if r != e]
    assert mismatches == []
