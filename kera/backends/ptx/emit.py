"""Emit PTX for a scheduled region: one thread per input row.

The kernel is ``kera_run(.param .u64 kera_bufs, .param .u32 kera_rows)``: ``kera_bufs`` points to
a device array of one global pointer per leaf column (``kera.backends.layout``: the inputs, then
the result), and thread ``ctaid.x * ntid.x + tid.x`` evaluates that row in schedule order when it
is below ``kera_rows``.

A stateful region runs as ONE sequential thread (thread 0 of block 0) that loops over the rows
in order (``emit_ptx`` picks it): reg leaves live in registers ``%sr``/``%sd`` set from their
initial values before the loop, and the in-place arrays (``kera.backends.state``) are global
buffers listed after the result columns, which the host fills with their initial words.
"""

from __future__ import annotations

from kera.backends.layout import Layout, region_layout
from kera.backends.lower import Emitter, Table, Tree, build_tree, leaves_of, walk
from kera.backends.ptx.ops import TABLE, imm, w
from kera.backends.state import SlotPlan
from kera.hls.pipeline import Schedule
from kera.ir.types import BoolType, IntType, Type

ENTRY = "kera_run"
ARCHES = ("sm_80", "sm_90")
PTX_VERSION = "8.0"


class PtxEmitter(Emitter):
    """Collects the instructions of one thread and counts its registers."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.lines: list[str] = []
        self.counts = {"r": 0, "rd": 0, "p": 0}
        self.literals: dict[str, str] = {}  # register -> the immediate it was set to
        #: Constant tables read at a dynamic index, by (bits, immediates): one initialised
        #: ``.global`` array each at module scope (``table_lines``).
        self.tables: dict[tuple[int, tuple[str, ...]], str] = {}

    def reg(self, kind: str) -> str:
        """Return a fresh register of class ``r`` (.b32), ``rd`` (.b64) or ``p`` (.pred)."""
        n = self.counts[kind]
        self.counts[kind] = n + 1
        return f"%{kind}{n}"

    def op(self, t: Type, template: str) -> str:
        """Emit ``template`` with ``{d}`` a fresh register for ``t``; return that register."""
        d = self.reg("r" if w(t) == 32 else "rd")
        self.lines.append(template.format(d=d))
        return d

    def pred(self, template: str) -> str:
        """Emit ``template`` with ``{d}`` a fresh predicate; return it."""
        d = self.reg("p")
        self.lines.append(template.format(d=d))
        return d

    def column(self, buffer: int, t: Type) -> str:
        """Return a register holding the global address of this row's element of a column."""
        ptr = self.reg("rd")
        self.lines.append(f"ld.global.u64 {ptr}, [%rd0+{8 * buffer}];")
        self.lines.append(f"cvta.to.global.u64 {ptr}, {ptr};")
        addr = self.reg("rd")
        self.lines.append(f"add.u64 {addr}, {ptr}, {'%rd1' if w(t) == 32 else '%rd2'};")
        return addr

    def param(self, index: int, t: Type) -> Tree:
        buffers = iter(self.layout.param_buffers(index))

        def load(leaf: Type) -> str:
            addr = self.column(next(buffers), leaf)
            return self.op(leaf, f"ld.global.u{w(leaf)} {{d}}, [{addr}];")

        return build_tree(t, load)

    def const(self, t: Type, value: int) -> str:
        d = self.op(t, f"mov.b{w(t)} {{d}}, {imm(value, w(t))};")
        self.literals[d] = imm(value, w(t))
        return d

    def table_constant(self, operand: str) -> str | None:
        return self.literals.get(operand)

    def table_read(self, leaf: Type, values: tuple[str, ...], pos: str) -> str:
        """Load from the table's module-scope ``.global`` array (``table_lines``)."""
        name = self.tables.setdefault((w(leaf), values), f"kera_tab{len(self.tables)}")
        base, off, addr = self.reg("rd"), self.reg("rd"), self.reg("rd")
        self.lines += [f"mov.u64 {base}, {name};",
                       f"mul.wide.u32 {off}, {pos}, {w(leaf) // 8};",
                       f"add.u64 {addr}, {base}, {off};"]
        return self.op(leaf, f"ld.global.nc.u{w(leaf)} {{d}}, [{addr}];")

    def table_lines(self) -> list[str]:
        """Return the module-scope declarations of the constant tables ``array_read`` made."""
        return [f".global .align {bits // 8} .b{bits} {name}[{len(values)}] = "
                f"{{{', '.join(values)}}};" for (bits, values), name in self.tables.items()]

    def select(self, cond: str, a: str, b: str, t: Type) -> str:
        p = self.pred(f"setp.ne.u32 {{d}}, {cond}, 0;")
        return self.op(t, f"selp.b{w(t)} {{d}}, {a}, {b}, {p};")

    def index_is(self, idx: str, idx_t: IntType, k: int) -> str:
        p = self.pred(f"setp.eq.u{w(idx_t)} {{d}}, {idx}, {imm(k, w(idx_t))};")
        return self.op(BoolType(), f"selp.u32 {{d}}, 1, 0, {p};")

    bases: tuple[str, ...] = ()  # registers holding each in-place buffer's global address

    def state_leaf(self, slot: SlotPlan, leaf: int, t: Type) -> str:
        return f"%s{'r' if w(t) == 32 else 'd'}{slot.first + leaf}"

    def position(self, idx: str, idx_t: IntType, limit: int) -> str:
        u32 = IntType(32, False)
        if w(idx_t) == 32:
            return self.op(u32, f"min.u32 {{d}}, {idx}, {limit};")
        wide = self.op(idx_t, f"min.u64 {{d}}, {idx}, {limit};")
        return self.op(u32, f"cvt.u32.u64 {{d}}, {wide};")

    def same(self, a: str, b: str) -> str:
        p = self.pred(f"setp.eq.u32 {{d}}, {a}, {b};")
        return self.op(BoolType(), f"selp.u32 {{d}}, 1, 0, {p};")

    def word(self, buffer: int, pos: str, t: Type) -> str:
        """Return a register holding the address of word ``pos`` of in-place buffer ``buffer``."""
        off = self.reg("rd")
        self.lines.append(f"mul.wide.u32 {off}, {pos}, {w(t) // 8};")
        addr = self.reg("rd")
        self.lines.append(f"add.u64 {addr}, {self.bases[buffer]}, {off};")
        return addr

    def mem_load(self, slot: SlotPlan, leaf: int, pos: str, t: Type) -> str:
        addr = self.word(slot.first + leaf, pos, t)
        return self.op(t, f"ld.global.u{w(t)} {{d}}, [{addr}];")


