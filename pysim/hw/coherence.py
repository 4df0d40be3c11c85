"""Cache coherence on shared lines and the spin locks built on it, on the engine.

:class:`Directory` keeps, for every line a program names, its MSI state in a
directory protocol: one modified owner, or a set of sharers. A load that
hits costs ``hit_s``; a miss goes to the line's home, which serves one
request at a time for ``occupancy_s`` (so a storm of misses on one line
queues there) and answers from memory (``memory_s``) or, when another cache
holds the line modified, from that cache (``owner_s``, three hops). A store
or an atomic read-modify-write needs the line exclusive: other sharers are
invalidated (``invalidate_s`` each), and processes spinning on their cached
copy wake (:meth:`Directory.changed`) and miss on their next load.

The locks issue exactly the loads, stores and atomics of their published
algorithms, so their costs come out of the protocol:

* :class:`TestAndSet`: every attempt is an atomic swap;
* :class:`TestTestAndSet`: spin on a cached copy, swap when it reads free,
  exponential backoff after a failed swap;
* :class:`TicketLock`: fetch-and-increment a ticket, spin on ``now_serving``;
* :class:`ArrayLock` (Anderson): each waiter spins on its own slot's line;
* :class:`McsLock` (Mellor-Crummey and Scott): a queue of per-CPU nodes,
  each waiter spinning on its own node, the holder handing over with one store.

:func:`contend` runs CPUs through acquire, a critical section that writes
shared data lines, release and think time, and reports throughput, acquire
latency, handoff time and coherence traffic. ``elide=True`` runs sections
speculatively (speculative lock elision, Rajwar and Goodman 2001): a CPU
reads the lock, and if it is free runs the section without writing it;
at the end it commits unless a line it used, or the lock, was written since
it began (validation at commit, as an optimistic scheme does), else it
retries and after ``retries`` failures takes the lock (:func:`elided_section`).
``predict=True`` predicts the lock's atomic instead (last-value prediction, as
Kim et al. propose): the section runs in the shadow of the test-and-set and
commits if it returned free (:func:`predicted_section`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pysim.rng import make_rng


@dataclass(frozen=True)
class DsmLatency:
    """Latencies of one machine's coherence protocol (seconds)."""

    hit_s: float          # the line is in this CPU's cache in a state that serves the access
    memory_s: float       # a miss the home answers from memory (two hops)
    owner_s: float        # a miss another cache answers, holding the line modified (three hops)
    invalidate_s: float = 0.0  # added per other sharer a store must invalidate
    occupancy_s: float = 0.0   # the home is busy this long with each request to a line

    def __post_init__(self):
        if min(self.hit_s, self.memory_s, self.owner_s, self.invalidate_s, self.occupancy_s) < 0:
            raise ValueError(f"latencies must be >= 0: {self}")


