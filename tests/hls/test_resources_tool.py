"""The bit network as yosys builds it (``kera.hls.lutmap.ToolNetwork``) and the ECP5 wide LUTs
(``kera.hls.cutmap``): figures derived by hand from what yosys/abc9 make of small circuits."""

from __future__ import annotations

import pytest

import kera
from kera.elaborate import build_program
from kera.hls.lower import lower_for_hardware
from kera.hls.lutmap import ONE, ZERO, neg_wiring
from kera.hls.models import load_model
from kera.hls.resources import Resources, estimate
from kera.hls.schedule import schedule
from kera.hls.timing import CostModel
from tests.conftest import SHARED_KERNELS


def _luts(res: Resources) -> int:
    """The data path's LUTs: the estimate's less its valid/ready logic (``handshake``)."""
    return int(res.total["lut"] - res.by_op.get("handshake", {}).get("lut", 0))

def _estimate(src: str, family: str = "ice40", clock: float = 12.0):
    p = build_program("t.kera", src)
    assert p.graph is not None and p.top is not None, p.diagnostics
    g = lower_for_hardware(p.graph)
    model = load_model(family)
    s = schedule(g, p.top, family=family, clock_mhz=clock, model=model)
    return s, estimate(s, CostModel(model))


def test_negation_wires() -> None:
    x0 = (frozenset({0}), 0, -1, 0)
    x1 = (frozenset({1}), 0, -1, 0)
    assert neg_wiring([x0, ZERO, ZERO], False) == [x0, x0, x0]  # 0 - x, x in {0, 1}
    assert neg_wiring([x0, x0, x0], True) == [x0, ZERO, ZERO]  # x in {0, -1}: 0 or 1
    assert neg_wiring([x0], True) == [x0]  # -x of an i1 wraps to x
    assert neg_wiring([x0, x1], False) is None and neg_wiring([ONE, ZERO], False) is None


def test_crc_step_mask_is_wiring_not_a_carry_chain() -> None:
    # c >> 1 ^ (poly & -(c & 1)): each bit i < 31 is c[i + 1] ^ c[0] where the polynomial has
    # a one (13 of bits 0..30 of 0xEDB88320: one 2-input LUT each), else a wire; bit 31 is
    # c[0]. No carry cell (yosys folds the negation of a 0/1 value) and one LUT level.
    src = ("#[top] pub fn f(c: u32) -> u32 { (c >> 1u32) ^ (0xEDB88320u32 & (0u32 - (c & 1u32))) }")
    s, res = _estimate(src)
    assert _luts(res) == 13 and res.total["carry"] == 0
    assert max(s.finish_ns.values()) == CostModel(load_model("ice40")).level_ns


def test_state_and_inverted_result_of_one_value_take_two_luts_per_bit() -> None:
    # the state register holds s ^ x and the output register !(s ^ x): flip-flops do not
    # invert, so each of the 8 xor gates is built in both polarities (yosys: 16 SB_LUT4)
    src = """#[top] pub fn f(x: u8) -> u8 {
        reg s: u8 = 0;
        let n = s ^ x;
        s = n;
        !n
    }"""
    _, res = _estimate(src)
    assert _luts(res) == 16
    _, plain = _estimate(src.replace("!n", "n"))  # one polarity: 8 LUTs
    assert _luts(plain) == 8


def test_ice40_subtraction_inverts_lut_outputs_for_free() -> None:
    # iCE40's fitted a - b takes 2w - 1 LUTs against a + b's w: the inverters of b's bits,
    # which the characterisation read from flip-flops. Here b is an xor (a LUT per bit), so
    # the inversion folds into it: the subtraction costs what an addition does.
    ice40 = load_model("ice40")
    p = build_program("t.kera", "#[top] pub fn f(a: u16, b: u16, c: u16) -> u16 { a - (b ^ c) }")
    assert p.graph is not None
    g = lower_for_hardware(p.graph)
    sub = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "sub")
    area = CostModel(ice40).area(g, sub)
    assert area["lut"] == ice40.area("add", 16)["lut"] == 16
    assert ice40.area("sub", 16)["lut"] == pytest.approx(31, abs=0.1)  # from flip-flops
    ecp5 = load_model("ecp5")  # CCU2C inverts inside: no change
    assert CostModel(ecp5).area(g, sub)["lut"] == 2 * ecp5.area("sub", 16)["carry"]
    # an adder's sum leaves through a LUT too; a parameter (flip-flops) does not
    for src, luts in (("a - (b + c)", 16), ("a - b", 31)):
        p = build_program("t.kera", f"#[top] pub fn f(a: u16, b: u16, c: u16) -> u16 {{ {src} }}")
        assert p.graph is not None
        g = lower_for_hardware(p.graph)
        sub = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "sub")
        assert CostModel(ice40).area(g, sub)["lut"] == pytest.approx(luts, abs=0.1)


