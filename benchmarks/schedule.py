"""Benchmark the scheduler: wall time against region size, and which method ran. Prints JSON.

Two kinds of input, each at about 1k, 5k and 20k region nodes by default:

* ``random``: a graph generated directly (seeded): a mix of adds, subs, xors, compare+selects,
  shifts, multiplies and masks over 32-bit values, each op reading two of the last 48 values,
  like unrolled DSP code with a lot of reconvergence. It does not depend on the front end.
* ``fir``: Kera source for an N-tap FIR (constant taps, ``i16`` samples, ``i32`` accumulator),
  built by the front end (build time reported separately, not included in ``seconds``).

For each input, "auto" (SDC up to the LP limits, else the fallback) and "list" (the fallback
forced) are timed; ``register_bits`` shows what the LP saves. Usage::

    python benchmarks/schedule.py [--sizes 1000,5000,20000] [--clock-mhz 25]
                                  [--model auto|simple|FAMILY] [--kinds random,fir]
    python benchmarks/schedule.py --kernels ../shared/kernels [--tight icebreaker:50,ulx3s:150]

``--kernels`` prints, per kernel and board/clock, the latency, stage delays, Fmax and resources
with the fitted models (an error where a model is missing or the clock is too fast).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kera.hls.schedule import LP_MAX_NODES, LP_MAX_ROWS, schedule  # noqa: E402
from kera.hls.timing import SimpleModel  # noqa: E402
from kera.ir.graph import Graph, Region, const, param  # noqa: E402
from kera.ir.types import BOOL, uint  # noqa: E402


def random_graph(nodes: int, seed: int = 1, window: int = 48) -> Graph:
    """Return a graph whose region ``f`` has about ``nodes`` nodes (deterministic)."""
    rng = random.Random(seed)
    g = Graph("bench.kera")
    t = uint(32)
    params = [param(g, i, f"x{i}", t) for i in range(8)]
    values = list(params)
    amount = const(g, uint(5), 3)
    while len(g.nodes) < nodes * 1.12:  # some nodes end up unused (dead) and are not counted
        a, b = rng.choice(values[-window:]), rng.choice(values[-window:])
        r = rng.random()
        if r < 0.35:
            v = g.add("add", t, (a, b))
        elif r < 0.55:
            v = g.add("xor", t, (a, b))
        elif r < 0.70:
            v = g.add("select", t, (g.add("lt", BOOL, (a, b)), a, b))
        elif r < 0.85:
            v = g.add("sub", t, (g.add("shr", t, (a, amount)), b))
        elif r < 0.92:
            lo = g.add("slice", uint(16), (a,), {"lo": 0})
            v = g.add("cast", t, (g.add("mul", uint(16), (lo, lo)),))
        else:
            v = g.add("and", t, (a, const(g, t, rng.randrange(1 << 32))))
        values.append(v)
    acc = values[-1]
    for v in values[-64:-1]:  # keep the tail alive
        acc = g.add("xor", t, (acc, v))
    g.add_region(Region("f", tuple(params), acc))
    return g


def fir_source(taps: int) -> str:
    """Return Kera source for a ``taps``-tap FIR with fixed coefficients."""
    coefs = ", ".join(str((i * 37) % 200 - 100) for i in range(taps))
    return (f"const C: [i16; {taps}] = [{coefs}];\n#[top]\npub fn fir(x: [i16; {taps}]) -> i32 {{\n"
            f"    let mut acc = 0i32;\n    for i in 0..{taps} {{\n"
            "        acc += (x[i] as i32) * (C[i] as i32);\n    }\n    acc\n}\n")


def fir_graph(nodes: int) -> tuple[Graph, float]:
    """Return the FIR whose region has about ``nodes`` nodes, and the front end's build time."""
    from kera.elaborate import build_program

    t0 = time.perf_counter()
    p = build_program("fir.kera", fir_source(max(1, nodes // 7)))
    assert p.graph is not None, p.diagnostics
    return p.graph, time.perf_counter() - t0


def _model(name: str) -> tuple[object, str]:
    if name == "simple":
        return SimpleModel(), "simple"
    family = "ice40" if name == "auto" else name
    try:
        from kera.hls.models import load_model

        return load_model(family), family
    except Exception:  # noqa: BLE001 - no fitted model here: the analytic one still measures
        if name != "auto":
            raise
        return SimpleModel(), "simple"


def kernel_table(directory: Path, cases: list[tuple[str, float | None]]) -> list[dict]:
    """Synthesize every ``*.kera`` in ``directory`` for each (board, clock); one row each."""
    import tempfile

    from kera.diagnostics import KeraError
    from kera.elaborate import build_program
    from kera.hls.synth import synthesize

    rows = []
    for path in sorted(directory.glob("*.kera")):
        p = build_program(str(path), path.read_bytes())
        assert p.graph is not None and p.top is not None, p.diagnostics
        for board, clock in cases:
            row: dict = {"kernel": path.stem, "board": board, "clock_mhz": clock}
            try:
                with tempfile.TemporaryDirectory() as out:
                    t0 = time.perf_counter()
                    r = synthesize(p.graph, p.top, board=board, clock_mhz=clock, outdir=out,
                                   source=p).report
                    row["seconds"] = round(time.perf_counter() - t0, 3)
            except KeraError as e:
                rows.append(row | {"error": e.message})
                continue
            est = r["estimate"]
            rows.append(row | {"clock_mhz": r["clock_mhz"], "latency": r["latency_cycles"],
                               "method": r["schedule_method"],
                               "stage_ns": [st["delay_ns"] for st in r["stages"]],
                               "fmax_mhz": est["fmax_mhz"], "lut": est["lut"], "ff": est["ff"],
                               "dsp": est["dsp"]})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one JSON document."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", default="1000,5000,20000")
    ap.add_argument("--clock-mhz", type=float, default=25.0)
    ap.add_argument("--model", default="auto", help="auto, simple, or a family (ice40, ecp5)")
    ap.add_argument("--kinds", default="random,fir")
    ap.add_argument("--methods", default="auto,list")
    ap.add_argument("--kernels", type=Path, help="instead: synthesize every kernel in DIR for "
                    "icebreaker/ulx3s at their clocks and at --tight")
    ap.add_argument("--tight", default="icebreaker:50,ulx3s:150",
                    help="the tight clocks for --kernels, BOARD:MHZ,...")
    args = ap.parse_args(argv)
    if args.kernels:
        cases: list[tuple[str, float | None]] = [("icebreaker", None), ("ulx3s", None)]
        cases += [(b, float(f)) for b, f in (c.split(":") for c in args.tight.split(","))]
        print(json.dumps({"kernels": kernel_table(args.kernels, cases)}, indent=1))
        return 0
    model, family = _model(args.model)
    rows = []
    for kind in args.kinds.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            build = 0.0
            if kind == "random":
                g, region = random_graph(size), "f"
            else:
                (g, build), region = fir_graph(size), "fir"
            n = len(g.topo_order(g.regions[region]))
            for method in args.methods.split(","):
                t0, c0 = time.perf_counter(), time.process_time()
                s = schedule(g, region, family=family, clock_mhz=args.clock_mhz,
                             model=model, method=method)  # type: ignore[arg-type]
                dt, cpu = time.perf_counter() - t0, time.process_time() - c0
                bits = sum(g.nodes[i].type.flat_width for bank in s.crossing() for i in bank)
                row = {"kind": kind, "nodes": n, "requested": method, "method": s.method,
                       "seconds": round(dt, 3), "cpu_seconds": round(cpu, 3),
                       "latency": s.latency, "register_bits": bits,
                       "build_seconds": round(build, 3)}
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
    print(json.dumps({"clock_mhz": args.clock_mhz, "model": family,
                      "lp_max_nodes": LP_MAX_NODES, "lp_max_rows": LP_MAX_ROWS,
                      "runs": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
