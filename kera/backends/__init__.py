"""Golden models: the scheduled graph lowered to C (``cpu``), WebAssembly (``wasm``) and PTX.

Every backend lowers from one ``Schedule`` (``kera.hls.pipeline``), in ``schedule.order``, with
one table keyed by opcode (``TABLES``) and the shared scalar layout of ``kera.backends.layout``.
This module is the small front door the CLI uses::

    result = run("cpu", schedule, inputs)              # batched values in and out
    rows = run_jsonl("wasm", graph, "fir8", lines)     # one JSON-ready value per input line

Backend modules are imported lazily, so using ``cpu`` never imports wasmtime.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from kera.backends.lower import Table, Unsupported
from kera.diagnostics import ExitCode, KeraError
from kera.hls.pipeline import Schedule, single_stage
from kera.ir import values
from kera.ir.graph import Graph
from kera.ir.values import Value

BACKENDS = ("cpu", "wasm", "ptx")

Kernel = Callable[..., Value]  # kernel(inputs, rows=None) -> batched result


def _module(target: str):  # noqa: ANN202 (a module)
    if target not in BACKENDS:
        raise KeraError(f"unknown backend `{target}`; backends: {', '.join(BACKENDS)}",
                        exit_code=ExitCode.USAGE)  # fmt: skip
    return importlib.import_module(f"kera.backends.{target}")


def table(target: str) -> Table:
    """Return a backend's lowering table (one entry per opcode of the registry)."""
    return _module(target).TABLE


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
        from kera.backends.ptx import run_ptx

        return lambda inputs, rows=None: run_ptx(schedule, inputs, rows=rows)
    _module(target)
    raise AssertionError(target)


def run(target: str, schedule: Schedule, inputs: Mapping[str, Value],
        rows: int | None = None) -> Value:  # fmt: skip
    """Evaluate ``schedule``'s region on batched ``inputs`` with backend ``target``."""
    return compile_target(target, schedule)(inputs, rows)


def run_jsonl(
    target: str,
    graph: Graph,
    region: str,
    lines: str | Path | Iterable[str],
    name: str | None = None,
    schedule: Schedule | None = None,
) -> list[object]:
    """Evaluate a region on JSONL input lines with ``target``; one JSON value per line.

    The same contract as ``kera.interp.run_jsonl``; ``schedule`` defaults to the single-stage
    schedule (every backend gives the same bits for any valid schedule).
    """
    if region not in graph.regions:
        known = ", ".join(sorted(graph.regions)) or "none"
        raise KeraError(f"no function named `{region}` in the graph (have: {known})")
    reason = unavailable(target)
    if reason is not None:  # say so before reading a possibly long input file
        prefix = "" if reason.startswith("target") else f"target `{target}` cannot run here: "
        raise KeraError(prefix + reason, exit_code=ExitCode.TOOL)
    params, result_type = graph.signature(region)
    batch = values.load_jsonl(lines, params, name)
    if batch.rows == 0:
        return []
    kernel = compile_target(target, schedule or single_stage(graph, region))
    result = kernel(batch.inputs, batch.rows)
    return values.to_json_rows(result, result_type, batch.rows)


__all__ = ["BACKENDS", "Kernel", "Table", "Unsupported", "compile_target", "run", "run_jsonl",
           "table", "unavailable"]  # fmt: skip
