"""Mechanism checks of the ALTQ testbed model (atc98_cho): round trips by hand, CBQ's work hidden by the
transmission it overlaps, the timer's ceiling by §3.2's formula, CBQ's allocation by its definition, the
loopback's CPU by hand, and the then-vs-now arithmetic."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from pysim.models import atc98_cho as m
from pysim.network import wire_bytes

P = m.Params()


def rr_by_hand(p, link, request, response, extra_us=0.0):
    """netperf's request/response by hand: each end host's CPU for the packet it sends and the one it
    receives, router B's forwarding both ways, every link's wire time and propagation, and the discipline's
    work once (only B's interface to C has it)."""
    lt = m.link_type(p, link)
    req, resp = request + m.UDP_IP_HEADER, response + m.UDP_IP_HEADER

    def host(size):
        return p.rr_host_us * 1e-6 + p.rr_byte_ns * 1e-9 * size

    def wire(kind, bps, size):
        return wire_bytes(kind, size) * 8 / bps + p.wire_delay_us * 1e-6

    def fast(size):  # B's CPU to its ALTQ stage, and the hub's repeater
        return size * 8 / 1e12

    hub = fast if lt.shared else (lambda size: 0.0)
    out = host(req) + wire("atm", p.atm_bps, req) + p.forward_us * 1e-6 + fast(req) + extra_us * 1e-6 \
        + wire(lt.kind, lt.bits_per_s, req) + hub(req) + host(req)
    back = host(resp) + wire(lt.kind, lt.bits_per_s, resp) + hub(resp) + p.forward_us * 1e-6 \
        + wire("atm", p.atm_bps, resp) + host(resp)
    return 1e6 * (out + back)


@pytest.mark.parametrize("request_bytes, response_bytes", [(1, 1), (64, 64), (1024, 64), (8192, 64)])
@pytest.mark.parametrize("discipline", ["FIFO", "CBQ", "RED"])
def test_a_transaction_over_atm_takes_what_its_parts_add_up_to(request_bytes, response_bytes, discipline):
    got = m.rr_rtt_us(P, "ATM", request_bytes, response_bytes, discipline, until_s=0.05)
    want = rr_by_hand(P, "ATM", request_bytes, response_bytes, m.discipline_cost_us(P, discipline))
    assert got == pytest.approx(want, rel=1e-6)


def test_a_transaction_over_the_hub_pays_ethernet_framing_and_never_collides():
    # one transaction at a time: the two stations never contend, so the hub adds only its wire time
    got = m.rr_rtt_us(P, "10baseT", 64, 64, until_s=0.05)
    assert got == pytest.approx(rr_by_hand(P, "10baseT", 64, 64), rel=1e-6)
    assert wire_bytes("ethernet", 29) == 84  # a 1-byte request is padded to the minimum frame


def test_cbq_work_hides_behind_the_transmission_unless_the_link_waits_for_it():
    run = dict(until_s=2.0, rng=1)
    fifo = m.tcp_mbps(P, "100baseT", **run)
    cbq = m.tcp_mbps(P, "100baseT", discipline="CBQ", **run)
    assert cbq == pytest.approx(fifo, rel=1e-3)
    # a full-size frame on 100baseT: 1538 bytes on the wire; CBQ's 10.72 us holds the link for 134 more
    waiting = m.tcp_mbps(dataclasses.replace(P, overlap=False), "100baseT", discipline="CBQ", **run)
    hold = np.ceil(P.cbq_us * 1e-6 * 100e6 / 8)
    assert waiting / fifo == pytest.approx(1538 / (1538 + hold), rel=0.01)
    # and a link-bound stream's goodput is the wire's share of payload
    assert fifo == pytest.approx(100 * 1460 / 1538, rel=0.01)


def test_the_timer_ceiling_follows_section_3_2s_formula():
    def formula(size, period_s, burst=16):
        return size * burst * 8 / period_s / 1e6

    slow = m.ceiling_mbps(P, 1500, until_s=1.0)
    fast = m.ceiling_mbps(P, 1500, fast_timer=True, until_s=1.0)
    big = m.ceiling_mbps(P, 9180, until_s=1.0)
    # a burst of maxburst (give or take the estimator's packet or two) per two ticks
    for got, want in ((slow, formula(1500, 0.02)), (fast, formula(1500, 0.002)), (big, formula(9180, 0.02))):
        assert want * 0.98 < got < want * 1.15
    assert fast / slow == pytest.approx(10, rel=0.02)     # ten times the ticks, ten times the rate
    # packets a class sends per 20 ms cycle: maxburst, and at most a couple more before the estimator's
    # average idle time goes negative (ALTQ's formula counts maxburst exactly)
    for burst in (4, 8, 16, 32):
        rate = m.ceiling_mbps(dataclasses.replace(P, maxburst=burst), 1500, until_s=1.0)
        assert 0 <= rate * 1e6 * 0.02 / (1500 * 8) - burst <= 2.5


@pytest.mark.parametrize("share", [0.1, 0.3, 0.6])
def test_with_a_fine_timer_a_class_gets_its_share_of_the_link(share):
    exact = dataclasses.replace(P, tick_ms=0.001)
    got = m.tcp_mbps(exact, "100baseT", alloc=m.Allocation(share), until_s=2.0)
    # CBQ counts the IP packet (1500 bytes) against share x 100 Mbit/s; goodput carries 1460 of them
    assert got == pytest.approx(share * 100 * 1460 / 1500, rel=0.03)


def test_the_coarse_timer_makes_the_plateau_and_packet_events_end_it():
    f8 = m.figure8(quick=True)
    s = f8["fast_ethernet_mbps"]
    assert s.loc[20:40].max() < 1.3 * 9.6 < s.loc[60]         # stuck near the ceiling, then free
    assert f8["fast_ethernet_1khz_mbps"].loc[30] > 2 * s.loc[30]
    exact = m.figure8(dataclasses.replace(P, tick_ms=0.001), quick=True)["fast_ethernet_mbps"]
    assert exact.loc[30] == pytest.approx(f8["fast_ethernet_1khz_mbps"].loc[30], rel=0.05)


def test_without_cbq_every_setting_gets_the_whole_link():
    f10 = m.figure10(dataclasses.replace(P, cbq_enabled=False), quick=True)["serial_kbps"]
    assert f10.min() > 0.95 * f10.max()
    with_cbq = m.figure10(quick=True)["serial_kbps"]
    assert with_cbq.loc[50] == pytest.approx(0.5 * with_cbq.loc[100], rel=0.1)


def test_loopback_overhead_is_cbqs_share_of_the_cpu_by_hand():
    t1 = m.table1(quick=True)
    for mtu in m.LOOPBACK_MTUS:
        seg = P.lo_segment_us + P.lo_byte_ns * 1e-3 * (mtu - 40)
        q = (1 + P.acks_per_segment) * P.cbq_us
        assert t1.loc[f"loopback MTU {mtu}", "overhead_pct"] == pytest.approx(100 * q / (seg + q), rel=1e-9)
        assert t1.loc[f"loopback MTU {mtu}", "fifo_mbps"] == pytest.approx(8 * (mtu - 40) / seg, rel=1e-9)


def test_guaranteed_classes_hold_their_rates_and_fifo_does_not():
    f11 = m.figure11(quick=True)
    window = f11.loc[21:25]
    for k, rate in enumerate(P.guarantee_mbps):
        assert window[f"class_{k}"].mean() == pytest.approx(rate, rel=0.1)
    assert window.sum(axis=1).mean() > 0.9 * f11.loc[2:4, "default"].mean()  # the background fills the rest
    plain = m.figure11(dataclasses.replace(P, cbq_enabled=False), quick=True).loc[21:25]
    assert abs(plain["class_0"].mean() / P.guarantee_mbps[0] - 1) > 0.3


def test_then_and_now_arithmetic():
    now = pd.DataFrame([("send_ns", "none", 1000.0), ("send_ns", "none", 1200.0), ("send_ns", "htb", 1500.0),
                        ("sleep_s", "0.001", 1.05e-3), ("sleep_s", "1e-05", 6e-5), ("clock_ns", "monotonic", 25.0),
                        ("pacer_mbps", "0.01", 9.0)], columns=["what", "key", "value"])
    t = m.then_and_now(now)
    assert t.loc["per-packet cost of htb over none", "now"] == pytest.approx(400.0)
    assert t.loc["per-packet cost of htb over none", "then"] == pytest.approx(10720.0)
    assert t.loc["ceiling of a class of 1500-byte packets", "now"] == pytest.approx(16 * 1500 * 8 / 1.2e-4 / 1e6)
    assert t.loc["ceiling of a class of 1500-byte packets", "then"] == pytest.approx(9.6)
    assert t.loc["user-space pacer, 10 ms ticks", "then"] == pytest.approx(9.6)


def test_same_seed_same_tables():
    a, b = m.table2(quick=True, rng=3), m.table2(quick=True, rng=3)
    pd.testing.assert_frame_equal(a, b)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="maxburst"):
        m.Params(maxburst=0)
    with pytest.raises(ValueError, match="guarantee_mbps"):
        m.Params(guarantee_mbps=(50.0, 50.0, 50.0, 50.0))
    with pytest.raises(ValueError, match="link must be"):
        m.link_type(P, "FDDI")
    with pytest.raises(ValueError, match="discipline must be"):
        m.discipline_cost_us(P, "HFSC")
