"""Verilog names: reserved words, port checks, and readable signal names from source spans.

Parameters become ports with exactly their source names, so a name Verilog cannot use is the
user's error (INTERFACES.md). Every other signal gets a name from a ``NameTable`` that never
hands out one twice; intermediate values are named after the source variable they were assigned
to when the span says so (``acc_12``), else after their position in the schedule's order
(``n12``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from kera.diagnostics import KeraError, SourceFile, Span, read_source
from kera.ir.graph import Graph

FIXED_PORTS = frozenset({"clk", "rst", "in_valid", "in_ready", "out_valid", "out_ready", "out"})

# IEEE 1364-2005 keywords; the tools that read the output (Verilator by default) parse it as
# SystemVerilog, so IEEE 1800-2017 keywords are reserved as well.
_V2005 = """
always and assign automatic begin buf bufif0 bufif1 case casex casez cell cmos config deassign
default defparam design disable edge else end endcase endconfig endfunction endgenerate endmodule
endprimitive endspecify endtable endtask event for force forever fork function generate genvar
highz0 highz1 if ifnone incdir include initial inout input instance integer join large liblist
library localparam macromodule medium module nand negedge nmos nor noshowcancelled not notif0
notif1 or output parameter pmos posedge primitive pull0 pull1 pulldown pullup
pulsestyle_ondetect pulsestyle_onevent rcmos real realtime reg release repeat rnmos rpmos rtran
rtranif0 rtranif1 scalared showcancelled signed small specify specparam strong0 strong1 supply0
supply1 table task time tran tranif0 tranif1 tri tri0 tri1 triand trior trireg unsigned use uwire
vectored wait wand weak0 weak1 while wire wor xnor xor
"""
_SV2017 = """
accept_on alias always_comb always_ff always_latch assert assume before bind bins binsof bit
break byte chandle checker class clocking const constraint context continue cover covergroup
coverpoint cross dist do endchecker endclass endclocking endgroup endinterface endpackage
endprogram endproperty endsequence enum eventually expect export extends extern final
first_match foreach forkjoin global iff ignore_bins illegal_bins implements implies import
inside int interconnect interface intersect join_any join_none let local logic longint matches
modport nettype new nexttime null package packed priority program property protected pure rand
randc randcase randsequence ref reject_on restrict return s_always s_eventually s_nexttime
s_until s_until_with sequence shortint shortreal soft solve static string strong struct super
sync_accept_on sync_reject_on tagged this throughout timeprecision timeunit type typedef union
unique unique0 until until_with untyped var virtual void wait_order weak wildcard with within
"""
KEYWORDS = frozenset((_V2005 + _SV2017).split())

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_LET = re.compile(rb"let\s+(?:mut\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=;]*)?=\s*\Z")
_ASSIGN = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]=;]*\]\s*)*(?:<<|>>|[-+*/%&|^])?=[^=]")
_SANITISE = re.compile(r"[^A-Za-z0-9_]")


def check_identifier(name: str, what: str, where: str = "") -> None:
    """Raise ``KeraError`` (exit 1) when ``name`` cannot be used as a Verilog name as it is.

    ``where`` (``path:line:col: error: ``, or empty) starts the message.
    """
    if name in FIXED_PORTS:
        raise KeraError(f"{where}{what} `{name}` has the name of a fixed port of the generated "
                        "RTL; rename it")
    if name in KEYWORDS:
        raise KeraError(f"{where}{what} `{name}` is a Verilog keyword; rename it")
    if not _IDENT.match(name):
        raise KeraError(f"{where}{what} `{name}` is not a valid Verilog identifier (ASCII "
                        "letters, digits and `_` only); rename it")


def check_ports(graph: Graph, region: str, source: str | bytes | None = None) -> None:
    """Raise ``KeraError`` (exit 1) when region ``region`` cannot be a Verilog module as it is.

    Its name becomes the module's and each parameter a port of the same name (INTERFACES.md),
    so a keyword, a fixed port's name or a non-ASCII name is the user's error; so is a port
    with no bits. The message starts with the source location of the parameter (or of the
    function's name) when ``source`` (default: the graph's source file) shows it.
    """
    src = source_text(graph, source)
    where = _located(graph, src)
    check_identifier(region, "function", where(None, region))
    params, result = graph.signature(region)
    for pid, (name, t) in zip(graph.regions[region].params, params, strict=True):
        check_identifier(name, "parameter", where(pid, name))
        if t.flat_width == 0:
            raise KeraError(f"{where(pid, name)}parameter `{name}` has type {t}, which has no "
                            "bits; the RTL cannot have a zero-width port")
    if result.flat_width == 0:
        raise KeraError(f"{where(None, region)}`{region}` returns {result}, which has no bits; "
                        "the RTL cannot have a zero-width `out` port")


def _located(graph: Graph, src: bytes | None) -> Callable[[bytes | None, str], str]:
    """Return ``where(node, name)``: ``path:line:col: error: `` at a parameter node's span, or
    at the ``fn name`` that declares a function (node None); empty where the text shows neither.
    """
    if src is None or not graph.source_path:
        return lambda nid, name: ""
    file = SourceFile(graph.source_path, src)

    def where(nid: bytes | None, name: str) -> str:
        span = graph.spans.get(nid) if nid is not None else None
        if span is None:
            m = re.search(rb"\bfn\s+(" + re.escape(name.encode("utf-8")) + rb")\b", src)
            if m is None:
                return ""
            span = Span(m.start(1), m.end(1))
        return f"{file.location(span)}: error: "

    return where


class NameTable:
    """Hands out distinct Verilog names; a taken or reserved name gets a numeric suffix."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self._taken = set(taken) | KEYWORDS

    def taken(self, name: str) -> bool:
        """Return True when ``name`` is reserved or already handed out."""
        return name in self._taken

    def fresh(self, base: str) -> str:
        """Return ``base`` if it is free, else ``base_2``, ``base_3``, ... (and reserve it)."""
        name, k = base, 1
        while name in self._taken:
            k += 1
            name = f"{base}_{k}"
        self._taken.add(name)
        return name


