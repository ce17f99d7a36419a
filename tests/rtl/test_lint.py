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
