"""An operating system's page cache, in C: LRU or CLOCK, dirty pages, write-back, read-ahead, pinning.

A page is named by a key that packs a file number and a page index
(:meth:`PageCache.key`), so one file's pages have consecutive keys and
read-ahead and dropping a file work on key ranges. Traces run in C
(:meth:`PageCache.run`: 10^7 accesses take well under a second); models on
the engine call :meth:`PageCache.access` one page at a time and learn which
page was evicted and whether it must be written back.

>>> pc = PageCache(capacity_pages=2)
>>> [pc.access(k).hit for k in (1, 2, 1, 3, 2)]
[False, False, True, False, False]
>>> pc.counts().misses
4
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pysim import _native

FILE_SHIFT = 40  # a key is file << 40 | page: files of up to 2**40 pages
POLICIES = {"lru": 0, "clock": 1}


@dataclass(frozen=True)
class Counts:
    """What the cache has seen since it was made or its counts were reset."""

    accesses: int
    hits: int
    misses: int
    writes: int
    evictions: int
    writebacks: int      # dirty victims (and dirty pages dropped), each a page written
    flushed: int         # dirty pages cleaned by the threshold or flush()
    readahead: int       # pages brought in ahead of a sequential reader
    readahead_hits: int  # of those, pages later read
    io_waits: int        # hits on a page whose I/O was still in progress

    @property
    def hit_ratio(self) -> float:
        return self.hits / self.accesses if self.accesses else float("nan")


@dataclass(frozen=True)
class Access:
    """One access: was it a hit, which page was evicted (or None), was that page dirty."""

    hit: bool
    victim: int | None
    victim_dirty: bool


class PageCache:
    """A page cache of ``capacity_pages`` pages (or ``capacity_bytes`` of ``page_bytes`` pages).

    Parameters
    ----------
    policy : {"lru", "clock"}
        Replacement: least recently used, or CLOCK's second chance.
    readahead_pages : int
        Pages brought in after a miss on the page following the last one accessed.
    dirty_high, dirty_low : int, optional
        With ``dirty_high``, a write that leaves more dirty pages than that cleans the oldest
        down to ``dirty_low`` (default: half of ``dirty_high``).
    """

    def __init__(self, capacity_pages: int | None = None, *, capacity_bytes: int | None = None,
                 page_bytes: int = 4096, policy: str = "lru", readahead_pages: int = 0,
                 dirty_high: int | None = None, dirty_low: int | None = None):
        if (capacity_pages is None) == (capacity_bytes is None):
            raise ValueError("give exactly one of capacity_pages and capacity_bytes")
        if not page_bytes > 0:
            raise ValueError(f"page_bytes must be > 0, got {page_bytes!r}")
        if capacity_pages is None:
            capacity_pages = capacity_bytes // page_bytes
        if not capacity_pages >= 1:
            raise ValueError(f"the cache must hold at least one page, got {capacity_pages!r}")
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {sorted(POLICIES)}, got {policy!r}")
        if readahead_pages < 0:
            raise ValueError(f"readahead_pages must be >= 0, got {readahead_pages!r}")
        high = dirty_high or 0
        low = (high // 2 if dirty_low is None else dirty_low) if high else 0
        if high and not 0 <= low <= high:
            raise ValueError(f"dirty_low must be in [0, dirty_high={high}], got {low!r}")
        self.page_bytes = page_bytes
        self.capacity_pages = int(capacity_pages)
        self.policy = policy
        self._c = _native.PageCache(self.capacity_pages, POLICIES[policy], int(readahead_pages), int(high), int(low))

    def __repr__(self):
        return (f"PageCache({self.capacity_pages} pages of {self.page_bytes} B, {self.policy}, "
                f"{self.size} cached, {self.dirty} dirty)")

    @staticmethod
    def key(file: int, page: int) -> int:
        """The key of page ``page`` of file ``file``."""
        if not (0 <= file < 2 ** (64 - FILE_SHIFT) and 0 <= page < 2 ** FILE_SHIFT):
            raise ValueError(f"file {file!r} or page {page!r} out of range")
        return (file << FILE_SHIFT) | page

    def keys(self, file: int, offsets_bytes) -> np.ndarray:
        """The keys of the pages holding byte ``offsets_bytes`` of file ``file``."""
        pages = np.asarray(offsets_bytes, dtype=np.uint64) // np.uint64(self.page_bytes)
        return (np.uint64(file) << np.uint64(FILE_SHIFT)) | pages

    def run(self, keys, writes=None, *, hits_out=None) -> Counts:
        """Access every key in order (``writes``: a bool per access); returns the counts so far."""
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        if writes is not None:
            writes = np.ascontiguousarray(writes, dtype=np.uint8)
        return Counts(**self._c.run(keys, writes, hits_out))

    def access(self, key: int, write: bool = False) -> Access:
        """One access; says what it evicted."""
        return Access(*self._c.access(int(key), bool(write)))

    def flush(self, max_pages: int) -> list:
        """Clean up to ``max_pages`` of the oldest dirty pages; returns their keys (to be written)."""
        return self._c.flush(int(max_pages))

    def is_cached(self, key: int) -> bool:
        return self._c.flags(int(key)) >= 0

    def is_dirty(self, key: int) -> bool:
        return self._c.flags(int(key)) > 0 and bool(self._c.flags(int(key)) & _native.PAGE_DIRTY)

    def pin(self, key: int, on: bool = True) -> None:
        """Pin (or unpin) a cached page: it is never chosen as a victim."""
        self._c.mark(int(key), _native.PAGE_PINNED, on)

    def io(self, key: int, on: bool = True) -> None:
        """Mark (or clear) I/O in progress on a cached page: not evictable; a hit on it waits."""
        self._c.mark(int(key), _native.PAGE_IO, on)

    def drop_file(self, file: int) -> int:
        """Drop a file's unpinned pages (as posix_fadvise DONTNEED does); dirty ones are written first."""
        return self._c.drop(file << FILE_SHIFT, (file + 1) << FILE_SHIFT)

    @property
    def size(self) -> int:
        return self._c.size

    @property
    def dirty(self) -> int:
        return self._c.dirty

    def counts(self) -> Counts:
        return Counts(**self._c.counts())

    def reset_counts(self) -> None:
        self._c.reset_counts()
