"""The cocotb testbench of a generated design: its description, and the standalone file.

The testbench itself is ``kera/sim/templates/kera_tb.py``: a plain cocotb 2 module (driver that
holds data until ``in_ready``, monitor, in-order scoreboard, cycle-exactness checks, seeded
random backpressure) that needs only cocotb. It learns the design from a small JSON description
(``design_info``): ports and their packing, latency, II and fingerprint. ``render_testbench``
embeds that description in a copy of the module, which ``kera-hls synthesize`` writes beside the
Verilog as ``<top>_tb.py``; the runner instead imports the module from the package and passes
the description through ``$KERA_SIM_DESIGN``.
"""

from __future__ import annotations

import json
from importlib import resources

from kera.hls.pipeline import Schedule
from kera.rtl.packing import layout

TEMPLATE_MODULE = "kera.sim.templates.kera_tb"
_MARKER = "DESIGN: dict | None = None  # @kera-design@"


def design_info(schedule: Schedule) -> dict:
    """Return the JSON-ready description of a scheduled design that the testbench reads."""
    graph = schedule.graph
    params, result = graph.signature(schedule.region)
    return {
        "top": schedule.region,
        "fingerprint": graph.fingerprint(),
        "latency": schedule.latency,
        "ii": schedule.ii,
        "aligned": schedule.aligned,
        "reset_cycles": schedule.state.reset_cycles if schedule.state is not None else 0,
        "clock_mhz": schedule.clock_mhz,
        "params": [{"name": n, "width": t.flat_width, "layout": layout(t)} for n, t in params],
        "result": layout(result),
        "out_width": result.flat_width,
    }


def template_source() -> str:
    """Return the text of the generic testbench module."""
    return resources.files("kera.sim.templates").joinpath("kera_tb.py").read_text("utf-8")


def render_testbench(schedule: Schedule) -> str:
    """Return a standalone cocotb testbench for ``schedule`` (deterministic text).

    Run it next to ``<top>.v`` with ``python <top>_tb.py VECTORS.jsonl [verilator|icarus]``, or
    name it in any cocotb flow as the test module with ``$KERA_SIM_VECTORS`` set.
    """
    text = template_source()
    if _MARKER not in text:
        raise RuntimeError("the testbench template lost its design marker")
    info = json.dumps(design_info(schedule), sort_keys=True, separators=(",", ":"))
    line = f"DESIGN: dict | None = json.loads({info!r})  # embedded by kera-hls"
    return text.replace(_MARKER, line, 1)


__all__ = ["TEMPLATE_MODULE", "design_info", "render_testbench", "template_source"]
