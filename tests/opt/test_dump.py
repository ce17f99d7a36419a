"""The text dump behind ``--dump-after``: one line per node, short indices, source locations."""

from __future__ import annotations

from kera.diagnostics import SourceFile, Span
from kera.ir.graph import Graph, Region
from kera.ir.types import ArrayType, uint
from kera.opt import format_graph

U8 = uint(8)
SOURCE = "fn f(x: u8, y: u8) -> u8 {\n    x + y\n}\n"


def _graph() -> Graph:
    g = Graph("t.kera")
    x = g.add("param", U8, (), {"index": 0, "name": "x"})
    y = g.add("param", U8, (), {"index": 1, "name": "y"})
    s = g.add("add", U8, (x, y), None, Span(31, 36))
    arr = g.add("array", ArrayType(U8, 2), (s, g.add("const", U8, (), {"value": 7})))
    r = g.add("array_index", U8, (arr, g.add("const", U8, (), {"value": 1})))
    g.add_region(Region("f", (x, y), g.add("slice", uint(4), (r,), {"lo": 2})))
    return g


def test_one_line_per_node_with_locations_from_the_source():
    text = format_graph(_graph(), SourceFile("t.kera", SOURCE.encode()))
    assert text == (
        "fn f(x: u8, y: u8) -> u4 {\n"
        "  %0 = param.u8 x\n"
        "  %1 = param.u8 y\n"
        f"  {'%2 = add.u8 %0, %1':<46} ; t.kera:2:5\n"
        "  %3 = const.u8 7\n"
        "  %4 = array.[u8; 2] %2, %3\n"
        "  %5 = const.u8 1\n"
        "  %6 = array_index.u8 %4, %5\n"
        "  %7 = slice.u4 %6, lo=2\n"
        "  return %7\n"
        "}\n"
    )


def test_without_the_source_text_spans_show_as_byte_ranges():
    assert "; @31..36" in format_graph(_graph())


def test_the_dump_depends_only_on_content():
    g = _graph()
    leaves = [n for n in g.nodes if not g.nodes[n].inputs]
    again = Graph("t.kera")  # the same nodes inserted in another valid order: leaves first
    again.nodes = {n: g.nodes[n] for n in [*reversed(leaves), *g.nodes] if n in g.nodes}
    again.regions, again.spans = dict(g.regions), dict(g.spans)
    assert list(again.nodes) != list(g.nodes)
    assert format_graph(again) == format_graph(g)
