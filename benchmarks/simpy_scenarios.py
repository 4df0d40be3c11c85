"""Models in the style of SimPy's documented examples, written once for any SimPy-shaped module.

Each scenario takes ``mod`` (``simpy`` or ``pysim.engine``), a seed and a
size, runs, and returns its trace: a list of (time, who, what, ...) tuples.
The tests compare the traces of the two implementations; ``make bench``
times the bank. Draws come from ``random.Random(seed)`` in event order, so
the same order of events gives the same draws.
"""
from __future__ import annotations

import random


def bank_reneging(mod, seed=0, customers=10, trace=True):
    """A bank with one counter; customers leave when their patience runs out (SimPy's bank example).

    With trace=False only the outcomes are kept (served, reneged, total wait), as a benchmark wants.
    """
    rnd = random.Random(seed)
    env = mod.Environment()
    counter = mod.Resource(env, capacity=1)
    log = []
    outcomes = {"served": 0, "reneged": 0, "wait_s": 0.0}

    def customer(name, time_in_bank):
        arrive = env.now
        if trace:
            log.append((env.now, name, "arrives"))
        with counter.request() as req:
            patience = rnd.uniform(1, 3)
            results = yield req | env.timeout(patience)
            wait = env.now - arrive
            outcomes["wait_s"] += wait
            if req in results:
                outcomes["served"] += 1
                if trace:
                    log.append((env.now, name, "served", wait))
                yield env.timeout(rnd.expovariate(1.0 / time_in_bank))
                if trace:
                    log.append((env.now, name, "leaves"))
            else:
                outcomes["reneged"] += 1
                if trace:
                    log.append((env.now, name, "reneged", wait))

    def source():
        for i in range(customers):
            env.process(customer(i, 12.0))
            yield env.timeout(rnd.expovariate(1.0 / 10.0))

    env.process(source())
    env.run()
    return log if trace else outcomes


def carwash(mod, seed=0, cars=40):
    """A carwash with two machines; cars arrive every 5 +- 2 minutes (SimPy's carwash example)."""
    rnd = random.Random(seed)
    env = mod.Environment()
    machines = mod.Resource(env, capacity=2)
    trace = []

    def wash(car):
        yield env.timeout(5)
        trace.append((env.now, car, "washed", rnd.randint(50, 99)))

    def car(name):
        trace.append((env.now, name, "arrives"))
        with machines.request() as request:
            yield request
            trace.append((env.now, name, "enters"))
            yield env.process(wash(name))
            trace.append((env.now, name, "leaves"))

    def setup():
        for i in range(4):
            env.process(car(f"Car {i}"))
        i = 4
        while i < cars:
            yield env.timeout(rnd.randint(5 - 2, 5 + 2))
            env.process(car(f"Car {i}"))
            i += 1

    env.process(setup())
    env.run(until=cars * 6)
    return trace


def machine_shop(mod, seed=0, weeks=2):
    """Machines that break down and preempt the repairman's other work (SimPy's machine shop example)."""
    rnd = random.Random(seed)
    env = mod.Environment()
    repairman = mod.PreemptiveResource(env, capacity=1)
    trace = []

    class Machine:
        def __init__(self, name):
            self.name, self.parts, self.broken = name, 0, False
            self.process = env.process(self.working())
            env.process(self.break_machine())

        def working(self):
            while True:
                done_in = max(1.0, rnd.normalvariate(10.0, 2.0))
                while done_in:
                    start = env.now
                    try:
                        yield env.timeout(done_in)
                        done_in = 0
                    except mod.Interrupt:
                        self.broken = True
                        done_in -= env.now - start
                        trace.append((env.now, self.name, "breaks", round(done_in, 9)))
                        with repairman.request(priority=1) as req:
                            yield req
                            yield env.timeout(30.0)
                        self.broken = False
                        trace.append((env.now, self.name, "repaired"))
                self.parts += 1

        def break_machine(self):
            while True:
                yield env.timeout(rnd.expovariate(1 / 300.0))
                if not self.broken:
                    self.process.interrupt()

    def other_jobs():
        while True:
            done_in = 30.0
            while done_in:
                with repairman.request(priority=2) as req:
                    yield req
                    start = env.now
                    try:
                        yield env.timeout(done_in)
                        done_in = 0
                    except mod.Interrupt as i:
                        done_in -= env.now - start
                        trace.append((env.now, "repairman", "preempted", i.cause.usage_since))

    machines = [Machine(f"Machine {i}") for i in range(10)]
    env.process(other_jobs())
    env.run(until=weeks * 7 * 24 * 60)
    return trace + [(env.now, m.name, "parts", m.parts) for m in machines]


def gas_station(mod, seed=0, minutes=2000):
    """Cars refuel from a station's tank; a control process calls a tank truck when it runs low
    (SimPy's gas station example)."""
    rnd = random.Random(seed)
    env = mod.Environment()
    pumps = mod.Resource(env, 2)
    tank = mod.Container(env, 200, init=200)
    trace = []

    def tank_truck():
        yield env.timeout(10)
        trace.append((env.now, "truck", "arrives", tank.level))
        yield tank.put(tank.capacity - tank.level)

    def control():
        while True:
            if tank.level / tank.capacity * 100 < 25:
                trace.append((env.now, "control", "calls the truck", tank.level))
                yield env.process(tank_truck())
            yield env.timeout(10)

    def car(name):
        fuel = rnd.randint(5, 25)
        start = env.now
        with pumps.request() as req:
            yield req
            yield tank.get(40 - fuel)
            yield env.timeout((40 - fuel) / 2)
            trace.append((env.now, name, "refuelled", env.now - start))

    def generator():
        i = 0
        while True:
            yield env.timeout(rnd.randint(30, 300) / 10)
            env.process(car(f"Car {i}"))
            i += 1

    env.process(control())
    env.process(generator())
    env.run(until=minutes)
    return trace


def process_communication(mod, seed=0, messages=30):
    """A broadcast pipe from stores: every consumer gets every message after a latency (SimPy's example)."""
    rnd = random.Random(seed)
    env = mod.Environment()
    trace = []

    class BroadcastPipe:
        def __init__(self, capacity=float("inf")):
            self.pipes = []
            self.capacity = capacity

        def put(self, value):
            return env.all_of([store.put(value) for store in self.pipes])

        def get_output_conn(self):
            pipe = mod.Store(env, capacity=self.capacity)
            self.pipes.append(pipe)
            return pipe

    def generator(name, out_pipe):
        for _ in range(messages):
            yield env.timeout(rnd.randint(6, 10))
            yield out_pipe.put((env.now, f"{name} says hello at {env.now:g}"))

    def consumer(name, in_pipe):
        while True:
            sent, msg = yield in_pipe.get()
            trace.append((env.now, name, "received", sent, msg))
            yield env.timeout(rnd.randint(4, 8))

    pipe = BroadcastPipe(capacity=2)
    env.process(generator("Generator A", pipe))
    for name in ("Consumer A", "Consumer B"):
        env.process(consumer(name, pipe.get_output_conn()))
    env.run(until=messages * 12)
    return trace


SCENARIOS = {"bank_reneging": bank_reneging, "carwash": carwash, "machine_shop": machine_shop,
             "gas_station": gas_station, "process_communication": process_communication}
