"""Backends emit code in ``schedule.order`` (ARCHITECTURE.md, invariant 3), for any valid one."""

from __future__ import annotations

import dataclasses

import pytest

from kera.backends.cpu import TABLE as C_TABLE
from kera.backends.cpu import emit_c
from kera.backends.lower import Emitter, LoweringError, OpCall
from kera.backends.ptx import TABLE as PTX_TABLE
from kera.backends.ptx import emit_ptx
from kera.backends.wasm import emit_wat
from kera.elaborate import build_program
from kera.hls.pipeline import single_stage
from kera.ir.graph import Graph, Region, param
from kera.ir.types import TupleType, uint
from kera.sim.parity import run_parity
from tests.conftest import kernel_params


def two_chains() -> Graph:
    g = Graph()
    a, b = param(g, 0, "a", uint(8)), param(g, 1, "b", uint(8))
    left = g.add("mul", uint(8), [a, b])
    right = g.add("popcount", uint(8), [b])
    g.add_region(Region("f", (a, b), g.add("tuple", TupleType((uint(8),) * 2), [left, right])))
    return g


@pytest.mark.parametrize("emit", [emit_c, emit_wat, emit_ptx])
def test_code_follows_the_schedule_order(emit) -> None:  # noqa: ANN001
    schedule = single_stage(two_chains(), "f")
    order = list(schedule.order)
    kinds = [schedule.graph[n].op for n in order]
    swapped = order.copy()
    i, j = kinds.index("mul"), kinds.index("popcount")
    swapped[i], swapped[j] = swapped[j], swapped[i]
    start, markers = {emit_c: ("const size_t i =", ("v0 * v1", "k_pop32(")),
                      emit_wat: ("(loop", ("mul", "popcnt")),
                      emit_ptx: (".entry", ("mul.lo", "popc"))}[emit]
    for sequence, want in ((order, markers[0]), (swapped, markers[1])):
        text = emit(dataclasses.replace(schedule, order=tuple(sequence)))
        body = text[text.index(start):]
        assert min(markers, key=body.index) == want


def test_an_invalid_order_is_refused() -> None:
    schedule = single_stage(two_chains(), "f")
    broken = dataclasses.replace(schedule, order=tuple(reversed(schedule.order)))
    with pytest.raises(LoweringError, match="before its inputs"):
        emit_c(broken)


@pytest.mark.parametrize("table", [C_TABLE, PTX_TABLE], ids=["cpu", "ptx"])
def test_a_scalar_lowering_refuses_an_aggregate_operand(table) -> None:  # noqa: ANN001
    call = OpCall("add", (uint(8), uint(8)), uint(8), {}, (None, None))
    with pytest.raises(LoweringError, match="scalar opcode `add` has an aggregate operand"):
        table["add"](Emitter(), call, [["v0"], "v1"])


@pytest.mark.parametrize("kernel", kernel_params())
def test_parity_under_the_real_scheduler(kernel) -> None:
    from kera.hls.synth import plan_schedule

    program = build_program(str(kernel), kernel.read_bytes())
    # The flow's own schedule: division lowered to its network first, as for the RTL.
    # 30 MHz: an SB_MAC16 multiply is costed at its LUT-equivalent delay (docs/models.md)
    schedule = plan_schedule(program.graph, program.top, board="icebreaker", clock_mhz=30.0)[0]
    report = run_parity(program.graph, program.top, targets=["cpu", "wasm"], vectors=2000,
                        schedule=schedule)
    assert report.ok, report.table()
    assert report.schedule == schedule.method
