"""Known and demanded bits against exhaustive evaluation, and the rewrites the bits pass makes.

For every op the analyses handle, widths 1-6, every input value: the bits claimed known hold in
every row, and a bit claimed not demanded can be flipped in any input without changing any
result. Operands get known bits from masks (``(p & A) | O``), drawn from a fixed seed.
"""

from __future__ import annotations

import itertools
import random

import pytest

from kera.ir import values
from kera.ir.graph import Graph
from kera.ir.types import BOOL, BoolType, IntType, Type, sint, uint
from kera.opt import bits, optimize
from kera.opt.bits import wire_runs
from kera.opt.demanded import DEMAND, demanded
from kera.opt.knownbits import TRANSFER, KnownBits
from tests.opt.kit import B, all_values, assert_same_bits, logic_bits, results

WIDTHS = range(1, 7)
SAME = ("add", "sub", "mul", "and", "or", "xor", "min", "max", "div", "rem")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
SHIFTS = ("shl", "shr", "rotl", "rotr")
EXACT = {"add", "sub", "mul", "and", "or", "xor", "shl", "shr", "rotl", "rotr", "neg", "not",
         "cast", "slice", "concat", "select", "widening_mul", *COMPARE}
"""Ops whose known bits are exact when every operand bit is known."""


def _masked(b: B, p: bytes, t: Type, rng: random.Random, free: bool) -> bytes:
    """Return ``(p & A) | O`` with random masks (``p`` itself when ``free``)."""
    if free or isinstance(t, BoolType):
        return p
    assert isinstance(t, IntType)
    a, o = rng.getrandbits(t.width), rng.getrandbits(t.width) & rng.getrandbits(t.width)
    return b.op("or", b.op("and", p, b.c(t, a)), b.c(t, o))


def _cases(seed: int) -> list[tuple[str, list[Type], dict[str, int], Type | None]]:
    """Return (op, operand types, attrs, result type or None for the default) to check."""
    rng = random.Random(seed)
    out: list[tuple[str, list[Type], dict[str, int], Type | None]] = []
    for w in WIDTHS:
        for signed in (False, True):
            t = IntType(w, signed)
            out += [(op, [t, t], {}, None) for op in SAME + COMPARE]
            out += [(op, [t, uint(3)], {}, None) for op in SHIFTS]
            out += [(op, [t], {}, None) for op in ("not", "popcount", "clz", "ctz")]
            out.append(("select", [BOOL, t, t], {}, t))
            if signed:
                out.append(("neg", [t], {}, None))
            out.append(("widening_mul", [t, t], {}, IntType(2 * w, signed)))
            out.append(("cast", [t], {}, IntType(rng.randint(1, 6), rng.random() < 0.5)))
            lo = rng.randrange(w)
            out.append(("slice", [t], {"lo": lo}, uint(rng.randint(1, w - lo))))
            out.append(("concat", [t, uint(rng.randint(1, 6))], {}, None))
        out.append(("cast", [BOOL], {}, IntType(w, rng.random() < 0.5)))
    out += [(op, [BOOL, BOOL], {}, None) for op in ("and", "or", "xor", "eq", "ne")]
    out.append(("not", [BOOL], {}, None))
    return out


def _build(op: str, ts: list[Type], attrs: dict[str, int], out: Type | None,
           rng: random.Random, free: int | None) -> tuple[B, list[bytes], bytes]:
    """Return a builder holding ``op`` on masked params (param ``free`` unmasked), its params
    and the op's node."""
    b = B()
    ps = [b.param(f"p{i}", t) for i, t in enumerate(ts)]
    xs = [_masked(b, p, t, rng, free == i) for i, (p, t) in enumerate(zip(ps, ts, strict=True))]
    return b, ps, b.op(op, *xs, t=_out(op, ts, out), **attrs)


def _out(op: str, ts: list[Type], out: Type | None) -> Type | None:
    if out is None and op == "concat":
        return uint(sum(t.width for t in ts))  # type: ignore[attr-defined]
    return out


def _rows(g: Graph, ts: list[Type]) -> tuple[dict[str, object], int, list[list[object]]]:
    combos = list(itertools.product(*(all_values(t) for t in ts)))
    cols = [list(c) for c in zip(*combos, strict=True)]
    pairs = enumerate(zip(cols, ts, strict=True))
    inputs = {f"p{i}": values.stack(col, t) for i, (col, t) in pairs}
    return inputs, len(combos), cols


def _pattern(v: object, t: Type) -> int:
    if isinstance(t, BoolType):
        return int(bool(v))
    assert isinstance(t, IntType)
    return int(v) & t.mask  # type: ignore[call-overload]


def test_every_op_with_a_transfer_or_demand_rule_is_checked_here():
    checked = {op for op, *_ in _cases(0)}
    assert set(TRANSFER) | (set(DEMAND) - {"cast"}) <= checked | {"cast"}
    assert "cast" in checked


