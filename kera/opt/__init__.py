"""The optimiser: a pass manager over pipelines kept as data, one module per pass.

``optimize(graph, level)`` returns a new graph that computes the same bits (SEMANTICS.md) for
every input; the invariant validator runs after every pass. Passes: ``fold`` (constant
folding), ``simplify`` (algebraic identities), ``strength`` (cheaper multiply/divide by
constants), ``relational`` (selects bounded by a select on the same condition: a restoring
step's remainder by its root), ``balance`` (tree-height reduction), ``narrow`` (bit-width
narrowing), ``bits`` (known and demanded bits: every node on its live bits), ``dce`` (dead
nodes);
``fold+simplify`` joins local-rule passes into one walk (``kera.opt.local``).
See docs/opt.md.
"""

from kera.opt.balance import balance
from kera.opt.bits import bits
from kera.opt.dce import dce
from kera.opt.dump import format_graph
from kera.opt.fold import fold
from kera.opt.manager import (
    PASSES,
    PIPELINES,
    Fixpoint,
    Pass,
    PassStats,
    Step,
    format_stats,
    optimize,
)
from kera.opt.narrow import narrow
from kera.opt.relational import relational
from kera.opt.simplify import simplify
from kera.opt.strength import strength

__all__ = [
    "PASSES",
    "PIPELINES",
    "Fixpoint",
    "Pass",
    "PassStats",
    "Step",
    "balance",
    "bits",
    "dce",
    "fold",
    "format_graph",
    "format_stats",
    "narrow",
    "optimize",
    "relational",
    "simplify",
    "strength",
]
