"""The public Python API behind ``kera`` (re-exported there): load → compile → synthesize → run.

Every function takes and returns plain values; problems are ``KeraError``s with an
``ExitCode``. Outputs (a `.keg`, a synthesis folder, a waveform, a parity JSON) are checked
for writability before any work starts. Heavy modules are imported inside the functions, so
``import kera`` stays cheap.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kera._targets import get_target, registered_targets, require
from kera.diagnostics import ExitCode, KeraError

if TYPE_CHECKING:
    from kera.elaborate import Program
    from kera.hls.pipeline import Schedule
    from kera.ir.graph import Graph
    from kera.sim.parity import ParityReport
    from kera.sim.runner import SimResult

#: The slowest clock a report can state (it keeps 3 decimals of MHz).
MIN_CLOCK_MHZ = 0.001

Inputs = str | os.PathLike[str] | Iterable[str] | Iterable[Mapping[str, object]]

# ----------------------------------------------------------------------------- files


def read_file(path: str | os.PathLike[str]) -> bytes:
    """Read a user's file, turning OS problems into a one-line usage error."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise KeraError(f"{path}: no such file", exit_code=ExitCode.USAGE) from None
    except IsADirectoryError:
        raise KeraError(f"{path}: is a directory, not a file", exit_code=ExitCode.USAGE) from None
    except OSError as e:
        raise KeraError(f"{path}: cannot read: {e.strerror}", exit_code=ExitCode.USAGE) from None


def check_output(path: str | os.PathLike[str], *, directory: bool = False) -> Path:
    """Check that ``path`` (a file, or with ``directory`` a folder) can be written; return it.

    Missing parent folders are created (they would be anyway). Raises ``KeraError`` (exit 2)
    naming the real cause: a parent that is a file, a folder where a file goes (or the
    reverse), or the OS's reason (permission, a read-only or virtual file system).
    """
    out = Path(path)
    existing = next(p for p in (out, *out.parents) if p.exists() or p.is_symlink())
    if existing != out and not existing.is_dir():
        raise KeraError(f"{out}: cannot write: `{existing}` is a file, not a directory",
                        exit_code=ExitCode.USAGE)
    if existing == out and out.is_dir() != directory:
        what = "a file, not a directory" if directory else "a directory, not a file"
        raise KeraError(f"{out}: cannot write: it is {what}", exit_code=ExitCode.USAGE)
    try:
        if directory:
            out.mkdir(parents=True, exist_ok=True)
            probe = out / f".kera-write-probe-{os.getpid()}"
            probe.touch()
            probe.unlink()
        elif out.exists():
            with open(out, "r+b"):
                pass
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            with open(out, "xb"):
                pass
            out.unlink()
    except OSError as e:
        raise KeraError(f"{out}: cannot write: {e.strerror or e}",
                        exit_code=ExitCode.USAGE) from None
    return out


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as e:
        raise KeraError(f"{path}: cannot write: {e.strerror}", exit_code=ExitCode.USAGE) from None


# ----------------------------------------------------------------------------- load


@dataclass(frozen=True)
class Loaded:
    """A graph ready for the back half of the flow, and where it came from."""

    graph: Graph
    top: str
    path: str = "<graph>"
    program: Program | None = None  # None when loaded from a .keg (or built by hand)

    @property
    def fingerprint(self) -> str:
        """The graph's fingerprint (hex SHA3-256)."""
        return self.graph.fingerprint()


def check_source(path: str | os.PathLike[str] | None = None, *, text: str | bytes | None = None,
          name: str | None = None) -> Program:
    """Parse and type-check every function of a file or a text (no top needed).

    The result's ``diagnostics`` hold every problem; ``ok`` is False when there are errors.
    """
    from kera.elaborate import build_program

    where, data = _source(path, text, name)
    return build_program(where, data, need_top=False)


