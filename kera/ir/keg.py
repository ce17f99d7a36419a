"""The ``.keg`` artifact: a graph as canonical, self-checking bytes (see docs/keg-format.md).

``write`` is deterministic: it keeps only the nodes the regions reach, in the canonical order
of ``Graph.canonical_order``, and sorts every table, so two graphs with one fingerprint give
identical bytes. ``load`` trusts nothing: it checks the digest, the section table, every index,
every node hash and every type rule, and raises ``KeraError`` (exit code 1) with one line.
"""

from __future__ import annotations

import hashlib
import struct
from itertools import pairwise

from kera.diagnostics import ExitCode, KeraError, Span
from kera.ir.graph import MAX_II, Graph, Region, StateSlot
from kera.ir.types import Type, decode_type

MAGIC = b"KEG\x00"
FORMAT_VERSION = 2  # version 2 adds state slots to region records (STATE.md)
PURE_VERSION = 1  # a graph without state is written as version 1, byte for byte as before
DIGEST_SIZE = 32
HEADER_SIZE = 8
ENTRY_SIZE = 11  # u16 id, u8 critical, u32 offset, u32 length

STRINGS, TYPES, ATTRIBUTES, NODES, REGIONS, EXPORTS, SPANS, DIRECTIVES = 1, 2, 3, 4, 5, 6, 7, 8
STATE_NAMES = 9
SECTION_NAMES = {
    STRINGS: "strings", TYPES: "types", ATTRIBUTES: "attributes", NODES: "nodes",
    REGIONS: "regions", EXPORTS: "exports", SPANS: "spans", DIRECTIVES: "directives",
    STATE_NAMES: "state names",
}
CRITICAL = {
    STRINGS: 1, TYPES: 1, ATTRIBUTES: 1, NODES: 1, REGIONS: 1, EXPORTS: 1, SPANS: 0,
    DIRECTIVES: 0, STATE_NAMES: 0,
}
ATTR_INT, ATTR_STR = 1, 2
NO_PATH = 0xFFFF_FFFF


def _u32(n: int) -> bytes:
    return n.to_bytes(4, "big")


def _lp(data: bytes) -> bytes:
    return _u32(len(data)) + data


# ----------------------------------------------------------------------------- writer


def write(graph: Graph) -> bytes:
    """Return the canonical ``.keg`` bytes of ``graph`` (only nodes its regions reach)."""
    order = graph.canonical_order()
    index = {nid: i for i, nid in enumerate(order)}
    nodes = [graph.nodes[nid] for nid in order]
    names = sorted(graph.regions, key=lambda n: n.encode("utf-8"))

    strings = {n.op for n in nodes} | set(names)
    for n in nodes:
        for key, value in n.attrs:
            strings.add(key)
            if isinstance(value, str):
                strings.add(value)
    string_list = sorted(s.encode("utf-8") for s in strings)
    sidx = {s.decode("utf-8"): i for i, s in enumerate(string_list)}

    type_list = sorted({n.type.encode() for n in nodes})
    tidx = {enc: i for i, enc in enumerate(type_list)}

    def attr_record(key: str, value: int | str) -> bytes:
        if isinstance(value, str):
            return _u32(sidx[key]) + bytes([ATTR_STR]) + _u32(sidx[value])
        return _u32(sidx[key]) + bytes([ATTR_INT]) + value.to_bytes(16, "big", signed=True)

    attr_list = sorted({attr_record(k, v) for n in nodes for k, v in n.attrs})
    aidx = {rec: i for i, rec in enumerate(attr_list)}

    node_records = [_u32(len(nodes))]
    for n in nodes:
        rec = [n.id, _u32(sidx[n.op]), _u32(tidx[n.type.encode()]), _u32(len(n.inputs))]
        rec.extend(_u32(index[i]) for i in n.inputs)
        rec.append(_u32(len(n.attrs)))
        rec.extend(_u32(aidx[attr_record(k, v)]) for k, v in n.attrs)
        node_records.append(b"".join(rec))

    stateful = any(r.stateful for r in graph.regions.values())
    region_records = [_u32(len(names))]
    for name in names:
        r = graph.regions[name]
        slots = b""
        if stateful:
            slots = _u32(len(r.states)) + b"".join(
                _u32(index[s.read]) + _u32(index[s.init]) + _u32(index[s.next]) for s in r.states)
        region_records.append(
            _u32(sidx[name]) + _u32(len(r.params)) + b"".join(_u32(index[p]) for p in r.params)
            + _u32(index[r.result]) + slots + r.region_hash()
        )
    exports = _u32(len(names)) + b"".join(_u32(i) for i in range(len(names)))
    exports += bytes.fromhex(graph.fingerprint())

    sections = [
        (STRINGS, _u32(len(string_list)) + b"".join(_lp(s) for s in string_list)),
        (TYPES, _u32(len(type_list)) + b"".join(_lp(t) for t in type_list)),
        (ATTRIBUTES, _u32(len(attr_list)) + b"".join(attr_list)),
        (NODES, b"".join(node_records)),
        (REGIONS, b"".join(region_records)),
        (EXPORTS, exports),
        (SPANS, _spans_section(graph, order)),
        (DIRECTIVES, _directives_section(graph)),
    ]
    named = sorted((index[nid], text) for nid, text in graph.state_names.items() if nid in index)
    if named:
        sections.append((STATE_NAMES, _u32(len(named)) + b"".join(
            _u32(i) + _lp(text.encode("utf-8")) for i, text in named)))
    return _assemble(sections, FORMAT_VERSION if stateful else PURE_VERSION)


