/* evq.c -- binary min-heap of events keyed on (time, key); the hot operations are in engine_inline.h. */
#include <math.h>

#include "engine_inline.h"

evq *evq_new(size_t capacity_hint)
{
    evq *q = ps_calloc(1, sizeof *q);
    if (q == NULL) goto fail;
    q->capacity = capacity_hint > 16 ? capacity_hint : 16;
    q->items = ps_malloc(q->capacity * sizeof *q->items);
    if (q->items == NULL) goto fail;
    return q;
fail:
    evq_free(q);
    return NULL;
}

void evq_free(evq *q)
{
    if (q == NULL) return;
    ps_free(q->items);
    ps_free(q);
}

int evq_grow(evq *q)
{
    size_t cap = q->capacity * 2;
    evq_item *grown = ps_realloc(q->items, cap * sizeof *grown);
    if (grown == NULL) return PS_ENOMEM;
    q->items = grown;
    q->capacity = cap;
    return PS_OK;
}

int evq_push(evq *q, double time, unsigned klass, ps_handler fn, void *ctx, int64_t arg)
{
    if (isnan(time) || klass > EVQ_NORMAL) return PS_EINVAL;
    return evq_heap_push(q, time, klass, fn, ctx, arg);
}

int evq_pop(evq *q, evq_item *out)
{
    if (q->size == 0) return PS_EEMPTY;
    evq_item_move(out, &q->items[0]);
    evq_drop_top(q);
    return PS_OK;
}

void evq_drop_top(evq *q) { evq_heap_drop_top(q); }

const evq_item *evq_top(const evq *q) { return q->size ? &q->items[0] : NULL; }

size_t evq_size(const evq *q) { return q->size; }

evq_item *evq_at(evq *q, size_t i) { return i < q->size ? &q->items[i] : NULL; }

int evq_check(const evq *q)
{
    for (size_t i = 1; i < q->size; i++)
        if (evq_item_before(&q->items[i], &q->items[(i - 1) / 2])) return PS_ESTATE;
    return PS_OK;
}
