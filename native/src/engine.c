/* engine.c -- the run loop over evq. */
#include <math.h>

#include "engine_inline.h"

ps_engine *engine_new(double start_s)
{
    if (!isfinite(start_s)) return NULL;
    ps_engine *e = ps_calloc(1, sizeof *e);
    if (e == NULL) goto fail;
    e->q = evq_new(64);
    if (e->q == NULL) goto fail;
    e->now = start_s;
    return e;
fail:
    engine_free(e);
    return NULL;
}

void engine_free(ps_engine *e)
{
    if (e == NULL) return;
    evq_free(e->q);
    ps_free(e);
}

double engine_now(const ps_engine *e) { return e->now; }
int64_t engine_pending(const ps_engine *e) { return (int64_t)evq_size(e->q); }
uint64_t engine_processed(const ps_engine *e) { return e->processed; }
void engine_stop(ps_engine *e) { e->stop = 1; }

int engine_schedule_in(ps_engine *e, double delay, unsigned klass, ps_handler fn, void *ctx, int64_t arg)
{
    if (!(delay >= 0) || fn == NULL) return PS_EINVAL;
    return evq_push(e->q, e->now + delay, klass, fn, ctx, arg);
}

int engine_schedule(ps_engine *e, double delay, ps_handler fn, void *ctx, int64_t arg)
{
    if (fn == NULL) return PS_EINVAL;
    return engine_schedule_inline(e, delay, fn, ctx, arg);
}

double engine_peek(const ps_engine *e)
{
    const evq_item *top = evq_top(e->q);
    return top ? top->time : INFINITY;
}

/* Pop the next event and run its handler. The fields are read in place, not
 * through a copy of the item (see engine_inline.h on store forwarding). */
static int run_next(ps_engine *e, const evq_item *top)
{
    ps_handler fn = top->fn;
    void *ctx = top->ctx;
    int64_t arg = top->arg;
    e->now = top->time;
    evq_heap_drop_top(e->q);
    e->processed++;
    return fn(e, ctx, arg);
}

int engine_run(ps_engine *e, double until, int64_t max_events)
{
    if (isnan(until) || until < e->now) return PS_EINVAL;
    e->stop = 0;
    int64_t done = 0;
    const evq_item *top;
    const int bounded = !isinf(until); /* an infinite `until` also runs events due at infinity */
    if (!bounded && max_events < 0) { /* the common case, with nothing to count */
        while (!e->stop && (top = evq_top(e->q)) != NULL) {
            int st = run_next(e, top);
            if (st != PS_OK) return st;
        }
        return PS_OK;
    }
    while (!e->stop && (max_events < 0 || done < max_events) && (top = evq_top(e->q)) != NULL
           && (top->time < until || !bounded)) {
        done++;
        int st = run_next(e, top);
        if (st != PS_OK) return st;
    }
    if (!e->stop && bounded && (max_events < 0 || done < max_events)) e->now = until;
    return PS_OK;
}

void engine_visit(ps_engine *e, void (*visit)(ps_handler fn, void *ctx, int64_t arg, void *data), void *data)
{
    for (size_t i = 0; i < evq_size(e->q); i++) {
        evq_item *it = evq_at(e->q, i);
        visit(it->fn, it->ctx, it->arg, data);
    }
}

/* A handler that does nothing: what a forgotten event runs. */
static int forgotten(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e, (void)ctx, (void)arg;
    return PS_OK;
}

void engine_forget(ps_engine *e, const void *ctx)
{
    for (size_t i = 0; i < evq_size(e->q); i++) {
        evq_item *it = evq_at(e->q, i);
        if (it->ctx == ctx) {
            it->fn = forgotten;
            it->ctx = NULL;
        }
    }
}

void engine_clear(ps_engine *e, void (*drop)(ps_handler fn, void *ctx, int64_t arg))
{
    evq_item it;
    while (evq_pop(e->q, &it) == PS_OK)
        if (drop != NULL) drop(it.fn, it.ctx, it.arg);
}
