/* check.h -- minimal test harness: one line per check, a summary, exit status. */
#ifndef PYSIM_CHECK_H
#define PYSIM_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond, ...)                                             \
    do {                                                             \
        if (cond) {                                                  \
            check_passed++;                                          \
            printf("ok   ");                                         \
        } else {                                                     \
            check_failed++;                                          \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);              \
        }                                                            \
        printf(__VA_ARGS__);                                         \
        printf("\n");                                                \
    } while (0)

#define CHECK_NEAR(a, b, tol, what)                                               \
    CHECK(fabs((double)(a) - (double)(b)) <= (tol), "%s: %.9g vs %.9g (tol %.3g)", \
          what, (double)(a), (double)(b), (double)(tol))

static int check_summary(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, check_passed, check_failed);
    return check_failed ? 1 : 0;
}

/* splitmix64: a tiny reference generator filling ps_rng for C-only tests. */
static inline uint64_t sm_next(void *st)
{
    uint64_t z = (*(uint64_t *)st += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline uint32_t sm_next32(void *st) { return (uint32_t)(sm_next(st) >> 32); }
static inline double sm_double(void *st) { return (double)(sm_next(st) >> 11) * (1.0 / 9007199254740992.0); }

#define SPLITMIX_RNG(name, seedvar) \
    ps_rng name = {&(seedvar), sm_next, sm_next32, sm_double, sm_next}

#endif
