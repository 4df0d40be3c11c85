"""CPU scheduling: shares under round robin, weights, tickets and reservations; decay usage
favouring the interactive; strict priority starving and the yield fix; MTR-LS's delay bound for a
task within its reservation; affinity; a policy compiled with Numba; I/O on a second server."""
import numpy as np
import pytest

from pysim.engine import Simulation
from pysim.sw.sched import (DecayUsage, MtrLs, NumbaPolicy, RoundRobin, Scheduler, StrictPriority,
                            StrideScheduling, Task, WeightedRoundRobin)

HOG = [("cpu", 1.0)]


def _shares(policy, tasks, until=10.0, **kw):
    sim = Simulation()
    s = Scheduler(sim, policy, **kw)
    for t in tasks:
        s.add(t)
    sim.run(until=until)
    st = s.stats()
    return (st.cpu_s / st.cpu_s.sum()).to_dict(), st


def test_round_robin_shares_evenly_and_weights_tickets_and_reservations_share_in_proportion():
    even, _ = _shares(RoundRobin(0.01), [Task("a", HOG), Task("b", HOG)])
    assert even["a"] == pytest.approx(0.5, abs=0.01)
    wrr, _ = _shares(WeightedRoundRobin(0.01), [Task("a", HOG, weight=1), Task("b", HOG, weight=3)])
    assert wrr["b"] == pytest.approx(0.75, abs=0.01)
    stride, _ = _shares(StrideScheduling(0.01), [Task("a", HOG, tickets=100), Task("b", HOG, tickets=300)])
    assert stride["b"] == pytest.approx(0.75, abs=0.01)
    mtr, _ = _shares(MtrLs({"x": 0.2, "y": 0.8}, cycle_s=0.5),
                     [Task("a", HOG, domain="x"), Task("b", HOG, domain="y")], tick_s=0.005)
    assert mtr["b"] == pytest.approx(0.8, abs=0.02)


def test_decay_usage_lets_an_interactive_task_in_ahead_of_hogs():
    interactive = Task("edit", [("cpu", 0.001), ("sleep", 0.05)])
    _, st = _shares(DecayUsage(quantum_s=0.1, tick_s=0.01), [interactive, Task("h1", HOG), Task("h2", HOG)],
                    until=20.0, tick_s=0.01)
    _, rr = _shares(RoundRobin(0.1), [Task("edit", [("cpu", 0.001), ("sleep", 0.05)]), Task("h1", HOG),
                                       Task("h2", HOG)], until=20.0, tick_s=0.01)
    assert st.loc["edit", "mean_wait_s"] < 0.011 < rr.loc["edit", "mean_wait_s"]


def test_strict_priority_starves_a_waiting_equal_until_the_runner_yields_at_ticks():
    def waited(yields):
        sim = Simulation()
        s = Scheduler(sim, StrictPriority(), tick_s=0.01)
        s.add(Task("worker", [("cpu", 5.0)], loop=False, yields=yields))
        s.add(Task("checkpoint", [("cpu", 0.001)], loop=False), start_s=0.5)
        sim.run(until=10.0)
        return s.stats().loc["checkpoint", "max_wait_s"]
    assert waited(False) == pytest.approx(4.5)
    assert waited(True) <= 0.01


def test_mtr_ls_keeps_a_sleeper_within_its_reservation_ahead_of_hogs_where_wrr_does_not():
    def sleeper_wait(policy):
        sim = Simulation()
        s = Scheduler(sim, policy, tick_s=0.005)
        s.add(Task("sleeper", [("cpu", 0.002), ("sleep", 0.05)], domain="s"))
        for k in range(6):
            s.add(Task(f"onoff{k}", [("cpu", 0.011), ("sleep", 0.005)], domain="h"))
        sim.run(until=20.0)
        return s.stats().loc["sleeper", "mean_wait_s"]
    mtr = sleeper_wait(MtrLs({"s": 0.1, "h": 0.9}, cycle_s=0.5))
    wrr = sleeper_wait(WeightedRoundRobin(0.02))
    assert mtr < 0.006 and wrr > 3 * mtr


def test_mtr_ls_moves_consumed_service_to_the_rear():
    policy = MtrLs({"d1": 0.2, "d2": 0.1, "d3": 0.3}, cycle_s=50.0)  # quanta 10, 5, 15
    policy.charge(Task("t", HOG, domain="d1"), 3.0, 0.0)
    assert policy.snapshot() == [("d1", 7.0), ("d2", 5.0), ("d3", 15.0), ("d1", 3.0)]
    policy.charge(Task("t", HOG, domain="d2"), 5.0, 0.0)
    assert policy.snapshot() == [("d1", 7.0), ("d3", 15.0), ("d1", 3.0), ("d2", 5.0)]


def test_affinity_pins_and_a_free_task_uses_the_other_cpu():
    shares, st = _shares(RoundRobin(0.01), [Task("p1", HOG, affinity=frozenset({0})),
                                            Task("p2", HOG, affinity=frozenset({0})), Task("free", HOG)],
                         cpus=2)
    assert st.loc["free", "cpu_s"] == pytest.approx(10.0, rel=0.02)
    assert st.loc["p1", "cpu_s"] == pytest.approx(5.0, rel=0.02)


