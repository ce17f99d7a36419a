"""Relational bounds: a restoring step's remainder bounded by the quotient built beside it.

Known bits and intervals bound each value on its own. A digit-by-digit square root (or any
restoring recurrence) keeps its partial remainder small only *relative to* the partial root:
``rem' = a >= t ? a - t : a`` with ``a = 4 rem + pair`` and ``t = 4 root + 1`` stays
``<= 2 root'``, where ``root' = a >= t ? 2 root + 1 : 2 root`` is the select on the same
condition. Each row's interval alone doubles in width every row; the relation keeps it at the
root's width plus one bit. This pass proves such relations and narrows the selects they bound.

The analysis (all values unsigned; every step sound for every input):

* ``lin(v)``: an exact affine form ``v == a * s + b`` over one symbol node ``s`` (or none: a
  constant), through constants, shifts left and multiplies by constants that cannot wrap, and
  ``or``/``add`` of a constant that cannot carry into the form's bits / wrap;
* ``bounds(v)``: upper bounds ``v <= k * s + m`` (``k >= 0``, rational), one per symbol, the
  symbol ``None`` holding the plain numeric bound (from ``kera.opt.ranges`` or better), carried
  through shifts, ``or``/``xor``/``add``/``and``, casts and selects;
* a select on a comparison ``L >= R`` whose ``L >= R`` arm is ``L - R`` (or ``L + K`` with
  ``K = -d`` and ``R >= d``) and whose other arm is ``L`` (so there ``L <= R - 1``) gets, per
  branch, a bound affine in the symbol of ``R``; for each other select on the same condition
  whose two arms are affine in that symbol (``P = rho * s + tau``) the two branch points are
  covered by one line ``v <= k * select + m`` with ``k >= alpha / rho`` in both branches (the
  symbol is unsigned) and the least ``m`` (then the least ``k``) among the lines through the
  branch points: any ``k`` in range is sound, the choice only makes the next row provable.

A select whose bound needs fewer bits than its interval does becomes
``cast(select.uW(c, cast.uW(x), cast.uW(y)))``: exact, because the arm the condition picks is
below ``2**W``. Known and demanded bits then narrow the rows that compute it.
"""

from __future__ import annotations

from fractions import Fraction
from math import floor

from kera.ir.graph import Graph, Node
from kera.ir.types import IntType, uint
from kera.opt.ranges import Ranges
from kera.opt.rewrite import Rewriter, Term

Lin = tuple[bytes | None, int, int]
"""``v == a * s + b``: (symbol node or None, a, b)."""
Bounds = dict[bytes | None, tuple[Fraction, Fraction]]
"""``v <= k * s + m`` per symbol ``s`` (None: ``v <= m``)."""

_COMPARES = frozenset({"ge", "le", "lt", "gt"})
_MAX_DEPTH = 120  # deeper cones are bounded by their intervals alone (no recursion limit hit)
_ZERO = Fraction(0)


def _unsigned(node: Node) -> IntType | None:
    t = node.type
    return t if isinstance(t, IntType) and not t.signed else None


