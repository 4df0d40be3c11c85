/* evq.c -- binary min-heap of events keyed on (time, key). */
#include <math.h>

#include "pysim/evq.h"
#include "pysim/status.h"

struct evq {
    evq_item *items;
    size_t size, capacity;
    uint64_t next_seq;
};

#define KEY_SHIFT 62

static int before(const evq_item *a, const evq_item *b)
{
    return a->time < b->time || (a->time == b->time && a->key < b->key);
}

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

/* Double the heap's storage. PS_OK or PS_ENOMEM. */
static int grow(evq *q)
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
    if (q->size == q->capacity && grow(q) != PS_OK) return PS_ENOMEM;
    evq_item it = {time, ((uint64_t)klass << KEY_SHIFT) | q->next_seq++, fn, ctx, arg};
    size_t i = q->size++;
    while (i > 0) { /* sift up */
        size_t parent = (i - 1) / 2;
        if (!before(&it, &q->items[parent])) break;
        q->items[i] = q->items[parent];
        i = parent;
    }
    q->items[i] = it;
    return PS_OK;
}

int evq_pop(evq *q, evq_item *out)
{
    if (q->size == 0) return PS_EEMPTY;
    *out = q->items[0];
    size_t n = --q->size;
    if (n == 0) return PS_OK;
    evq_item *v = q->items;
    const evq_item last = v[n];
    size_t i = 0;
    for (;;) { /* sift the last item down from the root */
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && before(&v[child + 1], &v[child])) child++;
        if (!before(&v[child], &last)) break;
        v[i] = v[child];
        i = child;
    }
    v[i] = last;
    return PS_OK;
}

const evq_item *evq_top(const evq *q) { return q->size ? &q->items[0] : NULL; }

size_t evq_size(const evq *q) { return q->size; }

evq_item *evq_at(evq *q, size_t i) { return i < q->size ? &q->items[i] : NULL; }

int evq_check(const evq *q)
{
    for (size_t i = 1; i < q->size; i++)
        if (before(&q->items[i], &q->items[(i - 1) / 2])) return PS_ESTATE;
    return PS_OK;
}
