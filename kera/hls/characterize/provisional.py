"""Provisional models for families the installed tools cannot measure (Gowin, Xilinx 7-series).

They are the fitted ECP5 model with every curve multiplied by a per-quantity factor. The factors
are engineering guesses, stated here and in the file (``"fitted": false``, ``"provisional":
true``, ``"scale"``); replace a file with a fitted one as soon as its family can be measured
(``yowasp-nextpnr-gowin`` exists on PyPI but is not one of the project's pinned tools).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from .fit import FIELDS, model_path

#: Factor per quantity relative to ECP5 (LFE5U-85F, speed grade 6), and why.
SCALES: dict[str, dict[str, Any]] = {
    "gowin": {
        "factors": {"delay_ns": 1.4, "lut": 1.0, "ff": 1.0, "carry": 2.0, "dsp": 1.0},
        "why": [
            "GW1NR-9 (55 nm, LUT4) is slower than ECP5-85 speed 6 (40 nm, LUT4): published "
            "nextpnr results for the same soft cores run at roughly 0.7x the ECP5 Fmax, "
            "hence delays x1.4.",
            "Both are LUT4 fabrics: LUT and flip-flop counts are kept.",
            "A Gowin ALU cell carries 1 bit where an ECP5 CCU2C carries 2: carry cells x2.",
            "GW1N multipliers are 18x18 like MULT18X18D: the DSP counts are kept.",
        ],
    },
    "xc7": {
        "factors": {"delay_ns": 0.6, "lut": 0.7, "ff": 1.0, "carry": 0.5, "dsp": 1.0},
        "lut_k": 6,
        "lut_wide": 8,  # F7/F8 muxes: functions of up to 8 inputs in one level
        "why": [
            "Artix-7 (28 nm) even at speed grade -1L is faster than ECP5-85 speed 6: delays "
            "x0.6.",
            "LUT6 fabric absorbs more logic per LUT than LUT4: LUTs x0.7.",
            "CARRY4 carries 4 bits where a CCU2C carries 2: carry cells x0.5.",
            "DSP48E1 multiplies 25x18; keeping ECP5's 18x18 tiling over-counts DSPs slightly.",
        ],
    },
}


def _scale_curve(spec: dict[str, Any], k: float) -> dict[str, Any]:
    out = {key: v for key, v in spec.items() if key not in ("rejected_fit", "measured")}
    if spec["kind"] == "fit":
        out["coef"] = [round(c * k, 6) for c in spec["coef"]]
        for key in ("max_abs_residual", "rms_residual"):
            out.pop(key, None)
    else:
        out["values"] = [round(v * k, 4) for v in spec["values"]]
    return out


def _scale_entry(entry: dict[str, Any], factors: dict[str, float]) -> dict[str, Any]:
    if "by_n" in entry:
        return {"by_n": {n: _scale_entry(e, factors) for n, e in entry["by_n"].items()}}
    return {f: _scale_curve(entry[f], factors[f]) for f in FIELDS}


def derive_provisional(family: str, base: dict[str, Any]) -> dict[str, Any]:
    """Return a provisional model for ``family`` scaled from a fitted ECP5 model."""
    scale = SCALES[family]
    k = scale["factors"]
    model = {key: copy.deepcopy(base[key]) for key in ("schema", "wiring", "no_entry", "aliases",
                                                       "formula", "held_out_widths")}
    model["resource_notes"] = {k: f"provisional, counted as for {base['family']}: {v}"
                               for k, v in base.get("resource_notes", {}).items()}
    model.update({
        "family": family, "fitted": False, "provisional": True,
        "derived_from": {"family": base["family"], "tools": base["tools"],
                         "command": base["command"]},
        "scale": {"factors": k, "why": scale["why"]},
        "method": f"Not measured: the fitted {base['family']} model with each quantity "
                  "multiplied by the factor in `scale`.",
        "clk_to_q_setup_ns": round(base["clk_to_q_setup_ns"] * k["delay_ns"], 4),
        "reg": {"ff_per_bit": 1.0,
                "overhead_ns": _scale_curve(base["reg"]["overhead_ns"], k["delay_ns"])},
        "notes": ["PROVISIONAL: no measurement of this family; use for rough estimates only."],
        "ops": {op: _scale_entry(e, k) for op, e in base["ops"].items()},
    })
    if "lut_network" in base:
        net = copy.deepcopy(base["lut_network"])
        net.update({key: round(net[key] * k["delay_ns"], 4)
                    for key in ("lut_ns", "net_ns", "level_ns", "ff_packing_ns") if key in net})
        for fit in ("routing", "cover_net"):  # the base family's routed nets, scaled alike
            if fit in net:
                net[fit].update({key: round(net[fit][key] * k["delay_ns"], 4)
                                 for key in ("a", "fanout", "size") if key in net[fit]})
        if "rom_fanout" in net:  # the base family's measured tables, scaled as its nets
            fan = net["rom_fanout"]
            fan.update({key: round(fan[key] * k["delay_ns"], 4)
                        for key in ("a_ns", "per_log2_ns", "per_log2_size_ns") if key in fan})
        net["k"] = scale.get("lut_k", net["k"])
        net["wide"] = scale.get("lut_wide", net.get("wide", 0))
        net.pop("wide_why", None)  # the base family's reason, not this one's
        net.pop("gate_sum_bits", None)  # the base family's `$alu` techmap, not this one's
        net.pop("gate_sum_why", None)
        net.pop("library", None)  # the base family's abc9 LUT library (ECP5 wide LUTs)
        model["lut_network"] = net
    return model


def write_provisional(family: str, base_family: str = "ecp5", out: Path | None = None) -> Path:
    """Write the provisional model of ``family`` from the fitted ``base_family`` model."""
    base = json.loads(model_path(base_family).read_text())
    out = out or model_path(family)
    out.write_text(json.dumps(derive_provisional(family, base), indent=1, sort_keys=True) + "\n")
    return out
