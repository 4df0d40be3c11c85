"""Mechanism checks of the end-user latency world (wiess02_chen): slow start against the shared TCP Reno,
the cluster against M/M/c, the balancer's traffic split, the batching delay, the pipeline's statistics."""
import dataclasses

import numpy as np
import pytest

from pysim.models import wiess02_chen as m
from pysim.network import Network
from pysim.queueing.open import mmc_mean_wait

P = m.Params()


@pytest.mark.parametrize("bw,delay,nbytes", [(1e6, 0.05, 100_000), (45e3, 0.1, 40_000), (1.5e6, 0.035, 40_000),
                                             (10e6, 0.3, 200_000), (1.5e6, 0.035, 3000), (0.5e6, 0.3, 60_000)])
def test_slow_start_transfer_matches_tcp_reno(bw, delay, nbytes):
    # the shared packet-level TCP Reno (no losses, no headers, same initial window): last byte's arrival
    net = Network(rng=1)
    a, b = net.host("a"), net.host("b")
    net.link(a, b, bw, delay)
    net.route_shortest()
    f = net.tcp(a, b, bytes=nbytes, initial_cwnd=2, header_bytes=0)
    net.run(60)
    reno = net.flows().loc[f, "last_s"]
    t, _ = m.transfer_s(nbytes, 2 * delay, bw, cwnd=2)
    assert t == pytest.approx(reno, rel=0.08)


def test_page_load_by_hand_one_object():
    p = dataclasses.replace(P, dns_s=0.1, head_s=0.0, render_cpu_s=0.0, html_bytes=1460, object_server_s=0.0)
    rtt, bw = 0.1, 1e9  # serialisation negligible
    t = m.page_load(p, rtt, bw, np.array([1460]))
    # DNS, SYN/SYN-ACK, request one way, one segment one way; then the object: request + reply
    assert t.html_done_s == pytest.approx(0.1 + 0.1 + 0.05 + 0.05, abs=1e-3)
    assert t.onload_s == pytest.approx(t.html_done_s + 0.1, abs=1e-3)
    assert t.first_byte_s == pytest.approx(t.html_done_s, abs=1e-3)


def test_flush_hides_generation_only_from_the_cookie_less_start():
    v = np.array([5000, 8000])
    slow = m.page_load(P, 0.07, 1.5e6, v, server_s=5.0)
    assert slow.html_done_s - slow.first_byte_s > 4.9           # the static head leaves first: seen
    nf = m.page_load(dataclasses.replace(P, flush_head=False), 0.07, 1.5e6, v, server_s=5.0)
    assert nf.html_done_s - nf.first_byte_s < 0.5               # whole page after generation: missed
    # generating first only delays the page's end: the HTML's slow start begins after generation
    assert slow.html_done_s <= nf.html_done_s <= slow.html_done_s + 0.5


def test_cluster_without_batching_matches_mmc(seed):
    # a flat day, no batching, the balancer's weights frozen equal (gain 0): random routing splits the
    # Poisson arrivals into Poisson streams, so each server is an M/M/c (server 1 at 72%, the others at 36%)
    p = dataclasses.replace(P, batching_server=0, trough_fraction=0.999, peak_utilisation=0.4, gain=1e-12)
    cl = m.run_cluster(p, quick=True, rng=seed)
    for s, c in ((1, 4), (2, 8)):
        rows = cl.xs(s, level="server")
        lam = rows["requests_per_h"].mean() / 3600
        expect = p.cpu_s + mmc_mean_wait(lam, 1 / p.cpu_s, c)
        got = np.average(rows["server_s"], weights=rows["requests_per_h"])
        assert got == pytest.approx(expect, rel=0.08)


def test_least_cpu_equalises_utilisation_and_round_robin_does_not(seed):
    p = dataclasses.replace(P, batch_cpu_saving=0.3, batch_window_s=1.0)
    c = m.cluster(p, quick=True, rng=seed)
    assert c.loc["1", "traffic_vs_8way"] == pytest.approx(0.5, rel=0.06)
    assert c.loc["5", "traffic_vs_8way"] == pytest.approx(1 / 0.7, rel=0.05)
    assert c["utilisation_pct"].max() / c["utilisation_pct"].min() < 1.08
    rr = m.cluster(dataclasses.replace(p, balancer="round-robin"), quick=True, rng=seed)
    assert rr.loc["1", "traffic_vs_8way"] == pytest.approx(1.0, rel=0.02)
    assert rr.loc["1", "utilisation_pct"] > 1.8 * rr.loc["2", "utilisation_pct"]


def test_batching_adds_at_least_half_the_window(seed):
    for w in (1.0, 3.0):
        p = dataclasses.replace(P, batch_window_s=w)
        c = m.cluster(p, quick=True, rng=seed)
        assert w / 2 <= c.loc["5", "extra_response_s"] <= w / 2 + 1.0


def test_stored_fits_land_near_their_cells(seed):
    c = m.cluster(quick=True, rng=seed)
    assert c.loc["5", "traffic_vs_8way"] == pytest.approx(1.2, rel=0.04)
    assert c.loc["5", "extra_response_s"] == pytest.approx(2.0, rel=0.1)
    t1 = m.table1()
    assert t1.loc["168.216.124", "independent_delta_s"] == pytest.approx(0.33, rel=0.01)


def test_contributions_by_hand():
    assert m.contributions([2, 3], [10.0, 4.0], 10).tolist() == pytest.approx([2.0, 1.2])
    # removal: group of 10 requests with mean 5; removing 2 requests of mean 10 leaves mean 3.75
    assert m.contributions([2], [10.0], 10, group_mean=5.0, how="removal")[0] == pytest.approx(5.0 - 3.75)


def test_trimmed_mean_and_the_threshold():
    x = np.concatenate([np.ones(95), np.full(5, 1000.0)])
    assert m.trimmed_mean(x, 0.05) == pytest.approx(1.0)
    t = m.trimming(quick=True)
    assert (t["median_s"] <= t["trimmed5_mean_s"]).all()
    assert (t["threshold_mean_s"] <= t["mean_s"]).all()
    clean = m.trimming(dataclasses.replace(P, slow_link_share=0.0, clock_jump_share=0.0), quick=True)
    assert (clean["trimmed_pct"] < t["trimmed_pct"]).all()


def test_mix_follows_the_hour():
    assert m.class_mix(P, 12)[0] == pytest.approx(1 - P.home_share_day)
    assert m.class_mix(P, 3)[2] == pytest.approx(P.home_share_night * P.dialup_of_home)
    assert m.class_mix(P, 12).sum() == pytest.approx(1.0)
    assert m.load_shape(P, P.peak_hour) == pytest.approx(1.0)


def test_same_seed_same_result_and_bad_input_refused():
    a = m.trimming(quick=True, rng=3)
    b = m.trimming(quick=True, rng=3)
    assert a.equals(b) and not a.equals(m.trimming(quick=True, rng=4))
    with pytest.raises(ValueError, match="balancer"):
        dataclasses.replace(P, balancer="random")
    with pytest.raises(ValueError, match="rtt_s"):
        dataclasses.replace(P, rtt_s=(0.1, 0.2))
    with pytest.raises(ValueError, match="cpus"):
        dataclasses.replace(P, cpus=(4,))
