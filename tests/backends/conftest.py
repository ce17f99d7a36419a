"""Test configuration for the backends: the `slow` marker (the big generated region)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Register the `slow` marker (deselect with `-m "not slow"`)."""
    config.addinivalue_line("markers", "slow: builds a ~50,000-node region (minutes)")
