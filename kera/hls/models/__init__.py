"""Delay and area models per FPGA family, read from data files fitted by characterisation.

``load_model("ice40")`` reads ``kera/hls/models/ice40.json`` (written by
``python -m kera.hls.characterize``) and returns a ``DelayModel``. A model answers, per op and
operand width, the combinational delay in nanoseconds (register overhead excluded: that is
``clk_to_q_setup_ns``, paid once per pipeline stage) and the area in LUTs, flip-flops, carry
cells and DSP blocks. Answers are cached, so calling it for every node of a large graph is cheap.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import cache
from numbers import Integral
from pathlib import Path
from typing import Any

from kera.diagnostics import ExitCode, KeraError

__all__ = ["FIELDS", "MODELS_DIR", "DelayModel", "load_model", "model_families"]

MODELS_DIR = Path(__file__).resolve().parent
#: The quantities a model gives for each op, in this order.
FIELDS = ("delay_ns", "lut", "ff", "carry", "dsp")
AREA_FIELDS = FIELDS[1:]

Curve = Callable[[int], float]


def _fit_curve(coef: list[float]) -> Curve:
    """Return ``max(0, a*w + b*log2(w) + c)``."""
    a, b, c = coef
    return lambda w: max(0.0, a * w + b * math.log2(w) + c)


def _between(x0: float, y0: float, x1: float, y1: float, x: float, power: bool) -> float:
    """Interpolate (or extrapolate) through two points: as a power law when both are > 0."""
    if power and y0 > 0 and y1 > 0:
        k = math.log(y1 / y0) / math.log(x1 / x0)
        return y0 * (x / x0) ** k
    return y0 + (x - x0) * (y1 - y0) / (x1 - x0)


def _table_curve(spec: dict[str, Any]) -> Curve:
    """Interpolate a measured table.

    ``lookup``: ``power`` (a power law between neighbours, linear where one is 0), ``linear``,
    or ``step`` (the value at the next measured width). ``extrapolate`` beyond the last width:
    ``power``/``linear`` through the last two points, or ``quadratic`` (value * (w/last)**2).
    """
    xs: list[int] = spec["widths"]
    ys: list[float] = spec["values"]
    lookup = spec.get("lookup", "linear")
    extra = spec.get("extrapolate", "linear")

    def curve(w: int) -> float:
        if w <= xs[0] or len(xs) == 1:
            return ys[0] if w <= xs[0] else ys[0] * w / xs[0]
        if w >= xs[-1]:
            if extra == "quadratic":
                return ys[-1] * (w / xs[-1]) ** 2
            return max(0.0, _between(xs[-2], ys[-2], xs[-1], ys[-1], w, extra == "power"))
        i = next(k for k, x in enumerate(xs) if x >= w)
        if xs[i] == w or lookup == "step":
            return ys[i]
        return _between(xs[i - 1], ys[i - 1], xs[i], ys[i], w, lookup == "power")

    return curve


def _curve(spec: dict[str, Any]) -> Curve:
    if spec["kind"] == "fit":
        return _fit_curve(spec["coef"])
    if spec["kind"] == "table":
        return _table_curve(spec)
    raise ValueError(f"unknown curve kind {spec['kind']!r}")


def _curves(entry: dict[str, Any]) -> tuple[Curve, ...]:
    return tuple(_curve(entry[f]) for f in FIELDS)


def _by_n(curves: dict[int, tuple[Curve, ...]], w: int, n: int) -> tuple[float, ...]:
    """Evaluate an op measured at several element counts (array_index) at any count ``n``.

    Between measured counts: linear in log2(n) for delay and in n for area; beyond the
    largest count, the same lines through the last two counts are extended. ``n <= 1`` is
    wiring (no mux).
    """
    ns = sorted(curves)
    if n in curves:
        return tuple(c(w) for c in curves[n])
    if n <= 1:
        return (0.0,) * len(FIELDS)
    lo = max([k for k in ns if k < n], default=ns[0])
    hi = min([k for k in ns if k > n], default=None)
    if hi is None:  # beyond the table: extrapolate from the last two counts
        lo, hi = ns[-2], ns[-1]
    vlo = [c(w) for c in curves[lo]]
    vhi = [c(w) for c in curves[hi]]
    tlog = (math.log2(n) - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
    tlin = (n - lo) / (hi - lo)
    out = [vlo[0] + tlog * (vhi[0] - vlo[0])]
    out += [vlo[k] + tlin * (vhi[k] - vlo[k]) for k in range(1, len(FIELDS))]
    return tuple(max(0.0, v) for v in out)


class DelayModel:
    """One family's delay/area model: per-op curves of width, plus the register overhead."""

    def __init__(self, data: dict[str, Any], path: Path | None = None) -> None:
        self.data = data
        self.path = path
        self.family: str = data["family"]
        self.fitted: bool = bool(data["fitted"])
        self.provisional: bool = bool(data.get("provisional", not self.fitted))
        self.clk_to_q_setup_ns: float = float(data["clk_to_q_setup_ns"])
        self.ff_per_reg_bit: float = float(data["reg"]["ff_per_bit"])
        self._reg_overhead = _curve(data["reg"]["overhead_ns"])
        self.wiring = frozenset(data["wiring"])
        self.no_entry: dict[str, str] = dict(data.get("no_entry", {}))
        self.aliases: dict[str, str] = dict(data.get("aliases", {}))
        #: LUT size and the delay of one LUT level plus its net (``kera.hls.lutmap``).
        self.lut_network: dict[str, Any] = dict(data.get("lut_network", {"k": 4, "level_ns": 0.0}))
        #: LUT sites each carry cell fills (2 per ECP5 CCU2C; 0 where it shares a LUT's cell).
        self.carry_lut_sites: float = float(data.get("carry_lut_sites", 0))
        #: How a DSP-mapped multiply is timed when the tools do not time it.
        self.dsp_timing: dict[str, Any] = dict(data.get("dsp_timing", {}))
        #: What each resource of an estimate counts, in the place-and-route tool's terms.
        self.resource_notes: dict[str, str] = dict(data.get("resource_notes", {}))
        #: The valid/ready logic's register-to-register path (``kera.hls.sta.handshake_ns``).
        self.handshake: dict[str, Any] = dict(data.get("handshake", {}))
        self._curves: dict[str, tuple[Curve, ...]] = {}
        self._by_n: dict[str, dict[int, tuple[Curve, ...]]] = {}
        for op, entry in data["ops"].items():
            if "by_n" in entry:
                self._by_n[op] = {int(n): _curves(e) for n, e in entry["by_n"].items()}
            else:
                self._curves[op] = _curves(entry)
        self._cache: dict[tuple[str, int, int | None, bool], tuple[float, ...]] = {}
        self._areas: dict[tuple[str, int, int | None, bool], dict[str, float]] = {}

    @property
    def metadata(self) -> dict[str, Any]:
        """Return the model's provenance: tools, commands, method, held-out error, notes."""
        keys = ("family", "fitted", "provisional", "device", "tools", "command", "method",
                "formula", "held_out_widths", "held_out_error", "measurements", "derived_from",
                "scale", "notes", "dsp", "lut_network", "carry_lut_sites", "dsp_timing",
                "resource_notes")
        return {k: self.data[k] for k in keys if k in self.data}

    def ops(self) -> list[str]:
        """Return every op name the model answers for (measured, wiring and aliases)."""
        return sorted({*self._curves, *self._by_n, *self.wiring, *self.aliases})

    def has(self, op: str) -> bool:
        """Return whether the model has an entry for ``op``."""
        return op in self._curves or op in self._by_n or op in self.wiring or op in self.aliases

    def _resolve(self, op: str, signed: bool) -> str:
        if signed and self.has(f"{op}_signed"):
            op = f"{op}_signed"
        return self.aliases.get(op, op)

    def _values(self, op: str, width: int, n: int | None, signed: bool) -> tuple[float, ...]:
        key = (op, width, n, signed)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if isinstance(width, bool) or not isinstance(width, Integral) or width < 1:
            raise ValueError(f"width must be a positive integer, not {width!r}")
        width = int(width)
        name = self._resolve(op, signed)
        if name in self.wiring:
            out: tuple[float, ...] = (0.0,) * len(FIELDS)
        elif name in self._curves:
            out = tuple(c(width) for c in self._curves[name])
        elif name in self._by_n:
            if n is None:
                raise ValueError(f"op `{op}` needs an element count `n`")
            out = _by_n(self._by_n[name], width, n)
        elif op in self.no_entry:
            raise KeraError(f"op `{op}` has no delay model for family `{self.family}`: "
                            f"{self.no_entry[op]}")
        else:
            raise KeraError(f"op `{op}` has no delay model for family `{self.family}`")
        self._cache[key] = out
        return out

    def delay_ns(self, op: str, width: int, n: int | None = None, signed: bool = False) -> float:
        """Return the combinational delay of ``op`` on ``width``-bit operands, in ns.

        ``n`` is the element count of an ``array_index``; ``signed`` picks the signed variant
        where one was measured (``lt``, ``shr``). Register overhead is not included.
        """
        return self._values(op, width, n, signed)[0]

    def area(self, op: str, width: int, n: int | None = None,
             signed: bool = False) -> dict[str, float]:
        """Return the area of ``op`` as ``{"lut", "ff", "carry", "dsp"}`` (fractional counts).

        These are the fitted cell counts; ``kera.hls.timing.CostModel`` adds
        ``carry_lut_sites`` per carry cell to ``lut`` to count LUT sites as nextpnr does.
        """
        key = (op, width, n, signed)
        hit = self._areas.get(key)
        if hit is None:
            values = self._values(op, width, n, signed)
            hit = self._areas[key] = dict(zip(AREA_FIELDS, values[1:], strict=True))
        return hit.copy()

    def reg_overhead_ns(self, bits: int) -> float:
        """Return the register → register overhead (clock-to-out, routing, setup) of a stage
        whose registers are ``bits`` wide; ``clk_to_q_setup_ns`` is its median."""
        return self._reg_overhead(bits)

    def reg_cost(self, bits: int) -> dict[str, float]:
        """Return the area of a ``bits``-wide pipeline register."""
        return {"lut": 0.0, "ff": self.ff_per_reg_bit * bits, "carry": 0.0, "dsp": 0.0}


def model_families() -> list[str]:
    """Return the families that have a model file."""
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


@cache
def _load(path: Path) -> DelayModel:
    return DelayModel(json.loads(path.read_text()), path)


def load_model(family: str) -> DelayModel:
    """Return the delay/area model of an FPGA family (``ice40``, ``ecp5``, ``gowin``, ``xc7``)."""
    path = MODELS_DIR / f"{family}.json"
    if not path.is_file():
        known = ", ".join(model_families())
        raise KeraError(f"no delay model for family `{family}`; known families: {known}",
                        ExitCode.USAGE)
    return _load(path)
