/* pnet_queue.c -- output queues: FIFO with tail drop, RED (with ECN and the gentle variant),
 * SFQ, DRR, WFQ (self-clocked), a token bucket, and CBQ with its estimator and borrowing. */
#include <math.h>
#include <string.h>

#include "pnet_internal.h"
#include "pysim/status.h"

/* --- FIFOs ---------------------------------------------------------------------------------- */

static void fifo_push(pn_fifo *f, pn_pkt *p)
{
    p->next = NULL;
    if (f->tail) f->tail->next = p;
    else f->head = p;
    f->tail = p;
    f->n++;
    f->bytes += p->size;
}

static pn_pkt *fifo_pop(pn_fifo *f)
{
    pn_pkt *p = f->head;
    if (p == NULL) return NULL;
    f->head = p->next;
    if (f->head == NULL) f->tail = NULL;
    f->n--;
    f->bytes -= p->size;
    p->next = NULL;
    return p;
}

static pn_pkt *fifo_pop_tail(pn_fifo *f)
{
    if (f->head == NULL) return NULL;
    pn_pkt *prev = NULL, *p = f->head;
    while (p->next) {
        prev = p;
        p = p->next;
    }
    if (prev) prev->next = NULL;
    else f->head = NULL;
    f->tail = prev;
    f->n--;
    f->bytes -= p->size;
    return p;
}

/* --- bookkeeping ------------------------------------------------------------------------------ */

static void integrate(pn_queue *q, double now)
{
    double dt = now - q->t_last;
    if (dt > 0) {
        q->st.area_packets += dt * q->n;
        q->st.area_bytes += dt * (double)q->bytes;
    }
    q->t_last = now;
}

static int over_limit(const pn_queue *q, uint32_t add_bytes)
{
    return (q->spec.limit_packets && q->n + 1 > q->spec.limit_packets) ||
           (q->spec.limit_bytes && q->bytes + add_bytes > q->spec.limit_bytes);
}

static int32_t classify(const pn_queue *q, const pn_pkt *p)
{
    int32_t c = q->classify ? q->classify(p->flow, p->src, p->dst, p->size, p->kind)
                            : (q->net && q->net->flow_class && (int32_t)p->flow < q->net->nflows
                                   ? q->net->flow_class[p->flow] : -1);
    if (c < 0 || c >= q->ncls) c = q->spec.default_class;
    return c;
}

static int is_leaf(const pn_queue *q, int32_t c)
{
    for (int32_t k = 0; k < q->ncls; k++)
        if (q->spec.classes[k].parent == c) return 0;
    return 1;
}

int pn_queue_init(pn_queue *q, const pn_queue_spec *spec, double link_bps, struct pn_net *net, ps_rng *rng)
{
    memset(q, 0, sizeof *q);
    q->spec = *spec;
    q->link_bps = link_bps;
    q->net = net;
    q->rng = rng;
    switch (spec->kind) {
    case PN_FIFO: break;
    case PN_RED:
        if (!(spec->red_min >= 0 && spec->red_max > spec->red_min && spec->red_max_p > 0 && spec->red_max_p <= 1 &&
              spec->red_wq > 0 && spec->red_wq <= 1 && spec->mean_pkt_bytes > 0) || rng == NULL)
            return PS_EINVAL;
        break;
    case PN_SFQ:
        if (spec->sfq_buckets < 1 || spec->sfq_buckets > PN_MAX_CLASSES) return PS_EINVAL;
        q->ncls = (int32_t)spec->sfq_buckets;
        break;
    case PN_TBF:
        if (!(spec->tbf_rate_bps > 0 && spec->tbf_bucket_bytes > 0)) return PS_EINVAL;
        q->tbf_tokens = spec->tbf_bucket_bytes;
        break;
    case PN_DRR:
    case PN_WFQ:
    case PN_CBQ:
        if (spec->nclasses < 1 || spec->nclasses > PN_MAX_CLASSES || spec->default_class < 0 ||
            spec->default_class >= spec->nclasses)
            return PS_EINVAL;
        q->ncls = spec->nclasses;
        for (int32_t c = 0; c < q->ncls; c++) {
            const pn_class_spec *cs = &spec->classes[c];
            if (!(cs->rate_share > 0) || cs->parent >= q->ncls || cs->parent == c) return PS_EINVAL;
            if (spec->kind == PN_CBQ) {
                if (cs->rate_share > 1 || cs->priority < 0 || cs->priority > 7 || cs->maxburst < 1 ||
                    !(spec->mean_pkt_bytes > 0) || spec->cbq_gain_shift < 1 || spec->cbq_gain_shift > 16)
                    return PS_EINVAL;
                pn_cls *k = &q->cls[c];
                double w = ldexp(1.0, -spec->cbq_gain_shift);
                double pl = spec->mean_pkt_bytes * 8 / link_bps;
                double d = pl * (1 / cs->rate_share - 1);
                k->rate_bps = cs->rate_share * link_bps;
                /* maxidle lets an idle class send maxburst packets back to back at link speed */
                k->maxidle = d * (pow(1 - w, -cs->maxburst) - 1);
                k->avgidle = k->maxidle;
            }
        }
        if (spec->kind == PN_CBQ && !is_leaf(q, spec->default_class)) return PS_EINVAL;
        break;
    default: return PS_EINVAL;
    }
    return PS_OK;
}

