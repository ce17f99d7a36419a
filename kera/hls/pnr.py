"""Measured place-and-route: run yosys + nextpnr on the emitted Verilog, out of context.

The core is wrapped in a serial shell (TOOLS.md): every input bit comes from a shift register
fed by one pin, and the result is captured into a loadable shift register read out by one pin,
so the core's port count never limits a small device. The shell's own cost (one flip-flop per
input and output bit, one LUT per output bit for the load/shift mux) is measured separately —
by placing the shell around a core that is only wires — and subtracted, and both figures are
reported. Fmax is nextpnr's, median over three seeds (the flow of ``kera.hls.characterize``).
The core's reset and handshake are driven from pins and its ``out_valid``/``in_ready`` read
(``SHELL_VERSION``), so the core keeps what a system around it makes it keep.
"""

from __future__ import annotations

import re
from typing import Any

from kera import progress
from kera.diagnostics import ExitCode, KeraError
from kera.hls.characterize.designs import Design, Point
from kera.hls.characterize.tools import FLOWS, SEEDS, measure, tool_versions

SHELL = "top"  # the characterisation flow synthesises the module named `top`
#: Version of the shell (and its pass-through reference): 3 drives the core's reset and
#: handshake from pins and observes ``out_valid`` and ``in_ready``, as a real system does, so
#: yosys keeps the valid bits, the reset's flip-flops and the stall logic a design has (tied,
#: it trimmed them: biquad_q14 placed 49 FFs of its 81). Measurements of another version are
#: not comparable (``benchmarks/qor.py`` keys its cache by it).
SHELL_VERSION = 3


def shell_verilog(core: str, module: str, inputs: list[tuple[str, int]], out_bits: int) -> str:
    """Return the core's Verilog followed by the serial shell module ``top`` around it.

    Every input bit comes from the shift register ``sr`` (pin ``si``, enable ``en``), the
    result is loaded into the output shift register ``r`` (pin ``ld``) and read out on ``so``;
    ``rst``, ``in_valid`` and ``out_ready`` are pins, and ``out_valid`` and ``in_ready`` are
    registered and xored into ``so``, so that no port of the core is constant or unread."""
    if module == SHELL:
        core = core.replace(f"module {SHELL}(", "module kera_core_top(", 1)
        module = "kera_core_top"
    in_bits = sum(w for _, w in inputs)
    lines = [core, "", "module top(input clk, input en, input si, input ld, input rst, "
             "input iv, input ordy, output so);"]
    shift_in = "si" if in_bits == 1 else f"{{sr[{in_bits - 2}:0], si}}"
    lines += [f"  reg [{in_bits - 1}:0] sr;", f"  always @(posedge clk) if (en) sr <= {shift_in};"]
    ports, lo = [], 0
    for name, width in inputs:
        ports.append(f".{name}(sr[{lo + width - 1}:{lo}])")
        lo += width
    lines.append(f"  wire [{out_bits - 1}:0] y;")
    lines.append("  wire ov, ir;")
    lines.append(
        f"  {module} core(.clk(clk), .rst(rst), .in_valid(iv), .in_ready(ir), "
        + ", ".join(ports)
        + ", .out_valid(ov), .out_ready(ordy), .out(y));"
    )
    shift_out = "1'b0" if out_bits == 1 else f"{{r[{out_bits - 2}:0], 1'b0}}"
    lines += [
        f"  reg [{out_bits - 1}:0] r;",
        "  reg hs;",
        f"  always @(posedge clk) r <= ld ? y : {shift_out};",
        "  always @(posedge clk) hs <= ov ^ ir;",
        f"  assign so = r[{out_bits - 1}] ^ hs;",
        "endmodule",
        "",
    ]
    return "\n".join(lines)


def const_outputs(schedule: Any, model: Any) -> list[list[int]]:
    """Return ``[bit, value]`` of each output bit the graph proves constant (the tool
    network's known bits of the result: ``popcount32``'s 26 top bits are 0)."""
    from kera.hls.timing import CostModel

    graph = schedule.graph
    bits = CostModel(model).network(graph).bits[graph.regions[schedule.region].result]
    return [[i, int(b[1])] for i, b in enumerate(bits) if not b[0]]


