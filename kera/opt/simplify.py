"""Algebraic simplification: local identities that hold for every input, bit for bit.

Guarantees: each rule is an identity of SEMANTICS.md for all values of the operands' types
(wrapping arithmetic, shifts that are not taken modulo the width, total division), so the
rewritten graph computes the same bits. Canonical forms it produces: a constant operand of a
commutative op on the right (``a + b`` and a later ``b + a`` share one node; otherwise the
operand order is kept, so chains keep their source order for ``balance``); ``x - c`` as
``x + (-c)``; constants of one associative chain gathered (``(x + 1) + 2`` is ``x + 3``);
``c < x`` as ``x > c``; comparisons of value-preserving extensions made in the narrow type;
``select`` of two casts from one type as a cast of the ``select``.
"""

from __future__ import annotations

from collections.abc import Callable

from kera.ir.graph import Graph, node_id
from kera.ir.ops import OPS
from kera.ir.types import BoolType, IntType, Type
from kera.opt.consts import all_ones, eval_const, is_const
from kera.opt.idioms import swar_popcount
from kera.opt.rewrite import Rewriter, Term, rewrite

SimplifyRule = Callable[[Rewriter, Term], "bytes | None"]

_MIRROR = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
_NEGATE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le"}


def simplify_rule(rw: Rewriter, t: Term) -> bytes | None:
    """Return the simplified replacement of one term, or None when no identity applies."""
    if len(t.args) == 2:
        a, b = t.args
        ka, kb = rw.const_value(a), rw.const_value(b)
        if ka is not None and kb is None:
            if OPS[t.op].commutative:
                return rw.emit(t.op, t.type, (b, a), dict(t.attrs))
            if t.op in _MIRROR:
                return rw.emit(_MIRROR[t.op], t.type, (b, a))
        elif ka is None and kb is None and OPS[t.op].commutative:
            shared = _commuted(rw, t, a, b)
            if shared is not None:
                return shared
    rule = _RULES.get(t.op)
    return rule(rw, t) if rule is not None else None


def walk_dependent(rw: Rewriter, t: Term) -> bytes | None:
    """Return ``simplify_rule``'s answer for a term it left alone in an earlier walk.

    Everything else the rule decides is a function of the term's content (its inputs' content
    included); only the reuse of an earlier ``b op a`` for ``a op b`` depends on what this walk
    added before, so this re-asks just that (and records the term for later ones, as the rule
    does).
    """
    if len(t.args) == 2 and OPS[t.op].commutative:
        a, b = t.args
        if rw.const_value(a) is None and rw.const_value(b) is None:
            return _commuted(rw, t, a, b)
    return None


def _commuted(rw: Rewriter, t: Term, a: bytes, b: bytes) -> bytes | None:
    """Return an existing ``b op a`` for ``a op b`` (operand order is otherwise left alone)."""
    seen = rw.memo.setdefault("commutative", set())
    assert isinstance(seen, set)
    seen.add((t.op, t.type, a, b))
    if (t.op, t.type, b, a) not in seen:  # a cheap filter before hashing
        return None
    swapped = node_id(t.op, t.type, (b, a), t.attrs)
    return swapped if swapped in rw.new.nodes else None


# ----------------------------------------------------------------------------- arithmetic


def _reassociate(rw: Rewriter, t: Term) -> bytes | None:
    """Gather constants: ``(x op c1) op c2`` is ``x op (c1 op c2)`` for an associative op."""
    a, b = t.args
    inner = rw.node(a)
    if rw.const_value(b) is None or inner.op != t.op or inner.type != t.type:
        return None
    x, c1 = inner.inputs
    if rw.const_value(c1) is None:
        return None
    c = eval_const(rw, t.op, t.type, (c1, b))
    return rw.emit(t.op, t.type, (x, c))