void pn_queue_free(pn_queue *q)
{
    (void)q; /* packets still queued belong to the network's pool, freed with it */
}

/* --- RED -------------------------------------------------------------------------------------- */

static int red_admit(pn_queue *q, pn_pkt *p, double now)
{
    const pn_queue_spec *s = &q->spec;
    double len = s->red_bytes ? (double)q->bytes : (double)q->n;
    if (q->n == 0 && q->red_idle_since >= 0) { /* the average decays over the idle time */
        double pkt_time = s->mean_pkt_bytes * 8 / q->link_bps;
        double m = (now - q->red_idle_since) / pkt_time;
        q->red_avg *= pow(1 - s->red_wq, m);
        q->red_idle_since = now; /* decayed up to now; still idle unless this packet is queued */
    }
    q->red_avg = (1 - s->red_wq) * q->red_avg + s->red_wq * len;
    double avg = q->red_avg, lo = s->red_min, hi = s->red_max;
    /* as ns-2's RED (red.cc): nothing is dropped early while at most one packet waits, and the
     * first arrival after the average crosses min_th only starts the count */
    if (!(avg >= lo && q->n > 1)) {
        q->red_old = 0;
        return 0;
    }
    if ((!s->red_gentle && avg >= hi) || (s->red_gentle && avg >= 2 * hi)) {
        q->red_count = 0;
        return 1; /* forced drop */
    }
    if (!q->red_old) {
        q->red_old = 1;
        q->red_count = 1;
        return 0;
    }
    double pb = avg < hi ? s->red_max_p * (avg - lo) / (hi - lo)
                         : s->red_max_p + (1 - s->red_max_p) * (avg - hi) / hi; /* gentle */
    if (s->red_bytes) pb *= p->size / s->mean_pkt_bytes;
    q->red_count++;
    double count = (double)q->red_count, pa = count * pb >= 1 ? 1.0 : pb / (1 - count * pb);
    if (ps_uniform(q->rng) < pa) {
        q->red_count = 0;
        if (s->red_ecn && (p->ecn & PN_ECT)) {
            p->ecn |= PN_CE;
            q->st.marks++;
            return 0;
        }
        return 1;
    }
    return 0;
}

/* --- enqueue ------------------------------------------------------------------------------------ */

static uint32_t hash_flow(uint32_t flow)
{
    uint32_t h = flow * 2654435761u;
    return h ^ (h >> 16);
}

