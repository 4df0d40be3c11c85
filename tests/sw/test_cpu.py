"""CpuAccount: busy and idle time by category, only after the warm-up, shares of the window."""
import pytest

from pysim.engine import Simulation
from pysim.sw import CpuAccount


def test_shares_are_booked_after_the_warm_up_only():
    sim = Simulation()
    cpu = CpuAccount(sim, warmup_s=2.0)

    def loop():
        while True:
            yield cpu.busy("work", 0.2)            # starts at 0, 1, 2, ...
            yield from cpu.idle_until(sim.timeout(0.8))

    sim.process(loop())
    sim.run(until=10.5)
    # work booked at 2..10 (9 slices); idle from 2.2 .. 10.0 (8 whole waits); the warm-up's are not
    assert cpu.seconds["work"] == pytest.approx(9 * 0.2)
    assert cpu.seconds["idle"] == pytest.approx(8 * 0.8)
    shares = cpu.shares_pct(until=10.0)  # the slice that starts at 10 lies outside [2, 10]
    assert shares["work"] == pytest.approx(100 * 1.6 / 8.0)


def test_an_idle_wait_that_straddles_the_warm_up_books_only_its_measured_part():
    sim = Simulation()
    cpu = CpuAccount(sim, warmup_s=1.0)

    def waiter():
        yield from cpu.idle_until(sim.timeout(3.0))

    sim.process(waiter())
    sim.run()
    assert cpu.seconds == {"idle": pytest.approx(2.0)}


def test_hold_serialises_processes_on_the_cpu_resource():
    sim = Simulation()
    cpu = CpuAccount(sim, resource=sim.resource(1))
    done = []

    def job(name):
        yield from cpu.hold(name, 1.0)
        done.append((name, sim.now))

    for name in "abc":
        sim.process(job(name))
    sim.run()
    assert done == [("a", 1.0), ("b", 2.0), ("c", 3.0)]
    assert cpu.seconds == {"a": 1.0, "b": 1.0, "c": 1.0}


def test_counts_and_errors():
    sim = Simulation()
    cpu = CpuAccount(sim, warmup_s=1.0)
    cpu.count("early")
    with pytest.raises(ValueError, match="has not passed its warm-up"):
        cpu.shares_pct()
    with pytest.raises(ValueError, match="warmup_s must be >= 0"):
        CpuAccount(sim, warmup_s=-1)
    with pytest.raises(ValueError, match="needs the CpuAccount to be given the CPU"):
        next(cpu.hold("x", 1.0))
    assert cpu.counts == {}


def test_a_wait_still_open_when_the_run_stops_is_idle_up_to_the_end_of_the_window():
    sim = Simulation()
    cpu = CpuAccount(sim, warmup_s=1.0)

    def work():
        yield cpu.busy("user", 2.0)
        yield from cpu.idle_until(sim.event())  # never fires

    sim.process(work())
    sim.run(until=5.0)
    shares = cpu.shares_pct()
    assert shares["user"] == pytest.approx(25.0)   # the first second of the work is warm-up
    assert shares["idle"] == pytest.approx(75.0)   # 2 to 5, though the wait never ended


def test_work_still_running_when_the_window_closes_counts_up_to_its_end():
    sim = Simulation()
    cpu = CpuAccount(sim)

    def work():
        yield sim.timeout(1.0)
        yield cpu.busy("system", 10.0)

    sim.process(work())
    sim.run(until=3.0)
    assert cpu.shares_pct()["system"] == pytest.approx(100 * 2.0 / 3.0)
