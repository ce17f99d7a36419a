"""Bit-level rewriting: every node computed on its live bits, wiring where no logic is left.

Guarantees, for every input (SEMANTICS.md): with ``KnownBits`` (forward) and ``demanded``
(backward), a node is replaced only by one that agrees with it on every bit some user reads.
That is exact for the results: a bit no user reads cannot reach a region's result, and the
users are rewritten under the same rule. The rules, in order:

* all demanded bits known → a constant;
* an ``and``/``or``/``xor`` whose other operand changes no demanded bit → that operand;
* an ``or``/``xor``/``add`` of operands with no 1 bit in common (below the top demanded bit,
  for ``add``: no carry) → a ``concat`` of ``slice``s, i.e. wires; an ``or``/``xor`` where
  that holds for at least ``max(2, N/8)`` bits → wires there, and the
  op on just the runs of bits where both operands may be 1 (at most ``MAX_RUNS`` runs: more
  would trade one word op for a comb of slices that only the bit-level models see through);
* a sign test (``x < 0``, ``x >= 0`` on ``iN``) → the sign bit; ``x < 2**k`` / ``x >= 2**k``
  on ``uN`` → whether the bits from ``k`` up are all 0;
* a product with an operand that is 0 or ``2**k`` → a ``select``;
* ``add``/``sub``/``mul``/``neg``/``and``/``or``/``xor``/``not``/``select``/``shl`` by a
  constant whose live bits (demanded, not known) end at bit ``h`` → computed in ``u(h+1)`` on
  the operands' low bits, then extended (the known high bits put back with a ``concat``).

Operands are cut with ``bit_slice``, which looks through wiring (casts, slices, concats, shifts
by constants, masks) to the bits' source. ``bits`` repeats its walk until the graph stops
changing (a rewrite can leave an operand less demanded), so it is idempotent.
"""

from __future__ import annotations

from kera.ir.graph import Graph
from kera.ir.types import BOOL, BoolType, IntType, sint, uint
from kera.opt.demanded import Wants, demanded, full
from kera.opt.knownbits import Known, KnownBits, Memo, width_of
from kera.opt.narrow import worth_it
from kera.opt.rewrite import Rewriter, Term

NARROWED = frozenset({"add", "sub", "mul", "neg", "and", "or", "xor", "not", "select", "shl"})
BITS = NARROWED | frozenset({
    "shr", "rotl", "rotr", "div", "rem", "min", "max", "widening_mul", "popcount", "clz", "ctz",
    "eq", "ne", "lt", "le", "gt", "ge", "cast", "slice", "concat", "array_index", "tuple_get",
})
"""The opcodes the rule looks at."""

_WITH_OPERAND_BITS = frozenset({"and", "or", "xor", "add", "mul"})
MAX_WALKS = 8
MAX_RUNS = 2  # an `or`/`xor` is cut into wires and at most this many runs of logic
_AMOUNT = uint(32)  # constant shift amounts, as the front end's literals


def _mask(w: int) -> int:
    return (1 << w) - 1


def bit_slice(rw: Rewriter, x: bytes, lo: int, w: int) -> bytes:
    """Return a ``u{w}`` node holding bits ``lo .. lo+w-1`` of ``x``, read at their source."""
    key = ("bit_slice", x, lo, w)
    hit = rw.memo.get(key)
    if hit is None:
        hit = rw.memo[key] = _bit_slice(rw, x, lo, w)
    return hit  # type: ignore[return-value]


