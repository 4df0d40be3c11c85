/* disk.c -- mechanical disk service times and request scheduling. */
#include <math.h>
#include <string.h>

#include "pysim/disk.h"
#include "pysim/status.h"

struct disk {
    disk_geom g;
    disk_zone *zones;
    uint64_t *zone_first_lba; /* [nzones + 1] */
    double period_s;          /* one revolution */
    uint32_t cyl;             /* current head cylinder */
    int direction;            /* SCAN: +1 up, -1 down */
    double now;               /* when the disk is next free */
    /* read-ahead buffer: sector buf_lba + k is there at buf_t + k * buf_sector_s */
    int buf_valid;
    uint64_t buf_lba;
    double buf_t, buf_sector_s;
};

int disk_geom_check(const disk_geom *g)
{
    if (g->cylinders == 0 || g->heads == 0 || g->sector_bytes == 0 || !(g->rpm > 0)) return PS_EINVAL;
    if (g->nzones == 0 || g->zones == NULL || g->zones[0].first_cyl != 0) return PS_EINVAL;
    for (uint32_t z = 0; z < g->nzones; z++) {
        if (g->zones[z].sectors_per_track == 0 || g->zones[z].first_cyl >= g->cylinders) return PS_EINVAL;
        if (z > 0 && g->zones[z].first_cyl <= g->zones[z - 1].first_cyl) return PS_EINVAL;
    }
    if (!(g->seek_boundary_cyl >= 0) || !(g->seek_a_s >= 0) || !(g->seek_b_s >= 0) ||
        !(g->seek_c_s >= 0) || !(g->seek_e_s >= 0) || !(g->head_switch_s >= 0) ||
        !(g->overhead_s >= 0) || !(g->bus_bytes_per_s > 0))
        return PS_EINVAL;
    return PS_OK;
}

disk *disk_new(const disk_geom *g)
{
    if (disk_geom_check(g) != PS_OK) return NULL;
    disk *d = ps_calloc(1, sizeof *d);
    if (d == NULL) goto fail;
    d->g = *g;
    d->zones = ps_malloc(g->nzones * sizeof *d->zones);
    d->zone_first_lba = ps_malloc((g->nzones + 1) * sizeof *d->zone_first_lba);
    if (d->zones == NULL || d->zone_first_lba == NULL) goto fail;
    memcpy(d->zones, g->zones, g->nzones * sizeof *d->zones);
    d->g.zones = d->zones;
    d->zone_first_lba[0] = 0;
    for (uint32_t z = 0; z < g->nzones; z++) {
        uint32_t end = z + 1 < g->nzones ? g->zones[z + 1].first_cyl : g->cylinders;
        uint64_t sectors = (uint64_t)(end - g->zones[z].first_cyl) * g->heads * g->zones[z].sectors_per_track;
        d->zone_first_lba[z + 1] = d->zone_first_lba[z] + sectors;
    }
    d->period_s = 60.0 / g->rpm;
    disk_reset(d);
    return d;
fail:
    disk_free(d);
    return NULL;
}

void disk_free(disk *d)
{
    if (d == NULL) return;
    ps_free(d->zones);
    ps_free(d->zone_first_lba);
    ps_free(d);
}

void disk_reset(disk *d)
{
    d->cyl = 0;
    d->direction = 1;
    d->now = 0;
    d->buf_valid = 0;
}

uint64_t disk_capacity_sectors(const disk *d) { return d->zone_first_lba[d->g.nzones]; }

double disk_seek_time(const disk *d, uint32_t dist)
{
    if (dist == 0) return 0.0;
    if ((double)dist < d->g.seek_boundary_cyl) return d->g.seek_a_s + d->g.seek_b_s * sqrt((double)dist);
    return d->g.seek_c_s + d->g.seek_e_s * (double)dist;
}

int disk_locate(const disk *d, uint64_t lba, uint32_t *cyl, uint32_t *head, uint32_t *sector,
                uint32_t *spt)
{
    if (lba >= disk_capacity_sectors(d)) return PS_EINVAL;
    uint32_t z = 0;
    while (lba >= d->zone_first_lba[z + 1]) z++;
    uint64_t off = lba - d->zone_first_lba[z];
    uint32_t n = d->zones[z].sectors_per_track;
    uint64_t track = off / n;
    *cyl = d->zones[z].first_cyl + (uint32_t)(track / d->g.heads);
    *head = (uint32_t)(track % d->g.heads);
    *sector = (uint32_t)(off % n);
    *spt = n;
    return PS_OK;
}

/* Cylinder of an LBA (valid LBAs only). */
static uint32_t cyl_of(const disk *d, uint64_t lba)
{
    uint32_t c, h, s, n;
    disk_locate(d, lba, &c, &h, &s, &n);
    return c;
}

