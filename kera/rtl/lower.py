"""The Verilog lowering of every opcode: one table keyed by the registry's names.

A lowering gets the module ``Body``, the name its result wire must have, the node and its
operands, and declares that wire (plus any helper wires named after it). Each follows
SEMANTICS.md to the bit: wrapping arithmetic at the exact width, shifts that compare the amount
with the width themselves, rotates modulo the width, total division, clamped array reads and
ignored out-of-range writes. ``param`` and ``const`` are not lowered here: parameters are input
ports and constants are literals (``kera.rtl.emit``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kera.ir.graph import Node
from kera.ir.tables import Unsupported
from kera.ir.types import ArrayType, IntType, TupleType, Type
from kera.rtl.netlist import Body, Operand, concat, lit

Lowering = Callable[[Body, str, Node, list[Operand]], None]

LOWERINGS: dict[str, Lowering | Unsupported] = {
    "param": Unsupported("an input port (or the pipeline register that carries it)"),
    "state": Unsupported("a state register (or block RAM read port) of the kernel"),
    "const": Unsupported("a sized literal wherever it is used"),
}


def _lowering(*names: str) -> Callable[[Lowering], Lowering]:
    def register(fn: Lowering) -> Lowering:
        for name in names:
            LOWERINGS[name] = fn
        return fn

    return register


def _signed(t: Type) -> bool:
    return isinstance(t, IntType) and t.signed


# ----------------------------------------------------------------------------- arithmetic

_INFIX = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^",
          "eq": "==", "ne": "!="}


@_lowering("add", "sub", "mul", "and", "or", "xor", "eq", "ne")
def _infix(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """``x op y``; a signed ``mul`` as ``$signed(x) * $signed(y)``: its low bits are the same,
    and yosys's ``wreduce`` then drops the operands' repeated sign bits before it maps the
    product (the estimate's ``CostModel.mul_query``). Unsigned, a sign-extended i16 in i32
    times ``-24576`` is a 32 x 32 product: biquad_q14's two multiplies took 5 SB_MAC16 (4
    MULT18X18D) where 2 were estimated."""
    x, y = ops
    if node.op == "mul" and _signed(node.type):
        b.define(out, node.type.flat_width, f"$signed({x.expr}) * $signed({y.expr})")
        return
    b.define(out, node.type.flat_width, f"{x.expr} {_INFIX[node.op]} {y.expr}")


@_lowering("neg")
def _neg(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    w = node.type.flat_width
    b.define(out, w, f"{lit(0, w)} - {ops[0].expr}")


@_lowering("not")
def _not(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    b.define(out, node.type.flat_width, f"~{ops[0].expr}")


_ORDER = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@_lowering("lt", "le", "gt", "ge")
def _compare(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """An ordering; of two signed variables, the borrow of their sign-extended difference
    (``_signed_less``), else the Verilog operator (of a constant, yosys trims the chain)."""
    x, y = ops
    if _signed(x.type) and x.value is None and y.value is None:
        first, second = (x, y) if node.op in ("lt", "ge") else (y, x)
        less = _signed_less(b, out, first, second)
        b.define(out, 1, less if node.op in ("lt", "gt") else f"~{less}")
    elif _signed(x.type):
        b.define(out, 1, f"$signed({x.expr}) {_ORDER[node.op]} $signed({y.expr})")
    else:
        b.define(out, 1, f"{x.expr} {_ORDER[node.op]} {y.expr}")


def _signed_less(b: Body, out: str, x: Operand, y: Operand) -> str:
    """Return ``x < y`` of signed ``x``, ``y`` as the borrow out of ``{x[N-1], x} - {y[N-1],
    y}``: yosys 0.70 ``synth_ecp5`` copies the last LUT of ``$signed(x) < $signed(y)`` into
    every bit of a select it feeds (``max`` of i64: 494 LUT4, 247 PFUMX, 184 L6MUX21; an i16
    select 110 LUT4), while a subtraction's borrow is its chain's own output (33 CCU2C and 64
    LUT4; i16: 9 CCU2C, 16 LUT4); on iCE40 both are the same."""
    w = x.width
    diff = b.wire(f"{out}_d", w + 1, f"{b.extend(x, w + 1, True)} - {b.extend(y, w + 1, True)}")
    b.sink(diff)  # only its borrow is read
    return f"{diff}[{w}]"


@_lowering("min", "max")
def _min_max(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """A select on ``x < y`` (signed: ``_signed_less``)."""
    x, y = ops
    lt = _signed_less(b, out, x, y) if _signed(x.type) else f"{x.expr} < {y.expr}"
    less = b.wire(f"{out}_lt", 1, lt)
    first, second = (x, y) if node.op == "min" else (y, x)
    b.define(out, x.width, f"{less} ? {first.expr} : {second.expr}")


@_lowering("widening_mul")
def _widening_mul(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    w = node.type.flat_width
    signed = _signed(ops[0].type)
    xs = b.wire(f"{out}_a", w, b.extend(ops[0], w, signed))
    ys = b.wire(f"{out}_b", w, b.extend(ops[1], w, signed))
    b.define(out, w, f"{xs} * {ys}")


@_lowering("div", "rem")
def _div_rem(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """Truncating division made total: ``a/0 = 0``, ``a%0 = a``, ``MIN/-1 = MIN``."""
    x, y = ops
    w = x.width
    zero = lit(0, w)
    is_zero = b.wire(f"{out}_by0", 1, f"{y.expr} == {zero}")
    if _signed(x.type):
        # Divide the magnitudes (|MIN| = 2**(w-1) is exact as w unsigned bits), then fix signs.
        sx, sy = b.bit(x, w - 1, whole_used=True), b.bit(y, w - 1, whole_used=True)
        mx = b.wire(f"{out}_ma", w, f"{sx} ? ({zero} - {x.expr}) : {x.expr}")
        my = b.wire(f"{out}_mb", w, f"{sy} ? ({zero} - {y.expr}) : {y.expr}")
    else:
        mx, my = x.expr, y.expr
    divisor = b.wire(f"{out}_d", w, f"{is_zero} ? {lit(1, w)} : {my}")  # never divide by 0
    if node.op == "div":
        q = b.wire(f"{out}_uq", w, f"{mx} / {divisor}")
        if _signed(x.type):
            q = b.wire(f"{out}_q", w, f"({sx} ^ {sy}) ? ({zero} - {q}) : {q}")
        b.define(out, w, f"{is_zero} ? {zero} : {q}")
    else:
        r = b.wire(f"{out}_ur", w, f"{mx} % {divisor}")
        if _signed(x.type):
            r = b.wire(f"{out}_r", w, f"{sx} ? ({zero} - {r}) : {r}")
        b.define(out, w, f"{is_zero} ? {x.expr} : {r}")


# ----------------------------------------------------------------------------- shifts, rotates


def _amount_at_least(b: Body, n: Operand, limit: int) -> str | None:
    """Return a 1-bit expression for ``n >= limit``, or None when ``n`` can never reach it."""
    if limit > (1 << n.width) - 1:
        return None
    return f"{n.expr} >= {lit(limit, n.width)}"


@_lowering("shl", "shr")
def _shift(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """Shift with the SEMANTICS.md rule: an amount >= N gives 0 or all sign bits. Below N the
    amount fits ``clog2(N)`` bits, so the shifter reads only those (a u64 by a u8: six
    levels, not eight; yosys 0.70 on ECP5 794 LUT4 sites with all eight, 527 characterised
    with seven)."""
    x, n = ops
    w = x.width
    k = (w - 1).bit_length()
    by = n.expr if n.width <= k or n.value is not None else b.part(n, k - 1, 0) if k else "1'b0"
    if node.op == "shl":
        shifted, fill = f"{x.expr} << {by}", lit(0, w)
    elif _signed(x.type):
        shifted = b.wire(f"{out}_sra", w, f"$signed({x.expr}) >>> {by}")
        fill = f"{{{w}{{{b.bit(x, w - 1, whole_used=True)}}}}}"
    else:
        shifted, fill = f"{x.expr} >> {by}", lit(0, w)
    big = _amount_at_least(b, n, w)
    if big is None:
        b.define(out, w, shifted)
        return
    over = b.wire(f"{out}_over", 1, big)
    shifted = f"({shifted})" if " " in shifted else shifted
    b.define(out, w, f"{over} ? {fill} : {shifted}")


@_lowering("rotl", "rotr")
def _rotate(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """Rotate by the amount ``r`` modulo N: one shift of the operand doubled, ``{x, x} << r``
    (its top half) or ``{x, x} >> r`` (its bottom half), the form the model was characterised
    on (``kera.hls.characterize.designs``). yosys 0.70 builds it as one barrel: u32 by a
    5-bit amount, 174 SB_LUT4 where two shifts or'ed together (``x << r | x >> (32 - r)``)
    took 327; on ECP5 594 LUT4 against 492 and 3 CCU2C."""
    x, n = ops
    w = x.width
    if w == 1:
        b.define(out, 1, x.expr)
        return
    rw = w.bit_length()  # r < w always fits
    if w & (w - 1) == 0 and n.width >= rw - 1:
        r = b.part(n, rw - 2, 0)
    elif w > (1 << n.width) - 1:
        r = n.expr
    else:
        mod = b.wire(f"{out}_mod", n.width, f"{n.expr} % {lit(w, n.width)}")
        r = b.part(Operand(mod, IntType(n.width, False)), rw - 1, 0)
    shift = "<<" if node.op == "rotl" else ">>"
    doubled = b.wire(f"{out}_t", 2 * w, f"{{{x.expr}, {x.expr}}} {shift} {r}")
    lo = w if node.op == "rotl" else 0
    b.sink(doubled)  # half of it goes unread
    b.define(out, w, f"{doubled}[{lo + w - 1}:{lo}]")


# ----------------------------------------------------------------------------- bit counting


@_lowering("popcount")
def _popcount(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """A balanced adder tree of the bits, each zero-extended to the count's width."""
    x = ops[0]
    w = x.width
    if w == 1:
        b.define(out, 1, x.expr)
        return
    cw = w.bit_length()
    terms = [f"{{{cw - 1}'d0, {b.bit(x, i)}}}" for i in range(w)]
    while len(terms) > 1:
        pairs = [f"({terms[i]} + {terms[i + 1]})" for i in range(0, len(terms) - 1, 2)]
        terms = pairs + ([terms[-1]] if len(terms) % 2 else [])
    tree = terms[0][1:-1] if terms[0].startswith("(") else terms[0]
    count = b.wire(f"{out}_cnt", cw, tree)
    b.define(out, w, count if cw == w else f"{{{w - cw}'d0, {count}}}")


