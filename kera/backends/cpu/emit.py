"""Emit C for a scheduled region: one statement per node, in schedule order, in a batch loop.

The exported function is ``void kera_run(size_t blocks, void *const *bufs)``: ``bufs`` holds one
pointer per input leaf and then one per result leaf (``kera.backends.layout``), each a
struct-of-arrays column of ``16 * blocks`` rows. The row loop is split into blocks of a fixed 16
rows with ``restrict`` pointers, so compilers vectorise it even under gcc's ``-O2`` cost model
(the caller pads the batch to a whole number of blocks).
"""

from __future__ import annotations

from kera.backends.cpu.ops import TABLE, ctype, lit
from kera.backends.layout import Layout, flatten_type, region_layout
from kera.backends.lower import Emitter, Table, Tree, build_tree, leaves_of, walk
from kera.hls.pipeline import Schedule
from kera.ir.types import IntType, Type

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
        return self.assign(t, lit(value, 32 if ctype(t) == "uint32_t" else 64))

    def select(self, cond: str, a: str, b: str, t: Type) -> str:
        return self.assign(t, f"{cond} ? {a} : {b}")

    def index_is(self, idx: str, idx_t: IntType, k: int) -> str:
        return self.assign(IntType(1, False), f"(uint32_t)({idx} == {k}u)")

    def array_read(self, arr: list[Tree], idx: str, idx_t: IntType, elem: Type) -> Tree:
        """Read a C array of containers (one per leaf position) at the clamped index."""
        last = len(arr) - 1
        pos = f"k{self.count}"
        self.count += 1
        self.lines.append(f"const size_t {pos} = {idx} < {last}u ? (size_t){idx} : {last}u;")
        columns = [leaves_of(e) for e in arr]
        names = iter(range(len(columns[0])))

        def column(leaf: Type) -> str:
            j = next(names)
            name = f"a{self.count}"
            self.count += 1
            items = ", ".join(c[j] for c in columns)
            self.lines.append(f"const {ctype(leaf)} {name}[{len(arr)}] = {{{items}}};")
            return self.assign(leaf, f"{name}[{pos}]")

        return build_tree(elem, column)


def emit_c(schedule: Schedule, table: Table | None = None) -> str:
    """Return the C source of ``schedule``'s region (see the module docstring for the ABI)."""
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


__all__ = ["BLOCK", "ENTRY", "CEmitter", "emit_c"]
