/* Tests of the packet network: a UDP stream's delay by hand, TCP filling a bottleneck, a lossy
 * drop-tail queue making Reno retransmit, collisions on a shared Ethernet. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "pysim/pnet.h"
#include "pysim/status.h"

static uint64_t seed = 7;

static ps_rng make_rng(void)
{
    SPLITMIX_RNG(r, seed);
    return r;
}

static pn_link_spec p2p(int32_t a, int32_t b, double bps, double delay, uint32_t limit)
{
    pn_link_spec s;
    memset(&s, 0, sizeof s);
    s.from = a;
    s.to = b;
    s.kind = PN_P2P;
    s.bits_per_s = bps;
    s.delay_s = delay;
    s.queue.kind = PN_FIFO;
    s.queue.limit_packets = limit;
    return s;
}

static pn_tcp_spec bulk(int32_t src, int32_t dst)
{
    pn_tcp_spec t;
    memset(&t, 0, sizeof t);
    t.src = src;
    t.dst = dst;
    t.bytes = -1;
    t.mss = 1460;
    t.header_bytes = 40;
    t.initial_cwnd = 1;
    t.max_window = 64;
    t.min_rto_s = 0.2;
    t.initial_rto_s = 1.0;
    return t;
}

static void test_udp_delay(void)
{
    ps_rng rng = make_rng();
    ps_engine *e = engine_new(0);
    pn_net *n = pn_new(e, &rng);
    int32_t a = pn_add_node(n, 0, 0), b = pn_add_node(n, 0, 0);
    pn_link_spec s = p2p(a, b, 10e6, 1e-3, 100);
    int32_t l = pn_add_link(n, &s);
    pn_route(n, a, b, l);
    pn_udp_spec u;
    memset(&u, 0, sizeof u);
    u.src = a, u.dst = b, u.pattern = PN_CBR, u.rate_pps = 100, u.size = 1000, u.stop_s = 0.995;
    int32_t f = pn_add_udp(n, &u);
    engine_run(e, 2.0, -1);
    const pn_flow_stats *st = pn_get_flow(n, f);
    CHECK(st->delivered_packets == 100, "UDP: 100 packets in a second at 100/s (got %llu)",
          (unsigned long long)st->delivered_packets);
    CHECK_NEAR(st->delay_sum_s / (double)st->delivered_packets, 1000 * 8 / 10e6 + 1e-3, 1e-9, "UDP: delay");
    pn_free(n);
    engine_free(e);
}

static void test_tcp_fills_a_bottleneck(void)
{
    ps_rng rng = make_rng();
    ps_engine *e = engine_new(0);
    pn_net *n = pn_new(e, &rng);
    int32_t a = pn_add_node(n, 0, 0), r = pn_add_node(n, 0, 0), b = pn_add_node(n, 0, 0);
    pn_link_spec s1 = p2p(a, r, 100e6, 1e-3, 1000), s2 = p2p(r, b, 10e6, 5e-3, 1000), s3 = p2p(b, r, 10e6, 5e-3, 1000),
                 s4 = p2p(r, a, 100e6, 1e-3, 1000);
    int32_t l1 = pn_add_link(n, &s1), l2 = pn_add_link(n, &s2), l3 = pn_add_link(n, &s3), l4 = pn_add_link(n, &s4);
    pn_route(n, a, b, l1);
    pn_route(n, r, b, l2);
    pn_route(n, b, a, l3);
    pn_route(n, r, a, l4);
    pn_tcp_spec t = bulk(a, b);
    int32_t f = pn_add_tcp(n, &t);
    engine_run(e, 20.0, -1);
    const pn_flow_stats *st = pn_get_flow(n, f);
    double goodput = (double)st->delivered_bytes * 8 / (20.0 - 0.5);
    CHECK(goodput > 0.9 * 10e6 * 1460 / 1500 && st->retransmits == 0,
          "TCP: one flow fills a lossless 10 Mbit/s bottleneck (%.3g bit/s, %llu retransmits)", goodput,
          (unsigned long long)st->retransmits);
    pn_free(n);
    engine_free(e);
}

static void test_tcp_recovers_from_drops(void)
{
    ps_rng rng = make_rng();
    ps_engine *e = engine_new(0);
    pn_net *n = pn_new(e, &rng);
    int32_t a = pn_add_node(n, 0, 0), b = pn_add_node(n, 0, 0);
    pn_link_spec s1 = p2p(a, b, 10e6, 10e-3, 8), s2 = p2p(b, a, 10e6, 10e-3, 100);
    int32_t l1 = pn_add_link(n, &s1), l2 = pn_add_link(n, &s2);
    pn_route(n, a, b, l1);
    pn_route(n, b, a, l2);
    pn_tcp_spec t = bulk(a, b);
    int32_t f = pn_add_tcp(n, &t);
    engine_run(e, 30.0, -1);
    const pn_flow_stats *st = pn_get_flow(n, f);
    double util = (double)st->delivered_bytes * 8 / 30.0 / (10e6 * 1460 / 1500);
    CHECK(st->fast_retransmits > 5 && pn_get_queue(n, l1)->drops > 5 && util > 0.5,
          "TCP: an 8-packet queue drops; Reno fast-retransmits (%llu) and keeps %.2f of the link",
          (unsigned long long)st->fast_retransmits, util);
    pn_free(n);
    engine_free(e);
}

static void test_ethernet_collisions(void)
{
    ps_rng rng = make_rng();
    ps_engine *e = engine_new(0);
    pn_net *n = pn_new(e, &rng);
    int32_t hub = pn_add_node(n, 0, 0);
    int32_t senders[4];
    for (int i = 0; i < 4; i++) {
        senders[i] = pn_add_node(n, 0, 0);
        pn_link_spec s = p2p(senders[i], hub, 10e6, 25e-6, 50);
        s.kind = PN_ETHERNET;
        s.medium = PN_CSMA_CD;
        s.segment = 0;
        s.slot_s = 51.2e-6;
        int32_t l = pn_add_link(n, &s);
        pn_route(n, senders[i], hub, l);
        pn_udp_spec u;
        memset(&u, 0, sizeof u);
        u.src = senders[i], u.dst = hub, u.pattern = PN_POISSON, u.rate_pps = 400, u.size = 1000;
        pn_add_udp(n, &u);
    }
    engine_run(e, 5.0, -1);
    uint64_t delivered = 0, collisions = 0;
    double busy = 0;
    for (int32_t f = 0; f < 4; f++) delivered += pn_get_flow(n, f)->delivered_packets;
    for (int32_t l = 0; l < 4; l++) collisions += pn_link_collisions(n, l), busy += pn_link_busy_s(n, l);
    CHECK(collisions > 0 && busy / 5.0 > 0.5 && busy / 5.0 <= 1.0 + 1e-9,
          "CSMA/CD: four stations offering 1.3x the segment collide (%llu) and carry %.2f of it",
          (unsigned long long)collisions, busy / 5.0);
    CHECK(delivered > 0, "CSMA/CD: frames get through (%llu)", (unsigned long long)delivered);
    pn_free(n);
    engine_free(e);
}

static void test_bad_specs(void)
{
    ps_rng rng = make_rng();
    ps_engine *e = engine_new(0);
    pn_net *n = pn_new(e, &rng);
    int32_t a = pn_add_node(n, 0, 0), b = pn_add_node(n, 0, 0);
    pn_link_spec s = p2p(a, a, 1e6, 0, 10);
    CHECK(pn_add_link(n, &s) == PS_EINVAL, "a link from a node to itself is refused");
    s = p2p(a, b, 1e6, 0, 10);
    s.queue.kind = PN_RED;
    CHECK(pn_add_link(n, &s) == PS_EINVAL, "RED without thresholds is refused");
    CHECK(pn_route(n, b, a, 0) == PS_EINVAL, "a route over a link that starts elsewhere is refused");
    CHECK(pn_add_node(n, -1, 0) == PS_EINVAL, "a negative CPU cost is refused");
    pn_free(n);
    engine_free(e);
}

int main(void)
{
    test_udp_delay();
    test_tcp_fills_a_bottleneck();
    test_tcp_recovers_from_drops();
    test_ethernet_collisions();
    test_bad_specs();
    return check_summary("test_pnet");
}
