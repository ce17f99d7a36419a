"""Register binding on the modulo circle (kera/hls/regbind.py): correctness and what it saves."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pytest

import kera
from kera.hls.pipeline import Schedule
from kera.hls.regbind import bind_registers, unregistered
from kera.hls.resources import estimate
from kera.hls.timing import CostModel
from tests.conftest import EXAMPLES


@cache
def _plan(name: str, ii: int, board: str = "icebreaker", clock: float | None = None) -> tuple:
    loaded = kera.load(EXAMPLES / f"{name}.kera")
    graph, top = loaded.graph, loaded.top
    from kera.hls.synth import plan_schedule

    return plan_schedule(graph, top, board=board, clock_mhz=clock, ii=ii)


def _replay(s: Schedule, mix: bool = True, transfers: int = 5, lines: bool = False) -> None:
    """Run the binding's registers cycle by cycle; every read must find its own value.

    Transfer ``k`` enters at cycle ``k * ii`` and is in stage ``s`` at cycle ``k * ii + s``;
    a copy is loaded at the edge ending its first stage, and bank ``b`` is read in stage
    ``b + 1``; a delay line shifts at every edge, tap 1 from its unit's output (the op of the
    counter's residue). This is the timing contract, checked independently of the colouring.
    """
    b = bind_registers(s, unregistered(s), mix=mix, lines=lines)
    ii = s.ii
    content: dict[int, tuple[bytes, int] | None] = {}
    loads: dict[int, list[tuple[int, bytes]]] = {}  # residue -> (register, value)
    first = {}
    for r, reg in enumerate(b.registers):
        for c in reg.copies:
            if reg.tap is None:
                loads.setdefault(c.first % ii, []).append((r, c.nid))
                first[(r, c.nid, c.first % ii)] = c.first
    taps = {r.tap: k for k, r in enumerate(b.registers) if r.tap is not None}
    units = {u.name: u for u in s.units if len(u.ops) > 1}
    for t in range((transfers + 2) * ii + s.latency):
        for bank_no, bank in enumerate(s.crossing()):  # reads in stage bank_no + 1, cycle t
            k, rem = divmod(t - bank_no - 1, ii)
            if rem or k < 0 or k >= transfers:
                continue
            for nid in bank:
                if (bank_no, nid) in b.at:
                    assert content.get(b.at[(bank_no, nid)]) == (nid, k), (bank_no, t)
        shifted: dict[int, tuple[bytes, int] | None] = {}
        for (name, tap), r in taps.items():  # the edge that ends cycle t
            if tap > 1:
                shifted[r] = content.get(taps[(name, tap - 1)])
                continue
            shifted[r] = None
            for nid in units[name].ops:
                k, rem = divmod(t - s.stage[nid], ii)
                if not rem and 0 <= k < transfers:
                    shifted[r] = (nid, k)
        for r, nid in loads.get(t % ii, []):
            k, rem = divmod(t - first[(r, nid, t % ii)], ii)
            if 0 <= k < transfers and not rem:
                content[r] = (nid, k)
        content.update(shifted)


@pytest.mark.parametrize(("name", "ii", "clock"), [
    ("matmul4", 3, 100.0), ("fir8", 2, 100.0), ("aes128", 4, 80.0), ("cordic", 8, 100.0),
    ("gcd16", 3, 100.0), ("xtea", 5, 100.0)])
def test_every_read_finds_its_value(name: str, ii: int, clock: float) -> None:
    s = _plan(name, ii, "ulx3s", clock)[0]
    assert s.latency > 1
    _replay(s)
    _replay(s, mix=False)
    _replay(s, lines=True)


CHAIN = """#[top]
#[pipeline(ii = 4)]
pub fn chain(x: u16, y: u16) -> u16 {
    let mut a = x;
    let mut b = y;
    for t in 0..4 {
        let c = a * b;
        a = b;
        b = c;
    }
    b
}
"""


def test_a_delay_line_gives_each_iteration_one_tap(tmp_path: Path) -> None:
    # c_t = c_{t-2} * c_{t-1} folded on one multiplier, one per stage 0..3: iteration t reads
    # c_{t-1} at tap 1 and c_{t-2} at tap 2 of the unit's line (2 x 16 FFs) whatever t is,
    # so port 1 reads {y, tap 1} and port 0 {x, bank-0 register of y, tap 2}. Binding the
    # values to registers instead gives c_0 and c_2 one register and c_1 another: 4 sources.
    from kera.hls.regbind import port_bits
    from kera.hls.sharing import unit_sources

    src = tmp_path / "chain.kera"
    src.write_text(CHAIN)
    loaded = kera.load(src)
    from kera.hls.synth import plan_schedule

    s = plan_schedule(loaded.graph, loaded.top, board="icebreaker", ii=4)[0]
    (unit,) = [u for u in s.units if len(u.ops) > 1]
    assert [s.stage[n] for n in unit.ops] == [0, 1, 2, 3]
    lined = bind_registers(s, unregistered(s), lines=True)
    assert sorted(r.tap for r in lined.registers if r.tap) == [(unit.name, 1), (unit.name, 2)]
    assert lined.bits == 3 * 16 and lined.mux_bits() == 0
    assert port_bits(s, lined) == 16 * (3 - 1) + 16 * (2 - 1)
    plain = bind_registers(s, unregistered(s))
    assert port_bits(s, plain) == 16 * (4 - 1) + 16 * (2 - 1)
    assert s.register_binding.registers == lined.registers  # the cheaper: 96 < 112 bits
    assert [max(row) + 1 for row in unit_sources(s, unit)] == [3, 2]
    _replay(s, lines=True)
    from kera.hls.fit import flop_cells

    assert flop_cells(s) == 16  # tap 2 is loaded from tap 1: an iCE40 cell with no LUT


def test_every_bank_copy_is_bound_to_a_register_of_its_width() -> None:
    s = _plan("aes128", 4)[0]
    b = s.register_binding
    assert b is not None and s.aligned and b.saves
    skip = unregistered(s)
    for bank_no, bank in enumerate(s.crossing()):
        for nid in bank:
            width = s.graph.nodes[nid].type.flat_width
            if width and nid not in skip:
                assert b.registers[b.at[(bank_no, nid)]].width == width
    assert b.bits < b.unfolded_bits <= b.plain_bits
    plain = bind_registers(s, skip, mix=False)
    assert all(len(r.sources) == 1 for r in plain.registers) and plain.mux_bits() == 0
    assert b.bits <= plain.bits


def test_ii_1_has_no_binding_and_keeps_its_registers() -> None:
    s = _plan("matmul4", 1)[0]
    assert s.register_binding is None and not s.aligned


def test_sha256_at_ii_64_folds_onto_one_round() -> None:
    one, board, model = _plan("sha256", 1, "ulx3s", 100.0)
    folded = _plan("sha256", 64, "ulx3s", 100.0)[0]
    costs = CostModel(model, board.capacities.dsp)
    whole = estimate(one, costs, board.capacities).total
    ff1, lut1 = whole["ff"], whole["lut"]
    ff64 = estimate(folded, costs, board.capacities)
    assert folded.aligned and len([u for u in folded.units if len(u.ops) > 1]) >= 25
    assert ff64.total["ff"] * 10 < ff1 and ff64.total["lut"] * 2 < lut1, (ff64.total, ff1, lut1)
    assert ff64.register_bits == folded.register_binding.bits
    assert any(r.tap for r in folded.register_binding.registers)  # the units' delay lines
    plain = estimate(dataclasses.replace(folded, register_mux=False), costs, board.capacities)
    assert plain.total["ff"] > ff64.total["ff"]


def test_verilog_of_the_binding_declares_each_register_once(tmp_path: Path) -> None:
    from kera.rtl import emit_verilog

    s = _plan("matmul4", 3)[0]
    text = emit_verilog(s, board="icebreaker", version="test")
    b = s.register_binding
    assert b is not None
    assert text.count("\n    reg ") - s.latency - 1 == len(b.registers)  # + valid bits, phase
    assert f"// {len(b.registers)} registers hold every bank's values ({b.bits} bits" in text


def test_sha256_at_ii_64_takes_the_plan_that_needs_fewer_sites(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """At 25 MHz the fixpoint leaves 96 xors and 53 adds private, and the units then read each
    private value through its own multiplexer input; sharing every class (the round that saved
    the most) needs half the LUTs. At 100 MHz the eager plan's delay lines cost more flip-flops
    than it saves LUTs, and the fixpoint's stays."""
    from kera.hls.sharing import decide
    from kera.hls.synth import plan_schedule

    slow, board, model = _plan("sha256", 64, "ulx3s", 25.0)
    costs = CostModel(model, board.capacities.dsp)
    t = estimate(slow, costs, board.capacities).total
    assert not any("not shared" in n for n in slow.notes)
    assert any("not shared" in n for n in _plan("sha256", 64, "ulx3s", 100.0)[0].notes)
    fixpoint = decide._fixpoint
    monkeypatch.setattr(decide, "_fixpoint", lambda *a: fixpoint(*a)[-1:])  # its last round
    loaded = kera.load(EXAMPLES / "sha256.kera")
    alone = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=25.0, ii=64)[0]
    u = estimate(alone, costs, board.capacities).total
    assert any("not shared" in n for n in alone.notes)
    assert 2 * t["lut"] < u["lut"] and max(t["lut"], t["ff"]) < max(u["lut"], u["ff"]), (t, u)


