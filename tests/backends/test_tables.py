"""Constant tables read at a dynamic index: once per program, bit-exact on every backend.

A table whose every element is a constant (AES-128's S-box) is emitted once where a backend can
hold data (C: a file-scope ``static const`` array per leaf column; PTX: a ``.global`` array;
WASM: a data segment, except in SIMD lanes, whose four rows index apart) and each lookup reads
it; a table with a variable element is still built where it is read.
"""

from __future__ import annotations

import pytest

from kera.backends import unavailable
from kera.backends.cpu import emit_c
from kera.backends.wasm import emit_wat
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


def sbox_program() -> OpProgram:
    """Two lookups of a 16-entry u8 table by u4 indices: every value fits 32 bits (SIMD)."""
    g = Graph()
    i, j = param(g, 0, "i", uint(4)), param(g, 1, "j", uint(4))
    table = g.add("array", ArrayType(uint(8), 16),
                  [const(g, uint(8), (37 * n + 11) % 256) for n in range(16)])
    a = g.add("array_index", uint(8), [table, i])
    b = g.add("array_index", uint(8), [table, g.add("xor", uint(4), [i, j])])
    g.add_region(Region("s", (i, j), g.add("tuple", TupleType((uint(8), uint(8))), [a, b])))
    return OpProgram(g, "s", ("sbox", "sbox"), {})


def test_a_constant_table_is_one_data_segment_in_wasm() -> None:
    prog = tables_program()
    text = emit_wat(single_stage(prog.graph, prog.top))
    assert text.count("(data (i32.const ") == 2  # the u64 column and the i8 column
    assert "\\ef\\cd\\ab\\89\\67\\45\\23\\01" in text  # 0x0123456789abcdef, little-endian
    simd = emit_wat(single_stage(sbox_program().graph, "s"))
    assert "SIMD128" in simd.splitlines()[0] and "(data " not in simd


@pytest.mark.parametrize("backend", ["cpu", "wasm", "ptx"])
@pytest.mark.parametrize("program", [tables_program, sbox_program])
def test_constant_tables_agree_with_the_interpreter(backend: str, program) -> None:  # noqa: ANN001
    if reason := unavailable(backend):
        pytest.skip(reason)
    check_backend(backend, program(), seed=5)
