"""Fault-time page sizes, downgrades and the large-page allocator (pysim.sw.pages)."""
import numpy as np
import pytest

from pysim.sw.pages import FREE, MIGRATABLE, PhysicalMemory, downgrade, fitting_sizes, map_range

KB, MB = 1024, 1024 * 1024
R10000 = (4 * KB, 16 * KB, 64 * KB, 256 * KB, 1 * MB, 4 * MB, 16 * MB)
HPUX = (4 * KB, 16 * KB, 64 * KB, 256 * KB, 1 * MB, 4 * MB, 16 * MB, 64 * MB)


def test_fitting_sizes_take_the_aligned_block_around_the_address():
    # a 100-page region: pages 0-63 can be one 256K page, 64-127 cannot; 64-79 can be a 64K page
    region = (0, 100 * 4 * KB)
    assert fitting_sizes(0, *region, HPUX, 4 * KB)[0] == 256 * KB
    assert fitting_sizes(70 * 4 * KB, *region, HPUX, 4 * KB)[0] == 64 * KB
    assert fitting_sizes(97 * 4 * KB, *region, HPUX, 4 * KB)[0] == 16 * KB
    assert fitting_sizes(97 * 4 * KB, 0, 99 * 4 * KB, HPUX, 4 * KB) == [4 * KB]
    # an even/odd pair needs twice the room: a 64K pair at 0 does not fit in 96K
    assert fitting_sizes(0, 0, 96 * KB, HPUX, 4 * KB, paired=True)[0] == 16 * KB


def test_fault_handler_maps_large_pages_only_where_aligned_and_the_pair_fits():
    pages = map_range(16 * KB, 8 * MB + 16 * KB, 1 * MB, 16 * KB, sizes=R10000, fallback="base")
    sizes = dict(pages)
    assert sum(s for _, s in pages) == 8 * MB  # every byte mapped exactly once
    big = [a for a, s in pages if s == MB]
    assert big == [a for a in range(2 * MB, 8 * MB, MB)]  # the whole 2 MB blocks inside
    assert all(a % (2 * MB) == 0 for a in big[::2])
    assert sizes[16 * KB] == 16 * KB
    nxt = map_range(16 * KB, 8 * MB + 16 * KB, 1 * MB, 16 * KB, sizes=R10000, fallback="next")
    assert {s for _, s in nxt} >= {256 * KB, 64 * KB}  # the edges take the next smaller sizes
    assert [a for a, s in nxt if s == MB] == big


def test_mapped_pages_tile_the_range_and_each_is_aligned(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        start = int(rng.integers(0, 4096)) * 4 * KB
        end = start + int(rng.integers(1, 4096)) * 4 * KB
        hint = int(rng.choice(R10000))
        for paired in (False, True):
            pages = map_range(start, end, hint, 4 * KB, sizes=R10000, paired=paired)
            addrs = [a for a, _ in pages]
            assert addrs[0] == start and all(a + s == b for (a, s), b in zip(pages, addrs[1:] + [end]))
            assert all(a % s == 0 and s <= max(hint, 4 * KB) for a, s in pages)


def test_downgrade_respects_even_odd_pairs():
    assert downgrade(64 * KB, (60 * KB, 64 * KB), 4 * KB, sizes=R10000) == (
        [(0, 16 * KB), (16 * KB, 16 * KB)] + [(a, 4 * KB) for a in range(32 * KB, 60 * KB, 4 * KB)])
    unpaired = downgrade(64 * KB, (60 * KB, 64 * KB), 4 * KB, sizes=R10000, paired=False)
    assert [s for _, s in unpaired].count(16 * KB) == 3


def test_allocator_bitmap_and_counts_stay_consistent(seed):
    mem = PhysicalMemory(256, 16, "migratable", np.random.default_rng(seed))
    mem.churn(2000, 0.6, 0.2)
    busy = (mem.state != FREE).reshape(-1, 16).sum(axis=1)
    assert np.array_equal(mem.free, 16 - busy)
    assert np.array_equal(mem.migratable, (mem.state == MIGRATABLE).reshape(-1, 16).sum(axis=1))
    assert list(mem.free_blocks(16)) == [16 * c for c in np.flatnonzero(busy == 0)]
    weak, _ = mem.coalesce("weak", 4)
    strong, moved = mem.coalesce("strong", 4)
    assert weak == int(np.sum(busy == 0)) and weak <= strong <= int(mem.free.sum()) // 16
    assert moved >= 0 and (moved == 0) == (strong == weak)  # every extra large page took migrations


def test_free_lists_of_each_size_come_from_the_one_bitmap():
    mem = PhysicalMemory(64, 16, "random", np.random.default_rng(0))
    mem.state[[5, 40]] = MIGRATABLE
    assert list(mem.free_blocks(16)) == [16, 48]
    assert list(mem.free_blocks(4)) == [0, 8, 12, 16, 20, 24, 28, 32, 36, 44, 48, 52, 56, 60]
    assert mem.free_blocks(1).size == 62


def test_segregating_pinned_pages_leaves_more_chunks_to_coalesce():
    formed = {}
    for placement in ("random", "migratable"):
        mem = PhysicalMemory(1024, 16, placement, np.random.default_rng(3))
        mem.churn(6000, 0.5, 0.2)
        formed[placement] = mem.coalesce("strong", 4)[0]
    assert formed["migratable"] > 1.5 * formed["random"]


def test_bad_input_is_named():
    mem = PhysicalMemory(32, 16, "random", np.random.default_rng(0))
    with pytest.raises(ValueError, match="fallback"):
        map_range(0, 64 * KB, 64 * KB, 4 * KB, sizes=R10000, fallback="sideways")
    with pytest.raises(ValueError, match="whole base pages"):
        map_range(1, 64 * KB, 64 * KB, 4 * KB, sizes=R10000)
    with pytest.raises(ValueError, match="already free"):
        mem.release(3)
    with pytest.raises(ValueError, match="placement"):
        PhysicalMemory(32, 16, "best", None)
    with pytest.raises(ValueError, match="level"):
        mem.coalesce("fierce", 4)
    for _ in range(32):
        mem.allocate(False)
    with pytest.raises(MemoryError):
        mem.allocate(False)
