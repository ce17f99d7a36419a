"""The building blocks of emitted Verilog: operands, literals, explicit extensions, wires.

Every value is a flat, unsigned bit vector of its type's ``flat_width`` (``[0:0]`` for one bit, so
a bit-select is always legal). Signedness lives only in the lowering of each operation:
``$signed()`` appears alone in its own wire where Verilog needs it (comparisons, ``>>>``), so a
signed and an unsigned operand never meet in one expression.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kera.ir.types import Type
from kera.rtl.names import NameTable


@dataclass(frozen=True, slots=True)
class Operand:
    """A value as Verilog sees it: a signal name or a sized literal, with its Kera type.

    ``value`` is the bit pattern (masked to the width) when the operand is a constant, so that
    bit-selects and extensions of constants fold to literals. ``table`` is the packed bit
    pattern of an array or tuple built only from constants (which may still have a wire of its
    own): a read of it by a variable index becomes a ROM lookup (``Body.rom``).
    """

    expr: str
    type: Type
    value: int | None = None
    table: int | None = None

    @property
    def width(self) -> int:
        """The operand's flat width in bits."""
        return self.type.flat_width


def lit(value: int, width: int) -> str:
    """Return a sized, unsigned Verilog literal for the low ``width`` bits of ``value``."""
    value &= (1 << width) - 1
    return f"{width}'d{value}" if value < 1024 else f"{width}'h{value:x}"


def rng(width: int) -> str:
    """Return the packed range of a ``width``-bit vector, e.g. ``[7:0] ``."""
    return f"[{width - 1}:0] "


def const_operand(value: int, t: Type) -> Operand:
    """Return the literal operand holding the constant ``value`` of type ``t``."""
    w = t.flat_width
    bits = value & ((1 << w) - 1)
    return Operand(lit(bits, w), t, bits)


@dataclass
class Body:
    """The declarations and assignments of a module body, in order, and the unused-bit sink."""

    names: NameTable
    lines: list[str] = field(default_factory=list)
    sinks: dict[str, None] = field(default_factory=dict)
    roms: dict[tuple[int, int, int], str] = field(default_factory=dict)
    rom_lines: list[str] = field(default_factory=list)  # the ROMs' declarations

    def define(self, name: str, width: int, expr: str) -> str:
        """Declare wire ``name`` of ``width`` bits driven by ``expr``; return the name."""
        self.lines.append(f"wire {rng(width)}{name} = {expr};")
        return name

    def wire(self, base: str, width: int, expr: str) -> str:
        """Declare a fresh helper wire named after ``base``; return its name."""
        return self.define(self.names.fresh(base), width, expr)

    def rom(self, bits: int, elem_width: int, entries: int) -> str:
        """Return the name of the ROM holding the first ``entries`` elements of a constant table.

        ``bits`` packs the table's elements of ``elem_width`` bits, element 0 lowest. Each
        distinct ROM is emitted once, as an array of ``reg`` initialised element by element
        (Verilog-2005 that Verilator compiles to one C++ array and yosys reads as a ROM), so
        that every read is an index into it rather than a multiplexer of its own.
        """
        key = (bits, elem_width, entries)
        name = self.roms.get(key)
        if name is not None:
            return name
        name = self.roms[key] = self.names.fresh("rom")
        mask = (1 << elem_width) - 1
        self.rom_lines += [
            f"reg {rng(elem_width)}{name} [0:{entries - 1}];  // {entries} x {elem_width} bits",
            "initial begin",
            *(f"    {name}[{k}] = {lit((bits >> (k * elem_width)) & mask, elem_width)};"
              for k in range(entries)),
            "end",
        ]
        return name

    def sink(self, expr: str) -> None:
        """Mark a signal some of whose bits may go unread (Verilator's UNUSED lint)."""
        self.sinks[expr] = None

    def bit(self, op: Operand, i: int, whole_used: bool = False) -> str:
        """Return bit ``i`` of ``op`` (a 1-bit literal when constant).

        ``whole_used`` says the expression also reads all of ``op``, so no bit goes unread.
        """
        if op.value is not None:
            return f"1'b{(op.value >> i) & 1}"
        if op.width > 1 and not whole_used:
            self.sink(op.expr)
        return f"{op.expr}[{i}]"

    def part(self, op: Operand, hi: int, lo: int) -> str:
        """Return bits ``hi..lo`` of ``op`` (the whole operand when that is all of it)."""
        if op.value is not None:
            return lit(op.value >> lo, hi - lo + 1)
        if lo == 0 and hi == op.width - 1:
            return op.expr
        self.sink(op.expr)
        return f"{op.expr}[{hi}]" if hi == lo else f"{op.expr}[{hi}:{lo}]"

    def extend(self, op: Operand, width: int, signed: bool) -> str:
        """Return ``op`` sign- or zero-extended (or truncated) to ``width`` bits, explicitly."""
        w = op.width
        if width <= w:
            return self.part(op, width - 1, 0)
        if op.value is not None:
            value = op.value
            if signed and value >> (w - 1) & 1:
                value |= ((1 << width) - 1) ^ ((1 << w) - 1)
            return lit(value, width)
        if not signed:
            return f"{{{lit(0, width - w)}, {op.expr}}}"
        fill = self.bit(op, w - 1, whole_used=True)
        return f"{{{{{width - w}{{{fill}}}}}, {op.expr}}}"


def concat(parts: list[str]) -> str:
    """Return a concatenation of ``parts`` given most significant first (one part stays bare)."""
    return parts[0] if len(parts) == 1 else "{" + ", ".join(parts) + "}"


__all__ = ["Body", "Operand", "concat", "const_operand", "lit", "rng"]
