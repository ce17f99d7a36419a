"""Four-bit zero flags of a zero count as ECP5 LUT4 cells (``kera.hls.zeroflag``): which
flags, the emitted cells against the gates they replace (yosys SAT), the estimate and the
timing."""

from __future__ import annotations

import pytest

from kera.hls.resources import estimate
from kera.hls.timing import CostModel
from kera.hls.zeroflag import NOR4_INIT, zero_flags
from kera.rtl import emit_verilog
from tests.hls.test_muxpair import _equivalent, _schedule, needs_yosys


@pytest.mark.parametrize("clock_mhz", [None, 150.0])
def test_ctz32_has_a_flag_per_nibble_on_ecp5_only(clock_mhz: float | None) -> None:
    s, _, _ = _schedule("ctz32", "ulx3s", clock_mhz)
    flags = zero_flags(s)
    x = s.graph.regions[s.region].params[0]
    assert sorted(sorted(b for _, b in bits) for bits in flags.values()) == [
        [4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3] for k in range(8)]
    assert all(u == x for bits in flags.values() for u, _ in bits)
    assert all(len({s.stage[f], *(s.stage[u] for u in s.graph.nodes[f].inputs)}) == 1
               for f in flags)
    ice40, _, _ = _schedule("ctz32", "icebreaker", clock_mhz and 55.0)
    assert zero_flags(ice40) == {}


def test_no_flag_in_designs_without_a_zero_count() -> None:
    for name in ("rotl32", "sra64", "regread"):
        s, _, _ = _schedule(name, "ulx3s", None)
        assert zero_flags(s) == {}, name


@needs_yosys
@pytest.mark.parametrize(("name", "clock_mhz"), [("ctz32", None), ("ctz32", 150.0)])
def test_the_cells_compute_the_flags(tmp_path, name: str, clock_mhz: float | None) -> None:  # noqa: ANN001
    s, _, _ = _schedule(name, "ulx3s", clock_mhz)
    verilog = emit_verilog(s, board="ulx3s", version="test")
    assert verilog.count(f"LUT4 #(.INIT(16'h{NOR4_INIT:04X}))") == 8
    _equivalent(tmp_path, verilog, name)


@needs_yosys
def test_a_wrong_truth_table_is_caught(tmp_path) -> None:  # noqa: ANN001
    """The proof is not vacuous: one flag's LUT4 given a NOR of three bits fails it."""
    s, _, _ = _schedule("ctz32", "ulx3s", None)
    verilog = emit_verilog(s, board="ulx3s", version="test")
    head = f"LUT4 #(.INIT(16'h{NOR4_INIT:04X}))"
    with pytest.raises(AssertionError):
        _equivalent(tmp_path, verilog.replace(head, "LUT4 #(.INIT(16'h0101))", 1), "ctz32")


def test_the_estimate_counts_a_site_a_flag_and_maps_the_rest_around_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ctz32 at ECP5's 25 MHz: 8 flags and the multiplexers of counts; yosys 0.70 + nextpnr
    placed 50 LUT4 sites (67 without the cells; docs/models.md)."""
    from kera.hls import resources

    s, board, model = _schedule("ctz32", "ulx3s", None)
    costs = CostModel(model)
    seen: dict[bytes, int] = {}
    network_luts = resources._network_luts

    def spy(*args: object) -> dict[bytes, int]:
        seen.update(network_luts(*args))  # type: ignore[arg-type]
        return seen

    monkeypatch.setattr(resources, "_network_luts", spy)
    with_cells = estimate(s, costs, board.capacities)
    flags = zero_flags(s)
    assert len(flags) == 8 and all(seen[f] == 1 for f in flags)
    assert 45 <= with_cells.total["lut"] <= 55
    monkeypatch.setattr(resources, "zero_flags", lambda schedule: {})
    assert estimate(s, costs, board.capacities).total["lut"] < with_cells.total["lut"]


def test_the_timing_takes_a_flag_as_a_level_no_reader_absorbs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kera.hls import sta

    s, _, model = _schedule("ctz32", "ulx3s", None)
    costs = CostModel(model)
    cells = sta.analyse_bits(s, costs)
    monkeypatch.setattr(sta, "zero_flags", lambda schedule: {})
    wide = sta.analyse_bits(s, costs)
    assert cells is not None and wide is not None
    assert cells.stage_delays[0] > wide.stage_delays[0]
