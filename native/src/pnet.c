/* pnet.c -- the packet network: packets, nodes with a CPU, routing, links on dedicated or
 * shared media (CSMA/CD), UDP sources and sinks, queue traces. TCP lives in pnet_tcp.c and the
 * queues' schedulers in pnet_queue.c. */
#include <math.h>
#include <string.h>

#include "pnet_internal.h"
#include "pysim/status.h"

#define SLAB 1024
#define JAM_BITS 32.0
#define GAP_BITS 96.0
#define MAX_ATTEMPTS 16

typedef struct slab {
    struct slab *next;
    pn_pkt pkts[SLAB];
} slab;

typedef struct pn_extra { /* the parts of pn_net this file keeps to itself */
    slab *slabs;
} pn_extra;

static pn_extra *extra_of(pn_net *n);

/* --- packets ------------------------------------------------------------------------------ */

pn_pkt *pn_pkt_new(pn_net *n)
{
    if (n->free_pkts == NULL) {
        slab *s = ps_calloc(1, sizeof *s);
        if (s == NULL) return NULL;
        pn_extra *x = extra_of(n);
        s->next = x->slabs;
        x->slabs = s;
        for (int i = SLAB - 1; i >= 0; i--) {
            s->pkts[i].next = n->free_pkts;
            n->free_pkts = &s->pkts[i];
        }
    }
    pn_pkt *p = n->free_pkts;
    n->free_pkts = p->next;
    memset(p, 0, sizeof *p);
    return p;
}

void pn_pkt_free(pn_net *n, pn_pkt *p)
{
    p->next = n->free_pkts;
    n->free_pkts = p;
}

/* --- the network ----------------------------------------------------------------------------- */

typedef struct pn_net_full {
    pn_net net;
    pn_extra extra;
} pn_net_full;

static pn_extra *extra_of(pn_net *n) { return &((pn_net_full *)n)->extra; }

pn_net *pn_new(ps_engine *e, ps_rng *rng)
{
    if (e == NULL) return NULL;
    pn_net_full *f = ps_calloc(1, sizeof *f);
    if (f == NULL) return NULL;
    f->net.e = e;
    f->net.rng = rng;
    return &f->net;
}

void pn_free(pn_net *n)
{
    if (n == NULL) return;
    for (int32_t i = 0; i < n->nnodes; i++) ps_free(n->nodes[i].route);
    for (int32_t i = 0; i < n->nlinks; i++) {
        pn_queue_free(&n->links[i].q);
        ps_free(n->links[i].trace);
    }
    for (int32_t i = 0; i < n->nflows; i++) pn_tcp_free(&n->flows[i]);
    ps_free(n->nodes);
    ps_free(n->links);
    ps_free(n->flows);
    ps_free(n->flow_class);
    slab *s = extra_of(n)->slabs;
    while (s) {
        slab *next = s->next;
        ps_free(s);
        s = next;
    }
    ps_free(n);
}

static int grow(void **arr, int32_t *cap, int32_t need, size_t item)
{
    if (need <= *cap) return PS_OK;
    int32_t c = *cap ? *cap * 2 : 8;
    while (c < need) c *= 2;
    void *p = ps_realloc(*arr, (size_t)c * item);
    if (p == NULL) return PS_ENOMEM;
    memset((char *)p + (size_t)*cap * item, 0, (size_t)(c - *cap) * item);
    *arr = p;
    *cap = c;
    return PS_OK;
}

int32_t pn_add_node(pn_net *n, double cpu_packet_s, double cpu_byte_s)
{
    if (!(cpu_packet_s >= 0 && cpu_byte_s >= 0)) return PS_EINVAL;
    if (grow((void **)&n->nodes, &n->cap_nodes, n->nnodes + 1, sizeof *n->nodes) != PS_OK) return PS_ENOMEM;
    pn_node *nd = &n->nodes[n->nnodes];
    memset(nd, 0, sizeof *nd);
    nd->net = n;
    nd->index = n->nnodes;
    nd->cpu_packet_s = cpu_packet_s;
    nd->cpu_byte_s = cpu_byte_s;
    /* the nodes array may move: every node's back pointer stays valid, links refer by index */
    return n->nnodes++;
}