def load(
    path: str | os.PathLike[str] | None = None,
    *,
    text: str | bytes | None = None,
    name: str | None = None,
    top: str | None = None,
    opt_level: int = 2,
    stats: list | None = None,
    dump_after: str | None = None,
    validate: bool | Literal["full"] = True,
) -> Loaded:
    """Return the graph of a `.kera` source (built, then optimised at ``opt_level``) or `.keg`.

    Give a ``path``, or the ``text`` itself (a source string, or `.keg` bytes) with an optional
    ``name`` for messages. A `.keg` is loaded and verified as it is (it was optimised when it
    was compiled), so its fingerprint is the one `compile` gave. ``stats`` collects per-pass
    statistics; ``dump_after`` prints the graph after that pass; ``validate`` is the
    optimiser's (``"full"``: every node checked after every pass). Raises ``KeraError`` (exit 1)
    with every diagnostic rendered when the program has errors.
    """
    from kera.diagnostics import render_all
    from kera.elaborate import build_program

    where, data = _source(path, text, name)
    if data[:4] == b"KEG\x00" or where.endswith(".keg"):
        return _load_keg(data, where, top)
    program = build_program(where, data, top)
    if not program.ok:
        text_ = render_all(program.source, program.diagnostics)
        count = sum(d.severity.value == "error" for d in program.diagnostics)
        raise KeraError(f"{text_}\n{where}: {count} error{'s' * (count != 1)}",
                        diagnostics=tuple(program.diagnostics))
    assert program.graph is not None and program.top is not None
    from kera.opt import PASSES, PIPELINES, optimize

    if f"O{opt_level}" not in PIPELINES:
        raise KeraError(f"unknown optimisation level -O{opt_level} (known: -O0, -O1, -O2)",
                        exit_code=ExitCode.USAGE)
    if dump_after is not None and dump_after not in PASSES:
        known = ", ".join(sorted(PASSES))
        raise KeraError(f"unknown pass `{dump_after}` for --dump-after (known: {known})",
                        exit_code=ExitCode.USAGE)
    graph = optimize(program.graph, opt_level, stats=stats, dump_after=dump_after,
                     validate=validate)
    return Loaded(graph, program.top, where, program)


def _source(path: str | os.PathLike[str] | None, text: str | bytes | None,
            name: str | None) -> tuple[str, bytes]:
    if (path is None) == (text is None):
        raise KeraError("give exactly one of a path or a text", exit_code=ExitCode.USAGE)
    if path is not None:
        return str(path), read_file(path)
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)  # type: ignore[arg-type]
    return name or "<text>", data


def _load_keg(data: bytes, where: str, top: str | None) -> Loaded:
    from kera.ir import keg

    graph = keg.load(data, where)
    names = sorted(graph.regions)
    if top is None:
        if len(names) != 1:
            raise KeraError(f"{where}: holds {len(names)} functions; pass --top",
                            exit_code=ExitCode.USAGE)
        top = names[0]
    if top not in graph.regions:
        raise KeraError(f"{where}: no function `{top}`; candidates: {', '.join(names)}")
    return Loaded(graph, top, where, None)


# ----------------------------------------------------------------------------- compile


@dataclass(frozen=True)
class Compiled:
    """A `.keg` artifact: its bytes, the graph's fingerprint, and where it was written."""

    keg: bytes
    fingerprint: str
    nodes: int
    path: Path | None = None


def compile(loaded: Loaded, output: str | os.PathLike[str] | None = None) -> Compiled:  # noqa: A001
    """Serialise the graph as a `.keg`; write it to ``output`` when given (checked first)."""
    from kera.ir import keg

    out = check_output(output) if output is not None else None
    data = keg.write(loaded.graph)
    if out is not None:
        _write(out, data)
    return Compiled(data, loaded.fingerprint, len(loaded.graph.nodes), out)


# ----------------------------------------------------------------------------- schedule


