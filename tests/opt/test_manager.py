"""The pass manager: pipelines as data, the validator after every pass, stats and dumps."""

from __future__ import annotations

from pathlib import Path

import pytest

from kera.ir.graph import Graph, Node, Region
from kera.ir.types import uint
from kera.ir.validate import InvariantError
from kera.opt import PASSES, PIPELINES, Fixpoint, PassStats, format_stats, optimize
from kera.opt.manager import Pass
from tests.opt.kit import B

U8 = uint(8)


def _graph() -> Graph:
    b = B()
    x, y = b.param("x", U8), b.param("y", U8)
    s = b.op("add", b.op("add", x, b.c(U8, 0)), b.op("mul", y, b.c(U8, 4)))
    return b.finish(b.op("add", b.op("add", s, x), b.op("div", y, b.c(U8, 7))))


def test_pipelines_are_data():
    assert PIPELINES["O0"] == ()
    assert PIPELINES["O1"] == ("fold", "simplify", "dce")
    names = {part for step in PIPELINES["O2"]
             for n in (step.passes if isinstance(step, Fixpoint) else (step,))
             for part in n.split("+")}
    assert names == set(PASSES)


def test_levels_keep_regions_params_and_the_input_graph():
    g = _graph()
    fp, nodes = g.fingerprint(), dict(g.nodes)
    for level in (0, 1, 2):
        out = optimize(g, level)
        assert out.regions.keys() == g.regions.keys()
        assert out.regions["f"].params == g.regions["f"].params
        assert g.fingerprint() == fp and g.nodes == nodes
    assert optimize(g, 0).fingerprint() == fp


def test_an_unknown_level_or_pass_is_a_value_error():
    with pytest.raises(ValueError, match=r"^Optimisation level must be one of 0, 1, 2, not 3$"):
        optimize(_graph(), 3)
    with pytest.raises(ValueError, match=r"^unknown pass `nope` \(known: "):
        optimize(_graph(), pipeline=["nope"])
    with pytest.raises(ValueError, match=r"^unknown pass `nope`"):
        optimize(_graph(), dump_after="nope")
    with pytest.raises(ValueError, match=r"^`fold\+balance`: only local-rule passes "
                                         r"\(fold, simplify, strength, narrow\) can be joined "
                                         r"with `\+`, not `balance`$"):
        optimize(_graph(), pipeline=["fold+balance"])


def test_joined_passes_run_as_one_walk_and_match_the_separate_passes_here():
    stats: list[PassStats] = []
    joined = optimize(_graph(), pipeline=["fold+simplify+strength"], stats=stats)
    assert [r.name for r in stats] == ["fold+simplify+strength"]
    apart = optimize(_graph(), pipeline=[Fixpoint(("fold", "simplify", "strength"))])
    assert joined.fingerprint() == apart.fingerprint()


def test_stats_record_every_pass_run():
    stats: list[PassStats] = []
    out = optimize(_graph(), 2, stats=stats)
    names = [r.name for r in stats]
    assert names == ["fold+simplify+strength", "relational", "balance", "narrow+fold+simplify",
                     "bits", "dce"]
    assert stats[0].nodes_before == len(_graph())
    assert stats[-1].nodes_after == len(out)
    assert all(r.seconds >= 0 and r.round >= 1 for r in stats)
    assert set(stats[0].to_json()) == {"name", "round", "nodes_before", "nodes_after", "seconds",
                                       "changed"}
    text = format_stats(stats)
    assert text.splitlines()[0].split() == ["pass", "round", "before", "after", "ms"]
    assert text.splitlines()[-1].startswith("total")


def test_dump_after_gets_the_text_of_each_run_of_that_pass():
    seen: list[tuple[str, str]] = []
    optimize(_graph(), 2, dump_after="simplify", dump=lambda lbl, text: seen.append((lbl, text)))
    assert seen and seen[0][0] == "fold+simplify+strength"  # every run that includes simplify
    assert all("simplify" in label for label, _ in seen)
    assert seen[0][1].startswith("fn f(x: u8, y: u8) -> u8 {\n")


def test_dump_defaults_to_stderr(capsys):
    optimize(_graph(), 1, dump_after="dce")
    err = capsys.readouterr().err
    assert err.startswith("// after dce\nfn f(")


