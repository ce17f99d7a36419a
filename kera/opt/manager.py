"""The pass manager: pipelines as data, fixpoint groups, a validator after every pass, statistics.

A pipeline is a sequence of steps; a step is a pass name or a ``Fixpoint`` group, whose passes
run in order, again and again, until one whole round leaves the graph's fingerprint unchanged
or the round cap is reached. A name joining local-rule passes with ``+`` (``fold+simplify``)
is one pass that tries their rules in that order on every node in a single walk
(``kera.opt.local``). After every pass the invariant validator runs
(``kera.ir.validate.check``) together with the manager's own check that region names and
params are untouched; a violation raises ``InvariantError`` naming the pass, its round and the
first broken node — always a compiler bug. The validator re-checks only the nodes a pass made
(the others are the very nodes of its checked input); ``validate="full"`` checks every node
after every pass.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Literal

from kera import progress
from kera.ir.gcpause import paused_gc
from kera.ir.graph import Graph
from kera.ir.validate import InvariantError, check
from kera.opt.balance import balance
from kera.opt.bits import bits
from kera.opt.dce import dce
from kera.opt.dump import format_graph
from kera.opt.fold import fold
from kera.opt.local import LOCAL_RULES, fused
from kera.opt.narrow import narrow
from kera.opt.relational import relational
from kera.opt.rewrite import canonical
from kera.opt.simplify import simplify
from kera.opt.strength import strength

Pass = Callable[[Graph], Graph]
Dump = Callable[[str, str], None]

PASSES: dict[str, Pass] = {
    "fold": fold,
    "simplify": simplify,
    "strength": strength,
    "balance": balance,
    "narrow": narrow,
    "bits": bits,
    "relational": relational,
    "dce": dce,
}

@dataclass(frozen=True, slots=True)
class Fixpoint:
    """Passes run in rounds until a round changes nothing (at most ``max_rounds`` rounds)."""

    passes: tuple[str, ...]
    max_rounds: int = 8


Step = str | Fixpoint

# Balance runs once, between the algebraic rounds and narrowing: narrowing puts casts between
# the links of a chain (each link as wide as its partial sum), so chains are balanced while they
# are whole, and narrowing then sizes each level of the balanced tree. Rounds that mixed the two
# re-grouped and re-narrowed the same chains a little more each round. ``bits`` (known and
# demanded bits) needs the whole graph for its backward analysis, so it is its own walk.
PIPELINES: dict[str, tuple[Step, ...]] = {
    "O0": (),
    "O1": ("fold", "simplify", "dce"),
    "O2": (
        Fixpoint(("fold+simplify+strength",)),
        "relational",
        "balance",
        Fixpoint(("narrow+fold+simplify", "bits")),
        "dce",
    ),
}


SHOW_NODES = 5_000
"""A graph of at least this many nodes shows a progress bar while it is optimised (on a
terminal, without ``--quiet``; ``kera.progress``): -O2 takes about a second per 10k nodes."""


@dataclass(frozen=True, slots=True)
class PassStats:
    """One pass run: its name, round (1 outside fixpoint groups), node counts and time."""

    name: str
    round: int
    nodes_before: int
    nodes_after: int
    seconds: float
    changed: bool

    def to_json(self) -> dict[str, object]:
        """Return the record as a JSON-ready dict."""
        return asdict(self)


def optimize(
    graph: Graph,
    level: int = 2,
    *,
    stats: list[PassStats] | None = None,
    dump_after: str | None = None,
    dump: Dump | None = None,
    validate: bool | Literal["full"] = True,
    pipeline: Sequence[Step] | None = None,
    passes: Mapping[str, Pass] | None = None,
) -> Graph:
    """Return the optimised graph; ``graph`` itself is left as it was.

    ``level`` picks ``PIPELINES[f"O{level}"]`` unless ``pipeline`` is given; ``passes`` maps pass
    names to functions (default ``PASSES``; a name joining local-rule passes with ``+`` is
    one walk of their rules). Each pass run appends a ``PassStats`` to ``stats``. After each
    run of the pass named ``dump_after`` (or of a joined pass containing it), ``dump(label,
    text)`` gets its ``format_graph`` text (default: written to stderr). With ``validate`` the
    input and every pass's output are checked; a broken invariant raises ``InvariantError``.
    A pass's output is checked where it differs from the pass's (checked) input; with
    ``validate="full"`` every node of it, as if nothing had been checked before.
    """
    table = dict(PASSES if passes is None else passes)
    label = f"-O{level}" if pipeline is None else "the passes given"
    if pipeline is None:
        key = f"O{level}"
        if type(level) is not int or key not in PIPELINES:
            known = ", ".join(k[1:] for k in PIPELINES)
            raise ValueError(f"Optimisation level must be one of {known}, not {level!r}")
        pipeline = PIPELINES[key]
    _check_names(pipeline, table, dump_after)
    runner = _Runner(table, stats, dump_after, dump or _dump_to_stderr, validate)
    if validate:
        check(graph, after="the input (before any pass)")
    shown = bool(pipeline) and len(graph.nodes) >= SHOW_NODES
    # passes make terms and nodes by the hundred thousand, and no cycles: no collector
    with paused_gc(), progress.task(f"optimising {len(graph.nodes):,} nodes ({label})",
                                    unit="passes", show=shown) as bar:
        runner.bar = bar
        if pipeline:
            graph = _with_directives(canonical(graph), graph)  # walks keep this order
        for step in pipeline:
            if isinstance(step, Fixpoint):
                graph = runner.fixpoint(graph, step)
            else:
                graph = runner.run(step, graph, 1)
    return graph


class _Runner:
    """Run passes one at a time, validating, timing, recording and dumping each."""

    def __init__(self, table: dict[str, Pass], stats: list[PassStats] | None,
                 dump_after: str | None, dump: Dump, validate: bool | str) -> None:
        self.table, self.stats, self.validate = table, stats, validate
        self.dump_after, self.dump = dump_after, dump
        self.bar = progress.Task()  # counts the passes run (shown: ``optimize``'s task)

    def run(self, name: str, graph: Graph, round_: int) -> Graph:
        if name not in self.table:
            self.table[name] = fused(name.split("+"))
        start = time.perf_counter()
        out = _with_directives(self.table[name](graph), graph)
        seconds = time.perf_counter() - start
        label = name if round_ == 1 else f"{name} (round {round_})"
        if self.validate == "full":  # every node, as if nothing had been checked before
            check(out, after=label)
            _check_signature(graph, out, label)
        elif self.validate and not _same_graph(graph, out):  # an unchanged graph was checked
            check(out, after=label, trusted=graph)
            _check_signature(graph, out, label)
        if self.stats is not None:
            changed = out.fingerprint() != graph.fingerprint()
            self.stats.append(PassStats(name, round_, len(graph), len(out), seconds, changed))
        if self.dump_after in name.split("+"):
            self.dump(label, format_graph(out))
        self.bar.advance()
        return out

    def fixpoint(self, graph: Graph, group: Fixpoint) -> Graph:
        """Run rounds until one changes nothing; skip a pass when the graph is its own output.

        Skipping relies on each pass being idempotent (``p(p(g)) == p(g)``); the tests check it.
        """
        produced: dict[str, str] = {}  # pass name -> fingerprint of its last output
        for round_ in range(1, group.max_rounds + 1):
            before = graph.fingerprint()
            for name in group.passes:
                if produced.get(name) == graph.fingerprint():
                    continue
                graph = self.run(name, graph, round_)
                produced[name] = graph.fingerprint()
            if graph.fingerprint() == before:
                break
        return graph


def _check_names(pipeline: Sequence[Step], table: Mapping[str, Pass], dump_after: str | None):
    known = ", ".join(sorted(table))
    names = [n for s in pipeline for n in (s.passes if isinstance(s, Fixpoint) else (s,))]
    for name in names:
        if "+" in name:
            for part in name.split("+"):
                if part not in LOCAL_RULES:
                    rules = ", ".join(LOCAL_RULES)
                    raise ValueError(f"`{name}`: only local-rule passes ({rules}) can be "
                                     f"joined with `+`, not `{part}`")
        elif name not in table:
            raise ValueError(f"unknown pass `{name}` (known: {known})")
    if dump_after is not None and dump_after not in table:
        raise ValueError(f"unknown pass `{dump_after}` (known: {known})")


def _check_signature(before: Graph, after: Graph, label: str) -> None:
    """Raise ``InvariantError`` when a pass renamed, dropped or re-typed a region's params."""
    for name, region in before.regions.items():
        new = after.regions.get(name)
        if new is None:
            raise InvariantError(f"graph invariant broken after `{label}`: region `{name}` "
                                 "is gone")
        if new.params != region.params:
            raise InvariantError(f"graph invariant broken after `{label}`: region `{name}` "
                                 "changed its params")
        if [s.read for s in new.states] != [s.read for s in region.states] or \
                [s.init for s in new.states] != [s.init for s in region.states]:
            raise InvariantError(f"graph invariant broken after `{label}`: region `{name}` "
                                 "changed its state elements")
        old_t, new_t = before.nodes[region.result].type, after.nodes[new.result].type
        if old_t != new_t:
            raise InvariantError(f"graph invariant broken after `{label}`: region `{name}` "
                                 f"returns {new_t}, not {old_t}")
    extra = sorted(set(after.regions) - set(before.regions))
    if extra:
        raise InvariantError(f"graph invariant broken after `{label}`: new region `{extra[0]}`")


