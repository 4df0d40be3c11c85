/* station.c -- c-server station with FIFO, PS, preemptive priority or custom order.
 *
 * Two ways of keeping time, by discipline:
 *  - FIFO and CUSTOM never change a job's finish time once it starts, so each
 *    busy server has its own completion event, scheduled when its job starts:
 *    no scans, no rescheduling (the common case, and the hot path of the
 *    open networks).
 *  - PS and PRIO change finish times on every arrival, so jobs in service
 *    carry an absolute finish time and one engine event is kept for the
 *    earliest; it is replaced when that changes, and a replaced event is
 *    recognised by its generation tag and ignored.
 * Waiting jobs are kept in arrival order in an array behind a moving head (a
 * custom select function sees them copied into plain C arrays). PRIO and
 * CUSTOM scan the waiting jobs: O(n) per start; FIFO is O(1). */
#include <math.h>
#include <string.h>

#include "pysim/station.h"
#include "pysim/status.h"
#include "engine_inline.h"

typedef struct job {
    int64_t id;
    double arrival;     /* arrival time at this station */
    double remaining;   /* demand left, seconds of one server's work (as of ps_since for PS) */
    double finish;      /* PS, PRIO: absolute finish time at the current rate */
    double first_start; /* when service first began; < 0 until then (for the wait) */
    int32_t klass;
} job;

typedef struct jobvec {
    job *v;
    int64_t head, size, capacity; /* live jobs are v[head .. head+size) */
} jobvec;

struct station {
    ps_engine *e;
    int32_t servers;
    station_discipline d;
    int per_server; /* FIFO, CUSTOM: a completion event per busy server */
    station_select_fn select;
    station_depart_fn on_depart;
    void *depart_ctx;
    jobvec waiting;
    /* per-server path */
    job *slot;           /* the job on each server */
    int32_t *idle;       /* stack of idle server indices */
    int32_t nidle;
    /* earliest-finish path (PS, PRIO) */
    jobvec busy;
    uint64_t generation; /* tags the live completion event; older ones are stale */
    int scheduled;       /* a live completion event is pending */
    double next_time;
    double ps_since;     /* PS: when the jobs in service were last settled */
    /* statistics */
    double last_change;
    station_stats st;
    int logging;
    double *log_t;
    int64_t *log_n;
    int64_t log_size, log_cap;
    /* scratch arrays for the custom select callback */
    double *sel_arrival, *sel_service;
    int32_t *sel_class;
    int64_t sel_cap;
};

static int server_done(ps_engine *e, void *ctx, int64_t server);
static int earliest_done(ps_engine *e, void *ctx, int64_t generation);

/* --- job vectors --------------------------------------------------------------- */

static int jobvec_reserve(jobvec *q, int64_t extra)
{
    if (q->head + q->size + extra <= q->capacity) return PS_OK;
    if (q->head > 0 && q->head >= q->capacity / 2) { /* compact only when half is dead: O(1) amortised */
        memmove(q->v, q->v + q->head, (size_t)q->size * sizeof *q->v);
        q->head = 0;
        if (q->size + extra <= q->capacity) return PS_OK;
    }
    int64_t cap = q->capacity ? q->capacity * 2 : 16;
    while (cap < q->size + extra) cap *= 2;
    job *grown = ps_realloc(q->v, (size_t)cap * sizeof *grown);
    if (grown == NULL) return PS_ENOMEM;
    q->v = grown;
    q->capacity = cap;
    return PS_OK;
}

static void job_fill(job *j, int64_t id, double arrival, double service_s, int32_t klass)
{
    j->id = id;
    j->arrival = arrival;
    j->remaining = service_s;
    j->finish = INFINITY;
    j->first_start = -1.0;
    j->klass = klass;
}

static job *jobvec_at(jobvec *q, int64_t i) { return &q->v[q->head + i]; }

static job jobvec_remove(jobvec *q, int64_t i)
{
    job j = q->v[q->head + i];
    if (i == 0) {
        q->head++;
    } else {
        memmove(&q->v[q->head + i], &q->v[q->head + i + 1], (size_t)(q->size - i - 1) * sizeof *q->v);
    }
    q->size--;
    if (q->size == 0) q->head = 0;
    return j;
}

/* Insert keeping arrival order (reserve first). */
static void jobvec_insert_sorted(jobvec *q, job j)
{
    int64_t i = q->size;
    while (i > 0 && jobvec_at(q, i - 1)->arrival > j.arrival) i--;
    memmove(&q->v[q->head + i + 1], &q->v[q->head + i], (size_t)(q->size - i) * sizeof *q->v);
    q->v[q->head + i] = j;
    q->size++;
}

