"""Tree-height reduction: rebuild long chains of one associative, commutative op as balanced trees.

Guarantees: only opcodes the registry flags both ``associative`` and ``commutative`` are touched
(add, mul, and, or, xor, min, max — on integers, and and/or/xor on bools), which SEMANTICS.md
lets the compiler re-associate without changing a bit. A chain is a tree of nodes of one op and
one type whose inner results have no other user; its leaves keep their left-to-right order and
neighbours are paired level by level, so ``n`` leaves end up ``ceil(log2 n)`` deep (a sequential
``acc +=`` over 8 terms becomes depth 3). Chains that are already that shallow are left alone.
"""

from __future__ import annotations

from kera.ir.graph import Graph
from kera.ir.ops import OPS
from kera.ir.types import Type
from kera.opt.rewrite import Rewriter, use_counts, walk_order

CHAIN_OPS = frozenset(n for n, d in OPS.items() if d.associative and d.commutative)


def chains(graph: Graph, order: list[bytes]) -> tuple[dict[bytes, list[bytes]], set[bytes]]:
    """Return (root -> leaves in order, inner nodes) for every chain worth rebalancing."""
    nodes = graph.nodes
    uses = use_counts(graph, order)
    inner: set[bytes] = set()
    depth: dict[bytes, int] = {}
    leaves: dict[bytes, int] = {}
    for nid in order:
        node = nodes[nid]
        if node.op not in CHAIN_OPS:
            continue
        d, n = 0, 0
        for i in node.inputs:
            child = nodes[i]
            if child.op == node.op and child.type == node.type and uses[i] == 1:
                inner.add(i)
                d, n = max(d, depth[i]), n + leaves[i]
            else:
                n += 1
        depth[nid], leaves[nid] = d + 1, n
    roots: dict[bytes, list[bytes]] = {}
    dropped: set[bytes] = set()
    for nid, d in depth.items():
        if nid not in inner and d > (leaves[nid] - 1).bit_length():  # ceil(log2 n)
            roots[nid] = _gather(graph, nid, inner, dropped)
    return roots, dropped


def _gather(graph: Graph, root: bytes, inner: set[bytes], dropped: set[bytes]) -> list[bytes]:
    """Return the leaves under ``root`` left to right; add its inner nodes to ``dropped``."""
    out: list[bytes] = []
    stack = list(reversed(graph.nodes[root].inputs))
    while stack:
        nid = stack.pop()
        if nid in inner:
            dropped.add(nid)
            stack.extend(reversed(graph.nodes[nid].inputs))
        else:
            out.append(nid)
    return out


def balanced(rw: Rewriter, op: str, t: Type, leaves: list[bytes]) -> bytes:
    """Return a balanced tree of ``op`` over ``leaves`` (new ids), pairing neighbours."""
    level = leaves
    nodes = rw.new.nodes
    while len(level) > 1:
        pairs = []
        for i in range(0, len(level) - 1, 2):
            count = len(nodes)
            pairs.append(rw.emit(op, t, level[i : i + 2]))
            if len(nodes) == count:  # the pair existed: it now has another user
                rw.memo["merged"] = True
        level = pairs + level[len(pairs) * 2 :]
    return level[0]


def balance(graph: Graph) -> Graph:
    """Return ``graph`` with every deep associative chain rebuilt as a balanced tree.

    Hash-consing may merge a pair of a new tree with an existing node (``x + x`` twice is one
    node), and a merged pair is a leaf of the next look, so after a merge the chains are looked
    at again until none is left to rebalance (a few times at most): the pass is idempotent.
    """
    out = graph
    for _ in range(_MAX_LOOKS):
        order = walk_order(out)
        roots, dropped = chains(out, order)
        if not roots and out is not graph:
            break
        old = out

        def rebuild(rw: Rewriter, nid: bytes, old: Graph = old, roots=roots) -> bytes:
            node = old.nodes[nid]
            return balanced(rw, node.op, node.type, [rw.map[i] for i in roots[nid]])

        rw = Rewriter(old, lambda rw, t: None, ops=())
        out = rw.run(order, dropped, dict.fromkeys(roots, rebuild))
        if not rw.memo.get("merged"):
            break  # every new pair is a fresh node with one user: the next look finds nothing
    return out


_MAX_LOOKS = 4


__all__ = ["CHAIN_OPS", "balance", "balanced", "chains"]
