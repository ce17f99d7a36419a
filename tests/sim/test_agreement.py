"""One design, whatever the command: `synthesize`, `sim`, `run --target rtl` and `parity` agree.

A `#[pipeline(ii = 2)]` function is built from its source and from the `.keg` that `compile`
wrote, at every `-O` level; each command must build the same design: the same latency, the same
II (the directive survives every pass and the `.keg`) and the same Verilog (its digest, the
header that names the board and file left out). The simulations are real; the test only
watches which design each command handed to the simulator.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import kera.sim.runner as runner
from kera.cli import main
from kera.sim.runner import design_digest
from tests.conftest import needs_verilator

pytestmark = needs_verilator

SRC = """\
#[top]
#[pipeline(ii = 2)]
fn f(x: u32) -> u32 {
    x / 10
}
"""
ROWS = [{"x": 5}, {"x": 123}, {"x": 4000000000}]
_SIMULATING = re.compile(r"simulating `f` \(verilator, latency (\d+), ii (\d+), verilog (\w+)\)")


@pytest.fixture
def simulated(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, str]]:
    """Record (latency, II, Verilog digest) of every design a command simulates."""
    seen: list[tuple[int, int, str]] = []
    real = runner.simulate

    def watched(schedule, *args, **kwargs):
        result = real(schedule, *args, **kwargs)
        seen.append((schedule.latency, schedule.ii, result.verilog_digest))
        return result

    monkeypatch.setattr(runner, "simulate", watched)
    return seen


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


@pytest.mark.parametrize("level", [0, 1, 2])
def test_every_command_builds_the_same_design(
    level: int, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    simulated: list[tuple[int, int, str]],
) -> None:
    src = tmp_path / "f.kera"
    src.write_text(SRC, encoding="utf-8")
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    keg = tmp_path / "f.keg"
    _cli(capsys, "compile", str(src), f"-O{level}", "-o", str(keg))
    designs = set()
    for file in (src, keg):
        opt = [f"-O{level}"]
        out_dir = tmp_path / f"syn-{file.suffix[1:]}"
        _cli(capsys, "synthesize", str(file), *opt, "-o", str(out_dir))
        report = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
        verilog = (out_dir / "f.v").read_text(encoding="utf-8")
        synthesized = (report["latency_cycles"], report["ii"], design_digest(verilog))
        assert synthesized[1] == 2 and "// ii:          2" in verilog
        assert "Timing met" in (out_dir / "report.txt").read_text(encoding="utf-8")

        _, err = _cli(capsys, "sim", str(file), *opt, "--inputs", str(inputs))
        m = _SIMULATING.search(err)
        assert m is not None, err
        assert (int(m.group(1)), int(m.group(2))) == synthesized[:2]
        assert synthesized[2].startswith(m.group(3))
        assert "ii observed 2 (report: 2)" in err

        out, _ = _cli(capsys, "run", str(file), *opt, "--target", "rtl", "--inputs", str(inputs))
        assert [json.loads(line) for line in out.splitlines()] == [r["x"] // 10 for r in ROWS]
        _cli(capsys, "parity", str(file), *opt, "--targets", "rtl", "--vectors", "3")
        assert len(simulated) == 3  # sim, run --target rtl, parity
        assert set(simulated) == {synthesized}, (file.name, simulated, synthesized)
        simulated.clear()
        designs.add(synthesized)
    assert len(designs) == 1  # the source and its .keg are one design


def test_the_reports_deadline_figures_are_what_the_rtl_does(tmp_path: Path) -> None:
    """First accept right after reset, first result `fill_cycles` later, then one per II."""
    from kera.elaborate import build_program
    from kera.hls.synth import synthesize
    from kera.opt import optimize
    from kera.sim import simulate

    p = build_program("f.kera", SRC)
    result = synthesize(optimize(p.graph, 0), "f", clock_mhz=12.0, outdir=tmp_path, source=p)
    d = result.report["deadline"]
    sim = simulate(result.schedule, ROWS)
    assert sim.passed and len(sim.accepted) == len(ROWS) > 1
    assert sim.accepted[0] == d["reset_to_first_accept_cycles"]
    assert sim.delivered[0] - sim.accepted[0] == d["fill_cycles"] == result.schedule.latency > 1
    gaps = {b - a for a, b in zip(sim.accepted, sim.accepted[1:], strict=False)}
    assert gaps == {result.schedule.ii} and d["throughput_per_s"] == 12e6 / 2
