"""The hardware model sees LUTs: bit networks, LUT-site counting, DSP budgets, device limits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.hls.lower import lower_for_hardware
from kera.hls.lutmap import ZERO, lut_count, lut_levels, network
from kera.hls.models import load_model
from kera.hls.report import build_report
from kera.hls.resources import Resources, check_fits, estimate
from kera.hls.schedule import schedule
from kera.hls.timing import CostModel, SimpleModel, csd_digits

ROOT = Path(__file__).resolve().parents[2]
CRC = """\
#[top]
pub fn crc(w: u32) -> u32 {
    let mut crc = 0xFFFFFFFFu32 ^ w;
    for _bit in 0..32 {
        crc = if (crc & 1) == 1 { (crc >> 1u32) ^ 0xEDB88320u32 } else { crc >> 1u32 };
    }
    crc ^ 0xFFFFFFFF
}
"""



def _luts(res: Resources) -> int:
    """The data path's LUTs: the estimate's less its valid/ready logic (``handshake``)."""
    return int(res.total["lut"] - res.by_op.get("handshake", {}).get("lut", 0))

def _graph(src: str):
    p = build_program("t.kera", src)
    assert p.graph is not None and p.top is not None, p.diagnostics
    return lower_for_hardware(p.graph), p.top


def test_lut_tree_formulas() -> None:
    assert [lut_levels(s, 4) for s in (0, 1, 2, 4, 5, 16, 17, 64, 65)] == [0, 0, 1, 1, 2, 2, 3,
                                                                          3, 4]
    assert [lut_count(s, 4) for s in (1, 2, 4, 5, 7, 8, 64)] == [0, 1, 1, 2, 2, 3, 21]
    assert lut_levels(36, 6) == 2 and lut_count(36, 6) == 7
    assert [csd_digits(v) for v in (0, 1, 3, 7, 10, -7, 0xEDB88320)] == [0, 1, 2, 2, 2, 2, 9]


def test_crc_is_a_few_lut_levels_not_32_adders() -> None:
    g, top = _graph(CRC)
    net = network(g, 4)
    # every output bit is an xor of at most the 32 input bits: at least ceil(log4 32) = 3
    # levels; the area-oriented cover is 7 deep (nextpnr: 6 LUTs on the critical path)
    support = max(len(b[0]) for bits in net.bits.values() for b in bits)
    assert 17 <= support <= 32 and lut_levels(support, 4) == 3
    assert max(net.levels.values()) == 7
    ice40 = load_model("ice40")
    costs = CostModel(ice40)
    for clock, stages in ((12.0, 1), (50.0, 2)):  # not 10+ stages of word-level xors
        s = schedule(g, top, family="ice40", clock_mhz=clock, model=ice40)
        assert s.latency == stages
    s = schedule(g, top, family="ice40", clock_mhz=12.0, model=ice40)
    assert max(s.finish_ns.values()) == pytest.approx(7 * costs.level_ns)
    # the LUT count follows the shared cover: near the 157 LUTs nextpnr reports, not 32 * 32
    assert 140 <= sum(net.luts_by_node().values()) <= 180


def test_constant_and_duplicate_bits_cost_nothing() -> None:
    g, top = _graph("#[top] pub fn f(x: u8) -> u32 { ((x & 15u8) as u32) | 0xF0000000u32 }")
    s = schedule(g, top, family="simple", clock_mhz=50.0, model=SimpleModel())
    res = estimate(s, CostModel(SimpleModel()))
    assert _luts(res) == 0  # masks and constant bits are wires
    assert res.kept_bits == 4 and res.register_bits == 32  # only x[3:0] is a live result bit


def test_select_of_inverted_wires_is_an_xor_gate() -> None:
    g, _ = _graph("#[top] pub fn f(c: bool, x: u8) -> u8 { if c { x ^ 255u8 } else { x } }")
    net = network(g, 4)
    sel = next(n for n in g.nodes if g.nodes[n].op == "select")
    assert net.levels[sel] == 1 and len({b[2] for b in net.bits[sel]}) == 8


def test_ecp5_counts_carry_cells_in_lut_sites() -> None:
    g, top = _graph("#[top] pub fn f(a: u32, b: u32) -> u32 { a + b }")
    ecp5, ice40 = load_model("ecp5"), load_model("ice40")
    add = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "add")
    fitted = ecp5.area("add", 32)
    assert fitted["lut"] == 0 and fitted["carry"] == 16  # CCU2C cells, as yosys counts them
    assert CostModel(ecp5).area(g, add)["lut"] == 32  # 2 LUT4 sites per CCU2C, as nextpnr
    assert CostModel(ice40).area(g, add)["lut"] == ice40.area("add", 32)["lut"]
    s = schedule(g, top, family="ecp5", clock_mhz=25.0, model=ecp5)
    res = estimate(s, CostModel(ecp5))
    assert _luts(res) == 32 and "CCU2C" in res.notes["lut"]


def test_untimed_ice40_dsp_costs_the_lut_multiplier_delay() -> None:
    ice40 = load_model("ice40")
    g, _ = _graph("#[top] pub fn f(a: u16, b: u16) -> u16 { a * b }")
    mul = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "mul")
    costs = CostModel(ice40)
    assert costs.area(g, mul)["dsp"] == 1
    assert ice40.delay_ns("mul", 16) < 0.1  # what nextpnr-ice40 reports for an SB_MAC16
    assert costs.delay(g, mul) == pytest.approx(ice40.delay_ns("mul_lut", 16))


def test_untimed_wide_dsp_multiply_is_one_tile_then_the_fabric_adders(tmp_path: Path) -> None:
    """`u32 x / 10` is a 31x31 multiply-high on 4 SB_MAC16: one tile's LUT-multiplier delay
    plus the fitted (fabric adder) delay, not the 62-bit shift-and-add network of its
    constant; it synthesizes at the iCEBreaker's 12 MHz (nextpnr: 44.6 MHz)."""
    from kera.hls.synth import synthesize
    from kera.opt import optimize

    ice40 = load_model("ice40")
    p = build_program("d.kera", "#[top] fn d(x: u32) -> u32 { x / 10 }")
    assert p.graph is not None
    g = lower_for_hardware(optimize(p.graph, 2))
    mul = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "widening_mul")
    costs = CostModel(ice40, dsp_budget=8)
    assert costs.area(g, mul)["dsp"] == 4 and not costs.lut_multipliers(g)
    tile = ice40.delay_ns("widening_mul_lut", 16)
    assert costs.delay(g, mul) == pytest.approx(tile + ice40.delay_ns("widening_mul", 31))
    const = next(v for v in (costs._known(g, i) for i in mul.inputs) if v is not None)
    assert costs.delay(g, mul) < (csd_digits(const) - 1).bit_length() * ice40.delay_ns("add", 62)
    result = synthesize(g, "d", clock_mhz=12.0, outdir=tmp_path, source=p)
    assert result.timing_met and result.report["estimate"]["dsp"] == 4


