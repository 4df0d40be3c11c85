"""Mechanism checks of the SMT co-run solver and MASA (wiess02_nakajima)."""
import dataclasses

import pytest

from pysim.models import wiess02_nakajima as m

P = m.Params()


def test_identical_fully_busy_threads_share_the_pipeline_exactly():
    # a program that is busy all the time, no misses, no FP: each gets half the package (stretch 2)
    busy = m.Program("busy", 100.0, 10e9, 0.0, 0.0)
    ta, tb = m.corun(busy, busy, P)
    assert ta == pytest.approx(2.0, rel=1e-9) and tb == pytest.approx(2.0, rel=1e-9)


def test_stall_only_threads_overlap_completely():
    idle = m.Program("stall", 100.0, 1.0, 0.0, 0.0)  # busy share ~0, no misses: SMT hides one behind the other
    ta, _ = m.corun(idle, idle, P)
    assert ta == pytest.approx(1.0, abs=1e-6)


def test_closed_form_for_a_symmetric_pair_without_misses():
    # tau = e (1 + e sigma / tau) + (1 - e), sigma = 1 + e sigma / tau -> solve by hand for e = 0.8
    prog = m.Program("x", 100.0, 0.8 * P.issue_peak_ginst * 1e9, 0.0, 0.0)
    tau, _ = m.corun(prog, prog, P)
    e = 0.8
    sigma = 1 / (1 - e / tau)
    assert tau == pytest.approx(e * sigma + (1 - e), rel=1e-9)


def test_smp_counterfactual_makes_placement_irrelevant():
    t = m.table2(dataclasses.replace(P, shared_package=False))
    assert t.loc["(INT, L2C) (INT, L2C)", "total_s"] == pytest.approx(t.loc["(INT, INT) (L2C, L2C)", "total_s"])


def test_mixed_package_throughput_beats_like_packages():
    progs = m.programs(P)
    def thr(a, b):
        ta, tb = m.corun(progs[a], progs[b], P)
        return 1 / ta + 1 / tb
    assert thr("INT", "L2C") > max(thr("INT", "INT"), thr("L2C", "L2C"))
    assert 1.0 < thr("INT", "L2C") < 2.0


def test_calibrated_values_land_on_their_cells():
    from pysim.calibration import fit_parameter
    for fit in m.CALIBRATION:
        m.corun.cache_clear()
        assert fit_parameter("wiess02_nakajima", fit) == pytest.approx(getattr(P, fit.parameter), rel=2e-3)


def test_masa_moves_like_pairs_apart_and_off_keeps_them():
    on, off = m.masa(P), m.masa(dataclasses.replace(P, masa_on=False))
    assert (on["masa_s"] <= on["like_pairs_s"]).all()
    assert (off["swaps"] == 0).all()
    assert off["masa_s"].to_numpy() == pytest.approx(off["like_pairs_s"].to_numpy(), rel=1e-6)


@pytest.mark.skipif(not all(__import__("shutil").which(t) for t in ("gcc", "valgrind")), reason="needs gcc and valgrind")
def test_now_demand_ranks_the_kernels_as_table4_ranks_the_programs():
    """The catalogue kernels stand for gzip, mesa and parser: only the FP kernel issues FP operations, and the
    pointer chase misses the L2 most, as parser does in Table 4; the then column is the model's input."""
    d = m.now_demand(quick=True)
    assert list(d.index) == ["INT (164.gzip)", "FP (177.mesa)", "L2C (197.parser)"]
    now_fp, now_l2 = d["now_fp_per_inst"], d["now_l2_per_inst"]
    assert now_fp.idxmax() == "FP (177.mesa)" and now_fp["INT (164.gzip)"] == 0
    assert now_l2.idxmax() == d["then_l2_per_inst"].idxmax() == "L2C (197.parser)"
    assert d.loc["L2C (197.parser)", "then_l2_per_inst"] == m.Params().l2c_l2_per_inst
