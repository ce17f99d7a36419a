"""A faster slowest stage at little cost: ``period_cap_ns`` and ``kera.hls.synth._free_speed``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import kera.hls.synth as synth
from kera import load
from kera.hls.report import build_report
from kera.hls.schedule import schedule
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel, SimpleModel
from tests.conftest import SHARED_KERNELS, needs_verilator
from tests.hls.test_schedule import chain, check

MODEL = SimpleModel()
ISQRT = SHARED_KERNELS / "peers" / "isqrt32.kera"
GF_MUL = Path(__file__).resolve().parents[1] / "opt" / "kernels" / "gf_mul.kera"


def _slowest(s: object) -> float:
    return max(s.finish_ns.values())  # type: ignore[attr-defined]


def test_a_period_cap_balances_the_stages_at_the_same_latency() -> None:
    """Six adds where four fit a stage: two stages either way; the cap asks for 3 + 3."""
    g = chain(["add"] * 6)
    d = MODEL.delay_ns("add", 16)
    clock = 900.0 / (4.2 * d + CostModel(MODEL).overhead_ns)  # 4.2 adds' usable period
    free = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL)
    capped = schedule(g, "f", family="simple", clock_mhz=clock, model=MODEL,
                      period_cap_ns=3.5 * d)
    assert free.latency == capped.latency == 2
    assert _slowest(free) >= 3 * d - 1e-9
    assert _slowest(capped) == pytest.approx(3 * d)
    assert check(capped) == check(free)  # the same register bits: one value and `b`


def test_a_cap_below_the_slowest_op_stops_at_that_op() -> None:
    g = chain(["add"] * 3)
    d = MODEL.delay_ns("add", 16)
    s = schedule(g, "f", family="simple", clock_mhz=12.0, model=MODEL, period_cap_ns=0.1 * d)
    assert s.latency == 3 and _slowest(s) == pytest.approx(d)


@pytest.mark.skipif(not ISQRT.is_file(), reason="../shared/kernels/peers is not beside the repo")
@pytest.mark.parametrize(("board", "before", "after"), [("ulx3s", 26.9, 33.4),
                                                         ("icebreaker", 13.1, 15.4)])
def test_isqrt32_at_the_board_clock_gets_a_faster_stage_for_free(
        monkeypatch: pytest.MonkeyPatch, board: str, before: float, after: float) -> None:
    """isqrt32's register-minimal schedule chains most rows in one stage; the free schedule
    splits them evenly: the same latency, LUTs and flip-flops, a faster estimate (and placed:
    ECP5 32.8 -> 41.5 MHz, docs/models.md)."""
    loaded = load(ISQRT)

    def report(rounds: int) -> dict:
        monkeypatch.setattr(synth, "FREE_ROUNDS", rounds)
        s, b, model = plan_schedule(loaded.graph, loaded.top, board=board)
        return build_report(s, b, model=model, top=loaded.top)

    rounds = synth.FREE_ROUNDS
    slow, fast = report(0), report(rounds)
    assert fast["latency_cycles"] == slow["latency_cycles"]
    for k in ("lut", "ff", "carry"):
        assert fast["estimate"][k] <= slow["estimate"][k]
    assert slow["estimate"]["fmax_mhz"] == pytest.approx(before, abs=0.1)
    assert fast["estimate"]["fmax_mhz"] == pytest.approx(after, abs=0.1)
    assert fast["timing"]["max_stage_delay_ns"] <= 0.9 * slow["timing"]["max_stage_delay_ns"]
    assert [n for n in fast["notes"] if n.startswith("stages re-balanced at the same latency")]
    assert not [n for n in slow["notes"] if "re-balanced" in n]
    # the clock, margin and usable period the report states stay the user's
    assert fast["timing"]["margin"] == slow["timing"]["margin"]
    assert fast["timing"]["usable_ns"] == slow["timing"]["usable_ns"]


def _isqrt_ii4(monkeypatch: pytest.MonkeyPatch, rounds: int) -> tuple[object, dict]:
    """isqrt32 at II 4 on ECP5 at 25 MHz with ``rounds`` free-speed rounds: (schedule, report)."""
    loaded = load(ISQRT)
    monkeypatch.setattr(synth, "FREE_ROUNDS", rounds)
    s, b, model = plan_schedule(loaded.graph, loaded.top, board="ulx3s", ii=4)
    return s, build_report(s, b, model=model, top=loaded.top)


@pytest.mark.skipif(not ISQRT.is_file(), reason="../shared/kernels/peers is not beside the repo")
def test_a_modulo_schedule_gets_a_faster_stage_for_free(monkeypatch: pytest.MonkeyPatch) -> None:
    """isqrt32 at II 4 (ECP5, 25 MHz): the free schedule was tried at II = 1 only, so the
    modulo schedule kept 20.9 / 36.0 ns stages (estimated 26.8 MHz); now it is re-balanced as
    at II = 1 (33.3), the same latency, LUTs and flip-flops."""
    rounds = synth.FREE_ROUNDS
    _, slow = _isqrt_ii4(monkeypatch, 0)
    _, fast = _isqrt_ii4(monkeypatch, rounds)
    assert slow["ii"] == fast["ii"] == 4
    assert fast["latency_cycles"] == slow["latency_cycles"]
    for k in ("lut", "ff"):
        assert fast["estimate"][k] <= slow["estimate"][k]
    assert slow["estimate"]["fmax_mhz"] == pytest.approx(26.8, abs=0.1)
    assert fast["estimate"]["fmax_mhz"] == pytest.approx(33.3, abs=0.1)
    assert [n for n in fast["notes"] if n.startswith("stages re-balanced at the same latency")]


@needs_verilator
@pytest.mark.skipif(not ISQRT.is_file(), reason="../shared/kernels/peers is not beside the repo")
def test_the_re_balanced_modulo_schedule_simulates_exactly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kera.sim import simulate

    s, report = _isqrt_ii4(monkeypatch, synth.FREE_ROUNDS)
    assert [n for n in report["notes"] if "re-balanced" in n]
    rows = [{"x": v} for v in (0, 1, 2, 3, 4, 15, 16, 17, 2**31, 2**32 - 1, 123_456_789)]
    result = simulate(s, rows)  # type: ignore[arg-type]
    assert result.passed, result.mismatches[:3]
    assert result.outputs == [math.isqrt(r["x"]) for r in rows]


def test_a_small_gain_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """gf_mul at 150 MHz on ECP5: a tighter cap moves its register boundary inside the xor
    network for 3 % of estimated Fmax (placed: 74 -> 96 LUT4 sites for 1 %); kept as it is."""
    loaded = load(GF_MUL)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150.0)
    monkeypatch.setattr(synth, "FREE_ROUNDS", 0)
    base, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150.0)
    assert s.stage == base.stage
    monkeypatch.setattr(synth, "FREE_ROUNDS", 1)
    monkeypatch.setattr(synth, "FREE_STEP", 0.99)  # a 1 % step takes it: the rule decides
    tight, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150.0)
    assert tight.stage != base.stage and tight.latency == base.latency


SHL64 = Path(__file__).resolve().parents[1] / "opt" / "kernels" / "shl64.kera"


def test_a_shallower_split_is_worth_a_few_estimated_luts(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """shl64 at 150 MHz on ECP5: five shift levels in one stage and one in the next, or, for
    about 7 % more estimated LUTs, four and two (placed, 3 seeds: 895 -> 786 LUT4 sites, 149
    -> 194 MHz). With no cost allowed the five-level stage stays."""
    loaded = load(SHL64)
    taken, b, model = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150.0)
    monkeypatch.setattr(synth, "FREE_COST", 0.0)
    kept, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150.0)
    assert taken.latency == kept.latency == 2
    fast, slow = synth._judge(taken, model, b), synth._judge(kept, model, b)
    assert fast is not None and slow is not None
    assert slow[0] < fast[0] <= 1.1 * slow[0]  # more estimated LUTs, within the allowance
    assert fast[2] <= 0.9 * slow[2]
    assert [n for n in taken.notes if n.startswith("stages re-balanced at the same latency")]
