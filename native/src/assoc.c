/* assoc.c -- set-associative tag store with LRU / FIFO / random / custom policies. */
#include "pysim/assoc.h"
#include "pysim/status.h"

struct assoc {
    int64_t sets;
    int32_t ways;
    assoc_policy policy;
    ps_rng *rng;
    assoc_policy_fn fn;
    uint64_t *tags; /* tag + 1; 0 marks an empty way */
    int64_t *meta;
    int64_t now;
    assoc_counts n;
};

assoc *assoc_new(int64_t sets, int32_t ways, assoc_policy p, ps_rng *rng, assoc_policy_fn fn)
{
    if (sets < 1 || ways < 1 || p < ASSOC_LRU || p > ASSOC_CUSTOM) return NULL;
    if ((p == ASSOC_RANDOM && rng == NULL) || (p == ASSOC_CUSTOM && fn == NULL)) return NULL;
    if ((uint64_t)sets > SIZE_MAX / sizeof(uint64_t) / (uint64_t)ways) return NULL;
    assoc *a = ps_calloc(1, sizeof *a);
    if (a == NULL) goto fail;
    a->sets = sets;
    a->ways = ways;
    a->policy = p;
    a->rng = rng;
    a->fn = fn;
    a->tags = ps_calloc((size_t)sets * (size_t)ways, sizeof *a->tags);
    a->meta = ps_calloc((size_t)sets * (size_t)ways, sizeof *a->meta);
    if (a->tags == NULL || a->meta == NULL) goto fail;
    return a;
fail:
    assoc_free(a);
    return NULL;
}

void assoc_free(assoc *a)
{
    if (a == NULL) return;
    ps_free(a->tags);
    ps_free(a->meta);
    ps_free(a);
}

void assoc_reset(assoc *a)
{
    size_t n = (size_t)a->sets * (size_t)a->ways;
    for (size_t i = 0; i < n; i++) a->tags[i] = 0, a->meta[i] = 0;
    a->now = 0;
    a->n = (assoc_counts){0, 0, 0, 0};
}

const assoc_counts *assoc_get_counts(const assoc *a) { return &a->n; }
int64_t assoc_sets(const assoc *a) { return a->sets; }
int32_t assoc_ways(const assoc *a) { return a->ways; }

/* The way to evict in a full set. */
static int32_t victim(assoc *a, int64_t set, int64_t *meta)
{
    int32_t w = 0;
    switch (a->policy) {
    case ASSOC_LRU:
    case ASSOC_FIFO:
        for (int32_t i = 1; i < a->ways; i++)
            if (meta[i] < meta[w]) w = i;
        return w;
    case ASSOC_RANDOM:
        return (int32_t)ps_below(a->rng, (uint64_t)a->ways);
    case ASSOC_CUSTOM: {
        int64_t v = a->fn(ASSOC_EVENT_VICTIM, set, -1, meta, a->ways, a->now);
        return (v >= 0 && v < a->ways) ? (int32_t)v : -1;
    }
    }
    return -1;
}

int assoc_access(assoc *a, int64_t set, uint64_t tag)
{
    size_t base = (size_t)set * (size_t)a->ways;
    uint64_t *tags = a->tags + base;
    int64_t *meta = a->meta + base;
    uint64_t key = tag + 1;
    int32_t empty = -1;
    a->now++;
    a->n.accesses++;
    for (int32_t i = 0; i < a->ways; i++) {
        if (tags[i] == key) {
            a->n.hits++;
            if (a->policy == ASSOC_LRU) meta[i] = a->now;
            else if (a->policy == ASSOC_CUSTOM) a->fn(ASSOC_EVENT_HIT, set, i, meta, a->ways, a->now);
            return 1;
        }
        if (tags[i] == 0 && empty < 0) empty = i;
    }
    a->n.misses++;
    int32_t w = empty;
    if (w < 0) {
        w = victim(a, set, meta);
        if (w < 0) return PS_ECALLBACK;
        a->n.evictions++;
    }
    tags[w] = key;
    if (a->policy == ASSOC_CUSTOM) a->fn(ASSOC_EVENT_FILL, set, w, meta, a->ways, a->now);
    else meta[w] = a->now;
    return 0;
}
