"""What the graph builder passes around: typed values, pending literals, variable bindings."""

from __future__ import annotations

from dataclasses import dataclass

from kera.diagnostics import Span
from kera.ir.types import Type


@dataclass(frozen=True, slots=True)
class Val:
    """A graph value: node id and its type. ``id is None`` marks a poisoned value (an error was
    already reported for it; everything built from it stays silent)."""

    id: bytes | None
    type: Type | None

    @property
    def poisoned(self) -> bool:
        """Return True for the error value."""
        return self.id is None


POISON = Val(None, None)


@dataclass(frozen=True, slots=True)
class Lit:
    """An unsuffixed integer literal whose type is not known yet (it takes its context's type)."""

    value: int
    span: Span


Value = Val | Lit


@dataclass(slots=True)
class Binding:
    """A name in scope. ``value`` changes on assignment (SSA renaming happens here)."""

    name: str
    value: Val
    mutable: bool
    span: Span