def _bit_slice(rw: Rewriter, x: bytes, lo: int, w: int) -> bytes:
    node = rw.node(x)
    t = node.type
    n = width_of(t)
    assert n is not None and lo + w <= n
    out = uint(w)
    if lo == 0 and w == n and isinstance(t, IntType) and not t.signed:
        return x
    op, ins = node.op, node.inputs
    if op == "const":
        return rw.const(out, (int(node.attr("value")) >> lo) & _mask(w))
    if op == "cast":
        src = rw.type(ins[0])
        sw = width_of(src)
        assert sw is not None
        if lo + w <= sw:
            return bit_slice(rw, ins[0], lo, w)
        if lo >= sw and not (isinstance(src, IntType) and src.signed):
            return rw.const(out, 0)
    elif op == "slice":
        return bit_slice(rw, ins[0], lo + int(node.attr("lo")), w)
    elif op == "concat":
        lw = width_of(rw.type(ins[1]))
        assert lw is not None
        if lo + w <= lw:
            return bit_slice(rw, ins[1], lo, w)
        if lo >= lw:
            return bit_slice(rw, ins[0], lo - lw, w)
        return _join(rw, bit_slice(rw, ins[0], 0, lo + w - lw), bit_slice(rw, ins[1], lo, lw - lo))
    elif op in ("shl", "shr") and rw.const_value(ins[1]) is not None:
        k = int(rw.const_value(ins[1]))  # type: ignore[arg-type]
        if k < n and op == "shl":
            if lo >= k:
                return bit_slice(rw, ins[0], lo - k, w)
            if lo + w <= k:
                return rw.const(out, 0)
            return _join(rw, bit_slice(rw, ins[0], 0, lo + w - k), rw.const(uint(k - lo), 0))
        if k < n and lo + k + w <= n:
            return bit_slice(rw, ins[0], lo + k, w)
        if k < n and isinstance(t, IntType) and not t.signed:
            if lo + k >= n:
                return rw.const(out, 0)
            have = n - lo - k
            return _join(rw, rw.const(uint(w - have), 0), bit_slice(rw, ins[0], lo + k, have))
    elif op in ("and", "or"):
        part = _mask(w) << lo
        for mine, other in ((ins[0], ins[1]), (ins[1], ins[0])):
            ko = _known(rw, other)
            neutral = ko.one if op == "and" else ko.zero
            if part & ~neutral == 0:  # the other operand lets these bits through unchanged
                return bit_slice(rw, mine, lo, w)
    if isinstance(t, BoolType):
        return rw.emit("cast", out, (x,))
    if lo == 0:
        return rw.emit("cast", out, (x,))
    return rw.emit("slice", out, (x,), {"lo": lo})


def _join(rw: Rewriter, hi: bytes, lo: bytes) -> bytes:
    """Return ``concat(hi, lo)``, merging adjacent slices of one value into one slice."""
    out = _joined(rw, hi, lo)
    if out is None:
        wh, wl = width_of(rw.type(hi)), width_of(rw.type(lo))
        return rw.raw(Term("concat", uint(wh + wl), (hi, lo)))  # type: ignore[operator]
    return out


def _joined(rw: Rewriter, hi: bytes, lo: bytes) -> bytes | None:
    """Return a simpler form of ``concat(hi, lo)`` (None when there is none)."""
    nh, nl = rw.node(hi), rw.node(lo)
    wh, wl = width_of(nh.type), width_of(nl.type)
    assert wh is not None and wl is not None
    src_h, lo_h = _as_slice(rw, hi)
    src_l, lo_l = _as_slice(rw, lo)
    if src_h is not None and src_h == src_l and lo_h == lo_l + wl:
        return bit_slice(rw, src_l, lo_l, wh + wl)
    if nh.op == "const" and nl.op == "const":
        return rw.const(uint(wh + wl), int(nh.attr("value")) << wl | int(nl.attr("value")))
    if nh.op == "const" and nh.attr("value") == 0 and not (
            isinstance(nl.type, IntType) and nl.type.signed):  # a zero-extension of lo
        return rw.cast(lo, uint(wh + wl))  # (a cast of a signed lo would sign-extend it)
    return None


def _as_slice(rw: Rewriter, x: bytes) -> tuple[bytes | None, int]:
    """Return (source, lo) when ``x`` is a slice of (or the low bits of) another node."""
    node = rw.node(x)
    if node.op == "slice":
        return node.inputs[0], int(node.attr("lo"))
    if node.op == "cast" and isinstance(rw.type(node.inputs[0]), IntType):
        src_w = width_of(rw.type(node.inputs[0]))
        if src_w is not None and src_w >= width_of(node.type):  # type: ignore[operator]
            return node.inputs[0], 0
    return None, 0


def _known(rw: Rewriter, x: bytes) -> Known:
    kb = rw.memo.get("known")
    assert isinstance(kb, KnownBits)
    k = kb(x)
    assert k is not None
    return k


