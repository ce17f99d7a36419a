"""PTX on a CUDA device: bit parity with the interpreter and the C model, and the time each takes.

    python benchmarks/ptx.py [--vectors N] [--board B] [--jobs J] [FILE ...]

For every `.kera` file given (default: ``examples/``, ``../shared/kernels`` and its ``peers``)
runs ``kera.parity`` with the targets ``cpu`` and ``ptx`` (each against the interpreter) on the
board's schedule, ``N`` seeded random vectors plus the edge ones, and prints one JSON object:
per design each target's status, mismatches and seconds (compile/JIT, copies and launch
included), and a summary; ``--jobs`` runs that many files at once (spawned processes: a
CUDA context does not survive a fork). Without a CUDA device every PTX row says why
(``assembled-not-run`` or ``unavailable``) and the script still exits 0; it exits 1 when any
target that ran disagreed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from multiprocessing import get_context
from pathlib import Path

import kera
from kera.backends import unavailable
from kera.diagnostics import KeraError

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "kernels"


def default_files() -> list[Path]:
    """The examples, the shared kernels and the peer kernels, sorted within each folder."""
    folders = [ROOT / "examples", SHARED, SHARED / "peers"]
    return [f for d in folders if d.is_dir() for f in sorted(d.glob("*.kera"))]


def one(path: Path, vectors: int, board: str) -> dict[str, object]:
    """Parity of ``cpu`` and ``ptx`` against the interpreter for one file."""
    row: dict[str, object] = {"file": str(path.relative_to(ROOT.parent) if path.is_relative_to(
        ROOT.parent) else path)}
    start = time.perf_counter()
    try:
        loaded = kera.load(path)
        report = kera.parity(loaded, targets=["cpu", "ptx"], vectors=vectors, seed=1, board=board)
    except KeraError as e:
        row["error"] = e.message
        return row
    row["top"] = report.top
    row["vectors"] = report.vectors
    row["stream"] = report.stream
    row["targets"] = {r.target: {"status": r.status, "mismatches": r.mismatches,
                                 "seconds": round(r.seconds, 3), "reason": r.reason}
                      for r in report.results}
    row["seconds"] = round(time.perf_counter() - start, 3)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--vectors", type=int, default=10_000)
    ap.add_argument("--board", default="icebreaker")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    files = [f.resolve() for f in args.files] or default_files()
    work = partial(one, vectors=args.vectors, board=args.board)
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
            rows = list(pool.map(work, files))
    else:
        rows = [work(f) for f in files]
    statuses: dict[str, dict[str, int]] = {}
    for row in rows:
        for target, r in row.get("targets", {}).items():  # type: ignore[union-attr]
            counts = statuses.setdefault(target, {})
            counts[r["status"]] = counts.get(r["status"], 0) + 1
    bad = [r["file"] for r in rows if "error" in r or any(
        t["status"] in ("mismatch", "error") for t in r["targets"].values())]  # type: ignore
    out = {"device": unavailable("ptx") or "a CUDA device", "vectors": args.vectors,
           "designs": rows, "summary": {"statuses": statuses, "failing": bad}}
    print(json.dumps(out, indent=1, sort_keys=True))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
