/* qnet.h -- an open network of queueing stations, run entirely in C.
 *
 * K stations; station k has c_k servers, a discipline, exponential service
 * with rate mu_k (per second), and Poisson external arrivals with rate
 * lambda_k (0 for none). After service at k a job goes to station j with
 * probability route[k*K + j] and leaves with the rest. One station fed by a
 * trace (interarrival and service arrays) instead of draws gives the
 * trace-driven single queue the benchmarks use.
 *
 * All draws come from one ps_rng, in event order, so a seed fixes the run. */
#ifndef PYSIM_QNET_H
#define PYSIM_QNET_H

#include <stdint.h>

#include "pysim/rng.h"
#include "pysim/station.h"

typedef struct qnet_spec {
    int32_t stations;               /* K >= 1 */
    const int32_t *servers;         /* [K], each >= 1 */
    const int32_t *discipline;      /* [K], STATION_FIFO or STATION_PS; NULL: all FIFO */
    const double *service_rate;     /* [K] mu_k > 0, per second */
    const double *arrival_rate;     /* [K] lambda_k >= 0, per second, sum > 0 */
    const double *route;            /* [K*K] row-stochastic or less; NULL: all leave */
    int64_t departures;             /* stop after this many leave the network (> 0) */
    int64_t warmup;                 /* departures discarded before measuring (>= 0) */
} qnet_spec;

typedef struct qnet_result {
    int64_t departures;       /* measured departures from the network */
    double sojourn_sum;       /* seconds, over measured departures */
    double sojourn_sumsq;
    double number_integral;   /* job-seconds in the network over the window */
    double window_s;          /* length of the measurement window, seconds */
    double throughput;        /* departures per second over the window */
    uint64_t events;          /* engine events processed */
} qnet_result;

/* Run a spec. stats_out (optional, [K]) receives each station's statistics
 * over the measurement window. PS_OK, PS_EINVAL, PS_ENOMEM. */
int qnet_run(const qnet_spec *spec, ps_rng *rng, qnet_result *out, station_stats *stats_out);

/* Single station fed by a trace: job i arrives interarrival[0] + ... +
 * interarrival[i] seconds after the start and needs service[i] seconds.
 * Runs until all n jobs have left. PS_OK, PS_EINVAL, PS_ENOMEM. */
int qnet_run_trace(int32_t servers, station_discipline d, const double *interarrival,
                   const double *service, int64_t n, qnet_result *out,
                   station_stats *stats_out);

#endif
