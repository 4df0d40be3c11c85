/* engine.h -- the run loop: a clock and the pending events with their handlers.
 *
 * An event is (time, class, handler, ctx, arg). Handlers run in time order;
 * at equal times by class (EVQ_FIRST, EVQ_URGENT, EVQ_NORMAL) and then in
 * the order they were scheduled. A handler that returns anything but PS_OK
 * stops engine_run(), which returns that status.
 *
 * There is no cancellation: an owner that may withdraw an event tags it
 * (for instance with a generation number in arg) and ignores it when it
 * runs. That keeps scheduling to one heap push with no side table. */
#ifndef PYSIM_ENGINE_H
#define PYSIM_ENGINE_H

#include <stdint.h>

#include "pysim/evq.h"

typedef struct ps_engine ps_engine;

ps_engine *engine_new(double start_s); /* NULL if out of memory */
void engine_free(ps_engine *e);
double engine_now(const ps_engine *e); /* simulated seconds */

/* Schedule handler(ctx, arg) `delay` seconds from now in class EVQ_NORMAL.
 * delay >= 0 (infinity allowed: the event never comes before any other).
 * PS_OK, PS_EINVAL, PS_ENOMEM. */
int engine_schedule(ps_engine *e, double delay, ps_handler fn, void *ctx, int64_t arg);
/* The same in a given class (EVQ_FIRST, EVQ_URGENT or EVQ_NORMAL). */
int engine_schedule_in(ps_engine *e, double delay, unsigned klass, ps_handler fn, void *ctx, int64_t arg);

/* Run events while their time is < until (INFINITY: no limit, events due at
 * infinity included) and at most
 * max_events of them (< 0: no limit). Unless stopped early (by
 * engine_stop(), max_events or a failing handler), a finite `until`
 * leaves the clock at `until`. Returns PS_OK, PS_EINVAL (until is NaN or
 * earlier than now) or the first failing handler's status. */
int engine_run(ps_engine *e, double until, int64_t max_events);
/* Ask engine_run() to return after the current handler. */
void engine_stop(ps_engine *e);
/* Pending events. */
int64_t engine_pending(const ps_engine *e);
/* Time of the next pending event, or INFINITY when there is none. */
double engine_peek(const ps_engine *e);
/* Call visit(fn, ctx, arg, data) for each pending event, in no order. */
void engine_visit(ps_engine *e, void (*visit)(ps_handler fn, void *ctx, int64_t arg, void *data), void *data);
/* Make every pending event whose ctx is `ctx` do nothing when it runs
 * (an owner being freed). O(pending). */
void engine_forget(ps_engine *e, const void *ctx);
/* Drop every pending event, calling drop(fn, ctx, arg) for each (so an
 * owner can release what ctx or arg refers to). */
void engine_clear(ps_engine *e, void (*drop)(ps_handler fn, void *ctx, int64_t arg));
/* Events processed since creation. */
uint64_t engine_processed(const ps_engine *e);

#endif
