"""The boards a bitstream can be built for: their amaranth-boards platforms and UART.

amaranth-boards knows each board's pins, oscillator and I/O standards; our board TOML
(``kera.hls.boards``) knows the family, device and capacities the scheduler uses. A board gets a
bitstream when amaranth-boards has its platform with a UART resource; the others are refused
with a one-line error naming the boards that work.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from amaranth import ClockDomain, ClockSignal, Const, Elaboratable, Instance, Module, Signal
from amaranth.lib import io
from amaranth.lib.cdc import ResetSynchronizer

from kera.board.pll import Ecp5Pll, Ice40Pll, ecp5_pll, ice40_pll
from kera.board.shell import Shell
from kera.diagnostics import ExitCode, KeraError
from kera.hls.boards import Board


@dataclass(frozen=True)
class BoardPlatform:
    """Where a board's amaranth-boards platform lives, and its UART."""

    module: str
    cls: str
    uart: str = "uart"


#: Boards with a bitstream flow (the board name of ``kera.hls.boards``).
PLATFORMS = {
    "icebreaker": BoardPlatform("amaranth_boards.icebreaker", "ICEBreakerPlatform"),
    "ulx3s": BoardPlatform("amaranth_boards.ulx3s", "ULX3S_85F_Platform"),
}


def platform_for(board: Board) -> Any:
    """Return a fresh amaranth-boards platform instance for ``board``; raise ``KeraError``."""
    entry = PLATFORMS.get(board.name)
    if entry is None:
        raise KeraError(f"no bitstream flow for board `{board.name}` yet (supported: "
                        f"{', '.join(sorted(PLATFORMS))})", exit_code=ExitCode.USAGE)
    try:
        module = importlib.import_module(entry.module)
    except ImportError:
        raise KeraError("amaranth-boards is not installed: install the tools with "
                        "`pip install -e '.[tools]'`", exit_code=ExitCode.TOOL) from None
    return getattr(module, entry.cls)()


def oscillator_mhz(platform: Any) -> float:
    """Return the frequency of the platform's default clock in MHz."""
    return float(platform.default_clk_frequency) / 1e6


def clock_plan(board: Board, platform: Any,
               clock_mhz: float) -> Ice40Pll | Ecp5Pll | None:
    """Return the PLL that makes the core's clock target from the oscillator, or None when the
    target is the oscillator; raise ``KeraError`` when it cannot be made."""
    osc = oscillator_mhz(platform)
    if abs(clock_mhz - osc) <= 1e-9 * osc:
        return None
    makers: dict[str, Callable[[float, float], Ice40Pll | Ecp5Pll]] = {
        "ice40": ice40_pll, "ecp5": ecp5_pll}
    make = makers.get(board.family)
    if make is None:
        raise KeraError(f"board `{board.name}`: the clock target {clock_mhz:g} MHz is not the "
                        f"{osc:g} MHz oscillator, and no {board.family} PLL is generated yet; "
                        f"synthesize with --clock-mhz {osc:g} for a bitstream")
    try:
        return make(osc, clock_mhz)
    except ValueError as e:
        raise KeraError(f"board `{board.name}`: {e}") from None


class BoardTop(Elaboratable):
    """The shell with its ``rx``/``tx`` on the board's UART pins, clocked by the oscillator or
    by the PLL (held in reset until it locks)."""

    def __init__(self, shell: Shell, uart: str = "uart",
                 pll: Ice40Pll | Ecp5Pll | None = None) -> None:
        self.shell = shell
        self.uart = uart
        self.pll = pll

    def elaborate(self, platform: Any) -> Module:
        m = Module()
        m.submodules.shell = self.shell
        uart = platform.request(self.uart, 0, dir="-")
        m.submodules.rx_buffer = rx = io.Buffer("i", uart.rx)
        m.submodules.tx_buffer = tx = io.Buffer("o", uart.tx)
        m.d.comb += [self.shell.rx.eq(rx.i), tx.o.eq(self.shell.tx)]
        if self.pll is not None:
            self._pll(m, platform, self.pll)
        return m

    def _pll(self, m: Module, platform: Any, pll: Ice40Pll | Ecp5Pll) -> None:
        """Drive the ``sync`` domain from the PLL, held in reset until it locks.

        On iCE40 it is an SB_PLL40_PAD on the oscillator's pin (the UP5K's PLL sits on that
        pin's I/O tile, so the CORE variant cannot be placed); on ECP5 an EHXPLLL fed through
        an input buffer, with ecppll's parameters and attributes.
        """
        osc = platform.request(platform.default_clk, dir="-")
        m.domains.sync = ClockDomain("sync")
        locked, pll_clk = Signal(), Signal()
        m.d.comb += ClockSignal("sync").eq(pll_clk)
        if isinstance(pll, Ice40Pll):
            m.submodules.pll = Instance(
                "SB_PLL40_PAD", p_FEEDBACK_PATH="SIMPLE", p_DIVR=pll.divr, p_DIVF=pll.divf,
                p_DIVQ=pll.divq, p_FILTER_RANGE=pll.filter_range, i_PACKAGEPIN=osc.io,
                i_RESETB=Const(1), i_BYPASS=Const(0), o_PLLOUTGLOBAL=pll_clk, o_LOCK=locked)
        else:
            m.submodules.osc_buffer = osc_buffer = io.Buffer("i", osc)
            zero, one = Const(0), Const(1)
            m.submodules.pll = Instance(
                "EHXPLLL", *(("a", k, v) for k, v in pll.attrs),
                *(("p", k, v) for k, v in pll.params),
                ("i", "RST", zero), ("i", "STDBY", zero), ("i", "CLKI", osc_buffer.i),
                ("o", "CLKOP", pll_clk), ("i", "CLKFB", pll_clk), ("i", "PHASESEL0", zero),
                ("i", "PHASESEL1", zero), ("i", "PHASEDIR", one), ("i", "PHASESTEP", one),
                ("i", "PHASELOADREG", one), ("i", "PLLWAKESYNC", zero), ("i", "ENCLKOP", zero),
                ("o", "LOCK", locked))
        m.submodules.reset_sync = ResetSynchronizer(~locked, domain="sync")
        platform.add_clock_constraint(pll_clk, pll.f_out * 1e6)
