"""``kera.testing.assert_parity``: the three-line helper users put in their own test suites."""

from __future__ import annotations

import pytest

from kera import register_target, unregister_target
from kera.backends import unavailable
from kera.backends.cpu import ops as cpu_ops
from kera.testing import assert_parity
from tests.conftest import EXAMPLES

FIR8 = EXAMPLES / "fir8.kera"


def test_assert_parity_passes_and_returns_the_report() -> None:
    targets = [t for t in ("cpu", "wasm") if not unavailable(t)]
    report = assert_parity(FIR8, targets=targets, vectors=1000)
    assert [r.target for r in report.results] == targets and report.ok


@pytest.mark.skipif(bool(unavailable("cpu")), reason="no C compiler")
def test_assert_parity_fails_with_the_table(monkeypatch) -> None:
    monkeypatch.setitem(cpu_ops.TABLE, "mul", cpu_ops.TABLE["add"])
    with pytest.raises(AssertionError, match=r"parity failed\n.*fir8.*\n.*\ncpu .* mismatch"):
        assert_parity(FIR8, targets=["cpu"], vectors=100)


def test_assert_parity_skips_a_target_that_cannot_run() -> None:
    register_target("nowhere", lambda s, i, r: None, lambda: "not installed here")
    try:
        with pytest.raises(pytest.skip.Exception, match="not installed here"):
            assert_parity(FIR8, targets=["nowhere"], vectors=10)
        with pytest.raises(AssertionError, match="cannot run here"):
            assert_parity(FIR8, targets=["nowhere"], vectors=10, skip_unavailable=False)
    finally:
        unregister_target("nowhere")
