"""An 8N1 UART receiver and transmitter in Amaranth, timed by a fixed clock divisor."""

from __future__ import annotations

from amaranth import Cat, Const, Elaboratable, Module, Signal

#: The largest baud-rate error a divisor may leave (8N1 tolerates about 4 % at both ends).
MAX_BAUD_ERROR = 0.02


def divisor_for(clock_hz: float, baud: int) -> int:
    """Return the clock cycles per bit for ``baud`` at ``clock_hz``; raise ``ValueError`` when
    the nearest divisor misses the baud rate by more than ``MAX_BAUD_ERROR``."""
    divisor = round(clock_hz / baud)
    if divisor < 4:
        raise ValueError(f"a {clock_hz / 1e6:g} MHz clock is too slow for {baud} baud")
    error = abs(clock_hz / divisor - baud) / baud
    if error > MAX_BAUD_ERROR:
        raise ValueError(f"{baud} baud is {error:.1%} off at {clock_hz / 1e6:g} MHz "
                         f"(divisor {divisor}); at most {MAX_BAUD_ERROR:.0%} works")
    return divisor


class UARTReceiver(Elaboratable):
    """Receive 8N1 bytes from ``rx``: ``valid`` strobes for one cycle with ``data``; ``busy`` is
    high from a start bit to the middle of its stop bit. A byte whose stop bit is low is dropped.
    """

    def __init__(self, divisor: int) -> None:
        self.divisor = divisor
        self.rx = Signal(init=1)
        self.data = Signal(8)
        self.valid = Signal()
        self.busy = Signal()

    def elaborate(self, platform: object) -> Module:
        m = Module()
        sync = Signal(2, init=0b11)  # two flip-flops: rx is asynchronous to the clock
        m.d.sync += sync.eq(Cat(self.rx, sync[0]))
        line = sync[1]
        timer = Signal(range(self.divisor))
        count = Signal(range(8))
        shift = Signal(8)
        m.d.sync += self.valid.eq(0)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(~line):
                    m.d.sync += timer.eq(self.divisor // 2 - 1)
                    m.next = "START"
            with m.State("START"):
                m.d.comb += self.busy.eq(1)
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(line):  # a glitch, not a start bit
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [timer.eq(self.divisor - 1), count.eq(0)]
                    m.next = "DATA"
            with m.State("DATA"):
                m.d.comb += self.busy.eq(1)
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    m.d.sync += [shift.eq(Cat(shift[1:], line)), timer.eq(self.divisor - 1),
                                 count.eq(count + 1)]
                    with m.If(count == 7):
                        m.next = "STOP"
            with m.State("STOP"):
                m.d.comb += self.busy.eq(1)
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    with m.If(line):
                        m.d.sync += [self.data.eq(shift), self.valid.eq(1)]
                    m.next = "IDLE"
        return m


class UARTTransmitter(Elaboratable):
    """Send ``data`` as one 8N1 byte on ``tx`` when ``valid`` is high while ``ready`` is."""

    def __init__(self, divisor: int) -> None:
        self.divisor = divisor
        self.tx = Signal(init=1)
        self.data = Signal(8)
        self.valid = Signal()
        self.ready = Signal()

    def elaborate(self, platform: object) -> Module:
        m = Module()
        frame = Signal(10, init=0x3FF)  # stop bit, data LSB first, start bit: shifted out at bit 0
        timer = Signal(range(self.divisor))
        count = Signal(range(10))
        m.d.comb += self.tx.eq(frame[0])
        with m.FSM():
            with m.State("IDLE"):
                m.d.comb += self.ready.eq(1)
                with m.If(self.valid):
                    m.d.sync += [frame.eq(Cat(Const(0, 1), self.data, Const(1, 1))),
                                 timer.eq(self.divisor - 1), count.eq(0)]
                    m.next = "SEND"
            with m.State("SEND"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Else():
                    m.d.sync += [frame.eq(Cat(frame[1:], Const(1, 1))),
                                 timer.eq(self.divisor - 1), count.eq(count + 1)]
                    with m.If(count == 9):
                        m.next = "IDLE"
        return m
