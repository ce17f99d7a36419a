"""The hand-written peer cores of ``benchmarks/hand`` (what ``benchmarks/hand.py`` places beside
kera-hls's) compute their kernels: each is simulated in place of the kernel's emitted Verilog
on the peer's independent reference vectors, with backpressure (Verilator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kera import load
from kera.hls.synth import plan_schedule
from kera.sim import simulate
from tests.conftest import ROOT, SHARED_KERNELS, needs_verilator

HAND = ROOT / "benchmarks" / "hand"
PEERS = SHARED_KERNELS / "peers"

pytestmark = needs_verilator


@pytest.mark.parametrize("core", sorted(HAND.glob("*.v")), ids=lambda p: p.stem)
def test_a_hand_core_computes_its_kernel(core: Path, tmp_path: Path) -> None:
    kernel, vectors = PEERS / f"{core.stem}.kera", PEERS / f"{core.stem}.vectors.jsonl"
    if not vectors.is_file():
        pytest.skip(f"{vectors} is absent")
    loaded = load(str(kernel))
    schedule = plan_schedule(loaded.graph, loaded.top, board="icebreaker")[0]
    result = simulate(schedule, vectors, verilog=core.read_text(encoding="utf-8"),
                      backpressure=True, build_dir=tmp_path)
    assert result.passed, result.mismatches[:3]
    assert len(result.outputs) == len(vectors.read_text().splitlines()) > 0
