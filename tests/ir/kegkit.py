"""Low-level helpers to take ``.keg`` files apart and put them back together in tests."""

from __future__ import annotations

import hashlib
import struct

from kera.ir import keg


def sections(data: bytes) -> list[tuple[int, int, bytes]]:
    """Return the (id, critical flag, body) of each section of a well-formed file."""
    (count,) = struct.unpack(">H", data[6:8])
    out = []
    for k in range(count):
        sid, crit, off, length = struct.unpack_from(">HBII", data, 8 + 11 * k)
        out.append((sid, crit, data[off : off + length]))
    return out


def assemble(parts: list[tuple[int, int, bytes]], version: int = keg.PURE_VERSION) -> bytes:
    """Build a file from sections, with a correct table and digest."""
    offset = 8 + 11 * len(parts)
    table = b""
    for sid, crit, body in parts:
        table += struct.pack(">HBII", sid, crit, offset, len(body))
        offset += len(body)
    data = b"KEG\x00" + struct.pack(">HH", version, len(parts)) + table
    data += b"".join(body for _, _, body in parts)
    return data + hashlib.sha3_256(data).digest()


def redigest(data: bytes) -> bytes:
    """Replace the trailing digest with the correct one for the (possibly corrupted) body."""
    return data[:-32] + hashlib.sha3_256(data[:-32]).digest()


def replace_section(data: bytes, sid: int, body: bytes) -> bytes:
    """Return ``data`` with section ``sid``'s body replaced (keeping its format version)."""
    version = struct.unpack(">H", data[4:6])[0]
    return assemble([(s, c, body if s == sid else b) for s, c, b in sections(data)], version)
