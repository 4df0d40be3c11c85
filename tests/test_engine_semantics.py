"""SimPy's semantics, rule by rule: each test runs the same model under SimPy and pysim.engine
and checks both the shared trace and the rule itself, so a test fails if pysim drifts from SimPy
or if both drift from the rule."""
import inspect
import re
import sys

import pytest
import simpy

import pysim.engine as pe
from pysim import _native

BOTH = pytest.mark.parametrize("mod", [simpy, pe], ids=["simpy", "pysim"])


def trace_of(model):
    """Run model(mod, env, log) under both implementations; the logs must match."""
    logs = []
    for mod in (simpy, pe):
        env, log = mod.Environment(), []
        model(mod, env, log)
        logs.append([tuple(float(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in e)
                     for e in log])
    assert logs[1] == logs[0]
    return logs[1]


# --- the two interrupt bugs ------------------------------------------------------------

def test_a_process_interrupted_before_it_starts_is_resumed_once():
    def model(mod, env, log):
        def victim():
            try:
                yield env.timeout(5)
            except mod.Interrupt as i:
                log.append(("interrupted", env.now, i.cause))
            v = yield env.timeout(20, value="late")
            log.append(("woke", env.now, v))

        p = env.process(victim())
        p.interrupt("early")
        env.run()

    # the stale timeout(5) must not resume it: it wakes at 20 with its own value
    assert trace_of(model) == [("interrupted", 0.0, "early"), ("woke", 20.0, "late")]


def test_two_interrupts_in_one_instant_both_reach_the_process():
    def model(mod, env, log):
        def victim():
            for _ in range(3):
                try:
                    yield env.timeout(10)
                    log.append(("slept", env.now))
                except mod.Interrupt as i:
                    log.append(("interrupted", env.now, i.cause))

        def interrupter(p):
            yield env.timeout(1)
            p.interrupt("one")
            p.interrupt("two")

        p = env.process(victim())
        env.process(interrupter(p))
        env.run()

    assert trace_of(model) == [("interrupted", 1.0, "one"), ("interrupted", 1.0, "two"), ("slept", 11.0)]


# --- event order -----------------------------------------------------------------------

def test_a_new_process_starts_before_the_other_events_due_now():
    def model(mod, env, log):
        def child():
            log.append(("child", env.now))
            yield env.timeout(0)

        def parent():
            env.timeout(0).callbacks.append(lambda e: log.append(("timeout", env.now)))
            env.process(child())
            yield env.timeout(1)

        env.process(parent())
        env.run()

    assert trace_of(model) == [("child", 0.0), ("timeout", 0.0)]


def test_release_hands_the_resource_over_one_event_later():
    def model(mod, env, log):
        res = mod.Resource(env, 1)

        def holder():
            req = res.request()
            yield req
            yield env.timeout(1)
            res.release(req)
            env.timeout(0).callbacks.append(lambda e: log.append(("timeout made at release", env.now)))
            yield env.timeout(0)

        def waiter():
            yield env.timeout(0.5)
            with res.request() as req:
                yield req
                log.append(("granted", env.now))

        env.process(holder())
        env.process(waiter())
        env.run()

    assert trace_of(model)[:2] == [("timeout made at release", 1.0), ("granted", 1.0)]


def test_store_put_hands_over_one_event_later():
    def model(mod, env, log):
        store = mod.Store(env)

        def getter():
            item = yield store.get()
            log.append(("got", item, env.now))

        def putter():
            yield env.timeout(1)
            store.put("x")
            env.timeout(0).callbacks.append(lambda e: log.append(("timeout", env.now)))

        env.process(getter())
        env.process(putter())
        env.run()

    assert trace_of(model) == [("timeout", 1.0), ("got", "x", 1.0)]


def test_run_until_t_stops_before_the_events_due_at_t():
    def model(mod, env, log):
        def p():
            yield env.timeout(5)
            log.append(("ran", env.now))

        env.process(p())
        env.run(until=5)
        log.append(("stopped", env.now))
        env.run()

    assert trace_of(model) == [("stopped", 5.0), ("ran", 5.0)]


# --- conditions ----------------------------------------------------------------------------

def test_nested_conditions_flatten_their_values_and_todict():
    def model(mod, env, log):
        a, b, c = env.timeout(1, "a"), env.timeout(2, "b"), env.timeout(3, "c")

        def p():
            v = yield (a | b) & c
            log.append(("values", list(v.values()), list(v.todict().values()), a in v, v[c]))

        env.process(p())
        env.run()

    assert trace_of(model) == [("values", ["a", "b", "c"], ["a", "b", "c"], True, "c")]


def test_a_finished_condition_leaves_the_events_that_have_not_fired():
    for mod in (simpy, pe):
        env = mod.Environment()
        late = env.timeout(5)
        cond = env.any_of([env.timeout(1), late])
        env.run(until=2)
        assert cond.processed and late.callbacks == [], mod.__name__


def test_condition_values_are_recycled_only_when_nobody_holds_their_events():
    """Every processed condition makes a value; a dropped one is kept for the next condition, but never
    while its events list is still held, and a collection meanwhile changes nothing."""
    import gc

    env = pe.Environment()
    kept = []

    def p():
        first = env.timeout(1, "first")
        v = yield first | env.timeout(5)
        kept.append((v.events, first))  # the list outlives its value
        del v
        for i in range(50):  # later conditions, whose values come back one after another
            t = env.timeout(1, i)
            w = yield t | env.timeout(5)
            assert w.events == [t] and w[t] == i and list(w.values()) == [i]
            if i == 25:
                gc.collect()

    env.process(p())
    env.run()
    events, first = kept[0]
    assert events == [first] and events[0].value == "first"


def test_environments_resources_and_events_take_attributes_as_simpys_do():
    env = pe.Environment()
    res, ev = pe.Resource(env), env.event()
    env.stats, res.label, ev.tag = {}, "counter", 7
    assert vars(env) == {"stats": {}} and vars(res) == {"label": "counter"} and vars(ev) == {"tag": 7}


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="CPython 3.11's specialising interpreter")
def test_the_interpreter_specialises_a_models_calls_on_the_environment_and_a_resource():
    """`env.timeout(...)` and `res.request()` in a loop become LOAD_METHOD_WITH_DICT; with no instance dict
    made yet CPython 3.11 cannot specialise them, and every call pays the generic lookup."""
    import dis

    def loop(env, res):
        for _ in range(200):
            env.timeout(1)
            res.request()

    env = pe.Environment()
    loop(env, pe.Resource(env))
    loads = {i.argval: i.opname for i in dis.get_instructions(loop, adaptive=True) if "LOAD_METHOD" in i.opname}
    assert loads == {"timeout": "LOAD_METHOD_WITH_DICT", "request": "LOAD_METHOD_WITH_DICT"}