def test_widening_mul_of_narrow_operands_has_known_top_bits() -> None:
    g, _ = _graph("#[top] pub fn f(a: u8, b: u8) -> u64 {\n"
                  "    widening_mul(a as u32, b as u32)\n}\n")
    mul = next(n for n in g.nodes if g.nodes[n].op == "widening_mul")
    bits = network(g, 4).bits[mul]
    assert len(bits) == 64 and all(b == ZERO for b in bits[16:])  # 8 + 8 bits


MULS = "#[top] pub fn m(a: [u16; 12], b: u16) -> [u16; 12] {\n    [" + ", ".join(
    f"a[{i}] * b" for i in range(12)) + "]\n}\n"


def test_multiplies_over_the_dsp_budget_become_lut_multipliers() -> None:
    ice40 = load_model("ice40")
    g, top = _graph(MULS)
    s = schedule(g, top, family="ice40", clock_mhz=12.0, model=ice40, dsp_budget=8)
    costs = CostModel(ice40, dsp_budget=8)
    on_luts = costs.lut_multipliers(g)
    assert len(on_luts) == 4  # 12 multiplies of one SB_MAC16 each: 8 DSPs, 4 LUT multipliers
    res = estimate(s, CostModel(ice40), load_board_caps("icebreaker"))
    assert res.total["dsp"] == 8
    lut_mul = ice40.area("mul_lut", 16)["lut"]
    assert res.by_op["mul"]["lut"] >= 4 * lut_mul - 1
    assert not res.overfull
    unbounded = estimate(s, CostModel(ice40), None)
    assert unbounded.total["dsp"] == 12


