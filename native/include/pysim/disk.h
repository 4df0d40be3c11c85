/* disk.h -- a mechanical disk: seek curve, rotation, zones, track buffer, scheduling.
 *
 * Service time of a request = controller overhead + seek + rotational
 * latency + media transfer, or overhead + bus transfer when a read is served
 * from the track buffer.
 *   seek(d) = 0 for d = 0; a + b*sqrt(d) for 0 < d < boundary; c + e*d beyond
 *             (the usual two-part curve: acceleration-limited short seeks,
 *             coast-limited long ones; d in cylinders, result in seconds).
 *   rotation: the platter angle at simulated time t is frac(t / period) with
 *             sector 0 of every track under the head at t = 0; the head waits
 *             for the first sector of the request to come round.
 *   transfer: sectors / sectors_per_track of a revolution per track; a track
 *             crossing costs a head switch (track skew is assumed to hide the
 *             rotational resynchronisation).
 *   buffer:   after a read, the drive keeps reading ahead at media rate into
 *             a buffer of buffer_sectors; a later read wholly inside that
 *             range is served from it as soon as its last sector has arrived.
 *             Writes go to the media and empty the buffer.
 * Zones: zone z covers cylinders [zones[z].first_cyl, zones[z+1].first_cyl)
 * with zones[z].sectors_per_track sectors per track; LBAs fill cylinder by
 * cylinder, head by head, from cylinder 0 (the outer, fastest zone). */
#ifndef PYSIM_DISK_H
#define PYSIM_DISK_H

#include <stdint.h>

typedef struct disk_zone {
    uint32_t first_cyl;
    uint32_t sectors_per_track;
} disk_zone;

typedef struct disk_geom {
    uint32_t cylinders, heads, sector_bytes;
    double rpm;
    uint32_t nzones;
    const disk_zone *zones;  /* copied by disk_new() */
    double seek_boundary_cyl;
    double seek_a_s, seek_b_s; /* short seeks: a + b*sqrt(d), seconds */
    double seek_c_s, seek_e_s; /* long seeks:  c + e*d, seconds */
    double head_switch_s;
    double overhead_s;         /* controller overhead per request */
    double bus_bytes_per_s;    /* interface rate for buffer hits */
    uint32_t buffer_sectors;   /* read-ahead buffer; 0 for none */
} disk_geom;

typedef enum { DISK_FCFS = 0, DISK_SSTF = 1, DISK_SCAN = 2, DISK_CSCAN = 3 } disk_sched;

/* A batch of requests, sorted by arrival, with per-request outputs. */
typedef struct disk_batch {
    int64_t n;
    const double *arrival_s;
    const uint64_t *lba;
    const uint32_t *sectors; /* >= 1 */
    const uint8_t *write;    /* 1 for a write; NULL: all reads */
    double *start_s, *finish_s;               /* outputs */
    double *seek_s, *rotation_s, *transfer_s; /* outputs; NULL to skip */
    uint8_t *buffer_hit;                      /* output; NULL to skip */
} disk_batch;

typedef struct disk disk;

/* PS_OK when the geometry is usable, PS_EINVAL otherwise. */
int disk_geom_check(const disk_geom *g);
disk *disk_new(const disk_geom *g); /* NULL if invalid or out of memory */
void disk_free(disk *d);
/* Head to cylinder 0, buffer empty. */
void disk_reset(disk *d);
uint64_t disk_capacity_sectors(const disk *d);
double disk_seek_time(const disk *d, uint32_t distance_cyl);
/* Physical place of an LBA. PS_OK or PS_EINVAL past the end. */
int disk_locate(const disk *d, uint64_t lba, uint32_t *cyl, uint32_t *head, uint32_t *sector,
                uint32_t *sectors_per_track);
/* Serve a batch in the order the scheduler picks, from the disk's current
 * state. PS_OK, PS_EINVAL (unsorted arrivals, LBA out of range, zero sectors),
 * PS_ENOMEM. */
int disk_run(disk *d, disk_sched s, const disk_batch *b);

#endif
