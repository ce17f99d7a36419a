"""The Verilog of stateful regions: one register per state, written only by advancing transfers."""

from __future__ import annotations

import re

import pytest

from kera.rtl import emit_verilog, lint
from kera.rtl.state import init_bits
from tests.conftest import needs_verilator
from tests.rtl.state_kernels import (
    ACC,
    GUARDED,
    HISTOGRAM,
    LATE,
    MAC,
    MOVING_SUM,
    PAIR,
    TINY,
    TUPLE_BOOL,
    planned,
)


def test_the_accumulator_register() -> None:
    v = emit_verilog(planned(ACC), board="icebreaker", version="t")
    name = re.search(r"reg \[31:0\] (st_\w+);", v).group(1)  # type: ignore[union-attr]
    assert f"if (rst) {name} <= 32'd0;" in v
    # stage 0 computes the next value: it is written when the input is accepted, never else
    assert re.search(rf"else if \(accept\) {name} <= \w+;", v)
    assert f"{name} + x" in v


def test_a_later_write_waits_for_its_stage_valid() -> None:
    s = planned(MAC, 30)
    v = emit_verilog(s, board="icebreaker", version="t")
    slot = s.graph.regions[s.region].states[0]
    ws = s.stage[slot.next]
    assert ws == 1
    assert re.search(r"else if \(en & valid_s0\) st_\w+ <= \w+;", v)
    assert "if (rst) st_" in v and "<= 16'd7;" in v  # the initial value on reset


def test_initial_values_pack_element_0_low() -> None:
    s = planned(TUPLE_BOOL)
    g = s.graph
    t, flag = g.regions[s.region].states
    assert init_bits(g, t.init) == 3 | (1 << 8)  # (3u8, true)
    assert init_bits(g, flag.init) == 0
    v = emit_verilog(s, board="icebreaker", version="t")
    assert "<= 9'd259;" in v


@needs_verilator
@pytest.mark.parametrize("text,clock", [(ACC, None), (MAC, 30), (LATE, 30), (MOVING_SUM, None),
                                        (MOVING_SUM, 60), (TUPLE_BOOL, None), (PAIR, 30)])
def test_stateful_verilog_is_lint_clean(text: str, clock: float | None) -> None:
    v = emit_verilog(planned(text, clock), board="icebreaker", version="t")
    assert lint(v) == []


def test_the_text_is_deterministic() -> None:
    a = emit_verilog(planned(MOVING_SUM), board="icebreaker", version="t")
    b = emit_verilog(planned(MOVING_SUM), board="icebreaker", version="t")
    assert a == b


def test_the_histogram_is_a_block_ram_with_forwarding() -> None:
    v = emit_verilog(planned(HISTOGRAM), board="icebreaker", version="t")
    assert "reg [15:0] mem_counts [0:255];" in v
    assert "if (en) mem_counts_q <= mem_counts[bin];" in v  # address in stage 0, data in 1
    assert "(mem_counts_fv & (mem_counts_fa == s0_bin)) ? mem_counts_fd : mem_counts_q" in v
    assert "assign in_ready = en & ~rst & ~clr_busy;" in v
    assert "if (clr_addr == 8'd255) clr_busy <= 1'b0;" in v
    assert "reg [4095:0]" not in v  # no register holds the whole memory


@needs_verilator
@pytest.mark.parametrize("text", [HISTOGRAM, GUARDED, TINY])
def test_memory_verilog_is_lint_clean(text: str) -> None:
    assert lint(emit_verilog(planned(text), board="icebreaker", version="t")) == []
