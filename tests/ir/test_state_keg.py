"""`.keg` version 2 (docs/keg-format.md): stateful regions carry their state slots; round trips
are byte-identical and keep the fingerprint; corrupt state records are refused in one line."""

from __future__ import annotations

import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings

from kera.cli import main
from kera.diagnostics import KeraError
from kera.elaborate import build_program
from kera.ir import keg
from kera.ir.graph import Graph, Region, StateSlot
from kera.ir.validate import validate
from kera.opt import optimize
from tests.conftest import EXAMPLES
from tests.opt.randstate import state_programs

from .kegkit import redigest, replace_section, sections

STATEFUL = ["fir_stream", "biquad_q14", "crc32_stream", "histogram", "delay_line"]
ACC = "#[top]\nfn f(x: u8) -> u8 {\n    reg s: u8 = 3;\n    reg t: u4 = 1;\n" \
      "    s = s + x;\n    t = t ^ 1;\n    s ^ (t as u8)\n}\n"


def _graph(source: str, path: str = "t.kera") -> Graph:
    program = build_program(path, source)
    assert program.ok, [d.message for d in program.diagnostics]
    return program.graph


def _round_trip(g: Graph) -> bytes:
    data = keg.write(g)
    back = keg.load(data)
    assert keg.write(back) == data
    assert back.fingerprint() == g.fingerprint()
    assert back.regions == g.regions and validate(back) == []
    return data


def _version(data: bytes) -> int:
    return struct.unpack(">H", data[4:6])[0]


@pytest.mark.parametrize("name", STATEFUL)
@pytest.mark.parametrize("level", [0, 2])
def test_examples_round_trip_as_version_2(name: str, level: int) -> None:
    path = EXAMPLES / f"{name}.kera"
    g = optimize(_graph(path.read_text(), str(path)), level)
    assert _version(_round_trip(g)) == keg.FORMAT_VERSION == 2


def test_a_pure_graph_is_still_version_1() -> None:
    g = _graph((EXAMPLES / "fir8.kera").read_text())
    assert _version(_round_trip(g)) == keg.PURE_VERSION == 1


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=state_programs())
def test_random_stateful_graphs_round_trip(program) -> None:
    g = _graph(program.text())
    _round_trip(g)
    _round_trip(optimize(g, 2))


def test_a_stateful_and_a_pure_region_in_one_file() -> None:
    """Version 2 writes `n_states = 0` for the pure region; both come back as they were."""
    g = _graph(ACC)
    pure = _graph("#[top]\nfn p(x: u8) -> u8 { x + 1 }\n")
    g.nodes.update(pure.nodes)
    g.add_region(pure.regions["p"])
    data = _round_trip(g)
    assert _version(data) == 2
    assert not keg.load(data).regions["p"].stateful


def test_the_keg_runs_the_same_stream(capsys, tmp_path) -> None:
    out = tmp_path / "crc.keg"
    src = str(EXAMPLES / "crc32_stream.kera")
    assert main(["compile", src, "-o", str(out)]) == 0
    fp = capsys.readouterr().out
    assert main(["fingerprint", str(out)]) == 0
    assert capsys.readouterr().out == fp
    lines = (EXAMPLES / "crc32_stream.vectors.jsonl").read_text().splitlines()[:500]
    vectors = tmp_path / "v.jsonl"
    vectors.write_text("\n".join(lines) + "\n")
    assert main(["run", str(out), "--inputs", str(vectors), "-q"]) == 0
    got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert got == [json.loads(line)["expected"] for line in lines]


# ----------------------------------------------------------------------------- corruption


