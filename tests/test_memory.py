"""Cache and TLB simulators against the Python reference, on random traces."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import cache_reference, tlb_reference

from pysim import policies
from pysim.hw import TLB, Cache

geometries = st.sampled_from([(256, 64, 2), (512, 32, 4), (1024, 64, 1), (2048, 128, 16), (192, 32, 3)])
traces = st.lists(st.integers(0, 4095), min_size=1, max_size=400)


@settings(max_examples=60, deadline=None)
@given(geometries, traces, st.sampled_from(["lru", "fifo"]))
def test_cache_matches_reference(geom, trace, policy):
    size, line, ways = geom
    counts, hits = Cache(size, line, ways, policy).run(np.array(trace, dtype=np.uint64), return_hits=True)
    expected = cache_reference(trace, size, line, ways, policy)
    assert hits.tolist() == expected
    assert counts["hits"] == sum(expected) and counts["misses"] == len(trace) - sum(expected)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.lists(st.tuples(st.integers(0, 1 << 22), st.sampled_from([12, 14, 16, 20])),
                                    min_size=1, max_size=300))
def test_mixed_page_size_tlb_matches_reference(entries, accesses):
    addrs = np.array([a for a, _ in accesses], dtype=np.uint64)
    sizes = np.array([1 << s for _, s in accesses], dtype=np.uint64)
    tlb = TLB(entries)
    _, hits = tlb.run(addrs, sizes, return_hits=True)
    assert hits.tolist() == tlb_reference(addrs.tolist(), sizes.tolist(), entries)
    by_size = sum(tlb.misses_for_page(int(p)) for p in {1 << s for s in (12, 14, 16, 20)})
    assert by_size == tlb.counts()["misses"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 1 << 24), min_size=1, max_size=500), st.integers(1, 32))
def test_larger_pages_never_raise_lru_tlb_misses(trace, entries):
    # coarser pages can only shorten LRU stack distances in a fully associative TLB
    addrs = np.array(trace, dtype=np.uint64)
    misses = [TLB(entries).run(addrs, 1 << s)["misses"] for s in (12, 14, 16, 18, 20, 22)]
    assert misses == sorted(misses, reverse=True)


def test_numba_lru_gives_exactly_the_builtin_lru():
    trace = np.random.default_rng(1).integers(0, 1 << 20, 200_000).astype(np.uint64)
    builtin = Cache(32 * 1024, 64, 8).run(trace, return_hits=True)
    custom = Cache(32 * 1024, 64, 8, "custom", callback=policies.compiled_lru()).run(trace, return_hits=True)
    assert builtin[0] == custom[0]
    assert np.array_equal(builtin[1], custom[1])


def test_a_policy_choosing_an_impossible_way_is_reported():
    bad = policies.assoc_policy(lambda event, s, way, meta, ways, now: ways)
    cache = Cache(256, 64, 2, "custom", callback=bad)
    with pytest.raises(ValueError, match="outside"):
        cache.run(np.arange(0, 64 * 16, 64, dtype=np.uint64))


def test_random_policy_is_deterministic_for_a_seed():
    trace = np.random.default_rng(2).integers(0, 1 << 16, 20_000).astype(np.uint64)
    runs = [Cache(4096, 64, 4, "random", rng=s).run(trace)["hits"] for s in (5, 5, 6)]
    assert runs[0] == runs[1] != runs[2]


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((1000, 64, 2), {}, ValueError, "size_bytes=1000 must equal"),
    ((384, 48, 2), {}, ValueError, "power of two"),
    ((256, 64, 0), {}, ValueError, "ways"),
    ((256, 64, 2), {"policy": "mru"}, ValueError, "policy must be one of"),
    ((256, 64, 2), {"policy": "custom"}, ValueError, "callback is required"),
])
def test_cache_rejects_bad_configuration(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        Cache(*args, **kwargs)


def test_cache_rejects_non_integer_traces():
    with pytest.raises(TypeError, match="integers"):
        Cache(256, 64, 2).run(np.array([1.5, 2.5]))


def test_tlb_rejects_bad_page_sizes_and_geometry():
    with pytest.raises(ValueError, match="powers of two"):
        TLB(8).run(np.arange(4, dtype=np.uint64), 3000)
    with pytest.raises(ValueError, match="multiple of ways"):
        TLB(96, ways=7)


# --- paired entries with PID tags (pysim.hw.memory.PairedTLB) ------------------------------------

def test_paired_entry_covers_both_pages_of_an_aligned_pair_only():
    from pysim.hw.memory import PairedTLB

    t = PairedTLB(64, "lru")
    t.run(np.array([0], dtype=np.uint64), 16 * 1024)
    assert t.run(np.array([16 * 1024], dtype=np.uint64), 16 * 1024)["misses"] == 1  # odd partner: same entry
    assert t.run(np.array([32 * 1024], dtype=np.uint64), 16 * 1024)["misses"] == 2  # next pair: a new entry


def test_unpaired_tlb_matches_the_plain_c_tlb_on_random_pages(seed):
    from pysim.hw.memory import PairedTLB

    addrs = np.random.default_rng(seed).integers(0, 64 << 20, 20_000).astype(np.uint64)
    ours = PairedTLB(64, "lru", paired=False).run(addrs, 16 * 1024)["misses"]
    assert ours == TLB(64, policy="lru").run(addrs, 16 * 1024)["misses"]


def test_pid_tags_keep_entries_across_time_slices_and_untagged_entries_are_flushed():
    from pysim.hw.memory import PairedTLB

    a = np.arange(0, 8 * 32 * 1024, 32 * 1024, dtype=np.uint64)  # 8 pairs of 16K pages per process
    slices = [(pid, a, 16 * 1024) for _ in range(5) for pid in (1, 2)]
    tagged = PairedTLB(64, "lru").run_slices(slices)
    untagged = PairedTLB(64, "lru", tagged=False).run_slices(slices)
    assert tagged["misses"] == 16  # each process misses once per pair, then its entries survive
    assert untagged["misses"] == 8 * len(slices)  # every switch flushes: every slice misses every pair
    assert tagged["accesses"] == untagged["accesses"] == 8 * len(slices)
    with pytest.raises(ValueError, match="2\\*\\*48"):
        PairedTLB(64).run(np.array([1 << 50], dtype=np.uint64), 4096)
