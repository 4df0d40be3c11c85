/* pcache.c -- the page cache: open-addressing hash from key to slot, a doubly linked
 * recency list (LRU order, or insertion order under CLOCK), a CLOCK hand over the slots. */
#include <string.h>

#include "pysim/pcache.h"
#include "pysim/status.h"

#define NIL UINT32_MAX
#define UNEVICTABLE (PCACHE_PINNED | PCACHE_IO)

struct pcache {
    pcache_config cfg;
    uint64_t *keys;
    uint8_t *flags;
    uint32_t *prev, *next; /* the list: head is the most recent */
    uint32_t head, tail;
    uint64_t used;         /* slots handed out so far */
    uint32_t *free_slots;  /* slots emptied by pcache_drop */
    uint64_t nfree;
    uint64_t count;        /* pages cached */
    uint32_t *table;       /* slot + 1, or 0 for empty */
    uint64_t mask;
    uint64_t hand;
    uint64_t dirty;
    uint64_t last_key;
    int have_last;
    pcache_counts c;
};

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

pcache *pcache_new(const pcache_config *cfg)
{
    if (cfg == NULL || cfg->capacity == 0 || cfg->capacity >= NIL || cfg->dirty_low > cfg->dirty_high ||
        (cfg->policy != PCACHE_LRU && cfg->policy != PCACHE_CLOCK))
        return NULL;
    pcache *pc = ps_calloc(1, sizeof *pc);
    if (pc == NULL) return NULL;
    pc->cfg = *cfg;
    uint64_t n = cfg->capacity, size = 4;
    while (size < 2 * n) size <<= 1;
    pc->mask = size - 1;
    pc->keys = ps_malloc(n * sizeof *pc->keys);
    pc->flags = ps_calloc(n, 1);
    pc->prev = ps_malloc(n * sizeof *pc->prev);
    pc->next = ps_malloc(n * sizeof *pc->next);
    pc->free_slots = ps_malloc(n * sizeof *pc->free_slots);
    pc->table = ps_calloc(size, sizeof *pc->table);
    if (!pc->keys || !pc->flags || !pc->prev || !pc->next || !pc->free_slots || !pc->table) {
        pcache_free(pc);
        return NULL;
    }
    pc->head = pc->tail = NIL;
    return pc;
}

void pcache_free(pcache *pc)
{
    if (pc == NULL) return;
    ps_free(pc->keys);
    ps_free(pc->flags);
    ps_free(pc->prev);
    ps_free(pc->next);
    ps_free(pc->free_slots);
    ps_free(pc->table);
    ps_free(pc);
}

/* --- the hash ---------------------------------------------------------------------------- */

static uint64_t probe(const pcache *pc, uint64_t key)
{
    uint64_t i = mix(key) & pc->mask;
    while (pc->table[i] != 0 && pc->keys[pc->table[i] - 1] != key) i = (i + 1) & pc->mask;
    return i;
}

static uint32_t lookup(const pcache *pc, uint64_t key)
{
    uint32_t s = pc->table[probe(pc, key)];
    return s ? s - 1 : NIL;
}

static void hash_remove(pcache *pc, uint64_t key)
{
    uint64_t i = probe(pc, key), j = i;
    pc->table[i] = 0;
    for (;;) { /* backward-shift deletion keeps every probe chain unbroken */
        j = (j + 1) & pc->mask;
        if (pc->table[j] == 0) return;
        uint64_t home = mix(pc->keys[pc->table[j] - 1]) & pc->mask;
        if (((j - home) & pc->mask) >= ((j - i) & pc->mask)) {
            pc->table[i] = pc->table[j];
            pc->table[j] = 0;
            i = j;
        }
    }
}

/* --- the list ------------------------------------------------------------------------------- */