@pytest.mark.parametrize("diff", ["r - 1u32", "r + 0xFFFFFFFFu32"])
def test_isqrt_rows_are_as_wide_as_the_remainder_once_the_optimiser_narrows_them(diff: str) -> None:
    # rem >= k then rem - k (which the optimiser may write rem + (2**32 - k)): the taken
    # difference has no borrow. The optimiser computes it in 2 bits (r < 4, so r - 1 < 3) and
    # the select's top bits are zeros in the netlist, so the next row is narrow for yosys and
    # the model alike; the model itself does not know the range: without the optimiser the
    # difference's top bits are its carry or borrow (a 32-bit chain in yosys too).
    from kera.opt import optimize

    src = """#[top] pub fn f(x: u32, y: u32) -> bool {
        let r = x >> 30u32;
        let s = if r >= 1u32 { DIFF } else { r };
        ((s << 2u32) | 3u32) >= (y & 15u32)
    }""".replace("DIFF", diff)
    p = build_program("t.kera", src)
    assert p.graph is not None
    costs = CostModel(load_model("ice40"))
    widths = {}
    for level in (0, 2):
        g = lower_for_hardware(optimize(p.graph, level))
        sel = next(n for n in g.nodes if g.nodes[n].op == "select")
        assert all(b == ZERO for b in costs.network(g).bits[sel][2:]) == (level == 2)
        ge = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "ge"
                  and g.nodes[g.nodes[n].inputs[1]].op != "const")
        chain = costs.narrow_query(g, ge)  # the chain's width, for its area and its delay
        assert chain is not None
        widths[level] = chain[1]
    assert widths == {0: 32, 2: 4}  # s * 4 + 3 < 16 once s < 4 is in the netlist


_TABLE = ("const T: [u8; 64] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, "
          "6, 4, 3, 3, 8, 3, 2, 7, 9, 5, 0, 2, 8, 8, 4, 1, 9, 7, 1, 6, 9, 3, 9, 9, 3, 7, 5, 1, 0, "
          "5, 8, 2, 0, 9, 7, 4, 9, 4, 4, 5, 9, 2];\n")


def test_ecp5_maps_a_rom_bit_whole_and_with_the_logic_around_it() -> None:
    """A lookup in a 64-entry table of 4 live bits: each bit one 6-input function, a LUT6 (4
    sites), never split into smaller LUTs. Two in a chain (tests/opt/kernels/sbox_chain):
    abc9 takes each xor into the wide LUT of the bit it feeds, for one level less, so the
    chain costs 82 sites where the lookups alone would cost 32 (yosys 0.70 behind the
    serial shell: 78 LUT4; the ROM's fitted cost alone said 42)."""
    one = _TABLE + "#[top] pub fn f(a: u6) -> u8 { T[a] }"
    assert _luts(_estimate(one, "ecp5", 150.0)[1]) == 16
    chain = _TABLE + "#[top] pub fn f(a: u6, b: u6) -> u8 { T[a] ^ T[b ^ (T[a] as u6)] }"
    assert 70 <= _luts(_estimate(chain, "ecp5", 150.0)[1]) <= 90


def test_ecp5_maps_a_critical_7_input_function_onto_one_wide_lut() -> None:
    # the parity of 7 bits: two LUT4 levels (2 LUTs) or one $__ABC9_LUT7 (8 LUT4 sites and
    # 3 muxes, 759 ps + 300 ps of net against 2 x (379 + 300) ps): abc9 maps the critical path
    # for delay, so ECP5 spends 8 sites where iCE40, with LUT4s only, spends 2
    shifts = " ^ ".join(f"(x >> {i}u8)" for i in range(1, 7))
    src = f"#[top] pub fn f(x: u8) -> u8 {{ (x ^ {shifts}) & 1u8 }}"
    assert _luts(_estimate(src, "ecp5", 25.0)[1]) == 8
    assert _luts(_estimate(src)[1]) == 2
    # with 4 inputs one LUT4 is as fast as any: 1 site on both
    four = src.replace(" ^ (x >> 4u8) ^ (x >> 5u8) ^ (x >> 6u8)", "")
    assert _luts(_estimate(four, "ecp5", 25.0)[1]) == 1


