"""The CPU golden model: C emitted from the schedule, compiled by the system compiler, called
through ctypes on struct-of-arrays numpy buffers.

>>> kernel = compile_cpu(schedule)        # emit + compile (cached by fingerprint)
>>> result = kernel(inputs)               # batched values in, batched values out

A stateful region's rows are one stream, in order, from the initial state (STATE.md): every
call starts from the initial state (``kera.backends.state``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kera.backends.cpu.build import compile_c, host_isa, load
from kera.backends.cpu.emit import BLOCK, ENTRY, emit_c
from kera.backends.cpu.ops import TABLE
from kera.backends.layout import Layout, call_buffers, region_layout
from kera.backends.lower import Table
from kera.backends.state import StatePlan, plan_state
from kera.hls.pipeline import Schedule
from kera.ir.values import Value


@dataclass(frozen=True)
class CpuKernel:
    """A compiled region: call it on batched inputs to get the batched result."""

    layout: Layout
    source: str
    path: Path
    isa: str
    state: StatePlan | None = None

    def __call__(self, inputs: Mapping[str, Value], rows: int | None = None) -> Value:
        """Evaluate the region on batched ``inputs``; every result leaf has the batch's rows.

        A stateful region runs the rows as one stream from the initial state."""
        if self.state is not None:
            bufs = call_buffers(self.layout, inputs, rows)
            self.run_stream(bufs.all, bufs.rows)
            return bufs.result()
        bufs = call_buffers(self.layout, inputs, rows, BLOCK)
        self.run_buffers(bufs.all, -(-bufs.rows // BLOCK))
        return bufs.result()

    def run_buffers(self, buffers: list[np.ndarray], blocks: int) -> None:
        """Run the raw kernel on prepared container buffers of ``blocks * 16`` rows."""
        if blocks == 0:
            return
        fn = getattr(load(self.path), ENTRY)
        array = (ctypes.c_void_p * max(1, len(buffers)))(*[b.ctypes.data for b in buffers])
        fn(ctypes.c_size_t(blocks), array)

    def run_stream(self, buffers: list[np.ndarray], rows: int) -> None:
        """Run a stateful kernel on ``rows`` rows of prepared buffers, from the initial state."""
        assert self.state is not None
        if rows == 0:
            return
        state = [self.state.regs_buffer(), *self.state.memory_buffers()]
        every = [*buffers, *state]
        fn = getattr(load(self.path), ENTRY)
        array = (ctypes.c_void_p * len(every))(*[b.ctypes.data for b in every])
        fn(ctypes.c_size_t(rows), array)


def compile_cpu(schedule: Schedule, *, isa: str | None = None,
                table: Table | None = None) -> CpuKernel:
    """Emit and compile ``schedule``'s region (cached by the C text's hash)."""
    source = emit_c(schedule, table)
    isa = isa or host_isa()
    path = compile_c(source, isa)
    load(path).kera_run.restype = None
    return CpuKernel(region_layout(schedule.graph, schedule.region), source, path, isa,
                     plan_state(schedule))


def run_cpu(schedule: Schedule, inputs: Mapping[str, Value], *, rows: int | None = None,
            isa: str | None = None) -> Value:
    """Evaluate ``schedule``'s region on batched ``inputs`` with the CPU backend."""
    return compile_cpu(schedule, isa=isa)(inputs, rows)


__all__ = ["TABLE", "CpuKernel", "compile_cpu", "emit_c", "host_isa", "run_cpu"]
