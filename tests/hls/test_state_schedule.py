"""Modulo scheduling of stateful regions: RecMII, the chosen II, the modulo constraints."""

from __future__ import annotations

from pathlib import Path

import pytest

import kera
from kera.diagnostics import KeraError
from kera.hls.pipeline import Schedule
from tests.rtl.state_kernels import (
    ACC,
    GUARDED,
    HISTOGRAM,
    LATE,
    MAC,
    MOVING_SUM,
    PAIR,
    TINY,
    TUPLE_BOOL,
    planned,
    with_ii,
)


def check_modulo(s: Schedule) -> None:
    """Every slot writes 0 .. ii-1 stages after it is read; every edge goes forward."""
    g = s.graph
    for slot in g.regions[s.region].states:
        if slot.next == slot.read or g.nodes[slot.next].op == "const":
            continue
        delta = s.stage[slot.next] - s.stage[slot.read]
        assert 0 <= delta <= s.ii - 1, (delta, s.ii)
    for nid in s.order:
        for i in g.nodes[nid].inputs:
            if g.nodes[i].op != "const":
                assert s.stage[i] <= s.stage[nid]


def test_accumulator_runs_at_ii_1_at_the_board_clock() -> None:
    s = planned(ACC)
    assert (s.clock_mhz, s.ii, s.latency) == (12.0, 1, 1)
    assert s.state is not None
    assert (s.state.requested, s.state.rec_mii, s.state.res_mii) == (None, 1, 1)
    assert s.state.binding == "rec_mii"
    (rec,) = s.state.recurrences
    assert rec["cycles"] == 1 and [p["op"] for p in rec["path"]] == ["add"]
    assert s.graph.spans[rec["path"][0]["node"]] is not None
    check_modulo(s)


def test_a_multiply_add_loop_sets_rec_mii() -> None:
    s = planned(MAC, 30)
    assert s.state is not None and s.state.rec_mii == 2 and s.ii == 2
    assert [p["op"] for p in s.state.recurrences[0]["path"]] == ["mul", "add"]
    check_modulo(s)
    assert planned(MAC, 12).ii == 1  # the same loop fits one cycle at 12 MHz


def test_a_next_value_that_does_not_read_its_state_delays_the_read() -> None:
    s = planned(LATE, 30)
    assert s.ii == 1 and s.latency >= 3
    assert s.state is not None and s.state.recurrences == ()
    read = s.graph.regions[s.region].states[0].read
    assert s.stage[read] == s.latency - 1  # held back to the stage that writes it
    check_modulo(s)


@pytest.mark.parametrize("text", [ACC, MAC, LATE, MOVING_SUM, TUPLE_BOOL, PAIR])
@pytest.mark.parametrize("clock", [12.0, 30.0])
def test_every_schedule_meets_the_modulo_constraints(text: str, clock: float) -> None:
    check_modulo(planned(text, clock))


def test_two_states_in_one_component_share_a_bound() -> None:
    s = planned(PAIR, 30)  # b <- a * x + x (2 cycles at 30 MHz), a <- b + x
    assert s.state is not None and s.state.rec_mii == 2 and s.ii == 2
    check_modulo(s)


def test_a_requested_ii_above_the_bound_is_kept() -> None:
    s = planned(with_ii(ACC, 3))
    assert s.ii == 3 and s.state is not None and s.state.requested == 3
    assert s.state.binding == "requested"
    check_modulo(s)


def test_a_requested_ii_below_rec_mii_names_the_recurrence() -> None:
    with pytest.raises(KeraError) as e:
        planned(with_ii(MAC, 1), 30)
    msg = e.value.message
    assert "\n" not in msg and msg.split(": ")[0].endswith("k.kera:4:9")
    for part in ("`#[pipeline(ii = 1)]` cannot be met", "state `s`", "mul ", "add ",
                 "k.kera:5:", "takes 2 cycles at 30 MHz", "`#[pipeline(ii = 2)]`",
                 "a clock of at most 2"):
        assert part in msg, part


def test_without_pipeline_no_ii_is_requested() -> None:
    g = kera.load(text=ACC, name="k.kera").graph
    assert "ii" not in g.directives.get("acc", {})
    g2 = kera.load(text=with_ii(ACC, 2), name="k.kera").graph
    assert g2.directives == {"acc": {"ii": 2}}


def test_a_pure_region_has_no_state_plan() -> None:
    s = planned("#[top]\npub fn f(x: u8) -> u8 { x + 1 }\n")
    assert s.state is None and s.ii == 1


def test_the_histogram_goes_to_block_ram_at_ii_1() -> None:
    s = planned(HISTOGRAM)
    assert s.state is not None and s.ii == 1 and s.state.reset_cycles == 256
    (m,) = s.state.mems
    assert (m.mapped_to, m.words, m.width, m.reads, m.writes, m.blocks) == ("bram", 256, 16,
                                                                          1, 1, 1)
    assert m.ports is not None
    # the synchronous read is one stage after its address; the write closes in that stage
    assert s.stage[m.ports.read] == s.stage[m.ports.raddr] + 1 == s.stage[m.ports.next]
    assert m.ports.state in s.virtual and m.ports.next in s.virtual
    assert all(m.ports.state not in bank and m.ports.next not in bank for bank in s.crossing())


