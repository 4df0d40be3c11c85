"""Processes, events and resources over the C run loop (a SimPy-like API).

The clock, the pending-event heap and the resumption of generator processes
live in C (``pysim._native``); this module adds what is easier to say in
Python: running until an event, conditions over several events, stores, and
friendly constructors for the C stations and links.

    >>> sim = Simulation()
    >>> def hello(sim, log):
    ...     yield sim.timeout(2.0)
    ...     log.append(sim.now)
    >>> log = []
    >>> _ = sim.process(hello(sim, log))
    >>> sim.run()
    >>> log
    [2.0]

Time is a float number of seconds. Events due at the same instant are
processed in the order they were scheduled.
"""
from __future__ import annotations

import collections
import math

from pysim import _native

Event = _native.Event
Timeout = _native.Timeout
Process = _native.Process
Resource = _native.Resource
Request = _native.Request

__all__ = ["Simulation", "Event", "Timeout", "Process", "Resource", "Request", "Condition",
           "AnyOf", "AllOf", "Store", "Station", "Link", "DISCIPLINES"]

#: Station disciplines by name, as the C core numbers them.
DISCIPLINES = {"fifo": 0, "ps": 1, "priority": 2, "custom": 3}


class Simulation(_native.Engine):
    """Simulated clock plus the queue of pending events.

    ``timeout(delay, value=None)``, ``process(generator)`` and ``event()``
    come from the C engine; ``now`` is the clock in seconds.
    """

    def run(self, until=None):
        """Run until no events remain, until time ``until`` (s), or until an Event is processed.

        Returns the event's value when ``until`` is an Event.

        Raises
        ------
        ValueError
            If ``until`` is a time earlier than ``now`` or not a number.
        RuntimeError
            If ``until`` is an event and the simulation runs out of events first.
        """
        if until is None:
            return super().run()
        if isinstance(until, Event):
            if not until.processed:
                until.add_callback(_stop_simulation)
                super().run()
                if not until.processed:
                    raise RuntimeError(f"no more events, but {until!r} was never processed")
            if not until.ok:
                raise until.value
            return until.value
        try:
            until = float(until)
        except (TypeError, ValueError):
            raise ValueError(f"until must be None, a time in seconds or an Event, got {until!r}") from None
        if not until >= self.now:
            raise ValueError(f"until must be >= now ({self.now} s), got {until}")
        return super().run(until)

    def any_of(self, events):
        """An event that fires when any of ``events`` has."""
        return AnyOf(self, events)

    def all_of(self, events):
        """An event that fires when all of ``events`` have."""
        return AllOf(self, events)

    def resource(self, capacity=1):
        """A Resource with ``capacity`` units, granted in (priority, arrival) order."""
        return Resource(self, capacity)

    def store(self, capacity=math.inf):
        """A Store holding at most ``capacity`` items."""
        return Store(self, capacity)

    def station(self, servers=1, discipline="fifo", select=None):
        """A C queueing station on this simulation's loop (see :class:`Station`)."""
        return Station(self, servers, discipline, select)

    def link(self, eth):
        """A FIFO Ethernet medium on this loop; ``eth`` is a :class:`pysim.hw.net.Ethernet`."""
        return Link(self, eth)


def _stop_simulation(event):
    event.env.stop()


class Condition(Event):
    """Fires when ``evaluate(events, n_done)`` holds; fails as soon as one event fails.

    The value is a dict from each processed, successful event to its value.
    """

    def __init__(self, env, evaluate, events):
        self._events = tuple(events)
        self._evaluate = evaluate
        self._done = 0
        for ev in self._events:
            if not isinstance(ev, Event):
                raise TypeError(f"a condition takes events, got {ev!r}")
            if ev.env is not env:
                raise ValueError("a condition cannot mix events of different simulations")
        if not self._events or self._evaluate(self._events, 0):
            self.succeed({})
            return
        for ev in self._events:
            if ev.processed:
                self._check(ev)
            else:
                ev.add_callback(self._check)

    def _check(self, ev):
        if self.triggered:
            return
        self._done += 1
        if not ev.ok:
            ev.defused = True
            self.fail(ev.value)
        elif self._evaluate(self._events, self._done):
            self.succeed({e: e.value for e in self._events if e.processed and e.ok})


