/* measure.c -- microbenchmarks of today's machine. Linux and POSIX, not C99 alone. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pysim/measure.h"
#include "pysim/status.h"

double measure_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double measure_timer_resolution(int tries)
{
    double best = 1.0;
    for (int i = 0; i < tries; i++) {
        double a = measure_now(), b;
        do {
            b = measure_now();
        } while (b == a);
        if (b - a < best) best = b - a;
    }
    return best;
}

double measure_syscall(int64_t calls)
{
    if (calls < 1) calls = 1;
    double t0 = measure_now();
    for (int64_t i = 0; i < calls; i++) (void)syscall(SYS_getppid); /* never cached by libc */
    return (measure_now() - t0) / (double)calls;
}

int measure_memcpy(size_t bytes, int reps, double *bytes_per_s)
{
    if (bytes == 0 || reps < 1) return PS_EINVAL;
    char *a = ps_malloc(bytes), *b = ps_malloc(bytes);
    if (a == NULL || b == NULL) {
        ps_free(a);
        ps_free(b);
        return PS_ENOMEM;
    }
    memset(a, 1, bytes);
    memset(b, 2, bytes); /* touch every page before timing */
    double t0 = measure_now();
    for (int r = 0; r < reps; r++) {
        memcpy(r & 1 ? a : b, r & 1 ? b : a, bytes);
        __asm__ __volatile__("" ::: "memory"); /* keep the copies */
    }
    double dt = measure_now() - t0;
    *bytes_per_s = dt > 0 ? (double)bytes * reps / dt : 0;
    ps_free(a);
    ps_free(b);
    return PS_OK;
}

/* A UDP socket bound to an ephemeral loopback port; its address in *addr. */
static int udp_socket(struct sockaddr_in *addr)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0) return -1;
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof *addr;
    if (bind(s, (struct sockaddr *)addr, len) < 0 || getsockname(s, (struct sockaddr *)addr, &len) < 0) {
        close(s);
        return -1;
    }
    return s;
}

static int reap(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return PS_ESTATE;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? PS_OK : PS_ESTATE;
}

int measure_udp_rtt(size_t size, int iters, double *rtt_s)
{
    if (size < 1 || size > 65000 || iters < 1) return PS_EINVAL;
    struct sockaddr_in a, b;
    int sa = udp_socket(&a), sb = udp_socket(&b);
    char *buf = ps_calloc(1, size);
    int st = PS_ESTATE;
    if (sa < 0 || sb < 0 || buf == NULL) goto done;
    pid_t pid = fork();
    if (pid < 0) goto done;
    if (pid == 0) { /* echo: back to where it came from */
        char *echo = malloc(size);
        for (int i = 0; echo && i < iters + 1; i++) {
            ssize_t n = recv(sb, echo, size, 0);
            if (n <= 0 || sendto(sb, echo, (size_t)n, 0, (struct sockaddr *)&a, sizeof a) != n) _exit(1);
        }
        _exit(0);
    }
    /* one warm-up round trip, then the timed ones */
    double t0 = 0;
    int ok = 1;
    for (int i = 0; ok && i < iters + 1; i++) {
        if (i == 1) t0 = measure_now();
        ok = sendto(sa, buf, size, 0, (struct sockaddr *)&b, sizeof b) == (ssize_t)size &&
             recv(sa, buf, size, 0) == (ssize_t)size;
    }
    double dt = measure_now() - t0;
    if (!ok) kill(pid, SIGKILL);
    st = reap(pid);
    if (ok && st == PS_OK) *rtt_s = dt / iters;
    else st = PS_ESTATE;
done:
    if (sa >= 0) close(sa);
    if (sb >= 0) close(sb);
    ps_free(buf);
    return st;
}

