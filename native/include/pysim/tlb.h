/* tlb.h -- a TLB simulator holding translations of several page sizes at once.
 *
 * `entries` translations in sets of `ways` (ways == entries: fully
 * associative, as the PA-8000's unified 96-entry TLB). Each access names its
 * address and the log2 size of the page that maps it (the OS chose that size
 * at fault time), so one TLB holds 4 KB and 1 MB translations side by side.
 * An entry's tag is (virtual page number, page size); the set is
 * vpn mod sets. Misses are also counted per page size. */
#ifndef PYSIM_TLB_H
#define PYSIM_TLB_H

#include <stdint.h>

#include "pysim/assoc.h"

#define TLB_MAX_SHIFT 48

typedef struct tlb tlb;

/* NULL if out of memory or invalid: entries >= 1, ways in [1, entries],
 * entries a multiple of ways. */
tlb *tlb_new(uint32_t entries, uint32_t ways, assoc_policy p, ps_rng *rng, assoc_policy_fn fn);
void tlb_free(tlb *t);
/* Run n accesses. page_shift[i] in [0, TLB_MAX_SHIFT] is the log2 page size
 * of access i; page_shift NULL means every page is 1 << default_shift bytes.
 * hit_out optional as in cache_run(). PS_OK, PS_EINVAL, PS_ECALLBACK. */
int tlb_run(tlb *t, const uint64_t *addrs, const uint8_t *page_shift, unsigned default_shift,
            int64_t n, uint8_t *hit_out);
const assoc_counts *tlb_counts(const tlb *t);
/* Misses of pages of size 1 << shift. */
uint64_t tlb_misses_for_shift(const tlb *t, unsigned shift);
void tlb_reset(tlb *t);

#endif