def test_a_policy_compiled_with_numba_chooses():
    numba = pytest.importorskip("numba")

    @numba.njit
    def least_served(state, now):
        return np.argmin(state[:, 3])  # column 3: cpu_s

    shares, _ = _shares(NumbaPolicy(least_served, 0.01), [Task("a", HOG), Task("b", HOG), Task("c", HOG)])
    assert max(shares.values()) - min(shares.values()) < 0.01


def test_io_phases_queue_on_a_second_server_and_switches_cost_cpu():
    sim = Simulation()
    disk = Scheduler(sim, RoundRobin(1.0), name="disk")
    cpu = Scheduler(sim, RoundRobin(0.01), io=disk, switch_s=0.001)
    for k in range(2):
        cpu.add(Task(f"io{k}", [("cpu", 0.002), ("io", 0.01)]))
    sim.run(until=10.0)
    st = cpu.stats()
    # the disk is the bottleneck: two tasks share 10 ms per I/O, so each completes ~50 loops a second
    assert st.loops.sum() == pytest.approx(10.0 / 0.01, rel=0.05)
    assert cpu.switches > 0


def test_bad_tasks_and_policies_are_refused():
    with pytest.raises(ValueError, match="phases"):
        Task("x", [("run", 1.0)])
    with pytest.raises(ValueError, match="reservations"):
        MtrLs({"a": 0.7, "b": 0.6}, cycle_s=1.0)


def test_a_woken_task_of_higher_priority_takes_the_cpu_at_the_next_tick():
    sim = Simulation()
    s = Scheduler(sim, StrictPriority(), tick_s=0.01)
    s.add(Task("batch", [("cpu", 5.0)], loop=False))
    urgent = s.add(Task("urgent", [("cpu", 0.001), ("sleep", 0.2)], priority=1), start_s=0.503)
    sim.run(until=3.0)
    assert urgent.waits[0] == pytest.approx(0.007, abs=1e-9)  # woken at 0.503, runs at the 0.51 tick
    assert max(urgent.waits) <= 0.01 + 1e-9 and urgent.loops == 11  # 2.497 s / 0.21 s a loop


def test_mtr_ls_lets_a_domain_ahead_in_the_list_preempt_at_the_next_tick():
    def first_wait(preempt):
        sim = Simulation()
        s = Scheduler(sim, MtrLs({"a": 0.5, "b": 0.5}, cycle_s=1.0, preempt=preempt), tick_s=0.005)
        s.add(Task("hog", HOG, domain="b"))
        waker = s.add(Task("waker", [("cpu", 0.001), ("sleep", 10.0)], domain="a"), start_s=0.0123)
        sim.run(until=1.0)
        return waker.waits[0]
    assert first_wait(True) == pytest.approx(0.015 - 0.0123, abs=1e-9)  # a's token is first: the next tick
    assert first_wait(False) == pytest.approx(0.5 - 0.0123, abs=1e-9)    # b runs out its 0.5 s token


def test_a_task_can_decide_each_next_phase_as_it_runs():
    sim = Simulation()
    s = Scheduler(sim, RoundRobin(0.01))
    seen = []

    def next_phase(now):  # alternate 0.1 s of CPU and a sleep until the next whole second, three times
        seen.append(round(now, 9))
        if len(seen) > 6:
            return None
        return ("sleep", 1.0 - now % 1.0) if len(seen) % 2 else ("cpu", 0.1)

    t = s.add(Task("decider", [("cpu", 0.1)], decide=next_phase))
    sim.run(until=10.0)
    assert seen == [0.1, 1.0, 1.1, 2.0, 2.1, 3.0, 3.1] and t.done and t.cpu_s == pytest.approx(0.4)


def test_mtrls_token_list_stays_merged_and_keeps_each_reservation():
    """Thousands of charges of every size, fine ticks included: no empty token, no two adjacent tokens of
    one domain, and each domain's tokens still sum to its share of the cycle."""
    import random
    from types import SimpleNamespace

    shares = {"a": 0.1, "b": 0.25, "c": 0.3, "d": 0.05}
    policy = MtrLs(shares, cycle_s=0.5)
    rnd = random.Random(7)
    lengths = []
    for _ in range(5000):
        task = SimpleNamespace(domain=rnd.choice(list(shares)))
        policy.charge(task, rnd.choice([0.0002, 0.001, 0.005, rnd.random() * 0.2]), 0.0)
        tokens = policy.snapshot()
        lengths.append(len(tokens))
        assert all(left > 1e-15 for _, left in tokens)
        assert all(x[0] != y[0] for x, y in zip(tokens, tokens[1:]))
    for d, share in shares.items():
        assert sum(left for dom, left in policy.snapshot() if dom == d) == pytest.approx(share * 0.5, abs=1e-9)
    assert max(lengths) > 10  # the list did fragment, so merging was exercised
