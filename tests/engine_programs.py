"""Random process programs, run under SimPy and under pysim.engine, for differential tests.

A program is data: a few shared events, resources, stores and containers,
and processes whose steps wait on timeouts, events and nested conditions,
trigger and fail events, request, release and renege on resources, put and
get, interrupt each other, wait for each other, raise and catch. The
interpreter logs every observable outcome with the time it happened, so two
implementations agree only if they process the same events in the same
order with the same values and exceptions.
"""
from __future__ import annotations

from hypothesis import strategies as st

DELAYS = st.integers(0, 4)  # small integer delays, so that many events fall due together
VALUES = st.one_of(st.none(), st.integers(0, 9), st.sampled_from(["a", "b"]))


def conditions(depth=2):
    leaf = st.one_of(st.tuples(st.just("timeout"), DELAYS, VALUES), st.tuples(st.just("event"), st.integers(0, 2)))
    if depth == 0:
        return leaf
    return st.one_of(leaf, st.tuples(st.sampled_from(["any", "all", "and", "or"]),
                                     st.lists(conditions(depth - 1), min_size=0, max_size=3)))


def steps(depth=1):
    simple = st.one_of(
        st.tuples(st.just("timeout"), DELAYS, VALUES),
        st.tuples(st.just("wait"), st.integers(0, 2)),
        st.tuples(st.just("succeed"), st.integers(0, 2), VALUES),
        st.tuples(st.just("fail"), st.integers(0, 2)),
        st.tuples(st.just("cond"), conditions()),
        st.tuples(st.just("hold"), st.integers(0, 2), DELAYS, st.integers(-1, 2), st.booleans()),
        st.tuples(st.just("renege"), st.integers(0, 2), DELAYS, DELAYS),
        st.tuples(st.just("release_early"), st.integers(0, 2), DELAYS),
        st.tuples(st.just("put"), st.integers(0, 1), VALUES),
        st.tuples(st.just("get"), st.integers(0, 1)),
        st.tuples(st.just("filter_get"), st.booleans()),
        st.tuples(st.just("fill"), st.integers(1, 3)),
        st.tuples(st.just("draw"), st.integers(1, 3)),
        st.tuples(st.just("interrupt"), st.integers(0, 4), VALUES),
        st.tuples(st.just("join"), st.integers(0, 4)),
        st.tuples(st.just("raise"), st.sampled_from(["ValueError", "KeyError"])),
    )
    if depth == 0:
        return simple
    return st.one_of(simple, st.tuples(st.just("guard"), st.lists(steps(depth - 1), max_size=3)),
                     st.tuples(st.just("spawn"), st.lists(steps(depth - 1), max_size=3)))


programs = st.fixed_dictionaries({
    # (start delay, steps, whether the body catches Interrupt, ValueError and KeyError)
    "processes": st.lists(st.tuples(DELAYS, st.lists(steps(), max_size=6), st.booleans()), min_size=1, max_size=5),
    "capacities": st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2)),
    "store_capacity": st.integers(1, 3),
    "container": st.tuples(st.integers(3, 6), st.integers(0, 3)),
    "until": st.integers(1, 12),
})