/* --- life cycle ---------------------------------------------------------------- */

station *station_new(ps_engine *e, int32_t servers, station_discipline d, station_select_fn select)
{
    if (e == NULL || servers < 1 || d < STATION_FIFO || d > STATION_CUSTOM) return NULL;
    if (d == STATION_CUSTOM && select == NULL) return NULL;
    station *s = ps_calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->e = e;
    s->servers = servers;
    s->d = d;
    s->select = select;
    s->per_server = d == STATION_FIFO || d == STATION_CUSTOM;
    if (s->per_server) {
        s->slot = ps_calloc((size_t)servers, sizeof *s->slot);
        s->idle = ps_calloc((size_t)servers, sizeof *s->idle);
        if (s->slot == NULL || s->idle == NULL) {
            station_free(s);
            return NULL;
        }
        for (int32_t i = 0; i < servers; i++) s->idle[i] = servers - 1 - i; /* server 0 is taken first */
        s->nidle = servers;
    }
    s->last_change = engine_now(e);
    s->st.since_s = s->last_change;
    return s;
}

void station_free(station *s)
{
    if (s == NULL) return;
    engine_forget(s->e, s); /* its pending completions must not run */
    ps_free(s->waiting.v);
    ps_free(s->busy.v);
    ps_free(s->slot);
    ps_free(s->idle);
    ps_free(s->log_t);
    ps_free(s->log_n);
    ps_free(s->sel_arrival);
    ps_free(s->sel_service);
    ps_free(s->sel_class);
    ps_free(s);
}

void station_on_depart(station *s, station_depart_fn fn, void *ctx)
{
    s->on_depart = fn;
    s->depart_ctx = ctx;
}

int32_t station_servers(const station *s) { return s->servers; }

static int64_t in_service(const station *s)
{
    return s->per_server ? s->servers - s->nidle : s->busy.size;
}

int64_t station_number(const station *s) { return s->waiting.size + in_service(s); }

/* --- statistics ------------------------------------------------------------------ */

/* Bring the time integrals up to now, given the jobs in service. */
static void account_with(station *s, int64_t busy)
{
    double now = engine_now(s->e), dt = now - s->last_change;
    if (dt > 0) {
        int64_t working = busy < s->servers ? busy : s->servers;
        s->st.number_integral += (double)(s->waiting.size + busy) * dt;
        s->st.busy_integral += (double)working * dt;
    }
    s->last_change = now;
}

static void account(station *s) { account_with(s, in_service(s)); }

static int log_point(station *s)
{
    if (s->log_size == s->log_cap) {
        int64_t cap = s->log_cap ? s->log_cap * 2 : 256;
        double *t = ps_realloc(s->log_t, (size_t)cap * sizeof *t);
        if (t == NULL) return PS_ENOMEM;
        s->log_t = t;
        int64_t *n = ps_realloc(s->log_n, (size_t)cap * sizeof *n);
        if (n == NULL) return PS_ENOMEM;
        s->log_n = n;
        s->log_cap = cap;
    }
    s->log_t[s->log_size] = engine_now(s->e);
    s->log_n[s->log_size] = station_number(s);
    s->log_size++;
    return PS_OK;
}

/* A job leaves: its response and wait go into the statistics. */
static void record_departure(station *s, const job *j, double now)
{
    double response = now - j->arrival;
    s->st.departures++;
    s->st.response_sum += response;
    s->st.response_sumsq += response * response;
    s->st.wait_sum += j->first_start - j->arrival;
}

/* Index of the waiting job to start next, or a negative status. */
static int64_t pick_waiting(station *s)
{
    int64_t n = s->waiting.size;
    if (s->d == STATION_PRIO) {
        int64_t best = 0;
        for (int64_t i = 1; i < n; i++)
            if (jobvec_at(&s->waiting, i)->klass < jobvec_at(&s->waiting, best)->klass) best = i;
        return best;
    }
    if (s->d != STATION_CUSTOM) return 0;
    if (n > INT32_MAX) return PS_EINVAL;
    if (n > s->sel_cap) {
        int64_t cap = n * 2;
        double *a = ps_realloc(s->sel_arrival, (size_t)cap * sizeof *a);
        if (a == NULL) return PS_ENOMEM;
        s->sel_arrival = a;
        double *b = ps_realloc(s->sel_service, (size_t)cap * sizeof *b);
        if (b == NULL) return PS_ENOMEM;
        s->sel_service = b;
        int32_t *c = ps_realloc(s->sel_class, (size_t)cap * sizeof *c);
        if (c == NULL) return PS_ENOMEM;
        s->sel_class = c;
        s->sel_cap = cap;
    }
    for (int64_t i = 0; i < n; i++) {
        job *j = jobvec_at(&s->waiting, i);
        s->sel_arrival[i] = j->arrival;
        s->sel_service[i] = j->remaining;
        s->sel_class[i] = j->klass;
    }
    int32_t k = s->select((int32_t)n, s->sel_arrival, s->sel_service, s->sel_class);
    return (k >= 0 && k < n) ? k : PS_ECALLBACK;
}