def wire_runs(n: int, d: int, ma: int, mb: int) -> list[tuple[str, int, int]]:
    """Return the runs ``(source, lo, width)``, low bits first, of an ``n``-bit ``or``/``xor``/
    ``add`` with demand ``d`` whose operands may be 1 on ``ma`` / ``mb``: ``"a"`` or ``"b"``
    where only that operand may be 1, ``"ab"`` where both may, ``"0"`` where neither does.
    A bit not read, or 0 in both, goes with the run below unless that is ``"ab"`` (logic)."""
    m = (1 << n) - 1
    both = d & ma & mb
    only_a, only_b = d & ma & ~mb, d & mb & ~ma
    free = m & ~(only_a | only_b | both)  # not read, or 0 in both: any source will do
    fits = {"a": only_a | free, "b": only_b | free, "0": free, "ab": both}
    runs: list[tuple[str, int, int]] = []
    lo = 0
    while lo < n:
        bit = 1 << lo
        src = "ab" if both & bit else "a" if only_a & bit else "b" if only_b & bit else "0"
        stop = (m & ~fits[src]) >> lo  # the bits that end this run
        w = (stop & -stop).bit_length() - 1 if stop else n - lo
        runs.append((src, lo, w))
        lo += w
    return runs


def _pieces(rw: Rewriter, t: Term, d: int, ka: Known, kb: Known) -> bytes:
    """Return an ``or``/``xor``/``add`` as wires where at most one operand may have a 1 bit,
    and the op itself only on the runs of bits where both may (never for ``add``)."""
    a, b = t.args
    out: bytes | None = None
    for src, lo, w in wire_runs(ka.width, d, ka.maybe, kb.maybe):
        if src == "0":
            piece = rw.const(uint(w), 0)
        elif src == "ab":
            piece = rw.emit(t.op, uint(w), (bit_slice(rw, a, lo, w), bit_slice(rw, b, lo, w)))
        else:
            piece = bit_slice(rw, a if src == "a" else b, lo, w)
        out = piece if out is None else _join(rw, piece, out)
    assert out is not None
    return rw.cast(out, t.type)


def bit_test(rw: Rewriter, x: bytes, k: int, one: bool = True) -> bytes:
    """Return the bool ``bit k of x is 1`` (``is 0`` without ``one``)."""
    node = rw.node(x)
    if one and k == 0 and node.op == "cast" and isinstance(rw.type(node.inputs[0]), BoolType):
        return node.inputs[0]
    return rw.emit("ne" if one else "eq", BOOL, (bit_slice(rw, x, k, 1), rw.const(uint(1), 0)))


def _compare(rw: Rewriter, t: Term) -> bytes | None:
    """Return a sign test or a power-of-two threshold as a test of the high bits."""
    x, c_id = t.args
    ty = rw.type(x)
    c = rw.const_value(c_id)
    if c is None or not isinstance(ty, IntType) or ty.width < 2:
        return None
    if ty.signed:
        neg = {("lt", 0): True, ("le", -1): True, ("ge", 0): False, ("gt", -1): False}
        sign = neg.get((t.op, c))
        if sign is None:
            return None
        return bit_test(rw, x, ty.width - 1, sign)
    k = {"lt": c, "ge": c, "le": c + 1, "gt": c + 1}.get(t.op)
    if k is None or k <= 1 or k & (k - 1) or k > ty.mask:
        return None
    lo = k.bit_length() - 1
    high = bit_slice(rw, x, lo, ty.width - lo)
    zero = rw.const(uint(ty.width - lo), 0)
    return rw.emit("eq" if t.op in ("lt", "le") else "ne", BOOL, (high, zero))


def _one_bit_product(rw: Rewriter, t: Term, ks: list[Known]) -> bytes | None:
    """Return ``a * b`` with ``b`` either 0 or ``2**k`` as ``select(bit k of b, a << k, 0)``."""
    for (a, b), kb in zip((t.args, t.args[::-1]), ks[::-1], strict=True):
        p = kb.maybe
        if p and p & (p - 1) == 0:
            k = p.bit_length() - 1
            shifted = a if k == 0 else rw.emit("shl", t.type, (a, rw.const(_AMOUNT, k)))
            return rw.emit("select", t.type, (bit_test(rw, b, k), shifted, rw.const(t.type, 0)))
    return None


def _narrowed(rw: Rewriter, t: Term, d: int, k: Known) -> bytes | None:
    """Return the op computed on its live low bits only, then extended to its type."""
    assert isinstance(t.type, IntType)
    live = d & ~k.known
    h = live.bit_length()
    small = uint(max(h, 1))
    if not worth_it(small, t.type):
        return None
    args: tuple[bytes, ...]
    if t.op == "shl":
        amount = rw.const_value(t.args[1])
        if amount is None:
            return None
        args = (bit_slice(rw, t.args[0], 0, small.width), t.args[1])
    elif t.op == "select":
        c, a, b = t.args
        args = (c, bit_slice(rw, a, 0, small.width), bit_slice(rw, b, 0, small.width))
    else:
        args = tuple(bit_slice(rw, a, 0, small.width) for a in t.args)
    if t.op == "neg":  # neg is signed; the low bits are the same either way
        value = rw.cast(rw.emit("neg", sint(small.width), (rw.cast(args[0], sint(small.width)),)),
                        small)
    else:
        value = rw.emit(t.op, small, args)
    high = (k.one & d) >> small.width
    if high:
        value = _join(rw, rw.const(uint(t.type.width - small.width), high), value)
    return rw.cast(value, t.type)


