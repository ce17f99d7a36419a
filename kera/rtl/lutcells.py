"""A stage's bitwise logic written as the LUT cells of its cover (``kera.hls.lutcover``).

Each run of covered nodes that follow one another in a stage is one ``ifdef SYNTHESIS``
block: for synthesis the LUTs its output nodes need that no earlier run wrote (one cell each,
``INIT`` its truth table, unused pins tied to 0) and each output node's wire assembled from
them, from the cover's leaf bits and from constants; for simulation the ops as they are. A
LUT reads leaf bits (ops before the run, registers, ports) and earlier LUTs, so every name is
declared before it is read.
"""

from __future__ import annotations

from typing import Any

from kera.hls.lutcover import LUT_CELLS, K, Source, StageCover
from kera.rtl.netlist import rng


def cover_run(em: Any, run: list[bytes], s: int) -> None:
    """Emit the covered nodes ``run`` of stage ``s`` (emitter ``em``, ``kera.rtl.emit``)."""
    cover: StageCover = em.covers[run[0]]
    b = em.body
    sinks = set(b.sinks)
    behavioural = em._lowered(tuple(run), s)
    local = [w for w in b.sinks if w not in sinks]  # wires of the simulation branch alone
    for w in local:
        del b.sinks[w]
    if local:
        behavioural.append(f"wire {em.names.fresh(em.wire[run[-1]] + '_unused')} = "
                           f"&{{1'b0, {', '.join(local)}, 1'b0}};")
    cell, param, pins, out = LUT_CELLS[em.s.family]
    outputs = dict(cover.outputs)
    names: dict[tuple[int, int], str] = em.lut_names
    lines: list[str] = []

    def expr(src: Source) -> str:
        kind, k = src
        if kind == "lut":
            return names[(cover.stage, k)]
        if kind == "leaf":
            u, i, _ = cover.leaves[k]
            return str(b.bit(em.ref(u, s), i, whole_used=True))
        return f"1'b{kind}"

    for nid in run:
        sources = outputs.get(nid)
        if sources is None:
            continue
        for k in _needed(cover, sources, names):
            lut = cover.luts[k]
            name = names[(cover.stage, k)] = em.names.fresh(f"{em.wire[lut.owner]}_lut")
            ins = ["1'b0"] * K  # the unused pins tied 0
            for j, i in enumerate(lut.inputs):
                ins[lut.pin_of(j)] = expr(("lut", i) if i >= 0 else ("leaf", ~i))
            conns = ", ".join(f".{p}({x})" for p, x in zip(pins, ins, strict=True))
            lines += [f"wire {name};",
                      f"{cell} #(.{param}(16'h{lut.init:04X})) {name}_i ({conns}, .{out}({name}));"]
        bits = [expr(src) for src in sources]
        value = bits[0] if len(bits) == 1 else "{" + ", ".join(reversed(bits)) + "}"
        lines.append(f"wire {rng(len(bits))}{em.wire[nid]} = {value};")
    b.lines += [f"// {len(run)} bitwise operation{'s' * (len(run) != 1)} as {cell} cells "
                "(kera.hls.lutcover)", "`ifdef SYNTHESIS", *lines, "`else", *behavioural,
                "`endif"]


def _needed(cover: StageCover, sources: tuple[Source, ...],
            written: dict[tuple[int, int], str]) -> list[int]:
    """Return the LUTs ``sources`` read, directly or through other LUTs, that are not written
    yet, in the cover's (topological) order."""
    out: set[int] = set()
    stack = [k for kind, k in sources if kind == "lut"]
    while stack:
        k = stack.pop()
        if k in out or (cover.stage, k) in written:
            continue
        out.add(k)
        stack.extend(i for i in cover.luts[k].inputs if i >= 0)
    return sorted(out)


__all__ = ["cover_run"]
