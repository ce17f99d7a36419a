"""The bit-level timing of a schedule (kera.hls.sta): delay-optimal LUT depth, bits as they are
read, multiplexers kept in order, arithmetic between cones, nets by fanout and design size."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kera import load
from kera.elaborate import build_program
from kera.hls.lower import lower_for_hardware
from kera.hls.models import load_model
from kera.hls.pipeline import single_stage
from kera.hls.report import build_report
from kera.hls.sta import (
    _Mapper,
    analyse_bits,
    design_size,
    lut_delays,
    net_delay,
    registered_network,
)
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel, SimpleModel
from tests.conftest import ROOT, SHARED_KERNELS


class FlatModel(SimpleModel):
    """SimpleModel with a LUT of 0.4 ns and a net of 0.6 ns whatever the fanout: a level is
    1.0 ns, so stage delays count LUT levels (and the fitted delays of arithmetic)."""

    lut_network: dict[str, Any] = {"k": 4, "level_ns": 1.0, "lut_ns": 0.4, "net_ns": 0.6}


COSTS = CostModel(FlatModel())


def _single(src: str) -> tuple[Any, Any]:
    p = build_program("t.kera", src)
    assert p.graph is not None and p.top is not None, p.diagnostics
    g = lower_for_hardware(p.graph.subgraph([p.top]))
    return single_stage(g, p.top), g


def _levels(src: str) -> float:
    s, _ = _single(src)
    bits = analyse_bits(s, COSTS)
    assert bits is not None
    return bits.stage_delays[0]


def test_an_xor_chain_is_balanced_and_a_shared_gate_is_duplicated() -> None:
    """gray's `from_gray` reads `x ^ (x >> 1)`, which `to_gray` returns too: the area cover
    makes that gate a LUT output and puts the rest of the 8-input xor on top of it (3 levels);
    abc maps for delay and recomputes it (2 levels: ceil(log4 8)). The scheduler's chained
    delays say 3."""
    src = """
fn to_gray(x: u8) -> u8 { x ^ (x >> 1) }
fn from_gray(g: u8) -> u8 {
    let mut b = g;
    for i in 1..8 { b = b ^ (g >> i); }
    b
}
#[top]
pub fn gray(x: u8) -> (u8, u8) { (to_gray(x), from_gray(x)) }
"""
    assert _levels(src) == pytest.approx(2.0)
    s, g = _single(src)
    costs = CostModel(FlatModel())
    chained = max(costs.network(g).levels.values())
    assert chained == 3


def test_a_cone_is_balanced_only_across_one_operator() -> None:
    """The xor of five three-input and terms reads 15 leaves: any pairing of them would be 2
    levels (ceil(log4 15)), but the terms are not xor inputs to regroup: each term is a LUT
    (level 1), four terms' xor the next, the fifth term joins last (3 levels; gf_mul's bits,
    xors of `b_i & x_ij`, are 4 LUT levels in abc's netlist, where any pairing said 2)."""
    src = """
#[top]
pub fn f(a: u5, b: u5, c: u5) -> u1 {
    let t = a & b & c;
    ((t ^ (t >> 1u32) ^ (t >> 2u32) ^ (t >> 3u32) ^ (t >> 4u32)) & 1) as u1
}
"""
    assert _levels(src) == pytest.approx(3.0)


def test_a_slice_of_a_deep_value_does_not_pay_for_its_deep_bits() -> None:
    """`v` has a deep top bit (an 16-input xor, 2 levels) and shallow low bits (wires); the
    result reads only a low bit through a slice: one level, not 3."""
    src = """
#[top]
pub fn f(a: u16, b: u16) -> u1 {
    let p = a ^ (a >> 1u32) ^ (a >> 2u32) ^ (a >> 3u32) ^ b ^ (b >> 1u32) ^ (b >> 2u32);
    let v = ((p >> 15u32) << 15u32) | (a & 0x7FFF);
    let low = (v & 1) as u1;
    low ^ (b as u1)
}
"""
    assert _levels(src) == pytest.approx(1.0)