def bits_rule(rw: Rewriter, t: Term, d: int, k: Known | None = None) -> bytes | None:
    """Return the bit-level replacement of one term whose demanded bits are ``d`` and known bits
    ``k`` (computed when not given); None to keep it."""
    if width_of(t.type) is None:
        return None
    kbits = rw.memo["known"]
    assert isinstance(kbits, KnownBits)
    if k is None:
        k = kbits.compute(t.op, t.type, t.args, dict(t.attrs) if t.attrs else {})
        assert k is not None
    if d & ~k.known == 0:
        return rw.const(t.type, k.one & d if isinstance(t.type, IntType) else k.one)
    if t.op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return _compare(rw, t)
    if t.op == "concat":
        return _joined(rw, *t.args)
    if not isinstance(t.type, IntType):
        return None
    if t.op not in _WITH_OPERAND_BITS:
        return _narrowed(rw, t, d, k) if t.op in NARROWED else None
    ks = [_known(rw, a) for a in t.args]
    if t.op in ("and", "or", "xor"):
        ka, kb = ks
        if t.op == "and":  # the bits where b may differ from a (a from b)
            wrong_a, wrong_b = ka.maybe & ~kb.one, kb.maybe & ~ka.one
        elif t.op == "or":
            wrong_a, wrong_b = kb.maybe & ~ka.one, ka.maybe & ~kb.one
        else:
            wrong_a, wrong_b = kb.maybe, ka.maybe
        if d & wrong_a == 0:  # b changes no demanded bit of a
            return t.args[0]
        if d & wrong_b == 0:
            return t.args[1]
    if t.op in ("or", "xor", "add"):
        ka, kb = ks
        n = ka.width
        if t.op == "add":  # a carry may come from any bit below the top demanded one
            wired = ka.maybe & kb.maybe & ((1 << d.bit_length()) - 1) == 0
        else:  # wires except where both may be 1: worth it when that spares enough bits
            both = ka.maybe & kb.maybe & d  # and leaves the op on a few runs of bits, not a
            runs = (both & ~(both << 1)).bit_count()  # comb of slices (a CRC's polynomial)
            wired = n - both.bit_count() >= max(2, n // 8) and runs <= MAX_RUNS
        if wired:
            return _pieces(rw, t, d, ka, kb)
    if t.op == "mul":
        prod = _one_bit_product(rw, t, ks)
        if prod is not None:
            return prod
    if t.op in NARROWED:
        return _narrowed(rw, t, d, k)
    return None


Kept = set[tuple[bytes, int]]
"""(node id, demanded bits) of the nodes the rule kept as they were, adding nothing."""

_KNOWN: Memo = {}
_KEPT: Kept = set()
_WANTS: Wants = {}
_CACHE_LIMIT = 200_000
"""Both caches are of pure functions of node content (ids are content hashes), so they carry
over from one ``bits`` run to the next (the fixpoint group runs it again on a graph that is
mostly the same); they are emptied past this many entries to bound memory."""


def bits_walk(graph: Graph, known: Memo | None = None, kept: Kept | None = None,
              wants: Wants | None = None) -> Graph:
    """Return ``graph`` after one walk of the bit-level rule (demand taken from ``graph``).

    ``known`` (known bits by node id) and ``kept`` may carry over from earlier walks: the rule's
    answer for a node depends only on the node's content (its id) and its demanded bits, so a
    node in ``kept`` with the same demand is kept again without asking the rule. A node goes
    into ``kept`` only when the rule kept it without adding any node or span on the way, so
    skipping the rule leaves the new graph exactly as asking it would; so does a node the
    rule emitted and then kept as it was (under its whole demand). ``wants`` (each node's
    demands on its operands, by id and demand) may carry over too.

    The walk copies nodes without asking the rule (``Rewriter.run_asking``) until it first
    asks about a node not in ``kept`` under its present demand and the rule changes it (or
    adds something): a walk that confirms the last one found everything asks the rule only
    about those nodes and copies the rest, without rebuilding each node's term. The known bits
    of the terms the rule emits and keeps are filed under their ids once added (their users
    ask for them next).
    """
    known = {} if known is None else known
    kept = set() if kept is None else kept
    old_known = KnownBits(graph, known)
    demand = demanded(graph, old_known, wants)
    old_nodes = graph.nodes

    def rule(rw: Rewriter, t: Term) -> bytes | None:
        if renamed:  # the last node kept with renamed inputs is in the graph now: its bits
            old_id, k = renamed.pop()  # are those computed for its term (asked again soon)
            known[rw.map[old_id]] = k
        if pending:  # the terms emitted and kept as they were last are in the graph now (as
            _file(known, made, pending)  # ids in ``made``): their bits are their terms'
        nid = rw.current
        if nid is None:  # a node the rule itself emits: every bit read
            size = len(new.nodes), len(new.spans)
            d = full(t.type)
            k = new_known.compute(t.op, t.type, t.args, dict(t.attrs) if t.attrs else {})
            out = bits_rule(rw, t, d, k)
            if out is None and size == (len(new.nodes), len(new.spans)):
                made.append(t)  # added next, as it is (emit puts its id here)
                made_demand.append(d)
                pending.append(k)
            return out
        wanted = demand.get(nid)
        d = full(t.type) if wanted is None else wanted  # unreached: taken whole
        if t.args == old_nodes[nid].inputs:  # the very node of the old graph
            if (nid, d) in kept:
                return None
            size = len(new.nodes), len(new.spans)
            out = bits_rule(rw, t, d, old_known(nid))
        elif width_of(t.type) is None:
            quiet.append((nid, d))  # the rule keeps aggregates, adding nothing
            return None
        else:
            size = len(new.nodes), len(new.spans)
            k = new_known.compute(t.op, t.type, t.args, dict(t.attrs) if t.attrs else {})
            out = bits_rule(rw, t, d, k)
            if out is None:  # added next as it is, under a new id
                renamed.append((nid, k))
        if out is None and size == (len(new.nodes), len(new.spans)):
            quiet.append((nid, d))  # kept as it is: under its new id, known after the walk
        return out

    renamed: list[tuple[bytes, Known | None]] = []
    quiet: list[tuple[bytes, int]] = []
    made_demand: list[int] = []
    pending: list[Known | None] = []  # known bits of the last of ``made``, to file by id
    rw = Rewriter(graph, rule, BITS)
    made = rw.kept
    new = rw.new
    rw.memo["known"] = new_known = KnownBits(new, known)
    if len(demand) == len(old_nodes):  # every node live (``demanded`` lists the live ones)
        # Nodes kept earlier under their present demand are kept again without asking: only
        # the others are asked until one changes (a walk that finds nothing copies the graph).
        ask = {nid for nid, d in demand.items() if (nid, d) not in kept} if kept else demand
        out = rw.run_asking(ask, True)
    else:
        out = rw.run()
    kept.update((rw.map[nid], d) for nid, d in quiet)
    kept.update(zip(made, made_demand, strict=True))  # type: ignore[arg-type]
    if pending:
        _file(known, made, pending)
    return out


def _file(known: Memo, made: list[object], pending: list[Known | None]) -> None:
    """File ``pending``, the known bits of the last ``len(pending)`` terms of ``made`` (now their
    ids: ``Rewriter.emit`` puts each id there before any rule is asked again), by id."""
    for made_id, k in zip(made[len(made) - len(pending):], pending, strict=True):
        assert isinstance(made_id, bytes)
        known[made_id] = k
    pending.clear()


def clear_caches() -> None:
    """Empty the caches ``bits`` keeps between runs (for cold measurements; never needed for
    correctness)."""
    _KNOWN.clear()
    _KEPT.clear()
    _WANTS.clear()


def bits(graph: Graph) -> Graph:
    """Return ``graph`` with every node computed on its live bits (walks until nothing changes)."""
    if len(_KNOWN) > _CACHE_LIMIT or len(_KEPT) > _CACHE_LIMIT or len(_WANTS) > _CACHE_LIMIT:
        clear_caches()
    for _ in range(MAX_WALKS):
        out = bits_walk(graph, _KNOWN, _KEPT, _WANTS)
        if out.fingerprint() == graph.fingerprint():
            return out
        graph = out
    return graph


__all__ = [
    "BITS",
    "NARROWED",
    "bit_slice",
    "bit_test",
    "bits",
    "bits_rule",
    "bits_walk",
    "clear_caches",
]
