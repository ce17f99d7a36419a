"""`kera-hls parity --targets ...,board --port P`: the board is one more target, here the shell's
simulation behind a pseudo-terminal (tests/board/test_board_run.py), on a stateful kernel."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="amaranth is not installed (pip install -e .[tools])")

from kera.cli import main  # noqa: E402
from tests.board.test_board_run import SimulatedBoard  # noqa: E402
from tests.board.test_shell_sim import needs_verilator  # noqa: E402
from tests.conftest import EXAMPLES  # noqa: E402

pytest.importorskip("serial", reason="pyserial is not installed")


def test_the_board_target_needs_a_port(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["parity", str(EXAMPLES / "gray.kera"), "--targets", "interp,board"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.endswith("the `board` target needs --port, the board's UART "
                                    "(e.g. /dev/ttyUSB1)")


def test_a_board_that_does_not_answer_fails_parity(capsys: pytest.CaptureFixture[str]) -> None:
    master, slave = os.openpty()
    try:
        rc = main(["parity", str(EXAMPLES / "gray.kera"), "--targets", "interp,board",
                   "--vectors", "1", "--port", os.ttyname(slave), "--timeout", "0.3"])
    finally:
        os.close(master)
        os.close(slave)
    out = capsys.readouterr().out
    assert rc != 0 and "board" in out and "no reply from the board" in out


@needs_verilator
def test_parity_includes_the_board(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Gray code through the UART shell (the simulated board replays every frame from the start
    for each new one, so a kernel with few edge values keeps it short)."""
    source = EXAMPLES / "gray.kera"
    master, slave = os.openpty()
    board = SimulatedBoard(master, source)
    board.start()
    report = tmp_path / "parity.json"
    try:
        rc = main(["parity", str(source), "--targets", "interp,cpu,board", "--vectors", "2",
                   "--port", os.ttyname(slave), "--timeout", "120", "--json", str(report)])
    finally:
        os.close(slave)
    out = capsys.readouterr().out
    assert board.error is None, board.error
    assert rc == 0, out
    rows = {t["target"]: t for t in json.loads(report.read_text())["targets"]}
    assert rows["board"]["status"] == "ok" and rows["board"]["mismatches"] == 0
    assert rows["board"]["vectors"] == rows["interp"]["vectors"] > 2
    os.close(master)
