"""Cache hierarchies composed from the C :class:`pysim.hw.memory.Cache`: split first-level
instruction and data caches, a unified last level, and a NUMA remote cache.

An access of ``size`` bytes touches every line it covers; each line is one
reference to a cache (as cachegrind counts misses). A level sees, in order,
the references the level above missed, so the hierarchy is non-inclusive
with no back-invalidation, as cachegrind models it.

>>> import numpy as np
>>> h = Hierarchy(l1i=(32768, 64, 8), l1d=(32768, 64, 8), ll=(1 << 20, 64, 16))
>>> kinds = np.zeros(4096, dtype=np.uint8) + DATA
>>> h.run(kinds, np.arange(0, 4096 * 64, 64), np.full(4096, 8))["l1d_misses"]
4096

:class:`NumaNode` adds what a node of a distributed-shared-memory machine
has beyond its caches: lines homed on another node go through a remote
cache (a cache of remote memory), so a stream over remote data that
exceeds it misses to the network every time.
"""
from __future__ import annotations

import numpy as np

from pysim.hw.memory import Cache

INSTRUCTION, DATA = 0, 1


def line_refs(kinds, addrs, sizes, line_bytes: int) -> tuple:
    """Every (kind, line address) an access touches, in order: an access crossing a line boundary
    becomes one reference per line."""
    kinds, addrs, sizes = np.asarray(kinds), np.asarray(addrs, dtype=np.uint64), np.asarray(sizes, dtype=np.uint64)
    if not (kinds.shape == addrs.shape == sizes.shape):
        raise ValueError("kinds, addrs and sizes must have the same length")
    if sizes.size and sizes.min() < 1:
        raise ValueError("every access covers at least one byte")
    lb = np.uint64(line_bytes)
    first, last = addrs // lb, (addrs + sizes - np.uint64(1)) // lb
    span = (last - first + np.uint64(1)).astype(np.int64)
    rep = np.repeat(np.arange(addrs.size), span)
    offset = np.arange(rep.size) - np.repeat(np.cumsum(span) - span, span)
    lines = (first[rep] + offset.astype(np.uint64)) * lb
    return kinds[rep], lines


class Hierarchy:
    """Split L1 (instructions, data) over a unified last level; each level (size, line, ways), LRU."""

    def __init__(self, *, l1i, l1d, ll, l2=None):
        self.levels = {"l1i": Cache(*l1i), "l1d": Cache(*l1d)}
        if l2 is not None:
            self.levels["l2"] = Cache(*l2)
        self.levels["ll"] = Cache(*ll)
        lines = {lvl[1] for lvl in (l1i, l1d, ll) + ((l2,) if l2 else ())}
        if len(lines) != 1:
            raise ValueError(f"every level must use one line size, got {sorted(lines)}")
        self.line_bytes = lines.pop()

    def run(self, kinds, addrs, sizes) -> dict:
        """Feed accesses (kind INSTRUCTION or DATA, address, size); returns misses per level."""
        k, lines = line_refs(kinds, addrs, sizes, self.line_bytes)
        missed = np.zeros(lines.size, dtype=bool)
        out = {}
        for kind, name in ((INSTRUCTION, "l1i"), (DATA, "l1d")):
            sel = np.flatnonzero(k == kind)
            counts, hits = self.levels[name].run(lines[sel], return_hits=True)
            missed[sel] = ~hits
            out[f"{name}_refs"] = int(sel.size)
            out[f"{name}_misses"] = int(counts["misses"])
        below = lines[missed]
        if "l2" in self.levels:
            counts, hits = self.levels["l2"].run(below, return_hits=True)
            out["l2_misses"] = int(counts["misses"])
            below = below[~hits]
        below_kinds = k[missed]
        if "l2" in self.levels:
            below_kinds = below_kinds[~hits]
        _, ll_hits = self.levels["ll"].run(below, return_hits=True)
        out["ll_misses"] = int((~ll_hits).sum())
        out["ll_instruction_misses"] = int((~ll_hits & (below_kinds == INSTRUCTION)).sum())
        out["ll_data_misses"] = out["ll_misses"] - out["ll_instruction_misses"]
        return out

    def reset(self) -> None:
        for c in self.levels.values():
            c.reset()


class NumaNode:
    """One node of a DSM machine: a local cache in front of memory homed anywhere, and a remote cache
    for lines homed on other nodes (``home(line) -> node``, vectorised over arrays)."""

    def __init__(self, node: int, cache: tuple, remote_cache: tuple, home):
        self.node, self.home = node, home
        self.cache, self.remote = Cache(*cache), Cache(*remote_cache)
        self.line_bytes = cache[1]

    def run(self, addrs) -> dict:
        """Feed data addresses; misses of the node's cache split into local and remote, and the remote
        ones that the remote cache also missed (trips over the network)."""
        lines = np.asarray(addrs, dtype=np.uint64) // np.uint64(self.line_bytes) * np.uint64(self.line_bytes)
        _, hits = self.cache.run(lines, return_hits=True)
        misses = lines[~hits]
        remote = np.asarray(self.home(misses)) != self.node
        counts = self.remote.run(misses[remote])
        return {"refs": int(lines.size), "cache_misses": int(misses.size), "local": int((~remote).sum()),
                "remote": int(remote.sum()), "remote_cache_misses": int(counts["misses"])}
