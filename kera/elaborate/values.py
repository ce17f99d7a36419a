"""What the graph builder passes around: typed values, pending literals, variable bindings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from kera.diagnostics import Span
from kera.ir.types import IntType, Type


class Val:
    """A graph value: node id and its type. ``id is None`` marks a poisoned value (an error was
    already reported for it; everything built from it stays silent).

    A value object as a frozen dataclass would be (equality and hash by its fields, never
    changed after it is made), written out because the builder makes one per node and a frozen
    dataclass's ``__init__`` costs several times as much.
    """

    __slots__ = ("id", "type")
    __match_args__ = ("id", "type")

    id: bytes | None
    type: Type | None

    def __init__(self, id: bytes | None, type: Type | None) -> None:  # noqa: A002
        self.id = id
        self.type = type

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Val:
            return NotImplemented
        return self.id == other.id and self.type == other.type

    def __hash__(self) -> int:
        return hash((self.id, self.type))

    def __repr__(self) -> str:
        return f"Val(id={self.id!r}, type={self.type!r})"

    @property
    def poisoned(self) -> bool:
        """Return True for the error value."""
        return self.id is None

    @property
    def live_type(self) -> Type:
        """Return the type of a value that is not poisoned (callers check ``poisoned`` first)."""
        assert self.type is not None, "a poisoned value has no type"
        return self.type


POISON = Val(None, None)


@dataclass(frozen=True, slots=True)
class Lit:
    """An unsuffixed integer literal whose type is not known yet (it takes its context's type),
    or a pending expression over such literals (``a + 1`` where ``a`` is one too, an ``if``
    whose arms are). ``build`` (None for a plain literal) builds the expression at an integer
    type; ``value`` and ``span`` are its first literal's (or, with ``what``, the span of the
    construct ``what`` names) for the diagnostic that asks for a type."""

    value: int | Fraction  # a Fraction for a fractional literal (fixed point, FIXED.md)
    span: Span
    build: Callable[[IntType], Val] | None = None
    what: str | None = None


Value = Val | Lit


@dataclass(slots=True)
class Binding:
    """A name in scope. ``value`` changes on assignment (SSA renaming happens here)."""

    name: str
    value: Val
    mutable: bool
    span: Span
    memory: bool = False  # a `mem`: read and written only element by element (STATE.md)
    state: object = None  # the ``StateInfo`` of a `reg`/`mem` declaration
