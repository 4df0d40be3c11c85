"""Mechanism checks of the Arjuna companion model (wiess02_little): commit accounting and latency by hand,
nested and flat retries against their closed forms, false suspicions and detection time against the
heartbeat arithmetic, the replicated store's views by hand, availability against renewal theory, and the
real experiments (UDP heartbeats with SIGSTOP, PostgreSQL's PREPARE TRANSACTION on a server the test starts
and stops on loopback; skipped only where PostgreSQL is not installed)."""
import dataclasses
import math
import socket
import sys

import numpy as np
import pytest

from pysim.engine import Simulation
from pysim.models import wiess02_little as m
from pysim.sw.failure import HeartbeatDetector

P = m.Params()


# --- commit ---------------------------------------------------------------------------

def test_a_message_is_the_rpc_software_and_one_ethernet_frame():
    # 200 bytes of payload, 14 of header and 4 of FCS at 10 Mbit/s: 174.4 us on the wire
    assert m.message_s(P) == pytest.approx(1.0e-3 + (200 + 14 + 4) * 8 / 10e6)


@pytest.mark.parametrize("store", m.STORES)
def test_commit_costs_match_the_hand_count(store):
    t = m.commit(P)
    msg, f = m.message_s(P) * 1e3, m.force_s(P, store) * 1e3
    for n in m.PARTICIPANTS:
        one = t.loc[(store, "one_phase", 1, n)]
        assert (one.messages, one.forced_writes) == (2 * n, n)
        assert one.finished_ms == pytest.approx(2 * msg + f)  # commit, force, acknowledge
        pa = t.loc[(store, "presumed_abort", 1, n)]
        assert (pa.messages, pa.forced_writes) == (4 * n, 2 * n + 1)
        # prepare, force, vote; force the decision; commit, force, acknowledge
        assert pa.decided_ms == pytest.approx(2 * msg + 2 * f)
        assert pa.finished_ms == pytest.approx(4 * msg + 3 * f)
        deep = t.loc[(store, "one_phase", 2, n)]
        assert (deep.messages, deep.forced_writes) == (4 * n, 2 * n)
        assert deep.finished_ms == pytest.approx(2 * (2 * msg + f))  # the word passes down a level and back


def test_participant_trees_have_the_asked_shape_and_refuse_nonsense():
    tree = m.participant_tree(3, 2, failed=("s1.0",))
    assert [n.name for n in tree.nodes()] == ["coordinator", "s0", "s0.0", "s1", "s1.0", "s2", "s2.0"]
    assert [n.vote_yes for n in tree.nodes()] == [True, True, True, True, False, True, True]
    with pytest.raises(ValueError, match="n and depth"):
        m.participant_tree(0)
    with pytest.raises(ValueError, match="store"):
        m.force_s(P, "tape")


# --- atomicity --------------------------------------------------------------------------

def _binomial_band(p, n):
    return 4 * 100 * math.sqrt(p * (1 - p) / n) + 1e-9


@pytest.mark.parametrize("two_phase", [True, False])
def test_outcomes_follow_the_crash_probability(two_phase, seed):
    p = dataclasses.replace(P, two_phase=two_phase, commit_crash_pct=5.0)
    t = m.atomicity(p, rng=seed)
    c, commits = 0.05, 20_000
    for label, row in t.iterrows():
        n = int(label)
        ok = (1 - c) ** n
        assert row.committed_pct == pytest.approx(100 * ok, abs=_binomial_band(ok, commits))
        if two_phase:
            assert row.mixed_pct == 0  # a crashed participant never votes yes: everybody aborts
        else:
            mixed = 1 - ok - c ** n
            assert row.mixed_pct == pytest.approx(100 * mixed, abs=_binomial_band(mixed, commits))


# --- nested actions ---------------------------------------------------------------------

def _run(n, q, nested, actions, seed):
    g = np.random.default_rng(seed)
    runs = [m.TopLevelAction(n, q, nested=nested, protocol="presumed_abort", rng=g).run() for _ in range(actions)]
    return {k: np.array([r[k] for r in runs], dtype=float) for k in runs[0]}


