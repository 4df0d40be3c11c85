/* rng.h -- the random-number source the C core draws from.
 *
 * ps_rng has the same layout as NumPy's bitgen_t, so the binding can hand
 * over the Generator's own bit generator (PCG64) and C consumes the very
 * stream Python does. The core never implements a generator of its own;
 * C tests fill ps_rng with a small reference generator of their own. */
#ifndef PYSIM_RNG_H
#define PYSIM_RNG_H

#include <stdint.h>

typedef struct ps_rng {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st); /* uniform on [0, 1) */
    uint64_t (*next_raw)(void *st);
} ps_rng;

/* Uniform on [0, 1). */
double ps_uniform(ps_rng *r);
/* Exponential with the given rate (per second); mean 1/rate. rate > 0. */
double ps_exponential(ps_rng *r, double rate);
/* Uniform integer on [0, n); n > 0. Unbiased (rejection). */
uint64_t ps_below(ps_rng *r, uint64_t n);

#endif
