"""Block RAM memories of a stateful region (STATE.md, "Hardware"; kera.hls.memory).

Each `mem` mapped to block RAM becomes a Verilog memory array that yosys infers as the family's
block RAM (``ram_style = "block"``: yosys's own choice for a small one on ECP5 is LUT RAM,
which the plan does not cost): one write port (``we``/``wa``/``wd``) and one synchronous read
port whose data register loads on the pipeline enable, so a stall holds it. The read address
is the read's address in the stage before the read; the read's wire is the RAM's data, or the
data written at the very edge the read was captured when that write hit the same address
(forwarding: the scheduler's modulo constraint leaves no other earlier write unseen). After
``rst`` a counter clears every word, one per cycle, with ``in_ready`` low until it is done.

A RAM read through its output register (``MemPlan.outreg``, ECP5 at a fast clock) is the
primitive under ``ifdef SYNTHESIS`` (``kera.rtl.bram``) and two registers in the behavioural
text; its address is the stage two before the read's; the RAM writes the registered write an
edge late, and the read's wire forwards the three writes not in the RAM when it was captured,
the latest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kera.rtl.netlist import Operand, lit, rng
from kera.rtl.state import state_base, write_enable

if TYPE_CHECKING:
    from kera.rtl.emit import _Module


def bram_plans(schedule: Any) -> list[Any]:
    """Return the memory plans of ``schedule`` that are block RAMs."""
    plan = schedule.state
    return [m for m in (plan.mems if plan is not None else ()) if m.mapped_to == "bram"]


class Rams:
    """The names of every block RAM of one module, chosen before the body is emitted."""

    def __init__(self, m: _Module) -> None:
        self.plans = bram_plans(m.s)
        self.by_read = {p.ports.read: p for p in self.plans}
        fresh = m.names.fresh
        self.busy = fresh("clr_busy") if self.plans else None
        self.counter = fresh("clr_addr") if self.plans else None
        self.base: dict[bytes, str] = {}
        for p in self.plans:
            name = state_base(m.g, p.ports.state, m.var)
            self.base[p.ports.read] = fresh(f"mem_{name}")
        self.words = max((p.words for p in self.plans), default=1)
        # ROMs (``Schedule.roms``, kera.hls.rom): one memory per table, a data register per
        # read port (``rom.read_ports``: at aligned II > 1 one port may serve several slots)
        from kera.hls.rom import read_ports

        position = {nid: k for k, nid in enumerate(m.s.order)}
        self.roms = sorted(m.s.roms, key=position.__getitem__)
        self.rom_ports = read_ports(m.s) if m.s.roms else []
        self.rom_table: dict[bytes, str] = {}
        self.rom_q: dict[bytes, str] = {}
        port_of = {r: port[0] for port in self.rom_ports for r in port}
        for r in self.roms:  # names in read order, a port's at its first read
            table = m.g.nodes[r].inputs[0]
            if table not in self.rom_table:
                self.rom_table[table] = fresh("rom")
            first = port_of[r]
            self.rom_q[r] = self.rom_q[first] if first in self.rom_q else fresh(
                f"{self.rom_table[table]}_q")

    def abits(self, words: int) -> int:
        """Address bits of a memory of ``words`` words."""
        return max(1, (words - 1).bit_length())


def declarations(m: _Module, rams: Rams) -> list[str]:
    """Return the registers the handshake and the stages read before the RAMs are emitted."""
    out = ["// ---- ROM read data registers (the ROMs follow the stages)"] if rams.rom_q else []
    qs = {q: r for r, q in rams.rom_q.items()}  # a port's register once
    if m.s.rom_outreg:  # the RAMs' output registers for yosys, two registers for the others
        for q, r in qs.items():
            w = rng(m.g.nodes[r].type.flat_width)
            out += ["`ifdef SYNTHESIS", f"wire {w}{q};", "`else", f"reg {w}{q};",
                    f"reg {w}{q}_l;", "`endif"]
    else:
        out += [f"reg {rng(m.g.nodes[r].type.flat_width)}{q};" for q, r in qs.items()]
    if not rams.plans:
        return out
    out += ["// ---- block RAM registers (the memories follow the stages)",
           f"reg {rams.busy};", f"reg {rng(rams.abits(rams.words))}{rams.counter};"]
    for p in rams.plans:
        base, ab, w = rams.base[p.ports.read], rams.abits(p.words), p.width
        if p.outreg:
            out += ["`ifdef SYNTHESIS", f"wire {rng(w)}{base}_o;", "`else",
                    f"reg {rng(w)}{base}_q;", f"reg {rng(w)}{base}_o;", "`endif",
                    f"reg {base}_gv;", f"reg {rng(ab)}{base}_ga;", f"reg {rng(w)}{base}_gd;",
                    f"reg {base}_hf;", f"reg {base}_hx;", f"reg {rng(w)}{base}_xd;"]
        else:
            out.append(f"reg {rng(w)}{base}_q;")
        out += [f"reg {base}_fv;", f"reg {rng(ab)}{base}_fa;", f"reg {rng(w)}{base}_fd;"]
    return out


def read_wire(m: _Module, rams: Rams, nid: bytes, stage: int) -> None:
    """Emit the wire of a block RAM read in ``stage``: RAM data or the forwarded write (a
    ROM's: its data register)."""
    if nid in rams.rom_q:
        w = m.g.nodes[nid].type.flat_width
        m.body.lines.append(f"wire {rng(w)}{m.wire[nid]} = {rams.rom_q[nid]};")
        return
    p = rams.by_read[nid]
    base, w, ab = rams.base[nid], p.width, rams.abits(p.words)
    if p.outreg:
        m.body.lines.append(
            f"wire {rng(w)}{m.wire[nid]} = {base}_hf ? {base}_fd : {base}_hx ? {base}_xd : "
            f"{base}_o;  // forwarded when a write not yet in the RAM at the capture edge "
            "hit this word")
        return
    addr = _addr(m, p.ports.raddr, stage, ab)
    m.body.lines.append(f"wire {rng(w)}{m.wire[nid]} = ({base}_fv & ({base}_fa == {addr})) ? "
                        f"{base}_fd : {base}_q;  // forwarded when the write at the capture "
                        "edge hit this word")


def _addr(m: _Module, nid: bytes, stage: int, bits: int) -> str:
    op = m.ref(nid, stage)
    return m.body.extend(Operand(op.expr, op.type, op.value), bits, False)


def _port_addr(m: _Module, port: list[bytes], lag: int, bits: int) -> str:
    """Return the address of a ROM read port: its read's index in the stage ``lag`` before the
    read, or, for a port several counter slots share, the index of the read whose address
    loads at the counter's value (``phase``), a multiplexer on the counter."""
    g, s = m.g, m.s
    addrs = [_addr(m, g.nodes[r].inputs[1], s.stage[r] - lag, bits) for r in port]
    if len(port) == 1:
        return addrs[0]
    cw = (s.ii - 1).bit_length()
    phase = m.control.wait
    expr = addrs[-1]
    for r, a in zip(port[-2::-1], addrs[-2::-1], strict=True):
        expr = f"({phase} == {lit((s.stage[r] - lag) % s.ii, cw)}) ? {a} : {expr}"
    return m.body.wire(f"{m.wire[port[0]]}_a", bits, expr)


def ram_lines(m: _Module, rams: Rams) -> list[str]:
    """Return the memories, their ports, forwarding registers and the clear counter; the
    ROMs and their read ports."""
    roms = rom_lines(m, rams)
    if not rams.plans:
        return roms
    busy, counter = rams.busy, rams.counter
    cb = rams.abits(rams.words)
    lines = ["", "// ---- reset clears every block RAM word, one per cycle, in_ready low meanwhile",
             "always @(posedge clk) begin",
             f"    if (rst) begin {busy} <= 1'b1; {counter} <= {lit(0, cb)}; end",
             f"    else if ({busy}) begin",
             f"        {counter} <= {counter} + {lit(1, cb)};",
             f"        if ({counter} == {lit(rams.words - 1, cb)}) {busy} <= 1'b0;",
             "    end", "end"]
    for p in rams.plans:
        lines += _ram(m, rams, p)
    return lines + roms


def _ram(m: _Module, rams: Rams, p: Any) -> list[str]:
    ports = p.ports
    base, w, ab = rams.base[ports.read], p.width, rams.abits(p.words)
    ws = m.s.stage[ports.next]
    rstage = m.s.stage[ports.read] - (2 if p.outreg else 1)
    m.body.lines = []
    raddr = _addr(m, ports.raddr, rstage, ab)
    waddr = _addr(m, ports.waddr, ws, ab)
    wdata = m.ref(ports.wdata, ws).expr
    we = write_enable(m, ws)
    if ports.guard is not None:
        g = m.ref(ports.guard, ws).expr
        we += f" & {'~' if ports.negate else ''}{g}"
    helpers = m.body.lines
    cb = rams.abits(rams.words)
    clr = str(rams.counter) if cb == ab else f"{rams.counter}[{ab - 1}:0]"
    if cb != ab:
        m.body.sink(str(rams.counter))
    if p.outreg:
        return _ram_outreg(m, rams, p, helpers, (we, waddr, wdata, raddr, clr), rstage, ws)
    return ["", f"// ---- memory `{p.name}`: {p.words} x {w} block RAM, synchronous read in "
                f"stage {rstage + 1}, written in stage {ws}",
            *helpers,
            "(* ram_style = \"block\" *)  // the plan's block RAM, not yosys's LUT RAM",
            f"reg {rng(w)}{base} [0:{p.words - 1}];",
            f"wire {base}_we = {we};",
            f"wire {rng(ab)}{base}_wa = {waddr};",
            f"wire {rng(w)}{base}_wd = {wdata};",
            "always @(posedge clk) begin",
            f"    if ({rams.busy}) {base}[{clr}] <= {lit(p.init, w)};",
            f"    else if ({base}_we) {base}[{base}_wa] <= {base}_wd;",
            f"    if ({m.control.en}) {base}_q <= {base}[{raddr}];",
            "end",
            "always @(posedge clk) begin",
            f"    if (rst) {base}_fv <= 1'b0;",
            f"    else if ({m.control.en}) begin",
            f"        {base}_fv <= {base}_we;",
            f"        {base}_fa <= {base}_wa;",
            f"        {base}_fd <= {base}_wd;",
            "    end",
            "end"]


def _ram_outreg(m: _Module, rams: Rams, p: Any, helpers: list[str],
                ports: tuple[str, str, str, str, str], rstage: int, ws: int) -> list[str]:
    """Return a RAM read through its output register: the DP16KD columns for yosys, the
    array, its read register and output register for every other reader; the write port
    writes the registered write (``f``: a long net from the write's logic into the RAM would
    set the clock), so three writes can be missing from the word read: the last edge's
    (``hf``, data ``fd``) and the two before (``hx``, data ``xd``), whose hit tests are
    registered in the stage before the read's data."""
    from kera.rtl.bram import dp16kd_lines

    we, waddr, wdata, raddr, clr = ports
    base, w, ab = rams.base[p.ports.read], p.width, rams.abits(p.words)
    busy, en = rams.busy, m.control.en
    lines = m.body.lines
    m.body.lines = []
    at = _addr(m, p.ports.raddr, rstage + 1, ab)  # the read's address, the stage before data
    helpers = [*helpers, *m.body.lines]
    m.body.lines = lines
    init = lit(p.init, w)
    return ["", f"// ---- memory `{p.name}`: {p.words} x {w} block RAM, address in stage "
                f"{rstage}, read through the RAM's output register into stage {rstage + 2}, "
                f"written in stage {ws} (into the RAM from its register, an edge later)",
            *helpers,
            f"wire {base}_we = {we};",
            f"wire {rng(ab)}{base}_wa = {waddr};",
            f"wire {rng(w)}{base}_wd = {wdata};",
            "`ifdef SYNTHESIS",
            *dp16kd_lines(base, p.words, w, ab, we=f"{busy} | {base}_fv",
                          waddr=f"{busy} ? {clr} : {base}_fa",
                          wdata=f"{busy} ? {init} : {base}_fd", raddr=raddr, en=en,
                          out=f"{base}_o"),
            "`else",
            f"reg {rng(w)}{base} [0:{p.words - 1}];",
            "always @(posedge clk) begin",
            f"    if ({busy}) {base}[{clr}] <= {init};",
            f"    else if ({base}_fv) {base}[{base}_fa] <= {base}_fd;",
            f"    if ({en}) {base}_q <= {base}[{raddr}];",
            f"    if ({en}) {base}_o <= {base}_q;",
            "end",
            "`endif",
            f"wire {base}_hf_d = {base}_we & ({base}_wa == {at});",
            f"wire {base}_hg_d = {base}_fv & ({base}_fa == {at});",
            f"wire {base}_hh_d = {base}_gv & ({base}_ga == {at});",
            "// the writes of the last two edges; which of the last three hit the word read",
            "always @(posedge clk) begin",
            f"    if (rst) begin {base}_fv <= 1'b0; {base}_gv <= 1'b0; {base}_hf <= 1'b0; "
            f"{base}_hx <= 1'b0; end",
            f"    else if ({en}) begin",
            f"        {base}_fv <= {base}_we; {base}_fa <= {base}_wa; {base}_fd <= {base}_wd;",
            f"        {base}_gv <= {base}_fv; {base}_ga <= {base}_fa; {base}_gd <= {base}_fd;",
            f"        {base}_hf <= {base}_hf_d;",
            f"        {base}_hx <= {base}_hg_d | {base}_hh_d;",
            f"        {base}_xd <= {base}_hg_d ? {base}_fd : {base}_gd;",
            "    end",
            "end"]


#: Table entries per line of a ROM's function.
ROM_PER_LINE = 8


def rom_lines(m: _Module, rams: Rams) -> list[str]:
    """Return each ROM table (a constant function, emitted once) and its block RAMs: the
    reads in groups of the family's read ports per block, each group a memory initialised
    from the function (yosys infers one block RAM per group; a single memory of many read
    ports makes yosys 0.70's ``memory_libmap`` abort past about ten), each read's data
    register loaded on the pipeline enable from the address of the stage before."""
    if not rams.roms:
        return []
    from kera.hls.memory import BRAM_PORTS

    g = m.g
    ports = BRAM_PORTS.get(m.s.family, (1, 1))[0]
    lines: list[str] = []
    for table, name in rams.rom_table.items():
        elems = g.nodes[table].inputs
        w, n = g.nodes[elems[0]].type.flat_width, len(elems)
        ab = rams.abits(n)
        values = [lit(int(g.nodes[e].attr("value")), w) for e in elems]
        reads = [r for r in rams.roms if g.nodes[r].inputs[0] == table]
        table_ports = [p for p in rams.rom_ports if g.nodes[p[0]].inputs[0] == table]
        fn, k = m.names.fresh(f"{name}_f"), m.names.fresh(f"{name}_k")
        when = ("through the RAM's output register from the address two stages before the "
                "read" if m.s.rom_outreg else "from the address of the stage before the read")
        lines += ["", f"// ---- ROM `{name}`: {n} x {w}, {len(reads)} synchronous "
                      f"read{'s' * (len(reads) != 1)} on {len(table_ports)} port"
                      f"{'s' * (len(table_ports) != 1)}, {ports} per block RAM; a port's data "
                      f"register loads {when}",
                  f"function {rng(w)}{fn};", f"    input {rng(ab)}i;", "    case (i)"]
        for j in range(0, n, ROM_PER_LINE):
            lines.append("        " + " ".join(f"{lit(j + t, ab)}: {fn} = {v};" for t, v in
                                               enumerate(values[j:j + ROM_PER_LINE])))
        lines += [f"        default: {fn} = {lit(0, w)};", "    endcase", "endfunction",
                  f"integer {k};"]
        m.body.lines = []
        loads: list[str] = []
        mems: list[str] = []
        primitives: list[str] = []
        lag, en = (2 if m.s.rom_outreg else 1), m.control.en
        for j in range(0, len(table_ports), ports):
            mem = m.names.fresh(f"{name}_m")
            group = [(_port_addr(m, port, lag, ab), rams.rom_q[port[0]])
                     for port in table_ports[j:j + ports]]
            mems += [f"(* ram_style = \"block\" *) reg {rng(w)}{mem} [0:{n - 1}];",
                     f"initial for ({k} = 0; {k} < {n}; {k} = {k} + 1) "
                     f"{mem}[{k}] = {fn}({k}[{ab - 1}:0]);"]
            if m.s.rom_outreg:  # through the RAM's output register: a latch, then it
                from kera.rtl.bram import dp16kd_rom_lines

                words = [int(g.nodes[e].attr("value")) for e in elems]
                primitives += dp16kd_rom_lines(mem, words, w, ab, group, en)
                loads += [f"    if ({en}) begin {q}_l <= {mem}[{a}]; {q} <= {q}_l; end"
                          for a, q in group]
            else:
                loads += [f"    if ({en}) {q} <= {mem}[{a}];" for a, q in group]
        behavioural = [*mems, "always @(posedge clk) begin", *loads, "end"]
        if m.s.rom_outreg:
            lines += [*m.body.lines, "`ifdef SYNTHESIS", *primitives, "`else", *behavioural,
                      "`endif"]
        else:
            lines += [*mems, *m.body.lines, *behavioural[len(mems):]]
    return lines


__all__ = ["ROM_PER_LINE", "Rams", "bram_plans", "declarations", "ram_lines", "read_wire",
           "rom_lines"]