@pytest.mark.parametrize("seed", range(3))
def test_known_bits_hold_for_every_input(seed):
    rng = random.Random(seed)
    for op, ts, attrs, out in _cases(seed):
        b, _, node = _build(op, ts, attrs, out, rng, None)
        graph = b.finish(node)
        k = KnownBits(graph)(node)
        assert k is not None and k.zero & k.one == 0
        rt = graph.nodes[node].type
        inputs, n, _ = _rows(graph, ts)
        for got in results(graph, "f", inputs, n):
            p = _pattern(got, rt)
            assert p & k.zero == 0 and p & k.one == k.one, (op, ts, attrs, k, got)


@pytest.mark.parametrize("seed", range(3))
def test_known_bits_of_constant_operands_are_exact(seed):
    rng = random.Random(50 + seed)
    for op, ts, attrs, out in _cases(seed):
        b = B()
        vals = [rng.choice(all_values(t)) for t in ts]
        node = b.op(op, *(b.c(t, int(v)) for t, v in zip(ts, vals, strict=True)),  # type: ignore[call-overload]
                    t=_out(op, ts, out), **attrs)
        graph = b.finish(node)
        k = KnownBits(graph)(node)
        assert k is not None
        p = _pattern(results(graph, "f", {}, 1)[0], graph.nodes[node].type)
        assert p & k.zero == 0 and p & k.one == k.one, (op, ts, vals, k)
        if op in EXACT:
            assert k.is_const(), (op, ts, vals, k)


@pytest.mark.parametrize("seed", range(3))
def test_bits_not_demanded_change_no_result(seed):
    rng = random.Random(100 + seed)
    for op, ts, attrs, out in _cases(seed):
        free = rng.randrange(len(ts))
        b, ps, node = _build(op, ts, attrs, out, rng, free)
        rt = b.g.nodes[node].type
        if isinstance(rt, IntType):  # read only some bits of the result
            node = b.op("and", node, b.c(rt, rng.getrandbits(rt.width)))
        graph = b.finish(node)
        dem = demanded(graph)
        inputs, n, cols = _rows(graph, ts)
        want = results(graph, "f", inputs, n)
        for i, (p, t) in enumerate(zip(ps, ts, strict=True)):
            w = 1 if isinstance(t, BoolType) else t.width  # type: ignore[attr-defined]
            for bit in range(w):
                if dem[p] >> bit & 1:
                    continue
                flipped = dict(inputs)
                col = [_flip(v, bit, t) for v in cols[i]]
                flipped[f"p{i}"] = values.stack(col, t)
                assert results(graph, "f", flipped, n) == want, (op, ts, attrs, i, bit, dem[p])


@pytest.mark.parametrize("seed", range(3))
def test_the_bits_pass_is_exact_on_every_input(seed):
    """Each case, its result partly read (a mask) and fed to a second op, before and after."""
    rng = random.Random(200 + seed)
    for op, ts, attrs, out in _cases(seed):
        b, ps, node = _build(op, ts, attrs, out, rng, None)
        rt = b.g.nodes[node].type
        if isinstance(rt, IntType):
            node = b.op("and", node, b.c(rt, rng.getrandbits(rt.width)))
            other = rng.choice(("add", "xor", "or", "sub", "mul"))
            node = b.op(other, node, _masked(b, b.c(rt, rng.getrandbits(rt.width)), rt, rng,
                                             False))
        graph = b.finish(node)
        after = bits(graph)
        inputs, n, _ = _rows(graph, ts)
        assert results(after, "f", inputs, n) == results(graph, "f", inputs, n), (op, ts, attrs)


def _flip(v: object, bit: int, t: Type) -> object:
    if isinstance(t, BoolType):
        return not v
    assert isinstance(t, IntType)
    return t.wrap(int(v) ^ (1 << bit))  # type: ignore[call-overload]


# ----------------------------------------------------------------------------- the rewrites


def _one(t: Type, build) -> tuple[Graph, Graph]:  # type: ignore[no-untyped-def]
    b = B()
    x = b.param("x", t)
    g = b.finish(build(b, x))
    after = bits(g)
    assert_same_bits(g, after, rows=256)
    return g, after


def _ops(g: Graph) -> list[str]:
    from kera.opt.rewrite import walk_order

    return [g.nodes[n].op for n in walk_order(g)]


def test_a_sign_test_is_the_sign_bit():
    i32 = sint(32)
    _, after = _one(i32, lambda b, x: b.op("ge", x, b.c(i32, 0)))
    assert "ge" not in _ops(after) and "slice" in _ops(after)
    res = after.nodes[after.regions["f"].result]
    assert res.op == "eq" and after.nodes[res.inputs[0]].attr("lo") == 31


