"""The process API: event order, values, failures, resources, stores, conditions."""
import math

import pytest

from pysim import Interrupt
from pysim.engine import AllOf, AnyOf, Simulation, Station, Store
from pysim.hw.net import Ethernet


def say(sim, name, at, log):
    yield sim.timeout(at)
    log.append((name, sim.now))


def test_same_time_events_run_in_schedule_order():
    sim, log = Simulation(), []
    for name in "abc":
        sim.process(say(sim, name, at=5.0, log=log))
    sim.run()
    assert log == [("a", 5.0), ("b", 5.0), ("c", 5.0)]


def test_timeouts_interleave_by_time():
    sim, log = Simulation(), []
    sim.process(say(sim, "late", 2.0, log))
    sim.process(say(sim, "early", 1.0, log))
    sim.run()
    assert log == [("early", 1.0), ("late", 2.0)]
    assert sim.now == 2.0


def test_timeout_value_and_process_return_value():
    sim = Simulation()

    def child(sim):
        v = yield sim.timeout(1.5, value="x")
        return v * 2

    def parent(sim, out):
        out.append((yield sim.process(child(sim))))

    out = []
    sim.process(parent(sim, out))
    sim.run()
    assert out == ["xx"] and sim.now == 1.5


def test_run_until_time_stops_the_clock_there():
    sim, log = Simulation(), []
    sim.process(say(sim, "a", 10.0, log))
    sim.run(until=4.0)
    assert sim.now == 4.0 and log == []
    sim.run()
    assert log == [("a", 10.0)]


def test_run_until_event_returns_its_value():
    sim = Simulation()
    assert sim.run(until=sim.timeout(3, "done")) == "done"
    assert sim.now == 3


def test_run_until_past_or_bad_value_is_rejected():
    sim = Simulation()
    sim.run(until=5)
    with pytest.raises(ValueError, match=r"until \(5\) must be greater than the current simulation time"):
        sim.run(until=5)
    with pytest.raises(TypeError, match="until must be None, a time or an Event"):
        sim.run(until="soon")


def test_negative_or_nan_delay_is_rejected():
    sim = Simulation()
    with pytest.raises(ValueError, match="delay"):
        sim.timeout(-1)
    with pytest.raises(ValueError, match="delay"):
        sim.timeout(math.nan)


def test_unhandled_process_exception_propagates_out_of_run():
    sim = Simulation()

    def boom(sim):
        yield sim.timeout(1)
        raise KeyError("bad")

    sim.process(boom(sim))
    with pytest.raises(KeyError, match="bad"):
        sim.run()


def test_failed_event_is_thrown_into_the_waiting_process():
    sim, seen = Simulation(), []
    ev = sim.event()

    def waiter(sim):
        try:
            yield ev
        except ValueError as e:
            seen.append((str(e), sim.now))

    def failer(sim):
        yield sim.timeout(2)
        ev.fail(ValueError("nope"))

    sim.process(waiter(sim))
    sim.process(failer(sim))
    sim.run()
    assert seen == [("nope", 2.0)]


def test_yielding_a_non_event_is_an_error():
    sim = Simulation()

    def wrong(sim):
        yield 5

    sim.process(wrong(sim))
    with pytest.raises(RuntimeError, match='Invalid yield value "5"'):
        sim.run()


def test_interrupt_reaches_the_process_with_its_cause():
    sim, log = Simulation(), []

    def sleeper(sim):
        try:
            yield sim.timeout(10)
        except Interrupt as i:
            log.append((i.cause, sim.now))
        yield sim.timeout(1)
        log.append(("after", sim.now))

    p = sim.process(sleeper(sim))

    def interrupter(sim):
        yield sim.timeout(3)
        p.interrupt("wake")

    sim.process(interrupter(sim))
    sim.run()
    assert log == [("wake", 3.0), ("after", 4.0)]


def test_event_succeed_twice_is_an_error():
    sim = Simulation()
    ev = sim.event().succeed(1)
    with pytest.raises(RuntimeError, match="already been triggered"):
        ev.succeed(2)


