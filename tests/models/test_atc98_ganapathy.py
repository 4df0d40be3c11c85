"""Mechanism checks of the IRIX multiple-page-size model (atc98_ganapathy)."""
import dataclasses

import numpy as np
import pytest

from pysim.calibration import fit_parameter
from pysim.hw import TLB
from pysim.models import atc98_ganapathy as m

KB, MB = 1024, 1024 * 1024
P = m.Params()


def test_paired_entry_covers_both_pages_of_an_aligned_pair_only():
    t = m.PairedTLB(64, "lru")
    t.run(np.array([0], dtype=np.uint64), 16 * KB)
    assert t.run(np.array([16 * KB], dtype=np.uint64), 16 * KB)["misses"] == 1  # odd partner: same entry
    assert t.run(np.array([32 * KB], dtype=np.uint64), 16 * KB)["misses"] == 2  # next pair: a new entry


def test_pid_tags_keep_processes_apart_without_a_flush():
    t = m.PairedTLB(64, "lru")
    a = np.array([0, 64 * KB], dtype=np.uint64)
    t.run(a, 16 * KB, pid=1)
    assert t.run(a, 16 * KB, pid=2)["misses"] == 4
    assert t.run(a, 16 * KB, pid=1)["misses"] == 4  # both processes' entries survive


def test_unpaired_tlb_matches_the_plain_c_tlb_on_random_pages(seed):
    rng = np.random.default_rng(seed)
    addrs = rng.integers(0, 64 * MB, 20_000).astype(np.uint64)
    ours = m.PairedTLB(64, "lru", paired=False).run(addrs, 16 * KB)["misses"]
    assert ours == TLB(64, policy="lru").run(addrs, 16 * KB)["misses"]


def test_reach_is_entries_times_two_pages_by_hand():
    for entries in (8, 64):
        p = dataclasses.replace(P, tlb_entries=entries)
        for size in (4 * KB, 1 * MB):
            assert m.measured_reach(size, p) == entries * 2 * size
            assert m.measured_reach(size, dataclasses.replace(p, paired=False)) == entries * size


def test_fault_handler_maps_large_pages_only_where_aligned_and_the_pair_fits():
    pages = m.map_range(16 * KB, 8 * MB + 16 * KB, 1 * MB, 16 * KB, fallback="base")
    sizes = dict(pages)
    assert sum(s for _, s in pages) == 8 * MB  # every byte mapped exactly once
    big = [a for a, s in pages if s == MB]
    assert big == [a for a in range(2 * MB, 6 * MB, MB)] + [6 * MB, 7 * MB]  # the whole 2 MB blocks inside
    assert all(a % (2 * MB) == 0 for a in big[::2])
    assert sizes[16 * KB] == 16 * KB
    nxt = m.map_range(16 * KB, 8 * MB + 16 * KB, 1 * MB, 16 * KB, fallback="next")
    assert {s for _, s in nxt} >= {256 * KB, 64 * KB}  # the edges take the next smaller sizes


def test_downgrade_respects_even_odd_pairs():
    assert m.downgrade(64 * KB, (60 * KB, 64 * KB), 4 * KB) == (
        [(0, 16 * KB), (16 * KB, 16 * KB)] + [(a, 4 * KB) for a in range(32 * KB, 60 * KB, 4 * KB)])
    unpaired = m.downgrade(64 * KB, (60 * KB, 64 * KB), 4 * KB, paired=False)
    assert [s for _, s in unpaired].count(16 * KB) == 3


def test_tlb_misses_fall_for_a_random_walk_as_reach_covers_it(seed):
    p = dataclasses.replace(P, trace_refs=30_000)
    c = m.counts("vortex", p, seed, quick=True)
    assert c[16] > c[256] > c[1024]
    # uniform over 40 MB: at 16K pages almost every step misses (2 MB of reach)
    assert c[16] / c["refs"] > 0.9


def test_improvement_is_removed_miss_time_by_hand():
    f = m.figure6(quick=True)
    c = m.counts("vortex", P, 0, quick=True)
    work = c["refs"] * P.compute_cycles_per_ref + c["l2_misses"] * P.mem_cycles
    t16 = work + c[16] * P.miss_cycles
    t1m = work + c[1024] * (P.miss_cycles + P.mask_cycles)
    assert f.loc["vortex / 1024KB", "improvement_pct"] == pytest.approx(100 * (1 - t1m / t16))


def test_calibrated_refill_cost_lands_on_its_cell():
    fit = m.CALIBRATION[0]
    assert fit_parameter("atc98_ganapathy", fit) == pytest.approx(P.miss_cycles, rel=0.01)


def test_allocator_bitmap_and_counts_stay_consistent(seed):
    mem = m.PhysicalMemory(256, 16, "migratable", np.random.default_rng(seed))
    mem.churn(2000, 0.6, 0.2)
    busy = (mem.state != m.FREE).reshape(-1, 16).sum(axis=1)
    assert np.array_equal(mem.free, 16 - busy)
    assert np.array_equal(mem.migratable, (mem.state == m.MIGRATABLE).reshape(-1, 16).sum(axis=1))
    weak, _ = mem.coalesce("weak", 4)
    strong, moved = mem.coalesce("strong", 4)
    assert weak == int(np.sum(busy == 0)) and weak <= strong <= int(mem.free.sum()) // 16
    assert moved >= 0 and (moved == 0) == (strong == weak)  # every extra large page took migrations


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="tlb_entries"):
        m.Params(tlb_entries=0)
    with pytest.raises(ValueError, match="fallback"):
        m.map_range(0, 64 * KB, 64 * KB, 4 * KB, fallback="sideways")
