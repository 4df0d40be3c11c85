"""Closed networks: exact MVA against closed forms, against the approximation and bounds, against the
engine's closed-loop clients, and against Ciw as an independent simulator."""
import math

import numpy as np
import pytest

from pysim.engine import Simulation
from pysim.queueing import (Station, amva, asymptotic_bounds, balanced_job_bounds, mva, mva_at, mva_multiclass,
                           seidmann)
from pysim.rng import make_rng
from pysim.workloads.clients import ClosedLoop


def repairman_throughput(demand, think, n):
    """M/M/1//N (the machine repairman): p0 from the birth-death chain, throughput (1 - p0) / demand."""
    terms = [math.factorial(n) / math.factorial(n - k) * (demand / think) ** k for k in range(n + 1)]
    return (1 - 1 / sum(terms)) / demand


@pytest.mark.parametrize("n", [1, 2, 5, 20])
def test_one_queue_with_think_time_is_the_machine_repairman(n):
    r = mva([Station("cpu", 0.3)], population=n, think_s=2.0)
    assert r.throughput[-1] == pytest.approx(repairman_throughput(0.3, 2.0, n), rel=1e-12)


def test_load_dependent_multi_server_equals_the_erlang_finite_source_model():
    # c servers and think time: M/M/c//N, from the birth-death chain with rates min(k, c) / D
    d, z, c, n = 0.8, 3.0, 3, 12
    weights = [1.0]
    for k in range(1, n + 1):
        weights.append(weights[-1] * (n - k + 1) / z * d / min(k, c))
    p = np.array(weights) / sum(weights)
    busy = sum(p[k] * min(k, c) for k in range(n + 1))
    r = mva([Station("cpus", d, "ld", rates=tuple(range(1, c + 1)))], population=n, think_s=z)
    assert r.throughput[-1] == pytest.approx(busy / d, rel=1e-10)


def test_multiclass_with_one_class_is_single_class_mva():
    stations = [Station("cpu", (0.2,)), Station("disk", (0.35,)), Station("net", (0.05,), "delay")]
    single = mva([Station("cpu", 0.2), Station("disk", 0.35), Station("net", 0.05, "delay")], 8, 1.5)
    multi = mva_multiclass(stations, [8], [1.5])
    assert multi.loc[0, "throughput_per_s"] == pytest.approx(single.throughput[-1], rel=1e-12)


def test_the_approximation_stays_close_to_exact_mva(seed):
    gen = make_rng(seed)
    for _ in range(20):
        k, classes = gen.integers(2, 5), 2
        demands = gen.uniform(0.01, 0.5, size=(k, classes))
        stations = [Station(f"s{i}", tuple(demands[i])) for i in range(k)]
        pops, think = tuple(int(x) for x in gen.integers(4, 12, classes)), tuple(gen.uniform(0, 3, classes))
        exact, approx = mva_multiclass(stations, pops, think), amva(stations, pops, think)
        # Schweitzer-Bard is an approximation: over 400 such networks (4 to 11 users a class) its worst
        # throughput error was 7.5% (13% with 1 to 7 users: it assumes populations are not tiny)
        assert np.allclose(approx["throughput_per_s"], exact["throughput_per_s"], rtol=0.10)


def test_bounds_bracket_exact_mva(seed):
    gen = make_rng(seed)
    for _ in range(50):
        d = gen.uniform(0.01, 1.0, gen.integers(1, 6))
        z, n = float(gen.uniform(0, 10)), int(gen.integers(1, 40))
        x = mva([Station(f"s{i}", float(v)) for i, v in enumerate(d)], n, z).throughput[-1]
        aba, bjb = asymptotic_bounds(d, z, n), balanced_job_bounds(d, z, n)
        assert aba["throughput_lower"] - 1e-12 <= bjb["throughput_lower"] <= x * (1 + 1e-12)
        assert x <= bjb["throughput_upper"] * (1 + 1e-12) <= aba["throughput_upper"] * (1 + 1e-12)


def test_seidmann_is_close_to_the_exact_multi_server_station():
    exact = mva([Station("cpus", 1.2, "ld", rates=(1, 2, 3, 4)), Station("disk", 0.2)], 15, 2.0).throughput[-1]
    approx = mva([*seidmann("cpus", 1.2, 4), Station("disk", 0.2)], 15, 2.0).throughput[-1]
    assert approx == pytest.approx(exact, rel=0.05)


