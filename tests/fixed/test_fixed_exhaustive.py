"""Every quantisation × overflow mode against the exact model, exhaustively over raw inputs.

Sources are formats with W ≤ 12 and I from −2 to W + 2, signed and unsigned (every I up to
W = 8; above, the I at and around the ends and the middle, to keep the run short); each is
converted into targets that drop fraction bits and range (rounding, overflow), add fraction
bits (a left shift) and change the signedness, in every Q × O, over every raw input.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import pytest

from kera import load, run
from tests.fixed import model


def _ints(w: int) -> list[int]:
    every = range(-2, w + 3)
    return list(every) if w <= 8 else sorted({-2, -1, 0, 1, w // 2, w - 1, w, w + 1, w + 2})


SOURCES = [(w, i, s) for w in range(1, 13) for i in _ints(w) for s in (True, False)]
MODES = list(product(model.QUANT, model.OVERFLOW))


def targets(w: int, i: int, signed: bool) -> list[tuple[int, int, bool, str, str]]:
    """Every mode into fewer fraction bits and a smaller range, and into the other signedness;
    every overflow mode into more fraction bits (no rounding happens there)."""
    fewer = [(max(1, w - 2), i - 1, signed, q, o) for q, o in MODES]
    other = [(max(1, w - 1), i, not signed, q, o) for q, o in MODES]
    more = [(w + 1, i, signed, "trn", o) for o in model.OVERFLOW]
    return fewer + other + more


def _program(src: tuple[int, int, bool], outs: list[tuple[int, int, bool, str, str]]) -> str:
    types = [model.type_text(*o) for o in outs]
    body = ", ".join(f"x as {t}" for t in types)
    return f"#[top]\nfn f(x: {model.type_text(*src)}) -> ({', '.join(types)}) {{ ({body}) }}\n"


@pytest.mark.parametrize("src", SOURCES, ids=[model.type_text(*s)[:-12] + ">" for s in SOURCES])
def test_every_mode_exhaustively(src: tuple[int, int, bool]) -> None:
    w, i, signed = src
    outs = targets(*src)
    loaded = load(text=_program(src, outs), name="conv.kera", opt_level=0)
    lo, hi = model.raw_range(w, signed)
    got = run(loaded, [{"x": model.raw_text(n, w - i)} for n in range(lo, hi + 1)])
    for n, row in zip(range(lo, hi + 1), got, strict=True):
        for (tw, ti, ts, q, o), text in zip(outs, row, strict=True):
            want = model.raw_text(model.convert_raw(n, w - i, tw, ti, ts, q, o), tw - ti)
            assert text == want, f"raw {n} as {model.type_text(tw, ti, ts, q, o)}"


@pytest.mark.parametrize("q, o", MODES)
def test_the_fast_model_is_the_exact_one(q: str, o: str) -> None:
    for n in range(-40, 41):
        for w, i in ((4, 1), (3, 5), (5, -2)):
            want = model.convert(Fraction(n, 8), w, i, True, q, o)
            assert Fraction(model.convert_raw(n, 3, w, i, True, q, o)) * model.ulp(w, i) == want


def test_integers_convert_as_fx_n_n() -> None:
    loaded = load(text="#[top]\nfn f(x: i5) -> (fx<4, 2, rnd, sat>, ufx<3, 5, rnd_conv, wrap>) "
                       "{ (x as fx<4, 2, rnd, sat>, x as ufx<3, 5, rnd_conv, wrap>) }\n",
                  name="int.kera")
    got = run(loaded, [{"x": x} for x in range(-16, 16)])
    for x, (a, b) in zip(range(-16, 16), got, strict=True):
        assert Fraction(a) == model.convert(Fraction(x), 4, 2, True, "rnd", "sat")
        assert Fraction(b) == model.convert(Fraction(x), 3, 5, False, "rnd_conv", "wrap")
