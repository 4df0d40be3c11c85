/* pcache.h -- an operating system's page cache: pages by key, LRU or CLOCK
 * replacement, dirty pages with write-back thresholds, sequential read-ahead,
 * pinning, and pages with I/O in progress.
 *
 * A key names one page (the caller packs file and page index into it). The
 * cache holds at most `capacity` pages; a miss inserts the page, evicting a
 * victim that is neither pinned nor under I/O (LRU: the least recently used;
 * CLOCK: the first page the hand finds with its reference bit clear). A dirty
 * victim is written back (counted). With `dirty_high` > 0, a write that makes
 * more pages dirty than that cleans the oldest dirty pages down to
 * `dirty_low` (counted as flushed; they stay cached). With `readahead` > 0, a
 * miss on the page after the one last accessed brings in the next `readahead`
 * pages too (counted; a later hit on one is a read-ahead hit). */
#ifndef PYSIM_PCACHE_H
#define PYSIM_PCACHE_H

#include <stdint.h>

typedef enum pcache_policy { PCACHE_LRU = 0, PCACHE_CLOCK = 1 } pcache_policy;

enum pcache_flag {
    PCACHE_DIRTY = 1, PCACHE_PINNED = 2, PCACHE_IO = 4, PCACHE_REF = 8, PCACHE_PREFETCHED = 16
};

typedef struct pcache_config {
    uint64_t capacity;  /* pages, >= 1 */
    pcache_policy policy;
    uint32_t readahead; /* pages brought in after a sequential miss */
    uint64_t dirty_high; /* 0: no threshold */
    uint64_t dirty_low;  /* <= dirty_high */
} pcache_config;

typedef struct pcache_counts {
    uint64_t accesses, hits, misses, writes;
    uint64_t evictions, writebacks;  /* victims, and those that were dirty */
    uint64_t flushed;                /* dirty pages cleaned by the threshold or pcache_flush */
    uint64_t readahead, readahead_hits;
    uint64_t io_waits;               /* hits on a page whose I/O is still in progress */
} pcache_counts;

typedef struct pcache pcache;

/* NULL on a bad config (capacity 0, dirty_low > dirty_high, unknown policy) or no memory. */
pcache *pcache_new(const pcache_config *cfg);
void pcache_free(pcache *pc);

/* One access: 1 on a hit, 0 on a miss, PS_ESTATE if every page is pinned or under I/O.
 * On a miss that evicts, *victim (if not NULL) gets its key and *victim_dirty 1 if it was dirty
 * (else *victim_dirty is -1 when nothing was evicted). */
int pcache_access(pcache *pc, uint64_t key, int write, uint64_t *victim, int *victim_dirty);
/* n accesses (writes[i] != 0 for a write; writes may be NULL); hit_out (optional) gets 1/0 each. */
int pcache_run(pcache *pc, const uint64_t *keys, const uint8_t *writes, int64_t n, uint8_t *hit_out);
/* Clean up to max oldest dirty pages; their keys go to out (if not NULL). Returns how many. */
int64_t pcache_flush(pcache *pc, int64_t max, uint64_t *out);
/* Flags of a cached page, or -1 if it is not cached. */
int pcache_flags(const pcache *pc, uint64_t key);
/* Set or clear PCACHE_PINNED or PCACHE_IO on a cached page: PS_OK, or PS_EINVAL if absent or a bad flag. */
int pcache_mark(pcache *pc, uint64_t key, int flag, int on);
/* Drop the cached pages with keys in [lo, hi) that are not pinned (dirty ones are written back
 * first, and counted). Returns how many were dropped. */
int64_t pcache_drop(pcache *pc, uint64_t lo, uint64_t hi);
uint64_t pcache_size(const pcache *pc);
uint64_t pcache_dirty(const pcache *pc);
const pcache_counts *pcache_get_counts(const pcache *pc);
/* Zero the counts (the contents stay). */
void pcache_reset_counts(pcache *pc);

#endif
