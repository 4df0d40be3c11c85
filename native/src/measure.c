/* measure.c -- microbenchmarks of today's machine. POSIX, not C99 alone. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pysim/measure.h"
#include "pysim/status.h"

double measure_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double measure_timer_resolution(int tries)
{
    double best = 1.0;
    for (int i = 0; i < tries; i++) {
        double a = measure_now(), b;
        do {
            b = measure_now();
        } while (b == a);
        if (b - a < best) best = b - a;
    }
    return best;
}

double measure_syscall(int64_t calls)
{
    if (calls < 1) calls = 1;
    double t0 = measure_now();
    for (int64_t i = 0; i < calls; i++) (void)syscall(SYS_getppid); /* never cached by libc */
    return (measure_now() - t0) / (double)calls;
}

int measure_memcpy(size_t bytes, int reps, double *bytes_per_s)
{
    if (bytes == 0 || reps < 1) return PS_EINVAL;
    char *a = ps_malloc(bytes), *b = ps_malloc(bytes);
    if (a == NULL || b == NULL) {
        ps_free(a);
        ps_free(b);
        return PS_ENOMEM;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes); /* touch every page before timing */
    double t0 = measure_now();
    for (int r = 0; r < reps; r++) {
        memcpy(r & 1 ? a : b, r & 1 ? b : a, bytes);
        __asm__ __volatile__("" ::: "memory"); /* keep the copies */
    }
    double dt = measure_now() - t0;
    *bytes_per_s = dt > 0 ? (double)bytes * reps / dt : 0;
    ps_free(a);
    ps_free(b);
    return PS_OK;
}
