"""Throughput of stateful kernels (STATE.md): transfers per second of the interpreter and of the
CPU golden model on one long stream, against a hand-written C loop with the same flags. JSON.

    python benchmarks/state.py [--samples N] [--interp-samples M] [--repeat K]

Kernels: a streaming 8-tap i16 FIR (its delay line a `reg` array) and a byte-stream CRC-32
(`reg crc: u32` with a `start` flag). ``kernel`` times the compiled loop on prepared buffers
(what the hand-written C is timed on); ``end_to_end`` includes marshalling values to containers
and back. The interpreter runs transfer by transfer, so it gets a shorter stream
(``interp_samples``); its outputs are checked against the CPU model's on that prefix, and the
hand-written C's against the CPU model's on the whole stream. The CPU model is timed twice:
lowered from the board's schedule (``board``, what `kera-hls run --target cpu` runs: the graph
lowered for hardware, e.g. constant XORs split into bit slices) and from the single-stage
schedule of the optimised graph (``single_stage``, as benchmarks/golden.py does).
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

from kera import _api  # noqa: E402
from kera.backends.cpu import compile_cpu  # noqa: E402
from kera.backends.cpu.build import FLAGS, ISA_FLAGS, compile_c, host_isa, load  # noqa: E402
from kera.backends.layout import call_buffers  # noqa: E402
from kera.hls.pipeline import Schedule, single_stage  # noqa: E402
from kera.interp import evaluate  # noqa: E402

FIR = """
const TAPS: [i16; 8] = [1, -2, 3, 4, 4, 3, -2, 1];
#[top]
pub fn fir(x: i16) -> i32 {
    reg line: [i16; 8] = [0; 8];
    for i in 0..7 { line[7 - i] = line[6 - i]; }
    line[0] = x;
    let mut acc = 0i32;
    for i in 0..8 { acc += (line[i] as i32) * (TAPS[i] as i32); }
    acc
}
"""

CRC = """
#[top]
pub fn crc(b: u8, start: bool) -> u32 {
    reg crc: u32 = 0xFFFFFFFF;
    let mut c = if start { 0xFFFFFFFFu32 } else { crc };
    c = c ^ (b as u32);
    for i in 0..8 {
        let m = 0u32 - (c & 1);
        c = (c >> 1) ^ (0xEDB88320u32 & m);
    }
    crc = c;
    c ^ 0xFFFFFFFF
}
"""

HAND = """
#include <stddef.h>
#include <stdint.h>
static const int32_t TAPS[8] = {1, -2, 3, 4, 4, 3, -2, 1};
__attribute__((visibility("default")))
void hand_fir(size_t n, const int16_t *restrict x, int32_t *restrict y) {
    int16_t line[8] = {0};
    for (size_t i = 0; i < n; ++i) {
        for (int k = 7; k > 0; --k) line[k] = line[k - 1];
        line[0] = x[i];
        int32_t acc = 0;
        for (int k = 0; k < 8; ++k) acc += (int32_t)line[k] * TAPS[k];
        y[i] = acc;
    }
}
__attribute__((visibility("default")))
void hand_crc(size_t n, const uint8_t *restrict b, const uint8_t *restrict start,
              uint32_t *restrict y) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) {
        uint32_t c = (start[i] ? 0xFFFFFFFFu : crc) ^ b[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        crc = c;
        y[i] = c ^ 0xFFFFFFFFu;
    }
}
"""


def best(fn: Callable[[], object], repeat: int) -> float:
    """Return the fastest of ``repeat`` timed calls, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def streams(samples: int) -> dict[str, dict[str, np.ndarray]]:
    """The seeded input streams: i16 samples for the FIR, bytes with rare starts for the CRC."""
    rng = np.random.default_rng(2026)
    start = rng.random(samples) < 1 / 4096
    start[0] = True
    return {"fir": {"x": rng.integers(-2**15, 2**15, samples).astype(np.int64)},
            "crc": {"b": rng.integers(0, 256, samples, dtype=np.uint64), "start": start}}