def source_text(graph: Graph, text: str | bytes | None) -> bytes | None:
    """Return the bytes the graph's spans index: ``text`` or, when None, its source file."""
    if text is not None:
        return text.encode("utf-8") if isinstance(text, str) else text
    src = read_source(graph.source_path)
    return src.data if src is not None else None


def variable_names(graph: Graph, nodes: Iterable[bytes], src: bytes | None) -> dict[bytes, str]:
    """Return node id → the source variable it was assigned to, where the span shows one.

    A span that is the whole expression of ``let x = ...``, an assignment ``x = ...`` or
    ``x op= ...``, or just an identifier names its node ``x``. Anything else stays unnamed.
    """
    if src is None or not _matches(graph, nodes, src):
        return {}
    out: dict[bytes, str] = {}
    for nid in nodes:
        span = graph.spans.get(nid)
        if span is None or span.end > len(src) or graph.nodes[nid].op == "param":
            continue
        name = _name_at(src, span.start, span.end)
        if name is not None:
            out[nid] = _SANITISE.sub("_", name)
    return out


def _matches(graph: Graph, nodes: Iterable[bytes], src: bytes) -> bool:
    """Return True when every parameter's span starts with its name (the text is the source)."""
    for nid in nodes:
        node = graph.nodes[nid]
        span = graph.spans.get(nid)
        if node.op == "param" and span is not None:
            name = str(node.attr("name")).encode("utf-8")
            if src[span.start : span.start + len(name)] != name:
                return False
    return True


def _name_at(src: bytes, start: int, end: int) -> str | None:
    text = src[start:end]
    if _IDENT.match(text.decode("utf-8", "replace")):
        return text.decode("ascii")
    m = _ASSIGN.match(text)
    if m:
        return m.group(1).decode("ascii")
    m = _LET.search(src[max(0, start - 80) : start])
    if m:
        return m.group(1).decode("ascii")
    return None


__all__ = [
    "FIXED_PORTS",
    "KEYWORDS",
    "NameTable",
    "check_identifier",
    "check_ports",
    "source_text",
    "variable_names",
]
