"""Algebraic simplification: each identity, with the exact graph it must produce."""

from __future__ import annotations

import itertools

import pytest

from kera.ir.types import BOOL, IntType, sint, uint
from kera.opt import simplify
from kera.opt.simplify import cast_chain_is_single
from tests.opt.kit import B, expected, result_after, run_unary

U8, I8, U32, I32, U16 = uint(8), sint(8), uint(32), sint(32), uint(16)
X8 = [("x", U8), ("y", U8)]
S8 = [("x", I8), ("y", I8)]
BB = [("c", BOOL), ("d", BOOL)]


def _c(t, v):
    return lambda g, p: g.c(t, v)


def _x(g: B, p: list[bytes]) -> bytes:
    return p[0]


def _y(g: B, p: list[bytes]) -> bytes:
    return p[1]


def _bin(op, a, b, **kw):
    return lambda g, p: g.op(op, a(g, p), b(g, p), **kw)


def _un(op, a, **kw):
    return lambda g, p: g.op(op, a(g, p), **kw)


CASES = [
    ("x+0", X8, _bin("add", _x, _c(U8, 0)), _x),
    ("0+x", X8, _bin("add", _c(U8, 0), _x), _x),
    ("x-0", X8, _bin("sub", _x, _c(U8, 0)), _x),
    ("x-x", X8, _bin("sub", _x, _x), _c(U8, 0)),
    ("x-3 is x+253", X8, _bin("sub", _x, _c(U8, 3)), _bin("add", _x, _c(U8, 253))),
    ("0-x signed", S8, _bin("sub", _c(I8, 0), _x), _un("neg", _x)),
    ("x*1", X8, _bin("mul", _x, _c(U8, 1)), _x),
    ("x*0", X8, _bin("mul", _x, _c(U8, 0)), _c(U8, 0)),
    ("x*-1 signed", S8, _bin("mul", _x, _c(I8, -1)), _un("neg", _x)),
    ("x&0", X8, _bin("and", _x, _c(U8, 0)), _c(U8, 0)),
    ("x&255", X8, _bin("and", _x, _c(U8, 255)), _x),
    ("x|0", X8, _bin("or", _x, _c(U8, 0)), _x),
    ("x|-1", S8, _bin("or", _x, _c(I8, -1)), _c(I8, -1)),
    ("x^0", X8, _bin("xor", _x, _c(U8, 0)), _x),
    ("x^255", X8, _bin("xor", _x, _c(U8, 255)), _un("not", _x)),
    ("x&x", X8, _bin("and", _x, _x), _x),
    ("x|x", X8, _bin("or", _x, _x), _x),
    ("x^x", X8, _bin("xor", _x, _x), _c(U8, 0)),
    ("x&!x", X8, _bin("and", _x, _un("not", _x)), _c(U8, 0)),
    ("!!x", X8, _un("not", _un("not", _x)), _x),
    ("--x", S8, _un("neg", _un("neg", _x)), _x),
    ("(x+1)+2", X8, _bin("add", _bin("add", _x, _c(U8, 1)), _c(U8, 2)),
     _bin("add", _x, _c(U8, 3))),
    ("(x*3)*5", X8, _bin("mul", _bin("mul", _x, _c(U8, 3)), _c(U8, 5)),
     _bin("mul", _x, _c(U8, 15))),
    ("x/1", X8, _bin("div", _x, _c(U8, 1)), _x),
    ("x/0", X8, _bin("div", _x, _c(U8, 0)), _c(U8, 0)),
    ("x%0", X8, _bin("rem", _x, _c(U8, 0)), _x),
    ("x%1", X8, _bin("rem", _x, _c(U8, 1)), _c(U8, 0)),
    ("x/-1", S8, _bin("div", _x, _c(I8, -1)), _un("neg", _x)),
    ("x%-1", S8, _bin("rem", _x, _c(I8, -1)), _c(I8, 0)),
    ("min(x,x)", X8, _bin("min", _x, _x), _x),
    ("min(x,MIN)", S8, _bin("min", _x, _c(I8, -128)), _c(I8, -128)),
    ("max(x,MIN)", S8, _bin("max", _x, _c(I8, -128)), _x),
    ("max(x,255)", X8, _bin("max", _x, _c(U8, 255)), _c(U8, 255)),
    ("x<<0", X8, _bin("shl", _x, _c(U32, 0)), _x),
    ("x<<8", X8, _bin("shl", _x, _c(U32, 8)), _c(U8, 0)),
    ("x>>9 unsigned", X8, _bin("shr", _x, _c(U8, 9)), _c(U8, 0)),
    ("x>>200 signed", S8, _bin("shr", _x, _c(U8, 200)), _bin("shr", _x, _c(U8, 7))),
    ("x>>7 signed stays", S8, _bin("shr", _x, _c(U8, 7)), _bin("shr", _x, _c(U8, 7))),
    ("rotl(x,16)", X8, _bin("rotl", _x, _c(U8, 16)), _x),
    ("rotr(x,11)", X8, _bin("rotr", _x, _c(U8, 11)), _bin("rotr", _x, _c(U8, 3))),
    ("0<<y", X8, _bin("shl", _c(U8, 0), _y), _c(U8, 0)),
    ("x as u8", X8, _un("cast", _x, t=U8), _x),
    ("(x as u32) as u8", X8, _un("cast", _un("cast", _x, t=U32), t=U8), _x),
    ("(x as i32) as i16", S8, _un("cast", _un("cast", _x, t=I32), t=sint(16)),
     _un("cast", _x, t=sint(16))),
    ("(x as u16) as i32 from i8 stays", S8, _un("cast", _un("cast", _x, t=U16), t=I32),
     _un("cast", _un("cast", _x, t=U16), t=I32)),
    ("slice whole", X8, _un("slice", _x, t=U8, lo=0), _x),
    ("x==x", X8, _bin("eq", _x, _x), _c(BOOL, 1)),
    ("x<x", X8, _bin("lt", _x, _x), _c(BOOL, 0)),
    ("x>=x", X8, _bin("ge", _x, _x), _c(BOOL, 1)),
    ("x<0 unsigned", X8, _bin("lt", _x, _c(U8, 0)), _c(BOOL, 0)),
    ("x<=MAX", S8, _bin("le", _x, _c(I8, 127)), _c(BOOL, 1)),
    ("3<x", X8, _bin("lt", _c(U8, 3), _x), _bin("gt", _x, _c(U8, 3))),
    ("c==true", BB, _bin("eq", _x, _c(BOOL, 1)), _x),
    ("c==false", BB, _bin("eq", _x, _c(BOOL, 0)), _un("not", _x)),
    ("c!=false", BB, _bin("ne", _x, _c(BOOL, 0)), _x),
    ("!(x<y)", X8, _un("not", _bin("lt", _x, _y)), _bin("ge", _x, _y)),
    ("c&&true", BB, _bin("and", _c(BOOL, 1), _x), _x),
    ("c||true", BB, _bin("or", _x, _c(BOOL, 1)), _c(BOOL, 1)),
]


