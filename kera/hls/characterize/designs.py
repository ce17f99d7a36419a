"""Verilog-2005 test designs for characterisation: one tiny module per (op, width[, n]).

Every design has the same shell, so only the op differs between points::

    si ─▶ [shift register sr, IW bits] ─▶ op ─▶ [(* keep *) result register r, OW bits]

The inputs of the op are bits of a serial-in shift register (flip-flops) and its result is
registered, so the measured path is register → op → register. The result register carries
``(* keep *)``, so it survives without driving a pin: no output logic, and only three pins
(``clk``, ``en``, ``si``; the iCE40 UP5K-SG48 has 39). The shift register has a clock enable
and the result register has none: otherwise yosys would merge ``r[i] <= sr[i]`` with
``sr[i+1] <= sr[i]`` in designs whose output repeats an input bit. The shell's own cost is
therefore exactly IW + OW flip-flops and no LUTs; the `reg` design (the op is a plain wire)
checks that, and gives the register-to-register overhead that the fit step subtracts.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Ops measured, with the widths they are measured at by default.
WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
#: Multipliers stop at 32 (a 48- or 64-bit multiplier needs more DSPs than the UP5K has); those
#: that may use DSPs add the widths around the DSP tiles (16x16 SB_MAC16, 18x18 MULT18X18D).
MUL_WIDTHS: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 24, 32)
DSP_EDGE_WIDTHS: tuple[int, ...] = (17, 18, 19)
MUL_OPS: tuple[str, ...] = ("mul", "widening_mul", "mul_lut", "widening_mul_lut")
ARRAY_SIZES: tuple[int, ...] = (2, 4, 8, 16, 32, 64)

BINARY = {"add": "a + b", "sub": "a - b", "mul": "a * b", "mul_lut": "a * b", "and": "a & b",
          "or": "a | b", "xor": "a ^ b"}
COMPARE = {"eq": "a == b", "ne": "a != b", "lt": "a < b", "lt_signed": "$signed(a) < $signed(b)"}
UNARY = {"not": "~a", "neg": "-a", "reg": "a"}
SHIFT = {"shl": "a << s", "shr": "a >> s", "shr_signed": "$signed(a) >>> s"}
ROTATE = ("rotl", "rotr")
MINMAX = {"min": "(a < b) ? a : b", "max": "(a < b) ? b : a"}
COUNT = ("popcount", "clz", "ctz")
OPS: tuple[str, ...] = (
    *UNARY, *BINARY, "widening_mul", "widening_mul_lut", *COMPARE, *SHIFT, *ROTATE, "select",
    *MINMAX, *COUNT, "array_index",
)


@dataclass(frozen=True)
class Point:
    """One characterisation point: an op at a width (and an element count for array_index)."""

    op: str
    width: int
    n: int | None = None

    @property
    def key(self) -> str:
        """Return the point's stable name, e.g. ``add/8`` or ``array_index/8/n4``."""
        return f"{self.op}/{self.width}" + (f"/n{self.n}" if self.n is not None else "")


@dataclass(frozen=True)
class Design:
    """A generated design: its Verilog text and the shell's input/output widths."""

    point: Point
    verilog: str
    in_bits: int
    out_bits: int


def clog2(x: int) -> int:
    """Return ceil(log2(x)) for x >= 1 (0 for 1)."""
    return max(0, (x - 1).bit_length())


def shift_amount_bits(width: int) -> int:
    """Return the width of a shift amount: enough to reach every amount < 2*width.

    Kera's shift amount is any unsigned type and is not taken modulo the width; one bit more
    than ``clog2(width)`` makes the out-of-range case (result 0 or all sign bits) reachable.
    """
    return clog2(width) + 1


def uses_dsp(op: str) -> bool:
    """Return whether synthesis may map the op to DSP blocks (``*_lut`` variants may not)."""
    return not op.endswith("_lut")


