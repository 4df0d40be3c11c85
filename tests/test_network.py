"""The packet network: link framing and delays by hand, TCP Reno filling a link, schedulers sharing
one as their definitions say, CSMA/CD, UDP RPC, a Numba classifier, and ns-2 as the peer on the same
RED dumbbell and CBQ link."""
import numpy as np
import ns2_peer
import pytest

from pysim.network import Network, queues, wire_bytes
from pysim.network.queues import CbqClass
from pysim.network.scenarios import red_dumbbell

needs_ns2 = pytest.mark.skipif(not ns2_peer.available(), reason="ns-2 is not installed (Debian package ns2)")


def test_wire_bytes_of_each_link_kind():
    assert wire_bytes("p2p", 1000) == 1000
    assert wire_bytes("ethernet", 1000) == 1038 and wire_bytes("ethernet", 10) == 84  # padded to 64 + 20
    assert wire_bytes("atm", 40) == 2 * 53 and wire_bytes("atm", 9180) == 192 * 53   # AAL5 + LLC/SNAP
    assert wire_bytes("hdlc", 58) == 64 and wire_bytes("myrinet", 100) == 108
    with pytest.raises(ValueError, match="kind"):
        wire_bytes("token ring", 100)


def test_a_udp_packet_takes_its_transmission_its_propagation_and_the_routers_cpu():
    net = Network(rng=1)
    a, r, b = net.host(), net.router(cpu_packet_s=50e-6, cpu_byte_s=10e-9), net.host()
    net.link(a, r, 10e6, 1e-3, kind="ethernet")
    net.link(r, b, 1.5e6, 5e-3, kind="hdlc")
    net.route_shortest()
    f = net.udp(a, b, rate_pps=10, size=500, stop_s=0.95)
    net.run(2.0)
    flow = net.flows().loc[f]
    expect = (wire_bytes("ethernet", 500) * 8 / 10e6 + 1e-3 + 50e-6 + 500 * 10e-9
              + wire_bytes("hdlc", 500) * 8 / 1.5e6 + 5e-3)
    assert flow.delivered_packets == 10 and flow.mean_delay_s == pytest.approx(expect)


def test_one_tcp_reno_flow_fills_a_link_and_a_finite_one_finishes_in_about_its_slow_start():
    net = Network(rng=1)
    a, b = net.host(), net.host()
    net.link(a, b, 10e6, 10e-3, queue=queues.fifo(200))
    net.route_shortest()
    bulk = net.tcp(a, b, max_window=100)
    net.run(30.0)
    fl = net.flows().loc[bulk]
    assert fl.goodput_bps == pytest.approx(10e6 * 1460 / 1500, rel=0.03)
    small = Network(rng=1)
    a, b = small.host(), small.host()
    small.link(a, b, 100e6, 10e-3)
    small.route_shortest()
    f = small.tcp(a, b, bytes=31 * 1460)  # 1 + 2 + 4 + 8 + 16 segments: five round trips of slow start
    small.run(5.0)
    assert small.flows().loc[f, "done_s"] == pytest.approx(5 * 0.02 + 0.02 / 2, rel=0.1)


def test_drr_wfq_and_sfq_share_a_link_as_their_definitions_say():
    def shares(queue, classes, n=2, rates=(2000, 2000), size=1000, pattern="cbr"):
        net = Network(rng=3)
        srcs = [net.host() for _ in range(n)]
        r, d = net.router(), net.host()
        for s in srcs:
            net.link(s, r, 100e6, 1e-4, queue=queues.fifo(1000))
        link, _ = net.link(r, d, 8e6, 1e-3, queue=queue)
        net.route_shortest()
        flows = [net.udp(s, d, pattern=pattern, rate_pps=rates[k], size=size, cls=k) for k, s in enumerate(srcs)]
        net.run(10.0)
        got = net.flows().loc[flows, "delivered_bytes"].to_numpy(float)
        return got / got.sum()
    assert shares(queues.drr([1000, 3000]), 2) == pytest.approx([0.25, 0.75], abs=0.01)
    assert shares(queues.wfq([1, 3]), 2) == pytest.approx([0.25, 0.75], abs=0.01)
    assert shares(queues.sfq(16), 2) == pytest.approx([0.5, 0.5], abs=0.01)
    # a FIFO shares in proportion to what is offered (random arrivals: periodic ones lock into phase)
    assert shares(queues.fifo(50), 2, rates=(3000, 1000), pattern="poisson") == pytest.approx([0.75, 0.25], abs=0.03)


def test_a_token_bucket_holds_a_stream_to_its_rate():
    net = Network(rng=1)
    a, b = net.host(), net.host()
    link, _ = net.link(a, b, 100e6, 1e-3, queue=queues.tbf(2e6, 10_000, limit_packets=50))
    net.route_shortest()
    f = net.udp(a, b, rate_pps=1000, size=1000)  # 8 Mbit/s offered
    net.run(10.0)
    assert net.flows().loc[f, "goodput_bps"] == pytest.approx(2e6, rel=0.02)
    assert net.queues().loc[link, "drops"] > 0


