/* net.c -- Ethernet frame arithmetic and a FIFO shared medium. */
#include <math.h>

#include "pysim/net.h"
#include "pysim/status.h"

struct ps_link {
    ps_engine *e;
    eth_params p;
    double free_at; /* when the medium is next idle */
    link_stats st;
};

int eth_check(const eth_params *p)
{
    if (!(p->bits_per_s > 0) || isinf(p->bits_per_s) || p->max_payload == 0) return PS_EINVAL;
    if (!(p->propagation_s >= 0) || isinf(p->propagation_s)) return PS_EINVAL;
    return PS_OK;
}

uint32_t eth_frame_bytes(const eth_params *p, uint32_t payload)
{
    uint32_t b = p->header_bytes + payload + p->fcs_bytes;
    return b < p->min_frame_bytes ? p->min_frame_bytes : b;
}

double eth_frame_time(const eth_params *p, uint32_t payload)
{
    return 8.0 * eth_frame_bytes(p, payload) / p->bits_per_s;
}

double eth_frame_occupancy(const eth_params *p, uint32_t payload)
{
    return 8.0 * (double)(eth_frame_bytes(p, payload) + p->preamble_bytes + p->gap_bytes) / p->bits_per_s;
}

uint64_t eth_frames(const eth_params *p, uint64_t bytes)
{
    return bytes == 0 ? 1 : (bytes + p->max_payload - 1) / p->max_payload;
}

double eth_message_occupancy(const eth_params *p, uint64_t bytes)
{
    uint64_t full = bytes / p->max_payload, rest = bytes % p->max_payload;
    double t = (double)full * eth_frame_occupancy(p, p->max_payload);
    if (rest > 0 || full == 0) t += eth_frame_occupancy(p, (uint32_t)rest);
    return t;
}

ps_link *link_new(ps_engine *e, const eth_params *p)
{
    if (e == NULL || eth_check(p) != PS_OK) return NULL;
    ps_link *l = ps_calloc(1, sizeof *l);
    if (l == NULL) return NULL;
    l->e = e;
    l->p = *p;
    return l;
}

void link_free(ps_link *l) { ps_free(l); }

int link_send(ps_link *l, uint64_t bytes, ps_handler fn, void *ctx, int64_t arg, double *arrive_s)
{
    double now = engine_now(l->e), start = l->free_at > now ? l->free_at : now;
    double busy = eth_message_occupancy(&l->p, bytes);
    /* the last frame's gap follows its arrival; it delays only the next sender */
    double last_gap = 8.0 * l->p.gap_bytes / l->p.bits_per_s;
    double arrive = start + busy - last_gap + l->p.propagation_s;
    int st = engine_schedule(l->e, arrive - now, fn, ctx, arg);
    if (st != PS_OK) return st;
    l->free_at = start + busy;
    l->st.messages++;
    l->st.frames += eth_frames(&l->p, bytes);
    l->st.bytes += bytes;
    l->st.busy_s += busy;
    if (arrive_s) *arrive_s = arrive;
    return PS_OK;
}

const link_stats *link_get_stats(const ps_link *l) { return &l->st; }