class Directory:
    """MSI lines with values, on ``sim``. Lines are any hashable names; a line never touched reads
    ``initial`` (0 unless given)."""

    def __init__(self, sim, latency: DsmLatency, initial=None):
        self.sim, self.lat = sim, latency
        self.value = dict(initial or {})
        self.owner, self.sharers = {}, {}
        self.home, self.events = {}, {}
        self.writes_at = {}             # line -> time of its last store
        self.counts = {"hits": 0, "misses": 0, "invalidations": 0, "atomics": 0}

    def _home(self, line):
        if line not in self.home:
            self.home[line] = self.sim.resource(1)
        return self.home[line]

    def changed(self, line):
        """An event that fires at the next store to ``line``."""
        if line not in self.events:
            self.events[line] = self.sim.event()
        return self.events[line]

    def _holds(self, cpu, line, exclusive):
        if self.owner.get(line) == cpu:
            return True
        return not exclusive and cpu in self.sharers.get(line, ())

    def _miss(self, cpu, line, exclusive):
        """Bring ``line`` to ``cpu``'s cache (exclusive for a store)."""
        with self._home(line).request() as req:
            yield req
            if self.lat.occupancy_s:
                yield self.sim.timeout(self.lat.occupancy_s)
            owner = self.owner.get(line)
            delay = self.lat.owner_s if owner is not None and owner != cpu else self.lat.memory_s
            if exclusive:
                others = self.sharers.get(line, set()) - {cpu}
                delay += self.lat.invalidate_s * len(others)
                self.counts["invalidations"] += len(others) + (owner is not None and owner != cpu)
            self.counts["misses"] += 1
            yield self.sim.timeout(max(delay - self.lat.occupancy_s, 0.0))
            if exclusive:
                self.owner[line], self.sharers[line] = cpu, set()
            else:
                if owner is not None and owner != cpu:  # the owner keeps a shared copy
                    self.owner.pop(line)
                    self.sharers.setdefault(line, set()).add(owner)
                self.sharers.setdefault(line, set()).add(cpu)

    def _access(self, cpu, line, exclusive):
        if self._holds(cpu, line, exclusive):
            self.counts["hits"] += 1
            yield self.sim.timeout(self.lat.hit_s)
        else:
            yield from self._miss(cpu, line, exclusive)

    def load(self, cpu, line):
        """Read ``line``; returns its value."""
        yield from self._access(cpu, line, False)
        return self.value.get(line, 0)

    def rmw(self, cpu, line, fn):
        """Atomically replace the value v of ``line`` with ``fn(v)``; returns v."""
        yield from self._access(cpu, line, True)
        self.counts["atomics"] += 1
        old = self.value.get(line, 0)
        self._store(line, fn(old))
        return old

    def store(self, cpu, line, value):
        """Write ``value`` to ``line``."""
        yield from self._access(cpu, line, True)
        self._store(line, value)

    def _store(self, line, value):
        self.value[line] = value
        self.writes_at[line] = self.sim.now
        ev = self.events.pop(line, None)
        if ev is not None:
            ev.succeed()

    def spin_until(self, cpu, line, ok):
        """Load ``line`` until ``ok(value)``, waiting on the cached copy between loads."""
        while True:
            v = yield from self.load(cpu, line)
            if ok(v):
                return v
            yield self.changed(line)


class Lock:
    """A spin lock over a :class:`Directory`: ``acquire(cpu)`` and ``release(cpu)`` are generators."""

    name = "lock"
    line = "lock"
    elidable = False  # SLE elides only a lock whose acquire and release are a silent store pair
    __test__ = False  # names like TestAndSet are not pytest's

    def __init__(self, directory: Directory, cpus: int):
        self.d, self.cpus = directory, cpus


class TestAndSet(Lock):
    name = "TAS"
    elidable = True  # acquire writes 1 over 0, release writes 0 back: the line ends as it began

    def acquire(self, cpu):
        while (yield from self.d.rmw(cpu, self.line, lambda v: 1)) != 0:
            pass

    def release(self, cpu):
        yield from self.d.store(cpu, self.line, 0)


class TestTestAndSet(TestAndSet):
    """Test-and-test-and-set with exponential backoff after a failed swap."""

    name = "TTAS"

    def __init__(self, directory, cpus, backoff_s: float = 0.0, backoff_max_s: float = 0.0):
        super().__init__(directory, cpus)
        self.backoff_s, self.backoff_max_s = backoff_s, max(backoff_max_s, backoff_s)

    def acquire(self, cpu):
        wait = self.backoff_s
        while True:
            yield from self.d.spin_until(cpu, self.line, lambda v: v == 0)
            if (yield from self.d.rmw(cpu, self.line, lambda v: 1)) == 0:
                return
            if wait:
                yield self.d.sim.timeout(wait)
                wait = min(2 * wait, self.backoff_max_s)