def test_selects_are_not_merged_into_their_neighbours() -> None:
    """`c0 ? a : c1 ? b : c2 ? c : d` per bit, `c2` a compare of 16 bits (3 levels). Each
    select is a cone of its own -- abc keeps chains of selects nearly in order (gcd16's
    steps) -- whose three inputs are balanced around the late one, as abc balances the
    and-inverter graph of one select: the early `c0`, `a`, `c1`, `b` are combined before
    `c2` arrives, and one level follows it (4 in all). Merged into one bag, the 35 inputs of
    the chain would claim the same 4 here but let a late select skip every level after it."""
    src = """
#[top]
pub fn f(a: u8, b: u8, c: u8, d: u8, x: u16, y: u16, c0: bool, c1: bool) -> u8 {
    let c2 = x == y;
    if c0 { a } else if c1 { b } else if c2 { c } else { d }
}
"""
    assert _levels(src) == pytest.approx(4.0)
    s, _ = _single(src)
    net = CostModel(FlatModel()).network(s.graph)
    assert len(net.muxes) == 3 * 8  # three selects per bit, recorded as such


def test_a_select_does_not_reach_into_a_shared_condition() -> None:
    """`z = !(p | q)` is the condition of two selects: shared, it is a LUT of its own and
    each select a level above it (2), as abc builds the zero-count trees' flags (u32 `ctz`
    at 55 MHz on iCE40: 4 LUT levels in its first stage, timed 3 when a select's cut took
    its flag's inputs). Read by one select only, the condition folds into its LUT (1)."""
    shared = """
#[top]
pub fn f(p: bool, q: bool, r: bool, s: bool) -> (bool, bool) {
    let z = !(p | q);
    (if z { r } else { s }, if z { s } else { r })
}
"""
    alone = """
#[top]
pub fn f(p: bool, q: bool, r: bool, s: bool) -> bool {
    let z = !(p | q);
    if z { r } else { s }
}
"""
    assert _levels(shared) == pytest.approx(2.0)
    assert _levels(alone) == pytest.approx(1.0)


def test_a_select_of_a_value_and_its_inverse_is_an_xor() -> None:
    """`c ? ~y : y` is `c ^ y` (a CRC step's bit): an xor gate, balanced with the xors
    around it, not a chain of selects (crc32_word at 12 MHz on iCE40: 17.3 ns of logic as
    selects, 15.1 as xors; 50 MHz placed)."""
    src = """
#[top]
pub fn f(c: u4, y: bool) -> bool {
    let a = if (c & 1) == 1 { !y } else { y };
    let b = if (c & 2) == 2 { !a } else { a };
    let d = if (c & 4) == 4 { !b } else { b };
    if (c & 8) == 8 { !d } else { d }
}
"""
    assert _levels(src) == pytest.approx(2.0)  # one 5-input xor: ceil(log4 5); as selects 4
    s, _ = _single(src)
    net = CostModel(FlatModel()).network(s.graph)
    assert not net.muxes


def test_arithmetic_starts_when_its_latest_input_bit_arrives() -> None:
    """An add reads a 2-level xor and a register: it starts at 2.0 ns and takes its fitted
    delay; the xor after it is one level more."""
    src = """
#[top]
pub fn f(a: u8, b: u8, c: u8) -> u8 {
    let p = a ^ (a >> 1u32) ^ (a >> 2u32) ^ (a >> 3u32) ^ (a >> 4u32);
    (p + c) ^ b
}
"""
    add = SimpleModel().delay_ns("add", 8)
    assert _levels(src) == pytest.approx(2.0 + add + 1.0)


def test_the_critical_path_names_each_op_once_in_order() -> None:
    src = """
#[top]
pub fn f(a: u8, b: u8, c: u8) -> u8 {
    let p = a ^ (a >> 1u32) ^ (a >> 2u32) ^ (a >> 3u32) ^ (a >> 4u32);
    (p + c) ^ b
}
"""
    s, g = _single(src)
    bits = analyse_bits(s, COSTS)
    assert bits is not None
    ops = [g.nodes[a.nid].op for a in bits.path]
    assert ops[-2:] == ["add", "xor"] and ops[0] == "xor"
    for a, b in zip(bits.path, bits.path[1:], strict=False):
        assert a.start_ns + a.delay_ns == pytest.approx(b.start_ns)
    last = bits.path[-1]
    assert last.start_ns + last.delay_ns == pytest.approx(bits.stage_delays[0])