uint64_t pn_wire_bytes(enum pn_link_kind kind, uint32_t size)
{
    switch (kind) {
    case PN_P2P: return size;
    case PN_ETHERNET: return 8u + 14u + (size < 46 ? 46u : size) + 4u + 12u; /* preamble, header, pad, FCS, gap */
    case PN_ATM_AAL5: return (uint64_t)((size + 8 + 8 + 47) / 48) * 53u;      /* LLC/SNAP and AAL5 trailer */
    case PN_HDLC: return (uint64_t)ceil((size + 4) * 63.0 / 62.0) + 1;         /* address, control, FCS; stuffing; flag */
    case PN_WAVELAN: return 16u + 14u + (size < 46 ? 46u : size) + 4u;         /* radio preamble, Ethernet frame */
    case PN_MYRINET: return size + 8u;                                         /* route, type, CRC */
    }
    return size;
}

int32_t pn_add_link(pn_net *n, const pn_link_spec *spec)
{
    if (spec->from < 0 || spec->from >= n->nnodes || spec->to < 0 || spec->to >= n->nnodes || spec->from == spec->to ||
        !(spec->bits_per_s > 0) || !(spec->delay_s >= 0) || spec->kind > PN_MYRINET || spec->medium > PN_CSMA ||
        (spec->medium != PN_DEDICATED && (!(spec->slot_s > 0) || spec->segment < 0 || n->rng == NULL)))
        return PS_EINVAL;
    if (grow((void **)&n->links, &n->cap_links, n->nlinks + 1, sizeof *n->links) != PS_OK) return PS_ENOMEM;
    pn_link *l = &n->links[n->nlinks];
    memset(l, 0, sizeof *l);
    l->net = n;
    l->index = n->nlinks;
    l->spec = *spec;
    if (l->spec.mtu == 0) l->spec.mtu = UINT32_MAX;
    int r = pn_queue_init(&l->q, &spec->queue, spec->bits_per_s, n, n->rng);
    if (r != PS_OK) return r;
    return n->nlinks++;
}

int pn_route(pn_net *n, int32_t node, int32_t dst, int32_t link)
{
    if (node < 0 || node >= n->nnodes || dst < 0 || dst >= n->nnodes || link < -1 || link >= n->nlinks ||
        (link >= 0 && n->links[link].spec.from != node))
        return PS_EINVAL;
    pn_node *nd = &n->nodes[node];
    if (nd->route_cap < n->nnodes) {
        int32_t *r = ps_realloc(nd->route, (size_t)n->nnodes * sizeof *r);
        if (r == NULL) return PS_ENOMEM;
        for (int32_t i = nd->route_cap; i < n->nnodes; i++) r[i] = -1;
        nd->route = r;
        nd->route_cap = n->nnodes;
    }
    nd->route[dst] = link;
    return PS_OK;
}

int pn_set_classifier(pn_net *n, int32_t link, pn_classifier fn)
{
    if (link < 0 || link >= n->nlinks) return PS_EINVAL;
    n->links[link].q.classify = fn;
    return PS_OK;
}

/* --- links -------------------------------------------------------------------------------------- */

static int link_kick(pn_net *n, pn_link *l);
static int csma_attempt(pn_net *n, pn_link *l, int deferred);

static int arrive(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e;
    pn_node *nd = ctx;
    return pn_node_receive(nd->net, nd->index, (pn_pkt *)(intptr_t)arg);
}

static double tx_time(const pn_link *l, const pn_pkt *p)
{
    return (double)(pn_wire_bytes(l->spec.kind, p->size) + l->spec.extra_bytes) * 8.0 / l->spec.bits_per_s;
}

static int finish_tx(pn_net *n, pn_link *l, pn_pkt *p)
{
    double now = engine_now(n->e);
    pn_queue_sent(&l->q, p, now);
    n->moved++;
    l->busy = 0;
    int r = engine_schedule(n->e, l->spec.delay_s, arrive, &n->nodes[l->spec.to], (int64_t)(intptr_t)p);
    if (r != PS_OK) return r;
    return link_kick(n, l);
}

static int tx_done(ps_engine *e, void *ctx, int64_t arg)
{
    pn_link *l = ctx;
    (void)e;
    return finish_tx(l->net, l, (pn_pkt *)(intptr_t)arg);
}