def test_resource_serves_fifo_and_by_priority():
    sim, log = Simulation(), []
    res = sim.priority_resource(capacity=1)

    def user(sim, name, prio, hold):
        with res.request(priority=prio) as req:
            yield req
            log.append((name, sim.now))
            yield sim.timeout(hold)

    sim.process(user(sim, "first", 5, 1))
    sim.process(user(sim, "low", 5, 1))
    sim.process(user(sim, "high", 0, 1))
    sim.run()
    assert log == [("first", 0.0), ("high", 1.0), ("low", 2.0)]


def test_resource_rejects_bad_capacity_and_priorities_it_does_not_have():
    sim = Simulation()
    with pytest.raises(ValueError, match='"capacity" must be > 0'):
        sim.resource(0)
    with pytest.raises(TypeError):
        sim.resource(1).request(priority=2)


def test_store_hands_items_over_in_order_and_blocks_when_full():
    sim, got = Simulation(), []
    store = Store(sim, capacity=1)

    def producer(sim):
        for i in range(3):
            yield store.put(i)
            got.append(("put", i, sim.now))

    def consumer(sim):
        for _ in range(3):
            yield sim.timeout(1)
            got.append(("get", (yield store.get()), sim.now))

    sim.process(producer(sim))
    sim.process(consumer(sim))
    sim.run()
    assert [g for g in got if g[0] == "get"] == [("get", 0, 1.0), ("get", 1, 2.0), ("get", 2, 3.0)]
    assert ("put", 2, 2.0) in got  # waited for room


def test_any_of_and_all_of():
    sim = Simulation()
    a, b = sim.timeout(1, "a"), sim.timeout(2, "b")
    out = []

    def waiter(sim):
        out.append((sorted((yield AnyOf(sim, [a, b])).values()), sim.now))
        out.append((sorted((yield AllOf(sim, [a, b])).values()), sim.now))

    sim.process(waiter(sim))
    sim.run()
    assert out == [(["a"], 1.0), (["a", "b"], 2.0)]


def test_station_from_processes_processor_sharing():
    sim, out = Simulation(), []
    st = Station(sim, servers=1, discipline="ps")

    def job(sim, at, demand):
        yield sim.timeout(at)
        out.append(((yield st.serve(demand)), sim.now))

    sim.process(job(sim, 0.0, 2.0))
    sim.process(job(sim, 1.0, 0.5))
    sim.run()
    # [0,1): job A alone, 1 s done. [1,2): both at half speed; B finishes at 2.0, A at 2.5
    assert out == [(1.0, 2.0), (2.5, 2.5)]
    assert st.stats()["utilization"] == pytest.approx(1.0)


def test_station_rejects_bad_arguments():
    sim = Simulation()
    with pytest.raises(ValueError, match="servers"):
        Station(sim, servers=0)
    with pytest.raises(ValueError, match="discipline"):
        Station(sim, discipline="lifo")
    with pytest.raises(ValueError, match="select is required"):
        Station(sim, discipline="custom")
    with pytest.raises(ValueError, match="service_s"):
        Station(sim).serve(-1.0)
    with pytest.raises(TypeError, match="Simulation"):
        Station(object())


def test_link_delivers_after_serialisation_and_propagation():
    sim, out = Simulation(), []
    link = sim.link(Ethernet(propagation_s=5e-6))

    def sender(sim):
        out.append((yield link.send(46)))

    sim.process(sender(sim))
    sim.run()
    # preamble 6.4 us + 64-byte frame 51.2 us + propagation 5 us
    assert out[0] == pytest.approx(62.6e-6)


def test_a_numba_discipline_orders_the_c_station():
    from pysim import policies

    sim, done = Simulation(), []
    st = Station(sim, servers=1, discipline="custom", select=policies.compiled_shortest_job_first())

    def job(sim, name, demand):
        yield st.serve(demand)
        done.append((name, sim.now))

    # "long" arrives first and starts at once; the others wait and leave shortest first
    for name, demand in (("long", 5.0), ("mid", 2.0), ("short", 1.0), ("tiny", 0.5)):
        sim.process(job(sim, name, demand))
    sim.run()
    assert done == [("long", 5.0), ("tiny", 5.5), ("short", 6.5), ("mid", 8.5)]
