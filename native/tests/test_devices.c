/* Tests of the disk and Ethernet models against hand-computed times. */
#include "check.h"
#include "pysim/disk.h"
#include "pysim/net.h"
#include "pysim/status.h"

static const disk_zone zones[2] = {{0, 100}, {500, 50}};

/* 1000 cylinders, 2 heads, 6000 rpm (10 ms a turn), seek 1 ms + 0.1 ms sqrt(d)
 * below 100 cylinders and 2 ms + 0.01 ms d above, 0.5 ms overhead, 0.2 ms head switch. */
static disk_geom test_geom(uint32_t buffer)
{
    disk_geom g = {1000, 2, 512, 6000.0, 2, zones, 100, 1e-3, 1e-4, 2e-3, 1e-5, 2e-4, 5e-4, 10e6, buffer};
    return g;
}

#define MS 1e-3

static void test_disk_service(void)
{
    disk_geom g = test_geom(0);
    disk *d = disk_new(&g);
    CHECK(disk_capacity_sectors(d) == 500 * 2 * 100 + 500 * 2 * 50, "disk: capacity from zones");
    CHECK_NEAR(disk_seek_time(d, 25), 1.5 * MS, 1e-12, "disk: short seek 1 + 0.1 sqrt(25) ms");
    CHECK_NEAR(disk_seek_time(d, 400), 6.0 * MS, 1e-12, "disk: long seek 2 + 0.01 x 400 ms");
    double arr[3] = {0, 0, 0}, st[3], fin[3], sk[3], rot[3], xf[3];
    uint64_t lba[3] = {25 * 200 + 50, 100000 + 51 * 50, 95};
    uint32_t n[3] = {10, 1, 10};
    disk_batch b = {3, arr, lba, n, NULL, st, fin, sk, rot, xf, NULL};
    CHECK(disk_run(d, DISK_FCFS, &b) == PS_OK, "disk: batch runs");
    /* r0: 0.5 overhead, 1.5 seek, at 2 ms angle .2 -> sector 50 (.5): 3 ms, 10/100 turn: 1 ms */
    CHECK_NEAR(fin[0], 6.0 * MS, 1e-12, "disk: request 0 by hand (0.5+1.5+3+1 ms)");
    CHECK_NEAR(rot[0], 3.0 * MS, 1e-12, "disk: request 0 rotational latency");
    /* r1: from 6 ms: 0.5 + seek 500 cyl 7 ms -> 13.5 ms, angle .35 -> sector 0: 6.5 ms, 1/50 turn 0.2 ms */
    CHECK_NEAR(fin[1], 20.2 * MS, 1e-12, "disk: request 1 by hand, inner zone");
    /* r2: sectors 95-99 on head 0, head switch, 0-4 on head 1: 0.5 + 0.2 + 0.5 ms */
    CHECK_NEAR(xf[2], 1.2 * MS, 1e-12, "disk: transfer across a track boundary");
    disk_free(d);
}

static void order_of(disk_sched s, int64_t *order)
{
    disk_geom g = test_geom(0);
    disk *d = disk_new(&g);
    /* first request takes the head to cylinder 400; three more arrive meanwhile */
    double arr[4] = {0, 1e-4, 1e-4, 1e-4}, st[4], fin[4];
    uint64_t lba[4] = {400 * 200, 100 * 200, 450 * 200, 300 * 200};
    uint32_t n[4] = {1, 1, 1, 1};
    disk_batch b = {4, arr, lba, n, NULL, st, fin, NULL, NULL, NULL, NULL};
    disk_run(d, s, &b);
    for (int i = 0; i < 4; i++) order[i] = 0;
    for (int i = 1; i < 4; i++)
        for (int j = 1; j < 4; j++) order[i] += st[j] <= st[i]; /* rank by start */
    disk_free(d);
}

static void test_disk_scheduling(void)
{
    int64_t o[4];
    order_of(DISK_FCFS, o);
    CHECK(o[1] == 1 && o[2] == 2 && o[3] == 3, "disk fcfs: 100, 450, 300");
    order_of(DISK_SSTF, o);
    CHECK(o[2] == 1 && o[3] == 2 && o[1] == 3, "disk sstf from 400: 450, 300, 100");
    order_of(DISK_SCAN, o);
    CHECK(o[2] == 1 && o[3] == 2 && o[1] == 3, "disk scan from 400 up: 450, then down 300, 100");
    order_of(DISK_CSCAN, o);
    CHECK(o[2] == 1 && o[1] == 2 && o[3] == 3, "disk c-scan from 400 up: 450, then wrap 100, 300");
}

