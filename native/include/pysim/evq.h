/* evq.h -- pending-event queue of the discrete-event core.
 *
 * A binary min-heap keyed on (time, seq). seq is assigned by evq_push(), so
 * events due at the same time leave in the order they were pushed.
 * push and pop are O(log n); a calendar queue would make them O(1) amortised. */
#ifndef PYSIM_EVQ_H
#define PYSIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct evq evq; /* opaque */

typedef struct evq_item {
    double time;    /* simulated seconds */
    uint64_t seq;   /* tie-break, set by evq_push() */
    int64_t handle; /* caller's event id */
} evq_item;

evq *evq_new(size_t capacity_hint);                 /* NULL if out of memory */
void evq_free(evq *q);                              /* NULL is a no-op */
int evq_push(evq *q, double time, int64_t handle);  /* PS_OK, PS_ENOMEM, PS_EINVAL (NaN time) */
int evq_pop(evq *q, evq_item *out);                 /* PS_OK, PS_EEMPTY */
int evq_peek(const evq *q, evq_item *out);          /* PS_OK, PS_EEMPTY; leaves q alone */
size_t evq_size(const evq *q);
int evq_check(const evq *q); /* PS_OK when the heap property holds; O(n), for tests */

#endif
