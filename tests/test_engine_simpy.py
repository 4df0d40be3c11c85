"""pysim.engine against SimPy 4.1: generated programs must give the same trace, event for event.

Hypothesis writes random process programs (timeouts with many ties, events
succeeded and failed, conditions nested with all_of/any_of/&/|, resources
of each kind with priorities, preemption and reneging, stores, filter and
priority stores, containers, interrupts with causes, processes waiting on
processes, failures raised and caught) and runs each under SimPy and under
pysim; any difference is shrunk to a minimal program.
"""
import os

import pytest
import simpy
from hypothesis import HealthCheck, find, given, settings

import pysim.engine as pysim_engine
from engine_programs import Runner, programs

EXAMPLES = int(os.environ.get("PYSIM_DIFFERENTIAL_EXAMPLES", "3000"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_generated_programs_trace_alike_under_simpy_and_pysim(program):
    expected = Runner(simpy, program).run()
    got = Runner(pysim_engine, program).run()
    assert got == expected


def _start_processes_late(monkeypatch):
    """A process starts in turn with the other events due now (the old pysim rule)."""
    def init(self, env, process):
        self.env, self.callbacks, self._value, self._ok = env, [process._resume], None, True
        env.schedule(self, simpy.events.NORMAL)
    monkeypatch.setattr(simpy.events.Initialize, "__init__", init)


def _hand_over_at_once(monkeypatch):
    """Resource.release() grants the next request immediately (the old pysim rule)."""
    original = simpy.Resource._do_get

    def do_get(self, event):
        original(self, event)
        self._trigger_put(None)
    monkeypatch.setattr(simpy.Resource, "_do_get", do_get)


def _run_through_until(monkeypatch):
    """run(until=t) also runs the events due at t (the old pysim rule)."""
    original = simpy.Environment.run

    def run(self, until=None):
        if until is not None and not isinstance(until, simpy.Event):
            stop = simpy.Event(self)
            stop._ok, stop._value = True, None
            self.schedule(stop, 2, until - self.now)  # after the NORMAL events due then
            until = stop
        return original(self, until)
    monkeypatch.setattr(simpy.Environment, "run", run)


@pytest.mark.parametrize("mutation", [_start_processes_late, _hand_over_at_once, _run_through_until])
def test_the_comparison_finds_each_rule_pysim_once_broke(monkeypatch, mutation):
    mutation(monkeypatch)
    found = find(programs, lambda p: Runner(simpy, p).run() != Runner(pysim_engine, p).run(),
                 settings=settings(max_examples=3000, deadline=None, database=None))
    assert found["processes"]
