/* tlb.c -- multi-page-size TLB over the assoc core. */
#include <string.h>

#include "pysim/status.h"
#include "pysim/tlb.h"

struct tlb {
    assoc *a;
    uint64_t sets;
    uint64_t misses_by_shift[TLB_MAX_SHIFT + 1];
};

tlb *tlb_new(uint32_t entries, uint32_t ways, assoc_policy p, ps_rng *rng, assoc_policy_fn fn)
{
    if (entries == 0 || ways == 0 || ways > entries || entries % ways != 0) return NULL;
    tlb *t = ps_calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->sets = entries / ways;
    t->a = assoc_new((int64_t)t->sets, (int32_t)ways, p, rng, fn);
    if (t->a == NULL) {
        ps_free(t);
        return NULL;
    }
    return t;
}

void tlb_free(tlb *t)
{
    if (t == NULL) return;
    assoc_free(t->a);
    ps_free(t);
}

int tlb_run(tlb *t, const uint64_t *addrs, const uint8_t *page_shift, unsigned default_shift,
            int64_t n, uint8_t *hit_out)
{
    if (page_shift == NULL && default_shift > TLB_MAX_SHIFT) return PS_EINVAL;
    for (int64_t i = 0; i < n; i++) {
        unsigned shift = page_shift ? page_shift[i] : default_shift;
        if (shift > TLB_MAX_SHIFT) return PS_EINVAL;
        uint64_t vpn = addrs[i] >> shift;
        /* the size is part of the tag: a 4 KB and a 1 MB page never match */
        int r = assoc_access(t->a, (int64_t)(vpn % t->sets), ((vpn / t->sets) << 6) | shift);
        if (r < 0) return r;
        if (r == 0) t->misses_by_shift[shift]++;
        if (hit_out) hit_out[i] = (uint8_t)r;
    }
    return PS_OK;
}

const assoc_counts *tlb_counts(const tlb *t) { return assoc_get_counts(t->a); }

uint64_t tlb_misses_for_shift(const tlb *t, unsigned shift)
{
    return shift <= TLB_MAX_SHIFT ? t->misses_by_shift[shift] : 0;
}

void tlb_reset(tlb *t)
{
    assoc_reset(t->a);
    memset(t->misses_by_shift, 0, sizeof t->misses_by_shift);
}
