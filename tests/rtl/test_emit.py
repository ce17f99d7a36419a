"""The Verilog emitter: golden text, determinism, ports, names, errors."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.hls.pipeline import single_stage
from kera.ir.graph import Graph, Region, param
from kera.ir.types import TupleType, uint
from kera.rtl import emit_verilog
from tests.rtl.schedules import depth_schedule

GOLDEN = Path(__file__).parent / "golden"

# Two small designs, inline so that the golden files depend on nothing outside the repository.
SATURATE = b"""\
// Saturating add of two signed bytes, plus the absolute difference.
#[top]
pub fn saturate(a: i8, b: i8) -> (i8, u8) {
    let wide = (a as i16) + (b as i16);
    let sum = if wide > 127 { 127i8 } else if wide < -128 { -128i8 } else { wide as i8 };
    let diff = (a as i16) - (b as i16);
    let mag = if diff < 0 { -diff } else { diff };
    (sum, mag as u8)
}
"""
MAC = b"""\
// Multiply-accumulate over a window, with a table lookup and shifts.
const T: [u8; 4] = [3, 5, 7, 11];

#[top]
pub fn mac(x: [u8; 4], k: u2, s: u4) -> u16 {
    let mut acc = 0u16;
    for i in 0..4 {
        acc += (x[i] as u16) * (T[i] as u16);
    }
    let t = T[k] as u16;
    (acc << s) ^ (acc >> s) ^ t
}
"""


def _build(name: str, src: bytes) -> tuple[Graph, str]:
    program = build_program(f"{name}.kera", src)
    assert program.ok, program.diagnostics
    assert program.graph is not None and program.top is not None
    return program.graph, program.top


def _emit(schedule, src: bytes | None = None, name: str | None = None) -> str:  # type: ignore[no-untyped-def]
    return emit_verilog(schedule, board="icebreaker", version="0.1.0", source_name=name,
                        source=src)


@pytest.mark.parametrize(
    ("name", "src", "stages"),
    [("saturate", SATURATE, 1), ("mac", MAC, 3)],
    ids=["saturate-1stage", "mac-3stage"],
)
def test_golden(name: str, src: bytes, stages: int) -> None:
    graph, top = _build(name, src)
    schedule = single_stage(graph, top) if stages == 1 else depth_schedule(graph, top, stages)
    text = _emit(schedule, src, f"{name}.kera")
    path = GOLDEN / f"{name}_{stages}stage.v"
    if os.environ.get("KERA_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden file {path}; run with KERA_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), \
        f"{path.name} changed; if intended, rerun with KERA_UPDATE_GOLDEN=1"


def test_deterministic_across_builds() -> None:
    texts = set()
    for _ in range(2):
        graph, top = _build("mac", MAC)
        texts.add(_emit(depth_schedule(graph, top, 3), MAC, "mac.kera"))
        texts.add(_emit(depth_schedule(graph, top, 3), MAC, "mac.kera"))
    assert len(texts) == 1


def test_header_names_fingerprint_board_clock_latency_and_ii() -> None:
    graph, top = _build("mac", MAC)
    text = _emit(depth_schedule(graph, top, 3, ii=2))
    head = text.split("module", 1)[0]
    assert f"fingerprint: {graph.fingerprint()}" in head
    assert "kera-hls 0.1.0" in head and "board:       icebreaker" in head
    assert "clock:       12 MHz" in head
    assert "latency:     3 cycles" in head and "ii:          2" in head
    assert text.splitlines()[0].startswith("//")


def test_ports_in_contract_order_with_flat_widths() -> None:
    graph, top = _build("mac", MAC)
    text = _emit(single_stage(graph, top))
    ports = re.findall(r"^\s+(input|output)\s+wire\s+(\[\d+:0\]\s+)?(\w+)", text, re.MULTILINE)
    got = [(d, n, int(w.strip()[1:].split(":")[0]) + 1 if w else 1) for d, w, n in ports]
    assert got == [
        ("input", "clk", 1), ("input", "rst", 1), ("input", "in_valid", 1),
        ("output", "in_ready", 1), ("input", "x", 32), ("input", "k", 2), ("input", "s", 4),
        ("output", "out_valid", 1), ("input", "out_ready", 1), ("output", "out", 16),
    ]


def test_banks_are_named_after_source_variables_and_stages() -> None:
    graph, top = _build("saturate", SATURATE)
    text = _emit(depth_schedule(graph, top, 3), SATURATE)
    assert re.search(r"reg \[15:0\] s0_wide;", text)
    assert re.search(r"reg \[15:0\] s0_diff;", text)
    assert "valid_s2" in text and "assign out_valid = valid_s2;" in text
    plain = _emit(depth_schedule(graph, top, 3), b"")  # no source text: positional names
    assert "s0_wide" not in plain and re.search(r"reg \[15:0\] s0_n\d+;", plain)


def test_one_register_bank_per_stage_holds_exactly_the_crossing_values() -> None:
    graph, top = _build("mac", MAC)
    schedule = depth_schedule(graph, top, 3)
    text = _emit(schedule)
    for s, bank in enumerate(schedule.crossing()):
        regs = re.findall(rf"^\s+reg (?:\[\d+:0\] )?(s{s}_\w+);", text, re.MULTILINE)
        assert len(regs) == len(bank), (s, regs)


def _graph_with_param(name: str) -> tuple[Graph, str]:
    g = Graph()
    a = param(g, 0, "a", uint(8))
    b = param(g, 1, name, uint(8))
    g.add_region(Region("f", (a, b), g.add("add", uint(8), [a, b])))
    return g, "f"


@pytest.mark.parametrize(
    "name",
    [
        "clk",
        "rst",
        "out",
        "in_ready",
        "out_valid",
        "module",
        "reg",
        "wire",
        "logic",
        "always_ff",
        "é",
    ],
)
def test_unusable_parameter_name_is_an_error_naming_it(name: str) -> None:
    graph, top = _graph_with_param(name)
    with pytest.raises(KeraError) as info:
        _emit(single_stage(graph, top))
    assert info.value.exit_code == 1
    assert f"parameter `{name}`" in info.value.message


def test_internal_names_never_clash_with_parameters() -> None:
    graph, top = _graph_with_param("en")
    text = _emit(single_stage(graph, top))
    assert re.search(r"input\s+wire \[7:0\]\s+en,", text)
    assert "wire en_2 = ~out_valid | out_ready;" in text


def test_zero_width_port_is_an_error() -> None:
    g = Graph()
    a = param(g, 0, "a", TupleType(()))
    g.add_region(Region("f", (a,), g.add("tuple", TupleType((uint(1),)), [g.add(
        "const", uint(1), (), {"value": 1})])))
    with pytest.raises(KeraError, match="parameter `a`"):
        _emit(single_stage(g, "f"))


def test_sums_read_by_sums_of_the_same_stage_are_kept_from_alumacc() -> None:
    """fir8 on ulx3s at 150 MHz, 2 stages: stage 0 sums x0 - 2 x1, 3 x2 + 4 x3, 4 x4 + 3 x5,
    x7 - 2 x6 (registered), stage 1 adds them pairwise and then the two halves. The sums
    another sum of two variables reads in the same stage are 3 x2 = x2 + (x2 << 1), 3 x5, and
    stage 1's two pair sums: 4 kept wires (yosys would otherwise merge each tree into a
    3- or 4-operand $macc, a carry-save network of LUTs). fir8 on icebreaker at 55 MHz has one
    adder level per stage: none."""
    from kera import load
    from kera.hls.synth import plan_schedule
    from kera.rtl.emit import chained_sums

    loaded = load(Path(__file__).resolve().parents[3] / "shared/kernels/peers/fir8.kera")
    wide = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150.0)[0]
    assert wide.latency == 2
    text = emit_verilog(wide, board="ulx3s", version="0.1.0")
    kept = [line for line in text.splitlines() if "(* keep *)" in line]
    assert len(kept) == 4 and all(" + " in line for line in kept)
    assert sorted(wide.stage[n] for n in chained_sums(wide)) == [0, 0, 1, 1]
    narrow = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55.0)[0]
    assert chained_sums(narrow) == set()
