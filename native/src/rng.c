/* rng.c -- distributions over a ps_rng stream. */
#include <math.h>

#include "pysim/rng.h"

double ps_uniform(ps_rng *r) { return r->next_double(r->state); }

double ps_exponential(ps_rng *r, double rate)
{
    /* inversion; 1 - u is in (0, 1], so the log is finite */
    return -log1p(-ps_uniform(r)) / rate;
}

uint64_t ps_below(ps_rng *r, uint64_t n)
{
    /* Lemire-style rejection on the top of the range: unbiased */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
        x = r->next_uint64(r->state);
    } while (x >= limit);
    return x % n;
}
