"""Pausing the cyclic garbage collector around phases that allocate much and free little.

CPython runs a collection every 700 net allocations of container objects and, now and then, a
full one over every live container. A phase that builds hundreds of thousands of tuples, sets
and records (a bit network, an optimiser pass) and frees almost none of them pays for those
traversals again and again: on the 20k-node scheduling benchmark more than half of the bit
network's time went to them. Such phases make no reference cycles worth collecting early, so
they run with the collector paused; it resumes (if it was on) when they end.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off; restore its state after."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            # What the block made and kept goes straight to the oldest generation, where it
            # would be after surviving two young collections: those would traverse every
            # object again (0.3 s after a 20k-node bit network) and find nothing to free.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


__all__ = ["paused_gc"]