int measure_tcp_throughput(size_t total, size_t chunk, int rcvbuf, double *bytes_per_s)
{
    if (total == 0 || chunk == 0 || rcvbuf < 0) return PS_EINVAL;
    int ls = socket(AF_INET, SOCK_STREAM, 0), st = PS_ESTATE;
    char *buf = ps_calloc(1, chunk);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (ls < 0 || buf == NULL) goto done;
    if (rcvbuf > 0) setsockopt(ls, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf); /* inherited by accept() */
    if (bind(ls, (struct sockaddr *)&addr, len) < 0 || listen(ls, 1) < 0 ||
        getsockname(ls, (struct sockaddr *)&addr, &len) < 0)
        goto done;
    pid_t pid = fork();
    if (pid < 0) goto done;
    if (pid == 0) { /* reader: drain everything, then acknowledge with one byte */
        int c = accept(ls, NULL, NULL);
        size_t got = 0;
        char *in = malloc(65536);
        while (in && c >= 0 && got < total) {
            ssize_t n = read(c, in, 65536);
            if (n <= 0) _exit(1);
            got += (size_t)n;
        }
        _exit(c >= 0 && write(c, "k", 1) == 1 ? 0 : 1);
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int ok = s >= 0 && connect(s, (struct sockaddr *)&addr, sizeof addr) == 0;
    double t0 = measure_now();
    for (size_t sent = 0; ok && sent < total;) {
        size_t want = total - sent < chunk ? total - sent : chunk;
        ssize_t n = write(s, buf, want);
        if (n <= 0) ok = 0;
        else sent += (size_t)n;
    }
    char k;
    ok = ok && read(s, &k, 1) == 1;
    double dt = measure_now() - t0;
    if (s >= 0) close(s);
    if (!ok) kill(pid, SIGKILL);
    st = reap(pid);
    if (ok && st == PS_OK) *bytes_per_s = (double)total / dt;
    else st = PS_ESTATE;
done:
    if (ls >= 0) close(ls);
    ps_free(buf);
    return st;
}

int measure_event_wait(int mech, int n_idle, int n_active, int calls, double *per_call_s)
{
    if (mech < MEASURE_SELECT || mech > MEASURE_EPOLL || n_idle < 0 || n_active < 1 || calls < 1) return PS_EINVAL;
    int n = n_idle + n_active, st = PS_ESTATE, ep = -1;
    int *fds = ps_malloc((size_t)n * sizeof *fds);
    struct pollfd *pfd = ps_malloc((size_t)n * sizeof *pfd);
    struct epoll_event *evs = ps_malloc((size_t)n * sizeof *evs);
    int opened = 0;
    if (fds == NULL || pfd == NULL || evs == NULL) {
        st = PS_ENOMEM;
        goto done;
    }
    for (; opened < n; opened++) {
        struct sockaddr_in a;
        fds[opened] = udp_socket(&a);
        if (fds[opened] < 0) goto done; /* descriptor limit */
        if (opened >= n_idle) { /* active: a datagram waits and is never read */
            char byte = 1;
            if (sendto(fds[opened], &byte, 1, 0, (struct sockaddr *)&a, sizeof a) != 1) goto done;
        }
    }
    if (mech == MEASURE_SELECT && fds[n - 1] >= FD_SETSIZE) goto done;
    if (mech == MEASURE_EPOLL) {
        if ((ep = epoll_create1(0)) < 0) goto done;
        for (int i = 0; i < n; i++) {
            struct epoll_event e = {.events = EPOLLIN, .data.fd = fds[i]};
            if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e) < 0) goto done;
        }
    }
    int ready = 0;
    double t0 = measure_now();
    for (int c = 0; c < calls; c++) {
        if (mech == MEASURE_SELECT) { /* servers rebuild the interest set on every call */
            fd_set rd;
            FD_ZERO(&rd);
            int maxfd = 0;
            for (int i = 0; i < n; i++) {
                FD_SET(fds[i], &rd);
                if (fds[i] > maxfd) maxfd = fds[i];
            }
            struct timeval tv = {0, 0};
            ready = select(maxfd + 1, &rd, NULL, NULL, &tv);
        } else if (mech == MEASURE_POLL) {
            for (int i = 0; i < n; i++) pfd[i] = (struct pollfd){fds[i], POLLIN, 0};
            ready = poll(pfd, (nfds_t)n, 0);
        } else {
            ready = epoll_wait(ep, evs, n, 0);
        }
    }
    double dt = measure_now() - t0;
    if (ready == n_active) {
        *per_call_s = dt / calls;
        st = PS_OK;
    }
done:
    for (int i = 0; i < opened; i++) close(fds[i]);
    if (ep >= 0) close(ep);
    ps_free(fds);
    ps_free(pfd);
    ps_free(evs);
    return st;
}

int measure_pread_single(int fd, int n, size_t size, double *total_s)
{
    if (fd < 0 || n < 1 || size == 0) return PS_EINVAL;
    char *buf = ps_malloc(size);
    if (buf == NULL) return PS_ENOMEM;
    int st = PS_OK;
    double t0 = measure_now();
    for (int i = 0; i < n && st == PS_OK; i++)
        if (pread(fd, buf, size, (off_t)((size_t)i * size)) != (ssize_t)size) st = PS_ESTATE;
    *total_s = measure_now() - t0;
    ps_free(buf);
    return st;
}

