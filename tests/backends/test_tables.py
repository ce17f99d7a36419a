"""Every backend has one table entry per opcode of the registry (ARCHITECTURE.md, inv. 1)."""

from __future__ import annotations

import pytest

from kera.backends import BACKENDS, table
from kera.backends.lower import LoweringError, Unsupported, check_table
from kera.ir.ops import OPS


@pytest.mark.parametrize("backend", BACKENDS)
def test_table_covers_the_registry(backend: str) -> None:
    entries = table(backend)
    assert sorted(entries) == sorted(OPS), f"{backend}: table and registry differ"
    for op, entry in entries.items():
        if isinstance(entry, Unsupported):
            assert entry.reason.strip(), f"{backend}: `{op}` is unsupported without a reason"
        else:
            assert callable(entry), f"{backend}: `{op}` entry is not callable"
    check_table(entries, backend)


def test_check_table_names_what_is_missing() -> None:
    partial = dict(table("cpu"))
    del partial["add"]
    with pytest.raises(LoweringError, match=r"missing \['add'\]"):
        check_table(partial, "cpu")