def _passthrough(inputs: list[tuple[str, int]], out_bits: int,
                 consts: list[list[int]] | None = None) -> str:
    """A core that only wires its packed inputs to its output: the shell's cost reference.

    Output bit ``i`` is input bit ``i mod IW``: where the output is wider than the input the
    inputs repeat, so every output bit is variable and has its shell multiplexer (``r <= ld ?
    y : r << 1``, a LUT), as a design's variable output bits have. Zeros there would make
    those bits flip-flop resets (no LUT), and the design's figures minus the reference's
    would count OW - IW shell LUTs as the core's (gray: 8 in, 16 out: 40 - 8 = 32 LUT4 for a
    core that yosys builds with 24 on its own). Its handshake passes through (``out_valid =
    in_valid``, ``in_ready = out_ready``), so the shell's observing xor is a LUT here too.
    The output bits ``consts`` (``[bit, value]``) are those constants, as the design's are:
    the shell's output register needs no multiplexer for them (yosys makes ``r <= ld ? 0 :
    r_prev`` a flip-flop's reset) in the design and in the reference alike."""
    in_bits = sum(w for _, w in inputs)
    ports = ", ".join(f"input [{w - 1}:0] {n}" for n, w in inputs)
    packed = "{" + ", ".join(n for n, _ in reversed(inputs)) + "}"
    copies = -(-out_bits // max(1, in_bits))
    wide = f"{{{copies}{{{packed}}}}}" if copies > 1 else packed
    known = {i: v for i, v in consts or ()}
    out = f"all[{out_bits - 1}:0]" if not known else "{" + ", ".join(
        f"1'b{known[i]}" if i in known else f"all[{i}]" for i in reversed(range(out_bits))) + "}"
    return "\n".join([
        "module kera_shell_ref(input clk, input rst, input in_valid, output in_ready, "
        f"{ports}, output out_valid, input out_ready, output [{out_bits - 1}:0] out);",
        f"  wire [{copies * in_bits - 1}:0] all = {wide};",
        f"  assign out = {out}; assign in_ready = out_ready; assign out_valid = in_valid;",
        "endmodule",
    ])


def core_figures(full: dict[str, Any], shell: dict[str, Any], in_bits: int, out_bits: int,
                 core_lines: int | None = None) -> dict[str, int]:
    """The core's LUTs, carries, DSPs and flip-flops from the shelled design and its reference.

    LUTs, carries and DSPs: the design's minus the pass-through shell's. Flip-flops: those of
    the design whose ``top.v`` line is in the core (its first ``core_lines`` lines; no line:
    counted as the core's), where the measurement has them (``ff_lines``); else the design's
    minus IW + OW (TOOLS.md). Never the reference's: yosys trims the shell's unread top input
    bits in the reference and, where the core reads only some input bits, in the design too.
    """
    out = {k: max(0, int(full[k]) - int(shell[k])) for k in ("lut", "carry", "dsp")}
    if core_lines is not None and "ff_lines" in full:
        out["ff"] = sum(n for line, n in full["ff_lines"] if line <= core_lines)
    else:
        out["ff"] = max(0, int(full["ff"]) - in_bits - out_bits)
    return out


#: Block RAM primitives yosys maps memories to (iCE40, ECP5).
RAM_CELLS = ("SB_RAM40_4K", "DP16KD", "PDPW16KD")


def measure_core(verilog: str, module: str, inputs: list[tuple[str, int]], out_bits: int,
                 family: str, seeds: tuple[int, ...] = SEEDS,
                 consts: list[list[int]] | None = None) -> dict[str, Any]:
    """Place and route ``module`` (in ``verilog``) for ``family``; return the core's figures.

    Fmax is the median over ``seeds``; ``path_sources`` are the ``top.v`` spans of the worst
    path's nets (the core comes first in ``top.v``, so its line numbers are ``verilog``'s).
    ``consts``: the output bits the core holds constant (``const_outputs``), which the
    reference holds too.
    """
    flow = FLOWS.get(family)
    if flow is None:
        raise KeraError(f"no open place-and-route flow for family `{family}` here "
                        f"(available: {', '.join(sorted(FLOWS))})",
                        exit_code=ExitCode.TOOL)
    point = Point("design", sum(w for _, w in inputs))
    in_bits = sum(w for _, w in inputs)
    try:
        with progress.task(f"place and route of `{module}` ({family}, yosys + nextpnr, "
                           f"{len(seeds)} seed{'s' * (len(seeds) != 1)})"):
            full = measure(flow, Design(point, shell_verilog(verilog, module, inputs, out_bits),
                                        in_bits, out_bits), seeds=seeds)
            ref = measure(flow, Design(point, shell_verilog(_passthrough(inputs, out_bits,
                                                                         consts),
                                                            "kera_shell_ref", inputs, out_bits),
                                       in_bits, out_bits), seeds=(1,))
    except RuntimeError as e:
        raise tool_failure(str(e), family) from None
    versions = tool_versions(flow)
    core = core_figures(full, ref, in_bits, out_bits, len(verilog.splitlines()))
    rams = {c: n for c, n in full.get("cells", {}).items() if c in RAM_CELLS}
    return {
        **core,
        "bram": sum(rams.values()),  # block RAM cells in yosys's netlist (STATE.md's `mem`)
        "ram_cells": rams,
        "pnr_used": {k: v for k, v in full.get("pnr_used", {}).items() if "RAM" in k},
        "fmax_mhz": full["fmax_mhz"],
        "periods_ns": full["periods_ns"],
        "critical_path_ns": full["path_ns"],
        "path_sources": list(full.get("path_sources", [])),
        "shell": {k: ref[k] for k in ("lut", "ff", "carry", "dsp")},
        "with_shell": {k: full[k] for k in ("lut", "ff", "carry", "dsp")},
        "tool": f"{versions['yosys']}; {versions['nextpnr']}",
        "seconds": round(full["seconds"] + ref["seconds"], 2),
    }


def tool_failure(said: str, family: str) -> KeraError:
    """Return the one-line error for a failed yosys/nextpnr run: what it said, what to do.

    A design that needs more cells of a kind than the device has (nextpnr: "no BELs
    remaining", "Unable to place", "Failed to expand region ... of N ICESTORM_LCs", the
    iCE40 placer's words for more logic cells than the die's) is the user's design (exit 1);
    any other failure is the tool's (exit 3).
    """
    found = re.search(r"cell type '?(\w+)", said) or re.search(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b",
                                                              said)
    cell = found.group(1) if found else None
    tool, _, rest = said.partition(": ")
    errors = [part for part in rest.split(" | ") if "ERROR" in part]
    if errors:  # the tool's own error lines, long generated cell names shortened
        said = f"{tool}: " + "; ".join(re.sub(r"cell '[^']{24,}'", "cell '...'", e) for e in errors)
    region = re.search(r"Failed to expand region .* of (\d+) (\w+?)s?\b", said)
    if "no BELs remaining" in said or "Unable to place" in said or region:
        kind = f"more {cell} cells" if cell else "more cells of one kind"
        if region:  # nextpnr-ice40's placer: more logic cells than the die has
            kind = f"{region.group(1)} {region.group(2)} cells, more"
        return KeraError(f"place and route failed: the design needs {kind} than the "
                         f"{family} device has (the tool said: {said}); make the design smaller "
                         "(narrower operands, a larger II) or choose a board with a larger "
                         "device", exit_code=ExitCode.USER)
    return KeraError(f"place and route failed ({said}); rerun with --debug, or synthesize without "
                     "--pnr to get the estimate only", exit_code=ExitCode.TOOL)


def measure_schedule(verilog: str, schedule: Any, family: str,
                     seeds: tuple[int, ...] = SEEDS) -> dict[str, Any]:
    """Measure the emitted Verilog of a schedule (port widths from its graph's signature).

    The result's ``critical_path`` is nextpnr's worst path mapped back to the schedule
    (``path_to_schedule``).
    """
    from kera.hls.models import load_model

    params, result = schedule.graph.signature(schedule.region)
    inputs = [(name, t.flat_width) for name, t in params]
    consts = const_outputs(schedule, load_model(family))
    measured = measure_core(verilog, schedule.region, inputs, result.flat_width, family, seeds,
                            consts)
    measured["critical_path"] = path_to_schedule(verilog, measured["path_sources"], schedule)
    return measured


_STAGE = re.compile(r"^\s*// ---- (stage|bank) (\d+)")
_WIRE = re.compile(r"^\s*wire (?:\[[^\]]*\] )?(\w+) =")
_FLIP_FLOPS = ("SB_DFF", "DFFLC", "TRELLIS_FF")
_DECLARED = re.compile(r"^\s*(?:wire|reg) (?:\[[^\]]*\] )?(\w+)\b")
# The emitter names an operation's wire `n<k>` or `<variable>_<k>` (k: its position in the
# schedule's order), its helper wires `<name>_<part>` (kera.rtl.lower: a shift's range check
# `_over`, a rotate's amount `_mod` and doubled operand `_t`, a division's `_d`, `_uq`, ...),
# and `_2`, `_3` on a clash.
_HELPERS = ("over", "lt", "a", "b", "by0", "ma", "mb", "d", "uq", "q", "ur", "r", "sra", "mod",
            "t", "cnt", "at")
_ASSIGNED = re.compile(r"^\s*assign (\w+) = (\w+);")
_POSITION = re.compile(rf"(?:^n|_)(\d+)(?:_(?:{'|'.join(_HELPERS)}))?(?:_\d+)?$")


def path_to_schedule(verilog: str, spans: list[str], schedule: Any) -> list[dict[str, Any]]:
    """Map nextpnr's worst path (``top.v:LINE.COL-...`` spans, ``cell:NAME`` cells) to the schedule.

    A logic cell is ``core.<signal>_<suffixes>``: its line is the declaration of the longest
    prefix that is a signal of the core (flip-flops are skipped: yosys names one after any
    signal it drives, so its name does not tell its bank); a cell of the logic into a
    flip-flop's D input (``core.<signal>_SB_DFFE_Q_<k>_D_...``) is the declaration of the
    register it feeds, its bank's input side (a port the last bank drives, ``out``, is that
    bank's register). Each entry: ``verilog_line``;
    ``stage`` (from the emitter's ``// ---- stage N`` comments; a bank's register is
    ``stage`` N too, its input side); ``position`` of the node in the schedule's order when the
    line's wire is one operation's and its stage agrees, else None. Lines outside the stages
    (the handshake) are left out.
    """
    lines = verilog.splitlines()
    stage_at: list[int | None] = []
    declared: dict[str, int] = {}
    current: int | None = None
    for number, line in enumerate(lines, 1):
        m = _STAGE.match(line)
        if m:
            current = int(m.group(2))
        stage_at.append(current)
        d = _DECLARED.match(line)
        if d:
            declared.setdefault(d.group(1), number)
    for line in lines:  # a port driven by a bank's register (`assign out = s1_n9;`): its line
        a = _ASSIGNED.match(line)
        if a and a.group(2) in declared:
            declared.setdefault(a.group(1), declared[a.group(2)])
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for entry in spans:
        at, into_flop = _line_of(entry, declared)
        if at is None or not 1 <= at <= len(lines) or at in seen:
            continue
        stage = stage_at[at - 1]
        if stage is None:
            continue
        seen.add(at)
        if into_flop:  # the logic into a register: its bank's stage; a wire named after the
            if lines[at - 1].lstrip().startswith("wire") and stage > 0:  # register reads the
                stage -= 1  # bank before its own stage
                position = None
            else:  # the bank's register `s<N>_<wire>` holds that operation's value
                reg = _DECLARED.match(lines[at - 1])
                held = re.sub(r"^s\d+_", "", reg.group(1)) if reg else ""
                position = _position(f"wire {held} =", stage, schedule)
            out.append({"verilog_line": at, "stage": stage, "position": position})
            continue
        out.append({"verilog_line": at, "stage": stage,
                    "position": _position(lines[at - 1], stage, schedule)})
    return out


def _line_of(entry: str, declared: dict[str, int]) -> tuple[int | None, bool]:
    """Return the core's Verilog line a path entry points at (or None), and whether the entry
    is logic into a flip-flop named after the signal on that line."""
    if entry.startswith("cell:core."):
        name = entry[len("cell:core."):]
        at = min((name.find(ff) for ff in _FLIP_FLOPS if ff in name), default=-1)
        if at >= 0:  # yosys names a register after any signal it drives: no clue to its bank,
            if re.match(r"\w*?_Q(?:_\d+)?_D_", name[at:]):  # but logic into its D input is
                return declared.get(name[:at].rstrip("_")), True  # that signal's bank's
            return None, False
        parts = name.split("_")
        for k in range(len(parts), 0, -1):
            number = declared.get("_".join(parts[:k]))
            if number is not None:
                return number, False
        return None, False
    if entry.startswith("top.v:"):
        head = entry[len("top.v:"):].split(".", 1)[0]
        return (int(head) if head.isdigit() else None), False
    return None, False


def _position(line: str, stage: int | None, schedule: Any) -> int | None:
    wire = _WIRE.match(line)
    m = _POSITION.search(wire.group(1)) if wire else None
    if m is None or int(m.group(1)) >= len(schedule.order):
        return None
    k = int(m.group(1))
    return k if schedule.stage[schedule.order[k]] == stage else None
