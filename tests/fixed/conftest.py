"""Registers the ``slow`` marker the exhaustive RTL tests carry (deselect: ``-m 'not slow'``)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a long test (Verilator builds, place and route)")