class Relations:
    """Memoised ``lin`` and ``bounds`` of one graph's unsigned nodes, computed on demand."""

    def __init__(self, graph: Graph) -> None:
        self.nodes = graph.nodes
        self.ranges = Ranges(graph)
        self._lin: dict[bytes, Lin] = {}
        self._bounds: dict[bytes, Bounds] = {}
        self._busy: set[bytes] = set()
        self.by_cond: dict[bytes, list[bytes]] = {}
        for nid, node in graph.nodes.items():
            if node.op == "select" and _unsigned(node) is not None:
                self.by_cond.setdefault(node.inputs[0], []).append(nid)

    # --- numbers ------------------------------------------------------------------------

    def hi(self, nid: bytes) -> int:
        """The interval's upper bound of an unsigned node."""
        r = self.ranges(nid)
        assert r is not None
        return r[1]

    def lo(self, nid: bytes) -> int:
        """The interval's lower bound of an unsigned node."""
        r = self.ranges(nid)
        assert r is not None
        return r[0]

    def num(self, nid: bytes, depth: int = 0) -> int:
        """The best numeric upper bound of an unsigned node."""
        return int(self.bounds(nid, depth)[None][1])

    def const(self, nid: bytes) -> int | None:
        """The value of a ``const`` node (None for any other node)."""
        node = self.nodes[nid]
        return int(node.attr("value")) if node.op == "const" else None

    # --- exact affine forms -------------------------------------------------------------

    def lin(self, nid: bytes, depth: int = 0) -> Lin:
        """Return ``(s, a, b)`` with ``value == a * s + b`` (``s`` may be the node itself)."""
        hit = self._lin.get(nid)
        if hit is None:
            hit = self._lin[nid] = self._linear(nid, depth)
        return hit

    def _linear(self, nid: bytes, depth: int) -> Lin:
        node = self.nodes[nid]
        t = _unsigned(node)
        if t is None or depth > _MAX_DEPTH:
            return nid, 1, 0
        c = self.const(nid)
        if c is not None:
            return None, 0, c
        op, ins = node.op, node.inputs
        if op == "cast" and _unsigned(self.nodes[ins[0]]) is not None \
                and self.hi(ins[0]) <= t.mask:
            return self.lin(ins[0], depth + 1)
        if op in ("shl", "mul", "or", "add") and len(ins) == 2:
            x, y = ins
            k = self.const(y)
            if k is None and op != "shl":
                x, y = y, x
                k = self.const(y)
            if k is None or _unsigned(self.nodes[x]) is None:
                return nid, 1, 0
            s, a, b = self.lin(x, depth + 1)
            hx = self.hi(x)
            if op == "shl" and k < t.width and hx << k <= t.mask:
                return s, a << k, b << k
            if op == "mul" and hx * k <= t.mask:
                return s, a * k, b * k
            if op == "add" and hx + k <= t.mask:
                return s, a, b + k
            if op == "or":
                low = min(_twos(a), _twos(b))  # a * s + b has these low bits 0
                if k < 1 << low:
                    return s, a, b + k
        return nid, 1, 0

    # --- upper bounds -------------------------------------------------------------------

    def bounds(self, nid: bytes, depth: int = 0) -> Bounds:
        """Return the upper bounds of an unsigned node, by symbol (always one for None)."""
        hit = self._bounds.get(nid)
        if hit is not None:
            return hit
        if nid in self._busy or depth > _MAX_DEPTH:  # a cycle through siblings, or too deep
            return {None: (_ZERO, Fraction(self.hi(nid)))}
        self._busy.add(nid)
        try:
            out = self._upper(nid, depth)
        finally:
            self._busy.discard(nid)
        self._bounds[nid] = out
        return out

    def _upper(self, nid: bytes, depth: int) -> Bounds:
        node = self.nodes[nid]
        t = _unsigned(node)
        out: Bounds = {None: (_ZERO, Fraction(self.hi(nid)))}
        if t is None:
            return out
        s, a, b = self.lin(nid, depth + 1)
        if s != nid:
            _keep(out, s, Fraction(a), Fraction(b))
        op, ins = node.op, node.inputs
        d = depth + 1
        if op == "shl" and self.const(ins[1]) is not None:
            k = self.const(ins[1])
            assert k is not None
            if k < t.width and self.num(ins[0], d) << k <= t.mask:
                for sym, (kk, mm) in self.bounds(ins[0], d).items():
                    _keep(out, sym, kk * (1 << k), mm * (1 << k))
        elif op == "shr" and self.const(ins[1]) is not None \
                and _unsigned(self.nodes[ins[0]]) is not None:
            k = self.const(ins[1])
            assert k is not None  # x >> k <= x / 2**k (0 from the width up: SEMANTICS.md)
            for sym, (kk, mm) in self.bounds(ins[0], d).items():
                _keep(out, sym, kk / (1 << k), mm / (1 << k))
        elif op in ("or", "xor", "add") and all(_unsigned(self.nodes[i]) for i in ins):
            x, y = ins  # x | y and x ^ y are at most x + y; add: when it cannot wrap
            if op != "add" or self.num(x, d) + self.num(y, d) <= t.mask:
                for p, q in ((x, y), (y, x)):
                    extra = self.num(q, d)
                    for sym, (kk, mm) in self.bounds(p, d).items():
                        _keep(out, sym, kk, mm + extra)
        elif op == "and" and all(_unsigned(self.nodes[i]) for i in ins):
            for i in ins:
                for sym, (kk, mm) in self.bounds(i, d).items():
                    _keep(out, sym, kk, mm)
        elif op == "cast" and _unsigned(self.nodes[ins[0]]) is not None \
                and self.num(ins[0], d) <= t.mask:
            for sym, (kk, mm) in self.bounds(ins[0], d).items():
                _keep(out, sym, kk, mm)
        elif op == "select":
            self._select(nid, node, out, d)
        best = out[None][1]  # the numeric bound through each symbol's own numeric bound
        for sym, (kk, mm) in list(out.items()):
            if sym is not None and sym != nid:
                best = min(best, Fraction(max(0, floor(kk * self.num(sym, d) + mm))))
        out[None] = (_ZERO, best)
        return out

    def _select(self, nid: bytes, node: Node, out: Bounds, d: int) -> None:
        cond, x, y = node.inputs
        bx, by = self.bounds(x, d), self.bounds(y, d)
        for sym in bx.keys() & by.keys():
            (k1, m1), (k2, m2) = bx[sym], by[sym]
            _keep(out, sym, max(k1, k2), max(m1, m2))
        split = self._branches(cond, x, y, d)
        if split is None:
            return
        sym, (ag, bg), (al, bl), ge_is_true = split
        _keep(out, sym, max(ag, al), max(bg, bl))  # either branch, in the symbol itself
        for other in self.by_cond.get(cond, ()):
            if other == nid:
                continue
            _, p, q = self.nodes[other].inputs
            pg, pl = (p, q) if ge_is_true else (q, p)
            sg, rg, tg = self.lin(pg, d)
            sl, rl, tl = self.lin(pl, d)
            if {sg, sl} - {None, sym}:
                continue  # the sibling's arms are not affine in the bounds' symbol
            line = _cover(((ag, bg, 0 if sg is None else rg, tg),
                           (al, bl, 0 if sl is None else rl, tl)))
            if line is not None:
                _keep(out, other, *line)

    def _branches(self, cond: bytes, x: bytes, y: bytes, d: int) \
            -> tuple[bytes | None, tuple[Fraction, Fraction], tuple[Fraction, Fraction],
                     bool] | None:
        """Per-branch bounds of a restoring select, in the symbol of the subtrahend ``R``."""
        c = self.nodes[cond]
        if c.op not in _COMPARES or _unsigned(self.nodes[c.inputs[0]]) is None \
                or _unsigned(self.nodes[c.inputs[1]]) is None:
            return None
        u, v = c.inputs
        # (L, R, whether the select's true arm is the branch where L >= R)
        left, right, ge_is_true = {"ge": (u, v, True), "le": (v, u, True),
                                   "lt": (u, v, False), "gt": (v, u, False)}[c.op]
        g, other = (x, y) if ge_is_true else (y, x)
        if other != left:
            return None
        sym, a, b = self.lin(right, d)
        gnode = self.nodes[g]
        t = _unsigned(gnode)
        if t is None:
            return None
        bl = self.bounds(left, d)
        if gnode.op == "sub" and gnode.inputs == (left, right):
            sub = Fraction(a), Fraction(b)  # exact on this branch: L >= R
        elif gnode.op == "add" and left in gnode.inputs:
            k = self.const(gnode.inputs[1] if gnode.inputs[0] == left else gnode.inputs[0])
            if k is None or k == 0 or self.lo(right) < (1 << t.width) - k:
                return None
            sub = _ZERO, Fraction((1 << t.width) - k)  # L + k wraps to L - (2**N - k)
        else:
            return None
        if sym is None:
            if None not in bl:
                return None
            kl, ml = bl[None]
        elif sym in bl:
            kl, ml = bl[sym]
        else:
            return None
        ge_bound = (kl - sub[0], ml - sub[1])
        lt_bound = (Fraction(a), Fraction(b - 1))  # L <= R - 1
        return sym, ge_bound, lt_bound, ge_is_true


