"""Progress of long phases on stderr: a ``rich`` bar with counts and rate, or nothing at all.

Library code announces work with ``task(description, total)`` and advances the task it gets;
nothing is shown unless a front end turned reporting on with ``reporting()`` (the command line
does, unless ``--quiet``), and never when the stream is not a terminal, so pipes, logs, test
runs and library users see no bars. Bars are transient: each vanishes when its work is done,
and the display (its refresh thread with it) runs only while some task does, so lines printed
between tasks are untouched; ``say`` prints a line above a running bar. Ctrl-C ends a task's
block like any exception: the bar is erased and the cursor restored.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn, TaskID
    from rich.progress import Task as RichTask
    from rich.text import Text

REFRESH_S = 0.1  # at most this often a task pushes its count to the display


class Task:
    """One piece of work being counted (``advance`` is cheap: it is called in hot loops)."""

    __slots__ = ("_id", "_last", "_pending", "_progress")

    def __init__(self, progress: Progress | None = None, task_id: TaskID | None = None) -> None:
        self._progress = progress
        self._id = task_id
        self._pending = 0
        self._last = 0.0

    @property
    def shown(self) -> bool:
        """Return True when this task is on a display."""
        return self._progress is not None

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        if self._progress is None:
            return
        self._pending += n
        now = time.monotonic()
        if now - self._last >= REFRESH_S:
            self._last = now
            self.flush()

    def flush(self) -> None:
        """Push the units counted since the last push to the display."""
        if self._progress is not None and self._id is not None and self._pending:
            self._progress.update(self._id, advance=self._pending)
            self._pending = 0


_NULL = Task()


class _Reporter:
    """The display of one ``reporting`` block: live only while a task is running, so what the
    program prints between tasks reaches the stream untouched."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.progress: Progress | None = None
        self.tasks = 0

    def begin(self) -> Progress:
        """Return the display (started if it was not) for one more task."""
        if self.progress is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                _rate_column(), TimeElapsedColumn(),
                console=Console(file=self.stream), transient=True, redirect_stdout=False,
                redirect_stderr=False, refresh_per_second=8,
            )
            self.progress.start()
        self.tasks += 1
        return self.progress

    def end(self) -> None:
        """One task is over; stop the display after the last one."""
        self.tasks -= 1
        if self.tasks <= 0:
            self.stop()

    def stop(self) -> None:
        """Stop the display (it erases itself) and its refresh thread."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
        self.tasks = 0


def _rate_column() -> ProgressColumn:
    """Return a column showing a task's rate in units per second."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: RichTask) -> Text:
            speed = task.finished_speed or task.speed
            unit = task.fields.get("unit", "")
            return Text(f"{speed:,.0f} {unit}/s".replace(" /s", "/s") if speed else "")

    return Rate()


_ACTIVE: ContextVar[_Reporter | None] = ContextVar("kera_progress", default=None)


def is_terminal(stream: TextIO) -> bool:
    """Return True when ``stream`` is an interactive terminal."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


@contextlib.contextmanager
def reporting(enabled: bool = True, stream: TextIO | None = None) -> Iterator[bool]:
    """Show the tasks begun inside this block on ``stream`` (default: stderr).

    Nothing is shown when ``enabled`` is false or the stream is not a terminal. Yields whether
    bars are shown.
    """
    out = sys.stderr if stream is None else stream
    if not enabled or not is_terminal(out) or _ACTIVE.get() is not None:
        yield False
        return
    reporter = _Reporter(out)
    token = _ACTIVE.set(reporter)
    try:
        yield True
    finally:
        _ACTIVE.reset(token)
        reporter.stop()


def say(message: str) -> None:
    """Print one line for a person on stderr (above the bars while a display is live)."""
    reporter = _ACTIVE.get()
    if reporter is not None and reporter.progress is not None:
        reporter.progress.console.print(message, markup=False, highlight=False, soft_wrap=True)
    else:
        print(message, file=sys.stderr)


@contextlib.contextmanager
def task(description: str, total: int | None = None, unit: str = "",
         show: bool = True) -> Iterator[Task]:
    """Count the work of one phase: ``total`` units (None: unknown, a pulsing bar).

    Yields a ``Task``; it does nothing without an active ``reporting`` display, or when
    ``show`` is false (work known to be short).
    """
    reporter = _ACTIVE.get()
    if reporter is None or not show:
        yield _NULL
        return
    progress = reporter.begin()
    task_id = progress.add_task(description, total=total, unit=unit)
    handle = Task(progress, task_id)
    try:
        yield handle
    finally:
        handle.flush()
        progress.remove_task(task_id)
        reporter.end()


__all__ = ["REFRESH_S", "Task", "is_terminal", "reporting", "say", "task"]
