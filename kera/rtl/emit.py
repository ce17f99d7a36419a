"""Emit one Verilog-2005 module for a scheduled region (INTERFACES.md, "Generated RTL").

The module is the schedule made literal: stage ``s`` is combinational logic (one wire per
operation, ``kera.rtl.lower``) reading the input ports (stage 0) or bank ``s-1``; bank ``s`` holds
exactly the values ``Schedule.crossing()`` lists, plus a valid bit. One enable,
``en = !out_valid || out_ready``, moves every bank at once, so ``out_ready = 0`` freezes the
pipeline without losing or duplicating a transfer, while bubbles still drain. With ``ii > 1`` a
counter keeps ``in_ready`` low for ``ii - 1`` enabled cycles after each accepted input. When ops
share units (``Schedule.units``, ``kera.rtl.sharing``) or values share registers
(``Schedule.register_binding``, ``kera.rtl.registers``) a modulo counter counts enabled cycles
instead and an input is accepted only when it is 0, so stage ``s`` always runs at count
``s mod ii`` and selects the unit multiplexers' inputs and the registers' loads. The
synchronous reset clears the valid bits (and that counter) only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from kera.hls.lutcover import cover_of
from kera.hls.muxpair import MUX2_INIT, MuxPair, mux_pairs
from kera.hls.pipeline import Schedule
from kera.hls.zeroflag import NOR4_INIT, zero_flags
from kera.ir.graph import Graph
from kera.rtl.borrow import SharedBorrow, shared_borrows
from kera.rtl.dsp import primitive_lines
from kera.rtl.lower import LOWERINGS, lut_multiplies, lut_multiply
from kera.rtl.lutcells import cover_run
from kera.rtl.memory import Rams, declarations, ram_lines, read_wire, rom_lines
from kera.rtl.names import FIXED_PORTS, NameTable, check_ports, source_text, variable_names
from kera.rtl.netlist import Body, Operand, const_operand, lit, rng
from kera.rtl.registers import bank_lines, load_lines
from kera.rtl.sharing import unit_lines
from kera.rtl.state import state_base, state_registers
from kera.rtl.updates import chain_lines, folded_updates

_INDENT = "    "


def emit_verilog(
    schedule: Schedule,
    *,
    board: str,
    version: str,
    source_name: str | None = None,
    source: str | bytes | None = None,
) -> str:
    """Return the Verilog module of ``schedule``: deterministic text, one module, header first.

    ``source`` is the text the graph's spans point into; it only names signals after source
    variables, and defaults to the file at ``graph.source_path`` when that can be read.
    Raises ``KeraError`` (exit code 1) naming a parameter that cannot be a port as it is.
    """
    graph = schedule.graph
    if schedule.latency < 1:
        raise ValueError(f"a pipeline needs latency >= 1, not {schedule.latency}")
    text = source_text(graph, source)
    check_ports(graph, schedule.region, text)
    module = _Module(schedule, text)
    module.lut_muls = lut_multiplies(schedule, board)  # beyond the DSPs: no `*` for yosys
    return module.text(board, version, source_name)


def constant_tables(graph: Graph, order: tuple[bytes, ...] | list[bytes],
                    result: bytes) -> tuple[dict[bytes, int], set[bytes]]:
    """Find the arrays and tuples built only from constants, and those that need no wire.

    Returns every such node's packed bits (element 0 in the least significant bits, as ports
    and wires hold them) and the set of them whose every reader is a ``array_index`` by a
    variable index (a ROM lookup, ``kera.rtl.lower``) or another such table: those get no wire
    and no pipeline register. A table something else reads keeps its wire, as before.
    """
    nodes = graph.nodes
    tables: dict[bytes, int] = {}
    for nid in order:
        node = nodes[nid]
        if node.op == "const":
            tables[nid] = int(node.attr("value")) & ((1 << node.type.flat_width) - 1)
        elif node.op in ("array", "tuple") and all(i in tables for i in node.inputs):
            bits, at = 0, 0
            for i in node.inputs:
                bits |= tables[i] << at
                at += nodes[i].type.flat_width
            tables[nid] = bits
    aggregates = {nid: bits for nid, bits in tables.items() if nodes[nid].op != "const"}
    wired = {result} & aggregates.keys()
    for nid in reversed(order):  # readers before what they read
        node = nodes[nid]
        if nid in aggregates and nid not in wired:
            continue  # an unwired table reads its elements through the ROM only
        for j, i in enumerate(node.inputs):
            rom_read = node.op == "array_index" and j == 0 and nodes[node.inputs[1]].op != "const"
            if i in aggregates and not rom_read:
                wired.add(i)
    return aggregates, set(aggregates) - wired


@dataclass(frozen=True)
class _Control:
    en: str
    accept: str
    valid: tuple[str, ...]
    wait: str | None


#: The wiring through which yosys's ``alumacc`` merges one ``add``/``sub`` into another.
_WIRING = frozenset({"cast", "slice", "concat"})


def chained_sums(schedule: Schedule) -> set[bytes]:
    """Return the ``add``/``sub`` of two variables that another one of two variables reads in
    the same stage (through casts, slices and concatenations with constants): their wires are
    emitted ``(* keep *)``.

    Otherwise ``alumacc`` merges such a tree into one ``$macc`` of three or more operands,
    which ``maccmap`` builds as a carry-save network of LUTs before one adder: fir8's sums on
    ECP5 took 198 LUT4 and 49 CCU2C (296 sites) where its adders are 83 CCU2C and 3 LUT4 (169
    sites; a CCU2C adds two bits in two LUT4 sites). The schedule and the estimate cost each
    add as a carry chain of its own, which the kept wire makes it. A merge into two operands
    (``0 - (a - b)``, ``a + (0 - b)``) is one chain: a negation, or a sum with a constant,
    is left to merge."""
    g, stage = schedule.graph, schedule.stage

    def variables(nid: bytes) -> list[bytes]:
        return [i for i in g.nodes[nid].inputs if g.nodes[i].op != "const"]

    def source(nid: bytes) -> bytes:  # through wiring of one variable operand
        while g.nodes[nid].op in _WIRING and len(variables(nid)) == 1:
            nid = variables(nid)[0]
        return nid

    out: set[bytes] = set()
    for nid in schedule.order:
        if g.nodes[nid].op not in ("add", "sub") or len(variables(nid)) != 2:
            continue
        for i in variables(nid):
            s = source(i)
            if g.nodes[s].op in ("add", "sub") and stage.get(s) == stage[nid] and len(
                    variables(s)) == 2:
                out.add(s)
    return out


class _Module:
    """One emission: names, then stages and banks in order, then the module text."""

    def __init__(self, schedule: Schedule, src: bytes | None) -> None:
        self.s = schedule
        self.g = schedule.graph
        region = self.g.regions[schedule.region]
        self.params = [str(self.g.nodes[p].attr("name")) for p in region.params]
        self.result = region.result
        self.names = NameTable(FIXED_PORTS | set(self.params))
        self.body = Body(self.names)
        self.control = self._control_names()
        self.var = variable_names(self.g, schedule.order, src)  # node -> source variable
        self.tables, self.unwired = constant_tables(self.g, schedule.order, self.result)
        self.unwired |= set(schedule.virtual)  # a block RAM's chain: no wire of its own
        self.wire = self._wire_names()
        self.rams = Rams(self)
        self.banks = schedule.crossing()
        self.position = {nid: k for k, nid in enumerate(schedule.order)}
        self.bank_name: dict[tuple[int, bytes], str] = {}
        self.bound = schedule.bound()  # op -> the shared unit that computes it
        self.lut_muls: dict[bytes, tuple[int, int, bool]] = {}
        self.fold_names: list[str] = []  # the shared registers (kera.rtl.registers)
        self.unit_operands: dict[bytes, list[Operand]] = {}
        self.kept = chained_sums(schedule)
        self.borrows = {n: pair for n, pair in shared_borrows(schedule).items()
                        if pair.sub not in self.kept}
        self.folded = folded_updates(schedule)  # updates written into the next one's wire
        self.mux_pairs = mux_pairs(schedule)  # two levels of selects: ECP5 4:1 multiplexers
        self.zero_flags = zero_flags(schedule)  # four bits all zero: an ECP5 LUT4 each
        self.covers = cover_of(schedule)  # bitwise logic as LUT cells (kera.hls.lutcover)
        self.lut_names: dict[tuple[int, int], str] = {}  # (stage, LUT) -> its wire
        self.differences: dict[bytes, str] = {}  # a shared borrow's subtraction -> its wire
        self.dsp_out: dict[bytes, str] = {}  # a pipelined multiply -> its DSP's product

    # --- names ----------------------------------------------------------------------------

    def _control_names(self) -> _Control:
        fresh = self.names.fresh
        en, accept = fresh("en"), fresh("accept")
        valid = tuple(fresh(f"valid_s{k}") for k in range(self.s.latency))
        wait = fresh("phase" if self.s.aligned else "ii_wait") if self.s.ii > 1 else None
        return _Control(en, accept, valid, wait)

    def _wire_names(self) -> dict[bytes, str]:
        """Name every operation's wire: ``acc_12`` after its variable, else ``n12``."""
        var = self.var
        out: dict[bytes, str] = {}
        for k, nid in enumerate(self.s.order):
            node = self.g.nodes[nid]
            if node.op == "param":
                out[nid] = str(node.attr("name"))
            elif node.op == "state" and node.type.flat_width > 0:
                out[nid] = self.names.fresh(f"st_{state_base(self.g, nid, var)}")
            elif node.op != "const" and node.type.flat_width > 0 and nid not in self.unwired:
                out[nid] = self.names.fresh(f"{var[nid]}_{k}" if nid in var else f"n{k}")
        return out

    def _bank_reg(self, s: int, nid: bytes) -> str:
        """Name bank ``s``'s copy of a value: ``s2_acc``, ``s2_acc_n17`` or ``s2_n17``."""
        k = self.position[nid]
        node = self.g.nodes[nid]
        base = str(node.attr("name")) if node.op == "param" else self.var.get(nid, f"n{k}")
        name = f"s{s}_{base}"
        if self.names.taken(name):
            name = f"s{s}_{base}_n{k}"
        return self.names.fresh(name)

    # --- operands -------------------------------------------------------------------------

    def ref(self, nid: bytes, stage: int) -> Operand:
        """Return the operand that carries node ``nid``'s value in stage ``stage``."""
        node = self.g.nodes[nid]
        if node.op == "const":
            return const_operand(int(node.attr("value")), node.type)
        if node.type.flat_width == 0:
            return Operand("", node.type)
        table = self.tables.get(nid)
        if nid in self.unwired:  # read only through its ROM
            return Operand(lit(table or 0, node.type.flat_width), node.type, table=table)
        made = self.s.stage[nid]
        if made == stage:
            return Operand(self.wire[nid], node.type, table=table)
        if made > stage:
            raise ValueError(f"{node.short()} (stage {made}) is read in stage {stage}")
        return Operand(self.bank_name[(stage - 1, nid)], node.type, table=table)

    # --- body -----------------------------------------------------------------------------

    def build(self) -> list[str]:
        """Emit every stage and bank into the body; return the lines of the module body."""
        for nid in self.s.order:
            node = self.g.nodes[nid]
            if node.op == "param" and self.s.stage[nid] != 0:
                raise ValueError(f"parameter `{node.attr('name')}` must be in stage 0")
        lines = declarations(self, self.rams) + self._handshake()
        by_stage: dict[int, list[bytes]] = {}
        for nid in self.s.order:
            by_stage.setdefault(self.s.stage[nid], []).append(nid)
        for s in range(self.s.latency):
            self.body.lines = []
            self._stage(s, by_stage.get(s, []))
            lines += self.body.lines
            lines += self._bank(s)
        region = self.g.regions[self.s.region]
        if self.bound:
            lines += unit_lines(self)
        if self.s.aligned:
            lines += load_lines(self)
        if region.stateful:
            lines += state_registers(self, region)
            lines += ram_lines(self, self.rams)
        else:
            lines += rom_lines(self, self.rams)
        read = {i for nid in self.s.order for i in self.g.nodes[nid].inputs} | {self.result}
        read |= {slot.next for slot in region.states}
        for nid in region.params:
            if nid not in read:  # a parameter the result does not depend on
                self.body.sink(str(self.g.nodes[nid].attr("name")))
        for slot in region.states:
            if slot.read not in read and slot.read in self.wire:  # state nothing reads
                self.body.sink(self.wire[slot.read])
        if self.body.rom_lines:
            roms = ["// ---- constant tables read by a variable index: one ROM each",
                    *self.body.rom_lines, ""]
            lines[:0] = roms
        lines.append(f"assign out = {self.bank_name[(self.s.latency - 1, self.result)]};")
        if self.body.sinks:
            sink = self.names.fresh("unused_ok")
            lines.append("// Bits some operations do not read (Verilator's UNUSED lint).")
            lines.append(f"wire {sink} = &{{1'b0, {', '.join(self.body.sinks)}, 1'b0}};")
        return lines

    def _stage(self, s: int, nodes: list[bytes]) -> None:
        ops = [n for n in nodes if self.g.nodes[n].op not in ("param", "const", "state")
               and self.g.nodes[n].type.flat_width > 0 and n not in self.unwired]
        self.body.lines.append("")
        self.body.lines.append(f"// ---- stage {s}: {len(ops)} operation{'s' * (len(ops) != 1)}")
        ops = [n for n in ops if n not in self.folded]
        run: list[bytes] = []  # covered nodes in a row: one block of LUT cells
        for nid in [*ops, b""]:
            if nid in self.covers:
                run.append(nid)
                continue
            if run:
                cover_run(self, run, s)
                run = []
            if not nid:
                break
            node = self.g.nodes[nid]
            if nid in self.rams.by_read or nid in self.rams.rom_q:
                read_wire(self, self.rams, nid, s)
                continue
            if nid in self.bound:  # computed by a shared unit: its operands go to the mux
                self.body.lines.append(f"wire {rng(node.type.flat_width)}{self.wire[nid]};")
                self.unit_operands[nid] = [self.ref(i, s) for i in node.inputs]
                continue
            pair = self.borrows.get(nid)
            if pair is not None:
                self._shared_borrow(nid, pair, s)
                continue
            triple = self.mux_pairs.get(nid)
            if triple is not None:
                if nid == triple.second:  # the others are written with it
                    self._mux_pair(triple, s)
                continue
            if nid in self.zero_flags:
                self._zero_flag(nid, s)
                continue
            if node.op == "array_update" and node.inputs[0] in self.folded:
                chain_lines(self, nid, s)
                continue
            lut = self.lut_muls.get(nid)
            lowering = lut_multiply(*lut) if lut else LOWERINGS[node.op]
            assert callable(lowering), node.op  # param and const are never lowered here
            first = len(self.body.lines)
            lowering(self.body, self.wire[nid], node, [self.ref(i, s) for i in node.inputs])
            if nid in self.s.pipelined:  # the DSP with its own registers (kera.rtl.dsp)
                behavioural = self.body.lines[first:]
                del self.body.lines[first:]
                self.dsp_out[nid], dsp = primitive_lines(self, nid, s, self.s.family)
                self.body.lines += [f"// a pipelined DSP multiply: operands registered in "
                                    f"bank {s - 1}, product in bank {s}",
                                    "`ifdef SYNTHESIS", *dsp, "`else", *behavioural, "`endif"]
                continue
            head = f"wire {rng(node.type.flat_width)}{self.wire[nid]} = "
            if nid in self.kept and self.body.lines[-1].startswith(head):
                self.body.lines[-1] = "(* keep *) " + self.body.lines[-1]

    def _lowered(self, nids: tuple[bytes, ...], s: int) -> list[str]:
        """Return the lines of ``nids`` lowered as plain operators (stage ``s``), not added to
        the body: the simulation branch of what is written as primitives for synthesis."""
        b = self.body
        first = len(b.lines)
        for nid in nids:
            node = self.g.nodes[nid]
            lowering = LOWERINGS[node.op]
            assert callable(lowering), node.op
            lowering(b, self.wire[nid], node, [self.ref(i, s) for i in node.inputs])
        lines = b.lines[first:]
        del b.lines[first:]
        return lines

    def _mux_pair(self, pair: MuxPair, s: int) -> None:
        """Emit two levels of selects (``kera.hls.muxpair``): for synthesis each bit as two
        ``LUT4`` 2:1 multiplexers by the inner conditions and the slice's ``PFUMX`` of their
        outputs by the outer one (a wire where its four sources are one signal, an expression
        where one is a constant); for simulation the levels as they are."""
        b = self.body
        sinks = set(b.sinks)
        behavioural = self._lowered(pair.members, s)
        local = [w for w in b.sinks if w not in sinks]  # wires of this branch alone
        for w in local:
            del b.sinks[w]
        if local:
            behavioural.append(f"wire {self.names.fresh(self.wire[pair.second] + '_unused')} = "
                               f"&{{1'b0, {', '.join(local)}, 1'b0}};")
        lo_sel, hi_sel, flag = (self.ref(f, s).expr for f in (*pair.selects, pair.flag))
        out = self.wire[pair.second]
        lines = [f"wire {rng(pair.width)}{out};"]
        for i, how in enumerate(pair.plan(pair.constants(self.g))):
            d = [lit(0, 1) if src is None else b.bit(self.ref(src[0], s), src[1], whole_used=True)
                 for src in pair.taps[i]]
            if how == "wire":
                lines.append(f"assign {out}[{i}] = {d[0]};")
            elif how == "lut":
                lines.append(f"assign {out}[{i}] = {flag} ? ({hi_sel} ? {d[3]} : {d[2]}) : "
                             f"({lo_sel} ? {d[1]} : {d[0]});")
            else:
                lo, hi, la, lb, mux = (self.names.fresh(f"{out}_{k}{i}")
                                       for k in ("lo", "hi", "la", "lb", "mx"))
                lines += [
                    f"wire {lo}, {hi};",
                    f"LUT4 #(.INIT(16'h{MUX2_INIT:04X})) {la} (.A({d[0]}), .B({d[1]}), "
                    f".C({lo_sel}), .D(1'b0), .Z({lo}));",
                    f"LUT4 #(.INIT(16'h{MUX2_INIT:04X})) {lb} (.A({d[2]}), .B({d[3]}), "
                    f".C({hi_sel}), .D(1'b0), .Z({hi}));",
                    f"PFUMX {mux} (.ALUT({hi}), .BLUT({lo}), .C0({flag}), .Z({out}[{i}]));",
                ]
        b.lines += [f"// {pair.what} as ECP5 4:1 multiplexers (kera.hls.muxpair)",
                    "`ifdef SYNTHESIS", *lines, "`else", *behavioural, "`endif"]

    def _zero_flag(self, nid: bytes, s: int) -> None:
        """Emit a four-bit zero flag (``kera.hls.zeroflag``): for synthesis one ``LUT4``, the
        NOR of the four bits; for simulation the ``and`` as it is."""
        b = self.body
        behavioural = self._lowered((nid,), s)
        pins = ", ".join(f".{p}({b.bit(self.ref(u, s), i, whole_used=True)})"
                         for p, (u, i) in zip("ABCD", self.zero_flags[nid], strict=True))
        out = self.wire[nid]
        b.lines += ["// four bits all zero as one ECP5 LUT4 (kera.hls.zeroflag)",
                    "`ifdef SYNTHESIS", f"wire {rng(1)}{out};",
                    f"LUT4 #(.INIT(16'h{NOR4_INIT:04X})) {self.names.fresh(out + '_lut')} "
                    f"({pins}, .Z({out}));", "`else", *behavioural, "`endif"]

    def _shared_borrow(self, nid: bytes, pair: SharedBorrow, s: int) -> None:
        """Emit a comparison as the borrow of one difference as wide as its operands, or the
        narrower subtraction it shares that difference with as its low bits
        (``kera.rtl.borrow``); the comparison comes first in the stage."""
        b, out, n = self.body, self.wire[nid], pair.width
        if nid == pair.compare:
            x, y = self.ref(pair.minuend, s), self.ref(pair.subtrahend, s)
            diff = b.wire(f"{out}_d", n + 1, f"{{1'b0, {b.part(x, n - 1, 0)}}} - "
                                             f"{{1'b0, {b.part(y, n - 1, 0)}}}")
            b.sink(diff)  # the bits between the subtraction's and the borrow
            self.differences[pair.sub] = diff
            b.define(out, 1, f"{'' if pair.less else '~'}{diff}[{n}]")
            return
        w = self.g.nodes[nid].type.flat_width
        b.define(out, w, f"{self.differences[nid]}[{w - 1}:0]")

    def _bank(self, s: int) -> list[str]:
        if self.s.aligned:  # registers shared on the modulo circle
            return bank_lines(self, s)
        held = [n for n in self.banks[s]
                if self.g.nodes[n].type.flat_width > 0 and n not in self.unwired]
        loads = []
        products = []  # pipelined DSP products: the DSP's output register (kera.rtl.dsp)
        for nid in held:
            name = self._bank_reg(s, nid)
            # A value made in an earlier stage comes from the previous bank (a constant result
            # too: it is registered from its stage on, like any other value).
            made = self.s.stage[nid]
            source = self.ref(nid, s).expr if made == s else self.bank_name[(s - 1, nid)]
            w = self.g.nodes[nid].type.flat_width
            if made == s and nid in self.dsp_out:
                products.append((name, w, source, self.dsp_out[nid]))
            else:
                loads.append((name, w, source))
            self.bank_name[(s, nid)] = name
        lines = ["", f"// ---- bank {s}: {len(held)} register{'s' * (len(held) != 1)} + valid"]
        lines += [f"reg {rng(w)}{name};" for name, w, _ in loads]
        lines.append("always @(posedge clk) begin")
        lines.append(f"    if ({self.control.en}) begin")
        lines += [f"        {name} <= {expr};" for name, _, expr in loads]
        lines.append("    end")
        lines.append("end")
        for name, w, expr, product in products:
            lines += ["`ifdef SYNTHESIS", f"wire {rng(w)}{name} = {product}[{w - 1}:0];", "`else",
                      f"reg {rng(w)}{name};",
                      f"always @(posedge clk) if ({self.control.en}) {name} <= {expr};",
                      "`endif"]
        return lines

    def _handshake(self) -> list[str]:
        c, ii = self.control, self.s.ii
        lines = ["// ---- handshake: one enable moves every bank; out_ready = 0 holds them all",
                 f"wire {c.en} = ~out_valid | out_ready;"]
        ready = f"{c.en} & ~rst"
        if self.rams.busy is not None:
            ready += f" & ~{self.rams.busy}"
        if c.wait is not None:
            cw = (ii - 1).bit_length()
            what = ("the modulo counter: stage s runs at s mod II" if self.s.aligned
                    else "enabled cycles until the next input (II)")
            lines.append(f"reg {rng(cw)}{c.wait};  // {what}")
            ready += f" & ({c.wait} == {lit(0, cw)})"
        lines.append(f"assign in_ready = {ready};")
        lines.append(f"wire {c.accept} = in_valid & in_ready;")
        lines += [f"reg {v};" for v in c.valid]
        lines.append(f"assign out_valid = {c.valid[-1]};")
        lines.append("always @(posedge clk) begin")
        lines.append("    if (rst) begin")
        lines += [f"        {v} <= 1'b0;" for v in c.valid]
        lines.append(f"    end else if ({c.en}) begin")
        lines.append(f"        {c.valid[0]} <= {c.accept};")
        lines += [f"        {v} <= {p};" for p, v in zip(c.valid, c.valid[1:], strict=False)]
        lines.append("    end")
        lines.append("end")
        if c.wait is not None and self.s.aligned:
            cw = (ii - 1).bit_length()
            run = f"{c.en}" + (f" & ~{self.rams.busy}" if self.rams.busy is not None else "")
            lines += [
                "always @(posedge clk) begin",
                f"    if (rst) {c.wait} <= {lit(0, cw)};",
                f"    else if ({run}) {c.wait} <= ({c.wait} == {lit(ii - 1, cw)}) ? "
                f"{lit(0, cw)} : {c.wait} + {lit(1, cw)};",
                "end",
            ]
        elif c.wait is not None:
            cw = (ii - 1).bit_length()
            lines += [
                "always @(posedge clk) begin",
                f"    if (rst) {c.wait} <= {lit(0, cw)};",
                f"    else if ({c.accept}) {c.wait} <= {lit(ii - 1, cw)};",
                f"    else if ({c.en} & ({c.wait} != {lit(0, cw)})) "
                f"{c.wait} <= {c.wait} - {lit(1, cw)};",
                "end",
            ]
        return lines

    # --- text -----------------------------------------------------------------------------

    def ports(self) -> list[str]:
        """Return the port declarations in the contract's order."""
        params, result = self.g.signature(self.s.region)
        decls = [("input", "clk", 0), ("input", "rst", 0), ("input", "in_valid", 0),
                 ("output", "in_ready", 0)]
        decls += [("input", name, t.flat_width) for name, t in params]
        decls += [("output", "out_valid", 0), ("input", "out_ready", 0),
                  ("output", "out", result.flat_width)]
        width = max(len(rng(w)) for _, _, w in decls if w) if any(w for *_, w in decls) else 0
        out = []
        for direction, name, w in decls:
            r = rng(w) if w else ""
            out.append(f"{direction:<6} wire {r:<{width}}{name}")
        return out

    def _formats(self) -> list[str]:
        """The fixed-point format of each port that has one (FIXED.md), for the header."""
        from kera.ir.values import port_formats

        params, result = self.g.signature(self.s.region)
        return port_formats([*params, ("out", result)])

    def text(self, board: str, version: str, source_name: str | None) -> str:
        """Return the whole file: header comment, module, trailing newline."""
        body = self.build()
        s = self.s
        # Only the file's name: the text must not depend on where the source was built from.
        top = f"{s.region} ({PurePath(source_name).name})" if source_name else s.region
        header = [
            "// Generated by kera-hls. Do not edit: regenerate it from the source.",
            f"// top:         {top}",
            f"// fingerprint: {self.g.fingerprint()}",
            f"// compiler:    kera-hls {version}",
            f"// board:       {board}",
            f"// clock:       {s.clock_mhz:g} MHz target ({s.clock_ns:.3f} ns)",
            f"// latency:     {s.latency} cycles",
            f"// ii:          {s.ii}",
            f"// schedule:    {s.method}, {s.latency} stage{'s' * (s.latency != 1)}",
            "// ports:       valid/ready handshake; arrays and tuples packed element 0 in the LSBs",
            *(f"// format:      {line}" for line in self._formats()),
            "",
            f"module {s.region} (",
        ]
        ports = self.ports()
        header += [f"{_INDENT}{p}," for p in ports[:-1]] + [f"{_INDENT}{ports[-1]}", ");"]
        lines = header + [f"{_INDENT}{line}" if line else "" for line in body] + ["endmodule"]
        return "\n".join(lines) + "\n"


__all__ = ["emit_verilog"]
