"""The .keg artifact: canonical bytes, round trips, and a loader that trusts nothing."""

from __future__ import annotations

import random
import struct

import pytest
from hypothesis import given, settings

from kera.diagnostics import KeraError, Span
from kera.ir import keg
from kera.ir.graph import MAX_II, Graph, Region, const, node_id, param
from kera.ir.types import uint
from kera.ir.validate import validate

from .kegkit import assemble, redigest, replace_section, sections
from .kernels import ALL
from .randgraph import graphs, rebuild_shuffled


def _all_kernels() -> Graph:
    g = Graph(source_path="kernels.kera")
    for build in ALL.values():
        build(g)
    for i, nid in enumerate(g.nodes):
        if i % 3:
            g.spans[nid] = Span(i, i + 2)
    return g


KERNELS_KEG = keg.write(_all_kernels())
SMALL_KEG = keg.write(ALL["edge_semantics"]())


@pytest.mark.parametrize("name", sorted(ALL))
def test_round_trip_is_byte_identical(name: str) -> None:
    g = ALL[name]()
    data = keg.write(g)
    back = keg.load(data)
    assert keg.write(back) == data
    assert back.fingerprint() == g.fingerprint()
    assert back.regions == g.regions and validate(back) == []


def test_spans_and_source_path_survive() -> None:
    g = keg.load(KERNELS_KEG, "k.keg")
    assert g.source_path == "kernels.kera"
    original = _all_kernels()
    assert g.spans == {nid: s for nid, s in original.spans.items() if nid in g.nodes}
    assert g.spans


def test_dead_nodes_are_dropped_and_order_is_canonical() -> None:
    g = ALL["popcount32"]()
    other = rebuild_shuffled(g, seed=7, junk=10)
    assert len(other) > len(g)
    assert keg.write(other) == keg.write(g)


@settings(max_examples=40, deadline=None)
@given(graphs())
def test_random_graphs_round_trip(g: Graph) -> None:
    data = keg.write(g)
    back = keg.load(data)
    assert keg.write(back) == data
    assert back.fingerprint() == g.fingerprint()
    assert keg.write(rebuild_shuffled(g, seed=len(data))) == data


def test_magic_version_and_table_errors() -> None:
    def err(data: bytes) -> str:
        with pytest.raises(KeraError) as info:
            keg.load(data, "x.keg")
        assert info.value.exit_code == 1 and "\n" not in info.value.message
        return info.value.message

    assert err(b"") == "x.keg: invalid .keg file: not a .keg file (bad magic bytes)"
    assert "bad magic" in err(b"PK\x03\x04" + SMALL_KEG[4:])
    assert "unsupported format version 3" in err(SMALL_KEG[:4] + b"\x00\x03" + SMALL_KEG[6:])
    assert "digest mismatch" in err(SMALL_KEG[:-1] + bytes([SMALL_KEG[-1] ^ 1]))
    parts = sections(SMALL_KEG)
    assert "unknown critical section 99" in err(assemble(parts + [(99, 1, b"x")]))
    assert keg.write(keg.load(assemble(parts + [(99, 0, b"x")]))) == SMALL_KEG  # skipped
    assert "missing nodes section" in err(assemble([p for p in parts if p[0] != keg.NODES]))
    assert "out of order" in err(assemble([parts[1], parts[0], *parts[2:]]))
    assert "wrong critical flag" in err(assemble([(s, 0, b) for s, _, b in parts]))
    assert "bad critical flag 2" in err(assemble([(s, 2, b) for s, _, b in parts]))
    too_many = SMALL_KEG[:6] + struct.pack(">H", 9999) + SMALL_KEG[8:]
    assert "runs past the end" in err(redigest(too_many))
    gap = bytearray(SMALL_KEG)
    struct.pack_into(">I", gap, 8 + 3, struct.unpack_from(">I", gap, 8 + 3)[0] + 1)
    assert "bad offset or length" in err(redigest(bytes(gap)))