class TicketLock(Lock):
    name = "ticket"

    def acquire(self, cpu):
        mine = yield from self.d.rmw(cpu, "next_ticket", lambda v: v + 1)
        yield from self.d.spin_until(cpu, "now_serving", lambda v: v == mine)

    def release(self, cpu):
        served = yield from self.d.load(cpu, "now_serving")
        yield from self.d.store(cpu, "now_serving", served + 1)


class ArrayLock(Lock):
    """Anderson's array lock: slot k's flag on a line of its own."""

    name = "array"

    def __init__(self, directory, cpus):
        super().__init__(directory, cpus)
        directory.value[("slot", 0)] = 1
        self.slot = {}

    def acquire(self, cpu):
        k = (yield from self.d.rmw(cpu, "tail", lambda v: v + 1)) % self.cpus
        yield from self.d.spin_until(cpu, ("slot", k), lambda v: v == 1)
        yield from self.d.store(cpu, ("slot", k), 0)
        self.slot[cpu] = k

    def release(self, cpu):
        yield from self.d.store(cpu, ("slot", (self.slot.pop(cpu) + 1) % self.cpus), 1)


class McsLock(Lock):
    """The MCS list lock: each CPU's queue node is a line holding (locked, next)."""

    name = "MCS"
    line = "tail"

    def __init__(self, directory, cpus):
        super().__init__(directory, cpus)
        directory.value["tail"] = None  # the queue is empty

    def acquire(self, cpu):
        d, node = self.d, ("node", cpu)
        yield from d.store(cpu, node, (True, None))
        pred = yield from d.rmw(cpu, "tail", lambda v: cpu)
        if pred is None:
            return
        yield from d.rmw(cpu, ("node", pred), lambda v: (v[0], cpu))
        yield from d.spin_until(cpu, node, lambda v: not v[0])

    def release(self, cpu):
        d, node = self.d, ("node", cpu)
        _, nxt = yield from d.load(cpu, node)
        if nxt is None:
            old = yield from d.rmw(cpu, "tail", lambda v: None if v == cpu else v)
            if old == cpu:
                return
            _, nxt = yield from d.spin_until(cpu, node, lambda v: v[1] is not None)
        yield from d.rmw(cpu, ("node", nxt), lambda v: (False, v[1]))


LOCKS = {k.name: k for k in (TestAndSet, TestTestAndSet, TicketLock, ArrayLock, McsLock)}


# --- running a critical section without taking the lock first ---------------------------------------

def elided_section(lock: Lock, cpu, lines, cs_s: float):
    """Speculative lock elision (Rajwar and Goodman 2001), a generator: read the lock; if it is free, read
    ``lines`` and run the section without writing the lock; commit (the buffered stores to ``lines``
    become visible) unless the lock or a line was written since the section began. Returns whether it
    committed; on False nothing was written and the caller retries or takes the lock."""
    d = lock.d
    begin = d.sim.now
    free = yield from d.load(cpu, lock.line)
    if free not in (0, None):
        return False
    for line in lines:
        yield from d.load(cpu, line)
    yield d.sim.timeout(cs_s)
    if any(d.writes_at.get(x, -1.0) > begin for x in [*lines, lock.line]):
        return False
    for line in lines:  # commit: the writes become visible
        yield from d.store(cpu, line, cpu)
    return True


def predicted_section(lock: Lock, cpu, lines, cs_s: float):
    """Last-value prediction of the lock's atomic (Kim et al. §6.2), a generator: the test-and-set goes out
    and the section runs in its shadow, reading ``lines``, with the lock predicted free. If the atomic
    returns free the prediction held: the stores commit and the CPU holds the lock (the caller releases
    it); otherwise the section is squashed and False returned (the caller re-executes under the lock)."""
    d, sim = lock.d, lock.d.sim
    old = [None]

    def atomic():
        old[0] = yield from d.rmw(cpu, lock.line, lambda v: 1)

    def shadow():
        for line in lines:
            yield from d.load(cpu, line)
        yield sim.timeout(cs_s)

    yield sim.all_of([sim.process(atomic()), sim.process(shadow())])
    if old[0] != 0:
        return False
    for line in lines:
        yield from d.store(cpu, line, cpu)
    return True


