"""Local-rule passes, and joining several of them into one walk (``fold+simplify+strength``).

A rewrite near the inputs changes the id of everything downstream, so the graph is re-added
once per pass that changes anything. One walk that tries several rules on every node (and on
every node a rule emits) re-adds it once instead of once per rule.

A joined pass also remembers, across its runs, the nodes its rules left alone without adding
anything (by id, i.e. by content): a fixpoint round sees mostly the nodes the last round made,
and for those the rules are not asked again. That is exact because every rule's answer is a
function of the term's content, except where ``WALK_DEPENDENT`` says how it also depends on
what the walk added before the term; that part is asked again. A pass joining a rule not
listed there as content-only remembers nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kera.ir.graph import Graph
from kera.opt.fold import FOLDED, fold_rule
from kera.opt.narrow import LOOKED_AT, narrow_rules
from kera.opt.rewrite import Rewriter, Rule, Term
from kera.opt.simplify import SIMPLIFIED, simplify_rule, walk_dependent
from kera.opt.strength import STRENGTHENED, strength_rules

RuleMaker = Callable[[Graph], Rule]
"""Return a pass's rule for one walk, given the graph that walk builds (for analyses)."""

LOCAL_RULES: dict[str, tuple[RuleMaker, frozenset[str]]] = {
    "fold": (lambda new: fold_rule, FOLDED),
    "simplify": (lambda new: simplify_rule, SIMPLIFIED),
    "strength": (strength_rules, STRENGTHENED),
    "narrow": (narrow_rules, LOOKED_AT),
}
"""Each local-rule pass: how to make its rule for a walk, and the opcodes the rule looks at."""


WALK_DEPENDENT: dict[str, Rule | None] = {
    "fold": None,
    "simplify": walk_dependent,
    "strength": None,
    "narrow": None,
}
"""The local-rule passes whose answer for a term is a function of its content, each with the
part of its rule that also depends on what the walk added before (None: nothing does)."""

_KEPT_LIMIT = 200_000  # ids a joined pass remembers before it starts again (bounds memory)


def fused(names: Sequence[str], remember: bool = True) -> Callable[[Graph], Graph]:
    """Return one pass that tries the rules of ``names``, in order, on each node in one walk
    (``remember=False``: without remembering the nodes its rules left alone)."""
    parts = [LOCAL_RULES[n] for n in names]
    ops = frozenset().union(*(o for _, o in parts))
    remember = remember and all(n in WALK_DEPENDENT for n in names)
    again = [r for r in (WALK_DEPENDENT.get(n) for n in names) if r is not None]
    kept: set[bytes] = set()  # ids of nodes the rules left alone, adding nothing

    def run(graph: Graph) -> Graph:
        rw = Rewriter(graph, lambda rw, t: None, ops)
        made_rules = [(make(rw.new), wanted) for make, wanted in parts]
        by_op = {op: [r for r, wanted in made_rules if op in wanted] for op in ops}
        new, old_nodes = rw.new, graph.nodes
        quiet: list[bytes] = []  # old ids the rules left alone (new ids: through the map)
        made = rw.kept  # nodes the rules emitted and then left alone (their ids, once added)

        def rule(rw: Rewriter, t: Term) -> bytes | None:
            nid = rw.current
            if remember and nid is not None and nid in kept and t.args == old_nodes[nid].inputs:
                for part in again:
                    out = part(rw, t)
                    if out is not None:
                        return out
                return None
            size = len(new.nodes), len(new.spans)
            for local in by_op[t.op]:  # the walk asks only for ``ops``
                out = local(rw, t)
                if out is not None:
                    return out
            if size == (len(new.nodes), len(new.spans)):
                if nid is None:
                    made.append(t)  # a node a rule emits: added next, as it is
                else:
                    quiet.append(nid)
            return None

        rw.rule = rule
        out = rw.run()
        if remember:
            if len(kept) > _KEPT_LIMIT:
                kept.clear()
            kept.update(rw.map[nid] for nid in quiet)
            kept.update(made)  # type: ignore[arg-type]
        return out

    return run


__all__ = ["LOCAL_RULES", "WALK_DEPENDENT", "RuleMaker", "fused"]