static void unlink_slot(pcache *pc, uint32_t s)
{
    if (pc->prev[s] != NIL) pc->next[pc->prev[s]] = pc->next[s];
    else pc->head = pc->next[s];
    if (pc->next[s] != NIL) pc->prev[pc->next[s]] = pc->prev[s];
    else pc->tail = pc->prev[s];
}

static void push_front(pcache *pc, uint32_t s)
{
    pc->prev[s] = NIL;
    pc->next[s] = pc->head;
    if (pc->head != NIL) pc->prev[pc->head] = s;
    pc->head = s;
    if (pc->tail == NIL) pc->tail = s;
}

/* --- eviction and insertion ------------------------------------------------------------------- */

static void remove_slot(pcache *pc, uint32_t s)
{
    hash_remove(pc, pc->keys[s]);
    unlink_slot(pc, s);
    if (pc->flags[s] & PCACHE_DIRTY) pc->dirty--;
    pc->flags[s] = 0;
    pc->count--;
}

static uint32_t choose_victim(pcache *pc)
{
    if (pc->cfg.policy == PCACHE_LRU) {
        for (uint32_t s = pc->tail; s != NIL; s = pc->prev[s])
            if (!(pc->flags[s] & UNEVICTABLE)) return s;
        return NIL;
    }
    for (uint64_t step = 0; step < 2 * pc->used + 1; step++) {
        uint32_t s = (uint32_t)pc->hand;
        pc->hand = (pc->hand + 1) % pc->used;
        if (pc->flags[s] & UNEVICTABLE) continue;
        if (pc->flags[s] & PCACHE_REF) {
            pc->flags[s] &= (uint8_t)~PCACHE_REF;
            continue;
        }
        return s;
    }
    return NIL;
}

/* Insert key (not cached); returns its slot, or NIL if nothing can be evicted. */
static uint32_t insert(pcache *pc, uint64_t key, uint8_t flags, uint64_t *victim, int *victim_dirty)
{
    uint32_t s;
    if (victim_dirty) *victim_dirty = -1;
    if (pc->count < pc->cfg.capacity) {
        s = pc->nfree ? pc->free_slots[--pc->nfree] : (uint32_t)pc->used++;
    } else {
        s = choose_victim(pc);
        if (s == NIL) return NIL;
        int was_dirty = (pc->flags[s] & PCACHE_DIRTY) != 0;
        pc->c.evictions++;
        pc->c.writebacks += (uint64_t)was_dirty;
        if (victim) *victim = pc->keys[s];
        if (victim_dirty) *victim_dirty = was_dirty;
        remove_slot(pc, s);
    }
    pc->keys[s] = key;
    pc->flags[s] = flags | PCACHE_REF;
    pc->table[probe(pc, key)] = s + 1;
    push_front(pc, s);
    pc->count++;
    if (flags & PCACHE_DIRTY) pc->dirty++;
    return s;
}

int64_t pcache_flush(pcache *pc, int64_t max, uint64_t *out)
{
    int64_t n = 0;
    for (uint32_t s = pc->tail; s != NIL && n < max && pc->dirty; s = pc->prev[s]) {
        if ((pc->flags[s] & PCACHE_DIRTY) && !(pc->flags[s] & PCACHE_IO)) {
            pc->flags[s] &= (uint8_t)~PCACHE_DIRTY;
            pc->dirty--;
            if (out) out[n] = pc->keys[s];
            n++;
        }
    }
    pc->c.flushed += (uint64_t)n;
    return n;
}

