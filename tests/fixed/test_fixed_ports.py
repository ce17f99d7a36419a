"""The formats stay on the ports (FIXED.md): the Verilog header, report.json and report.txt."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kera.cli import main
from tests.conftest import EXAMPLES

GOLDEN = Path(__file__).parent / "golden" / "fir_q15_ports.txt"


def _synthesize(name: str, out: Path) -> tuple[str, dict, str]:
    assert main(["synthesize", str(EXAMPLES / f"{name}.kera"), "-q", "-o", str(out)]) == 0
    return ((out / f"{name}.v").read_text(encoding="utf-8"),
            json.loads((out / "report.json").read_text(encoding="utf-8")),
            (out / "report.txt").read_text(encoding="utf-8"))


def test_the_fixed_fir_says_each_ports_format(tmp_path: Path) -> None:
    verilog, report, text = _synthesize("fir_q15", tmp_path)
    header = [line for line in verilog.splitlines() if line.startswith("// format:")]
    section = text[text.index("Fixed-point ports"):].splitlines()
    got = "\n".join([*header, *section]) + "\n"
    if os.environ.get("KERA_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(got, encoding="utf-8")
    assert got == GOLDEN.read_text(encoding="utf-8")
    assert report["ports"] == [
        {"name": "x", "direction": "in", "type": "[fx<16, 1>; 8]", "bits": 128,
         "format": "x: [fx<16, 1>; 8] (fx<16, 1>: raw i16, value = raw / 2^15)"},
        {"name": "out", "direction": "out", "type": "fx<16, 1, rnd_conv, sat>", "bits": 16,
         "format": "out: fx<16, 1, rnd_conv, sat> (raw i16, value = raw / 2^15)"},
    ]


def test_an_integer_design_lists_its_ports_without_formats(tmp_path: Path) -> None:
    verilog, report, text = _synthesize("fir_q15_shifts", tmp_path)
    assert "// format:" not in verilog and "Fixed-point ports" not in text
    assert [(p["name"], p["direction"], p["type"], p["bits"], p["format"])
            for p in report["ports"]] == [("x", "in", "[i16; 8]", 128, None),
                                          ("out", "out", "i16", 16, None)]
