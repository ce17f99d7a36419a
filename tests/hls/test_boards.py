"""Board files: the packaged boards load, and bad files give one exact line each."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kera.diagnostics import KeraError
from kera.hls.boards import BOARDS_DIR, Board, Capacities, list_boards, load_board

GOOD = """\
name = "myboard"
description = "a test board"
family = "ice40"
device = "up5k"
package = "sg48"
clock_pin = "35"
clock_mhz = 12.0
constraints = "myboard.pcf"

[capacities]
lut = 5280
ff = 5280
dsp = 8
bram = 30
"""


def write_board(tmp_path: Path, text: str = GOOD) -> Path:
    """Write a board file and its constraint file into tmp_path; return the board's path."""
    (tmp_path / "myboard.pcf").write_text("set_io clk 35\n")
    path = tmp_path / "myboard.toml"
    path.write_text(text)
    return path


def error_of(path: Path | str) -> KeraError:
    with pytest.raises(KeraError) as info:
        load_board(path)
    return info.value


def test_list_boards_sorted_by_name() -> None:
    names = [b.name for b in list_boards()]
    assert names == ["arty_a7_35", "icebreaker", "tangnano9k", "ulx3s"]


def test_icebreaker() -> None:
    b = load_board("icebreaker")
    assert (b.family, b.device, b.package, b.clock_pin, b.clock_mhz) == (
        "ice40", "up5k", "sg48", "35", 12.0)
    assert b.speed_grade is None and not b.estimates_only
    assert b.capacities == Capacities(lut=5280, ff=5280, dsp=8, bram=30)
    assert b.constraints_path.name == "icebreaker.pcf"
    assert b.clock_period_ns == pytest.approx(1000 / 12)


@pytest.mark.parametrize(("name", "family", "device", "pin", "mhz"), [
    ("ulx3s", "ecp5", "LFE5U-85F", "G2", 25.0),
    ("tangnano9k", "gowin", "GW1NR-LV9QN88PC6/I5", "52", 27.0),
    ("arty_a7_35", "xc7", "xc7a35ticsg324-1L", "E3", 100.0),
])
def test_other_boards(name: str, family: str, device: str, pin: str, mhz: float) -> None:
    b = load_board(name)
    assert (b.family, b.device, b.clock_pin, b.clock_mhz) == (family, device, pin, mhz)


def test_packaged_boards_are_consistent() -> None:
    for b in list_boards():
        assert b.path is not None and b.path.stem == b.name
        text = b.constraints_path.read_text()
        assert b.clock_pin in text and "clk" in text
    assert load_board("ulx3s").speed_grade == "6"
    assert load_board("arty_a7_35").estimates_only


def test_board_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        load_board("icebreaker").clock_mhz = 1.0  # type: ignore[misc]


def test_load_by_path(tmp_path: Path) -> None:
    b = load_board(write_board(tmp_path))
    assert isinstance(b, Board) and b.name == "myboard"
    assert b.constraints_path == tmp_path / "myboard.pcf"
    assert load_board(str(tmp_path / "myboard.toml")) == b


def test_baud_from_the_board_file(tmp_path: Path) -> None:
    assert load_board(write_board(tmp_path)).baud == 115200  # the default
    text = GOOD.replace('package = "sg48"', 'package = "sg48"\nbaud = 921600')
    assert load_board(write_board(tmp_path, text)).baud == 921600


def test_unknown_board() -> None:
    err = error_of("foo")
    assert err.message == (
        "unknown board `foo`; known boards: arty_a7_35, icebreaker, tangnano9k, ulx3s")
    assert err.exit_code == 2


def test_missing_board_file(tmp_path: Path) -> None:
    err = error_of(str(tmp_path / "none.toml"))
    assert err.message == f"board file `{tmp_path / 'none.toml'}` does not exist"
    assert err.exit_code == 2


@pytest.mark.parametrize(("old", "new", "message"), [
    ('clock_mhz = 12.0', 'clock_mhz = "fast"',
     "key `clock_mhz` must be a positive number, not 'fast'"),
    ('clock_mhz = 12.0', 'clock_mhz = -3', "key `clock_mhz` must be a positive number, not -3"),
    ('clock_mhz = 12.0', 'clock_mhz = true',
     "key `clock_mhz` must be a positive number, not True"),
    ('clock_mhz = 12.0\n', '', "missing key `clock_mhz`"),
    ('family = "ice40"', 'family = "virtex"',
     "key `family` must be one of ecp5, gowin, ice40, xc7, not 'virtex'"),
    ('name = "myboard"', 'name = "My Board"',
     "key `name` must be a lower-case identifier (a-z, 0-9, _), not 'My Board'"),
    ('clock_pin = "35"', 'clock_pin = 35', "key `clock_pin` must be a non-empty string, not 35"),
    ('lut = 5280', 'lut = 52.5',
     "key `capacities.lut` must be a non-negative integer, not 52.5"),
    ('bram = 30\n', '', "missing key `capacities.bram`"),
    ('dsp = 8', 'dsp = 8\nuram = 4', "unknown key `capacities.uram`; expected lut, ff, dsp, bram"),
    ('package = "sg48"', 'package = "sg48"\nclockmhz = 12',
     "unknown key `clockmhz`; expected one of baud, capacities, clock_mhz, clock_pin, "
     "constraints, description, device, estimates_only, family, name, package, speed_grade"),
    ('package = "sg48"', 'package = "sg48"\nbaud = 100', "key `baud` must be a baud rate in "
     "300..=12000000, not 100"),
    ('package = "sg48"', 'package = "sg48"\nestimates_only = "yes"',
     "key `estimates_only` must be true or false, not 'yes'"),
    ('constraints = "myboard.pcf"', 'constraints = "other.pcf"',
     "key `constraints` names a file that does not exist: 'other.pcf'"),
    ('[capacities]\nlut = 5280\nff = 5280\ndsp = 8\nbram = 30\n', 'capacities = 4\n',
     "key `capacities` must be a table, not 4"),
])
def test_bad_board_files(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in GOOD
    path = write_board(tmp_path, GOOD.replace(old, new))
    err = error_of(path)
    assert err.message == f"{path}: {message}"
    assert err.exit_code == 1


def test_invalid_toml(tmp_path: Path) -> None:
    path = write_board(tmp_path, "name = \n")
    err = error_of(path)
    assert err.message.startswith(f"{path}: invalid TOML: ")
    assert "\n" not in err.message and err.exit_code == 1


def test_boards_dir_is_the_repository_copy() -> None:
    root = Path(__file__).resolve().parents[2]
    if (root / "boards").is_dir():
        assert BOARDS_DIR == (root / "boards").resolve()
