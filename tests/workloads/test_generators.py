"""Workload generators: the distributions they promise, and determinism for a seed."""
import itertools

import numpy as np
import pytest

from pysim.workloads.addresses import zipf_cdf, zipf_clustered_pages
from pysim.workloads.arrivals import poisson_gaps


def test_poisson_gaps_have_the_mean_and_spread_of_an_exponential(seed):
    gaps = np.fromiter(itertools.islice(poisson_gaps(50.0, rng=seed), 200_000), float)
    # mean 20 ms; the standard error of the mean of 200k exponentials is 0.045 ms
    assert gaps.mean() == pytest.approx(0.02, abs=4 * 0.02 / np.sqrt(gaps.size))
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.01)  # coefficient of variation of 1


def test_the_same_seed_gives_the_same_stream():
    a = list(itertools.islice(poisson_gaps(5.0, rng=3), 10))
    b = list(itertools.islice(poisson_gaps(5.0, rng=3), 10))
    assert a == b and a != list(itertools.islice(poisson_gaps(5.0, rng=4), 10))


def test_zipf_cdf_matches_the_harmonic_sums():
    cdf = zipf_cdf(4, 1.0)
    h = 1 + 1 / 2 + 1 / 3 + 1 / 4
    assert cdf == pytest.approx([1 / h, 1.5 / h, (1.5 + 1 / 3) / h, 1.0])


def test_zipf_pages_follow_their_popularity_within_runs(seed):
    pages = zipf_clustered_pages(64, 1.0, 400_000, cluster_pages=8, rng=seed)
    counts = np.bincount(pages, minlength=64)
    # the most popular run holds ranks 1..8: its share is their Zipf mass
    run_counts = counts.reshape(8, 8).sum(axis=1)
    expected = zipf_cdf(64, 1.0)[7]
    assert run_counts.max() / pages.size == pytest.approx(expected, abs=0.005)
    # inside that run, pages fall in rank order: popularity decreases along the run
    top = counts.reshape(8, 8)[run_counts.argmax()]
    assert np.all(np.diff(top) < 0)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="rate_per_s must be > 0"):
        next(poisson_gaps(0.0))
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        zipf_cdf(3, -1)
