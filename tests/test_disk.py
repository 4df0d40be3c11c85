"""The disk model against hand-computed service times and the data sheet."""
import numpy as np
import pytest

from pysim.hw import Disk, DiskSpec
from pysim.hw.catalog import ULTRASTAR_73LZX_36GB
from pysim.units import ms

SOURCES = {k: "assumed: test geometry" for k in ("rpm", "cylinders", "heads", "zones", "track_to_track_s",
                                                  "average_seek_s", "full_stroke_s", "head_switch_s",
                                                  "overhead_s", "bus_bytes_per_s", "buffer_bytes", "sector_bytes")}


def small_disk(buffer_bytes=0):
    spec = DiskSpec("test", rpm=6000, cylinders=1000, heads=2, zones=((0, 100), (500, 50)),
                    track_to_track_s=1 * ms, average_seek_s=4 * ms, full_stroke_s=9 * ms, head_switch_s=0.2 * ms,
                    overhead_s=0.5 * ms, bus_bytes_per_s=10e6, buffer_bytes=buffer_bytes, sources=SOURCES)
    return Disk(spec)


def test_seek_curve_reproduces_the_three_data_sheet_points():
    spec = ULTRASTAR_73LZX_36GB
    disk = Disk(spec)
    assert disk.seek_time_s(1) == pytest.approx(spec.track_to_track_s)
    assert disk.seek_time_s(spec.cylinders - 1) == pytest.approx(spec.full_stroke_s)
    d = np.arange(1, spec.cylinders)
    w = spec.cylinders - d
    mean = np.sum(w * np.array([disk.seek_time_s(int(x)) for x in d])) / w.sum()
    assert mean == pytest.approx(spec.average_seek_s, rel=1e-6)


def test_catalog_disk_has_its_rated_capacity():
    assert ULTRASTAR_73LZX_36GB.capacity_bytes == pytest.approx(36.7e9, rel=0.01)


def test_service_time_by_hand():
    disk = small_disk()
    seek = disk.seek_time_s(25)
    r = disk.run([0.0], [25 * 200 + 50], [10])
    # overhead, seek, wait for sector 50 (half a turn from 0) minus the time already turned, 10/100 turn
    start = 0.5 * ms + seek
    rotation = ((0.5 - (start / 10e-3) % 1.0) % 1.0) * 10e-3
    assert r.loc[0, "rotation_s"] == pytest.approx(rotation)
    assert r.loc[0, "finish_s"] == pytest.approx(start + rotation + 1 * ms)


def test_sequential_reads_hit_the_read_ahead_buffer():
    disk = small_disk(buffer_bytes=200 * 512)
    r = disk.run([0.0, 0.05], [0, 10], [10, 10])
    assert r["buffer_hit"].tolist() == [False, True]
    assert r.loc[1, "response_s"] == pytest.approx(0.5 * ms + 10 * 512 / 10e6)


@pytest.mark.parametrize("scheduler, order", [("fcfs", [1, 2, 3]), ("sstf", [2, 3, 1]),
                                               ("scan", [2, 3, 1]), ("cscan", [2, 1, 3])])
def test_schedulers_order_requests(scheduler, order):
    disk = small_disk()
    cyl = [400, 100, 450, 300]
    r = disk.run([0, 1e-4, 1e-4, 1e-4], [c * 200 for c in cyl], [1] * 4, scheduler=scheduler)
    assert list(r["start_s"].iloc[1:].rank().astype(int)) == [order.index(i) + 1 for i in (1, 2, 3)]


def test_disk_rejects_bad_requests():
    disk = small_disk()
    with pytest.raises(ValueError, match="scheduler"):
        disk.run([0], [0], [1], scheduler="elevator")
    with pytest.raises(ValueError, match="LBAs within"):
        disk.run([0], [disk.capacity_sectors], [1])
    with pytest.raises(ValueError, match="sorted"):
        disk.run([1.0, 0.5], [0, 1], [1, 1])
    with pytest.raises(ValueError, match="length"):
        disk.run([0.0, 1.0], [0], [1, 1])
    with pytest.raises(ValueError, match="track_to_track_s <= average_seek_s"):
        DiskSpec("bad", 6000, 10, 1, ((0, 10),), 5 * ms, 1 * ms, 9 * ms, 0, 0, 1e6, 0, sources=SOURCES)
