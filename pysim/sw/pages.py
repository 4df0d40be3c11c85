"""Multiple page sizes in the operating system: which page a fault maps, what a downgrade leaves, and
the physical memory that large pages come from.

* :func:`fitting_sizes` is the alignment rule both IRIX (Ganapathy and Schimmel) and HP-UX
  (Subramanian et al.) apply at fault time: a page of size s can map an address only if the aligned
  block of s around it (of 2 s where TLB entries map even/odd pairs) lies wholly inside the region.
* :func:`map_range` maps a range front to back with the largest size the rule allows, falling back to
  the next smaller size or to the base page; :func:`downgrade` remaps what is left of a large page
  after part of it is unmapped.
* :class:`PhysicalMemory` keeps base-page frames in a bitmap with per-chunk counts of migratable and
  pinned pages: the free large pages of each size, a placement policy, and a coalescing daemon that
  migrates busy pages out of nearly free chunks.

    >>> KB = 1024
    >>> map_range(0, 96 * KB, 64 * KB, 4 * KB, sizes=(4 * KB, 16 * KB, 64 * KB), paired=False)
    [(0, 65536), (65536, 16384), (81920, 16384)]
"""
from __future__ import annotations

import numpy as np

FREE, MIGRATABLE, PINNED = 0, 1, 2


def _block(size: int, base: int, paired: bool) -> int:
    """Bytes an entry of ``size`` covers: an even/odd pair of large pages where entries are paired
    (a base page may leave its partner invalid)."""
    return 2 * size if paired and size > base else size


def fitting_sizes(va: int, start: int, end: int, sizes, base: int, *, paired: bool = False) -> list:
    """The sizes among ``sizes`` (largest first) whose aligned block around ``va`` lies in [start, end)."""
    out = []
    for s in sorted(sizes, reverse=True):
        block = _block(s, base, paired)
        lo = va - va % block
        if lo >= start and lo + block <= end:
            out.append(s)
    return out


def map_range(start: int, end: int, hint: int, base: int, *, sizes, paired: bool = True,
              fallback: str = "next") -> list:
    """The pages a fault handler maps over [start, end), front to back: a list of (address, page bytes).

    At each address it takes the largest size <= ``hint`` that starts there and passes
    :func:`fitting_sizes`; with ``fallback="base"`` only the hint itself is tried before the base page.
    A base page is always allowed.
    """
    if start % base or end % base or end < start:
        raise ValueError(f"range [{start}, {end}) must be whole base pages of {base}")
    if fallback not in ("next", "base"):
        raise ValueError(f"fallback must be 'next' or 'base', got {fallback!r}")
    allowed = [s for s in sizes if base <= s <= hint] or [base]
    if fallback == "base":
        allowed = [max(allowed), base]
    pages, va = [], start
    while va < end:
        size = next((s for s in fitting_sizes(va, start, end, allowed, base, paired=paired) if va % s == 0), base)
        pages.append((va, size))
        va += size
    return pages


def downgrade(page_bytes: int, unmap: tuple, base: int, *, sizes, paired: bool = True) -> list:
    """A page of ``page_bytes`` at 0 loses [unmap[0], unmap[1]); the pages that remain mapped, each part
    remapped by :func:`map_range` with the next smaller size as the hint."""
    lo, hi = unmap
    if not (0 <= lo < hi <= page_bytes) or lo % base or hi % base:
        raise ValueError(f"unmap must be whole base pages inside the page, got {unmap!r}")
    smaller = max([s for s in sizes if s < page_bytes] or [base])
    out = []
    for a, b in ((0, lo), (hi, page_bytes)):
        if b > a:
            out += map_range(a, b, smaller, base, sizes=sizes, paired=paired, fallback="next")
    return out


