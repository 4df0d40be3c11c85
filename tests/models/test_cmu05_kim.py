"""Mechanism checks of the DSM lock model (cmu05_kim)."""
import dataclasses
import shutil

import pytest

from pysim.calibration import target
from pysim.engine import Simulation
from pysim import ledger
from pysim.models import cmu05_kim as m

P = m.Params()
CYCLE = P.cycle_s


def test_atomics_drain_the_pipeline_and_pthreads_releases_with_a_swap():
    # one CPU alone: after the first section every access hits, so acquire = release = drain + hit
    one = dataclasses.replace(P, cpus=1)
    loop = m.LockLoop(one, lock="TAS+swap", addresses=1, cs_cycles=1000, think_cycles=0, sections=8,
                      data_lines=16)
    rows = loop.run()
    expected = (P.drain_cycles + P.hit_cycles) * CYCLE
    assert rows["acquire_s"].tolist() == pytest.approx([expected] * len(rows))
    assert rows["release_s"].tolist() == pytest.approx([expected] * len(rows))
    assert loop.locks[0].d.counts["atomics"] == 2 * 8  # ldstub and swap per section
    store = m.LockLoop(one, lock="TAS", addresses=1, cs_cycles=1000, think_cycles=0, sections=8, data_lines=16).run()
    assert store["release_s"].tolist() == pytest.approx([P.hit_cycles * CYCLE] * len(store))


def test_latencies_follow_the_hops():
    lat = P.latency()
    ns = 1e-9
    assert lat.memory_s == pytest.approx((2 * P.hop_ns + P.directory_ns + P.bank_ns) * ns)
    assert m.table1().loc["machine", "bank_cycles"] == pytest.approx(P.bank_ns * P.clock_ghz)
    # a dirty line from another cache: two CPUs, the second's atomic after the first's store
    sim = Simulation()
    d = m.DrainingDirectory(sim, lat, P.drain_cycles * CYCLE)
    times = []

    def run():
        yield from d.store(0, "x", 1)
        t = sim.now
        yield from d.rmw(1, "x", lambda v: 0)
        times.append(sim.now - t)
    sim.process(run())
    sim.run()
    assert times[0] == pytest.approx(P.drain_cycles * CYCLE + lat.owner_s)


def test_saturated_fair_lock_obeys_the_machine_repairman():
    # no think time and a FIFO lock (MCS): every CPU is always queued, the lock is the bottleneck, and
    # by Little's law each acquire waits N / X less the CPU's own section, release and data misses
    loop = m.LockLoop(P, lock="MCS", addresses=1, cs_cycles=1e4, think_cycles=0, sections=40)
    rows = loop.run()
    x = P.cpus * loop.sections / (loop.elapsed_s / CYCLE)       # sections per cycle, all CPUs
    assert 0.7 < x * 1e4 <= 1.0        # the lock is busy with sections (and their data misses) most of the time
    own = 1e4 + rows["release_s"].mean() / CYCLE + 2 * P.latency().owner_s / CYCLE
    assert rows["acquire_s"].mean() / CYCLE == pytest.approx(P.cpus / x - own, rel=0.05)
    assert rows["spin_s"].sum() > 0.9 * rows["acquire_s"].sum()


def test_test_and_set_is_unfair_when_saturated():
    # §3.1: 'the one that performs the set the earliest after the lock is released will win': the
    # releaser still holds the line after its swap, so with no think time it takes the lock again
    p = dataclasses.replace(P, hot_think_kcycles=1e-6)
    tas = m.LockLoop(p, lock="TAS+swap", addresses=1, cs_cycles=1e4, think_cycles=0, sections=20).run()
    mcs = m.LockLoop(p, lock="MCS", addresses=1, cs_cycles=1e4, think_cycles=0, sections=20).run()
    assert tas["acquire_s"].max() > 5 * tas["acquire_s"].median()
    assert mcs["acquire_s"].max() < 2 * mcs["acquire_s"].median()


def test_contention_makes_the_release_wait_behind_spinning_atomics():
    t = m.locks(quick=True)
    owner = P.latency().owner_s / CYCLE
    assert t.loc["TAS+swap", "release_kcycles"] * 1e3 > 2 * owner    # queued at the home
    assert t.loc["MCS", "release_kcycles"] * 1e3 < 2 * owner + 2 * P.drain_cycles  # one handoff store
    assert t.loc["MCS", "misses_per_section"] < 0.5 * t.loc["TAS", "misses_per_section"]


def test_stored_think_time_lands_on_the_published_acquire():
    paper = ledger.load("cmu05_kim")
    fit, = m.CALIBRATION
    got = m.pattern(P, fit.row, rng=m._seeded(0))[fit.column]   # as table3 runs it, full profile
    assert got == pytest.approx(target(paper, fit), rel=0.01)


def test_speculation_commits_disjoint_sections_and_not_conflicting_ones(seed):
    sp = m.speculation(rng=seed, quick=True)
    assert sp.loc["SLE", "elided_pct"] > 95 and sp.loc["SLE", "sync_pct"] < 1
    assert sp.loc["last-value", "elided_pct"] < 25      # the hot lock is nearly always held
    clash = m.speculation(dataclasses.replace(P, data_lines=2), rng=seed, quick=True)
    assert clash.loc["SLE", "aborts_per_section"] > 1 and clash.loc["SLE", "speedup"] < 1.2


def test_shares_add_up_and_quick_is_close_to_full():
    f = m.figure7(quick=True)
    parts = f["spin_pct"] + f["acquire_pct"] + f["release_pct"]
    assert parts.tolist() == pytest.approx(f["sync_pct"].tolist())
    h = m.headline(quick=True)
    assert h.loc["system", "gain_pct"] == pytest.approx(f.loc[["DB2 system", "Oracle system"], "sync_pct"].mean())


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="lines_per_section"):
        dataclasses.replace(P, lines_per_section=10, data_lines=4)
    with pytest.raises(ValueError, match="mode"):
        m.LockLoop(P, lock="TAS", addresses=1, cs_cycles=1, think_cycles=0, sections=1, mode="htm")
    with pytest.raises(ValueError, match="pattern"):
        m.pattern(P, "Sybase")
    with pytest.raises(ValueError, match="hot_lock"):
        dataclasses.replace(P, hot_lock="futex")


@pytest.mark.quiet  # timings: run before the notebooks start beside the suite
@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_real_locks_run_on_this_machine():
    now = m.measure_now(quick=True)
    assert now["available"].all(), now["note"].tolist()
    assert (now["episode_ns"] > 0).all()
    assert now.loc[("TAS", 1), "episode_ns"] < 1e4     # an uncontended atomic and a store: nanoseconds
    tvn = m.then_and_now(now)
    assert (tvn["then_episode_ns"] > 100).all()          # the DSM's misses: hundreds of ns each
