/* cache.c -- address-to-(set, tag) mapping over the assoc core. */
#include "pysim/cache.h"
#include "pysim/status.h"

struct cache {
    assoc *a;
    unsigned line_shift;
    uint64_t sets;
};

int cache_geom_check(const cache_geom *g)
{
    if (g->line_bytes == 0 || (g->line_bytes & (g->line_bytes - 1)) != 0) return PS_EINVAL;
    if (g->ways == 0 || g->size_bytes == 0) return PS_EINVAL;
    uint64_t per_set = (uint64_t)g->line_bytes * g->ways;
    if (g->size_bytes % per_set != 0) return PS_EINVAL;
    return PS_OK;
}

cache *cache_new(const cache_geom *g, assoc_policy p, ps_rng *rng, assoc_policy_fn fn)
{
    if (cache_geom_check(g) != PS_OK) return NULL;
    cache *c = ps_calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->sets = g->size_bytes / ((uint64_t)g->line_bytes * g->ways);
    while ((1u << c->line_shift) < g->line_bytes) c->line_shift++;
    c->a = assoc_new((int64_t)c->sets, (int32_t)g->ways, p, rng, fn);
    if (c->a == NULL) {
        ps_free(c);
        return NULL;
    }
    return c;
}

void cache_free(cache *c)
{
    if (c == NULL) return;
    assoc_free(c->a);
    ps_free(c);
}

int cache_run(cache *c, const uint64_t *addrs, int64_t n, uint8_t *hit_out)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t line = addrs[i] >> c->line_shift;
        int r = assoc_access(c->a, (int64_t)(line % c->sets), line / c->sets);
        if (r < 0) return r;
        if (hit_out) hit_out[i] = (uint8_t)r;
    }
    return PS_OK;
}

const assoc_counts *cache_counts(const cache *c) { return assoc_get_counts(c->a); }
void cache_reset(cache *c) { assoc_reset(c->a); }
