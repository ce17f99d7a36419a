"""Block RAM memories of a stateful region (STATE.md, "Hardware"; kera.hls.memory).

Each `mem` mapped to block RAM becomes a Verilog memory array that yosys infers as the family's
block RAM (``ram_style = "block"``: yosys's own choice for a small one on ECP5 is LUT RAM,
which the plan does not cost): one write port (``we``/``wa``/``wd``) and one synchronous read
port whose data register loads on the pipeline enable, so a stall holds it. The read address
is the read's address in the stage before the read; the read's wire is the RAM's data, or the
data written at the very edge the read was captured when that write hit the same address
(forwarding: the scheduler's modulo constraint leaves no other earlier write unseen). After
``rst`` a counter clears every word, one per cycle, with ``in_ready`` low until it is done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kera.rtl.netlist import Operand, lit, rng
from kera.rtl.state import state_base, write_enable

if TYPE_CHECKING:
    from kera.rtl.emit import _Module


def bram_plans(schedule: Any) -> list[Any]:
    """Return the memory plans of ``schedule`` that are block RAMs."""
    plan = schedule.state
    return [m for m in (plan.mems if plan is not None else ()) if m.mapped_to == "bram"]


class Rams:
    """The names of every block RAM of one module, chosen before the body is emitted."""

    def __init__(self, m: _Module) -> None:
        self.plans = bram_plans(m.s)
        self.by_read = {p.ports.read: p for p in self.plans}
        fresh = m.names.fresh
        self.busy = fresh("clr_busy") if self.plans else None
        self.counter = fresh("clr_addr") if self.plans else None
        self.base: dict[bytes, str] = {}
        for p in self.plans:
            name = state_base(m.g, p.ports.state, m.var)
            self.base[p.ports.read] = fresh(f"mem_{name}")
        self.words = max((p.words for p in self.plans), default=1)

    def abits(self, words: int) -> int:
        """Address bits of a memory of ``words`` words."""
        return max(1, (words - 1).bit_length())


def declarations(m: _Module, rams: Rams) -> list[str]:
    """Return the registers the handshake and the stages read before the RAMs are emitted."""
    if not rams.plans:
        return []
    out = ["// ---- block RAM registers (the memories follow the stages)",
           f"reg {rams.busy};", f"reg {rng(rams.abits(rams.words))}{rams.counter};"]
    for p in rams.plans:
        base, ab = rams.base[p.ports.read], rams.abits(p.words)
        out += [f"reg {rng(p.width)}{base}_q;", f"reg {base}_fv;", f"reg {rng(ab)}{base}_fa;",
                f"reg {rng(p.width)}{base}_fd;"]
    return out


def read_wire(m: _Module, rams: Rams, nid: bytes, stage: int) -> None:
    """Emit the wire of a block RAM read in ``stage``: RAM data or the forwarded write."""
    p = rams.by_read[nid]
    base, w, ab = rams.base[nid], p.width, rams.abits(p.words)
    addr = _addr(m, p.ports.raddr, stage, ab)
    m.body.lines.append(f"wire {rng(w)}{m.wire[nid]} = ({base}_fv & ({base}_fa == {addr})) ? "
                        f"{base}_fd : {base}_q;  // forwarded when the write at the capture "
                        "edge hit this word")


def _addr(m: _Module, nid: bytes, stage: int, bits: int) -> str:
    op = m.ref(nid, stage)
    return m.body.extend(Operand(op.expr, op.type, op.value), bits, False)


def ram_lines(m: _Module, rams: Rams) -> list[str]:
    """Return the memories, their ports, forwarding registers and the clear counter."""
    if not rams.plans:
        return []
    busy, counter = rams.busy, rams.counter
    cb = rams.abits(rams.words)
    lines = ["", "// ---- reset clears every block RAM word, one per cycle, in_ready low meanwhile",
             "always @(posedge clk) begin",
             f"    if (rst) begin {busy} <= 1'b1; {counter} <= {lit(0, cb)}; end",
             f"    else if ({busy}) begin",
             f"        {counter} <= {counter} + {lit(1, cb)};",
             f"        if ({counter} == {lit(rams.words - 1, cb)}) {busy} <= 1'b0;",
             "    end", "end"]
    for p in rams.plans:
        lines += _ram(m, rams, p)
    return lines


def _ram(m: _Module, rams: Rams, p: Any) -> list[str]:
    ports = p.ports
    base, w, ab = rams.base[ports.read], p.width, rams.abits(p.words)
    ws = m.s.stage[ports.next]
    rstage = m.s.stage[ports.read] - 1
    m.body.lines = []
    raddr = _addr(m, ports.raddr, rstage, ab)
    waddr = _addr(m, ports.waddr, ws, ab)
    wdata = m.ref(ports.wdata, ws).expr
    we = write_enable(m, ws)
    if ports.guard is not None:
        g = m.ref(ports.guard, ws).expr
        we += f" & {'~' if ports.negate else ''}{g}"
    helpers = m.body.lines
    cb = rams.abits(rams.words)
    clr = rams.counter if cb == ab else f"{rams.counter}[{ab - 1}:0]"
    if cb != ab:
        m.body.sink(str(rams.counter))
    return ["", f"// ---- memory `{p.name}`: {p.words} x {w} block RAM, synchronous read in "
                f"stage {rstage + 1}, written in stage {ws}",
            *helpers,
            "(* ram_style = \"block\" *)  // the plan's block RAM, not yosys's LUT RAM",
            f"reg {rng(w)}{base} [0:{p.words - 1}];",
            f"wire {base}_we = {we};",
            f"wire {rng(ab)}{base}_wa = {waddr};",
            f"wire {rng(w)}{base}_wd = {wdata};",
            "always @(posedge clk) begin",
            f"    if ({rams.busy}) {base}[{clr}] <= {lit(p.init, w)};",
            f"    else if ({base}_we) {base}[{base}_wa] <= {base}_wd;",
            f"    if ({m.control.en}) {base}_q <= {base}[{raddr}];",
            "end",
            "always @(posedge clk) begin",
            f"    if (rst) {base}_fv <= 1'b0;",
            f"    else if ({m.control.en}) begin",
            f"        {base}_fv <= {base}_we;",
            f"        {base}_fa <= {base}_wa;",
            f"        {base}_fd <= {base}_wd;",
            "    end",
            "end"]


__all__ = ["Rams", "bram_plans", "declarations", "ram_lines", "read_wire"]
