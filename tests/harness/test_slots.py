"""CPU slots: no more notebooks compute than there are slots, and one waiting to measure lends its slot."""
import subprocess
import sys
import textwrap
import time

import pytest

from pysim.harness import slots
from pysim.reproduce import longest_first

TAKE_AND_HOLD = textwrap.dedent("""
    import sys, time
    from pysim.harness import slots
    slots.take()
    print("slot", flush=True)
    time.sleep(float(sys.argv[1]))
""")
WAIT_TO_MEASURE = textwrap.dedent("""
    import time
    from pysim.harness import exclusive, slots
    slots.take()
    print("slot", flush=True)
    with exclusive():
        pass
""")
HOLD_LOCK = textwrap.dedent("""
    import sys, time
    from pysim.harness import exclusive
    with exclusive():
        print("held", flush=True)
        time.sleep(float(sys.argv[1]))
""")


@pytest.fixture
def one_slot(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSIM_MEASURE_LOCK", str(tmp_path / "measure.lock"))
    monkeypatch.delenv("PYSIM_MEASURING", raising=False)
    monkeypatch.setenv(slots.SLOTS_ENV, f"{tmp_path}:1")
    yield
    slots.give()


def start(script, *args, env=None):
    """A process in its own session, as Jupyter starts a kernel, once it has printed its first line."""
    p = subprocess.Popen([sys.executable, "-c", script, *map(str, args)], stdout=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    p.stdout.readline()
    return p


def test_without_slots_nothing_waits(monkeypatch):
    monkeypatch.delenv(slots.SLOTS_ENV, raising=False)
    assert slots.take() == 0.0 and not slots.holding()


def test_a_second_notebook_waits_for_the_only_slot(one_slot):
    p = start(TAKE_AND_HOLD, 0.6)
    waited = slots.take()
    p.wait(timeout=10)
    assert slots.holding() and waited >= 0.4, waited


def test_a_notebook_waiting_to_measure_lends_its_slot(one_slot, monkeypatch):
    """One slot: A holds it and waits for the measurement lock that another process holds; B gets the slot
    at once. Without the loan B would wait until A had measured."""
    import os

    no_slots = {k: v for k, v in os.environ.items() if k != slots.SLOTS_ENV}
    holder = start(HOLD_LOCK, 1.5, env=no_slots)
    a = start(WAIT_TO_MEASURE)
    time.sleep(0.3)  # A reaches the lock and waits
    waited = slots.take()
    assert waited < 1.0, waited
    slots.give()
    holder.wait(timeout=10)
    assert a.wait(timeout=10) == 0  # A took its slot back and measured


def test_longest_notebooks_start_first(tmp_path):
    runs = tmp_path / "runs.json"
    runs.write_text('{"b": {"seconds": 5}, "c": {"seconds": 50}, "a": {"seconds": 20}}')
    assert longest_first(["a", "b", "c", "new"], runs) == ["new", "c", "a", "b"]
    assert longest_first(["a", "b"], tmp_path / "missing.json") == ["a", "b"]


TICKER = textwrap.dedent("""
    import sys, time
    from pysim.harness import slots
    slots.take()
    print("slot", flush=True)
    path = sys.argv[1]
    while True:  # a notebook computing: it leaves a mark every 20 ms
        with open(path, "a") as f:
            f.write("x")
        time.sleep(0.02)
""")
PAUSER = textwrap.dedent("""
    import time
    from pysim.harness import exclusive, slots
    slots.take()
    with exclusive(pause=True):
        print("paused", flush=True)
        time.sleep(60)
""")


@pytest.fixture
def two_slots(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSIM_MEASURE_LOCK", str(tmp_path / "measure.lock"))
    monkeypatch.delenv("PYSIM_MEASURING", raising=False)
    monkeypatch.setenv(slots.SLOTS_ENV, f"{tmp_path}:2")
    yield tmp_path
    slots.give()


def marks(path, seconds=0.3):
    before = path.stat().st_size
    time.sleep(seconds)
    return path.stat().st_size - before


def test_an_experiment_that_needs_every_core_pauses_the_other_notebooks(two_slots):
    from pysim.harness import exclusive

    ticks = two_slots / "ticks"
    ticks.write_text("")
    other = start(TICKER, ticks)
    try:
        slots.take()
        assert slots.others() == [other.pid]  # its kernel's group: a process started in its own session
        assert marks(ticks) > 3
        with exclusive(pause=True):
            assert marks(ticks) == 0
        assert marks(ticks) > 3
        with exclusive():  # an exclusive experiment without pause leaves the others computing
            assert marks(ticks) > 3
    finally:
        other.kill()
        other.wait(timeout=10)


def test_the_paused_notebooks_go_on_when_the_experiment_dies(two_slots):
    import os
    import signal

    ticks = two_slots / "ticks"
    ticks.write_text("")
    other = start(TICKER, ticks)
    pauser = start(PAUSER)  # prints "paused" once the ticker is stopped
    try:
        assert marks(ticks) == 0
        os.kill(pauser.pid, signal.SIGKILL)
        pauser.wait(timeout=10)
        time.sleep(0.2)
        assert marks(ticks) > 3  # the watchdog continued it
    finally:
        other.kill()
        other.wait(timeout=10)
