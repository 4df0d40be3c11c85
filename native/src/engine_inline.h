/* engine_inline.h -- the engine's and the event heap's layout, and their hot
 * operations inline, for the core's own modules.
 *
 * The public engine.h and evq.h keep both types opaque. A station schedules an
 * event on every arrival and departure, and the run loop removes one per
 * event; as calls into other files these two operations cost about a fifth of
 * an M/M/1 event (the calls, their register saves and checks the caller has
 * already made), so the stations and the run loop use these inline versions.
 *
 * Items move field by field, with the same 8-byte loads and stores everywhere:
 * a 16-byte load of an item written a moment before by 8-byte stores (or the
 * reverse, as a struct copied through the stack gives) cannot be forwarded
 * from the store buffer and stalls the event loop. */
#ifndef PYSIM_ENGINE_INLINE_H
#define PYSIM_ENGINE_INLINE_H

#include "pysim/engine.h"
#include "pysim/status.h"

struct evq {
    evq_item *items;
    size_t size, capacity;
    uint64_t next_seq;
};

struct ps_engine {
    evq *q;
    double now;
    int stop;
    uint64_t processed;
};

#define EVQ_KEY_SHIFT 62

/* Double the heap's storage (evq.c). PS_OK or PS_ENOMEM. */
int evq_grow(evq *q);

static inline void evq_item_move(evq_item *to, const evq_item *from)
{
    to->time = from->time;
    to->key = from->key;
    to->fn = from->fn;
    to->ctx = from->ctx;
    to->arg = from->arg;
}

static inline int evq_item_before(const evq_item *a, const evq_item *b)
{
    return a->time < b->time || (a->time == b->time && a->key < b->key);
}

/* evq_push without its argument checks: time is not NaN, klass <= EVQ_NORMAL. */
static inline int evq_heap_push(evq *q, double time, unsigned klass, ps_handler fn, void *ctx, int64_t arg)
{
    if (q->size == q->capacity && evq_grow(q) != PS_OK) return PS_ENOMEM;
    const uint64_t key = ((uint64_t)klass << EVQ_KEY_SHIFT) | q->next_seq++;
    evq_item *v = q->items;
    size_t i = q->size++;
    while (i > 0) { /* sift up */
        size_t parent = (i - 1) / 2;
        if (!(time < v[parent].time || (time == v[parent].time && key < v[parent].key))) break;
        evq_item_move(&v[i], &v[parent]);
        i = parent;
    }
    v[i].time = time;
    v[i].key = key;
    v[i].fn = fn;
    v[i].ctx = ctx;
    v[i].arg = arg;
    return PS_OK;
}

/* Remove the top item; q is not empty. */
static inline void evq_heap_drop_top(evq *q)
{
    size_t n = --q->size;
    if (n == 0) return;
    evq_item *v = q->items;
    evq_item last;
    evq_item_move(&last, &v[n]);
    size_t i = 0;
    for (;;) { /* sift the last item down from the root */
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && evq_item_before(&v[child + 1], &v[child])) child++;
        if (!evq_item_before(&v[child], &last)) break;
        evq_item_move(&v[i], &v[child]);
        i = child;
    }
    evq_item_move(&v[i], &last);
}

/* engine_schedule for a handler the caller knows is not NULL. */
static inline int engine_schedule_inline(ps_engine *e, double delay, ps_handler fn, void *ctx, int64_t arg)
{
    if (!(delay >= 0)) return PS_EINVAL;
    return evq_heap_push(e->q, e->now + delay, EVQ_NORMAL, fn, ctx, arg);
}

#endif
