"""The back half of the flow as the CLI uses it: plan a schedule, emit files, register targets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kera.hls.pipeline import Schedule
from kera.ir.graph import Graph


def plan(graph: Graph, top: str, *, board: str = "icebreaker", clock_mhz: float | None = None,
         ii: int | None = None) -> Schedule:  # fmt: skip
    """Lower ``top`` for hardware and schedule it for ``board`` (the schedule every target uses).

    ``ii`` defaults to the graph's `#[pipeline(ii = N)]` directive.
    """
    from kera.hls.synth import plan_schedule

    return plan_schedule(graph, top, board=board, clock_mhz=clock_mhz, ii=ii)[0]


def rtl_emitter(source_name: str | None):
    """Return a ``synthesize`` emitter writing ``<top>.v`` and the cocotb ``<top>_tb.py``."""

    def emit(result: Any, out: Path) -> dict[str, Path]:
        import kera
        from kera.rtl import emit_verilog
        from kera.sim import render_testbench

        sched = result.schedule
        verilog = emit_verilog(sched, board=result.board.name, version=kera.__version__,
                               source_name=source_name)  # fmt: skip
        paths = {"verilog": out / f"{sched.region}.v", "testbench": out / f"{sched.region}_tb.py"}
        paths["verilog"].write_text(verilog, encoding="utf-8")
        paths["testbench"].write_text(render_testbench(sched), encoding="utf-8")
        return paths

    return emit


def register_rtl_target(simulator: str = "verilator") -> None:
    """Make the generated Verilog (simulated with cocotb) a parity target named `rtl`."""
    from kera.sim import parity

    def run(schedule: Schedule, inputs: dict, rows: int) -> list:
        from kera.diagnostics import KeraError
        from kera.sim import simulate

        result = simulate(schedule, inputs, simulator=simulator)
        if result.timing_errors:
            raise KeraError("cycle-exactness failed: " + "; ".join(result.timing_errors[:3]),
                            exit_code=4)  # fmt: skip
        return result.outputs

    def available() -> str | None:
        from kera.diagnostics import KeraError
        from kera.sim.runner import check_tools

        try:
            check_tools(simulator)
        except KeraError as e:
            return e.message
        return None

    parity.register_target("rtl", run, available, json_rows=True)
