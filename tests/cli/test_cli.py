"""The command line: outputs, exit codes (INTERFACES.md) and no tracebacks for user errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kera.cli import main
from tests.conftest import EXAMPLES, ROOT, SHARED_KERNELS

FIR8 = str(EXAMPLES / "fir8.kera")


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_ok_and_errors(capsys, tmp_path):
    assert cli(capsys, "check", FIR8)[0] == 0
    bad = tmp_path / "bad.kera"
    bad.write_text("fn f(a: u8) -> u16 { a }\nfn g( -> u8 { 1 }\n")
    code, _, err = cli(capsys, "check", str(bad))
    assert code == 1
    assert f"{bad}:1:22: error: mismatched types: expected `u16`, found `u8`" in err
    assert f"{bad}:2:" in err and "Traceback" not in err


def test_check_json_format(capsys, tmp_path):
    bad = tmp_path / "bad.kera"
    bad.write_text("fn f() -> u8 { 300 }\n")
    code, out, _ = cli(capsys, "check", "--format", "json", str(bad))
    assert code == 1
    diag = json.loads(out.splitlines()[0])
    assert (diag["line"], diag["column"], diag["severity"]) == (1, 16, "error")
    assert diag["message"] == "literal `300` does not fit in `u8` (0..=255)"


def test_missing_file_is_usage_error(capsys):
    code, _, err = cli(capsys, "check", "/nonexistent/x.kera")
    assert code == 2 and err.strip() == "/nonexistent/x.kera: no such file"


def test_compile_fingerprint_and_keg_roundtrip(capsys, tmp_path):
    out_keg = tmp_path / "fir8.keg"
    code, out, _ = cli(capsys, "compile", FIR8, "-o", str(out_keg))
    assert code == 0
    fp = out.strip()
    assert len(fp) == 64 and out_keg.read_bytes()[:4] == b"KEG\0"
    assert cli(capsys, "fingerprint", FIR8)[1].strip() == fp
    assert cli(capsys, "fingerprint", str(out_keg))[1].strip() == fp


def test_malformed_keg_is_one_line_error(capsys, tmp_path):
    out_keg = tmp_path / "fir8.keg"
    cli(capsys, "compile", FIR8, "-o", str(out_keg))
    data = bytearray(out_keg.read_bytes())
    data[len(data) // 2] ^= 0x40
    out_keg.write_bytes(bytes(data))
    code, _, err = cli(capsys, "fingerprint", str(out_keg))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.skipif(not SHARED_KERNELS.is_dir(), reason="../shared/kernels is absent")
def test_run_interp_matches_vectors(capsys, tmp_path):
    vectors = SHARED_KERNELS / "saturate.vectors.jsonl"
    code, out, _ = cli(capsys, "run", str(SHARED_KERNELS / "saturate.kera"), "--target",
                       "interp", "--inputs", str(vectors))
    assert code == 0
    got = [json.loads(line) for line in out.splitlines()]
    want = [json.loads(line)["expected"] for line in vectors.read_text().splitlines()]
    assert got == want


def test_run_bad_inputs_name_line_and_parameter(capsys, tmp_path):
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"x": [1,2,3,4,5,6,7,8]}\n{"x": [1,2,3,4,5,6,7,40000]}\n')
    code, _, err = cli(capsys, "run", FIR8, "--inputs", str(inputs))
    assert code == 1
    assert f"{inputs}:2" in err and "`x`" in err and "40000" in err


def test_unavailable_target_exits_3(capsys, tmp_path):
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"x": [1,2,3,4,5,6,7,8]}\n')
    code, _, err = cli(capsys, "run", FIR8, "--target", "ptx", "--inputs", str(inputs))
    assert code == 3 and err.strip()


def test_console_script_version_and_usage():
    exe = [sys.executable, "-m", "kera.cli"]
    out = subprocess.run([*exe, "--version"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.startswith("kera-hls ")
    out = subprocess.run([*exe, "frobnicate"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "Traceback" not in out.stderr


MATMUL_I8 = """// 4x4 product of i8 matrices formed in i32 (../shared/kernels/peers/matmul4.kera)
#[top]
pub fn matmul4(a: [[i8; 4]; 4], b: [[i8; 4]; 4]) -> [[i32; 4]; 4] {
    let mut c = [[0i32; 4]; 4];
    for i in 0..4 {
        let mut row = [0i32; 4];
        for j in 0..4 {
            let mut acc = 0i32;
            for k in 0..4 {
                acc += (a[i][k] as i32) * (b[k][j] as i32);
            }
            row[j] = acc;
        }
        c[i] = row;
    }
    c
}
"""


def test_matmul4_on_ice40_at_55mhz_does_not_fit_before_it_misses_the_clock(capsys, tmp_path):
    """64 multiplies on an 8-DSP UP5K: no schedule fits at II = 1, and the error says so,
    naming the resource, the need and the capacity. At 55 MHz no SB_MAC16 is timed fast
    enough, so each multiply is shift-and-add in LUTs (which meets the clock): a graph too
    large to search the least II for in the error, which points at `--fit` instead."""
    src = tmp_path / "matmul4.kera"
    src.write_text(MATMUL_I8, encoding="utf-8")
    code, out, err = cli(capsys, "synthesize", str(src), "--board", "icebreaker",
                         "--clock-mhz", "55", "-o", str(tmp_path / "out"))
    assert code == 1 and out == "" and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{src}:") and "it cannot fit at II = 1, whatever the schedule" in last
    assert "the design needs " in last and " LUT but icebreaker has 5280" in last
    assert "nor can it meet the clock" not in last
    assert "(`--fit` searches the least II that fits, or pass --allow-overfull" in last
    assert not (tmp_path / "out" / "matmul4.v").exists()
