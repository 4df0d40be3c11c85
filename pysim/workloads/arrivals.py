"""Arrival processes: the gaps between successive requests, in seconds."""
from __future__ import annotations

from pysim.rng import make_rng


def poisson_gaps(rate_per_s: float, *, rng=0):
    """Yield exponential gaps (seconds) forever: a Poisson stream of ``rate_per_s`` arrivals a second.

    >>> import itertools
    >>> gaps = list(itertools.islice(poisson_gaps(100.0, rng=1), 10_000))
    >>> round(sum(gaps) / len(gaps), 3)
    0.01
    """
    if not rate_per_s > 0:
        raise ValueError(f"rate_per_s must be > 0, got {rate_per_s!r}")
    gen = make_rng(rng)
    mean = 1.0 / rate_per_s
    while True:
        yield gen.exponential(mean)


def periodic_gaps(rate_per_s: float, *, jitter: float = 0.0, rng=0):
    """Yield gaps (seconds) forever for a timer-driven source: ``1 / rate_per_s`` each, times a uniform
    factor in [1 - jitter, 1 + jitter] (0 gives exact periods, as a load generator's timer ticks).

    >>> import itertools
    >>> list(itertools.islice(periodic_gaps(4.0), 3))
    [0.25, 0.25, 0.25]
    """
    if not rate_per_s > 0:
        raise ValueError(f"rate_per_s must be > 0, got {rate_per_s!r}")
    if not 0 <= jitter < 1:
        raise ValueError(f"jitter must be in [0, 1), got {jitter!r}")
    period = 1.0 / rate_per_s
    gen = make_rng(rng)
    while True:
        yield period * (1 + gen.uniform(-jitter, jitter)) if jitter else period