def _optimised_row(arm: str, family: str):
    """Return (graph, the row's subtraction, cost model) of ``if r >= k { r - k } else { ARM }``
    after the optimiser (r < 256, k < 128 an xor: a LUT per bit, so its inversion is free)."""
    from kera.opt import optimize

    src = """#[top] pub fn f(x: u32, y: u32, z: u32) -> u32 {
        let r = x & 255u32;
        let k = (y ^ z) & 127u32;
        if r >= k { r - k } else { ARM }
    }""".replace("ARM", arm)
    p = build_program("t.kera", src)
    assert p.graph is not None
    g = lower_for_hardware(optimize(p.graph, 2))
    sub = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "sub")
    return g, sub, CostModel(load_model(family))


def test_ice40_select_of_a_guarded_difference_absorbs_its_sum_luts() -> None:
    # the optimiser computes the taken r - k in 8 bits (r - k <= 255); yosys builds the compare
    # and the subtraction as one ALU, and bit i of the select is a LUT of r[i], k[i], the
    # carry into bit i and the flag: the 8 sum LUTs of the subtraction (iCE40: the add's 8,
    # the inverters of k being free, k an xor) are the select's 8 LUTs
    g, sub, ice40 = _optimised_row("r", "ice40")
    assert sub.type.flat_width == 8 and ice40.absorbed_sums(g) == {sub.id: 8}
    assert ice40.area(g, sub)["lut"] == 0.0
    ge = next(g.nodes[n] for n in g.nodes if g.nodes[n].op == "ge")
    assert ice40.area(g, ge)["lut"] == 1.0  # the flag: the chain is the subtraction's
    _, _, ecp5 = _optimised_row("r", "ecp5")  # CCU2C sums in the carry cell: nothing absorbed
    assert ecp5.area(g, sub)["lut"] == 2 * load_model("ecp5").area("sub", 8)["carry"]
    g, sub, ice40 = _optimised_row("k", "ice40")  # else k: k[i] is an input already
    assert ice40.absorbed_sums(g) == {sub.id: 8}
    g, sub, ice40 = _optimised_row("z & 255u32", "ice40")  # 5 inputs a bit: two LUTs
    assert ice40.absorbed_sums(g) == {} and ice40.area(g, sub)["lut"] == 8.0


def test_copies_of_a_sign_through_a_select_are_one_lut() -> None:
    """``c ? (a as i16) : (b as i16)`` of two i8: bits 8-15 are each ``c ? a[7] : b[7]``,
    bit 7's function of the same bits: yosys's ``opt_merge`` keeps one cell, so 8 LUTs (the
    base network, which merges nothing, has 16)."""
    from kera.hls.lutmap import network, tool_network
    from kera.ir.graph import Graph, Region, param
    from kera.ir.types import BOOL, sint

    g = Graph("m.kera")
    c, a, b = param(g, 0, "c", BOOL), param(g, 1, "a", sint(8)), param(g, 2, "b", sint(8))
    wa, wb = g.add("cast", sint(16), (a,)), g.add("cast", sint(16), (b,))
    s = g.add("select", sint(16), (c, wa, wb))
    g.add_region(Region("f", (c, a, b), s))
    assert tool_network(g, 4).luts_by_node()[s] == 8
    assert network(g, 4).luts_by_node()[s] == 16
    assert CostModel(load_model("ice40")).area(g, g.nodes[s])["lut"] == 8