def test_registers_cut_the_network_into_stages() -> None:
    """A CRC of 32 steps and an add at a clock that needs several stages: one delay per
    stage, each within the period once ``plan_schedule`` has met its own estimate (a register
    splits LUT cones, which the scheduler's chained delays do not see), and the report's Fmax
    is the slowest stage's."""
    src = """
#[top]
pub fn crc(w: u32, k: u32) -> u32 {
    let mut c = w;
    for _ in 0..32 { c = if (c & 1) == 1 { (c >> 1u32) ^ 0xEDB88320u32 } else { c >> 1u32 }; }
    c + k
}
"""
    p = build_program("t.kera", src)
    assert p.graph is not None and p.top is not None
    s, board, model = plan_schedule(p.graph, p.top, board="icebreaker", clock_mhz=150.0,
                                    model=FlatModel())
    assert s.latency >= 2
    costs = CostModel(model)
    bits = analyse_bits(s, costs)
    assert bits is not None and len(bits.stage_delays) == s.latency
    assert max(bits.stage_delays) <= s.clock_ns - costs.overhead_ns + 1e-9
    r = build_report(s, board, model=model)
    assert r["estimate"]["fmax_mhz"] == pytest.approx(
        1000.0 / (max(bits.stage_delays) + costs.overhead_ns), rel=1e-3)


def test_nets_grow_with_fanout_and_design_size() -> None:
    """The fitted routing (iCE40: a + b log2 fanout + c log2 size): a net of fanout 16 in a
    4,000-LUT design is slower than one of fanout 1 in a 50-LUT design; without a fit every
    net is the flat ``net_ns``."""
    costs = CostModel(load_model("ice40"))
    small, big = net_delay(costs, 50.0), net_delay(costs, 4000.0)
    assert small(1) < small(16) < big(16)
    fit = costs.model.lut_network["routing"]
    assert big(16) == pytest.approx(fit["a"] + 4 * fit["fanout"] + math.log2(4000) * fit["size"])
    assert net_delay(COSTS, 4000.0)(64) == 0.6
    assert lut_delays(COSTS) == [0.4] * 4


def test_a_multiplexer_tree_s_nets_grow_with_the_design_it_sits_in() -> None:
    """A fitted LUT-only op (a 64:1 multiplexer of flip-flops) was placed alone: in a bigger
    design each of its levels' nets is as much longer as the routing fit's size term says
    (delay over ``level_ns`` nets, ``c log2(size / own LUTs)`` each); a carry chain's fitted
    delay does not grow (its hops are dedicated wires)."""
    src = """
#[top]
pub fn f(a: [u16; 64], k: u6, b: u16, c: u16) -> (u16, u16) { (a[k], b + c) }
"""
    s, g = _single(src)
    costs = CostModel(load_model("ice40"))
    fit = costs.model.lut_network["routing"]
    index = next(n for n in g.nodes.values() if n.op == "array_index")
    add = next(n for n in g.nodes.values() if n.op == "add")
    own = costs._query_area(("array_index", 16, 64))["lut"]
    fitted = costs.delay(g, index)
    alone = analyse_bits(s, costs, size=own)
    big = analyse_bits(s, costs, size=8 * own)
    assert alone is not None and big is not None
    grown = fitted / costs.level_ns * fit["size"] * 3  # log2(8)
    wider = net_delay(costs, 8 * own)(1) - net_delay(costs, own)(1)  # the index's own net
    assert big.stage_delays[0] - alone.stage_delays[0] == pytest.approx(grown + wider, abs=1e-6)
    ops = [g.nodes[a.nid].op for a in big.path]
    assert ops == ["array_index"] and costs.delay(g, add) < fitted


def test_a_chain_fed_a_signal_carry_in_takes_the_feed_cell() -> None:
    """iCE40: ``x + 5`` passes ``x[0]`` on as the carry into bit 1 (the cell of bit 0 has one
    signal input and goes), ``x + 4`` ``x[2]`` into bit 3, so nextpnr feeds the chain through a
    logic cell of its own (``carry_in_ns``, 0.675 ns); ``x + y`` (carry in 0, as the fitted
    ``add``) does not take it."""
    costs = CostModel(load_model("ice40"))
    feed = costs.model.lut_network["carry_in_ns"]
    assert feed == pytest.approx(0.675)
    delays = {}
    for name, rhs in (("odd", "5"), ("even", "4"), ("var", "y")):
        src = f"#[top]\npub fn f(x: u16, y: u16) -> u16 {{ x + {rhs} }}\n"
        s, g = _single(src)
        add = next(n for n in g.nodes.values() if n.op == "add")
        bits = analyse_bits(s, costs, size=100.0)
        assert bits is not None
        delays[name] = (bits.stage_delays[0], costs.delay(g, add), costs.fed_carry_in(g, add))
    assert delays["odd"][2] and delays["even"][2] and not delays["var"][2]
    for name in ("odd", "even"):  # the chain from the register: its fitted delay and the cell
        assert delays[name][0] - delays[name][1] == pytest.approx(
            delays["var"][0] - delays["var"][1] + feed, abs=1e-6)
    assert CostModel(load_model("ecp5")).model.lut_network.get("carry_in_ns") is None


