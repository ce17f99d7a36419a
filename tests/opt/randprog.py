"""A hypothesis strategy for small, well-typed Kera programs (source text).

Programs take 1..3 integer parameters (widths 1..64), a bool and an array, and compute with
arithmetic, bitwise ops, shifts by literal and variable amounts, casts, comparisons, ``if``
expressions, built-ins, indexing, ``slice`` and ``for`` loops that accumulate — so the front
end makes the chains, constant divisors, extensions and constants the passes look for.

Unsuffixed literals appear in every context of LANGUAGE.md: beside a typed operand or arm,
under an annotation, as shift and rotate amounts, indices, array elements, loop bounds,
built-in arguments and ``slice`` parameters, alone or nested in operators (``(1 + 2) ^ x``).
Each subexpression is drawn knowing whether its context fixes its type (``fixed``): only
then may it be made of unsuffixed literals alone; otherwise it carries a typed operand.
"""

from __future__ import annotations

from hypothesis import strategies as st

from kera.ir.types import IntType
from tests.opt.kit import edge_ints

WIDTHS = (1, 3, 7, 8, 9, 16, 17, 32, 33, 63, 64)
U32 = IntType(32, False)


class Source:
    """One program under construction: its parameters and a drawing function."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.ints: list[tuple[str, IntType]] = []
        self.array: tuple[str, IntType] | None = None

    def int_type(self) -> IntType:
        if self.ints and self.draw(st.booleans()):
            return self.draw(st.sampled_from(self.ints))[1]
        return IntType(self.draw(st.sampled_from(WIDTHS)), self.draw(st.booleans()))

    def literal(self, t: IntType, fixed: bool = False) -> str:
        """A literal of type ``t``: unsuffixed only sometimes, and only where ``fixed``."""
        v = self.draw(st.one_of(st.sampled_from(edge_ints(t)), st.integers(t.min, t.max)))
        suffix = "" if fixed and self.draw(st.booleans()) else str(t)
        return f"{v}{suffix}" if v >= 0 else f"(-{-v}{suffix})"

    def sides(self, fixed: bool) -> tuple[bool, bool]:
        """Whether each of two operands of one type has its type fixed: by the context, or by
        the other operand (then the first of them may be the literal one)."""
        if fixed:
            return True, True
        return (False, True) if self.draw(st.booleans()) else (True, False)

    def expr(self, t: IntType, depth: int, fixed: bool = False) -> str:
        """Return an expression of type ``t`` (``fixed``: its context gives it ``t``)."""
        same = [n for n, u in self.ints if u == t]
        if depth <= 0 or self.draw(st.integers(0, 5)) == 0:
            roll = self.draw(st.integers(0, 3))
            if same and roll < 2:
                return self.draw(st.sampled_from(same))
            if self.ints and roll == 2:
                return f"({self.draw(st.sampled_from(self.ints))[0]} as {t})"
            return self.literal(t, fixed)
        kind = self.draw(st.sampled_from(
            ["bin", "bin", "bin", "shift", "unary", "if", "builtin", "cast", "index", "table",
             "slice", "wide"]))
        d = depth - 1
        if kind == "bin":
            op = self.draw(st.sampled_from(["+", "-", "*", "/", "%", "&", "|", "^", "min", "max"]))
            fa, fb = self.sides(fixed)
            a, b = self.expr(t, d, fa), self.expr(t, d, fb)
            return f"{op}({a}, {b})" if op in ("min", "max") else f"({a} {op} {b})"
        if kind == "shift":
            op = self.draw(st.sampled_from(["<<", ">>", "rotl", "rotr"]))
            amount = self.unsigned(d)
            a = self.expr(t, d, fixed)
            return f"{op}({a}, {amount})" if op.startswith("rot") else f"({a} {op} {amount})"
        if kind == "unary":
            inner = self.expr(t, d, fixed)
            if inner == f"(-{-t.min})":  # `-` folds into a literal: -(-128) is 128, not an i8
                inner = f"(-{-t.min}{t})"
            return f"(-{inner})" if t.signed else f"(!{inner})"
        if kind == "if":
            fa, fb = self.sides(fixed)
            a, b = self.expr(t, d, fa), self.expr(t, d, fb)
            return f"(if {self.cond(d)} {{ {a} }} else {{ {b} }})"
        if kind == "builtin":
            fn = self.draw(st.sampled_from(["popcount", "clz", "ctz"]))
            return f"{fn}({self.expr(t, d, fixed)})"
        if kind == "index" and self.array is not None and self.array[1] == t:
            return f"{self.array[0]}[{self.unsigned(d)}]"
        if kind == "table":  # an array literal typed by one element, indexed at once
            n = self.draw(st.integers(1, 4))
            typed = self.draw(st.integers(0, n - 1))
            elems = [self.expr(t, d, i != typed) for i in range(n)]  # no hint reaches them
            return f"[{', '.join(elems)}][{self.unsigned(d)}]"
        if kind == "slice":
            u = self.int_type()
            lo = self.draw(st.integers(0, u.width - 1))
            w = self.draw(st.integers(1, u.width - lo))
            return f"(slice::<{self.constant(lo)}, {self.constant(w)}>({self.expr(u, d)}) as {t})"
        if kind == "wide":
            if self.draw(st.booleans()):
                u = IntType(self.draw(st.sampled_from((1, 3, 8, 17, 32))), self.draw(st.booleans()))
                fa, fb = self.sides(False)
                a, b = self.expr(u, d, fa), self.expr(u, d, fb)
                return f"(widening_mul({a}, {b}) as {t})"
            hi, lo = (IntType(self.draw(st.sampled_from((1, 7, 16, 32))), self.draw(st.booleans()))
                      for _ in range(2))
            return f"(concat({self.expr(hi, d)}, {self.expr(lo, d)}) as {t})"
        return f"({self.expr(self.int_type(), d)} as {t})"

    def unsigned(self, depth: int) -> str:
        """An expression where any unsigned type is accepted (amount, index): typed, or made
        of unsuffixed literals that are then ``u32``."""
        if self.draw(st.booleans()):
            return self.expr(U32, depth, fixed=True)
        return self.expr(IntType(self.draw(st.sampled_from((1, 3, 8, 32, 64))), False), depth)

    def constant(self, v: int) -> str:
        """A compile-time expression of the value ``v`` (``slice`` parameters, loop bounds)."""
        roll = self.draw(st.integers(0, 3))
        if roll == 0 or v == 0:
            return str(v)
        if roll == 1:
            k = self.draw(st.integers(0, v))
            return f"({k} + {v - k})"
        if roll == 2:
            return f"({v}u8 as u32)" if v < 256 else str(v)
        return f"(({2 * v} >> 1) | 0)"

    def cond(self, depth: int) -> str:
        t = self.int_type()
        op = self.draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        fa, fb = self.sides(False)
        base = f"({self.expr(t, depth, fa)} {op} {self.expr(t, depth, fb)})"
        return f"({base} && c)" if self.draw(st.integers(0, 3)) == 0 else base

    def bounds(self) -> str:
        """``lo..hi`` of a loop: unsuffixed (`u32`), or typed by one suffixed bound."""
        n = self.draw(st.integers(1, 6))
        lo = self.draw(st.integers(0, 2))
        hi = lo + n
        typed = self.draw(st.sampled_from(["", "lo", "hi"]))
        a = f"{lo}u8" if typed == "lo" else self.constant(lo) if not typed else str(lo)
        b = f"{hi}u8" if typed == "hi" else self.constant(hi) if not typed else str(hi)
        return f"{a}..{b}"


@st.composite
def programs(draw: st.DrawFn) -> str:
    """Draw the source text of a program whose top function is ``f``."""
    s = Source(draw)
    for name in "xyz"[: draw(st.integers(1, 3))]:
        s.ints.append((name, s.int_type()))
    elem = s.int_type()
    s.array = ("arr", elem)
    ret = s.int_type()
    params = ", ".join(f"{n}: {t}" for n, t in s.ints)
    lines = [f"#[top]\nfn f({params}, c: bool, arr: [{elem}; 4]) -> {ret} {{"]
    if draw(st.booleans()):
        lines.append(f"    let mut acc: {ret} = {s.expr(ret, 2, fixed=True)};")
    else:
        lines.append(f"    let mut acc = {s.expr(ret, 2)};")
    for _ in range(draw(st.integers(0, 2))):
        op = draw(st.sampled_from(["+", "*", "^", "&", "|", "-"]))
        term = s.expr(ret, 2, fixed=True)
        lines.append(f"    for i in {s.bounds()} {{ acc = acc {op} ({term} ^ (i as {ret})); }}")
    lines.append(f"    if {s.cond(1)} {{ acc = acc + {s.expr(ret, 1, fixed=True)}; }}")
    lines.append("    acc")
    lines.append("}")
    return "\n".join(lines)
