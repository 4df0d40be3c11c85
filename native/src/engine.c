/* engine.c -- run loop over evq with a slot table for handlers and cancellation.
 *
 * A handle is (generation << 32 | slot), so a stale handle to a reused slot
 * is recognised and refused by engine_cancel(). */
#include <math.h>

#include "pysim/engine.h"
#include "pysim/status.h"

typedef struct slot {
    ps_handler fn;  /* NULL while the slot is free */
    void *ctx;
    int64_t arg;
    uint32_t generation;
    int cancelled;
    uint32_t next_free;
} slot;

#define NO_SLOT UINT32_MAX

struct ps_engine {
    evq *q;
    slot *slots;
    uint32_t nslots, capacity, free_head;
    double now;
    int stop;
    int64_t pending;
    uint64_t processed;
};

ps_engine *engine_new(void)
{
    ps_engine *e = ps_calloc(1, sizeof *e);
    if (e == NULL) goto fail;
    e->q = evq_new(64);
    if (e->q == NULL) goto fail;
    e->free_head = NO_SLOT;
    return e;
fail:
    engine_free(e);
    return NULL;
}

void engine_free(ps_engine *e)
{
    if (e == NULL) return;
    evq_free(e->q);
    ps_free(e->slots);
    ps_free(e);
}

double engine_now(const ps_engine *e) { return e->now; }
int64_t engine_pending(const ps_engine *e) { return e->pending; }
uint64_t engine_processed(const ps_engine *e) { return e->processed; }
void engine_stop(ps_engine *e) { e->stop = 1; }

/* The slow path of take_slot(): a fresh slot, growing the table if needed. */
static int new_slot(ps_engine *e, uint32_t *out)
{
    if (e->nslots == e->capacity) {
        uint32_t cap = e->capacity ? e->capacity * 2 : 64;
        if (cap <= e->capacity) return PS_ENOMEM; /* 2^32 pending events */
        slot *grown = ps_realloc(e->slots, (size_t)cap * sizeof *grown);
        if (grown == NULL) return PS_ENOMEM;
        e->slots = grown;
        e->capacity = cap;
    }
    *out = e->nslots++;
    e->slots[*out].generation = 0;
    return PS_OK;
}

/* A free slot: the free list's head in the common case. */
static int take_slot(ps_engine *e, uint32_t *out)
{
    if (e->free_head == NO_SLOT) return new_slot(e, out);
    *out = e->free_head;
    e->free_head = e->slots[*out].next_free;
    return PS_OK;
}

static void release_slot(ps_engine *e, uint32_t i)
{
    e->slots[i].fn = NULL;
    e->slots[i].generation++;
    e->slots[i].next_free = e->free_head;
    e->free_head = i;
}

int engine_schedule(ps_engine *e, double delay, ps_handler fn, void *ctx, int64_t arg,
                    int64_t *handle)
{
    if (!(delay >= 0) || isinf(delay) || fn == NULL) return PS_EINVAL;
    uint32_t i;
    int st = take_slot(e, &i);
    if (st != PS_OK) return st;
    st = evq_push(e->q, e->now + delay, (int64_t)i);
    if (st != PS_OK) {
        release_slot(e, i);
        return st;
    }
    slot *s = &e->slots[i];
    s->fn = fn;
    s->ctx = ctx;
    s->arg = arg;
    s->cancelled = 0;
    e->pending++;
    if (handle != NULL) *handle = ((int64_t)s->generation << 32) | (int64_t)i;
    return PS_OK;
}

int engine_cancel(ps_engine *e, int64_t handle)
{
    if (handle < 0) return PS_EINVAL;
    uint32_t i = (uint32_t)(handle & 0xffffffff);
    uint32_t gen = (uint32_t)((uint64_t)handle >> 32);
    if (i >= e->nslots) return PS_EINVAL;
    slot *s = &e->slots[i];
    if (s->fn == NULL || s->generation != gen || s->cancelled) return PS_EINVAL;
    s->cancelled = 1;
    e->pending--;
    return PS_OK;
}

/* Drop cancelled events from the top of the heap. */
static void skip_cancelled(ps_engine *e)
{
    evq_item top;
    while (evq_peek(e->q, &top) == PS_OK && e->slots[top.handle].cancelled) {
        evq_pop(e->q, &top);
        release_slot(e, (uint32_t)top.handle);
    }
}

double engine_peek(ps_engine *e)
{
    evq_item top;
    skip_cancelled(e);
    return evq_peek(e->q, &top) == PS_OK ? top.time : INFINITY;
}

int engine_run(ps_engine *e, double until, int64_t max_events)
{
    if (isnan(until) || until < e->now) return PS_EINVAL;
    e->stop = 0;
    evq_item it;
    int64_t done = 0;
    while (!e->stop && (max_events < 0 || done < max_events)) {
        if (evq_peek(e->q, &it) != PS_OK) break;
        if (it.time > until) break;
        evq_pop(e->q, &it);
        slot *sp = &e->slots[it.handle];
        /* read before the call: the handler may grow (move) the table */
        ps_handler fn = sp->fn;
        void *ctx = sp->ctx;
        int64_t arg = sp->arg;
        int cancelled = sp->cancelled;
        release_slot(e, (uint32_t)it.handle);
        if (cancelled) continue;
        e->pending--;
        e->now = it.time;
        e->processed++;
        done++;
        int st = fn(e, ctx, arg);
        if (st != PS_OK) return st;
    }
    if (!e->stop && isfinite(until) && (max_events < 0 || done < max_events)) e->now = until;
    return PS_OK;
}

void engine_clear(ps_engine *e, void (*drop)(ps_handler fn, void *ctx, int64_t arg))
{
    evq_item it;
    while (evq_pop(e->q, &it) == PS_OK) {
        slot s = e->slots[it.handle];
        release_slot(e, (uint32_t)it.handle);
        if (!s.cancelled && drop != NULL) drop(s.fn, s.ctx, s.arg);
    }
    e->pending = 0;
}
