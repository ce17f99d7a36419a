"""Emitted Verilog against the real tools: Verilator -Wall gives nothing, pyverilog reads ports."""

from __future__ import annotations

from pathlib import Path

import pytest

from kera.hls.pipeline import single_stage
from kera.rtl import emit_verilog, lint, parse_ports
from tests.conftest import EXAMPLES, kernel_params, needs_verilator
from tests.rtl.allops import allops_graph
from tests.rtl.edge_designs import edge_designs
from tests.rtl.schedules import depth_schedule, load, schedules


def _pyverilog_missing() -> bool:
    try:
        import pyverilog  # noqa: F401
    except ImportError:
        return True
    return False


def _sources() -> list:
    examples = [pytest.param(p, id=f"examples-{p.stem}") for p in sorted(EXAMPLES.glob("*.kera"))]
    return kernel_params() + examples


def _emit(schedule) -> str:  # type: ignore[no-untyped-def]
    return emit_verilog(schedule, board="icebreaker", version="0.1.0")


@needs_verilator
@pytest.mark.parametrize("path", _sources())
def test_lint_is_clean_for_every_schedule(path: Path) -> None:
    graph, top = load(path)
    for name, schedule in schedules(graph, top).items():
        assert lint(_emit(schedule)) == [], f"{path.name} with the {name} schedule"


@needs_verilator
def test_lint_is_clean_for_every_opcode() -> None:
    graph, top = allops_graph()
    for name, schedule in schedules(graph, top).items():
        if name != "sdc":
            assert lint(_emit(schedule)) == [], name
    graph, top = allops_graph(with_state=True)  # every opcode, `state` too: one stage
    assert lint(_emit(single_stage(graph, top))) == []


@needs_verilator
@pytest.mark.parametrize("name", list(edge_designs()))
def test_lint_is_clean_for_edge_designs(name: str) -> None:
    graph, top, _ = edge_designs()[name]
    for stages in (1, 3):
        assert lint(_emit(depth_schedule(graph, top, stages))) == [], stages


@needs_verilator
def test_lint_reports_warnings() -> None:
    bad = "module bad(input wire [7:0] a, output wire [3:0] y);\n  assign y = a;\nendmodule\n"
    warnings = lint(bad)
    assert warnings and any("WIDTH" in w for w in warnings)


@pytest.mark.skipif(_pyverilog_missing(), reason="pyverilog is not installed")
@pytest.mark.parametrize("path", kernel_params())
def test_ports_match_the_signature(path: Path) -> None:
    graph, top = load(path)
    params, result = graph.signature(top)
    ports = parse_ports(_emit(schedules(graph, top)["depth3"]))
    want = [("clk", "input", 1), ("rst", "input", 1), ("in_valid", "input", 1),
            ("in_ready", "output", 1)]
    want += [(name, "input", t.flat_width) for name, t in params]
    want += [("out_valid", "output", 1), ("out_ready", "input", 1),
             ("out", "output", result.flat_width)]
    assert [(p.name, p.direction, p.width) for p in ports] == want


def test_a_signed_comparison_of_two_variables_is_a_borrow() -> None:
    """`a < b` of i16 variables feeding a select: yosys 0.70 synth_ecp5 copies the last LUT of
    `$signed(a) < $signed(b)` into every select bit (110 LUT4, 54 PFUMX, 40 L6MUX21), the
    borrow of the sign-extended difference is its chain's own output (9 CCU2C, 16 LUT4). A
    comparison with a constant keeps the operator (yosys trims its chain)."""
    from kera.elaborate import build_program
    from kera.hls.synth import plan_schedule
    from kera.rtl import emit_verilog

    src = ("#[top]\npub fn f(a: i16, b: i16, x: u16, y: u16) -> (u16, bool, bool) {\n"
           "    (if a < b { x } else { y }, a >= b, a > -5)\n}\n")
    p = build_program("f.kera", src)
    s = plan_schedule(p.graph, "f", board="ulx3s")[0]
    v = emit_verilog(s, board="ulx3s", version="t")
    assert "{{1{a[15]}}, a} - {{1{b[15]}}, b}" in v
    assert "$signed(a) < $signed(b)" not in v and "$signed(a) >= $signed(b)" not in v
    assert "$signed(a) > $signed(16'" in v or "$signed(a) >= $signed(16'" in v