def test_sums_of_the_same_unit_outputs_are_one_adder() -> None:
    """matmul4 at II 4 on ECP5: the 48 sums read the 16 multiply units' outputs, the same wires
    at every counter slot, four sums of one pair of units in four stages: 12 adders, as yosys
    merges them (placed: 192 CCU2C, 16 bits each)."""
    from kera.hls.resources import twin_ops
    from kera.hls.synth import plan_schedule

    text = (EXAMPLES / "matmul4.kera").read_text().replace("ii = 1", "ii = 4")
    loaded = kera.load(text=text)
    s, board, model = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=25.0)
    twins = twin_ops(s)
    adds = [n for n in s.order if s.graph.nodes[n].op == "add"]
    assert len(adds) == 48 and len(twins & set(adds)) == 36
    area = estimate(s, CostModel(model, board.capacities.dsp), board.capacities)
    assert area.by_op["add"]["count"] == 12 and area.by_op["add"]["carry"] == 192


def test_a_shared_product_feeds_no_dsp_accumulator() -> None:
    """fir8 on iCE40: at II 1 two sums fold into their SB_MAC16s; at II 2 the one multiply
    unit's product feeds a different sum at each slot, so both sums stay in the fabric
    (placed: 182 LUTs; estimated 145 while they were counted in the DSP, 179 now)."""
    from kera.hls.resources import dsp_accumulators
    from kera.hls.synth import plan_schedule

    text = (EXAMPLES / "fir8.kera").read_text()
    one, board, model = _plan("fir8", 1)
    costs = CostModel(model, board.capacities.dsp)
    assert dsp_accumulators(one, costs)
    loaded = kera.load(text=text.replace("ii = 1", "ii = 2"))
    two = plan_schedule(loaded.graph, loaded.top, board="icebreaker")[0]
    assert two.bound() and not dsp_accumulators(two, costs)
