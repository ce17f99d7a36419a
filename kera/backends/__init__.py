"""Golden models: the scheduled graph lowered to C (``cpu``), WebAssembly (``wasm``) and PTX.

Every backend lowers from one ``Schedule`` (``kera.hls.pipeline``), in ``schedule.order``, with
one table keyed by opcode (its ``TABLE``) and the shared scalar layout of ``kera.backends.layout``.
This module is the small front door the target registry (``kera._targets``) uses::

    result = run("cpu", schedule, inputs)              # batched values in and out

Backend modules are imported lazily, so using ``cpu`` never imports wasmtime.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

from kera.backends.lower import Table
from kera.diagnostics import ExitCode, KeraError
from kera.hls.pipeline import Schedule
from kera.ir.values import Value

BACKENDS = ("cpu", "wasm", "ptx")

Kernel = Callable[..., Value]  # kernel(inputs, rows=None) -> batched result


def _module(target: str):  # noqa: ANN202 (a module)
    if target not in BACKENDS:
        raise KeraError(f"unknown backend `{target}`; backends: {', '.join(BACKENDS)}",
                        exit_code=ExitCode.USAGE)
    return importlib.import_module(f"kera.backends.{target}")


def unavailable(target: str) -> str | None:
    """Return None when ``target`` can run here, else the one-line reason."""
    if target == "cpu":
        from kera.backends.cpu.build import find_compiler

        try:
            find_compiler()
        except KeraError as e:
            return e.message
        return None
    if target == "wasm":
        from kera.backends.wasm import wasm_available

        return wasm_available()
    if target == "ptx":
        from kera.backends.ptx import ptx_available

        return ptx_available()
    _module(target)
    return None


def compile_target(target: str, schedule: Schedule) -> Kernel:
    """Return a callable ``kernel(inputs, rows=None) -> result`` for ``target``.

    Raises ``KeraError`` with exit code 3 when the target's tool or device is missing.
    """
    if target == "cpu":
        from kera.backends.cpu import compile_cpu

        return compile_cpu(schedule)
    if target == "wasm":
        from kera.backends.wasm import compile_wasm

        return compile_wasm(schedule)
    if target == "ptx":
        from kera.backends.ptx import compile_ptx

        return compile_ptx(schedule)
    _module(target)
    raise AssertionError(target)


def run(target: str, schedule: Schedule, inputs: Mapping[str, Value],
        rows: int | None = None) -> Value:
    """Evaluate ``schedule``'s region on batched ``inputs`` with backend ``target``."""
    return compile_target(target, schedule)(inputs, rows)


__all__ = ["BACKENDS", "Kernel", "Table", "compile_target", "run", "unavailable"]