def _select(cond, a, b):
    return lambda g, p: g.op("select", cond(g, p), a(g, p), b(g, p))


SEL = [("c", BOOL), ("x", U8), ("y", U8)]


def _p(i):
    return lambda g, p: p[i]


CASES += [
    ("select(c,x,x)", SEL, _select(_p(0), _p(1), _p(1)), _p(1)),
    ("select(true,x,y)", SEL, _select(_c(BOOL, 1), _p(1), _p(2)), _p(1)),
    ("select(false,x,y)", SEL, _select(_c(BOOL, 0), _p(1), _p(2)), _p(2)),
    ("select(!c,x,y)", SEL, _select(_un("not", _p(0)), _p(1), _p(2)),
     _select(_p(0), _p(2), _p(1))),
    ("select(c,true,false)", BB, _select(_x, _c(BOOL, 1), _c(BOOL, 0)), _x),
    ("select(c,false,true)", BB, _select(_x, _c(BOOL, 0), _c(BOOL, 1)), _un("not", _x)),
    ("select(c,d,false)", BB, _select(_x, _y, _c(BOOL, 0)), _bin("and", _x, _y)),
]


U16P = [("x", U16), ("y", U16)]
CASES += [
    ("(x&1)<<15 drops the mask", U16P, _bin("shl", _bin("and", _x, _c(U16, 1)), _c(U32, 15)),
     _bin("shl", _x, _c(U32, 15))),
    ("(x&3)<<15 drops the mask", U16P, _bin("shl", _bin("and", _x, _c(U16, 3)), _c(U32, 15)),
     _bin("shl", _x, _c(U32, 15))),
    ("(x&1)<<14 keeps it", U16P, _bin("shl", _bin("and", _x, _c(U16, 1)), _c(U32, 14)),
     _bin("shl", _bin("and", _x, _c(U16, 1)), _c(U32, 14))),
    ("(x&0xff00)>>8 drops the mask", U16P,
     _bin("shr", _bin("and", _x, _c(U16, 0xFF00)), _c(U32, 8)), _bin("shr", _x, _c(U32, 8))),
    ("(x as u16) < 7 compares bytes", X8, _bin("lt", _un("cast", _x, t=U16), _c(U16, 7)),
     _bin("lt", _x, _c(U8, 7))),
    ("(x as u16) == (y as u16)", X8,
     _bin("eq", _un("cast", _x, t=U16), _un("cast", _y, t=U16)), _bin("eq", _x, _y)),
    ("(x as i16) < (y as i16) from i8", S8,
     _bin("lt", _un("cast", _x, t=sint(16)), _un("cast", _y, t=sint(16))), _bin("lt", _x, _y)),
    ("(x as u16) < (y as u16) from i8 stays", S8,
     _bin("lt", _un("cast", _x, t=U16), _un("cast", _y, t=U16)),
     _bin("lt", _un("cast", _x, t=U16), _un("cast", _y, t=U16))),
    ("select(c, x as u16, y as u16)", SEL,
     _select(_p(0), _un("cast", _p(1), t=U16), _un("cast", _p(2), t=U16)),
     _un("cast", _select(_p(0), _p(1), _p(2)), t=U16)),
]


@pytest.mark.parametrize(("name", "params", "before", "after"), CASES, ids=[c[0] for c in CASES])
def test_identity(name, params, before, after):
    _, res = result_after(simplify, params, before)
    assert res == expected(params, after)


def test_both_operand_orders_of_a_commutative_op_share_one_node():
    build = lambda g, p: g.op(  # noqa: E731
        "xor", g.op("add", p[0], p[1]), g.op("add", p[1], p[0]))
    _, res = result_after(simplify, X8, build)
    assert res == expected(X8, _c(U8, 0))


TYPES = [BOOL] + [IntType(w, s) for w in range(1, 6) for s in (False, True)]


def test_cast_chain_rule_is_exact_for_every_small_type_triple():
    """Exhaustive over bool, u1..u5, i1..i5: the predicate agrees with the registry."""
    ints = [t for t in TYPES if isinstance(t, IntType)]
    for src, mid, dst in itertools.product(TYPES, ints, ints):
        chain = run_unary(src, lambda g, x, m=mid, d=dst: g.op("cast", g.op("cast", x, t=m), t=d))
        single = run_unary(src, lambda g, x, d=dst: g.op("cast", x, t=d))
        assert cast_chain_is_single(src, mid, dst) == (chain == single), (src, mid, dst)

