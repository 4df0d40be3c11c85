/* measure.h -- real microbenchmarks of the machine the lab runs on ("then vs now").
 *
 * Each function runs a small experiment and fills a result; none needs root.
 * Where the facility is missing the function returns PS_ESTATE and the
 * caller reports that, rather than crashing. Times are seconds. */
#ifndef PYSIM_MEASURE_H
#define PYSIM_MEASURE_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic clock, seconds. */
double measure_now(void);
/* Smallest positive step of the monotonic clock seen in `tries` reads. */
double measure_timer_resolution(int tries);
/* Mean cost of one trivial system call (getppid via syscall), seconds. */
double measure_syscall(int64_t calls);
/* Bytes per second of memcpy over a buffer of `bytes`, repeated `reps` times.
 * PS_OK, PS_EINVAL, PS_ENOMEM. */
int measure_memcpy(size_t bytes, int reps, double *bytes_per_s);

#endif