def _spans_section(graph: Graph, order: list[bytes]) -> bytes:
    path = graph.source_path
    out = [_lp(path.encode("utf-8")) if path is not None else _u32(NO_PATH)]
    entries = []
    for i, nid in enumerate(order):
        span = graph.spans.get(nid)
        if span is not None and span.end < 1 << 32:
            entries.append(_u32(i) + _u32(span.start) + _u32(span.end))
    out.append(_u32(len(entries)))
    out.extend(entries)
    return b"".join(out)


def _directives_section(graph: Graph) -> bytes:
    entries = sorted(
        (region.encode("utf-8"), key.encode("utf-8"), value)
        for region, keys in graph.directives.items() if region in graph.regions
        for key, value in keys.items()
    )
    out = [_u32(len(entries))]
    out.extend(_lp(r) + _lp(k) + v.to_bytes(8, "big", signed=True) for r, k, v in entries)
    return b"".join(out)


def _assemble(sections: list[tuple[int, bytes]], version: int) -> bytes:
    offset = HEADER_SIZE + ENTRY_SIZE * len(sections)
    table = []
    for sid, body in sections:
        table.append(struct.pack(">HBII", sid, CRITICAL[sid], offset, len(body)))
        offset += len(body)
    head = MAGIC + struct.pack(">HH", version, len(sections)) + b"".join(table)
    data = head + b"".join(body for _, body in sections)
    return data + hashlib.sha3_256(data).digest()


# ----------------------------------------------------------------------------- loader


class _Bad(Exception):
    """A problem in the file; becomes a one-line ``KeraError``."""


class _Reader:
    """Bounds-checked big-endian reads from one section."""

    def __init__(self, data: bytes, section: str) -> None:
        self.data, self.pos, self.section = data, 0, section

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise _Bad(f"{self.section} section is truncated")
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def u8(self) -> int:
        return self.take(1)[0]

    def u32(self) -> int:
        return int.from_bytes(self.take(4), "big")

    def count(self, min_record: int) -> int:
        """Read a record count, refusing one the remaining bytes cannot hold."""
        n = self.u32()
        if n * min_record > len(self.data) - self.pos:
            raise _Bad(f"{self.section} section: count {n} exceeds the section")
        return n

    def index(self, limit: int, what: str) -> int:
        i = self.u32()
        if i >= limit:
            raise _Bad(f"{self.section} section: {what} index {i} is out of range ({limit})")
        return i

    def finish(self) -> None:
        if self.pos != len(self.data):
            raise _Bad(f"{self.section} section has {len(self.data) - self.pos} trailing bytes")


def load(data: bytes, name: str = "<keg>") -> Graph:
    """Parse and fully check ``.keg`` bytes; raise ``KeraError`` (exit 1) on any problem."""
    try:
        return _load(bytes(data))
    except _Bad as e:
        raise KeraError(f"{name}: invalid .keg file: {e}", exit_code=ExitCode.USER) from None


