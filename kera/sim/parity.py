"""Bit-exact parity: every target against the reference interpreter, on edge and random vectors.

``run_parity(graph, top)`` evaluates one region on the interpreter and on each target (``cpu``,
``wasm``, ``ptx``, ``rtl`` and whatever else is registered in ``kera``'s one target registry)
with the same inputs, compares
every result leaf as an N-bit pattern, and returns a ``ParityReport``: one row per target
(vectors, mismatches, seconds, status) and, on a mismatch, the first failing inputs with the
expected and actual values in hex, and the graph fingerprint (SEMANTICS.md, "What bit-exact
parity means"). Targets are pluggable (``kera.register_target``)::

    register_target("mine", run_mine, mine_unavailable)   # fn(schedule, inputs, rows) -> batch

The inputs always include the edge values of every parameter leaf (``edge_vectors``: 0, 1, -1,
min, max, single bits, ...) besides ``vectors`` seeded random ones (``random_vectors``).

A stateful kernel (STATE.md) gets ONE stream: the edge rows first, then the random ones, in
order from the initial state, on every target; the report compares the whole output stream and
names the first differing transfers (index, input, both values in hex) with the fingerprint.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kera import progress as bars
from kera._targets import Target, get_target, registered_targets
from kera.backends.layout import Leaf, flatten_type, leaf_bits, unflatten
from kera.diagnostics import ExitCode, KeraError
from kera.hls.pipeline import Schedule, single_stage
from kera.interp import evaluate
from kera.ir import values
from kera.ir.graph import Graph
from kera.ir.types import ArrayType, BoolType, IntType, TupleType, Type
from kera.ir.values import Value, edge_values

STATUSES = ("ok", "mismatch", "error", "assembled-not-run", "unavailable")

# ----------------------------------------------------------------------------- vectors


@dataclass(frozen=True)
class VectorSet:
    """Input rows for one signature, kept as one column per scalar leaf (layout order)."""

    params: tuple[tuple[str, Type], ...]
    columns: tuple[np.ndarray, ...]  # leaf batches: int64 / uint64 / bool, ``rows`` rows each
    rows: int

    @property
    def inputs(self) -> dict[str, Value]:
        """The rows as batched inputs (parameter name -> batched value)."""
        out, at = {}, 0
        for name, t in self.params:
            n = len(flatten_type(t))
            out[name] = unflatten(t, self.columns[at : at + n])
            at += n
        return out

    def __add__(self, other: VectorSet) -> VectorSet:
        cols = tuple(np.concatenate([a, b]) for a, b in zip(self.columns, other.columns,
                                                             strict=True))
        return VectorSet(self.params, cols, self.rows + other.rows)


def _leaves(params: Sequence[tuple[str, Type]]) -> list[Leaf]:
    return [leaf for name, t in params for leaf in flatten_type(t, name)]


def _core(t: Type) -> list[int]:
    return edge_values(t)[:7]


def _column(values_: Sequence[int], t: Type) -> np.ndarray:
    return np.array(list(values_), dtype=values.dtype_of(t)).reshape(len(values_))


MAX_EDGE_VALUES = 1 << 24
"""The pairs of core values stop before the edge rows hold more scalar values than this (rows
times input scalars): tens of thousands of 1-bit inputs get a few hundred rows, not 4,096."""


def edge_vectors(params: Sequence[tuple[str, Type]], limit: int = 4096) -> VectorSet:
    """Return the edge-value rows for a signature, combined deterministically.

    Every combination when there are at most ``limit``; otherwise each leaf takes each of its
    edge values once (the others cycling through 0, 1, -1, min, max, ...), then every pair of
    leaves takes every pair of those core values, until ``limit`` rows. When the leaves' edge
    values alone are more than ``limit`` rows one at a time (a signature of hundreds of
    scalars), they are taken side by side instead: leaf ``j`` its ``k``-th at row ``(k + j)``
    modulo the longest list (a 2,000-element `i16` array: 4,053 rows, not 70,010); and the
    pairs stop before the rows hold ``MAX_EDGE_VALUES`` values.
    """
    params = tuple(params)
    leaves = _leaves(params)
    edges = [edge_values(leaf.type) for leaf in leaves]
    if math.prod(len(e) for e in edges) <= limit:
        rows = list(itertools.product(*edges))
        table = tuple(_column([r[j] for r in rows], leaf.type) for j, leaf in enumerate(leaves))
        return VectorSet(params, table, len(rows))
    cores = [_column(_core(leaf.type), leaf.type) for leaf in leaves]
    one_at_a_time = sum(len(e) for e in edges)
    # Past the limit (hundreds of leaves), the leaves take their edge values side by side:
    # leaf j its k-th at row (k + j) mod the longest list, so the rows stay few.
    side_by_side = one_at_a_time > limit
    total = max(len(e) for e in edges) if side_by_side else one_at_a_time
    room = max(min(limit, MAX_EDGE_VALUES // len(leaves)), total)  # the pairs fill the rest
    pairs = []  # (i, j) blocks of len(core_i) * len(core_j) rows, while they fit the limit
    for i, j in itertools.combinations(range(len(leaves)), 2):
        size = len(cores[i]) * len(cores[j])
        if total + size > room:
            break
        pairs.append((i, j, total))
        total += size
    index = np.arange(total)
    cols = [core[(index + j) % len(core)] for j, core in enumerate(cores)]  # the cycling base
    at, width = 0, max(len(e) for e in edges)
    for j, (col, edge, leaf) in enumerate(zip(cols, edges, leaves, strict=True)):
        if side_by_side:
            col[(np.arange(len(edge)) + j) % width] = _column(edge, leaf.type)
        else:
            col[at : at + len(edge)] = _column(edge, leaf.type)
            at += len(edge)
    for i, j, start in pairs:
        a, b = cores[i], cores[j]
        cols[i][start : start + len(a) * len(b)] = np.repeat(a, len(b))
        cols[j][start : start + len(a) * len(b)] = np.tile(b, len(a))
    return VectorSet(params, tuple(cols), total)


def random_vectors(params: Sequence[tuple[str, Type]], count: int, seed: int = 0) -> VectorSet:
    """Return ``count`` seeded random rows: random widths and signs, some edge values mixed in."""
    params = tuple(params)
    rng = np.random.default_rng(seed)
    cols = []
    for leaf in _leaves(params):
        t = leaf.type
        raw = rng.integers(0, np.iinfo(np.uint64).max, size=count, dtype=np.uint64,
                           endpoint=True)
        if isinstance(t, BoolType):
            cols.append((raw & np.uint64(1)).astype(np.bool_))
            continue
        assert isinstance(t, IntType)
        keep = rng.integers(1, t.width + 1, size=count).astype(np.uint64)  # effective width
        mask = np.where(
            keep >= 64,
            np.uint64(2**64 - 1),
            (np.uint64(1) << np.minimum(keep, np.uint64(63))) - np.uint64(1),
        )
        bits = raw & mask
        bits = np.where(rng.random(count) < 0.5, ~bits, bits)
        edge = np.array([v & ((1 << 64) - 1) for v in edge_values(t)], dtype=np.uint64)
        bits = np.where(rng.random(count) < 0.125, rng.choice(edge, size=count), bits)
        cols.append(values.renorm(bits, t))
    return VectorSet(params, tuple(cols), count)


# ----------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class Mismatch:
    """One failing row: its index, inputs, expected and actual results, all in hex."""

    row: int
    input: dict[str, object]
    expected: object
    actual: object


@dataclass(frozen=True)
class TargetResult:
    """One row of the parity table."""

    target: str
    vectors: int
    mismatches: int
    seconds: float
    status: str  # one of STATUSES
    reason: str | None = None
    first_mismatches: tuple[Mismatch, ...] = ()


@dataclass(frozen=True)
class ParityReport:
    """The outcome of ``run_parity``: one ``TargetResult`` per target."""

    fingerprint: str
    top: str
    edge_vectors: int
    random_vectors: int
    seed: int
    schedule: str
    results: tuple[TargetResult, ...]
    requested: tuple[str, ...] = field(default=())  # targets the caller named explicitly
    stream: bool = False  # a stateful kernel: the rows are one stream, compared as a whole

    @property
    def vectors(self) -> int:
        """Rows compared per target (edge + random)."""
        return self.edge_vectors + self.random_vectors

    @property
    def ok(self) -> bool:
        """True when no target that ran disagreed with the interpreter or failed."""
        return all(r.status not in ("mismatch", "error") for r in self.results)

    @property
    def exit_code(self) -> ExitCode:
        """4 on any mismatch or error; 3 when a requested target could not run; else 0."""
        if not self.ok:
            return ExitCode.CHECK
        blocked = ("unavailable", "assembled-not-run")
        if any(r.status in blocked and r.target in self.requested for r in self.results):
            return ExitCode.TOOL
        return ExitCode.OK

    def to_json(self) -> dict:
        """Return the report as a JSON-ready dict."""
        return {
            "fingerprint": self.fingerprint,
            "top": self.top,
            "vectors": self.vectors,
            "edge_vectors": self.edge_vectors,
            "random_vectors": self.random_vectors,
            "seed": self.seed,
            "schedule": self.schedule,
            "stream": self.stream,
            "ok": self.ok,
            "exit_code": int(self.exit_code),
            "targets": [{
                "target": r.target, "vectors": r.vectors, "mismatches": r.mismatches,
                "seconds": round(r.seconds, 6), "status": r.status, "reason": r.reason,
                "first_mismatches": [m.__dict__ for m in r.first_mismatches],
            } for r in self.results],
        }

    def table(self) -> str:
        """Return the report as a table for a person, with the first mismatches in hex."""
        how = " as one stream, in order" if self.stream else ""
        order = "then" if self.stream else "+"
        lines = [
            f"parity of `{self.top}` (graph {self.fingerprint}): {self.vectors} vectors{how} "
            f"({self.edge_vectors} edge {order} {self.random_vectors} random, seed {self.seed})",
            f"{'target':<8} {'vectors':>9} {'mismatches':>10} {'seconds':>9}  status",
        ]
        for r in self.results:
            why = f" ({r.reason})" if r.reason else ""
            lines.append(f"{r.target:<8} {r.vectors:>9} {r.mismatches:>10} {r.seconds:>9.3f}  "
                         f"{r.status}{why}")
        for r in self.results:
            for n, m in enumerate(r.first_mismatches):
                where = f"row {m.row}"
                if self.stream:
                    first = " (the first that differs)" if n == 0 else ""
                    where = f"transfer {m.row} of the stream{first}, graph {self.fingerprint}"
                lines.append(f"{r.target}: {where}: input {json.dumps(m.input)}: expected "
                             f"{json.dumps(m.expected)}, got {json.dumps(m.actual)}")
        return "\n".join(lines)


def hex_value(value: Value, t: Type, row: int) -> object:
    """Return row ``row`` of a batch with every scalar as its N-bit pattern in hex."""
    if isinstance(t, ArrayType):
        return [hex_value(v, t.elem, row) for v in value]
    if isinstance(t, TupleType):
        return [hex_value(v, e, row) for v, e in zip(value, t.elems, strict=True)]
    leaf = int(value[row] if value.shape[0] > 1 else value[0])
    assert isinstance(t, BoolType | IntType), t
    width = 1 if isinstance(t, BoolType) else t.width
    text = f"0x{leaf & ((1 << width) - 1):0{max(1, -(-width // 4))}x}"
    if isinstance(t, IntType) and not t.contains(leaf):  # a value left un-renormalised
        text += f" (not a {t}: {leaf & ((1 << 64) - 1):#x})"
    return text


# ----------------------------------------------------------------------------- the harness


def run_parity(
    graph: Graph,
    top: str,
    *,
    targets: Sequence[str | Target] | None = None,
    vectors: int = 10000,
    seed: int = 0,
    schedule: Schedule | None = None,
    max_mismatches: int = 5,
    edge_limit: int = 4096,
    progress: Callable[[str], None] | None = None,
) -> ParityReport:
    """Compare ``targets`` (names or ``Target``s) with the interpreter, bit for bit.

    ``targets`` defaults to every registered target marked ``default`` (all but the RTL
    simulation). ``vectors`` random rows (seeded by ``seed``) are added to the edge rows.
    ``schedule`` defaults to the single-stage schedule of ``top``. A stateful ``top`` gets the
    rows as one stream (edge rows first), in order, on every target. A target that cannot run
    here is reported ``unavailable`` (or ``assembled-not-run`` when its build-only check passed)
    with the reason; one that raises is reported ``error``. Raises ``KeraError`` (exit 2) for an
    unknown target or a negative ``vectors``.
    """
    graph.region_or_error(top)
    if isinstance(vectors, bool) or not isinstance(vectors, int) or vectors < 0:
        raise KeraError(f"the number of random vectors must be an integer >= 0, not {vectors}",
                        exit_code=ExitCode.USAGE)
    if targets is None:
        chosen = [get_target(n) for n in registered_targets() if get_target(n).default]
    else:
        chosen = [t if isinstance(t, Target) else get_target(t) for t in dict.fromkeys(targets)]
    schedule = schedule or single_stage(graph, top)
    params, result_type = graph.signature(top)
    edges = edge_vectors(params, edge_limit)
    batch = edges + random_vectors(params, vectors, seed)
    inputs = batch.inputs
    expected = evaluate(graph, top, inputs, rows=batch.rows)
    want = leaf_bits(expected, result_type, batch.rows)
    results = []
    with bars.task(f"parity on {batch.rows} vectors", total=len(chosen), unit="targets") as bar:
        for target in chosen:
            if progress:
                progress(f"parity: {target.name} on {batch.rows} vectors")
            results.append(_check(target, schedule, inputs, batch.rows, result_type,
                                  (expected, want), max_mismatches))
            bar.advance()
    requested = tuple(t.name for t in chosen) if targets is not None else ()
    return ParityReport(graph.fingerprint(), top, edges.rows, vectors, seed, schedule.method,
                        tuple(results), requested, graph.regions[top].stateful)


def _check(target: Target, schedule: Schedule, inputs: dict[str, Value], rows: int,
           result_type: Type, reference: tuple[Value, list[np.ndarray]],
           limit: int) -> TargetResult:
    expected, want = reference
    start = time.perf_counter()
    reason = target.available()
    if reason is not None:
        return _not_run(target, schedule, reason, rows, start)
    try:
        got = target.run(schedule, inputs, rows)
        if target.json_rows:
            got = _from_json_rows(got, result_type)  # type: ignore[arg-type]
        have = leaf_bits(got, result_type, rows)
    except KeraError as e:
        if e.exit_code == ExitCode.TOOL:
            return _not_run(target, schedule, e.message, rows, start)
        return TargetResult(target.name, rows, 0, time.perf_counter() - start, "error", e.message)
    except Exception as e:  # noqa: BLE001 (a crashing backend is a failed check, not a crash)
        msg = f"{type(e).__name__}: {e}"
        return TargetResult(target.name, rows, 0, time.perf_counter() - start, "error", msg)
    seconds = time.perf_counter() - start
    bad = np.zeros(rows, dtype=bool)
    for a, b in zip(want, have, strict=True):
        bad |= a != b
    count = int(bad.sum())
    if count == 0:
        return TargetResult(target.name, rows, 0, seconds, "ok")
    params, _ = schedule.graph.signature(schedule.region)
    first = tuple(Mismatch(
        int(i),
        {n: hex_value(inputs[n], t, int(i)) for n, t in params},
        hex_value(expected, result_type, int(i)),
        hex_value(got, result_type, int(i)),
    ) for i in np.flatnonzero(bad)[:limit])
    return TargetResult(target.name, rows, count, seconds, "mismatch", None, first)


def _not_run(target: Target, schedule: Schedule, reason: str, rows: int,
             start: float) -> TargetResult:
    if target.build is None:
        return TargetResult(target.name, 0, 0, time.perf_counter() - start, "unavailable", reason)
    try:
        target.build(schedule)
    except KeraError as e:
        return TargetResult(target.name, 0, 0, time.perf_counter() - start, "unavailable",
                            f"{reason}; {e.message}")
    except Exception as e:  # noqa: BLE001
        return TargetResult(target.name, 0, 0, time.perf_counter() - start, "error",
                            f"build failed: {type(e).__name__}: {e}")
    return TargetResult(target.name, 0, 0, time.perf_counter() - start, "assembled-not-run",
                        reason)


def _from_json_rows(rows: Sequence[object], t: Type) -> Value:
    parsed = [values.from_json(v, t, f"result row {i}") for i, v in enumerate(rows)]
    return values.stack(parsed, t)


__all__ = [
    "STATUSES",
    "Mismatch",
    "ParityReport",
    "TargetResult",
    "VectorSet",
    "edge_values",
    "edge_vectors",
    "hex_value",
    "random_vectors",
    "run_parity",
]
