"""Emit C for a scheduled region: one statement per node, in schedule order, in a batch loop.

The exported function is ``void kera_run(size_t blocks, void *const *bufs)``: ``bufs`` holds one
pointer per input leaf and then one per result leaf (``kera.backends.layout``), each a
struct-of-arrays column of ``16 * blocks`` rows. The row loop is split into blocks of a fixed 16
rows with ``restrict`` pointers, so compilers vectorise it even under gcc's ``-O2`` cost model
(the caller pads the batch to a whole number of blocks).

A stateful region (``kera.backends.state``) is one stream: ``kera_run(size_t rows, bufs)`` runs
its rows in order, and ``bufs`` continues with the reg buffer (one ``uint64_t`` per reg leaf,
loaded into locals before the loop and stored back after it) and the in-place arrays.
"""

from __future__ import annotations

from kera.backends.cpu.ops import TABLE, ctype, lit
from kera.backends.layout import Layout, flatten_type, region_layout
from kera.backends.lower import Emitter, Table, Tree, build_tree, leaves_of, walk, walk_state
from kera.backends.state import SlotPlan, StatePlan, plan_state
from kera.hls.pipeline import Schedule
from kera.ir.types import BoolType, IntType, Type

BLOCK = 16  # rows per inner loop: a multiple of every vector length (AVX-512: 16 x u32)
ENTRY = "kera_run"

_HELPERS = """\
static inline {T} k_pop{W}({T} x) {{
    x = x - ((x >> 1) & ({T})0x5555555555555555u);
    x = (x & ({T})0x3333333333333333u) + ((x >> 2) & ({T})0x3333333333333333u);
    x = (x + (x >> 4)) & ({T})0x0f0f0f0f0f0f0f0fu;
    return ({T})(x * ({T})0x0101010101010101u) >> ({W} - 8);
}}
static inline {T} k_clz{W}({T} x) {{ return x ? ({T}){clz}(x) : ({T}){W}; }}
static inline {T} k_ctz{W}({T} x) {{ return x ? ({T}){ctz}(x) : ({T}){W}; }}
/* Division is total and branch-free: the divisor 0 becomes 1, then the result is fixed up. */
static inline {T} k_udiv{W}({T} a, {T} b) {{
    const {T} zero = ({T})(b == 0);
    return (a / (b | zero)) & (zero - 1);
}}
static inline {T} k_urem{W}({T} a, {T} b) {{
    const {T} zero = ({T})(b == 0);
    return (a % (b | zero)) | (a & (({T})0 - zero));
}}
/* Truncating signed division of sign-extended patterns, on magnitudes (no UB, no traps). */
static inline {T} k_sdiv{W}({T} a, {T} b) {{
    const {T} na = a >> ({W} - 1), nb = b >> ({W} - 1), zero = ({T})(b == 0);
    const {T} ua = (a ^ (({T})0 - na)) + na, ub = (b ^ (({T})0 - nb)) + nb;
    const {T} q = ua / (ub | zero), s = na ^ nb;
    return ((q ^ (({T})0 - s)) + s) & (zero - 1);
}}
static inline {T} k_srem{W}({T} a, {T} b) {{
    const {T} na = a >> ({W} - 1), nb = b >> ({W} - 1), zero = ({T})(b == 0);
    const {T} ua = (a ^ (({T})0 - na)) + na, ub = (b ^ (({T})0 - nb)) + nb;
    const {T} r = ua % (ub | zero);
    return (((r ^ (({T})0 - na)) + na) & (zero - 1)) | (a & (({T})0 - zero));
}}
/* Arithmetic shift right of a sign-extended pattern by s < W, in unsigned arithmetic. */
static inline {T} k_asr{W}({T} a, unsigned s) {{
    const {T} m = ({T})1 << ({W} - 1);
    return ({T})(((a ^ m) >> s) - (m >> s));
}}
/* Rotate the n-bit field u left by r < n. */
static inline {T} k_rotl{W}({T} u, unsigned r, unsigned n) {{
    return r == 0 ? u : ({T})((u << r) | (u >> (n - r)));
}}
"""


def _helpers(word: int) -> str:
    clz, ctz = ("__builtin_clz", "__builtin_ctz") if word == 32 else (
        "__builtin_clzll", "__builtin_ctzll")
    return _HELPERS.format(T=f"uint{word}_t", W=word, clz=clz, ctz=ctz)


