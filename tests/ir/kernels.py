"""The shared kernels (/work/shared/kernels/*.kera) built by hand through the graph API.

Each builder mirrors what the front end should produce for the source (unsuffixed literals in
shift-amount and index position are ``u32``); the tests run them against the vectors files.
"""

from __future__ import annotations

from pathlib import Path

from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, ArrayType, IntType, TupleType, Type, sint, uint

KERNELS = Path(__file__).resolve().parents[3] / "shared" / "kernels"
if not KERNELS.is_dir():
    KERNELS = Path("/work/shared/kernels")

U32 = uint(32)


class Builder:
    """A tiny helper: ``b.op("add", t, x, y)``, ``b.c(t, 3)``, ``b.param("x", t)``."""

    def __init__(self, graph: Graph | None = None) -> None:
        self.g = graph if graph is not None else Graph()
        self.params: list[bytes] = []

    def param(self, name: str, t: Type) -> bytes:
        nid = param(self.g, len(self.params), name, t)
        self.params.append(nid)
        return nid

    def c(self, t: Type, value: int | bool) -> bytes:
        return const(self.g, t, value)

    def op(self, name: str, t: Type, *inputs: bytes, **attrs: int | str) -> bytes:
        return self.g.add(name, t, inputs, attrs or None)

    def ty(self, nid: bytes) -> Type:
        return self.g.nodes[nid].type

    def bin(self, name: str, a: bytes, b: bytes) -> bytes:
        return self.op(name, self.ty(a), a, b)

    def shift(self, name: str, a: bytes, amount: int) -> bytes:
        return self.op(name, self.ty(a), a, self.c(U32, amount))

    def index(self, arr: bytes, i: int | bytes) -> bytes:
        idx = self.c(U32, i) if isinstance(i, int) else i
        return self.op("array_index", self.ty(arr).elem, arr, idx)  # type: ignore[attr-defined]

    def update(self, arr: bytes, i: int, val: bytes) -> bytes:
        return self.op("array_update", self.ty(arr), arr, self.c(U32, i), val)

    def array(self, *elems: bytes) -> bytes:
        return self.op("array", ArrayType(self.ty(elems[0]), len(elems)), *elems)

    def tuple(self, *elems: bytes) -> bytes:
        return self.op("tuple", TupleType(tuple(self.ty(e) for e in elems)), *elems)

    def cast(self, x: bytes, t: IntType) -> bytes:
        return self.op("cast", t, x)

    def finish(self, name: str, result: bytes) -> Graph:
        self.g.add_region(Region(name, tuple(self.params), result))
        return self.g


def popcount32(g: Graph | None = None) -> Graph:
    b = Builder(g)
    x = b.param("x", U32)
    a = b.bin("sub", x, b.bin("and", b.shift("shr", x, 1), b.c(U32, 0x5555_5555)))
    m3 = b.c(U32, 0x3333_3333)
    s = b.bin("add", b.bin("and", a, m3), b.bin("and", b.shift("shr", a, 2), m3))
    c = b.bin("and", b.bin("add", s, b.shift("shr", s, 4)), b.c(U32, 0x0F0F_0F0F))
    return b.finish("popcount32", b.shift("shr", b.bin("mul", c, b.c(U32, 0x0101_0101)), 24))


def edge_semantics(g: Graph | None = None) -> Graph:
    b = Builder(g)
    i8, u8 = sint(8), uint(8)
    a, d, n, k = b.param("a", i8), b.param("b", i8), b.param("n", u8), b.param("k", u8)
    table = b.array(*(b.c(u8, v) for v in (10, 20, 30, 40)))
    elems = [b.bin("div", a, d), b.bin("rem", a, d), b.op("shl", i8, a, n),
             b.op("shr", i8, a, n), b.cast(b.index(table, k), i8)]
    return b.finish("edge_semantics", b.array(*elems))


def gray(g: Graph | None = None) -> Graph:
    b = Builder(g)
    x = b.param("x", uint(8))
    to_gray = b.bin("xor", x, b.shift("shr", x, 1))
    acc = x
    for i in range(1, 8):
        acc = b.bin("xor", acc, b.shift("shr", x, i))
    return b.finish("gray", b.tuple(to_gray, acc))


def saturate(g: Graph | None = None) -> Graph:
    b = Builder(g)
    i8, i16 = sint(8), sint(16)
    a, d = b.param("a", i8), b.param("b", i8)
    wide = b.bin("add", b.cast(a, i16), b.cast(d, i16))
    low = b.op("select", i8, b.op("lt", BOOL, wide, b.c(i16, -128)), b.c(i8, -128),
               b.cast(wide, i8))
    total = b.op("select", i8, b.op("gt", BOOL, wide, b.c(i16, 127)), b.c(i8, 127), low)
    diff = b.bin("sub", b.cast(a, i16), b.cast(d, i16))
    mag = b.op("select", i16, b.op("lt", BOOL, diff, b.c(i16, 0)), b.op("neg", i16, diff), diff)
    return b.finish("saturate", b.tuple(total, b.cast(mag, uint(8))))


def lfsr16(g: Graph | None = None) -> Graph:
    b = Builder(g)
    u16, u4 = uint(16), uint(4)
    s, steps = b.param("state", u16), b.param("steps", u4)
    for i in range(15):
        taps = b.bin("xor", b.bin("xor", b.bin("xor", s, b.shift("shr", s, 2)),
                                  b.shift("shr", s, 3)), b.shift("shr", s, 5))
        bit = b.bin("and", taps, b.c(u16, 1))
        stepped = b.bin("or", b.shift("shr", s, 1), b.shift("shl", bit, 15))
        cond = b.op("lt", BOOL, b.cast(b.c(U32, i), u4), steps)
        s = b.op("select", u16, cond, stepped, s)
    return b.finish("lfsr16", s)


def fir8(g: Graph | None = None) -> Graph:
    b = Builder(g)
    i16, i32 = sint(16), sint(32)
    x = b.param("x", ArrayType(i16, 8))
    taps = b.array(*(b.c(i16, v) for v in (1, -2, 3, 4, 4, 3, -2, 1)))
    acc = b.c(i32, 0)
    for i in range(8):
        term = b.bin("mul", b.cast(b.index(x, i), i32), b.cast(b.index(taps, i), i32))
        acc = b.bin("add", acc, term)
    return b.finish("fir8", acc)


def mat2(g: Graph | None = None) -> Graph:
    b = Builder(g)
    u8, u17 = uint(8), uint(17)
    m_t = ArrayType(ArrayType(u8, 2), 2)
    a, m = b.param("a", m_t), b.param("b", m_t)
    zero = b.c(u17, 0)
    c = b.array(b.array(zero, zero), b.array(zero, zero))
    for i in range(2):
        for j in range(2):
            for k in range(2):
                prod = b.bin("mul", b.cast(b.index(b.index(a, i), k), u17),
                             b.cast(b.index(b.index(m, k), j), u17))
                row = b.index(c, i)
                row = b.update(row, j, b.bin("add", b.index(row, j), prod))
                c = b.update(c, i, row)
    return b.finish("mat2", c)


ALL = {f.__name__: f for f in (popcount32, edge_semantics, gray, saturate, lfsr16, fir8, mat2)}
