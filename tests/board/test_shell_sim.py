"""The board shell in simulation: framed vectors driven bit by bit into RX at UART timing
(8 clock cycles per bit), TX frames checked against the reference interpreter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("amaranth", reason="amaranth is not installed (pip install -e .[tools])")

from kera import interp, load, plan  # noqa: E402
from kera.board import frame  # noqa: E402
from kera.board.sim import ShellRun, layout_of, simulate_shell, uart_bytes, uart_wave  # noqa: E402
from kera.hls.pipeline import Schedule  # noqa: E402
from kera.ir import values  # noqa: E402
from kera.sim.parity import random_vectors  # noqa: E402
from tests.conftest import EXAMPLES, needs_verilator  # noqa: E402

IDLE = 40  # bit times of silence: longer than the shell's 32-bit truncation timeout


def _schedule(path: Path) -> Schedule:
    return plan(load(path), board="icebreaker")


def _rows(path: Path, n: int | None = None) -> list[dict]:
    """The example's vector inputs, or seeded random ones when it ships no vectors."""
    vectors = path.with_suffix(".vectors.jsonl")
    if not vectors.exists():
        loaded = load(path)
        params, _ = loaded.graph.signature(loaded.top)
        batch = random_vectors(params, n or 6, seed=5)
        cols = {name: values.to_json_rows(batch.inputs[name], t, batch.rows) for name, t in params}
        return [{name: cols[name][i] for name, _ in params} for i in range(batch.rows)]
    lines = vectors.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["inputs"] for line in lines if line.strip()][:n]


def _expected(schedule: Schedule, rows: list[dict]) -> list[object]:
    """Return what the reference interpreter computes for ``rows``."""
    params, result = schedule.graph.signature(schedule.region)
    batch = values.load_jsonl([json.dumps(r) for r in rows], params, "<rows>")
    out = interp.evaluate(schedule.graph, schedule.region, batch.inputs, rows=batch.rows)
    return values.to_json_rows(out, result, batch.rows)


def _replies(layout: frame.Layout, run: ShellRun) -> list[object]:
    """Return each reply as its value, or ("error", code) for an error reply."""
    out: list[object] = []
    for f in run.frames:
        try:
            out.append(layout.result_value(f))
        except frame.FrameError as e:
            out.append(("error", e.code))
    return out


def test_uart_wave_round_trips() -> None:
    data = bytes(range(256))
    assert uart_bytes(uart_wave([data, 3, b"\xa5"], 8), 8) == data + b"\xa5"


@needs_verilator
def test_fir8_back_to_back_and_corrupted_frames() -> None:
    schedule = _schedule(EXAMPLES / "fir8.kera")
    layout = layout_of(schedule)
    rows = _rows(EXAMPLES / "fir8.kera")
    want = _expected(schedule, rows)
    good = [layout.vector(r) for r in rows]
    flipped = bytearray(good[1])
    flipped[6] ^= 0x10  # one payload bit: the CRC catches it
    wrong_length = frame.encode(frame.KIND_VECTOR, bytes(layout.in_bytes + 1))
    segments: list[bytes | int] = [
        *good[:8],  # back to back, no gap between frames
        bytes(flipped), good[8],  # the frame right after a bad CRC is taken
        good[9][:7], IDLE,  # truncated, then silence
        wrong_length, IDLE,
        frame.encode(0x02, bytes(layout.in_bytes)), IDLE,  # unknown kind
        *good[10:],
    ]
    run = simulate_shell(schedule, segments)
    errors = [("error", frame.ERR_CRC), ("error", frame.ERR_TRUNCATED),
              ("error", frame.ERR_LENGTH), ("error", frame.ERR_KIND)]
    assert _replies(layout, run) == [*want[:8], errors[0], want[8], *errors[1:], *want[10:]]


@needs_verilator
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.kera")), ids=lambda p: p.stem)
def test_every_example_through_the_shell(path: Path) -> None:
    schedule = _schedule(path)
    rows = _rows(path, 6)
    layout = layout_of(schedule)
    run = simulate_shell(schedule, [layout.vector(r) for r in rows])
    assert _replies(layout, run) == _expected(schedule, rows)