def test_ecp5_wide_luts_cost_their_extra_delay() -> None:
    """ECP5's abc9 library: a 5- to 7-input function is one level of LUT4s joined by PFUMX /
    L6MUX21, slower than a LUT4 by the library's difference."""
    costs = CostModel(load_model("ecp5"))
    d = lut_delays(costs)
    lib = costs.model.lut_network["library"]["luts"]
    assert len(d) == 7 and d[:4] == [d[0]] * 4
    assert d[6] - d[3] == pytest.approx((lib[6][1] - lib[3][1]) / 1000.0)


def test_a_combinational_dsp_product_s_net_grows_with_the_dsps_of_the_design() -> None:
    """ECP5 at a board clock: the fitted multiply was placed alone; among 16 MULT18X18D its
    product's net to the fabric is ``out_net_ns * (sqrt(16) - 1)`` longer (examples/matmul4,
    64 DSPs: 3.5 ns out of a DSP where a lone one's is under 1 ns). iCE40's untimed SB_MAC16
    has no such term."""
    costs = CostModel(load_model("ecp5"))
    delays = {}
    for n in (1, 16):
        src = (f"#[top]\npub fn f(a: [i16; {n}], b: [i16; {n}]) -> [i32; {n}] {{\n"
               f"    let mut c = [0i32; {n}];\n"
               f"    for i in 0..{n} {{ c[i] = (a[i] as i32) * (b[i] as i32); }}\n    c\n}}\n")
        s, g = _single(src)
        bits = analyse_bits(s, costs, size=100.0)
        assert bits is not None
        delays[n] = bits.stage_delays[0]
    out_net = costs.model.dsp_timing["pipelined"]["out_net_ns"]
    assert costs.dsp_net_growth_ns(1) == 0.0
    assert delays[16] - delays[1] == pytest.approx(out_net * 3, abs=1e-6)
    assert CostModel(load_model("ice40")).dsp_net_growth_ns(64) == 0.0


def test_design_size_counts_the_cover_and_the_arithmetic() -> None:
    s, g = _single("#[top]\npub fn f(a: u16, b: u16) -> u16 { (a + b) ^ (a & b) }\n")
    costs = CostModel(load_model("ice40"))
    assert design_size(s, costs) == pytest.approx(16 + costs._query_area(("add", 16, None))["lut"],
                                                  abs=2)


def test_plan_schedule_meets_the_clock_by_its_own_estimate() -> None:
    """Where the bit-level timing (nets slower in a bigger design, or by fanout) misses a
    clock that the chained delays met, ``plan_schedule`` tightens the margin: the report's
    estimate meets every clock it was scheduled for."""
    for name, clocks in (("fir8", (40.0, 60.0)), ("gcd16", (20.0,)), ("cordic", (30.0,))):
        loaded = load(str(ROOT / "examples" / f"{name}.kera"))
        for clock in clocks:
            s, board, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker",
                                            clock_mhz=clock)
            r = build_report(s, board, model=model)
            assert r["estimate"]["fmax_mhz"] >= clock * 0.999, (name, clock)


_DOT4 = """
#[top]
#[pipeline(ii = 4)]
pub fn f(a: [u16; 4], b: [u16; 4]) -> u32 {
    let mut s = 0u32;
    for i in 0..4 { s += (a[i] as u32) * (b[i] as u32); }
    s
}
"""


def _dot4() -> tuple[Any, Any]:
    """The dot product at ii = 4 under the flat model: its schedule and its shared unit."""
    p = build_program("t.kera", _DOT4)
    assert p.graph is not None and p.top is not None
    s, _, _ = plan_schedule(p.graph, p.top, board="icebreaker", model=FlatModel())
    (unit,) = [u for u in s.units if len(u.ops) > 1]
    return s, unit


