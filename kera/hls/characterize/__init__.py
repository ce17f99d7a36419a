"""Characterisation: measure each op's delay and area with the real tools, then fit models.

``characterize`` drives YoWASP yosys and nextpnr over a grid of (op, width) points, appending
one JSON record per point to ``kera/hls/models/data/<family>.jsonl`` (so a run can resume);
``fit.fit_family`` turns those records into ``kera/hls/models/<family>.json``. Run it as
``python -m kera.hls.characterize --family ice40``.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kera.diagnostics import ExitCode, KeraError

from .designs import OPS, Point, design, points, uses_dsp
from .tools import FLOWS, SEEDS, commands, measure, tool_versions

__all__ = ["DATA_DIR", "characterize", "data_path", "read_records"]

DATA_DIR = Path(__file__).resolve().parent.parent / "models" / "data"
#: The reference board whose device each family is measured on.
BOARD_OF = {"ice40": "icebreaker", "ecp5": "ulx3s"}


def data_path(family: str) -> Path:
    """Return the path of a family's characterisation data (JSON lines)."""
    return DATA_DIR / f"{family}.jsonl"


def read_records(path: Path) -> list[dict]:
    """Return the records of a characterisation data file (empty if it does not exist)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _record(family: str, p: Point, seeds: tuple[int, ...], versions: dict) -> dict:
    flow = FLOWS[family]
    d = design(p)
    yosys, nextpnr = commands(flow, uses_dsp(p.op), seeds[0])
    rec = {
        "family": family, "board": BOARD_OF[family], "key": p.key, "op": p.op,
        "width": p.width, "n": p.n, "in_bits": d.in_bits, "out_bits": d.out_bits,
        "dsp_allowed": uses_dsp(p.op), "seeds": list(seeds), "tools": versions,
        "command": {"yosys": shlex.join(yosys), "nextpnr": shlex.join(nextpnr).replace(
            f"--seed {seeds[0]}", "--seed SEED").replace(f"report{seeds[0]}", "reportSEED")},
    }
    try:
        rec.update(measure(flow, d, uses_dsp(p.op), seeds))
    except Exception as exc:  # one failed point must not stop the run
        rec["error"] = f"{type(exc).__name__}: {exc}"
    return rec


def characterize(
    family: str,
    ops: Sequence[str] = OPS,
    widths: Sequence[int] | None = None,
    resume: bool = False,
    out: Path | None = None,
    jobs: int = 1,
    seeds: tuple[int, ...] = SEEDS,
    progress: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr, flush=True),
) -> Path:
    """Measure every (op, width) point of a family and append the records to ``out``.

    With ``resume`` the points already measured in ``out`` are skipped (failed ones are tried
    again); without it ``out`` is started afresh. Returns the data file's path. At most
    ``jobs`` tool processes run at once.
    """
    if family not in FLOWS:
        known = ", ".join(sorted(FLOWS))
        raise KeraError(f"cannot characterise family `{family}`; measurable: {known}",
                        ExitCode.USAGE)
    out = out or data_path(family)
    todo = points(tuple(ops), tuple(widths) if widths else None)
    if resume:
        done = {r["key"] for r in read_records(out) if "error" not in r}
        todo = [p for p in todo if p.key not in done]
    else:
        out.unlink(missing_ok=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    versions = tool_versions(FLOWS[family])
    progress(f"characterising {family}: {len(todo)} points, {jobs} job(s), seeds {seeds}")
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool, out.open("a") as fh:
        futures = [pool.submit(_record, family, p, seeds, versions) for p in todo]
        for i, fut in enumerate(futures, 1):
            rec = fut.result()
            fh.write(json.dumps(rec, sort_keys=True) + "\n")
            fh.flush()
            progress(f"[{i}/{len(todo)}] {_summary(rec)}")
    return out


def _summary(rec: dict) -> str:
    if "error" in rec:
        return f"{rec['key']}: FAILED {rec['error']}"
    return (f"{rec['key']}: {rec['lut']} LUT, {rec['carry']} carry, {rec['ff']} FF, "
            f"{rec['dsp']} DSP, {rec['fmax_mhz']:.1f} MHz ({rec['seconds']:.1f} s)")
