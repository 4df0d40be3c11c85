"""The page cache in C against plain Python LRU and CLOCK caches, its write-back, read-ahead,
pinning and dropping, and its speed."""
import time
from collections import OrderedDict

import numpy as np
import pytest

from pysim.sw.pagecache import PageCache
from pysim.workloads.addresses import zipf_cdf


def _python_lru(keys, writes, capacity):
    cache, misses, writebacks = OrderedDict(), 0, 0
    for k, w in zip(keys.tolist(), writes.tolist(), strict=True):
        if k in cache:
            cache.move_to_end(k)
        else:
            misses += 1
            cache[k] = False
            if len(cache) > capacity:
                _, dirty = cache.popitem(last=False)
                writebacks += dirty
        cache[k] = cache[k] or bool(w)
    return misses, writebacks


def _python_clock(keys, capacity):
    slots, ref, where, hand, misses = [], [], {}, 0, 0
    for k in keys.tolist():
        if k in where:
            ref[where[k]] = True
            continue
        misses += 1
        if len(slots) < capacity:
            where[k] = len(slots)
            slots.append(k)
            ref.append(True)
            continue
        while ref[hand]:
            ref[hand] = False
            hand = (hand + 1) % capacity
        del where[slots[hand]]
        slots[hand], ref[hand], where[k] = k, True, hand
        hand = (hand + 1) % capacity
    return misses


def _zipf_trace(n, pages, seed):
    rng = np.random.default_rng(seed)
    keys = np.searchsorted(zipf_cdf(pages, 0.9), rng.random(n)).astype(np.uint64)
    return keys, rng.random(n) < 0.3


@pytest.mark.parametrize("capacity", [50, 500, 3000])
def test_lru_misses_and_writebacks_match_a_plain_python_lru(capacity):
    keys, writes = _zipf_trace(100_000, 5000, capacity)
    counts = PageCache(capacity).run(keys, writes)
    assert (counts.misses, counts.writebacks) == _python_lru(keys, writes, capacity)


@pytest.mark.parametrize("capacity", [50, 500])
def test_clock_misses_match_a_plain_python_clock(capacity):
    keys, _ = _zipf_trace(50_000, 2000, capacity + 1)
    assert PageCache(capacity, policy="clock").run(keys).misses == _python_clock(keys, capacity)


def test_clock_approximates_lru_and_both_beat_a_cache_of_half_the_size():
    keys, _ = _zipf_trace(100_000, 5000, 7)
    lru, clock, small = (PageCache(c, policy=p).run(keys).misses for c, p in ((500, "lru"), (500, "clock"),
                                                                              (250, "lru")))
    assert abs(clock - lru) < 0.05 * lru and small > 1.2 * lru


def test_a_dirty_threshold_cleans_the_oldest_pages_and_a_flush_returns_what_to_write():
    pc = PageCache(100, dirty_high=10, dirty_low=4)
    pc.run(np.arange(11, dtype=np.uint64), np.ones(11, dtype=bool))
    assert pc.dirty == 4 and pc.counts().flushed == 7
    assert not pc.is_dirty(0) and pc.is_dirty(10)
    assert pc.flush(100) == [7, 8, 9, 10] and pc.dirty == 0


def test_read_ahead_turns_a_sequential_scan_into_hits_and_leaves_random_reads_alone():
    scan = np.arange(10_000, dtype=np.uint64)
    ahead = PageCache(1000, readahead_pages=32).run(scan)
    assert ahead.misses < 10_000 / 30 and ahead.readahead_hits > 0.95 * ahead.readahead
    rand = np.random.default_rng(1).permutation(scan)
    assert PageCache(1000, readahead_pages=32).run(rand).readahead < 100


def test_pinned_and_busy_pages_stay_and_a_file_drops_as_fadvise_does():
    pc = PageCache(3)
    a, b = pc.key(1, 0), pc.key(1, 1)
    pc.access(a, write=True)
    pc.access(b)
    pc.pin(a)
    pc.access(pc.key(2, 0))
    pc.access(pc.key(2, 1))  # evicts b, not the pinned a
    assert pc.is_cached(a) and not pc.is_cached(b)
    pc.io(pc.key(2, 1))
    pc.pin(pc.key(2, 0))
    with pytest.raises(RuntimeError, match="nothing to evict"):
        pc.access(pc.key(3, 0))
    pc.pin(a, False)
    assert pc.drop_file(1) == 1 and pc.counts().writebacks == 1 and pc.size == 2
    with pytest.raises(KeyError, match="not cached"):
        pc.pin(pc.key(9, 9))


def test_an_access_names_its_victim():
    pc = PageCache(1)
    pc.access(5, write=True)
    got = pc.access(6)
    assert (got.hit, got.victim, got.victim_dirty) == (False, 5, True)


def test_bad_configurations_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="exactly one"):
        PageCache(10, capacity_bytes=4096)
    with pytest.raises(ValueError, match="policy"):
        PageCache(10, policy="arc")
    with pytest.raises(ValueError, match="dirty_low"):
        PageCache(10, dirty_high=4, dirty_low=5)
    with pytest.raises(ValueError, match="at least one page"):
        PageCache(capacity_bytes=100)


def test_a_million_accesses_take_well_under_a_second():
    keys, writes = _zipf_trace(1_000_000, 200_000, 3)
    pc = PageCache(50_000, policy="clock", readahead_pages=8, dirty_high=5000)
    t0 = time.perf_counter()
    pc.run(keys, writes)
    assert time.perf_counter() - t0 < 0.5