static void test_disk_buffer(void)
{
    disk_geom g = test_geom(200);
    disk *d = disk_new(&g);
    double arr[2] = {0, 20 * MS}, st[2], fin[2];
    uint64_t lba[2] = {0, 10};
    uint32_t n[2] = {10, 10};
    uint8_t hit[2];
    disk_batch b = {2, arr, lba, n, NULL, st, fin, NULL, NULL, NULL, hit};
    disk_run(d, DISK_FCFS, &b);
    CHECK_NEAR(fin[0], 11.0 * MS, 1e-12, "disk buffer: first read 0.5 + 9.5 rotation + 1 ms");
    CHECK(hit[1] == 1, "disk buffer: sequential read hits the read-ahead");
    CHECK_NEAR(fin[1], 20 * MS + 0.5 * MS + 5120 / 10e6, 1e-12, "disk buffer: overhead + bus time");
    disk_zone bad_z[1] = {{5, 100}};
    g.zones = bad_z;
    g.nzones = 1;
    CHECK(disk_new(&g) == NULL, "disk: zones not starting at cylinder 0 rejected");
    uint64_t past[1] = {disk_capacity_sectors(d)};
    disk_batch bad = {1, arr, past, n, NULL, st, fin, NULL, NULL, NULL, NULL};
    CHECK(disk_run(d, DISK_FCFS, &bad) == PS_EINVAL, "disk: LBA past the end rejected");
    disk_free(d);
}

static void test_ethernet(void)
{
    eth_params p = {10e6, 14, 4, 64, 1500, 8, 12, 5e-6};
    CHECK_NEAR(eth_frame_time(&p, 46), 51.2e-6, 1e-15, "ethernet: 64-byte frame takes 51.2 us");
    CHECK_NEAR(eth_frame_time(&p, 1), 51.2e-6, 1e-15, "ethernet: short payload padded to 64 bytes");
    CHECK_NEAR(eth_frame_time(&p, 1500), 1214.4e-6, 1e-12, "ethernet: full frame 1518 bytes = 1214.4 us");
    CHECK_NEAR(eth_frame_occupancy(&p, 1500), 1230.4e-6, 1e-12, "ethernet: plus preamble and gap");
    CHECK(eth_frames(&p, 3000) == 2 && eth_frames(&p, 3001) == 3 && eth_frames(&p, 0) == 1, "ethernet: fragmentation");
    ps_engine *e = engine_new(0.0);
    ps_link *l = link_new(e, &p);
    double a1, a2;
    CHECK(link_send(l, 1500, NULL, NULL, 0, &a1) == PS_EINVAL, "link: NULL handler rejected");
    link_free(l);
    engine_free(e);
    (void)a2;
}

static int noop(ps_engine *e, void *ctx, int64_t arg)
{
    (void)e, (void)ctx, (void)arg;
    return PS_OK;
}

static void test_link(void)
{
    eth_params p = {10e6, 14, 4, 64, 1500, 8, 12, 5e-6};
    ps_engine *e = engine_new(0.0);
    ps_link *l = link_new(e, &p);
    double a1, a2;
    link_send(l, 1500, noop, NULL, 0, &a1);
    link_send(l, 1500, noop, NULL, 0, &a2);
    CHECK_NEAR(a1, 1230.4e-6 - 9.6e-6 + 5e-6, 1e-12, "link: first frame arrives after its bits and propagation");
    CHECK_NEAR(a2, 2 * 1230.4e-6 - 9.6e-6 + 5e-6, 1e-12, "link: second waits for the medium");
    CHECK(link_get_stats(l)->frames == 2 && link_get_stats(l)->bytes == 3000, "link: stats count frames and bytes");
    engine_run(e, INFINITY, -1);
    CHECK_NEAR(engine_now(e), a2, 1e-15, "link: delivery events at the arrival times");
    link_free(l);
    engine_free(e);
}

int main(void)
{
    test_disk_service();
    test_disk_scheduling();
    test_disk_buffer();
    test_ethernet();
    test_link();
    return check_summary("test_devices");
}
