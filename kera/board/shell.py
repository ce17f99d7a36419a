"""The board shell in Amaranth: UART RX → frame decoder → core → frame encoder → UART TX.

The core is the generated Verilog module (INTERFACES.md), instantiated by name; the shell
decodes vector frames into its input ports, drives ``in_valid`` until the core takes the
vector, captures each result while ``out_ready`` is high, and sends it back framed. Every rule
of the frame format is the one ``kera.board.frame`` defines (docs/board.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from amaranth import (
    Cat,
    ClockSignal,
    Const,
    Elaboratable,
    Instance,
    Module,
    Mux,
    ResetSignal,
    Signal,
    Value,
)

from kera.board import frame
from kera.board.uart import UARTReceiver, UARTTransmitter


@dataclass(frozen=True)
class CorePorts:
    """The core as the shell sees it: module name, input ports (name, width), result width."""

    module: str
    inputs: tuple[tuple[str, int], ...]
    out_width: int

    @property
    def in_bits(self) -> int:
        """Return the width of all the input ports together."""
        return sum(w for _, w in self.inputs)

    @property
    def in_bytes(self) -> int:
        """Return a vector's payload length (as ``frame.Layout.in_bytes``)."""
        return max(1, (self.in_bits + 7) // 8)

    @property
    def out_bytes(self) -> int:
        """Return a result's payload length (as ``frame.Layout.out_bytes``)."""
        return max(1, (self.out_width + 7) // 8)


def core_ports(layout: frame.Layout, module: str) -> CorePorts:
    """Return the ports of the core named ``module`` whose frames follow ``layout``."""
    inputs = tuple((name, t.flat_width) for name, t in layout.params)
    return CorePorts(module, inputs, layout.result.flat_width)


def crc8_step(crc: Value, byte: Value) -> Value:
    """Return the CRC-8 (``frame.crc8``) of one more byte, as logic.

    The CRC is linear over GF(2): output bit i is the parity of the input bits (crc ^ byte)
    whose unit vector sets bit i, a table computed once from ``frame.crc8`` itself.
    """
    c = crc ^ byte
    bits = []
    for i in range(8):
        taps = [j for j in range(8) if frame.crc8(bytes([1 << j])) >> i & 1]
        bits.append(Cat(*(c[j] for j in taps)).xor() if taps else Const(0, 1))
    return Cat(*bits)


class Shell(Elaboratable):
    """The UART shell around ``core``: ports ``rx`` (in) and ``tx`` (out), domain ``sync``."""

    def __init__(self, core: CorePorts, divisor: int, idle_bits: int = frame.IDLE_BITS) -> None:
        if core.in_bytes > 0xFFFF or core.out_bytes > 0xFFFF:
            raise ValueError("a frame carries at most 65535 payload bytes")
        self.core = core
        self.divisor = divisor
        self.idle_cycles = idle_bits * divisor
        self.rx = Signal(init=1)
        self.tx = Signal(init=1)

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.uart_rx = rx = UARTReceiver(self.divisor)
        m.submodules.uart_tx = tx = UARTTransmitter(self.divisor)
        m.d.comb += [rx.rx.eq(self.rx), self.tx.eq(tx.tx)]
        core = self.core
        hold = Signal(max(1, core.in_bits))  # the vector the core is offered
        pending = Signal()  # in_valid
        in_ready = Signal()
        result = Signal(core.out_bytes * 8)  # the result waiting to be sent
        result_full = Signal()
        out_valid = Signal()
        out = Signal(core.out_width)
        err_code = Signal(8)
        err_pending = Signal()
        # Some platforms (ECP5) give a reset-less domain: a power-on count resets the core too.
        power_on = Signal(range(16), init=15, reset_less=True)
        with m.If(power_on != 0):
            m.d.sync += power_on.eq(power_on - 1)
        core_rst = ResetSignal(allow_reset_less=True) | (power_on != 0)
        ports = [("i", "clk", ClockSignal()), ("i", "rst", core_rst),
                 ("i", "in_valid", pending), ("o", "in_ready", in_ready),
                 ("o", "out_valid", out_valid), ("i", "out_ready", ~result_full),
                 ("o", "out", out)]
        lo = 0
        for name, width in core.inputs:
            ports.append(("i", name, hold[lo:lo + width]))
            lo += width
        m.submodules.core = Instance(core.module, *ports)
        with m.If(pending & in_ready):
            m.d.sync += pending.eq(0)
        with m.If(out_valid & ~result_full):
            m.d.sync += [result.eq(out), result_full.eq(1)]
        self._encoder(m, tx, result, result_full, err_code, err_pending)
        self._decoder(m, rx, hold, pending, in_ready, err_code, err_pending)
        return m

    def _decoder(self, m: Module, rx: UARTReceiver, hold: Signal, pending: Signal,
                 in_ready: Signal, err_code: Signal, err_pending: Signal) -> None:
        """Parse vector frames from ``rx`` into ``hold``; raise error replies."""
        core = self.core
        crc = Signal(8)
        length_lo = Signal(8)
        count = Signal(range(core.in_bytes + 1))
        buf = Signal(core.in_bytes * 8)
        drain_code = Signal(8)
        quiet = Signal(range(self.idle_cycles + 1))  # cycles since the last byte
        with m.If(rx.busy):
            m.d.sync += quiet.eq(0)
        with m.Elif(quiet != self.idle_cycles):
            m.d.sync += quiet.eq(quiet + 1)
        idle = quiet == self.idle_cycles
        byte, got = rx.data, rx.valid

        def reply(code: int | Value) -> list:
            return [err_code.eq(code), err_pending.eq(1)]

        with m.FSM(name="decoder"):
            with m.State("HUNT"):
                with m.If(got & (byte == frame.SYNC)):
                    m.d.sync += crc.eq(0)
                    m.next = "KIND"
            for state in ("KIND", "LEN0", "LEN1", "PAYLOAD", "CRC"):
                with m.State(state):
                    with m.If(got):
                        m.d.sync += crc.eq(crc8_step(crc, byte))
                        self._header_byte(m, state, byte, crc, length_lo, count, buf,
                                          drain_code, hold, pending, in_ready, reply)
                    with m.Elif(idle):
                        m.d.sync += reply(frame.ERR_TRUNCATED)
                        m.next = "HUNT"
            with m.State("DRAIN"):  # skip the rest of a frame whose header was wrong
                with m.If(idle):
                    m.d.sync += reply(drain_code)
                    m.next = "HUNT"

    def _header_byte(self, m: Module, state: str, byte: Value, crc: Signal, length_lo: Signal,
                     count: Signal, buf: Signal, drain_code: Signal, hold: Signal,
                     pending: Signal, in_ready: Signal, reply: Any) -> None:
        """Handle one received byte of a frame in ``state``."""
        core = self.core
        if state == "KIND":
            with m.If(byte == frame.KIND_VECTOR):
                m.next = "LEN0"
            with m.Else():
                m.d.sync += drain_code.eq(frame.ERR_KIND)
                m.next = "DRAIN"
        elif state == "LEN0":
            m.d.sync += length_lo.eq(byte)
            m.next = "LEN1"
        elif state == "LEN1":
            with m.If(Cat(length_lo, byte) == core.in_bytes):
                m.d.sync += count.eq(core.in_bytes - 1)
                m.next = "PAYLOAD"
            with m.Else():
                m.d.sync += drain_code.eq(frame.ERR_LENGTH)
                m.next = "DRAIN"
        elif state == "PAYLOAD":
            # Bytes arrive least significant first: each new byte enters at the top.
            m.d.sync += [buf.eq(Cat(buf[8:], byte)), count.eq(count - 1)]
            with m.If(count == 0):
                m.next = "CRC"
        else:
            with m.If(byte != crc):
                m.d.sync += reply(frame.ERR_CRC)
            with m.Elif(pending & ~in_ready):
                m.d.sync += reply(frame.ERR_OVERRUN)
            with m.Else():
                m.d.sync += [hold.eq(buf[:len(hold)]), pending.eq(1)]
            m.next = "HUNT"

    def _encoder(self, m: Module, tx: UARTTransmitter, result: Signal, result_full: Signal,
                 err_code: Signal, err_pending: Signal) -> None:
        """Send error replies (first) and results as frames through ``tx``."""
        n_max = self.core.out_bytes
        kind = Signal(8)
        length = Signal(16)
        shift = Signal(max(8, n_max * 8))
        crc = Signal(8)
        index = Signal(range(frame.HEADER_BYTES + n_max + 1))
        data = Signal(8)
        last = index == frame.HEADER_BYTES + length
        with m.Switch(index):
            with m.Case(0):
                m.d.comb += data.eq(frame.SYNC)
            with m.Case(1):
                m.d.comb += data.eq(kind)
            with m.Case(2):
                m.d.comb += data.eq(length[:8])
            with m.Case(3):
                m.d.comb += data.eq(length[8:])
            with m.Default():
                m.d.comb += data.eq(Mux(last, crc, shift[:8]))
        with m.FSM(name="encoder"):
            with m.State("IDLE"):
                m.d.sync += [index.eq(0), crc.eq(0)]
                with m.If(err_pending):
                    m.d.sync += [kind.eq(frame.KIND_ERROR), length.eq(1), shift.eq(err_code),
                                 err_pending.eq(0)]
                    m.next = "SEND"
                with m.Elif(result_full):
                    m.d.sync += [kind.eq(frame.KIND_RESULT), length.eq(n_max),
                                 shift.eq(result), result_full.eq(0)]
                    m.next = "SEND"
            with m.State("SEND"):
                m.d.comb += [tx.data.eq(data), tx.valid.eq(tx.ready)]
                with m.If(tx.ready):
                    m.d.sync += index.eq(index + 1)
                    with m.If(index != 0):
                        m.d.sync += crc.eq(crc8_step(crc, data))
                    with m.If(index >= frame.HEADER_BYTES):
                        m.d.sync += shift.eq(shift >> 8)
                    with m.If(last):
                        m.next = "IDLE"


