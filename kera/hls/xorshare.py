"""A stage's linear outputs rebuilt with the xors they share (Paar's greedy extraction).

A CRC, a parity or an ECC encoder computes each output bit as the xor of some of its input
bits; written step by step (a CRC's 32 shift/xor steps), the and-inverter graph of
``kera.hls.lutcover`` shares what the steps share, and a LUT cover of it duplicates the rest:
crc64_word on iCE40 at 12 MHz covers to 386 LUTs, where yosys's abc (which looks for
common xors) makes 349. :func:`restructure` finds the output bits whose function is linear
(the xor of a set of leaves, or its complement: bit-parallel simulation on the unit vectors,
confirmed on pseudo-random ones), extracts from those sets, one at a time, the pair of
signals that most of them contain (C. Paar, "Optimized arithmetic for Reed-Solomon
encoders", ISIT 1997: each such pair becomes one xor that every set containing both reads),
and writes the remaining sets as balanced xor trees; no shared xor is deeper than a balanced
tree of the widest set (a prefix xor's sets would share as one chain: from_gray32 on ECP5 at
25 MHz, 33 LUT4 and a 9.5 ns stage uncapped, 45 and 3.6 ns capped, 69 and 2.3 ns as built).
The other output bits keep their cones.
Covered with 4-input LUTs (placed, yosys 0.70 + nextpnr 0.11): crc64_word on iCE40 at 12 MHz
357 -> 261 LUTs, crc32_word on ECP5 at 25 MHz 162 -> 114 LUT4 (docs/models.md, thirtieth run).
``lutcover.cover_stage`` keeps whichever cover is smaller within the period.
"""

from __future__ import annotations

import heapq
import random
from collections import defaultdict
from itertools import combinations
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kera.hls.lutcover import Aig

#: Pseudo-random patterns a linear form is checked on (bits).
CHECK_BITS = 64


def simulate(aig: Aig, patterns: list[int], width: int) -> list[int]:
    """Return every variable's value (a ``width``-bit vector) with leaf ``k`` at
    ``patterns[k]``."""
    mask = (1 << width) - 1
    value = [0] * len(aig.fanin)
    for k, key in enumerate(aig.leaves):
        value[aig.leaf_var[key]] = patterns[k]
    for v, f in enumerate(aig.fanin):
        if f is not None:
            a, b = f
            value[v] = ((value[a >> 1] ^ (mask if a & 1 else 0))
                        & (value[b >> 1] ^ (mask if b & 1 else 0)))
    return value


def linear_forms(aig: Aig, lits: list[int]) -> dict[int, tuple[tuple[int, ...], int]]:
    """Return each literal of ``lits`` whose function is linear -> (the leaves whose xor it
    is, by index, ascending; 1 where it is that xor's complement)."""
    n = len(aig.leaves)
    unit = simulate(aig, [1 << k for k in range(n)], n + 1)  # bit n: all leaves 0
    rnd = random.Random(n)
    probe = [rnd.getrandbits(CHECK_BITS) for _ in range(n)]
    check = simulate(aig, probe, CHECK_BITS)
    full = (1 << CHECK_BITS) - 1
    out: dict[int, tuple[tuple[int, ...], int]] = {}
    for lit in lits:
        v, c = lit >> 1, lit & 1
        word = unit[v] ^ (((1 << (n + 1)) - 1) if c else 0)
        const = word >> n & 1
        form = tuple(k for k in range(n) if (word >> k & 1) ^ const)
        want = check[v] ^ (full if c else 0)
        got = full if const else 0
        for k in form:
            got ^= probe[k]
        if got == want:
            out[lit] = (form, const)
    return out


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def paar(forms: list[set[int]], first: int, depth_cap: int | None = None
         ) -> list[tuple[int, int, int]]:
    """Extract shared pairs from ``forms`` (sets of signals, changed in place): while a pair
    is in two sets or more, the most frequent (ties: the smallest pair) becomes signal
    ``first``, ``first + 1``, ... in every set that has both, unless its xor would be more
    than ``depth_cap`` xors deep (the leaves 0). Return the xors ``(new, a, b)`` in creation
    order."""
    where: dict[int, set[int]] = defaultdict(set)
    count: dict[tuple[int, int], int] = defaultdict(int)
    for i, f in enumerate(forms):
        for x in f:
            where[x].add(i)
        for p in combinations(sorted(f), 2):
            count[p] += 1
    heap = [(-c, p) for p, c in count.items() if c >= 2]
    heapq.heapify(heap)
    gates: list[tuple[int, int, int]] = []
    depth: dict[int, int] = {}
    while heap:
        neg, (a, b) = heapq.heappop(heap)
        if count.get((a, b), 0) != -neg:
            continue  # stale: the count changed since it was pushed
        d = max(depth.get(a, 0), depth.get(b, 0)) + 1
        if depth_cap is not None and d > depth_cap:
            continue
        g = first + len(gates)
        depth[g] = d
        gates.append((g, a, b))
        changed: set[tuple[int, int]] = set()
        for i in sorted(where[a] & where[b]):
            f = forms[i]
            f -= {a, b}
            for x in f:
                for p in (_pair(a, x), _pair(b, x)):
                    count[p] -= 1
                    changed.add(p)
                count[(x, g)] += 1
                changed.add((x, g))
            count[(a, b)] -= 1
            f.add(g)
            where[g].add(i)
            where[a].discard(i)
            where[b].discard(i)
        for p in sorted(changed):
            if count[p] >= 2:
                heapq.heappush(heap, (-count[p], p))
    return gates


