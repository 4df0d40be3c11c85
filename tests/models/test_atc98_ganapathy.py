"""Mechanism checks of the IRIX multiple-page-size model (atc98_ganapathy)."""
import dataclasses

import pytest

from pysim.calibration import fit_parameter
from pysim.models import atc98_ganapathy as m

KB, MB = 1024, 1024 * 1024
P = m.Params()


def test_reach_is_entries_times_two_pages_by_hand():
    for entries in (8, 64):
        p = dataclasses.replace(P, tlb_entries=entries)
        for size in (4 * KB, 1 * MB):
            assert m.measured_reach(size, p) == entries * 2 * size
            assert m.measured_reach(size, dataclasses.replace(p, paired=False)) == entries * size


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


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="tlb_entries"):
        m.Params(tlb_entries=0)
    with pytest.raises(ValueError, match="fallback"):
        m.Params(fallback="sideways")
