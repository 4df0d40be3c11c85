/* Tests of the set-associative core, the cache and the multi-page-size TLB. */
#include "check.h"
#include "pysim/cache.h"
#include "pysim/status.h"
#include "pysim/tlb.h"

/* An LRU written against the custom-policy interface, as a Numba cfunc would be. */
static int64_t lru_policy(int32_t event, int64_t set, int32_t way, int64_t *meta, int32_t ways, int64_t now)
{
    (void)set;
    if (event != ASSOC_EVENT_VICTIM) {
        meta[way] = now;
        return 0;
    }
    int32_t w = 0;
    for (int32_t i = 1; i < ways; i++)
        if (meta[i] < meta[w]) w = i;
    return w;
}

static int64_t bad_policy(int32_t event, int64_t set, int32_t way, int64_t *meta, int32_t ways, int64_t now)
{
    (void)event, (void)set, (void)way, (void)meta, (void)now;
    return ways; /* out of range */
}

static void test_cache(void)
{
    cache_geom g = {256, 64, 2}; /* 2 sets x 2 ways x 64 B */
    cache *lru = cache_new(&g, ASSOC_LRU, NULL, NULL);
    cache *fifo = cache_new(&g, ASSOC_FIFO, NULL, NULL);
    /* set 0 lines: 0, 128, 256 (addresses); A B A C A */
    uint64_t tr[5] = {0, 128, 0, 256, 0};
    uint8_t h1[5], h2[5];
    cache_run(lru, tr, 5, h1);
    cache_run(fifo, tr, 5, h2);
    CHECK(h1[2] == 1 && h1[4] == 1 && cache_counts(lru)->misses == 3, "cache: LRU keeps A (A B A C A: 3 misses)");
    CHECK(h2[2] == 1 && h2[4] == 0 && cache_counts(fifo)->misses == 4, "cache: FIFO evicts A (4 misses)");
    uint64_t same_line[3] = {64, 65, 127};
    cache_reset(lru);
    cache_run(lru, same_line, 3, NULL);
    CHECK(cache_counts(lru)->hits == 2, "cache: bytes of one line hit after the first");
    cache_free(lru);
    cache_free(fifo);
    cache_geom bad = {1000, 64, 2};
    CHECK(cache_geom_check(&bad) == PS_EINVAL && cache_new(&bad, ASSOC_LRU, NULL, NULL) == NULL,
          "cache: size not sets x ways x line rejected");
    cache_geom odd = {384, 48, 2};
    CHECK(cache_geom_check(&odd) == PS_EINVAL, "cache: line not a power of two rejected");
    CHECK(cache_new(&g, ASSOC_RANDOM, NULL, NULL) == NULL, "cache: random policy without rng rejected");
}

static void test_custom_policy(void)
{
    cache_geom g = {32768, 64, 8};
    cache *builtin = cache_new(&g, ASSOC_LRU, NULL, NULL);
    cache *custom = cache_new(&g, ASSOC_CUSTOM, NULL, lru_policy);
    uint64_t seed = 3;
    SPLITMIX_RNG(r, seed);
    enum { N = 100000 };
    static uint64_t tr[N];
    for (int i = 0; i < N; i++) tr[i] = ps_below(&r, 1 << 17);
    static uint8_t ha[N], hb[N];
    cache_run(builtin, tr, N, ha);
    cache_run(custom, tr, N, hb);
    int same = 1;
    for (int i = 0; i < N; i++) same &= ha[i] == hb[i];
    CHECK(same && cache_counts(builtin)->hits == cache_counts(custom)->hits,
          "custom policy: LRU callback matches built-in LRU access by access");
    cache *bad = cache_new(&g, ASSOC_CUSTOM, NULL, bad_policy);
    CHECK(cache_run(bad, tr, N, NULL) == PS_ECALLBACK, "custom policy: impossible victim stops the run");
    cache_free(builtin);
    cache_free(custom);
    cache_free(bad);
}

static void test_tlb(void)
{
    tlb *t = tlb_new(2, 2, ASSOC_LRU, NULL, NULL);
    /* two 4 KB pages and one 1 MB page; 3 distinct translations in 2 entries */
    uint64_t a[6] = {0x0000, 0x1000, 0x0010, 0x100000, 0x1FFFFF, 0x1000};
    uint8_t s[6] = {12, 12, 12, 20, 20, 12};
    uint8_t h[6];
    CHECK(tlb_run(t, a, s, 12, 6, h) == PS_OK, "tlb: runs with mixed page sizes");
    CHECK(h[0] == 0 && h[1] == 0 && h[2] == 1 && h[3] == 0 && h[4] == 1 && h[5] == 0,
          "tlb: 1 MB page covers 0x100000-0x1FFFFF; LRU evicted 4 KB page 1");
    CHECK(tlb_misses_for_shift(t, 12) == 3 && tlb_misses_for_shift(t, 20) == 1, "tlb: misses by page size");
    uint64_t b[2] = {0x0, 0x0};
    uint8_t s2[2] = {12, 13};
    tlb_reset(t);
    tlb_run(t, b, s2, 12, 2, h);
    CHECK(h[1] == 0, "tlb: the same address under another page size is another translation");
    uint8_t big[1] = {60};
    CHECK(tlb_run(t, b, big, 12, 1, NULL) == PS_EINVAL, "tlb: page shift beyond 48 rejected");
    CHECK(tlb_new(96, 7, ASSOC_LRU, NULL, NULL) == NULL, "tlb: entries not a multiple of ways rejected");
    tlb_free(t);
}

int main(void)
{
    test_cache();
    test_custom_policy();
    test_tlb();
    return check_summary("test_memory");
}
