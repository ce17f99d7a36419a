"""Every quantisation × overflow mode against the exact model, exhaustively over raw inputs,
on every target (interp, cpu, wasm, rtl).

Sources are every format with W ≤ 12 and I from −2 to W + 2, signed and unsigned; each is
converted into a format with two fewer fraction bits and one fewer integer bit (rounding: below,
at and above the tie; overflow both ways), into the other signedness with two fewer fraction
bits, in every Q × O, and into one more fraction bit (a left shift) in every O. All sources of one
W are parameters of ONE program (``x{k}: uW`` through ``from_bits``, results as ``bits``), run on
rows 0 .. 2^W − 1, so each target builds one program per W (one Verilator build per W).
The model (``model.convert_raw_array``) is checked against the exact-rational one below.
"""

from __future__ import annotations

import os
from fractions import Fraction
from functools import cache
from itertools import product

import numpy as np
import pytest

from kera import get_target, load, run
from kera._api import Loaded
from kera.check import typeck
from kera.ir.types import FixedType
from tests.fixed import model

WIDTHS = range(1, 13)
# The compiled targets (gcc, Verilator) build one large program per width, 20-85 s each on two
# cores; the suite builds these widths, and KERA_FIXED_ALL_WIDTHS=1 builds every one (the
# interpreter always checks every width). Last full run: every width on every target passed.
BUILT = WIDTHS if os.environ.get("KERA_FIXED_ALL_WIDTHS") == "1" else [1, 2, 3, 4, 5, 8, 12]
MODES = list(product(model.QUANT, model.OVERFLOW))
Format = tuple[int, int, bool]
Target = tuple[int, int, bool, str, str]


def sources(w: int) -> list[Format]:
    """Every format of width ``w`` with I from −2 to W + 2, signed and unsigned."""
    return [(w, i, s) for i in range(-2, w + 3) for s in (True, False)]


def targets(w: int, i: int, signed: bool) -> list[Target]:
    """Every mode into fewer fraction bits and a smaller range, and into the other signedness;
    every overflow mode into more fraction bits (no rounding happens there)."""
    fewer = [(max(1, w - 3), i - 1, signed, q, o) for q, o in MODES]
    other = [(max(1, w - 2), i, not signed, q, o) for q, o in MODES]
    more = [(w + 1, i, signed, "trn", o) for o in model.OVERFLOW]
    return fewer + other + more


@cache
def batch(w: int) -> tuple[Loaded, list[tuple[Format, Target]]]:
    """The one program of width ``w``: every source converted into each of its targets."""
    params, exprs, outs = [], [], []
    for k, src in enumerate(sources(w)):
        params.append(f"x{k}: u{w}")
        for tgt in targets(*src):
            exprs.append(f"bits(from_bits::<{model.type_text(*src)} >(x{k}) as "
                         f"{model.type_text(*tgt)})")
            outs.append((src, tgt))
    result = ", ".join(f"u{tgt[0]}" for _, tgt in outs)
    text = f"#[top]\nfn f({', '.join(params)}) -> ({result}) {{ ({', '.join(exprs)}) }}\n"
    return load(text=text, name=f"conv{w}.kera"), outs


def expected(w: int, outs: list[tuple[Format, Target]]) -> np.ndarray:
    """The model's raw bits for every row (raw input ``n`` in every source) and output."""
    bits = np.arange(1 << w, dtype=np.int64)
    cols = []
    for (_, i, signed), (tw, ti, ts, q, o) in outs:
        n = np.where(bits >> (w - 1) == 1, bits - (1 << w), bits) if signed else bits
        cols.append(model.convert_raw_array(n, w - i, tw, ti, ts, q, o) & ((1 << tw) - 1))
    return np.stack(cols, axis=1)


def needs(target: str) -> None:
    """Skip, with the reason, where ``target`` cannot run here (no wasmtime, no simulator)."""
    if reason := get_target(target).available():
        pytest.skip(reason)


def check(w: int, target: str) -> None:
    needs(target)
    loaded, outs = batch(w)
    rows = [{f"x{k}": n for k in range(len(sources(w)))} for n in range(1 << w)]
    got = np.array(run(loaded, rows, target=target), dtype=np.int64)
    want = expected(w, outs)
    bad = np.argwhere(got != want)
    if len(bad):
        n, j = bad[0]
        (sw, si, ss), tgt = outs[j]
        raise AssertionError(f"{target}: {len(bad)} mismatches; first: raw bits {n} of "
                             f"{model.type_text(sw, si, ss)} as {model.type_text(*tgt)}: got "
                             f"{got[n, j]}, want {want[n, j]}")


@pytest.mark.parametrize("w", WIDTHS)
def test_every_mode_exhaustively_interp(w: int) -> None:
    check(w, "interp")


@pytest.mark.parametrize("target", ["cpu", "wasm"])
@pytest.mark.parametrize("w", BUILT)
def test_every_mode_exhaustively_compiled(w: int, target: str) -> None:
    check(w, target)


@pytest.mark.slow
@pytest.mark.parametrize("w", BUILT)
def test_every_mode_exhaustively_rtl(w: int) -> None:
    check(w, "rtl")


