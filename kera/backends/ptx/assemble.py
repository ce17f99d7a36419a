"""Assemble PTX with ``ptxas`` (cached by content hash) to check it and to get a cubin."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from kera.backends.cache import cache_dir
from kera.backends.lower import LoweringError
from kera.diagnostics import ExitCode, KeraError

_KNOWN = ("/usr/local/cuda/bin/ptxas", "/usr/local/bin/ptxas")


def find_ptxas() -> str | None:
    """Return the ``ptxas`` path (``PTXAS``, ``PATH``, the usual CUDA folders), or None."""
    env = os.environ.get("PTXAS")
    if env:
        return env if shutil.which(env) else None
    found = shutil.which("ptxas")
    if found:
        return found
    return next((p for p in _KNOWN if os.access(p, os.X_OK)), None)


def assemble(ptx: str, arch: str = "sm_80") -> bytes:
    """Assemble ``ptx`` for ``arch`` with ptxas; return the cubin bytes.

    Raises ``KeraError`` (exit code 3) when ptxas is absent, and ``LoweringError`` when ptxas
    rejects the text (a kera-hls bug).
    """
    ptxas = find_ptxas()
    if ptxas is None:
        raise KeraError("assembling PTX needs `ptxas` from the CUDA toolkit, and it was "
                        "not found; hint: install the CUDA toolkit or set PTXAS",
                        exit_code=ExitCode.TOOL)
    key = hashlib.sha256(f"{arch}\0{ptx}".encode()).hexdigest()[:32]
    target = cache_dir("ptx") / f"{key}-{arch}.cubin"
    if target.exists():
        return target.read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        src, out = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        src.write_text(ptx, encoding="utf-8")
        proc = subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", str(out)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise LoweringError(f"ptxas rejected the generated PTX (rc {proc.returncode}; a "
                                f"kera-hls bug):\n{proc.stderr[-4000:]}")
        data = out.read_bytes()
        os.replace(out, target)
    return data


__all__ = ["assemble", "find_ptxas"]
