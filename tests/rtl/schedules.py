"""Schedules for the RTL and simulation tests: trivial, hand-made multi-stage, and real.

``depth_schedule`` puts each node in a stage by its topological depth, so every value that
crosses stages is registered (the banks of ``Schedule.crossing()``) without needing the
scheduler. ``real_schedule`` uses ``kera.hls.schedule`` when it is there.
"""

from __future__ import annotations

from pathlib import Path

from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.hls.pipeline import Schedule, single_stage
from kera.ir.graph import Graph


def load(path: Path) -> tuple[Graph, str]:
    """Build a .kera file; return (graph, top)."""
    program = build_program(str(path), path.read_bytes())
    assert program.ok and program.graph is not None and program.top is not None, path
    return program.graph, program.top


def depth_schedule(graph: Graph, region: str, stages: int, ii: int = 1) -> Schedule:
    """Return a ``stages``-deep schedule: nodes spread over the stages by topological depth."""
    order = graph.topo_order(graph.regions[region])
    depth: dict[bytes, int] = {}
    for nid in order:
        node = graph.nodes[nid]
        ins = [depth[i] for i in node.inputs if graph.nodes[i].op != "const"]
        depth[nid] = 0 if node.op in ("param", "const") else 1 + max(ins, default=0)
    deepest = max(depth.values()) + 1
    stage = {nid: min(stages - 1, d * stages // deepest) for nid, d in depth.items()}
    users = graph.users()
    for nid in order:  # constants take the stage of their earliest user
        if graph.nodes[nid].op == "const":
            used = [stage[u] for u in users[nid] if u in stage]
            stage[nid] = min(used, default=0)
    position = {nid: k for k, nid in enumerate(order)}
    ordered = tuple(sorted(order, key=lambda n: (stage[n], position[n])))
    zero = dict.fromkeys(order, 0.0)
    return Schedule(graph, region, 12.0, ii, stages, stage, zero, dict(zero), ordered,
                    method="depth")


def real_schedule(graph: Graph, region: str, clock_mhz: float = 40.0) -> Schedule | None:
    """Return the real scheduler's schedule for iCE40 at ``clock_mhz``, or None without it.

    The graph is lowered for hardware first (``div``/``rem`` become adder networks), as
    ``synthesize`` does; the emitter's own ``div``/``rem`` lowering is tested by the others.
    """
    try:
        from kera.hls.lower import lower_for_hardware
        from kera.hls.schedule import schedule
    except ImportError:
        return None
    try:  # the flow of `synthesize`: division networks first, then the SDC schedule
        return schedule(lower_for_hardware(graph), region, family="ice40", clock_mhz=clock_mhz)
    except KeraError:  # e.g. no delay model fitted for the family yet
        return None


def schedules(graph: Graph, region: str) -> dict[str, Schedule]:
    """Return the schedules every kernel is tested with, by name."""
    out = {"single": single_stage(graph, region), "depth3": depth_schedule(graph, region, 3),
           "depth4ii2": depth_schedule(graph, region, 4, ii=2)}
    real = real_schedule(graph, region)
    if real is not None:
        out["sdc"] = real
    return out
