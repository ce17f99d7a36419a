"""The UART frame format between a host and the board shell (docs/board.md).

A frame is ``SYNC KIND LEN_LO LEN_HI PAYLOAD... CRC``: the sync byte 0xA5, a kind byte, the
payload length in bytes (16 bits, little-endian), the payload, and a CRC-8 (polynomial 0x07,
initial value 0, no reflection) over everything after the sync byte. A vector's payload is the
design's input ports packed as INTERFACES.md packs them, the first parameter in the least
significant bits, sent least significant byte first; a result's payload is the ``out`` port.
The hardware decoder in ``kera.board.shell`` implements the same rules; this module is the
executable definition the host and the tests use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from kera.diagnostics import ExitCode, KeraError
from kera.ir import values
from kera.ir.types import ArrayType, FixedType, TupleType, Type
from kera.rtl.packing import pack, unpack

SYNC = 0xA5
#: A vector sent to the board.
KIND_VECTOR = 0x01
#: A result sent back by the board.
KIND_RESULT = 0x81
#: An error reply: a one-byte payload naming what was wrong with the frame received.
KIND_ERROR = 0xEE
HEADER_BYTES = 4  # sync, kind, length (2)
#: The UART's baud rate.
DEFAULT_BAUD = 115200
#: Idle time, in bit times, after which the board counts a frame in progress as truncated.
IDLE_BITS = 32
CRC_POLY = 0x07

#: Error codes carried by an error reply (and by ``FrameError.code``).
ERR_CRC = 1
ERR_LENGTH = 2
ERR_KIND = 3
ERR_TRUNCATED = 4
ERR_OVERRUN = 5
ERR_SYNC = 6  # only the host-side decoder reports it: the board skips bytes until a sync byte
ERR_TRAILING = 7  # host side: bytes after the CRC
ERRORS = {
    ERR_CRC: "bad CRC",
    ERR_LENGTH: "wrong payload length",
    ERR_KIND: "unknown frame kind",
    ERR_TRUNCATED: "truncated frame (the line went idle mid-frame)",
    ERR_OVERRUN: "vector received while the core had not taken the previous one",
    ERR_SYNC: "missing sync byte",
    ERR_TRAILING: "bytes after the CRC",
}


class FrameError(KeraError):
    """A frame that does not check out; ``code`` is one of the ``ERR_*`` codes."""

    def __init__(self, code: int, detail: str = "") -> None:
        self.code = code
        text = ERRORS.get(code, f"error code {code}")
        super().__init__(f"bad frame: {text}{': ' + detail if detail else ''}",
                         exit_code=ExitCode.USER)


def crc8(data: bytes, crc: int = 0) -> int:
    """Return the CRC-8 (polynomial 0x07, MSB first) of ``data`` continued from ``crc``."""
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ CRC_POLY) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def encode(kind: int, payload: bytes) -> bytes:
    """Return the frame carrying ``payload`` with ``kind``."""
    if not 0 <= len(payload) <= 0xFFFF:
        raise ValueError(f"payload must be at most 65535 bytes, not {len(payload)}")
    body = bytes([kind, len(payload) & 0xFF, len(payload) >> 8]) + payload
    return bytes([SYNC]) + body + bytes([crc8(body)])


def decode(frame: bytes, *, kind: int, length: int) -> bytes:
    """Return the payload of ``frame``; raise ``FrameError`` unless it is exactly one frame of
    ``kind`` with a ``length``-byte payload and a matching CRC."""
    if len(frame) < HEADER_BYTES + 1:
        raise FrameError(ERR_TRUNCATED, f"{len(frame)} bytes")
    if frame[0] != SYNC:
        raise FrameError(ERR_SYNC, f"0x{frame[0]:02x}")
    if frame[1] != kind:
        raise FrameError(ERR_KIND, f"0x{frame[1]:02x}, expected 0x{kind:02x}")
    declared = frame[2] | frame[3] << 8
    if declared != length:
        raise FrameError(ERR_LENGTH, f"{declared}, expected {length}")
    end = HEADER_BYTES + length + 1
    if len(frame) < end:
        raise FrameError(ERR_TRUNCATED, f"{len(frame)} of {end} bytes")
    if len(frame) > end:
        raise FrameError(ERR_TRAILING, f"{len(frame) - end}")
    if crc8(frame[1:end - 1]) != frame[end - 1]:
        raise FrameError(ERR_CRC)
    return frame[HEADER_BYTES:end - 1]


def split(stream: bytes) -> list[bytes]:
    """Split bytes received from the board into frames (each as received, CRC unchecked);
    bytes before a sync byte are skipped, and an incomplete last frame is returned as is."""
    frames, i = [], 0
    while i < len(stream):
        if stream[i] != SYNC:
            i += 1
            continue
        if i + HEADER_BYTES > len(stream):
            frames.append(stream[i:])
            break
        end = i + HEADER_BYTES + (stream[i + 2] | stream[i + 3] << 8) + 1
        frames.append(stream[i:end])
        i = end
    return frames


@dataclass(frozen=True)
class Layout:
    """How one design's ports travel in frames: the parameters in order and the result type."""

    params: tuple[tuple[str, Type], ...]
    result: Type

    @property
    def in_bits(self) -> int:
        """Return the width of all the input ports together."""
        return sum(t.flat_width for _, t in self.params)

    @property
    def in_bytes(self) -> int:
        """Return the length of a vector's payload."""
        return max(1, (self.in_bits + 7) // 8)

    @property
    def out_bytes(self) -> int:
        """Return the length of a result's payload."""
        return max(1, (self.result.flat_width + 7) // 8)

    def vector(self, row: Mapping[str, object]) -> bytes:
        """Return the vector frame for one input row (param name → JSON value, checked)."""
        bits, shift = 0, 0
        for name, t in self.params:
            bits |= pack(_raw(row[name], t, name), t) << shift
            shift += t.flat_width
        return encode(KIND_VECTOR, bits.to_bytes(self.in_bytes, "little"))

    def result_value(self, frame: bytes) -> object:
        """Return the JSON value a result frame carries; raise ``FrameError`` for an error
        reply or a frame that does not check out."""
        if len(frame) > 1 and frame[1] == KIND_ERROR:
            code = decode(frame, kind=KIND_ERROR, length=1)[0]
            raise FrameError(code, "reported by the board")
        payload = decode(frame, kind=KIND_RESULT, length=self.out_bytes)
        return values.from_raw_json(unpack(int.from_bytes(payload, "little"), self.result),
                                    self.result)


def _raw(obj: object, t: Type, where: str) -> object:
    """Return a JSON value with its fixed-point leaves as raw bits (FIXED.md), as ports see it."""
    if isinstance(t, FixedType):
        if isinstance(obj, float):  # json.loads of an exactly representable number
            obj = values.decimal_text(Fraction(obj))
        return values.fixed_from_json(obj, t, where)
    if isinstance(t, ArrayType) and isinstance(obj, list):
        return [_raw(v, t.elem, where) for v in obj]
    if isinstance(t, TupleType) and isinstance(obj, list):
        return [_raw(v, e, where) for v, e in zip(obj, t.elems, strict=True)]
    return obj


__all__ = ["ERRORS", "KIND_ERROR", "KIND_RESULT", "KIND_VECTOR", "SYNC", "FrameError", "Layout",
           "crc8", "decode", "encode", "split"]
