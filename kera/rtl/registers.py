"""Pipeline registers shared on the modulo circle (``Schedule.register_binding``) as Verilog.

With aligned starts each physical register of the binding (``kera.hls.regbind``) is declared
once, before the first bank; a bank's copy of a value is just that register's name. After the
stages, each register gets one ``always`` block: loaded when the pipeline moves (``en``) and the
modulo counter is at one of its copies' first residues, from that copy's source (the value's
wire, or the register of the bank before; copies whose wires are the same signal,
``kera.hls.regbind.Signals``, load from the first one's). One source is a plain enable;
several are a ``case`` on the counter. A shared unit's delay line (``Register.tap``) shifts at
every enabled cycle: tap 1 from the unit's output, tap ``k`` from tap ``k - 1``.
"""

from __future__ import annotations

from typing import Any

from kera.rtl.netlist import lit, rng


def bank_lines(module: Any, s: int) -> list[str]:
    """Name bank ``s``'s copies after their registers; declare every register at bank 0."""
    binding = module.s.register_binding
    if not module.fold_names:
        module.fold_names = [_name(module, r) for r in binding.registers]
    held = [n for n in module.banks[s]
            if module.g.nodes[n].type.flat_width > 0 and n not in module.unwired]
    for nid in held:
        module.bank_name[(s, nid)] = module.fold_names[binding.at[(s, nid)]]
    lines = ["", f"// ---- bank {s}: {len(held)} value{'s' * (len(held) != 1)} in shared "
             "registers + valid"]
    if s == 0:
        lines.append(f"// {len(binding.registers)} registers hold every bank's values "
                     f"({binding.bits} bits; a register per bank and value: "
                     f"{binding.plain_bits})")
        lines += [f"reg {rng(r.width)}{name};"
                  for r, name in zip(binding.registers, module.fold_names, strict=True)]
    return lines


def _name(module: Any, register: Any) -> str:
    if register.tap is not None:  # a shared unit's delay line
        unit, k = register.tap
        return str(module.names.fresh(f"{unit}_d{k}"))
    first = register.copies[0]
    node = module.g.nodes[first.nid]
    k = module.position[first.nid]
    base = str(node.attr("name")) if node.op == "param" else module.var.get(first.nid, f"n{k}")
    return str(module.names.fresh(f"r{first.first}_{base}"))


def load_lines(module: Any) -> list[str]:
    """Return the ``always`` blocks that load the shared registers."""
    binding = module.s.register_binding
    en, phase, ii = module.control.en, module.control.wait, module.s.ii
    cw = (ii - 1).bit_length()
    lines = ["", "// ---- shared registers: loaded at their copies' first residues"]
    line = {r.tap: name for r, name in zip(binding.registers, module.fold_names, strict=True)
            if r.tap is not None}
    out = {u.name: module.wire[u.ops[0]] for u in module.s.units if len(u.ops) > 1}
    for reg, name in zip(binding.registers, module.fold_names, strict=True):
        if reg.tap is not None:  # a delay line: every enabled cycle, from the tap before
            unit, k = reg.tap
            src = out[unit] if k == 1 else line[(unit, k - 1)]
            lines.append(f"always @(posedge clk) if ({en}) {name} <= {src};")
            continue
        loads: dict[str, list[int]] = {}
        exprs: dict[object, str] = {}  # a source's signal: the first copy's expression
        for c in reg.copies:
            made = module.s.stage[c.nid]
            if c.first == made:
                src = module.ref(c.nid, made).expr
            else:
                src = module.bank_name[(c.first - 1, c.nid)]
            first = exprs.setdefault(c.source, src)
            if first != src and src.isidentifier():
                module.body.sink(src)  # the same signal as ``first``
            loads.setdefault(first, []).append(c.first % ii)
        lines.append("always @(posedge clk) begin")
        if len(loads) == 1:
            (src, residues), = loads.items()
            hit = " | ".join(f"({phase} == {lit(r, cw)})" for r in residues)
            lines.append(f"    if ({en} & ({hit})) {name} <= {src};")
        else:
            lines.append(f"    if ({en}) begin")
            lines.append(f"        case ({phase})")
            for src, residues in loads.items():
                lines.append(f"            {', '.join(lit(r, cw) for r in residues)}: "
                             f"{name} <= {src};")
            lines.append("            default: ;")
            lines.append("        endcase")
            lines.append("    end")
        lines.append("end")
    return lines


__all__ = ["bank_lines", "load_lines"]
