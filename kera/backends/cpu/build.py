"""Compile emitted C into a shared object, cached by fingerprint, and load it with ctypes.

The cache key is the SHA-256 of the C text, the flags and the compiler's identity, so one
program is compiled once per machine. The instruction-set level is chosen at run time from the
CPU's flags: x86-64 baseline (SSE2), ``-march=x86-64-v3`` (AVX2) or ``-march=x86-64-v4``
(AVX-512); ``KERA_CPU_ISA=sse2|avx2|avx512`` overrides it. Files are written to a temporary name
and renamed, so concurrent processes share the cache safely.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from kera.backends.cache import cache_dir
from kera.backends.lower import LoweringError
from kera.diagnostics import ExitCode, KeraError

FLAGS = ("-O2", "-ffp-contract=off", "-fno-fast-math", "-shared", "-fPIC")
ISA_FLAGS = {"sse2": (), "avx2": ("-march=x86-64-v3",), "avx512": ("-march=x86-64-v4",)}
_V3 = {"avx2", "bmi1", "bmi2", "fma", "movbe", "f16c", "lzcnt"}
_V4 = _V3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}


@functools.cache
def _cpu_flags() -> frozenset[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def _has(flags: frozenset[str], wanted: set[str]) -> bool:
    # /proc/cpuinfo spells LZCNT as "abm" and BMI1 as "bmi1".
    return all(f in flags or (f == "lzcnt" and "abm" in flags) for f in wanted)


def host_isa() -> str:
    """Return the best ISA level this CPU runs: ``avx512``, ``avx2`` or ``sse2``."""
    override = os.environ.get("KERA_CPU_ISA")
    if override:
        if override not in ISA_FLAGS:
            raise KeraError(f"KERA_CPU_ISA must be one of {', '.join(ISA_FLAGS)}, not "
                            f"`{override}`", exit_code=ExitCode.USAGE)
        return override
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return "sse2"  # elsewhere: the compiler's default for the host
    flags = _cpu_flags()
    if _has(flags, _V4):
        return "avx512"
    if _has(flags, _V3):
        return "avx2"
    return "sse2"


def find_compiler() -> str:
    """Return the C compiler's path (``CC``, then ``cc``, ``gcc``, ``clang``).

    Raises ``KeraError`` (exit code 3) with a hint when there is none.
    """
    names = [os.environ["CC"]] if os.environ.get("CC") else ["cc", "gcc", "clang"]
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise KeraError(
        "target `cpu` needs a C compiler, and none was found "
        f"(looked for {', '.join(names)}); hint: install gcc (`apt-get install gcc`) or set CC",
        exit_code=ExitCode.TOOL,
    )


@functools.cache
def _compiler_id(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        raise KeraError(f"C compiler `{cc}` does not run: {e}", exit_code=ExitCode.TOOL) from None
    return out.stdout.splitlines()[0] if out.stdout else cc


def compile_c(source: str, isa: str | None = None) -> Path:
    """Compile C ``source`` to a shared object (or reuse the cached one); return its path."""
    cc = find_compiler()
    isa = isa or host_isa()
    flags = (*FLAGS, *ISA_FLAGS[isa])
    key = hashlib.sha256("\0".join([_compiler_id(cc), *flags, source]).encode()).hexdigest()
    folder = cache_dir("cpu")
    target = folder / f"{key[:32]}-{isa}.so"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
        c_file = Path(tmp) / "kernel.c"
        c_file.write_text(source, encoding="utf-8")
        so = Path(tmp) / "kernel.so"
        proc = subprocess.run([cc, *flags, str(c_file), "-o", str(so)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise LoweringError("the C compiler rejected the generated code (a kera-hls bug):\n"
                                + proc.stderr[-4000:])
        os.replace(so, target)
    return target


@functools.cache
def load(path: Path) -> ctypes.CDLL:
    """Load a shared object once per process."""
    return ctypes.CDLL(str(path))


__all__ = ["FLAGS", "ISA_FLAGS", "compile_c", "find_compiler", "host_isa", "load"]