def plan(loaded: Loaded, *, board: str = "icebreaker", clock_mhz: float | None = None,
         ii: int | None = None, fit: bool = False, covers: bool = True) -> Schedule:
    """Lower the top for hardware and schedule it for ``board`` (the schedule every target uses).

    ``clock_mhz`` defaults to the board's clock and must lie between ``MIN_CLOCK_MHZ`` and what
    one register stage of the family allows; ``ii`` to the graph's `#[pipeline(ii = N)]`;
    ``fit``: the least II at which the design fits the board (`--fit`, ``kera.hls.fit``);
    ``covers=False``: without the LUT cells only the Verilog uses (``SOFTWARE`` targets).
    """
    from kera.hls.synth import plan_schedule

    check_clock(board, clock_mhz)
    return plan_schedule(loaded.graph, loaded.top, board=board, clock_mhz=clock_mhz, ii=ii,
                         fit=fit, covers=covers)[0]


#: The built-in targets that never write Verilog: their schedule needs no LUT covers.
SOFTWARE = frozenset({"interp", "cpu", "wasm", "ptx"})


def check_clock(board: str, clock_mhz: float | None) -> None:
    """Raise ``KeraError`` (exit 2) when ``clock_mhz`` is not a clock ``board``'s family has.

    The fastest is one register stage with no logic (the model's clock-to-Q plus setup).
    """
    if clock_mhz is None:
        return
    from kera.hls.boards import load_board
    from kera.hls.models import load_model

    family = load_board(board).family
    fastest = 1000.0 / load_model(family).clk_to_q_setup_ns
    ok = isinstance(clock_mhz, int | float) and not isinstance(clock_mhz, bool)
    if not ok or not MIN_CLOCK_MHZ <= clock_mhz <= fastest:
        raise KeraError(f"--clock-mhz {clock_mhz} is not a clock for {family} (board `{board}`): "
                        f"it must be between {MIN_CLOCK_MHZ} and {fastest:.3f} MHz (one "
                        "register stage with no logic)", exit_code=ExitCode.USAGE)


# ----------------------------------------------------------------------------- synthesize


@dataclass(frozen=True)
class Report:
    """``report.json`` as a value: the INTERFACES.md fields typed, every field in ``data``.

    Built from the report dict, so fields added to the report pass through (``report["x"]``).
    """

    fingerprint: str
    top: str
    board: str
    family: str
    device: str
    clock_mhz: float
    latency_cycles: int
    ii: int
    stages: tuple[Mapping[str, Any], ...]
    estimate: Mapping[str, Any]
    critical_path: tuple[Mapping[str, Any], ...]
    measured: Mapping[str, Any] | None
    data: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str | bytes) -> Report:
        """Return the report of a ``report.json`` text or its parsed dict."""
        d = json.loads(data) if isinstance(data, str | bytes) else dict(data)
        return cls(d["fingerprint"], d["top"], d["board"], d["family"], d["device"],
                   float(d["clock_mhz"]), int(d["latency_cycles"]), int(d["ii"]),
                   tuple(d["stages"]), d["estimate"], tuple(d["critical_path"]),
                   d.get("measured"), d)

    def to_json(self) -> dict[str, Any]:
        """Return the report as the JSON-ready dict ``report.json`` holds."""
        return json.loads(json.dumps(self.data))

    def __getitem__(self, key: str) -> Any:
        return self.data[key]


@dataclass(frozen=True)
class Synthesis:
    """What ``synthesize`` wrote: the report, the files by kind, and the schedule."""

    report: Report
    paths: Mapping[str, Path]
    schedule: Schedule
    board: Any  # kera.hls.boards.Board

    @property
    def verilog(self) -> str:
        """The text of the generated Verilog (``<top>.v``)."""
        return self.paths["verilog"].read_text(encoding="utf-8")

    @property
    def timing_met(self) -> bool:
        """Whether the clock target is met (by nextpnr's measurement when there is one)."""
        return bool(self.report["timing"]["met"])


