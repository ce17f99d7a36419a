"""Boards: one TOML file per board (family, device, clock, capacities), checked on load.

The canonical files live in ``boards/`` and ``constraints/`` at the repository root;
``kera/hls/boards_data`` and ``kera/hls/constraints_data`` are symbolic links to them, so one
copy serves a source checkout, an editable install and a wheel (which stores the files).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kera.diagnostics import ExitCode, KeraError

__all__ = ["BOARDS_DIR", "CONSTRAINTS_DIR", "FAMILIES", "Board", "Capacities", "list_boards",
           "load_board"]

BOARDS_DIR = (Path(__file__).parent / "boards_data").resolve()
CONSTRAINTS_DIR = (Path(__file__).parent / "constraints_data").resolve()
#: FPGA families a board may name; each has a delay/area model in ``kera/hls/models``.
FAMILIES = ("ecp5", "gowin", "ice40", "xc7")


@dataclass(frozen=True, slots=True)
class Capacities:
    """What a device holds: LUTs, flip-flops, DSP multipliers and block RAMs."""

    lut: int
    ff: int
    dsp: int
    bram: int


@dataclass(frozen=True, slots=True)
class Board:
    """A board: its FPGA, package, clock pin and frequency, constraint file and capacities."""

    name: str
    description: str
    family: str
    device: str
    package: str
    clock_pin: str
    clock_mhz: float
    constraints: str
    capacities: Capacities
    speed_grade: str | None = None
    estimates_only: bool = False
    baud: int = 115200  # the UART shell's baud rate (docs/board.md)
    path: Path | None = field(default=None, compare=False)

    @property
    def clock_period_ns(self) -> float:
        """Return the period of the board's clock in nanoseconds."""
        return 1000.0 / self.clock_mhz

    @property
    def constraints_path(self) -> Path:
        """Return the constraint file: next to the board file, in a sibling ``constraints/``
        directory, or among the packaged constraint files (in that order)."""
        return _find_constraints(self.path, self.constraints) or CONSTRAINTS_DIR / self.constraints


def _find_constraints(board_file: Path | None, name: str) -> Path | None:
    dirs = [board_file.parent, board_file.parent.parent / "constraints"] if board_file else []
    for d in [*dirs, CONSTRAINTS_DIR]:
        if (d / name).is_file():
            return d / name
    return None


# --- validation: each key's check returns the value or None, and says what it expects ---

def _text(v: Any) -> str | None:
    return v if isinstance(v, str) and v.strip() else None


def _name(v: Any) -> str | None:
    return v if isinstance(v, str) and re.fullmatch(r"[a-z][a-z0-9_]*", v) else None


def _family(v: Any) -> str | None:
    return v if v in FAMILIES else None


def _positive(v: Any) -> float | None:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
    return float(v) if ok else None


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _baud(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and 300 <= v <= 12_000_000 \
        else None


def _flag(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


_KEYS: dict[str, tuple[Any, str]] = {
    "name": (_name, "a lower-case identifier (a-z, 0-9, _)"),
    "description": (_text, "a non-empty string"),
    "family": (_family, "one of " + ", ".join(FAMILIES)),
    "device": (_text, "a non-empty string"),
    "package": (_text, "a non-empty string"),
    "clock_pin": (_text, "a non-empty string"),
    "clock_mhz": (_positive, "a positive number"),
    "constraints": (_text, "a non-empty string"),
    "capacities": (None, "a table"),
}
_OPTIONAL: dict[str, tuple[Any, str]] = {
    "speed_grade": (_text, "a non-empty string"),
    "estimates_only": (_flag, "true or false"),
    "baud": (_baud, "a baud rate in 300..=12000000"),
}
_CAPACITIES = ("lut", "ff", "dsp", "bram")


def _display(path: Path) -> str:
    """Return a path relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _check(where: str, key: str, value: Any, check: Any, what: str) -> Any:
    out = check(value)
    if out is None:
        raise KeraError(f"{where}: key `{key}` must be {what}, not {value!r}")
    return out


def _capacities(where: str, table: Any) -> Capacities:
    if not isinstance(table, dict):
        raise KeraError(f"{where}: key `capacities` must be a table, not {table!r}")
    for key in table:
        if key not in _CAPACITIES:
            known = ", ".join(_CAPACITIES)
            raise KeraError(f"{where}: unknown key `capacities.{key}`; expected {known}")
    values = {}
    for key in _CAPACITIES:
        if key not in table:
            raise KeraError(f"{where}: missing key `capacities.{key}`")
        values[key] = _check(where, f"capacities.{key}", table[key], _count,
                             "a non-negative integer")
    return Capacities(**values)


def parse_board(data: dict[str, Any], path: Path) -> Board:
    """Check the keys of a parsed board file and return the board; raise ``KeraError``."""
    where = _display(path)
    for key in data:
        if key not in _KEYS and key not in _OPTIONAL:
            known = ", ".join(sorted([*_KEYS, *_OPTIONAL]))
            raise KeraError(f"{where}: unknown key `{key}`; expected one of {known}")
    values: dict[str, Any] = {}
    for key, (check, what) in _KEYS.items():
        if key not in data:
            raise KeraError(f"{where}: missing key `{key}`")
        if check is not None:
            values[key] = _check(where, key, data[key], check, what)
    for key, (check, what) in _OPTIONAL.items():
        if key in data:
            values[key] = _check(where, key, data[key], check, what)
    values["capacities"] = _capacities(where, data["capacities"])
    if _find_constraints(path, values["constraints"]) is None:
        raise KeraError(f"{where}: key `constraints` names a file that does not exist: "
                        f"{values['constraints']!r}")
    return Board(**values, path=path)


def _read(path: Path) -> Board:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise KeraError(f"{_display(path)}: invalid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise KeraError(f"{_display(path)}: cannot read board file: {exc}",
                        ExitCode.USAGE) from None
    return parse_board(data, path)


def _known() -> list[str]:
    return sorted(p.stem for p in BOARDS_DIR.glob("*.toml"))


def load_board(name_or_path: str | os.PathLike[str]) -> Board:
    """Return a board by name (``icebreaker``) or from a TOML file path; raise ``KeraError``.

    An unknown name is a usage error (exit code 2); a bad board file is exit code 1.
    """
    text = os.fspath(name_or_path)
    if isinstance(name_or_path, os.PathLike) or "/" in text or text.endswith(".toml"):
        path = Path(text)
        if not path.is_file():
            raise KeraError(f"board file `{text}` does not exist", ExitCode.USAGE)
        return _read(path)
    path = BOARDS_DIR / f"{text}.toml"
    if not path.is_file():
        raise KeraError(f"unknown board `{text}`; known boards: {', '.join(_known())}",
                        ExitCode.USAGE)
    return _read(path)


def list_boards() -> list[Board]:
    """Return every packaged board, sorted by name."""
    return sorted((_read(BOARDS_DIR / f"{n}.toml") for n in _known()), key=lambda b: b.name)
