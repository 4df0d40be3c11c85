"""Processes, events and resources over a C run loop, with SimPy's semantics.

A SimPy model moves here by changing its imports: the same event order,
the same results, the same exceptions (SimPy 4.1; a differential test over
generated programs keeps it so). The clock, the pending events and the hot
types (events, timeouts, processes, conditions, resources) live in C
(``pysim._native``); stores and containers follow SimPy's resource protocol
in Python, on the C events.

    >>> sim = Simulation()
    >>> def hello(sim, log):
    ...     yield sim.timeout(2.0)
    ...     log.append(sim.now)
    >>> log = []
    >>> _ = sim.process(hello(sim, log))
    >>> sim.run()
    >>> log
    [2.0]

What differs from SimPy, on purpose:

* ``now`` is always a float (SimPy keeps ints when every delay is an int).
* A delay of NaN is refused (SimPy would schedule it); an infinite delay is
  allowed, as in SimPy.
* C resources (``Resource``, ``PriorityResource``, ``PreemptiveResource``)
  cannot be extended by overriding ``_do_put``/``_do_get``; subclass
  :class:`BaseResource` for a resource of your own, as SimPy's
  documentation shows.
* Extras SimPy lacks: ``processed`` and ``pending`` counters on the
  environment, C queueing stations (:meth:`Simulation.station`) and Ethernet
  links (:meth:`Simulation.link`) that processes can wait on.
"""
from __future__ import annotations

import heapq
import math
from typing import Any, NamedTuple

from pysim import _native
from pysim.errors import Interrupt

Environment = _native.Environment
Event = _native.Event
Timeout = _native.Timeout
Process = _native.Process
Condition = _native.Condition
AllOf = _native.AllOf
AnyOf = _native.AnyOf
ConditionValue = _native.ConditionValue
Resource = _native.Resource
PriorityResource = _native.PriorityResource
PreemptiveResource = _native.PreemptiveResource
Request = _native.Request
PriorityRequest = _native.PriorityRequest
Release = _native.Release
Preempted = _native.Preempted
EmptySchedule = _native.EmptySchedule
URGENT = _native.URGENT
NORMAL = _native.NORMAL
PENDING = _native.PENDING
Infinity = math.inf

__all__ = ["Simulation", "Environment", "Event", "Timeout", "Process", "Condition", "AllOf", "AnyOf",
           "ConditionValue", "Interrupt", "EmptySchedule", "URGENT", "NORMAL", "PENDING", "Infinity",
           "Resource", "PriorityResource", "PreemptiveResource", "Request", "PriorityRequest", "Release",
           "Preempted", "BaseResource", "Put", "Get", "Store", "StorePut", "StoreGet", "PriorityStore",
           "PriorityItem", "FilterStore", "FilterStoreGet", "Container", "ContainerPut", "ContainerGet",
           "Station", "Link", "DISCIPLINES"]

#: Station disciplines by name, as the C core numbers them.
DISCIPLINES = {"fifo": 0, "ps": 1, "priority": 2, "custom": 3}


# --- SimPy's resource protocol, for stores, containers and resources of your own ---------

class Put(Event):
    """A request to put something into a resource; succeeds once it is in (SimPy's ``Put``)."""

    def __init__(self, resource):
        self.resource = resource
        self.proc = self.env.active_process
        resource.put_queue.append(self)
        self.callbacks.append(resource._trigger_get)
        resource._trigger_put(None)

    def __new__(cls, resource, *args, **kwargs):
        return super().__new__(cls, resource._env)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.cancel()

    def cancel(self):
        """Withdraw the request if it has not been granted yet."""
        if not self.triggered:
            self.resource.put_queue.remove(self)


class Get(Event):
    """A request to get something from a resource; succeeds with it (SimPy's ``Get``)."""

    def __init__(self, resource):
        self.resource = resource
        self.proc = self.env.active_process
        resource.get_queue.append(self)
        self.callbacks.append(resource._trigger_put)
        resource._trigger_get(None)

    def __new__(cls, resource, *args, **kwargs):
        return super().__new__(cls, resource._env)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.cancel()

    def cancel(self):
        """Withdraw the request if it has not been granted yet."""
        if not self.triggered:
            self.resource.get_queue.remove(self)


class BaseResource:
    """SimPy's base of resources: a put queue and a get queue, served by ``_do_put`` and ``_do_get``.

    Subclass it, as SimPy's documentation shows, for a resource of your own.
    """

    PutQueue = list
    GetQueue = list

    def __init__(self, env, capacity):
        self._env = env
        self._capacity = capacity
        self.put_queue = self.PutQueue()
        self.get_queue = self.GetQueue()

    @property
    def capacity(self):
        """The resource's capacity."""
        return self._capacity

    def put(self):
        return Put(self)

    def get(self):
        return Get(self)

    def _do_put(self, event):
        raise NotImplementedError(self)

    def _trigger_put(self, get_event):
        idx = 0
        while idx < len(self.put_queue):
            put_event = self.put_queue[idx]
            proceed = self._do_put(put_event)
            if not put_event.triggered:
                idx += 1
            elif self.put_queue.pop(idx) != put_event:
                raise RuntimeError("Put queue invariant violated")
            if not proceed:
                break

    def _do_get(self, event):
        raise NotImplementedError(self)

    def _trigger_get(self, put_event):
        idx = 0
        while idx < len(self.get_queue):
            get_event = self.get_queue[idx]
            proceed = self._do_get(get_event)
            if not get_event.triggered:
                idx += 1
            elif self.get_queue.pop(idx) != get_event:
                raise RuntimeError("Get queue invariant violated")
            if not proceed:
                break


