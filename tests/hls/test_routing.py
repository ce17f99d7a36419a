"""Routed net delays (kera.hls.characterize.routing): samples from nextpnr's worst path and the
yosys netlist, and the fit the bit-level timing uses."""

from __future__ import annotations

import math

import pytest

from kera.hls.characterize import read_records
from kera.hls.characterize.routing import fanouts, fit_routing, nets_path, samples
from kera.hls.models import load_model

NETLIST = {"modules": {"top": {
    "cells": {
        "a": {"type": "SB_LUT4", "port_directions": {"I0": "input", "O": "output"},
              "connections": {"I0": [2], "O": [3]}},
        "b": {"type": "SB_LUT4", "port_directions": {"I0": "input", "I1": "input", "O": "output"},
              "connections": {"I0": [3], "I1": [2], "O": [4]}},
        "c": {"type": "SB_DFF", "port_directions": {"D": "input", "Q": "output"},
              "connections": {"D": [4], "Q": [2]}},
    },
    "netnames": {"q": {"bits": [2]}, "w": {"bits": [3, 4]}, "k": {"bits": ["0"]}},
}}}


def _seg(kind: str, delay: float, net: str = "", port: str = "O") -> dict:
    return {"type": kind, "delay": delay, "net": net, "from": {"port": port}, "to": {}}


def test_fanout_counts_cell_inputs_by_net_bit_name() -> None:
    assert fanouts(NETLIST) == {"q": 2, "w[0]": 1, "w[1]": 1}


def test_samples_are_the_worst_paths_nets_without_carry_or_in_slice_hops() -> None:
    report = {"utilization": {"ICESTORM_LC": {"used": 300}},
              "critical_paths": [
                  {"from": "<async>", "to": "posedge clk", "path": [_seg("routing", 9.0, "q")]},
                  {"from": "posedge clk", "to": "posedge clk", "path": [
                      _seg("clk-to-q", 1.39), _seg("routing", 2.4, "q", "Q"),
                      _seg("logic", 0.9), _seg("routing", 0.0, "w[0]", "COUT"),
                      _seg("routing", 1.76, "w[1]"), _seg("routing", 3.0, "unknown"),
                      {**_seg("routing", 0.13, "w[1]", "F"), "to": {"port": "DI"}},
                      _seg("setup", 1.2)]}]}
    got = samples(report, NETLIST, "ice40", "d")
    assert [(r["fanout"], r["delay_ns"], r["size"]) for r in got] == [(2, 2.4, 300), (1, 1.76, 300)]


def test_the_fit_recovers_a_known_law_and_never_slows_small_designs() -> None:
    law = [{"design": "d", "size": s, "fanout": f,
            "delay_ns": 0.5 + 0.2 * math.log2(f) + 0.1 * math.log2(s)}
           for s in (50, 400, 3000) for f in (1, 2, 8, 40)]
    fit = fit_routing(law)
    assert (fit["a"], fit["fanout"], fit["size"]) == pytest.approx((0.5, 0.2, 0.1), abs=1e-3)
    assert fit["rms_ns"] == pytest.approx(0.0, abs=1e-3)
    shrinking = [{**r, "delay_ns": 2.0 - 0.1 * math.log2(r["size"])} for r in law]
    assert fit_routing(shrinking)["size"] == 0.0
    flat = [{**r, "delay_ns": 0.9 - 0.01 * math.log2(r["fanout"])} for r in law]
    got = fit_routing(flat)
    assert got["fanout"] == 0.0 and got["a"] == pytest.approx(0.9 - 0.01 * 1.5, abs=0.02)


@pytest.mark.parametrize("family", ["ice40", "ecp5"])
def test_the_committed_model_holds_the_fit_of_the_committed_nets(family: str) -> None:
    nets = read_records(nets_path(family))
    assert len({r["design"] for r in nets}) >= 10 and all(r["fanout"] >= 1 for r in nets)
    routing = load_model(family).lut_network["routing"]
    assert routing == fit_routing(nets)
    assert routing["fanout"] >= 0 and routing["size"] >= 0 and routing["a"] > 0
