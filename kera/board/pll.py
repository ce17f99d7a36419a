"""PLLs for a clock the oscillator lacks: iCE40 SB_PLL40_PAD by formula, ECP5 EHXPLLL by ecppll.

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
    primitive = "SB_PLL40_PAD"

    def dividers(self) -> dict[str, int]:
        """Return the divider parameters as the primitive names them."""
        return {"DIVR": self.divr, "DIVF": self.divf, "DIVQ": self.divq,
                "FILTER_RANGE": self.filter_range}


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


@dataclass(frozen=True)
class Ecp5Pll:
    """An EHXPLLL's parameters as ``ecppll`` chose them, and the output frequency (MHz)."""

    params: tuple[tuple[str, int | str], ...]  # the EHXPLLL parameters, in ecppll's order
    attrs: tuple[tuple[str, str], ...]  # the (* ... *) attributes ecppll puts on the instance
    f_in: float
    f_out: float

    primitive = "EHXPLLL"

    def dividers(self) -> dict[str, int]:
        """Return the divider parameters (CLKI_DIV, CLKFB_DIV, CLKOP_DIV, CLKOP_CPHASE)."""
        return {k: v for k, v in self.params if isinstance(v, int) and k != "CLKOP_FPHASE"}


def ecp5_pll(f_in: float, target: float) -> Ecp5Pll:
    """Return the EHXPLLL that ``ecppll`` (YoWASP) computes for ``target`` MHz from ``f_in``;
    raise ``ValueError`` when it cannot be made, ``KeraError`` when the tool is missing."""
    import subprocess
    import tempfile
    from pathlib import Path

    from kera.hls.characterize.tools import tool_path

    with tempfile.TemporaryDirectory(prefix="kera-ecppll-") as tmp:
        proc = subprocess.run([tool_path("yowasp-ecppll"), "-i", f"{f_in:g}", "-o",
                               f"{target:g}", "-f", "pll.v"], cwd=tmp, capture_output=True,
                              text=True, check=False)
        out = Path(tmp) / "pll.v"
        if proc.returncode != 0 or not out.is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ValueError(f"ecppll cannot make {target:g} MHz from {f_in:g} MHz: {tail[0]}")
        return parse_ecppll(out.read_text(encoding="utf-8"), f_in, target)


def parse_ecppll(verilog: str, f_in: float, target: float) -> Ecp5Pll:
    """Return the PLL in ``ecppll -f`` output; raise ``ValueError`` when its clock is above
    ``target`` or more than ``TOLERANCE`` below it."""
    import re

    params: list[tuple[str, int | str]] = []
    for name, value in re.findall(r"\.([A-Z_0-9]+)\(([^()]*)\),?\s*$", verilog.split(") pll_i")[0],
                                  flags=re.M):
        params.append((name, value.strip('"') if value.startswith('"') else int(value)))
    attrs = tuple((k, v) for k, v in re.findall(r'\(\* ([A-Z_]+)="([^"]*)" \*\)', verilog)
                  if not k.startswith("FREQUENCY_PIN"))
    found = re.search(r'FREQUENCY_PIN_CLKOP="([0-9.]+)"', verilog)
    if not params or found is None:
        raise ValueError("ecppll wrote no EHXPLLL")
    f_out = float(found.group(1))
    if not target * (1 - TOLERANCE) <= f_out <= target * (1 + 1e-6):
        raise ValueError(f"the ECP5 PLL cannot make {target:g} MHz from {f_in:g} MHz "
                         f"(ecppll's nearest is {f_out:g} MHz; within {TOLERANCE:.0%} below "
                         "the target is needed)")
    return Ecp5Pll(tuple(params), attrs, f_in, f_out)