static int link_retry(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e, (void)arg;
    pn_link *l = ctx;
    l->retry_pending = 0;
    return link_kick(l->net, l);
}

static int link_kick(pn_net *n, pn_link *l)
{
    if (l->busy) return PS_OK;
    double now = engine_now(n->e), retry;
    pn_pkt *p = pn_queue_dequeue(&l->q, now, &retry);
    if (p == NULL) {
        if (isfinite(retry) && !l->retry_pending) {
            l->retry_pending = 1;
            return engine_schedule(n->e, fmax(retry - now, 0), link_retry, l, 0);
        }
        return PS_OK;
    }
    l->busy = 1;
    if (l->spec.medium == PN_DEDICATED) {
        double t = tx_time(l, p);
        l->busy_s += t;
        return engine_schedule(n->e, t, tx_done, l, (int64_t)(intptr_t)p);
    }
    l->tx = p;
    l->attempts = 0;
    return csma_attempt(n, l, 0);
}

static int link_enqueue(pn_net *n, pn_link *l, pn_pkt *p)
{
    if (p->size > l->spec.mtu || pn_queue_enqueue(&l->q, p, engine_now(n->e))) {
        if (p->size > l->spec.mtu) l->q.st.drops++;
        pn_pkt_free(n, p);
        return PS_OK;
    }
    return link_kick(n, l);
}

/* --- shared media: CSMA/CD (collisions found within a propagation time) and CSMA ------------------ */

static int csma_event(ps_engine *e, void *ctx, int64_t arg);

/* Links on the same segment transmitting now (their frame has started and not ended or aborted). */
static int on_air(const pn_link *o, const pn_link *l)
{
    return o != l && o->spec.medium != PN_DEDICATED && o->spec.segment == l->spec.segment && o->tx != NULL &&
           o->tx_start >= 0;
}

/* CSMA_DEFERRED: the attempt at the end of the interframe gap that followed a deferral. As 802.3
 * says, a station ignores carrier in the last third of that gap and sends anyway, so a sender's
 * back-to-back frame and a deferring station's frame collide, as they do on a real hub. */
enum { CSMA_TRY = 0, CSMA_END = 1, CSMA_ABORT = 2, CSMA_DEFERRED = 3 };

static int schedule_csma(pn_net *n, pn_link *l, double delay, int what)
{
    return engine_schedule(n->e, delay, csma_event, l, (l->tx_gen << 2) | what);
}

/* When the carrier of o's frame ends where l listens: its wire time less the gap it counts. */
static double carrier_end_at(const pn_link *o, const pn_link *l)
{
    double gap = o->spec.kind == PN_ETHERNET ? GAP_BITS / o->spec.bits_per_s : 0.0;
    return o->tx_end - gap + l->spec.delay_s;
}

static int csma_attempt(pn_net *n, pn_link *l, int deferred)
{
    double now = engine_now(n->e), prop = l->spec.delay_s, gap = GAP_BITS / l->spec.bits_per_s;
    double deaf = deferred ? gap / 3.0 : 0.0; /* carrier that arrived this recently is not heard */
    double heard_end = -1;
    for (int32_t i = 0; i < n->nlinks; i++) {
        pn_link *o = &n->links[i];
        if (on_air(o, l) && o->tx_start + prop <= now - deaf && carrier_end_at(o, l) > now)
            heard_end = fmax(heard_end, carrier_end_at(o, l));
    }
    if (heard_end >= 0) { /* busy: 1-persistent, send when the medium has been quiet for a gap */
        l->tx_start = -1;
        l->tx_gen++;
        return schedule_csma(n, l, heard_end + gap - now, CSMA_DEFERRED);
    }
    double t = tx_time(l, l->tx);
    l->tx_start = now;
    l->tx_end = now + t;
    l->tx_gen++;
    l->tx_collided = 0;
    int collided = 0;
    for (int32_t i = 0; i < n->nlinks; i++) { /* frames on the air that have not yet reached us, or not been heard */
        pn_link *o = &n->links[i];
        if (!on_air(o, l) || carrier_end_at(o, l) <= now) continue;
        collided = 1;
        if (!o->tx_collided) {
            o->tx_collided = 1;
            o->tx_gen++;
            double stop = l->spec.medium == PN_CSMA_CD ? now + prop + JAM_BITS / o->spec.bits_per_s : o->tx_end;
            int r = schedule_csma(n, o, stop - now, CSMA_ABORT);
            if (r != PS_OK) return r;
        }
    }
    if (collided) {
        l->tx_collided = 1;
        double stop = l->spec.medium == PN_CSMA_CD ? now + prop + JAM_BITS / l->spec.bits_per_s : l->tx_end;
        return schedule_csma(n, l, stop - now, CSMA_ABORT);
    }
    return schedule_csma(n, l, t, CSMA_END);
}

