"""SMT co-running from demand vectors: shared issue slots, a sibling's misses, emulated counters."""
import pytest

from pysim.hw.smt import Program, corun_stretch, counters

PEAK = 2e9


def test_issue_bound_programs_share_the_slots_and_stall_bound_ones_overlap():
    busy = Program("busy", 100.0, 4e9, 0.0, 0.0)
    assert corun_stretch(busy, busy, issue_peak_inst_per_s=PEAK) == pytest.approx((2.0, 2.0), abs=1e-6)
    stalled = Program("stalled", 100.0, 1e3, 0.0, 0.0)  # never issuing, never missing: SMT hides one behind the other
    assert corun_stretch(stalled, stalled, issue_peak_inst_per_s=PEAK) == pytest.approx((1.0, 1.0), abs=1e-6)
    half = Program("half", 100.0, 0.5 * PEAK, 0.0, 0.0)
    ta, _ = corun_stretch(half, half, issue_peak_inst_per_s=PEAK)
    assert 1.0 < ta < 2.0  # partly overlapped
    assert corun_stretch(half, None, issue_peak_inst_per_s=PEAK)[0] == 1.0


def test_a_sibling_that_misses_slows_a_program_and_inflates_its_counted_misses():
    quiet = Program("quiet", 100.0, 0.3 * PEAK, 1e-4, 0.0)
    thrash = Program("thrash", 100.0, 0.3 * PEAK, 2e-2, 0.0)
    calm, _ = corun_stretch(quiet, quiet, issue_peak_inst_per_s=PEAK, l2_conflict=0.2)
    noisy, _ = corun_stretch(quiet, thrash, issue_peak_inst_per_s=PEAK, l2_conflict=0.2)
    assert noisy > calm
    alone = counters(quiet, None, 5.0, issue_peak_inst_per_s=PEAK, l2_conflict=0.2)
    beside = counters(quiet, thrash, 5.0, issue_peak_inst_per_s=PEAK, l2_conflict=0.2)
    assert alone["inst"] == pytest.approx(quiet.inst_per_s * 5.0)
    assert beside["inst"] < alone["inst"] and beside["l2"] / beside["inst"] > alone["l2"] / alone["inst"]
    with pytest.raises(ValueError, match="issue_peak"):
        corun_stretch(quiet, thrash, issue_peak_inst_per_s=0.0)
