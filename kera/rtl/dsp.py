"""Pipelined DSP multiplies (``Schedule.pipelined``): the DSP with its own registers.

``kera.hls.schedule.pipeline_dsps`` makes a multiply that is too slow for the period a two-stage
op on a DSP block with input and output registers: its operands are registered at the end of
the stage before it, it is alone in its stage, and its product is registered at the end of it.
Where yosys packs such flip-flops into the DSP by itself (iCE40's ``ice40_dsp``), the ordinary
pipeline banks are enough; ECP5's ``synth_ecp5`` (yosys 0.70) packs none, so the emitter
instantiates the ``MULT18X18D`` with ``REG_INPUTA_CLK``/``REG_INPUTB_CLK``/``REG_OUTPUT_CLK``
on ``CLK0``, clock enable ``CE0`` the pipeline enable, no reset (the banks have none).

The primitive is emitted under ``ifdef SYNTHESIS`` (yosys defines it when it reads Verilog);
every other reader (Verilator, Icarus, the lint) sees the behavioural text the module has for
any other multiply: the product of the operands' bank registers, registered in the stage's
bank. The two are the same circuit: the DSP's input registers load what those bank registers
load (the D side of the bank before, with the same enable), and its output register is the
product's bank register. The test ``tests/rtl/test_dsp_pipeline.py`` checks it with yosys's
SAT-based equivalence against a model of the primitive's registered multiply.
"""

from __future__ import annotations

from typing import Any

from kera.ir.types import IntType
from kera.rtl.netlist import Operand, const_operand, rng

#: The ECP5 DSP multiplier: an 18 x 18 product on 36 bits.
MULT18X18D_WIDTH = 18


def operand_inputs(m: Any, nid: bytes, s: int) -> list[Operand]:
    """Return the values bank ``s - 1`` loads for the operands of the multiply ``nid`` (stage
    ``s``): the D side of the registers whose Q side the behavioural product reads."""
    out = []
    for i in m.g.nodes[nid].inputs:
        node = m.g.nodes[i]
        if node.op == "const":
            out.append(const_operand(int(node.attr("value")), node.type))
        elif m.s.stage[i] == s - 1:
            out.append(m.ref(i, s - 1))
        else:
            out.append(Operand(m.bank_name[(s - 2, i)], node.type))
    return out


def primitive_lines(m: Any, nid: bytes, s: int, family: str) -> tuple[str, list[str]]:
    """Return (the product's 36-bit wire, the lines instantiating its DSP) for ``family``.

    The product's bank register reads the wire's low bits (``kera.rtl.emit``)."""
    if family != "ecp5":
        raise ValueError(f"no pipelined DSP primitive for {family}")
    ops = operand_inputs(m, nid, s)
    t = ops[0].type
    # the operands' significant bits fit the DSP (``CostModel.can_pipeline``): their low 18
    # bits, sign-extended when signed, give the exact product, whose low bits are the result
    signed = isinstance(t, IntType) and t.signed
    base = m.wire[nid]
    w = MULT18X18D_WIDTH
    a = m.names.fresh(f"{base}_dsp_a")
    b = m.names.fresh(f"{base}_dsp_b")
    p = m.names.fresh(f"{base}_dsp_p")
    inst = m.names.fresh(f"{base}_dsp")
    flag = "1'b1" if signed else "1'b0"
    lines = [
        f"wire {rng(w)}{a} = {m.body.extend(ops[0], w, signed)};",
        f"wire {rng(w)}{b} = {m.body.extend(ops[1], w, signed)};",
        f"wire {rng(2 * w)}{p};",
        "MULT18X18D #(.REG_INPUTA_CLK(\"CLK0\"), .REG_INPUTB_CLK(\"CLK0\"), "
        ".REG_OUTPUT_CLK(\"CLK0\"), .GSR(\"DISABLED\"), .RESETMODE(\"SYNC\")) "
        f"{inst} (",
        "    " + ", ".join(f".A{k}({a}[{k}])" for k in range(w)) + ",",
        "    " + ", ".join(f".B{k}({b}[{k}])" for k in range(w)) + ",",
        "    " + ", ".join(f".C{k}(1'b0)" for k in range(w)) + ",",
        f"    .SIGNEDA({flag}), .SIGNEDB({flag}), .SOURCEA(1'b0), .SOURCEB(1'b0),",
        f"    .CLK0(clk), .CLK1(1'b0), .CLK2(1'b0), .CLK3(1'b0), .CE0({m.control.en}), "
        ".CE1(1'b0), .CE2(1'b0), .CE3(1'b0),",
        "    .RST0(1'b0), .RST1(1'b0), .RST2(1'b0), .RST3(1'b0),",
        "    " + ", ".join(f".P{k}({p}[{k}])" for k in range(2 * w)) + ");",
    ]
    return p, lines


__all__ = ["MULT18X18D_WIDTH", "operand_inputs", "primitive_lines"]
