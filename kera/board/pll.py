"""The iCE40 PLL (SB_PLL40_CORE, simple feedback): dividers for a clock the oscillator lacks.

The formula is the one ``icepll`` searches (Lattice TN1251): f_pfd = f_in / (DIVR + 1) in
10..133 MHz, f_vco = f_pfd · (DIVF + 1) in 533..1066 MHz, f_out = f_vco / 2^DIVQ in 16..275
MHz, with the loop filter range chosen from f_pfd. The output is never above the target (the
core was scheduled for that period) and at most ``TOLERANCE`` below it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: How far below the target the PLL's output may be.
TOLERANCE = 0.01
_FILTER = ((17.0, 1), (26.0, 2), (44.0, 3), (66.0, 4), (101.0, 5))


@dataclass(frozen=True)
class Ice40Pll:
    """The dividers of an SB_PLL40_CORE and the frequencies they give (MHz)."""

    divr: int
    divf: int
    divq: int
    filter_range: int
    f_in: float
    f_out: float


def ice40_pll(f_in: float, target: float) -> Ice40Pll:
    """Return the PLL whose output is closest to ``target`` MHz from ``f_in`` MHz without
    exceeding it; raise ``ValueError`` when none is within ``TOLERANCE``."""
    best: Ice40Pll | None = None
    for divr in range(16):
        f_pfd = f_in / (divr + 1)
        if not 10.0 <= f_pfd <= 133.0:
            continue
        for divf in range(128):
            f_vco = f_pfd * (divf + 1)
            if not 533.0 <= f_vco <= 1066.0:
                continue
            for divq in range(1, 7):
                f_out = f_vco / (1 << divq)
                if 16.0 <= f_out <= target * (1 + 1e-9) and (best is None or f_out > best.f_out):
                    filt = next((r for limit, r in _FILTER if f_pfd < limit), 6)
                    best = Ice40Pll(divr, divf, divq, filt, f_in, f_out)
    if best is None or best.f_out < target * (1 - TOLERANCE):
        got = f"; the nearest below is {best.f_out:.3f} MHz" if best else ""
        raise ValueError(f"the iCE40 PLL cannot make {target:g} MHz from {f_in:g} MHz "
                         f"(16-275 MHz, within {TOLERANCE:.0%} below the target{got})")
    return best
