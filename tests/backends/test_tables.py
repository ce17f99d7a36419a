"""Constant tables read at a dynamic index: once per program, bit-exact on every backend.

A table whose every element is a constant (AES-128's S-box) is emitted once where a backend can
hold data (C: a file-scope ``static const`` array per leaf column) and each lookup reads it; a
table with a variable element is still built where it is read.
"""

from __future__ import annotations

import pytest

from kera.backends import unavailable
from kera.backends.cpu import emit_c
from kera.hls.pipeline import single_stage
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import ArrayType, TupleType, sint, uint

from .kit import OpProgram, check_backend

PAIRS = [(0x0123_4567_89AB_CDEF, -128), (2**64 - 1, 127), (0, -1), (7, 0), (2**63, 5)]


def tables_program() -> OpProgram:
    """Three lookups of one constant table of (u64, i8) pairs (a u3 index reaches past its
    five elements: the last one is read), and one of a table holding a parameter."""
    g = Graph()
    i, j = param(g, 0, "i", uint(3)), param(g, 1, "j", uint(3))
    x = param(g, 2, "x", sint(8))
    pair_t = TupleType((uint(64), sint(8)))
    pairs = [g.add("tuple", pair_t, [const(g, uint(64), a), const(g, sint(8), b)])
             for a, b in PAIRS]
    table = g.add("array", ArrayType(pair_t, len(PAIRS)), pairs)
    mixed = g.add("array", ArrayType(sint(8), 3), [const(g, sint(8), 3), x,
                                                    const(g, sint(8), -3)])
    k = g.add("xor", uint(3), [i, j])
    reads = [g.add("array_index", pair_t, [table, n]) for n in (i, j, k)]
    reads.append(g.add("array_index", sint(8), [mixed, j]))
    result = g.add("tuple", TupleType(tuple(g[r].type for r in reads)), reads)
    g.add_region(Region("f", (i, j, x), result))
    return OpProgram(g, "f", ("table", "table", "table", "mixed"), {})


def test_a_constant_table_is_one_static_array_per_leaf_in_c() -> None:
    prog = tables_program()
    text = emit_c(single_stage(prog.graph, prog.top))
    assert text.count("static const uint64_t tab") == 1  # the u64 column, for three reads
    assert text.count("static const uint32_t tab") == 1  # the i8 column
    assert "UINT64_C(0x123456789abcdef)" in text and "0xffffff80u" in text  # -128, sign-extended
    assert text.count("[3] = {") == 1  # the table with a parameter: built where it is read


@pytest.mark.parametrize("backend", ["cpu", "wasm", "ptx"])
def test_constant_tables_agree_with_the_interpreter(backend: str) -> None:
    if reason := unavailable(backend):
        pytest.skip(reason)
    check_backend(backend, tables_program(), seed=5)
