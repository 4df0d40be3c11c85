/* qnet.c -- open queueing networks from stations, sources and a router. */
#include <math.h>
#include <string.h>

#include "pysim/qnet.h"
#include "pysim/status.h"
#include "engine_inline.h"

typedef struct net {
    const qnet_spec *spec;
    ps_engine *e;
    station **st;
    ps_rng *rng;
    /* entry time of each job in the network, indexed by job id */
    double *entry;
    int64_t njobs, cap, left, measured_from;
    double window_start, last_change, number_integral;
    int64_t in_network;
    qnet_result *out;
    /* trace mode */
    const double *ia, *svc;
    int64_t trace_n, trace_next;
} net;

static void net_account(net *n)
{
    double now = engine_now(n->e);
    if (n->left >= n->measured_from) n->number_integral += (double)n->in_network * (now - n->last_change);
    n->last_change = now;
}

static int new_job(net *n, int64_t *id)
{
    if (n->njobs == n->cap) {
        int64_t cap = n->cap ? n->cap * 2 : 1024;
        double *grown = ps_realloc(n->entry, (size_t)cap * sizeof *grown);
        if (grown == NULL) return PS_ENOMEM;
        n->entry = grown;
        n->cap = cap;
    }
    n->entry[n->njobs] = engine_now(n->e);
    *id = n->njobs++;
    net_account(n);
    n->in_network++;
    return PS_OK;
}

/* Warm-up over: start the measurement window. */
static void begin_window(net *n)
{
    int32_t K = n->spec ? n->spec->stations : 1;
    for (int32_t k = 0; k < K; k++) station_reset_stats(n->st[k]);
    n->window_start = engine_now(n->e);
    n->last_change = n->window_start;
    n->number_integral = 0;
}

/* A job leaves the network having spent `sojourn` seconds in it. */
static int leave(net *n, double sojourn)
{
    net_account(n);
    n->in_network--;
    n->left++;
    if (n->left > n->measured_from) {
        double w = sojourn;
        n->out->departures++;
        n->out->sojourn_sum += w;
        n->out->sojourn_sumsq += w * w;
    }
    if (n->left == n->measured_from) begin_window(n);
    return PS_OK;
}

static int routed(void *ctx, ps_engine *e, int64_t job, double arrival_s, int32_t klass)
{
    (void)arrival_s;
    net *n = ctx;
    const qnet_spec *sp = n->spec;
    int32_t K = sp->stations;
    /* station index travels in klass; all jobs have equal priority otherwise */
    int32_t from = klass;
    int st = PS_OK;
    if (sp->route != NULL) {
        double u = ps_uniform(n->rng), acc = 0;
        for (int32_t j = 0; j < K; j++) {
            acc += sp->route[from * K + j];
            if (u < acc) {
                double svc = ps_exponential(n->rng, sp->service_rate[j]);
                (void)e;
                return station_arrive(n->st[j], job, svc, j);
            }
        }
    }
    st = leave(n, engine_now(e) - n->entry[job]);
    if (n->left >= sp->departures + sp->warmup) engine_stop(e);
    return st;
}

static int external_arrival(ps_engine *e, void *ctx, int64_t k)
{
    net *n = ctx;
    const qnet_spec *sp = n->spec;
    int64_t id;
    int st = new_job(n, &id);
    if (st != PS_OK) return st;
    st = station_arrive(n->st[k], id, ps_exponential(n->rng, sp->service_rate[k]), (int32_t)k);
    if (st != PS_OK) return st;
    return engine_schedule_inline(e, ps_exponential(n->rng, sp->arrival_rate[k]), external_arrival, n, k);
}

static int validate(const qnet_spec *sp)
{
    if (sp->stations < 1 || sp->departures < 1 || sp->warmup < 0) return PS_EINVAL;
    double total = 0;
    for (int32_t k = 0; k < sp->stations; k++) {
        if (sp->servers[k] < 1 || !(sp->service_rate[k] > 0) || isinf(sp->service_rate[k]))
            return PS_EINVAL;
        if (!(sp->arrival_rate[k] >= 0) || isinf(sp->arrival_rate[k])) return PS_EINVAL;
        if (sp->discipline && (sp->discipline[k] < STATION_FIFO || sp->discipline[k] > STATION_PS))
            return PS_EINVAL;
        total += sp->arrival_rate[k];
        if (sp->route) {
            double row = 0;
            for (int32_t j = 0; j < sp->stations; j++) {
                double p = sp->route[k * sp->stations + j];
                if (!(p >= 0) || p > 1) return PS_EINVAL;
                row += p;
            }
            if (row > 1 + 1e-12) return PS_EINVAL;
        }
    }
    return total > 0 ? PS_OK : PS_EINVAL;
}