int pn_queue_enqueue(pn_queue *q, pn_pkt *p, double now)
{
    integrate(q, now);
    q->st.arrivals++;
    p->enq_s = now;
    int32_t c = 0;
    switch (q->spec.kind) {
    case PN_FIFO:
    case PN_TBF:
        p->cls = 0;
        if (over_limit(q, p->size)) goto drop;
        fifo_push(&q->q, p);
        break;
    case PN_RED:
        p->cls = 0;
        if (over_limit(q, p->size) || red_admit(q, p, now)) goto drop;
        fifo_push(&q->q, p);
        q->red_idle_since = -1; /* busy until it empties again */
        break;
    case PN_SFQ: {
        c = (int32_t)(hash_flow(p->flow) % (uint32_t)q->ncls);
        p->cls = (uint16_t)c;
        fifo_push(&q->cls[c].q, p);
        q->n++;
        q->bytes += p->size;
        if (over_limit(q, 0)) { /* full: drop from the tail of the longest bucket */
            int32_t longest = 0;
            for (int32_t k = 1; k < q->ncls; k++)
                if (q->cls[k].q.n > q->cls[longest].q.n) longest = k;
            pn_pkt *victim = fifo_pop_tail(&q->cls[longest].q);
            q->n--;
            q->bytes -= victim->size;
            q->st.drops++;
            q->st.class_drops[longest]++;
            if (victim == p) return 1;
            pn_pkt_free(q->net, victim);
        }
        return 0;
    }
    default: {
        c = classify(q, p);
        p->cls = (uint16_t)c;
        uint32_t lim = q->spec.classes[c].limit;
        if (lim && q->cls[c].q.n + 1 > lim) goto drop;
        if (over_limit(q, p->size)) {
            if (q->spec.kind == PN_CBQ) goto drop;
            /* DRR and WFQ share one buffer fairly: a full buffer drops from the longest class (as
             * ns-2's DRR does), so a class served less cannot crowd the others out */
            int32_t longest = c;
            for (int32_t k = 0; k < q->ncls; k++)
                if (q->cls[k].q.bytes > q->cls[longest].q.bytes) longest = k;
            if (longest == c || q->cls[longest].q.n == 0) goto drop;
            pn_pkt *victim = fifo_pop_tail(&q->cls[longest].q);
            pn_cls *lk = &q->cls[longest];
            lk->finish = lk->q.tail ? lk->q.tail->tag : q->wfq_vtime; /* WFQ: as if it had never come */
            q->n--;
            q->bytes -= victim->size;
            q->st.drops++;
            q->st.class_drops[longest]++;
            pn_pkt_free(q->net, victim);
        }
        if (q->spec.kind == PN_WFQ) {
            pn_cls *k = &q->cls[c];
            double start = k->q.n ? k->finish : fmax(q->wfq_vtime, k->finish);
            k->finish = start + p->size / q->spec.classes[c].rate_share;
            p->tag = k->finish;
        }
        fifo_push(&q->cls[c].q, p);
        break;
    }
    }
    if (q->spec.kind != PN_FIFO && q->spec.kind != PN_TBF && q->spec.kind != PN_RED) {
        q->n++;
        q->bytes += p->size;
    } else {
        q->n = q->q.n;
        q->bytes = q->q.bytes;
    }
    return 0;
drop:
    q->st.drops++;
    q->st.class_drops[p->cls < PN_MAX_CLASSES ? p->cls : 0]++;
    return 1;
}

/* --- CBQ ---------------------------------------------------------------------------------------- */

static int cbq_underlimit(const pn_queue *q, int32_t c, double now)
{
    const pn_cls *k = &q->cls[c];
    return k->avgidle >= 0 || now >= k->undertime;
}

/* May class c send now: underlimit itself, or borrowing from an underlimit ancestor. */
static int cbq_may_send(const pn_queue *q, int32_t c, double now, double *when)
{
    double earliest = q->cls[c].undertime;
    for (int32_t k = c; k >= 0; k = q->spec.classes[k].parent) {
        if (q->spec.classes[k].parent < 0 || cbq_underlimit(q, k, now)) return 1; /* the root is the link */
        if (q->cls[k].undertime < earliest) earliest = q->cls[k].undertime;
        if (!q->spec.classes[k].borrow) break;
    }
    if (earliest < *when) *when = earliest;
    return 0;
}

static pn_pkt *cbq_dequeue(pn_queue *q, double now, double *retry_at)
{
    double when = INFINITY;
    for (int32_t prio = 0; prio < 8; prio++) {
        int32_t *rr = &q->rr_prio[prio];
        for (int32_t step = 0; step < 2 * q->ncls + 1; step++) {
            int32_t c = (*rr + step) % q->ncls;
            pn_cls *k = &q->cls[c];
            if (q->spec.classes[c].priority != prio || k->q.n == 0) continue;
            if (!cbq_may_send(q, c, now, &when)) continue;
            /* weighted round robin: a class keeps the turn for its share of bytes, up to maxburst */
            if (!k->active) {
                k->deficit += q->spec.classes[c].rate_share * 1500.0 * q->ncls;
                k->active = 1;
            }
            if (k->deficit < k->q.head->size && k->burst > 0) { /* its share of this round is spent */
                k->active = 0;
                k->burst = 0;
                *rr = (c + 1) % q->ncls;
                step = -1; /* look again from the next class (a full circle at most, since deficits grow) */
                continue;
            }
            pn_pkt *p = fifo_pop(&k->q);
            k->deficit -= p->size;
            if (++k->burst >= q->spec.classes[c].maxburst || k->q.n == 0 || k->deficit <= 0) {
                k->burst = 0;
                k->active = 0;
                if (k->deficit < 0 || k->q.n == 0) k->deficit = 0;
                *rr = (c + 1) % q->ncls;
            } else {
                *rr = c; /* keep the turn */
            }
            return p;
        }
    }
    if (isfinite(when) && q->spec.cbq_timer_s > 0) /* an overlimit class waits for the next tick */
        when = ceil(when / q->spec.cbq_timer_s) * q->spec.cbq_timer_s;
    *retry_at = when;
    return NULL;
}