/* --- FIFO and CUSTOM: a completion event per busy server ----------------------------- */

/* Start *j on server i now. */
static int server_start(station *s, int32_t i, const job *j)
{
    s->slot[i] = *j;
    s->slot[i].first_start = engine_now(s->e);
    return engine_schedule_inline(s->e, j->remaining, server_done, s, i);
}

static int server_done(ps_engine *e, void *ctx, int64_t server)
{
    station *s = ctx;
    int32_t i = (int32_t)server;
    account_with(s, s->servers - s->nidle);
    const job *done = &s->slot[i];
    record_departure(s, done, engine_now(e));
    int64_t id = done->id; /* what the departure callback needs: the slot is reused below */
    double arrival = done->arrival;
    int32_t klass = done->klass;
    int st = PS_OK;
    if (s->waiting.size > 0) {
        int64_t k = s->d == STATION_FIFO ? 0 : pick_waiting(s);
        if (k < 0) return (int)k;
        st = server_start(s, i, jobvec_at(&s->waiting, k));
        if (k == 0) { /* the head leaves: no copy */
            s->waiting.head++;
            if (--s->waiting.size == 0) s->waiting.head = 0;
        } else {
            jobvec_remove(&s->waiting, k);
        }
    } else {
        s->idle[s->nidle++] = i;
    }
    if (st == PS_OK && s->logging) st = log_point(s);
    if (st == PS_OK && s->on_depart != NULL) st = s->on_depart(s->depart_ctx, e, id, arrival, klass);
    return st;
}

/* A job arrives at a FIFO or CUSTOM station: it starts on an idle server or
 * joins the queue. Its fields are written in place, never built on the stack
 * and copied: a copy of a freshly stored struct stalls store forwarding. */
static int arrive_per_server(station *s, int64_t id, double service_s, int32_t klass)
{
    double now = engine_now(s->e);
    if (s->nidle > 0) {
        int32_t i = s->idle[s->nidle - 1];
        job *j = &s->slot[i];
        job_fill(j, id, now, service_s, klass);
        j->first_start = now;
        int st = engine_schedule_inline(s->e, service_s, server_done, s, i);
        if (st == PS_OK) s->nidle--;
        return st;
    }
    int st = jobvec_reserve(&s->waiting, 1);
    if (st != PS_OK) return st;
    job_fill(&s->waiting.v[s->waiting.head + s->waiting.size++], id, now, service_s, klass);
    return PS_OK;
}

/* --- PS and PRIO: one event for the earliest finish ----------------------------------- */

/* Rate at which each job in service progresses. */
static double service_rate(const station *s)
{
    if (s->d == STATION_PS && s->busy.size > s->servers) return (double)s->servers / (double)s->busy.size;
    return 1.0;
}

/* PS: settle the work done at the old rate before the job count changes. */
static void ps_settle(station *s)
{
    if (s->d != STATION_PS) return;
    double now = engine_now(s->e), done = (now - s->ps_since) * service_rate(s);
    for (int64_t i = 0; i < s->busy.size; i++) {
        job *j = jobvec_at(&s->busy, i);
        j->remaining -= done;
        if (j->remaining < 0) j->remaining = 0;
    }
    s->ps_since = now;
}

/* Recompute finish times (PS) and keep one engine event at the earliest. */
static int reschedule(station *s)
{
    double now = engine_now(s->e), rate = service_rate(s), best = INFINITY;
    for (int64_t i = 0; i < s->busy.size; i++) {
        job *j = jobvec_at(&s->busy, i);
        if (s->d == STATION_PS) j->finish = now + j->remaining / rate;
        if (j->finish < best) best = j->finish;
    }
    if (s->scheduled && best == s->next_time) return PS_OK;
    s->generation++; /* any completion still pending is now stale */
    s->scheduled = 0;
    if (isinf(best)) return PS_OK;
    double delay = best > now ? best - now : 0.0;
    int st = engine_schedule_inline(s->e, delay, earliest_done, s, (int64_t)s->generation);
    if (st != PS_OK) return st;
    s->scheduled = 1;
    s->next_time = best;
    return PS_OK;
}

/* Put a job (copied from *j) into service now; the caller reserved room in busy. */
static void start_service(station *s, const job *j)
{
    double now = engine_now(s->e);
    job *in = &s->busy.v[s->busy.head + s->busy.size++];
    *in = *j;
    if (in->first_start < 0) in->first_start = now;
    in->finish = now + in->remaining;
}