def test_ecp5_negation_merged_into_its_sum_is_one_full_width_chain_and_inverters() -> None:
    # The Verilog writes the negation as `26'd0 - n9`; alumacc merges it into the sum that
    # reads it: three terms (0, -n9, n5), which only maccmap builds: one 28-bit $alu (14
    # CCU2C, the inverted zeros below bit 9 are ones: no trimming) and a $not per bit of
    # a (16 LUT4). yosys 0.70 synth_ecp5 of this core: 14 CCU2C, 16 LUT4 (with `-n9`: 22
    # CCU2C, two chains).
    src = ("#[top] pub fn f(a: i16, b: i16) -> i32 { "
           "((b as i32) << 11u32) + (0i32 - ((a as i32) << 9u32)) }")
    loaded = kera.load(text=src, name="t.kera")
    model = load_model("ecp5")
    s = schedule(lower_for_hardware(loaded.graph), loaded.top, family="ecp5", clock_mhz=25.0,
                 model=model)
    res = estimate(s, CostModel(model))
    assert res.total["carry"] == 14 and _luts(res) == 14 * 2 + 16
    assert set(res.by_op) - {"handshake"} == {"add"}  # the negation is in the sum's chain


def test_an_ordering_against_a_constant_reads_only_the_bits_above_its_bounds_zeros() -> None:
    """``x > 0x7fff`` is ``x >= 0x8000``: with the bound's 15 trailing zeros it is ``x >> 15
    >= 1``, a function of the top 6 of 21 bits (yosys 0.70 `synth_ice40` on the i21 alone: 3
    LUT4s; fir_q15's saturation, which the network gave 6 LUTs per compare); ``x < -32768``
    likewise, and ``x >= 5`` (no trailing zero) keeps every bit. The timing's network keeps
    every bit: yosys often builds the compare as a longer carry chain."""
    from kera.hls.lutmap import tool_network

    cases = (("x > 32767i32", 17), ("x < -32768i32", 17), ("x <= 1023i32", 22),
             ("x >= 5i32", 32), ("x < 0i32", 1))
    for test, support in cases:
        s, _ = _estimate(f"#[top] pub fn f(x: i32) -> bool {{ {test} }}")
        g = s.graph
        net = tool_network(g, 4, area=True)  # the estimate's network (not the timing's)
        (bit,) = net.bits[g.regions[s.region].result]
        (whole,) = tool_network(g, 4).bits[g.regions[s.region].result]
        assert len(whole[0]) == 32 or support == 1, test
        assert len(bit[0]) == support, test


def test_a_negation_read_by_one_sum_is_one_subtraction_with_it() -> None:
    """``-a + b``: ``alumacc`` folds the negation into the sum's ``$macc``, one ALU ``b - a``
    (yosys 0.70 `synth_ice40`, i8 ports: 15 LUT4s and 7 carries, not a negation's 14 and
    a sum's 8); ``b - -a`` is ``b + a`` (8 LUT4s); a negation with two readers stays."""
    for src, lut in (("-a + b", 15), ("b - -a", 8)):
        _, res = _estimate(f"#[top] pub fn f(a: i8, b: i8) -> i8 {{ {src} }}")
        assert "neg" not in res.by_op and _luts(res) == lut, src
        assert res.total["carry"] == 7, src
    _, res = _estimate("#[top] pub fn f(a: i8, b: i8) -> (i8, i8) { let n = -a; (n + b, n) }")
    assert res.by_op["neg"]["lut"] > 0


def test_a_select_of_a_sum_and_its_operand_absorbs_the_sum_luts_whatever_its_condition() -> None:
    """``c ? a + b : a`` and ``c ? a - b : a`` are one LUT4 a bit with the chain (yosys 0.70
    `synth_ice40`, 8-bit ports: 8 and 15 LUT4s, as ``a + b`` and ``a - b`` alone); not where
    the other arm is the subtrahend that ports drive (``c ? a - b : b``: 21) or another value
    (``c ? a + b : x``: 16)."""
    src = "#[top] pub fn f(c: bool, a: u8, b: u8, x: u8) -> u8 {{ if c {{ {} }} else {{ {} }} }}"
    for arm, other, lut in (("a + b", "a", 8), ("a - b", "a", 15), ("a - b", "b", 23),
                            ("a + b", "x", 16)):
        _, res = _estimate(src.format(arm, other))
        assert _luts(res) == lut, (arm, other)


