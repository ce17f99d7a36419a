"""Cycle-accurate simulation of the generated RTL with cocotb (Verilator, or Icarus).

``simulate`` runs a scheduled design's Verilog on input rows and checks every result and its
timing against the reference interpreter; ``render_testbench`` gives the standalone cocotb
testbench that ``kera-hls synthesize`` writes beside the Verilog.

The names are loaded on first use: the testbench module (``kera.sim.templates.kera_tb``) runs
inside the simulator, and importing this package there must stay cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "SIMULATORS": "kera.sim.runner",
    "SimResult": "kera.sim.runner",
    "check_tools": "kera.sim.runner",
    "simulate": "kera.sim.runner",
    "design_info": "kera.sim.testbench",
    "render_testbench": "kera.sim.testbench",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module `kera.sim` has no attribute `{name}`")
    return getattr(import_module(module), name)


__all__ = ["SIMULATORS", "SimResult", "check_tools", "design_info", "render_testbench", "simulate"]
