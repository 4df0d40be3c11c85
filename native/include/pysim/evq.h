/* evq.h -- pending-event queue of the discrete-event core.
 *
 * A binary min-heap of events keyed on (time, key). The key holds the
 * event's priority class in its top two bits and, below them, the order in
 * which evq_push() was called, so events due at the same time leave by
 * class (EVQ_FIRST, then EVQ_URGENT, then EVQ_NORMAL) and, within a class,
 * in the order they were pushed: SimPy's (time, priority, event id).
 * Each item carries its handler, so popping needs no other table.
 * push and pop are O(log n); a calendar queue would make them O(1) amortised. */
#ifndef PYSIM_EVQ_H
#define PYSIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct ps_engine;
/* Called when an event is due; the engine's clock is already its time. */
typedef int (*ps_handler)(struct ps_engine *e, void *ctx, int64_t arg);

/* Priority classes, lowest first. */
enum { EVQ_FIRST = 0, EVQ_URGENT = 1, EVQ_NORMAL = 2 };

typedef struct evq_item {
    double time;    /* simulated seconds */
    uint64_t key;   /* class << 62 | push order, set by evq_push() */
    ps_handler fn;  /* what to run */
    void *ctx;
    int64_t arg;
} evq_item;

typedef struct evq evq; /* opaque */

evq *evq_new(size_t capacity_hint); /* NULL if out of memory */
void evq_free(evq *q);              /* NULL is a no-op */
/* PS_OK, PS_ENOMEM, PS_EINVAL (NaN time, class above EVQ_NORMAL) */
int evq_push(evq *q, double time, unsigned klass, ps_handler fn, void *ctx, int64_t arg);
int evq_pop(evq *q, evq_item *out);          /* PS_OK, PS_EEMPTY */
void evq_drop_top(evq *q);                   /* remove the next item; q must not be empty */
const evq_item *evq_top(const evq *q);       /* the next item, or NULL; leaves q alone */
size_t evq_size(const evq *q);
/* The i-th item in heap order (i < evq_size), for walking every pending event. */
evq_item *evq_at(evq *q, size_t i);
int evq_check(const evq *q); /* PS_OK when the heap property holds; O(n), for tests */

#endif
