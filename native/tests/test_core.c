/* Tests of the event queue, the engine and allocation-failure handling. */
#include <stdlib.h>

#include "check.h"
#include "pysim/engine.h"
#include "pysim/evq.h"
#include "pysim/rng.h"
#include "pysim/status.h"

static void test_evq_order(void)
{
    evq *q = evq_new(0);
    uint64_t seed = 1;
    SPLITMIX_RNG(r, seed);
    for (int64_t i = 0; i < 5000; i++) evq_push(q, (double)ps_below(&r, 50), i);
    CHECK(evq_check(q) == PS_OK, "evq: heap property after 5000 pushes");
    evq_item prev = {-1, 0, -1}, it;
    int sorted = 1;
    while (evq_pop(q, &it) == PS_OK) {
        /* equal times leave in push order: handles were pushed in increasing order */
        if (it.time < prev.time || (it.time == prev.time && it.handle < prev.handle)) sorted = 0;
        prev = it;
    }
    CHECK(sorted, "evq: pops by time, equal times in insertion order");
    CHECK(evq_pop(q, &it) == PS_EEMPTY, "evq: pop on empty gives PS_EEMPTY");
    CHECK(evq_push(q, NAN, 1) == PS_EINVAL, "evq: NaN time rejected");
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
    ps_engine *e = engine_new();
    int64_t log[16] = {0}, h2;
    engine_schedule(e, 2.0, log_handler, log, 1, NULL);
    engine_schedule(e, 1.0, log_handler, log, 2, &h2);
    engine_schedule(e, 1.0, log_handler, log, 3, NULL);
    engine_schedule(e, 5.0, log_handler, log, 4, NULL);
    CHECK(engine_pending(e) == 4, "engine: 4 pending");
    CHECK(engine_cancel(e, h2) == PS_OK, "engine: cancel a pending event");
    CHECK(engine_cancel(e, h2) == PS_EINVAL, "engine: second cancel refused");
    CHECK(engine_peek(e) == 1.0, "engine: peek skips nothing yet at t=1");
    CHECK(engine_run(e, 3.0, -1) == PS_OK, "engine: run until 3");
    CHECK(log[0] == 2 && log[1] == 3 && log[2] == 1, "engine: ran 3 then 1, skipped cancelled 2");
    CHECK(engine_now(e) == 3.0, "engine: clock at until=3 afterwards");
    CHECK(engine_run(e, INFINITY, -1) == PS_OK && log[3] == 4 && engine_now(e) == 5.0,
          "engine: rest runs, clock at last event");
    CHECK(engine_cancel(e, h2) == PS_EINVAL, "engine: stale handle refused after slot reuse");
    CHECK(engine_schedule(e, -1.0, log_handler, log, 0, NULL) == PS_EINVAL, "engine: negative delay rejected");
    CHECK(engine_schedule(e, NAN, log_handler, log, 0, NULL) == PS_EINVAL, "engine: NaN delay rejected");
    CHECK(engine_schedule(e, INFINITY, log_handler, log, 0, NULL) == PS_EINVAL, "engine: infinite delay rejected");
    CHECK(engine_run(e, 1.0, -1) == PS_EINVAL, "engine: until in the past rejected");
    engine_schedule(e, 1.0, failing_handler, NULL, 0, NULL);
    CHECK(engine_run(e, INFINITY, -1) == PS_ECALLBACK, "engine: a failing handler's status comes back");
    engine_schedule(e, 1.0, stopping_handler, NULL, 0, NULL);
    engine_schedule(e, 2.0, log_handler, log, 9, NULL);
    CHECK(engine_run(e, INFINITY, -1) == PS_OK && engine_pending(e) == 1, "engine: stop leaves later events pending");
    CHECK(engine_run(e, INFINITY, 0) == PS_OK && engine_pending(e) == 1, "engine: max_events=0 runs nothing");
    engine_free(e);
}

static void test_alloc_failures(void)
{
    /* after an injected failure the engine must still run exactly the events it accepted */
    int consistent = 1;
    for (long k = 0; k < 8; k++) {
        ps_fail_after(k);
        ps_engine *e = engine_new();
        int64_t log[300] = {0};
        int accepted = 0;
        for (int i = 0; e != NULL && i < 200; i++)
            if (engine_schedule(e, (double)(i % 7), log_handler, log, i, NULL) == PS_OK) accepted++;
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
