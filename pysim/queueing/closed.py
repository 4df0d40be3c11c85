"""Closed queueing networks by mean value analysis: exact, multi-class and approximate, with bounds.

A closed network holds a fixed population: users who think for ``think_s``
seconds (a delay), then visit stations, then think again. A station is
described by its *service demand* (visits times service time, seconds per
interaction) and its kind:

* ``"queue"``: one server (FCFS with exponential service, or processor sharing);
* ``"delay"``: as many servers as users (no queueing);
* ``"ld"``: load-dependent, served at ``rates[j-1]`` times its one-server rate
  with ``j`` jobs present (the last rate holds beyond); ``c`` servers are
  ``rates = (1, 2, ..., c)``.

>>> r = mva([Station("cpu", 0.2), Station("disk", 0.3)], population=10, think_s=4.0)
>>> round(float(r.throughput[-1]), 3)   # interactions per second with 10 users
2.034

References: Reiser & Lavenberg (1980) for exact MVA and its load-dependent
form; Schweitzer (1979) and Bard (1979) for the approximation; Lazowska,
Zahorjan, Graham & Sevcik, *Quantitative System Performance* (1984), ch. 5,
for asymptotic and balanced job bounds; Seidmann, Schweitzer & Shalev-Oren
(1987) for a multi-server station as a queue plus a delay.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

KINDS = ("queue", "delay", "ld")


@dataclass(frozen=True)
class Station:
    """A station of a closed network: its name, service demand (s per interaction) and kind.

    For several classes, ``demand_s`` is a tuple with one demand per class.
    """

    name: str
    demand_s: float | tuple
    kind: str = "queue"
    rates: tuple = field(default=(1.0,))

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"station {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        demands = self.demand_s if isinstance(self.demand_s, tuple) else (self.demand_s,)
        for d in demands:
            if not (isinstance(d, (int, float)) and d >= 0 and math.isfinite(d)):
                raise ValueError(f"station {self.name!r}: demand_s must be finite and >= 0, got {self.demand_s!r}")
        if self.kind == "ld" and (not self.rates or any(not r > 0 for r in self.rates)):
            raise ValueError(f"station {self.name!r}: rates must be > 0, got {self.rates!r}")

    def demand(self, klass: int = 0) -> float:
        return self.demand_s[klass] if isinstance(self.demand_s, tuple) else float(self.demand_s)

    def rate(self, j: int) -> float:
        """Service-rate multiplier with j >= 1 jobs present."""
        return self.rates[min(j, len(self.rates)) - 1]


@dataclass(frozen=True)
class ClosedResult:
    """Performance of a closed network for populations 1..N (arrays indexed by population - 1)."""

    population: np.ndarray
    throughput: np.ndarray        # interactions per second
    response_s: np.ndarray        # time at the stations per interaction (think time excluded)
    residence_s: dict             # station -> array of residence times per interaction
    queue_length: dict            # station -> array of mean jobs present
    utilization: dict             # station -> array (busy fraction of one server; of the station for "ld")

    def frame(self) -> pd.DataFrame:
        """One row per population: throughput, response time, and per-station queue lengths and utilizations."""
        df = pd.DataFrame({"population": self.population, "throughput_per_s": self.throughput,
                           "response_s": self.response_s})
        for name in self.queue_length:
            df[f"{name}_queue"] = self.queue_length[name]
            df[f"{name}_utilization"] = self.utilization[name]
        return df.set_index("population")


def _check(stations, population, think_s):
    if not stations:
        raise ValueError("a closed network needs at least one station")
    names = [s.name for s in stations]
    if len(set(names)) != len(names):
        raise ValueError(f"station names must differ, got {names}")
    if isinstance(population, bool) or not isinstance(population, (int, np.integer)) or population < 1:
        raise ValueError(f"population must be an int >= 1, got {population!r}")
    if not (think_s >= 0 and math.isfinite(think_s)):
        raise ValueError(f"think_s must be finite and >= 0, got {think_s!r}")


def mva(stations, population: int, think_s: float = 0.0) -> ClosedResult:
    """Exact single-class MVA, with delay and load-dependent stations, for populations 1..``population``."""
    _check(stations, population, think_s)
    n_max = int(population)
    q = {s.name: 0.0 for s in stations}
    # load-dependent stations: marginal probabilities p(j | n) of j jobs present, j = 0..n
    marg = {s.name: np.array([1.0]) for s in stations if s.kind == "ld"}
    out_x, out_r = np.zeros(n_max), np.zeros(n_max)
    res = {s.name: np.zeros(n_max) for s in stations}
    ql = {s.name: np.zeros(n_max) for s in stations}
    util = {s.name: np.zeros(n_max) for s in stations}
    for n in range(1, n_max + 1):
        r = {}
        for s in stations:
            d = s.demand()
            if s.kind == "queue":
                r[s.name] = d * (1.0 + q[s.name])
            elif s.kind == "delay":
                r[s.name] = d
            else:
                p = marg[s.name]
                r[s.name] = sum(j / s.rate(j) * d * p[j - 1] for j in range(1, n + 1))
        total = sum(r.values())
        x = n / (think_s + total) if think_s + total > 0 else math.inf
        for s in stations:
            q[s.name] = x * r[s.name]
            if s.kind == "ld":
                p_prev, p = marg[s.name], np.zeros(n + 1)
                for j in range(1, n + 1):
                    p[j] = x * s.demand() / s.rate(j) * p_prev[j - 1]
                p[0] = max(0.0, 1.0 - p[1:].sum())
                marg[s.name] = p
                util[s.name][n - 1] = 1.0 - p[0]
            else:
                util[s.name][n - 1] = x * s.demand() if s.kind == "queue" else 0.0
            res[s.name][n - 1], ql[s.name][n - 1] = r[s.name], q[s.name]
        out_x[n - 1], out_r[n - 1] = x, total
    return ClosedResult(np.arange(1, n_max + 1), out_x, out_r, res, ql, util)


def mva_at(stations, population: int, think_s: float = 0.0) -> tuple:
    """Exact single-class MVA at ``population`` alone: (throughput, response time, residence time of
    each station by name). The recursion of :func:`mva` without its per-population tables, for a
    model that solves a network thousands of times (a root-finder's calls); a network with a
    load-dependent station goes through :func:`mva`."""
    _check(stations, population, think_s)
    if any(s.kind == "ld" for s in stations):
        r = mva(stations, population, think_s)
        return float(r.throughput[-1]), float(r.response_s[-1]), {k: float(v[-1]) for k, v in r.residence_s.items()}
    queues = [s.demand() for s in stations if s.kind == "queue"]
    delay = sum(s.demand() for s in stations if s.kind == "delay")
    q, r, x, total = [0.0] * len(queues), queues, 0.0, 0.0
    for n in range(1, int(population) + 1):
        r = [d * (1.0 + k) for d, k in zip(queues, q, strict=True)]
        total = sum(r) + delay
        x = n / (think_s + total) if think_s + total > 0 else math.inf
        q = [x * v for v in r]
    at = iter(r)
    return x, total, {s.name: next(at) if s.kind == "queue" else s.demand() for s in stations}


def mva_multiclass(stations, populations, think_s=None) -> pd.DataFrame:
    """Exact multi-class MVA (queue and delay stations) at the population vector ``populations``.

    Each station's ``demand_s`` is a tuple with one demand per class. Returns
    one row per class: throughput (per second) and response time (s), and
    per-station residence times. Exponential in the number of classes: meant
    for a few classes of a few tens of users.
    """
    pops = tuple(int(n) for n in populations)
    c_count = len(pops)
    think = tuple(think_s) if think_s is not None else (0.0,) * c_count
    if len(think) != c_count:
        raise ValueError(f"think_s needs one value per class ({c_count}), got {think_s!r}")
    _check(stations, max(max(pops), 1), max(think))
    if any(n < 0 for n in pops):
        raise ValueError(f"populations must be >= 0, got {populations!r}")
    for s in stations:
        if s.kind == "ld":
            raise ValueError(f"station {s.name!r}: load-dependent stations are single-class only")
        if isinstance(s.demand_s, tuple) and len(s.demand_s) != c_count:
            raise ValueError(f"station {s.name!r}: demand_s needs one value per class ({c_count})")
    q = {(0,) * c_count: {s.name: 0.0 for s in stations}}
    result = None
    for total in range(1, sum(pops) + 1):
        for vec in itertools.product(*(range(n + 1) for n in pops)):
            if sum(vec) != total:
                continue
            r = {}
            for c in range(c_count):
                if vec[c] == 0:
                    continue
                less = tuple(v - (i == c) for i, v in enumerate(vec))
                for s in stations:
                    d = s.demand(c)
                    r[c, s.name] = d if s.kind == "delay" else d * (1.0 + q[less][s.name])
            x = {c: vec[c] / (think[c] + sum(r[c, s.name] for s in stations)) for c in range(c_count) if vec[c]}
            q[vec] = {s.name: sum(x[c] * r[c, s.name] for c in x) for s in stations}
            if vec == pops:
                result = (x, r)
    x, r = result
    rows = [{"class": c, "throughput_per_s": x.get(c, 0.0),
             "response_s": sum(r[c, s.name] for s in stations) if c in x else math.nan,
             **{f"{s.name}_residence_s": r.get((c, s.name), math.nan) for s in stations}} for c in range(c_count)]
    return pd.DataFrame(rows).set_index("class")


def amva(stations, populations, think_s=None, *, tol: float = 1e-10, max_iter: int = 100_000) -> pd.DataFrame:
    """Approximate multi-class MVA (Schweitzer-Bard): queue and delay stations, any populations.

    The queue an arriving class-c job sees is estimated as the full-population
    queue with one class-c job removed. Same output as :func:`mva_multiclass`.
    """
    pops = tuple(int(n) for n in populations)
    c_count = len(pops)
    think = tuple(think_s) if think_s is not None else (0.0,) * c_count
    _check(stations, max(max(pops), 1), max(think))
    for s in stations:
        if s.kind == "ld":
            raise ValueError(f"station {s.name!r}: use seidmann() for a multi-server station in amva")
    names = [s.name for s in stations]
    d = np.array([[s.demand(c) for s in stations] for c in range(c_count)])
    is_queue = np.array([s.kind == "queue" for s in stations])
    n = np.array(pops, dtype=float)
    qc = np.outer(n, np.ones(len(stations))) / len(stations)  # per class and station
    for _ in range(max_iter):
        total_q = qc.sum(axis=0)
        seen = total_q[None, :] - np.where(n[:, None] > 0, qc / np.maximum(n[:, None], 1), 0.0)
        r = np.where(is_queue[None, :], d * (1.0 + seen), d)
        x = np.where(n > 0, n / (np.array(think) + r.sum(axis=1)), 0.0)
        new = x[:, None] * r
        if np.max(np.abs(new - qc)) < tol:
            qc = new
            break
        qc = new
    else:
        raise RuntimeError(f"amva did not converge in {max_iter} iterations")
    rows = [{"class": c, "throughput_per_s": x[c], "response_s": r[c].sum() if n[c] else math.nan,
             **{f"{names[k]}_residence_s": r[c, k] for k in range(len(names))}} for c in range(c_count)]
    return pd.DataFrame(rows).set_index("class")


def seidmann(name: str, demand_s: float, servers: int) -> tuple:
    """A ``servers``-server station as a queue of demand/servers plus a delay of demand*(servers-1)/servers."""
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers!r}")
    return (Station(name, demand_s / servers),
            Station(f"{name}_delay", demand_s * (servers - 1) / servers, "delay"))


def asymptotic_bounds(demands, think_s: float, population: int) -> dict:
    """Asymptotic bounds on throughput and response time (single-server queues ``demands``, in s)."""
    d = np.asarray(demands, dtype=float)
    total, dmax = d.sum(), d.max()
    n = population
    return {"throughput_upper": min(n / (total + think_s), 1.0 / dmax),
            "throughput_lower": n / (n * total + think_s),
            "response_lower": max(total, n * dmax - think_s), "response_upper": n * total}


def balanced_job_bounds(demands, think_s: float, population: int) -> dict:
    """Balanced job bounds on throughput (QSP ch. 5): tighter than the asymptotic ones."""
    d = np.asarray(demands, dtype=float)
    total, dmax, davg = d.sum(), d.max(), d.mean()
    n = population
    lower = n / (total + think_s + ((n - 1) * dmax) / (1 + think_s / (n * total)))
    upper = min(1.0 / dmax, n / (total + think_s + ((n - 1) * davg) / (1 + think_s / total)))
    return {"throughput_lower": lower, "throughput_upper": upper}