def hand_call(name: str, inputs: dict[str, np.ndarray], n: int) -> tuple[Callable, np.ndarray]:
    """Return a call of the hand-written loop on natural C types, and its output buffer."""
    lib = load(compile_c(HAND, host_isa()))
    ptr = ctypes.c_void_p
    if name == "fir":
        x = inputs["x"].astype(np.int16)
        y = np.zeros(n, dtype=np.int32)
        fir = (ctypes.c_size_t(n), ptr(x.ctypes.data), ptr(y.ctypes.data))
        return (lambda keep=(x, y): lib.hand_fir(*fir)), y  # keep the buffers alive
    b, s = inputs["b"].astype(np.uint8), inputs["start"].astype(np.uint8)
    y = np.zeros(n, dtype=np.uint32)
    args = (ctypes.c_size_t(n), ptr(b.ctypes.data), ptr(s.ctypes.data), ptr(y.ctypes.data))
    return (lambda keep=(b, s, y): lib.hand_crc(*args)), y


def measure(name: str, text: str, inputs: dict[str, np.ndarray], samples: int,
            interp_samples: int, repeat: int) -> dict[str, object]:
    """Time one kernel on the interpreter, the CPU model and the hand-written C."""
    loaded = _api.load(text=text, name=f"{name}.kera")
    sched = _api.plan(loaded)
    hand, hand_y = hand_call(name, inputs, samples)
    hand_s = best(hand, repeat)
    cpu = {}
    for label, schedule in (("board", sched), ("single_stage",
                                               single_stage(loaded.graph, loaded.top))):
        model_s, e2e_s, model_out = time_model(schedule, inputs, samples, repeat)
        assert np.array_equal(hand_y.astype(model_out.dtype), model_out), (name, label)
        cpu[label] = {"kernel_transfers_per_s": round(samples / model_s),
                      "end_to_end_transfers_per_s": round(samples / e2e_s),
                      "vs_hand_c": round(hand_s / model_s, 3)}
    head = {k: v[:interp_samples] for k, v in inputs.items()}
    t = time.perf_counter()
    interp_out = evaluate(sched.graph, sched.region, head, rows=interp_samples)
    interp_s = time.perf_counter() - t
    assert np.array_equal(np.asarray(interp_out), model_out[:interp_samples]), name
    return {
        "samples": samples,
        "interp_samples": interp_samples,
        "interp_transfers_per_s": round(interp_samples / interp_s, 1),
        "cpu": cpu,
        "hand_c_transfers_per_s": round(samples / hand_s),
        "goal_cpu_vs_hand_c": 0.5,
    }


def time_model(schedule: Schedule, inputs: dict[str, np.ndarray], samples: int,
               repeat: int) -> tuple[float, float, np.ndarray]:
    """Return the CPU model's kernel and end-to-end seconds, and its output stream."""
    kernel = compile_cpu(schedule)
    bufs = call_buffers(kernel.layout, inputs, samples)
    model_s = best(lambda: kernel.run_stream(bufs.all, samples), repeat)
    out = np.asarray(bufs.result())
    return model_s, best(lambda: kernel(inputs, samples), repeat), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--interp-samples", type=int, default=5_000,
                        help="the interpreter's shorter stream (it runs transfer by transfer)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    inputs = streams(args.samples)
    isa = host_isa()
    result: dict[str, object] = {
        "isa": isa,
        "flags": " ".join((*FLAGS, *ISA_FLAGS[isa])),
        "note": f"the interpreter runs transfer by transfer, so it is timed on the first "
                f"{args.interp_samples} samples of each stream, not {args.samples}",
    }
    for name, text in (("fir", FIR), ("crc", CRC)):
        result[name] = measure(name, text, inputs[name], args.samples,
                               min(args.interp_samples, args.samples), args.repeat)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
