"""ECP5 block RAMs instantiated with their output register (``MemPlan.outreg``).

yosys 0.70's ``synth_ecp5`` infers a ``DP16KD`` from a memory array but never merges a register
after it into the RAM's output register (``REGMODE_B = "NOREG"`` always), and nextpnr times the
unregistered read at 5.83 ns from the clock: more than a 150 MHz period leaves. Where the
schedule reads through the output register (address two stages before the data), the emitter
instantiates the primitive under ``ifdef SYNTHESIS``: port A writes (the reset's clear or the
transfer's write), port B reads with ``CEB``/``OCEB`` on the pipeline enable, so a stall holds
the read and its output register as it holds the behavioural text's two registers.

Each RAM takes the narrowest of the DP16KD's shapes that holds every word
(``kera.hls.memory.primitive_shape``: 1024 x 18, 2048 x 9, 4096 x 4, 8192 x 2, 16384 x 1),
one per that many data bits. The pins are those yosys's own mapping uses (its
``brams_map_16kd.v``, checked on memories it infers): the word address on ``AD13`` down to
``AD4``, ``AD3``, ``AD2``, ``AD1`` or ``AD0`` by shape, the bits below it 0 except port A's
byte enables ``ADA1``/``ADA0`` at 18 bits; data on ``DI``/``DO`` from bit 0. A read and a
write of the same word at the same edge read an undefined word; the emitter forwards that
write (``kera.rtl.memory``), so it is never used. ``tests/rtl/test_bram_outreg.py`` simulates
this text with a model of the primitive.
"""

from __future__ import annotations

from kera.hls.memory import primitive_shape
from kera.rtl.netlist import rng

#: The primitive's address pins (``AD13..AD0``) and data pins per port.
ADDRESS_PINS, DATA_PINS = 14, 18


def _address(port: str, name: str, abits: int, low: int, write: bool = False) -> str:
    """Return the address pins of ``port``: the ``abits`` bits of wire ``name`` from pin
    ``low`` up, zeros above and below, the two lowest 1 where ``write`` (port A's byte
    enables at 18 bits)."""
    bit = [f"{name}[{k}]" if abits > 1 else name for k in range(abits)]
    bit += ["1'b0"] * (ADDRESS_PINS - low - abits)
    enable = "1'b1" if write else "1'b0"
    pins = [f".AD{port}{low + k}({b})" for k, b in enumerate(bit)]
    pins += [f".AD{port}{k}({enable})" if k < 2 else f".AD{port}{k}(1'b0)"
             for k in reversed(range(low))]
    return ", ".join(pins)


