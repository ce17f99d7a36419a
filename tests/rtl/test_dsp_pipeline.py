"""Pipelined DSP multiplies: a DSP multiply slower than the period uses the DSP's own registers.

On ECP5 at 150 MHz a combinational MULT18X18D (5.5 ns) misses the period; the scheduler makes it
a two-stage op (``kera.hls.schedule.pipeline_dsps``) and ``kera.rtl`` instantiates the primitive
with its input and output registers under ``ifdef SYNTHESIS`` (``kera.rtl.dsp``). Both texts of
the module are simulated against the interpreter: the behavioural one as every simulator reads
it, and the primitive one with a model of the MULT18X18D's registered multiply.
"""

from __future__ import annotations

from pathlib import Path

from kera import _api, load
from kera.hls.synth import plan_schedule
from kera.rtl import emit_verilog
from kera.sim.runner import simulate
from tests.conftest import ecp5_cells, needs_verilator, needs_yosys

#: Unsigned 8-bit products in u17 (17-bit wrapping `mul`s), signed i8 ones in i32 (16-bit
#: `mul`s) and i16 ones in i32 (32-bit `mul`s of 16 significant bits: one 18 x 18 product).
MAT2 = """#[top]
pub fn mat2(a: [[u8; 2]; 2], b: [[u8; 2]; 2], x: [i8; 2], y: [i8; 2], p: [i16; 2],
            q: [i16; 2]) -> ([[u17; 2]; 2], i32, i32) {
    let mut c = [[0u17; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            for k in 0..2 {
                c[i][j] += (a[i][k] as u17) * (b[k][j] as u17);
            }
        }
    }
    let mut d = 0i32;
    for i in 0..2 {
        d += (x[i] as i32) * (y[i] as i32);
    }
    let mut e = 0i32;
    for i in 0..2 {
        e += (p[i] as i32) * (q[i] as i32);
    }
    (c, d, e)
}
"""


def _design(tmp_path: Path):  # noqa: ANN202
    src = tmp_path / "mat2.kera"
    src.write_text(MAT2, encoding="utf-8")
    return load(src)


def _rows() -> list[dict]:
    edges8 = [0, 1, 255, 128, 77, 200]
    signed = [0, 1, -1, 127, -128, -77]
    wide = [0, 1, -1, 32767, -32768, -12345]
    rows = []
    for k in range(14):
        a = [[edges8[(k + i + j) % 6] for j in range(2)] for i in range(2)]
        b = [[edges8[(3 * k + 2 * i + j + 1) % 6] for j in range(2)] for i in range(2)]
        x = [signed[(k + i) % 6] for i in range(2)]
        y = [signed[(2 * k + i + 3) % 6] for i in range(2)]
        p = [wide[(k + 2 * i) % 6] for i in range(2)]
        q = [wide[(3 * k + i + 1) % 6] for i in range(2)]
        rows.append({"a": a, "b": b, "x": x, "y": y, "p": p, "q": q})
    return rows


def test_slow_dsp_multiplies_take_two_stages_on_ecp5(tmp_path: Path) -> None:
    loaded = _design(tmp_path)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)
    g = s.graph
    muls = [n for n in g.nodes.values() if n.op == "mul"]
    assert len(muls) == 12 and s.pipelined == frozenset(n.id for n in muls)
    users = {n: [u for u in g.nodes.values() if n in u.inputs] for n in s.pipelined}
    for m in muls:  # registered operands, alone in its stage, a registered product
        assert all(s.stage[i] < s.stage[m.id] for i in m.inputs if g.nodes[i].op != "const")
        assert all(s.stage[u.id] > s.stage[m.id] for u in users[m.id])
    assert s.latency == 3
    # at a clock the combinational DSP meets, nothing is pipelined
    slow, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=100)
    assert not slow.pipelined


def test_ice40_has_no_pipelined_dsp(tmp_path: Path) -> None:
    """nextpnr-ice40 times an SB_MAC16 with placeholders: no pipelined DSP is offered there."""
    loaded = _design(tmp_path)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="icebreaker", clock_mhz=12)
    assert not s.pipelined


def test_primitive_is_emitted_under_synthesis_only(tmp_path: Path) -> None:
    loaded = _design(tmp_path)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)
    v = emit_verilog(s, board="ulx3s", version="test")
    assert v == emit_verilog(s, board="ulx3s", version="test")  # deterministic
    assert v.count("MULT18X18D #(") == 12 and v.count("`ifdef SYNTHESIS") == 24
    assert v.count('.REG_INPUTA_CLK("CLK0"), .REG_INPUTB_CLK("CLK0"), '
                   '.REG_OUTPUT_CLK("CLK0")') == 12
    assert v.count(".SIGNEDA(1'b0)") == 8 and v.count(".SIGNEDA(1'b1)") == 4
    assert v.count(".CE0(en)") == 12


