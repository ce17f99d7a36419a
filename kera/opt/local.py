"""Local-rule passes, and joining several of them into one walk (``fold+simplify+strength``).

A rewrite near the inputs changes the id of everything downstream, so the graph is re-added
once per pass that changes anything. One walk that tries several rules on every node (and on
every node a rule emits) re-adds it once instead of once per rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kera.ir.graph import Graph
from kera.opt.fold import FOLDED, fold_rule
from kera.opt.narrow import COMPARISONS, NARROWED, narrow_rules
from kera.opt.rewrite import Rewriter, Rule, Term
from kera.opt.simplify import SIMPLIFIED, simplify_rule
from kera.opt.strength import STRENGTHENED, strength_rules

RuleMaker = Callable[[Graph], Rule]
"""Return a pass's rule for one walk, given the graph that walk builds (for analyses)."""

LOCAL_RULES: dict[str, tuple[RuleMaker, frozenset[str]]] = {
    "fold": (lambda new: fold_rule, FOLDED),
    "simplify": (lambda new: simplify_rule, SIMPLIFIED),
    "strength": (strength_rules, STRENGTHENED),
    "narrow": (narrow_rules, NARROWED | COMPARISONS),
}
"""Each local-rule pass: how to make its rule for a walk, and the opcodes the rule looks at."""


def fused(names: Sequence[str]) -> Callable[[Graph], Graph]:
    """Return one pass that tries the rules of ``names``, in order, on each node in one walk."""
    parts = [LOCAL_RULES[n] for n in names]
    ops = frozenset().union(*(o for _, o in parts))

    def run(graph: Graph) -> Graph:
        rw = Rewriter(graph, lambda rw, t: None, ops)
        rules = [(make(rw.new), wanted) for make, wanted in parts]

        def rule(rw: Rewriter, t: Term) -> bytes | None:
            for local, wanted in rules:
                if t.op in wanted:
                    out = local(rw, t)
                    if out is not None:
                        return out
            return None

        rw.rule = rule
        return rw.run()

    return run


__all__ = ["LOCAL_RULES", "RuleMaker", "fused"]
