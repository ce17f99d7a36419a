"""Stateful kernels on the golden models (STATE.md): the rows of a call are one stream, in order.

Every kernel runs on the CPU and WASM models (and PTX, assembled; run where there is a device)
against the interpreter on a stream of more than 10k transfers, and some against independent
Python models (zlib for the CRC): a reg delay line, a CRC, a histogram in a `mem`, a `mem` read
after writes in the same transfer, a stateful call in an untaken branch, several instances of
one stateful function, a swap of two states, a big `reg` array and a `mem` of tuples.
"""

from __future__ import annotations

import functools
import zlib

import numpy as np
import pytest

from kera import _api
from kera.backends import unavailable
from kera.backends.cpu import compile_cpu
from kera.backends.ptx import ARCHES, assemble, emit_ptx, find_ptxas
from kera.backends.state import plan_state
from kera.backends.wasm import compile_wasm
from kera.backends.wasm.emit import emit_wat
from kera.backends.wasm.simd import NotVectorisable
from kera.hls.pipeline import Schedule
from kera.interp import evaluate
from kera.ir.values import Value
from kera.sim.parity import run_parity

KERNELS = {
    "fir": """
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
""",
    "crc": """
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
""",
    "hist": """
#[top]
pub fn hist(bin: u8, clear: bool) -> u16 {
    mem counts: [u16; 256] = [0; 256];
    let c = if clear { 0u16 } else { counts[bin] + 1 };
    counts[bin] = c;
    c
}
""",
    "raw": """
#[top]
pub fn raw(a: u4, b: u4, v: u8, w: bool) -> (u8, u8, u8) {
    mem m: [u8; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    let before = m[b];
    m[a] = v;
    let mid = m[b];
    if w { m[b] = mid + v; m[3] = v ^ 0x5a; }
    (before, mid, m[a])
}
""",
    "branch": """
fn acc(x: i32) -> i32 {
    reg s: i32 = 7;
    s = s + x;
    s
}
#[top]
pub fn branch(x: i32, c: bool) -> i32 {
    if c { acc(x) } else { 0 - x }
}
""",
    "instances": """
fn acc(x: i16) -> i16 {
    reg s: i16 = 0;
    s = s + x;
    s
}
#[top]
pub fn instances(x: [i16; 3]) -> [i16; 4] {
    let mut y = [0i16; 4];
    for c in 0..3 { y[c] = acc(x[c]); }
    y[3] = acc(x[0] ^ x[1]);
    y
}
""",
    "swap": """
#[top]
pub fn swap(x: u64, t: bool) -> (u64, i40, bool) {
    reg a: u64 = 1;
    reg b: i40 = -1;
    reg f: bool = false;
    let old = a;
    if t { a = b as u64; b = old as i40; } else { a = a + x; }
    f = f != t;
    (a, b, f)
}
""",
    "bigreg": """
#[top]
pub fn bigreg(i: u6, v: u32, j: u6) -> u32 {
    reg r: [u32; 40] = [3; 40];
    let old = r[j];
    r[i] = v + old;
    r[j] ^ old
}
""",
    "wide": """
#[top]
pub fn wide(i: u8, v: u64, w: bool) -> (u64, u64) {
    mem m: [(u64, u8); 16] = [(0, 0); 16];
    let old = m[i];
    if w { m[i] = (v, old.1 + 1); }
    (old.0, m[i].0)
}
""",
}

CPU = unavailable("cpu") is None
WASM = unavailable("wasm") is None
needs_cpu = pytest.mark.skipif(not CPU, reason="no C compiler")
needs_wasm = pytest.mark.skipif(not WASM, reason="no wasmtime")


@functools.cache
def schedule_of(name: str) -> Schedule:
    """The board schedule of one inline kernel (the one `run` and `parity` use)."""
    return _api.plan(_api.load(text=KERNELS[name], name=f"{name}.kera"))


def targets() -> list[str]:
    return [t for t, ok in (("cpu", CPU), ("wasm", WASM)) if ok] + ["ptx"]


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_target_gives_the_interpreters_stream(name: str) -> None:
    sched = schedule_of(name)
    report = run_parity(sched.graph, sched.region, targets=targets(), vectors=10_000, seed=3,
                        schedule=sched)
    assert report.stream and report.vectors >= 10_000
    for r in report.results:
        if r.target == "ptx":
            want = ("ok", "assembled-not-run") if find_ptxas() else ("ok", "unavailable")
            assert r.status in want, report.table()
        else:
            assert (r.status, r.mismatches, r.vectors) == ("ok", 0, report.vectors), \
                report.table()


def _run(target: str, name: str, inputs: dict[str, Value], rows: int) -> Value:
    sched = schedule_of(name)
    if target == "interp":
        return evaluate(sched.graph, sched.region, inputs, rows=rows)
    kernel = compile_cpu(sched) if target == "cpu" else compile_wasm(sched)
    return kernel(inputs, rows)


MODELS = ["interp"] + [t for t, ok in (("cpu", CPU), ("wasm", WASM)) if ok]


