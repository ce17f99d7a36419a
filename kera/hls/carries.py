"""Carry chains as the tools build them: split where both operand bits are known.

yosys builds ``a + b`` as one carry chain of the operands' significant width (``wreduce``),
then removes every carry cell whose carry out is known (iCE40: ``ice40_opt`` takes out an
``SB_CARRY`` with two constant inputs, or with two constant inputs of opposite values and the
carry in passing through; ECP5's ``CCU2C`` chains split in the same places) and every cell no
demanded sum bit reads. The sum of two values masked to ``0x0F0F`` is then two 4-bit chains
with their carry outs, not one 16-bit chain: a masked SWAR sum is several short chains, as
short in delay as the longest of them and as small in area as their bits.

:func:`chain_profile` walks the positions from the carry in (0 for an add): at position ``i``
the inputs are the operand bits ``a[i]``, ``b[i]`` and the carry in ``c[i]``, each a constant
or a signal. A carry cell is kept where two or more are signals and a live sum or carry reads
its carry out; a sum bit takes a LUT where two or more are signals, or where only the carry
in is (the carry leaves the chain through a pass-through LUT), and it is demanded; with one
signal operand bit it is that wire; with none a constant. A *run* is a maximal sequence of
positions joined by live carries: its length is the chain a placer builds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: A position's input: 0 or 1 (a known constant) or None (a signal).
Known = int | None


@dataclass(frozen=True)
class ChainProfile:
    """What is left of a ``width``-bit carry chain once known carries are taken out."""

    width: int
    #: Carry cells kept (iCE40 ``SB_CARRY``: one per position).
    carries: int
    #: Sum LUTs (iCE40: the LUT beside each carry cell, and the pass-through of a carry out).
    luts: int
    #: Lengths of the runs of positions joined by live carries (a lone sum LUT is a run of 1).
    runs: tuple[int, ...]
    #: Whether the longest run ends in a carry out (its last sum is the carry in alone).
    longest_carries_out: bool
    #: The constant sum bits by position (the others are None).
    constants: tuple[Known, ...]
    #: By position, the operand (0: ``a``, 1: ``b``) whose bit the sum is, as a wire (the
    #: other bit and the carry in are 0), else None.
    wires: tuple[int | None, ...] = ()
    #: Sum LUTs among ``luts`` whose sum is the carry in itself (both operand bits known and
    #: their sum even: a carry out): yosys's netlist reads the carry cell's output there and
    #: has no LUT (nextpnr packs a pass-through logic cell, which the LUT count leaves out).
    pass_outs: int = 0
    #: Whether the first carry cell of the longest run takes a signal as its carry in (the
    #: positions below it hold one signal bit: ``a + 1``'s bit 0 passes ``a[0]`` on as the
    #: carry), which a placer feeds into the chain through a logic cell of its own.
    signal_carry_in: bool = False
    #: The positions of each run, ``(first, last)``, in the order of ``runs``.
    spans: tuple[tuple[int, int], ...] = ()
    #: By position: whether a carry cell is kept there; whether its sum LUT is a carry out
    #: (one of ``pass_outs``).
    cells: tuple[bool, ...] = ()
    outs: tuple[bool, ...] = ()

    def short_runs(self, bits: int) -> tuple[int, int]:
        """Return the carry cells and the carry outs (``pass_outs``) of the runs of at most
        ``bits`` positions: yosys splits a sum where its carries are known, and a piece that
        short is gates (``CostModel.gate_sum_bits``), no chain."""
        carries = outs = 0
        for lo, hi in self.spans:
            if hi - lo + 1 <= bits:
                carries += sum(self.cells[lo:hi + 1])
                outs += sum(self.outs[lo:hi + 1])
        return carries, outs

    @property
    def longest(self) -> int:
        """The longest run: the chain whose delay the sum has."""
        return max(self.runs, default=0)

    @property
    def whole(self) -> bool:
        """Whether the chain is one run over every position (the fitted curves' case)."""
        return self.runs == (self.width,)


def chain_profile(a: Sequence[Known], b: Sequence[Known], carry_in: Known = 0,
                  demanded: Sequence[bool] | None = None) -> ChainProfile:
    """Return the chain left of ``a + b + carry_in`` over ``len(a)`` positions.

    ``demanded[i]`` says whether any reader uses sum bit ``i`` (default: every bit)."""
    w = len(a)
    want = demanded if demanded is not None else (True,) * w
    carry: list[Known] = [carry_in] * (w + 1)  # carry into each position, then the carry out
    kept = [True] * w  # a carry cell (two or more signal inputs)
    for i in range(w):
        x, y, c = a[i], b[i], carry[i]
        if x is None:
            if y is None or c is None:
                carry[i + 1] = None
                continue
            carry[i + 1] = y if y == c else None  # two constants: equal, or the signal passes
        elif y is None:
            if c is None:
                carry[i + 1] = None
                continue
            carry[i + 1] = x if x == c else None
        elif c is None:
            carry[i + 1] = x if x == y else None
        else:
            carry[i + 1] = 1 if x + y + c >= 2 else 0
        kept[i] = False
    # which carries into a position a demanded sum or a live carry reads (backwards): the sum
    # of c with others, or c alone (pass-through); a kept cell, or c passing a known pair
    live = [False] * (w + 1)
    for i in range(w - 1, -1, -1):
        if carry[i] is None and (want[i] or live[i + 1] and (
                kept[i] or a[i] is not None and b[i] is not None and carry[i + 1] is None)):
            live[i] = True
    cell = [kept[i] and live[i + 1] for i in range(w)]
    luts = outs = 0
    out_at: list[bool] = []
    constants: list[Known] = []
    used: list[bool] = []  # a sum LUT or a live carry cell at the position
    for i in range(w):
        x, y, c = a[i], b[i], carry[i]
        free = (x is None) + (y is None) + (c is None)
        constants.append(None if free else (x + y + c) & 1)  # type: ignore[operator]
        lut = bool(want[i]) and (free >= 2 or (free == 1 and c is None))
        used.append(lut or cell[i])
        out_at.append(lut and x is not None and y is not None and not (x + y) & 1)
        if lut:
            luts += 1
            outs += out_at[-1]
    runs: list[int] = []
    spans: list[tuple[int, int]] = []
    ends_out: list[bool] = []
    fed: list[bool] = []  # the run's first carry cell takes a signal carry in
    i = 0
    while i < w:
        j = i
        while j + 1 < w and carry[j + 1] is None and live[j + 1]:
            j += 1
        if any(used[i:j + 1]):
            runs.append(j - i + 1)
            spans.append((i, j))
            ends_out.append(j > i and a[j] is not None and b[j] is not None)
            first = next((k for k in range(i, j + 1) if cell[k]), None)
            fed.append(first is not None and carry[first] is None)
        i = j + 1
    top = max(range(len(runs)), key=runs.__getitem__, default=None)
    wires = tuple(0 if (a[i] is None and b[i] == 0 and carry[i] == 0) else
                  1 if (b[i] is None and a[i] == 0 and carry[i] == 0) else None
                  for i in range(w))
    return ChainProfile(w, sum(cell), luts, tuple(runs), top is not None and ends_out[top],
                        tuple(constants), wires, outs, top is not None and fed[top],
                        tuple(spans), tuple(cell), tuple(out_at))


__all__ = ["ChainProfile", "Known", "chain_profile"]
