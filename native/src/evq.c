/* evq.c -- binary min-heap of (time, seq, handle). */
#include <math.h>

#include "pysim/evq.h"
#include "pysim/status.h"

struct evq {
    evq_item *items;
    size_t size, capacity;
    uint64_t next_seq;
};

static int before(const evq_item *a, const evq_item *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
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

int evq_push(evq *q, double time, int64_t handle)
{
    if (isnan(time)) return PS_EINVAL;
    if (q->size == q->capacity && grow(q) != PS_OK) return PS_ENOMEM;
    evq_item it = {time, q->next_seq++, handle};
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
    evq_item last = q->items[--q->size];
    size_t i = 0, n = q->size;
    for (;;) { /* sift the last item down from the root */
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && before(&q->items[child + 1], &q->items[child])) child++;
        if (!before(&q->items[child], &last)) break;
        q->items[i] = q->items[child];
        i = child;
    }
    if (n > 0) q->items[i] = last;
    return PS_OK;
}

int evq_peek(const evq *q, evq_item *out)
{
    if (q->size == 0) return PS_EEMPTY;
    *out = q->items[0];
    return PS_OK;
}

size_t evq_size(const evq *q) { return q->size; }

int evq_check(const evq *q)
{
    for (size_t i = 1; i < q->size; i++)
        if (before(&q->items[i], &q->items[(i - 1) / 2])) return PS_ESTATE;
    return PS_OK;
}