/* A minimal io_uring (no liburing): set up rings, queue n reads, one enter, reap. */
int measure_pread_uring(int fd, int n, size_t size, double *total_s)
{
    if (fd < 0 || n < 1 || size == 0) return PS_EINVAL;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    unsigned entries = 1;
    while (entries < (unsigned)n) entries <<= 1;
    int ring = (int)syscall(__NR_io_uring_setup, entries, &p);
    if (ring < 0) return PS_ESTATE; /* disabled, or not permitted here */
    int st = PS_ESTATE;
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    size_t sqe_len = p.sq_entries * sizeof(struct io_uring_sqe);
    char *buf = ps_malloc(size * (size_t)n);
    void *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
    void *cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes = mmap(NULL, sqe_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                                     IORING_OFF_SQES);
    if (buf == NULL || sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) goto done;
    unsigned *sq_tail = (unsigned *)((char *)sq + p.sq_off.tail);
    unsigned *sq_mask = (unsigned *)((char *)sq + p.sq_off.ring_mask);
    unsigned *sq_array = (unsigned *)((char *)sq + p.sq_off.array);
    unsigned *cq_head = (unsigned *)((char *)cq + p.cq_off.head);
    unsigned *cq_tail = (unsigned *)((char *)cq + p.cq_off.tail);
    unsigned *cq_mask = (unsigned *)((char *)cq + p.cq_off.ring_mask);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes);
    double t0 = measure_now();
    unsigned tail = *sq_tail;
    for (int i = 0; i < n; i++, tail++) {
        unsigned idx = tail & *sq_mask;
        struct io_uring_sqe *e = &sqes[idx];
        memset(e, 0, sizeof *e);
        e->opcode = IORING_OP_READ;
        e->fd = fd;
        e->addr = (uint64_t)(uintptr_t)(buf + (size_t)i * size);
        e->len = (uint32_t)size;
        e->off = (uint64_t)i * size;
        sq_array[idx] = idx;
    }
    __atomic_store_n(sq_tail, tail, __ATOMIC_RELEASE);
    long r = syscall(__NR_io_uring_enter, ring, (unsigned)n, (unsigned)n, IORING_ENTER_GETEVENTS, NULL, 0);
    int ok = r == n;
    unsigned head = *cq_head, reaped = 0;
    while (ok && reaped < (unsigned)n) {
        unsigned t = __atomic_load_n(cq_tail, __ATOMIC_ACQUIRE);
        for (; head != t; head++, reaped++)
            if (cqes[head & *cq_mask].res != (int)size) ok = 0;
        __atomic_store_n(cq_head, head, __ATOMIC_RELEASE);
        if (reaped < (unsigned)n && ok &&
            syscall(__NR_io_uring_enter, ring, 0, (unsigned)n - reaped, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
            ok = 0;
    }
    if (ok) {
        *total_s = measure_now() - t0;
        st = PS_OK;
    }
done:
    if (sqes != MAP_FAILED && sqes != NULL) munmap(sqes, sqe_len);
    if (cq != MAP_FAILED && cq != NULL) munmap(cq, cq_len);
    if (sq != MAP_FAILED && sq != NULL) munmap(sq, sq_len);
    close(ring);
    ps_free(buf);
    return st;
}

int measure_copy_readwrite(int src, int dst, size_t bytes, size_t chunk, double *bytes_per_s)
{
    if (src < 0 || dst < 0 || bytes == 0 || chunk == 0) return PS_EINVAL;
    char *buf = ps_malloc(chunk);
    if (buf == NULL) return PS_ENOMEM;
    int st = PS_OK;
    double t0 = measure_now();
    for (size_t done = 0; done < bytes && st == PS_OK;) {
        size_t want = bytes - done < chunk ? bytes - done : chunk;
        ssize_t n = pread(src, buf, want, (off_t)done);
        if (n <= 0 || pwrite(dst, buf, (size_t)n, (off_t)done) != n) st = PS_ESTATE;
        else done += (size_t)n;
    }
    double dt = measure_now() - t0;
    if (st == PS_OK) *bytes_per_s = (double)bytes / dt;
    ps_free(buf);
    return st;
}

int measure_copy_file_range(int src, int dst, size_t bytes, double *bytes_per_s)
{
    if (src < 0 || dst < 0 || bytes == 0) return PS_EINVAL;
    loff_t in = 0, out = 0;
    double t0 = measure_now();
    for (size_t done = 0; done < bytes;) {
        ssize_t n = copy_file_range(src, &in, dst, &out, bytes - done, 0);
        if (n <= 0) return PS_ESTATE; /* unsupported here, or failed */
        done += (size_t)n;
    }
    *bytes_per_s = (double)bytes / (measure_now() - t0);
    return PS_OK;
}

int measure_access(size_t bytes, int64_t accesses, int random, int huge, uint64_t seed, double *per_access_s)
{
    if (bytes < 4096 || accesses < 1) return PS_EINVAL;
    size_t align = 2u << 20; /* map 2 MB-aligned so huge pages can be used */
    char *raw = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return PS_ENOMEM;
    char *a = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (madvise(a, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0 && huge) {
        munmap(raw, bytes + align);
        return PS_ESTATE;
    }
    memset(a, 1, bytes); /* fault everything in before timing */
    uint64_t x = seed | 1, n8 = bytes / 8, sum = 0;
    uint64_t stride = 4096 / 8 + 8; /* a new page (and cache set) each step */
    uint64_t idx = 0;
    double t0 = measure_now();
    for (int64_t i = 0; i < accesses; i++) {
        if (random) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
            idx = x % n8;
        } else {
            idx += stride;
            if (idx >= n8) idx -= n8;
        }
        sum += ((volatile uint64_t *)a)[idx];
    }
    double dt = measure_now() - t0;
    munmap(raw, bytes + align);
    *per_access_s = dt / (double)accesses + (double)(sum & 0) * 0.0;
    return PS_OK;
}
