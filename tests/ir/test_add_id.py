"""``Graph.add`` computes a node's id inline (its hot path): it must be ``node_id`` of the same
content, byte for byte, for every shape of node (property test)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from kera.diagnostics import Span
from kera.ir.graph import Graph, canonical_attrs, const, node_id, param
from kera.ir.types import BOOL, ArrayType, FixedType, Type, int_type, uint

U8 = uint(8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 255), st.integers(0, 40),
                          st.integers(1, 12)), min_size=1, max_size=40))
def test_the_inline_id_is_node_id(plan: list[tuple[int, int, int, int]]) -> None:
    g = Graph()
    pool = [param(g, 0, "a", U8), param(g, 1, "b", U8)]
    for kind, value, pick, count in plan:
        x, y = pool[-1 - pick % len(pool)], pool[-1 - (pick * 7) % len(pool)]
        op: str
        t: Type
        ins: tuple[bytes, ...]
        attrs: dict[str, int] | None
        if kind == 0:
            op, t, ins, attrs = "const", U8, (), {"value": value}
        elif kind == 1:
            op, t, ins, attrs = "xor", U8, (x, y), None
        elif kind == 2:
            op, t, ins, attrs = "slice", uint(1), (x,), {"lo": value % 8}
        elif kind == 3:  # more inputs than the precomputed counts cover
            op, t, ins, attrs = "array", ArrayType(U8, count), tuple([x] * count), None
        elif kind == 4:
            op, t, ins, attrs = "lt", BOOL, (x, y), None
        else:
            op, t, ins, attrs = "select", U8, (g.add("eq", BOOL, (x, y)), x, y), None
        nid = g.add(op, t, ins, attrs)
        assert nid == node_id(op, t, ins, canonical_attrs(op, attrs))
        if t == U8:
            pool.append(nid)
    assert const(g, U8, 3) == node_id("const", U8, (), (("value", 3),))


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([uint(1), U8, uint(64), int_type(7, True), int_type(64, True), BOOL,
                        FixedType(16, True, 4), ArrayType(U8, 2)]),
       st.one_of(st.integers(-(1 << 70), 1 << 70), st.integers(-3, 3), st.booleans(),
                 st.integers(-(1 << 130), 1 << 130)))
def test_add_const_is_add(t: Type, value: int) -> None:
    """``Graph.add_const`` gives ``add``'s id, node, span, sinks and error, for any value."""
    span = Span(2, 5)

    def run(build: Callable[[Graph], bytes]) -> tuple[object, ...]:
        g = Graph()
        g.track_sinks()
        try:
            nid = build(g)
            build(g)  # a hit
        except ValueError as e:
            return ("raised", str(e))
        node = g.nodes[nid]
        return nid, node.op, node.type, node.inputs, node.attrs, g.spans, g.sinks

    assert run(lambda g: g.add_const(t, value, span)) == \
        run(lambda g: g.add("const", t, (), {"value": value}, span))


def test_checks_hold_after_a_shape_is_remembered() -> None:
    """``Graph.add`` remembers an attribute-less shape's head once it passed the checks; the
    checks still refuse what is wrong, in their order, before and after."""
    g = Graph()
    a, b = param(g, 0, "a", U8), param(g, 1, "b", U8)
    for _ in range(2):  # the second round with the shape remembered
        assert g.add("xor", U8, (a, b)) == g.add("xor", U8, [a, b])
        for args, message in [
            (("nope", U8, None), "unknown opcode `nope`"),
            (("xor", "u8", None), "result type must be a Type"),
            (("xor", U8, (a,)), "`xor` takes 2 operands, not 1"),
            (("xor", U8, (a, b), {"value": 1}), "`xor` takes attributes ()"),
            (("xor", U8, (a, "b")), "is not in the graph"),
        ]:
            try:
                g.add(*args)  # type: ignore[arg-type]
            except ValueError as e:
                assert message in str(e), (args, e)
            else:
                raise AssertionError(f"{args} was accepted")