def test_one_inverter_per_flip_flop_bit_serves_every_chain_that_subtracts_it() -> None:
    """The rows of a ``u8`` division subtract ``b``'s low bits 8 times; yosys makes one
    ``$_NOT_`` cell a bit (0.70 `synth_ice40`: 80 LUT4s for ``[a / b, a % b]`` of which the
    handshake's 4). The subtractions' LUTs (their sums are the rows' selects'): 27 before,
    an inverter a bit in every row; 5 now, each bit's inverter charged once, at the fitted
    rate, to the first row that subtracts it."""
    _, res = _estimate("#[top] pub fn f(a: u8, b: u8) -> [u8; 2] { [a / b, a % b] }")
    assert res.by_op["sub"]["lut"] == 5


def test_flip_flops_of_one_signal_in_a_bank_are_one() -> None:
    """A bank holding ``a`` and ``a < 0`` (``a[7]``) keeps 8 flip-flops, not 9 (yosys's
    ``opt_merge``: edge_semantics' first bank)."""
    from kera.hls.lutmap import tool_network
    from kera.hls.resources import _bank_bits, _read_leaves

    p = build_program("t.kera", "#[top] pub fn f(a: i8) -> (i8, bool) { (a, a < 0i8) }")
    assert p.graph is not None
    g = lower_for_hardware(p.graph)
    net = tool_network(g, 4, area=True)
    a = next(n for n in g.nodes if g.nodes[n].op == "param")
    lt = next(n for n in g.nodes if g.nodes[n].op == "lt")
    assert net.live_bits(a) + net.live_bits(lt) == 9
    assert _bank_bits(net, [a, lt], _read_leaves(net)) == 8


def test_a_bank_copies_merge_and_overwritten_elements_keep_no_flip_flops() -> None:
    """sort8 at 55 MHz: a min/max made two stages back and the array element that holds it
    are one register in each bank (``opt_merge``), and an array element that the next stage
    overwrites unread has no flip-flops (``opt_clean``): 454 estimated before, 406 now; yosys
    0.70 keeps 390 (6 banks of 64 and the 6 valid bits)."""
    from kera.hls.synth import plan_schedule

    loaded = kera.load(SHARED_KERNELS / "peers" / "sort8.kera")
    s, board, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker",
                                    clock_mhz=55.0)
    assert s.latency == 6
    assert estimate(s, CostModel(model)).total["ff"] == 406


def test_a_rom_bit_that_every_entry_has_is_a_constant() -> None:
    """``[10, 20, 30, 40][k]``: bits 0, 6 and 7 are 0 in every entry, so the lookup's
    register keeps 5 flip-flops (edge_semantics' ``T[k]``)."""
    src = ("const T: [u8; 4] = [10, 20, 30, 40];\n"
           "#[top] pub fn f(k: u8) -> u8 { T[k] }")
    s, res = _estimate(src)
    net = CostModel(load_model("ice40")).network(s.graph)
    bits = net.bits[s.graph.regions[s.region].result]
    assert [i for i, b in enumerate(bits) if not b[0]] == [0, 6, 7]
    assert res.total["ff"] == 5 + s.latency


def test_a_state_element_nothing_reads_keeps_no_flip_flops() -> None:
    """fir_stream's delay line writes its last element, which no transfer reads: yosys
    removes those 16 flip-flops (128 held, 112 kept; core alone 134 FF with the sum's 21
    and the valid bit)."""
    src = ("#[top] pub fn f(x: i16) -> i16 {\n    reg d: [i16; 3] = [0; 3];\n"
           "    d[2] = d[1];\n    d[1] = d[0];\n    d[0] = x;\n    d[1] + d[2]\n}")
    s, res = _estimate(src)
    from kera.hls.lutmap import tool_network
    from kera.hls.memory import state_ff_bits
    from kera.hls.resources import dead_state_bits

    assert state_ff_bits(s) == 48
    net = tool_network(s.graph, 4, cut=lambda u, v: s.stage[u] < s.stage[v],
                       order=s.graph.topo_order(s.graph.regions[s.region]))
    assert dead_state_bits(s, net) == 16


