/* engine.h -- the run loop: a clock, the pending events, and their handlers.
 *
 * An event is (time, handler, ctx, arg). engine_schedule() returns a handle
 * that engine_cancel() accepts until the event has run. Cancelled events
 * stay in the heap and are skipped when popped (lazy deletion), so cancel
 * is O(1). Handlers run in (time, schedule order); a handler that returns
 * anything but PS_OK stops engine_run(), which returns that status. */
#ifndef PYSIM_ENGINE_H
#define PYSIM_ENGINE_H

#include <stdint.h>

#include "pysim/evq.h"

typedef struct ps_engine ps_engine;

/* Called when an event is due; e->now is already its time. */
typedef int (*ps_handler)(ps_engine *e, void *ctx, int64_t arg);

ps_engine *engine_new(void); /* NULL if out of memory */
void engine_free(ps_engine *e);
double engine_now(const ps_engine *e); /* simulated seconds */

/* Schedule handler(ctx, arg) `delay` seconds from now. delay >= 0 and finite.
 * *handle (if not NULL) receives the id for engine_cancel().
 * PS_OK, PS_EINVAL, PS_ENOMEM. */
int engine_schedule(ps_engine *e, double delay, ps_handler fn, void *ctx, int64_t arg,
                    int64_t *handle);
/* Cancel a pending event. PS_OK, or PS_EINVAL when it is unknown, has run
 * or was already cancelled. */
int engine_cancel(ps_engine *e, int64_t handle);

/* Run events while their time is <= until (use INFINITY for no limit) and
 * at most max_events of them (< 0: no limit). Unless stopped early (by
 * engine_stop() or max_events), a finite `until` leaves the clock at
 * `until`; an infinite one leaves it at the last event run. Returns PS_OK or the first failing handler's status. */
int engine_run(ps_engine *e, double until, int64_t max_events);
/* Ask engine_run() to return after the current handler. */
void engine_stop(ps_engine *e);
/* Pending, not cancelled events. */
int64_t engine_pending(const ps_engine *e);
/* Time of the next pending event, or INFINITY when there is none. */
double engine_peek(ps_engine *e);
/* Drop every pending event, calling drop(fn, ctx, arg) for each one not
 * cancelled (so an owner can release what ctx or arg refers to). */
void engine_clear(ps_engine *e, void (*drop)(ps_handler fn, void *ctx, int64_t arg));
/* Events processed since creation. */
uint64_t engine_processed(const ps_engine *e);

#endif