def contend(sim, lock: Lock, *, sections: int, cs_s: float, think_s: float = 0.0, data_lines: int = 0,
            lines_per_section: int = 0, elide: bool = False, predict: bool = False, retries: int = 3,
            rng=0) -> dict:
    """``lock.cpus`` CPUs each run ``sections`` critical sections of ``cs_s`` that write
    ``lines_per_section`` of ``data_lines`` shared lines (drawn at random), with ``think_s``
    (exponential) between. Returns throughput, acquire latency, handoff time, the grants
    ((cpu, asked, acquired) in acquisition order), elision outcomes and the directory's counts."""
    if sections < 1 or cs_s < 0 or think_s < 0 or lines_per_section > data_lines or retries < 0:
        raise ValueError("sections >= 1, non-negative times, lines_per_section <= data_lines, retries >= 0")
    if elide and predict:
        raise ValueError("choose elide or predict, not both")
    if (elide or predict) and not lock.elidable:
        raise ValueError(f"a {lock.name} lock cannot be {'elided' if elide else 'predicted'}: its acquire and "
                         "release change the lock's lines (a ticket, a queue node), so they are not a silent "
                         "store pair")
    d, gen = lock.d, make_rng(rng)
    stats = {"acquire_s": [], "handoff_s": [], "grants": [], "elided": 0, "aborts": 0, "locked": 0}
    last_release = [math.nan]

    def section(cpu, lines):
        for line in lines:
            yield from d.store(cpu, ("data", line), cpu)
        yield sim.timeout(cs_s)

    def cpu_loop(cpu):
        for _ in range(sections):
            if think_s:
                yield sim.timeout(gen.exponential(think_s))
            lines = list(gen.choice(data_lines, lines_per_section, replace=False)) if lines_per_section else []
            asked = sim.now
            keys = [("data", x) for x in lines]
            if elide:
                for _ in range(retries):
                    if (yield from elided_section(lock, cpu, keys, cs_s)):
                        stats["elided"] += 1
                        break
                    stats["aborts"] += 1
                else:
                    yield from _locked(cpu, lines, asked)
                continue
            if predict:
                if (yield from predicted_section(lock, cpu, keys, cs_s)):
                    stats["elided"] += 1
                    last_release[0] = sim.now
                    yield from lock.release(cpu)
                    continue
                stats["aborts"] += 1
            yield from _locked(cpu, lines, asked)

    def _locked(cpu, lines, asked):
        yield from lock.acquire(cpu)
        stats["acquire_s"].append(sim.now - asked)
        if not math.isnan(last_release[0]) and last_release[0] >= asked:
            stats["handoff_s"].append(sim.now - last_release[0])
        stats["grants"].append((cpu, asked, sim.now))
        stats["locked"] += 1
        yield from section(cpu, lines)
        last_release[0] = sim.now
        yield from lock.release(cpu)

    procs = [sim.process(cpu_loop(c)) for c in range(lock.cpus)]
    start = sim.now
    sim.run(until=sim.all_of(procs))
    elapsed = sim.now - start
    done = lock.cpus * sections
    return {"lock": lock.name, "cpus": lock.cpus, "elapsed_s": elapsed, "sections_per_s": done / elapsed,
            "mean_acquire_s": float(np.mean(stats["acquire_s"])) if stats["acquire_s"] else 0.0,
            "mean_handoff_s": float(np.mean(stats["handoff_s"])) if stats["handoff_s"] else math.nan,
            "misses_per_section": d.counts["misses"] / done, "grants": stats["grants"],
            "elided": stats["elided"], "aborts": stats["aborts"], "locked": stats["locked"], **d.counts}