def synthesize(
    loaded: Loaded,
    board: str = "icebreaker",
    *,
    outdir: str | os.PathLike[str],
    clock_mhz: float | None = None,
    pnr: bool = False,
    bitstream: bool = False,
    allow_overfull: bool = False,
    close_timing: bool = False,
    progress: Callable[[str], None] | None = None,
    fit: bool = False,
) -> Synthesis:
    """Schedule for ``board``; write Verilog, testbench, ``report.json``/``.txt`` and the `.keg`.

    With ``pnr``, yosys + nextpnr place and route the Verilog and the report's ``measured``
    holds their figures (slow: minutes for a large design). With ``bitstream``, the core is
    put in the board's UART shell and built into a bitstream (docs/board.md; `.bin`/`.bit`,
    ``build.sh`` and the report's ``bitstream`` section). A design that needs more than the
    board has is an error (exit 1) unless ``allow_overfull``. With ``close_timing`` (which
    implies ``pnr``), a schedule that place-and-route finds too slow is re-scheduled with a
    tighter margin and measured again, a bounded number of times (``kera.hls.closure``); the
    report's ``close_timing`` lists the tries and the last one is the design written.
    """
    from kera.hls.synth import synthesize as synth

    out = check_output(outdir, directory=True)
    check_clock(board, clock_mhz)
    _check_ports(loaded)
    say = progress or (lambda _: None)
    say(f"synthesizing `{loaded.top}` for {board} ...")
    options: dict[str, Any] = dict(board=board, clock_mhz=clock_mhz, outdir=out,
                                   source=loaded.program, emitters=[_rtl_emitter(loaded.path)],
                                   allow_overfull=allow_overfull, fit=fit)
    result = synth(loaded.graph, loaded.top, **options)
    if close_timing:
        result = _close_timing(loaded, result, options, say)
    elif pnr:
        from kera.hls.pnr import measure_schedule

        say(f"place and route with yosys + nextpnr ({result.board.family}) ...")
        verilog = result.paths["verilog"].read_text(encoding="utf-8")
        measured = measure_schedule(verilog, result.schedule, result.board.family)
        result = synth(loaded.graph, loaded.top, measured=measured, **options)
    if bitstream:
        from kera.board.build import synthesize_bitstream

        synthesize_bitstream(result, out, progress=say)
    return Synthesis(Report.from_json(result.report), dict(result.paths), result.schedule,
                     result.board)


def _check_ports(loaded: Loaded) -> None:
    """Raise ``KeraError`` (exit 1, with the source location) before any scheduling when the
    top cannot be a Verilog module as it is (a keyword or a fixed port's name; INTERFACES.md)."""
    from kera.rtl.names import check_ports

    check_ports(loaded.graph, loaded.top,
                loaded.program.source.data if loaded.program is not None else None)


def _close_timing(loaded: Loaded, first: Any, options: dict[str, Any],
                  say: Callable[[str], None]) -> Any:
    """Re-schedule until place-and-route meets the clock (see ``synthesize``)."""
    from kera.hls.closure import Try, close_timing
    from kera.hls.pnr import measure_schedule
    from kera.hls.synth import MARGIN_DIRECTIVE, graph_margin
    from kera.hls.synth import synthesize as synth

    family, clock = first.board.family, first.schedule.clock_mhz
    kept: dict[str, Any] = {}

    def attempt(margin: float) -> Try | None:
        margin = round(margin, 3)  # what the `.keg` records (MARGIN_DIRECTIVE, in thousandths)
        try:
            result = first if not kept else synth(loaded.graph, loaded.top, margin=margin,
                                                  **options)
        except KeraError as e:  # no schedule at this margin: the tries end here
            say(f"close timing: no schedule with a {margin:.0%} margin ({e.message})")
            return None
        say(f"place and route with yosys + nextpnr ({family}), margin {margin:.0%} ...")
        verilog = result.paths["verilog"].read_text(encoding="utf-8")
        measured = measure_schedule(verilog, result.schedule, family)
        kept.update(margin=margin, measured=measured)
        fmax = float(measured["fmax_mhz"])
        sched = result.schedule
        return Try(margin, sched.latency + 1, sched.latency, fmax, fmax >= clock)

    tries = close_timing(attempt, clock, graph_margin(loaded.graph, loaded.top, None), say)
    graph = loaded.graph.copy()  # its `.keg` keeps the margin, so sim/parity of it agree
    graph.directives.setdefault(loaded.top, {})[MARGIN_DIRECTIVE] = round(kept["margin"] * 1000)
    return synth(graph, loaded.top, margin=kept["margin"], measured=kept["measured"],
                 close_timing=[t.to_json() for t in tries], **options)


