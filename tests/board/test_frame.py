"""The frame format: round trips, and the decoder rejects every corrupted frame."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kera.board import frame
from kera.board.frame import KIND_RESULT, KIND_VECTOR, FrameError, crc8, decode, encode
from kera.ir.types import ArrayType, IntType

payloads = st.binary(min_size=1, max_size=40)


def test_crc8_check_value() -> None:
    # The catalogue's check value of CRC-8 (poly 0x07, init 0): crc("123456789") = 0xF4.
    assert crc8(b"123456789") == 0xF4


def test_frame_bytes() -> None:
    assert encode(KIND_RESULT, b"\x0c\x00\x00\x00") == bytes(
        [0xA5, 0x81, 0x04, 0x00, 0x0C, 0x00, 0x00, 0x00, crc8(b"\x81\x04\x00\x0c\x00\x00\x00")])


@given(payloads)
def test_round_trip(payload: bytes) -> None:
    assert decode(encode(KIND_VECTOR, payload), kind=KIND_VECTOR, length=len(payload)) == payload


@given(payloads, st.data())
def test_every_single_bit_flip_is_rejected(payload: bytes, data: st.DataObject) -> None:
    good = bytearray(encode(KIND_VECTOR, payload))
    bit = data.draw(st.integers(0, len(good) * 8 - 1))
    good[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(FrameError):
        decode(bytes(good), kind=KIND_VECTOR, length=len(payload))


@given(payloads, st.data())
def test_every_truncation_is_rejected(payload: bytes, data: st.DataObject) -> None:
    good = encode(KIND_VECTOR, payload)
    cut = data.draw(st.integers(0, len(good) - 1))
    with pytest.raises(FrameError) as info:
        decode(good[:cut], kind=KIND_VECTOR, length=len(payload))
    assert info.value.code in (frame.ERR_TRUNCATED, frame.ERR_LENGTH, frame.ERR_SYNC)


@given(payloads, st.integers(0, 0xFFFF))
def test_a_wrong_length_is_rejected_even_with_a_good_crc(payload: bytes, length: int) -> None:
    if length == len(payload):
        length += 1
    with pytest.raises(FrameError) as info:
        decode(encode(KIND_VECTOR, payload), kind=KIND_VECTOR, length=length)
    assert info.value.code == frame.ERR_LENGTH


@given(payloads, st.binary(min_size=1, max_size=4))
def test_trailing_bytes_are_rejected(payload: bytes, extra: bytes) -> None:
    with pytest.raises(FrameError):
        decode(encode(KIND_VECTOR, payload) + extra, kind=KIND_VECTOR, length=len(payload))


def test_layout_packs_the_first_parameter_lowest() -> None:
    x = ArrayType(IntType(16, True), 2)
    layout = frame.Layout((("x", x), ("y", IntType(8, False))), IntType(32, True))
    assert layout.in_bits == 40 and layout.in_bytes == 5
    assert layout.vector({"x": [1, -1], "y": 7})[4:9] == b"\x01\x00\xff\xff\x07"
    result = encode(KIND_RESULT, (-12 & 0xFFFFFFFF).to_bytes(4, "little"))
    assert layout.result_value(result) == -12


def test_an_error_reply_names_the_error() -> None:
    layout = frame.Layout((("a", IntType(8, False)),), IntType(8, False))
    with pytest.raises(FrameError, match="bad CRC: reported by the board"):
        layout.result_value(encode(frame.KIND_ERROR, bytes([frame.ERR_CRC])))


def test_split_finds_frames_after_noise() -> None:
    a, b = encode(KIND_RESULT, b"\x01"), encode(KIND_RESULT, b"\x02\x03")
    assert frame.split(b"\x00\x11" + a + b + b[:3]) == [a, b, b[:3]]
