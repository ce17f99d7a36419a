"""report.json / report.txt: the INTERFACES.md keys, the schema, determinism, the text form."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from kera.elaborate import build_program
from kera.hls.lower import lower_for_hardware
from kera.hls.report import build_report, canonical, dumps, load_schema, render_text
from kera.hls.schedule import schedule
from kera.hls.timing import SimpleModel
from tests.conftest import ROOT

MODEL = SimpleModel()
SRC = """\
// a small filter
#[top]
pub fn f(x: [u16; 4], k: u16) -> u32 {
    let mut acc = 0u32;
    for i in 0..4 {
        acc += (x[i] as u32) * (k as u32);
    }
    acc / 3
}
"""
INTERFACE_KEYS = {"fingerprint", "top", "board", "family", "device", "clock_mhz",
                  "latency_cycles", "ii", "stages", "estimate", "critical_path"}  # fmt: skip


def _report(clock: float = 50.0, measured: dict | None = None, board: str = "icebreaker"):
    p = build_program("f.kera", SRC)
    assert p.graph is not None and p.top is not None, p.diagnostics
    g = lower_for_hardware(p.graph)
    s = schedule(g, p.top, family="simple", clock_mhz=clock, model=MODEL)
    report = build_report(s, board, model=MODEL, source=p.source,
                          fingerprint=p.graph.fingerprint(), margin=0.1, measured=measured)
    return p, s, report


def test_interface_keys_and_schema() -> None:
    p, s, r = _report()
    assert INTERFACE_KEYS <= set(r)
    jsonschema.Draft202012Validator.check_schema(load_schema())
    jsonschema.validate(r, load_schema())
    assert r["fingerprint"] == p.graph.fingerprint() != r["schedule_fingerprint"]
    assert (r["top"], r["board"], r["family"], r["device"]) == ("f", "icebreaker", "ice40", "up5k")
    assert r["latency_cycles"] == s.latency == len(r["stages"]) > 1
    assert [st["index"] for st in r["stages"]] == list(range(s.latency))
    assert r["estimate"]["fmax_mhz"] >= 50.0 * 0.999
    assert "measured" not in r
    assert r["compiler"]["name"] == "kera-hls" and r["options"]["clock_mhz"] == 50.0
    assert r["model"]["name"] == "simple" and r["schedule_method"] == "sdc"
    for step in r["critical_path"]:
        assert step["source"].startswith("f.kera:") and step["delay_ns"] > 0
    # the register total is the crossing widths plus one valid bit per stage
    regs = r["estimate"]["registers"]
    assert regs["bits"] == sum(st["register_bits"] for st in r["stages"])
    # constant and duplicate register bits are trimmed (as yosys does): at most one FF per bit
    assert 0 < r["estimate"]["ff"] <= regs["bits"] + regs["valid_bits"]


def test_measured_only_when_given() -> None:
    measured = {"lut": 321, "ff": 100, "dsp": 1, "fmax_mhz": 48.25, "tool": "nextpnr-ice40 0.11"}
    _, _, r = _report(measured=measured)
    jsonschema.validate(r, load_schema())
    assert r["measured"] == measured
    text = render_text(r)
    assert "measured" in text and "321" in text and "nextpnr-ice40 0.11" in text


def test_rounding_and_bytes_are_stable() -> None:
    _, _, a = _report()
    _, _, b = _report()
    assert dumps(a) == dumps(b)
    assert json.loads(dumps(a)) == a  # already canonical
    assert dumps(a).endswith("}\n")

    def floats(x: object) -> list[float]:
        if isinstance(x, float):
            return [x]
        if isinstance(x, dict):
            return [f for v in x.values() for f in floats(v)]
        if isinstance(x, list):
            return [f for v in x for f in floats(v)]
        return []

    assert all(round(f, 3) == f for f in floats(a))
    assert canonical({"x": -0.0, "y": (1.23456,)}) == {"x": 0.0, "y": [1.235]}
    with pytest.raises(ValueError):
        canonical({"x": float("nan")})


_SCRIPT = """
import sys
from kera.hls.synth import synthesize
from kera.hls.timing import SimpleModel
from kera.elaborate import build_program
src = open(sys.argv[1], encoding="utf-8").read()
p = build_program("f.kera", src)
synthesize(p.graph, p.top, board="icebreaker", clock_mhz=40.0, outdir=sys.argv[2], source=p,
           model=SimpleModel())
"""


def test_identical_across_runs_and_hash_seeds(tmp_path: Path) -> None:
    src = tmp_path / "f.kera"
    src.write_text(SRC, encoding="utf-8")
    outs = []
    for seed in ("0", "4242"):
        out = tmp_path / f"out{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-c", _SCRIPT, str(src), str(out)], check=True, env=env,
                       cwd=tmp_path, timeout=120)  # fmt: skip
        outs.append(((out / "report.json").read_bytes(), (out / "report.txt").read_bytes()))
    assert outs[0] == outs[1]


def test_text_report() -> None:
    p, s, r = _report()
    text = render_text(r, p.source)
    assert f"latency {s.latency} cycles, II 1" in text
    for st in r["stages"]:
        assert f"  {st['index']:>5}   {st['delay_ns']:>8.3f}" in text
    for label in ("LUT", "FF", "DSP", "BRAM", "Fmax MHz", "Critical path"):
        assert label in text
    path = r["critical_path"]
    assert path[0]["source"] in text
    line = int(path[0]["source"].split(":")[1])
    assert p.source.line_text(line).strip() in text  # mapped back to the source line
    assert render_text(r) == render_text(json.loads(dumps(r)))


def test_warnings_when_it_does_not_fit() -> None:
    src = "#[top] pub fn m(a: [u32; 12], b: u32) -> [u32; 12] {\n" + (
        "    [" + ", ".join(f"a[{i}] * b" for i in range(12)) + "]\n}\n")
    p = build_program("m.kera", src)
    assert p.graph is not None
    s = schedule(p.graph, "m", family="simple", clock_mhz=12.0, model=MODEL)
    r = build_report(s, "icebreaker", model=MODEL, source=p.source)
    # 12 multiplies of 4 DSPs each: 2 take the 8 DSPs, the other 10 are LUT multipliers
    assert r["estimate"]["dsp"] == 8 and r["capacities"]["dsp"] == 8
    assert r["estimate"]["lut"] >= 10 * 32 * 32
    assert any(" LUT but" in w and "will not fit" in w for w in r["warnings"])
    assert r["estimate"]["utilisation"]["dsp"] == 1.0
    assert "Warnings" in render_text(r)
    jsonschema.validate(r, load_schema())


def test_docs_explain_every_top_level_field() -> None:
    docs = ROOT / "docs" / "reports.md"
    if not docs.exists():
        pytest.skip("docs/reports.md is absent")
    text = docs.read_text(encoding="utf-8")
    _, _, r = _report(measured={"lut": 1})
    missing = [k for k in [*r, *r["estimate"]] if f"`{k}`" not in text]
    assert not missing
