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
             g.add("shl", sint(8), [a, n]), g.add("shr", sint(8), [a, n])]
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
    ])
    g.add_region(Region("f", (a, b, n, t, k), result))
    return g


def lanes_graph() -> Graph:
    """``g(x: u32, y: i12) -> (u32, bool, i12)``: every node has a SIMD128 lane-wise form."""
    g = Graph()
    x, y = param(g, 0, "x", uint(32)), param(g, 1, "y", sint(12))
    mixed = g.add("add", uint(32), [g.add("rotl", uint(32), [x, const(g, uint(8), 5)]),
                                    g.add("cast", uint(32), [y])])
    small = g.add("lt", BOOL, [y, const(g, sint(12), -3)])
    shifted = g.add("shr", sint(12), [y, const(g, uint(4), 15)])
    out = TupleType((uint(32), BOOL, sint(12)))
    pop = g.add("popcount", uint(32), [mixed])
    g.add_region(Region("g", (x, y), g.add("tuple", out, [pop, small, shifted])))
    return g


CASES = [(kind, "small") for kind in sorted(EMITTERS)] + [("wat", "lanes")]


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_emitted_text_matches_the_golden_file(kind: str, name: str) -> None:
    graph, top = (small_graph(), "f") if name == "small" else (lanes_graph(), "g")
    text = EMITTERS[kind](single_stage(graph, top))
    path = GOLDEN / f"{name}.{kind}"
    if os.environ.get("KERA_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run with KERA_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{path} changed: review, then KERA_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("name", ["small", "lanes"])
def test_the_golden_graphs_agree_everywhere(name: str) -> None:
    from kera.sim.parity import run_parity

    graph, top = (small_graph(), "f") if name == "small" else (lanes_graph(), "g")
    report = run_parity(graph, top, vectors=2000, seed=5)
    assert report.ok, report.table()
