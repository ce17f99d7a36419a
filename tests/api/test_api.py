"""The public Python API (docs/api.md): its worked example, its types and the one registry."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import kera
from kera.cli import main
from tests.conftest import EXAMPLES, ROOT

FIR8 = EXAMPLES / "fir8.kera"
GRAY = EXAMPLES / "gray.kera"


def test_the_worked_example_in_docs_api_md_runs(tmp_path, monkeypatch) -> None:
    for name in ("rtl", "cpu"):
        if reason := kera.get_target(name).available():
            pytest.skip(reason)
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    (tmp_path / "examples").symlink_to(EXAMPLES)
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "docs/api.md", "exec"), {})  # noqa: S102
    report = json.loads((tmp_path / "build" / "fir8" / "report.json").read_text())
    assert report["top"] == "fir8" and report["board"] == "icebreaker"


def test_import_kera_is_cheap() -> None:
    code = "import sys, kera; print(sorted(m for m in sys.modules if m.startswith('kera')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['kera']"
    heavy = "import sys, kera; kera.ExitCode; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", heavy], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_exported_name_is_the_api_not_a_subpackage() -> None:
    import types

    for name in kera.__all__:
        assert not isinstance(getattr(kera, name), types.ModuleType), name
    with pytest.raises(AttributeError, match="no attribute `nope`"):
        kera.nope  # noqa: B018


def test_exit_codes_are_named_once() -> None:
    codes = {c.name: int(c) for c in kera.ExitCode}
    assert codes == {"OK": 0, "USER": 1, "USAGE": 2, "TOOL": 3, "CHECK": 4, "INTERNAL": 70}
    assert kera.KeraError("x", 2).exit_code is kera.ExitCode.USAGE


def test_load_text_compile_and_reload_the_keg() -> None:
    source = FIR8.read_text()
    from_text = kera.load(text=source, name="fir8.kera")
    from_file = kera.load(FIR8)
    assert from_text.fingerprint == from_file.fingerprint and from_text.top == "fir8"
    compiled = kera.compile(from_file)
    assert compiled.keg[:4] == b"KEG\0" and compiled.path is None
    again = kera.load(text=compiled.keg)
    assert (again.fingerprint, again.top, again.program) == (compiled.fingerprint, "fir8", None)
    with pytest.raises(kera.KeraError) as info:
        kera.load(FIR8, text=source)
    assert info.value.exit_code == kera.ExitCode.USAGE
    with pytest.raises(kera.KeraError) as info:
        kera.load(text="fn f( -> u8 { 1 }\n", name="bad.kera")
    assert info.value.exit_code == kera.ExitCode.USER and "bad.kera:1:" in info.value.message


def test_report_dataclass_keeps_every_field(tmp_path) -> None:
    syn = kera.synthesize(kera.load(GRAY), outdir=tmp_path)
    on_disk = json.loads(syn.paths["report.json"].read_text())
    assert syn.report.to_json() == on_disk
    assert (syn.report.top, syn.report.family, syn.report.ii) == ("gray", "ice40", on_disk["ii"])
    assert syn.report.latency_cycles == syn.schedule.latency and syn.report.measured is None
    later = kera.Report.from_json(json.dumps({**on_disk, "a_field_added_later": [1]}))
    assert later["a_field_added_later"] == [1] and later.fingerprint == on_disk["fingerprint"]
    assert "module gray" in syn.verilog


def test_run_takes_dicts_lines_or_a_path(tmp_path) -> None:
    gray = kera.load(GRAY)
    rows = [{"x": 2}, {"x": 255}]
    want = kera.run(gray, rows)
    assert want == [[3, 3], [128, 170]]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert kera.run(gray, path) == kera.run(gray, [json.dumps(r) for r in rows]) == want
    for name in ("cpu", "wasm"):
        if kera.get_target(name).available() is None:
            assert kera.run(gray, rows, target=name) == want


def test_one_registry_behind_run_parity_and_the_cli(capsys, tmp_path) -> None:
    assert kera.registered_targets()[:5] == ["interp", "cpu", "wasm", "ptx", "rtl"]
    with pytest.raises(kera.KeraError) as info:
        kera.get_target("verilog")
    assert info.value.exit_code == kera.ExitCode.USAGE and "interp, cpu" in info.value.message
    seen = []

    def negate_nothing(schedule, inputs, rows):  # noqa: ANN001, ANN202
        seen.append(schedule.method)
        return kera.get_target("interp").run(schedule, inputs, rows)

    kera.register_target("mine", negate_nothing, scheduled=False)
    kera.register_target("absent", negate_nothing, lambda: "the mine tool is not installed")
    try:
        inputs = tmp_path / "in.jsonl"
        inputs.write_text('{"x": 7}\n')
        assert main(["run", str(GRAY), "--target", "mine", "--inputs", str(inputs)]) == 0
        assert capsys.readouterr().out == "[4, 5]\n" and seen == ["single-stage"]
        assert main(["run", str(GRAY), "--target", "absent", "--inputs", str(inputs)]) == 3
        assert "the mine tool is not installed" in capsys.readouterr().err
        report = kera.parity(kera.load(GRAY), targets=["mine", "absent"], vectors=50)
        assert [r.status for r in report.results] == ["ok", "unavailable"]
        assert report.exit_code == kera.ExitCode.TOOL
    finally:
        kera.unregister_target("mine")
        kera.unregister_target("absent")


def test_amaranth_core_elaborates_with_its_ports(tmp_path) -> None:
    pytest.importorskip("amaranth", reason="amaranth is not installed (pip install -e .[tools])")
    from amaranth.back import rtlil
    from amaranth.hdl import Elaboratable, Module

    from kera.amaranth import KeraCore

    syn = kera.synthesize(kera.load(FIR8), "icebreaker", outdir=tmp_path)
    core = KeraCore.from_synthesis(syn)

    class Platform:
        files: dict[str, str] = {}

        def add_file(self, name: str, content: str) -> None:
            self.files[name] = content

    class Top(Elaboratable):
        def elaborate(self, platform):  # noqa: ANN001, ANN202
            m = Module()
            m.submodules.fir = core
            return m

    platform = Platform()
    text = rtlil.convert(Top(), ports=list(core.ports.values()), platform=platform)
    assert platform.files == {"fir8.v": syn.verilog}
    cell = re.search(r"cell \\fir8 \\core\n(.*?)\n *end", text, re.S)
    assert cell, text
    connects = dict(re.findall(r"connect \\(\w+) (.*)", cell.group(1)))
    assert set(connects) == {"clk", "rst", "in_valid", "in_ready", "x", "out_valid", "out_ready",
                             "out"}
    assert connects["x"].endswith("[127:0]")  # [i16; 8] packed: 128 bits
    assert re.search(r"wire width 32 output \d+ +\\fir8_out\b", text)
    assert {name: len(sig) for name, sig in core.ports.items()} == {
        "in_valid": 1, "in_ready": 1, "x": 128, "out_valid": 1, "out_ready": 1, "out": 32}
    standalone = rtlil.convert(core, ports=list(core.ports.values()))  # no platform: no file
    assert "cell \\fir8 \\core" in standalone


def test_software_targets_plan_without_the_verilog_luts(monkeypatch) -> None:
    """`run` and `parity` on targets that never write Verilog skip the LUT covers (AES-128:
    16 of the 43 s of `run --target cpu`); the stages and order are the same, and a target
    that writes Verilog still gets them."""
    import kera.hls.synth as synth

    loaded = kera.load(EXAMPLES / "gray.kera")
    full = kera.plan(loaded, board="ulx3s")
    bare = kera.plan(loaded, board="ulx3s", covers=False)
    assert full.covers and not bare.covers
    assert (bare.order, bare.stage, bare.latency) == (full.order, full.stage, full.latency)
    calls: list[str] = []
    real = synth._covered
    monkeypatch.setattr(synth, "_covered", lambda *a: calls.append("covered") or real(*a))
    rows = [{"x": v} for v in (0, 1, 2, 0xFF)]
    assert kera.run(loaded, rows, target="cpu", board="ulx3s") == \
        kera.run(loaded, rows, target="interp", board="ulx3s")
    kera.parity(loaded, targets=["interp", "cpu"], vectors=50, board="ulx3s")
    assert calls == []
    kera.parity(loaded, targets=["rtl"], vectors=50, board="ulx3s")
    assert calls == ["covered"]
