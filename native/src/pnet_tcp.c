/* pnet_tcp.c -- TCP Reno endpoints: slow start, congestion avoidance, fast retransmit and fast
 * recovery, retransmission timeouts with Jacobson/Karels estimation and Karn's rule, delayed ACKs,
 * ECN. Sequence numbers count segments; the last segment of a finite flow may be short. */
#include <math.h>
#include <string.h>

#include "pnet_internal.h"
#include "pysim/status.h"

#define MAX_RTO_S 64.0

/* timer events carry flow << 34 | generation << 2 | kind */
enum { TIMER_RTO = 0, TIMER_DELACK = 1, TIMER_START = 2 };
#define GEN_MASK ((1LL << 32) - 1)

static int tcp_timer(ps_engine *e, void *ctx, int64_t arg);

static int64_t ring_index(const pn_flow *f, int64_t seq) { return seq & (f->sent_cap - 1); }

static uint32_t payload(const pn_flow *f, int64_t seq)
{
    if (f->tcp.bytes > 0 && seq == f->total_segs - 1) return (uint32_t)(f->tcp.bytes - seq * (int64_t)f->tcp.mss);
    return f->tcp.mss;
}

static int arm(pn_net *n, int32_t flow, int which, double delay)
{
    pn_flow *f = &n->flows[flow];
    int64_t gen = which == TIMER_RTO ? ++f->timer_gen : ++f->ack_gen;
    return engine_schedule(n->e, delay, tcp_timer, n, ((int64_t)flow << 34) | ((gen & GEN_MASK) << 2) | which);
}

static int send_segment(pn_net *n, int32_t flow, int64_t seq, int retransmit)
{
    pn_flow *f = &n->flows[flow];
    pn_pkt *p = pn_pkt_new(n);
    if (p == NULL) return PS_ENOMEM;
    p->flow = (uint32_t)flow;
    p->src = (uint32_t)f->tcp.src;
    p->dst = (uint32_t)f->tcp.dst;
    p->kind = PN_DATA;
    p->size = payload(f, seq) + f->tcp.header_bytes;
    p->seq = seq;
    p->ecn = f->tcp.ecn ? PN_ECT : 0;
    p->sent_s = engine_now(n->e);
    f->sent_at[ring_index(f, seq)] = retransmit ? -1.0 : p->sent_s;
    f->st.sent_packets++;
    f->st.sent_bytes += p->size;
    if (retransmit) f->st.retransmits++;
    return pn_node_receive(n, f->tcp.src, p);
}

static int send_allowed(pn_net *n, int32_t flow)
{
    pn_flow *f = &n->flows[flow];
    double window = fmin(f->cwnd, f->tcp.max_window);
    int started = f->snd_nxt == f->snd_una;
    while (f->snd_nxt < f->snd_una + (int64_t)window && f->snd_nxt < f->total_segs) {
        int r = send_segment(n, flow, f->snd_nxt, f->snd_nxt < f->snd_max);
        if (r != PS_OK) return r;
        f->snd_nxt++;
        if (f->snd_nxt > f->snd_max) f->snd_max = f->snd_nxt;
    }
    if (started && f->snd_nxt > f->snd_una) return arm(n, flow, TIMER_RTO, f->rto);
    return PS_OK;
}

int pn_tcp_start(pn_net *n, int32_t flow)
{
    pn_flow *f = &n->flows[flow];
    int64_t cap = 16;
    while (cap < 2 * (int64_t)f->tcp.max_window + 16) cap *= 2;
    f->sent_cap = f->ooo_cap = cap;
    f->sent_at = ps_calloc((size_t)cap, sizeof *f->sent_at);
    f->ooo = ps_calloc((size_t)cap, 1);
    if (f->sent_at == NULL || f->ooo == NULL) return PS_ENOMEM;
    f->total_segs = f->tcp.bytes > 0 ? (f->tcp.bytes + f->tcp.mss - 1) / f->tcp.mss : INT64_MAX;
    f->cwnd = f->tcp.initial_cwnd;
    f->ssthresh = f->tcp.max_window;
    f->rto = f->tcp.initial_rto_s;
    f->fr_recover = -1;
    return engine_schedule(n->e, f->tcp.start_s - engine_now(n->e), tcp_timer, n,
                           ((int64_t)flow << 34) | TIMER_START);
}

void pn_tcp_free(pn_flow *f)
{
    ps_free(f->sent_at);
    ps_free(f->ooo);
}

static int send_ack(pn_net *n, int32_t flow)
{
    pn_flow *f = &n->flows[flow];
    pn_pkt *p = pn_pkt_new(n);
    if (p == NULL) return PS_ENOMEM;
    p->flow = (uint32_t)flow;
    p->src = (uint32_t)f->tcp.dst;
    p->dst = (uint32_t)f->tcp.src;
    p->kind = PN_ACK;
    p->size = f->tcp.header_bytes;
    p->seq = f->rcv_nxt;
    p->ecn = f->ece_pending ? PN_ECE : 0;
    p->sent_s = engine_now(n->e);
    f->ece_pending = 0;
    f->unacked = 0;
    f->ack_gen++;  /* a pending delayed ACK is no longer needed */
    return pn_node_receive(n, f->tcp.dst, p);
}

