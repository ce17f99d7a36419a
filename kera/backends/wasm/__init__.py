"""The WebAssembly golden model: a module emitted from the schedule, run in wasmtime.

>>> kernel = compile_wasm(schedule)       # emit + compile (cached in-process and on disk)
>>> result = kernel(inputs)               # batched values in, batched values out

A stateful region's rows are one stream, in order, from the initial state (STATE.md): every
call resets the state first, and the state carries across the chunks of rows of one call.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from kera.backends.cache import cache_dir
from kera.backends.layout import call_buffers, region_layout
from kera.backends.lower import Table
from kera.backends.state import StatePlan, plan_state
from kera.backends.wasm.emit import ENTRY, WasmLayout, default_chunk, emit_wat, memory_layout
from kera.backends.wasm.ops import TABLE
from kera.diagnostics import ExitCode, KeraError
from kera.hls.pipeline import Schedule
from kera.ir.values import Value


def _wasmtime() -> Any:
    try:
        import wasmtime
    except ImportError:
        raise KeraError("target `wasm` needs wasmtime; hint: `pip install wasmtime` "
                        "(or `pip install -e .[tools]`)",
                        exit_code=ExitCode.TOOL) from None
    return wasmtime


def wasm_available() -> str | None:
    """Return None when the WASM target can run here, else the reason it cannot."""
    try:
        _wasmtime()
    except KeraError as e:
        return e.message
    return None


def _release() -> None:
    """Drop cached modules before interpreter shutdown (wasmtime cannot free them later)."""
    compile_module.cache_clear()
    engine.cache_clear()


#: WAT at least this long is compiled without Cranelift's optimiser, whose "speed" level is
#: superlinear in one huge function: AES-128's 12.4 MB of SIMD WAT took 236 s to compile at
#: "speed" and 7 s at "none" (2-core machine); a golden model that size runs a few vectors.
OPTIMISE_BELOW = 2_000_000


@functools.cache
def engine(optimise: bool = True) -> Any:
    """Return the process's wasmtime engine (SIMD128 on, relaxed-SIMD off; Cranelift's
    optimiser at "speed", or "none" for the big modules of ``OPTIMISE_BELOW``)."""
    wasmtime = _wasmtime()
    config = wasmtime.Config()
    config.wasm_simd = True
    config.wasm_relaxed_simd = False
    config.cranelift_opt_level = "speed" if optimise else "none"
    return wasmtime.Engine(config)


def engine_for(wat: str) -> Any:
    """The engine that compiles (and runs) ``wat``."""
    return engine(len(wat) < OPTIMISE_BELOW)


@functools.lru_cache(maxsize=256)
def compile_module(wat: str) -> Any:
    """Compile WAT text to a wasmtime ``Module``, reusing the serialized copy on disk."""
    wasmtime = _wasmtime()
    version = getattr(wasmtime, "__version__", "") or _dist_version()
    optimise = len(wat) < OPTIMISE_BELOW
    key = hashlib.sha256(f"{version}\0{optimise}\0{wat}".encode()).hexdigest()[:32]
    path = cache_dir("wasm") / f"{key}.cwasm"
    if path.exists():
        try:
            return wasmtime.Module.deserialize_file(engine_for(wat), str(path))
        except Exception:  # noqa: BLE001 (a stale or foreign artifact: compile again)
            pass
    module = wasmtime.Module(engine_for(wat), wat)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{id(module)}.tmp")
        tmp.write_bytes(module.serialize())
        tmp.replace(path)
    except OSError:
        pass  # the cache is an optimisation only
    return module


atexit.register(_release)


@functools.cache
def _dist_version() -> str:
    from importlib.metadata import version

    return version("wasmtime")


class WasmKernel:
    """A compiled region in its own wasmtime store; call it on batched inputs."""

    def __init__(self, wat: str, mem: WasmLayout, state: StatePlan | None = None) -> None:
        wasmtime = _wasmtime()
        self.wat = wat
        self.mem = mem
        self.state = state
        self.layout = mem.layout
        self.store = wasmtime.Store(engine_for(wat))
        instance = wasmtime.Instance(self.store, compile_module(wat), [])
        exports = instance.exports(self.store)
        self._run = exports[ENTRY]
        self._reset = exports["kera_reset"] if state is not None else None
        memory = exports["memory"]
        ptr = ctypes.cast(memory.data_ptr(self.store), ctypes.POINTER(ctypes.c_uint8))
        self._bytes = np.ctypeslib.as_array(ptr, shape=(memory.data_len(self.store),))
        self._columns = [
            self._bytes[start:start + mem.chunk * leaf.word // 8].view(leaf.dtype)
            for start, leaf in zip(mem.offsets, self.layout.buffers, strict=True)
        ]

    def column(self, buffer: int, rows: int) -> np.ndarray:
        """Return a view of buffer ``buffer``'s first ``rows`` rows in linear memory."""
        return self._columns[buffer][:rows]

    def __call__(self, inputs: Mapping[str, Value], rows: int | None = None) -> Value:
        """Evaluate the region on batched ``inputs``; every result leaf has the batch's rows."""
        bufs = call_buffers(self.layout, inputs, rows)
        n_in = len(bufs.inputs)
        self.reset()
        for start in range(0, bufs.rows, self.mem.chunk):
            n = min(self.mem.chunk, bufs.rows - start)
            for j, buf in enumerate(bufs.inputs):
                self.column(j, n)[:] = buf[start:start + n]
            self._run(self.store, n)
            for j, buf in enumerate(bufs.outputs):
                buf[start:start + n] = self.column(n_in + j, n)
        return bufs.result()

    def reset(self) -> None:
        """Return a stateful kernel's state to its initial value (no-op for a pure one)."""
        if self.state is None or self._reset is None:
            return
        self._reset(self.store)
        for at, words in zip(self.mem.state_offsets, self.state.memory_buffers(), strict=True):
            self._bytes[at:at + words.nbytes] = words.view(np.uint8)


def compile_wasm(schedule: Schedule, *, table: Table | None = None,
                 chunk: int | None = None) -> WasmKernel:
    """Emit ``schedule``'s region as WebAssembly and instantiate it."""
    layout = region_layout(schedule.graph, schedule.region)
    chunk = default_chunk(layout) if chunk is None else chunk
    plan = plan_state(schedule)
    return WasmKernel(emit_wat(schedule, table, chunk), memory_layout(layout, chunk, plan), plan)


def run_wasm(schedule: Schedule, inputs: Mapping[str, Value], *,
             rows: int | None = None) -> Value:
    """Evaluate ``schedule``'s region on batched ``inputs`` with the WASM backend."""
    return compile_wasm(schedule)(inputs, rows)


__all__ = ["TABLE", "WasmKernel", "compile_module", "compile_wasm", "emit_wat", "engine",
           "run_wasm", "wasm_available"]
