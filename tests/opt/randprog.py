"""A hypothesis strategy for small, well-typed Kera programs (source text).

Programs take 1..3 integer parameters (widths 1..64), a bool and an array, and compute with
arithmetic, bitwise ops, shifts by literal and variable amounts, casts, comparisons, ``if``
expressions, built-ins, indexing, and ``for`` loops that accumulate — so the front end makes
the chains, constant divisors, extensions and constants the passes look for.
"""

from __future__ import annotations

from hypothesis import strategies as st

from kera.ir.types import IntType
from tests.opt.kit import edge_ints

WIDTHS = (1, 3, 7, 8, 9, 16, 17, 32, 33, 63, 64)


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

    def literal(self, t: IntType) -> str:
        v = self.draw(st.one_of(st.sampled_from(edge_ints(t)), st.integers(t.min, t.max)))
        return f"{v}{t}" if v >= 0 else f"(-{-v}{t})"

    def expr(self, t: IntType, depth: int) -> str:
        """Return an expression of type ``t``."""
        same = [n for n, u in self.ints if u == t]
        if depth <= 0 or self.draw(st.integers(0, 5)) == 0:
            roll = self.draw(st.integers(0, 3))
            if same and roll < 2:
                return self.draw(st.sampled_from(same))
            if self.ints and roll == 2:
                return f"({self.draw(st.sampled_from(self.ints))[0]} as {t})"
            return self.literal(t)
        kind = self.draw(st.sampled_from(
            ["bin", "bin", "bin", "shift", "unary", "if", "builtin", "cast", "index"]))
        d = depth - 1
        if kind == "bin":
            op = self.draw(st.sampled_from(["+", "-", "*", "/", "%", "&", "|", "^", "min", "max"]))
            a, b = self.expr(t, d), self.expr(t, d)
            return f"{op}({a}, {b})" if op in ("min", "max") else f"({a} {op} {b})"
        if kind == "shift":
            op = self.draw(st.sampled_from(["<<", ">>", "rotl", "rotr"]))
            u = IntType(self.draw(st.sampled_from((3, 8, 32))), False)
            amount = self.literal(u) if self.draw(st.booleans()) else self.expr(u, d)
            a = self.expr(t, d)
            return f"{op}({a}, {amount})" if op.startswith("rot") else f"({a} {op} {amount})"
        if kind == "unary":
            return f"(-{self.expr(t, d)})" if t.signed else f"(!{self.expr(t, d)})"
        if kind == "if":
            return f"(if {self.cond(d)} {{ {self.expr(t, d)} }} else {{ {self.expr(t, d)} }})"
        if kind == "builtin":
            fn = self.draw(st.sampled_from(["popcount", "clz", "ctz"]))
            return f"{fn}({self.expr(t, d)})"
        if kind == "index" and self.array is not None and self.array[1] == t:
            return f"{self.array[0]}[{self.expr(IntType(8, False), d)}]"
        return f"({self.expr(self.int_type(), d)} as {t})"

    def cond(self, depth: int) -> str:
        t = self.int_type()
        op = self.draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        base = f"({self.expr(t, depth)} {op} {self.expr(t, depth)})"
        return f"({base} && c)" if self.draw(st.integers(0, 3)) == 0 else base


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
    lines.append(f"    let mut acc = {s.expr(ret, 2)};")
    for _ in range(draw(st.integers(0, 2))):
        op = draw(st.sampled_from(["+", "*", "^", "&", "|", "-"]))
        n = draw(st.integers(1, 6))
        term = s.expr(ret, 2)
        lines.append(f"    for i in 0..{n} {{ acc = acc {op} ({term} ^ (i as {ret})); }}")
    lines.append(f"    if {s.cond(1)} {{ acc = acc + {s.expr(ret, 1)}; }}")
    lines.append("    acc")
    lines.append("}")
    return "\n".join(lines)