def test_a_block_ram_read_costs_its_hit_tests_and_two_selects() -> None:
    """histogram's read (256 x 16: an 8-bit address): on iCE40 (level 2.596 ns) the hit test's
    17 inputs take 3 LUT4 levels, longer than the RAM's clock-to-output (1.178 ns, under the
    flip-flop's 1.39), then yosys's read-old-data select and the forwarding select:
    5 x 2.596 = 12.98 ns. On ECP5 (level 0.891 ns) the DP16KD's 5.83 ns less the flip-flop's
    0.525 outlasts the 3 levels: 5.305 + 2 x 0.891 = 7.087 ns."""
    for board, want in (("icebreaker", 5 * 2.596), ("ulx3s", 5.83 - 0.525 + 2 * 0.891)):
        s = planned(HISTOGRAM, board=board)
        assert s.state is not None
        (m,) = s.state.mems
        assert m.ports is not None
        read = m.ports.read
        assert s.finish_ns[read] - s.start_ns[read] == pytest.approx(want, abs=1e-3), board


def test_a_written_block_ram_has_two_sets_of_forwarding_registers() -> None:
    """histogram's state flip-flops: the emitter's forwarding valid, address and data
    (1 + 8 + 16), yosys's read-old-data emulation (the delayed write's enable, address and
    data, 25, and the transparency's hit and data, 17: placed 103 FFs on both families,
    where the estimate had 86 with the first 25 only) and the reset's busy flag and clear
    counter (1 + 8): 76."""
    from kera.hls.memory import state_ff_bits

    assert state_ff_bits(planned(HISTOGRAM)) == 2 * (1 + 8 + 16) + (1 + 16) + 1 + 8


def test_a_guarded_write_normalises() -> None:
    s = planned(GUARDED)
    assert s.state is not None
    (m,) = s.state.mems
    assert m.mapped_to == "bram" and m.init == 5 and m.ports is not None
    assert m.ports.guard is not None


def test_a_tiny_memory_stays_in_flip_flops() -> None:
    s = planned(TINY)
    assert s.state is not None
    (m,) = s.state.mems
    assert (m.mapped_to, m.reads, m.writes) == ("ff", 2, 1) and "tiny" in m.why
    assert not s.virtual
    check_modulo(s)



def test_a_memory_too_wide_for_the_model_is_one_line_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `mem` of 100,000 bytes (800 kbit): refused before the LUT model, naming the state."""
    from kera.cli import main

    src = tmp_path / "big.kera"
    src.write_text("#[top]\npub fn g(i: u16, x: u8) -> u8 {\n"
                   "    mem m: [u8; 100000] = [0; 100000];\n    let y = m[i];\n    m[i] = x;\n"
                   "    y\n}\n")
    rc = main(["synthesize", str(src), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1
    assert err[-1] == (f"{src}:3:9: state `m` holds 800,000 bits, more than the hardware model "
                       "takes (65,536); icebreaker has 5,280 flip-flops and 30 block RAMs: it "
                       "cannot fit")


def test_an_op_too_slow_for_the_clock_is_named_with_the_block_ram_reads_own_delay() -> None:
    """At 60 MHz on iCE40 (10.6 ns usable) histogram's read takes the RAM's 12.98 ns
    (``memory.read_delay``), not the fitted curve of a 256-element variable `array_index`
    (a mux of flip-flops, 28.8 ns): the one-line error says 13.0, and the scheduler never
    starts on an op that cannot fit. Nothing splits the read, so the clock it suggests is the
    fastest at which it fits one period with no margin (13.0 + 4.4 ns: 57 MHz)."""
    with pytest.raises(KeraError, match=r"`array_index` \(16 bits\) needs 13\.0 ns but the "
                                        r"clock period at 60 MHz leaves 10\.6 ns; try "
                                        r"--clock-mhz 57 or lower$"):
        planned(HISTOGRAM, clock_mhz=60.0)


def test_an_op_that_fits_without_the_whole_margin_takes_less() -> None:
    """At 55 MHz the 10 % margin leaves 12.0 ns for the 13.0 ns read, one period leaves 13.8:
    scheduled with the largest margin that fits it (4.4 %), which the schedule records and a
    note says; a margin the user chose is kept (the error)."""
    sched = planned(HISTOGRAM, clock_mhz=55.0)
    assert sched.margin == pytest.approx(0.044)
    assert any("`array_index` (16 bits)" in n and "4.4% timing margin instead of 10%" in n
               for n in sched.notes)
    with pytest.raises(KeraError, match=r"needs 13\.0 ns .* try --clock-mhz 51 or lower$"):
        planned(HISTOGRAM, clock_mhz=55.0, margin=0.1)
