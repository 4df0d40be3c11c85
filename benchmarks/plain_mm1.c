/* plain_mm1.c -- the M/M/1 baseline: a bare binary-heap event loop in plain C.
 *
 * Usage: plain_mm1 INTERARRIVALS SERVICES N   (raw float64 files)
 * Prints: customers seconds events mean_time_in_system
 * The timed part is the event loop only, not reading the files. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { double t; long seq; int kind; long job; } ev; /* kind 0 arrival, 1 departure */

static ev *heap;
static long hn, seqno;

static int less(const ev *a, const ev *b) { return a->t < b->t || (a->t == b->t && a->seq < b->seq); }

static void push(double t, int kind, long job)
{
    ev e = {t, seqno++, kind, job};
    long i = hn++;
    while (i > 0 && less(&e, &heap[(i - 1) / 2])) { heap[i] = heap[(i - 1) / 2]; i = (i - 1) / 2; }
    heap[i] = e;
}

static ev pop(void)
{
    ev top = heap[0], last = heap[--hn];
    long i = 0;
    for (;;) {
        long c = 2 * i + 1;
        if (c >= hn) break;
        if (c + 1 < hn && less(&heap[c + 1], &heap[c])) c++;
        if (!less(&heap[c], &last)) break;
        heap[i] = heap[c];
        i = c;
    }
    if (hn > 0) heap[i] = last;
    return top;
}

static double *load(const char *path, long n)
{
    double *a = malloc((size_t)n * sizeof *a);
    FILE *f = fopen(path, "rb");
    if (!a || !f || fread(a, sizeof *a, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
    fclose(f);
    return a;
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: %s IA SVC N\n", argv[0]); return 2; }
    long n = atol(argv[3]);
    double *ia = load(argv[1], n), *svc = load(argv[2], n);
    double *arrival = malloc((size_t)n * sizeof *arrival);
    long *queue = malloc((size_t)n * sizeof *queue);
    heap = malloc(16 * sizeof *heap);
    long qh = 0, qt = 0, done = 0, events = 0;
    int busy = 0;
    double sum = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    push(ia[0], 0, 0);
    while (hn > 0) {
        ev e = pop();
        events++;
        if (e.kind == 0) {
            arrival[e.job] = e.t;
            if (e.job + 1 < n) push(e.t + ia[e.job + 1], 0, e.job + 1);
            if (!busy) { busy = 1; push(e.t + svc[e.job], 1, e.job); }
            else queue[qt++] = e.job;
        } else {
            sum += e.t - arrival[e.job];
            done++;
            if (qh < qt) { long j = queue[qh++]; push(e.t + svc[j], 1, j); }
            else busy = 0;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%ld %.9f %ld %.17g\n", done, secs, events, sum / (double)done);
    return 0;
}
