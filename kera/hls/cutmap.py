"""Delay-oriented LUT mapping of a bit network with a LUT library, as yosys's ``abc9`` does.

``synth_ice40`` and ``synth_ecp5`` map the bitwise logic with ``abc9 -W <wire ps>``: a
delay-optimal cut-based mapping (``&if``) followed by area recovery that keeps the delay. The
LUT library comes from the cells' ``abc9_lut`` attributes and ``specify`` delays (yosys
``techlibs``). On iCE40 it is one cell, SB_LUT4. On ECP5 it has wide LUTs built from LUT4s and
the slice's muxes, ``$__ABC9_LUT5`` = 2 LUT4 + PFUMX (area 2), ``$__ABC9_LUT6`` = 2 LUT5 +
L6MUX21 (area 4), ``$__ABC9_LUT7`` (area 8), each a little slower than a LUT4 but much faster
than two LUT levels and the net between them. Where a path is critical abc9 takes them, and it
duplicates logic rather than add a level: so ECP5 spends about 1.6x the LUT4 sites of iCE40 on
the same xor network (crc32_word: 259 against 157 LUT4s), which a 4-input cover cannot see.

:func:`map_sites` maps a :class:`~kera.hls.lutmap.BitNetwork`'s live gates the same way,
coarsely: gates are split into 2-input nodes; every node keeps its ``CUTS`` best cuts of up to
the library's widest LUT (by arrival, then area flow); the delay-optimal mapping fixes the
required time (the latest output's arrival); area recovery then picks, from the outputs back,
the cut of least area flow that meets each node's required time, and one pass of exact-area
recovery, inputs first, the cut whose cone not shared with the rest of the mapping is smallest
(lfsr16 on ECP5: 590 -> 544 LUT4 sites, yosys 0.70 471). The result is the LUT4 sites of the
chosen LUTs, charged to the node of the gate each LUT's root belongs to.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from kera.hls.lutmap import BitNetwork, is_bitwise

#: Cuts kept per node (priority cuts).
CUTS = 8
#: A cut: the node numbers of its leaves.
Cut = frozenset[int]


def map_sites(net: BitNetwork, luts: Sequence[Sequence[float]], wire_ps: float,
              leaf_ps: dict[int, float] | None = None, boxed: dict[bytes, float] | None = None,
              atomic: frozenset[bytes] | set[bytes] = frozenset(),
              cells: frozenset[bytes] | set[bytes] = frozenset()) -> dict[bytes, int]:
    """Return the LUT sites of an abc9-like mapping of ``net``'s live gates, by node.

    ``luts[s - 1]`` is ``(area in LUT sites, delay in ps)`` of the library's ``s``-input LUT;
    ``wire_ps`` is abc9's ``-W`` (the delay of the net after each LUT); ``leaf_ps`` the
    arrival of leaf bits (by leaf number; 0 where absent, as for a register's output).
    The gates of the ``boxed`` nodes are not mapped (yosys builds them otherwise, e.g. an
    ordering against a constant as a carry chain): their outputs are leaves arriving at the
    given ps, the gates they read are outputs, and they get no LUTs here. The gates of the
    ``atomic`` nodes (ROM bits: any function of their inputs) are not split: a LUT takes all
    of such a gate's inputs or reads its output. The ``cells`` among the ``boxed`` nodes are
    written as cells that read the network's leaf bits themselves (``kera.hls.zeroflag``): the
    gates they read are not outputs for them.
    """
    boxed = boxed or {}
    fanin, owner, outputs, leaves, inner = _binary(net, set(boxed), set(atomic), set(cells))
    box_ps = {-g - 1: boxed[net._fanin[g][2]] for g in net._fanin if net._fanin[g][2] in boxed}
    arrival = [box_ps[leaf] if leaf < 0 else (leaf_ps or {}).get(leaf, 0.0) for leaf in leaves]
    chosen = cover(fanin, arrival, outputs, luts, wire_ps, inner=inner)
    first = len(leaves)
    sites: dict[bytes, int] = {}
    for v, c in chosen.items():
        nid = owner[v - first]
        sites[nid] = sites.get(nid, 0) + int(luts[len(c) - 1][0])
    return sites


def cover(fanin: Sequence[tuple[int, int]], leaf_arrival: Sequence[float], outputs: set[int],
          luts: Sequence[Sequence[float]], wire: float, required: float | None = None,
          inner: set[int] | frozenset[int] = frozenset()) -> dict[int, Cut]:
    """Return a LUT cover of a network of 2-input nodes: each LUT's root -> its cut.

    Signals ``0 .. len(leaf_arrival) - 1`` are the leaves (arriving at ``leaf_arrival``), the
    2-input nodes follow in topological order (``fanin``, by signal). ``luts[s - 1]`` is
    ``(area, delay)`` of an ``s``-input LUT, ``wire`` the delay of the net after each LUT
    (one unit throughout: ps or ns). Every node keeps its ``CUTS`` best cuts (by arrival,
    then area flow); ``required`` (None: the latest output's arrival in the delay-optimal
    mapping, abc9's own target) bounds every output's arrival, and within it area recovery
    picks, from the outputs back, the cut of least area flow, then one pass of exact area.
    The nodes of ``inner`` (inside an atomic gate) are no cut of their readers."""
    first = len(leaf_arrival)
    kmax = len(luts)
    n = len(fanin)
    fanout = [0] * (first + n)
    for ins in fanin:
        for i in ins:
            fanout[i] += 1
    arrival = [*leaf_arrival, *[0.0] * n]
    flow = [0.0] * (first + n)
    cuts: list[list[Cut]] = [[] for _ in range(n)]
    trivial = [frozenset((i,)) for i in range(first + n)]

    def cost(cut: Cut, refs: list[int]) -> tuple[float, float]:
        size = len(cut)
        area, delay = luts[size - 1]
        arr = max(arrival[i] for i in cut) + delay + wire
        af = area + sum(flow[i] / max(1, refs[i]) for i in cut if i >= first)
        return arr, af

    for v, (a, b) in enumerate(fanin):
        left = [*([] if a in inner else [trivial[a]]), *cuts[a - first]] if a >= first else \
            [trivial[a]]
        right = [*([] if b in inner else [trivial[b]]), *cuts[b - first]] if b >= first else \
            [trivial[b]]
        found: set[Cut] = set()
        for x in left:
            for y in right:
                c = x | y
                if len(c) <= kmax:
                    found.add(c)
        ranked = sorted(((*cost(c, fanout), len(c), sorted(c)), c) for c in found)
        by_area = sorted(ranked, key=lambda r: (r[0][1], r[0][0], r[0][2], r[0][3]))
        keep = [c for _, c in ranked[:CUTS]]
        keep += [c for _, c in by_area[: CUTS // 2] if c not in keep]
        cuts[v] = keep
        arrival[first + v], flow[first + v] = ranked[0][0][0], ranked[0][0][1]
    fastest = max((arrival[o] for o in outputs), default=0.0)
    target = fastest if required is None else max(required, fastest)
    chosen = _select(fanin, cuts, outputs, first, target, luts, wire, arrival, flow,
                     fanout, delay_first=required is None)
    refs = [0] * (first + n)  # area flow again, with the references of the first mapping
    for c in chosen.values():
        for i in c:
            refs[i] += 1
    for v in range(n):
        if cuts[v]:
            flow[first + v] = min(cost(c, refs)[1] for c in cuts[v])
    chosen = _select(fanin, cuts, outputs, first, target, luts, wire, arrival, flow, refs,
                     delay_first=False)
    return _exact_area(fanin, cuts, chosen, outputs, first, target, luts, wire, arrival)


def _select(fanin: Sequence[tuple[int, int]], cuts: list[list[Cut]], outputs: set[int], first: int,
            required: float, luts: Sequence[Sequence[float]], wire_ps: float,
            arrival: list[float], flow: list[float], refs: list[int], delay_first: bool
            ) -> dict[int, Cut]:
    """Choose a cut for every node the mapping needs, from the outputs back: the earliest
    (``delay_first``) or the one of least area flow whose arrival meets the node's required
    time (the delay-optimal cut always does)."""
    req = dict.fromkeys(outputs, required)
    chosen: dict[int, Cut] = {}
    for v in range(len(fanin) - 1, -1, -1):
        node = first + v
        if node not in req:
            continue
        best: tuple[tuple[float, ...], Cut] | None = None
        for c in cuts[v]:
            area, delay = luts[len(c) - 1]
            arr = max(arrival[i] for i in c) + delay + wire_ps
            if arr > req[node] + 1e-6:
                continue
            af = area + sum(flow[i] / max(1, refs[i]) for i in c if i >= first)
            key = (arr, af) if delay_first else (af, arr)
            if best is None or key < best[0]:
                best = (key, c)
        assert best is not None  # the delay-optimal cut meets every required time
        c = best[1]
        chosen[node] = c
        slack = req[node] - luts[len(c) - 1][1] - wire_ps
        for i in c:
            if i >= first:
                req[i] = min(req.get(i, slack), slack)
    return chosen


def _exact_area(fanin: Sequence[tuple[int, int]], cuts: list[list[Cut]], chosen: dict[int, Cut],
                outputs: set[int], first: int, required: float,
                luts: Sequence[Sequence[float]], wire_ps: float, arrival: list[float]
                ) -> dict[int, Cut]:
    """Return ``chosen`` after one pass of exact-area recovery (as abc's mapper ends): in
    topological order, each mapped node takes the cut whose LUTs not shared with the rest of
    the mapping (its maximum fanout-free cone, counted with reference counts) have the least
    area, among the cuts that meet its required time."""
    chosen = dict(chosen)
    refs: dict[int, int] = {}

    def area_of(c: Cut) -> float:
        return float(luts[len(c) - 1][0])

    def walk(node: int, step: int) -> float:  # reference (+1) or release (-1) a cone
        total, stack = 0.0, [node]
        while stack:
            v = stack.pop()
            c = chosen.get(v)
            if c is None:  # newly needed: its delay-optimal cut
                c = chosen[v] = cuts[v - first][0]
            total += area_of(c)
            for i in c:
                if i >= first:
                    refs[i] = refs.get(i, 0) + step
                    if refs[i] == (1 if step > 0 else 0):
                        stack.append(i)
        return total

    for o in outputs:
        refs[o] = refs.get(o, 0) + 1
        if refs[o] == 1:
            walk(o, 1)
    req = _required(chosen, outputs, first, required, luts, wire_ps)
    for v in range(len(fanin)):
        node = first + v
        if not refs.get(node) or node not in req:
            continue
        walk(node, -1)
        best: tuple[tuple[float, float], Cut] | None = None
        for c in cuts[v]:
            area, delay = luts[len(c) - 1]
            arr = max(arrival[i] for i in c) + delay + wire_ps
            if arr > req[node] + 1e-6:
                continue
            chosen[node] = c
            key = (walk(node, 1), arr)
            walk(node, -1)
            if best is None or key < best[0]:
                best = (key, c)
        if best is not None:
            chosen[node] = best[1]
        walk(node, 1)
    return {v: c for v, c in chosen.items() if v in outputs or refs.get(v)}


def _required(chosen: dict[int, Cut], outputs: set[int], first: int, required: float,
              luts: Sequence[Sequence[float]], wire_ps: float) -> dict[int, float]:
    """Return the required time of every node of a mapping, from the outputs back."""
    req = dict.fromkeys(outputs, required)
    for node in sorted(chosen, reverse=True):
        if node not in req:
            continue
        c = chosen[node]
        slack = req[node] - luts[len(c) - 1][1] - wire_ps
        for i in c:
            if i >= first:
                req[i] = min(req.get(i, slack), slack)
    return req


def _binary(net: BitNetwork, boxed: set[bytes], atomic: set[bytes], cells: set[bytes]
            ) -> tuple[list[tuple[int, int]], list[bytes], set[int], list[int], set[int]]:
    """Return the live gates as 2-input nodes in topological order: (fanin, owning node,
    output node numbers, the leaves read: leaf bit numbers, and ``-g - 1`` for the output of
    a gate ``g`` of a ``boxed`` node). Leaf ``leaves[i]`` is node ``i``; the 2-input nodes
    are numbered from ``len(leaves)``.

    As abc balances before it maps, a gate read by exactly one gate (and not materialised)
    is merged into its reader, and each merged cone is rebuilt as a tree of 2-input nodes
    that pairs its two earliest signals first (the least depth over its inputs)."""
    live = net._live()
    fanin_of = net._fanin  # gate -> (its leaf bits as ~n, the distinct gates it reads, node)
    boxes = {g for g in live if fanin_of[g][2] in boxed}
    gates = [g for g in live if g not in boxes]  # topological order
    readers: dict[int, int] = {}
    for g in gates:
        for h in fanin_of[g][1]:
            readers[h] = readers.get(h, 0) + 1
    feeds = {h for g in boxes if fanin_of[g][2] not in cells for h in fanin_of[g][1]
             if h not in boxes}
    whole = {g for g in gates if fanin_of[g][2] in atomic}
    merged = {g for g in gates if readers.get(g, 0) == 1 and g not in net.roots
              and g not in feeds and g not in whole}
    leaves: dict[int, int] = {}
    for g in gates:
        for n in fanin_of[g][0]:
            leaves.setdefault(~n, len(leaves))
        for h in fanin_of[g][1]:
            if h in boxes:
                leaves.setdefault(-h - 1, len(leaves))
    first = len(leaves)
    fanin: list[tuple[int, int]] = []
    owner: list[bytes] = []
    depth: list[int] = []
    top: dict[int, int] = {}
    inner: set[int] = set()  # the 2-input nodes inside an atomic gate (no signal of their own)

    def signals(g: int) -> list[int]:
        out: list[int] = []
        stack = [g]
        while stack:  # depth first: leaf bits, then gates (a merged cone may be a long chain)
            ls, hs, _ = fanin_of[stack.pop()]
            out.extend(leaves[~n] for n in ls)
            folded = []
            for h in hs:
                if h in merged:
                    folded.append(h)
                elif h in boxes:
                    out.append(leaves[-h - 1])
                else:
                    out.append(top[h])
            stack.extend(reversed(folded))
        return out

    for g in gates:
        if g in merged:
            continue
        nid = fanin_of[g][2]
        heap = [(depth[i - first] if i >= first else 0, i)
                for i in dict.fromkeys(signals(g))]
        heapq.heapify(heap)
        while len(heap) > 1:
            (da, left), (db, right) = heapq.heappop(heap), heapq.heappop(heap)
            fanin.append((left, right))
            owner.append(nid)
            depth.append(max(da, db) + 1)
            heapq.heappush(heap, (depth[-1], first + len(fanin) - 1))
            if g in whole:
                inner.add(first + len(fanin) - 1)
        top[g] = heap[0][1]
        inner.discard(top[g])
    outputs = {top[g] for g in (*net.roots, *feeds) if g in top and top[g] >= first}
    return fanin, owner, outputs, list(leaves), inner


def leaf_arrivals(net: BitNetwork, arrival_ns: dict[bytes, float]) -> dict[int, float]:
    """Return the arrival (ps) of the leaf bits of ``net``: a leaf-producing node's bits arrive
    when the node's output does (``arrival_ns``, e.g. a carry chain's end)."""
    out: dict[int, float] = {}
    graph = net.graph
    for nid, bits in net.bits.items():
        if is_bitwise(graph, graph.nodes[nid]) or nid not in arrival_ns:
            continue
        t = 1000.0 * arrival_ns[nid]
        for b in bits:
            if b[2] < 0 and len(b[0]) == 1:
                (leaf,) = b[0]
                out[leaf] = max(out.get(leaf, 0.0), t)
    return out


__all__ = ["CUTS", "cover", "leaf_arrivals", "map_sites"]
