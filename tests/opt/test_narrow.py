"""Bit-width narrowing and the range analysis behind it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kera.ir import values
from kera.ir.graph import Graph
from kera.ir.ops import OPS
from kera.ir.types import BOOL, IntType, sint, uint
from kera.opt import narrow
from kera.opt.narrow import decided, narrowest
from kera.opt.ranges import Ranges
from tests.opt.kit import B, expected, inputs_for, result_after
from tests.opt.randgraph import graphs

I16, I32, U8, U32, I18 = sint(16), sint(32), uint(8), uint(32), sint(18)


def test_product_of_an_extended_i16_and_a_small_constant_is_an_18_bit_multiply():
    params = [("x", I16)]

    def build(g, p):
        return g.op("mul", g.op("cast", p[0], t=I32), g.op("cast", g.c(I16, 3), t=I32))

    def want(g, p):
        return g.op("cast", g.op("mul", g.op("cast", p[0], t=I18), g.c(I18, 3)), t=I32)

    _, res = result_after(lambda g: narrow(g), params, build)
    assert res == expected(params, want)


def test_difference_of_two_extended_bytes_is_a_9_bit_signed_subtraction():
    params = [("a", U8), ("b", U8)]

    def build(g, p):
        return g.op("sub", g.op("cast", p[0], t=U32), g.op("cast", p[1], t=U32))

    def want(g, p):
        i9 = sint(9)
        return g.op("cast", g.op("sub", g.op("cast", p[0], t=i9), g.op("cast", p[1], t=i9)),
                    t=U32)

    _, res = result_after(narrow, params, build)
    assert res == expected(params, want)


def test_sum_of_masked_words_is_a_9_bit_addition():
    params = [("a", U32), ("b", U32)]

    def masked(g, p, i):
        return g.op("and", p[i], g.c(U32, 0xFF))

    def build(g, p):
        return g.op("add", masked(g, p, 0), masked(g, p, 1))

    def want(g, p):
        u9 = uint(9)
        a, b = (g.op("cast", masked(g, p, i), t=u9) for i in (0, 1))
        return g.op("cast", g.op("add", a, b), t=U32)

    _, res = result_after(narrow, params, build)
    assert res == expected(params, want)


def test_full_width_arithmetic_and_small_savings_stay():
    params = [("a", U32), ("b", U32)]
    build = lambda g, p: g.op("add", p[0], p[1])  # noqa: E731
    _, res = result_after(narrow, params, build)
    assert res == expected(params, build)
    params = [("a", uint(31))]
    build = lambda g, p: g.op("add", g.op("cast", p[0], t=U32), g.c(U32, 0))  # noqa: E731
    _, res = result_after(narrow, params, build)  # u32 -> u31 saves one bit: not worth a cast
    assert res == expected(params, build)


def test_comparisons_the_ranges_settle_become_constants():
    params = [("x", U8)]
    build = lambda g, p: g.op("lt", g.op("cast", p[0], t=U32), g.c(U32, 300))  # noqa: E731
    _, res = result_after(narrow, params, build)
    assert res == expected(params, lambda g, p: g.c(BOOL, 1))


def test_narrowest_and_decided():
    assert narrowest((0, 255)) == U8
    assert narrowest((-128, 127)) == sint(8)
    assert narrowest((-129, 0)) == sint(9)
    assert narrowest((0, 0)) == uint(1)
    assert narrowest((0, 1 << 64)) is None
    assert decided("lt", (0, 3), (4, 9)) is True
    assert decided("ge", (0, 3), (4, 9)) is False
    assert decided("le", (0, 4), (4, 9)) is True
    assert decided("eq", (0, 3), (4, 9)) is False
    assert decided("gt", (0, 5), (4, 9)) is None


def test_ranges_of_extensions_masks_shifts_and_selects():
    b = B()
    x, c = b.param("x", U8), b.param("c", BOOL)
    wide = b.op("cast", x, t=I32)
    g = b.g
    r = Ranges(g)
    assert r(wide) == (0, 255)
    assert r(b.op("cast", b.op("cast", x, t=sint(8)), t=I32)) == (-128, 127)
    assert r(b.op("and", b.param("y", U32), b.c(U32, 0x0F))) == (0, 15)
    assert r(b.op("shr", wide, b.c(U8, 4))) == (0, 15)
    assert r(b.op("shl", wide, b.c(U8, 4))) == (0, 255 * 16)
    assert r(b.op("select", c, wide, b.c(I32, -5))) == (-5, 255)
    assert r(b.op("mul", wide, wide)) == (0, 255 * 255)
    assert r(b.op("popcount", x)) == (0, 8)
    assert r(b.op("cast", c, t=U8)) == (0, 1)
    assert isinstance(g, Graph)


def _all_values(graph: Graph, seed: int) -> dict[bytes, object]:
    """Evaluate every node of a graph (not only the result) on edge + random rows."""
    rows = 40
    inputs = inputs_for(graph, "f", rows, seed)
    bound = {pid: inputs[str(graph.nodes[pid].attr("name"))] for pid in graph.regions["f"].params}
    env: dict[bytes, object] = {}
    for nid in graph.topo_order(graph.regions["f"]):
        node = graph.nodes[nid]
        args = [bound[nid]] if node.op == "param" else [env[i] for i in node.inputs]
        in_types = [graph.nodes[i].type for i in node.inputs]
        env[nid] = values.broadcast(
            OPS[node.op].evaluate(args, node.attr_dict, in_types, node.type), rows)
    return env


@settings(max_examples=60, deadline=None)
@given(graph=graphs(), seed=st.integers(0, 1 << 30))
def test_ranges_are_sound_on_random_graphs(graph, seed):
    """Every value every node takes lies in the interval the analysis gives it."""
    env = _all_values(graph, seed)
    r = Ranges(graph)
    for nid, value in env.items():
        t = graph.nodes[nid].type
        if isinstance(t, IntType) or t == BOOL:
            lo, hi = r(nid)  # type: ignore[misc]
            got = [int(v) for v in value]  # type: ignore[attr-defined]
            assert lo <= min(got) and max(got) <= hi, (graph.nodes[nid].op, lo, hi, got[:5])


def test_negating_a_value_that_needs_all_64_bits_stays():
    params = [("x", sint(64))]
    build = lambda g, p: g.op("neg", g.op("min", p[0], g.c(sint(64), 0)))  # noqa: E731
    _, res = result_after(narrow, params, build)
    assert res == expected(params, build)


def test_a_sum_with_a_negated_operand_is_one_subtraction():
    """a + (-b), (-b) + a and a - (-b) on i18 (wider than any range narrows them): a - b, a - b,
    a + b; result_after checks the bits on edge and random inputs."""
    params = [("a", I18), ("b", I18)]
    forms = [("add", lambda g, p: (p[0], g.op("neg", p[1])), "sub"),
             ("add", lambda g, p: (g.op("neg", p[1]), p[0]), "sub"),
             ("sub", lambda g, p: (p[0], g.op("neg", p[1])), "add")]
    for op, args, want_op in forms:
        _, res = result_after(lambda g: narrow(g), params,
                              lambda g, p, op=op, args=args: g.op(op, *args(g, p)))
        assert res == expected(params, lambda g, p, w=want_op: g.op(w, p[0], p[1]))


def test_fir8_sums_its_negative_taps_with_subtractions():
    """fir8 (taps 1, -2, 3, 4, 4, 3, -2, 1) at -O2: eight terms balanced into 7 sums, of which
    the two that take a -2 tap (a leaf pair x0 - 2 x1, x7 - 2 x6) are subtractions; the two
    x * 3 stay products (the hardware lowering makes them x + (x << 1)). No negation: before,
    the -2 taps were two `neg` chains beside 7 adds."""
    from pathlib import Path

    from kera import load

    g = load(Path(__file__).resolve().parents[3] / "shared/kernels/peers/fir8.kera").graph
    ops = [n.op for n in g.nodes.values()]
    assert ops.count("neg") == 0 and ops.count("sub") == 2 and ops.count("add") == 5
