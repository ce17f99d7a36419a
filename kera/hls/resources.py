"""Resource estimate of a scheduled pipeline: LUT, FF, carry, DSP, BRAM, by op and in total.

* Operators: the family model's area for each node (``CostModel.area``), summed per opcode.
  Wiring (``cast``, ``slice``, ``concat``, ``tuple``, ...) costs nothing.
* Pipeline registers: every value a bank holds (``Schedule.crossing()``, the widths flattened)
  plus one valid bit per bank for the handshake, costed by the model's ``reg_cost``.
* BRAM: 0 (no memories yet).

Utilisation is each total divided by the board's capacity; a resource above 100 % gives a
warning (the design will not fit), and one above 80 % a softer one (routing gets hard).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kera.hls.pipeline import Schedule
from kera.hls.timing import AREA_KEYS, CostModel

#: Resource keys of an estimate, in report order.
RESOURCE_KEYS: tuple[str, ...] = ("lut", "ff", "carry", "dsp", "bram")
#: Resources with a board capacity.
CAPACITY_KEYS: tuple[str, ...] = ("lut", "ff", "dsp", "bram")
#: Above this utilisation a design is reported as hard to route.
TIGHT = 0.8


@dataclass(frozen=True)
class Resources:
    """An area estimate: totals, per-op breakdown, pipeline registers, utilisation, warnings."""

    total: dict[str, int]
    by_op: dict[str, dict[str, Any]]
    register_bits: int
    valid_bits: int
    registers: dict[str, int]
    utilisation: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def estimate(schedule: Schedule, costs: CostModel, capacities: Any = None) -> Resources:
    """Return the resource estimate of ``schedule``; ``capacities`` is the board's (optional).

    ``capacities`` may be a ``Capacities`` object or a mapping with ``lut``/``ff``/``dsp``/
    ``bram``.
    """
    graph = schedule.graph
    by_op: dict[str, dict[str, float]] = {}
    for nid in schedule.order:
        node = graph.nodes[nid]
        area = costs.area(graph, node)
        if not any(area.values()):
            continue
        row = by_op.setdefault(node.op, {"count": 0, **dict.fromkeys(AREA_KEYS, 0.0)})
        row["count"] += 1
        for k in AREA_KEYS:
            row[k] += area[k]
    banks = schedule.crossing()
    register_bits = sum(graph.nodes[n].type.flat_width for bank in banks for n in bank)
    valid_bits = schedule.latency
    regs = costs.register_area(register_bits + valid_bits)
    total = dict.fromkeys(RESOURCE_KEYS, 0.0)
    for row in by_op.values():
        for k in AREA_KEYS:
            total[k] += row[k]
    for k in AREA_KEYS:
        total[k] += regs.get(k, 0.0)
    totals = {k: int(round(v)) for k, v in total.items()}
    ops = {op: {"count": int(r["count"]), **{k: int(round(r[k])) for k in AREA_KEYS}}
           for op, r in sorted(by_op.items())}  # fmt: skip
    registers = {k: int(round(regs.get(k, 0.0))) for k in AREA_KEYS}
    util, warnings = utilisation(totals, capacities)
    return Resources(totals, ops, register_bits, valid_bits, registers, util, tuple(warnings))


def utilisation(totals: dict[str, int], capacities: Any) -> tuple[dict[str, float], list[str]]:
    """Return (used / capacity per resource, warnings) for a board's capacities.

    A resource the device does not have (capacity 0) has no ratio; using it is a warning.
    """
    if capacities is None:
        return {}, []
    caps = capacities if isinstance(capacities, dict) else {
        k: getattr(capacities, k) for k in CAPACITY_KEYS}  # fmt: skip
    util: dict[str, float] = {}
    warnings: list[str] = []
    for k in CAPACITY_KEYS:
        cap, used = int(caps.get(k, 0)), totals.get(k, 0)
        if cap <= 0:  # no such resource on the device: no ratio to give
            if used:
                warnings.append(f"the design needs {used} {k.upper()} but the device has none")
            continue
        util[k] = used / cap
        if used > cap:
            warnings.append(f"the design needs {used} {k.upper()} but the device has {cap} "
                            f"({util[k]:.0%}): it will not fit")  # fmt: skip
        elif util[k] > TIGHT:
            warnings.append(f"{k.upper()} use is {util[k]:.0%} of the device: placement and "
                            "routing may fail or miss the clock")  # fmt: skip
    return util, warnings


__all__ = ["CAPACITY_KEYS", "RESOURCE_KEYS", "Resources", "estimate", "utilisation"]