def test_constant_multiplies_over_budget_are_shift_and_add() -> None:
    ice40 = load_model("ice40")
    src = "#[top] pub fn m(a: [u16; 10]) -> [u16; 10] {\n    [" + ", ".join(
        f"a[{i}] * 10u16" for i in range(10)) + "]\n}\n"
    g, _ = _graph(src)
    costs = CostModel(ice40, dsp_budget=8)
    plan = costs.lut_multipliers(g)
    assert sorted(plan.values()) == [2, 2]  # 10 = 8 + 2: two digits, one adder
    node = g.nodes[next(iter(plan))]
    assert costs.area(g, node) == {**ice40.area("add", 16), "dsp": 0.0}  # (a << 3) + (a << 1)
    assert costs.delay(g, node) == ice40.delay_ns("add", 16)


def load_board_caps(name: str):
    from kera.hls.boards import load_board

    return load_board(name).capacities


def test_overfull_design_is_a_one_line_error() -> None:
    ice40 = load_model("ice40")
    g, top = _graph(MULS.replace("[u16; 12]", "[u32; 12]").replace("b: u16", "b: u32"))
    s = schedule(g, top, family="ice40", clock_mhz=12.0, model=ice40, dsp_budget=0)
    res = estimate(s, CostModel(ice40), {"lut": 1000, "ff": 5280, "dsp": 0, "bram": 30})
    assert res.overfull["lut"][1] == 1000
    with pytest.raises(KeraError) as info:
        check_fits(res, "tiny", "m.kera:1:1")
    msg = info.value.message
    assert msg.startswith("m.kera:1:1: the design needs ") and " LUT but tiny has 1000" in msg
    assert "--allow-overfull" in msg and "\n" not in msg and info.value.exit_code == 1


def test_matmul4_at_ii1_does_not_fit_an_icebreaker(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "kera.cli", "synthesize", str(ROOT / "examples" / "matmul4.kera"),
           "-o", str(tmp_path / "out")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "matmul4.kera:" in last and "LUT but icebreaker has 5280" in last, last
    assert "Traceback" not in proc.stderr
    proc = subprocess.run([*cmd, "--allow-overfull"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "report.json").is_file()
    report = (tmp_path / "out" / "report.json").read_text()
    assert "will not fit" in report


def test_report_of_an_over_budget_design_counts_dsps_as_the_board_allows() -> None:
    g, top = _graph(MULS)
    ice40 = load_model("ice40")
    s = schedule(g, top, family="ice40", clock_mhz=12.0, model=ice40, dsp_budget=8)
    r = build_report(s, "icebreaker", model=ice40)
    assert r["estimate"]["dsp"] == 8 and r["capacities"]["dsp"] == 8


def test_compare_and_subtract_of_the_same_operands_are_one_alu() -> None:
    ice40 = load_model("ice40")
    g, _ = _graph("#[top] pub fn f(x: u8, y: u8) -> u16 {\n    let a = x as u16;\n"
                  "    let b = y as u16;\n    if a >= b { a - b } else { a }\n}\n")
    costs = CostModel(ice40)
    ge = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "ge")
    sub = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "sub")
    assert costs.area(g, ge) == {"lut": 1.0, "ff": 0.0, "carry": 0.0, "dsp": 0.0}
    # 8-bit operands: a 9-bit ALU; 8 of b's 9 bits are flip-flops that need an inverter LUT
    # (SB_CARRY does not invert), its constant top bit none; 8 of the 9 sum LUTs (add9's) are
    # the select's 8 LUTs (``absorbed_sums``: a[i], b[i], the carry and the flag, one LUT4 a
    # bit; yosys 0.70 `synth_ice40` on `(a >= b) ? (a - b) : a` of 8-bit ports: 16 LUT4s)
    sub9, add9 = ice40.area("sub", 9), ice40.area("add", 9)
    assert costs.absorbed_sums(g) == {sub.id: 8}
    assert costs.area(g, sub) == pytest.approx(
        {**sub9, "lut": (sub9["lut"] - add9["lut"]) * 8 / 9 + add9["lut"] - 8})
    net = costs.network(g)
    borrow = net.bits[sub.id][8]  # the sign of the 9-bit difference, copied above it
    assert net.bits[sub.id][9:] == [borrow] * 7
    assert net.bits[ge.id] == [(borrow[0], 0, -1, 1)]  # a >= b reads the inverted borrow
    sel = next(n for n in g.nodes if g.nodes[n].op == "select")
    assert all(b == ZERO for b in net.bits[sel][8:])  # a >= b: no borrow to select