def _load(data: bytes) -> Graph:
    if data[:4] != MAGIC:
        raise _Bad("not a .keg file (bad magic bytes)")
    if len(data) < HEADER_SIZE + DIGEST_SIZE:
        raise _Bad(f"truncated: {len(data)} bytes is shorter than any .keg file")
    version, count = struct.unpack(">HH", data[4:8])
    if version not in (PURE_VERSION, FORMAT_VERSION):
        raise _Bad(f"unsupported format version {version} (this build reads {PURE_VERSION} and "
                   f"{FORMAT_VERSION})")
    body_end = len(data) - DIGEST_SIZE
    if hashlib.sha3_256(data[:body_end]).digest() != data[body_end:]:
        raise _Bad("digest mismatch (the file is corrupt or truncated)")
    sections = _section_table(data, count, body_end)
    graph = Graph()
    strings = _strings(_Reader(sections[STRINGS], "strings"))
    types = _types(_Reader(sections[TYPES], "types"))
    attrs = _attributes(_Reader(sections[ATTRIBUTES], "attributes"), strings)
    order = _nodes(_Reader(sections[NODES], "nodes"), graph, strings, types, attrs)
    regions = _regions(_Reader(sections[REGIONS], "regions"), graph, strings, order,
                       version == FORMAT_VERSION)
    _exports(_Reader(sections[EXPORTS], "exports"), graph, regions)
    if SPANS in sections:
        _spans(_Reader(sections[SPANS], "spans"), graph, order)
    if DIRECTIVES in sections:
        _directives(_Reader(sections[DIRECTIVES], "directives"), graph)
    if STATE_NAMES in sections:
        _state_names(_Reader(sections[STATE_NAMES], "state names"), graph, order)
    return graph


def _section_table(data: bytes, count: int, body_end: int) -> dict[int, bytes]:
    """Check the section table (ordered, contiguous, in bounds) and return known sections."""
    pos = HEADER_SIZE + ENTRY_SIZE * count
    if pos > body_end:
        raise _Bad(f"section table of {count} entries runs past the end of the file")
    out: dict[int, bytes] = {}
    last_id = 0
    for k in range(count):
        sid, critical, offset, length = struct.unpack_from(">HBII", data, HEADER_SIZE + 11 * k)
        if sid <= last_id:
            raise _Bad(f"section {sid} is out of order or repeated in the section table")
        if critical > 1:
            raise _Bad(f"section {sid} has a bad critical flag {critical}")
        if offset != pos or length > body_end - pos:
            raise _Bad(f"section {sid} has a bad offset or length ({offset}, {length})")
        if sid in CRITICAL:
            if critical != CRITICAL[sid]:
                raise _Bad(f"{SECTION_NAMES[sid]} section has the wrong critical flag")
            out[sid] = data[offset : offset + length]
        elif critical:
            raise _Bad(f"unknown critical section {sid} (written by a newer kera-hls?)")
        last_id, pos = sid, pos + length
    if pos != body_end:
        raise _Bad(f"{body_end - pos} bytes between the last section and the digest")
    missing = [SECTION_NAMES[s] for s, c in CRITICAL.items() if c and s not in out]
    if missing:
        raise _Bad(f"missing {missing[0]} section")
    return out


def _strictly_sorted(items: list[bytes]) -> bool:
    return all(a < b for a, b in pairwise(items))


def _strings(r: _Reader) -> list[str]:
    raw = [r.take(r.u32()) for _ in range(r.count(4))]
    r.finish()
    if not _strictly_sorted(raw):
        raise _Bad("strings section is not strictly sorted")
    try:
        return [s.decode("utf-8") for s in raw]
    except UnicodeDecodeError:
        raise _Bad("strings section holds invalid UTF-8") from None


def _types(r: _Reader) -> list[Type]:
    raw = [r.take(r.u32()) for _ in range(r.count(4))]
    r.finish()
    if not _strictly_sorted(raw):
        raise _Bad("types section is not strictly sorted")
    out = []
    for i, enc in enumerate(raw):
        try:
            t, end = decode_type(enc)
            ok = end == len(enc) and t.encode() == enc
        except (ValueError, RecursionError) as e:
            raise _Bad(f"type {i}: {e or 'nested too deeply'}") from None
        if not ok:
            raise _Bad(f"type {i} is not in canonical form")
        out.append(t)
    return out


def _attributes(r: _Reader, strings: list[str]) -> list[tuple[str, int | str]]:
    out: list[tuple[str, int | str]] = []
    records = []
    for _ in range(r.count(9)):
        start = r.pos
        key = strings[r.index(len(strings), "string")]
        tag = r.u8()
        if tag == ATTR_INT:
            out.append((key, int.from_bytes(r.take(16), "big", signed=True)))
        elif tag == ATTR_STR:
            out.append((key, strings[r.index(len(strings), "string")]))
        else:
            raise _Bad(f"attributes section: unknown value tag {tag}")
        records.append(r.data[start : r.pos])
    r.finish()
    if not _strictly_sorted(records):
        raise _Bad("attributes section is not strictly sorted")
    return out


