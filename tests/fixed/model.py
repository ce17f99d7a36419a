"""An exact-rational model of `ap_fixed` conversions (FIXED.md), independent of the compiler.

Values are ``Fraction``s; a format is ``(W, I, signed)``. Written from the mode definitions,
not from the lowering: every rounding mode is a formula on the exact scaled value.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

HALF = Fraction(1, 2)
QUANT = ("trn", "trn_zero", "rnd", "rnd_zero", "rnd_min_inf", "rnd_inf", "rnd_conv")
OVERFLOW = ("wrap", "sat", "sat_zero", "sat_sym")


def ulp(w: int, i: int) -> Fraction:
    """The value of one raw step of a format with ``w`` bits, ``i`` of them integer bits."""
    return Fraction(2) ** (i - w)


def raw_range(w: int, signed: bool) -> tuple[int, int]:
    """The raw integer range of a ``w``-bit format."""
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)


def round_scaled(x: Fraction, mode: str) -> int:
    """Round the exact scaled value ``x`` (in ulps) to an integer by ``mode``."""
    if mode == "trn":
        return math.floor(x)
    if mode == "trn_zero":
        return math.trunc(x)
    if mode == "rnd":
        return math.floor(x + HALF)
    if mode == "rnd_min_inf":
        return math.ceil(x - HALF)
    if mode == "rnd_zero":
        return math.ceil(x - HALF) if x > 0 else math.floor(x + HALF)
    if mode == "rnd_inf":
        return math.floor(x + HALF) if x >= 0 else math.ceil(x - HALF)
    assert mode == "rnd_conv"
    return round(x)  # Python rounds a Fraction half to even


def overflow(n: int, w: int, signed: bool, mode: str) -> int:
    """Apply the overflow ``mode`` of a ``w``-bit format to the integer ``n`` (in ulps)."""
    lo, hi = raw_range(w, signed)
    if mode == "sat_sym" and signed:
        lo = -hi
    if lo <= n <= hi:
        return n
    if mode == "wrap":
        return (n - raw_range(w, signed)[0]) % (1 << w) + raw_range(w, signed)[0]
    if mode == "sat_zero":
        return 0
    return min(max(n, lo), hi)


def convert(value: Fraction, w: int, i: int, signed: bool, q: str = "trn",
            o: str = "wrap") -> Fraction:
    """Return ``value`` converted into ``fx<w, i, q, o>`` (``ufx`` when not ``signed``)."""
    step = ulp(w, i)
    return overflow(round_scaled(value / step, q), w, signed, o) * step


def type_text(w: int, i: int, signed: bool, q: str = "trn", o: str = "wrap") -> str:
    """Kera's spelling of the format."""
    return f"{'fx' if signed else 'ufx'}<{w}, {i}, {q}, {o}>"


def values(w: int, i: int, signed: bool) -> list[Fraction]:
    """Every value of a format, in raw order."""
    lo, hi = raw_range(w, signed)
    step = ulp(w, i)
    return [n * step for n in range(lo, hi + 1)]


def decimal(x: Fraction) -> str:
    """An exact decimal string of a dyadic ``x`` (inputs for JSONL)."""
    places = x.denominator.bit_length() - 1
    assert x.denominator == 1 << places
    scaled = abs(x.numerator) * 5**places
    digits = str(scaled).rjust(places + 1, "0")
    text = digits if not places else f"{digits[:-places]}.{digits[-places:]}"
    return ("-" if x < 0 else "") + text


def convert_raw(n: int, src_frac: int, w: int, i: int, signed: bool, q: str, o: str) -> int:
    """``convert`` on raw integers (fast): the raw bits, in ``fx<w, i>``, of ``n / 2**src_frac``.

    The scaled value is ``floor + rem / 2**k``; each mode decides from ``rem`` against half.
    """
    k = src_frac - (w - i)  # fraction bits dropped
    if k <= 0:
        return overflow(n << -k, w, signed, o)
    down, rem = divmod(n, 1 << k)
    half = 1 << (k - 1)
    exact, tie, above = rem == 0, rem == half, rem > half
    negative = n < 0
    if q == "trn":
        r = down
    elif q == "trn_zero":
        r = down + (negative and not exact)
    elif tie:
        up = {"rnd": True, "rnd_min_inf": False, "rnd_zero": negative, "rnd_inf": not negative,
              "rnd_conv": down % 2 == 1}[q]
        r = down + up
    else:
        r = down + above
    return overflow(r, w, signed, o)


def raw_text(raw: int, frac: int) -> str:
    """The shortest exact decimal string of ``raw / 2**frac`` (FIXED.md's output form)."""
    text = decimal(Fraction(raw) / Fraction(2) ** frac)
    return text.rstrip("0").rstrip(".") if "." in text else text


def convert_raw_array(n: np.ndarray, src_frac: int, w: int, i: int, signed: bool, q: str,
                      o: str) -> np.ndarray:
    """``convert_raw`` on an int64 array of raw inputs at once (the same formulas, vectorised)."""
    k = src_frac - (w - i)
    if k <= 0:
        r = n << -k
    else:
        down, rem = n >> k, n & ((1 << k) - 1)  # floor division and its remainder
        half = 1 << (k - 1)
        tie, above, negative = rem == half, rem > half, n < 0
        up = {"trn": np.zeros_like(tie), "trn_zero": negative & (rem != 0), "rnd": rem >= half,
              "rnd_min_inf": above, "rnd_zero": above | (tie & negative),
              "rnd_inf": above | (tie & ~negative), "rnd_conv": above | (tie & (down % 2 == 1))}
        r = down + up[q]
    lo, hi = raw_range(w, signed)
    top = lo if not (o == "sat_sym" and signed) else -hi
    wrapped = (r - lo) % (1 << w) + lo
    inside = (r >= top) & (r <= hi)
    if o == "wrap":
        return np.where((r >= lo) & (r <= hi), r, wrapped)
    if o == "sat_zero":
        return np.where(inside, r, 0)
    return np.clip(r, top, hi)