def _add(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    if is_const(rw, b, 0):
        return a
    return _reassociate(rw, t)


def _sub(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    c = rw.const_value(b)
    if c is not None:
        return a if c == 0 else rw.emit("add", t.type, (a, rw.const(t.type, -c)))
    if a == b:
        return rw.const(t.type, 0)
    if is_const(rw, a, 0) and _signed(t.type):
        return rw.emit("neg", t.type, (b,))
    return None


def _mul(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    c = rw.const_value(b)
    if c == 0:
        return b
    if c == 1:
        return a
    if c == -1 and _signed(t.type):
        return rw.emit("neg", t.type, (a,))
    return _reassociate(rw, t)


def _neg(rw: Rewriter, t: Term) -> bytes | None:
    inner = rw.node(t.args[0])
    return inner.inputs[0] if inner.op == "neg" else None


def _div(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    c = rw.const_value(b)
    if c == 0:
        return b  # a / 0 = 0
    if c == 1:
        return a
    if c == -1 and _signed(t.type):
        return rw.emit("neg", t.type, (a,))  # MIN / -1 = MIN = -MIN, wrapping
    return None


def _rem(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    c = rw.const_value(b)
    if c == 0:
        return a  # a % 0 = a
    if c == 1 or (c == -1 and _signed(t.type)):
        return rw.const(t.type, 0)
    return None


def _min_max(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    if a == b:
        return a
    c = rw.const_value(b)
    ty = t.type
    if c is not None and isinstance(ty, IntType):
        absorbing, neutral = (ty.min, ty.max) if t.op == "min" else (ty.max, ty.min)
        if c == absorbing:
            return b
        if c == neutral:
            return a
    return _reassociate(rw, t)


# ----------------------------------------------------------------------------- bitwise


def _and(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    if a == b:
        return a
    if is_const(rw, b, 0):
        return b
    if is_const(rw, b, all_ones(t.type)):
        return a
    if _complements(rw, a, b):
        return rw.const(t.type, 0)
    return _reassociate(rw, t)


def _or(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    if a == b or is_const(rw, b, 0):
        return a
    if is_const(rw, b, all_ones(t.type)):
        return b
    if _complements(rw, a, b):
        return rw.const(t.type, all_ones(t.type))
    return _reassociate(rw, t)


def _xor(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    if a == b:
        return rw.const(t.type, 0)
    if is_const(rw, b, 0):
        return a
    if is_const(rw, b, all_ones(t.type)):
        return rw.emit("not", t.type, (a,))
    return _reassociate(rw, t)


def _complements(rw: Rewriter, a: bytes, b: bytes) -> bool:
    na, nb = rw.node(a), rw.node(b)
    return (na.op == "not" and na.inputs[0] == b) or (nb.op == "not" and nb.inputs[0] == a)


def _not(rw: Rewriter, t: Term) -> bytes | None:
    inner = rw.node(t.args[0])
    if inner.op == "not":
        return inner.inputs[0]
    if inner.op in _NEGATE:  # !(a < b) is a >= b, exactly, for integers and bools
        return rw.emit(_NEGATE[inner.op], t.type, inner.inputs)
    return None


def _shift(rw: Rewriter, t: Term) -> bytes | None:
    a, n = t.args
    k = rw.const_value(n)
    ty = t.type
    assert isinstance(ty, IntType)
    if is_const(rw, a, 0):
        return a
    if k is None:
        return None
    if t.op in ("rotl", "rotr"):
        if k % ty.width == 0:
            return a
        if k >= ty.width:
            return rw.emit(t.op, ty, (a, rw.const(rw.type(n), k % ty.width)))
        return None
    if k == 0:
        return a
    if k < ty.width:
        if t.op == "shr":
            count = swar_popcount(rw, a, k, ty)
            if count is not None:
                return count
        return _shift_masked(rw, t, k)
    if t.op == "shl" or not ty.signed:
        return rw.const(ty, 0)  # every bit shifted out
    if k == ty.width - 1:
        return None
    return rw.emit("shr", ty, (a, rw.const(rw.type(n), ty.width - 1)))  # all sign bits


def _shift_masked(rw: Rewriter, t: Term, k: int) -> bytes | None:
    """Drop a mask whose cleared bits the shift moves out anyway: ``(y & 1) << 15`` on u16."""
    a, n = t.args
    inner = rw.node(a)
    c = rw.const_value(inner.inputs[1]) if inner.op == "and" else None
    ty = t.type
    if c is None or not isinstance(ty, IntType):
        return None
    kept = ty.mask >> k if t.op == "shl" else (ty.mask << k) & ty.mask  # the bits that survive
    if t.op == "shr" and ty.signed:
        return None  # the sign bit is shifted in: it must stay masked
    return rw.emit(t.op, ty, (inner.inputs[0], n)) if c & kept == kept else None


# ----------------------------------------------------------------------------- comparisons


def _extended(rw: Rewriter, nid: bytes) -> bytes | None:
    """Return ``x`` when ``nid`` is ``x as T`` that keeps every value of ``x`` (an extension)."""
    node = rw.node(nid)
    if node.op != "cast":
        return None
    x = node.inputs[0]
    s, t = rw.type(x), node.type
    if isinstance(s, IntType) and isinstance(t, IntType) and s.width < t.width:
        return x if t.signed or not s.signed else None
    return None


def _compare_narrow(rw: Rewriter, t: Term) -> bytes | None:
    """Compare extended values in their own type: the values, so the order, are the same."""
    x = _extended(rw, t.args[0])
    if x is None:
        return None
    s = rw.type(x)
    assert isinstance(s, IntType)
    c = rw.const_value(t.args[1])
    if c is not None:
        return rw.emit(t.op, t.type, (x, rw.const(s, c))) if s.contains(c) else None
    y = _extended(rw, t.args[1])
    if y is not None and rw.type(y) == s:
        return rw.emit(t.op, t.type, (x, y))
    return None


def _compare(rw: Rewriter, t: Term) -> bytes | None:
    a, b = t.args
    if a == b:
        return rw.const(t.type, t.op in ("eq", "le", "ge"))
    narrow = _compare_narrow(rw, t)
    if narrow is not None:
        return narrow
    c = rw.const_value(b)
    ty = rw.type(a)
    if c is None:
        return None
    if isinstance(ty, BoolType):  # only eq and ne order bools
        keep = (t.op == "eq") == bool(c)
        return a if keep else rw.emit("not", ty, (a,))
    assert isinstance(ty, IntType)
    always = {("lt", ty.min): False, ("ge", ty.min): True,
              ("gt", ty.max): False, ("le", ty.max): True}
    known = always.get((t.op, c))
    return None if known is None else rw.const(t.type, known)


# ----------------------------------------------------------------------------- conversions


def _select(rw: Rewriter, t: Term) -> bytes | None:
    c, a, b = t.args
    if a == b:
        return a
    k = rw.const_value(c)
    if k is not None:
        return a if k else b
    cond = rw.node(c)
    if cond.op == "not":
        return rw.emit("select", t.type, (cond.inputs[0], b, a))
    na, nb = rw.node(a), rw.node(b)
    if na.op == nb.op == "cast" and rw.type(na.inputs[0]) == rw.type(nb.inputs[0]):
        inner = rw.emit("select", rw.type(na.inputs[0]), (c, na.inputs[0], nb.inputs[0]))
        return rw.emit("cast", t.type, (inner,))
    if isinstance(t.type, BoolType):
        ka, kb = rw.const_value(a), rw.const_value(b)
        if ka == 1 and kb == 0:
            return c
        if ka == 0 and kb == 1:
            return rw.emit("not", t.type, (c,))
        if kb == 0:
            return rw.emit("and", t.type, (c, a))
        if ka == 1:
            return rw.emit("or", t.type, (c, b))
    return None


def cast_chain_is_single(src: Type, mid: IntType, dst: IntType) -> bool:
    """Return True when ``(x as mid) as dst`` equals ``x as dst`` for every ``x: src``.

    A bool converts like ``u1``. Casts truncate, or extend by the source's signedness.
    """
    assert isinstance(src, BoolType | IntType)
    s_width, s_signed = (1, False) if isinstance(src, BoolType) else (src.width, src.signed)
    if dst.width <= min(s_width, mid.width):
        return True  # only low bits survive, and the middle kept all of them
    if mid.width < s_width:
        return False  # the middle truncated bits that the outer cast extends
    if dst.width <= mid.width:
        return True  # the low dst bits of the middle are x extended by its own sign
    if mid.width == s_width:
        return mid.signed == s_signed  # extended again, by the middle's signedness
    return mid.signed == s_signed or not s_signed  # the middle's top bit is 0 when unsigned


def _cast(rw: Rewriter, t: Term) -> bytes | None:
    (x,) = t.args
    if rw.type(x) == t.type:
        return x
    inner = rw.node(x)
    if inner.op == "cast":
        y = inner.inputs[0]
        assert isinstance(inner.type, IntType) and isinstance(t.type, IntType)
        if cast_chain_is_single(rw.type(y), inner.type, t.type):
            return rw.cast(y, t.type)
    return None


def _slice(rw: Rewriter, t: Term) -> bytes | None:
    (x,) = t.args
    if t.attr("lo") == 0 and isinstance(t.type, IntType) and rw.type(x).flat_width == t.type.width:
        return rw.cast(x, t.type)  # the whole value, reinterpreted as unsigned
    return None


def _signed(t: Type) -> bool:
    return isinstance(t, IntType) and t.signed


_RULES: dict[str, SimplifyRule] = {
    "add": _add, "sub": _sub, "mul": _mul, "neg": _neg, "div": _div, "rem": _rem,
    "min": _min_max, "max": _min_max,
    "and": _and, "or": _or, "xor": _xor, "not": _not,
    "shl": _shift, "shr": _shift, "rotl": _shift, "rotr": _shift,
    "eq": _compare, "ne": _compare, "lt": _compare, "le": _compare, "gt": _compare,
    "ge": _compare,
    "select": _select, "cast": _cast, "slice": _slice,
}


SIMPLIFIED = frozenset(_RULES) | {n for n, d in OPS.items() if d.commutative} | set(_MIRROR)


def simplify(graph: Graph) -> Graph:
    """Return ``graph`` with algebraic identities applied and operands canonicalised."""
    return rewrite(graph, simplify_rule, ops=SIMPLIFIED)


__all__ = ["SIMPLIFIED", "cast_chain_is_single", "simplify", "simplify_rule", "walk_dependent"]
