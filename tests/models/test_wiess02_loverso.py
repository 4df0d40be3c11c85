"""Mechanism checks of the Berkeley DB companions (wiess02_loverso): §8's page arithmetic by hand and against
SQLite's real B-trees, §9's checkpoint starvation against a closed-system formula and the scheduling rules."""
import dataclasses
import shutil

import pytest

from pysim.models import wiess02_loverso as m

P = m.Params()


def test_page_arithmetic_by_hand():
    # a leaf record: key item align4(3 + 8) = 12 and its slot, data item align4(3 + 32) = 36 and its slot
    record = 12 + 2 + 36 + 2
    interior = 20 + 2  # align4(12 + 8) and a slot
    lay = m.layout()
    for size in P.page_sizes:
        usable, usable_c = size - 25, size - 25 - 36
        assert lay.loc[size, "leaf_records"] == usable // record
        assert lay.loc[size, "leaf_records_crypto"] == usable_c // record
        assert lay.loc[size, "fanout"] == usable // interior
        assert lay.loc[size, "fanout_crypto"] == usable_c // interior
        assert lay.loc[size, "index_offset_adopted"] - lay.loc[size, "index_offset"] == 36
        assert size - lay.loc[size, "data_end_rejected"] == 36
    leaves = -(-P.records // (487 // record))
    assert lay.loc[512, "pages"] >= leaves and lay.loc[512, "pages"] < leaves * 1.1


def test_the_area_costs_less_as_pages_grow_and_nothing_when_absent():
    lay = m.layout()
    assert lay["crypto_pct_of_page"].is_monotonic_decreasing
    assert lay.loc[512, "extra_pages_pct"] > lay.loc[8192, "extra_pages_pct"]
    none = m.layout(dataclasses.replace(P, crypto_bytes=0))
    assert (none["pages"] == none["pages_crypto"]).all()


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="no sqlite3 shell")
def test_layout_model_predicts_sqlites_pages_and_sqlite_refuses_36_bytes_on_512():
    got = m.measure_sqlite(quick=True)
    ok = got[got["available"]]
    assert len(ok) >= 12
    assert ((ok["model_pages"] / ok["pages"] - 1).abs() < 0.01).all()
    assert (ok["model_levels"] == ok["levels"]).all()
    assert not got.loc[(512, 36), "available"] and "480" in got.loc[(512, 36), "note"]
    now = m.sqlite_now(got)
    assert now.loc[1024, "sqlite_extra_pages_pct_36"] > now.loc[8192, "sqlite_extra_pages_pct_36"] > 0


def test_equal_priority_throughput_follows_the_closed_system_formula(seed):
    # N tasks, think Z, service S on one CPU at light load: X = N / (Z + S + queueing), within a few percent
    load, horizon = 0.2, 10.0
    r = m.run_checkpoints(P, "equal priority", load, horizon_s=horizon, rng=seed)
    z = P.db_tasks * P.op_cpu_s / load - P.op_cpu_s
    bound = P.db_tasks / (z + P.op_cpu_s)
    assert r["ops"] / horizon == pytest.approx(bound, rel=0.08)
    assert r["ops"] / horizon <= bound * 1.05


def test_strict_priority_with_a_runnable_retry_livelocks_and_inheritance_cures_it(seed):
    stuck = m.run_checkpoints(P, "strict priority", 0.5, yield_kind="sched_yield", horizon_s=3.0, rng=seed)
    assert stuck["marked_at_end"] and stuck["checkpoints"] == 0 and max(stuck["holds"]) > 1.5
    pi = dataclasses.replace(P, priority_inheritance=True)
    cured = m.run_checkpoints(pi, "strict priority", 0.5, yield_kind="sched_yield", horizon_s=3.0, rng=seed)
    assert cured["checkpoints"] >= 1 and max(cured["holds"]) < 0.1


def test_a_sleeping_retry_leaves_the_idle_cpu_to_the_checkpoint(seed):
    light = m.run_checkpoints(P, "strict priority", 0.2, horizon_s=3.0, rng=seed)
    assert light["checkpoints"] >= 2 and max(light["holds"]) < 0.05
    # the checkpoint only ever runs in the database tasks' idle time
    assert light["checkpoint_cpu_s"] <= 3.0 - light["db_cpu_s"] + 1e-9


def test_before_the_fix_a_waiter_holding_its_locks_deadlocks_even_at_equal_priority(seed):
    old = dataclasses.replace(P, yield_fix=False)
    r = m.run_checkpoints(old, "equal priority", 0.8, horizon_s=3.0, rng=seed)
    assert r["marked_at_end"] and max(r["holds"]) > 1.0


def test_same_seed_same_result_and_bad_input_refused():
    a = m.run_checkpoints(P, "time-sharing", 0.8, horizon_s=1.0, rng=3)
    b = m.run_checkpoints(P, "time-sharing", 0.8, horizon_s=1.0, rng=3)
    assert a == b
    with pytest.raises(ValueError, match="policy"):
        m.run_checkpoints(P, "lottery", 0.5, horizon_s=1.0)
    with pytest.raises(ValueError, match="page_sizes"):
        dataclasses.replace(P, page_sizes=(500,))
    with pytest.raises(ValueError, match="db_priority"):
        dataclasses.replace(P, checkpoint_priority=2)