def test_min_and_max_of_a_pair_share_one_comparator() -> None:
    """The second of the pair is its multiplexer, a select of its width (yosys 0.70 on
    ``lt = a < b; (lt ? a : b, lt ? b : a)`` of 8 bits: `synth_ecp5` 16 LUT4 and 4 CCU2C, 24
    sites; `synth_ice40` 24 LUT4: 16 multiplexer bits and 8 inverters of the ports' ``b``)."""
    ecp5 = load_model("ecp5")
    g, _ = _graph("#[top] pub fn f(a: u8, b: u8) -> (u8, u8) { (min(a, b), max(a, b)) }")
    costs = CostModel(ecp5)
    areas = sorted(costs.area(g, g.nodes[n])["lut"] for n in g.nodes
                   if g.nodes[n].op in ("min", "max"))
    whole, sel = ecp5.area("min", 8), ecp5.area("select", 8)
    assert areas == [sel["lut"], whole["lut"] + 2 * whole["carry"]]  # CCU2C = 2 LUT sites
    assert sum(areas) == 24
    ice40 = CostModel(load_model("ice40"))
    assert round(sum(ice40.area(g, g.nodes[n])["lut"] for n in g.nodes
                     if g.nodes[n].op in ("min", "max"))) == 24


def test_an_ordering_inverts_only_the_subtrahend_bits_that_flip_flops_drive() -> None:
    """``a < b`` is ``alumacc``'s ``a - b``: on iCE40 each bit of ``b`` passes an inverter
    LUT into SB_CARRY unless a LUT makes it, which folds the inversion in (yosys 0.70
    `synth_ice40`, 8 bits: ``a < b`` of ports 9 LUT4s, ``a < (x ^ y)`` 9: the 8 xors and the
    flag; ``(x ^ y) < a`` 17). The fitted ``lt`` read both from flip-flops: ``w + 1``."""
    ice40 = load_model("ice40")
    costs = CostModel(ice40)
    for src, inverters in (("a < b", 8), ("a < (x ^ y)", 0), ("(x ^ y) < a", 8)):
        g, _ = _graph(f"#[top] pub fn f(a: u8, b: u8, x: u8, y: u8) -> bool {{ {src} }}")
        lt = next(g.nodes[n] for n in g.nodes if g.nodes[n].op in ("lt", "gt"))
        flag = ice40.area("lt", 8)["lut"] - 8  # the fitted curve less its 8 inverters
        assert costs.area(g, lt)["lut"] == pytest.approx(flag + inverters, abs=0.01), src


def test_adders_of_narrow_values_are_narrow() -> None:
    ice40 = load_model("ice40")
    g, _ = _graph("#[top] pub fn f(a: u8, b: u8) -> u32 { (a as u32) + (b as u32) }")
    add = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "add")
    costs = CostModel(ice40)
    assert costs.narrow_query(g, add) == ("add", 9, None)
    # the carry out is SB_CARRY's CO, no LUT4 (yosys 0.70: 8 LUT4s and 8 carries)
    assert costs.area(g, add) == {**ice40.area("add", 9), "lut": 8.0}
    bits = costs.network(g).bits[add.id]
    assert all(b == ZERO for b in bits[9:])  # the top 23 bits are known zeros


