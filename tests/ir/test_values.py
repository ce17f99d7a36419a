"""Batched values and the JSONL input format (INTERFACES.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kera.diagnostics import KeraError
from kera.ir import values
from kera.ir.types import BOOL, UNIT, ArrayType, TupleType, sint, uint

from .opkit import values_of

NESTED = TupleType((ArrayType(ArrayType(sint(3), 2), 2), BOOL, uint(64), UNIT))
PARAMS = [("x", uint(8)), ("flag", BOOL), ("m", ArrayType(sint(4), 2)),
          ("t", TupleType((uint(1), sint(64))))]


def _err(lines: list[str], params=PARAMS) -> str:
    with pytest.raises(KeraError) as info:
        values.read_jsonl(lines, params, name="in.jsonl")
    assert info.value.exit_code == 1
    return info.value.message


def test_read_plain_and_wrapped_lines() -> None:
    line = '{"x": 255, "flag": true, "m": [-8, 7], "t": [1, -9223372036854775808]}'
    got = values.read_jsonl([line, "", line.replace("true", "0")], PARAMS)
    assert got["x"].dtype == np.uint64 and got["x"].tolist() == [255, 255]
    assert got["flag"].dtype == np.bool_ and got["flag"].tolist() == [True, False]
    assert [a.tolist() for a in got["m"]] == [[-8, -8], [7, 7]]
    assert got["t"][1].dtype == np.int64 and got["t"][1].tolist() == [-(1 << 63)] * 2
    wrapped = values.load_jsonl(['{"inputs": ' + line + ', "expected": [1, 2]}'], PARAMS)
    assert wrapped.rows == 1 and wrapped.expected == [[1, 2]]
    assert wrapped.inputs["x"].tolist() == [255]
    assert values.load_jsonl([line], PARAMS).expected is None


def test_errors_name_line_and_parameter() -> None:
    good = {"x": 1, "flag": 1, "m": [0, 0], "t": [0, 0]}

    def line(**change: object) -> str:
        return json.dumps({**good, **change})

    assert _err([line(), line(x=300)]) == "in.jsonl:2: parameter `x`: 300 is out of range for u8"
    assert _err([line(x=-1)]) == "in.jsonl:1: parameter `x`: -1 is out of range for u8"
    assert _err([line(x=1.5)]).endswith("expected an integer of type u8, not 1.5")
    assert _err([line(x=True)]).endswith("expected an integer of type u8, not true")
    assert _err([line(flag=2)]).endswith("parameter `flag`: 2 is not a bool (true, false, 0 or 1)")
    assert _err([line(m=[0])]).endswith("expected a list of 2 elements for [i4; 2], not [0]")
    assert _err([line(m=[0, 8])]) == "in.jsonl:1: parameter `m`[1]: 8 is out of range for i4"
    assert _err([line(t=[2, 0])]) == "in.jsonl:1: parameter `t`.0: 2 is out of range for u1"
    assert _err([line(t=[0, 1 << 63])]).endswith("9223372036854775808 is out of range for i64")
    missing = dict(good)
    del missing["flag"]
    assert _err([json.dumps(missing)]) == "in.jsonl:1: missing parameter `flag`"
    assert _err([line(y=1)]) == "in.jsonl:1: unknown parameter `y` (expected x, flag, m, t)"
    assert _err(["{"]).startswith("in.jsonl:1: invalid JSON")
    assert _err(["[1]"]) == "in.jsonl:1: expected a JSON object of parameter values"
    assert "mixes plain lines" in _err([line(), json.dumps({"inputs": good})])
    assert "unexpected key `extra`" in _err([json.dumps({"inputs": good, "extra": 1})])
    assert _err(["[" * 100000]).startswith("in.jsonl:1: invalid JSON")


def test_read_from_path(tmp_path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n')
    assert values.read_jsonl(path, [("a", uint(2))])["a"].tolist() == [1, 2]
    with pytest.raises(KeraError, match="cannot read inputs"):
        values.read_jsonl(tmp_path / "nope.jsonl", [("a", uint(2))])
    path.write_text('{"a": 9}\n')
    with pytest.raises(KeraError, match=r"in\.jsonl:1: parameter `a`: 9 is out of range"):
        values.read_jsonl(path, [("a", uint(2))])


@settings(max_examples=40, deadline=None)
@given(st.lists(values_of(BOOL), min_size=1, max_size=5), st.data())
def test_stack_unstack_json_round_trip(bools: list[bool], data: st.DataObject) -> None:
    rows = [data.draw(_nested_values()) for _ in bools]
    batch = values.stack(rows, NESTED)
    assert values.conforms(batch, NESTED) is None
    assert values.unstack(batch, NESTED) == rows
    as_json = values.to_json_rows(batch, NESTED)
    assert as_json == [values.to_json(batch, NESTED, i) for i in range(len(rows))]
    back = [values.from_json(j, NESTED, "x") for j in json.loads(json.dumps(as_json))]
    assert back == rows


@st.composite
def _nested_values(draw: st.DrawFn) -> tuple:
    cell = values_of(sint(3))
    m = [[draw(cell), draw(cell)], [draw(cell), draw(cell)]]
    return (m, draw(st.booleans()), draw(values_of(uint(64))), ())


def test_broadcast_and_batch_size() -> None:
    one = values.full(uint(8), 7)
    assert values.batch_size(one) == 1 and values.broadcast(one, 3).tolist() == [7, 7, 7]
    mixed = (one, [values.stack([True, False], BOOL)])
    assert values.batch_size(mixed) == 2
    assert values.to_json_rows(mixed, TupleType((uint(8), ArrayType(BOOL, 1)))) == [
        [7, [True]], [7, [False]]]
    assert values.conforms(one, sint(8)) == "expected a 1-D int64 array for i8"
    assert values.conforms([one], ArrayType(uint(8), 2)).startswith("expected a list of 2")


def test_renorm_all_widths() -> None:
    raw = np.array([0, 1, 0x7F, 0x80, 0xFF, (1 << 64) - 1, 1 << 63], dtype=np.uint64)
    for w in range(1, 65):
        for t in (uint(w), sint(w)):
            got = values.renorm(raw, t).tolist()
            assert got == [t.wrap(int(v)) for v in raw], t


def test_edge_values_keep_their_order_and_add_neighbours_on_request() -> None:
    i8 = values.edge_values(sint(8))
    assert i8[:8] == [0, 1, -1, -128, 127, -127, 126, 2]  # the core comes first, in this order
    assert len(i8) == len(set(i8)) and all(-128 <= v <= 127 for v in i8)
    near = values.edge_values(sint(8), neighbours=True)
    assert near[: len(i8)] == i8 and {63, 65, -63, -65, 3, -3} <= set(near) - set(i8)
    assert values.edge_values(uint(3), neighbours=True) == [0, 1, 7, 6, 2, 4, 3, 5]
    assert values.edge_values(BOOL, neighbours=True) == [0, 1]


def test_bind_inputs_gives_the_batch_size_or_a_one_line_error() -> None:
    params = [("x", uint(8)), ("y", BOOL)]
    x, y = values.stack([1, 2, 3], uint(8)), values.stack([True], BOOL)
    assert values.bind_inputs(params, {"x": x, "y": y}) == 3  # one row broadcasts
    assert values.bind_inputs([], {}) == 1 and values.bind_inputs([], {}, rows=5) == 5
    for inputs, message in [({"x": x}, "missing input for parameter `y`"),
                            ({"x": x, "y": y, "z": y}, "unknown input `z`"),
                            ({"x": y, "y": y}, "input for parameter `x`: expected a 1-D uint64")]:
        with pytest.raises(KeraError, match=message):
            values.bind_inputs(params, inputs)
    with pytest.raises(KeraError, match=r"different batch sizes: \[3\]"):
        values.bind_inputs(params, {"x": x, "y": y}, rows=4)
