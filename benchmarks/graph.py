"""Benchmark the IR core: hashing + interning, fingerprint, validation, .keg and interpreter.

Prints one JSON object. ``measure_interning(graph)`` works on any graph (the build benchmark
passes the graphs it builds); ``generate(n)`` makes a big graph directly through the graph API.
Goal: >= 100k nodes/s for add + hash + intern.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from kera.interp import evaluate
from kera.ir import keg, values
from kera.ir.graph import Graph, Region, const, param
from kera.ir.types import BOOL, uint
from kera.ir.validate import validate

U32 = uint(32)
BINARY = ["add", "sub", "mul", "xor", "and", "or", "min", "max", "shl", "shr", "rotl"]


T = TypeVar("T")


def _timed(fn: Callable[[], T]) -> tuple[T, float]:
    """Run ``fn`` once; return its result and the CPU seconds it took (robust to load)."""
    start = time.process_time()
    result = fn()
    return result, max(time.process_time() - start, 1e-9)


def generate(n: int, seed: int = 1) -> Graph:
    """Build a graph of about ``n`` u32 nodes over 4 params, through ``Graph.add``."""
    rng = random.Random(seed)
    g = Graph()
    params = [param(g, i, f"p{i}", U32) for i in range(4)]
    pool = list(params) + [const(g, U32, v) for v in (1, 3, 5, 7, 0xFF)]
    plan = [(rng.random(), rng.choice(BINARY), rng.randrange(64), rng.randrange(64),
             rng.randrange(1 << 32)) for _ in range(n)]
    for r, op, i, j, v in plan:
        if r < 0.05:
            nid = const(g, U32, v)
        elif r < 0.10:
            cond = g.add("lt", BOOL, (pool[-1 - i % len(pool)], pool[-1 - j % len(pool)]))
            nid = g.add("select", U32, (cond, pool[-1], pool[-2]))
        else:
            nid = g.add(op, U32, (pool[-1 - i % len(pool)], pool[-1 - j % len(pool)]))
        pool.append(nid)
    g.add_region(Region("big", tuple(params), pool[-1]))
    return g


def measure_interning(graph: Graph, repeats: int = 3) -> dict[str, float]:
    """Re-add every node of ``graph`` into a fresh graph (hash + type rule + intern), then
    again into that graph (every add a CSE hit); return the node count and the best nodes/s
    over ``repeats`` runs."""
    nodes = list(graph.nodes.values())

    def add_all(target: Graph) -> None:
        add = target.add
        for node in nodes:
            add(node.op, node.type, node.inputs, dict(node.attrs) if node.attrs else None)

    best_fresh = best_hit = float("inf")
    for _ in range(repeats):
        fresh = Graph()
        best_fresh = min(best_fresh, _timed(partial(add_all, fresh))[1])
        best_hit = min(best_hit, _timed(partial(add_all, fresh))[1])
        assert list(fresh.nodes) == list(graph.nodes)
    return {
        "nodes": len(nodes),
        "intern_nodes_per_s": round(len(nodes) / best_fresh),
        "cse_hit_nodes_per_s": round(len(nodes) / best_hit),
    }


def bench_ir(n: int = 200_000, rows: int = 256) -> dict[str, object]:
    """Measure every IR stage on a generated graph of about ``n`` nodes."""
    graph, t_gen = _timed(lambda: generate(n))
    assert isinstance(graph, Graph)
    out: dict[str, object] = {"generate_nodes_per_s": round(len(graph) / t_gen)}
    out.update(measure_interning(graph))
    fp, t_fp = _timed(graph.fingerprint)
    problems, t_val = _timed(lambda: validate(graph))
    assert problems == []
    data, t_write = _timed(lambda: keg.write(graph))
    assert isinstance(data, bytes)
    back, t_load = _timed(lambda: keg.load(data))
    assert isinstance(back, Graph) and back.fingerprint() == fp
    inputs = {f"p{i}": values.stack(list(range(i, i + rows)), U32) for i in range(4)}
    _, t_eval = _timed(lambda: evaluate(graph, "big", inputs))
    out.update({
        "fingerprint_s": round(t_fp, 4),
        "validate_nodes_per_s": round(len(graph) / t_val),
        "keg_bytes": len(data),
        "keg_write_nodes_per_s": round(len(graph) / t_write),
        "keg_load_nodes_per_s": round(len(graph) / t_load),
        "interp_rows": rows,
        "interp_node_evals_per_s": round(len(graph) / t_eval),
    })
    return out


def kera_source(lines: int) -> str:
    """Return a Kera program of about ``lines`` statements (a long mixing chain)."""
    body = ["    let mut s = x;"]
    for i in range(lines):
        op = ("+", "^", "*", "|")[i % 4]
        body.append(f"    s = (s {op} {i * 2654435761 % 65521}u32) >> {1 + i % 7} ^ (s << 3);")
    return "#[top]\npub fn big(x: u32) -> u32 {\n" + "\n".join(body) + "\n    s\n}\n"


def bench_build(lines: int = 20_000) -> dict[str, object]:
    """Measure source → graph (parse, check, build, hash) in nodes/s, and its two halves apart:
    lexing + parsing (lines/s) and the elaboration of the parsed tree (nodes/s), each with
    the collector paused as ``build_program`` pauses it."""
    from kera import elaborate as elab
    from kera.diagnostics import SourceFile
    from kera.ir.gcpause import paused_gc
    from kera.syntax import parse

    src = kera_source(lines)
    program, t = _timed(lambda: elab.build_program("big.kera", src))
    assert program.graph is not None, program.diagnostics
    nodes = len(program.graph.nodes)
    out: dict[str, object] = {"source_lines": lines, "nodes": nodes, "seconds": round(t, 3),
                              "build_nodes_per_s": round(nodes / t)}
    elaborate = getattr(elab, "elaborate", None)  # (compare.py's older trees have none)
    if elaborate is None:
        return out
    raw = src.encode()
    with paused_gc():
        parsed, t_parse = _timed(lambda: parse(raw))
        built, t_elab = _timed(lambda: elaborate(SourceFile("big.kera", raw), parsed))
    assert built.graph is not None and len(built.graph.nodes) == nodes
    return {**out, "parse_seconds": round(t_parse, 3), "elaborate_seconds": round(t_elab, 3),
            "elaborate_nodes_per_s": round(nodes / t_elab)}


def bench_interp_kernels(rows: int = 100_000) -> dict[str, object]:
    """Measure interpreter vectors/s on fir8 and popcount32 (``examples/``) at ``rows`` rows."""
    import numpy as np

    from kera import load
    from kera.ir.values import stack

    root = Path(__file__).resolve().parents[1] / "examples"
    rng = np.random.default_rng(1)
    out: dict[str, object] = {}
    for name in ("fir8", "popcount32"):
        loaded = load(str(root / f"{name}.kera"))
        params, _ = loaded.graph.signature(loaded.top)
        inputs = {}
        for pname, t in params:
            lo, hi = (t.elem.min, t.elem.max) if hasattr(t, "elem") else (t.min, t.max)
            draw = rng.integers(lo, hi, size=(rows, getattr(t, "length", 1)), endpoint=True)
            inputs[pname] = stack([r.tolist() if hasattr(t, "elem") else int(r[0])
                                   for r in draw], t)
        _, secs = _timed(partial(evaluate, loaded.graph, loaded.top, inputs))
        out[name] = {"vectors": rows, "seconds": round(secs, 3),
                     "vectors_per_s": round(rows / secs)}
    return out


def main() -> None:
    """Run the IR benchmark and print JSON (``python benchmarks/graph.py [N]``)."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    print(json.dumps({"benchmark": "graph", "ir": bench_ir(n), "build": bench_build(),
                      "interp": bench_interp_kernels()}, indent=2))


if __name__ == "__main__":
    main()
