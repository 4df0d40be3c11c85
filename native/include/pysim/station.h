/* station.h -- a queueing station on a ps_engine: c servers and a discipline.
 *
 * Disciplines:
 *   STATION_FIFO  first come, first served;
 *   STATION_PS    processor sharing: n jobs share c servers, each at rate min(1, c/n);
 *   STATION_PRIO  preemptive-resume priority: smaller class is served first, FIFO
 *                 within a class; an arrival preempts the lowest-priority job in service;
 *   STATION_CUSTOM non-preemptive, the waiting job to start next is chosen by a
 *                 user callback (for instance a Numba cfunc).
 * Service demands are in seconds of one server's work. */
#ifndef PYSIM_STATION_H
#define PYSIM_STATION_H

#include <stdint.h>

#include "pysim/engine.h"

typedef enum {
    STATION_FIFO = 0,
    STATION_PS = 1,
    STATION_PRIO = 2,
    STATION_CUSTOM = 3
} station_discipline;

/* Chooses the waiting job to start: an index in [0, n). The arrays hold the
 * waiting jobs in arrival order: arrival time, remaining demand, class. Anything out of range stops the run with
 * PS_ECALLBACK. */
typedef int32_t (*station_select_fn)(int32_t n, const double *arrival_s,
                                     const double *service_s, const int32_t *klass);

/* Called when a job leaves; returns PS_OK or a status that stops the run. */
typedef int (*station_depart_fn)(void *ctx, ps_engine *e, int64_t job, double arrival_s,
                                 int32_t klass);

typedef struct station_stats {
    uint64_t arrivals, departures;
    double since_s;          /* start of the measurement window */
    double busy_integral;    /* server-seconds of work done */
    double number_integral;  /* time integral of jobs present (job-seconds) */
    double response_sum;     /* seconds, over departures */
    double response_sumsq;   /* seconds^2 */
    double wait_sum;         /* seconds from arrival to first service, over departures */
    int64_t max_number;      /* most jobs present at once */
} station_stats;

typedef struct station station;

/* NULL if out of memory or invalid (servers < 1, unknown discipline,
 * CUSTOM without a select function). */
station *station_new(ps_engine *e, int32_t servers, station_discipline d, station_select_fn select);
void station_free(station *s);
void station_on_depart(station *s, station_depart_fn fn, void *ctx);

/* A job arrives now. service_s >= 0 and finite. PS_OK, PS_EINVAL, PS_ENOMEM. */
int station_arrive(station *s, int64_t job, double service_s, int32_t klass);

/* Statistics up to now (integrals are brought up to date first). */
const station_stats *station_get_stats(station *s);
/* Forget statistics; the window starts now (for warm-up). */
void station_reset_stats(station *s);
int32_t station_servers(const station *s);
int64_t station_number(const station *s); /* jobs present, waiting or in service */

/* Record (time, jobs present) at every change into growable arrays.
 * PS_OK or PS_ENOMEM. */
int station_log_enable(station *s);
int64_t station_log(const station *s, const double **times, const int64_t **numbers);

#endif
