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


def _replay(s: Schedule, mix: bool = True, transfers: int = 5) -> None:
    """Run the binding's registers cycle by cycle; every read must find its own value.

    Transfer ``k`` enters at cycle ``k * ii`` and is in stage ``s`` at cycle ``k * ii + s``;
    a copy is loaded at the edge ending its first stage, and bank ``b`` is read in stage
    ``b + 1``. This is the timing contract, checked independently of how the arcs were coloured.
    """
    b = bind_registers(s, unregistered(s), mix=mix)
    ii = s.ii
    content: dict[int, tuple[bytes, int]] = {}
    loads: dict[int, list[tuple[int, bytes]]] = {}  # residue -> (register, value)
    for r, reg in enumerate(b.registers):
        for c in reg.copies:
            loads.setdefault(c.first % ii, []).append((r, c.nid))
    first = {}
    for r, reg in enumerate(b.registers):
        for c in reg.copies:
            first[(r, c.nid, c.first % ii)] = c.first
    for t in range((transfers + 2) * ii + s.latency):
        for bank_no, bank in enumerate(s.crossing()):  # reads in stage bank_no + 1, cycle t
            k, rem = divmod(t - bank_no - 1, ii)
            if rem or k < 0 or k >= transfers:
                continue
            for nid in bank:
                if (bank_no, nid) in b.at:
                    assert content.get(b.at[(bank_no, nid)]) == (nid, k), (bank_no, t)
        for r, nid in loads.get(t % ii, []):  # the edge that ends cycle t
            k, rem = divmod(t - first[(r, nid, t % ii)], ii)
            if 0 <= k < transfers and not rem:
                content[r] = (nid, k)


@pytest.mark.parametrize(("name", "ii", "clock"), [
    ("matmul4", 3, 100.0), ("fir8", 2, 100.0), ("aes128", 4, 80.0), ("cordic", 8, 100.0),
    ("gcd16", 3, 100.0), ("xtea", 5, 100.0)])
def test_every_read_finds_its_value(name: str, ii: int, clock: float) -> None:
    s = _plan(name, ii, "ulx3s", clock)[0]
    assert s.latency > 1
    _replay(s)
    _replay(s, mix=False)


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


def test_sha256_at_ii_64_needs_a_tenth_of_the_flip_flops() -> None:
    one, board, model = _plan("sha256", 1, "ulx3s", 100.0)
    folded = _plan("sha256", 64, "ulx3s", 100.0)[0]
    costs = CostModel(model, board.capacities.dsp)
    ff1 = estimate(one, costs, board.capacities).total["ff"]
    ff64 = estimate(folded, costs, board.capacities)
    assert folded.aligned and folded.latency == one.latency
    assert ff64.total["ff"] * 10 < ff1, (ff64.total["ff"], ff1)
    assert ff64.register_bits == folded.register_binding.bits
    assert ff64.by_op["reg_mux"]["lut"] > 0  # the register multiplexers are paid in LUTs
    plain = estimate(dataclasses.replace(folded, register_mux=False), costs, board.capacities)
    assert "reg_mux" not in plain.by_op and plain.total["ff"] > ff64.total["ff"]


def test_verilog_of_the_binding_declares_each_register_once(tmp_path: Path) -> None:
    from kera.rtl import emit_verilog

    s = _plan("matmul4", 3)[0]
    text = emit_verilog(s, board="icebreaker", version="test")
    b = s.register_binding
    assert b is not None
    assert text.count("\n    reg ") - s.latency - 1 == len(b.registers)  # + valid bits, phase
    assert f"// {len(b.registers)} registers hold every bank's values ({b.bits} bits" in text
