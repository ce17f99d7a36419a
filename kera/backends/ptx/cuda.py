"""Run PTX on a CUDA device through the driver API (``libcuda`` via ctypes), when there is one.

Without ``libcuda.so.1`` or a device every entry point reports the reason instead; nothing here
needs the CUDA toolkit or cuda-python. The driver JIT-compiles the PTX for the device it finds.
"""

from __future__ import annotations

import ctypes
import functools
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from kera.diagnostics import ExitCode, KeraError

THREADS = 256
_CC_MAJOR, _CC_MINOR = 75, 76  # CUdevice_attribute values


@functools.cache
def _driver() -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    vp, u64, u32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint
    lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(u64), ctypes.c_size_t]
    lib.cuMemFree_v2.argtypes = [u64]
    lib.cuMemcpyHtoD_v2.argtypes = [u64, vp, ctypes.c_size_t]
    lib.cuMemcpyDtoH_v2.argtypes = [vp, u64, ctypes.c_size_t]
    lib.cuModuleLoadDataEx.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p, u32,
                                       ctypes.POINTER(ctypes.c_int), ctypes.POINTER(vp)]
    lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
    lib.cuModuleUnload.argtypes = [vp]
    lib.cuLaunchKernel.argtypes = [vp, u32, u32, u32, u32, u32, u32, u32, vp,
                                   ctypes.POINTER(vp), ctypes.POINTER(vp)]
    lib.cuCtxSetCurrent.argtypes = [vp]
    lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(vp), ctypes.c_int]
    return lib


def device_reason() -> str | None:
    """Return None when a CUDA device can run PTX here, else why not ("no CUDA device ...")."""
    lib = _driver()
    if lib is None:
        return "no CUDA device (the CUDA driver, libcuda.so.1, is not installed)"
    rc = lib.cuInit(0)
    if rc != 0:
        return f"no CUDA device (cuInit failed with CUresult {rc})"
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return "no CUDA device (the driver reports none)"
    return None


def _check(rc: int, what: str, log: str = "") -> None:
    if rc == 0:
        return
    lib = _driver()
    name = ctypes.c_char_p()
    if lib is not None and lib.cuGetErrorName(rc, ctypes.byref(name)) == 0 and name.value:
        code = f"{name.value.decode()} ({rc})"
    else:
        code = f"CUresult {rc}"
    detail = f": {' '.join(log.split())}" if log.strip() else ""
    raise KeraError(f"CUDA driver call {what} failed with {code}{detail}",
                    exit_code=ExitCode.TOOL)


#: ``CUjit_option`` values: the JIT's error log buffer and its size.
_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 5, 6
_JIT_LOG_BYTES = 8192


def _load_module(lib: ctypes.CDLL, ptx: str) -> ctypes.c_void_p:
    """JIT-load ``ptx`` for the current context; a rejected module's error names the JIT's
    own message (``ptxas``'s line and complaint), not only the ``CUresult``."""
    module = ctypes.c_void_p()
    log = ctypes.create_string_buffer(_JIT_LOG_BYTES)
    options = (ctypes.c_int * 2)(_JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
    values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p),
                                   ctypes.c_void_p(_JIT_LOG_BYTES))
    rc = lib.cuModuleLoadDataEx(ctypes.byref(module), ptx.encode() + b"\0", 2, options, values)
    _check(rc, "cuModuleLoadDataEx", log.value.decode(errors="replace"))
    return module


#: Loaded modules by PTX text, least recently used first; at most ``_MAX_MODULES`` stay loaded.
_MODULES: OrderedDict[str, ctypes.c_void_p] = OrderedDict()
_MAX_MODULES = 32


def _module(lib: ctypes.CDLL, ptx: str) -> ctypes.c_void_p:
    """Return the loaded module of ``ptx``, JIT-compiling it on first use."""
    module = _MODULES.pop(ptx, None)
    if module is None:
        module = _load_module(lib, ptx)
        while len(_MODULES) >= _MAX_MODULES:
            lib.cuModuleUnload(_MODULES.popitem(last=False)[1])
    _MODULES[ptx] = module
    return module


