"""The shared units of a schedule at ii > 1 (``Schedule.units``) as Verilog.

Each op a unit serves is declared as a wire in its own stage (its operands are collected there,
``_Module.unit_operands``); after the stages, each operand of the unit is an AND-OR multiplexer
of the ops' operands, cut to their significant bits and selected by the modulo counter (stage
``s`` runs at count ``s mod ii``), extended back to the operand type; one lowering of the op
computes the unit's output, and each op's wire is that output.
"""

from __future__ import annotations

from typing import Any

from kera.rtl.lower import LOWERINGS
from kera.rtl.netlist import Operand, lit


def unit_lines(module: Any) -> list[str]:
    """Return the lines of every shared unit of ``module`` (an ``emit._Module``)."""
    s, g, body = module.s, module.g, module.body
    phase = module.control.wait
    cw = (s.ii - 1).bit_length()
    saved, body.lines = body.lines, []
    for unit in s.units:
        if len(unit.ops) < 2:
            continue
        rep = g.nodes[unit.ops[0]]
        body.lines.append("")
        body.lines.append(f"// ---- unit {unit.name}: one `{unit.kind}` for {len(unit.ops)} ops "
                          f"(counter slots {', '.join(map(str, unit.slots))})")
        operands = []
        for j, e in enumerate(unit.in_widths):
            t = g.nodes[rep.inputs[j]].type
            terms = []
            for nid, slot in zip(unit.ops, unit.slots, strict=True):
                op: Operand = module.unit_operands[nid][j]
                terms.append(f"({{{e}{{{phase} == {lit(slot, cw)}}}}} & {body.part(op, e - 1, 0)})")
            mux = body.wire(f"{unit.name}_in{j}", e, " | ".join(terms))
            w = t.flat_width
            if e < w:
                fill = f"{{{w - e}{{{mux}[{e - 1}]}}}}" if unit.in_signed[j] else lit(0, w - e)
                mux = body.wire(f"{unit.name}_x{j}", w, f"{{{fill}, {mux}}}")
            operands.append(Operand(mux, t))
        out = module.names.fresh(f"{unit.name}_out")
        lowering = LOWERINGS[rep.op]
        assert callable(lowering), rep.op
        lowering(body, out, rep, operands)
        body.lines += [f"assign {module.wire[nid]} = {out};" for nid in unit.ops]
    lines, body.lines = body.lines, saved
    return lines


__all__ = ["unit_lines"]