class PhysicalMemory:
    """Base-page frames in a bitmap (FREE, MIGRATABLE or PINNED), grouped in chunks of one large page.

    ``placement="random"`` takes any free frame; ``"migratable"`` puts pinned (kernel) pages in the chunk
    with the fewest migratable pages and migratable ones in the chunk with the most, so pinned pages
    gather and the other chunks stay coalescible (Ganapathy and Schimmel §6.4.4).
    """

    def __init__(self, pages: int, chunk_pages: int, placement: str, rng):
        if chunk_pages < 1 or pages < 1 or pages % chunk_pages:
            raise ValueError(f"memory of {pages} base pages is not whole chunks of {chunk_pages}")
        if placement not in ("random", "migratable"):
            raise ValueError(f"placement must be 'random' or 'migratable', got {placement!r}")
        self.state = np.zeros(pages, dtype=np.int8)
        self.chunk_pages, self.placement, self.rng = chunk_pages, placement, rng
        chunks = pages // chunk_pages
        self.free = np.full(chunks, chunk_pages)
        self.migratable = np.zeros(chunks, dtype=np.int64)

    def free_blocks(self, block_pages: int) -> np.ndarray:
        """The free list of one size: first frames of the aligned, wholly free blocks of ``block_pages``."""
        if block_pages < 1 or self.state.size % block_pages:
            raise ValueError(f"block_pages must divide the {self.state.size} frames, got {block_pages}")
        whole = (self.state.reshape(-1, block_pages) == FREE).all(axis=1)
        return np.flatnonzero(whole) * block_pages

    def allocate(self, pinned: bool) -> int:
        """One base page, by the placement policy; MemoryError when none is free."""
        if not self.free.any():
            raise MemoryError("no free base page")
        if self.placement == "random":
            free = np.flatnonzero(self.state == FREE)
            page = int(free[self.rng.integers(free.size)])
        else:
            has = self.free > 0
            score = np.where(has, self.migratable, -1 if not pinned else np.iinfo(np.int64).max)
            chunk = int(np.argmin(score) if pinned else np.argmax(score))
            lo = chunk * self.chunk_pages
            page = lo + int(np.flatnonzero(self.state[lo:lo + self.chunk_pages] == FREE)[0])
        self.state[page] = PINNED if pinned else MIGRATABLE
        c = page // self.chunk_pages
        self.free[c] -= 1
        self.migratable[c] += 0 if pinned else 1
        return page

    def release(self, page: int) -> None:
        if self.state[page] == FREE:
            raise ValueError(f"page {page} is already free")
        c = page // self.chunk_pages
        self.migratable[c] -= 1 if self.state[page] == MIGRATABLE else 0
        self.free[c] += 1
        self.state[page] = FREE

    def churn(self, steps: int, utilisation: float, kernel_share: float) -> None:
        """Random allocations and frees around ``utilisation`` of memory (a long-running system); a
        ``kernel_share`` of the allocations are pinned."""
        target = int(utilisation * self.state.size)
        used = []
        for _ in range(steps):
            if len(used) < target or (self.rng.random() < 0.5 and len(used) < self.state.size):
                used.append(self.allocate(self.rng.random() < kernel_share))
            else:
                i = int(self.rng.integers(len(used)))
                used[i], used[-1] = used[-1], used[i]
                self.release(used.pop())

    def coalesce(self, level: str, mild_threshold: int, migration: bool = True) -> tuple:
        """(large pages formed, pages migrated) by one daemon pass at ``level``.

        weak: only chunks already free; mild: also chunks with no pinned page and at most
        ``mild_threshold`` busy ones; strong: every chunk with no pinned page. Busy pages go to free
        pages of chunks not being coalesced, least busy chunks first. The pass counts; it does not move
        the frames.
        """
        if level not in ("weak", "mild", "strong"):
            raise ValueError(f"level must be 'weak', 'mild' or 'strong', got {level!r}")
        busy = self.chunk_pages - self.free
        pinned = busy - self.migratable
        whole = int(np.sum(busy == 0))
        if level == "weak" or not migration:
            return whole, 0
        limit = mild_threshold if level == "mild" else self.chunk_pages
        pool = int(self.free[busy > 0].sum())  # free pages a migrated page can go to
        formed, moved = whole, 0
        for c in np.argsort(busy, kind="stable"):
            if busy[c] == 0 or pinned[c] or busy[c] > limit:
                continue
            if pool - self.free[c] < busy[c]:
                break
            pool -= self.free[c] + busy[c]
            formed, moved = formed + 1, moved + int(busy[c])
        return formed, moved
