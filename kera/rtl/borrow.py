"""Comparisons that read the borrow of a subtraction of the same operands: one carry chain.

The optimiser's guarded difference (``kera.opt.narrow``: ``if rem >= trial { rem - trial }``)
subtracts in the width the difference needs, which can be fewer bits than the comparison
reads: isqrt32's rows compare 16 bits and subtract 15. yosys then builds two ALUs; their
low cells are the same cells bit for bit and ``opt_merge`` keeps one of each, so the
comparison's last cell hangs off the shared chain's carry out. On ECP5 that carry leaves the
chain through nextpnr's exit cell and reaches the comparison's own CCU2C through the fabric
(isqrt32 at 150 MHz, nextpnr 0.11.1: exit 0.44 ns, 0.73 ns of net, the CCU2C, 0.96 ns of net,
the select's LUT4; 197.9 MHz over 3 seeds). Written as one subtraction as wide as the
comparison, with one more bit whose sum is the borrow, and the narrow difference as its low
bits, the select's LUT reads the chain's last sum directly (221.9 MHz), as a hand-written
``{borrow, diff} = {1'b0, a} - {1'b0, b}`` does.

:func:`shared_borrows` finds such pairs in a schedule: an unsigned ``lt``/``le``/``gt``/``ge``
of ``x`` and ``y`` (in subtraction order) whose operands have ``n`` significant bits, and a
``sub`` of ``W < n`` bits later in the same stage whose operands are, bit for bit, the low
``W`` bits of ``x`` and ``y`` (the bit network of ``kera.hls.lutmap``: the same signals
through casts, slices and concatenations). ``kera.rtl.emit`` then writes the comparison as
the borrow of ``{1'b0, x[n-1:0]} - {1'b0, y[n-1:0]}`` and the subtraction as that wire's low
``W`` bits (of as many bits, ``alumacc`` makes the two one ALU by itself). The values are
unchanged: the low ``W`` bits of a difference are the difference
of the operands' low ``W`` bits, and bit ``n`` of the ``n + 1``-bit difference of two
``n``-bit values is 1 exactly when the first is the smaller. On ECP5 the estimate costs the
comparison as that difference's chain (``CostModel.shared_borrows``, the same bit-for-bit
pairing over the whole graph; the stage and the order are the emitter's own conditions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kera.ir.types import IntType

#: The orderings and, for each, (index of the minuend, whether the ordering is the borrow).
_ORDERINGS = {"lt": (0, True), "ge": (0, False), "gt": (1, True), "le": (1, False)}


@dataclass(frozen=True)
class SharedBorrow:
    """A comparison computed as the borrow of the subtraction ``sub`` shares its chain with.

    ``minuend``/``subtrahend``: the comparison's operands in subtraction order; ``width``:
    their significant bits (the difference has one more); ``less``: the comparison is true
    when the borrow is set (``lt``, ``gt`` with its operands swapped).
    """

    compare: bytes
    sub: bytes
    minuend: bytes
    subtrahend: bytes
    width: int
    less: bool


def shared_borrows(schedule: Any) -> dict[bytes, SharedBorrow]:
    """Return each paired comparison and subtraction of ``schedule`` -> their pairing."""
    graph, stage = schedule.graph, schedule.stage
    nodes = graph.nodes
    compares = [n for n in schedule.order if nodes[n].op in _ORDERINGS
                and isinstance(nodes[nodes[n].inputs[0]].type, IntType)
                and not nodes[nodes[n].inputs[0]].type.signed]
    subs = [n for n in schedule.order if nodes[n].op == "sub"
            and isinstance(nodes[n].type, IntType)]
    widest: dict[int, int] = {}  # stage -> its widest comparison's operands
    for c in compares:
        w = nodes[nodes[c].inputs[0]].type.flat_width
        widest[stage[c]] = max(widest.get(stage[c], 0), w)
    if not any(nodes[x].type.flat_width < widest.get(stage[x], 0) for x in subs):
        return {}  # no subtraction narrower than a comparison beside it: no bit network
    from kera.hls.lutmap import significant_width, tool_network

    bits = tool_network(graph, 4, order=list(graph.nodes)).bits
    position = {n: k for k, n in enumerate(schedule.order)}
    by_low: dict[tuple[int, tuple[Any, ...]], list[bytes]] = {}
    for s in subs:
        w = nodes[s].type.flat_width
        p, q = nodes[s].inputs
        by_low.setdefault((stage[s], (tuple(bits[p][:w]), tuple(bits[q][:w]))), []).append(s)
    out: dict[bytes, SharedBorrow] = {}
    for c in compares:
        first, less = _ORDERINGS[nodes[c].op]
        x, y = nodes[c].inputs[first], nodes[c].inputs[1 - first]
        n = max(significant_width(bits[x], False), significant_width(bits[y], False))
        for w in sorted({nodes[s].type.flat_width for s in subs}):
            if w >= n:  # as wide: ``alumacc`` makes them one ALU already
                break
            key = (stage[c], (tuple(bits[x][:w]), tuple(bits[y][:w])))
            found = [s for s in by_low.get(key, ()) if s not in out
                     and position[s] > position[c]]
            if found:
                pair = SharedBorrow(c, found[0], x, y, n, less)
                out[c] = out[found[0]] = pair
                break
    return out


__all__ = ["SharedBorrow", "shared_borrows"]
