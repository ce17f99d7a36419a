"""Throughput of the golden models: vectors per second on interp, cpu, wasm and (on a CUDA
device) ptx, and the CPU backend against a hand-written C FIR compiled with the same flags.
Prints JSON.

    python benchmarks/golden.py [--rows N] [--repeat K]

``end_to_end`` includes marshalling batched values to containers and back; ``kernel`` times
only the compiled loop on prepared buffers (what the hand-written C is timed on). ``ptx`` is end
to end too (host copies both ways and the launch; ``ptx_jit_s`` is the first call, which
JIT-compiles the module).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kera.backends import unavailable  # noqa: E402
from kera.backends.cpu import compile_cpu  # noqa: E402
from kera.backends.cpu.build import compile_c, host_isa, load  # noqa: E402
from kera.backends.cpu.emit import BLOCK  # noqa: E402
from kera.backends.layout import call_buffers  # noqa: E402
from kera.elaborate import build_program  # noqa: E402
from kera.hls.pipeline import single_stage  # noqa: E402
from kera.interp import evaluate  # noqa: E402
from kera.ir.graph import Graph, Region, const, param  # noqa: E402
from kera.ir.types import ArrayType, uint  # noqa: E402
from kera.sim.parity import random_vectors  # noqa: E402

HAND_FIR8 = """
#include <stddef.h>
#include <stdint.h>
static const int32_t TAPS[8] = {1, -2, 3, 4, 4, 3, -2, 1};
void fir8_ref(size_t n, const int16_t (*restrict x)[8], int32_t *restrict out) {
    for (size_t i = 0; i < n; i++) {
        int32_t acc = 0;
        for (int k = 0; k < 8; k++) acc += (int32_t)x[i][k] * TAPS[k];
        out[i] = acc;
    }
}
"""


def best(fn: Callable[[], object], repeat: int) -> float:
    """Return the fastest of ``repeat`` timed calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def arx(rounds: int = 64) -> tuple[Graph, str]:
    """Return a large generated program: ``rounds`` add-rotate-xor rounds over 8 u32 words."""
    g, t = Graph(), uint(32)
    x = param(g, 0, "x", ArrayType(t, 8))
    s = [g.add("array_index", t, [x, const(g, t, i)]) for i in range(8)]
    for r in range(rounds):
        for i in range(8):
            a = g.add("add", t, [s[i], s[(i + 1) % 8]])
            a = g.add("rotl", t, [a, const(g, t, (7 * r + i) % 32)])
            s[i] = g.add("xor", t, [a, const(g, t, (0x9E3779B9 * (8 * r + i + 1)) % 2**32)])
    g.add_region(Region("arx", (x,), g.add("array", ArrayType(t, 8), s)))
    return g, "arx"


def kernel_file(name: str) -> tuple[Graph, str]:
    """Build a shared kernel (or the example of that name)."""
    for folder in (ROOT.parent / "shared" / "kernels", ROOT / "examples"):
        path = folder / f"{name}.kera"
        if path.exists():
            program = build_program(str(path), path.read_bytes())
            assert program.ok and program.graph is not None and program.top is not None
            return program.graph, program.top
    raise FileNotFoundError(name)


def measure(graph: Graph, top: str, rows: int, repeat: int) -> dict:
    """Return vectors/s per target for one program."""
    params, _ = graph.signature(top)
    inputs = random_vectors(params, rows, seed=1).inputs
    schedule = single_stage(graph, top)
    out: dict = {"nodes": len(schedule.order), "rows": rows}
    out["interp"] = rows / best(lambda: evaluate(graph, top, inputs, rows=rows), repeat)
    if not unavailable("cpu"):
        start = time.perf_counter()
        kernel = compile_cpu(schedule)
        out["cpu_compile_s"] = round(time.perf_counter() - start, 3)
        out["cpu"] = rows / best(lambda: kernel(inputs, rows), repeat)
        bufs = call_buffers(kernel.layout, inputs, rows, BLOCK).all
        blocks = len(bufs[0]) // BLOCK
        out["cpu_kernel"] = rows / best(lambda: kernel.run_buffers(bufs, blocks), repeat)
    if not unavailable("wasm"):
        from kera.backends.wasm import compile_wasm

        start = time.perf_counter()
        wkernel = compile_wasm(schedule)
        out["wasm_compile_s"] = round(time.perf_counter() - start, 3)
        out["wasm"] = rows / best(lambda: wkernel(inputs, rows), repeat)
    if not unavailable("ptx"):
        from kera.backends.ptx import compile_ptx

        start = time.perf_counter()
        pkernel = compile_ptx(schedule)
        pkernel(inputs, rows)
        out["ptx_jit_s"] = round(time.perf_counter() - start, 3)
        out["ptx"] = rows / best(lambda: pkernel(inputs, rows), repeat)
    return {k: round(v) if isinstance(v, float) and v > 100 else v for k, v in out.items()}


def hand_fir8(rows: int, repeat: int) -> float:
    """Return vectors/s of the hand-written C FIR (array-of-structs int16 input)."""
    lib = load(compile_c(HAND_FIR8, host_isa()))
    x = np.random.default_rng(1).integers(-32768, 32768, size=(rows, 8), dtype=np.int16)
    y = np.zeros(rows, dtype=np.int32)
    fn = lib.fir8_ref
    fn.argtypes = [ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]
    return rows / best(lambda: fn(rows, x.ctypes.data, y.ctypes.data), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    programs = {"fir8": kernel_file("fir8"), "popcount32": kernel_file("popcount32"),
                "arx64": arx(64)}
    result: dict = {"isa": host_isa(), "unit": "vectors/s", "programs": {}}
    for name, (graph, top) in programs.items():
        rows = args.rows if name != "arx64" else max(1, args.rows // 10)
        result["programs"][name] = measure(graph, top, rows, args.repeat)
    if not unavailable("cpu"):
        hand = hand_fir8(args.rows, args.repeat)
        fir = result["programs"]["fir8"]
        result["hand_written_fir8"] = {
            "vectors_per_s": round(hand),
            "cpu_kernel_ratio": round(fir["cpu_kernel"] / hand, 3),
            "cpu_end_to_end_ratio": round(fir["cpu"] / hand, 3),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
