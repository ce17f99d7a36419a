"""Timing closure (`synthesize --close-timing`): re-schedule with a tighter margin until the
place-and-route measurement meets the clock, a bounded number of times.

Each try schedules with a margin (the fraction of the clock period kept free), emits the
Verilog, places and routes it with yosys + nextpnr, and compares nextpnr's Fmax with the target.
When it misses, the model was optimistic by about ``fmax / target``, so the next try keeps that
much more of the period free (a deeper pipeline). The tries are reported one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: How many schedules `--close-timing` tries before it gives up.
MAX_TRIES = 4
#: The largest margin a try may ask for: past it the scheduler would refuse most clocks.
MAX_MARGIN = 0.8
#: Keep a little more than the measured shortfall, so the next try does not land just short.
SAFETY = 0.97


@dataclass(frozen=True)
class Try:
    """One schedule and what place-and-route made of it."""

    margin: float
    stages: int
    latency_cycles: int
    fmax_mhz: float
    met: bool

    def to_json(self) -> dict[str, Any]:
        """Return the try as ``report.json``'s ``close_timing.tries`` entry."""
        return {"margin": round(self.margin, 4), "stages": self.stages,
                "latency_cycles": self.latency_cycles, "fmax_mhz": round(self.fmax_mhz, 2),
                "met": self.met}

    def line(self, k: int, clock_mhz: float) -> str:
        """Return a one-line account of the try for stderr and report.txt."""
        verdict = "met" if self.met else "missed"
        return (f"close timing, try {k}: margin {self.margin:.0%}, {self.stages} stages, "
                f"Fmax {self.fmax_mhz:.2f} MHz against {clock_mhz:g} MHz: {verdict}")


def next_margin(margin: float, fmax_mhz: float, clock_mhz: float) -> float | None:
    """Return the margin of the next try after one at ``margin`` reached ``fmax_mhz`` (None:
    there is no tighter try worth making)."""
    if fmax_mhz <= 0:
        return None
    usable = (1.0 - margin) * min(1.0, fmax_mhz / clock_mhz) * SAFETY
    new = 1.0 - usable
    if new > MAX_MARGIN or new <= margin + 1e-3:
        return None
    return new


def close_timing(attempt: Callable[[float], Try | None], clock_mhz: float, margin: float,
                 say: Callable[[str], None]) -> list[Try]:
    """Run ``attempt(margin)`` from ``margin`` until a try meets ``clock_mhz`` or no tighter try
    is left (at most ``MAX_TRIES``); return the tries in order. ``attempt`` schedules, places
    and routes at that margin and keeps its results as the current ones, or returns None when
    there is no schedule at that margin (the first try always gives one)."""
    tries: list[Try] = []
    while True:
        t = attempt(margin)
        if t is None:
            return tries
        tries.append(t)
        say(t.line(len(tries), clock_mhz))
        if t.met or len(tries) == MAX_TRIES:
            return tries
        tighter = next_margin(margin, t.fmax_mhz, clock_mhz)
        if tighter is None:
            return tries
        margin = tighter


__all__ = ["MAX_TRIES", "Try", "close_timing", "next_margin"]
