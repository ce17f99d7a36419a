"""Talk to a core on a board: send vector frames over the UART, read back the results.

``kera-hls board-run DIR --port P --inputs IN.jsonl`` reads the design from ``DIR`` (what
``synthesize --bitstream`` wrote: the ``.keg`` and ``report.json``), sends one vector frame per
input line, waits for its reply and prints each result as ``run`` does. An error reply (the
line corrupted a frame) is retried after the line has been idle; a board that does not answer
within the timeout, or a port that cannot be opened, is a one-line error with exit code 3.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kera.board import frame
from kera.board.frame import DEFAULT_BAUD, IDLE_BITS
from kera.diagnostics import ExitCode, KeraError
from kera.ir import values

if TYPE_CHECKING:
    from kera._targets import Target

#: How often an error reply makes a vector be sent again before giving up.
RETRIES = 2


def open_port(port: str, baud: int, timeout: float) -> Any:
    """Return the serial port opened at ``baud`` 8N1; raise ``KeraError`` (exit 3)."""
    try:
        import serial
    except ImportError:
        raise KeraError("pyserial is not installed: `pip install -e .`",
                        exit_code=ExitCode.TOOL) from None
    try:
        return serial.Serial(port, baud, timeout=timeout)
    except (serial.SerialException, OSError, ValueError) as e:
        raise KeraError(f"cannot open serial port `{port}`: {e}", exit_code=ExitCode.TOOL) from None


def read_frame(link: Any, timeout: float) -> bytes | None:
    """Return the next frame read from ``link`` (bytes before a sync byte are skipped), or
    None when it does not arrive within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    buf = bytearray()
    need = 1
    while len(buf) < need:
        if time.monotonic() > deadline:
            return None
        chunk = link.read(need - len(buf))
        buf += chunk
        if buf and buf[0] != frame.SYNC:
            del buf[0]
            continue
        if len(buf) >= frame.HEADER_BYTES:
            need = frame.HEADER_BYTES + (buf[2] | buf[3] << 8) + 1
        elif buf:
            need = frame.HEADER_BYTES
    return bytes(buf)


def exchange(link: Any, layout: frame.Layout, rows: Sequence[dict], *, port: str,
             timeout: float, baud: int = DEFAULT_BAUD) -> Iterator[object]:
    """Send each row as a vector frame and yield its result; raise ``KeraError`` (exit 3)."""
    for i, row in enumerate(rows, 1):
        for attempt in range(RETRIES + 1):
            link.write(layout.vector(row))
            link.flush()
            reply = read_frame(link, timeout)
            if reply is None:
                raise KeraError(f"{port}: no reply from the board within {timeout:g} s to "
                                f"vector {i} (is the bitstream loaded, and is this its UART?)",
                                exit_code=ExitCode.TOOL)
            try:
                yield layout.result_value(reply)
                break
            except frame.FrameError as e:
                if attempt == RETRIES:
                    raise KeraError(f"{port}: vector {i}: {e.message} ({RETRIES + 1} tries)",
                                    exit_code=ExitCode.TOOL) from None
                time.sleep(2 * IDLE_BITS / baud)  # the board drains until the line is idle


def design_layout(folder: Path) -> tuple[frame.Layout, int]:
    """Return the frame layout and the baud rate of the design ``synthesize`` wrote into
    ``folder``; raise ``KeraError``."""
    from kera import load

    report_path = folder / "report.json"
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise KeraError(f"{report_path}: cannot read the synthesis report ({e}); run "
                        "`kera-hls synthesize ... --bitstream -o DIR` first",
                        exit_code=ExitCode.USAGE) from None
    top = report["top"]
    loaded = load(folder / f"{top}.keg", top=top, opt_level=0)
    params, result = loaded.graph.signature(top)
    baud = report.get("bitstream", {}).get("uart", {}).get("baud", DEFAULT_BAUD)
    return frame.Layout(tuple(params), result), int(baud)


def board_run(folder: str | Path, port: str, inputs: str | Path, *,
              timeout: float = 2.0) -> Iterator[object]:
    """Yield the board's result for each line of ``inputs`` (JSONL, checked as ``run`` does)."""
    layout, baud = design_layout(Path(folder))
    path = Path(inputs)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise KeraError(f"{path}: cannot read inputs: {e}", exit_code=ExitCode.USAGE) from None
    params = list(layout.params)
    batch = values.load_jsonl(lines, params, str(path))
    rows = [{name: values.to_json(batch.inputs[name], t, i) for name, t in params}
            for i in range(batch.rows)]
    link = open_port(port, baud, min(timeout, 0.2))
    try:
        yield from exchange(link, layout, rows, port=port, timeout=timeout, baud=baud)
    finally:
        link.close()


def board_target(port: str, baud: int = DEFAULT_BAUD, timeout: float = 2.0) -> Target:
    """Return the `board` target of `parity`: the design loaded on a board, over its UART.

    It sends the rows, in order, as vector frames and returns the results as JSON values. The
    board must hold the bitstream `synthesize --bitstream` built from the same schedule (the
    frames do not carry the fingerprint); a stateful design must be fresh from reset (load the
    bitstream again, or press the board's reset), as every target starts from the initial state.
    """
    from kera._targets import Target as Made

    def run(schedule: Any, inputs: Any, rows: int) -> list[object]:
        params, result = schedule.graph.signature(schedule.region)
        layout = frame.Layout(tuple(params), result)
        json_rows = [{name: values.to_json(inputs[name], t, i) for name, t in params}
                     for i in range(rows)]
        link = open_port(port, baud, min(timeout, 0.2))
        try:
            return list(exchange(link, layout, json_rows, port=port, timeout=timeout, baud=baud))
        finally:
            link.close()

    return Made("board", run, json_rows=True, default=False,
                  description=f"the design on a board, over the UART at {port}")


__all__ = ["board_run", "board_target", "design_layout", "exchange", "open_port", "read_frame"]
