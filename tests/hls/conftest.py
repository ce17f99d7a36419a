"""Test configuration for kera.hls: the `slow` marker (tests that run yosys/nextpnr)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Register the `slow` marker (deselect with `-m "not slow"`)."""
    config.addinivalue_line("markers", "slow: runs the real FPGA tools (seconds to minutes)")
