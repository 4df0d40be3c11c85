"""Failure detection by heartbeats and a store replicated over the copies believed available.

:class:`HeartbeatDetector` runs on the engine: a monitored process sends a
heartbeat every ``period_s`` (each delayed by the network, drawn by
``delay``), unless it is stalled (paused, as by SIGSTOP) or crashed; the
monitor suspects it when nothing has arrived for ``timeout_s``. It records
every suspicion, whether the process was really down (a true detection, and
how long after the crash) or only slow (a false suspicion), and how long
each false suspicion lasted.

:class:`AvailableCopies` is the replication rule of available-copies
schemes: a write goes to every copy believed up, a read to any one of
them; a copy suspected is dropped from the set, and one that comes back
must catch up before it rejoins.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pysim.rng import make_rng


@dataclass
class Suspicion:
    start_s: float
    end_s: float | None
    real: bool               # the process was crashed (not just stalled or slow)
    after_crash_s: float | None = None  # detection time for a real failure


class HeartbeatDetector:
    """Heartbeats from one process to its monitor.

    ``stalls`` are (start_s, duration_s) pauses of the process; ``crash_s`` (optional) is when it
    stops for good. ``delay`` is a function ``rng -> seconds`` for each heartbeat's trip.
    """

    def __init__(self, sim, *, period_s: float, timeout_s: float, delay=None, stalls=(), crash_s=None, rng=0):
        if not period_s > 0 or not timeout_s > 0:
            raise ValueError("period_s and timeout_s must be > 0")
        self.sim, self.period_s, self.timeout_s = sim, period_s, timeout_s
        self.delay = delay or (lambda g: 0.0)
        self.stalls = sorted(stalls)
        self.crash_s = crash_s
        self.gen = make_rng(rng)
        self.last_heard = 0.0
        self.suspicions: list = []
        self.heartbeats = 0
        sim.process(self._sender())
        sim.process(self._monitor())

    def _paused_until(self, t: float) -> float:
        """When a process that wants to run at t can (after any stall covering t)."""
        for start, dur in self.stalls:
            if start <= t < start + dur:
                return start + dur
        return t

    def _sender(self):
        sim = self.sim
        while True:
            t = self._paused_until(sim.now)
            if t > sim.now:
                yield sim.timeout(t - sim.now)
            if self.crash_s is not None and sim.now >= self.crash_s:
                return
            sim.process(self._deliver(self.delay(self.gen)))
            yield sim.timeout(self.period_s)

    def _deliver(self, delay):
        yield self.sim.timeout(delay)
        self.heartbeats += 1
        self.last_heard = self.sim.now
        if self.suspicions and self.suspicions[-1].end_s is None:
            self.suspicions[-1].end_s = self.sim.now  # heard again: the suspicion was false

    def _monitor(self):
        sim = self.sim
        while True:
            wake = self.last_heard + self.timeout_s
            if wake > sim.now:
                yield sim.timeout(wake - sim.now)
                continue
            if not self.suspicions or self.suspicions[-1].end_s is not None:
                crashed = self.crash_s is not None and sim.now >= self.crash_s
                self.suspicions.append(Suspicion(sim.now, None, crashed,
                                                 sim.now - self.crash_s if crashed else None))
            yield sim.timeout(self.period_s / 4)

    def summary(self, until_s: float) -> dict:
        """False suspicions, their mean length, and the detection time of a crash."""
        false = [s for s in self.suspicions if not s.real]
        spans = [(s.end_s if s.end_s is not None else until_s) - s.start_s for s in false]
        real = [s for s in self.suspicions if s.real]
        return {"false_suspicions": len(false), "mean_false_s": float(np.mean(spans)) if spans else 0.0,
                "detection_s": real[0].after_crash_s if real else float("nan"), "heartbeats": self.heartbeats}


@dataclass
class AvailableCopies:
    """Which copies of an object a client reads and writes, as suspicions come and go."""

    copies: tuple
    up: set = field(default_factory=set)
    stale: set = field(default_factory=set)
    writes: int = 0
    copy_writes: int = 0

    def __post_init__(self):
        if not self.copies:
            raise ValueError("an object needs at least one copy")
        self.up = set(self.copies)

    def suspect(self, copy):
        self.up.discard(copy)
        self.stale.add(copy)

    def rejoin(self, copy):
        """A copy back from a suspicion: it catches up (one transfer) and rejoins."""
        if copy not in self.copies:
            raise KeyError(f"{copy!r} is not a copy of this object")
        self.up.add(copy)
        self.stale.discard(copy)
        self.copy_writes += 1

    def write(self) -> int:
        """A write: to every copy believed up; returns how many. Fails if none is."""
        if not self.up:
            raise RuntimeError("no copy is believed up: the object is unavailable")
        self.writes += 1
        self.copy_writes += len(self.up)
        return len(self.up)

    def read(self):
        """A read: from one copy believed up."""
        if not self.up:
            raise RuntimeError("no copy is believed up: the object is unavailable")
        return min(self.up)