def restructure(aig: Aig, bits: dict[bytes, list[int]], outputs: list[bytes]
                ) -> tuple[Aig, dict[bytes, list[int]]] | None:
    """Return a graph of the same leaves (in the same order) whose linear output bits share
    their common xors, and the outputs' bits in it; None where fewer than two output bits
    are linear functions of two leaves or more."""
    from kera.hls.lutcover import Aig

    lits = [b for nid in outputs for b in bits[nid] if aig.fanin[b >> 1] is not None]
    forms = {lit: f for lit, f in linear_forms(aig, lits).items() if len(f[0]) >= 2}
    distinct = sorted({f for f, _ in forms.values()})
    if len(distinct) < 2:
        return None
    owner_of: dict[tuple[int, ...], bytes] = {}
    for nid in outputs:
        for b in bits[nid]:
            if b in forms:
                owner_of.setdefault(forms[b][0], nid)
    n = len(aig.leaves)
    sets = [set(f) for f in distinct]
    widest = max(len(f) for f in distinct)  # no shared xor deeper than its balanced tree
    gates = paar(sets, n, (widest - 1).bit_length())
    new = Aig()
    sig = {k: new.leaf(key) for k, key in enumerate(aig.leaves)}
    reader: dict[int, int] = {}  # a shared xor's owner: the first set that reads it
    for i, rest in enumerate(sets):
        for x in rest:
            reader.setdefault(x, i)
    for g, a, b in reversed(gates):  # read by a later xor: that one's first set
        for x in (a, b):
            reader[x] = min(reader.get(x, reader[g]), reader[g])
    for g, a, b in gates:
        new.node = owner_of[distinct[reader[g]]]
        sig[g] = new.xor(sig[a], sig[b])
    literal: dict[tuple[int, ...], int] = {}
    for form, rest in zip(distinct, sets, strict=True):
        new.node = owner_of[form]
        literal[form] = new.parity([sig[x] for x in sorted(rest)])
    copied = {0: 0, **{aig.leaf_var[key]: sig[k] for k, key in enumerate(aig.leaves)}}

    def copy(v: int) -> int:
        stack = [v]
        while stack:
            u = stack[-1]
            if u in copied:
                stack.pop()
                continue
            a, b = aig.fanin[u]  # type: ignore[misc]
            todo = [w for w in (a >> 1, b >> 1) if w not in copied]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            new.node = aig.owner[u]
            copied[u] = new.and_(copied[a >> 1] ^ (a & 1), copied[b >> 1] ^ (b & 1))
        return copied[v]

    out: dict[bytes, list[int]] = {}
    for nid in outputs:
        row = []
        for b in bits[nid]:
            if b in forms:
                leaves, c = forms[b]
                row.append(literal[leaves] ^ c)
            elif b < 2:
                row.append(b)
            else:
                row.append(copy(b >> 1) ^ (b & 1))
        out[nid] = row
    return new, out


__all__ = ["linear_forms", "paar", "restructure", "simulate"]