@pytest.mark.parametrize("q", [0.05, 0.2])
def test_nested_and_flat_retries_match_their_closed_forms(q, seed):
    n, actions = 3, 20_000
    nested, flat = _run(n, q, True, actions, seed), _run(n, q, False, actions, seed)
    attempts = (1 - q) ** -n
    per_attempt = (1 - (1 - q) ** n) / q  # operations until the first failure, or all n
    expected = {("nested", "operations"): n / (1 - q), ("nested", "top_aborts"): 0.0,
                ("flat", "top_aborts"): attempts - 1, ("flat", "operations"): attempts * per_attempt}
    for (kind, key), value in expected.items():
        x = (nested if kind == "nested" else flat)[key]
        assert x.mean() == pytest.approx(value, abs=4 * x.std() / math.sqrt(actions) + 1e-12)
    # every commit ends with presumed abort's 4n messages and 2n + 1 forces; each operation is an RPC
    assert np.all(nested["forced_writes"] == 2 * n + 1)
    extra = nested["messages"] - 2 * nested["operations"] - 4 * n
    assert np.all(extra == 2 * nested["nested_aborts"])  # one abort RPC per failed nested action


# --- failure detection ------------------------------------------------------------------

def test_a_silence_below_the_threshold_never_trips_a_monitor():
    # the worst phase: the silence starts just after a heartbeat left
    timeout = 3.0
    d = m.silence_threshold_s(P, timeout) - 1e-3
    sim = Simulation()
    det = HeartbeatDetector(sim, period_s=P.ping_period_s, timeout_s=timeout, stalls=[(5.0 + 1e-6, d)],
                            delay=lambda g: g.uniform(0.25e-3, 0.75e-3))
    sim.run(until=20.0)
    assert det.summary(20.0)["false_suspicions"] == 0


def test_stalls_are_poisson_and_merged_where_they_overlap(seed):
    p = dataclasses.replace(P, stall_per_day=2000.0, stall_median_s=5.0)
    s = m.stall_schedule(p, 10 * m.DAY, seed)
    assert np.all(s[1:, 0] > s[:-1, 0] + s[:-1, 1])  # no overlap left
    raw = 2000 * 10
    assert len(s) <= raw + 4 * math.sqrt(raw)
    assert len(m.stall_schedule(dataclasses.replace(P, live_nodes_stall=False), m.DAY, seed)) == 0


def test_false_suspicions_follow_the_phase_arithmetic(seed):
    # a silence d trips a monitor whose last heartbeat left u before it when u + d > timeout (delays are a
    # millisecond): with the phase uniform, P = clip((d + period - timeout) / period, 0, 1)
    p = dataclasses.replace(P, stall_per_day=2000.0, stall_median_s=2.0, stall_sigma=0.5)
    stalls = m.stall_schedule(p, 2 * m.DAY, seed)
    timeout = 3.0
    found = m.false_suspicions(p, stalls, timeout, clients=1, root=seed)
    counted = sum(len(eps) for _, _, eps in found)
    prob = np.clip((stalls[:, 1] + p.ping_period_s - timeout) / p.ping_period_s, 0, 1)
    sd = math.sqrt(np.sum(prob * (1 - prob)))
    assert counted == pytest.approx(prob.sum(), abs=4 * sd + 1)


def test_a_crash_is_detected_half_a_period_before_the_timeout_on_average(seed):
    timeout = 5.0
    times = m.detection_times(P, timeout, clients=7, crashes=np.arange(20) * 100.0 + 50.0, root=seed)
    d = np.array(times).ravel()
    assert np.all((d >= timeout - P.ping_period_s) & (d <= timeout + P.ping_period_s / 4 + 1e-9))
    assert d.mean() == pytest.approx(timeout - P.ping_period_s / 2, abs=4 * P.ping_period_s / math.sqrt(12 * d.size))


# --- the registration system ------------------------------------------------------------