@_lowering("clz", "ctz")
def _count_zeros(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """A priority chain from the most (clz) or least (ctz) significant bit; all-zero gives N."""
    x = ops[0]
    w = x.width
    order = list(range(w - 1, -1, -1) if node.op == "clz" else range(w))
    chain = lit(w, w)
    for k in range(w - 1, -1, -1):
        chain = f"{b.bit(x, order[k])} ? {lit(k, w)} : {chain}"  # ?: nests to the right
    b.define(out, w, chain)


# ----------------------------------------------------------------------------- conversions


@_lowering("select")
def _select(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    c, x, y = ops
    b.define(out, node.type.flat_width, f"{c.expr} ? {x.expr} : {y.expr}")


@_lowering("cast")
def _cast(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """Truncate, or extend by the *source* type's signedness (bool extends as 0/1)."""
    x = ops[0]
    b.define(out, node.type.flat_width, b.extend(x, node.type.flat_width, _signed(x.type)))


@_lowering("concat")
def _concat(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    b.define(out, node.type.flat_width, concat([ops[0].expr, ops[1].expr]))


@_lowering("slice")
def _slice(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    lo = int(node.attr("lo"))
    b.define(out, node.type.flat_width, b.part(ops[0], lo + node.type.flat_width - 1, lo))


# ----------------------------------------------------------------------------- aggregates


def _pack(ops: list[Operand]) -> str:
    """Return the concatenation of the operands with operand 0 in the least significant bits."""
    return concat([op.expr for op in reversed(ops) if op.width > 0])


@_lowering("array", "tuple")
def _aggregate(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    b.define(out, node.type.flat_width, _pack(ops))


def _element(b: Body, arr: Operand, k: int) -> str:
    ew = arr.type.elem.flat_width  # type: ignore[attr-defined]
    return b.part(arr, (k + 1) * ew - 1, k * ew)


@_lowering("array_index")
def _array_index(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """A binary tree of 2-input multiplexers over the elements, one level per index bit from
    the top; an index past the end reads the last element (the index is clamped first where
    it can pass the end by more than its low bits can say).

    yosys maps the tree as the resource model counts it, where a ``case`` became a one-hot
    ``$pmux`` it mapped into more LUTs: an 8 x u8 read 75 LUT4 on ECP5 against the tree's 51
    (estimate 50), 59 SB_LUT4 on iCE40 against 52 (estimate 51; yosys 0.70). A constant
    table read by a variable index indexes the table's ROM (``Body.rom``), emitted once
    however many reads share it.
    """
    arr, idx = ops
    t = arr.type
    assert isinstance(t, ArrayType)
    w, last = node.type.flat_width, t.length - 1
    if idx.value is not None or last == 0:
        b.define(out, w, _element(b, arr, min(idx.value or 0, last)))
        return
    if arr.table is not None:
        _rom_read(b, out, w, arr.table, t.length, idx)
        return
    aw = last.bit_length()
    if idx.width > aw:  # indices past the end beyond the low bits: clamp them
        at = Operand(b.wire(f"{out}_at", aw, f"({idx.expr} > {lit(last, idx.width)}) ? "
                                             f"{lit(last, aw)} : {b.part(idx, aw - 1, 0)}"),
                     IntType(aw, False))
    else:
        at = idx
    level = [_element(b, arr, min(k, last)) for k in range(1 << at.width)]
    for j in reversed(range(1, at.width)):  # every level but the last: a wire of the halves
        half = len(level) // 2
        sel = b.bit(at, j, whole_used=at is not idx)
        name = b.wire(f"{out}_l{j}", half * w,
                      f"{sel} ? {concat(level[half:][::-1])} : {concat(level[:half][::-1])}")
        level = [f"{name}[{(k + 1) * w - 1}:{k * w}]" if w > 1 else f"{name}[{k}]"
                 for k in range(half)]
    b.define(out, w, f"{b.bit(at, 0, whole_used=at is not idx)} ? {level[1]} : {level[0]}")


def _rom_read(b: Body, out: str, w: int, table: int, length: int, idx: Operand) -> None:
    """Read a constant table's ROM; an index past the end is clamped to the last element."""
    if (1 << idx.width) <= length:  # every index is in range: the ROM holds the reachable ones
        b.define(out, w, f"{b.rom(table, w, 1 << idx.width)}({idx.expr})")
        return
    last = length - 1
    aw = last.bit_length()
    at = b.wire(f"{out}_at", aw, f"({idx.expr} > {lit(last, idx.width)}) ? {lit(last, aw)} : "
                                 f"{b.part(idx, aw - 1, 0)}")
    b.define(out, w, f"{b.rom(table, w, length)}({at})")


@_lowering("array_update")
def _array_update(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    """Replace one element; an index past the end changes nothing.

    A constant index keeps the untouched elements as (at most) two part-selects.
    """
    arr, idx, val = ops
    t = arr.type
    assert isinstance(t, ArrayType)
    w, ew = node.type.flat_width, t.elem.flat_width
    if idx.value is not None:
        k = idx.value
        if k >= t.length:
            b.define(out, w, arr.expr)
            return
        hi = [b.part(arr, w - 1, (k + 1) * ew)] if k < t.length - 1 else []
        lo = [b.part(arr, k * ew - 1, 0)] if k > 0 else []
        b.define(out, w, concat([*hi, val.expr, *lo]))
        return
    parts = []
    for k in range(t.length - 1, -1, -1):
        old = _element(b, arr, k)
        if k <= (1 << idx.width) - 1:
            parts.append(f"({idx.expr} == {lit(k, idx.width)}) ? {val.expr} : {old}")
        else:
            parts.append(old)
    if len(parts) > 1:
        parts = [f"({p})" if "?" in p else p for p in parts]
    b.define(out, w, concat(parts))


@_lowering("tuple_get")
def _tuple_get(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
    tup = ops[0]
    t = tup.type
    assert isinstance(t, TupleType)
    i = int(node.attr("index"))
    lo = sum(e.flat_width for e in t.elems[:i])
    b.define(out, node.type.flat_width, b.part(tup, lo + t.elems[i].flat_width - 1, lo))


__all__ = ["LOWERINGS", "Lowering"]


# ----------------------------------------------------------------------------- LUT multiplies


def lut_multiplies(schedule: Any, board: str) -> dict[bytes, tuple[int, int, bool]]:
    """Return the multiplies the resource estimate builds from LUTs (beyond the board's DSPs).

    ``synth_ice40 -dsp`` maps every ``*`` to an SB_MAC16 and honours no ``use_dsp``
    attribute, so these are emitted as shift-and-add (``lut_multiply``) and yosys sees no
    multiply. Node -> (the operand whose bits select the partial products, its significant
    width, whether it is a sign-extended value). An unknown board or family: none.
    """
    from kera.diagnostics import KeraError
    from kera.hls.boards import load_board
    from kera.hls.lutmap import significant_width
    from kera.hls.models import load_model
    from kera.hls.resources import schedule_costs
    from kera.hls.timing import CostModel

    try:
        the_board = load_board(board)
        model = load_model(the_board.family)
    except (KeraError, KeyError, OSError, ValueError):
        return {}
    graph = schedule.graph
    costs = schedule_costs(schedule, CostModel(model), the_board.capacities.dsp)
    lut = costs.lut_multipliers(graph)
    if not lut:
        return {}
    net = costs.network(graph)
    out: dict[bytes, tuple[int, int, bool]] = {}
    for nid in lut:
        node = graph.nodes[nid]
        t = node.type
        if node.op != "mul" or not isinstance(t, IntType):
            continue  # widening_mul: the model's LUT curve; yosys may still take a DSP
        sig = [significant_width(net.bits[i], t.signed) for i in node.inputs]
        j = 0 if sig[0] <= sig[1] else 1
        e = max(1, sig[j])
        out[nid] = (j, e, t.signed and e < t.width)
    return out


def lut_multiply(select: int, width: int, sign_extended: bool) -> Lowering:
    """Return the lowering of a wrapping ``mul`` as a sum of partial products.

    ``a * b mod 2**W`` is the sum of ``a << j`` over the set bits ``j`` of ``b`` (operand
    ``select``) below its significant width ``e``; when ``b`` is a sign-extended value its top
    significant bit ``e - 1`` weighs ``-2**(e - 1)``, so that partial product is subtracted.
    """

    def lower(b: Body, out: str, node: Node, ops: list[Operand]) -> None:
        w = node.type.flat_width
        y, x = ops[select], ops[1 - select]
        terms: list[str] = []
        for j in range(min(width, w)):
            pp = f"({{{w}{{{b.bit(y, j)}}}}} & ({x.expr} << {j}))"
            sign = "-" if sign_extended and j == width - 1 else "+"
            terms.append(pp if not terms and sign == "+" else f"{sign} {pp}")
        expr = " ".join(terms) if not terms[0].startswith("-") else f"{lit(0, w)} {' '.join(terms)}"
        b.define(out, w, expr)

    return lower
