"""Before/after figures of the front-half benchmarks in one run: a git revision against the tree.

    python benchmarks/compare.py [--base REV] [--only frontend,graph,opt,schedule,loops]

Exports ``REV`` (default ``HEAD``) with ``git archive`` into a temporary folder, copies this
folder's benchmark scripts over its own (the same measurement on both compilers), then runs
``frontend.py``, ``graph.py``, ``opt.py``, ``schedule.py`` and ``loops.py`` on the old tree and
on this one, alternating per benchmark so both see the same machine load. Prints one JSON
object: per figure ``[before, after]``, with issue 17's goals beside them. A run that does not
finish within ``--timeout`` seconds is reported as ``"timeout"``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# benchmark -> (arguments, {figure: how to read it from the benchmark's JSON})
Reader = Callable[[dict], object]


def _run_of(kind: str, nodes: int, method: str, key: str = "seconds") -> Reader:
    def read(d: dict) -> object:
        runs = [r for r in d["runs"] if r["kind"] == kind and r["requested"] == method]
        return min(runs, key=lambda r: abs(r["nodes"] - nodes)).get(key) if runs else None

    return read


def _loop(iterations: int, key: str) -> Reader:
    def read(d: dict) -> object:
        row = next(r for r in d["runs"] if r["iterations"] == iterations)
        return row.get(key, "refused" if "refused" in row else None)

    return read


BENCHMARKS: dict[str, tuple[list[str], dict[str, Reader]]] = {
    "frontend": (["--repeat", "3"], {
        "lines_per_s": lambda d: d["lines_per_s"],
        "cpu_lines_per_s": lambda d: d["cpu_lines_per_s"],
    }),
    "graph": (["100000"], {
        "intern_nodes_per_s": lambda d: d["ir"]["intern_nodes_per_s"],
        "cse_hit_nodes_per_s": lambda d: d["ir"]["cse_hit_nodes_per_s"],
        "generate_nodes_per_s": lambda d: d["ir"]["generate_nodes_per_s"],
        "keg_write_nodes_per_s": lambda d: d["ir"]["keg_write_nodes_per_s"],
        "keg_load_nodes_per_s": lambda d: d["ir"]["keg_load_nodes_per_s"],
        "build_nodes_per_s": lambda d: d["build"]["build_nodes_per_s"],
        "build_seconds": lambda d: d["build"]["seconds"],
        "elaborate_nodes_per_s": lambda d: d["build"].get("elaborate_nodes_per_s"),
    }),
    "opt": (["--repeat", "2"], {
        "nodes_before": lambda d: d["large"]["validated"]["nodes_before"],
        "build_seconds": lambda d: d["large"]["build_seconds"],
        "O2_cpu_seconds_validated": lambda d: d["large"]["validated"]["cpu_seconds_total"],
        "O2_cpu_seconds": lambda d: d["large"]["unvalidated"]["cpu_seconds_total"],
        "calibration_seconds": lambda d: d["calibration_seconds"],
    }),
    "schedule": (["--sizes", "1000,20000", "--methods", "auto"], {
        "random_20k_seconds": _run_of("random", 20000, "auto"),
        "random_20k_cpu_seconds": _run_of("random", 20000, "auto", "cpu_seconds"),
        "fir_20k_seconds": _run_of("fir", 20000, "auto"),
        "fir_20k_cpu_seconds": _run_of("fir", 20000, "auto", "cpu_seconds"),
        "fir_20k_build_seconds": lambda d: max(r["build_seconds"] for r in d["runs"]),
    }),
    "loops": (["--iterations", "1000,10000,50000"], {
        "check_50k_seconds": _loop(50000, "cpu_seconds"),
        "check_10k_seconds": _loop(10000, "cpu_seconds"),
        "iterations_per_s_50k": _loop(50000, "iterations_per_s"),
    }),
    "loops_1M": (["--iterations", "1000000"], {
        "check_1M_seconds": _loop(1000000, "seconds"),
        "check_1M_outcome": lambda d: d["runs"][0].get("refused", "built"),
    }),
}
GOALS = {
    "frontend.lines_per_s": ">= 100000",
    "graph.elaborate_nodes_per_s": ">= 100000",
    "graph.build_nodes_per_s": ">= 100000 (parse and elaborate together)",
    "opt.O2_cpu_seconds": "<= 0.5",
    "schedule.random_20k_seconds": "<= 2",
    "loops.check_50k_seconds": "<= 1",
    "loops_1M.check_1M_seconds": "a few seconds (finish or refuse)",
}


def export(rev: str, into: Path) -> Path:
    """Write the tree of ``rev`` into ``into`` with this folder's benchmarks; return its root."""
    data = subprocess.run(["git", "archive", "--format=tar", rev], cwd=ROOT, check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    for script in (ROOT / "benchmarks").glob("*.py"):
        shutil.copy(script, into / "benchmarks" / script.name)
    return into


def run_one(root: Path, name: str, args: list[str], timeout: float) -> dict | str:
    """Run benchmark ``name`` of tree ``root``; return its JSON, or why there is none."""
    script = "loops.py" if name.startswith("loops") else f"{name}.py"
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONHASHSEED="0")
    try:
        done = subprocess.run([sys.executable, str(root / "benchmarks" / script), *args],
                              cwd=root, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if done.returncode != 0:
        return f"failed: {done.stderr.strip().splitlines()[-1:]}"
    return json.loads(done.stdout)


def main() -> None:
    """Run the chosen benchmarks on both trees and print the comparison."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--base", default="HEAD", help="the revision to compare with (default HEAD)")
    ap.add_argument("--only", default=",".join(BENCHMARKS))
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per benchmark run")
    args = ap.parse_args()
    out: dict[str, object] = {"base": args.base, "goals": GOALS}
    with tempfile.TemporaryDirectory(prefix="kera-bench-") as tmp:
        old = export(args.base, Path(tmp))
        for name in args.only.split(","):
            bench_args, figures = BENCHMARKS[name]
            before = run_one(old, name, bench_args, args.timeout)
            after = run_one(ROOT, name, bench_args, args.timeout)
            row: dict[str, object] = {}
            for key, read in figures.items():
                row[key] = [read(r) if isinstance(r, dict) else r for r in (before, after)]
            out[name] = row
            print(json.dumps({name: row}), file=sys.stderr, flush=True)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