def test_wide_functions_are_one_level_on_ecp5_but_not_on_ice40() -> None:
    src = "#[top] pub fn f(x: u8, y: u8) -> bool { (x ^ y) == 0x5Au8 }"
    g, _ = _graph(src)
    deep = network(g, 4)
    wide = network(g, 4, wide=7)
    top = max(deep.levels, key=deep.levels.__getitem__)
    assert wide.levels[top] <= deep.levels[top] == 3  # 16 inputs: wider than 7
    g2, _ = _graph("#[top] pub fn f(x: u8) -> bool { (x & 0x3Fu8) == 0x15u8 }")
    assert max(network(g2, 4).levels.values()) == 2  # 6 inputs: two LUT4 levels
    assert max(network(g2, 4, wide=7).levels.values()) == 1  # one LUT4 + PFUMX level
    assert sum(network(g2, 4, wide=7).luts_by_node().values()) == sum(
        network(g2, 4).luts_by_node().values())  # the count stays the 4-input cover's
    assert CostModel(load_model("ecp5")).lut_wide == 7
    assert CostModel(load_model("ice40")).lut_wide == 0


def test_a_block_ram_pays_for_the_logic_around_it() -> None:
    """histogram (256 x 16 in one block RAM) on iCE40: around the RAM are yosys's read-old-
    data emulation's select and the read's forwarding select (5 inputs a bit: 2 LUT4s, 32),
    the two hit tests (valid + 8-bit address compare: 17 inputs, 6 LUT4s each), the write's
    address select (8; its data select is the emulation register's reset), the clear
    counter (the fitted 8-bit add: 8 LUTs, 6.89 carries) and its end test (8 inputs: 3),
    write enable and busy flag (2): 65 LUTs, 7 carries (yosys 0.70: 94 LUT4 for the core,
    96 estimated with the nodes' 31)."""
    from kera import load
    from kera.hls.synth import plan_schedule

    loaded = load(ROOT / "examples" / "histogram.kera")
    s = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=12.0)[0]
    res = estimate(s, CostModel(load_model("ice40")), {"lut": 5280, "ff": 5280, "dsp": 8,
                                                        "bram": 30})
    glue = res.by_op["bram_glue"]
    assert (glue["count"], glue["lut"], glue["carry"]) == (1, 65, 7)
    assert res.total["bram"] == 1


ACCUMULATE = """#[top]
pub fn acc(i: u9, x: u8) -> u8 {
    mem m: [u8; 512] = [0; 512];
    let c = m[i] + x;
    m[i] = c;
    c
}
"""


@pytest.mark.parametrize(("board", "family", "clock", "placed"),
                         [("ulx3s", "ecp5", 25.0, 80), ("icebreaker", "ice40", 12.0, 72)])
def test_a_written_block_ram_pays_for_yosys_read_first_emulation(
        tmp_path: Path, board: str, family: str, clock: float, placed: int) -> None:
    """A block RAM read and written at the same edge (512 x 8, not one the model was derived
    from): yosys emulates the read of the old word (``memory_libmap``, ``emulate_read_first``
    then ``emulate_transparency``): 42 more flip-flops for histogram, 1 + 9 + 8 + 1 + 8 = 27
    here, a select of the registered write data onto the RAM's output before the emitter's
    forwarding select, a second 2a + 1 input hit test; the write data's clear select becomes a
    reset. On ECP5 abc9 maps the glue as the nodes are mapped: the forwarding hit test's last
    AND goes into every data bit (a LUT5). yosys 0.70 in the serial shell, shell subtracted:
    ECP5 62 LUT4 + 9 CCU2C = 80 sites and 82 FFs, iCE40 72 SB_LUT4 and 82 FFs; the model
    without the emulation said 53 LUTs and 73 FFs on both."""
    from kera import load
    from kera.hls.synth import plan_schedule

    f = tmp_path / "acc.kera"
    f.write_text(ACCUMULATE)
    loaded = load(f)
    s = plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock)[0]
    assert s.state is not None and [m.mapped_to for m in s.state.mems] == ["bram"]
    res = estimate(s, CostModel(load_model(family)))
    assert res.total["ff"] == 82
    assert abs(res.total["lut"] - placed) <= 0.2 * placed, res.total