def _nodes(r: _Reader, graph: Graph, strings: list[str], types: list[Type],
           attrs: list[tuple[str, int | str]]) -> list[bytes]:
    order: list[bytes] = []
    for k in range(r.count(DIGEST_SIZE + 16)):
        stored = r.take(DIGEST_SIZE)
        op = strings[r.index(len(strings), "string")]
        t = types[r.index(len(types), "type")]
        inputs = [order[r.index(k, "input node")] for _ in range(r.count(4))]
        items = [attrs[r.index(len(attrs), "attribute")] for _ in range(r.count(4))]
        keys = [key for key, _ in items]
        if keys != sorted(set(keys)):
            raise _Bad(f"node {k}: attributes are not sorted by key")
        before = len(graph.nodes)
        try:
            nid = graph.add(op, t, inputs, dict(items))
        except ValueError as e:
            raise _Bad(f"node {k}: {e}") from None
        if nid != stored:
            raise _Bad(f"node {k} (`{op}`): stored hash does not match its content")
        if len(graph.nodes) == before:
            raise _Bad(f"node {k} (`{op}`) repeats an earlier node")
        order.append(nid)
    r.finish()
    return order


def _regions(r: _Reader, graph: Graph, strings: list[str], order: list[bytes],
             with_states: bool) -> list[str]:
    names: list[str] = []
    last = -1
    for k in range(r.count(12 + DIGEST_SIZE)):
        name_index = r.index(len(strings), "string")
        if name_index <= last:
            raise _Bad("regions section is not sorted by name")
        last = name_index
        params = tuple(order[r.index(len(order), "node")] for _ in range(r.count(4)))
        result = order[r.index(len(order), "node")]
        states: tuple[StateSlot, ...] = ()
        if with_states:
            states = tuple(StateSlot(*(order[r.index(len(order), "node")] for _ in range(3)))
                           for _ in range(r.count(12)))
        region = Region(strings[name_index], params, result, states)
        if r.take(DIGEST_SIZE) != region.region_hash():
            raise _Bad(f"region {k} (`{region.name}`): stored hash does not match its content")
        try:
            graph.add_region(region)
        except ValueError as e:
            raise _Bad(str(e)) from None
        names.append(region.name)
    r.finish()
    return names


def _exports(r: _Reader, graph: Graph, regions: list[str]) -> None:
    count = r.count(4)
    exported = [r.index(len(regions), "region") for _ in range(count)]
    if exported != list(range(len(regions))):
        raise _Bad("exports section must list every region once, in order")
    if r.take(DIGEST_SIZE).hex() != graph.fingerprint():
        raise _Bad("stored fingerprint does not match the graph")
    r.finish()


def _spans(r: _Reader, graph: Graph, order: list[bytes]) -> None:
    size = r.u32()
    if size != NO_PATH:
        try:
            graph.source_path = r.take(size).decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad("spans section: source path is not UTF-8") from None
    last = -1
    for _ in range(r.count(12)):
        i = r.index(len(order), "node")
        start, end = r.u32(), r.u32()
        if i <= last or end < start:
            raise _Bad("spans section: entries out of order or with end before start")
        last = i
        graph.spans[order[i]] = Span(start, end)
    r.finish()


def _state_names(r: _Reader, graph: Graph, order: list[bytes]) -> None:
    last = -1
    for _ in range(r.count(8)):
        i = r.index(len(order), "node")
        if i <= last or graph.nodes[order[i]].op != "state":
            raise _Bad("state names section: entries out of order or not naming a `state` node")
        last = i
        try:
            graph.state_names[order[i]] = r.take(r.u32()).decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad("state names section: a name is not UTF-8") from None
    r.finish()


def _directives(r: _Reader, graph: Graph) -> None:
    last = None
    for _ in range(r.count(16)):
        try:
            region = r.take(r.u32()).decode("utf-8")
            key = r.take(r.u32()).decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad("directives section: a name is not UTF-8") from None
        value = int.from_bytes(r.take(8), "big", signed=True)
        if region not in graph.regions:
            raise _Bad(f"directives section: unknown region `{region}`")
        if last is not None and (region, key) <= last:
            raise _Bad("directives section: entries out of order or repeated")
        last = (region, key)
        if key == "ii" and not 1 <= value <= MAX_II:
            raise _Bad(f"directives section: `{region}` asks for II {value} (1 to {MAX_II})")
        graph.directives.setdefault(region, {})[key] = value
    r.finish()


__all__ = ["FORMAT_VERSION", "MAGIC", "PURE_VERSION", "load", "write"]
