"""The reference interpreter on the shared kernels, built by hand, against their vectors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kera.diagnostics import KeraError
from kera.interp import evaluate, run_jsonl
from kera.ir import values
from kera.ir.graph import Graph, Region, const
from kera.ir.types import BOOL, UNIT, ArrayType, TupleType, sint, uint

from .kernels import ALL, KERNELS, Builder


@pytest.mark.parametrize("name", sorted(ALL))
def test_kernel_vectors(name: str) -> None:
    path = KERNELS / f"{name}.vectors.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not available")
    graph = ALL[name]()
    params, result_t = graph.signature(name)
    batch = values.load_jsonl(path, params)
    assert batch.expected is not None and batch.rows > 100
    got = run_jsonl(graph, name, path)
    assert got == batch.expected
    # row by row through to_json gives the same answers
    result = evaluate(graph, name, batch.inputs)
    assert [values.to_json(result, result_t, i) for i in range(batch.rows)] == got


def test_all_kernels_share_one_graph() -> None:
    """Regions of several kernels in one graph evaluate independently; CSE shares nodes."""
    g = Graph()
    for build in ALL.values():
        build(g)
    assert set(g.regions) == set(ALL)
    got = run_jsonl(g, "gray", ['{"x": 2}', '{"x": 255}'])
    assert got == [[3, 3], [128, 170]]


def test_every_opcode_runs_through_the_interpreter() -> None:
    """Build one region that uses every opcode; it must evaluate to the model's answers."""
    from kera.ir.ops import OPS

    b = Builder()
    u8, i8, u4 = uint(8), sint(8), uint(4)
    x, y, s = b.param("x", u8), b.param("y", i8), b.param("s", u4)
    ops = [b.bin(op, x, b.c(u8, 3)) for op in ("add", "sub", "mul", "div", "rem", "min", "max",
                                              "and", "or", "xor")]
    ops += [b.op(op, u8, x, s) for op in ("shl", "shr", "rotl", "rotr")]
    ops += [b.op(op, u8, x) for op in ("popcount", "clz", "ctz", "not")]
    ops += [b.cast(b.op("neg", i8, y), u8), b.cast(b.op("not", BOOL, b.op("eq", BOOL, x, x)), u8)]
    flags = [b.op(op, BOOL, y, b.c(i8, -1)) for op in ("ne", "lt", "le", "gt", "ge")]
    ops += [b.op("select", u8, f, x, b.c(u8, 7)) for f in flags]
    ops.append(b.op("slice", uint(4), b.op("concat", uint(12), x, s), lo=2))
    ops.append(b.op("widening_mul", sint(16), y, y))
    arr = b.op("array_update", ArrayType(u8, 2), b.array(x, x), s, b.c(u8, 0))
    tup = b.tuple(b.index(arr, s), b.op("tuple_get", u8, b.tuple(x, y), index=0))
    g = b.finish("all", b.tuple(*ops, tup))
    used = {n.op for n in g.nodes.values()}
    assert used | {"state"} == set(OPS), set(OPS) - used  # state: tests/ir/test_state.py
    got = run_jsonl(g, "all", ['{"x": 200, "y": -128, "s": 1}'])[0]
    assert got == [203, 197, 88, 66, 2, 3, 200, 0, 203, 203, 144, 100, 145, 100, 3, 0, 3, 55,
                   128, 0, 200, 200, 200, 7, 7, 0, 16384, [0, 200]]


def test_rows_and_broadcast() -> None:
    g = Graph()
    c = const(g, uint(8), 5)
    g.add_region(Region("five", (), c))
    assert evaluate(g, "five", {}).tolist() == [5]
    assert evaluate(g, "five", {}, rows=3).tolist() == [5, 5, 5]
    assert run_jsonl(g, "five", ["{}", "", "{}"]) == [5, 5]
    unit = g.add("tuple", UNIT, ())
    g.add_region(Region("unit", (), unit))
    assert run_jsonl(g, "unit", ["{}", "{}"]) == [[], []]


def test_input_errors() -> None:
    g = ALL["gray"]()
    with pytest.raises(KeraError, match="no function named `nope`"):
        evaluate(g, "nope", {})
    with pytest.raises(KeraError, match="missing input for parameter `x`"):
        evaluate(g, "gray", {})
    with pytest.raises(KeraError, match="unknown input `z`"):
        evaluate(g, "gray", {"x": values.stack([1], uint(8)), "z": 1})
    with pytest.raises(KeraError, match="expected a 1-D uint64 array"):
        evaluate(g, "gray", {"x": np.array([1], dtype=np.int64)})
    with pytest.raises(KeraError, match="out of range"):
        evaluate(g, "gray", {"x": np.array([256], dtype=np.uint64)})
    with pytest.raises(KeraError, match=r"<inputs>:2: parameter `x`: 256 is out of range for u8"):
        run_jsonl(g, "gray", ['{"x": 1}', '{"x": 256}'])
    two = ALL["saturate"]()
    with pytest.raises(KeraError, match="different batch sizes"):
        evaluate(two, "saturate", {"a": values.stack([1, 2], sint(8)),
                                   "b": values.stack([1, 2, 3], sint(8))})


def test_big_batch_matches_row_by_row() -> None:
    g = ALL["mat2"]()
    rng = np.random.default_rng(1)
    rows = [json.dumps({"a": rng.integers(0, 256, (2, 2)).tolist(),
                        "b": rng.integers(0, 256, (2, 2)).tolist()}) for _ in range(300)]
    batched = run_jsonl(g, "mat2", rows)
    singles = [run_jsonl(g, "mat2", [r])[0] for r in rows[:20]]
    assert batched[:20] == singles
    a, m = json.loads(rows[0])["a"], json.loads(rows[0])["b"]
    want = [[sum(a[i][k] * m[k][j] for k in range(2)) for j in range(2)] for i in range(2)]
    assert batched[0] == want


def test_tuple_result_types() -> None:
    b = Builder()
    x = b.param("x", TupleType((BOOL, ArrayType(sint(3), 2))))
    g = b.finish("id", x)
    assert run_jsonl(g, "id", ['{"x": [1, [-4, 3]]}']) == [[True, [-4, 3]]]