@needs_verilator
def test_pipelined_dsp_is_exact_in_simulation(tmp_path: Path) -> None:
    loaded = _design(tmp_path)
    rows = _rows()
    sim = _api.simulate(loaded, rows, board="ulx3s", clock_mhz=150, backpressure=True)
    assert sim.passed and sim.schedule.pipelined and sim.result.latency_observed == 3


def mult18x18d_model() -> str:
    """A model of the MULT18X18D's multiply with registers on CLK0/CE0 (no reset, no cascade):
    what the emitted instance asks of the primitive (Lattice's ECP5 sysDSP usage guide)."""
    ins = [f"A{k}" for k in range(18)] + [f"B{k}" for k in range(18)] + [
        f"C{k}" for k in range(18)]
    ins += ["SIGNEDA", "SIGNEDB", "SOURCEA", "SOURCEB", *(f"CLK{k}" for k in range(4)),
            *(f"CE{k}" for k in range(4)), *(f"RST{k}" for k in range(4))]
    outs = [f"P{k}" for k in range(36)]
    a = "{" + ", ".join(f"A{k}" for k in reversed(range(18))) + "}"
    b = "{" + ", ".join(f"B{k}" for k in reversed(range(18))) + "}"
    lines = [f"module MULT18X18D({', '.join(ins + outs)});",
             *(f"  input {p};" for p in ins), *(f"  output {p};" for p in outs)]
    for p in ("REG_INPUTA_CLK", "REG_INPUTB_CLK", "REG_OUTPUT_CLK"):
        lines.append(f'  parameter {p} = "NONE";')
    lines += ['  parameter GSR = "ENABLED";', '  parameter RESETMODE = "SYNC";',
              f"  wire [17:0] a = {a};", f"  wire [17:0] b = {b};",
              "  reg [17:0] ra, rb; reg [35:0] rp;",
              '  wire [17:0] ia = (REG_INPUTA_CLK == "NONE") ? a : ra;',
              '  wire [17:0] ib = (REG_INPUTB_CLK == "NONE") ? b : rb;',
              "  wire [35:0] xa = {{18{SIGNEDA & ia[17]}}, ia};",
              "  wire [35:0] xb = {{18{SIGNEDB & ib[17]}}, ib};",
              "  wire [35:0] prod = xa * xb;",
              "  always @(posedge CLK0) if (CE0) begin ra <= a; rb <= b; rp <= prod; end",
              '  wire [35:0] p = (REG_OUTPUT_CLK == "NONE") ? prod : rp;',
              "  assign {" + ", ".join(outs[::-1]) + "} = p;",
              "  wire unused = &{1'b0, C0, SOURCEA, SOURCEB, CLK1, CLK2, CLK3, CE1, CE2, CE3,",
              "                  RST0, RST1, RST2, RST3, 1'b0};",
              "endmodule"]
    return "\n".join(lines) + "\n"


@needs_verilator
def test_primitive_branch_is_exact_with_a_model_of_the_dsp(tmp_path: Path) -> None:
    """The text yosys reads (``SYNTHESIS`` defined), the MULT18X18D modelled: the same values
    at the same cycles as the interpreter, with backpressure (the DSP's CE holds it)."""
    loaded = _design(tmp_path)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)
    v = emit_verilog(s, board="ulx3s", version="test")
    text = "`define SYNTHESIS\n" + v + "\n/* verilator lint_off UNUSEDSIGNAL */\n" + \
        mult18x18d_model()
    result = simulate(s, _rows(), verilog=text, board="ulx3s", backpressure=True,
                      build_dir=tmp_path / "build")
    assert result.passed and result.latency_observed == 3


@needs_yosys
def test_yosys_keeps_the_dsp_registers(tmp_path: Path) -> None:
    """synth_ecp5 maps the instances as given: 12 MULT18X18D, input and output registers on
    CLK0, and no fabric flip-flop for the products or the operands only the DSPs read."""
    loaded = _design(tmp_path)
    s, _, _ = plan_schedule(loaded.graph, loaded.top, board="ulx3s", clock_mhz=150)
    cells = ecp5_cells(emit_verilog(s, board="ulx3s", version="test"), "mat2", tmp_path)
    dsps = [c for c in cells.values() if c["type"] == "MULT18X18D"]
    assert len(dsps) == 12
    for c in dsps:
        p = c["parameters"]
        assert (p["REG_INPUTA_CLK"], p["REG_INPUTB_CLK"], p["REG_OUTPUT_CLK"]) == \
            ("CLK0", "CLK0", "CLK0")
    ffs = sum(1 for c in cells.values() if c["type"] == "TRELLIS_FF")
    assert ffs <= 3 + 68 + 64  # valid bits and the result bank; no operand or product bank
