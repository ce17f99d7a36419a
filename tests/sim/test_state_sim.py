"""Stateful designs in Verilator: cycle-exact, bubbles and backpressure never move state."""

from __future__ import annotations

import random
import re

import pytest

from kera.rtl import emit_verilog
from kera.sim import simulate
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
    histogram_rows,
    planned,
)

pytestmark = needs_verilator


def rows(kind: str, n: int, seed: int = 1) -> list[dict]:
    r = random.Random(seed)
    if kind == "tup":
        return [{"x": r.randrange(256), "go": r.random() < 0.5} for _ in range(n)]
    bits = 32 if kind == "i32" else 16
    return [{"x": r.randrange(-(1 << bits - 1), 1 << bits - 1)} for _ in range(n)]


CASES = [(ACC, None, "i32"), (MAC, 30, "i16"), (LATE, 30, "i16"), (MOVING_SUM, None, "i16"),
         (TUPLE_BOOL, None, "tup"), (PAIR, 30, "i16")]


@pytest.mark.parametrize("text,clock,kind", CASES)
def test_cycle_exact_with_bubbles_backpressure_and_reset(text: str, clock: float | None,
                                                        kind: str) -> None:
    s = planned(text, clock)
    data = rows(kind, 300)
    plain = simulate(s, data)
    assert plain.passed, plain.mismatches[:3]
    assert plain.latency_observed == s.latency and plain.ii_observed == s.ii
    assert plain.accepted[0] == 0 and plain.accepted[-1] == (len(data) - 1) * s.ii
    bubbles = simulate(s, data, bubbles=True, seed=4)
    assert bubbles.passed, bubbles.mismatches[:3]
    assert bubbles.accepted[-1] > plain.accepted[-1]  # there were bubbles
    pressed = simulate(s, data, backpressure=True, seed=5, passes=2)
    assert pressed.passed, pressed.mismatches[:3]
    assert pressed.outputs == plain.outputs == plain.expected


def test_a_bubble_that_moved_state_would_be_caught() -> None:
    """The same accumulator with its write enabled by `en` alone (bubbles add garbage)."""
    s = planned(ACC)
    v = emit_verilog(s, board="sim", version="t")
    broken, n = re.subn(r"else if \(accept\) (st_\w+) <=", r"else if (en) \1 <=", v)
    assert n == 1
    data = rows("i32", 60)
    assert simulate(s, data, verilog=broken).passed  # no bubble: nothing to see
    assert not simulate(s, data, verilog=broken, bubbles=True, seed=4).passed


def test_a_reset_that_kept_state_would_be_caught() -> None:
    s = planned(ACC)
    v = emit_verilog(s, board="sim", version="t")
    broken, n = re.subn(r"if \(rst\) (st_\w+) <= 32'd0;\n\s*else if", r"if", v)
    assert n == 1
    data = rows("i32", 40)
    assert simulate(s, data, verilog=broken).passed
    failed = simulate(s, data, verilog=broken, passes=2)
    assert not failed.passed and any("pass 2" in m for m in failed.mismatches)


def test_the_histogram_in_block_ram_on_10k_transfers() -> None:
    s = planned(HISTOGRAM)
    data = histogram_rows(10_000)
    run = simulate(s, data, bubbles=True, seed=6)
    assert run.passed, run.mismatches[:3]
    assert run.accepted[0] == 256 and s.ii == 1 and run.latency_observed == s.latency
    pressed = simulate(s, data[:3000], backpressure=True, seed=7, passes=2)
    assert pressed.passed, pressed.mismatches[:3]  # the reset clears the RAM again


def test_without_forwarding_the_histogram_reads_stale_counts() -> None:
    s = planned(HISTOGRAM)
    v = emit_verilog(s, board="sim", version="t")
    broken, n = re.subn(r"\(mem_counts_fv & \(mem_counts_fa == s0_bin\)\) \? mem_counts_fd : ",
                        "", v)
    assert n == 1
    failed = simulate(s, histogram_rows(400), verilog=broken)
    assert not failed.passed


@pytest.mark.parametrize("text,make", [
    (GUARDED, lambda r: {"a": r.randrange(8), "v": r.randrange(4096), "we": r.random() < 0.6}),
    (TINY, lambda r: {"a": r.randrange(4), "b": r.randrange(4), "v": r.randrange(16)}),
])
def test_guarded_and_tiny_memories(text: str, make: object) -> None:
    r = random.Random(8)
    data = [make(r) for _ in range(1500)]  # type: ignore[operator]
    s = planned(text)
    run = simulate(s, data, backpressure=True, seed=9, passes=2)
    assert run.passed, run.mismatches[:3]
    assert simulate(s, data, bubbles=True, seed=10).passed
