"""System-call workloads: call sequences drawn from a mix, and the mixes of simple programs.

A :class:`pysim.sw.syscalls.SyscallMix` says how often each call runs;
:func:`call_sequence` draws the order (the calls independent, each with its
share of the mix), and :func:`copy_mix` is the mix a buffered file copy
makes, counted from the program rather than measured.
"""
from __future__ import annotations

import math

import numpy as np

from pysim.rng import make_rng
from pysim.sw.syscalls import SyscallMix


def call_sequence(mix: SyscallMix, n: int, *, rng=0) -> np.ndarray:
    """``n`` call names drawn independently with the mix's shares.

    >>> seq = call_sequence(SyscallMix({"read": 3, "write": 1}), 40_000, rng=1)
    >>> round(float((seq == "read").mean()), 2)
    0.75
    """
    if not (isinstance(n, (int, np.integer)) and n >= 0):
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    if not mix.total > 0:
        raise ValueError("the mix has no calls to draw from")
    names = np.array(sorted(mix.counts))
    p = np.array([mix.counts[c] for c in names], dtype=float)
    return make_rng(rng).choice(names, size=n, p=p / p.sum())


def call_times(mix: SyscallMix, rate_per_s: float, duration_s: float, *, rng=0) -> tuple:
    """A Poisson stream of calls at ``rate_per_s`` for ``duration_s``: (times, names)."""
    if not rate_per_s > 0 or not duration_s > 0:
        raise ValueError(f"rate_per_s and duration_s must be > 0, got {rate_per_s!r}, {duration_s!r}")
    gen = make_rng(rng)
    n = gen.poisson(rate_per_s * duration_s)
    times = np.sort(gen.uniform(0.0, duration_s, size=n))
    return times, call_sequence(mix, int(n), rng=gen)


def copy_mix(file_bytes: int, buffer_bytes: int) -> SyscallMix:
    """The calls of ``cp``'s inner loop over one file: open both, read and write a buffer at a time,
    the read that finds the end, close both (start-up calls left out).

    >>> copy_mix(10_000, 4096).counts["read"]
    4
    """
    if not file_bytes >= 0 or not buffer_bytes > 0:
        raise ValueError(f"file_bytes must be >= 0 and buffer_bytes > 0, got {file_bytes!r}, {buffer_bytes!r}")
    chunks = math.ceil(file_bytes / buffer_bytes)
    return SyscallMix({"openat": 2, "read": chunks + 1, "write": chunks, "close": 2},
                      {"read": file_bytes, "write": file_bytes} if file_bytes else {})
