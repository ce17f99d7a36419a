"""Sharing never changes a bit: parity of every example at II 1, 2, 3, 4 and 8.

Every example is scheduled on ULX3S at 75 MHz (deep enough pipelines for the binding to fold
registers and share units) at each II; an II below a state recurrence's bound is the
scheduler's one-line error and is skipped. The cheap part runs the interpreter, C and WASM
at every II on the small examples, and Verilator on a few designs that exercise bound registers
and shared units; ``KERA_FOLD_PARITY_ALL=1`` runs every example at every II on every target
(a Verilator build each: many minutes).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from kera.backends import unavailable
from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.hls.pipeline import Schedule
from kera.hls.synth import plan_schedule
from kera.sim.parity import run_parity
from tests.conftest import EXAMPLES, needs_verilator

IIS = (1, 2, 3, 4, 8)
CLOCK = 75.0
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.kera"))
SOFTWARE = ["interp"] + [b for b in ("cpu", "wasm") if not unavailable(b)]
#: (example, II): bound registers, shared units and state (fir_stream).
RTL_CHEAP = [("fir8", 3), ("fir_stream", 4), ("fir_q15", 3)]
ALL = os.environ.get("KERA_FOLD_PARITY_ALL") == "1"
#: Examples whose schedules and builds take long; the cheap part leaves them to the full run
#: (tests/hls/test_sharing_fold.py and tests/sim/test_fold_sim.py check their binding).
HEAVY = frozenset({"aes128", "cordic", "gcd16", "sha256", "xtea"})


@cache
def _program(name: str):  # noqa: ANN202
    path = Path(EXAMPLES / f"{name}.kera")
    program = build_program(str(path), path.read_bytes())
    assert program.ok, program.diagnostics
    return program.graph, program.top


@cache
def _schedule(name: str, ii: int) -> Schedule | None:
    graph, top = _program(name)
    try:
        return plan_schedule(graph, top, board="ulx3s", clock_mhz=CLOCK, ii=ii)[0]
    except KeraError as e:
        assert "cannot be met" in e.message, e.message  # below the recurrence's bound only
        return None


def _parity(name: str, ii: int, targets: list[str], vectors: int) -> None:
    s = _schedule(name, ii)
    if s is None:
        pytest.skip(f"{name}: II {ii} is below its state recurrence's bound")
    graph, top = _program(name)
    report = run_parity(graph, top, targets=targets, vectors=vectors, seed=ii,
                        schedule=s, edge_limit=64)
    for r in report.results:
        assert (r.status, r.mismatches) == ("ok", 0), report.table()


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if ALL or n not in HEAVY])
def test_software_agrees_at_every_ii(name: str) -> None:
    seen: set[tuple[bytes, ...]] = set()
    for ii in IIS:
        s = _schedule(name, ii)
        if s is None or s.order in seen:
            continue  # the same order is the same C and WASM program
        seen.add(s.order)
        _parity(name, ii, SOFTWARE, 100)
    assert seen, f"{name}: no II could be scheduled"


@needs_verilator
@pytest.mark.parametrize(("name", "ii"), RTL_CHEAP)
def test_rtl_agrees_where_registers_and_units_are_shared(name: str, ii: int) -> None:
    s = _schedule(name, ii)
    assert s is not None and s.aligned
    _parity(name, ii, ["rtl"], 200)


if ALL:  # collected only when asked for: not 85 skips in every run

    @needs_verilator
    @pytest.mark.parametrize("ii", IIS)
    @pytest.mark.parametrize("name", EXAMPLE_NAMES)
    def test_rtl_agrees_at_every_ii(name: str, ii: int) -> None:
        _parity(name, ii, ["rtl"], 200)
