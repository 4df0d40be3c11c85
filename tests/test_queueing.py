"""The C engine and stations against queueing theory.

Tolerances are 99.9% confidence intervals over independent replications
(spawned streams), not guesses: a correct engine fails about one seed in a
thousand per check.
"""
import numpy as np
import pytest
from stats_helpers import replication_ci

from pysim.queueing import (erlang_c, jackson_throughputs, mm1_time_in_system, mmc_mean_wait, open_network,
                            single_queue_trace)
from pysim.rng import spawn

REPS = 10


def replicate(seed, **kw):
    return [open_network(rng=g, **kw) for g in spawn(seed, REPS)]


def test_mm1_mean_time_in_system(seed):
    runs = replicate(seed, servers=[1], service_rate=[1.0], arrival_rate=[0.8], departures=100_000, warmup=2_000)
    mean, half = replication_ci([r.mean_sojourn_s for r in runs])
    assert abs(mean - mm1_time_in_system(0.8, 1.0)) <= half, (mean, half)


def test_mm1_processor_sharing_has_the_same_mean(seed):
    # M/M/1-PS: mean sojourn is insensitive to the discipline, 1/(mu - lambda)
    runs = replicate(seed, servers=[1], service_rate=[1.0], arrival_rate=[0.7], departures=60_000,
                     warmup=2_000, discipline="ps")
    mean, half = replication_ci([r.mean_sojourn_s for r in runs])
    assert abs(mean - mm1_time_in_system(0.7, 1.0)) <= half, (mean, half)


def test_mmc_mean_wait_against_erlang_c(seed):
    runs = replicate(seed, servers=[3], service_rate=[1.0], arrival_rate=[2.4], departures=100_000, warmup=2_000)
    mean, half = replication_ci([r.stations[0]["mean_wait_s"] for r in runs])
    assert abs(mean - mmc_mean_wait(2.4, 1.0, 3)) <= half, (mean, half)


def test_erlang_c_closed_form():
    assert erlang_c(1, 0.5) == pytest.approx(0.5)  # M/M/1: P(wait) = rho
    assert erlang_c(2, 1.5) == pytest.approx(0.642857, rel=1e-5)
    with pytest.raises(ValueError):
        erlang_c(2, 2.0)


def test_littles_law_on_a_random_open_network(seed):
    rng = np.random.default_rng(seed)
    k = 4
    route = rng.uniform(0, 1, (k, k))
    route *= 0.6 / route.sum(axis=1, keepdims=True)  # 40% leave after each station
    arrivals = rng.uniform(0.1, 0.3, k)
    lam = jackson_throughputs(arrivals, route)
    mu = lam / rng.uniform(0.4, 0.7, k)
    r = open_network([1] * k, mu, arrivals, route, departures=200_000, warmup=5_000, rng=seed)
    # L = lambda W holds exactly up to edge effects of the window
    assert r.mean_number == pytest.approx(r.throughput * r.mean_sojourn_s, rel=0.01)
    assert r.throughput == pytest.approx(arrivals.sum(), rel=0.03)
    util = np.array([s["utilization"] for s in r.stations])
    assert util == pytest.approx(lam / mu, rel=0.05)


def test_jackson_network_mean_sojourn(seed):
    # tandem of two M/M/1 queues: sum of 1/(mu_k - lambda)
    route = [[0, 1], [0, 0]]
    runs = replicate(seed, servers=[1, 1], service_rate=[1.0, 1.25], arrival_rate=[0.6, 0.0], route=route,
                     departures=60_000, warmup=2_000)
    mean, half = replication_ci([r.mean_sojourn_s for r in runs])
    assert abs(mean - (1 / 0.4 + 1 / 0.65)) <= half, (mean, half)


def lindley(ia, svc):
    """Sojourn times of a FIFO single-server queue by the Lindley recursion."""
    t_arr, free, out = 0.0, 0.0, []
    for a, s in zip(ia, svc):
        t_arr += a
        start = max(t_arr, free)
        free = start + s
        out.append(free - t_arr)
    return np.array(out)


def test_trace_driven_queue_matches_lindley_recursion(seed):
    rng = np.random.default_rng(seed)
    ia, svc = rng.exponential(1.0, 5000), rng.exponential(0.9, 5000)
    r = single_queue_trace(ia, svc)
    assert r.departures == 5000
    assert r.mean_sojourn_s == pytest.approx(lindley(ia, svc).mean(), rel=1e-12)


def test_trace_rejects_bad_values_naming_the_first():
    with pytest.raises(ValueError, match=r"service_s\[2\] = -1.0"):
        single_queue_trace([1.0, 1.0, 1.0], [1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match=r"interarrival_s\[0\] = nan"):
        single_queue_trace([np.nan], [1.0])


def test_same_seed_gives_identical_results():
    kw = dict(servers=[2], service_rate=[1.0], arrival_rate=[1.5], departures=20_000)
    assert open_network(rng=7, **kw) == open_network(rng=7, **kw)
    assert open_network(rng=7, **kw) != open_network(rng=8, **kw)


@pytest.mark.parametrize("kw, message", [
    (dict(servers=[0]), "servers"),
    (dict(service_rate=[-1.0]), "service_rate"),
    (dict(arrival_rate=[0.0]), "arrival_rate"),
    (dict(route=[[1.5]]), "route"),
    (dict(discipline="lifo"), "discipline"),
    (dict(departures=0), "departures"),
])
def test_open_network_rejects_bad_input(kw, message):
    args = dict(servers=[1], service_rate=[1.0], arrival_rate=[0.5])
    args.update(kw)
    with pytest.raises(ValueError, match=message):
        open_network(**args)
