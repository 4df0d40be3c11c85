/* status.h -- error codes and allocation hooks shared by the whole C core.
 *
 * Every fallible function returns one of these codes (or NULL for
 * constructors). The library never aborts and never prints. */
#ifndef PYSIM_STATUS_H
#define PYSIM_STATUS_H

#include <stddef.h>

enum ps_status {
    PS_OK = 0,
    PS_ENOMEM = -1,   /* allocation failed */
    PS_EINVAL = -2,   /* an argument is out of its allowed range */
    PS_EEMPTY = -3,   /* nothing to pop */
    PS_ESTATE = -4,   /* operation not allowed in the object's current state */
    PS_ECALLBACK = -5 /* a user callback asked to stop with an error */
};

/* Static text for a status code; never NULL. */
const char *ps_strerror(int status);

/* Allocation goes through these so tests can inject failures:
 * ps_fail_after(n) makes the (n+1)-th allocation from now fail; -1 disables. */
void *ps_malloc(size_t size);
void *ps_calloc(size_t n, size_t size);
void *ps_realloc(void *p, size_t size);
void ps_free(void *p);
void ps_fail_after(long n);

#endif
