"""Diagnostics: one type for every problem found in a user's program or file.

A diagnostic has a severity, a one-line message, a primary byte span and optional notes with
their own spans. It renders as ``file:line:col: error: message`` followed by the source line and
a caret underline, or as JSON. Lines and columns are 1-based and computed from **byte** offsets;
columns count characters, not bytes.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import FrozenInstanceError, dataclass, field
from enum import Enum, IntEnum
from itertools import accumulate
from pathlib import Path


class ExitCode(IntEnum):
    """The exit codes of `kera-hls` (INTERFACES.md), defined once."""

    OK = 0  # success
    USER = 1  # the user's program or data is wrong
    USAGE = 2  # a wrong command line, option or path
    TOOL = 3  # a needed tool or device is not available
    CHECK = 4  # a parity or cycle-exactness check failed
    INTERNAL = 70  # a compiler bug (EX_SOFTWARE): never for a user's mistake


class Severity(Enum):
    """How bad a diagnostic is."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class Span:
    """A half-open byte range ``[start, end)`` into one source text.

    A value object as a frozen dataclass would be (equality, hash and repr by its fields;
    assigning a field raises), written out because the elaborator makes one per node and a
    frozen dataclass's ``__init__`` costs several times as much.
    """

    __slots__ = ("start", "end")
    __match_args__ = ("start", "end")

    start: int
    end: int

    def __init__(self, start: int, end: int) -> None:
        if start < 0 or end < start:
            raise ValueError(f"Span must satisfy 0 <= start <= end, not {start}..{end}")
        _set_start(self, start)
        _set_end(self, end)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Span:
            return NotImplemented
        return self.start == other.start and self.end == other.end

    def __hash__(self) -> int:
        return hash((self.start, self.end))

    def __repr__(self) -> str:
        return f"Span(start={self.start!r}, end={self.end!r})"

    def __reduce__(self) -> tuple[type[Span], tuple[int, int]]:
        return Span, (self.start, self.end)


# The slots' own setters: how ``Span.__init__`` sets its fields past ``__setattr__``.
_set_start = vars(Span)["start"].__set__
_set_end = vars(Span)["end"].__set__


@dataclass(frozen=True, slots=True)
class Note:
    """A secondary message pointing at the other half of a problem."""

    message: str
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem: severity, one-line message, primary span, notes."""

    severity: Severity
    message: str
    span: Span
    notes: tuple[Note, ...] = field(default=())

    @staticmethod
    def error(message: str, span: Span, *notes: Note) -> Diagnostic:
        """Make an error diagnostic."""
        return Diagnostic(Severity.ERROR, message, span, tuple(notes))

    @staticmethod
    def warning(message: str, span: Span, *notes: Note) -> Diagnostic:
        """Make a warning diagnostic."""
        return Diagnostic(Severity.WARNING, message, span, tuple(notes))


class KeraError(Exception):
    """A problem in the user's program, data or files: carries diagnostics, never a traceback.

    ``exit_code`` is an ``ExitCode`` (INTERFACES.md): 1 user's program or data, 2 usage, 3
    missing tool or device, 4 a parity or cycle-exactness check failed.
    """

    def __init__(self, message: str, exit_code: int = ExitCode.USER,
                 diagnostics: tuple = ()) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = ExitCode(exit_code)
        self.diagnostics = diagnostics


class SourceFile:
    """A source text with its byte-offset → line/column table."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self.text = data.decode("utf-8", errors="replace")
        # Each line starts one byte after the previous line's end (its newline).
        self._line_starts = [0, *accumulate(len(line) + 1 for line in data.split(b"\n")[:-1])]

    def line_col(self, offset: int) -> tuple[int, int]:
        """Return the 1-based (line, column) of a byte offset; columns count characters."""
        offset = max(0, min(offset, len(self.data)))
        line = bisect.bisect_right(self._line_starts, offset) - 1
        start = self._line_starts[line]
        col = len(self.data[start:offset].decode("utf-8", errors="replace")) + 1
        return line + 1, col

    def line_text(self, line: int) -> str:
        """Return the text of a 1-based line without its newline."""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(self.data)
        return self.data[start:end].decode("utf-8", errors="replace").rstrip("\r")

    def location(self, span: Span) -> str:
        """Return ``path:line:col`` for the start of a span."""
        line, col = self.line_col(span.start)
        return f"{self.path}:{line}:{col}"


def read_source(path: str | None) -> SourceFile | None:
    """Return the source file a graph was built from (a `.keg` records its path) when it can
    be read; None when there is no path, or it names nothing readable (a path from a damaged
    `.keg` may be anything, a NUL byte included)."""
    if not path:
        return None
    try:
        return SourceFile(path, Path(path).read_bytes())
    except (OSError, ValueError):
        return None


def _render_one(src: SourceFile, severity: str, message: str, span: Span) -> list[str]:
    line, col = src.line_col(span.start)
    out = [f"{src.path}:{line}:{col}: {severity}: {message}"]
    text = src.line_text(line).expandtabs(1)
    end_line, end_col = src.line_col(span.end)
    width = (end_col - col) if end_line == line else len(text) - col + 1
    out.append(f"  {line:>4} | {text}")
    out.append(f"       | {' ' * (col - 1)}{'^' * max(1, width)}")
    return out


def render(src: SourceFile, diag: Diagnostic) -> str:
    """Render a diagnostic for a person: location line, source line, caret underline, notes."""
    lines = _render_one(src, diag.severity.value, diag.message, diag.span)
    for note in diag.notes:
        if note.span is None:
            lines.append(f"  = note: {note.message}")
        else:
            lines.extend(_render_one(src, "note", note.message, note.span))
    return "\n".join(lines)


def to_json(src: SourceFile, diag: Diagnostic) -> dict:
    """Return a diagnostic as a JSON-ready dict (file, line, column, byte span, notes)."""

    def where(span: Span) -> dict:
        line, col = src.line_col(span.start)
        return {"file": src.path, "line": line, "column": col, "start": span.start, "end": span.end}

    return {
        "severity": diag.severity.value,
        "message": diag.message,
        **where(diag.span),
        "notes": [
            {"message": n.message, **(where(n.span) if n.span else {})} for n in diag.notes
        ],
    }


def render_all(src: SourceFile, diags: list[Diagnostic], fmt: str = "text") -> str:
    """Render diagnostics sorted by position, as text or as JSON lines."""
    ordered = sorted(diags, key=lambda d: (d.span.start, d.span.end, d.message))
    if fmt == "json":
        return "\n".join(json.dumps(to_json(src, d), sort_keys=True) for d in ordered)
    return "\n".join(render(src, d) for d in ordered)
