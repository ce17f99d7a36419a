"""Benchmark the scheduler: wall time against node count, and which method ran. Prints JSON.

Graphs are generated directly (a seeded random mix of adds, xors, compares, selects, shifts and
multiplies over 16/32-bit values, each op reading two of the last few dozen values, like unrolled
DSP code) so the benchmark does not depend on the front end. Usage::

    python benchmarks/schedule.py [--sizes 1000,5000,20000] [--clock-mhz 50] [--model simple]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kera.hls.schedule import schedule  # noqa: E402
from kera.hls.timing import SimpleModel  # noqa: E402
from kera.ir.graph import Graph, Region, const, param  # noqa: E402
from kera.ir.types import BOOL, uint  # noqa: E402


def random_graph(nodes: int, seed: int = 1, window: int = 48) -> Graph:
    """Return a graph with about ``nodes`` nodes in one region ``f`` (deterministic)."""
    rng = random.Random(seed)
    g = Graph("bench.kera")
    t = uint(32)
    params = [param(g, i, f"x{i}", t) for i in range(8)]
    values = list(params)
    amount = const(g, uint(5), 3)
    while len(g.nodes) < nodes:
        a, b = rng.choice(values[-window:]), rng.choice(values[-window:])
        r = rng.random()
        if r < 0.35:
            v = g.add("add", t, (a, b))
        elif r < 0.55:
            v = g.add("xor", t, (a, b))
        elif r < 0.70:
            c = g.add("lt", BOOL, (a, b))
            v = g.add("select", t, (c, a, b))
        elif r < 0.85:
            v = g.add("shr", t, (a, amount))
            v = g.add("sub", t, (v, b))
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,5000,20000")
    ap.add_argument("--clock-mhz", type=float, default=50.0)
    ap.add_argument("--model", default="simple", help="'simple' or a family name (fitted model)")
    ap.add_argument("--methods", default="auto,list")
    args = ap.parse_args(argv)
    model = SimpleModel() if args.model == "simple" else None
    family = "simple" if model else args.model
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        g = random_graph(size)
        n = len(g.topo_order(g.regions["f"]))
        for method in args.methods.split(","):
            t0 = time.perf_counter()
            s = schedule(g, "f", family=family, clock_mhz=args.clock_mhz, model=model,
                         method=method)  # fmt: skip
            dt = time.perf_counter() - t0
            bits = sum(g.nodes[i].type.flat_width for bank in s.crossing() for i in bank)
            rows.append({"nodes": n, "requested": method, "method": s.method,
                         "seconds": round(dt, 3), "latency": s.latency, "register_bits": bits})
            print(json.dumps(rows[-1]), file=sys.stderr)
    print(json.dumps({"clock_mhz": args.clock_mhz, "model": args.model, "runs": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