static int csma_event(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e;
    pn_link *l = ctx;
    pn_net *n = l->net;
    if ((arg >> 2) != l->tx_gen || l->tx == NULL) return PS_OK; /* superseded by a collision */
    double now = engine_now(n->e);
    switch (arg & 3) {
    case CSMA_TRY:
    case CSMA_DEFERRED:
        return csma_attempt(n, l, (int)(arg & 3) == CSMA_DEFERRED);
    case CSMA_END: {
        pn_pkt *p = l->tx;
        l->busy_s += l->tx_end - l->tx_start;
        l->tx = NULL;
        l->tx_start = -1;
        return finish_tx(n, l, p);
    }
    default: { /* aborted: back off a random number of slots, or give up */
        l->collisions++;
        l->tx_start = -1;
        if (++l->attempts >= MAX_ATTEMPTS) {
            l->q.st.drops++;
            pn_pkt_free(n, l->tx);
            l->tx = NULL;
            l->busy = 0;
            return link_kick(n, l);
        }
        int k = l->attempts < 10 ? l->attempts : 10;
        double wait = (double)ps_below(n->rng, (uint64_t)1 << k) * l->spec.slot_s;
        l->tx_gen++;
        (void)now;
        return schedule_csma(n, l, wait, CSMA_TRY);
    }
    }
}

/* --- nodes --------------------------------------------------------------------------------------- */

static int deliver(pn_net *n, pn_node *nd, pn_pkt *p);

static int node_done(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e;
    pn_node *nd = ctx;
    pn_net *n = nd->net;
    pn_pkt *p = (pn_pkt *)(intptr_t)arg;
    if ((int32_t)p->dst == nd->index) return deliver(n, nd, p);
    int32_t link = (nd->route && (int32_t)p->dst < nd->route_cap) ? nd->route[p->dst] : -1;
    if (link < 0) {
        n->unroutable++;
        pn_pkt_free(n, p);
        return PS_OK;
    }
    return link_enqueue(n, &n->links[link], p);
}

int pn_node_receive(pn_net *n, int32_t node, pn_pkt *p)
{
    pn_node *nd = &n->nodes[node];
    double cost = nd->cpu_packet_s + nd->cpu_byte_s * p->size;
    if (cost <= 0) return node_done(n->e, nd, (int64_t)(intptr_t)p);
    double now = engine_now(n->e);
    double start = fmax(now, nd->cpu_free_at);
    nd->cpu_free_at = start + cost;
    return engine_schedule(n->e, nd->cpu_free_at - now, node_done, nd, (int64_t)(intptr_t)p);
}

/* --- UDP ------------------------------------------------------------------------------------------- */

static int udp_event(ps_engine *e, void *ctx, int64_t arg);
enum { UDP_SEND = 0, UDP_TOGGLE = 1, UDP_REPLY = 2 };

static int udp_send(pn_net *n, int32_t flow, uint32_t src, uint32_t dst, uint32_t size, uint8_t kind, int64_t seq)
{
    pn_flow *f = &n->flows[flow];
    pn_pkt *p = pn_pkt_new(n);
    if (p == NULL) return PS_ENOMEM;
    p->flow = (uint32_t)flow;
    p->src = src;
    p->dst = dst;
    p->size = size;
    p->kind = kind;
    p->seq = seq;
    p->sent_s = engine_now(n->e);
    f->st.sent_packets++;
    f->st.sent_bytes += size;
    return pn_node_receive(n, (int32_t)src, p);
}

static double udp_gap(pn_net *n, const pn_udp_spec *u)
{
    return u->pattern == PN_CBR || u->pattern == PN_ONOFF ? 1.0 / u->rate_pps : ps_exponential(n->rng, u->rate_pps);
}