def test_a_requests_enter_and_exit_work_as_methods_bound_or_not():
    env = pe.Environment()
    res = pe.Resource(env, capacity=1)
    first, waiting = res.request(), res.request()
    assert first.__enter__() is first and pe.Request.__enter__(first) is first
    assert res.count == 1 and res.queue == [waiting]
    waiting.__exit__(None, None, None)  # not granted: withdrawn
    assert res.queue == [] and res.count == 1
    pe.Request.__exit__(first, None, None, None)  # granted: released
    assert res.count == 0
    exit_of = res.request().__exit__
    assert exit_of.__self__.resource is res and "Request.__exit__" in repr(exit_of)
    with pytest.raises(TypeError):
        pe.Request.__exit__(42, None, None, None)
    with pytest.raises(TypeError):
        first.__enter__(1)
    with pytest.raises(TypeError):
        first.__exit__(exc_type=None)
    assert list(inspect.signature(pe.Request.__exit__).parameters) == ["self", "exc_type", "exc", "tb"]


def test_and_or_operators_build_conditions():
    env = pe.Environment()
    a, b = env.timeout(1), env.timeout(2)
    assert isinstance(a & b, pe.Condition) and isinstance(a | b, pe.Condition)
    with pytest.raises(TypeError):
        a & 3


# --- silent traps, now as in SimPy or refused ----------------------------------------------

def test_event_callbacks_is_the_real_list():
    def model(mod, env, log):
        ev = env.timeout(2, "v")
        ev.callbacks.append(lambda e: log.append(("callback", env.now, e.value)))
        env.run()

    assert trace_of(model) == [("callback", 2.0, "v")]


def test_initial_time_is_honoured():
    env = pe.Environment(initial_time=10)
    env.run(until=env.timeout(5))
    assert env.now == 15.0
    with pytest.raises(ValueError, match="initial_time must be a finite number"):
        pe.Environment(initial_time=float("nan"))


