"""Mechanism checks of the Rhino model (atc98_saito): fault paths, Rhino's shadows, the disk arm against the
lab's disk model, the OO7 and RVM traces, the recipes, and the real measurements on this machine."""
import dataclasses
import shutil

import numpy as np
import pandas as pd
import pytest

from pysim.hw.disk import Disk
from pysim.models import atc98_saito as m
from pysim.sw.wal import BufferManager
from pysim.units import MiB, ms, us

P = m.Params()
PAGE = 8192


# --- Figure 1's paths --------------------------------------------------------------------------

def test_figure1_paths_count_as_the_caption_says():
    conventional = m.path_counts(m.FAULT_PATHS["conventional"])
    spin = m.path_counts(m.FAULT_PATHS["SPIN"])
    assert conventional["crossings"] >= 8 and conventional["context_switches"] == 4
    assert spin == {"crossings": 2, "context_switches": 0}


def test_path_counting_by_hand():
    # app -> kernel (1) -> handler (2, switch) -> kernel (3) -> app (4, switch back)
    steps = (("kernel", "fault"), ("handler", "signal"), ("kernel", "sigreturn"), ("app", "resume"))
    assert m.path_counts(steps) == {"crossings": 4, "context_switches": 2}


# --- Rhino's page diffing: shadows kept after commit ---------------------------------------------

def _one_page_transactions(bm, pages):
    for pg in pages:
        bm.begin()
        bm.read(pg)
        bm.write(pg, 0, 128)
        bm.commit()