class AnyOf(Condition):
    """Fires when at least one of the events has."""

    def __init__(self, env, events):
        super().__init__(env, lambda evs, done: done >= 1, events)


class AllOf(Condition):
    """Fires when every one of the events has."""

    def __init__(self, env, events):
        super().__init__(env, lambda evs, done: done == len(evs), events)


class Store:
    """A FIFO buffer of items between processes.

    ``put(item)`` returns an event that fires once the item is in (at once
    unless the store is full); ``get()`` returns an event whose value is the
    oldest item, firing once there is one.
    """

    def __init__(self, env, capacity=math.inf):
        if not capacity > 0:
            raise ValueError(f"capacity must be > 0, got {capacity!r}")
        self.env = env
        self.capacity = capacity
        self.items = collections.deque()
        self._getters = collections.deque()
        self._putters = collections.deque()

    def put(self, item):
        """Offer ``item``; the returned event fires when it has been stored."""
        ev = self.env.event()
        self._putters.append((ev, item))
        self._settle()
        return ev

    def get(self):
        """Ask for the oldest item; the returned event's value is the item."""
        ev = self.env.event()
        self._getters.append(ev)
        self._settle()
        return ev

    def _settle(self):
        while True:
            if self._putters and len(self.items) < self.capacity:
                ev, item = self._putters.popleft()
                self.items.append(item)
                ev.succeed()
            elif self._getters and self.items:
                self._getters.popleft().succeed(self.items.popleft())
            else:
                return


def _callback_address(fn, what):
    """The C address of a compiled callback (a Numba cfunc or an int)."""
    if isinstance(fn, int):
        address = fn
    elif hasattr(fn, "address"):
        address = fn.address
    else:
        raise TypeError(f"{what} must be a Numba cfunc (see pysim.policies), got {type(fn).__name__}")
    if address <= 0:
        raise ValueError(f"{what}: address must be positive, got {address}")
    return address


class Station(_native.Station):
    """A queueing station whose jobs are served in C; usable from Python processes.

    Parameters
    ----------
    env : Simulation
    servers : int
        Number of servers, >= 1.
    discipline : {"fifo", "ps", "priority", "custom"}
        ``"ps"`` is processor sharing; ``"priority"`` is preemptive-resume
        with smaller classes first; ``"custom"`` asks ``select`` (a Numba
        cfunc from :func:`pysim.policies.station_select`) which waiting job
        to start.

    ``yield station.serve(service_s, klass)`` waits until the job leaves and
    gives its response time in seconds.
    """

    def __new__(cls, env, servers=1, discipline="fifo", select=None):
        if isinstance(servers, bool) or not isinstance(servers, int) or servers < 1:
            raise ValueError(f"servers must be an int >= 1, got {servers!r}")
        if discipline not in DISCIPLINES:
            raise ValueError(f"discipline must be one of {sorted(DISCIPLINES)}, got {discipline!r}")
        if (discipline == "custom") != (select is not None):
            raise ValueError("select is required for discipline 'custom' and only for it")
        address = _callback_address(select, "select") if select is not None else 0
        self = super().__new__(cls, env, servers, DISCIPLINES[discipline], address)
        self._select = select  # keeps the compiled callback alive
        return self

    def __init__(self, env, servers=1, discipline="fifo", select=None):
        self.env, self.servers, self.discipline = env, servers, discipline

    def queue_log(self):
        """(times_s, jobs_present) recorded since log_enable(), as NumPy arrays."""
        import numpy as np

        t, n = self.log()
        return np.frombuffer(t, dtype=np.float64), np.frombuffer(n, dtype=np.int64)


class Link(_native.Link):
    """A FIFO Ethernet medium; ``yield link.send(nbytes)`` waits for the arrival."""

    def __new__(cls, env, eth):
        return super().__new__(cls, env, eth.as_tuple())

    def __init__(self, env, eth):
        self.env, self.eth = env, eth
