"""The stateful examples (STATE.md): each runs as one stream on the interpreter and gives its
vectors, which an independent Python reference wrote (examples/gen_state_vectors.py)."""

from __future__ import annotations

import importlib.util
import json
from itertools import pairwise
from pathlib import Path

import pytest

from kera.cli import main
from kera.elaborate import build_program
from kera.interp import run_jsonl
from kera.rtl.names import check_identifier
from tests.conftest import EXAMPLES

STATEFUL = ["fir_stream", "biquad_q14", "crc32_stream", "histogram", "delay_line"]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_state_vectors",
                                                  EXAMPLES / "gen_state_vectors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _vectors(name: str) -> list[str]:
    return (EXAMPLES / f"{name}.vectors.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("name", STATEFUL)
def test_stateful_example_matches_its_vectors(name: str) -> None:
    path = EXAMPLES / f"{name}.kera"
    program = build_program(str(path), path.read_bytes())
    assert program.ok, program.diagnostics
    assert [d for d in program.diagnostics if d.severity.value == "warning"] == []
    assert name in program.stateful and program.graph.regions[name].stateful
    lines = _vectors(name)
    results = run_jsonl(program.graph, program.top, lines)
    expected = [json.loads(line)["expected"] for line in lines]
    assert len(results) == len(expected) >= 2000
    mismatches = [(i, r, e) for i, (r, e) in enumerate(zip(results, expected, strict=True))
                  if r != e]
    assert mismatches == []


@pytest.mark.parametrize("name", STATEFUL)
def test_ports_are_verilog_names(name: str) -> None:
    """Parameters become RTL ports with their source names (INTERFACES.md)."""
    path = EXAMPLES / f"{name}.kera"
    program = build_program(str(path), path.read_bytes())
    params, _ = program.graph.signature(name)
    for param, _ in params:
        check_identifier(param, "parameter")  # raises for `byte`, `reg`, `out`, ...


@pytest.mark.parametrize("name", STATEFUL)
def test_vectors_are_reproducible(name: str, tmp_path: Path) -> None:
    """The generator is seeded: it writes the committed files byte for byte."""
    gen = _generator()
    assert gen.main(["--out", str(tmp_path), "--only", name]) == 0
    assert (tmp_path / f"{name}.vectors.jsonl").read_bytes() == \
        (EXAMPLES / f"{name}.vectors.jsonl").read_bytes()


def test_vectors_cover_the_edge_cases() -> None:
    """The streams reach what the examples are about: saturation, restarts, clears, wraps."""
    rows = {n: [json.loads(line) for line in _vectors(n)] for n in STATEFUL}
    biquad = [r["expected"] for r in rows["biquad_q14"]]
    assert biquad.count("1.99993896484375") > 50 and biquad.count("-2") > 50
    crc = rows["crc32_stream"]
    assert not crc[0]["inputs"]["start"] and sum(r["inputs"]["start"] for r in crc) > 100
    assert 0xCBF43926 in [r["expected"] for r in crc]  # CRC-32 of b"123456789"
    hist = rows["histogram"]
    assert sum(r["inputs"]["clear"] for r in hist) > 50
    assert any(a["inputs"] == b["inputs"] == {"bin": 7, "clear": True}
               for a, b in pairwise(hist))  # a bin cleared twice in a row
    delay = rows["delay_line"]
    assert len(delay) > 2 * 64 and {0, 63} <= {r["inputs"]["delay"] for r in delay}


def test_run_command_gives_the_crc_stream(capsys) -> None:
    """`kera-hls run` treats the file as one stream from the initial state."""
    vectors = str(EXAMPLES / "crc32_stream.vectors.jsonl")
    code = main(["run", str(EXAMPLES / "crc32_stream.kera"), "--inputs", vectors, "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    expected = [json.loads(line)["expected"] for line in _vectors("crc32_stream")]
    assert [json.loads(line) for line in out.splitlines()] == expected


def test_a_shorter_stream_is_a_prefix(capsys, tmp_path: Path) -> None:
    """Each run starts from the initial state: the first k lines give the first k results."""
    lines = _vectors("histogram")
    part = tmp_path / "part.jsonl"
    part.write_text("\n".join(lines[300:340]) + "\n", encoding="utf-8")
    assert main(["run", str(EXAMPLES / "histogram.kera"), "--inputs", str(part), "-q"]) == 0
    out = [json.loads(line) for line in capsys.readouterr()[0].splitlines()]
    # Run alone, the slice starts from empty bins: counts are those within the slice only.
    counts = [0] * 256
    want = []
    for line in lines[300:340]:
        inputs = json.loads(line)["inputs"]
        b = inputs["bin"]
        counts[b] = 0 if inputs["clear"] else counts[b] + 1
        want.append(counts[b])
    assert out == want
    assert want != [json.loads(line)["expected"] for line in lines[300:340]]
