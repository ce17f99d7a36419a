"""ECP5 block RAMs instantiated with their output register (``MemPlan.outreg``).

yosys 0.70's ``synth_ecp5`` infers a ``DP16KD`` from a memory array but never merges a register
after it into the RAM's output register (``REGMODE_B = "NOREG"`` always), and nextpnr times the
unregistered read at 5.83 ns from the clock: more than a 150 MHz period leaves. Where the
schedule reads through the output register (address two stages before the data), the emitter
instantiates the primitive under ``ifdef SYNTHESIS``: port A writes (the reset's clear or the
transfer's write), port B reads with ``CEB``/``OCEB`` on the pipeline enable, so a stall holds
the read and its output register as it holds the behavioural text's two registers. Each RAM is
1024 x 18 (``DATA_WIDTH = 18``: address on ``AD13..AD4``, the write's byte enables on
``ADA1``/``ADA0``), one per 18 data bits. A read and a write of the same word at the same edge
read an undefined word; the emitter forwards that write (``kera.rtl.memory``), so it is never
used. ``tests/rtl/test_bram_outreg.py`` simulates this text with a model of the primitive.
"""

from __future__ import annotations

from kera.hls.memory import PRIMITIVE_WIDTH, PRIMITIVE_WORDS
from kera.rtl.netlist import rng

#: The primitive's address bits at DATA_WIDTH 18 (``AD13..AD4``).
ADDRESS_BITS = (PRIMITIVE_WORDS - 1).bit_length()


def dp16kd_lines(base: str, width: int, abits: int, *, we: str, waddr: str, wdata: str,
                 raddr: str, en: str, out: str) -> list[str]:
    """Return the lines of the DP16KD columns of memory ``base``: port A writes ``wdata`` at
    ``waddr`` when ``we``; port B reads ``raddr`` into its output register on ``en``; the
    ``width`` data bits come out on the wire ``out`` (declared by the caller)."""
    cols = -(-width // PRIMITIVE_WIDTH)
    pad = ADDRESS_BITS - abits
    lines = [f"wire {rng(abits)}{base}_pa = {waddr};", f"wire {rng(abits)}{base}_pb = {raddr};",
             f"wire {rng(cols * PRIMITIVE_WIDTH)}{base}_di = "
             f"{{{cols * PRIMITIVE_WIDTH - width}'b0, {wdata}}};"
             if cols * PRIMITIVE_WIDTH > width else
             f"wire {rng(width)}{base}_di = {wdata};",
             f"wire {rng(cols * PRIMITIVE_WIDTH)}{base}_do;"]

    def address(port: str, name: str) -> str:
        bit = [f"{name}[{k}]" if abits > 1 else name for k in range(abits)] + ["1'b0"] * pad
        bits = [f".AD{port}{4 + k}({b})" for k, b in enumerate(bit)]
        low = "1'b1" if port == "A" else "1'b0"  # port A's byte enables; port B reads
        return ", ".join([*bits, f".AD{port}3(1'b0)", f".AD{port}2(1'b0)",
                          f".AD{port}1({low})", f".AD{port}0({low})"])

    for c in range(cols):
        lo = c * PRIMITIVE_WIDTH
        lines += [
            "DP16KD #(.DATA_WIDTH_A(18), .DATA_WIDTH_B(18), .REGMODE_A(\"NOREG\"), "
            ".REGMODE_B(\"OUTREG\"), .WRITEMODE_A(\"NORMAL\"), .WRITEMODE_B(\"NORMAL\"), "
            ".CSDECODE_A(\"0b000\"), .CSDECODE_B(\"0b000\"), .GSR(\"DISABLED\"), "
            f".RESETMODE(\"SYNC\")) {base}_ram{c} (",
            f"    .CLKA(clk), .CEA(1'b1), .OCEA(1'b1), .WEA({we}), .RSTA(1'b0), "
            ".CSA0(1'b0), .CSA1(1'b0), .CSA2(1'b0),",
            f"    {address('A', f'{base}_pa')},",
            "    " + ", ".join(f".DIA{k}({base}_di[{lo + k}])" for k in range(PRIMITIVE_WIDTH))
            + ",",
            f"    .CLKB(clk), .CEB({en}), .OCEB({en}), .WEB(1'b0), .RSTB(1'b0), "
            ".CSB0(1'b0), .CSB1(1'b0), .CSB2(1'b0),",
            f"    {address('B', f'{base}_pb')},",
            "    " + ", ".join(f".DIB{k}(1'b0)" for k in range(PRIMITIVE_WIDTH)) + ",",
            "    " + ", ".join(f".DOB{k}({base}_do[{lo + k}])" for k in range(PRIMITIVE_WIDTH))
            + ");"]
    lines.append(f"assign {out} = {base}_do[{width - 1}:0];")
    return lines


__all__ = ["ADDRESS_BITS", "dp16kd_lines"]
