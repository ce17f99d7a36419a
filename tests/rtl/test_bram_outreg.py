"""ECP5 block RAM reads through the RAM's output register (``MemPlan.outreg``).

At 150 MHz a DP16KD read without its output register (5.83 ns from the clock) does not fit the
period, which refused delay_line and histogram; the plan then reads through the output register
(address two stages before the data) and ``kera.rtl.bram`` instantiates the primitive under
``ifdef SYNTHESIS``. Both texts are simulated against the interpreter: the behavioural one, and
the primitive one with a model of the DP16KD that reads junk when a write hits the word it
reads at the same edge (the emitter must forward that write), with backpressure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kera import _api, load
from kera.hls.resources import estimate
from kera.hls.synth import plan_schedule
from kera.hls.timing import CostModel
from kera.rtl import emit_verilog
from kera.sim.runner import simulate
from tests.conftest import ecp5_cells, needs_verilator, needs_yosys

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _rows(name: str, n: int = 400) -> list[dict]:
    lines = (EXAMPLES / f"{name}.vectors.jsonl").read_text().splitlines()
    return [json.loads(x)["inputs"] for x in lines[:n] if x.strip()]


def _plan(name: str, mhz: float):  # noqa: ANN202
    loaded = load(EXAMPLES / f"{name}.kera")
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=mhz)
    return loaded, s


@pytest.mark.parametrize("name", ["delay_line", "histogram"])
def test_fast_clock_reads_through_the_output_register(name: str) -> None:
    _, s = _plan(name, 150)
    assert s.state is not None
    (m,) = s.state.mems
    assert m.mapped_to == "bram" and m.outreg and m.blocks == 1
    g = s.graph
    addr = g.nodes[m.ports.read].inputs[1]
    assert s.stage[m.ports.read] - s.stage[addr] >= 2  # registered twice before the data
    assert any("output register" in n for n in s.notes)  # the report says so
    _, slow = _plan(name, 25)  # the plain read fits: no output register, one stage
    assert slow.state is not None and not slow.state.mems[0].outreg
    assert not any("output register" in n for n in slow.notes)


def test_primitive_is_emitted_under_synthesis_only() -> None:
    _, s = _plan("histogram", 150)
    v = emit_verilog(s, board="ulx3s", version="test")
    assert v == emit_verilog(s, board="ulx3s", version="test")
    assert v.count("DP16KD #(") == 1 and '.REGMODE_B("OUTREG")' in v
    assert ".CEB(en), .OCEB(en)" in v
    head, _, rest = v.partition("DP16KD #(")
    assert head.rstrip().endswith("`ifdef SYNTHESIS") is False  # the port wires come first
    assert head.rfind("`ifdef SYNTHESIS") > head.rfind("`endif")  # inside the branch


@needs_verilator
@pytest.mark.parametrize("name", ["delay_line", "histogram"])
def test_behavioural_text_is_exact(name: str) -> None:
    loaded = load(EXAMPLES / f"{name}.kera")
    sim = _api.simulate(loaded, _rows(name), board="ulx3s", clock_mhz=150, backpressure=True)
    assert sim.passed and sim.schedule.state.mems[0].outreg


def dp16kd_model() -> str:
    """A model of what the instance asks of the DP16KD (Lattice TN1264): both ports of one
    shape, ``DATA_WIDTH`` 18, 9, 4, 2 or 1 bits at 1024 ... 16384 words, the word address on
    the pins above the shape's low ones (yosys's mapping: ``AD13..AD4`` at 18 bits down to
    ``AD13..AD0`` at 1), data from pin 0, the initial words from ``INITVAL_xx`` (18 bits in
    each 20-bit slot, 16 words a row, at 18 bits); port A writes on CEA & WEA or reads, port
    B reads, each into its latch on CE and its output register on OCE (``REGMODE_x =
    "OUTREG"``); a read of the word port A writes at the same edge is undefined, modelled
    as a junk word."""
    ins = [f"DI{p}{k}" for p in "AB" for k in range(18)]
    ins += [f"AD{p}{k}" for p in "AB" for k in range(14)]
    ins += [f"{s}{p}" for p in "AB" for s in ("CE", "OCE", "CLK", "WE", "RST")]
    ins += [f"CS{p}{k}" for p in "AB" for k in range(3)]
    outs = [f"DO{p}{k}" for p in "AB" for k in range(18)]

    def bus(prefix: str, n: int) -> str:
        return "{" + ", ".join(f"{prefix}{k}" for k in reversed(range(n))) + "}"

    lines = ["/* verilator lint_off WIDTHEXPAND */", f"module DP16KD({', '.join(ins + outs)});",
             *(f"  input {p};" for p in ins), *(f"  output {p};" for p in outs)]
    for p, d in (("DATA_WIDTH_A", "18"), ("DATA_WIDTH_B", "18"), ("REGMODE_A", '"NOREG"'),
                 ("REGMODE_B", '"NOREG"'), ("WRITEMODE_A", '"NORMAL"'),
                 ("WRITEMODE_B", '"NORMAL"'), ("CSDECODE_A", '"0b000"'),
                 ("CSDECODE_B", '"0b000"'), ("GSR", '"ENABLED"'), ("RESETMODE", '"SYNC"')):
        lines.append(f"  parameter {p} = {d};")
    lines += [f"  parameter [319:0] INITVAL_{r:02X} = 320'h0;" for r in range(64)]
    lines += ["  localparam LOW = DATA_WIDTH_A == 18 ? 4 : DATA_WIDTH_A == 9 ? 3 : "
              "DATA_WIDTH_A == 4 ? 2 : DATA_WIDTH_A == 2 ? 1 : 0;",
              "  localparam [17:0] MASK = (18'd1 << DATA_WIDTH_A) - 18'd1;",
              "  reg [17:0] mem [0:16383];",
              f"  wire [13:0] aa = {bus('ADA', 14)} >> LOW;",
              f"  wire [13:0] ab = {bus('ADB', 14)} >> LOW;",
              f"  wire [17:0] dia = {bus('DIA', 18)} & MASK;",
              "  reg [17:0] latch, oreg, latch_a, oreg_a;",
              "  integer i;",
              "  initial for (i = 0; i < 16; i = i + 1) begin",
              *(f"    mem[{16 * r} + i] = INITVAL_{r:02X}[i * 20 +: 18];" for r in range(64)),
              "  end",
              "  always @(posedge CLKA) if (CEA & WEA) mem[aa] <= dia;",
              "  always @(posedge CLKA) if (CEA & ~WEA) latch_a <= mem[aa];",
              "  always @(posedge CLKA) if (OCEA) oreg_a <= latch_a;",
              "  always @(posedge CLKB) if (CEB) latch <= (CEA & WEA & aa == ab) ? 18'h2a5a5 "
              "& MASK : mem[ab];",
              "  always @(posedge CLKB) if (OCEB) oreg <= latch;",
              '  wire [17:0] dob = (REGMODE_B == "OUTREG") ? oreg : latch;',
              f"  assign {bus('DOB', 18)} = dob;",
              f"  assign {bus('DOA', 18)} = (REGMODE_A == \"OUTREG\") ? oreg_a : latch_a;",
              "endmodule"]
    return "\n".join(lines) + "\n"


@needs_verilator
@pytest.mark.parametrize("name", ["delay_line", "histogram"])
def test_primitive_branch_is_exact_with_a_model_of_the_ram(name: str, tmp_path: Path) -> None:
    """The text yosys reads (``SYNTHESIS`` defined), the DP16KD modelled: the same values at
    the same cycles as the interpreter, and with backpressure (CEB/OCEB hold the read)."""
    _, s = _plan(name, 150)
    v = emit_verilog(s, board="ulx3s", version="test")
    text = "`define SYNTHESIS\n/* verilator lint_off PINMISSING */\n" + v + \
        "\n/* verilator lint_off UNUSEDSIGNAL */\n" + \
        dp16kd_model()
    rows = _rows(name)
    for backpressure in (False, True):
        result = simulate(s, rows, verilog=text, board="ulx3s", backpressure=backpressure,
                          build_dir=tmp_path / f"build{int(backpressure)}")
        assert result.passed


@needs_verilator
@pytest.mark.parametrize(("hit", "delay"), [("hf", 1), ("hg", 2), ("hh", 3)])
def test_each_forwarded_write_is_needed(hit: str, delay: int, tmp_path: Path) -> None:
    """delay_line (II 1, written in the stage its data arrives; the RAM writes the registered
    write an edge late): a read `delay` transfers back finds the word written at the output
    register's edge (1), at the capture edge (2, the model's junk word) or an edge before (3,
    not yet in the RAM). With that forward taken out the primitive text gives wrong values,
    so the test above can fail."""
    _, s = _plan("delay_line", 150)
    v = emit_verilog(s, board="ulx3s", version="test")
    valid = {"hf": "we", "hg": "fv", "hh": "gv"}[hit]
    cut = v.replace(f"wire mem_buf_{hit}_d = mem_buf_{valid} & ",
                    f"wire mem_buf_{hit}_d = 1'b0 & ")
    assert cut != v
    rows = [{"x": 100 + k, "delay": delay} for k in range(16)]
    for text, ok in ((v, True), (cut, False)):
        full = "`define SYNTHESIS\n/* verilator lint_off PINMISSING */\n" + text + \
            "\n/* verilator lint_off UNUSEDSIGNAL */\n" + dp16kd_model()
        result = simulate(s, rows, verilog=full, board="ulx3s",
                          build_dir=tmp_path / f"b{int(ok)}")
        assert result.passed is ok


DEEP = """// A delay line of {words} x {elem} words (delay_line's shape, deeper).
#[top]
pub fn deep(x: {elem}, delay: {ptr}) -> {elem} {{
    mem buf: [{elem}; {words}] = [0; {words}];
    reg ptr: {ptr} = 0;
    buf[ptr] = x;
    let y = buf[ptr - delay];
    ptr = ptr + 1;
    y
}}
"""


@needs_verilator
@pytest.mark.parametrize(("words", "elem", "ptr", "shape"),
                         [(2048, "i16", "u11", 9), (8192, "u3", "u13", 2)])
def test_deeper_memories_take_narrower_shapes(words: int, elem: str, ptr: str, shape: int,
                                              tmp_path: Path) -> None:
    """2048 words take the 2048 x 9 shape (two side by side for 16 bits), 8192 the 8192 x 2
    (two for 3 bits): the primitive text with the model gives the interpreter's values."""
    src = tmp_path / "deep.kera"
    src.write_text(DEEP.format(words=words, elem=elem, ptr=ptr), encoding="utf-8")
    loaded = load(src)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)
    assert s.state is not None
    (m,) = s.state.mems
    assert m.mapped_to == "bram" and m.outreg and m.blocks == 2
    v = emit_verilog(s, board="ulx3s", version="test")
    assert v.count(f".DATA_WIDTH_A({shape}), .DATA_WIDTH_B({shape})") == 2
    full = "`define SYNTHESIS\n/* verilator lint_off PINMISSING */\n" + v + \
        "\n/* verilator lint_off UNUSEDSIGNAL */\n" + dp16kd_model()
    rows = [{"x": (37 * k) % 7 - (3 if elem == "i16" else 0), "delay": d}
            for k, d in enumerate([0, 1, 2, 3, 5, 1, 0, words - 1, 2, 1] * 6)]
    result = simulate(s, rows, verilog=full, board="ulx3s", build_dir=tmp_path / "b")
    assert result.passed


