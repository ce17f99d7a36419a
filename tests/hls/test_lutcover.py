"""A stage's bitwise logic covered by LUT4s for area (``kera.hls.lutcover``): the and-inverter
graph's truth tables, the cover of popcount64's byte counts, the emitted cells against the ops
they replace (yosys SAT), the estimate and the timing that see them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kera import load
from kera.hls.lutcover import Aig, cover_of
from kera.hls.resources import estimate, network_sites
from kera.hls.sta import analyse_bits, design_size
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog
from tests.conftest import ROOT
from tests.hls.test_muxpair import YOSYS, _equivalent, needs_yosys

SHARED = ROOT.parent / "shared" / "kernels"
POPCOUNT = SHARED / "peers" / "popcount64.kera"
KERNELS = ROOT / "tests" / "opt" / "kernels"


def _plan(path: Path, board: str, clock: float | None) -> tuple:
    loaded = load(str(path))
    return plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock)


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 99), st.integers(0, 99),
                          st.integers(0, 99)), min_size=1, max_size=12))
def test_the_truth_table_of_a_random_graph_is_its_function(
        steps: list[tuple[int, int, int, int]]) -> None:
    """Each and/or/xor/mux/complement built from four leaves has the truth table of the
    same operations on the leaves' 16-row tables."""
    full = 0xFFFF
    aig = Aig()
    lits = [aig.leaf((b"x", i, False)) for i in range(4)]
    tables = [0xAAAA, 0xCCCC, 0xF0F0, 0xFF00]  # pin i's rows
    for op, i, j, k in steps:
        a, b, c = lits[i % len(lits)], lits[j % len(lits)], lits[k % len(lits)]
        ta, tb, tc = tables[i % len(lits)], tables[j % len(lits)], tables[k % len(lits)]
        if op == 0:
            lits.append(aig.and_(a, b))
            tables.append(ta & tb)
        elif op == 1:
            lits.append(aig.or_(a, b))
            tables.append(ta | tb)
        elif op == 2:
            lits.append(aig.xor(a, b))
            tables.append(ta ^ tb)
        elif op == 3:
            lits.append(aig.mux(c, a, b))
            tables.append((tc & ta) | (~tc & full & tb))
        else:
            lits.append(a ^ 1)
            tables.append(ta ^ full)
    leaves = [aig.leaf_var[(b"x", i, False)] for i in range(4)]
    last, want = lits[-1], tables[-1]
    if last < 2:  # simplified to a constant
        assert want == (full if last else 0)
    elif aig.fanin[last >> 1] is None:  # a leaf or its complement
        assert want == [0xAAAA, 0xCCCC, 0xF0F0, 0xFF00][leaves.index(last >> 1)] ^ (
            full if last & 1 else 0)
    else:
        assert aig.truth(last >> 1, leaves, set()) ^ (full if last & 1 else 0) == want


def test_a_negated_input_reads_the_complement() -> None:
    aig = Aig()
    a, b = aig.leaf((b"x", 0, False)), aig.leaf((b"x", 1, False))
    y = aig.and_(a, b)
    va, vb = a >> 1, b >> 1
    assert aig.truth(y >> 1, [va, vb], set()) == 0x8888
    assert aig.truth(y >> 1, [va, vb], {va}) == 0x4444  # pin A gives ~a: a = ~A


@given(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True),
       st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=4, max_size=4))
def test_the_latest_input_takes_the_fastest_pin(cut: list[int], arrivals: list[float]) -> None:
    """iCE40's SB_LUT4 pins (I0 1.284 .. I3 0.874 ns): a LUT of ``len(cut)`` inputs uses the
    fastest pins, the later input the faster pin (ties by signal), and its output arrives
    when its slowest input has crossed its pin."""
    from kera.hls.lutcover import _pins

    pin_ns = (1.284, 1.231, 1.205, 0.874)
    at = dict(enumerate(arrivals))
    ins, pins, out = _pins(sorted(cut), at, pin_ns, 0.5)
    assert sorted(ins) == sorted(cut) and len(set(pins)) == len(cut)
    assert sorted(pins) == list(range(4 - len(cut), 4))  # I3 first, then I2, ...
    assert [(at[c], c) for c in ins] == sorted((at[c], c) for c in cut)
    assert list(pins) == sorted(pins, key=lambda p: -pin_ns[p])
    assert out == max(at[c] + pin_ns[p] for c, p in zip(ins, pins, strict=True)) + 0.5