def _nodes_section(records: list[tuple]) -> tuple[bytes, bytes, bytes, bytes]:
    """Build strings/types/attributes/nodes sections from (op, type, inputs, attrs) records."""
    strings = sorted({r[0].encode() for r in records} | {k.encode() for r in records
                                                          for k, _ in r[3]})
    sidx = {s.decode(): i for i, s in enumerate(strings)}
    types = sorted({r[1].encode() for r in records})
    attr_recs = sorted({sidx[k].to_bytes(4, "big") + b"\x01" + v.to_bytes(16, "big", signed=True)
                        for r in records for k, v in r[3]})
    ids: list[bytes] = []
    body = len(records).to_bytes(4, "big")
    for op, t, inputs, attrs in records:
        refs = tuple(ids[i] if i < len(ids) else bytes(32) for i in inputs)
        nid = node_id(op, t, refs, tuple(attrs))
        ids.append(nid)
        body += nid + sidx[op].to_bytes(4, "big") + types.index(t.encode()).to_bytes(4, "big")
        body += len(inputs).to_bytes(4, "big") + b"".join(i.to_bytes(4, "big") for i in inputs)
        arecs = [attr_recs.index(sidx[k].to_bytes(4, "big") + b"\x01"
                                 + v.to_bytes(16, "big", signed=True)) for k, v in attrs]
        body += len(arecs).to_bytes(4, "big") + b"".join(a.to_bytes(4, "big") for a in arecs)

    def table(items: list[bytes]) -> bytes:
        return len(items).to_bytes(4, "big") + b"".join(
            len(x).to_bytes(4, "big") + x for x in items)

    return table(strings), table(types), len(attr_recs).to_bytes(4, "big") + b"".join(
        attr_recs), body


def _crafted(records: list[tuple]) -> bytes:
    s, t, a, n = _nodes_section(records)
    empty = b"\x00\x00\x00\x00"
    return assemble([(1, 1, s), (2, 1, t), (3, 1, a), (4, 1, n), (5, 1, empty),
                     (6, 1, empty + bytes.fromhex(Graph().fingerprint()))])


def test_crafted_files_with_correct_hashes_are_still_checked() -> None:
    u8, u16 = uint(8), uint(16)
    ok = _crafted([("const", u8, [], [("value", 1)])])
    assert len(keg.load(ok).nodes) == 1  # a dead node is legal in a file (never written)

    def err(records: list[tuple]) -> str:
        with pytest.raises(KeraError) as info:
            keg.load(_crafted(records))
        return info.value.message

    mixed = [("const", u8, [], [("value", 1)]), ("const", u16, [], [("value", 1)]),
             ("add", u8, [0, 1], [])]
    assert "node 2: `add`(u8, u16) -> u8: operands must have one integer type" in err(mixed)
    assert "unknown opcode `frob`" in err([("frob", u8, [], [])])
    assert "out of range for u8" in err([("const", u8, [], [("value", 300)])])
    twice = [("const", u8, [], [("value", 1)])] * 2
    assert "node 1 (`const`) repeats an earlier node" in err(twice)
    forward = [("const", u8, [], [("value", 1)]), ("add", u8, [1, 0], [])]
    assert "input node index 1 is out of range (1)" in err(forward)


def test_stored_hash_mismatch_is_caught() -> None:
    g = ALL["gray"]()
    data = keg.write(g)
    body = bytearray(dict((s, b) for s, _, b in sections(data))[keg.NODES])
    body[4] ^= 0x80  # first byte of the first node's stored hash
    with pytest.raises(KeraError, match="node 0 .* stored hash does not match"):
        keg.load(replace_section(data, keg.NODES, bytes(body)))


def test_region_and_export_checks() -> None:
    data = keg.write(ALL["gray"]())
    body = dict((s, b) for s, _, b in sections(data))
    exports = bytearray(body[keg.EXPORTS])
    exports[-1] ^= 1
    with pytest.raises(KeraError, match="stored fingerprint does not match"):
        keg.load(replace_section(data, keg.EXPORTS, bytes(exports)))
    regions = bytearray(body[keg.REGIONS])
    regions[-1] ^= 1
    with pytest.raises(KeraError, match="region 0 .* stored hash does not match"):
        keg.load(replace_section(data, keg.REGIONS, bytes(regions)))
    with pytest.raises(KeraError, match="trailing bytes"):
        keg.load(replace_section(data, keg.SPANS, body[keg.SPANS] + b"\x00"))
    with pytest.raises(KeraError, match="count 1000000 exceeds"):
        keg.load(replace_section(data, keg.NODES, (10**6).to_bytes(4, "big") + b"\x00" * 60))


