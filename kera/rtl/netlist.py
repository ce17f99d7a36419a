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
        """Return the name of the function reading the first ``entries`` elements of a
        constant table in LUTs: ``name(i)`` is element ``i``.

        ``bits`` packs the table's elements of ``elem_width`` bits, element 0 lowest. Each
        distinct table is emitted once, one constant per element bit (its column: bit ``k``
        of the column is that bit of element ``k``) that the function selects by the index.
        Columns, not an initialised array: yosys turns an array (or a ``case`` of constants,
        or a part-select of one packed constant) into a ``$mem`` and ``memory_dff`` merges a
        register on the index into it, which on iCE40 made a block RAM the budget never had
        and on ECP5 doubled an S-box chain's LUTs (sbox_chain behind registered inputs: 177
        LUT4 and 9 flip-flops as an array, 78 and 5 as columns; yosys 0.70). A column whose
        bits are all alike is that constant.
        """
        key = (bits, elem_width, entries)
        name = self.roms.get(key)
        if name is not None:
            return name
        name = self.roms[key] = self.names.fresh("rom")
        ab = max(1, (entries - 1).bit_length())
        size = 1 << ab  # the index reaches every column bit; entries past the end repeat the last
        mask = (1 << elem_width) - 1
        elems = [(bits >> (min(k, entries - 1) * elem_width)) & mask for k in range(size)]
        picks = []
        for j in reversed(range(elem_width)):
            column = sum((e >> j & 1) << k for k, e in enumerate(elems))
            if column in (0, (1 << size) - 1):
                picks.append(f"1'b{column & 1}")
                continue
            self.rom_lines.append(f"localparam {rng(size)}{name}_c{j} = {size}'h{column:x};")
            picks.append(f"{name}_c{j}[i]")
        self.rom_lines += [
            f"function {rng(elem_width)}{name};  // {entries} x {elem_width} bits",
            f"    input {rng(ab)}i;",
            f"    {name} = {concat(picks)};",
            "endfunction",
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
