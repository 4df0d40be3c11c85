/* plain_pagecache.c -- the page-cache baseline: a bare LRU over page keys in plain C, an
 * open-addressing hash table (linear probing, backward-shift deletion) and a doubly linked list.
 *
 * Usage: plain_pagecache KEYS N CAPACITY   (KEYS: raw uint64 file of page keys)
 * Prints: accesses seconds hits */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { uint64_t key; int64_t prev, next, slot; } node;

static uint64_t *slot_key;
static int64_t *slot_node;
static uint64_t mask;
static node *nodes;

static uint64_t hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    return k ^ (k >> 33);
}

/* The slot holding k, or the empty slot where it would go. */
static uint64_t find(uint64_t k)
{
    uint64_t i = hash(k) & mask;
    while (slot_node[i] >= 0 && slot_key[i] != k) i = (i + 1) & mask;
    return i;
}

/* Empty slot i, shifting back the entries of its probe run that would otherwise be lost. */
static void erase(uint64_t i)
{
    slot_node[i] = -1;
    for (uint64_t j = (i + 1) & mask; slot_node[j] >= 0; j = (j + 1) & mask) {
        uint64_t h = hash(slot_key[j]) & mask;
        int stays = (i <= j) ? (i < h && h <= j) : (i < h || h <= j); /* h cyclically in (i, j] */
        if (stays) continue;
        slot_key[i] = slot_key[j];
        slot_node[i] = slot_node[j];
        nodes[slot_node[i]].slot = (int64_t)i;
        slot_node[j] = -1;
        i = j;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: %s KEYS N CAPACITY\n", argv[0]); return 2; }
    long n = atol(argv[2]), cap = atol(argv[3]);
    uint64_t *a = malloc((size_t)n * sizeof *a);
    FILE *f = fopen(argv[1], "rb");
    if (!a || !f || fread(a, sizeof *a, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read\n"); return 2; }
    fclose(f);
    uint64_t slots = 1;
    while (slots < 2 * (uint64_t)cap) slots <<= 1;
    mask = slots - 1;
    slot_key = malloc(slots * sizeof *slot_key);
    slot_node = malloc(slots * sizeof *slot_node);
    nodes = malloc((size_t)cap * sizeof *nodes);
    for (uint64_t i = 0; i < slots; i++) slot_node[i] = -1;
    int64_t head = -1, tail = -1, used = 0;
    uint64_t hits = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long r = 0; r < n; r++) {
        uint64_t k = a[r], i = find(k);
        int64_t x;
        if (slot_node[i] >= 0) { /* a hit: to the front */
            hits++;
            x = slot_node[i];
            if (x == head) continue;
            nodes[nodes[x].prev].next = nodes[x].next;
            if (nodes[x].next >= 0) nodes[nodes[x].next].prev = nodes[x].prev; else tail = nodes[x].prev;
        } else {
            if (used < cap) {
                x = used++;
            } else { /* evict the least recently used */
                x = tail;
                tail = nodes[x].prev;
                if (tail >= 0) nodes[tail].next = -1; else head = -1;
                erase((uint64_t)nodes[x].slot);
                i = find(k);
            }
            nodes[x].key = k;
            nodes[x].slot = (int64_t)i;
            slot_key[i] = k;
            slot_node[i] = x;
        }
        nodes[x].prev = -1;
        nodes[x].next = head;
        if (head >= 0) nodes[head].prev = x;
        head = x;
        if (tail < 0) tail = x;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%ld %.9f %llu\n", n, secs, (unsigned long long)hits);
    return 0;
}