def points(
    ops: tuple[str, ...] = OPS, widths: tuple[int, ...] | None = None
) -> list[Point]:
    """Return the characterisation points for the given ops and widths, in a fixed order.

    Without ``widths`` each op gets its default grid (``WIDTHS``; ``MUL_WIDTHS`` for
    multipliers, plus ``DSP_EDGE_WIDTHS`` where DSPs may be used); with ``widths`` multipliers
    still skip widths above 32.
    """
    out: list[Point] = []
    for op in ops:
        if op not in OPS:
            raise ValueError(f"no characterisation design for op `{op}`")
        grid = widths or WIDTHS
        if op in MUL_OPS and not widths:
            grid = tuple(sorted(MUL_WIDTHS + (DSP_EDGE_WIDTHS if uses_dsp(op) else ())))
        for w in grid:
            if op in MUL_OPS and w > MUL_WIDTHS[-1]:
                continue
            if op == "array_index":
                out.extend(Point(op, w, n) for n in ARRAY_SIZES)
            else:
                out.append(Point(op, w))
    return out


def _core(p: Point) -> tuple[list[tuple[str, int]], int, list[str]]:
    """Return (inputs as (name, width)), output width, and body lines computing ``y``."""
    w, op = p.width, p.op
    ab = [("a", w), ("b", w)]
    if op in UNARY:
        return [("a", w)], w, [f"assign y = {UNARY[op]};"]
    if op in BINARY:
        return ab, w, [f"assign y = {BINARY[op]};"]
    if op in ("widening_mul", "widening_mul_lut"):
        return ab, 2 * w, ["assign y = a * b;"]
    if op in COMPARE:
        return ab, 1, [f"assign y = {COMPARE[op]};"]
    if op in MINMAX:
        return ab, w, [f"assign y = {MINMAX[op]};"]
    if op in SHIFT:
        return [("a", w), ("s", shift_amount_bits(w))], w, [f"assign y = {SHIFT[op]};"]
    if op in ROTATE:
        return [("a", w), ("s", max(1, clog2(w)))], w, _rotate(op, w)
    if op == "select":
        return [("c", 1), ("a", w), ("b", w)], w, ["assign y = c ? a : b;"]
    if op in COUNT:
        return [("a", w)], w, _count(op, w)
    if op == "array_index":
        assert p.n is not None
        return ([("arr", p.n * w), ("i", max(1, clog2(p.n)))], w,
                [f"assign y = arr[i * {w} +: {w}];"])
    raise ValueError(f"no characterisation design for op `{op}`")


def _rotate(op: str, w: int) -> list[str]:
    amount = "s" if w & (w - 1) == 0 else f"(s % {w})"
    top = 2 * w - 1
    if op == "rotl":
        return [f"wire [{top}:0] t = {{a, a}} << {amount};", f"assign y = t[{top}:{w}];"]
    return [f"wire [{top}:0] t = {{a, a}} >> {amount};", f"assign y = t[{w - 1}:0];"]


def _count(op: str, w: int) -> list[str]:
    body = {
        "popcount": f"f = 0; for (i = 0; i < {w}; i = i + 1) f = f + x[i];",
        "clz": f"f = {w}; for (i = 0; i < {w}; i = i + 1) if (x[i]) f = {w - 1} - i;",
        "ctz": f"f = {w}; for (i = {w - 1}; i >= 0; i = i - 1) if (x[i]) f = i;",
    }[op]
    return [
        f"function [{w - 1}:0] f(input [{w - 1}:0] x);",
        "  integer i;",
        f"  begin {body} end",
        "endfunction",
        "assign y = f(a);",
    ]


def design(p: Point) -> Design:
    """Return the Verilog of the shelled design for one point (top module ``top``)."""
    inputs, out_bits, body = _core(p)
    in_bits = sum(wd for _, wd in inputs)
    lines = [
        f"// kera-hls characterisation: {p.key}",
        "module top(input clk, input en, input si);",
        f"  reg [{in_bits - 1}:0] sr;",
        "  always @(posedge clk) if (en) sr <= "
        + ("si;" if in_bits == 1 else f"{{sr[{in_bits - 2}:0], si}};"),
    ]
    lo = 0
    for name, wd in inputs:
        lines.append(f"  wire [{wd - 1}:0] {name} = sr[{lo + wd - 1}:{lo}];")
        lo += wd
    lines.append(f"  wire [{out_bits - 1}:0] y;")
    lines.extend("  " + line for line in body)
    lines += [
        f"  (* keep *) reg [{out_bits - 1}:0] r;",
        "  always @(posedge clk) r <= y;",
        "endmodule",
        "",
    ]
    return Design(p, "\n".join(lines), in_bits, out_bits)
