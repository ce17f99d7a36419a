"""Command line: ``python -m kera.hls.characterize --family ice40 [--ops ...] [--resume]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kera.diagnostics import KeraError

from . import characterize, data_path
from .designs import OPS
from .provisional import SCALES, write_provisional
from .tools import FLOWS, SEEDS


def parser() -> argparse.ArgumentParser:
    """Return the argument parser of the characterisation command."""
    ap = argparse.ArgumentParser(
        prog="python -m kera.hls.characterize",
        description="Measure op delay/area with yosys + nextpnr and fit the family's model.",
    )
    ap.add_argument("--family", required=True,
                    help="ice40 or ecp5 (measured); gowin or xc7 (provisional, from ecp5)")
    ap.add_argument("--ops", nargs="+", default=list(OPS), metavar="OP", help="ops to measure")
    ap.add_argument("--widths", nargs="+", type=int, metavar="W", help="widths to measure")
    ap.add_argument("--resume", action="store_true", help="skip points already in the data")
    ap.add_argument("--data", type=Path, help="data file (default: the package's JSONL)")
    ap.add_argument("--model", type=Path, help="model file to write (default: the package's)")
    ap.add_argument("--jobs", type=int, default=1, help="tool processes at once (default 1)")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="nextpnr seeds")
    ap.add_argument("--fit-only", action="store_true", help="only fit the existing data")
    ap.add_argument("--no-fit", action="store_true", help="only measure")
    ap.add_argument("--routing", nargs="*", type=Path, metavar="FILE.kera",
                    help="measure routed net delays on these designs (default: the "
                         "repository's examples and ../shared kernels) instead of the ops")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit code."""
    args = parser().parse_args(argv)
    if args.family not in FLOWS and args.family not in SCALES:
        known = ", ".join(sorted([*FLOWS, *SCALES]))
        print(f"error: unknown family `{args.family}`; known families: {known}", file=sys.stderr)
        return 2
    try:
        if args.family in SCALES:
            print(f"{args.family} cannot be measured with the installed tools; writing a "
                  "provisional model scaled from ecp5", file=sys.stderr)
            print(f"wrote {write_provisional(args.family, out=args.model)}", file=sys.stderr)
            return 0
        data = args.data or data_path(args.family)
        if args.routing is not None and not args.fit_only:
            from .routing import measure_routing, nets_path

            files = args.routing or default_designs()
            print(f"wrote {measure_routing(args.family, files, nets_path(args.family))}",
                  file=sys.stderr)
        elif not args.fit_only:
            characterize(args.family, args.ops, args.widths, args.resume, data, args.jobs,
                         tuple(args.seeds))
        if not args.no_fit:
            from .fit import fit_family, model_path

            out = fit_family(args.family, data, args.model or model_path(args.family))
            print(f"wrote {out}", file=sys.stderr)
    except KeraError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return exc.exit_code
    return 0


def default_designs() -> list[Path]:
    """Return the repository's examples and ../shared kernels (peers too), one per text."""
    root = Path(__file__).resolve().parents[3]
    shared = root.parent / "shared" / "kernels"
    files = [*sorted((root / "examples").glob("*.kera")), *sorted(shared.glob("*.kera")),
             *sorted((shared / "peers").glob("*.kera"))]
    seen: set[bytes] = set()
    out = []
    for f in files:
        text = f.read_bytes()
        if text not in seen:
            seen.add(text)
            out.append(f)
    return out


if __name__ == "__main__":
    sys.exit(main())
