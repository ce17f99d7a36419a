"""The state fields of report.json and report.txt (STATE.md, "Reports")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from kera.elaborate import build_program
from kera.hls.report import load_schema
from kera.hls.synth import synthesize
from kera.opt import optimize
from tests.conftest import needs_yosys
from tests.rtl.state_kernels import ACC, HISTOGRAM, MAC, with_ii

GOLDEN = Path(__file__).parent / "golden"


def _synth(tmp_path: Path, name: str, text: str, clock: float) -> dict:
    p = build_program(name, text)
    assert p.graph is not None and p.top is not None
    synthesize(optimize(p.graph, 2), p.top, clock_mhz=clock, outdir=tmp_path, source=p)
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, load_schema())
    return report


def test_the_accumulator_report(tmp_path: Path) -> None:
    r = _synth(tmp_path, "acc.kera", ACC, 12.0)
    assert r["state"] == [{"name": "sum", "kind": "reg", "bits": 32, "source": "acc.kera:3:9"}]
    assert r["ii_bound"] == {"requested": None, "rec_mii": 1, "res_mii": 1, "chosen": 1,
                             "binding": "rec_mii"}
    (rec,) = r["recurrences"]
    assert rec["state"] == "sum" and rec["cycles"] == 1 and rec["delay_ns"] > 0
    assert [(p["op"], p["source"]) for p in rec["path"]] == [("add", "acc.kera:4:11")]
    assert r["reset_cycles"] == 0 and r["deadline"]["reset_to_first_accept_cycles"] == 0
    assert r["estimate"]["ff"] >= 32 + 32  # the state register and the output bank


def test_a_requested_ii_binds(tmp_path: Path) -> None:
    r = _synth(tmp_path, "acc.kera", with_ii(ACC, 3), 12.0)
    assert r["ii_bound"]["binding"] == "requested" and r["ii"] == 3
    assert r["ii_bound"]["requested"] == 3


def test_a_pure_report_has_no_state_fields(tmp_path: Path) -> None:
    r = _synth(tmp_path, "f.kera", "#[top]\npub fn f(x: u8) -> u8 { x + 1 }\n", 12.0)
    assert not {"state", "ii_bound", "recurrences", "reset_cycles"} & set(r)


def test_golden_report_of_a_multiply_add_recurrence(tmp_path: Path) -> None:
    r = _synth(tmp_path, "mac.kera", MAC, 30.0)
    assert r["ii_bound"]["binding"] == "rec_mii" and r["ii"] == 2
    text = (tmp_path / "report.txt").read_text(encoding="utf-8")
    path = GOLDEN / "mac_30mhz_state.txt"
    if os.environ.get("KERA_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), \
        f"{path.name} changed; if intended, rerun with KERA_UPDATE_GOLDEN=1"
    assert "Worst recurrence: state `s`" in text and "| s = s * x + x;" in text


@pytest.mark.slow
@needs_yosys
def test_the_histogram_places_one_block_ram_and_the_accumulator_meets_the_board_clock(
        tmp_path: Path) -> None:
    import kera

    hist = tmp_path / "hist.kera"
    hist.write_text(HISTOGRAM, encoding="utf-8")
    r = kera.synthesize(kera.load(hist), "icebreaker", outdir=tmp_path / "h", pnr=True).report
    m = r["measured"]
    assert (r["ii"], m["bram"], m["ram_cells"]) == (1, 1, {"SB_RAM40_4K": 1})
    assert m["pnr_used"] == {"ICESTORM_RAM": 1} and r["timing"]["met"]
    acc = tmp_path / "acc.kera"
    acc.write_text(ACC, encoding="utf-8")
    a = kera.synthesize(kera.load(acc), "icebreaker", outdir=tmp_path / "a", pnr=True).report
    assert a["ii"] == 1 and a["clock_mhz"] == 12.0 and a["timing"]["met"]
    assert a["measured"]["fmax_mhz"] >= 12.0 and a["measured"]["bram"] == 0