@pytest.mark.parametrize("target", MODELS)
def test_crc_is_zlibs_over_segments(target: str) -> None:
    rng = np.random.default_rng(7)
    n = 600 if target == "interp" else 200_000
    data = rng.integers(0, 256, n, dtype=np.uint64)
    start = rng.random(n) < 0.002
    start[0] = True
    got = _run(target, "crc", {"b": data, "start": start}, n)
    expected, crc = [], 0
    raw = data.astype(np.uint8).tobytes()
    for i in range(n):
        crc = zlib.crc32(raw[i:i + 1], 0 if start[i] else crc)
        expected.append(crc)
    assert np.array_equal(np.asarray(got, dtype=np.uint64), np.array(expected, dtype=np.uint64))


@pytest.mark.parametrize("target", MODELS)
def test_an_untaken_stateful_call_keeps_its_state(target: str) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(-1000, 1000, 3000).astype(np.int64)
    c = rng.random(3000) < 0.3
    got = np.asarray(_run(target, "branch", {"x": x, "c": c}, 3000))
    s, want = 7, []
    for xi, ci in zip(x.tolist(), c.tolist(), strict=True):
        if ci:
            s = (s + xi + 2**31) % 2**32 - 2**31
        want.append(s if ci else -xi)
    assert got.tolist() == want


@pytest.mark.parametrize("target", MODELS)
def test_every_call_site_is_its_own_instance(target: str) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(-2**15, 2**15, (3, 2000)).astype(np.int64)
    got = _run(target, "instances", {"x": [x[0], x[1], x[2]]}, 2000)
    wrap = lambda v: (v + 2**15) % 2**16 - 2**15  # noqa: E731
    s = [0, 0, 0, 0]
    for i in range(2000):
        ins = [int(x[0, i]), int(x[1, i]), int(x[2, i]), int(x[0, i]) ^ int(x[1, i])]
        s = [wrap(a + b) for a, b in zip(s, ins, strict=True)]
        assert [int(np.asarray(got[k])[i]) for k in range(4)] == s


@pytest.mark.parametrize("target", MODELS)
def test_a_mem_read_after_writes_in_one_transfer(target: str) -> None:
    rng = np.random.default_rng(4)
    n = 4000
    cols = {"a": rng.integers(0, 16, n, dtype=np.uint64), "b": rng.integers(0, 16, n,
            dtype=np.uint64), "v": rng.integers(0, 256, n, dtype=np.uint64),
            "w": rng.random(n) < 0.5}
    got = _run(target, "raw", cols, n)
    m = list(range(1, 13))

    def rd(i: int) -> int:
        return m[min(i, 11)]

    def wr(i: int, v: int) -> None:
        if i < 12:
            m[i] = v & 0xFF

    for i in range(n):
        a, b, v, w = (int(cols["a"][i]), int(cols["b"][i]), int(cols["v"][i]),
                      bool(cols["w"][i]))
        before = rd(b)
        wr(a, v)
        mid = rd(b)
        if w:
            wr(b, mid + v)
            wr(3, v ^ 0x5A)
        assert [int(np.asarray(got[k])[i]) for k in range(3)] == [before, mid, rd(a)], i


@needs_cpu
@needs_wasm
def test_each_call_starts_from_the_initial_state_and_chunks_carry_it() -> None:
    sched = schedule_of("hist")
    rng = np.random.default_rng(5)
    inputs = {"bin": rng.integers(0, 8, 5000, dtype=np.uint64), "clear": rng.random(5000) < 0.01}
    cpu = compile_cpu(sched)
    first = np.asarray(cpu(inputs, 5000))
    assert np.array_equal(first, np.asarray(cpu(inputs, 5000)))
    assert int(first.max()) > 100  # the counts really did persist across transfers
    small = compile_wasm(sched, chunk=8)  # 625 calls of kera_run: the state crosses them
    assert np.array_equal(first, np.asarray(small(inputs, 5000)))
    assert np.array_equal(first, np.asarray(small(inputs, 5000)))


def test_a_mem_is_updated_in_place() -> None:
    sched = schedule_of("hist")
    plan = plan_state(sched)
    assert plan is not None and [s.in_place for s in plan.slots] == [True]
    assert plan.memory_buffers()[0].shape == (257,)  # 256 words and the scratch word
    from kera.backends.cpu.emit import emit_c

    body = emit_c(sched).split("for (size_t i = 0; i < rows; ++i) {")[1]
    assert body.count("\n") < 40 and "m0[" in body  # no 256-way select chain, no copy
    fir = plan_state(schedule_of("fir"))
    assert fir is not None and [s.in_place for s in fir.slots] == [False]  # 8 regs


def test_a_stateful_wasm_module_is_scalar() -> None:
    sched = schedule_of("fir")
    text = emit_wat(sched)
    assert "v128" not in text and "kera_reset" in text and "(global $g7 (mut i32)" in text
    with pytest.raises(NotVectorisable):
        emit_wat(sched, simd_lanes=True)


@pytest.mark.skipif(find_ptxas() is None, reason="no ptxas")
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_stateful_ptx_kernel_is_one_thread_and_assembles(name: str) -> None:
    for arch in ARCHES:
        text = emit_ptx(schedule_of(name), arch)
        assert "$L_row:" in text and "bra.uni $L_row;" in text and "%ctaid.x" in text
        assert assemble(text, arch)[:4] == b"\x7fELF"