@functools.cache
def _context() -> tuple[ctypes.c_void_p, str]:
    """Return the primary context of device 0 and the best PTX target for it."""
    reason = device_reason()
    if reason:
        raise KeraError(f"target `ptx` cannot run: {reason}", exit_code=ExitCode.TOOL)
    lib = _driver()
    assert lib is not None
    dev = ctypes.c_int(0)
    _check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    _check(lib.cuDeviceGetAttribute(ctypes.byref(major), _CC_MAJOR, dev), "cuDeviceGetAttribute")
    _check(lib.cuDeviceGetAttribute(ctypes.byref(minor), _CC_MINOR, dev), "cuDeviceGetAttribute")
    ctx = ctypes.c_void_p()
    _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev.value), "cuDevicePrimaryCtxRetain")
    cc = major.value * 10 + minor.value
    if cc < 80:
        raise KeraError(f"target `ptx` needs compute capability 8.0 or newer; device 0 has "
                        f"{major.value}.{minor.value}", exit_code=ExitCode.TOOL)
    return ctx, "sm_90" if cc >= 90 else "sm_80"


def device_arch() -> str:
    """Return the PTX target for device 0 (``sm_80`` or ``sm_90``)."""
    return _context()[1]


def launch(ptx: str, buffers: Sequence[np.ndarray], n_inputs: int, rows: int, *,
           state: Sequence[np.ndarray] = (), sequential: bool = False) -> None:
    """Run ``kera_run`` over ``rows`` rows: copy the inputs in, the result columns back out.

    ``state`` buffers follow the columns in the pointer table and are copied in; with
    ``sequential`` one thread runs (a stateful kernel loops over the rows itself)."""
    buffers = [*buffers, *state]
    copy_in = [*range(n_inputs), *range(len(buffers) - len(state), len(buffers))]
    n_out = len(buffers) - len(state)
    lib = _driver()
    ctx, _ = _context()
    assert lib is not None
    if rows == 0:
        return
    _check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    fn = ctypes.c_void_p()
    _check(lib.cuModuleGetFunction(ctypes.byref(fn), _module(lib, ptx), b"kera_run"),
           "cuModuleGetFunction")
    device: list[int] = []
    try:
        for buf in buffers:
            ptr = ctypes.c_uint64(0)
            _check(lib.cuMemAlloc_v2(ctypes.byref(ptr), max(8, buf.nbytes)), "cuMemAlloc")
            device.append(ptr.value)
        table = np.array(device + [0], dtype=np.uint64)
        tptr = ctypes.c_uint64(0)
        _check(lib.cuMemAlloc_v2(ctypes.byref(tptr), table.nbytes), "cuMemAlloc")
        device.append(tptr.value)
        _check(lib.cuMemcpyHtoD_v2(tptr.value, table.ctypes.data, table.nbytes), "cuMemcpyHtoD")
        for k in copy_in:
            buf = buffers[k]
            if buf.nbytes:
                _check(lib.cuMemcpyHtoD_v2(device[k], buf.ctypes.data, buf.nbytes),
                       "cuMemcpyHtoD")
        arg_table, arg_rows = ctypes.c_uint64(tptr.value), ctypes.c_uint32(rows)
        params = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(arg_table), ctypes.c_void_p),
                                       ctypes.cast(ctypes.byref(arg_rows), ctypes.c_void_p))
        threads = 1 if sequential else THREADS
        grid = 1 if sequential else -(-rows // THREADS)
        _check(lib.cuLaunchKernel(fn, grid, 1, 1, threads, 1, 1, 0, None, params, None),
               "cuLaunchKernel")
        _check(lib.cuCtxSynchronize(), "cuCtxSynchronize")
        for buf, ptr_value in zip(buffers[n_inputs:n_out], device[n_inputs:n_out],
                                  strict=False):
            if buf.nbytes:
                _check(lib.cuMemcpyDtoH_v2(buf.ctypes.data, ptr_value, buf.nbytes),
                       "cuMemcpyDtoH")
    finally:
        for ptr_value in device:
            lib.cuMemFree_v2(ptr_value)


__all__ = ["THREADS", "device_arch", "device_reason", "launch"]