def _board_target(board: str, port: str | None, timeout: float) -> Any:
    from kera.board.run import board_target
    from kera.hls.boards import load_board

    assert port is not None  # checked by ``parity``
    return board_target(port, load_board(board).baud, timeout)


def _rtl_emitter(source_name: str | None) -> Callable:
    """Return a ``synthesize`` emitter writing ``<top>.v`` and the cocotb ``<top>_tb.py``."""

    def emit(result: Any, out: Path) -> dict[str, Path]:
        import kera
        from kera.rtl import emit_verilog
        from kera.sim import render_testbench

        sched = result.schedule
        verilog = emit_verilog(sched, board=result.board.name, version=kera.__version__,
                               source_name=source_name)
        paths = {"verilog": out / f"{sched.region}.v", "testbench": out / f"{sched.region}_tb.py"}
        _write(paths["verilog"], verilog.encode("utf-8"))
        _write(paths["testbench"], render_testbench(sched).encode("utf-8"))
        return paths

    return emit


# ----------------------------------------------------------------------------- simulate, run


@dataclass(frozen=True)
class Simulation:
    """A cocotb simulation of the RTL: the schedule it checked and what it showed."""

    schedule: Schedule
    result: SimResult

    @property
    def passed(self) -> bool:
        """True when every value and every cycle was as the report says."""
        return self.result.passed

    @property
    def outputs(self) -> list[object]:
        """One JSON value per input row, as the RTL produced them."""
        return self.result.outputs

    def summary(self) -> list[str]:
        """What the simulation showed, saying which observations are meaningful."""
        from kera.sim.runner import summary

        return summary(self.result, self.schedule)


def simulate(
    loaded: Loaded,
    inputs: Inputs,
    *,
    board: str = "icebreaker",
    clock_mhz: float | None = None,
    simulator: str = "verilator",
    backpressure: bool = False,
    seed: int = 0,
    waves: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
    fit: bool = False,
) -> Simulation:
    """Simulate the RTL on ``inputs`` (a JSONL path, lines or dicts) cycle by cycle.

    Values are checked against the interpreter and cycles against the schedule. ``waves``
    names a waveform file to write (VCD, or FST for `.fst`). An inputs file with no inputs is
    an error (exit 1): a simulation of nothing would pass.
    """
    from kera.ir import values
    from kera.sim import simulate as sim

    out = check_output(waves) if waves is not None else None
    lines = _input_lines(inputs)
    _check_ports(loaded)
    sched = plan(loaded, board=board, clock_mhz=clock_mhz, fit=fit)
    values.load_jsonl(lines, sched.graph.signature(sched.region)[0], _where(inputs))  # checked
    rows = [json.loads(line) for line in lines if line.strip()]
    if progress:
        from kera.sim.runner import describe

        progress(describe(sched, simulator))
    result = sim(sched, rows, simulator=simulator, backpressure=backpressure, seed=seed,
                 waves=out)
    if out is not None and result.waves is None:
        raise KeraError(f"{out}: the {simulator} simulation wrote no waveform there",
                        exit_code=ExitCode.TOOL)
    return Simulation(sched, result)


