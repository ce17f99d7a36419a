"""Tree-height reduction: exact balanced trees, and what must not be re-associated."""

from __future__ import annotations

import pytest

from kera.ir.types import BOOL, uint
from kera.opt import balance
from kera.opt.balance import CHAIN_OPS
from tests.opt.kit import depth, expected, result_after

U8 = uint(8)


def _params(n: int, t=U8) -> list:
    return [(f"p{i}", t) for i in range(n)]


def _sequential(op: str):
    def build(g, p):
        acc = p[0]
        for x in p[1:]:
            acc = g.op(op, acc, x)
        return acc

    return build


def test_registry_flags_pick_the_chain_ops():
    assert CHAIN_OPS == {"add", "mul", "and", "or", "xor", "min", "max"}


def test_eight_term_accumulation_becomes_a_depth_three_tree_pairing_neighbours():
    params = _params(8)

    def want(g, p):
        pairs = [g.op("add", p[i], p[i + 1]) for i in range(0, 8, 2)]
        return g.op("add", g.op("add", pairs[0], pairs[1]), g.op("add", pairs[2], pairs[3]))

    after, res = result_after(balance, params, _sequential("add"))
    assert res == expected(params, want)
    assert depth(after, res, {"add"}) == 3


def test_odd_leaf_count_carries_the_last_leaf_up():
    params = _params(5)

    def want(g, p):
        left = g.op("add", g.op("add", p[0], p[1]), g.op("add", p[2], p[3]))
        return g.op("add", left, p[4])

    _, res = result_after(balance, params, _sequential("add"))
    assert res == expected(params, want)


@pytest.mark.parametrize("op", ["mul", "and", "or", "xor", "min", "max"])
def test_every_chain_op_is_balanced(op):
    after, res = result_after(balance, _params(9), _sequential(op))
    assert depth(after, res, {op}) == 4


def test_bool_chains_are_balanced_too():
    after, res = result_after(balance, _params(4, BOOL), _sequential("and"))
    assert depth(after, res, {"and"}) == 2


@pytest.mark.parametrize("op", ["sub", "div", "shl"])
def test_non_associative_ops_keep_their_order(op):
    params = _params(6)
    build = _sequential(op) if op != "shl" else _sequential("shl")
    _, res = result_after(balance, params, build)
    assert res == expected(params, build)


def test_an_intermediate_with_another_user_is_a_leaf_not_an_inner_node():
    params = _params(6)

    def build(g, p):
        t = g.op("add", g.op("add", p[0], p[1]), p[2])  # also used below
        acc = g.op("add", g.op("add", g.op("add", t, p[3]), p[4]), p[5])
        return g.op("xor", acc, t)

    def want(g, p):
        t = g.op("add", g.op("add", p[0], p[1]), p[2])
        acc = g.op("add", g.op("add", t, p[3]), g.op("add", p[4], p[5]))
        return g.op("xor", acc, t)

    _, res = result_after(balance, params, build)
    assert res == expected(params, want)


def test_balanced_and_short_chains_are_left_alone():
    params = _params(4)

    def tree(g, p):
        return g.op("add", g.op("add", p[0], p[1]), g.op("add", p[2], p[3]))

    _, res = result_after(balance, params, tree)
    assert res == expected(params, tree)
    _, res = result_after(balance, params[:3], _sequential("add"))
    assert res == expected(params[:3], _sequential("add"))


def test_a_long_chain_does_not_recurse():
    params = _params(3000)
    after, res = result_after(balance, params, _sequential("xor"), check=False)
    assert depth(after, res, {"xor"}) == 12  # ceil(log2 3000)