def entry_head(comment: str, arch: str, counts: dict[str, int],
               decls: list[str] | None = None, tables: list[str] | None = None) -> list[str]:
    """Return the module header and the kernel's opening lines, down to loading its arguments
    (%rd0 the pointer table, %r0 the rows), with ``decls`` after the register declarations
    and ``tables`` (module-scope data) before the kernel."""
    return [
        comment,
        f".version {PTX_VERSION}",
        f".target {arch}",
        ".address_size 64",
        "",
        *(tables or []),
        *([""] if tables else []),
        f".visible .entry {ENTRY}(",
        "    .param .u64 kera_bufs,",
        "    .param .u32 kera_rows",
        ")",
        "{",
        f"    .reg .pred %p<{counts['p']}>;",
        f"    .reg .b32 %r<{counts['r']}>;",
        f"    .reg .b64 %rd<{counts['rd']}>;",
        *(decls or []),
        "    ld.param.u64 %rd0, [kera_bufs];",
        "    cvta.to.global.u64 %rd0, %rd0;",
        "    ld.param.u32 %r0, [kera_rows];",
    ]


def emit_ptx(schedule: Schedule, arch: str = "sm_80", table: Table | None = None) -> str:
    """Return the PTX text of ``schedule``'s region for ``.target arch``."""
    if schedule.graph.regions[schedule.region].stateful:
        from kera.backends.ptx.stream import emit_stream

        return emit_stream(schedule, arch, TABLE if table is None else table)
    layout = region_layout(schedule.graph, schedule.region)
    em = PtxEmitter(layout)
    # %r0 rows, %r1..%r4 thread index; %rd0 pointer table, %rd1/%rd2 byte offsets; %p0 bound.
    em.counts = {"r": 5, "rd": 3, "p": 1}
    result = walk(schedule, em, TABLE if table is None else table)
    n_in = len(layout.inputs)
    for j, (leaf, value) in enumerate(zip(layout.result, leaves_of(result), strict=True)):
        addr = em.column(n_in + j, leaf.type)
        em.lines.append(f"st.global.u{w(leaf.type)} [{addr}], {value};")
    body = [f"    {line}" for line in em.lines]
    return "\n".join([
        *entry_head(f"// kera-hls PTX golden model of `{schedule.region}`, graph "
                    f"{schedule.graph.fingerprint()}; {len(schedule.order)} nodes in schedule "
                    "order.", arch, em.counts, tables=em.table_lines()),
        "    mov.u32 %r1, %ctaid.x;",
        "    mov.u32 %r2, %ntid.x;",
        "    mov.u32 %r3, %tid.x;",
        "    mad.lo.u32 %r4, %r1, %r2, %r3;",
        "    setp.ge.u32 %p0, %r4, %r0;",
        "    @%p0 bra $L_done;",
        "    mul.wide.u32 %rd1, %r4, 4;",
        "    mul.wide.u32 %rd2, %r4, 8;",
        *body,
        "$L_done:",
        "    ret;",
        "}",
        "",
    ])


__all__ = ["ARCHES", "ENTRY", "PTX_VERSION", "PtxEmitter", "emit_ptx"]