@pytest.mark.parametrize("k", [40, 50, 60, 80])
def test_kept_shadows_halve_the_memory_across_transactions(k):
    # each transaction writes one new page: with shadows kept, k pages hold 2k frames of 100, so
    # ceil((2k - 100) / 2) of them must go (each eviction frees the page and its shadow); freed at
    # commit (the shared manager), nothing goes until k > 100
    kept = m.RetainedShadowBufferManager(100, PAGE)
    freed = BufferManager(100, PAGE, "diff")
    _one_page_transactions(kept, range(k))
    _one_page_transactions(freed, range(k))
    assert kept.counts.page_writes == max(0, -(-(2 * k - 100) // 2)) == len(kept.victims)
    assert kept.victims == list(range(len(kept.victims)))  # the oldest pages first
    assert freed.counts.page_writes == 0
    assert len(kept.resident) + kept.shadows <= 100


def test_a_kept_shadow_saves_the_copy_at_the_next_fault():
    kept, freed = m.RetainedShadowBufferManager(100, PAGE), BufferManager(100, PAGE, "diff")
    for bm in (kept, freed):
        _one_page_transactions(bm, [7, 7])
    # kept: copy at the first fault, then the shadow refreshed at each commit; freed: a fresh copy each time
    assert kept.counts.copy_bytes == 3 * PAGE
    assert freed.counts.copy_bytes == 4 * PAGE
    assert kept.counts.compare_bytes == freed.counts.compare_bytes == 2 * 2 * PAGE
    assert kept.shadows == 1 and freed.shadows == 0


def test_a_page_stolen_then_read_again_can_be_evicted_again():
    # a transaction bigger than memory steals, reads a stolen page back, and goes on: no crash, no
    # negative shadow count, and every steal forced its reverse diff first
    bm = m.RetainedShadowBufferManager(20, PAGE)
    bm.begin()
    for pg in range(15):
        bm.write(pg, 0, 8)
    bm.read(0)
    for pg in range(15, 30):
        bm.read(pg)
    bm.commit()
    assert bm.counts.steals > 0 and bm.shadows >= 0
    assert bm.counts.log_forces >= bm.counts.steals
    assert bm.counts.undo_bytes >= bm.counts.steals * (8 + bm.record_header_bytes)


# --- the disk arm against the lab's disk model -----------------------------------------------------

def test_a_log_append_waits_for_its_sector_exactly_as_the_disk_model_does():
    spec = m.disk_spec(P)
    arm, disk = m.DiskArm(spec), Disk(spec)
    lba, n, idle = 2_000_000, 4, 0.7 * ms
    first = disk.run([0.0], [lba], [n], [True])
    arm.service_s(lba, n)
    t = float(first["finish_s"].iloc[0]) + idle
    second = disk.run([t], [lba + n], [n], [True])
    assert arm.service_s(lba + n, n, idle) == pytest.approx(float(second["response_s"].iloc[0]), abs=1e-9)


def test_a_forced_commit_after_a_short_transaction_costs_most_of_a_revolution():
    period = 60 / P.disk_rpm
    t = m.forced_commit_ms(P, log_bytes=512, idle_us=500.0) * ms
    sector = period / Disk(m.disk_spec(P)).locate(1_000_001)[3]
    # the next sector passed under the head as the last write ended: wait out the rest of the revolution
    expected = P.disk_overhead_ms * ms + (period - (500 * us + P.disk_overhead_ms * ms)) + sector
    assert t == pytest.approx(expected, rel=1e-6)


def test_random_requests_cost_what_the_disk_model_says_on_average(seed):
    spec = m.disk_spec(P)
    disk, arm = Disk(spec), m.DiskArm(spec)
    rng = np.random.default_rng(seed)
    n = 3000
    lbas = rng.integers(0, disk.capacity_sectors - 16, n)
    arrivals = np.cumsum(rng.uniform(0.05, 0.2, n))  # far apart: each request finds the disk idle
    model = disk.run(arrivals, lbas, np.full(n, 16), np.zeros(n, bool))["response_s"].mean()
    ours = np.mean([arm.service_s(int(lba), 16, 0.1) for lba in lbas])
    # the model's rotation is exact, ours its mean (half a revolution): 3000 draws of a uniform over one
    # revolution (11.1 ms) give a standard error of 0.06 ms on a mean near 20 ms
    assert ours == pytest.approx(model, rel=0.03)


def test_bad_disk_requests_are_refused():
    arm = m.DiskArm(m.disk_spec(P))
    with pytest.raises(ValueError, match="sectors"):
        arm.service_s(0, 0)
    with pytest.raises(ValueError, match="idle_s"):
        arm.service_s(0, 1, -1.0)


# --- the workloads -----------------------------------------------------------------------------------

def test_oo7_object_sizes_give_the_medium_databases_their_stated_sizes():
    for config, mb in (("medium-3", P.oo7_medium3_mb), ("medium-9", P.oo7_medium9_mb)):
        size = m.oo7_database(P, config).layout()["bytes"] / MiB
        assert size == pytest.approx(mb, rel=0.005)


@pytest.mark.parametrize("kind", m.TRAVERSALS)
def test_all_traversals_come_from_one_walk_of_the_shared_generator(kind):
    db = dataclasses.replace(m.oo7_database(P, "small"), composites=60, levels=4)
    pages, writes = db.traversal(kind, rng=3)
    ours = m._touches(db, kind, 3)
    assert np.array_equal(pages, ours[0]) and np.array_equal(writes, ours[1])


def test_oo7_trace_folds_touches_and_caps_the_bytes_a_page_can_change():
    db = m.oo7_database(P, "small")
    accesses, touches = m.oo7_trace(db, "T2c", P.oo7_update_bytes, 0)
    pages, _ = m._touches(db, "T2c", 0)
    runs = 1 + int(np.sum(pages[1:] != pages[:-1]))
    assert len(accesses) == runs and touches == len(pages)
    per_part = db.atomic_bytes + db.connections * db.connection_bytes
    cap = (PAGE // per_part) * P.oo7_update_bytes
    changed = {}
    for page, _, writes in accesses:
        for offset, n in writes:
            changed.setdefault(page, set()).update(range(offset, offset + n))
    assert max(len(b) for b in changed.values()) <= cap
    assert all(not w for _, _, w in m.oo7_trace(db, "T1", P.oo7_update_bytes, 0)[0])


def test_rvm_transactions_read_and_write_three_blocks_then_append():
    txns = m.rvm_trace(8 * MiB, 50, 16384, 128, 64, PAGE, 1)
    assert all(len(t) == 4 for t in txns)
    for t in txns:
        assert [reads for _, reads, _ in t] == [True, True, True, False]
        assert all(w[0][1] == 128 for _, _, w in t[:3]) and t[3][2][0][1] == 64
        assert t[1][0] < 2 and t[2][0] < 2  # the hot region: the first 16 KB, two pages
    assert t[3][0] >= 8 * MiB // PAGE  # the append lies after the database


# --- pricing -----------------------------------------------------------------------------------------

def test_a_transaction_costs_its_recipes_by_hand():
    # one page read-faulted and written under page-grain logging on SPIN, all in memory: CPU by hand
    p = P
    access = [3, 1, 1, 0, 0, -1, PAGE + 32, 0, 0, 0, 0]  # m.ACCESS_COLUMNS
    commit = [PAGE + 32, 1, 1, 1, 0, 0]  # m.COMMIT_COLUMNS
    run = m.Replayed(np.array([access]), np.zeros(0, np.int64), np.array([commit]), np.array([0, 1]))
    out, events = m.price(p, "page", "spin", m.Layout(16, 1_000_000, 1_500_000), run, through_cache=False,
                          app=m.Recipe({"rvm_app": 1}), app_ops=1)
    row = dict(zip(m.PRICE_COLUMNS, out[0], strict=True))
    fault = p.spin_fault_us + p.pmap_us + p.lock_us
    expected_us = ((p.spin_trap_us + p.begin_us) + p.rvm_app_us + 2 * fault + 2 * p.log_record_us
                   + 2 * (PAGE + 32) * p.copy_ns_per_byte / 1e3 + p.pmap_us + (p.spin_trap_us + p.commit_us))
    assert row["cpu_s"] / us == pytest.approx(expected_us, rel=1e-9)
    assert row["log_bytes"] == 2 * (PAGE + 32) and row["log_writes"] == 1 and row["disk_s"] > 0
    assert events["read_fault"] == events["write_fault"] == 1 and events["log_record"] == 2  # an undo, a redo


def test_the_pricing_kernels_disk_arm_is_the_python_arm(seed):
    # the compiled twin of DiskArm.service_s, on random requests mixed with log appends that continue the last
    spec = m.disk_spec(P)
    arm, tables = m.DiskArm(spec), m.disk_of(P)[3]
    state = np.zeros(10, np.int64)
    state[m._NEXT_LBA] = -1
    rng = np.random.default_rng(seed)
    total = Disk(spec).capacity_sectors
    lba = 0
    for _ in range(400):
        n = int(rng.integers(1, 200))
        lba = lba if rng.random() < 0.4 else int(rng.integers(0, total - 200))  # 0.4: an append
        idle = float(rng.uniform(0, 0.03))
        assert m._arm_service(lba, n, idle, state, tables) == pytest.approx(arm.service_s(lba, n, idle), abs=1e-12)
        assert (state[m._CYL], state[m._NEXT_LBA]) == (arm.cylinder, arm.next_lba)
        lba += n


@pytest.mark.parametrize("policy", ["setrange", "page", "diff"])
def test_the_victims_recorded_are_the_lru_pages_written_out(policy):
    # a reference LRU of page numbers: a read makes room for one frame, a first write under diff for two (the
    # page and its shadow, freed at commit here); the oldest page goes, and is written out when dirty
    cap, lru, dirty, expected = 50, [], set(), []
    rng = np.random.default_rng(1)

    def make_room(frames):
        while len(lru) + frames > cap:
            out = lru.pop(0)
            if out in dirty:
                expected.append(out)
                dirty.discard(out)

    bm = m.buffer_manager(policy, cap, PAGE, header=32, retained=False)
    for _ in range(600):
        pg, writes = int(rng.integers(0, 120)), bool(rng.random() < 0.5)
        bm.begin()
        bm.read(pg)
        if pg in lru:
            lru.remove(pg)
        else:
            make_room(1)
        lru.append(pg)
        if writes:
            bm.write(pg, 0, 8)
            if policy == "diff":
                make_room(2)
            dirty.add(pg)
        bm.commit()
    assert bm.victims == expected and len(bm.victims) == bm.counts.page_writes > 0


def test_user_level_detection_gives_spin_the_unix_fault_path():
    cf = dataclasses.replace(P, in_kernel_detection=False)
    cpu = m.cost_model(cf)
    spin = m.event_recipes(cf, "spin", through_cache=False)["write_fault"].seconds(cpu)
    unix = m.event_recipes(cf, "unix", through_cache=False)["write_fault"].seconds(cpu)
    assert spin == unix and spin > m.event_recipes(P, "spin", through_cache=False)["write_fault"].seconds(
        m.cost_model(P))


def test_page_logging_logs_two_pages_per_modified_page_in_rvm():
    f6 = m.figure6(rng=0, quick=True)
    txns = m.rvm_trace(8 * MiB, P.rvm_transactions, int(P.rvm_hot_kb * 1024), 128, 64, PAGE,
                       int(np.random.default_rng(0).integers(2**31)))
    modified = np.mean([len({pg for pg, _, _ in t}) for t in txns])
    assert f6.loc[("8", "page log"), "log_kb"] == pytest.approx(2 * modified * (PAGE + 32) / 1024, rel=1e-6)
    assert f6.loc[("8", "setrange"), "log_kb"] < 1.0  # three 128-byte records and a 64-byte one, with headers


def test_a_forced_commit_hides_cpu_shorter_than_a_revolution():
    # pdiff on UNIX spends more CPU per transaction than on SPIN, but the log's sector comes round at the
    # same moment: the extra CPU only shortens the rotational wait
    f6 = m.figure6(rng=0, quick=True)
    spin, unix = f6.loc[("8", "pdiff (SPIN)")], f6.loc[("8", "pdiff (UNIX)")]
    assert unix["cpu_ms"] > spin["cpu_ms"] + 0.5
    assert unix["ms_per_txn"] == pytest.approx(spin["ms_per_txn"], rel=0.01)


def test_nvram_log_takes_the_disk_out_of_an_in_memory_commit():
    base = m.figure6(rng=0, quick=True)
    f6 = m.figure6(dataclasses.replace(P, log_on_disk=False), rng=0, quick=True)
    assert base.loc[("8", "setrange"), "disk_ms"] > 10  # a forced write a transaction, most of a revolution
    assert f6.loc[("8", "setrange"), "disk_ms"] < 0.3  # only the appends to new pages read from the disk


def test_same_seed_same_output_and_bad_input_refused():
    a, b = m.figure9(rng=2), m.figure9(rng=2)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="disk_inner_sectors"):
        dataclasses.replace(P, disk_inner_sectors=P.disk_outer_sectors + 1)
    with pytest.raises(ValueError, match="memory_mb"):
        dataclasses.replace(P, memory_mb=5.0)
    with pytest.raises(ValueError, match="page_bytes"):
        dataclasses.replace(P, page_bytes=1000)
    with pytest.raises(ValueError, match="config"):
        m.oo7_database(P, "large")
    with pytest.raises(ValueError, match="platform"):
        m.event_recipes(P, "mach", through_cache=False)
    with pytest.raises(ValueError, match="kind"):
        m._touches(m.oo7_database(P, "small"), "T3", 0)


# --- real measurements on this machine ------------------------------------------------------------------

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@needs_gcc
def test_write_detection_is_measured_for_real():
    d = m.measure_write_detection(quick=True)
    user = d.loc["mprotect + SIGSEGV (user-level handler)"]
    plain = d.loc["no detection (plain writes)", "us_per_page"]
    assert user["note"] == "" and user["us_per_page"] > 5 * plain
    for path in ("userfaultfd write-protect (handler thread)",
                 "userfaultfd asynchronous write-protect (in the kernel)"):
        row = d.loc[path]
        assert (row["note"] == "" and row["us_per_page"] > plain) or row["note"].startswith("not available: ")


@needs_gcc
def test_the_recoverable_memory_library_logs_what_each_policy_should():
    lib = m.measure_rvm_library(quick=True)
    assert (lib["note"] == "").all() and (lib["syncs_per_txn"] == 1).all()
    page = lib.loc["page", "page_bytes"]
    # page-grain logging: each first-written page whole as undo and as redo; diffing: about the bytes written
    assert lib.loc["page", "log_bytes_per_txn"] == pytest.approx(2 * lib.loc["page", "faults_per_txn"] * page,
                                                                 rel=0.05)
    assert lib.loc["diff", "diff_bytes_per_txn"] <= 3 * 128 + 64
    assert lib.loc["setrange", "faults_per_txn"] == 0 and 3 <= lib.loc["diff", "faults_per_txn"] <= 4
    assert (lib["recovers"] == 1).all()  # the database file plus the log's redo records give what memory held


@needs_gcc
def test_the_library_recovers_across_checkpoints():
    # a 1 MB log fills every thirty-odd page-logged transactions: the changed pages go to the database file and
    # the log starts again, and recovery from file and log still gives what memory holds
    out = m.run_rvm_program("page", db_mb=2, transactions=120, log_mb=1, seed=4)
    assert out.get("note", "") == "" and out["checkpoints"] >= 2 and out["recovers"] == 1
    with pytest.raises(ValueError, match="policy"):
        m.run_rvm_program("shadow", db_mb=2, transactions=1)