def _corrupting(graph: Graph) -> Graph:
    """A deliberately broken pass: it files a node under an id that is not its hash."""
    out = graph.copy()
    x = out.regions["f"].params[0]
    bogus = b"\x01" * 32
    out.nodes[bogus] = Node("add", U8, (x, x), (), bogus)
    out.regions["f"] = Region("f", out.regions["f"].params, bogus)
    return out


def _retyping(graph: Graph) -> Graph:
    """A broken pass that keeps every node sound but makes the region return another type."""
    out = graph.copy()
    r = out.regions["f"]
    wide = out.add("cast", uint(9), (r.result,))
    out.regions["f"] = Region("f", r.params, wide)
    return out


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (_corrupting, r"^graph invariant broken after `evil`: node add#010101010101: id does not"),
        (_retyping, r"^graph invariant broken after `evil`: region `f` returns u9, not u8$"),
    ],
)
def test_a_broken_pass_is_caught_by_the_validator_naming_the_pass(bad: Pass, message: str):
    passes = {**PASSES, "evil": bad}
    with pytest.raises(InvariantError, match=message):
        optimize(_graph(), pipeline=["fold", "evil", "dce"], passes=passes)
    optimize(_graph(), pipeline=["fold", "evil", "dce"], passes=passes, validate=False)


def test_a_broken_pass_in_a_later_round_is_named_with_its_round():
    calls = {"n": 0}

    def late(graph: Graph) -> Graph:
        calls["n"] += 1
        return _corrupting(graph) if calls["n"] == 2 else PASSES["simplify"](graph)

    passes = {**PASSES, "late": late}
    with pytest.raises(InvariantError, match=r"after `late \(round 2\)`"):
        optimize(_graph(), pipeline=[Fixpoint(("late", "strength"))], passes=passes)


def test_a_fixpoint_stops_at_its_round_cap():
    calls = {"n": 0}

    def restless(graph: Graph) -> Graph:
        """Return x + n with a new n on every call: never settles."""
        calls["n"] += 1
        out = graph.copy()
        r = out.regions["f"]
        n = out.add("const", U8, (), {"value": calls["n"]})
        out.regions["f"] = Region("f", r.params, out.add("add", U8, (r.params[0], n)))
        return out

    stats: list[PassStats] = []
    optimize(_graph(), pipeline=[Fixpoint(("r", "s"), max_rounds=5)],
             passes={"r": restless, "s": restless}, stats=stats)
    assert [r.round for r in stats] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


def test_each_pass_is_idempotent_on_the_optimised_kernels_and_random_graphs():
    """The fixpoint skips a pass whose own output comes back to it: that needs p(p(g)) == p(g)."""
    g = optimize(_graph(), 2)
    for name, fn in PASSES.items():
        once = fn(g)
        assert fn(once).fingerprint() == once.fingerprint(), name


@pytest.mark.parametrize("validate", [True, "full"])
def test_a_broken_pass_is_caught_by_either_validation(validate: bool | str) -> None:
    passes = {**PASSES, "evil": _corrupting}
    with pytest.raises(InvariantError, match="after `evil`: node add#010101010101"):
        optimize(_graph(), pipeline=["fold", "evil", "dce"], passes=passes,
                 validate=validate)  # type: ignore[arg-type]


def _mutating(graph: Graph) -> Graph:
    """A broken pass that changes a node object in place (one its input shares)."""
    out = graph.copy()
    node = out.nodes[out.regions["f"].result]
    node.op = "sub" if node.op != "sub" else "add"
    return out


def test_full_validation_finds_a_node_changed_in_place() -> None:
    passes = {**PASSES, "evil": _mutating}
    with pytest.raises(InvariantError, match="after `evil`: .*id does not match the hash"):
        optimize(_graph(), pipeline=["fold", "evil"], passes=passes, validate="full")


def test_the_command_line_validates_every_node_with_validate(capsys) -> None:
    from kera.cli import main

    path = str(Path(__file__).resolve().parents[2] / "examples" / "fir8.kera")
    assert main(["fingerprint", path]) == 0
    plain = capsys.readouterr().out
    assert main(["fingerprint", "--validate", path]) == 0
    assert capsys.readouterr().out == plain != ""
