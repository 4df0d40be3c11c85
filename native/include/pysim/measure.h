/* measure.h -- real microbenchmarks of the machine the lab runs on ("then vs now").
 *
 * Each function runs a small experiment and fills its result; none needs
 * root. Where a facility is missing or refused (io_uring disabled, no huge
 * pages, a descriptor limit) the function returns PS_ESTATE and leaves the
 * result alone, so the caller can say so instead of crashing. Times are
 * seconds, rates per second. Functions that fork wait for their child. */
#ifndef PYSIM_MEASURE_H
#define PYSIM_MEASURE_H

#include <stddef.h>
#include <stdint.h>

enum { MEASURE_SELECT = 0, MEASURE_POLL = 1, MEASURE_EPOLL = 2 };

double measure_now(void); /* monotonic clock, seconds */
/* Smallest positive step of the monotonic clock seen in `tries` reads. */
double measure_timer_resolution(int tries);
/* Mean cost of one trivial system call (getppid through syscall()). */
double measure_syscall(int64_t calls);
/* memcpy bandwidth over `bytes`, `reps` times. PS_OK, PS_EINVAL, PS_ENOMEM. */
int measure_memcpy(size_t bytes, int reps, double *bytes_per_s);
/* Mean UDP round trip over loopback with a forked echo process, `size`-byte
 * messages (1..65000), `iters` round trips. */
int measure_udp_rtt(size_t size, int iters, double *rtt_s);
/* TCP bulk transfer over loopback to a forked reader: `total` bytes written in
 * `chunk`-byte writes; rcvbuf > 0 sets the receiver's SO_RCVBUF. */
int measure_tcp_throughput(size_t total, size_t chunk, int rcvbuf, double *bytes_per_s);
/* Mean time of one select/poll/epoll_wait over n_idle idle UDP sockets and
 * n_active readable ones (`mech` is MEASURE_*); select is limited to FD_SETSIZE
 * descriptors (PS_ESTATE beyond it). */
int measure_event_wait(int mech, int n_idle, int n_active, int calls, double *per_call_s);
/* n preads of `size` bytes from the file at `fd`, one system call each. */
int measure_pread_single(int fd, int n, size_t size, double *total_s);
/* The same n preads submitted in one batch through io_uring (one
 * io_uring_enter); PS_ESTATE if the kernel refuses io_uring. */
int measure_pread_uring(int fd, int n, size_t size, double *total_s);
/* Copy `bytes` from src_fd to dst_fd with read()+write() in `chunk`-byte
 * pieces, or with copy_file_range() (PS_ESTATE if unsupported). */
int measure_copy_readwrite(int src_fd, int dst_fd, size_t bytes, size_t chunk, double *bytes_per_s);
int measure_copy_file_range(int src_fd, int dst_fd, size_t bytes, double *bytes_per_s);
/* Mean time per 8-byte load over a `bytes` array: random (1) or page-strided (0)
 * addresses, with transparent huge pages asked for (1, madvise) or refused (0). */
int measure_access(size_t bytes, int64_t accesses, int random, int huge, uint64_t seed, double *per_access_s);

#endif