def dp16kd_lines(base: str, words: int, width: int, abits: int, *, we: str, waddr: str,
                 wdata: str, raddr: str, en: str, out: str) -> list[str]:
    """Return the lines of the DP16KD columns of memory ``base`` (``words`` x ``width``):
    port A writes ``wdata`` at ``waddr`` when ``we``; port B reads ``raddr`` into its output
    register on ``en``; the data come out on the wire ``out`` (declared by the caller)."""
    depth, dw = primitive_shape(words)
    cols = -(-width // dw)
    low = ADDRESS_PINS - (depth - 1).bit_length()  # the pins below the word address
    padded = cols * dw
    lines = [f"wire {rng(abits)}{base}_pa = {waddr};", f"wire {rng(abits)}{base}_pb = {raddr};",
             f"wire {rng(padded)}{base}_di = "
             + (f"{{{padded - width}'b0, {wdata}}};" if padded > width else f"{wdata};"),
             f"wire {rng(padded)}{base}_do;"]

    for c in range(cols):
        lo = c * dw
        data_in = [f".DIA{k}({base}_di[{lo + k}])" if k < dw else f".DIA{k}(1'b0)"
                   for k in range(DATA_PINS)]
        data_out = [f".DOB{k}({base}_do[{lo + k}])" for k in range(dw)]
        lines += [
            f"DP16KD #(.DATA_WIDTH_A({dw}), .DATA_WIDTH_B({dw}), .REGMODE_A(\"NOREG\"), "
            ".REGMODE_B(\"OUTREG\"), .WRITEMODE_A(\"NORMAL\"), .WRITEMODE_B(\"NORMAL\"), "
            ".CSDECODE_A(\"0b000\"), .CSDECODE_B(\"0b000\"), .GSR(\"DISABLED\"), "
            f".RESETMODE(\"SYNC\")) {base}_ram{c} (",
            f"    .CLKA(clk), .CEA(1'b1), .OCEA(1'b1), .WEA({we}), .RSTA(1'b0), "
            ".CSA0(1'b0), .CSA1(1'b0), .CSA2(1'b0),",
            f"    {_address('A', f'{base}_pa', abits, low, write=dw == 18)},",
            "    " + ", ".join(data_in) + ",",
            f"    .CLKB(clk), .CEB({en}), .OCEB({en}), .WEB(1'b0), .RSTB(1'b0), "
            ".CSB0(1'b0), .CSB1(1'b0), .CSB2(1'b0),",
            f"    {_address('B', f'{base}_pb', abits, low)},",
            "    " + ", ".join(f".DIB{k}(1'b0)" for k in range(DATA_PINS)) + ",",
            "    " + ", ".join(data_out) + ");"]
    lines.append(f"assign {out} = {base}_do[{width - 1}:0];")
    return lines


def dp16kd_rom_lines(name: str, words: list[int], width: int, abits: int,
                     reads: list[tuple[str, str]], en: str) -> list[str]:
    """Return a DP16KD (1024 x 18) initialised with ``words`` whose ports A and B read the
    addresses of ``reads`` (one or two ``(address, data wire)``) through their output
    registers, loaded on ``en``. ``INITVAL_xx`` holds words ``16 xx`` to ``16 xx + 15`` in
    20-bit slots, 18 data bits each (yosys's ``brams_map_16kd.v`` layout)."""
    rows = []
    for row in range(-(-len(words) // 16)):
        value = sum((words[k] & ((1 << DATA_PINS) - 1)) << (20 * (k - 16 * row))
                    for k in range(16 * row, min(16 * row + 16, len(words))))
        rows.append(f".INITVAL_{row:02X}(320'h{value:080X})")
    used = "AB"[:len(reads)]
    lines = [f"wire {rng(abits)}{name}_a{p} = {a};"
             for p, (a, _) in zip(used, reads, strict=True)]
    lines += [f"wire {rng(DATA_PINS)}{name}_do{p};" for p in used]
    ports = []
    for p in "AB":
        clock_enable = en if p in used else "1'b0"
        ports += [
            f"    .CLK{p}(clk), .CE{p}({clock_enable}), .OCE{p}({clock_enable}), .WE{p}(1'b0), "
            f".RST{p}(1'b0), "
            f".CS{p}0(1'b0), .CS{p}1(1'b0), .CS{p}2(1'b0),",
            f"    {_address(p, f'{name}_a{p}', abits if p in used else 0, 4)},",
            "    " + ", ".join(f".DI{p}{k}(1'b0)" for k in range(DATA_PINS)) + ","]
        if p in used:
            ports.append("    " + ", ".join(f".DO{p}{k}({name}_do{p}[{k}])"
                                             for k in range(DATA_PINS)) + ",")
    ports[-1] = ports[-1].rstrip(",") + ");"
    lines += ["DP16KD #(.DATA_WIDTH_A(18), .DATA_WIDTH_B(18), .REGMODE_A(\"OUTREG\"), "
              ".REGMODE_B(\"OUTREG\"), .CSDECODE_A(\"0b000\"), .CSDECODE_B(\"0b000\"), "
              ".GSR(\"DISABLED\"), .RESETMODE(\"SYNC\"),",
              "    " + ", ".join(rows) + f") {name}_ram (", *ports]
    lines += [f"assign {q} = {name}_do{p}[{width - 1}:0];"
              for p, (_, q) in zip(used, reads, strict=True)]
    return lines


__all__ = ["ADDRESS_PINS", "DATA_PINS", "dp16kd_lines", "dp16kd_rom_lines"]