static void finish(net *n, qnet_result *out, station_stats *stats_out, int32_t K)
{
    net_account(n);
    out->number_integral = n->number_integral;
    out->window_s = engine_now(n->e) - n->window_start;
    out->throughput = out->window_s > 0 ? (double)out->departures / out->window_s : 0;
    out->events = engine_processed(n->e);
    if (stats_out)
        for (int32_t k = 0; k < K; k++) stats_out[k] = *station_get_stats(n->st[k]);
}

int qnet_run(const qnet_spec *sp, ps_rng *rng, qnet_result *out, station_stats *stats_out)
{
    int st = validate(sp);
    if (st != PS_OK) return st;
    int32_t K = sp->stations;
    net n;
    memset(&n, 0, sizeof n);
    memset(out, 0, sizeof *out);
    n.spec = sp;
    n.rng = rng;
    n.out = out;
    n.measured_from = sp->warmup;
    st = PS_ENOMEM;
    n.e = engine_new(0.0);
    n.st = ps_calloc((size_t)K, sizeof *n.st);
    if (n.e == NULL || n.st == NULL) goto done;
    for (int32_t k = 0; k < K; k++) {
        station_discipline d = sp->discipline ? (station_discipline)sp->discipline[k] : STATION_FIFO;
        n.st[k] = station_new(n.e, sp->servers[k], d, NULL);
        if (n.st[k] == NULL) goto done;
        station_on_depart(n.st[k], routed, &n);
    }
    for (int32_t k = 0; k < K; k++) {
        if (sp->arrival_rate[k] <= 0) continue;
        st = engine_schedule_inline(n.e, ps_exponential(rng, sp->arrival_rate[k]), external_arrival, &n, k);
        if (st != PS_OK) goto done;
    }
    if (sp->warmup == 0) begin_window(&n);
    st = engine_run(n.e, INFINITY, -1);
    if (st == PS_OK) finish(&n, out, stats_out, K);
done:
    if (n.st)
        for (int32_t k = 0; k < K; k++) station_free(n.st[k]);
    ps_free(n.st);
    engine_free(n.e);
    ps_free(n.entry);
    return st;
}

/* Trace mode: arrivals read from arrays. One station: its response times are
 * the sojourns and its time integral of jobs present is the network's, so
 * the trace path reads the station's statistics and keeps no books of its own. */
/* Job i arrives; the next one is scheduled (the trace is checked as it is read). */
static int trace_arrival(ps_engine *e, void *ctx, int64_t i)
{
    net *n = ctx;
    int st = station_arrive(n->st[0], i, n->svc[i], 0); /* PS_EINVAL for a bad service time */
    if (st != PS_OK || i + 1 >= n->trace_n) return st;
    double gap = n->ia[i + 1];
    if (!(gap >= 0) || isinf(gap)) return PS_EINVAL;
    return engine_schedule_inline(e, gap, trace_arrival, n, i + 1);
}

int qnet_run_trace(int32_t servers, station_discipline d, const double *interarrival,
                   const double *service, int64_t n_jobs, qnet_result *out,
                   station_stats *stats_out)
{
    if (servers < 1 || n_jobs < 1 || d < STATION_FIFO || d > STATION_PRIO) return PS_EINVAL;
    if (!(interarrival[0] >= 0) || isinf(interarrival[0])) return PS_EINVAL;
    net n;
    station *one = NULL;
    memset(&n, 0, sizeof n);
    memset(out, 0, sizeof *out);
    n.out = out;
    n.ia = interarrival;
    n.svc = service;
    n.trace_n = n_jobs;
    n.st = &one;
    int st = PS_ENOMEM;
    n.e = engine_new(0.0);
    if (n.e == NULL) goto done;
    one = station_new(n.e, servers, d, NULL);
    if (one == NULL) goto done;
    begin_window(&n);
    st = engine_schedule_inline(n.e, interarrival[0], trace_arrival, &n, 0);
    if (st == PS_OK) st = engine_run(n.e, INFINITY, -1);
    if (st == PS_OK) {
        const station_stats *ss = station_get_stats(one);
        out->departures = (int64_t)ss->departures;
        out->sojourn_sum = ss->response_sum;
        out->sojourn_sumsq = ss->response_sumsq;
        finish(&n, out, stats_out, 1);
        out->number_integral = ss->number_integral;
    }
done:
    station_free(one);
    engine_free(n.e);
    ps_free(n.entry);
    return st;
}
