"""Hand-written Verilog cores placed in ``benchmarks/qor.py``'s shell and reference, as JSON.

Usage: python benchmarks/hand.py [--families ice40,ecp5] [--seeds 1,2,3]

The hand figures of ../shared/kernels/peers/README.md were measured with a shell whose cost
was subtracted in a way our reference does not reproduce (popcount64: 63 LUT on iCE40 for 54
flip-flops). Each ``benchmarks/hand/NAME.v`` is a module ``NAME`` with the ports and
valid/ready handshake of a kera-hls core for the peer kernel ``NAME.kera`` (whose signature
gives the shell's widths); it is placed and routed exactly as ``benchmarks/qor.py`` places a
design (the serial shell, the pass-through reference with the kernel's constant output bits),
so the two are compared in one flow: LUT (ECP5: LUT4 sites, LUT4 + 2 per CCU2C), FF and the
median Fmax of the seeds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import qor  # noqa: E402

from kera import load  # noqa: E402
from kera.hls.pnr import const_outputs  # noqa: E402
from kera.hls.synth import plan_schedule  # noqa: E402

HAND = Path(__file__).resolve().parent / "hand"
PEERS = qor.ROOT.parent / "shared" / "kernels" / "peers"


def measure_hand(verilog: Path, family: str, seeds: tuple[int, ...]) -> dict[str, object]:
    """Return the core figures of one hand-written core on ``family``'s reference board."""
    loaded = load(str(PEERS / f"{verilog.stem}.kera"))
    sched, _, model = plan_schedule(loaded.graph, loaded.top, board=qor.BOARDS[family])
    raw = qor.measure(verilog.read_text(encoding="utf-8"), sched, family, seeds)
    consts = const_outputs(sched, model)
    if consts:
        raw["shell_const"] = qor.measure_const_shell(sched, family, consts)
    core = qor.core(raw)
    sites = 2 if family == "ecp5" else 0  # a CCU2C fills two LUT4 sites (TRELLIS_COMB)
    return {"design": verilog.stem, "family": family, "lut": core["lut"] + sites * core["carry"],
            "lut_cells": core["lut"], "carry": core["carry"], "ff": core["ff"],
            "dsp": core["dsp"], "fmax_mhz": core["fmax_mhz"]}


def main() -> None:
    """Measure every hand-written core on every family and print the JSON rows."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="ice40,ecp5")
    ap.add_argument("--seeds", default="1,2,3")
    args = ap.parse_args()
    seeds = tuple(int(s) for s in args.seeds.split(","))
    rows = [measure_hand(v, f, seeds) for v in sorted(HAND.glob("*.v"))
            for f in args.families.split(",")]
    print(json.dumps({"seeds": list(seeds), "designs": rows}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