def test_a_shared_units_operands_cross_its_multiplexers() -> None:
    """The four products share one multiply whose operands are 4:1 multiplexers on the modulo
    counter. With a LUT of 0.4 ns and nets of 0.6 ns: the counter's select crosses a net, its
    decode LUT and a net (1.6 ns); the multiplexer's six inputs (four sources, two select bits)
    take two LUT levels and the net between them (1.4 ns); its net into the multiply is the one
    the multiply's fitted delay holds. The critical path shows the step."""
    s, unit = _dot4()
    assert unit.kind == "mul" and unit.sources == (4, 4)
    bits = analyse_bits(s, COSTS)
    steps = [(s.graph.nodes[a.nid].op, a.what) for a in bits.path]
    assert steps[:2] == [("mul", "mux"), ("mul", "")], steps
    mux, mul = bits.path[:2]
    assert mux.start_ns == 0.0 and mux.delay_ns == pytest.approx(3.0)
    assert mul.start_ns == pytest.approx(3.0) and mul.nid in unit.ops


def test_a_register_loading_two_sources_has_its_multiplexer() -> None:
    """The accumulator's register on the modulo circle loads two sources (the first product,
    then each sum): a multiplexer LUT before its flip-flops, which the sum crosses after its
    net (11.4 + 0.6 + 0.4 ns under the flat model, no flip-flop packing); the critical path
    ends with that `mux` step."""
    s, _ = _dot4()
    binding = s.register_binding
    assert binding is not None and sorted(len(r.sources) for r in binding.registers)[-1] == 2
    bits = analyse_bits(s, COSTS)
    assert bits.stage_delays[1:] == pytest.approx((12.4, 12.4, 12.4))
    last = bits.path[-1]
    assert last.what == "mux" and last.start_ns == pytest.approx(12.0)
    assert last.delay_ns == pytest.approx(0.4) and s.graph.nodes[last.nid].op == "add"


def test_a_units_ops_start_together() -> None:
    """Every op of a shared unit starts at the unit's start, when the latest operand of any
    of its ops is through the multiplexers (nextpnr times the paths from every source, whatever
    the counter selects): a later start of the unit holds back the stage of each of its ops."""
    s, unit = _dot4()
    net = registered_network(s, COSTS)
    size = design_size(s, COSTS)
    wire = net_delay(COSTS, size)
    free = _Mapper(s, COSTS, net, wire, size).run()
    late = _Mapper(s, COSTS, net, wire, size, {unit.name: 20.0}).run()
    for nid in unit.ops:
        st = s.stage[nid]
        assert free.stage_delays[st] < 20.0 and late.stage_delays[st] >= 20.0 + 6.0, st


def test_the_handshake_path_caps_a_fast_design_on_ice40() -> None:
    """Every register moves on one enable from the last valid flip-flop: on iCE40 that is 1
    LUT, the valid on its I2 pin (3 LUTs where state registers wait for the transfer), and a
    clock-enable net of ~3.5 ns (bitrev32, crc8, sbox_chain, gf_mul placed at 55 MHz: 7.5-8.9
    ns with shorter data paths). The report's Fmax is the handshake's where it is slower than
    every stage, and its critical path says so; the ECP5 routes clock enables like data (gray
    places at 292 MHz on its data path), and a long pipeline's median seed too (sort8 at 150
    MHz, 6 stages: 4.47 ns, a data path; seed 1 alone ran the enable across the die, 7.26 ns)."""
    from kera.hls.sta import handshake_ns

    loaded = load(str(ROOT / "examples" / "gray.kera"))
    s, board, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker")
    costs = CostModel(model)
    hs = model.handshake
    pure = handshake_ns(s, costs, 20.0)
    first, inner, last = hs["nets"]
    lut = model.lut_network["lut_ns"]
    assert hs["levels"] == 1 and hs["levels_state"] == 3
    assert pure == pytest.approx(hs["clk_to_q_ns"] + first + hs["first_lut_ns"] + last
                                 + hs["setup_ns"])
    r = build_report(s, board, model=model)
    assert r["estimate"]["fmax_mhz"] == pytest.approx(1000.0 / r["timing"]["handshake_ns"],
                                                      rel=1e-3)
    assert [p["op"] for p in r["critical_path"]] == ["handshake"]
    stateful = load(str(ROOT / "examples" / "crc32_stream.kera"))
    s2, _, _ = plan_schedule(stateful.graph, stateful.top, board="icebreaker")
    assert handshake_ns(s2, costs, 20.0) == pytest.approx(pure + 2 * (lut + inner))
    s5, board5, model5 = plan_schedule(loaded.graph, loaded.top, board="ulx3s")
    local = handshake_ns(s5, CostModel(model5), 20.0)
    assert build_report(s5, board5, model=model5)["critical_path"][0]["op"] != "handshake"
    sort8 = load(str(SHARED_KERNELS / "peers" / "sort8.kera"))
    s6, board6, _ = plan_schedule(sort8.graph, sort8.top, board="ulx3s", clock_mhz=150.0)
    assert s6.latency >= 5
    assert handshake_ns(s6, CostModel(model5), 20.0) == pytest.approx(local)
    r6 = build_report(s6, board6, model=model5)
    assert r6["critical_path"][0]["op"] != "handshake"
    assert 212.0 <= r6["estimate"]["fmax_mhz"] <= 260.0  # placed: 223.6 MHz, 3 seeds' median


