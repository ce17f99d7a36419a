"""Evaluate a loaded program on a named target: one JSON-ready result per input line."""

from __future__ import annotations

import json

from kera.diagnostics import KeraError
from kera.driver import Loaded

TARGETS = ("interp", "cpu", "wasm", "ptx", "rtl")


def run_target(
    target: str,
    loaded: Loaded,
    lines: list[str],
    where: str,
    *,
    board: str = "icebreaker",
    clock_mhz: float | None = None,
) -> list[object]:
    """Run ``loaded`` on ``target`` for each JSONL input line; return JSON-ready results.

    Every target but the interpreter lowers from the board's schedule (the same one `synthesize`
    and `sim` use), so `run --target cpu` evaluates exactly the association order the RTL does.
    """
    if target not in TARGETS:
        raise KeraError(f"unknown target `{target}`; targets: {', '.join(TARGETS)}", exit_code=2)
    if target == "interp":
        from kera.interp import run_jsonl

        return run_jsonl(loaded.graph, loaded.top, lines, where)
    from kera.flow import plan

    sched = plan(loaded.graph, loaded.top, board=board, clock_mhz=clock_mhz)
    if target == "rtl":
        from kera.ir import values
        from kera.sim import simulate

        params, _ = loaded.graph.signature(loaded.top)
        values.load_jsonl(lines, params, where)  # bad lines are reported with their location
        result = simulate(sched, [json.loads(line) for line in lines if line.strip()])
        if not result.passed:
            raise KeraError("RTL simulation disagrees with the report or the interpreter: "
                            + "; ".join(result.mismatches[:3]), exit_code=4)  # fmt: skip
        return result.outputs
    from kera.backends import run_jsonl as run_backend

    return run_backend(target, sched.graph, sched.region, lines, where, schedule=sched)