class StorePut(Put):
    """Put ``item`` into a store."""

    def __init__(self, store, item):
        self.item = item
        super().__init__(store)


class StoreGet(Get):
    """Get an item from a store; succeeds with the item."""


class FilterStoreGet(StoreGet):
    """Get the first item for which ``filter(item)`` holds."""

    def __init__(self, resource, filter=lambda item: True):  # noqa: A002 (SimPy's name)
        self.filter = filter
        super().__init__(resource)


class Store(BaseResource):
    """A FIFO buffer of up to ``capacity`` items between processes (SimPy's ``Store``)."""

    def __init__(self, env, capacity=math.inf):
        if capacity <= 0:
            raise ValueError('"capacity" must be > 0.')
        super().__init__(env, capacity)
        self.items = []

    def put(self, item):
        """Offer ``item``; the event succeeds once it is stored."""
        return StorePut(self, item)

    def get(self):
        """Ask for the oldest item; the event succeeds with it."""
        return StoreGet(self)

    def _do_put(self, event):
        if len(self.items) < self._capacity:
            self.items.append(event.item)
            event.succeed()
        return None

    def _do_get(self, event):
        if self.items:
            event.succeed(self.items.pop(0))
        return None


class PriorityItem(NamedTuple):
    """An item ordered by its priority alone (for PriorityStore)."""

    priority: Any
    item: Any

    def __lt__(self, other):
        return self.priority < other.priority


class PriorityStore(Store):
    """A store that gives its smallest item first (a heap)."""

    def _do_put(self, event):
        if len(self.items) < self._capacity:
            heapq.heappush(self.items, event.item)
            event.succeed()
        return None

    def _do_get(self, event):
        if self.items:
            event.succeed(heapq.heappop(self.items))
        return None


class FilterStore(Store):
    """A store whose ``get(filter)`` waits for an item ``filter`` accepts."""

    def get(self, filter=lambda item: True):  # noqa: A002 (SimPy's name)
        return FilterStoreGet(self, filter)

    def _do_get(self, event):
        for item in self.items:
            if event.filter(item):
                self.items.remove(item)
                event.succeed(item)
                break
        return True


class ContainerPut(Put):
    """Put ``amount`` into a container."""

    def __init__(self, container, amount):
        if amount <= 0:
            raise ValueError(f"amount(={amount}) must be > 0.")
        self.amount = amount
        super().__init__(container)


class ContainerGet(Get):
    """Take ``amount`` out of a container."""

    def __init__(self, container, amount):
        if amount <= 0:
            raise ValueError(f"amount(={amount}) must be > 0.")
        self.amount = amount
        super().__init__(container)


class Container(BaseResource):
    """A continuous or discrete amount, between 0 and ``capacity`` (SimPy's ``Container``)."""

    def __init__(self, env, capacity=math.inf, init=0):
        if capacity <= 0:
            raise ValueError('"capacity" must be > 0.')
        if init < 0:
            raise ValueError('"init" must be >= 0.')
        if init > capacity:
            raise ValueError('"init" must be <= "capacity".')
        super().__init__(env, capacity)
        self._level = init

    @property
    def level(self):
        """The amount in the container."""
        return self._level

    def put(self, amount):
        return ContainerPut(self, amount)

    def get(self, amount):
        return ContainerGet(self, amount)

    def _do_put(self, event):
        if self._capacity - self._level >= event.amount:
            self._level += event.amount
            event.succeed()
            return True
        return None

    def _do_get(self, event):
        if self._level >= event.amount:
            self._level -= event.amount
            event.succeed()
            return True
        return None


# --- the lab's environment -----------------------------------------------------------------

class Simulation(Environment):
    """An Environment with constructors for the lab's resources and C components.

    ``timeout(delay, value=None)``, ``process(generator)``, ``event()``,
    ``all_of(events)``, ``any_of(events)``, ``run(until=None)``,
    ``step()``, ``peek()`` and ``schedule(event, priority, delay)`` are
    SimPy's; ``now`` is the clock in seconds.
    """

    def resource(self, capacity=1):
        """A Resource with ``capacity`` units, granted in request order."""
        return Resource(self, capacity)

    def priority_resource(self, capacity=1):
        """A PriorityResource: smaller priorities first."""
        return PriorityResource(self, capacity)

    def store(self, capacity=math.inf):
        """A Store holding at most ``capacity`` items."""
        return Store(self, capacity)

    def container(self, capacity=math.inf, init=0):
        """A Container of an amount between 0 and ``capacity``."""
        return Container(self, capacity, init)

    def station(self, servers=1, discipline="fifo", select=None):
        """A C queueing station on this simulation's loop (see :class:`Station`)."""
        return Station(self, servers, discipline, select)

    def link(self, eth):
        """A FIFO Ethernet medium on this loop; ``eth`` is a :class:`pysim.hw.net.Ethernet`."""
        return Link(self, eth)


# --- C components processes can wait on ---------------------------------------------------

def _callback_address(fn, what):
    """The C address of a compiled callback: a Numba cfunc with the signature pysim.policies declares."""
    address = getattr(fn, "address", None)
    if not isinstance(address, int):
        raise TypeError(f"{what} must be a compiled callback (a Numba cfunc from pysim.policies), "
                        f"got {type(fn).__name__}")
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

    def __repr__(self):
        return f"<Station {self.discipline} servers={self.servers} jobs={self.number} at {id(self):#x}>"

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

    def __repr__(self):
        return f"<Link {self.eth.name} at {id(self):#x}>"
