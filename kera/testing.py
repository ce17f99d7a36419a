"""A pytest helper for users: check a Kera program's targets against the interpreter.

    from kera.testing import assert_parity

    def test_my_kernel():
        assert_parity("my.kera", targets=["cpu", "wasm"], vectors=1000)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kera.sim.parity import ParityReport, run_parity


def assert_parity(
    path: str | Path,
    *,
    targets: Sequence[str] | None = None,
    vectors: int = 1000,
    seed: int = 0,
    top: str | None = None,
    skip_unavailable: bool = True,
) -> ParityReport:
    """Assert that every target gives the interpreter's bits on edge and random inputs.

    ``path`` is a ``.kera`` or ``.keg`` file. A requested target that cannot run here (no
    compiler, no device) skips the test when ``skip_unavailable`` and pytest is present;
    otherwise it fails. Returns the report, whose ``table()`` is the failure message.
    """
    from kera import load

    loaded = load(path, top=top)
    report = run_parity(loaded.graph, loaded.top, targets=targets, vectors=vectors, seed=seed)
    if not report.ok:
        raise AssertionError("parity failed\n" + report.table())
    if report.exit_code != 0:
        message = "a requested target cannot run here\n" + report.table()
        if skip_unavailable:
            try:
                import pytest
            except ImportError:
                pass
            else:
                pytest.skip(message)
        raise AssertionError(message)
    return report


__all__ = ["assert_parity"]
