"""Fixed-point values in JSONL, the `.keg`, the Verilog header and the edge vectors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kera import compile, load, run, synthesize
from kera.diagnostics import KeraError
from kera.ir import values
from kera.ir.types import FixedType, decode_type, sint

SRC = "#[top]\nfn f(x: fx<8, 4>, y: ufx<6, 2, rnd, sat>) -> fx<9, 5> { x + (y as fx<8, 4>) }\n"


def test_jsonl_numbers_are_read_exactly_and_results_are_shortest_decimals() -> None:
    loaded = load(text=SRC, name="v.kera")
    got = run(loaded, ['{"x": 1.25, "y": "3.9375"}', '{"x": -8, "y": 0}', '{"x": 0.0625, "y": 1}'])
    assert got == ["5.1875", "-8", "1.0625"]


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"x": 0.1, "y": 0}', "<inputs>:1: parameter `x`: 0.1 is not exactly representable in "
                               "fx<8, 4> (nearest: 0.0625 and 0.125)"),
        ('{"x": 9, "y": 0}', "9 is not exactly representable in fx<8, 4> (nearest: 7.9375)"),
        ('{"x": "1/2", "y": 0}', "expected a number or a decimal string of type fx<8, 4>"),
        ('{"x": true, "y": 0}', "expected a number or a decimal string"),
    ],
)
def test_jsonl_refusals(line: str, message: str) -> None:
    with pytest.raises(KeraError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(load(text=SRC, name="v.kera"), [line])


def test_decimal_text() -> None:
    assert [values.decimal_text(Fraction(n, d)) for n, d in
            ((13, 16), (-1, 1), (7, 1), (-3, 8), (1, 1 << 20))] == [
        "0.8125", "-1", "7", "-0.375", "0.00000095367431640625"]
    t = FixedType(8, True, 10)  # F = -2: raw steps of 4
    assert values.fixed_text(-3, t) == "-12" and values.fixed_text(-3, FixedType(8, True, 3)) \
        == "-0.09375"


def test_the_keg_carries_formats_and_integer_types_are_unchanged(tmp_path) -> None:
    loaded = load(text=SRC, name="v.kera")
    out = compile(loaded, tmp_path / "v.keg")
    again = load(tmp_path / "v.keg")
    assert again.fingerprint == loaded.fingerprint == out.fingerprint
    assert again.graph.signature("f") == loaded.graph.signature("f")
    assert run(again, ['{"x": 1.25, "y": "3.9375"}']) == ["5.1875"]
    assert sint(16).encode() == bytes([2, 16, 1])  # the integer encoding is as it was
    for t in (FixedType(16, True, -2, "rnd_conv", "sat_sym"), FixedType(1, False, 127)):
        assert decode_type(t.encode()) == (t, 6)


def test_verilog_header_gives_each_fixed_port_format(tmp_path) -> None:
    result = synthesize(load(text=SRC, name="v.kera"), outdir=tmp_path)
    text = next(tmp_path.glob("*.v")).read_text()
    assert result is not None
    assert "// format:      x: fx<8, 4> (raw i8, value = raw / 2^4)\n" in text
    assert "// format:      y: ufx<6, 2, rnd, sat> (raw u6, value = raw / 2^4)\n" in text
    assert "// format:      out: fx<9, 5> (raw i9, value = raw / 2^4)\n" in text


def test_edge_values_hold_bounds_ulps_and_ties() -> None:
    t = FixedType(8, True, 4)  # raw / 16
    edges = values.edge_values(t)
    assert {0, 1, -1, -128, 127, 8, 7, 9, -8, -7, -9, 16, 15, 17, -16} <= set(edges)
    assert len(edges) == len(set(edges)) and all(t.contains(v) for v in edges)