def _twos(n: int) -> int:
    """Trailing zero bits of ``n`` (64 for 0: no constraint)."""
    return (n & -n).bit_length() - 1 if n else 64


def _keep(out: Bounds, sym: bytes | None, k: Fraction, m: Fraction) -> None:
    """Keep ``v <= k * sym + m`` where it is tighter: for None the least ``m``; for a symbol
    when it is as low in both coefficients as the bound there (of two incomparable bounds the
    first stays: the order of the rules is fixed)."""
    k = max(k, _ZERO)  # the symbol is unsigned: a slope below 0 only loosens the bound
    old = out.get(sym)
    if old is None or (k <= old[0] and m <= old[1]):
        out[sym] = (k, m)


def _cover(points: tuple[tuple[Fraction, Fraction, int, int], ...]) \
        -> tuple[Fraction, Fraction] | None:
    """Return ``(k, m)`` with ``alpha * s + beta <= k * (rho * s + tau) + m`` for ``s >= 0``
    in every branch ``(alpha, beta, rho, tau)``; the least ``max(m, 0)``, then the least ``k``.
    """
    k_min = _ZERO
    for alpha, _, rho, _ in points:
        if rho == 0:
            if alpha > 0:
                return None
        else:
            k_min = max(k_min, Fraction(alpha) / rho)
    candidates = {k_min}
    for _, beta, _, tau in points:
        if tau > 0:
            candidates.add(Fraction(beta) / tau)
    (_, b1, _, t1), (_, b2, _, t2) = points
    if t1 != t2:
        candidates.add(Fraction(b1 - b2) / (t1 - t2))
    best: tuple[Fraction, Fraction, Fraction] | None = None
    for k in sorted(c for c in candidates if c >= k_min):
        m = max(beta - k * tau for _, beta, _, tau in points)
        key = (max(m, _ZERO), k, m)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[1], best[2]


