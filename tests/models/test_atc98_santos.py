"""Mechanism checks of the replicated-data suppression model (atc98_santos)."""
import dataclasses
from collections import OrderedDict

import numpy as np
import pandas as pd
import pytest

from pysim.models import atc98_santos as m
from pysim.network import wire_bytes
from pysim.units import MB, us

P = m.Params()


def _trace(payloads, keys):
    return pd.DataFrame({"payload": payloads, "key": keys, "http": True})


def test_replication_by_hand():
    # payloads A(600) B(1000) A(600) ACK(0) ACK(0) B(1000): the second A and B repeat; empty payloads never do
    t = _trace([600, 1000, 600, 0, 0, 1000], [1, 2, 1, 7, 7, 2])
    r = m.replication(t)
    assert r["replicated"].tolist() == [False, False, True, False, False, True]
    # bytes on the wire between the end of the first copy and the start of the second
    assert r.loc[2, "distance"] == 1000 + 40
    assert r.loc[5, "distance"] == 640 + 40 + 40


def _lru_reference(trace, cache_bytes, min_payload):
    """A plain OrderedDict LRU over the same 256-byte granules: a payload goes as a token when all its
    granules are cached before it is looked up."""
    cap = int(cache_bytes // m.GRANULE)
    lru, tokens = OrderedDict(), []
    for n, key in zip(trace["payload"], trace["key"]):
        if n < max(min_payload, 1):
            tokens.append(False)
            continue
        gran = [(key, j) for j in range(-(-n // m.GRANULE))]
        tokens.append(all(g in lru for g in gran))
        for g in gran:
            if g in lru:
                lru.move_to_end(g)
            else:
                lru[g] = True
                if len(lru) > cap:
                    lru.popitem(last=False)
    return np.array(tokens)


def test_suppression_matches_a_reference_lru(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    keys = rng.zipf(1.3, n) % 400
    sizes = np.array([0, 300, 536, 800, 1460])[keys % 5]
    t = _trace(sizes, keys)
    for cache in (20_000, 100_000, 10**8):
        s = m.suppress(t, cache, 500)
        assert np.array_equal(s["token"].to_numpy(), _lru_reference(t, cache, 500))
        on_channel = np.where(s["token"], 56, sizes + 40)
        assert np.array_equal(s["bytes_channel"].to_numpy(), on_channel)


def test_unbounded_cache_finds_exactly_the_static_replication(seed):
    t = m.outbound_trace(P, 5 * MB, rng=seed)
    s = m.suppress(t, 10**12, 0)
    r = m.replication(t)
    assert np.array_equal(s["token"].to_numpy(), r["replicated"].to_numpy())
    # a window as small as gzip's loses most of it (only the retransmissions stay)
    small = m.suppress(t, 32 * 1024, 0)["token"].sum()
    assert small < 0.3 * s["token"].sum()


def test_segments_conserve_bytes_and_repeat_only_when_aligned(seed):
    p = dataclasses.replace(P, retransmit_share=0.0, http_share=1.0)
    t = m.outbound_trace(p, 3 * MB, rng=seed)
    assert (t["payload"] <= p.mss_large).all() and (t["payload"] > 0).all()
    # never aligned: no payload repeats; always aligned: every repeated object's later segments repeat
    never = m.outbound_trace(dataclasses.replace(p, p_align=0.0), 3 * MB, rng=seed)
    assert not m.replication(never)["replicated"].any()
    always = m.replication(m.outbound_trace(dataclasses.replace(p, p_align=1.0), 3 * MB, rng=seed))
    assert always["replicated"].mean() > 0.1


def test_first_segment_and_mss_break_matches():
    # one object requested twice, by a 1460-byte client then a 536-byte client: nothing repeats
    p = dataclasses.replace(P, objects=100, zipf_alpha=2.0, p_align=1.0, retransmit_share=0.0, http_share=1.0)
    t = m.outbound_trace(dataclasses.replace(p, mss_small_share=0.5), 2 * MB, rng=3)
    r = m.replication(t)
    small = (t["key"] > 0) & ((t["key"].to_numpy() >> 16) & 1 == 1)
    large = (t["key"] > 0) & ~small
    # a key names one MSS: a payload cut at 536 never equals one cut at 1460
    assert set(t.loc[small, "key"]).isdisjoint(set(t.loc[large, "key"]))
    assert not r.loc[t["key"] < 0, "replicated"].any()  # first segments (and unaligned ones) never repeat


def test_prototype_throughput_and_latency_match_the_cpu_by_hand():
    cpu = P.cpu
    per_byte = 2 * cpu.per_byte_s["copy"] + cpu.per_byte_s["md5"]
    fixed = P.box_fixed_us * us
    data = fixed + P.test_packet_bytes * per_byte
    ack = fixed + 40 * per_byte
    out = m.perf(quick=True)
    # the CPU is the bottleneck: each data packet costs `data`, and the ACKs coming back through the box
    # (delayed ACKs: at most one per packet) cost `ack` each
    net, _ = m._prototype(P, tcp=True, until_s=3.0, rng=np.random.default_rng(0))
    q = net.queues()
    assert q.loc[1, "departures"] <= q.loc[2, "departures"]
    pps = out.loc["compressor", "packets_per_s"]
    assert 1 / (data + ack) < pps < 1 / data
    frame = wire_bytes("ethernet", P.test_packet_bytes) * 8 / 100e6
    assert out.loc["compressor", "latency_us"] == pytest.approx((data + frame) / us, rel=0.02)
    slow = m.perf(dataclasses.replace(P, channel_bits_per_s=10e6), quick=True)
    assert slow.loc["compressor", "mbit_per_s"] < 10


def test_classifier_and_window_shape_the_live_reduction():
    base = m.live(quick=True).loc["run", "reduction_pct"]
    tiny = m.live(dataclasses.replace(P, cache_bytes=32 * 1024), quick=True).loc["run", "reduction_pct"]
    assert tiny < base / 4
    f1 = m.figure1(quick=True)
    assert f1["cum_replicated_pct"].is_monotonic_increasing and f1.loc[1500, "cum_replicated_pct"] == pytest.approx(100)


def test_deterministic_for_a_seed():
    a, b = m.table1(rng=5, quick=True), m.table1(rng=5, quick=True)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(m.table1(rng=6, quick=True))


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="p_align"):
        m.Params(p_align=1.5)
    with pytest.raises(ValueError, match="volume_bytes"):
        m.outbound_trace(P, 0)
