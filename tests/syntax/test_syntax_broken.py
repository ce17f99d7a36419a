"""Golden diagnostics for a corpus of broken programs (tests/syntax/broken/*.kera).

Each ``NAME.kera`` has a ``NAME.expected`` holding ``render_all`` of its diagnostics. Run with
``KERA_UPDATE_GOLDEN=1`` to rewrite the expected files; otherwise they are compared exactly.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kera.syntax import SourceFile, parse, render_all

HERE = Path(__file__).parent
BROKEN = sorted((HERE / "broken").glob("*.kera"))
UPDATE = os.environ.get("KERA_UPDATE_GOLDEN") == "1"


def render(path: Path) -> str:
    data = path.read_bytes()
    result = parse(data)
    assert result.tree.text().encode("utf-8", "surrogateescape") == data
    name = path.relative_to(HERE).as_posix()
    return render_all(SourceFile(name, data), result.diagnostics) + "\n"


def test_corpus_is_large_enough() -> None:
    assert len(BROKEN) >= 40


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_program(path: Path) -> None:
    rendered = render(path)
    expected = path.with_suffix(".expected")
    if UPDATE:
        expected.write_text(rendered, encoding="utf-8")
    assert expected.exists(), f"missing {expected.name}; run with KERA_UPDATE_GOLDEN=1"
    assert rendered.strip(), "a broken program must produce at least one diagnostic"
    assert rendered == expected.read_text(encoding="utf-8")
