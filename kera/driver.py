"""Load a program for any command: `.kera` source (built and optimised) or a `.keg` artifact."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kera.diagnostics import KeraError, render_all
from kera.elaborate import Program, build_program
from kera.ir.graph import Graph


@dataclass(frozen=True)
class Loaded:
    """A graph ready for the back half of the flow, and where it came from."""

    graph: Graph
    top: str
    path: str
    program: Program | None  # None when loaded from a .keg


def read_file(path: str) -> bytes:
    """Read a user's file, turning OS problems into a one-line usage error."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise KeraError(f"{path}: no such file", exit_code=2) from None
    except IsADirectoryError:
        raise KeraError(f"{path}: is a directory, not a file", exit_code=2) from None
    except OSError as e:
        raise KeraError(f"{path}: cannot read: {e.strerror}", exit_code=2) from None


def check_source(path: str) -> Program:
    """Parse and type-check every function of a file (no top needed)."""
    return build_program(path, read_file(path), need_top=False)


def load(path: str, top: str | None = None, opt_level: int = 2, *, stats: list | None = None,
         dump_after: str | None = None) -> Loaded:  # fmt: skip
    """Return the graph of a `.kera` (built, then optimised at ``opt_level``) or `.keg` file.

    A `.keg` is loaded and verified as it is (it was optimised when it was compiled), so its
    fingerprint is the one `compile` printed.
    """
    data = read_file(path)
    if data[:4] == b"KEG\x00" or path.endswith(".keg"):
        from kera.ir import keg

        graph = keg.load(data, path)
        names = sorted(graph.regions)
        if top is None:
            if len(names) != 1:
                raise KeraError(f"{path}: holds {len(names)} functions; pass --top", exit_code=2)
            top = names[0]
        if top not in graph.regions:
            raise KeraError(f"{path}: no function `{top}`; candidates: {', '.join(names)}")
        return Loaded(graph, top, path, None)
    program = build_program(path, data, top)
    if not program.ok:
        text = render_all(program.source, program.diagnostics)
        count = sum(d.severity.value == "error" for d in program.diagnostics)
        raise KeraError(f"{text}\n{path}: {count} error{'s' * (count != 1)}",
                        diagnostics=tuple(program.diagnostics))  # fmt: skip
    assert program.graph is not None and program.top is not None
    from kera.opt import PASSES, PIPELINES, optimize

    if f"O{opt_level}" not in PIPELINES:
        raise KeraError(f"unknown optimisation level -O{opt_level} (known: -O0, -O1, -O2)", 2)
    if dump_after is not None and dump_after not in PASSES:
        known = ", ".join(sorted(PASSES))
        raise KeraError(f"unknown pass `{dump_after}` for --dump-after (known: {known})", 2)
    graph = optimize(program.graph, opt_level, stats=stats, dump_after=dump_after)
    return Loaded(graph, program.top, path, program)