/* Serve one request starting at time t; fills the components, returns finish. */
static double serve(disk *d, double t, uint64_t lba, uint32_t nsect, int write, double *seek,
                    double *rot, double *xfer, uint8_t *hit)
{
    const disk_geom *g = &d->g;
    double start = t + g->overhead_s;
    *seek = *rot = *xfer = 0;
    *hit = 0;
    if (!write && d->buf_valid && lba >= d->buf_lba && lba + nsect <= d->buf_lba + g->buffer_sectors) {
        double ready = d->buf_t + (double)(lba + nsect - d->buf_lba) * d->buf_sector_s;
        double bus = (double)nsect * g->sector_bytes / g->bus_bytes_per_s;
        *hit = 1;
        *xfer = bus;
        double done = start + bus;
        return done > ready ? done : ready;
    }
    uint32_t cyl, head, sector, spt;
    disk_locate(d, lba, &cyl, &head, &sector, &spt);
    *seek = disk_seek_time(d, cyl > d->cyl ? cyl - d->cyl : d->cyl - cyl);
    double at = start + *seek;
    double angle = fmod(at / d->period_s, 1.0), target = (double)sector / spt;
    *rot = fmod(target - angle + 1.0, 1.0) * d->period_s;
    if (*rot >= d->period_s) *rot = 0; /* rounding at exactly one revolution */
    /* media transfer, track by track */
    uint64_t pos = lba, end = lba + nsect;
    double sector_s = d->period_s / spt;
    while (pos < end) {
        uint32_t c, h, s, n;
        disk_locate(d, pos, &c, &h, &s, &n);
        uint64_t here = n - s < end - pos ? n - s : end - pos;
        *xfer += (double)here * d->period_s / n;
        sector_s = d->period_s / n;
        pos += here;
        if (pos < end) *xfer += g->head_switch_s;
        cyl = c;
    }
    double done = at + *rot + *xfer;
    d->cyl = cyl;
    if (write || g->buffer_sectors == 0 || end >= disk_capacity_sectors(d)) {
        d->buf_valid = 0;
    } else {
        d->buf_valid = 1;
        d->buf_lba = end;
        d->buf_t = done;
        d->buf_sector_s = sector_s;
    }
    return done;
}

/* Index into pending[] of the request the scheduler serves next. */
static int64_t choose(disk *d, disk_sched s, const disk_batch *b, const int64_t *pending, int64_t np)
{
    if (s == DISK_FCFS) return 0;
    int64_t best = -1;
    uint64_t best_d = UINT64_MAX;
    for (int pass = 0; pass < 2 && best < 0; pass++) {
        for (int64_t i = 0; i < np; i++) {
            uint32_t c = cyl_of(d, b->lba[pending[i]]);
            int64_t delta = (int64_t)c - (int64_t)d->cyl;
            uint64_t dist;
            if (s == DISK_SSTF) {
                dist = (uint64_t)(delta < 0 ? -delta : delta);
            } else if (s == DISK_SCAN) {
                if (delta * d->direction < 0) continue;
                dist = (uint64_t)(delta < 0 ? -delta : delta);
            } else { /* C-SCAN: upward only; on the second pass from cylinder 0 */
                if (pass == 0 && delta < 0) continue;
                dist = pass == 0 ? (uint64_t)delta : c;
            }
            if (dist < best_d) best_d = dist, best = i;
        }
        if (best < 0 && s == DISK_SCAN) d->direction = -d->direction;
    }
    return best;
}

int disk_run(disk *d, disk_sched s, const disk_batch *b)
{
    if (s < DISK_FCFS || s > DISK_CSCAN) return PS_EINVAL;
    uint64_t cap = disk_capacity_sectors(d);
    for (int64_t i = 0; i < b->n; i++) {
        if (b->sectors[i] == 0 || b->lba[i] >= cap || b->sectors[i] > cap - b->lba[i]) return PS_EINVAL;
        if (!(b->arrival_s[i] >= 0) || (i > 0 && b->arrival_s[i] < b->arrival_s[i - 1])) return PS_EINVAL;
    }
    int64_t *pending = ps_malloc((size_t)(b->n > 0 ? b->n : 1) * sizeof *pending);
    if (pending == NULL) return PS_ENOMEM;
    int64_t np = 0, next = 0, done = 0;
    while (done < b->n) {
        if (np == 0 && d->now < b->arrival_s[next]) d->now = b->arrival_s[next];
        while (next < b->n && b->arrival_s[next] <= d->now) pending[np++] = next++;
        int64_t k = choose(d, s, b, pending, np);
        int64_t r = pending[k];
        memmove(&pending[k], &pending[k + 1], (size_t)(np - k - 1) * sizeof *pending);
        np--;
        double sk, rt, xf;
        uint8_t hit;
        b->start_s[r] = d->now;
        d->now = serve(d, d->now, b->lba[r], b->sectors[r], b->write ? b->write[r] : 0, &sk, &rt, &xf, &hit);
        b->finish_s[r] = d->now;
        if (b->seek_s) b->seek_s[r] = sk;
        if (b->rotation_s) b->rotation_s[r] = rt;
        if (b->transfer_s) b->transfer_s[r] = xf;
        if (b->buffer_hit) b->buffer_hit[r] = hit;
        done++;
    }
    ps_free(pending);
    return PS_OK;
}