def test_a_one_bit_multiplicand_is_a_select():
    u8 = uint(8)  # the xtime step of a GF(2^8) multiply: ((a >> 7) & 1) * 0x1b
    _, after = _one(u8, lambda b, x: b.op(
        "mul", b.op("and", b.op("shr", x, b.c(uint(32), 7)), b.c(u8, 1)), b.c(u8, 0x1B)))
    assert "mul" not in _ops(after) and "select" in _ops(after)


def test_xors_read_for_one_bit_are_one_bit_wide():
    u16 = uint(16)

    def lfsr_step(b: B, s: bytes) -> bytes:
        sh = lambda k: b.op("shr", s, b.c(uint(32), k))  # noqa: E731
        bit = b.op("and", b.op("xor", b.op("xor", b.op("xor", s, sh(2)), sh(3)), sh(5)),
                   b.c(u16, 1))
        return b.op("or", sh(1), b.op("shl", bit, b.c(uint(32), 15)))

    before, after = _one(u16, lfsr_step)
    xors = [after.nodes[n] for n in after.nodes if after.nodes[n].op == "xor"]
    assert xors and all(n.type == uint(1) for n in xors)
    assert "or" not in _ops(after)  # the shifted-in bit is wired next to the shifted state
    assert logic_bits(after) == 3 and logic_bits(before) == 5 * 16


def test_a_bit_reverse_loop_is_wiring():
    u32 = uint(32)

    def rev(b: B, x: bytes) -> bytes:
        r = b.c(u32, 0)
        for i in range(32):
            bit = b.op("and", b.op("shr", x, b.c(uint(32), i)), b.c(u32, 1))
            r = b.op("or", r, b.op("shl", bit, b.c(uint(32), 31 - i)))
        return r

    before, after = _one(u32, rev)
    assert logic_bits(after) == 0 < logic_bits(before)


def test_undemanded_high_bits_narrow_arithmetic():
    u32 = uint(32)
    _, after = _one(u32, lambda b, x: b.op("and", b.op("add", x, b.c(u32, 77)), b.c(u32, 0xFF)))
    adds = [after.nodes[n] for n in after.nodes if after.nodes[n].op == "add"]
    assert [str(n.type) for n in adds] == ["u8"]


def test_bits_is_idempotent_and_in_the_o2_pipeline():
    u16 = uint(16)
    b = B()
    x = b.param("x", u16)
    g = b.finish(b.op("and", b.op("mul", x, x), b.c(u16, 0x0F)))
    once = bits(g)
    assert bits(once).fingerprint() == once.fingerprint()
    muls = [n.type for n in optimize(g, 2).nodes.values() if n.op == "mul"]
    assert muls == [uint(4)]


def _runs_bit_by_bit(n: int, d: int, ma: int, mb: int) -> list[tuple[str, int, int]]:
    """The runs of ``wire_runs``, decided one bit at a time."""
    srcs: list[str] = []
    for i in range(n):
        if not d >> i & 1:
            srcs.append("*")  # not read: anything
        elif (ma & mb) >> i & 1:
            srcs.append("ab")
        elif ma >> i & 1:
            srcs.append("a")
        elif mb >> i & 1:
            srcs.append("b")
        else:
            srcs.append("a|b|0")  # 0 in both: any of them
    runs: list[list] = []
    for i, s in enumerate(srcs):
        if runs and runs[-1][0] in (s.split("|") if s != "*" else ("a", "b", "0")):
            runs[-1][2] += 1
        else:
            runs.append([s if s in ("a", "b", "ab") else "0", i, 1])
    return [(s, lo, w) for s, lo, w in runs]


def test_wire_runs_match_a_bit_by_bit_walk():
    for n in range(1, 6):
        for d, ma, mb in itertools.product(range(1 << n), repeat=3):
            assert wire_runs(n, d, ma, mb) == _runs_bit_by_bit(n, d, ma, mb), (n, d, ma, mb)


@pytest.mark.parametrize("signed", [False, True])
def test_zero_over_a_value_is_a_zero_extension_only_of_an_unsigned_one(signed: bool) -> None:
    # `concat(0u1, x) as u3` of an i1 x is 0 or 1; a cast of x itself would sign-extend -1 to 3
    # (found by tests/opt/test_state_passes.py's hypothesis run)
    t = IntType(1, signed)
    b = B()
    x = b.param("x", t)
    wide = b.op("concat", b.c(uint(1), 0), x, t=uint(2))
    g = b.finish(b.op("cast", wide, t=uint(3)))
    after = bits(g)
    inputs = {"x": values.stack([t.min, t.max], t)}
    assert results(after, "f", inputs, 2) == results(g, "f", inputs, 2) == (
        [1, 0] if signed else [0, 1])
