"""Storage on the engine: a queued disk, RAID-0, RAID-5 (read-modify-write against full stripes),
an NVRAM write-back cache."""
import numpy as np
import pytest

from pysim.engine import Simulation
from pysim.hw import catalog
from pysim.hw.disk import Disk
from pysim.hw.storage import NvramCache, QueuedDisk, Raid0, Raid5

SPEC = catalog.ULTRASTAR_73LZX_36GB


def _run(sim, gen):
    p = sim.process(gen)
    sim.run()
    assert p.triggered
    return sim.now


def test_a_queued_disk_serves_in_turn_with_the_c_models_times():
    sim = Simulation()
    d = QueuedDisk(sim, SPEC)
    done = []

    def client(lba):
        yield sim.process(d.io(lba, 8))
        done.append(sim.now)

    for lba in (0, 5_000_000):
        sim.process(client(lba))
    sim.run()
    ref = Disk(SPEC)
    first = ref.run([0.0], [0], [8])["finish_s"].iloc[0]
    second = ref.run([first], [5_000_000], [8])["finish_s"].iloc[0]
    assert done == pytest.approx([first, second])
    assert d.ios == {"read": 2, "write": 0}


def test_striping_a_large_read_over_four_disks_takes_about_a_quarter_of_the_time():
    one = _run(s := Simulation(), QueuedDisk(s, SPEC).io(0, 4 * 512))
    sim = Simulation()
    raid = Raid0(sim, [QueuedDisk(sim, SPEC) for _ in range(4)], stripe_sectors=512)
    assert raid.pieces(0, 4 * 512) == [(0, 0, 512), (1, 0, 512), (2, 0, 512), (3, 0, 512)]
    assert raid.pieces(100, 1100) == [(0, 100, 412), (1, 0, 512), (2, 0, 176)]
    four = _run(sim, raid.io(0, 4 * 512))
    assert four < 0.45 * one


def test_raid5_small_writes_read_modify_write_and_full_stripes_do_not():
    sim = Simulation()
    disks = [QueuedDisk(sim, SPEC) for _ in range(5)]
    raid = Raid5(sim, disks, stripe_sectors=64)
    _run(sim, raid.io(0, 8, write=True))
    assert sum(d.ios["read"] for d in disks) == 2 and sum(d.ios["write"] for d in disks) == 2
    for d in disks:
        d.ios.update(read=0, write=0)
    _run(sim, raid.io(4 * 64, 4 * 64, write=True))  # exactly row 1
    assert sum(d.ios["read"] for d in disks) == 0 and all(d.ios["write"] == 1 for d in disks)
    assert raid.ios["small_writes"] == 1 and raid.ios["full_stripe_writes"] == 1
    parity = [raid.place(row * 4)[2] for row in range(5)]
    assert sorted(parity) == [0, 1, 2, 3, 4]  # parity rotates over every member


def test_a_small_raid5_write_costs_more_than_a_raid0_write_of_the_same_size():
    sim5 = Simulation()
    t5 = _run(sim5, Raid5(sim5, [QueuedDisk(sim5, SPEC) for _ in range(5)], 64).io(1000, 8, write=True))
    sim0 = Simulation()
    t0 = _run(sim0, Raid0(sim0, [QueuedDisk(sim0, SPEC) for _ in range(4)], 64).io(1000, 8, write=True))
    assert t5 > 1.5 * t0  # a read, a full rotation, then the write


def test_nvram_acknowledges_a_burst_at_memory_speed_and_slows_to_the_disk_when_it_overflows():
    def writes(n, span):
        sim = Simulation()
        nv = NvramCache(sim, QueuedDisk(sim, SPEC), capacity_sectors=800, access_s=50e-6, destage_sectors=64)
        times = []

        def writer():
            for k in range(n):
                t0 = sim.now
                yield sim.process(nv.io(k * 997 % span * 8, 8, write=True))
                times.append(sim.now - t0)

        sim.process(writer())
        sim.run()
        return times, nv

    burst, nv = writes(40, 10_000_000)  # 320 sectors: below the destage threshold
    assert max(burst) == pytest.approx(50e-6) and nv.stats["destaged"] == 0
    flood, nv = writes(2000, 10_000_000)
    assert nv.stats["full_waits"] > 0 and sum(flood) / len(flood) > 20 * 50e-6
    sim = Simulation()
    nv = NvramCache(sim, QueuedDisk(sim, SPEC), capacity_sectors=800, access_s=50e-6)
    _run(sim, nv.io(80, 8, write=True))
    t0 = sim.now
    _run(sim, nv.io(80, 8))
    assert sim.now - t0 == pytest.approx(50e-6) and nv.stats["read_hits"] == 1


def test_bad_arrays_and_requests_are_refused():
    sim = Simulation()
    with pytest.raises(ValueError, match="at least three"):
        Raid5(sim, [QueuedDisk(sim, SPEC)] * 2, 64)
    with pytest.raises(ValueError, match="at least two"):
        Raid0(sim, [QueuedDisk(sim, SPEC)], 64)
    raid = Raid0(sim, [QueuedDisk(sim, SPEC) for _ in range(2)], 64)
    with pytest.raises(ValueError, match="past the end"):
        next(raid.io(raid.capacity_sectors, 8))


def _commit_rate(group, clients, seconds=1.0):
    from pysim.hw.storage import LogDevice
    sim = Simulation()
    log = LogDevice(sim, QueuedDisk(sim, SPEC), group=group)
    done = [0]

    def client():
        while True:
            yield sim.process(log.commit(200))
            done[0] += 1

    for _ in range(clients):
        sim.process(client())
    sim.run(until=seconds)
    return done[0] / seconds, log


def test_forced_commits_one_at_a_time_wait_about_a_revolution_each_and_group_commit_shares_them():
    revolutions = SPEC.rpm / 60
    alone, log = _commit_rate(group=False, clients=8)
    assert 0.6 * revolutions < alone < 1.3 * revolutions  # the next sector has just passed the head
    assert log.mean_group == 1
    grouped, log = _commit_rate(group=True, clients=8)
    # the committers split into two groups that take turns: one waits while the other's write is on
    assert grouped > 3 * alone and log.mean_group > 3


def test_a_disk_served_one_request_at_a_time_finishes_each_as_a_batch_run_does(seed):
    from pysim.hw.catalog import ULTRASTAR_73LZX_36GB
    from pysim.hw.disk import Disk
    gen = np.random.default_rng(seed)
    disk = Disk(ULTRASTAR_73LZX_36GB)
    n = 200
    arrivals = np.cumsum(gen.exponential(0.004, n))
    lba = gen.integers(0, disk.capacity_sectors - 64, n)
    sectors = gen.integers(1, 64, n)
    write = gen.random(n) < 0.3
    batch = disk.run(arrivals, lba, sectors, write)["finish_s"].to_numpy()
    disk.reset()
    one = [disk.serve(a, int(b), int(c), bool(w)) for a, b, c, w in zip(arrivals, lba, sectors, write, strict=True)]
    assert np.allclose(one, batch, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="within the disk"):
        disk.serve(0.0, disk.capacity_sectors, 1)