GUARDED = """// A guarded write to a few words, a read of others.
#[top]
pub fn guarded(x: u16, a: u8, b: u8) -> u16 {
    mem m: [u16; 256] = [0; 256];
    let y = m[b];
    if (x & 1) == 1 {
        m[a] = x;
    }
    y
}
"""


@needs_verilator
@pytest.mark.parametrize("case", ["guarded", "histogram_ii2"])
def test_guarded_writes_and_ii_2_through_the_output_register(case: str, tmp_path: Path) -> None:
    """A write under a condition (its guard in the write enable and the forwards) and
    histogram at II 2 (registers shared on the modulo circle): the primitive text with the
    model, with back-pressure, on addresses that collide often."""
    src = tmp_path / f"{case}.kera"
    if case == "guarded":
        src.write_text(GUARDED, encoding="utf-8")
        rows = [{"x": (97 * k) % 65536, "a": k % 3, "b": (k // 2) % 3} for k in range(200)]
    else:
        text = (EXAMPLES / "histogram.kera").read_text()
        src.write_text(text.replace("#[top]", "#[top]\n#[pipeline(ii = 2)]"), encoding="utf-8")
        rows = [{"bin": k % 3, "clear": k % 11 == 5} for k in range(200)]
    loaded = load(src)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)
    assert s.state is not None and s.state.mems[0].outreg
    assert s.ii == (2 if case == "histogram_ii2" else 1)
    v = emit_verilog(s, board="ulx3s", version="test")
    full = "`define SYNTHESIS\n/* verilator lint_off PINMISSING */\n" + v + \
        "\n/* verilator lint_off UNUSEDSIGNAL */\n" + dp16kd_model()
    result = simulate(s, rows, verilog=full, board="ulx3s", backpressure=True,
                      build_dir=tmp_path / "b")
    assert result.passed


@needs_verilator
def test_rom_reads_through_the_output_register(tmp_path: Path) -> None:
    """ECP5 at 150 MHz: a ROM read (5.3 ns from the clock without its output register) goes
    through the output register where it fits, the index two stages before the data, both
    ports of one DP16KD initialised from the table: the primitive text with the model of
    the RAM gives the interpreter's values, with back-pressure; the behavioural text too."""
    loaded = load(ROOT / "tests" / "opt" / "kernels" / "sbox_chain.kera")
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)
    assert s.roms and s.rom_outreg
    g = s.graph
    for r in s.roms:
        assert s.stage[r] - s.stage[g.nodes[r].inputs[1]] >= 2
    v = emit_verilog(s, board="ulx3s", version="test")
    assert v.count("DP16KD #(") == 1 and '.REGMODE_A("OUTREG"), .REGMODE_B("OUTREG")' in v
    full = "`define SYNTHESIS\n/* verilator lint_off PINMISSING */\n" + v + \
        "\n/* verilator lint_off UNUSEDSIGNAL */\n" + dp16kd_model()
    rows = [{"a": (k * 7) % 64, "b": (k * 13 + 5) % 64} for k in range(120)]
    for text, name in ((full, "primitive"), (None, "behavioural")):
        result = simulate(s, rows, verilog=text, board="ulx3s", backpressure=True,
                          build_dir=tmp_path / name)
        assert result.passed, name
    slow, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s")  # the plain read
    assert slow.roms and not slow.rom_outreg


@needs_yosys
def test_yosys_keeps_the_instance(tmp_path: Path) -> None:
    """synth_ecp5 maps the instance as given: one DP16KD with its output register, no other
    memory, no read-old-data emulation (its flip-flops are the forwarding registers)."""
    loaded = load(EXAMPLES / "histogram.kera")
    s, _, model = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)
    cells = ecp5_cells(emit_verilog(s, board="ulx3s", version="test"), "histogram", tmp_path)
    rams = [c for c in cells.values() if c["type"] == "DP16KD"]
    assert len(rams) == 1 and rams[0]["parameters"]["REGMODE_B"] == "OUTREG"
    ffs = sum(1 for c in cells.values() if c["type"] == "TRELLIS_FF")
    est = estimate(s, CostModel(model)).total
    assert abs(ffs - est["ff"]) <= 0.05 * est["ff"], (ffs, est["ff"])
    luts = sum(1 for c in cells.values() if c["type"] == "LUT4")
    carry = sum(1 for c in cells.values() if c["type"] == "CCU2C")
    assert abs(luts + 2 * carry - est["lut"] - 2 * est["carry"]) <= 0.25 * (
        est["lut"] + 2 * est["carry"]), (luts, carry, est)
