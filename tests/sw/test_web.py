"""Slow-start transfers and page loads by hand, and the trimmed mean."""
import numpy as np
import pytest

from pysim.sw.web import Browser, page_load, transfer_s, trimmed_mean


def test_slow_start_doubles_the_window_each_round_trip():
    # 10 segments from a window of 2: rounds of 2, 4 and then the last 4; two full round trips, then
    # the last round's serialisation and half a round trip
    t, w = transfer_s(10 * 1460, rtt_s=0.1, bits_per_s=1e9, cwnd=2)
    assert t == pytest.approx(0.2 + 4 * 1460 * 8 / 1e9 + 0.05) and w == 8
    # a slow link: each round lasts its serialisation, not the round trip
    t, _ = transfer_s(4 * 1460, rtt_s=0.001, bits_per_s=56e3, cwnd=2)
    assert t == pytest.approx(4 * 1460 * 8 / 56e3 + 0.0005)


def test_a_page_with_one_object_by_hand_and_more_connections_help_a_fast_path():
    b = Browser(html_bytes=1460, connections=1, dns_s=0.05, head_s=0.0, object_server_s=0.0, render_cpu_s=0.0)
    rtt, bw = 0.1, 1e9
    t = page_load(b, rtt, bw, np.array([1460]))
    ser = 1460 * 8 / bw
    html = 0.05 + rtt + rtt / 2 + ser + rtt / 2  # DNS, connect, request, the HTML's one segment
    assert t.html_done_s == pytest.approx(html)
    assert t.onload_s == pytest.approx(html + rtt / 2 + ser + rtt / 2)  # the object's request and reply
    many = np.full(8, 20_000)
    one = page_load(Browser(connections=1), 0.2, 10e6, many).onload_s
    four = page_load(Browser(connections=4), 0.2, 10e6, many).onload_s
    assert four < one


def test_the_trimmed_mean_drops_only_the_slow_tail():
    x = np.r_[np.ones(95), np.full(5, 100.0)]
    assert trimmed_mean(x, 0.05) == pytest.approx(1.0) and trimmed_mean(x, 0.0) == pytest.approx(5.95)


# --- the servers behind the pages ----------------------------------------------------------------------

def _site(balancer, *, batching_saving=0.0, cpus=(4, 4), rate=20.0, cpu_s=0.1, until=2000.0, seed=0):
    from pysim.engine import Simulation
    from pysim.sw.web import Cluster, Server

    sim, g = Simulation(), np.random.default_rng(seed)
    servers = [Server(sim, i, c, batching=(i == len(cpus) - 1 and batching_saving > 0), batch_window_s=0.5,
                      batch_saving=batching_saving) for i, c in enumerate(cpus)]
    site = Cluster(sim, servers, balancer, rng=g, sample_s=1.0, gain=1.0, start_level=0.5)

    def arrivals():
        while True:
            yield sim.timeout(g.exponential(1 / rate))
            site.pick().submit(g.exponential(cpu_s))

    sim.process(arrivals())
    sim.run(until=until)
    return servers


def test_one_server_is_an_mmc_queue_with_erlang_c_waits():
    from pysim.queueing import mmc_mean_wait

    (server,) = _site("round-robin", cpus=(3,), rate=24.0, cpu_s=0.1, until=20_000.0, seed=1)
    times = np.array([done - arrived for arrived, done, _ in server.records[1000:]])
    expected = mmc_mean_wait(24.0, 10.0, 3) + 0.1
    assert times.mean() == pytest.approx(expected, rel=0.05)


def test_round_robin_splits_requests_evenly_and_least_cpu_favours_the_cheaper_server():
    rr = [len(s.records) for s in _site("round-robin", batching_saving=0.4)]
    assert abs(rr[0] - rr[1]) <= 10  # submitted in turn; a few are still in service at the end
    least = [len(s.records) for s in _site("least-cpu", batching_saving=0.4)]
    # the batching server needs 40% less CPU a request: equal utilisation gives it about 1/0.6 the requests
    assert least[1] / least[0] == pytest.approx(1 / 0.6, rel=0.15)
    plain = [len(s.records) for s in _site("least-cpu")]
    assert plain[1] / plain[0] == pytest.approx(1.0, rel=0.1)


def test_bad_cluster_settings_are_named():
    from pysim.engine import Simulation
    from pysim.sw.web import Cluster, Server

    sim = Simulation()
    with pytest.raises(ValueError, match="balancer"):
        Cluster(sim, [Server(sim, 0, 1)], "fastest", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="cpus"):
        Server(sim, 0, 0)