def test_a_registered_select_of_a_constant_is_the_flip_flops_reset() -> None:
    """``q <= c ? 0 : a + b``: yosys's ``opt_dff`` makes ``c`` the flip-flops' synchronous
    reset and the select takes no LUT (0.70 `synth_ice40`, 8-bit ports: 8 LUT4s and 8
    SB_DFFSR, as ``a + b`` alone); where the select is also a state's next value, whose
    flip-flops have the reset already, it keeps its 8 LUTs (biquad_q14)."""
    _, res = _estimate("#[top] pub fn f(c: bool, a: u8, b: u8) -> u8 {\n"
                       "    if c { 0u8 } else { a + b }\n}")
    assert _luts(res) == 8
    src = ("#[top] pub fn f(c: bool, a: u8, b: u8) -> u8 {\n    reg s: u8 = 0;\n"
           "    let y = if c { 0u8 } else { a + b + s };\n    s = y;\n    y\n}")
    _, res = _estimate(src)
    assert res.by_op["select"]["lut"] == 8


def test_sb_mac16_registers_hold_the_products_that_a_bank_holds() -> None:
    """fir_q15 at 55 MHz on iCE40: bank 0 holds its four products by constants (and a tap, a
    negation, two inputs); ice40_dsp packs the products' flip-flops (no reset) into the
    SB_MAC16 output registers: yosys 0.70 `synth_ice40 -dsp` keeps 66 of the 146 bits there
    (246 FFs in all; the estimate had 332). ECP5's MULT18X18D gets none (yosys keeps them
    all in TRELLIS_FFs)."""
    from kera.hls.resources import dsp_registers
    from kera.hls.synth import plan_schedule
    from tests.conftest import EXAMPLES

    loaded = kera.load(EXAMPLES / "fir_q15.kera")
    s, board, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker",
                                    clock_mhz=55.0)
    costs = CostModel(model, board.capacities.dsp)
    inside = dsp_registers(s, costs, s.crossing())
    muls = {n for n in s.order if s.graph.nodes[n].op == "mul"}
    assert {k for k, _ in inside} == {0} and len(inside) == len(muls) == 4
    assert estimate(s, CostModel(model), board.capacities).total["ff"] == 252
    s5, board5, model5 = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150.0)
    assert dsp_registers(s5, CostModel(model5, board5.capacities.dsp), s5.crossing()) == set()


def test_a_registered_subtrahend_takes_its_inverters() -> None:
    """sort8 on iCE40: one stage, its compare-exchanges read LUT outputs (the inversions
    folded in): no inverter row; at 55 MHz (6 stages) the compares of a stage read the bank
    before it, flip-flops, and SB_CARRY cannot invert: one inverter LUT per registered bit
    they subtract (yosys 0.70: 459 LUT4s placed against 340 in one stage)."""
    from kera.hls.resources import registered_inverters
    from kera.hls.synth import plan_schedule
    from tests.conftest import SHARED_KERNELS

    loaded = kera.load(SHARED_KERNELS / "peers" / "sort8.kera")
    one, board, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker")
    six, _, _ = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=55.0)
    costs = CostModel(model, board.capacities.dsp)
    assert one.latency == 1 and registered_inverters(one, costs) == 0
    assert six.latency > 1 and 100 <= registered_inverters(six, costs) <= 130
    est = estimate(six, CostModel(model), board.capacities)
    assert est.by_op["inverter"]["lut"] == registered_inverters(six, costs)
    five, board5, model5 = plan_schedule(loaded.graph, loaded.top, board="ulx3s",
                                         clock_mhz=150.0)
    assert registered_inverters(five, CostModel(model5)) == 0  # CCU2C inverts inside


def test_a_sum_of_two_result_bits_is_gates_not_a_carry_chain_on_ice40() -> None:
    """yosys's ``_80_ice40_alu`` declines an ``$alu`` of at most 2 result bits (after
    ``wreduce``): ``(a & 1) + (b & 1)`` is 2 SB_LUT4 (the xor and the carry out's and) and
    no SB_CARRY (yosys 0.70 `synth_ice40`), where a chain would read the carry out of its
    SB_CARRY (1 LUT, 1 carry: popcount's pair sums at 55 MHz, 16 of them in popcount32).
    Of 2-bit fields the sum is a chain again: 2 SB_LUT4 and 2 SB_CARRY."""
    ice40 = CostModel(load_model("ice40"))
    assert ice40.gate_sum_bits == 2 and CostModel(load_model("ecp5")).gate_sum_bits == 4
    for mask, lut, carry in ((1, 2, 0), (3, 2, 2)):
        src = f"(a & {mask}u8) + (b & {mask}u8)"
        _, res = _estimate(f"#[top] pub fn f(a: u8, b: u8) -> u8 {{ {src} }}")
        assert (_luts(res), res.total["carry"]) == (lut, carry), mask


