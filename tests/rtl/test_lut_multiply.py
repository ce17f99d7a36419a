"""Multiplies beyond the board's DSPs are emitted as shift-and-add, so yosys cannot take a DSP."""

from __future__ import annotations

from pathlib import Path

from kera import _api, load
from kera.hls.report import build_report
from kera.hls.synth import plan_schedule
from kera.rtl import emit_verilog
from kera.rtl.lower import lut_multiplies
from tests.conftest import needs_verilator

#: 14 products (10 of i16, 4 of u8 held in u32): six more multiplies than a UP5K's 8 SB_MAC16.
DOT = """#[top]
pub fn dot(a: [i16; 10], b: [i16; 10], c: [u8; 4], d: [u8; 4]) -> (i32, u32) {
    let mut s = 0i32;
    for i in 0..10 {
        s += (a[i] as i32) * (b[i] as i32);
    }
    let mut u = 0u32;
    for i in 0..4 {
        u += (c[i] as u32) * (d[i] as u32);
    }
    (s, u)
}
"""


def _design(tmp_path: Path):  # noqa: ANN202
    src = tmp_path / "dot.kera"
    src.write_text(DOT, encoding="utf-8")
    return load(src)


def test_only_the_budgeted_multiplies_are_left_to_yosys(tmp_path: Path) -> None:
    loaded = _design(tmp_path)
    s, board, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker")
    muls = [n for n in s.graph.nodes.values() if n.op == "mul"]
    assert len(muls) == 14
    lut = lut_multiplies(s, "icebreaker")
    assert len(lut) == 6 and set(lut) <= {n.id for n in muls}
    assert {how[2] for how in lut.values()} == {False, True}  # unsigned and sign-extended ones
    assert build_report(s, board, model=model, top=loaded.top)["estimate"]["dsp"] == 8
    verilog = emit_verilog(s, board="icebreaker", version="test")
    assert verilog.count(" * ") == 8
    assert lut_multiplies(s, "ulx3s") == {}  # 156 DSPs: every multiply on one
    assert emit_verilog(s, board="ulx3s", version="test").count(" * ") == 14


@needs_verilator
def test_shift_and_add_multiplies_are_exact_in_simulation(tmp_path: Path) -> None:
    loaded = _design(tmp_path)
    edges16 = [0, 1, -1, 32767, -32768, 12345, -321]
    edges8 = [0, 1, 255, 128, 77]
    rows = []
    for k in range(12):
        a = [edges16[(k + i) % 7] for i in range(10)]
        b = [edges16[(3 * k + 2 * i + 1) % 7] for i in range(10)]
        c = [edges8[(k + i) % 5] for i in range(4)]
        d = [edges8[(2 * k + i + 3) % 5] for i in range(4)]
        rows.append({"a": a, "b": b, "c": c, "d": d})
    sim = _api.simulate(loaded, rows, board="icebreaker")
    assert sim.passed and sim.result.latency_observed == sim.schedule.latency

    def wrap(v: int) -> int:
        return (v + 2**31) % 2**32 - 2**31

    want = [[wrap(sum(x * y for x, y in zip(r["a"], r["b"], strict=True))),
             sum(x * y for x, y in zip(r["c"], r["d"], strict=True))] for r in rows]
    assert [list(o) for o in sim.outputs] == want