static int on_data(pn_net *n, pn_pkt *p)
{
    int32_t flow = (int32_t)p->flow;
    pn_flow *f = &n->flows[flow];
    double now = engine_now(n->e);
    int64_t seq = p->seq;
    int in_order = seq == f->rcv_nxt;
    if (p->ecn & PN_CE) f->ece_pending = 1;
    if (in_order) {
        do {
            f->ooo[ring_index(f, f->rcv_nxt)] = 0;
            f->st.delivered_packets++;
            f->st.delivered_bytes += payload(f, f->rcv_nxt);
            f->rcv_nxt++;
        } while (f->ooo[ring_index(f, f->rcv_nxt)] && f->rcv_nxt - seq < f->ooo_cap);
        if (f->st.first_s == 0) f->st.first_s = now;
        f->st.last_s = now;
        f->st.delay_sum_s += now - p->sent_s;
    } else if (seq > f->rcv_nxt && seq - f->rcv_nxt < f->ooo_cap) {
        f->ooo[ring_index(f, seq)] = 1;
    }
    pn_pkt_free(n, p);
    int gap = 0;
    for (int64_t k = 1; k < 4 && !gap; k++) gap = f->ooo[ring_index(f, f->rcv_nxt + k)];
    if (f->tcp.delayed_ack && in_order && !gap && f->unacked == 0 && !f->ece_pending) {
        f->unacked = 1;
        return arm(n, flow, TIMER_DELACK, f->tcp.ack_delay_s);
    }
    return send_ack(n, flow);
}

/* 4.4BSD's Reno (and ns-2's): half the window the sender may use, in whole segments, at least two */
static double half_window(const pn_flow *f)
{
    return fmax(floor(fmin(f->cwnd, f->tcp.max_window) / 2), 2);
}

static void rtt_sample(pn_flow *f, double r)
{
    if (!f->have_rtt) {
        f->srtt = r;
        f->rttvar = r / 2;
        f->have_rtt = 1;
    } else {
        f->rttvar = 0.75 * f->rttvar + 0.25 * fabs(f->srtt - r);
        f->srtt = 0.875 * f->srtt + 0.125 * r;
    }
    f->rto = fmin(fmax(f->tcp.min_rto_s, f->srtt + 4 * f->rttvar), MAX_RTO_S);
}

static int on_ack(pn_net *n, pn_pkt *p)
{
    int32_t flow = (int32_t)p->flow;
    pn_flow *f = &n->flows[flow];
    double now = engine_now(n->e);
    int64_t ack = p->seq;
    int ece = (p->ecn & PN_ECE) != 0;
    pn_pkt_free(n, p);
    if (ece && f->snd_una >= f->recover && !f->in_recovery) { /* once per window of data */
        f->st.ecn_reductions++;
        f->ssthresh = fmax(f->cwnd / 2, 2);
        f->cwnd = f->ssthresh;
        f->recover = f->snd_nxt;
    }
    if (ack > f->snd_una) {
        double sent = f->sent_at[ring_index(f, ack - 1)];
        if (sent >= 0) rtt_sample(f, now - sent);
        if (f->in_recovery) { /* Reno: any new ACK ends fast recovery */
            f->cwnd = f->ssthresh;
            f->in_recovery = 0;
        } else if (f->cwnd < f->ssthresh) {
            f->cwnd += 1;
        } else {
            f->cwnd += 1 / f->cwnd;
        }
        f->snd_una = ack;
        f->dupacks = 0;
        if (f->snd_nxt < f->snd_una) f->snd_nxt = f->snd_una;
        if (f->snd_una >= f->total_segs) {
            f->timer_gen++;
            if (f->st.done_s == 0) f->st.done_s = now;
            return PS_OK;
        }
        int r = f->snd_nxt > f->snd_una ? arm(n, flow, TIMER_RTO, f->rto) : (f->timer_gen++, PS_OK);
        if (r != PS_OK) return r;
    } else if (ack == f->snd_una && f->snd_nxt > f->snd_una) {
        f->dupacks++;
        /* no second fast retransmit until everything sent at the last one (or at the last timeout)
         * is acknowledged: the "bugfix" of RFC 2582 §3, on in ns-2's Reno by default */
        if (f->dupacks == 3 && !f->in_recovery && f->snd_una - 1 > f->fr_recover) {
            f->fr_recover = f->snd_max - 1;
            f->st.fast_retransmits++;
            f->ssthresh = half_window(f);
            f->recover = f->snd_nxt;
            f->cwnd = f->ssthresh + 3;
            f->in_recovery = 1;
            int r = send_segment(n, flow, f->snd_una, 1);
            if (r != PS_OK) return r;
        } else if (f->in_recovery) {
            f->cwnd += 1;
        }
    }
    return send_allowed(n, flow);
}

int pn_tcp_deliver(pn_net *n, pn_pkt *p)
{
    return p->kind == PN_DATA ? on_data(n, p) : on_ack(n, p);
}

static int tcp_timer(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e;
    pn_net *n = ctx;
    int32_t flow = (int32_t)(arg >> 34);
    int64_t gen = (arg >> 2) & GEN_MASK;
    int what = (int)(arg & 3);
    pn_flow *f = &n->flows[flow];
    if (what == TIMER_START) return send_allowed(n, flow);
    if (what == TIMER_DELACK) {
        if (gen != (f->ack_gen & GEN_MASK) || !f->unacked) return PS_OK;
        return send_ack(n, flow);
    }
    if (gen != (f->timer_gen & GEN_MASK) || f->snd_una >= f->total_segs) return PS_OK;
    /* a timeout: back to one segment, resend from the first unacknowledged, back the timer off */
    f->st.timeouts++;
    f->fr_recover = f->snd_max - 1;
    f->ssthresh = half_window(f);
    f->cwnd = 1;
    f->in_recovery = 0;
    f->dupacks = 0;
    f->snd_nxt = f->snd_una;
    f->rto = fmin(f->rto * 2, MAX_RTO_S);
    return send_allowed(n, flow);
}
