"""`kera-hls board-run` against a pseudo-terminal: no port, a silent board, and a board that is
the shell's simulation (every vector frame received is simulated at UART timing and the TX
bytes it produces are written back)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="amaranth is not installed (pip install -e .[tools])")

from kera import load, plan  # noqa: E402
from kera.board import frame  # noqa: E402
from kera.board.sim import layout_of, simulate_shell  # noqa: E402
from kera.cli import main  # noqa: E402
from tests.board.test_shell_sim import needs_verilator  # noqa: E402
from tests.conftest import EXAMPLES  # noqa: E402

pytest.importorskip("serial", reason="pyserial is not installed")


@pytest.fixture(scope="module")
def design(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return what `synthesize` writes for fir8 (no bitstream needed to talk frames)."""
    out = tmp_path_factory.mktemp("fir8")
    assert main(["synthesize", str(EXAMPLES / "fir8.kera"), "-o", str(out)]) == 0
    return out


def _inputs(tmp_path: Path, n: int) -> Path:
    lines = (EXAMPLES / "fir8.vectors.jsonl").read_text().splitlines()[:n]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(json.loads(line)["inputs"]) + "\n" for line in lines))
    return path


def test_a_missing_port_is_a_tool_error(design: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["board-run", str(design), "--port", str(tmp_path / "ttyNONE"),
               "--inputs", str(_inputs(tmp_path, 1))])
    err = capsys.readouterr().err.strip()
    assert rc == 3 and len(err.splitlines()) == 1 and "cannot open serial port" in err


def test_a_silent_board_times_out(design: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    master, slave = os.openpty()
    try:
        rc = main(["board-run", str(design), "--port", os.ttyname(slave), "--inputs",
                   str(_inputs(tmp_path, 1)), "--timeout", "0.5"])
    finally:
        os.close(master)
        os.close(slave)
    err = capsys.readouterr().err.strip()
    assert rc == 3 and "no reply from the board within 0.5 s to vector 1" in err


class SimulatedBoard(threading.Thread):
    """The far end of a pseudo-terminal: the shell's simulation, replayed from the start."""

    def __init__(self, master: int, source: Path = EXAMPLES / "fir8.kera") -> None:
        super().__init__(daemon=True)
        self.master = master
        self.schedule = plan(load(source), board="icebreaker")
        self.want = frame.HEADER_BYTES + layout_of(self.schedule).in_bytes + 1
        self.error: BaseException | None = None

    def run(self) -> None:
        received, sent = b"", 0
        try:
            while True:
                try:
                    received += os.read(self.master, 4096)
                except OSError:
                    return  # the other end closed
                if len(received) % self.want == 0:
                    tx = simulate_shell(self.schedule, [received]).tx  # stateful-safe replay
                    os.write(self.master, tx[sent:])
                    sent = len(tx)
        except BaseException as e:  # noqa: BLE001 — reported by the test
            self.error = e


@needs_verilator
def test_board_run_prints_what_the_simulated_board_computes(
        design: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    master, slave = os.openpty()
    board = SimulatedBoard(master)
    board.start()
    inputs = _inputs(tmp_path, 3)
    try:
        rc = main(["board-run", str(design), "--port", os.ttyname(slave), "--inputs",
                   str(inputs), "--timeout", "120"])
    finally:
        os.close(slave)
    out, err = capsys.readouterr()
    assert board.error is None, board.error
    assert rc == 0, err
    assert main(["run", str(EXAMPLES / "fir8.kera"), "--inputs", str(inputs)]) == 0
    assert out.splitlines() == capsys.readouterr().out.splitlines()
    assert len(out.splitlines()) == 3
    os.close(master)