def _simulated(demands, think, users, seed, seconds=20000.0):
    """The engine's closed-loop clients over exponential FCFS stations (one server each)."""
    sim = Simulation()
    servers = [sim.resource(1) for _ in demands]
    gen = make_rng(seed).spawn(1)[0]

    def request(user):
        for res, d in zip(servers, demands):
            with res.request() as r:
                yield r
                yield sim.timeout(gen.exponential(d))

    clients = ClosedLoop(sim, users, request, think_s=think, warmup_s=seconds * 0.05, rng=seed)
    sim.run(until=seconds)
    return clients.summary()


def test_exact_mva_agrees_with_the_engines_closed_loop_simulation(seed):
    demands, think, users = [0.2, 0.35, 0.1], 1.5, 6
    exact = mva([Station(f"s{i}", d) for i, d in enumerate(demands)], users, think)
    sim = _simulated(demands, think, users, seed)
    # ~60k interactions; batch-means spread of the throughput here is under 1%
    assert sim["throughput_per_s"] == pytest.approx(exact.throughput[-1], rel=0.03)
    assert sim["mean_response_s"] == pytest.approx(exact.response_s[-1], rel=0.05)


def test_exact_mva_agrees_with_ciw(seed):
    """Ciw (an independent simulator) runs the same network closed: one batch of users, no more arrivals."""
    ciw = pytest.importorskip("ciw")
    demands, think, users, horizon = [0.2, 0.35], 1.5, 5, 4000.0
    network = ciw.create_network(
        arrival_distributions=[ciw.dists.Sequential([1e-9, 1e12]), None, None],
        batching_distributions=[ciw.dists.Deterministic(users), None, None],
        service_distributions=[ciw.dists.Exponential(1 / think), ciw.dists.Exponential(1 / demands[0]),
                               ciw.dists.Exponential(1 / demands[1])],
        routing=[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]],
        number_of_servers=[float("inf"), 1, 1])
    ciw.seed(seed)
    q = ciw.Simulation(network)
    q.simulate_until_max_time(horizon)
    warm = horizon * 0.05
    done = [r for r in q.get_all_records() if r.node == 3 and r.exit_date >= warm]
    throughput = len(done) / (horizon - warm)
    exact = mva([Station("s0", demands[0]), Station("s1", demands[1])], users, think).throughput[-1]
    assert throughput == pytest.approx(exact, rel=0.05)


def test_bad_networks_are_refused():
    with pytest.raises(ValueError, match="population must be an int >= 1"):
        mva([Station("a", 1.0)], 0)
    with pytest.raises(ValueError, match="demand_s must be finite and >= 0"):
        Station("a", -1.0)
    with pytest.raises(ValueError, match="kind must be one of"):
        Station("a", 1.0, "fifo")
    with pytest.raises(ValueError, match="station names must differ"):
        mva([Station("a", 1.0), Station("a", 2.0)], 3)
    with pytest.raises(ValueError, match="users must be an int >= 1"):
        ClosedLoop(Simulation(), 0, lambda u: iter(()), think_s=1.0)


def test_mva_at_one_population_is_the_last_row_of_mva(seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        stations = [Station(f"disk{k}", float(rng.uniform(0, 0.02))) for k in range(int(rng.integers(1, 13)))]
        stations += [Station("wire", float(rng.uniform(0, 3e-3)), "delay")]
        if rng.random() < 0.3:  # a load-dependent station goes through mva itself
            stations += [*seidmann("cpu", float(rng.uniform(0, 2e-3)), 2)]
        n, think = int(rng.integers(1, 90)), float(rng.uniform(0, 0.05))
        ref = mva(stations, n, think)
        x, response, residence = mva_at(stations, n, think)
        assert x == pytest.approx(ref.throughput[-1], rel=1e-10)
        assert response == pytest.approx(ref.response_s[-1], rel=1e-10)
        for name, r in residence.items():
            assert r == pytest.approx(ref.residence_s[name][-1], rel=1e-10, abs=1e-15)
