"""`kera-hls`: the command line, a thin shell over the public Python API."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from kera import __version__
from kera.diagnostics import KeraError

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_TOOL, EXIT_CHECK = 0, 1, 2, 3, 4
EXIT_INTERNAL = 70


def _err(message: str) -> None:
    print(message, file=sys.stderr)


# --- commands ---------------------------------------------------------------------------------


def _load(args: argparse.Namespace):
    """Load FILE with the optimisation options of the command line; print --stats."""
    from kera.driver import load

    stats: list | None = [] if getattr(args, "stats", False) else None
    loaded = load(args.file, args.top, args.opt_level, stats=stats,
                  dump_after=getattr(args, "dump_after", None))  # fmt: skip
    if stats is not None:
        from kera.opt import format_stats

        _err(format_stats(stats))
    return loaded


def cmd_check(args: argparse.Namespace) -> int:
    """Parse and type-check files; print every diagnostic."""
    from kera.diagnostics import render_all
    from kera.driver import check_source

    failed = False
    for path in args.files:
        program = check_source(path)
        errors = [d for d in program.diagnostics if d.severity.value == "error"]
        if program.diagnostics:
            out = render_all(program.source, program.diagnostics, args.format)
            print(out, file=sys.stdout if args.format == "json" else sys.stderr)
        if errors:
            failed = True
            _err(f"{path}: {len(errors)} error{'s' * (len(errors) != 1)}")
        elif args.format == "text":
            _err(f"{path}: ok ({len(program.functions)} functions)")
    return EXIT_USER if failed else EXIT_OK


def cmd_tree(args: argparse.Namespace) -> int:
    """Print the lossless syntax tree of a file."""
    from kera.driver import read_file
    from kera.syntax import dump_tree, parse

    print(dump_tree(parse(read_file(args.file)).tree))
    return EXIT_OK


def cmd_fingerprint(args: argparse.Namespace) -> int:
    """Print the graph fingerprint of a `.kera` or `.keg` file."""
    print(_load(args).graph.fingerprint())
    return EXIT_OK


def cmd_compile(args: argparse.Namespace) -> int:
    """Build (and optimise) the graph and write the `.keg`."""
    from kera.ir import keg

    loaded = _load(args)
    data = keg.write(loaded.graph)
    try:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        with open(args.output, "wb") as f:
            f.write(data)
    except OSError as e:
        raise KeraError(f"{args.output}: cannot write: {e.strerror}", exit_code=2) from None
    _err(f"wrote {args.output} ({len(data)} bytes, {len(loaded.graph.nodes)} nodes)")
    print(loaded.graph.fingerprint())
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """Evaluate the program on one input vector per JSONL line."""
    from kera.driver import read_file
    from kera.targets import run_target

    loaded = _load(args)
    lines = read_file(args.inputs).decode("utf-8", errors="replace").splitlines()
    for result in run_target(args.target, loaded, lines, args.inputs, board=args.board,
                             clock_mhz=args.clock_mhz):  # fmt: skip
        print(json.dumps(result))
    return EXIT_OK


def cmd_synthesize(args: argparse.Namespace) -> int:
    """Schedule for a board; write Verilog, testbench, reports and the .keg into DIR."""
    from kera.flow import rtl_emitter
    from kera.hls.synth import synthesize

    loaded = _load(args)
    _err(f"synthesizing `{loaded.top}` for {args.board} ...")
    options = dict(board=args.board, clock_mhz=args.clock_mhz, outdir=args.output,
                   source=loaded.program, emitters=[rtl_emitter(args.file)],
                   allow_overfull=args.allow_overfull)  # fmt: skip
    result = synthesize(loaded.graph, loaded.top, **options)
    if args.pnr:
        from kera.hls.pnr import measure_schedule

        _err(f"place and route with yosys + nextpnr ({result.board.family}) ...")
        verilog = result.paths["verilog"].read_text(encoding="utf-8")
        measured = measure_schedule(verilog, result.schedule, result.board.family)
        result = synthesize(loaded.graph, loaded.top, measured=measured, **options)
    _err((Path(args.output) / "report.txt").read_text(encoding="utf-8").rstrip())
    for key in sorted(result.paths):
        print(result.paths[key])
    return EXIT_OK


def cmd_sim(args: argparse.Namespace) -> int:
    """Simulate the RTL with cocotb; check values and cycle-exactness against the report."""
    from kera.flow import plan
    from kera.sim import simulate

    loaded = _load(args)
    sched = plan(loaded.graph, loaded.top, board=args.board, clock_mhz=args.clock_mhz)
    _err(f"simulating `{loaded.top}` ({args.simulator}, latency {sched.latency}, ii {sched.ii})")
    result = simulate(sched, Path(args.inputs), simulator=args.simulator,
                      backpressure=args.backpressure, seed=args.seed,
                      waves=Path(args.waves) if args.waves else None)  # fmt: skip
    for value in result.outputs:
        print(json.dumps(value))
    _err(f"{len(result.outputs)} results in {result.cycles} cycles; latency observed "
         f"{result.latency_observed} (report: {sched.latency}), ii observed "
         f"{result.ii_observed} (report: {sched.ii})")  # fmt: skip
    if not result.passed:
        for problem in result.mismatches[:10]:
            _err(problem)
        _err(f"simulation FAILED for graph {result.fingerprint}")
        return EXIT_CHECK
    _err("simulation passed: every value and every cycle as reported")
    return EXIT_OK


def cmd_parity(args: argparse.Namespace) -> int:
    """Compare every target bit for bit with the reference interpreter."""
    from kera.flow import plan, register_rtl_target
    from kera.sim.parity import run_parity

    loaded = _load(args)
    register_rtl_target(args.simulator)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()] if args.targets else None
    sched = plan(loaded.graph, loaded.top, board=args.board, clock_mhz=args.clock_mhz)
    report = run_parity(loaded.graph, loaded.top, targets=targets, vectors=args.vectors,
                        seed=args.seed, schedule=sched, progress=_err)  # fmt: skip
    print(report.table())
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n",
                                   encoding="utf-8")  # fmt: skip
    return report.exit_code


def cmd_characterize(args: argparse.Namespace) -> int:
    """Fit the delay/area model of a family by running yosys + nextpnr (a tool run, slow)."""
    from kera.hls.characterize.__main__ import main as characterize_main

    return characterize_main(args.rest)


def cmd_boards(args: argparse.Namespace) -> int:
    """List the boards with their families, devices and default clocks."""
    from kera.hls.boards import list_boards

    for b in list_boards():
        print(f"{b.name:<12} {b.family:<6} {b.device:<22} {b.clock_mhz:>7.2f} MHz  {b.description}")
    return EXIT_OK


# --- parser -----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kera-hls", description="The Kera HLS compiler.")
    p.add_argument("--version", action="version", version=f"kera-hls {__version__}")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, fn: Callable, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(fn=fn)
        sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show Python tracebacks")  # fmt: skip
        return sp

    sp = command("check", cmd_check, "parse and type-check; print every diagnostic")
    sp.add_argument("files", nargs="+", metavar="FILE")
    sp.add_argument("--format", choices=("text", "json"), default="text")

    sp = command("tree", cmd_tree, "print the lossless syntax tree")
    sp.add_argument("file", metavar="FILE")

    def program_args(sp: argparse.ArgumentParser, board: bool = False) -> None:
        sp.add_argument("file", metavar="FILE", help="a .kera source or a .keg artifact")
        sp.add_argument("--top", help="the function to build (default: the `#[top]` one)")
        sp.add_argument("-O", dest="opt_level", type=int, default=2, choices=(0, 1, 2),
                        metavar="LEVEL", help="optimisation level -O0, -O1, -O2 (default)")
        sp.add_argument("--stats", action="store_true", help="print per-pass statistics")
        sp.add_argument("--dump-after", metavar="PASS", help="print the graph after PASS")
        if board:
            sp.add_argument("--board", default="icebreaker", help="board (default: icebreaker)")
            sp.add_argument("--clock-mhz", type=float, metavar="F",
                            help="clock target (default: the board's clock)")

    sp = command("fingerprint", cmd_fingerprint, "print the graph fingerprint (SHA3-256)")
    program_args(sp)

    sp = command("compile", cmd_compile, "build the graph and write the .keg artifact")
    program_args(sp)
    sp.add_argument("-o", "--output", required=True, metavar="OUT.keg")

    sp = command("run", cmd_run, "evaluate on a target, one JSON result per input line")
    program_args(sp, board=True)
    sp.add_argument("--target", default="interp", help="interp, cpu, wasm, ptx or rtl")
    sp.add_argument("--inputs", required=True, metavar="IN.jsonl")

    sp = command("synthesize", cmd_synthesize,
                 "schedule for a board; emit Verilog, testbench and reports")  # fmt: skip
    program_args(sp, board=True)
    sp.add_argument("-o", "--output", required=True, metavar="DIR")
    sp.add_argument("--pnr", action="store_true",
                    help="also run yosys + nextpnr and fill `measured` in the report")
    sp.add_argument("--allow-overfull", action="store_true",
                    help="emit the design even when it needs more than the board has")

    sp = command("sim", cmd_sim, "simulate the RTL with cocotb and check cycle-exactness")
    program_args(sp, board=True)
    sp.add_argument("--inputs", required=True, metavar="IN.jsonl")
    sp.add_argument("--simulator", default="verilator", choices=("verilator", "icarus"))
    sp.add_argument("--backpressure", action="store_true", help="randomise out_ready")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--waves", metavar="FILE.vcd", help="write a waveform file")

    sp = command("parity", cmd_parity, "bit-exact comparison of targets on edge and random inputs")
    program_args(sp, board=True)
    sp.add_argument("--targets", metavar="LIST", help="comma-separated (default: all available)")
    sp.add_argument("--vectors", type=int, default=10000, help="random vectors (plus edge ones)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--simulator", default="verilator", choices=("verilator", "icarus"))
    sp.add_argument("--json", metavar="OUT.json", help="also write the report as JSON")

    command("boards", cmd_boards, "list boards, families, devices and default clocks")

    sp = command("characterize", cmd_characterize,
                 "fit a family's delay/area model with yosys + nextpnr (slow)")  # fmt: skip
    sp.add_argument("rest", nargs=argparse.REMAINDER, help="options, see --family ...")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (INTERFACES.md)."""
    args = _parser().parse_args(argv)
    try:
        return args.fn(args)
    except KeraError as e:
        if args.debug:
            raise
        _err(e.message if e.message.startswith(("kera-hls", "/")) or ":" in e.message
             else f"kera-hls: {e.message}")  # fmt: skip
        return e.exit_code
    except KeyboardInterrupt:
        _err("kera-hls: interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 — the last line of defence: never a bare traceback
        if args.debug:
            raise
        _err(f"kera-hls: internal compiler error: {type(e).__name__}: {e} "
             "(rerun with --debug for the traceback)")  # fmt: skip
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
