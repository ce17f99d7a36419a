"""Per-opcode tables: the entry for an opcode a table deliberately leaves out.

Every backend and analysis keeps one table keyed by the registry's opcodes (``kera.ir.ops.OPS``;
ARCHITECTURE.md, invariant 1). An opcode a table has no rule for is not simply absent: its entry
is ``Unsupported(reason)``, so ``tests/test_op_tables.py`` can tell a deliberate gap from a
forgotten one, and a lowering that meets it can say why.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A table entry for an opcode the table deliberately has no rule for, and why."""

    reason: str


__all__ = ["Unsupported"]
