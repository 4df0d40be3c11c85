"""Cache and TLB simulators over address traces (the loops run in C).

    >>> import numpy as np
    >>> c = Cache(size_bytes=256 * 1024, line_bytes=64, ways=8)
    >>> c.run(np.arange(0, 1 << 20, 64, dtype=np.uint64))["misses"]
    16384
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pysim import _native
from pysim.rng import make_rng, native_rng

#: Replacement policies by name, as the C core numbers them.
POLICIES = {"lru": 0, "fifo": 1, "random": 2, "custom": 3}


def _policy_args(policy, callback, rng):
    """(number, generator or None, callback address) for a policy, checked."""
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {sorted(POLICIES)}, got {policy!r}")
    if (policy == "custom") != (callback is not None):
        raise ValueError("callback is required for policy 'custom' and only for it")
    address = 0
    if callback is not None:
        address = getattr(callback, "address", None)
        if not isinstance(address, int) or address <= 0:
            raise TypeError(f"callback must be a compiled policy from pysim.policies, got {type(callback).__name__}")
    gen = make_rng(rng) if policy == "random" else None
    return POLICIES[policy], gen, address


def as_addresses(addrs, name="addrs") -> np.ndarray:
    """A C-contiguous uint64 copy-free view of an integer array, or TypeError."""
    a = np.asarray(addrs)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got shape {a.shape}")
    if a.dtype.kind not in "ui":
        raise TypeError(f"{name} must hold integers (byte addresses), got dtype {a.dtype}")
    if a.dtype.kind == "i" and a.size and a.min() < 0:
        raise ValueError(f"{name} must be >= 0")
    return np.ascontiguousarray(a, dtype=np.uint64)


class _Assoc:
    """Shared run loop of Cache and TLB: counts, optional per-access hits."""

    def _run(self, addrs, return_hits, **kw):
        a = as_addresses(addrs)
        hits = np.empty(a.size, dtype=np.uint8) if return_hits else None
        if self._gen is not None:
            with native_rng(self._gen):
                counts = self._c.run(a, hits, **kw)
        else:
            counts = self._c.run(a, hits, **kw)
        return (counts, hits.astype(bool)) if return_hits else counts

    def counts(self) -> dict:
        """Accesses, hits, misses and evictions since creation or reset()."""
        return self._c.counts()

    def reset(self) -> None:
        """Invalidate every entry and zero the counts."""
        self._c.reset()


class Cache(_Assoc):
    """A set-associative cache: reads only, hit and miss counting.

    Parameters
    ----------
    size_bytes, line_bytes, ways : int
        size_bytes must equal sets x ways x line_bytes; line_bytes a power of two.
    policy : {"lru", "fifo", "random", "custom"}
    rng : int or Generator
        Draws for the random policy.
    callback : compiled policy
        For "custom": from :func:`pysim.policies.assoc_policy`.
    """

    def __init__(self, size_bytes, line_bytes, ways, policy="lru", *, rng=0, callback=None):
        for name, v in (("size_bytes", size_bytes), ("line_bytes", line_bytes), ("ways", ways)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive int, got {v!r}")
        if line_bytes & (line_bytes - 1):
            raise ValueError(f"line_bytes must be a power of two, got {line_bytes}")
        if size_bytes % (line_bytes * ways):
            raise ValueError(f"size_bytes={size_bytes} must equal sets x ways x line_bytes "
                             f"(a multiple of {ways} x {line_bytes} = {ways * line_bytes})")
        number, self._gen, address = _policy_args(policy, callback, rng)
        self.size_bytes, self.line_bytes, self.ways, self.policy = size_bytes, line_bytes, ways, policy
        self.sets = size_bytes // (line_bytes * ways)
        capsule = self._gen.bit_generator.capsule if self._gen is not None else None
        self._c = _native.Cache(size_bytes, line_bytes, ways, number, capsule, address, callback)

    def run(self, addrs, *, return_hits=False):
        """Feed byte addresses (an integer array); returns the counts (and hits if asked)."""
        return self._run(addrs, return_hits)


class TLB(_Assoc):
    """A TLB that holds translations of several page sizes at once.

    Parameters
    ----------
    entries : int
    ways : int or None
        None: fully associative (as the PA-8000's unified TLB).
    policy, rng, callback : as for :class:`Cache`.
    """

    def __init__(self, entries, ways=None, policy="lru", *, rng=0, callback=None):
        ways = entries if ways is None else ways
        for name, v in (("entries", entries), ("ways", ways)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive int, got {v!r}")
        if entries % ways:
            raise ValueError(f"entries={entries} must be a multiple of ways={ways}")
        number, self._gen, address = _policy_args(policy, callback, rng)
        self.entries, self.ways, self.policy = entries, ways, policy
        capsule = self._gen.bit_generator.capsule if self._gen is not None else None
        self._c = _native.TLB(entries, ways, number, capsule, address, callback)

    def run(self, addrs, page_bytes=4096, *, return_hits=False):
        """Feed addresses; ``page_bytes`` is one size for all, or an array (one per access).

        Every page size must be a power of two between 1 byte and 2**48 bytes.
        """
        sizes = np.asarray(page_bytes)
        if sizes.dtype.kind not in "ui":
            raise TypeError(f"page_bytes must be integers, got dtype {sizes.dtype}")
        if np.any(sizes <= 0) or np.any(sizes & (sizes - 1)) or np.any(sizes > 2 ** _native.TLB_MAX_SHIFT):
            raise ValueError("page_bytes must be powers of two between 1 and 2**48")
        if sizes.ndim == 0:
            return self._run(addrs, return_hits, default_shift=int(sizes).bit_length() - 1)
        shifts = np.ascontiguousarray(np.log2(sizes.astype(np.float64)).astype(np.uint8))
        if shifts.shape != np.shape(addrs):
            raise ValueError(f"page_bytes has shape {shifts.shape}, addrs {np.shape(addrs)}")
        return self._run(addrs, return_hits, page_shift=shifts)

    def misses_for_page(self, page_bytes: int) -> int:
        """Misses of pages of ``page_bytes`` bytes so far."""
        if page_bytes <= 0 or page_bytes & (page_bytes - 1):
            raise ValueError(f"page_bytes must be a power of two, got {page_bytes}")
        return self._c.misses_for_shift(page_bytes.bit_length() - 1)


#: PIDs are tagged above every virtual address a model uses (the C TLB keys on address bits).
PID_SHIFT = 48


class PairedTLB:
    """A TLB whose entries each map an aligned even/odd pair of pages of one size and carry a PID (MIPS
    R10000, as Ganapathy and Schimmel describe it), on :class:`TLB`.

    A pair of ``page`` bytes is one C-TLB page of ``2 * page`` bytes, aligned to twice the page as the
    even sub-entry requires; the PID sits above bit 48. With ``paired=False`` an entry maps one page.
    ``tagged=False`` models a TLB without PIDs: :meth:`run_slices` flushes it at every switch.
    """

    def __init__(self, entries: int = 64, policy: str = "random", *, paired: bool = True, tagged: bool = True,
                 rng=0):
        self.paired, self.tagged = paired, tagged
        self._tlb = TLB(int(entries), policy=policy, rng=rng)
        self._flushed = {}  # counts from before the last flush (the C TLB zeroes its own)

    def run(self, addrs, page_bytes, pid: int = 0) -> dict:
        """Feed addresses with their page sizes (one, or one per access) for process ``pid``; the counts
        so far, as :meth:`TLB.run` gives them."""
        a = np.asarray(addrs, dtype=np.uint64)
        if np.any(a >> np.uint64(PID_SHIFT)):
            raise ValueError(f"addresses must be below 2**{PID_SHIFT} (the PID lives above)")
        if not 0 <= pid < 1 << 15:
            raise ValueError(f"pid must be in [0, 32768), got {pid!r}")
        tagged = a | np.uint64(pid << PID_SHIFT) if pid and self.tagged else a
        sizes = np.asarray(page_bytes, dtype=np.uint64)
        self._tlb.run(tagged, sizes * np.uint64(2) if self.paired else sizes)
        return self.counts()

    def flush(self) -> None:
        """Invalidate every entry (a context switch without PIDs); the counts carry on."""
        self._flushed = self.counts()
        self._tlb.reset()

    def run_slices(self, slices) -> dict:
        """Time slices ``[(pid, addrs, page_bytes), ...]`` in order. Tagged entries of a process survive
        the other processes' slices (as far as replacement leaves them); untagged, the TLB is flushed
        whenever the process changes. Returns the counts over all slices."""
        last = None
        for pid, addrs, page_bytes in slices:
            if not self.tagged and last is not None and pid != last:
                self.flush()
            self.run(addrs, page_bytes, pid)
            last = pid
        return self.counts()

    def counts(self) -> dict:
        """Accesses, hits, misses and evictions since creation, across flushes."""
        now = self._tlb.counts()
        return {k: v + self._flushed.get(k, 0) for k, v in now.items()}


@dataclass(frozen=True)
class CacheLevel:
    """One level of a machine's cache hierarchy, as a data sheet gives it."""

    name: str
    size_bytes: int
    line_bytes: int | None = None
    ways: int | None = None
