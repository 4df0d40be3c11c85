/* status.c -- status strings and the allocation hooks with failure injection. */
#include <stdlib.h>

#include "pysim/status.h"

static long fail_countdown = -1; /* -1: never fail */

const char *ps_strerror(int status)
{
    switch (status) {
    case PS_OK: return "ok";
    case PS_ENOMEM: return "out of memory";
    case PS_EINVAL: return "invalid argument";
    case PS_EEMPTY: return "empty";
    case PS_ESTATE: return "invalid state";
    case PS_ECALLBACK: return "callback failed";
    default: return "unknown status";
    }
}

void ps_fail_after(long n) { fail_countdown = n; }

/* True when the injected failure is due; counts down otherwise. */
static int injected_failure(void)
{
    if (fail_countdown < 0) return 0;
    if (fail_countdown == 0) return 1;
    fail_countdown--;
    return 0;
}

void *ps_malloc(size_t size) { return injected_failure() ? NULL : malloc(size ? size : 1); }
void *ps_calloc(size_t n, size_t size) { return injected_failure() ? NULL : calloc(n ? n : 1, size ? size : 1); }
void *ps_realloc(void *p, size_t size) { return injected_failure() ? NULL : realloc(p, size ? size : 1); }
void ps_free(void *p) { free(p); }