@given(st.permutations([0, 1, 2, 3]), st.integers(0, 0xFFFF))
def test_a_truth_table_follows_its_pins(pins: list[int], seed: int) -> None:
    """The table of a function of four leaves with the leaves on other pins is the same
    function: row r reads leaf j from bit ``pins[j]`` of r."""
    aig = Aig()
    leaves = [aig.leaf((b"n", i, False)) for i in range(4)]
    f = aig.xor(aig.and_(leaves[0], leaves[1] ^ (seed & 1)), aig.or_(leaves[2], leaves[3]))
    table = aig.truth(f >> 1, [x >> 1 for x in leaves], set(), pins) ^ (0xFFFF if f & 1 else 0)
    for row in range(16):
        v = [row >> pins[j] & 1 for j in range(4)]
        want = (v[0] & (v[1] ^ (seed & 1))) ^ (v[2] | v[3])
        assert table >> row & 1 == want


def test_popcount64_byte_counts_are_eleven_luts_a_byte() -> None:
    """At 150 MHz on ECP5 the first stage (eight byte counts) is covered: two nibble counts
    of 3 LUTs and a 3 + 3-bit sum of 5 (bit 0, bit 1, its carry, bits 2 and 3), 88 LUT4s
    where the estimate's abc9-like mapping gives 130; the estimate is the cover's plus the
    sums' carry cells."""
    s, board, model = _plan(POPCOUNT, "ulx3s", 150.0)
    (c,) = s.covers
    assert c.stage == 0 and len(c.luts) == 88
    assert all(0 <= lut.init <= 0xFFFF and 1 <= len(lut.inputs) <= 4 for lut in c.luts)
    costs = CostModel(model, board.capacities.dsp)
    assert sum(network_sites(s, costs)[n] for n in c.nodes) == 88
    res = estimate(s, costs, board.capacities)
    assert res.total["lut"] == 88 + 2 * 22 + 2 and res.total["carry"] == 22
    bits = analyse_bits(s, costs, design_size(s, costs))
    assert bits is not None
    usable = 1000.0 / 150.0 * (1 - (s.margin or 0.0)) - costs.overhead_ns
    assert 0 < bits.stage_delays[0] <= usable


def test_a_cover_needs_a_saving() -> None:
    """No stage is covered where the cover saves less than a tenth of the estimate's LUTs:
    popcount64 on iCE40 (abc9's four-input mapping of it is about as small), a stage whose
    logic is wiring (bitrev32)."""
    s, _, _ = _plan(POPCOUNT, "icebreaker", 55.0)
    assert s.covers == ()
    assert "LUT4 #" not in emit_verilog(s, board="icebreaker", version="test")
    s, _, _ = _plan(KERNELS / "bitrev32.kera", "ulx3s", None)
    assert s.covers == ()


@needs_yosys
@pytest.mark.parametrize(("path", "clock_mhz"), [(POPCOUNT, 150.0), (POPCOUNT, None)])
def test_the_cells_compute_the_ops(tmp_path: Path, path: Path,
                                   clock_mhz: float | None) -> None:
    s, _, _ = _plan(path, "ulx3s", clock_mhz)
    assert s.covers
    verilog = emit_verilog(s, board="ulx3s", version="test")
    assert verilog.count("LUT4 #") == sum(len(c.luts) for c in s.covers)
    _equivalent(tmp_path, verilog, "popcount64")


ECP5, ICE40 = "ulx3s", "icebreaker"