def run(
    loaded: Loaded,
    inputs: Inputs,
    *,
    target: str = "interp",
    board: str = "icebreaker",
    clock_mhz: float | None = None,
    simulator: str | None = None,
) -> list[object]:
    """Evaluate on ``target`` for each input row (a JSONL path, lines or dicts); return results.

    Every target but the interpreter lowers from the board's schedule (the one `synthesize`
    and `sim` use), so `cpu` evaluates exactly the association order the RTL does. A target
    that cannot run here is exit 3, said before the inputs are read.
    """
    from kera.hls.pipeline import single_stage
    from kera.ir import values

    chosen = get_target(target, simulator=simulator)
    require(chosen)
    lines = _input_lines(inputs)
    loaded.graph.region_or_error(loaded.top)
    params, result_type = loaded.graph.signature(loaded.top)
    batch = values.load_jsonl(lines, params, _where(inputs))
    if batch.rows == 0:
        return []
    sched = (plan(loaded, board=board, clock_mhz=clock_mhz, covers=target not in SOFTWARE)
             if chosen.scheduled else single_stage(loaded.graph, loaded.top))
    got = chosen.run(sched, batch.inputs, batch.rows)
    if chosen.json_rows:
        return list(got)  # type: ignore[call-overload]
    return values.to_json_rows(got, result_type, batch.rows)


def _where(inputs: Inputs) -> str:
    return str(inputs) if isinstance(inputs, str | os.PathLike) else "<inputs>"


def _input_lines(inputs: Inputs) -> list[str]:
    """Return the inputs as JSONL lines; a file with no non-blank line is an error (exit 1)."""
    if isinstance(inputs, str | os.PathLike):
        lines = read_file(inputs).decode("utf-8", errors="replace").splitlines()
        if not any(line.strip() for line in lines):
            raise KeraError(f"{inputs}: no inputs: the file is empty or holds only blank lines "
                            "(one JSON object per line is expected)")
        return lines
    return list(_json_lines(inputs))


def _json_lines(rows: Iterable[str] | Iterable[Mapping[str, object]]) -> Iterator[str]:
    for row in rows:
        yield row if isinstance(row, str) else json.dumps(row)


# ----------------------------------------------------------------------------- parity


def parity(
    loaded: Loaded,
    *,
    targets: Sequence[str] | None = None,
    vectors: int = 10000,
    seed: int = 0,
    board: str = "icebreaker",
    clock_mhz: float | None = None,
    simulator: str = "verilator",
    output: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
    port: str | None = None,
    timeout: float = 2.0,
    fit: bool = False,
) -> ParityReport:
    """Compare ``targets`` (default: every registered one) with the interpreter, bit for bit.

    Edge vectors plus ``vectors`` seeded random ones, on the board's schedule; ``output``
    names a JSON file for the report (checked before the work). Its ``exit_code`` is 0, 3 (a
    requested target cannot run here) or 4 (a mismatch or a failing target). The target
    ``board`` (never a default) is the design loaded on a board, reached over the UART at
    ``port`` (``kera.board.run.board_target``; its baud rate is the board file's).
    """
    from kera.sim.parity import run_parity

    out = check_output(output) if output is not None else None
    names = list(targets) if targets is not None else registered_targets()
    if "board" in names and port is None:
        raise KeraError("the `board` target needs --port, the board's UART (e.g. /dev/ttyUSB1)",
                        exit_code=ExitCode.USAGE)
    chosen = [_board_target(board, port, timeout) if n == "board" else
              get_target(n, simulator=simulator) for n in dict.fromkeys(names)]
    sched = plan(loaded, board=board, clock_mhz=clock_mhz, fit=fit,
                 covers=not SOFTWARE.issuperset(names))
    report = run_parity(loaded.graph, loaded.top, targets=chosen, vectors=vectors, seed=seed,
                        schedule=sched, progress=progress)
    if targets is None:  # nothing was asked for by name: a target that cannot run is no failure
        report = replace(report, requested=())
    if out is not None:
        text = json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n"
        _write(out, text.encode("utf-8"))
    return report


__all__ = ["MIN_CLOCK_MHZ", "Compiled", "Loaded", "Report", "Simulation", "Synthesis",
           "check_clock", "check_output", "check_source", "compile", "load", "parity", "plan",
           "read_file", "run", "simulate", "synthesize"]