def test_each_waiting_process_gets_its_own_exception_object():
    def model(mod, env, log):
        ev = env.event()
        caught = []

        def waiter():
            try:
                yield ev
            except ValueError as e:
                caught.append(e)

        env.process(waiter())
        env.process(waiter())
        ev.fail(ValueError("boom"))
        env.run()
        log.append(("distinct", caught[0] is not caught[1], caught[0].__cause__ is ev.value,
                    str(caught[1])))

    assert trace_of(model) == [("distinct", True, True, "boom")]


def test_timeout_takes_its_documented_keywords():
    env = pe.Environment()
    t = env.timeout(delay=1, value="x")
    assert env.run(until=t) == "x" and env.now == 1.0
    assert env.timeout().triggered  # delay defaults to 0, as in SimPy
    with pytest.raises(TypeError, match="unexpected keyword argument 'dely'"):
        env.timeout(dely=1)


# --- the pieces SimPy models use --------------------------------------------------------------

def test_container_levels_like_simpy():
    def model(mod, env, log):
        tank = mod.Container(env, capacity=10, init=4)

        def car(n):
            yield tank.get(n)
            log.append(("got", n, tank.level, env.now))

        def truck():
            yield env.timeout(3)
            yield tank.put(8)
            log.append(("filled", tank.level, env.now))

        for n in (3, 3, 2):
            env.process(car(n))
        env.process(truck())
        env.run()

    assert trace_of(model)[-1][0] == "got"


def test_preemptive_resource_interrupts_the_lowest_priority_user():
    def model(mod, env, log):
        res = mod.PreemptiveResource(env, capacity=1)

        def user(name, prio, at):
            yield env.timeout(at)
            with res.request(priority=prio) as req:
                yield req
                try:
                    yield env.timeout(5)
                    log.append(("done", name, env.now))
                except mod.Interrupt as i:
                    log.append(("preempted", name, env.now, i.cause.usage_since, i.cause.resource is res))

        env.process(user("low", 2, 0))
        env.process(user("high", 1, 1))
        env.run()

    assert trace_of(model) == [("preempted", "low", 1.0, 0.0, True), ("done", "high", 6.0)]


def test_filter_and_priority_stores_like_simpy():
    def model(mod, env, log):
        fs, ps = mod.FilterStore(env), mod.PriorityStore(env)

        def p():
            for item in (5, 2, 8):
                yield fs.put(item)
                yield ps.put(mod.PriorityItem(item, f"job{item}"))
            log.append(("even", (yield fs.get(lambda x: x % 2 == 0))))
            log.append(("first", (yield ps.get()).item))

        env.process(p())
        env.run()

    assert trace_of(model) == [("even", 2), ("first", "job2")]


def test_request_cancel_withdraws_a_waiting_request():
    env = pe.Environment()
    res = pe.Resource(env, 1)
    held, waiting = res.request(), res.request()
    assert res.queue == [waiting]
    waiting.cancel()
    assert res.queue == [] and res.users == [held]


# --- a discoverable surface -----------------------------------------------------------------------

@pytest.mark.parametrize("fn, params", [
    (pe.Environment.run, ["self", "until"]),
    (pe.Environment.timeout, ["self", "delay", "value"]),
    (pe.Environment.schedule, ["self", "event", "priority", "delay"]),
    (pe.Event.succeed, ["self", "value"]),
    (pe.Process.interrupt, ["self", "cause"]),
    (_native.qnet_run_trace, ["interarrival", "service", "servers", "discipline"]),
])
def test_binding_signatures_are_introspectable(fn, params):
    assert list(inspect.signature(fn).parameters) == params


def test_reprs_say_what_an_object_is():
    env = pe.Environment()

    def worker():
        yield env.timeout(1)

    assert re.fullmatch(r"<Timeout\(2\.0\) object at 0x[0-9a-f]+>", repr(env.timeout(2)))
    assert re.fullmatch(r"<Timeout\(1\.0, value=x\) object at 0x[0-9a-f]+>", repr(env.timeout(1, "x")))
    assert re.fullmatch(r"<Process\(worker\) object at 0x[0-9a-f]+>", repr(env.process(worker())))
    assert re.fullmatch(r"<Event\(\) object at 0x[0-9a-f]+>", repr(env.event()))
    assert repr(env).startswith("<pysim._native.Environment now=0.0 pending=")


def test_the_type_stub_names_every_public_binding_object():
    import pathlib

    stub = (pathlib.Path(pe.__file__).parent / "_native.pyi").read_text()
    public = [n for n in dir(_native) if not n.startswith("_")]
    missing = [n for n in public if not re.search(rf"^(class|def) {n}\b|^{n}\s*[:=]", stub, re.M)]
    assert missing == []