@needs_yosys
@pytest.mark.parametrize(("name", "board", "clock_mhz"), [
    ("gray", ECP5, None), ("popcount32", ECP5, 150.0), ("crc8", ECP5, None),
    ("gf_mul", ECP5, None), ("lfsr16", ECP5, None),
    ("edge_semantics", ECP5, None), ("edge_semantics", ECP5, 150.0),
    ("crc16_byte", ECP5, None), ("from_gray32", ECP5, None), ("lfsr32x8", ECP5, 150.0),
    ("crc64_word", ECP5, 150.0), ("gray", ICE40, None), ("clz64", ICE40, None),
    ("clz64", ICE40, 55.0), ("ctz32", ICE40, None), ("ctz32", ICE40, 55.0),
    ("eq64", ICE40, None)])
def test_every_covered_design_computes_its_ops(tmp_path: Path, name: str, board: str,
                                               clock_mhz: float | None) -> None:
    """The covers of the QoR set's designs (crc32_word's and secded72's too, but their
    proofs, of xor networks rebuilt with their shared xors, run for minutes: they are checked
    by simulation in ``test_xorshare``) and of the held-out ones (``benchmarks/heldout``),
    ECP5's LUT4 and iCE40's SB_LUT4."""
    path = next(p for p in (ROOT / "examples" / f"{name}.kera", KERNELS / f"{name}.kera",
                            SHARED / f"{name}.kera", ROOT / "benchmarks" / "heldout" /
                            f"{name}.kera") if p.exists())
    s, _, _ = _plan(path, board, clock_mhz)
    assert s.covers
    verilog = emit_verilog(s, board=board, version="test")
    assert ("SB_LUT4 #" in verilog) == (board == ICE40)
    _equivalent(tmp_path, verilog, name)


@needs_yosys
def test_a_wrong_truth_table_is_caught(tmp_path: Path) -> None:
    """The proof is not vacuous: one LUT's table with a row flipped fails it."""
    s, _, _ = _plan(POPCOUNT, "ulx3s", 150.0)
    verilog = emit_verilog(s, board="ulx3s", version="test")
    line = next(x for x in verilog.splitlines() if "LUT4 #(.INIT(16'h" in x)
    init = int(line.split("16'h")[1][:4], 16)
    bad = line.replace(f"16'h{init:04X}", f"16'h{init ^ 1:04X}")
    with pytest.raises(AssertionError):
        _equivalent(tmp_path, verilog.replace(line, bad), "popcount64")


