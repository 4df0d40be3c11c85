/* assoc.h -- a set-associative array of tags with a replacement policy.
 *
 * The common core of the cache and TLB simulators: `sets` x `ways` entries,
 * each a tag plus one int64 of policy state ("meta"). Policies:
 *   ASSOC_LRU     meta = time of last use; the victim has the smallest;
 *   ASSOC_FIFO    meta = time of fill;     the victim has the smallest;
 *   ASSOC_RANDOM  the victim is uniform over the ways (draws from a ps_rng);
 *   ASSOC_CUSTOM  a user callback (a Numba cfunc, say) keeps meta and picks.
 * Empty ways are always filled first, lowest way first, under every policy.
 * Time is the access counter, starting at 1. */
#ifndef PYSIM_ASSOC_H
#define PYSIM_ASSOC_H

#include <stdint.h>

#include "pysim/rng.h"

typedef enum { ASSOC_LRU = 0, ASSOC_FIFO = 1, ASSOC_RANDOM = 2, ASSOC_CUSTOM = 3 } assoc_policy;

enum { ASSOC_EVENT_HIT = 0, ASSOC_EVENT_FILL = 1, ASSOC_EVENT_VICTIM = 2 };

/* Custom policy. event is ASSOC_EVENT_*; meta points at the set's `ways`
 * entries of policy state. For HIT and FILL, `way` is the way concerned and
 * the return value is ignored; for VICTIM, way is -1 and the callback
 * returns the way to evict (anything outside [0, ways) is an error). */
typedef int64_t (*assoc_policy_fn)(int32_t event, int64_t set, int32_t way, int64_t *meta,
                                   int32_t ways, int64_t now);

typedef struct assoc_counts {
    uint64_t accesses, hits, misses, evictions;
} assoc_counts;

typedef struct assoc assoc;

/* NULL if out of memory or invalid: sets, ways >= 1; RANDOM needs rng;
 * CUSTOM needs fn. rng and fn must outlive the assoc. */
assoc *assoc_new(int64_t sets, int32_t ways, assoc_policy p, ps_rng *rng, assoc_policy_fn fn);
void assoc_free(assoc *a);
/* Look up (set, tag); fill on a miss. Returns 1 on a hit, 0 on a miss,
 * PS_ECALLBACK if a custom policy picked an impossible way. set < sets. */
int assoc_access(assoc *a, int64_t set, uint64_t tag);
/* Invalidate everything and zero the counts. */
void assoc_reset(assoc *a);
const assoc_counts *assoc_get_counts(const assoc *a);
int64_t assoc_sets(const assoc *a);
int32_t assoc_ways(const assoc *a);

#endif
