"""The linear outputs of a stage rebuilt with their shared xors (``kera.hls.xorshare``)."""

from __future__ import annotations

import random
from functools import reduce
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kera import load
from kera.hls import lutcover
from kera.hls.lutcover import Aig, StageCover
from kera.hls.synth import plan_schedule
from kera.hls.xorshare import linear_forms, paar, restructure, simulate
from tests.conftest import ROOT

SHARED = ROOT.parent / "shared" / "kernels"
KERNELS = ROOT / "tests" / "opt" / "kernels"
HELDOUT = ROOT / "benchmarks" / "heldout"

Forms = st.lists(st.sets(st.integers(0, 7), min_size=2, max_size=8), min_size=2, max_size=10)


def _graph(forms: list[set[int]], ands: int) -> tuple[Aig, dict[bytes, list[int]], list[bytes]]:
    """A graph of 8 leaves: each form's xor as a chain, and ``ands`` non-linear outputs."""
    aig = Aig()
    leaves = [aig.leaf((b"x", i, False)) for i in range(8)]
    bits: dict[bytes, list[int]] = {}
    for k, f in enumerate(forms):
        bits[b"f%d" % k] = [reduce(aig.xor, (leaves[i] for i in sorted(f))) ^ (k & 1)]
    for k in range(ands):
        bits[b"a%d" % k] = [aig.and_(leaves[k], aig.xor(leaves[k + 1], leaves[k + 2]))]
    return aig, bits, list(bits)


def _values(aig: Aig, lits: list[int]) -> list[int]:
    """Every literal's truth table over the 8 leaves (256 rows)."""
    rows = 256
    pats = [sum(1 << r for r in range(rows) if r >> k & 1) for k in range(8)]
    value = simulate(aig, pats, rows)
    full = (1 << rows) - 1
    return [value[lit >> 1] ^ (full if lit & 1 else 0) for lit in lits]


@given(Forms, st.integers(0, 3))
def test_the_rebuilt_graph_computes_the_same_bits(forms: list[set[int]], ands: int) -> None:
    aig, bits, outputs = _graph(forms, ands)
    got = restructure(aig, bits, outputs)
    if len({frozenset(f) for f in forms}) < 2:
        assert got is None
        return
    assert got is not None
    new, new_bits = got
    assert new.leaves == aig.leaves
    for nid in outputs:
        assert _values(new, new_bits[nid]) == _values(aig, bits[nid]), nid


@given(Forms)
def test_the_forms_are_found_and_the_ands_are_not(forms: list[set[int]]) -> None:
    aig, bits, outputs = _graph(forms, 2)
    found = linear_forms(aig, [b for nid in outputs for b in bits[nid]])
    for k, f in enumerate(forms):
        lit = bits[b"f%d" % k][0]
        assert found[lit] == (tuple(sorted(f)), k & 1)
    assert all(bits[b"a%d" % k][0] not in found for k in range(2))


@given(Forms)
def test_paar_keeps_every_xor_and_shares_what_repeats(forms: list[set[int]]) -> None:
    """Expanding the extracted xors gives the sets back; no pair is left in two sets; each
    extraction saves at least one xor."""
    sets = [set(f) for f in forms]
    gates = paar(sets, 8)
    expand: dict[int, frozenset[int]] = {i: frozenset({i}) for i in range(8)}
    for g, a, b in gates:
        assert a < g and b < g
        expand[g] = expand[a] ^ expand[b]
    for f, rest in zip(forms, sets, strict=True):
        assert reduce(frozenset.__xor__, (expand[x] for x in rest)) == f
    pairs = [p for rest in sets for p in _pairs(rest)]
    assert len(pairs) == len(set(pairs))
    before = sum(len(f) - 1 for f in forms)
    after = len(gates) + sum(len(rest) - 1 for rest in sets)
    assert after <= before - len(gates)