def test_a_client_that_suspects_a_live_copy_leaves_it_stale_for_the_others():
    store = m.ReplicatedStore((0, 1, 2), 2, agreed=False)
    store.suspect(0, 0)
    assert store.transaction(0, write=True, pick=0.0)          # client 0 writes copies 1 and 2 only
    assert store.missed_writes == 1
    store.transaction(1, write=False, pick=0.0)                # client 1 still reads copy 0: stale
    assert store.stale_reads == 1
    store.hear(0, 0)                                          # copy 0 catches up as it rejoins
    store.transaction(1, write=False, pick=0.0)
    assert store.stale_reads == 1


def test_agreed_membership_fences_the_suspected_copy_from_everyone():
    store = m.ReplicatedStore((0, 1, 2), 2, agreed=True)
    store.suspect(0, 0)
    store.transaction(0, write=True, pick=0.0)
    store.transaction(1, write=False, pick=0.0)               # copy 0 is out of client 1's view too
    assert store.stale_reads == 0 and store.views[1].up == {1, 2}
    store.hear(0, 0)
    assert store.views[1].up == {0, 1, 2} and store.version[0] == store.latest


def test_time_with_every_copy_down():
    a = [(0.0, 10.0), (20.0, 30.0)]
    b = [(5.0, 25.0)]
    assert m.all_down_s([a, b], 100.0) == pytest.approx(5.0 + 5.0)
    assert m.all_down_s([a], 25.0) == pytest.approx(10.0 + 5.0)


def test_one_copy_aborts_the_share_of_time_it_is_down(seed):
    p = dataclasses.replace(P, mttf_days=5.0, mttr_hours=12.0, live_nodes_stall=False)
    d = m.deployment(p, replicas=1, timeout_s=p.timeout_s, horizon_s=5 * m.YEAR, rng=seed)
    down = p.mttr_hours / (p.mttf_days * 24 + p.mttr_hours)
    assert d["aborted_per_10k"] == pytest.approx(1e4 * down, rel=0.25)


def test_three_copies_abort_only_what_touches_a_crash_before_it_is_detected(seed):
    p = dataclasses.replace(P, mttf_days=2.0, mttr_hours=1.0, live_nodes_stall=False, txn_per_s=5.0)
    d = m.deployment(p, replicas=3, timeout_s=p.timeout_s, horizon_s=2 * m.YEAR, rng=seed)
    crashes_per_s = 3 / (p.mttf_days * m.DAY + p.mttr_hours * m.HOUR)
    touch = (1 - p.read_pct / 100) + (p.read_pct / 100) / 3
    expected = 1e4 * crashes_per_s * d["detection_s"] * touch  # plus the rare times all three are down
    assert d["aborted_per_10k"] == pytest.approx(expected, rel=0.2)


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match="replicas"):
        m.Params(replicas=10)
    with pytest.raises(ValueError, match="timeout_s"):
        m.Params(timeout_s=1.0)


# --- then vs now ------------------------------------------------------------------------

def test_two_phase_now_prices_today_from_the_round_trip_and_the_one_database_commit():
    measured = {"available": True, "round_trip_s": [0.08e-3, 0.12e-3], "force_s": [1.5e-3, 2.5e-3],
                "commits": [(k, 1.1e-3 * k, 2.5e-3, 4.0e-3 + 1e-3 * i) for k in (1, 2, 3, 4) for i in (0, 1, 2)]}
    t = m.two_phase_now(measured)
    # a message is half the mean round trip (0.05 ms), a forced write the one-database commit less a round
    # trip (1.0 ms); presumed abort is prepare, force, vote, force the decision, commit, force, acknowledge:
    # 4 messages and 3 forces in a row
    assert t.loc[1, "model_two_phase_ms"] == pytest.approx(4 * 0.05 + 3 * 1.0)
    assert t.loc[3, "model_one_phase_ms"] == pytest.approx(2 * 0.05 + 1.0)
    assert t.loc[1, "model_one_phase_ms"] == pytest.approx(t.loc[1, "one_phase_ms"])  # the input
    assert t.loc[2, "two_phase_ms"] == pytest.approx(5.0) and t.loc[2, "one_phase_ms"] == pytest.approx(2.2)
    assert t.loc[2, "two_over_one"] == pytest.approx(5.0 / 2.2)
    assert t.loc[4, "commits"] == 3
    costs = m.unit_costs(measured)
    assert costs.loc["message", "now_ms"] == pytest.approx(0.05)
    assert costs.loc["log file fdatasync", "now_ms"] == pytest.approx(2.0)
    assert costs.loc["forced write", "then_ms"] == pytest.approx(P.disk_force_ms)
    gone = m.two_phase_now({"available": False, "reason": "initdb is not installed"})
    assert list(gone["status"].unique()) == ["not available: initdb is not installed"]


