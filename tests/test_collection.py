"""Every `tests/**/test_*.py` file is collected by the configuration `make test` runs.

pytest silently skips folders named like its `norecursedirs` (`build`, `dist`, `.*`, ...), which
once hid a whole package of tests from CI; this test fails when any test file goes unseen again.
A module that skips itself for a missing tool (``pytest.importorskip``) is seen: pytest reports
it with the reason.
"""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import ROOT


def test_every_test_file_is_collected() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-rs", "-p", "no:cacheprovider",
         "-p", "no:xdist", "tests"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    # `-q` lists node ids (`tests/a.py::t`); `-qq` lists counts (`tests/a.py: 3`).
    pattern = re.compile(r"^(tests/\S+?\.py)(?:::|: \d+$)", re.M)
    collected = {m.group(1) for m in pattern.finditer(proc.stdout)}
    skipped = re.compile(r"^SKIPPED \[\d+\] (tests/\S+?\.py):\d+: \S", re.M)
    collected |= {m.group(1) for m in skipped.finditer(proc.stdout)}
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py")}
    assert on_disk, "no test files found"
    missing = sorted(on_disk - collected)
    assert not missing, f"test files pytest does not collect: {missing}"
