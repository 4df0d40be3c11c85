"""Where a simulated CPU's time goes: busy time by category and idle time, after a warm-up.

Models on the engine charge work to a :class:`CpuAccount` instead of keeping
their own counters. Only time after ``warmup_s`` is booked, so a run's
start-up transient does not bias the shares:

>>> from pysim.engine import Simulation
>>> sim = Simulation()
>>> cpu = CpuAccount(sim, warmup_s=1.0)
>>> def work():
...     while True:
...         yield cpu.busy("user", 0.25)
...         yield from cpu.idle_until(sim.timeout(0.75))
>>> _ = sim.process(work())
>>> sim.run(until=5.0)
>>> {k: round(v) for k, v in cpu.shares_pct().items()}
{'idle': 75, 'user': 25}
"""
from __future__ import annotations


class CpuAccount:
    """Busy time by category and idle time of one simulated CPU, booked after ``warmup_s``.

    ``resource`` (optional) is a :class:`pysim.engine.Resource` that stands
    for the CPU when several processes compete for it; :meth:`hold` waits
    for it before running.
    """

    def __init__(self, sim, *, warmup_s: float = 0.0, resource=None):
        if not warmup_s >= 0:
            raise ValueError(f"warmup_s must be >= 0 seconds, got {warmup_s!r}")
        self.sim = sim
        self.warmup_s = float(warmup_s)
        self.resource = resource
        self.seconds = {}
        self.counts = {}
        self._idle_since = []  # starts of the idle waits still open
        self._busy = []        # (end, category, seconds booked) of work that may outlast the window

    @property
    def measuring(self) -> bool:
        """True once the warm-up is over."""
        return self.sim.now >= self.warmup_s

    def book(self, category: str, seconds: float) -> None:
        """Book ``seconds`` of ``category`` starting now, without waiting; only the part after the
        warm-up counts (work that straddles the warm-up's end is split)."""
        if not seconds >= 0:
            raise ValueError(f"seconds must be >= 0, got {seconds!r}")
        now = self.sim.now
        after = min(seconds, now + seconds - self.warmup_s)
        if after > 0:
            self.seconds[category] = self.seconds.get(category, 0.0) + after
            self._busy = [b for b in self._busy if b[0] > now]
            self._busy.append((now + seconds, category, after))

    def busy(self, category: str, seconds: float):
        """Book ``seconds`` of work and return the timeout the working process yields."""
        self.book(category, seconds)
        return self.sim.timeout(seconds)

    def hold(self, category: str, seconds: float):
        """Wait for the CPU resource, work ``seconds``, release it: ``yield from account.hold(...)``."""
        if self.resource is None:
            raise ValueError("hold() needs the CpuAccount to be given the CPU as a resource")
        req = self.resource.request()
        yield req
        yield self.busy(category, seconds)
        self.resource.release(req)

    def idle_until(self, event):
        """Wait for ``event`` and book the wait (its part after the warm-up) as idle; gives its value."""
        start = self.sim.now
        self._idle_since.append(start)
        try:
            value = yield event
        finally:
            self._idle_since.remove(start)
        if self.sim.now >= self.warmup_s:
            self.seconds["idle"] = self.seconds.get("idle", 0.0) + self.sim.now - max(start, self.warmup_s)
        return value

    def _open_idle_s(self, end: float) -> float:
        # a wait still in progress when the run stopped is idle up to the end of the window
        return sum(max(end - max(start, self.warmup_s), 0.0) for start in self._idle_since)

    def count(self, name: str, n: int = 1) -> None:
        """Count ``n`` occurrences of ``name`` (if past the warm-up)."""
        if self.sim.now >= self.warmup_s:
            self.counts[name] = self.counts.get(name, 0) + n

    def window_s(self, until: float | None = None) -> float:
        """The measured window: from the end of the warm-up to ``until`` (default: now)."""
        end = self.sim.now if until is None else until
        return max(end - self.warmup_s, 0.0)

    def shares_pct(self, until: float | None = None) -> dict:
        """Each category's share of the measured window, in percent."""
        window = self.window_s(until)
        if window <= 0:
            raise ValueError("no measured time yet: the run has not passed its warm-up")
        end = self.warmup_s + window
        seconds = dict(self.seconds)
        for finish, category, booked in self._busy:  # work still running at the end counts up to it
            if finish > end:
                seconds[category] -= min(finish - end, booked)
        open_idle = self._open_idle_s(end)
        if open_idle:
            seconds["idle"] = seconds.get("idle", 0.0) + open_idle
        return {k: 100.0 * v / window for k, v in seconds.items()}

    def rates_per_s(self, until: float | None = None) -> dict:
        """Each counter divided by the measured window."""
        window = self.window_s(until)
        if window <= 0:
            raise ValueError("no measured time yet: the run has not passed its warm-up")
        return {k: v / window for k, v in self.counts.items()}
