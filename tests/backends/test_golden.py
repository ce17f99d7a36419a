"""Golden files for the emitted C, WAT and PTX of one small graph.

The emitted text is deterministic; a change to it is reviewed as a diff of these files.
Regenerate them with ``KERA_UPDATE_GOLDEN=1 pytest tests/backends/test_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kera.backends.cpu import emit_c
from kera.backends.ptx import emit_ptx
from kera.backends.wasm import emit_wat
from kera.hls.pipeline import single_stage
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, ArrayType, TupleType, sint, uint

GOLDEN = Path(__file__).parent / "golden"
EMITTERS = {"c": emit_c, "wat": emit_wat, "ptx": emit_ptx}


def small_graph() -> Graph:
    """``f(a: i8, b: i8, n: u8, t: [u16; 3], k: u2) -> ([i8; 4], u16, (u24, bool), i16)``."""
    g = Graph()
    a, b = param(g, 0, "a", sint(8)), param(g, 1, "b", sint(8))
    n, t = param(g, 2, "n", uint(8)), param(g, 3, "t", ArrayType(uint(16), 3))
    k = param(g, 4, "k", uint(2))
    arith = [g.add("div", sint(8), [a, b]), g.add("rem", sint(8), [a, b]),
             g.add("shl", sint(8), [a, n]), g.add("shr", sint(8), [a, n])]  # fmt: skip
    pick = g.add("array_index", uint(16), [t, k])
    rot = g.add("rotl", uint(16), [pick, n])
    wide = g.add("concat", uint(24), [g.add("slice", uint(8), [rot], {"lo": 4}), rot])
    less = g.add("lt", BOOL, [a, b])
    prod = g.add("widening_mul", sint(16), [a, b])
    big = g.add("select", sint(16), [less, prod, const(g, sint(16), -1)])
    out_t = TupleType((ArrayType(sint(8), 4), uint(16), TupleType((uint(24), BOOL)), sint(16)))
    result = g.add("tuple", out_t, [
        g.add("array", ArrayType(sint(8), 4), arith),
        g.add("popcount", uint(16), [pick]),
        g.add("tuple", out_t.elems[2], [wide, less]),
        big,
    ])  # fmt: skip
    g.add_region(Region("f", (a, b, n, t, k), result))
    return g


@pytest.mark.parametrize("kind", sorted(EMITTERS))
def test_emitted_text_matches_the_golden_file(kind: str) -> None:
    text = EMITTERS[kind](single_stage(small_graph(), "f"))
    path = GOLDEN / f"small.{kind}"
    if os.environ.get("KERA_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run with KERA_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{path} changed: review, then KERA_UPDATE_GOLDEN=1"


def test_the_golden_graph_agrees_everywhere() -> None:
    from kera.sim.parity import run_parity

    report = run_parity(small_graph(), "f", vectors=2000, seed=5)
    assert report.ok, report.table()