int pcache_access(pcache *pc, uint64_t key, int write, uint64_t *victim, int *victim_dirty)
{
    pc->c.accesses++;
    if (victim_dirty) *victim_dirty = -1;
    int sequential = pc->have_last && key == pc->last_key + 1;
    pc->last_key = key;
    pc->have_last = 1;
    uint32_t s = lookup(pc, key);
    int hit = s != NIL;
    if (hit) {
        pc->c.hits++;
        if (pc->flags[s] & PCACHE_PREFETCHED) {
            pc->c.readahead_hits++;
            pc->flags[s] &= (uint8_t)~PCACHE_PREFETCHED;
        }
        if (pc->flags[s] & PCACHE_IO) pc->c.io_waits++;
        if (pc->cfg.policy == PCACHE_LRU) {
            unlink_slot(pc, s);
            push_front(pc, s);
        } else {
            pc->flags[s] |= PCACHE_REF;
        }
    } else {
        pc->c.misses++;
        s = insert(pc, key, 0, victim, victim_dirty);
        if (s == NIL) return PS_ESTATE;
        if (sequential && pc->cfg.readahead) {
            uint64_t ra = pc->cfg.readahead < pc->cfg.capacity ? pc->cfg.readahead : pc->cfg.capacity - 1;
            for (uint64_t j = 1; j <= ra; j++) {
                if (lookup(pc, key + j) != NIL) continue;
                if (insert(pc, key + j, PCACHE_PREFETCHED, NULL, NULL) == NIL) break;
                pc->c.readahead++;
            }
        }
    }
    if (write) {
        pc->c.writes++;
        if (!(pc->flags[s] & PCACHE_DIRTY)) {
            pc->flags[s] |= PCACHE_DIRTY;
            pc->dirty++;
            if (pc->cfg.dirty_high && pc->dirty > pc->cfg.dirty_high)
                pcache_flush(pc, (int64_t)(pc->dirty - pc->cfg.dirty_low), NULL);
        }
    }
    return hit;
}

int pcache_run(pcache *pc, const uint64_t *keys, const uint8_t *writes, int64_t n, uint8_t *hit_out)
{
    for (int64_t i = 0; i < n; i++) {
        int r = pcache_access(pc, keys[i], writes ? writes[i] != 0 : 0, NULL, NULL);
        if (r < 0) return r;
        if (hit_out) hit_out[i] = (uint8_t)r;
    }
    return PS_OK;
}

int pcache_flags(const pcache *pc, uint64_t key)
{
    uint32_t s = lookup(pc, key);
    return s == NIL ? -1 : (pc->flags[s] & (uint8_t)~PCACHE_REF);
}

int pcache_mark(pcache *pc, uint64_t key, int flag, int on)
{
    uint32_t s = lookup(pc, key);
    if (s == NIL || (flag != PCACHE_PINNED && flag != PCACHE_IO)) return PS_EINVAL;
    if (on) pc->flags[s] |= (uint8_t)flag;
    else pc->flags[s] &= (uint8_t)~flag;
    return PS_OK;
}

static int drop_slot(pcache *pc, uint32_t s)
{
    if (pc->flags[s] & PCACHE_PINNED) return 0;
    if (pc->flags[s] & PCACHE_DIRTY) pc->c.writebacks++;
    remove_slot(pc, s);
    pc->free_slots[pc->nfree++] = s;
    return 1;
}

int64_t pcache_drop(pcache *pc, uint64_t lo, uint64_t hi)
{
    int64_t n = 0;
    if (hi <= lo) return 0;
    if (hi - lo <= pc->cfg.capacity) {
        for (uint64_t k = lo; k < hi; k++) {
            uint32_t s = lookup(pc, k);
            if (s != NIL) n += drop_slot(pc, s);
        }
    } else {
        for (uint32_t s = pc->head; s != NIL;) {
            uint32_t nxt = pc->next[s];
            if (pc->keys[s] >= lo && pc->keys[s] < hi) n += drop_slot(pc, s);
            s = nxt;
        }
    }
    return n;
}

uint64_t pcache_size(const pcache *pc) { return pc->count; }
uint64_t pcache_dirty(const pcache *pc) { return pc->dirty; }
const pcache_counts *pcache_get_counts(const pcache *pc) { return &pc->c; }
void pcache_reset_counts(pcache *pc) { memset(&pc->c, 0, sizeof pc->c); }
