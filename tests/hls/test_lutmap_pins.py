"""The bit network's cover is pinned: LUT levels, LUT counts, materialised gates and every bit.

The digests were written by the cover before its speed work (d5f0c0a); a faster cover must
give the same network, bit for bit, with and without registers and for each LUT shape
(K = 4 alone, K = 4 with 7-input wide functions, K = 6 with 8). One pin was rewritten since,
by a change of meaning: two nodes that register the same signal share its flip-flops' leaf
bits (``BitNetwork._flops``, yosys's ``opt_merge``), which changes sha256's registered network.
"""

from __future__ import annotations

import hashlib
import random

import pytest

import kera
from kera.hls.lutmap import BitNetwork, network
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, uint
from tests.conftest import EXAMPLES


def _random_graph(nodes: int, seed: int) -> Graph:
    """A reconvergent mix of adds, xors, compare+selects, shifts, products and masks."""
    rng = random.Random(seed)
    g = Graph("pins.kera")
    t = uint(16)
    values = [param(g, i, f"x{i}", t) for i in range(6)]
    params = tuple(values)
    amount = const(g, uint(4), 3)
    while len(g.nodes) < nodes:
        a, b = rng.choice(values[-24:]), rng.choice(values[-24:])
        r = rng.random()
        if r < 0.3:
            v = g.add("add", t, (a, b))
        elif r < 0.5:
            v = g.add("xor", t, (a, b))
        elif r < 0.65:
            v = g.add("select", t, (g.add("lt", BOOL, (a, b)), a, b))
        elif r < 0.8:
            v = g.add("sub", t, (g.add("shr", t, (a, amount)), b))
        elif r < 0.85:
            v = g.add("and", t, (a, const(g, t, rng.randrange(1 << 16))))
        elif r < 0.9:
            v = g.add("select", t, (g.add("eq", BOOL, (a, b)), g.add("or", t, (a, b)), b))
        else:
            v = g.add("not", t, (g.add("xor", t, (a, b)),))
        values.append(v)
    acc = values[-1]
    for v in values[-16:-1]:
        acc = g.add("xor", t, (acc, v))
    g.add_region(Region("f", params, acc))
    return g


def _digest(net: BitNetwork, order: list[bytes]) -> str:
    h = hashlib.sha256()
    luts = net.luts_by_node()
    for nid in order:
        bits = [(sorted(b[0]), b[1], b[2], b[3]) for b in net.bits[nid]]
        h.update(repr((nid.hex(), net.levels[nid], luts.get(nid, 0), bits)).encode())
    h.update(repr(sorted(net.roots.items())).encode())
    return h.hexdigest()[:16]


def _graph(name: str) -> Graph:
    if name.startswith("random"):
        return _random_graph(1500, int(name[6:]))
    return kera.load(EXAMPLES / f"{name}.kera").graph


PINS = {
    "crc32_stream": ("a01e778253f1e86b", "ca694e4ea2eea24a", "57acb649103695cd"),
    "random1": ("c40ee3ce7a2ea955", "2f6163a93bc9c7ff", "943c1f1f306e536d"),
    "random2": ("ab1e205de359be37", "102d6e3b628788ed", "7cf73bda7892cb64"),
    "sha256": ("670cda86120c1d6a", "9d8ef54ddaebc6da", "670cda86120c1d6a"),
}


@pytest.mark.parametrize("name", sorted(PINS))
def test_cover_is_pinned(name: str) -> None:
    g = _graph(name)
    order = g.canonical_order()
    every7 = set(order[::7])
    got = []
    for (k, wide), cut in zip(((4, 0), (4, 7), (6, 8)), (None, lambda u, v: u in every7, None),
                             strict=True):
        got.append(_digest(network(g, k, cut=cut, order=order, wide=wide), order))
    assert tuple(got) == PINS[name]
