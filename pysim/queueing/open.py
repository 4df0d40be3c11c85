"""Open queueing networks run entirely in C, and the closed forms to check them by.

    >>> r = open_network(servers=[1], service_rate=[1.0], arrival_rate=[0.5], departures=20000, rng=1)
    >>> round(r.mean_sojourn_s, 1)
    2.0
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pysim import _native
from pysim.engine import DISCIPLINES
from pysim.rng import make_rng, native_rng


@dataclass(frozen=True)
class NetworkResult:
    """What an open-network run measured over its window (after warm-up)."""

    departures: int
    mean_sojourn_s: float
    sojourn_var_s2: float
    mean_number: float  # time-average jobs in the network
    throughput: float   # departures per second
    window_s: float
    events: int
    stations: tuple     # per-station dicts: utilization, mean_number, mean_response_s, mean_wait_s, ...


def _result(d: dict) -> NetworkResult:
    n = d["departures"]
    mean = d["sojourn_sum_s"] / n if n else math.nan
    var = d["sojourn_sumsq"] / n - mean * mean if n else math.nan
    stations = tuple(d.get("stations", [d.get("station")]))
    return NetworkResult(n, mean, var, d["number_integral"] / d["window_s"] if d["window_s"] else math.nan,
                         d["throughput"], d["window_s"], d["events"], stations)


def _positive_ints(name, values):
    a = np.asarray(values)
    if a.ndim != 1 or a.size == 0 or a.dtype.kind not in "iu" or np.any(a < 1):
        raise ValueError(f"{name} must be a non-empty list of ints >= 1, got {values!r}")
    return np.ascontiguousarray(a, dtype=np.int32)


def open_network(servers, service_rate, arrival_rate, route=None, *, discipline="fifo", departures=100_000,
                 warmup=1_000, rng=0) -> NetworkResult:
    """Simulate an open network of exponential stations (a Jackson network when FIFO).

    Parameters
    ----------
    servers : list of int
        Servers at each station (>= 1).
    service_rate, arrival_rate : list of float
        Per station, per second: mu_k > 0 and external Poisson lambda_k >= 0 (sum > 0).
    route : K x K array, optional
        route[k][j]: probability of going from k to j after service; the rest of
        each row leaves. None: every job leaves after its first station.
    discipline : "fifo" or "ps"
    departures, warmup : int
        Departures measured, after ``warmup`` discarded ones.
    rng : int or Generator
    """
    sv = _positive_ints("servers", servers)
    k = sv.size
    mu = np.ascontiguousarray(service_rate, dtype=np.float64)
    lam = np.ascontiguousarray(arrival_rate, dtype=np.float64)
    if mu.shape != (k,) or not np.all(mu > 0) or not np.all(np.isfinite(mu)):
        raise ValueError(f"service_rate must be {k} finite values > 0 per second, got {service_rate!r}")
    if lam.shape != (k,) or not np.all(lam >= 0) or not lam.sum() > 0 or not np.all(np.isfinite(lam)):
        raise ValueError(f"arrival_rate must be {k} finite values >= 0 per second with a positive sum, got {arrival_rate!r}")
    rt = None
    if route is not None:
        rt = np.ascontiguousarray(route, dtype=np.float64)
        if rt.shape != (k, k) or np.any(rt < 0) or np.any(rt.sum(axis=1) > 1 + 1e-12):
            raise ValueError(f"route must be a {k}x{k} matrix of probabilities with row sums <= 1")
        rt = np.ascontiguousarray(rt.ravel())
    if discipline not in ("fifo", "ps"):
        raise ValueError(f"discipline must be 'fifo' or 'ps' for an open network, got {discipline!r}")
    if departures < 1 or warmup < 0:
        raise ValueError(f"departures must be >= 1 and warmup >= 0, got {departures}, {warmup}")
    dis = np.full(k, DISCIPLINES[discipline], dtype=np.int32)
    gen = make_rng(rng)
    with native_rng(gen) as capsule:
        d = _native.qnet_run(sv, mu, lam, rt, dis, int(departures), int(warmup), capsule)
    return _result(d)


def single_queue_trace(interarrival_s, service_s, *, servers=1, discipline="fifo") -> NetworkResult:
    """Run one station fed by a trace: job i arrives after interarrival_s[0..i] and needs service_s[i]."""
    ia = np.ascontiguousarray(interarrival_s, dtype=np.float64)
    sv = np.ascontiguousarray(service_s, dtype=np.float64)
    if ia.shape != sv.shape or ia.ndim != 1 or ia.size == 0:
        raise ValueError("interarrival_s and service_s must be non-empty 1-d arrays of equal length")
    if discipline not in ("fifo", "ps", "priority"):
        raise ValueError(f"discipline must be 'fifo', 'ps' or 'priority', got {discipline!r}")
    if isinstance(servers, bool) or not isinstance(servers, int) or servers < 1:
        raise ValueError(f"servers must be an int >= 1, got {servers!r}")
    try:  # C checks every value before it simulates; say which one it refused
        return _result(_native.qnet_run_trace(ia, sv, servers, DISCIPLINES[discipline]))
    except ValueError:
        for name, a in (("interarrival_s", ia), ("service_s", sv)):
            bad = np.flatnonzero(~(np.isfinite(a) & (a >= 0)))
            if bad.size:
                raise ValueError(f"{name}[{bad[0]}] = {float(a[bad[0]])}: must be finite and >= 0 seconds") from None
        raise


# --- closed forms -------------------------------------------------------------

def mm1_time_in_system(arrival_rate: float, service_rate: float) -> float:
    """Mean time in an M/M/1 system, 1/(mu - lambda) seconds; needs lambda < mu."""
    if not 0 <= arrival_rate < service_rate:
        raise ValueError(f"need 0 <= arrival_rate < service_rate, got {arrival_rate}, {service_rate}")
    return 1.0 / (service_rate - arrival_rate)


def erlang_c(servers: int, offered_load: float) -> float:
    """Probability that an arrival waits in M/M/c with offered load a = lambda/mu < c."""
    c, a = servers, offered_load
    if c < 1 or not 0 <= a < c:
        raise ValueError(f"need servers >= 1 and 0 <= offered_load < servers, got {c}, {a}")
    term, total = 1.0, 1.0
    for k in range(1, c):  # sum a^k / k! for k < c, iteratively for stability
        term *= a / k
        total += term
    last = term * a / c * c / (c - a)  # a^c / c! * c / (c - a)
    return last / (total + last)


def mmc_mean_wait(arrival_rate: float, service_rate: float, servers: int) -> float:
    """Mean time waiting in queue in M/M/c, seconds: C(c, a) / (c mu - lambda)."""
    return erlang_c(servers, arrival_rate / service_rate) / (servers * service_rate - arrival_rate)


def jackson_throughputs(arrival_rate, route) -> np.ndarray:
    """Total arrival rate at each station of an open network: solves l = a + l P."""
    a = np.asarray(arrival_rate, dtype=np.float64)
    p = np.zeros((a.size, a.size)) if route is None else np.asarray(route, dtype=np.float64)
    return np.linalg.solve(np.eye(a.size) - p.T, a)