static int udp_event(ps_engine *e, void *ctx, int64_t arg)
{
    pn_net *n = ctx;
    int32_t flow = (int32_t)(arg >> 2);
    pn_flow *f = &n->flows[flow];
    const pn_udp_spec *u = &f->udp;
    double now = engine_now(e);
    if (u->stop_s > 0 && now >= u->stop_s) return PS_OK;
    switch (arg & 3) {
    case UDP_SEND:
        if (u->pattern == PN_ONOFF && !f->on) return PS_OK;
        if (u->pattern == PN_RPC) return udp_send(n, flow, (uint32_t)u->src, (uint32_t)u->dst, u->size, PN_REQUEST,
                                                  f->rpc_seq++);
        {
            int r = udp_send(n, flow, (uint32_t)u->src, (uint32_t)u->dst, u->size, PN_UDP, 0);
            if (r != PS_OK) return r;
        }
        return engine_schedule(e, udp_gap(n, u), udp_event, n, (int64_t)flow << 2 | UDP_SEND);
    case UDP_TOGGLE: {
        f->on = !f->on;
        double stay = ps_exponential(n->rng, 1.0 / (f->on ? u->on_s : u->off_s));
        int r = engine_schedule(e, stay, udp_event, n, (int64_t)flow << 2 | UDP_TOGGLE);
        if (r != PS_OK || !f->on) return r;
        return engine_schedule(e, 0, udp_event, n, (int64_t)flow << 2 | UDP_SEND);
    }
    default: /* the server's reply, after its service */
        return udp_send(n, flow, (uint32_t)u->dst, (uint32_t)u->src, u->reply_size, PN_REPLY, 0);
    }
}

static int deliver(pn_net *n, pn_node *nd, pn_pkt *p)
{
    pn_flow *f = &n->flows[p->flow];
    double now = engine_now(n->e);
    if (p->kind == PN_DATA || p->kind == PN_ACK) return pn_tcp_deliver(n, p);
    int r = PS_OK;
    if (p->kind == PN_REQUEST) { /* the RPC server works on it, on its node's CPU, then replies */
        double start = fmax(now, nd->cpu_free_at);
        nd->cpu_free_at = start + f->udp.service_s;
        r = engine_schedule(n->e, nd->cpu_free_at - now, udp_event, n, (int64_t)p->flow << 2 | UDP_REPLY);
    } else {
        f->st.delivered_packets++;
        f->st.delivered_bytes += p->size;
        f->st.delay_sum_s += now - p->sent_s;
        if (f->st.first_s == 0) f->st.first_s = now;
        f->st.last_s = now;
        if (p->kind == PN_REPLY) { /* the client: one more done, the next request goes out */
            f->st.completed++;
            r = engine_schedule(n->e, 0, udp_event, n, (int64_t)p->flow << 2 | UDP_SEND);
        }
    }
    pn_pkt_free(n, p);
    return r;
}

static int add_flow(pn_net *n, int32_t cls)
{
    if (grow((void **)&n->flows, &n->cap_flows, n->nflows + 1, sizeof *n->flows) != PS_OK) return PS_ENOMEM;
    int32_t *fc = ps_realloc(n->flow_class, (size_t)n->cap_flows * sizeof *fc);
    if (fc == NULL) return PS_ENOMEM;
    n->flow_class = fc;
    n->flow_class[n->nflows] = cls;
    memset(&n->flows[n->nflows], 0, sizeof n->flows[0]);
    return n->nflows++;
}

int32_t pn_add_udp(pn_net *n, const pn_udp_spec *spec)
{
    if (spec->src < 0 || spec->src >= n->nnodes || spec->dst < 0 || spec->dst >= n->nnodes || spec->src == spec->dst ||
        spec->pattern > PN_RPC || spec->size < 1 || !(spec->start_s >= 0) || n->rng == NULL ||
        (spec->pattern != PN_RPC && !(spec->rate_pps > 0)) ||
        (spec->pattern == PN_ONOFF && !(spec->on_s > 0 && spec->off_s > 0)) ||
        (spec->pattern == PN_RPC && (spec->outstanding < 1 || spec->reply_size < 1 || !(spec->service_s >= 0))))
        return PS_EINVAL;
    int32_t flow = add_flow(n, spec->cls);
    if (flow < 0) return flow;
    n->flows[flow].udp = *spec;
    int what = spec->pattern == PN_ONOFF ? UDP_TOGGLE : UDP_SEND;
    int32_t starts = spec->pattern == PN_RPC ? spec->outstanding : 1;
    for (int32_t k = 0; k < starts; k++) {
        int r = engine_schedule(n->e, spec->start_s - engine_now(n->e), udp_event, n, (int64_t)flow << 2 | what);
        if (r != PS_OK) return r;
    }
    return flow;
}

