/* Tests of the page cache: LRU and CLOCK victims, write-back, thresholds, read-ahead, pinning,
 * dropping, and the hash against a plain LRU over a long random trace. */
#include "check.h"
#include "pysim/pcache.h"
#include "pysim/status.h"

static pcache *make(uint64_t cap, pcache_policy p, uint32_t ra, uint64_t hi, uint64_t lo)
{
    pcache_config cfg = {cap, p, ra, hi, lo};
    return pcache_new(&cfg);
}

static void test_victims(void)
{
    pcache *lru = make(2, PCACHE_LRU, 0, 0, 0);
    uint64_t t[4] = {1, 2, 1, 3};
    pcache_run(lru, t, NULL, 4, NULL);
    CHECK(pcache_flags(lru, 2) == -1 && pcache_flags(lru, 1) >= 0, "LRU: A B A C evicts B");
    pcache_free(lru);

    pcache *clk = make(3, PCACHE_CLOCK, 0, 0, 0);
    uint64_t c[6] = {1, 2, 3, 4, 2, 5};
    uint8_t hit[6];
    pcache_run(clk, c, NULL, 6, hit);
    CHECK(hit[4] == 1 && pcache_flags(clk, 1) == -1 && pcache_flags(clk, 3) == -1 && pcache_flags(clk, 2) >= 0,
          "CLOCK: the hand clears every bit, evicts 1 for 4, then spares the referenced 2 and evicts 3 for 5");
    pcache_free(clk);
}

static void test_dirty(void)
{
    pcache *pc = make(2, PCACHE_LRU, 0, 0, 0);
    uint64_t victim = 0;
    int vd = 0;
    pcache_access(pc, 10, 1, NULL, NULL);
    pcache_access(pc, 11, 0, NULL, NULL);
    int r = pcache_access(pc, 12, 0, &victim, &vd);
    CHECK(r == 0 && victim == 10 && vd == 1 && pcache_get_counts(pc)->writebacks == 1,
          "a dirty victim is written back and named");
    pcache_access(pc, 13, 0, &victim, &vd);
    CHECK(victim == 11 && vd == 0 && pcache_get_counts(pc)->writebacks == 1, "a clean victim is not");
    pcache_free(pc);

    pcache *th = make(10, PCACHE_LRU, 0, 4, 2);
    for (uint64_t k = 1; k <= 5; k++) pcache_access(th, k, 1, NULL, NULL);
    CHECK(pcache_dirty(th) == 2 && pcache_get_counts(th)->flushed == 3 && pcache_flags(th, 1) == 0 &&
          pcache_flags(th, 5) == PCACHE_DIRTY, "past dirty_high the oldest dirty pages are cleaned to dirty_low");
    uint64_t out[8];
    int64_t n = pcache_flush(th, 8, out);
    CHECK(n == 2 && out[0] == 4 && out[1] == 5 && pcache_dirty(th) == 0, "flush cleans the rest, oldest first");
    pcache_free(th);
}

static void test_readahead(void)
{
    pcache *pc = make(100, PCACHE_LRU, 4, 0, 0);
    uint8_t hit[7];
    uint64_t t[7] = {0, 1, 2, 3, 4, 5, 6};
    pcache_run(pc, t, NULL, 7, hit);
    const pcache_counts *c = pcache_get_counts(pc);
    CHECK(hit[0] == 0 && hit[1] == 0 && hit[2] && hit[5] && hit[6] == 0 && c->readahead == 8 &&
              c->readahead_hits == 4, "a second sequential miss brings in 4 pages; 2..5 hit; 6 misses and reads 7..10");
    uint64_t far[1] = {50};
    pcache_run(pc, far, NULL, 1, NULL);
    CHECK(pcache_get_counts(pc)->readahead == 8, "a random miss reads nothing ahead");
    pcache_free(pc);
}

static void test_pin_and_drop(void)
{
    pcache *pc = make(2, PCACHE_LRU, 0, 0, 0);
    pcache_access(pc, 1, 0, NULL, NULL);
    pcache_access(pc, 2, 0, NULL, NULL);
    pcache_mark(pc, 1, PCACHE_PINNED, 1);
    pcache_access(pc, 3, 0, NULL, NULL);
    CHECK(pcache_flags(pc, 1) == PCACHE_PINNED && pcache_flags(pc, 2) == -1, "a pinned page is passed over");
    pcache_mark(pc, 3, PCACHE_IO, 1);
    CHECK(pcache_access(pc, 4, 0, NULL, NULL) == PS_ESTATE, "nothing evictable: PS_ESTATE");
    CHECK(pcache_access(pc, 3, 0, NULL, NULL) == 1 && pcache_get_counts(pc)->io_waits == 1,
          "a hit on a page under I/O waits for it");
    CHECK(pcache_mark(pc, 99, PCACHE_PINNED, 1) == PS_EINVAL && pcache_mark(pc, 1, PCACHE_DIRTY, 1) == PS_EINVAL,
          "marking an absent page or a bad flag is refused");
    pcache_mark(pc, 3, PCACHE_IO, 0);
    CHECK(pcache_drop(pc, 0, 100) == 1 && pcache_size(pc) == 1, "drop leaves the pinned page");
    pcache_access(pc, 7, 1, NULL, NULL);
    CHECK(pcache_drop(pc, 7, 8) == 1 && pcache_get_counts(pc)->writebacks == 1 && pcache_size(pc) == 1,
          "dropping a dirty page writes it back");
    pcache_free(pc);
}

static void test_against_plain_lru(void)
{
    enum { CAP = 500, N = 200000 };
    static uint64_t plain[CAP];
    int size = 0;
    uint64_t state = 42, misses = 0;
    pcache *pc = make(CAP, PCACHE_LRU, 0, 0, 0);
    int ok = 1;
    for (int i = 0; i < N; i++) {
        uint64_t key = sm_next(&state) % 1500 * 7919u; /* spread keys to exercise probing */
        int pos = -1;
        for (int j = 0; j < size; j++)
            if (plain[j] == key) { pos = j; break; }
        int hit = pos >= 0;
        if (!hit) {
            misses++;
            pos = size < CAP ? size++ : CAP - 1;
        }
        for (int j = pos; j > 0; j--) plain[j] = plain[j - 1];
        plain[0] = key;
        if (pcache_access(pc, key, 0, NULL, NULL) != hit) ok = 0;
    }
    CHECK(ok && pcache_get_counts(pc)->misses == misses, "hash and list agree with a plain LRU on %d accesses", N);
    pcache_free(pc);
}

static void test_config(void)
{
    CHECK(make(0, PCACHE_LRU, 0, 0, 0) == NULL, "capacity 0 refused");
    CHECK(make(4, PCACHE_LRU, 0, 2, 3) == NULL, "dirty_low above dirty_high refused");
    CHECK(make(4, (pcache_policy)7, 0, 0, 0) == NULL, "unknown policy refused");
    ps_fail_after(2);
    CHECK(make(4, PCACHE_LRU, 0, 0, 0) == NULL, "a failed allocation gives NULL, nothing leaks");
    ps_fail_after(-1);
}

int main(void)
{
    test_victims();
    test_dirty();
    test_readahead();
    test_pin_and_drop();
    test_against_plain_lru();
    test_config();
    return check_summary("test_pcache");
}
