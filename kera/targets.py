"""Evaluate a loaded program on a named target: one JSON-ready result per input line."""

from __future__ import annotations

from kera.driver import Loaded
from kera.syntax.diagnostics import KeraError

TARGETS = ("interp", "cpu", "wasm", "ptx", "rtl")


def run_target(target: str, loaded: Loaded, lines: list[str], where: str) -> list[object]:
    """Run ``loaded`` on ``target`` for each JSONL input line; return JSON-ready results."""
    if target not in TARGETS:
        raise KeraError(f"unknown target `{target}`; targets: {', '.join(TARGETS)}", exit_code=2)
    if target == "interp":
        from kera.interp import run_jsonl

        return run_jsonl(loaded.graph, loaded.top, lines, where)
    raise KeraError(
        f"target `{target}` is not available in this build of kera-hls yet "
        "(available: interp)",
        exit_code=3,
    )