def test_red_marks_ecn_capable_flows_instead_of_dropping_them():
    def run(ecn):
        net = Network(rng=2)
        a, b = net.host(), net.host()
        link, _ = net.link(a, b, 10e6, 20e-3, queue=queues.red(5, 15, ecn=ecn, mean_pkt_bytes=1500))
        net.route_shortest()
        for _ in range(4):
            net.tcp(a, b, ecn=ecn)
        net.run(30.0)
        return net.queues().loc[link], net.flows()
    plain, _ = run(False)
    marked, flows = run(True)
    assert plain.marks == 0 and plain.drops > 50
    # early drops become marks; the forced drops above max_th remain
    assert marked.marks > 50 and marked.drops < plain.drops / 2 and flows.ecn_reductions.sum() > 0


def test_cbq_without_borrowing_holds_a_class_to_its_share_and_a_coarse_timer_lowers_the_ceiling():
    def run(borrow, timer_s=0.0):
        net = Network(rng=1)
        a, r1, r2 = net.host(), net.router(), net.router()
        net.link(a, r1, 100e6, 1e-3, queue=queues.fifo(1000))
        cls = [CbqClass(1.0, parent=-1), CbqClass(0.3, borrow=borrow, limit_packets=50),
               CbqClass(0.7, borrow=borrow, limit_packets=50)]
        net.link(r1, r2, 10e6, 10e-3, queue=queues.cbq(cls, timer_s=timer_s, limit_packets=None))
        net.route_shortest()
        f = net.udp(a, r2, rate_pps=1000, size=1000, cls=2)  # class 2 alone, offering 8 Mbit/s
        net.run(20.0)
        return net.flows().loc[f, "goodput_bps"]
    assert run(False) == pytest.approx(7e6, rel=0.02)
    assert run(True) == pytest.approx(8e6, rel=0.01)
    assert run(False, timer_s=0.01) < 0.97 * run(False)


def test_stations_on_a_shared_ethernet_collide_and_back_off():
    def run(stations):
        net = Network(rng=4)
        hub = net.host()
        nodes = [net.host() for _ in range(stations)]
        links = net.shared_segment(nodes, hub)
        for n, link in zip(nodes, links, strict=True):
            net.route(n, hub, link)
        for n in nodes:
            net.udp(n, hub, pattern="poisson", rate_pps=2000 / stations, size=1000)  # 1.6x the segment
        net.run(5.0)
        q = net.queues().loc[links]
        return q.collisions.sum(), q.utilisation.sum()
    few_collisions, few_use = run(2)
    many_collisions, many_use = run(8)
    assert 0 < few_collisions < many_collisions
    assert 0.6 < many_use < few_use <= 1.0


def test_an_rpc_with_one_call_outstanding_completes_one_per_round_trip():
    net = Network(rng=1)
    c, s = net.host(), net.host(cpu_packet_s=20e-6)
    net.link(c, s, 1e9, 50e-6)
    net.route_shortest()
    f = net.udp(c, s, pattern="rpc", size=100, reply_size=1000, service_s=30e-6, outstanding=1)
    net.run(1.0)
    # the server's CPU takes the request in (20 us), serves it (30 us) and sends the reply (20 us)
    rtt = 100 * 8 / 1e9 + 50e-6 + 20e-6 + 30e-6 + 20e-6 + 1000 * 8 / 1e9 + 50e-6
    assert net.flows().loc[f, "completed"] == pytest.approx(1.0 / rtt, rel=0.01)


def test_a_classifier_compiled_with_numba_chooses_the_classes():
    numba = pytest.importorskip("numba")
    from numba import types

    @numba.cfunc(types.int32(types.uint32, types.uint32, types.uint32, types.uint32, types.uint32))
    def by_size(flow, src, dst, size, kind):
        return 0 if size < 600 else 1  # small packets in the first class

    net = Network(rng=1)
    a, b = net.host(), net.host()
    link, _ = net.link(a, b, 4e6, 1e-3, queue=queues.drr([500, 1500]))
    net.classify(link, by_size)
    net.route_shortest()
    net.udp(a, b, rate_pps=2000, size=500)
    net.udp(a, b, rate_pps=1000, size=1500)
    net.run(5.0)
    per_class = net.class_stats(link, 2)
    assert per_class.loc[0, "bytes"] / per_class.bytes.sum() == pytest.approx(0.25, abs=0.02)


def test_bad_networks_are_refused_with_the_reason():
    net = Network(rng=1)
    a = net.host()
    with pytest.raises(ValueError, match="add_link"):
        net.one_way(a, a, 1e6, 0)
    with pytest.raises(ValueError, match="RED needs"):
        queues.red(15, 5)
    with pytest.raises(ValueError, match="default class must be a leaf"):
        queues.cbq([CbqClass(1.0, parent=-1), CbqClass(0.5)], default_class=0)
    with pytest.raises(ValueError, match="pattern"):
        net.udp(a, a, pattern="burst")