def _with_directives(out: Graph, before: Graph) -> Graph:
    """Return ``out`` carrying ``before``'s directives (`#[pipeline(ii)]`) for its regions.

    Passes rebuild graphs from nodes and regions; directives say how to build the hardware, not
    what it computes, so no pass may change them and every pass's output keeps them.
    """
    kept = {k: dict(v) for k, v in before.directives.items() if k in out.regions}
    names = {k: v for k, v in before.state_names.items() if k in out.nodes}
    if out.directives != kept or out.state_names != names:
        out = out.copy() if out is before else out
        out.directives = kept
        out.state_names = names  # state nodes are leaves: a pass keeps their ids
    return out


def _same_graph(a: Graph, b: Graph) -> bool:
    """Return True when ``b`` holds the very node objects of ``a``, in the same order.

    The validator's verdict depends only on that and the regions, so ``b`` needs no new check.
    """
    if a.regions != b.regions or len(a.nodes) != len(b.nodes):
        return False
    return all(k1 == k2 and v1 is v2 for (k1, v1), (k2, v2)
               in zip(a.nodes.items(), b.nodes.items(), strict=True))


def _dump_to_stderr(label: str, text: str) -> None:
    print(f"// after {label}\n{text}", file=sys.stderr, end="")


def format_stats(records: Sequence[PassStats]) -> str:
    """Return a table of pass runs for a person: pass, round, nodes before -> after, time."""
    w = max([10, *(len(r.name) for r in records)])
    lines = [f"{'pass':<{w}} {'round':>5} {'before':>8} {'after':>8} {'ms':>9}"]
    for r in records:
        lines.append(f"{r.name:<{w}} {r.round:>5} {r.nodes_before:>8} {r.nodes_after:>8} "
                     f"{r.seconds * 1e3:>9.2f}")
    total = sum(r.seconds for r in records)
    lines.append(f"{'total':<{w}} {'':>5} {'':>8} {'':>8} {total * 1e3:>9.2f}")
    return "\n".join(lines)


__all__ = [
    "PASSES",
    "PIPELINES",
    "Dump",
    "Fixpoint",
    "Pass",
    "PassStats",
    "Step",
    "format_stats",
    "optimize",
]