/* Start waiting jobs while servers are free. */
static int fill_servers(station *s)
{
    while (s->waiting.size > 0 && s->busy.size < s->servers) {
        int64_t k = pick_waiting(s);
        if (k < 0) return (int)k;
        int st = jobvec_reserve(&s->busy, 1);
        if (st != PS_OK) return st;
        job next = jobvec_remove(&s->waiting, k);
        start_service(s, &next);
    }
    return PS_OK;
}

/* PRIO: index of the in-service job an arrival of class k would preempt, or -1. */
static int64_t preemption_victim(station *s, int32_t klass)
{
    int64_t victim = -1;
    for (int64_t i = 0; i < s->busy.size; i++) {
        job *j = jobvec_at(&s->busy, i);
        if (j->klass <= klass) continue;
        /* the lowest priority; among equals the latest arrival */
        if (victim < 0 || j->klass > jobvec_at(&s->busy, victim)->klass ||
            (j->klass == jobvec_at(&s->busy, victim)->klass && j->arrival > jobvec_at(&s->busy, victim)->arrival))
            victim = i;
    }
    return victim;
}

static int arrive_shared(station *s, const job *j)
{
    /* reserve first, so that a failed allocation leaves the station as it was */
    int starts = s->d == STATION_PS || s->busy.size < s->servers;
    int st = starts ? jobvec_reserve(&s->busy, 1) : jobvec_reserve(&s->waiting, 1);
    if (st == PS_OK && !starts && s->d == STATION_PRIO) st = jobvec_reserve(&s->busy, 1); /* a preemption */
    if (st != PS_OK) return st;
    ps_settle(s);
    double now = engine_now(s->e);
    int64_t victim = s->d == STATION_PRIO ? preemption_victim(s, j->klass) : -1;
    if (starts) {
        start_service(s, j); /* room reserved above */
    } else if (victim >= 0) {
        job out = jobvec_remove(&s->busy, victim);
        out.remaining = out.finish - now; /* work left at rate 1 */
        jobvec_insert_sorted(&s->waiting, out);
        start_service(s, j);
    } else {
        s->waiting.v[s->waiting.head + s->waiting.size++] = *j;
        return PS_OK; /* a job that only joined the queue changes no finish time */
    }
    return reschedule(s);
}

static int earliest_done(ps_engine *e, void *ctx, int64_t generation)
{
    station *s = ctx;
    if ((uint64_t)generation != s->generation) return PS_OK; /* replaced by a reschedule */
    s->scheduled = 0;
    account(s);
    ps_settle(s);
    if (s->busy.size == 0) return PS_ESTATE;
    int64_t k = 0; /* the job with the earliest finish leaves */
    for (int64_t i = 1; i < s->busy.size; i++)
        if (jobvec_at(&s->busy, i)->finish < jobvec_at(&s->busy, k)->finish) k = i;
    job j = jobvec_remove(&s->busy, k);
    record_departure(s, &j, engine_now(e));
    int st = fill_servers(s);
    if (st == PS_OK && s->logging) st = log_point(s);
    if (st == PS_OK) st = reschedule(s);
    if (st == PS_OK && s->on_depart != NULL) st = s->on_depart(s->depart_ctx, e, j.id, j.arrival, j.klass);
    return st;
}

/* --- the public operations ------------------------------------------------------------- */

int station_arrive(station *s, int64_t id, double service_s, int32_t klass)
{
    if (!(service_s >= 0) || isinf(service_s)) return PS_EINVAL;
    account(s);
    int st;
    if (s->per_server) {
        st = arrive_per_server(s, id, service_s, klass);
    } else {
        job j;
        job_fill(&j, id, engine_now(s->e), service_s, klass);
        st = arrive_shared(s, &j);
    }
    if (st != PS_OK) return st;
    s->st.arrivals++;
    int64_t n = station_number(s);
    if (n > s->st.max_number) s->st.max_number = n;
    return s->logging ? log_point(s) : PS_OK;
}

const station_stats *station_get_stats(station *s)
{
    account(s);
    return &s->st;
}

void station_reset_stats(station *s)
{
    account(s);
    memset(&s->st, 0, sizeof s->st);
    s->st.since_s = engine_now(s->e);
    s->st.max_number = station_number(s);
}

int station_log_enable(station *s)
{
    s->logging = 1;
    return log_point(s);
}

int64_t station_log(const station *s, const double **times, const int64_t **numbers)
{
    *times = s->log_t;
    *numbers = s->log_n;
    return s->log_size;
}
