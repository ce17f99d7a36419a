"""Every opcode on every runnable backend against the interpreter, bit for bit.

Each hypothesis example is one region holding two applications of *every* registry opcode at
independently drawn types (widths 1..64, both signs, bools, nested arrays and tuples, constant
operands), run over edge values, shift amounts around N, indices around the length and random
rows: one compile per example checks every table entry. ``test_every_width`` then sweeps the
arithmetic, shift and bit-count opcodes over all 128 integer types deterministically.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kera.backends import unavailable
from kera.backends.layout import region_layout
from kera.backends.wasm import WasmKernel, emit_wat
from kera.backends.wasm import simd as wasm_simd
from kera.backends.wasm.emit import memory_layout
from kera.hls.pipeline import single_stage
from kera.ir.graph import Graph, Region, param
from kera.ir.ops import OPS
from kera.ir.types import BOOL, IntType, TupleType, uint

from .kit import EDGE_WIDTHS, OpProgram, check_backend, op_program

RUNNABLE = [pytest.param(b, marks=pytest.mark.skipif(bool(unavailable(b)), reason=str(
    unavailable(b)))) for b in ("cpu", "wasm", "ptx")]
EXAMPLES = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("backend", RUNNABLE)
@EXAMPLES
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_every_opcode_matches_the_interpreter(backend: str, data: st.DataObject,
                                              seed: int) -> None:
    check_backend(backend, op_program(sorted(OPS), data, 2), seed)


BINARY = ("add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor")
SHIFTS = ("shl", "shr", "rotl", "rotr")
UNARY = ("popcount", "clz", "ctz", "not")
COMPARE = ("eq", "lt", "ge")


def width_sweep(widths: Sequence[int]) -> OpProgram:
    """Return a region applying the scalar opcodes at every ``uN``/``iN`` of ``widths``."""
    g = Graph()
    params: list[bytes] = []
    results: list[bytes] = []
    labels: list[str] = []

    def new_param(t: object) -> bytes:
        pid = param(g, len(params), f"p{len(params)}", t)  # type: ignore[arg-type]
        params.append(pid)
        return pid

    def out(op: str, node: bytes) -> None:
        results.append(node)
        labels.append(op)

    extra: dict[str, list[int]] = {}
    for w in widths:
        for signed in (False, True):
            t = IntType(w, signed)
            a, b = new_param(t), new_param(t)
            n = new_param(uint(7))
            extra[f"p{len(params) - 1}"] = sorted({w - 1, w, w + 1, 31, 32, 33, 63, 64} - {-1})
            for op in BINARY:
                out(op, g.add(op, t, [a, b]))
            for op in SHIFTS:
                out(op, g.add(op, t, [a, n]))
            for op in UNARY:
                out(op, g.add(op, t, [a]))
            for op in COMPARE:
                out(op, g.add(op, BOOL, [a, b]))
            if signed:
                out("neg", g.add("neg", t, [a]))
            if w <= 32:
                out("widening_mul", g.add("widening_mul", IntType(2 * w, signed), [a, b]))
            for dst in (1, 8, 32, 33, 64):
                out("cast", g.add("cast", IntType(dst, not signed), [a]))
    result = g.add("tuple", TupleType(tuple(g[r].type for r in results)), results)
    g.add_region(Region("sweep", tuple(params), result))
    return OpProgram(g, "sweep", tuple(labels), extra)


# WASM (and PTX, where a CUDA device runs it) sweeps every width; the C compiler's time grows
# faster than linearly with the number of result columns, so the CPU sweeps the widths at and
# around the container edges (hypothesis draws the others above).
SWEEPS = [pytest.param(b, range(w, w + 8), id=f"{b}-w{w}-{w + 7}")
          for b in ("wasm", "ptx") for w in range(1, 65, 8)]
SWEEPS += [pytest.param("cpu", EDGE_WIDTHS[:8], id="cpu-w1-16"),
           pytest.param("cpu", EDGE_WIDTHS[8:], id="cpu-w17-64")]


@pytest.mark.parametrize(("backend", "widths"), SWEEPS)
def test_every_width(backend: str, widths: Sequence[int]) -> None:
    if reason := unavailable(backend):
        pytest.skip(reason)
    check_backend(backend, width_sweep(widths), seed=widths[0])


SIMD_OPS = sorted(op for op, entry in wasm_simd.TABLE.items() if callable(entry))


@pytest.mark.skipif(bool(unavailable("wasm")), reason=str(unavailable("wasm")))
@EXAMPLES
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_wasm_simd_lanes_match_the_interpreter(data: st.DataObject, seed: int) -> None:
    """The SIMD128 table, forced: every lane-wise opcode at widths up to 32 bits."""
    program = op_program(SIMD_OPS, data, 2, max_width=32, const_amounts=True)

    def compile_simd(schedule):  # noqa: ANN001, ANN202
        wat = emit_wat(schedule, simd_lanes=True)
        assert "SIMD128" in wat.splitlines()[0]
        return WasmKernel(wat, memory_layout(region_layout(program.graph, program.top)))

    check_backend(compile_simd, program, seed)


def test_wasm_falls_back_to_scalar_code() -> None:
    program = width_sweep((8, 33))  # 64-bit containers and divisions: no lanes
    wat = emit_wat(single_stage(program.graph, program.top))
    assert "scalar" in wat.splitlines()[0] and "v128." not in wat
