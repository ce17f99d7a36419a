"""Loops replayed from a template (kera.elaborate.replay) build exactly what walking builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from kera.elaborate import build_program, replay, stmts
from kera.ir.graph import Graph

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.kera"))

PROGRAMS = {
    "nested": """
#[top]
pub fn f(x: [u32; 16], s: u8) -> (u32, [u32; 16]) {
    let mut acc = 0u32;
    let mut arr = x;
    let mut t = (1u32, 2u32);
    for i in 0..10 {
        for j in 0..5u32 {
            acc += x[(i + j) % 16] * j;
            if acc > 100 { acc = acc - i; } else if acc == 3 { t.0 = acc; }
        }
        arr[i] = arr[i] ^ acc;
        t.1 = t.1 + rotl(acc, 3u32);
        let (a, b) = t;
        acc = acc + a + b + slice::<0, 8>(acc) as u32;
    }
    for _ in 0..7 { acc = acc + 1; }
    for k in 3..9 { acc = acc + (if k > 4 { 1 } else { 2 }); }
    for k in 0..6 { acc = acc + sq(k); }
    (acc, arr)
}
fn sq(v: u32) -> u32 { v * v }
""",
    # `acc` starts as the node of `i == 0`; `k` ends as the loop variable or a literal.
    "aliases": """
#[top]
pub fn f(x: u32) -> u32 {
    let mut acc = 0u32;
    let mut k = 0u32;
    for i in 0..20 { k = i; acc = acc + k; }
    for i in 0..20 { acc = acc + i; k = 0; }
    for i in 0..20 { let c = i * 2; acc = acc ^ c; }
    acc + k + x
}
""",
    # Compile-time values that change per iteration: nothing may be replayed from one.
    "closed": """
#[top]
pub fn f(x: u32) -> u32 {
    let mut acc = x;
    for i in 0..8u32 {
        for j in 0..i { acc = acc + j; }
        acc = acc + slice::<0, 4>([acc; 3][1]) as u32;
    }
    acc
}
""",
    "errors": """
#[top]
pub fn f(x: [u32; 16]) -> u32 {
    let mut acc = 0u32;
    for i in 0..10 {
        acc = acc + x[i] + y;
        let z: u8 = 300;
    }
    for i in 0..10u8 { acc = acc + (i as u32) + (256 - i); }
    acc
}
""",
    "state": """
#[top]
pub fn f(x: u32) -> u32 {
    reg acc: u32 = 0;
    mem m: [u32; 8] = [0; 8];
    for i in 0..8 { m[i] = m[i] + x; acc = acc + m[i]; }
    acc
}
""",
}


def _built(source: str) -> tuple:
    program = build_program("t.kera", source, need_top=False)
    g = program.graph
    diags = [(d.severity.value, d.message, d.span.start, d.span.end) for d in program.diagnostics]
    if g is None:
        return None, diags
    regions = {name: r.region_hash() for name, r in g.regions.items()}
    return (list(g.nodes), list(g.spans.items()), regions), diags


def _walked(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple:
    with monkeypatch.context() as m:
        m.setattr(stmts, "REPLAY_MIN_TRIPS", 1 << 30)
        return _built(source)


@pytest.mark.parametrize("name", [*PROGRAMS, *(p.name for p in EXAMPLES)])
def test_replay_builds_what_walking_builds(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = PROGRAMS[name] if name in PROGRAMS else next(
        p for p in EXAMPLES if p.name == name).read_text()
    assert _built(source) == _walked(source, monkeypatch)


@pytest.mark.parametrize("name", [*PROGRAMS, *(p.name for p in EXAMPLES)])
def test_builder_graph_keeps_its_sinks(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The elaborator's graph (walked and replayed nodes) keeps exactly its unused nodes, so
    its subgraph, which skips the sweep, is the one the sweep gives."""
    source = PROGRAMS[name] if name in PROGRAMS else next(
        p for p in EXAMPLES if p.name == name).read_text()
    seen: list[tuple[Graph, set[bytes] | None]] = []
    real = Graph.subgraph

    def subgraph(self: Graph, names: list[str] | None = None, consume: bool = False) -> Graph:
        seen.append((self.copy(), None if self.sinks is None else set(self.sinks)))
        return real(self, names, consume)

    monkeypatch.setattr(Graph, "subgraph", subgraph)
    program = build_program("t.kera", source, need_top=False)
    if program.graph is None:
        return
    ((untracked, sinks),) = seen
    used = {i for node in untracked.nodes.values() for i in node.inputs}
    assert sinks == untracked.nodes.keys() - used
    assert untracked.sinks is None
    theirs = real(untracked, list(program.graph.regions))
    assert list(program.graph.nodes) == list(theirs.nodes)
    assert list(program.graph.spans.items()) == list(theirs.spans.items())
    assert program.graph.state_names == theirs.state_names
    assert program.graph.fingerprint() == theirs.fingerprint()


def test_long_loop_is_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = replay.Template.replay

    def counted(self: replay.Template, *args: object) -> None:
        calls.extend(range(args[2], args[3]))  # type: ignore[call-overload]
        real(self, *args)  # type: ignore[arg-type]

    source = ("#[top]\npub fn big(x: [u32; 16]) -> u32 {\n    let mut acc = 0u32;\n"
              "    for i in 0..300 {\n        acc = (acc ^ x[i % 16]) + i;\n    }\n    acc\n}\n")
    walked = _walked(source, monkeypatch)
    monkeypatch.setattr(replay.Template, "replay", counted)
    assert _built(source) == walked
    assert calls == list(range(2, 300))  # two iterations walked, the rest replayed


def test_closed_values_per_iteration_are_not_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real = replay.Template.replay

    def counted(self: replay.Template, *args: object) -> None:
        calls.extend(range(args[2], args[3]))  # type: ignore[call-overload]
        real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(replay.Template, "replay", counted)
    program = build_program("t.kera", PROGRAMS["closed"], need_top=False)
    assert not program.diagnostics
    # `for j in 0..i` asks for the value of `i`: the outer loop is walked every time; only the
    # inner loops long enough (i >= 4) are replayed, after their first two iterations.
    assert calls == [j for i in range(4, 8) for j in range(2, i)]
