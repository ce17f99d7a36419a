"""The shared scalar layout, marshalling, the front door API and the tool-missing paths."""

from __future__ import annotations

import numpy as np
import pytest

from kera import Loaded
from kera import run as run_on
from kera.backends import compile_target, run, unavailable
from kera.backends.cpu import compile_cpu
from kera.backends.cpu.build import find_compiler, host_isa
from kera.backends.layout import (
    call_buffers,
    flatten_type,
    leaf_bits,
    pack,
    region_layout,
    unflatten,
    unpack,
)
from kera.diagnostics import KeraError
from kera.hls.pipeline import single_stage
from kera.interp import evaluate
from kera.ir import values
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, ArrayType, TupleType, sint, uint

NESTED = TupleType((ArrayType(TupleType((BOOL, sint(7))), 2), uint(33), ArrayType(sint(64), 1)))
ROWS = [
    ([(True, -64), (False, 63)], 2**33 - 1, [-(2**63)]),
    ([(False, -1), (True, 0)], 0, [2**63 - 1]),
]
RUNNABLE = [b for b in ("cpu", "wasm") if not unavailable(b)]


def identity_graph() -> Graph:
    g = Graph()
    p = param(g, 0, "v", NESTED)
    g.add_region(Region("ident", (p,), p))
    return g


def test_flatten_names_paths_and_containers() -> None:
    leaves = flatten_type(NESTED, "v")
    assert [leaf.name for leaf in leaves] == ["v.0[0].0", "v.0[0].1", "v.0[1].0", "v.0[1].1",
                                              "v.1", "v.2[0]"]
    assert [leaf.path for leaf in leaves][-1] == (2, 0)
    assert [leaf.word for leaf in leaves] == [32, 32, 32, 32, 64, 64]


def test_pack_unpack_round_trip() -> None:
    g = identity_graph()
    layout = region_layout(g, "ident")
    batch = values.stack(ROWS, NESTED)
    bufs = pack(layout, {"v": batch}, 2, pad=3)
    assert [b.dtype for b in bufs] == [np.uint32] * 4 + [np.uint64] * 2
    assert all(len(b) == 5 for b in bufs) and int(bufs[1][0]) == 0xFFFFFFC0  # sign-extended
    back = unpack(layout, bufs, 2)
    assert values.unstack(back, NESTED) == ROWS
    with pytest.raises(ValueError):
        unflatten(uint(8), [np.zeros(1), np.zeros(1)])


def test_call_buffers_pad_to_the_block_and_give_the_result_back() -> None:
    layout = region_layout(identity_graph(), "ident")
    bufs = call_buffers(layout, {"v": values.stack(ROWS, NESTED)}, block=16)
    assert bufs.rows == 2 and len(bufs.inputs) == len(bufs.outputs) == 6
    assert [len(b) for b in bufs.all] == [16] * 12
    assert [b.dtype for b in bufs.outputs] == [np.uint32] * 4 + [np.uint64] * 2
    for src, dst in zip(bufs.inputs, bufs.outputs, strict=True):  # what an identity kernel does
        dst[:] = src
    assert values.unstack(bufs.result(), NESTED) == ROWS
    with pytest.raises(KeraError, match="unknown input `w`"):
        call_buffers(layout, {"v": values.stack(ROWS, NESTED), "w": np.zeros(2)})


@pytest.mark.parametrize("backend", RUNNABLE)
def test_identity_and_broadcast(backend: str) -> None:
    g = identity_graph()
    kernel = compile_target(backend, single_stage(g, "ident"))
    batch = values.stack(ROWS, NESTED)
    assert values.unstack(kernel({"v": batch}), NESTED) == ROWS
    one = values.stack(ROWS[:1], NESTED)  # one row broadcasts to the requested rows
    assert values.unstack(kernel({"v": one}, 3), NESTED) == ROWS[:1] * 3
    empty = values.stack([], NESTED)
    assert values.unstack(kernel({"v": empty}), NESTED) == []


@pytest.mark.parametrize("backend", RUNNABLE)
def test_no_parameters_and_bad_inputs(backend: str) -> None:
    g = Graph()
    c = g.add("tuple", TupleType((sint(5), BOOL)), [const(g, sint(5), -16), const(g, BOOL, 1)])
    g.add_region(Region("k", (), c))
    result = run(backend, single_stage(g, "k"), {}, rows=2)
    assert values.unstack(result, g[c].type) == [(-16, True), (-16, True)]
    ident = compile_target(backend, single_stage(identity_graph(), "ident"))
    with pytest.raises(KeraError, match="missing input for parameter `v`"):
        ident({})
    with pytest.raises(KeraError, match="unknown input `w`"):
        ident({"v": values.stack(ROWS, NESTED), "w": np.zeros(2)})
    with pytest.raises(KeraError, match="input for parameter `v`"):
        ident({"v": np.zeros(2, dtype=np.uint64)})


@pytest.mark.parametrize("backend", RUNNABLE)
def test_run_jsonl(backend: str) -> None:
    g = Graph()
    a, b = param(g, 0, "a", sint(8)), param(g, 1, "b", sint(8))
    g.add_region(Region("d", (a, b), g.add("div", sint(8), [a, b])))
    lines = ['{"a": -128, "b": -1}', '{"a": 7, "b": 0}', "", '{"a": -7, "b": 2}']
    assert run_on(Loaded(g, "d"), lines, target=backend) == [-128, 0, -3]
    assert run_on(Loaded(g, "d"), [], target=backend) == []
    with pytest.raises(KeraError, match="no function named `e`"):
        run_on(Loaded(g, "e"), lines, target=backend)
    with pytest.raises(KeraError, match="out of range"):
        run_on(Loaded(g, "d"), ['{"a": 128, "b": 1}'], target=backend)


def test_missing_c_compiler_is_exit_3(monkeypatch) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with pytest.raises(KeraError) as info:
        find_compiler()
    assert info.value.exit_code == 3 and "hint" in info.value.message
    assert unavailable("cpu") is not None


@pytest.mark.skipif("cpu" not in RUNNABLE, reason="no C compiler")
def test_isa_override_and_cache_dir(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("KERA_HLS_CACHE", str(tmp_path))
    monkeypatch.setenv("KERA_CPU_ISA", "sse2")
    assert host_isa() == "sse2"
    g = Graph()
    x = param(g, 0, "x", uint(64))
    g.add_region(Region("p", (x,), g.add("popcount", uint(64), [x])))
    kernel = compile_cpu(single_stage(g, "p"))
    assert kernel.isa == "sse2" and kernel.path.parent == tmp_path / "cpu"
    xs = np.array([0, 1, 2**64 - 1, 0x8000_0000_0000_0001], dtype=np.uint64)
    want = evaluate(g, "p", {"x": xs})
    assert leaf_bits(kernel({"x": xs}), uint(64), 4)[0].tolist() == want.tolist() == [0, 1, 64, 2]
    monkeypatch.setenv("KERA_CPU_ISA", "avx9000")
    with pytest.raises(KeraError) as info:
        host_isa()
    assert info.value.exit_code == 2


def test_param_buffers_number_each_parameters_leaves_in_call_order() -> None:
    g = Graph()
    a, b = param(g, 0, "a", NESTED), param(g, 1, "b", uint(8))
    g.add_region(Region("two", (a, b), b))
    layout = region_layout(g, "two")
    assert [list(layout.param_buffers(i)) for i in (0, 1)] == [[0, 1, 2, 3, 4, 5], [6]]
    assert [leaf.name for leaf in layout.buffers][6:] == ["b", "result"]
