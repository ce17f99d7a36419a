"""Every shared kernel parses with no diagnostics and round-trips exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from kera.syntax import SyntaxKind as K
from kera.syntax import parse

KERNELS = Path(__file__).parents[2].parent / "shared" / "kernels"
FILES = sorted(KERNELS.glob("*.kera")) if KERNELS.is_dir() else []

pytestmark = pytest.mark.skipif(not FILES, reason=f"no kernels in {KERNELS}")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_kernel_parses_cleanly(path: Path) -> None:
    data = path.read_bytes()
    result = parse(data)
    assert result.diagnostics == []
    assert result.tree.text().encode() == data
    assert result.tree.span.end == len(data)
    kinds = {node.kind for node in result.tree.descendants()}
    assert K.ERROR not in kinds
    assert K.FN in kinds


def test_every_kernel_has_a_top_function() -> None:
    for path in FILES:
        tree = parse(path.read_bytes()).tree
        attrs = [
            attr.first_token(K.IDENT).text
            for fn in tree.child_nodes()
            if fn.kind == K.FN
            for attr in fn.child_nodes()
            if attr.kind == K.ATTR
        ]
        assert attrs.count("top") == 1, path.name