int32_t pn_add_tcp(pn_net *n, const pn_tcp_spec *spec)
{
    if (spec->src < 0 || spec->src >= n->nnodes || spec->dst < 0 || spec->dst >= n->nnodes || spec->src == spec->dst ||
        spec->mss < 1 || !(spec->initial_cwnd >= 1) || !(spec->max_window >= 1) || !(spec->min_rto_s > 0) ||
        !(spec->initial_rto_s > 0) || !(spec->start_s >= 0) || spec->bytes == 0)
        return PS_EINVAL;
    int32_t flow = add_flow(n, spec->cls);
    if (flow < 0) return flow;
    n->flows[flow].is_tcp = 1;
    n->flows[flow].tcp = *spec;
    int r = pn_tcp_start(n, flow);
    return r == PS_OK ? flow : r;
}

/* --- queue traces ------------------------------------------------------------------------------------- */

static int trace_tick(ps_engine *e, void *ctx, int64_t arg)
{
    (void)arg;
    pn_net *n = ctx;
    for (int32_t i = 0; i < n->nlinks; i++) {
        pn_link *l = &n->links[i];
        if (l->trace && l->ntrace < n->trace_cap) l->trace[l->ntrace++] = l->q.n;
    }
    return engine_schedule(e, n->trace_interval_s, trace_tick, n, 0);
}

int pn_trace_queues(pn_net *n, double interval_s, int64_t capacity)
{
    if (!(interval_s > 0) || capacity < 1) return PS_EINVAL;
    for (int32_t i = 0; i < n->nlinks; i++) {
        ps_free(n->links[i].trace);
        n->links[i].trace = ps_calloc((size_t)capacity, sizeof(uint32_t));
        if (n->links[i].trace == NULL) return PS_ENOMEM;
        n->links[i].ntrace = 0;
    }
    n->trace_interval_s = interval_s;
    n->trace_cap = capacity;
    return engine_schedule(n->e, 0, trace_tick, n, 0);
}

/* --- results ---------------------------------------------------------------------------------------- */

int32_t pn_nodes(const pn_net *n) { return n->nnodes; }
int32_t pn_links(const pn_net *n) { return n->nlinks; }
int32_t pn_flows(const pn_net *n) { return n->nflows; }
uint64_t pn_unroutable(const pn_net *n) { return n->unroutable; }
uint64_t pn_packets_moved(const pn_net *n) { return n->moved; }

const pn_flow_stats *pn_get_flow(const pn_net *n, int32_t flow)
{
    if (flow < 0 || flow >= n->nflows) return NULL;
    pn_flow *f = &n->flows[flow];
    f->st.cwnd = f->cwnd;
    f->st.srtt_s = f->srtt;
    return &f->st;
}

const pn_queue_stats *pn_get_queue(const pn_net *n, int32_t link)
{
    if (link < 0 || link >= n->nlinks) return NULL;
    pn_queue *q = &n->links[link].q;
    double now = engine_now(n->e), dt = now - q->t_last;
    if (dt > 0) { /* bring the integrals up to now */
        q->st.area_packets += dt * q->n;
        q->st.area_bytes += dt * (double)q->bytes;
        q->t_last = now;
    }
    return &q->st;
}

double pn_link_busy_s(const pn_net *n, int32_t link)
{
    return link >= 0 && link < n->nlinks ? n->links[link].busy_s : 0.0;
}

uint64_t pn_link_collisions(const pn_net *n, int32_t link)
{
    return link >= 0 && link < n->nlinks ? n->links[link].collisions : 0;
}

const uint32_t *pn_queue_trace(const pn_net *n, int32_t link, int64_t *count)
{
    if (link < 0 || link >= n->nlinks) {
        *count = 0;
        return NULL;
    }
    *count = n->links[link].ntrace;
    return n->links[link].trace;
}
