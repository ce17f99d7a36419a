"""`kera-hls`: the command line, a thin shell over the public Python API (``kera``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

import kera
from kera import progress
from kera.diagnostics import ExitCode, KeraError

INPUTS_HELP = ("JSONL file of inputs: one JSON object per line, parameter name -> value "
               "(integers exact, arrays and tuples as lists, bool as true/false); blank lines "
               'are skipped; the vectors form {"inputs": {...}, "expected": ...} is accepted')


def _err(message: str) -> None:
    progress.say(message)


def _during_interrupt(error: BaseException) -> bool:
    """Whether ``error`` was raised while Ctrl-C unwound the work (a KeyboardInterrupt in its
    context chain): then the interrupt, not the error, is what the user sees."""
    seen: set[int] = set()
    cause: BaseException | None = error.__context__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__context__
    return False


# --- commands ---------------------------------------------------------------------------------


def _load(args: argparse.Namespace) -> kera.Loaded:
    """Load FILE with the optimisation options of the command line; print --stats."""
    stats: list | None = [] if getattr(args, "stats", False) else None
    loaded = kera.load(args.file, top=args.top, opt_level=args.opt_level, stats=stats,
                       dump_after=getattr(args, "dump_after", None),
                       validate="full" if getattr(args, "validate", False) else False)
    if stats is not None:
        from kera.opt import format_stats

        _err(format_stats(stats))
    return loaded


def cmd_check(args: argparse.Namespace) -> int:
    """Parse and type-check files; print every diagnostic."""
    from kera.diagnostics import render_all

    failed = False
    for path in args.files:
        program = kera.check_source(path)
        errors = [d for d in program.diagnostics if d.severity.value == "error"]
        if program.diagnostics:
            out = render_all(program.source, program.diagnostics, args.format)
            print(out, file=sys.stdout if args.format == "json" else sys.stderr)
        if errors:
            failed = True
            _err(f"{path}: {len(errors)} error{'s' * (len(errors) != 1)}")
        elif args.format == "text":
            n = len(program.functions)
            _err(f"{path}: ok ({n} function{'s' * (n != 1)})")
        if not errors and args.format == "text":
            for line in program.state_summary():
                _err(f"{path}: {line}")
    return ExitCode.USER if failed else ExitCode.OK


def cmd_tree(args: argparse.Namespace) -> int:
    """Print the lossless syntax tree of a file."""
    from kera.syntax import dump_tree, parse

    print(dump_tree(parse(kera.read_file(args.file)).tree))
    return ExitCode.OK


def cmd_fingerprint(args: argparse.Namespace) -> int:
    """Print the graph fingerprint of a `.kera` or `.keg` file."""
    print(_load(args).fingerprint)
    return ExitCode.OK


def cmd_compile(args: argparse.Namespace) -> int:
    """Build (and optimise) the graph and write the `.keg`."""
    kera.check_output(args.output)
    loaded = _load(args)
    compiled = kera.compile(loaded, args.output)
    _warnings(loaded)
    _err(f"wrote {args.output} ({len(compiled.keg)} bytes, {compiled.nodes} nodes)")
    print(compiled.fingerprint)
    return ExitCode.OK


def _warnings(loaded: kera.Loaded) -> None:
    """Print a built program's warnings and which of its functions are stateful (stderr)."""
    from kera.diagnostics import render_all

    program = loaded.program
    if program is None:
        return
    warnings = [d for d in program.diagnostics if d.severity.value == "warning"]
    if warnings:
        _err(render_all(program.source, warnings))
    for line in program.state_summary():
        if line.startswith(f"`{loaded.top}`"):
            _err(f"{loaded.path}: {line}")


def cmd_run(args: argparse.Namespace) -> int:
    """Evaluate the program on one input vector per JSONL line."""
    for result in kera.run(_load(args), args.inputs, target=args.target, board=args.board,
                           clock_mhz=args.clock_mhz):
        print(json.dumps(result))
    return ExitCode.OK