def narrow_widths(graph: Graph) -> dict[bytes, int]:
    """Return the selects the relations bound to fewer bits than their intervals: id -> bits."""
    rel: Relations | None = None
    out: dict[bytes, int] = {}
    for nid, node in graph.nodes.items():
        if node.op != "select" or _unsigned(node) is None:
            continue
        c = graph.nodes[node.inputs[0]]
        if c.op not in _COMPARES:
            continue
        if rel is None:
            rel = Relations(graph)
        if len(rel.by_cond.get(node.inputs[0], ())) < 2:
            continue
        bits = rel.num(nid).bit_length()
        if bits < rel.hi(nid).bit_length():
            out[nid] = max(bits, 1)
    return out


def relational(graph: Graph) -> Graph:
    """Return ``graph`` with every select a relation bounds computed on its bounded bits."""
    widths = narrow_widths(graph)
    if not widths:
        return graph

    def rule(rw: Rewriter, t: Term) -> bytes | None:
        w = widths.get(rw.current) if rw.current is not None else None
        if w is None:
            return None
        small = uint(w)
        c, x, y = t.args
        inner = rw.emit("select", small, (c, rw.cast(x, small), rw.cast(y, small)))
        return rw.cast(inner, t.type)

    return Rewriter(graph, rule, {"select"}).run()


__all__ = ["Relations", "narrow_widths", "relational"]
