"""synthesize: the files it writes, its errors, the emitter hook, the shared kernels."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.hls.report import load_schema
from kera.hls.synth import SynthResult, synthesize
from kera.hls.timing import SimpleModel
from kera.ir import keg
from tests.conftest import EXAMPLES, kernel_params

MODEL = SimpleModel()
SRC = """\
#[top]
#[pipeline(ii = 2)]
pub fn g(a: u32, b: u32) -> (u32, u32) {
    (a / b, (a + b) * a)
}
"""


def _program():
    p = build_program("g.kera", SRC)
    assert p.graph is not None and p.top == "g", p.diagnostics
    return p


def test_writes_reports_and_keg(tmp_path: Path) -> None:
    p = _program()
    res = synthesize(p.graph, "g", board="icebreaker", clock_mhz=30.0, outdir=tmp_path / "out",
                     source=p, model=MODEL)
    assert set(res.paths) == {"report.json", "report.txt", "keg"}
    report = json.loads(res.paths["report.json"].read_text())
    assert report == res.report
    jsonschema.validate(report, load_schema())
    assert report["fingerprint"] == p.graph.fingerprint()
    assert report["ii"] == 2 and res.schedule.ii == 2  # from #[pipeline(ii = 2)]
    assert report["latency_cycles"] == res.schedule.latency > 1  # the divider is pipelined
    assert report["clock_mhz"] == 30.0 and report["options"]["margin"] == 0.1
    assert res.paths["keg"].name == "g.keg"
    assert keg.load(res.paths["keg"].read_bytes()).fingerprint() == p.graph.fingerprint()
    assert "latency" in res.paths["report.txt"].read_text()
    assert not any(n.op in ("div", "rem") for n in res.schedule.graph.nodes.values())


def test_defaults_to_the_board_clock(tmp_path: Path) -> None:
    p = _program()
    res = synthesize(p.graph, "g", board="ulx3s", outdir=tmp_path, model=MODEL, ii=1)
    assert res.report["clock_mhz"] == 25.0 and res.report["family"] == "ecp5"
    assert res.report["ii"] == 1


def test_errors(tmp_path: Path) -> None:
    p = _program()
    with pytest.raises(KeraError) as info:
        synthesize(p.graph, "g", board="nosuchboard", outdir=tmp_path, model=MODEL)
    assert info.value.exit_code == 2 and "unknown board `nosuchboard`" in info.value.message
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(KeraError) as info:
            synthesize(p.graph, "g", clock_mhz=bad, outdir=tmp_path, model=MODEL)
        assert info.value.exit_code == 2 and "--clock-mhz" in info.value.message
    with pytest.raises(KeraError) as info:
        synthesize(p.graph, "g", clock_mhz=500.0, outdir=tmp_path, model=MODEL)
    assert info.value.exit_code == 1 and "try --clock-mhz" in info.value.message
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(KeraError) as info:
        synthesize(p.graph, "g", outdir=blocker / "sub", model=MODEL)
    assert info.value.exit_code == 2


def test_emitter_hook(tmp_path: Path) -> None:
    seen: list[tuple[int, Path]] = []

    def emit(result: SynthResult, outdir: Path) -> dict[str, Path]:
        seen.append((result.schedule.latency, outdir))
        path = outdir / "g.v"
        path.write_text(f"// latency {result.report['latency_cycles']}\n")
        return {"verilog": path}

    p = _program()
    res = synthesize(p.graph, "g", outdir=tmp_path, model=MODEL, emitters=[emit])
    assert seen == [(res.schedule.latency, tmp_path)]
    assert res.paths["verilog"].read_text() == f"// latency {res.schedule.latency}\n"


def _real_model(family: str) -> object:
    models = pytest.importorskip("kera.hls.models")
    try:
        return models.load_model(family)
    except (AttributeError, KeraError) as e:
        pytest.skip(f"no fitted model for {family} yet: {e}")


@pytest.mark.parametrize("kernel", kernel_params())
@pytest.mark.parametrize("board", ["icebreaker", "ulx3s"])
def test_shared_kernels(kernel: Path, board: str, tmp_path: Path) -> None:
    from kera.hls.boards import load_board

    model = _real_model(load_board(board).family)
    p = build_program(str(kernel), kernel.read_bytes())
    assert p.graph is not None and p.top is not None, p.diagnostics
    res = synthesize(p.graph, p.top, board=board, outdir=tmp_path, source=p, model=model)
    jsonschema.validate(res.report, load_schema())
    assert res.report["estimate"]["fmax_mhz"] >= res.report["clock_mhz"] * 0.999
    assert res.report["latency_cycles"] >= 1


@pytest.mark.parametrize("recorded", ["bad\x00path.kera", "/", "/nonexistent/gray.kera"])
def test_a_keg_whose_recorded_source_cannot_be_read_still_synthesizes(tmp_path: Path,
                                                                      recorded: str) -> None:
    """A `.keg` records the path of its source (for locations); a damaged or moved one may
    name anything, a NUL byte included (a mutated file's `ValueError` was exit 70 in the
    emitter): locations then fall back to byte offsets."""
    import kera
    from kera.ir import keg
    from kera.opt import format_graph

    graph = kera.load(EXAMPLES / "gray.kera").graph.copy()
    graph.source_path = recorded
    loaded = kera.load(text=keg.write(graph), name="gray.keg")
    assert loaded.graph.source_path == recorded
    syn = kera.synthesize(loaded, "icebreaker", outdir=tmp_path)
    assert syn.paths["verilog"].read_text().startswith("//")
    assert "@" in format_graph(loaded.graph)  # spans as byte ranges