def cmd_synthesize(args: argparse.Namespace) -> int:
    """Schedule for a board; write Verilog, testbench, reports and the .keg into DIR."""
    kera.check_output(args.output, directory=True)
    result = kera.synthesize(_load(args), args.board, outdir=args.output,
                             clock_mhz=args.clock_mhz, pnr=args.pnr, bitstream=args.bitstream,
                             allow_overfull=args.allow_overfull,
                             close_timing=args.close_timing, progress=_err, fit=args.fit)
    _err((result.paths["report.txt"]).read_text(encoding="utf-8").rstrip())
    for key in sorted(result.paths):
        print(result.paths[key])
    if args.strict and not result.timing_met:
        return ExitCode.CHECK
    return ExitCode.OK


def cmd_board_run(args: argparse.Namespace) -> int:
    """Send vectors to the core on a board over its UART; print the results as `run` does."""
    for result in kera.board_run(args.dir, args.port, args.inputs, timeout=args.timeout):
        print(json.dumps(result), flush=True)
    return ExitCode.OK


def cmd_sim(args: argparse.Namespace) -> int:
    """Simulate the RTL with cocotb; check values and cycle-exactness against the report."""
    if args.waves:
        kera.check_output(args.waves)
    sim = kera.simulate(_load(args), args.inputs, board=args.board, clock_mhz=args.clock_mhz,
                        simulator=args.simulator, backpressure=args.backpressure,
                        seed=args.seed, waves=args.waves, progress=_err, fit=args.fit)
    result = sim.result
    for value in result.outputs:
        print(json.dumps(value))
    for line in sim.summary():
        _err(line)
    if not result.passed:
        for problem in result.mismatches[:10]:
            _err(problem)
        _err(f"simulation FAILED for graph {result.fingerprint}")
        return ExitCode.CHECK
    return ExitCode.OK


def cmd_parity(args: argparse.Namespace) -> int:
    """Compare every target bit for bit with the reference interpreter."""
    if args.json:
        kera.check_output(args.json)
    targets = [t.strip() for t in args.targets.split(",") if t.strip()] if args.targets else None
    for name in targets or ():
        if name != "board":  # the board target is made with its --port
            kera.get_target(name)  # an unknown name is a usage error before any work
    report = kera.parity(_load(args), targets=targets, vectors=args.vectors, seed=args.seed,
                         board=args.board, clock_mhz=args.clock_mhz, simulator=args.simulator,
                         output=args.json, progress=_err, port=args.port,
                         timeout=args.timeout, fit=args.fit)
    print(report.table())
    return report.exit_code


def cmd_characterize(args: argparse.Namespace) -> int:
    """Fit the delay/area model of a family by running yosys + nextpnr (a tool run, slow)."""
    from kera.hls.characterize.__main__ import main as characterize_main

    return characterize_main(args.argv)


def cmd_boards(args: argparse.Namespace) -> int:
    """List the boards with their families, devices and default clocks."""
    from kera.hls.boards import list_boards

    for b in list_boards():
        print(f"{b.name:<12} {b.family:<6} {b.device:<22} {b.clock_mhz:>7.2f} MHz  {b.description}")
    return ExitCode.OK


# --- parser -----------------------------------------------------------------------------------


def fit_arg(sp: argparse.ArgumentParser) -> None:
    """Add `--fit`: the least II at which the design fits the board (operators shared)."""
    sp.add_argument("--fit", action="store_true",
                    help="schedule at the least II at which the design fits the board's "
                         "LUT/FF/DSP/BRAM at the clock (operators shared), whatever the "
                         "source requests; the report says why each smaller II did not fit")