def test_the_programs_output_is_read_back():
    got = m.parse_two_phase("server postgres 15\nport 5432\nin_doubt 0\ncounts 8 4\nround_trip 5e-05\n"
                            "force 0.004\ncommit 2 0.001 0.002 0.003\n")
    assert got == {"available": True, "server": "postgres 15", "port": 5432, "in_doubt": 0, "counts": [8, 4],
                   "round_trip_s": [5e-05], "force_s": [0.004], "commits": [(2, 0.001, 0.002, 0.003)]}
    assert m.parse_two_phase("unavailable initdb is not installed") == {
        "available": False, "reason": "initdb is not installed"}
    assert not m.parse_two_phase("")["available"]
    hb = m.parse_heartbeats("period 0.02 2.0\nstall 0.3 0.05\nbeat 0.0 6e-05\nbeat 0.02 0.02006\n")
    assert hb == {"available": True, "period_s": 0.02, "seconds": 2.0, "stalls": [(0.3, 0.05)],
                  "heartbeats": [(0.0, 6e-05), (0.02, 0.02006)]}
    assert m.measure_heartbeats(python=None)["reason"] == "no Python interpreter given"


def test_real_heartbeats_are_suspected_as_the_detector_predicts(seed):
    measured = m.measure_heartbeats(python=sys.executable, quick=True, rng=seed)
    assert measured["available"], measured.get("reason")
    assert len(measured["stalls"]) == len(m.heartbeat_plan(quick=True, rng=seed)["stalls"])
    t = m.heartbeat_now(measured)
    # a stall longer than the timeout is always suspected, one within a period of it may be; every other
    # suspicion is a silence the busy machine added on its own: a sender or a receiver scheduled late
    over, near = t["stalls_over_timeout"], t["stalls_near_timeout"]
    assert (t["measured_false"] >= over).all()
    assert (t["measured_false"] <= over + near + t["unplanned_over_timeout"] + t["late_deliveries"]).all()
    assert ((t["model_false"] >= over) & (t["model_false"] <= over + near)).all()


@pytest.mark.quiet  # timings: run before the notebooks start beside the suite
def test_real_two_phase_commit_on_a_server_of_its_own(tmp_path):
    plan = {"databases": [1, 2], "commits": 5, "warmup": 1, "round_trips": 20}
    measured = m.measure_two_phase(python=sys.executable, plan=plan)
    if not measured["available"] and "is not installed" in measured["reason"]:
        pytest.skip(f"PostgreSQL is not installed: {measured['reason']}")
    assert measured["available"], measured["reason"]
    # every commit took effect: database j holds two rows (one committed in one phase, one in two) from
    # each round of every k >= j, and no prepared transaction is left in doubt
    rounds = plan["warmup"] + plan["commits"]
    assert measured["counts"] == [2 * rounds * sum(k >= j for k in plan["databases"]) for j in (1, 2)]
    assert measured["in_doubt"] == 0
    # the program stopped its server: nothing listens on its port any more
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", measured["port"])) != 0
    t = m.two_phase_now(measured)
    # two-phase adds a round trip, the prepare's flush and the coordinator's fsync to every commit
    assert (t["two_phase_ms"] > t["one_phase_ms"]).all()
