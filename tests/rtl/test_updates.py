"""Chains of constant-index array updates are one wire (``kera.rtl.updates``).

An update whose only reader is the next update of the same array in the same stage gets no
wire: the chain's last update writes every element it set. Checked: which updates fold (not
one read twice, not the result, not across a register), that the text is exact against the
interpreter (sort8, fir_stream, a kernel written for the corner cases, with back-pressure),
and that AES's Verilog stays under 200 kB at every clock `synthesize` takes it to.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kera import _api, load
from kera.hls.synth import plan_schedule
from kera.rtl import emit_verilog
from kera.rtl.updates import folded_updates
from tests.conftest import EXAMPLES, SHARED_KERNELS, needs_verilator

SORT8 = SHARED_KERNELS / "peers" / "sort8.kera"

CORNERS = """
#[top]
pub fn corners(a: [u8; 4], x: u8) -> ([u8; 4], [u8; 4]) {
    let mut b = a;
    b[1] = x;
    let c = b;
    b[2] = x + 1;
    b[1] = x + 2;
    b[3] = c[1] ^ x;
    (c, b)
}
"""


def _plan(path: Path, board: str, mhz: float | None):  # noqa: ANN202
    loaded = load(path)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=mhz)
    return loaded, s


@pytest.mark.skipif(not SORT8.exists(), reason="../shared/kernels is absent")
def test_sort8_writes_each_stage_once() -> None:
    _, s = _plan(SORT8, "ulx3s", 150)
    folded = folded_updates(s)
    updates = [n for n in s.order if s.graph.nodes[n].op == "array_update"]
    assert folded and len(folded) < len(updates)
    v = emit_verilog(s, board="ulx3s", version="test")
    assert v == emit_verilog(s, board="ulx3s", version="test")
    # a stage's eight element writes are one concatenation of eight bytes, no chain of wires
    assert re.search(r"wire \[63:0\] \w+ = \{(\w+, ){7}\w+\};", v)
    assert not re.search(r"= \{r_\d+\[63:\d+\], \w+, r_\d+\[\d+:0\]\};", v)


def test_an_update_read_twice_keeps_its_wire(tmp_path: Path) -> None:
    src = tmp_path / "corners.kera"
    src.write_text(CORNERS)
    _, s = _plan(src, "ulx3s", None)
    g = s.graph
    users = g.users()
    folded = folded_updates(s)
    for n in folded:  # one reader, an update of it in the same stage
        (reader,) = users[n]
        assert g.nodes[reader].op == "array_update" and g.nodes[reader].inputs[0] == n
        assert s.stage[reader] == s.stage[n]
    twice = [n for n in s.order if g.nodes[n].op == "array_update" and len(users[n]) > 1]
    assert folded and twice  # `b` after `b[1] = x` is read by `c` too
    assert not folded & set(twice)
    region = g.regions[s.region]
    assert region.result not in folded


@needs_verilator
@pytest.mark.parametrize(("board", "mhz"), [("ulx3s", 150), ("icebreaker", None)])
def test_folded_updates_are_exact(tmp_path: Path, board: str, mhz: float | None) -> None:
    src = tmp_path / "corners.kera"
    src.write_text(CORNERS)
    rows = [{"a": [(7 * i + k) % 256 for k in range(4)], "x": (37 * i) % 256} for i in range(64)]
    loaded = load(src)
    assert _api.simulate(loaded, rows, board=board, clock_mhz=mhz, backpressure=True).passed
    for path, vectors in ((SORT8, SORT8.with_suffix(".vectors.jsonl")),
                          (EXAMPLES / "fir_stream.kera",
                           EXAMPLES / "fir_stream.vectors.jsonl")):
        if not path.exists():
            continue
        lines = vectors.read_text().splitlines()[:200]
        inputs = [json.loads(x)["inputs"] for x in lines if x.strip()]
        sim = _api.simulate(load(path), inputs, board=board, clock_mhz=mhz, backpressure=True)
        assert sim.passed, path.name


@pytest.mark.parametrize(("board", "mhz"), [("ulx3s", None), ("ulx3s", 150)])
def test_aes_verilog_stays_under_200_kb(board: str, mhz: float | None) -> None:
    _, s = _plan(EXAMPLES / "aes128.kera", board, mhz)
    v = emit_verilog(s, board=board, version="test")
    assert len(v.encode()) < 200_000  # 211.6 kB at the ECP5 board clock, one wire per byte
