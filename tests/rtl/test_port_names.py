"""Names the generated RTL cannot take (INTERFACES.md: "a parameter whose name is a fixed port
name or a Verilog keyword is an error at `synthesize` naming the parameter"): one located
line, exit 1, said before any scheduling, by every command that writes Verilog."""

from __future__ import annotations

from pathlib import Path

import pytest

import kera
from kera.cli import main
from kera.diagnostics import KeraError
from kera.rtl.names import check_ports

CASES = [  # (source after `#[top]`, line:col of the name, what the message says)
    ("pub fn f(clk: u8) -> u8 { clk }", "2:10", "parameter `clk` has the name of a fixed port"),
    ("pub fn f(x: u8, wire: u8) -> u8 { x }", "2:17", "parameter `wire` is a Verilog keyword"),
    ("pub fn f(x: u8, logic: u8) -> u8 { x }", "2:17", "parameter `logic` is a Verilog keyword"),
    ("pub fn f(x: u8, \u00e9: u8) -> u8 { x }", "2:17",
     "parameter `\u00e9` is not a valid Verilog identifier"),
    ("pub fn f(x: u8, y: ()) -> u8 { x }", "2:17", "parameter `y` has type (), which has no bits"),
    ("pub fn f(x: u8) -> () { () }", "2:8", "`f` returns (), which has no bits"),
    ("pub fn  module(x: u8) -> u8 { x }", "2:9", "function `module` is a Verilog keyword"),
]


def _source(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "names.kera"
    path.write_text(f"#[top]\n{body}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("body", "where", "said"), CASES)
def test_synthesize_names_the_place_before_scheduling(tmp_path: Path, capsys, body: str,
                                                      where: str, said: str) -> None:
    path = _source(tmp_path, body)
    code = main(["synthesize", str(path), "--board", "icebreaker", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}:{where}: error: {said}"), err
    assert "synthesizing" not in err  # refused before the schedule is planned
    assert not (tmp_path / "out" / "f.v").exists()


@pytest.mark.parametrize(("body", "where", "said"), CASES[:2])
def test_sim_refuses_the_same_names(tmp_path: Path, capsys, body: str, where: str,
                                    said: str) -> None:
    path = _source(tmp_path, body)
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("{}\n")
    code = main(["sim", str(path), "--board", "icebreaker", "--inputs", str(inputs)])
    err = capsys.readouterr().err.strip()
    assert code == 1 and err.startswith(f"{path}:{where}: error: {said}"), err


def test_a_text_without_a_file_still_names_the_line(tmp_path: Path) -> None:
    loaded = kera.load(text="#[top]\npub fn f(x: u8, always: u8) -> u8 { x }\n", name="mem.kera")
    with pytest.raises(KeraError) as info:
        kera.synthesize(loaded, "icebreaker", outdir=tmp_path / "out")
    assert info.value.message.startswith("mem.kera:2:17: error: parameter `always` is a Verilog "
                                         "keyword")
    assert info.value.exit_code == 1


def test_a_graph_without_its_source_says_the_name_alone(tmp_path: Path) -> None:
    loaded = kera.load(text="#[top]\npub fn f(x: u8, out: u8) -> u8 { x }\n", name="gone.kera")
    with pytest.raises(KeraError) as info:
        check_ports(loaded.graph, loaded.top)  # no text given, and no such file to read
    assert info.value.message == ("parameter `out` has the name of a fixed port of the "
                                  "generated RTL; rename it")


def test_names_verilog_takes_pass() -> None:
    loaded = kera.load(text="#[top]\npub fn wired(x_1: u8, Reg: u8) -> u8 { x_1 ^ Reg }\n")
    check_ports(loaded.graph, loaded.top)