class CEmitter(Emitter):
    """Collects the C statements of one row of the batch loop."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.lines: list[str] = []
        self.count = 0
        self.literals: dict[str, str] = {}  # operand -> the C literal it was assigned
        #: Constant tables read at a dynamic index, by (container, literals): one ``static
        #: const`` array each at file scope (AES-128's S-box: once, not per lookup).
        self.tables: dict[tuple[str, tuple[str, ...]], str] = {}

    def assign(self, t: Type, expr: str) -> str:
        """Emit ``const T vK = expr;`` and return ``vK``."""
        name = f"v{self.count}"
        self.count += 1
        self.lines.append(f"const {ctype(t)} {name} = {expr};")
        return name

    def param(self, index: int, t: Type) -> Tree:
        buffers = iter(self.layout.param_buffers(index))
        return build_tree(t, lambda leaf: self.assign(leaf, f"b{next(buffers)}[i]"))

    def const(self, t: Type, value: int) -> str:
        text = lit(value, 32 if ctype(t) == "uint32_t" else 64)
        name = self.assign(t, text)
        self.literals[name] = text
        return name

    def select(self, cond: str, a: str, b: str, t: Type) -> str:
        return self.assign(t, f"{cond} ? {a} : {b}")

    def index_is(self, idx: str, idx_t: IntType, k: int) -> str:
        return self.assign(IntType(1, False), f"(uint32_t)({idx} == {k}u)")

    def array_read(self, arr: list[Tree], idx: str, idx_t: IntType, elem: Type) -> Tree:
        """Read a C array of containers (one per leaf position) at the clamped index: a local
        array of the elements' operands, or, where every element is a constant, the one
        ``static const`` table of those values (``table_read``; C indexes a local array where
        the other backends build a select chain)."""
        last = len(arr) - 1
        pos = f"k{self.count}"
        self.count += 1
        self.lines.append(f"const size_t {pos} = {idx} < {last}u ? (size_t){idx} : {last}u;")
        columns = [leaves_of(e) for e in arr]
        names = iter(range(len(columns[0])))

        def column(leaf: Type) -> str:
            j = next(names)
            operands = [c[j] for c in columns]
            values = [self.table_constant(x) for x in operands]
            if None not in values:
                return self.table_read(leaf, tuple(v for v in values if v is not None), pos)
            name = f"a{self.count}"
            self.count += 1
            items = ", ".join(operands)
            self.lines.append(f"const {ctype(leaf)} {name}[{len(arr)}] = {{{items}}};")
            return self.assign(leaf, f"{name}[{pos}]")

        return build_tree(elem, column)

    def table_constant(self, operand: str) -> str | None:
        return self.literals.get(operand)

    def table_read(self, leaf: Type, values: tuple[str, ...], pos: str) -> str:
        """Read the table's file-scope ``static const`` array (``table_lines``)."""
        name = self.tables.setdefault((ctype(leaf), values), f"tab{len(self.tables)}")
        return self.assign(leaf, f"{name}[{pos}]")

    def table_lines(self) -> list[str]:
        """Return the file-scope declarations of the constant tables ``array_read`` made."""
        return [f"static const {t} {name}[{len(values)}] = {{{', '.join(values)}}};"
                for (t, values), name in self.tables.items()]

    def state_leaf(self, slot: SlotPlan, leaf: int, t: Type) -> str:
        return f"s{slot.first + leaf}"

    def position(self, idx: str, idx_t: IntType, limit: int) -> str:
        k = lit(limit, 32 if ctype(idx_t) == "uint32_t" else 64)
        return self.assign(IntType(32, False), f"{idx} < {k} ? (uint32_t){idx} : {limit}u")

    def same(self, a: str, b: str) -> str:
        return self.assign(BoolType(), f"(uint32_t)({a} == {b})")

    def mem_load(self, slot: SlotPlan, leaf: int, pos: str, t: Type) -> str:
        return self.assign(t, f"m{slot.first + leaf}[{pos}]")