def _regions_body(g: Graph, slots_of: dict[str, tuple[StateSlot, ...]] | None = None,
                  raw: bytes | None = None) -> bytes:
    """Encode the regions section of ``g`` as the writer does, with the slots replaced (and a
    correct region hash for them, so only the content checks can catch what is wrong)."""
    data = keg.write(g)
    order = keg.load(data).canonical_order()
    index = {nid: i for i, nid in enumerate(order)}
    strings = _strings(data)
    out = [len(g.regions).to_bytes(4, "big")]
    for name in sorted(g.regions):
        r = g.regions[name]
        states = (slots_of or {}).get(name, r.states)
        region = Region(name, r.params, r.result, states)
        u32 = lambda n: n.to_bytes(4, "big")  # noqa: E731
        body = u32(strings.index(name)) + u32(len(r.params))
        body += b"".join(u32(index[p]) for p in r.params) + u32(index[r.result])
        body += raw if raw is not None else u32(len(states)) + b"".join(
            u32(index[s.read]) + u32(index[s.init]) + u32(index[s.next]) for s in states)
        out.append(body + region.region_hash())
    return b"".join(out)


def _strings(data: bytes) -> list[str]:
    body = dict((s, b) for s, _, b in sections(data))[keg.STRINGS]
    n, pos, out = int.from_bytes(body[:4], "big"), 4, []
    for _ in range(n):
        size = int.from_bytes(body[pos:pos + 4], "big")
        out.append(body[pos + 4:pos + 4 + size].decode())
        pos += 4 + size
    return out


def _refused(data: bytes) -> str:
    with pytest.raises(KeraError) as info:
        keg.load(data, "bad.keg")
    assert info.value.exit_code == 1 and "\n" not in info.value.message
    assert info.value.message.startswith("bad.keg: invalid .keg file: ")
    return info.value.message


def test_corrupt_state_records_are_refused_in_one_line() -> None:
    g = _graph(ACC)
    data = keg.write(g)
    a, b = g.regions["f"].states
    result = g.regions["f"].result

    def with_slots(*slots: StateSlot) -> bytes:
        return replace_section(data, keg.REGIONS, _regions_body(g, {"f": slots}))

    assert "state 0: its read" in _refused(with_slots(StateSlot(a.init, a.init, a.next), b))
    assert "state 0 has index 1" in _refused(with_slots(b, a))
    assert "its initial value uses `add`" in _refused(with_slots(StateSlot(a.read, a.next,
                                                                           a.next), b))
    assert "state 1 is u4, but its initial value is u4 and its next value u8" in _refused(
        with_slots(a, StateSlot(b.read, b.init, result)))
    assert "which is not the region's" in _refused(with_slots())
    assert "count 1000 exceeds" in _refused(
        replace_section(data, keg.REGIONS, _regions_body(g, raw=(1000).to_bytes(4, "big"))))
    far = (1).to_bytes(4, "big") + (10**6).to_bytes(4, "big") * 3
    assert "node index 1000000 is out of range" in _refused(
        replace_section(data, keg.REGIONS, _regions_body(g, raw=far)))


def test_a_stateful_file_labelled_version_1_is_refused() -> None:
    data = bytearray(keg.write(_graph(ACC)))
    data[4:6] = (1).to_bytes(2, "big")
    message = _refused(redigest(bytes(data)))
    assert "regions" in message or "region 0" in message


def test_a_newer_version_is_refused_by_number() -> None:
    data = bytearray(keg.write(_graph(ACC)))
    data[4:6] = (3).to_bytes(2, "big")
    assert "unsupported format version 3 (this build reads 1 and 2)" in _refused(
        redigest(bytes(data)))


def test_every_truncation_and_bit_flip_of_a_stateful_file_is_refused() -> None:
    data = keg.write(_graph("#[top]\nfn f(x: u1) -> u1 {\n    reg s: u1 = 1;\n"
                            "    s = s ^ x;\n    s\n}\n"))
    for n in range(0, len(data), 7):
        _refused(data[:n])
    for pos in range(len(data)):
        flipped = bytearray(data)
        flipped[pos] ^= 1 << (pos % 8)
        _refused(bytes(flipped))