def _count(text: str) -> int:
    """An argparse type: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, not {value}")
    return value


def _seed(text: str) -> int:
    """An argparse type: a seed, 0 <= seed < 2**32."""
    value = _count(text)
    if value >= 2**32:
        raise argparse.ArgumentTypeError(f"must be below 2**32, not {value}")
    return value


def _parser(characterize: bool = False) -> argparse.ArgumentParser:
    """Return the parser; ``characterize`` adds that command's options (a slower import)."""
    from kera._targets import registered_targets

    p = argparse.ArgumentParser(prog="kera-hls", description="The Kera HLS compiler.")
    p.add_argument("--version", action="version", version=f"kera-hls {kera.__version__}")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars on stderr")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, fn: Callable, help_: str, **kw: object) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_, **kw)  # type: ignore[arg-type]
        sp.set_defaults(fn=fn)
        sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show Python tracebacks")
        sp.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                        help="no progress bars on stderr")
        return sp

    sp = command("check", cmd_check, "parse and type-check; print every diagnostic")
    sp.add_argument("files", nargs="+", metavar="FILE", help="the .kera sources to check")
    sp.add_argument("--format", choices=("text", "json"), default="text",
                    help="diagnostics as text for a person or as JSON lines (default: text)")

    sp = command("tree", cmd_tree, "print the lossless syntax tree")
    sp.add_argument("file", metavar="FILE", help="a .kera source")

    def program_args(sp: argparse.ArgumentParser, board: bool = False) -> None:
        sp.add_argument("file", metavar="FILE", help="a .kera source or a .keg artifact")
        sp.add_argument("--top", help="the function to build (default: the `#[top]` one)")
        sp.add_argument("-O", dest="opt_level", type=int, default=2, choices=(0, 1, 2),
                        metavar="LEVEL", help="optimisation level -O0, -O1, -O2 (default: 2)")
        sp.add_argument("--stats", action="store_true", help="print per-pass statistics")
        sp.add_argument("--dump-after", metavar="PASS", help="print the graph after PASS")
        sp.add_argument("--validate", action="store_true", help="check every node of the graph "
                        "after every pass (default: no check; the tests validate)")
        if board:
            sp.add_argument("--board", default="icebreaker",
                            help="board name or TOML file (default: icebreaker; see `boards`)")
            sp.add_argument("--clock-mhz", type=float, metavar="F",
                            help="clock target in MHz (default: the board's clock)")

    def seed_arg(sp: argparse.ArgumentParser, what: str) -> None:
        sp.add_argument("--seed", type=_seed, default=0, help=f"seed of {what} (default: 0)")

    def simulator_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--simulator", default="verilator", choices=("verilator", "icarus"),
                        help="the RTL simulator (default: verilator)")

    sp = command("fingerprint", cmd_fingerprint, "print the graph fingerprint (SHA3-256)")
    program_args(sp)

    sp = command("compile", cmd_compile, "build the graph and write the .keg artifact")
    program_args(sp)
    sp.add_argument("-o", "--output", required=True, metavar="OUT.keg",
                    help="the .keg file to write (required; folders are created)")

    targets = ", ".join(registered_targets())
    sp = command("run", cmd_run, "evaluate on a target, one JSON result per input line")
    program_args(sp, board=True)
    sp.add_argument("--target", default="interp",
                    help=f"where to run: {targets} (default: interp)")
    sp.add_argument("--inputs", required=True, metavar="IN.jsonl", help=INPUTS_HELP)

    sp = command("synthesize", cmd_synthesize,
                 "schedule for a board; emit Verilog, testbench and reports")
    program_args(sp, board=True)
    sp.add_argument("-o", "--output", required=True, metavar="DIR",
                    help="the folder for <top>.v, <top>_tb.py, report.json, report.txt and "
                         "<top>.keg (required; created)")
    sp.add_argument("--pnr", action="store_true",
                    help="also run yosys + nextpnr and fill `measured` in the report (slow)")
    sp.add_argument("--strict", action="store_true",
                    help="exit 4 when the clock target is not met (measured with --pnr)")
    sp.add_argument("--close-timing", action="store_true",
                    help="when place and route misses the clock, re-schedule with a tighter "
                         "margin and measure again, up to 4 tries (implies --pnr; slow)")
    sp.add_argument("--allow-overfull", action="store_true",
                    help="emit the design even when it needs more than the board has")
    fit_arg(sp)
    sp.add_argument("--bitstream", action="store_true",
                    help="also build the board's bitstream with the UART shell (docs/board.md)")

    sp = command("board-run", cmd_board_run, "send vectors to a board over its UART")
    sp.add_argument("dir", metavar="DIR", help="what `synthesize --bitstream -o DIR` wrote")
    sp.add_argument("--port", required=True, help="the board's serial port, e.g. /dev/ttyUSB1")
    sp.add_argument("--inputs", required=True, metavar="IN.jsonl",
                    help="the input vectors, one JSON object per line ({param: value, ...})")
    sp.add_argument("--timeout", type=float, default=2.0,
                    help="seconds to wait for each reply (default: 2.0)")

    sp = command("sim", cmd_sim, "simulate the RTL with cocotb and check cycle-exactness")
    program_args(sp, board=True)
    sp.add_argument("--inputs", required=True, metavar="IN.jsonl", help=INPUTS_HELP)
    simulator_arg(sp)
    sp.add_argument("--backpressure", action="store_true",
                    help="randomise out_ready (default: held at 1)")
    seed_arg(sp, "the backpressure pattern")
    sp.add_argument("--waves", metavar="FILE.vcd",
                    help="write a waveform file: VCD, or FST for a .fst name (default: none)")
    fit_arg(sp)

    sp = command("parity", cmd_parity, "bit-exact comparison of targets on edge and random inputs")
    program_args(sp, board=True)
    sp.add_argument("--targets", metavar="LIST",
                    help=f"comma-separated, from {targets}, board (default: all but board; a "
                         "target that cannot run here is reported, not a failure)")
    sp.add_argument("--port", metavar="DEV",
                    help="the board's UART, for the `board` target (e.g. /dev/ttyUSB1)")
    sp.add_argument("--timeout", type=float, default=2.0, metavar="S",
                    help="seconds to wait for each reply of the `board` target (default: 2)")
    sp.add_argument("--vectors", type=_count, default=10000, metavar="N",
                    help="random vectors, added to the edge ones (default: 10000)")
    seed_arg(sp, "the random vectors")
    simulator_arg(sp)
    sp.add_argument("--json", metavar="OUT.json", help="also write the report as JSON")
    fit_arg(sp)

    command("boards", cmd_boards, "list boards, families, devices and default clocks")

    help_ = "fit a family's delay/area model with yosys + nextpnr (slow)"
    if characterize:
        from kera.hls.characterize.__main__ import parser as characterize_parser

        command("characterize", cmd_characterize, help_, parents=[characterize_parser()],
                add_help=False)
    else:
        command("characterize", cmd_characterize, help_)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (INTERFACES.md)."""
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        args = _parser(characterize="characterize" in argv).parse_args(argv)
    except KeyboardInterrupt:
        _err("kera-hls: interrupted")
        return 130
    if args.command == "characterize":  # its own parser reads its options again
        args.argv = [a for a in argv[argv.index("characterize") + 1 :]
                     if a not in ("--debug", "-q", "--quiet")]
    try:
        with progress.reporting(enabled=not args.quiet):
            return int(args.fn(args))
    except KeraError as e:
        if args.debug:
            raise
        _err(e.message if e.message.startswith(("kera-hls", "/")) or ":" in e.message
             else f"kera-hls: {e.message}")
        return int(e.exit_code)
    except KeyboardInterrupt:
        _err("kera-hls: interrupted")
        return 130
    except BrokenPipeError:
        return ExitCode.OK
    except Exception as e:  # noqa: BLE001 — the last line of defence: never a bare traceback
        if _during_interrupt(e) and not args.debug:
            _err("kera-hls: interrupted")
            return 130
        if args.debug:
            raise
        _err(f"kera-hls: internal compiler error: {type(e).__name__}: {e} "
             "(rerun with --debug for the traceback)")
        return ExitCode.INTERNAL


if __name__ == "__main__":
    sys.exit(main())
