"""Edge and random input vectors: what they contain, and that they are deterministic."""

from __future__ import annotations

import numpy as np

from kera.ir import values
from kera.ir.types import BOOL, ArrayType, TupleType, sint, uint
from kera.sim.parity import MAX_EDGE_VALUES, edge_values, edge_vectors, random_vectors


def test_edge_values_of_scalars() -> None:
    assert edge_values(BOOL) == [0, 1]
    u8 = edge_values(uint(8))
    assert {0, 1, 255, 2, 4, 8, 16, 32, 64, 128} <= set(u8) and -1 not in u8
    i8 = edge_values(sint(8))
    assert {0, 1, -1, -128, 127, -127, 126, 64, -64, -2} <= set(i8)
    assert edge_values(uint(1)) == [0, 1]
    assert set(edge_values(sint(1))) == {0, -1}
    i64 = edge_values(sint(64))
    assert -(2**63) in i64 and 2**63 - 1 in i64 and 2**62 in i64
    assert len(i64) == len(set(i64))


def test_small_signatures_get_every_combination() -> None:
    params = [("a", sint(8)), ("b", sint(8))]
    vs = edge_vectors(params)
    n = len(edge_values(sint(8)))
    assert vs.rows == n * n
    rows = set(zip(vs.columns[0].tolist(), vs.columns[1].tolist(), strict=True))
    assert (-128, -1) in rows and (2, 0) in rows and (-1, -128) in rows


def test_large_signatures_cover_each_leaf_and_core_pairs() -> None:
    params = [("x", ArrayType(sint(16), 8)), ("f", TupleType((BOOL, uint(64))))]
    vs = edge_vectors(params, limit=2048)
    assert vs.rows <= max(2048, sum(len(edge_values(t)) for t in [sint(16)] * 8 + [BOOL,
                                                                                  uint(64)]))
    cols = [c.tolist() for c in vs.columns]
    for col, t in zip(cols, [sint(16)] * 8 + [BOOL, uint(64)], strict=True):
        assert set(edge_values(t)) <= set(col)
    pairs = set(zip(cols[0], cols[1], strict=True))
    assert (-32768, -1) in pairs and (-1, -32768) in pairs and (0, 0) in pairs
    again = edge_vectors(params, limit=2048)
    assert all(np.array_equal(a, b) for a, b in zip(vs.columns, again.columns, strict=True))
    inputs = vs.inputs
    assert values.conforms(inputs["x"], params[0][1]) is None
    assert values.conforms(inputs["f"], params[1][1]) is None


def test_hundreds_of_leaves_take_their_edge_values_side_by_side() -> None:
    """One at a time, 2,000 `i16` leaves took 70,010 rows (2.8 GB in `parity`): side by side
    every leaf still takes every edge value, within the limit."""
    params = [("x", ArrayType(sint(16), 2000)), ("c", BOOL)]
    vs = edge_vectors(params)
    assert vs.rows <= 4096
    edges = set(edge_values(sint(16)))
    assert all(edges <= set(col.tolist()) for col in vs.columns[:-1])
    assert set(vs.columns[-1].tolist()) == {False, True}
    assert len({tuple(col[:35].tolist()) for col in vs.columns[:-1]}) > 1  # not all alike
    again = edge_vectors(params)
    assert all(np.array_equal(a, b) for a, b in zip(vs.columns, again.columns, strict=True))


def test_tens_of_thousands_of_leaves_get_few_rows() -> None:
    """At the hardware model's input limit (65,536 bits) of 1-bit leaves, 4,096 rows would be
    268M values; the pairs stop at ``MAX_EDGE_VALUES``, every leaf still takes every edge
    value."""
    params = [("x", ArrayType(uint(1), 65_536))]
    vs = edge_vectors(params)
    assert vs.rows * 65_536 <= MAX_EDGE_VALUES
    assert all(set(col.tolist()) == {0, 1} for col in vs.columns)


def test_random_vectors_are_seeded_and_well_formed() -> None:
    params = [("a", sint(13)), ("b", uint(64)), ("c", BOOL), ("d", ArrayType(uint(1), 3))]
    one, two, other = (random_vectors(params, 5000, s) for s in (3, 3, 4))
    assert all(np.array_equal(a, b) for a, b in zip(one.columns, two.columns, strict=True))
    assert not np.array_equal(one.columns[0], other.columns[0])
    for name, t in params:
        assert values.conforms(one.inputs[name], t) is None
    a = one.columns[0]
    assert a.min() == -(2**12) and a.max() == 2**12 - 1  # edge values are mixed in
    assert (np.abs(a) < 16).sum() > 100  # and so are small magnitudes
    assert len(np.unique(one.columns[1])) > 3000


def test_no_parameters() -> None:
    assert edge_vectors([]).rows == 1
    assert random_vectors([], 7).rows == 7
    assert (edge_vectors([]) + random_vectors([], 7)).inputs == {}
