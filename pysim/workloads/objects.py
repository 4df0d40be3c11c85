"""Object-store workloads: the RVM benchmark's transactions and OO7's database and traversals.

* :func:`rvm_transactions` follows the benchmark of the RVM paper
  (Satyanarayanan et al., TOCS 1994, §7.1), as Rhino's authors ran it: each
  transaction updates three 128-byte records, one uniformly over the
  database and two in a narrow hot region, and appends 64 bytes to a log
  area; it yields each transaction's writes as (offset, nbytes).
* :class:`OO7` builds the OO7 database (Carey, DeWitt and Naughton,
  SIGMOD 1993): a module of assemblies ``levels`` deep with fan-out
  ``assembly_fanout``, base assemblies pointing at composite parts, each
  composite part a graph of atomic parts with ``connections`` outgoing
  connections each, laid out composite by composite on pages. Its
  traversals T1 (read every atomic part reached depth first), T2a (update
  the root atomic part of each composite visited), T2b (update every atomic
  part) and T2c (update each four times) come out as page traces.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pysim.rng import make_rng


def rvm_transactions(n: int, db_bytes: int, *, hot_bytes: int, record_bytes: int = 128, append_bytes: int = 64,
                     rng=0):
    """Yield ``n`` transactions, each a list of (offset, nbytes) writes: a record anywhere, two records in
    the hot region (the first ``hot_bytes`` of the database), then the append at the log area's tail
    (which follows the database)."""
    if not 0 < hot_bytes <= db_bytes or record_bytes < 1 or db_bytes < record_bytes:
        raise ValueError("need 0 < hot_bytes <= db_bytes and 1 <= record_bytes <= db_bytes")
    gen = make_rng(rng)
    records, hot = db_bytes // record_bytes, max(1, hot_bytes // record_bytes)
    tail = db_bytes
    for _ in range(n):
        picks = [int(gen.integers(records)), int(gen.integers(hot)), int(gen.integers(hot))]
        yield [(k * record_bytes, record_bytes) for k in picks] + [(tail, append_bytes)]
        tail += append_bytes


@dataclass(frozen=True)
class OO7:
    """The OO7 database's shape and object sizes; the defaults are the paper's small configuration
    (the sizes of objects in bytes are assumptions a model states)."""

    atomic_per_composite: int = 20
    connections: int = 3
    composites: int = 500
    levels: int = 7
    assembly_fanout: int = 3
    composites_per_base: int = 3
    atomic_bytes: int = 100
    connection_bytes: int = 40
    composite_bytes: int = 200
    document_bytes: int = 2000
    page_bytes: int = 8192

    def __post_init__(self):
        for name in ("atomic_per_composite", "connections", "composites", "levels", "assembly_fanout",
                     "composites_per_base", "page_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"OO7.{name} must be >= 1")

    @classmethod
    def medium(cls, connections: int = 3) -> "OO7":
        """The medium configuration (200 atomic parts per composite, 20,000-byte documents)."""
        return cls(atomic_per_composite=200, connections=connections, document_bytes=20_000)

    @property
    def base_assemblies(self) -> int:
        return self.assembly_fanout ** (self.levels - 1)

    def layout(self, *, rng=0) -> dict:
        """Where each object lies: composite c's header and document, then its atomic parts, each
        followed by its connections; composites one after another. Returns arrays of byte offsets and
        the graph: ``composite_at``, ``atomic_at`` (composite, part), ``edges`` (composite, part, k), and
        ``base_composites`` (the composites each base assembly uses)."""
        gen = make_rng(rng)
        n, a = self.composites, self.atomic_per_composite
        per_atomic = self.atomic_bytes + self.connections * self.connection_bytes
        per_composite = self.composite_bytes + self.document_bytes + a * per_atomic
        composite_at = np.arange(n, dtype=np.int64) * per_composite
        atomic_at = composite_at[:, None] + self.composite_bytes + self.document_bytes + \
            np.arange(a, dtype=np.int64)[None, :] * per_atomic
        # connections: part i links to i+1 (a ring keeps the graph connected) and to random others
        edges = gen.integers(0, a, size=(n, a, self.connections))
        edges[:, :, 0] = (np.arange(a)[None, :] + 1) % a
        base = gen.integers(0, n, size=(self.base_assemblies, self.composites_per_base))
        return {"composite_at": composite_at, "atomic_at": atomic_at, "edges": edges, "base_composites": base,
                "bytes": int(n * per_composite)}

    def traversal(self, kind: str, *, rng=0) -> tuple:
        """Pages touched, in order, and whether each touch writes: (pages, writes) arrays, for T1, T2a,
        T2b or T2c (every base assembly's composites, each composite's atomic parts depth first)."""
        if kind not in ("T1", "T2a", "T2b", "T2c"):
            raise ValueError(f"kind must be one of T1, T2a, T2b, T2c, got {kind!r}")
        lay = self.layout(rng=rng)
        pages, writes = [], []
        per_atomic_updates = {"T1": 0, "T2a": 0, "T2b": 1, "T2c": 4}[kind]
        for composites in lay["base_composites"]:
            for c in composites:
                pages.append(lay["composite_at"][c] // self.page_bytes)
                writes.append(False)
                seen, stack = set(), [0]
                while stack:  # depth first over the atomic parts' connections
                    part = stack.pop()
                    if part in seen:
                        continue
                    seen.add(part)
                    page = lay["atomic_at"][c, part] // self.page_bytes
                    updates = per_atomic_updates + (1 if kind == "T2a" and part == 0 else 0)
                    pages.extend([page] * (1 + updates))
                    writes.extend([False] + [True] * updates)
                    stack.extend(int(e) for e in lay["edges"][c, part][::-1])
        return np.asarray(pages, dtype=np.int64), np.asarray(writes, dtype=bool)