def emit_c(schedule: Schedule, table: Table | None = None) -> str:
    """Return the C source of ``schedule``'s region (see the module docstring for the ABI)."""
    plan = plan_state(schedule)
    if plan is not None:
        return _emit_stream(schedule, plan, TABLE if table is None else table)
    graph = schedule.graph
    layout = region_layout(graph, schedule.region)
    em = CEmitter(layout)
    result = walk(schedule, em, TABLE if table is None else table)
    n_in = len(layout.inputs)
    stores = [f"b{n_in + j}[i] = {leaf};" for j, leaf in enumerate(leaves_of(result))]
    decls = []
    for k, leaf in enumerate(layout.buffers):
        const = "const " if k < n_in else ""
        t = ctype(leaf.type)
        decls.append(f"    {const}{t} *restrict b{k} = ({const}{t} *)bufs[{k}];  /* {leaf.name} */")
    body = "\n".join(f"            {line}" for line in em.lines + stores)
    params = ", ".join(f"{n}: {t}" for n, t in layout.params)
    header = (f"/* kera-hls CPU golden model of `{schedule.region}({params}) -> "
              f"{layout.result_type}`\n   graph {graph.fingerprint()}, {len(schedule.order)} "
              f"nodes in schedule order ({schedule.method}). Generated: do not edit. */")
    assert len(flatten_type(layout.result_type)) == len(layout.result)
    return "\n".join([
        header,
        "#include <stddef.h>",
        "#include <stdint.h>",
        "_Static_assert(sizeof(int) <= 4, \"containers must not promote to int\");",
        _helpers(32),
        _helpers(64),
        *em.table_lines(),
        "__attribute__((visibility(\"default\")))",
        f"void {ENTRY}(size_t blocks, void *const *bufs) {{",
        *decls,
        "    for (size_t blk = 0; blk < blocks; ++blk) {",
        f"        for (size_t j = 0; j < {BLOCK}; ++j) {{",
        f"            const size_t i = blk * {BLOCK} + j;",
        body,
        "        }",
        "    }",
        "    (void)bufs;",
        "}",
        "",
    ])


def _emit_stream(schedule: Schedule, plan: StatePlan, table: Table) -> str:
    """Return the C of a stateful region: one loop over the rows, in order."""
    from kera.backends.memory import stores

    layout = region_layout(schedule.graph, schedule.region)
    em = CEmitter(layout)
    em.state_plan = plan
    result, nexts = walk_state(schedule, em, table)
    n_in, n_bufs = len(layout.inputs), len(layout.buffers)
    decls = []
    for k, leaf in enumerate(layout.buffers):
        const = "const " if k < n_in else ""
        t = ctype(leaf.type)
        decls.append(f"    {const}{t} *restrict b{k} = ({const}{t} *)bufs[{k}];  /* {leaf.name} */")
    decls.append(f"    uint64_t *restrict st = (uint64_t *)bufs[{n_bufs}];  /* reg leaves */")
    for k, (slot, j, mt) in enumerate(plan.memories):
        decls.append(f"    {ctype(mt)} *restrict m{k} = ({ctype(mt)} *)bufs[{n_bufs + 1 + k}];"
                     f"  /* state {slot.index} leaf {j} */")
    regs = plan.reg_leaves
    load = [f"    {ctype(rt)} s{slot.first + k} = ({ctype(rt)})st[{slot.first + k}];"
            for slot, k, rt in regs]
    save = [f"    st[{slot.first + k}] = s{slot.first + k};" for slot, k, _ in regs]
    tail = [f"b{n_in + j}[i] = {leaf};" for j, leaf in enumerate(leaves_of(result))]
    moves: list[tuple[str, str, Type]] = []
    for slot, nxt in zip(plan.slots, nexts, strict=True):
        if slot.in_place:
            tail += [f"m{slot.first + j}[{pos}] = {v};" for j, pos, v in stores(nxt)]
            continue
        for k, (v, lt) in enumerate(zip(leaves_of(nxt), slot.leaves, strict=True)):
            if v != f"s{slot.first + k}":
                moves.append((f"s{slot.first + k}", v, lt))
    tail += [f"const {ctype(mt)} t{n} = {v};" for n, (_, v, mt) in enumerate(moves)]
    tail += [f"{s} = t{n};" for n, (s, _, _) in enumerate(moves)]
    body = "\n".join(f"        {line}" for line in em.lines + tail)
    params = ", ".join(f"{n}: {t}" for n, t in layout.params)
    header = (f"/* kera-hls CPU golden model of the stateful `{schedule.region}({params}) -> "
              f"{layout.result_type}`: one stream, rows in order\n   graph "
              f"{schedule.graph.fingerprint()}, {len(schedule.order)} nodes in schedule order "
              f"({schedule.method}). Generated: do not edit. */")
    return "\n".join([
        header,
        "#include <stddef.h>",
        "#include <stdint.h>",
        "_Static_assert(sizeof(int) <= 4, \"containers must not promote to int\");",
        _helpers(32),
        _helpers(64),
        *em.table_lines(),
        "__attribute__((visibility(\"default\")))",
        f"void {ENTRY}(size_t rows, void *const *bufs) {{",
        *decls,
        *load,
        "    for (size_t i = 0; i < rows; ++i) {",
        body,
        "    }",
        *save,
        "    (void)st;",
        "}",
        "",
    ])


__all__ = ["BLOCK", "ENTRY", "CEmitter", "emit_c"]
