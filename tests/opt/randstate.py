"""A hypothesis strategy for small, well-typed *stateful* Kera programs (STATE.md).

A program is drawn as a ``StateProgram``: its `reg`s (scalars and an array), maybe a `mem`, and
maybe a stateful helper called once or twice (in an `if` arm or behind `&&`), with the update
of each state built from randprog's expressions over the parameters and the state. ``text``
renders it with a naming and a layout, so tests can rename and reformat the same program, or
change one initial value or one update.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from hypothesis import strategies as st

from kera.ir.types import IntType
from tests.opt.randprog import Source


@dataclass(frozen=True)
class StateProgram:
    """The parts of a stateful program, rendered by ``text``."""

    params: list[tuple[str, IntType]]
    ret: IntType
    regs: list[tuple[str, IntType, int, str]]  # (name, type, initial value, update expression)
    mem: tuple[IntType, list[int], str, str] | None  # (elem, init, index expr, value expr)
    helper: str | None  # None, "plain", "if" or "and": how the stateful helper is called
    result: str

    def text(self, names: dict[str, str] | None = None, spaced: bool = False) -> str:
        """Render the source; ``names`` renames state (old -> new), ``spaced`` reformats."""
        names = names or {}

        def n(s: str) -> str:
            for old in sorted(names, key=len, reverse=True):
                s = _rename(s, old, names[old])
            return s

        nl, ind = ("\n\n", "        ") if spaced else ("\n", "    ")
        out = []
        if self.helper:
            r = self.ret
            out.append(f"fn h(v: {r}) -> {r} {{{nl}{ind}reg {n('hs')}: {r} = 0;{nl}"
                       f"{ind}{n('hs')} = {n('hs')} ^ v;{nl}{ind}{n('hs')}{nl}}}")
        params = ", ".join(f"{p}: {t}" for p, t in self.params)
        out.append(f"#[top]{nl}fn f({params}, c: bool, arr: [{self.params[0][1]}; 4]) "
                   f"-> {self.ret} {{")
        for name, t, init, _ in self.regs:
            comment = " /* state */" if spaced else ""
            out.append(f"{ind}reg {n(name)}: {t} = {_lit(init, t)};{comment}")
        if self.mem:
            elem, init, _, _ = self.mem
            out.append(f"{ind}mem {n('m')}: [{elem}; 4] = "
                       f"[{', '.join(_lit(v, elem) for v in init)}];")
        out.append(f"{ind}let out: {self.ret} = {n(self.result)};")
        for name, _, _, update in self.regs:
            out.append(f"{ind}{n(name)} = {n(update)};")
        if self.mem:
            _, _, index, value = self.mem
            out.append(f"{ind}{n('m')}[{n(index)}] = {n(value)};")
        tail = "out"
        if self.helper == "plain":
            tail = "out ^ h(out)"
        elif self.helper == "if":
            tail = "if c { h(out) } else { out }"
        elif self.helper == "and":
            tail = f"if c && h(out) == out {{ out }} else {{ {_lit(0, self.ret)} }}"
        out.append(f"{ind}{tail}{nl}}}")
        return nl.join(out) + "\n"

    def with_init(self, k: int, value: int) -> StateProgram:
        """Return the program with reg ``k``'s initial value replaced."""
        regs = list(self.regs)
        name, t, _, update = regs[k]
        regs[k] = (name, t, value, update)
        return replace(self, regs=regs)

    def with_update(self, k: int, update: str) -> StateProgram:
        """Return the program with reg ``k``'s update expression replaced."""
        regs = list(self.regs)
        name, t, init, _ = regs[k]
        regs[k] = (name, t, init, update)
        return replace(self, regs=regs)


def _rename(text: str, old: str, new: str) -> str:
    """Replace the identifier ``old`` (whole words only) in ``text``."""
    return re.sub(rf"\b{re.escape(old)}\b", new, text)


def _lit(v: int, t: IntType) -> str:
    return f"{v}{t}" if v >= 0 else f"(-{-v}{t})"


@st.composite
def state_programs(draw: st.DrawFn) -> StateProgram:
    """Draw a stateful program whose top function is ``f``."""
    s = Source(draw)
    for name in "xy"[: draw(st.integers(1, 2))]:
        s.ints.append((name, s.int_type()))
    params = list(s.ints)
    s.array = ("arr", params[0][1])
    ret = s.int_type()
    regs = []
    for k in range(draw(st.integers(1, 3))):
        t = ret if k == 0 else s.int_type()
        init = draw(st.integers(t.min, t.max))
        regs.append((f"s{k}", t, init, ""))
    s.ints.extend((name, t) for name, t, _, _ in regs)  # state reads like a variable
    mem = None
    if draw(st.booleans()):
        init = [draw(st.integers(ret.min, ret.max)) for _ in range(4)]
        mem = (ret, init, "", "")
    result = s.expr(ret, 2, fixed=True)
    if mem:
        result = f"({result} ^ m[{s.unsigned(1)}])"
    s.ints.append(("out", ret))
    regs = [(name, t, init, s.expr(t, 2, fixed=True)) for name, t, init, _ in regs]
    if mem:
        mem = (ret, mem[1], s.unsigned(1), s.expr(ret, 1, fixed=True))
    helper = draw(st.sampled_from([None, "plain", "if", "and"]))
    return StateProgram(params, ret, regs, mem, helper, result)
