"""A comparison and the narrower subtraction of its operands' low bits: one difference.

``kera.rtl.borrow`` pairs them; the emitter writes the comparison as the borrow of a
difference one bit wider than its operands and the subtraction as that difference's low bits
(isqrt32's rows). Checked here: which pairs are made (and that a subtraction as wide as its
comparison is left to yosys), that the text is exact in simulation against the interpreter
(isqrt32 on both families, an exhaustive 16-bit root), that yosys builds one chain per row,
and that the estimate counts that chain.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kera import _api, load
from kera.hls.models import load_model
from kera.hls.resources import estimate
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog
from kera.rtl.borrow import shared_borrows
from tests.conftest import EXAMPLES, SHARED_KERNELS, ecp5_cells, needs_verilator, needs_yosys
from tests.opt.test_guarded import ISQRT16

ISQRT32 = SHARED_KERNELS / "peers" / "isqrt32.kera"
pytestmark = pytest.mark.skipif(not ISQRT32.exists(), reason="../shared/kernels is absent")


def _plan(path: Path, board: str, mhz: float | None):  # noqa: ANN202
    loaded = load(path)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=mhz)
    return loaded, s


def test_isqrt_rows_share_one_difference() -> None:
    _, s = _plan(ISQRT32, "ulx3s", 150)
    pairs = {p.compare: p for p in shared_borrows(s).values()}
    assert len(pairs) >= 12  # nearly every row (row 0's difference is a 2-bit constant add)
    g = s.graph
    for p in pairs.values():
        sub = g.nodes[p.sub]
        assert g.nodes[p.compare].op == "ge" and not p.less
        assert sub.op == "sub" and sub.type.flat_width < p.width
        assert s.stage[p.sub] == s.stage[p.compare]
    v = emit_verilog(s, board="ulx3s", version="test")
    assert v == emit_verilog(s, board="ulx3s", version="test")
    diffs = [line for line in v.splitlines() if "_d = {1'b0, " in line]
    assert len(diffs) == len(pairs)
    compares = [n for n in s.order if g.nodes[n].op == "ge"
                and all(g.nodes[i].op != "const" for i in g.nodes[n].inputs)]
    left = re.findall(r"= [a-z_]\w* >= [a-z_]\w*;", v)  # rows whose difference is gates
    assert len(left) == len(compares) - len(pairs) <= 2
    for p in pairs.values():  # the narrow difference is the wide one's low bits
        assert any(line.strip().endswith(f"_d[{g.nodes[p.sub].type.flat_width - 1}:0];")
                   for line in v.splitlines())


def test_a_subtraction_as_wide_as_its_comparison_is_left_to_yosys() -> None:
    _, s = _plan(EXAMPLES / "gcd16.kera", "ulx3s", 150)
    g = s.graph
    assert any(n.op == "ge" for n in g.nodes.values())
    assert any(n.op == "sub" for n in g.nodes.values())
    assert shared_borrows(s) == {}  # `x >= y` and `x - y` of one width: one ALU already
    assert re.search(r"= [a-z_]\w* >= [a-z_]\w*;", emit_verilog(s, board="ulx3s", version="t"))


@needs_verilator
@pytest.mark.parametrize(("board", "mhz"), [("ulx3s", 150), ("ulx3s", None), ("icebreaker", 55)])
def test_isqrt32_is_exact_with_shared_borrows(board: str, mhz: float | None) -> None:
    loaded, s = _plan(ISQRT32, board, mhz)
    assert shared_borrows(s)
    lines = (ISQRT32.parent / "isqrt32.vectors.jsonl").read_text().splitlines()
    rows = [json.loads(x)["inputs"] for x in lines[:300] if x.strip()]
    rows += [{"x": x} for x in (0, 1, 2, 3, 4, 2**32 - 1, 2**32 - 2, 2**31, 65535 ** 2,
                                65535 ** 2 - 1, 65536 ** 2 - 1)]
    sim = _api.simulate(loaded, rows, board=board, clock_mhz=mhz, backpressure=True)
    assert sim.passed


@needs_verilator
def test_isqrt16_is_exact_on_every_input(tmp_path: Path) -> None:
    src = tmp_path / "isqrt16.kera"
    src.write_text(ISQRT16)
    loaded, s = _plan(src, "ulx3s", 150)
    assert shared_borrows(s)
    rows = [{"x": x} for x in range(1 << 16)]
    sim = _api.simulate(loaded, rows, board="ulx3s", clock_mhz=150)
    assert sim.passed


@needs_yosys
def test_yosys_builds_one_chain_a_row_and_the_estimate_counts_it(tmp_path: Path) -> None:
    _, s = _plan(ISQRT32, "ulx3s", 150)
    cells = ecp5_cells(emit_verilog(s, board="ulx3s", version="test"), "isqrt32", tmp_path)
    carries = sum(c["type"] == "CCU2C" for c in cells.values())
    est = estimate(s, CostModel(load_model("ecp5"))).total
    assert abs(est["carry"] - carries) <= 2  # one CCU2C short at most (row 0's 3-bit add)
    # each paired row is one chain of ceil((n + 1) / 2) cells: no comparison's own cells
    rows = sum(-(-(p.width + 1) // 2) for p in {q.compare: q for q in
                                               shared_borrows(s).values()}.values())
    assert rows <= carries
