/* cache.h -- a set-associative cache simulator over address traces.
 *
 * Geometry as a data sheet gives it: total size, line size and ways, all in
 * bytes or counts; size must equal sets x ways x line with line a power of
 * two. Addresses map to line = addr / line_bytes, set = line mod sets,
 * tag = line / sets. Reads only: the simulator counts hits and misses. */
#ifndef PYSIM_CACHE_H
#define PYSIM_CACHE_H

#include <stdint.h>

#include "pysim/assoc.h"

typedef struct cache_geom {
    uint64_t size_bytes;
    uint32_t line_bytes; /* power of two */
    uint32_t ways;
} cache_geom;

typedef struct cache cache;

/* PS_OK when g is consistent (see above), PS_EINVAL otherwise. */
int cache_geom_check(const cache_geom *g);
cache *cache_new(const cache_geom *g, assoc_policy p, ps_rng *rng, assoc_policy_fn fn);
void cache_free(cache *c);
/* Run n addresses. hit_out (optional, n bytes) receives 1 per hit, 0 per miss.
 * PS_OK or PS_ECALLBACK. O(n x ways). */
int cache_run(cache *c, const uint64_t *addrs, int64_t n, uint8_t *hit_out);
const assoc_counts *cache_counts(const cache *c);
void cache_reset(cache *c);

#endif