class Runner:
    """Interprets a program on one implementation (a module shaped like simpy)."""

    def __init__(self, mod, program):
        self.mod, self.program = mod, program
        self.env = env = mod.Environment()
        self.log = []
        self.events = [env.event() for _ in range(3)]
        c = program["capacities"]
        self.resources = [mod.Resource(env, c[0]), mod.PriorityResource(env, c[1]),
                          mod.PreemptiveResource(env, c[2])]
        self.stores = [mod.Store(env, program["store_capacity"]), mod.PriorityStore(env)]
        self.filter_store = mod.FilterStore(env)
        cap, init = program["container"]
        self.container = mod.Container(env, cap, init)
        self.procs = []
        self.names = {}

    def note(self, pid, *what):
        self.log.append((float(self.env.now), pid) + what)

    def outcome(self, value):
        """Something both implementations print alike (events and processes by their labels)."""
        mod = self.mod
        if isinstance(value, BaseException):
            return ("exception", type(value).__name__, tuple(self.outcome(a) for a in value.args))
        if isinstance(value, mod.Process):
            return ("process", self.names.get(id(value)))
        if type(value).__name__ == "ConditionValue":
            return ("condition", tuple(self.outcome(v) for v in value.values()))
        if type(value).__name__ == "Preempted":
            return ("preempted", self.outcome(value.by), value.usage_since)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    def condition(self, spec):
        env, kind = self.env, spec[0]
        if kind == "timeout":
            return env.timeout(spec[1], spec[2])
        if kind == "event":
            return self.events[spec[1]]
        subs = [self.condition(s) for s in spec[1]]
        if kind == "any":
            return env.any_of(subs)
        if kind == "all":
            return env.all_of(subs)
        if not subs:
            return env.timeout(0)
        out = subs[0]
        for s in subs[1:]:
            out = (out & s) if kind == "and" else (out | s)
        return out

    def run_steps(self, pid, steps):
        env, mod = self.env, self.mod
        for step in steps:
            kind = step[0]
            if kind == "timeout":
                v = yield env.timeout(step[1], step[2])
                self.note(pid, "timeout", self.outcome(v))
            elif kind == "wait":
                v = yield self.events[step[1]]
                self.note(pid, "wait", step[1], self.outcome(v))
            elif kind in ("succeed", "fail"):
                ev = self.events[step[1]]
                if ev.triggered:
                    self.note(pid, kind, step[1], "already triggered")
                elif kind == "succeed":
                    ev.succeed(step[2])
                    self.note(pid, "succeed", step[1])
                else:
                    ev.fail(ValueError(f"event {step[1]} failed"))
                    self.note(pid, "fail", step[1])
            elif kind == "cond":
                v = yield self.condition(step[1])
                self.note(pid, "cond", self.outcome(v))
            elif kind == "hold":
                res, hold, prio, preempt = self.resources[step[1]], step[2], step[3], step[4]
                req = res.request() if step[1] == 0 else res.request(priority=prio, preempt=preempt)
                with req:
                    yield req
                    self.note(pid, "granted", step[1], res.count, len(res.queue))
                    yield env.timeout(hold)
                self.note(pid, "released", step[1])
            elif kind == "renege":
                res = self.resources[step[1]]
                req = res.request() if step[1] == 0 else res.request(priority=0)
                got = yield req | env.timeout(step[2])
                if req in got:
                    self.note(pid, "got", step[1])
                    yield env.timeout(step[3])
                    yield res.release(req)
                else:
                    req.cancel()
                    self.note(pid, "reneged", step[1], len(res.queue))
            elif kind == "release_early":
                res = self.resources[step[1]]
                req = res.request()
                yield req
                yield env.timeout(step[2])
                rel = res.release(req)
                self.note(pid, "release event", rel.triggered)
                yield rel
                self.note(pid, "released early", step[1], res.count)
            elif kind == "put":
                yield self.stores[step[1]].put(step[2] if step[1] == 0 else (step[2] is None, str(step[2])))
                self.note(pid, "put", step[1], len(self.stores[step[1]].items))
            elif kind == "get":
                v = yield self.stores[step[1]].get()
                self.note(pid, "get", step[1], self.outcome(v))
            elif kind == "filter_get":
                want_none = step[1]
                self.filter_store.put(None if want_none else 1)
                v = yield self.filter_store.get(lambda item, w=want_none: (item is None) == w)
                self.note(pid, "filter_get", v)
            elif kind == "fill":
                yield self.container.put(step[1])
                self.note(pid, "fill", self.container.level)
            elif kind == "draw":
                yield self.container.get(step[1])
                self.note(pid, "draw", self.container.level)
            elif kind == "interrupt":
                if step[1] >= len(self.procs):
                    continue
                target = self.procs[step[1]]
                try:
                    target.interrupt(step[2])
                    self.note(pid, "interrupt", step[1])
                except RuntimeError:
                    self.note(pid, "interrupt refused", step[1], target.is_alive)
            elif kind == "join":
                if step[1] >= len(self.procs) or self.procs[step[1]] is env.active_process:
                    continue
                v = yield self.procs[step[1]]
                self.note(pid, "join", step[1], self.outcome(v))
            elif kind == "raise":
                raise {"ValueError": ValueError, "KeyError": KeyError}[step[1]](f"raised by {pid}")
            elif kind == "spawn":
                child = f"{pid}.{len(self.procs)}"
                p = env.process(self.child(child, step[1]))
                self.procs.append(p)
                self.names[id(p)] = child
                self.note(pid, "spawned", child)
            elif kind == "guard":
                try:
                    yield from self.run_steps(pid, step[1])
                except (mod.Interrupt, ValueError, KeyError) as e:
                    self.note(pid, "caught", self.outcome(e), self.outcome(getattr(e, "cause", None)))

    def process(self, pid, start, steps, guarded):
        yield self.env.timeout(start)
        self.note(pid, "start")
        if guarded:
            yield from self.run_steps(pid, [("guard", steps)])
        else:
            yield from self.run_steps(pid, steps)
        self.note(pid, "end")
        return pid

    def child(self, pid, steps):
        self.note(pid, "start")
        yield from self.run_steps(pid, [("guard", steps)])
        self.note(pid, "end")
        return pid

    def run(self):
        for pid, (start, steps, guarded) in enumerate(self.program["processes"]):
            p = self.env.process(self.process(pid, start, steps, guarded))
            self.procs.append(p)
            self.names[id(p)] = pid
        for until in (self.program["until"], None):
            try:
                self.env.run(until=until)
                self.note("run", "returned")
            except Exception as e:  # an undefused failure ends the run, in both or in neither
                self.note("run", "raised", self.outcome(e), self.outcome(e.__cause__))
                break
        return self.log
