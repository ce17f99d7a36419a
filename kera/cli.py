"""`kera-hls`: the command line, a thin shell over the public Python API."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from kera import __version__
from kera.syntax.diagnostics import KeraError

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_TOOL, EXIT_CHECK = 0, 1, 2, 3, 4
EXIT_INTERNAL = 70


def _err(message: str) -> None:
    print(message, file=sys.stderr)


# --- commands ---------------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    """Parse and type-check files; print every diagnostic."""
    from kera.driver import check_source
    from kera.syntax.diagnostics import render_all

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
    from kera.driver import load

    print(load(args.file, args.top).graph.fingerprint())
    return EXIT_OK


def cmd_compile(args: argparse.Namespace) -> int:
    """Build (and optimise) the graph and write the `.keg`."""
    from kera.driver import load
    from kera.ir import keg

    loaded = load(args.file, args.top)
    data = keg.write(loaded.graph)
    try:
        with open(args.output, "wb") as f:
            f.write(data)
    except OSError as e:
        raise KeraError(f"{args.output}: cannot write: {e.strerror}", exit_code=2) from None
    _err(f"wrote {args.output} ({len(data)} bytes, {len(loaded.graph.nodes)} nodes)")
    print(loaded.graph.fingerprint())
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """Evaluate the program on one input vector per JSONL line."""
    from kera.driver import load, read_file
    from kera.targets import run_target

    loaded = load(args.file, args.top)
    lines = read_file(args.inputs).decode("utf-8", errors="replace").splitlines()
    for result in run_target(args.target, loaded, lines, args.inputs):
        print(json.dumps(result))
    return EXIT_OK


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

    sp = command("fingerprint", cmd_fingerprint, "print the graph fingerprint (SHA3-256)")
    sp.add_argument("file", metavar="FILE")
    sp.add_argument("--top")

    sp = command("compile", cmd_compile, "build the graph and write the .keg artifact")
    sp.add_argument("file", metavar="FILE")
    sp.add_argument("--top")
    sp.add_argument("-o", "--output", required=True, metavar="OUT.keg")

    sp = command("run", cmd_run, "evaluate on a target, one JSON result per input line")
    sp.add_argument("file", metavar="FILE")
    sp.add_argument("--target", default="interp")
    sp.add_argument("--inputs", required=True, metavar="IN.jsonl")
    sp.add_argument("--top")

    command("boards", cmd_boards, "list boards, families, devices and default clocks")
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
