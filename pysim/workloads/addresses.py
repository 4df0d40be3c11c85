"""Memory reference streams, as page numbers or byte addresses (NumPy arrays)."""
from __future__ import annotations

import numpy as np

from pysim.rng import make_rng


def zipf_cdf(n_items: int, alpha: float) -> np.ndarray:
    """Cumulative Zipf(alpha) probabilities of ranks 1..n_items (rank 1 the most popular)."""
    if n_items < 1:
        raise ValueError(f"n_items must be >= 1, got {n_items!r}")
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0, got {alpha!r}")
    weights = np.arange(1, n_items + 1, dtype=np.float64) ** -alpha
    return np.cumsum(weights) / weights.sum()


def zipf_clustered_pages(n_pages: int, alpha: float, n: int, *, cluster_pages: int = 1, rng=0) -> np.ndarray:
    """``n`` page numbers in [0, n_pages): Zipf(alpha)-popular pages lying together in runs.

    Pages of neighbouring popularity sit in runs of ``cluster_pages``
    consecutive pages (spatial locality: arenas of related objects); the runs
    are scattered over the region in random order. Draws: one permutation of
    the runs, then ``n`` uniforms.

    >>> p = zipf_clustered_pages(1000, 1.0, 50_000, cluster_pages=8, rng=0)
    >>> int(p.min()) >= 0 and int(p.max()) < 1000
    True
    """
    if n_pages < 1 or n < 0 or cluster_pages < 1:
        raise ValueError(f"need n_pages >= 1, n >= 0, cluster_pages >= 1; got {n_pages}, {n}, {cluster_pages}")
    gen = make_rng(rng)
    cdf = zipf_cdf(n_pages, alpha)
    runs = -(-n_pages // cluster_pages)
    run_at = gen.permutation(runs) * cluster_pages
    rank = np.minimum(np.searchsorted(cdf, gen.random(n)), n_pages - 1)
    return np.minimum(run_at[rank // cluster_pages] + rank % cluster_pages, n_pages - 1)
