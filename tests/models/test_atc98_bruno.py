"""Mechanism checks of the Eclipse/MTR-LS model (atc98_bruno): Figure 6's token list by hand, Example 1's
round robin against its closed form, §5.1's preemption, Eclipse's WRR budgets, the effective reservation."""
import dataclasses

import pytest

from pysim.engine import Simulation
from pysim.models import atc98_bruno as m
from pysim.sw.sched import Scheduler, Task

P = m.Params()


def test_example2_token_lists_match_figure6_exactly():
    e2 = m.example2()
    panels = {k: [(int(r.domain), r.left) for _, r in e2.loc[[i for i in e2.index if i[0] == k]].iterrows()]
              for k in "abcd"}
    assert panels["b"] == [(1, 3), (2, 5), (3, 15), (1, 7)]
    assert panels["c"] == [(1, 3), (3, 15), (1, 7), (2, 5)]
    assert panels["d"] == [(1, 3), (3, 12), (1, 7), (2, 5), (3, 3)]


def test_without_preemption_p3_keeps_its_quantum():
    e2 = m.example2(dataclasses.replace(P, mtrls_preempts=False))
    d = [(int(r.domain), r.left) for i, r in e2.iterrows() if i.startswith("d.")]
    assert d != [(1, 3), (3, 12), (1, 7), (2, 5), (3, 3)]  # P1's return no longer cuts P3's quantum at 3


def test_round_robin_matches_the_hand_count():
    # the process waits for the running loop's rest of slice (delta - 23 mod delta) and n - 1 full slices
    e1 = m.example1(quick=True)
    for n in (2, 5, 10):
        rest = (P.example1_slice_s - P.io_disk_s % P.example1_slice_s) % P.example1_slice_s
        period = P.io_cpu_s + P.io_disk_s + rest + (n - 1) * P.example1_slice_s
        assert e1.loc[n, "rr_per_s"] == pytest.approx(1 / period, rel=0.03)
        assert e1.loc[n, "rr_per_s"] >= e1.loc[n, "bound_per_s"]  # §4's n full slices is the worst case


def test_effective_reservation_splits_the_unreserved_evenly():
    eff = m.effective({"fs": 0.2, "mpeg": 0.15, **{f"o{k}": 0.0 for k in range(8)}})
    assert eff["mpeg"] == pytest.approx(0.15 + 0.65 / 10)
    assert sum(eff.values()) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        m.effective({"a": 0.7, "b": 0.6})


def test_eclipse_wrr_budget_caps_a_hog_while_others_want_the_cpu():
    sim = Simulation()
    pol = m.EclipseWrr({"a": 0.8, "b": 0.2}, 0.5, 0.005)
    s = Scheduler(sim, pol, tick_s=0.005)
    s.add(Task("a", [("cpu", 100.0)], domain="a"))
    s.add(Task("b", [("cpu", 100.0)], domain="b"))
    sim.run(until=10.0)
    st = s.stats()
    # both always busy: budgets run out together, so run_lo's round robin never changes the 80/20 split much
    assert st.loc["a", "cpu_s"] / 10.0 == pytest.approx(0.8, abs=0.05)


def test_mtrls_preemption_happens_at_the_next_tick():
    sim = Simulation()
    pol = m.EclipseMtrLs({"light": 0.5, "hog": 0.5}, 0.5)
    s = Scheduler(sim, pol, tick_s=0.005)
    s.add(Task("hog", [("cpu", 100.0)], domain="hog"))
    light = s.add(Task("light", [("cpu", 0.001), ("sleep", 0.0203)], domain="light"), start_s=0.0012)
    sim.run(until=2.0)
    assert max(light.waits) <= 0.005 + 1e-9


def test_mpeg_underflows_fall_with_the_reservation_under_mtrls():
    f9 = m.figure9(quick=True)
    col = f9["mtrls_underflows_per_s"]
    assert col.iloc[0] > 100 and col.iloc[-1] == 0
    assert (col.diff().dropna() <= 1e-9).all()


def test_same_seed_same_output():
    assert m.figure11(quick=True).equals(m.figure11(quick=True))
