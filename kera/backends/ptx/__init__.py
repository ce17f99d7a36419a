"""The PTX golden model: PTX text emitted from the schedule, one thread per row.

``emit_ptx`` always works; ``assemble`` needs ``ptxas`` (CUDA toolkit); ``run_ptx`` needs a CUDA
device and its driver, and otherwise raises ``KeraError`` with exit code 3 ("no CUDA device").
A stateful region runs as one sequential thread over its rows, in order (``ptx.stream``).
"""

from __future__ import annotations

from collections.abc import Mapping

from kera.backends.layout import call_buffers, region_layout
from kera.backends.ptx.assemble import assemble, find_ptxas
from kera.backends.ptx.cuda import device_arch, device_reason, launch
from kera.backends.ptx.emit import ARCHES, PTX_VERSION, emit_ptx
from kera.backends.ptx.ops import TABLE
from kera.backends.state import plan_state
from kera.diagnostics import ExitCode, KeraError
from kera.hls.pipeline import Schedule
from kera.ir.values import Value


def ptx_available() -> str | None:
    """Return None when PTX can run here, else the reason (e.g. "no CUDA device ...")."""
    return device_reason()


class PtxKernel:
    """``schedule``'s region as PTX for the device found here: call it like the other
    backends' kernels, ``kernel(inputs, rows=None) -> result``. The text is emitted once and
    the driver's module is loaded once per process (``cuda.launch`` keeps it)."""

    def __init__(self, schedule: Schedule) -> None:
        reason = device_reason()
        if reason:
            raise KeraError(f"target `ptx` cannot run here: {reason}", exit_code=ExitCode.TOOL)
        self.layout = region_layout(schedule.graph, schedule.region)
        self.plan = plan_state(schedule)
        self.ptx = emit_ptx(schedule, device_arch())

    def __call__(self, inputs: Mapping[str, Value], rows: int | None = None) -> Value:
        bufs = call_buffers(self.layout, inputs, rows)
        state = self.plan.memory_buffers() if self.plan is not None else []  # fresh each call
        launch(self.ptx, bufs.all, len(bufs.inputs), bufs.rows, state=state,
               sequential=self.plan is not None)
        return bufs.result()


def compile_ptx(schedule: Schedule) -> PtxKernel:
    """Return the PTX kernel of ``schedule``; ``KeraError`` exit code 3 without a CUDA device."""
    return PtxKernel(schedule)


def run_ptx(schedule: Schedule, inputs: Mapping[str, Value], *,
            rows: int | None = None) -> Value:
    """Evaluate ``schedule``'s region on batched ``inputs`` on the CUDA device.

    Raises ``KeraError`` with exit code 3 when there is no CUDA device.
    """
    return compile_ptx(schedule)(inputs, rows)


__all__ = ["ARCHES", "PTX_VERSION", "TABLE", "PtxKernel", "assemble", "compile_ptx", "emit_ptx",
           "find_ptxas", "ptx_available", "run_ptx"]