@needs_yosys
def test_yosys_keeps_the_cells(tmp_path: Path) -> None:
    """synth_ecp5 keeps every LUT4 the cover writes: popcount64 at 150 MHz is 88 of them
    and the handshake's, beside the sums' 22 CCU2C (placed: 90 LUT4, 22 CCU2C)."""
    s, _, _ = _plan(POPCOUNT, "ulx3s", 150.0)
    (tmp_path / "top.v").write_text(emit_verilog(s, board="ulx3s", version="test"))
    run = subprocess.run([YOSYS, "-q", "-p", "read_verilog top.v; synth_ecp5 -top popcount64; "
                          "tee -o stat.txt stat"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    stat = (tmp_path / "stat.txt").read_text()
    cells = {p[1]: int(p[0]) for p in (ln.split() for ln in stat.splitlines())
             if len(p) == 2 and p[0].isdigit()}
    assert cells["CCU2C"] == 22
    assert 88 <= cells["LUT4"] <= 92


@needs_yosys
def test_lfsr16_at_the_board_clock_is_what_yosys_keeps(tmp_path: Path) -> None:
    """At 25 MHz lfsr16's one stage is covered for area: the estimate's LUT4 sites are the
    LUT4 cells synth_ecp5 leaves (abc9's mapping of the same ops: 472 placed)."""
    s, board, model = _plan(SHARED / "lfsr16.kera", "ulx3s", None)
    assert s.covers
    res = estimate(s, CostModel(model), board.capacities)
    (tmp_path / "top.v").write_text(emit_verilog(s, board="ulx3s", version="test"))
    run = subprocess.run([YOSYS, "-q", "-p", "read_verilog top.v; synth_ecp5 -top lfsr16; "
                          "tee -o stat.txt stat"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    lut4 = next(int(p[0]) for p in (ln.split() for ln in (tmp_path / "stat.txt").read_text()
                                   .splitlines()) if len(p) == 2 and p[1] == "LUT4")
    assert abs(lut4 - res.total["lut"]) <= 0.03 * lut4, (lut4, res.total["lut"])


def test_the_cover_is_deterministic() -> None:
    a, _, _ = _plan(POPCOUNT, "ulx3s", 150.0)
    b, _, _ = _plan(POPCOUNT, "ulx3s", 150.0)
    assert a.covers == b.covers
    assert set(cover_of(a)) == set(a.covers[0].nodes)



def test_a_stage_of_the_same_graph_takes_the_cover_found_for_it() -> None:
    """XTEA at 150 MHz: its even stages are the same half-round on other values, so their
    and-inverter graphs are equal; the later ones take the first's cuts from the memo, and
    each cover is the one it finds alone (cells, truth tables, outputs); an odd stage (the
    other half-round) is a graph of its own."""
    from kera.hls import lutcover
    from kera.hls.sta import lut_delays, net_delay

    s, _, model = _plan(ROOT / "examples" / "xtea.kera", "ulx3s", 150.0)
    costs = CostModel(model)
    size = design_size(s, costs)
    args = (lut_delays(costs)[3], net_delay(costs, size)(2), lutcover._arrivals(s, costs),
            net_delay(costs, size)(1))
    stages = lutcover.coverable(s)
    alone = {k: lutcover.cover_stage(s, k, stages[k], 5.0, *args) for k in (2, 4, 3)}
    memo: lutcover.CoverMemo = {}
    shared = {}
    for k, entries in ((2, 1), (4, 1), (3, 2)):
        shared[k] = lutcover.cover_stage(s, k, stages[k], 5.0, *args, memo=memo)
        assert len(memo) == entries
    assert shared == alone
    assert alone[2] is not None and alone[4] is not None
    assert alone[2].nodes != alone[4].nodes
    assert [(c.inputs, c.init) for c in alone[2].luts] == [(c.inputs, c.init)
                                                          for c in alone[4].luts]


def test_ice40_cells_leave_the_slow_pins_free() -> None:
    """iCE40: a cover's cell of fewer than four inputs ties its slowest pins (I0 first), never
    I3, the fast one; ECP5's pins are alike, so its cells keep input j on pin j."""
    s, _, _ = _plan(KERNELS / "clz64.kera", ICE40, None)
    verilog = emit_verilog(s, board=ICE40, version="test")
    assert verilog.count("SB_LUT4 #") == sum(len(c.luts) for c in s.covers)
    assert ".I3(1'b0)" not in verilog and ".I0(1'b0)" in verilog
    assert all(lut.pins for c in s.covers for lut in c.luts if len(lut.inputs) > 1)
    e, _, _ = _plan(POPCOUNT, ECP5, 150.0)
    assert not any(lut.pins for c in e.covers for lut in c.luts)


@needs_yosys
def test_an_ii_above_1_without_units_is_covered_as_at_ii_1(tmp_path: Path) -> None:
    """popcount64 at II 8 shares no operator: its datapath is II 1's, and so are its cells
    (placed at II 8 on ECP5 at 25 MHz before the covers: 202 LUT sites, estimated 174); the
    II counter's 3 bits add 7 LUTs (``handshake_luts``)."""
    text = POPCOUNT.read_text().replace("#[top]\n", "#[top]\n#[pipeline(ii = 8)]\n", 1)
    loaded = load(text=text)
    s = plan_schedule(loaded.graph, loaded.top, board=ECP5, clock_mhz=150.0)[0]
    one, board, model = _plan(POPCOUNT, ECP5, 150.0)
    assert s.ii == 8 and not s.bound() and s.covers
    costs = CostModel(model, board.capacities.dsp)
    assert estimate(s, costs).total["lut"] == estimate(one, costs).total["lut"] + 7
    verilog = emit_verilog(s, board=ECP5, version="test")
    assert verilog.count("LUT4 #") == sum(len(c.luts) for c in s.covers)
    _equivalent(tmp_path, verilog, "popcount64")
