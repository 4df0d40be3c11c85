"""Mechanism checks of the Cosy cost model (fsl02_purohit)."""
import dataclasses

import pytest

from pysim.models import fsl02_purohit as m

P = m.Params()


def test_getpid_improvement_grows_with_calls_and_user_crosses_over_near_build_cost():
    f2 = m.figure2(P)
    assert list(f2.index) == [str(n) for n in m.GETPID_CALLS]
    for col in f2.columns:
        assert f2[col].is_monotonic_increasing
    crossover = 2 * P.build_us / P.uloop_us  # COSY's fixed user cost equals VAN's per-call cost times n
    assert 2 < crossover < 3


def test_improvements_vanish_when_crossings_are_free_and_steps_cost_the_same():
    free = dataclasses.replace(P, trap_us=1e-9, uloop_us=P.cosy_step_us, build_us=1e-9, decode_us=1e-9)
    assert abs(m.figure2(free).loc["256", "elapsed_improvement_pct"]) < 1.0
    db = m.database_times(free)
    # what is left is the per-operation difference of steps: VAN 2.5 user steps vs COSY 3.5 kernel steps
    assert db.loc["COSY", "elapsed_s"] == pytest.approx(db.loc["VAN", "elapsed_s"], rel=0.02)


def test_the_fast_path_saves_exactly_the_copies():
    db = m.database_times(P)
    iterations = P.db_operations / 1.5
    assert db.loc["COSY", "elapsed_s"] - db.loc["COSY_FAST", "elapsed_s"] == pytest.approx(
        1.5 * iterations * P.copy_4k_us * 1e-6)
    nocopy = dataclasses.replace(P, copy_4k_us=1e-9)
    db0 = m.database_times(nocopy)
    assert db0.loc["COSY", "elapsed_s"] == pytest.approx(db0.loc["COSY_FAST", "elapsed_s"], rel=1e-6)


def test_more_processes_on_one_cpu_leave_the_improvement_alone():
    d = m.database_processes(P)
    assert d["COSY_FAST_elapsed_pct"].max() - d["COSY_FAST_elapsed_pct"].min() < 0.5


def test_bonnie_gains_fall_away_past_the_page_cache():
    f5 = m.figure5(P)
    small, big = f5.loc["32"], f5.loc["512"]
    assert (big < small / 4).all()
    bigger = m.figure5(dataclasses.replace(P, memory_bytes=628 * 1024 * 1024))
    assert bigger.loc["256", "fastread_pct"] > 50 > f5.loc["256", "fastread_pct"]  # the knee moved right


def test_cold_ls_is_bound_by_the_disk():
    f6 = m.figure6(P)
    assert f6["elapsed_improvement_pct"].max() < 10


def test_grep_moves_the_search_from_user_to_system_time():
    f7 = m.figure7(P)
    moved = f7["COSY_system_us"] - f7["VAN_system_us"]
    assert (moved > 0).all() and ((f7["VAN_user_us"] - f7["COSY_user_us"]) > 0).all()


@pytest.mark.parametrize("field, value", [("trap_us", 0.0), ("request_bytes", 1000), ("dirty_sync_fraction", 2.0)])
def test_bad_parameters_are_rejected(field, value):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(P, **{field: value})