# ----------------------------------------------------------------------------- fuzzing


def _rejected(data: bytes) -> bool:
    """Load fuzzed bytes: True when rejected; an accepted file must be canonical."""
    try:
        g = keg.load(data, "fuzz.keg")
    except KeraError as e:
        assert e.exit_code == 1 and "\n" not in e.message
        return True
    assert keg.write(g) == data, "accepted a non-canonical file"
    return False


def test_every_truncation_and_bit_flip_is_rejected() -> None:
    data = SMALL_KEG
    for n in range(len(data)):
        with pytest.raises(KeraError):
            keg.load(data[:n])
    for pos in range(len(data)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[pos] ^= 1 << bit
            with pytest.raises(KeraError):
                keg.load(bytes(flipped))


def test_fuzz_with_recomputed_digests() -> None:
    """Corruptions that slip past the digest must be caught by the deeper checks."""
    rng = random.Random(20240601)
    bases = [SMALL_KEG, KERNELS_KEG, keg.write(ALL["mat2"]())]
    accepted = 0
    for trial in range(2000):
        data = bytearray(rng.choice(bases)[:-32])
        kind = trial % 4
        if kind == 0:  # flip a few bits
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == 1:  # overwrite a 4-byte field with an interesting value
            pos = rng.randrange(len(data) - 4)
            data[pos : pos + 4] = rng.choice([0, 1, 2, 0xFF, 0xFFFF, 0xFFFFFFFF,
                                              rng.getrandbits(32)]).to_bytes(4, "big")
        elif kind == 2:  # splice two files
            other = rng.choice(bases)[:-32]
            cut = rng.randrange(len(data))
            data = data[:cut] + other[rng.randrange(len(other)):]
        else:  # truncate or extend the body
            data = data[: rng.randrange(len(data))] + bytes(rng.randrange(3))
        accepted += not _rejected(redigest(bytes(data) + bytes(32)))
    assert accepted < 200  # nearly every corruption is caught


def test_spliced_and_garbage_files_are_rejected() -> None:
    rng = random.Random(5)
    for _ in range(300):
        a, b = SMALL_KEG, KERNELS_KEG
        data = a[: rng.randrange(len(a))] + b[rng.randrange(len(b)) :]
        if data != a and data != b:
            with pytest.raises(KeraError):
                keg.load(data)
        with pytest.raises(KeraError):
            keg.load(b"KEG\x00" + rng.randbytes(rng.randrange(200)))


def test_write_is_deterministic_across_region_order() -> None:
    g1 = Graph()
    x = param(g1, 0, "x", uint(8))
    c = const(g1, uint(8), 3)
    g1.add_region(Region("b", (x,), g1.add("add", uint(8), (x, c))))
    g1.add_region(Region("a", (x,), c))
    g2 = Graph()
    x2 = param(g2, 0, "x", uint(8))
    c2 = const(g2, uint(8), 3)
    g2.add_region(Region("a", (x2,), c2))
    g2.add_region(Region("b", (x2,), g2.add("add", uint(8), (x2, c2))))
    assert keg.write(g1) == keg.write(g2)


@pytest.mark.parametrize("ii", [0, -3, MAX_II + 1, 1 << 40])
def test_an_ii_directive_out_of_range_is_a_malformed_file(ii: int) -> None:
    """A `.keg` asking for an II the language refuses (`#[pipeline(ii = N)]`: 1 to 2^20) is
    refused where it is loaded: the scheduler's tables grow with the II (2^32 ran out of
    memory before), and a file written by the compiler never holds one."""
    g = _with_ii(ii)
    with pytest.raises(KeraError) as info:
        keg.load(keg.write(g), "x.keg")
    assert info.value.message == (f"x.keg: invalid .keg file: directives section: `f` asks for "
                                  f"II {ii} (1 to {MAX_II})")


def test_the_longest_ii_loads() -> None:
    g = _with_ii(MAX_II)
    assert keg.load(keg.write(g)).directives == {"f": {"ii": MAX_II}}


def _with_ii(ii: int) -> Graph:
    g = Graph()
    x = g.add("param", uint(8), (), {"name": "x", "index": 0})
    g.regions["f"] = Region("f", (x,), g.add("not", uint(8), (x,)))
    g.directives["f"] = {"ii": ii}
    return g
