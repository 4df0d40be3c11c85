/* plain_cache.c -- the cache baseline: a bare set-associative LRU loop in plain C.
 *
 * Usage: plain_cache ADDRS N SIZE LINE WAYS   (ADDRS: raw uint64 file)
 * Prints: accesses seconds hits */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 6) { fprintf(stderr, "usage: %s ADDRS N SIZE LINE WAYS\n", argv[0]); return 2; }
    long n = atol(argv[2]);
    uint64_t size = strtoull(argv[3], 0, 10), line = strtoull(argv[4], 0, 10), ways = strtoull(argv[5], 0, 10);
    uint64_t sets = size / (line * ways);
    unsigned shift = 0;
    while ((1ull << shift) < line) shift++;
    uint64_t *a = malloc((size_t)n * sizeof *a);
    FILE *f = fopen(argv[1], "rb");
    if (!a || !f || fread(a, sizeof *a, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read\n"); return 2; }
    fclose(f);
    uint64_t *tags = calloc(sets * ways, sizeof *tags);
    int64_t *used = calloc(sets * ways, sizeof *used);
    uint64_t hits = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        uint64_t l = a[i] >> shift, s = l % sets, key = l / sets + 1;
        uint64_t *t = tags + s * ways;
        int64_t *u = used + s * ways;
        long w = -1, victim = 0;
        for (uint64_t k = 0; k < ways; k++) {
            if (t[k] == key) { w = (long)k; break; }
            if (u[k] < u[victim]) victim = (long)k; /* empty ways have used == 0: taken first */
        }
        if (w >= 0) { hits++; u[w] = i + 1; }
        else { t[victim] = key; u[victim] = i + 1; }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%ld %.9f %llu\n", n, secs, (unsigned long long)hits);
    return 0;
}