def _pairs(rest: set[int]) -> list[tuple[int, int]]:
    s = sorted(rest)
    return [(s[i], s[j]) for i in range(len(s)) for j in range(i + 1, len(s))]


def _evaluate(cover: StageCover, leaf: list[int], width: int) -> dict[bytes, list[int]]:
    """The cover's output bits from its cells' truth tables (bit-parallel: ``width`` vectors),
    the leaves at ``leaf``."""
    full = (1 << width) - 1
    out: list[int] = []
    for lut in cover.luts:
        ins = [leaf[~i] if i < 0 else out[i] for i in lut.inputs]
        pin = dict.fromkeys(range(4), 0)
        for j, v in enumerate(ins):
            pin[lut.pin_of(j)] = v
        value = 0
        for row in range(16):
            if lut.init >> row & 1:
                term = full
                for p in range(4):
                    term &= pin[p] if row >> p & 1 else ~pin[p] & full
                value |= term
        out.append(value)

    def source(src: lutcover.Source) -> int:
        kind, k = src
        return out[k] if kind == "lut" else leaf[k] if kind == "leaf" else full * int(kind)

    return {nid: [source(s) for s in srcs] for nid, srcs in cover.outputs}


@pytest.mark.parametrize(("path", "board", "clock_mhz", "most"), [
    (KERNELS / "crc8.kera", "ulx3s", None, 15),
    (KERNELS / "secded72.kera", "ulx3s", None, 72),
    (SHARED / "peers" / "crc32_word.kera", "ulx3s", None, 115),
    (HELDOUT / "crc64_word.kera", "icebreaker", None, 270)])
def test_a_linear_stage_is_covered_by_its_shared_xors(path: Path, board: str,
                                                      clock_mhz: float | None,
                                                      most: int) -> None:
    """crc32_word at 25 MHz on ECP5: 160 LUT4 covered from the graph as built, 112 from the
    shared xors; the cells compute the ops (their truth tables against the stage's own
    graph on 256 random vectors: a wrong linear bit differs on half of them. yosys's SAT
    proof of xor networks rebuilt this way runs past ten minutes)."""
    loaded = load(str(path))
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock_mhz)
    assert s.covers
    rnd = random.Random(7)
    for c in s.covers:
        assert len(c.luts) <= most
        aig, bits = lutcover.build_aig(s, c.stage, list(c.nodes))
        assert list(aig.leaves) == list(c.leaves)
        pats = [rnd.getrandbits(256) for _ in aig.leaves]
        value = simulate(aig, pats, 256)
        full = (1 << 256) - 1
        got = _evaluate(c, pats, 256)
        for nid, lits in bits.items():
            if nid in got:
                assert got[nid] == [value[b >> 1] ^ (full if b & 1 else 0) for b in lits]


@given(Forms, st.integers(1, 3))
def test_no_shared_xor_is_deeper_than_the_cap(forms: list[set[int]], cap: int) -> None:
    sets = [set(f) for f in forms]
    depth = dict.fromkeys(range(8), 0)
    for g, a, b in paar(sets, 8, cap):
        depth[g] = max(depth[a], depth[b]) + 1
        assert depth[g] <= cap


def test_a_prefix_xor_is_shared_as_a_tree_not_a_chain() -> None:
    """from_gray32 (b_i = g_i ^ ... ^ g_31): Paar alone shares its sets as one chain 32 deep;
    capped at a balanced tree of the widest set, its deepest shared xor is 5 deep."""
    forms = [set(range(i, 32)) for i in range(31)]
    chain = paar([set(f) for f in forms], 32)
    capped = paar([set(f) for f in forms], 32, 5)
    depth = dict.fromkeys(range(32), 0)
    for g, a, b in chain:
        depth[g] = max(depth[a], depth[b]) + 1
    assert max(depth.values()) >= 16
    depth = dict.fromkeys(range(32), 0)
    for g, a, b in capped:
        depth[g] = max(depth[a], depth[b]) + 1
    assert max(depth.values()) <= 5 and capped
