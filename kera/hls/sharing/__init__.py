"""Operator sharing at II > 1: which ops share a unit, their delays, and the binding.

With ``ii = N`` a transfer enters every ``N`` cycles, always when the modulo counter is at 0
(``Schedule.aligned``), so an op in stage ``s`` always runs when the counter is ``s mod N``:
ops of one kind whose stages differ modulo ``N`` can share one unit, whose operands are
multiplexers selected by the counter.

- ``classes``: the candidates' classes (same op, operand and result types and attributes, and
  the same source span: the ops one source expression gives in the iterations of an unrolled
  loop), their roles, and the cost of a unit port by its distinct *sources* -- the class of
  the input when that class is shared on one unit (every member reads its one output, or the
  one register the chain of its outputs is bound to), a constant (distinct constants are a
  small ROM on the counter), else the input's own structure over those (wiring of a shared
  output is one source) or the input node itself. A port with one source is a plain wire.
- ``decide``: ``configure`` gives a class of ``n`` ops ``ceil(n / N)`` units and decides the
  classes jointly (a fixpoint dropping those whose saving is negative); the classes too small
  to share alone are pooled by signature, a class that needs several units is split by role.
- ``rows``: what the list scheduler obeys -- at most ``units`` ops of a class per stage
  residue, shared ops chained in one stage without cycles (``Chains``), one start time per unit
  (``unit_slots``) -- and the late releases of side chains (``release_late``, ``release_all``).
- ``binding``: ``bind`` turns the final stages into ``Unit`` objects, each unit keeping its
  role across iterations (``assign``), so its values are read from its delay line
  (``kera.hls.regbind``), one tap per iteration distance; ``refine`` recounts each unit's
  multiplexers from the sources the register binding really gives.

Ops on a state recurrence are never shared.
"""

from .binding import bind, refine, unit_sources
from .classes import CANDIDATES, Group, Plan, port_cost
from .decide import configure
from .rows import Chains, release_all, release_late, residue_limits, slots_hold, unit_slots

__all__ = ["CANDIDATES", "Chains", "Group", "Plan", "bind", "configure", "port_cost", "refine",
           "release_all", "release_late", "residue_limits", "slots_hold", "unit_sources",
           "unit_slots"]