def _dumbbell(rng):
    net, bottleneck = red_dumbbell(rng=rng)
    q, fl = net.queues().loc[bottleneck], net.flows()
    return {"delivered_bytes": fl.delivered_bytes.sum(), "timeouts": fl.timeouts.sum(),
            "drop_rate": q.drops / q.arrivals, "mean_packets": q.mean_packets}


@needs_ns2
def test_tcp_reno_through_a_red_bottleneck_agrees_with_ns2_within_ten_percent(tmp_path):
    ns2 = ns2_peer.red_dumbbell(tmp_path)
    ours = {k: np.mean([_dumbbell(seed)[k] for seed in range(6)]) for k in
            ("delivered_bytes", "timeouts", "drop_rate", "mean_packets")}
    assert ours["delivered_bytes"] == pytest.approx(ns2["delivered_bytes"], rel=0.10)
    assert ours["drop_rate"] == pytest.approx(ns2["drops"] / ns2["arrivals"], rel=0.10)
    assert ours["mean_packets"] == pytest.approx(ns2["mean_packets"], rel=0.10)
    assert ours["timeouts"] == pytest.approx(ns2["timeouts"], rel=0.25)  # a few dozen events: noisier


@needs_ns2
@pytest.mark.parametrize("borrow, rates", [(False, (8, 8)), (True, (8, 8)), (False, (0, 8)), (True, (0, 8))])
def test_cbq_classes_sharing_a_link_agree_with_ns2_within_ten_percent(tmp_path, borrow, rates):
    theirs = ns2_peer.cbq_shares(tmp_path, borrow=borrow, rates_mbps=rates)
    net = Network(rng=1)
    a, r1, r2 = net.host(), net.router(), net.router()
    net.link(a, r1, 100e6, 1e-3, queue=queues.fifo(1000))
    cls = [CbqClass(1.0, parent=-1), CbqClass(0.3, borrow=borrow, limit_packets=50),
           CbqClass(0.7, borrow=borrow, limit_packets=50)]
    net.link(r1, r2, 10e6, 10e-3, queue=queues.cbq(cls, limit_packets=None))
    net.route_shortest()
    flows = [net.udp(a, r2, rate_pps=rate * 125, size=1000, cls=k + 1) for k, rate in enumerate(rates) if rate]
    net.run(20.0)
    ours = list(net.flows().loc[flows, "delivered_bytes"])
    for got, want in zip(ours, [b for b, rate in zip(theirs, rates, strict=True) if rate], strict=True):
        assert got == pytest.approx(want, rel=0.10)


def test_a_deferring_station_sends_at_the_end_of_the_gap_and_meets_a_back_to_back_sender():
    # 802.3: a station that deferred to a frame sends when the gap after it ends, whatever it hears
    # in the gap's last third, so it collides with the sender's next back-to-back frame and both
    # back off; a waiting station is not locked out by a saturated neighbour.
    net = Network(rng=1)
    hub = net.host()
    busy, quiet = net.host(), net.host()
    links = net.shared_segment([busy, quiet], hub)
    for n, link in zip([busy, quiet], links, strict=True):
        net.route(n, hub, link)
    net.udp(busy, hub, pattern="cbr", rate_pps=2000, size=1000)  # always a frame waiting
    sparse = net.udp(quiet, hub, pattern="cbr", rate_pps=10, size=100, start_s=0.0123)
    net.run(5.0)
    q, sent = net.queues().loc[links], net.flows().loc[sparse]
    assert q.collisions.iloc[1] >= sent.sent_packets  # each of its 50 frames met the busy station's next
    # ... and most get through, though the busy station, whose backoff restarts with each frame it
    # sends, wins the contention often enough that some frames give up after 16 attempts (capture)
    assert sent.sent_packets / 2 <= sent.delivered_packets < sent.sent_packets


def test_red_holds_an_overload_where_its_drop_curve_gives_the_drops_conservation_demands():
    # Poisson UDP 5% over a 10 Mbit/s link, a buffer too large to overflow: every drop is RED's. The
    # average queue settles where RED's curve, p_b = max_p (avg - min_th) / (max_th - min_th), spaced
    # by its count so that about 2 p_b of packets drop, removes the excess; halving max_p moves it up.
    def run(max_p, rho):
        net = Network(rng=3)
        a, b = net.host(), net.host()
        link, _ = net.link(a, b, 10e6, 1e-3, queue=queues.red(5, 50, max_p=max_p, wq=0.002, limit_packets=1000))
        net.route_shortest()
        net.udp(a, b, pattern="poisson", rate_pps=rho * 10e6 / 8000, size=1000)
        net.run(60.0)
        q = net.queues().loc[link]
        return q.mean_packets, q.drops / q.arrivals
    assert run(0.1, 0.5)[1] == 0.0  # the average never reaches min_th
    steep, gentle = run(0.1, 1.05), run(0.05, 1.05)
    for max_p, (queue, dropped) in ((0.1, steep), (0.05, gentle)):
        assert 5 < queue < 50
        assert dropped == pytest.approx(2 * max_p * (queue - 5) / 45, rel=0.25)
    assert steep[1] == pytest.approx(gentle[1], rel=0.1)  # the same excess to shed
    assert gentle[0] > 1.3 * steep[0]
