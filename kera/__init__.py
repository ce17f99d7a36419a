"""kera-hls: the Kera language compiled to one fingerprinted graph for FPGA, CPU, WASM and PTX.

The public API (docs/api.md)::

    import kera

    core = kera.load("examples/fir8.kera")              # or kera.load(text=...), or a .keg
    syn = kera.synthesize(core, "icebreaker", outdir="build/fir8")
    sim = kera.simulate(core, [{"x": [1, 2, 3, 4, 5, 6, 7, 8]}])
    report = kera.parity(core, targets=["interp", "cpu"], vectors=1000)

Names are loaded on first use, so ``import kera`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    **dict.fromkeys(
        ["MIN_CLOCK_MHZ", "Compiled", "Loaded", "Report", "Simulation", "Synthesis",
         "check_clock", "check_output", "check_source", "compile", "load", "parity", "plan",
         "read_file", "run", "simulate", "synthesize"],
        "kera._api",
    ),
    **dict.fromkeys(
        ["Target", "get_target", "register_target", "registered_targets", "unregister_target"],
        "kera._targets",
    ),
    **dict.fromkeys(["ExitCode", "KeraError"], "kera.diagnostics"),
    **dict.fromkeys(["ParityReport"], "kera.sim.parity"),
    **dict.fromkeys(["board_run"], "kera.board.run"),
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module `kera` has no attribute `{name}`")
    return getattr(import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["MIN_CLOCK_MHZ", "Compiled", "ExitCode", "KeraError", "Loaded", "ParityReport",
           "Report", "Simulation", "Synthesis", "Target", "__version__", "board_run", "check_clock",
           "check_output", "check_source", "compile", "get_target", "load", "parity", "plan",
           "read_file", "register_target", "registered_targets", "run", "simulate", "synthesize",
           "unregister_target"]