def test_the_enable_of_many_registers_caps_a_long_pipeline_on_ecp5(tmp_path: Any) -> None:
    """ECP5: the enable reaches every register's clock enable, and in a design of thousands
    of flip-flops its net spans the die (xtea at 150 MHz, 128 stages, 28k flip-flops:
    placed 8.85 ns on the handshake's path, where the stages' estimate is 5.4 ns). The path
    grows with log2 of the banks' bits; xtea with 4 rounds keeps its data path's Fmax."""
    from kera.hls.sta import handshake_ns, register_bits, registered_network

    fit = load_model("ecp5").handshake["enable_fanout"]
    src = (ROOT / "examples" / "xtea.kera").read_text()
    figures = {}
    for rounds in (4, 16):
        f = tmp_path / f"xtea{rounds}.kera"
        f.write_text(src.replace("for _ in 0..32", f"for _ in 0..{rounds}"))
        loaded = load(str(f))
        s, board, m = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150.0)
        raw = sum(s.graph.nodes[n].type.flat_width for bank in s.crossing() for n in bank)
        bits = register_bits(s, registered_network(s, CostModel(m)), s.crossing())
        assert 0.95 * raw <= bits <= raw  # xtea's banks: nearly every bit a flip-flop
        r = build_report(s, board, model=m)
        figures[rounds] = (bits, handshake_ns(s, CostModel(m), 20.0), r)
    bits16, path16, r16 = figures[16]
    assert path16 == pytest.approx(fit["a_ns"] + fit["per_log2_ns"] * math.log2(bits16))
    assert [p["op"] for p in r16["critical_path"]] == ["handshake"]
    assert 120.0 <= r16["estimate"]["fmax_mhz"] <= 140.0  # placed: 126.7 MHz, 3 seeds
    from kera.hls.verdict import verdict_line

    assert r16["timing"]["path"]["stage"] is None  # not a stage's path
    assert "the worst path is the valid/ready handshake" in verdict_line(r16["timing"])
    r4 = figures[4][2]
    assert r4["critical_path"][0]["op"] != "handshake"
    assert 178.0 <= r4["estimate"]["fmax_mhz"] <= 200.0  # placed: 187.0 MHz


def test_a_comparison_reads_a_registered_subtrahend_through_an_inverter() -> None:
    """iCE40: SB_CARRY cannot invert, so an ordering's subtrahend bits that flip-flops drive
    pass an inverter LUT and a net before the chain (nextpnr: sort8 and isqrt32 at 55 MHz start
    flip-flop -> net -> LUT -> 1.76 ns net -> I2). A subtrahend a LUT makes, or a minuend from
    flip-flops, has no such stage; ECP5's CCU2C inverts inside."""
    src = "#[top]\npub fn f(a: u8, b: u8) -> bool { a < b }\n"
    flipped = "#[top]\npub fn f(a: u8, b: u8) -> bool { (a ^ 0x5a) < (b ^ 0xa5) }\n"
    for family, expect in (("ice40", True), ("ecp5", False)):
        costs = CostModel(load_model(family))
        ports, _ = _single(src)
        gates, _ = _single(flipped)
        plain = analyse_bits(ports, costs, size=100.0)
        folded = analyse_bits(gates, costs, size=100.0)
        assert plain is not None and folded is not None
        lut_net = costs.model.lut_network
        inverter = lut_net["lut_ns"] + net_delay(costs, 100.0)(1)
        # the ports' comparison starts an inverter later than the inputs' own nets allow
        extra = plain.stage_delays[0] - costs.delay(ports.graph, next(
            n for n in ports.graph.nodes.values() if n.op == "lt"))
        if expect:
            assert extra >= inverter - lut_net["net_ns"] - 1e-6
        else:
            assert extra < inverter - lut_net["net_ns"] - 1e-6
        # with both operands from xor LUTs, the inversion folds into them: no such stage
        assert folded.stage_delays[0] < plain.stage_delays[0] + inverter