void pn_queue_sent(pn_queue *q, const pn_pkt *p, double now)
{
    if (q->spec.kind != PN_CBQ) return;
    double w = ldexp(1.0, -q->spec.cbq_gain_shift);
    for (int32_t c = p->cls; c >= 0; c = q->spec.classes[c].parent) {
        pn_cls *k = &q->cls[c];
        if (q->spec.classes[c].parent < 0) break; /* the root (the link) needs no estimator */
        double pkt_time = p->size * 8.0 / k->rate_bps;
        double idle = (now - k->last_s) - pkt_time;
        k->avgidle = (1 - w) * k->avgidle + w * idle;
        if (k->avgidle > k->maxidle) k->avgidle = k->maxidle;
        if (k->avgidle < 0) /* overlimit: wait until an idle gap would bring the average back to zero */
            k->undertime = now + (1 - w) / w * (-k->avgidle);
        else
            k->undertime = now;
        k->last_s = now;
    }
}

/* --- dequeue ----------------------------------------------------------------------------------- */

pn_pkt *pn_queue_dequeue(pn_queue *q, double now, double *retry_at)
{
    *retry_at = INFINITY;
    integrate(q, now);
    pn_pkt *p = NULL;
    switch (q->spec.kind) {
    case PN_FIFO:
    case PN_RED:
        p = fifo_pop(&q->q);
        break;
    case PN_TBF: {
        q->tbf_tokens = fmin(q->spec.tbf_bucket_bytes, q->tbf_tokens + (now - q->tbf_t) * q->spec.tbf_rate_bps / 8);
        q->tbf_t = now;
        pn_pkt *h = q->q.head;
        if (h && q->tbf_tokens >= h->size - 1e-6) { /* a millionth of a byte short is rounding, not a wait */
            p = fifo_pop(&q->q);
            q->tbf_tokens = fmax(q->tbf_tokens - p->size, 0.0);
        } else if (h) {
            *retry_at = now + fmax((h->size - q->tbf_tokens) * 8 / q->spec.tbf_rate_bps, 1e-9);
        }
        break;
    }
    case PN_SFQ:
        for (int32_t k = 0; k < q->ncls && p == NULL; k++) {
            int32_t c = (q->rr + k) % q->ncls;
            if (q->cls[c].q.n) {
                p = fifo_pop(&q->cls[c].q);
                q->rr = (c + 1) % q->ncls;
            }
        }
        break;
    case PN_DRR:
        if (q->n == 0) break;
        for (int64_t guard = 0; guard < 1000000 && p == NULL; guard++) {
            pn_cls *k = &q->cls[q->rr];
            if (k->q.n == 0) {
                k->deficit = 0;
                k->active = 0;
                q->rr = (q->rr + 1) % q->ncls;
                continue;
            }
            if (!k->active) {
                k->deficit += q->spec.classes[q->rr].rate_share;
                k->active = 1;
            }
            if (k->deficit >= k->q.head->size) {
                p = fifo_pop(&k->q);
                k->deficit -= p->size;
                if (k->q.n == 0) {
                    k->deficit = 0;
                    k->active = 0;
                    q->rr = (q->rr + 1) % q->ncls;
                }
            } else {
                k->active = 0;
                q->rr = (q->rr + 1) % q->ncls;
            }
        }
        break;
    case PN_WFQ: {
        int32_t best = -1;
        for (int32_t c = 0; c < q->ncls; c++)
            if (q->cls[c].q.n && (best < 0 || q->cls[c].q.head->tag < q->cls[best].q.head->tag)) best = c;
        if (best >= 0) {
            p = fifo_pop(&q->cls[best].q);
            q->wfq_vtime = p->tag;
        }
        break;
    }
    case PN_CBQ:
        p = cbq_dequeue(q, now, retry_at);
        break;
    }
    if (p == NULL) return NULL;
    if (q->spec.kind == PN_FIFO || q->spec.kind == PN_RED || q->spec.kind == PN_TBF) {
        q->n = q->q.n;
        q->bytes = q->q.bytes;
    } else {
        q->n--;
        q->bytes -= p->size;
    }
    if (q->n == 0) q->red_idle_since = now;
    q->st.departures++;
    q->st.bytes_out += p->size;
    q->st.class_departures[p->cls < PN_MAX_CLASSES ? p->cls : 0]++;
    q->st.class_bytes[p->cls < PN_MAX_CLASSES ? p->cls : 0] += p->size;
    return p;
}