def test_a_negation_across_a_pipeline_register_reads_flip_flops_and_absorbs_nothing() -> None:
    """``c ? -x : x`` with ``x = a ^ b``: in one stage the select absorbs the negation's sum
    LUTs (the xor's LUT takes the chain's inversion: yosys 0.70 16 LUT4s a byte); with a
    pipeline register after the xor the chain reads flip-flops through inverters (19 LUT4s
    and 6 SB_CARRY a byte of registered ``x``), as edge_semantics at 55 MHz negates its
    division row's register a stage later. ``absorbed_in`` over the schedule's network
    (``kera.hls.resources.estimate``) sees the register; the graph's network does not."""
    from kera.hls.lutmap import tool_network
    from kera.hls.timing import absorbed_in

    p = build_program("t.kera", "#[top] pub fn f(c: bool, a: u8, b: u8) -> u8 {\n"
                      "    let x = a ^ b;\n    if c { 0u8 - x } else { x }\n}")
    assert p.graph is not None
    g = lower_for_hardware(p.graph)
    costs = CostModel(load_model("ice40"))
    neg = next(n for n in g.nodes if g.nodes[n].op in ("neg", "sub"))
    assert costs.absorbed_sums(g) == {neg: 8}
    xor = next(n for n in g.nodes if g.nodes[n].op == "xor")
    early = {xor, *g.nodes[xor].inputs}
    stage = {n: 0 if n in early else 1 for n in g.nodes}
    net = tool_network(g, 4, cut=lambda u, v: stage[u] < stage[v], order=list(g.nodes),
                       area=True)
    luts = net.luts_by_node()
    assert absorbed_in(g, net._input, luts, stage) == {}
    assert costs.area(g, g.nodes[neg], {})["lut"] > costs.area(g, g.nodes[neg])["lut"]
    same = dict.fromkeys(g.nodes, 0)  # no register: the graph's answer
    net = tool_network(g, 4, order=list(g.nodes), area=True)
    assert absorbed_in(g, net._input, net.luts_by_node(), same) == {neg: 8}


@pytest.mark.parametrize(("mask", "lut", "carry"), [("0x55", 8, 0), ("0xF1", 6, 3), ("0x33", 4, 4)])
def test_a_piece_of_a_split_sum_of_two_positions_is_gates_on_ice40(mask: str, lut: int,
                                                                   carry: int) -> None:
    """yosys splits a sum where its carries are known and techmaps each piece on its own:
    of ``(a & m) + (b & m)`` (8 bits, yosys 0.70 `synth_ice40`) the pieces of 2 positions
    (a pair and its carry out) are 2 SB_LUT4 each and no SB_CARRY (``0x55``: 8 and 0), the
    piece of bits 4-7 a chain (``0xF1``: 6 and 3), pieces of 3 positions chains whose carry
    out is the SB_CARRY's (``0x33``: 4 and 4)."""
    _, res = _estimate(f"#[top] pub fn f(a: u8, b: u8) -> u8 {{ (a & {mask}u8) + (b & {mask}u8) }}")
    assert (_luts(res), res.total["carry"]) == (lut, carry)


def test_a_wide_equality_costs_the_fitted_eq_not_a_lut_per_xor() -> None:
    """``a == b`` of u64 on iCE40: the 4-input cover gives each xor a LUT under the or tree
    (64 + 21 = 85); abc packs pairs of bits into LUTs where it can, as the characterised
    ``eq`` points measured (yosys 0.70 ``synth_ice40``: 57 SB_LUT4; 59 placed in the QoR
    shell). Where the cover is the smaller it stays (8 bits: the fitted curve 7.9)."""
    model = CostModel(load_model("ice40"))
    _, res = _estimate("#[top] pub fn f(a: u64, b: u64) -> bool { a == b }")
    assert res.by_op["eq"]["lut"] == round(model._query_area(("eq", 64, None))["lut"])
    assert abs(res.by_op["eq"]["lut"] - 57) <= 3
    _, res = _estimate("#[top] pub fn f(a: u8, b: u8) -> bool { a == b }")
    assert res.by_op["eq"]["lut"] <= round(model._query_area(("eq", 8, None))["lut"])
