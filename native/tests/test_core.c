/* Tests of the event queue, the engine and allocation-failure handling. */
#include <stdlib.h>

#include "check.h"
#include "pysim/engine.h"
#include "pysim/evq.h"
#include "pysim/rng.h"
#include "pysim/status.h"

static int noop(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e, (void)ctx, (void)arg;
    return PS_OK;
}

static void test_evq_order(void)
{
    evq *q = evq_new(0);
    uint64_t seed = 1;
    SPLITMIX_RNG(r, seed);
    for (int64_t i = 0; i < 5000; i++)
        evq_push(q, (double)ps_below(&r, 50), (unsigned)ps_below(&r, 3), noop, NULL, i);
    CHECK(evq_check(q) == PS_OK, "evq: heap property after 5000 pushes");
    evq_item prev = {-1, 0, NULL, NULL, -1}, it;
    int sorted = 1;
    while (evq_pop(q, &it) == PS_OK) {
        /* equal times leave by class, then in push order: args were pushed in increasing order */
        unsigned k = (unsigned)(it.key >> 62), pk = (unsigned)(prev.key >> 62);
        if (it.time < prev.time || (it.time == prev.time && (k < pk || (k == pk && it.arg < prev.arg))))
            sorted = 0;
        prev = it;
    }
    CHECK(sorted, "evq: pops by time, then class, then insertion order");
    CHECK(evq_pop(q, &it) == PS_EEMPTY && evq_top(q) == NULL, "evq: pop on empty gives PS_EEMPTY");
    CHECK(evq_push(q, NAN, EVQ_NORMAL, noop, NULL, 1) == PS_EINVAL, "evq: NaN time rejected");
    CHECK(evq_push(q, 1.0, 3, noop, NULL, 1) == PS_EINVAL, "evq: unknown class rejected");
    evq_free(q);
    evq_free(NULL);
}

static int log_handler(ps_engine *e, void *ctx, int64_t arg)
{
    int64_t *log = ctx;
    log[++log[0]] = arg;
    (void)e;
    return PS_OK;
}

static int failing_handler(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e, (void)ctx, (void)arg;
    return PS_ECALLBACK;
}

static int stopping_handler(ps_engine *e, void *ctx, int64_t arg)
{
    (void)ctx, (void)arg;
    engine_stop(e);
    return PS_OK;
}

static void test_engine(void)
{
    ps_engine *e = engine_new(0.0);
    int64_t log[16] = {0};
    engine_schedule(e, 2.0, log_handler, log, 1);
    engine_schedule(e, 1.0, log_handler, log, 2);
    engine_schedule(e, 1.0, log_handler, log, 3);
    engine_schedule_in(e, 1.0, EVQ_URGENT, log_handler, log, 5);
    engine_schedule(e, 3.0, log_handler, log, 6);
    engine_schedule(e, 5.0, log_handler, log, 4);
    CHECK(engine_pending(e) == 6, "engine: 6 pending");
    CHECK(engine_peek(e) == 1.0, "engine: peek gives the next time");
    CHECK(engine_run(e, 3.0, -1) == PS_OK, "engine: run until 3");
    CHECK(log[0] == 4 && log[1] == 5 && log[2] == 2 && log[3] == 3 && log[4] == 1,
          "engine: urgent first at t=1, then schedule order, then t=2; t=3 left for later");
    CHECK(engine_now(e) == 3.0, "engine: clock at until=3 afterwards");
    CHECK(engine_run(e, INFINITY, -1) == PS_OK && log[5] == 6 && log[6] == 4 && engine_now(e) == 5.0,
          "engine: rest runs, clock at last event");
    CHECK(engine_schedule(e, -1.0, log_handler, log, 0) == PS_EINVAL, "engine: negative delay rejected");
    CHECK(engine_schedule(e, NAN, log_handler, log, 0) == PS_EINVAL, "engine: NaN delay rejected");
    CHECK(engine_run(e, 1.0, -1) == PS_EINVAL, "engine: until in the past rejected");
    engine_schedule(e, 1.0, failing_handler, NULL, 0);
    CHECK(engine_run(e, INFINITY, -1) == PS_ECALLBACK, "engine: a failing handler's status comes back");
    engine_schedule(e, 1.0, stopping_handler, NULL, 0);
    engine_schedule(e, 2.0, log_handler, log, 9);
    CHECK(engine_run(e, INFINITY, -1) == PS_OK && engine_pending(e) == 1, "engine: stop leaves later events pending");
    CHECK(engine_run(e, INFINITY, 0) == PS_OK && engine_pending(e) == 1, "engine: max_events=0 runs nothing");
    int before = (int)log[0];
    engine_forget(e, log);
    CHECK(engine_run(e, INFINITY, -1) == PS_OK && log[0] == before, "engine: a forgotten event does nothing");
    engine_schedule(e, INFINITY, log_handler, log, 7);
    CHECK(engine_run(e, INFINITY, -1) == PS_OK && log[log[0]] == 7 && isinf(engine_now(e)),
          "engine: an event due at infinity runs when nothing bounds the run");
    engine_free(e);
    CHECK(engine_new(NAN) == NULL && engine_new(INFINITY) == NULL, "engine: the start time must be finite");
    e = engine_new(10.0);
    CHECK(engine_now(e) == 10.0, "engine: starts at the given time");
    engine_free(e);
}

static void test_alloc_failures(void)
{
    /* after an injected failure the engine must still run exactly the events it accepted */
    int consistent = 1;
    for (long k = 0; k < 8; k++) {
        ps_fail_after(k);
        ps_engine *e = engine_new(0.0);
        int64_t log[300] = {0};
        int accepted = 0;
        for (int i = 0; e != NULL && i < 200; i++)
            if (engine_schedule(e, (double)(i % 7), log_handler, log, i) == PS_OK) accepted++;
        ps_fail_after(-1);
        if (e != NULL) {
            consistent &= engine_pending(e) == accepted;
            consistent &= engine_run(e, INFINITY, -1) == PS_OK && log[0] == accepted;
        }
        engine_free(e);
    }
    CHECK(consistent, "alloc: engine runs exactly the accepted events after injected failures");
    ps_fail_after(0);
    CHECK(evq_new(4) == NULL, "alloc: evq_new returns NULL when allocation fails");
    ps_fail_after(-1);
}

static void test_rng(void)
{
    uint64_t seed = 7;
    SPLITMIX_RNG(r, seed);
    double s = 0;
    int n = 200000;
    for (int i = 0; i < n; i++) s += ps_exponential(&r, 4.0);
    /* mean 0.25, sd of the mean 0.25/sqrt(n) = 5.6e-4: 6 sigma */
    CHECK_NEAR(s / n, 0.25, 3.4e-3, "rng: exponential mean");
    int below_ok = 1;
    for (int i = 0; i < 10000; i++) below_ok &= ps_below(&r, 3) < 3;
    CHECK(below_ok, "rng: ps_below stays below n");
}

int main(void)
{
    test_evq_order();
    test_engine();
    test_alloc_failures();
    test_rng();
    return check_summary("test_core");
}