def test_decimal_values_convert_as_the_model_says() -> None:
    """The JSONL path (decimal text in, shortest exact decimal out) on one source, all modes."""
    src = (6, 2, True)
    outs = targets(*src)
    types = [model.type_text(*o) for o in outs]
    body = ", ".join(f"x as {t}" for t in types)
    text = f"#[top]\nfn f(x: {model.type_text(*src)}) -> ({', '.join(types)}) {{ ({body}) }}\n"
    lo, hi = model.raw_range(6, True)
    got = run(load(text=text, name="conv.kera"),
              [{"x": model.raw_text(n, 4)} for n in range(lo, hi + 1)])
    for n, row in zip(range(lo, hi + 1), got, strict=True):
        for (tw, ti, ts, q, o), value in zip(outs, row, strict=True):
            want = model.convert(Fraction(n, 16), tw, ti, ts, q, o)
            assert Fraction(value) == want, f"{n / 16} as {model.type_text(tw, ti, ts, q, o)}"


# --- binary operators: every pair of raw values of a few formats with W <= 6 -----------------

PAIRS: list[tuple[Format, Format]] = [
    ((6, 2, True), (5, 4, True)),
    ((6, -1, True), (6, 7, False)),
    ((5, 3, False), (6, 2, False)),
    ((4, 6, False), (6, 0, True)),
]
BINARY = ["+", "-", "*"]
COMPARE = ["<", "<=", ">", ">=", "==", "!="]


def fx_type(f: Format) -> FixedType:
    return FixedType(f[0], f[2], f[1])


def binary_program(a: Format, b: Format) -> tuple[str, list[FixedType]]:
    ta, tb = (model.type_text(*f)[: model.type_text(*f).index(", trn")] + ">" for f in (a, b))
    results = [typeck.fixed_binary_result(op, fx_type(a), fx_type(b)) for op in BINARY]
    assert all(isinstance(r, FixedType) for r in results)
    fixed = [r for r in results if isinstance(r, FixedType)]
    exprs = [f"bits(x {op} y)" for op in BINARY] + [f"x {op} y" for op in COMPARE]
    ret = ", ".join([f"u{r.width}" for r in fixed] + ["bool"] * len(COMPARE))
    text = (f"#[top]\nfn f(a: u{a[0]}, b: u{b[0]}) -> ({ret}) {{\n"
            f"    let x = from_bits::<{ta} >(a);\n    let y = from_bits::<{tb} >(b);\n"
            f"    ({', '.join(exprs)})\n}}\n")
    return text, fixed


def signed_raw(bits: int, w: int, signed: bool) -> int:
    return bits - (1 << w) if signed and bits >> (w - 1) else bits


@cache
def binary_loaded(a: Format, b: Format) -> tuple[Loaded, list[FixedType]]:
    text, fixed = binary_program(a, b)
    return load(text=text, name="binary.kera"), fixed


@pytest.mark.parametrize("target", ["interp", "cpu", "wasm", "rtl"])
@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_binary_operators_exhaustively(a: Format, b: Format, target: str) -> None:
    needs(target)
    loaded, fixed = binary_loaded(a, b)
    pairs = list(product(range(1 << a[0]), range(1 << b[0])))
    got = run(loaded, [{"a": p, "b": q} for p, q in pairs], target=target)
    for (p, q), row in zip(pairs, got, strict=True):
        x = Fraction(signed_raw(p, a[0], a[2])) * model.ulp(a[0], a[1])
        y = Fraction(signed_raw(q, b[0], b[2])) * model.ulp(b[0], b[1])
        exact = [x + y, x - y, x * y]
        want = []
        for value, r in zip(exact, fixed, strict=True):
            raw = value / model.ulp(r.width, r.int_bits)
            assert raw.denominator == 1 and r.min <= raw <= r.max  # the result type is exact
            want.append(int(raw) % (1 << r.width))
        want += [x < y, x <= y, x > y, x >= y, x == y, x != y]
        assert list(row) == want, (target, x, y)  # type: ignore[call-overload]


# --- the model itself --------------------------------------------------------------------------


@pytest.mark.parametrize("q, o", MODES)
def test_the_fast_model_is_the_exact_one(q: str, o: str) -> None:
    for n in range(-40, 41):
        for w, i in ((4, 1), (3, 5), (5, -2)):
            want = model.convert(Fraction(n, 8), w, i, True, q, o)
            assert Fraction(model.convert_raw(n, 3, w, i, True, q, o)) * model.ulp(w, i) == want


@pytest.mark.parametrize("w", [3, 5, 7])
def test_the_array_model_is_the_scalar_one(w: int) -> None:
    for _, i, signed in sources(w):
        lo, hi = model.raw_range(w, signed)
        ns = np.arange(lo, hi + 1, dtype=np.int64)
        for tw, ti, ts, q, o in targets(w, i, signed):
            got = model.convert_raw_array(ns, w - i, tw, ti, ts, q, o)
            assert got.tolist() == [model.convert_raw(int(n), w - i, tw, ti, ts, q, o)
                                    for n in ns]


def test_integers_convert_as_fx_n_n() -> None:
    loaded = load(text="#[top]\nfn f(x: i5) -> (fx<4, 2, rnd, sat>, ufx<3, 5, rnd_conv, wrap>) "
                       "{ (x as fx<4, 2, rnd, sat>, x as ufx<3, 5, rnd_conv, wrap>) }\n",
                  name="int.kera")
    got = run(loaded, [{"x": x} for x in range(-16, 16)])
    for x, (a, b) in zip(range(-16, 16), got, strict=True):
        assert Fraction(a) == model.convert(Fraction(x), 4, 2, True, "rnd", "sat")
        assert Fraction(b) == model.convert(Fraction(x), 3, 5, False, "rnd_conv", "wrap")
