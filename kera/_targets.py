"""The one target registry: every place a program can run (`run`, `parity` and the API use it).

A ``Target`` is a name, an availability check (None when it can run here, else a one-line
reason: `run` turns it into exit 3) and a run function ``run(schedule, inputs, rows)`` that
evaluates the schedule's region on batched inputs (``kera.ir.values``) and returns the batched
result, or, with ``json_rows``, one JSON value per row. ``scheduled`` targets lower from the
board's schedule (the one `synthesize` and `sim` use); the interpreter does not need one.
``default`` targets are the ones ``kera.sim.parity.run_parity`` compares when none are named
(the RTL is a simulation: it runs when asked, and `kera-hls parity` asks for every target).

Backend modules are imported lazily, so checking the registry never imports wasmtime.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from kera.diagnostics import ExitCode, KeraError

if TYPE_CHECKING:
    from kera.hls.pipeline import Schedule
    from kera.ir.values import Value

RunFn = Callable[["Schedule", "Mapping[str, Value]", int], object]
AvailableFn = Callable[[], "str | None"]
BuildFn = Callable[["Schedule"], None]


@dataclass(frozen=True)
class Target:
    """A place a program runs: how to run it, whether it can run here, a build-only check."""

    name: str
    run: RunFn  # (schedule, batched inputs, rows) -> batched result (or JSON rows)
    available: AvailableFn = lambda: None  # None when it can run here, else why not
    build: BuildFn | None = None  # when it cannot run: compile/assemble only (parity)
    json_rows: bool = False  # ``run`` returns one JSON value per row instead of a batch
    scheduled: bool = True  # lowers from the board's schedule (else any schedule will do)
    default: bool = True  # compared by ``run_parity`` when no targets are named
    description: str = ""


_REGISTRY: dict[str, Target] = {}


def register_target(
    name: str,
    fn: RunFn,
    available_fn: AvailableFn | None = None,
    *,
    build: BuildFn | None = None,
    json_rows: bool = False,
    scheduled: bool = True,
    default: bool = True,
    description: str = "",
) -> Target:
    """Register (or replace) a target; return it.

    ``fn(schedule, inputs, rows)`` evaluates the schedule's region on batched inputs and
    returns the batched result (or, with ``json_rows``, a list of JSON values, one per row).
    ``available_fn()`` returns None when the target can run here, else a one-line reason.
    ``build(schedule)``, when given, is run by parity instead when the target cannot run
    (status ``assembled-not-run``), so the lowering is still checked.
    """
    target = Target(name, fn, available_fn or (lambda: None), build, json_rows, scheduled,
                    default, description)
    _REGISTRY[name] = target
    return target


def unregister_target(name: str) -> None:
    """Remove a registered target (no error when absent)."""
    _REGISTRY.pop(name, None)


def registered_targets() -> list[str]:
    """Return the names of the registered targets, in registration order."""
    return list(_REGISTRY)


def get_target(name: str, *, simulator: str | None = None) -> Target:
    """Return the target named ``name`` (exit 2 naming the known ones when there is none).

    ``simulator`` picks the simulator of the ``rtl`` target (default: Verilator).
    """
    target = _REGISTRY.get(name)
    if target is None:
        raise KeraError(f"unknown target `{name}`; targets: {', '.join(_REGISTRY)}",
                        exit_code=ExitCode.USAGE)
    if name == "rtl" and simulator is not None and simulator != "verilator":
        return replace(target, run=_run_rtl(simulator), available=_rtl_unavailable(simulator))
    return target


def require(target: Target) -> None:
    """Raise ``KeraError`` (exit 3) with the reason when ``target`` cannot run here."""
    reason = target.available()
    if reason is not None:
        prefix = "" if reason.startswith("target") else f"target `{target.name}` cannot run here: "
        raise KeraError(prefix + reason, exit_code=ExitCode.TOOL)


# ----------------------------------------------------------------------------- the built-ins


def _interp(schedule: Schedule, inputs: Mapping[str, Value], rows: int) -> Value:
    from kera.interp import evaluate

    return evaluate(schedule.graph, schedule.region, inputs, rows=rows)


def _backend(name: str) -> tuple[RunFn, AvailableFn]:
    def run(schedule: Schedule, inputs: Mapping[str, Value], rows: int) -> Value:
        from kera.backends import compile_target

        return compile_target(name, schedule)(inputs, rows)

    def available() -> str | None:
        from kera.backends import unavailable

        return unavailable(name)

    return run, available


def _assemble_ptx(schedule: Schedule) -> None:
    from kera.backends.ptx import ARCHES, assemble, emit_ptx

    for arch in ARCHES:
        assemble(emit_ptx(schedule, arch), arch)


def _run_rtl(simulator: str) -> RunFn:
    def run(schedule: Schedule, inputs: Mapping[str, Value], rows: int) -> list[object]:
        from kera.sim import simulate

        result = simulate(schedule, inputs, simulator=simulator)
        if not result.passed:
            raise KeraError("RTL simulation disagrees with the report or the interpreter: "
                            + "; ".join(result.mismatches[:3]),
                            exit_code=ExitCode.CHECK)
        return result.outputs

    return run


def _rtl_unavailable(simulator: str) -> AvailableFn:
    def available() -> str | None:
        from kera.sim.runner import check_tools

        try:
            check_tools(simulator)
        except KeraError as e:
            return e.message
        return None

    return available


register_target("interp", _interp, scheduled=False, description="the reference interpreter")
register_target("cpu", *_backend("cpu"), description="C through the system compiler")
register_target("wasm", *_backend("wasm"), description="WebAssembly through wasmtime")
register_target("ptx", *_backend("ptx"), build=_assemble_ptx,
                description="PTX on a CUDA device (assembled only without one)")
register_target("rtl", _run_rtl("verilator"), _rtl_unavailable("verilator"), json_rows=True,
                default=False, description="the generated Verilog, simulated with cocotb")

__all__ = ["Target", "get_target", "register_target", "registered_targets", "require",
           "unregister_target"]
