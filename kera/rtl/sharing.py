"""The shared units of a schedule at ii > 1 (``Schedule.units``) as Verilog.

Each op a unit serves is declared as a wire in its own stage (its operands are collected there,
``_Module.unit_operands``); after the stages, each operand of the unit reads its sources
(``kera.hls.sharing.unit_sources``: ops whose operands are the same signal at every cycle have
one source). One source is that signal itself, no multiplexer; several are an AND-OR
multiplexer, one term per source selected by the modulo counter at its ops' slots (stage ``s``
runs at count ``s mod ii``), each cut to the significant bits and extended back to the operand
type. One lowering of the op computes the unit's output, and each op's wire is that output.
"""

from __future__ import annotations

from typing import Any

from kera.hls.sharing import unit_sources
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
        for j, row in enumerate(unit_sources(s, unit)):
            t = g.nodes[rep.inputs[j]].type
            groups: dict[int, list[int]] = {}
            for k, src in enumerate(row):
                groups.setdefault(src, []).append(k)
            ops = [module.unit_operands[nid][j] for nid in unit.ops]
            for k in range(len(ops)):
                if groups[row[k]][0] != k and ops[k].expr.isidentifier():
                    body.sink(ops[k].expr)  # the same signal as an earlier op's operand
            if len(groups) == 1:
                operands.append(ops[0])
                continue
            e = unit.in_widths[j]
            terms = []
            for members in groups.values():
                hit = " | ".join(f"({phase} == {lit(unit.slots[k], cw)})" for k in members)
                sel = f"({hit})" if len(members) > 1 else hit
                terms.append(f"({{{e}{{{sel}}}}} & {body.part(ops[members[0]], e - 1, 0)})")
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
