"""Closed-loop clients for models on the engine: N users, each with one request outstanding.

Each user thinks (a random or fixed time), issues a request, waits for it to
finish, and thinks again, as the terminals of a time-sharing system or the
load generators of a web benchmark do. The request is a generator the model
provides (a process body: it yields the events the request waits on).

>>> from pysim.engine import Simulation
>>> sim = Simulation()
>>> server = sim.resource(1)
>>> def request(user):
...     with server.request() as r:
...         yield r
...         yield sim.timeout(0.5)
>>> clients = ClosedLoop(sim, users=3, request=request, think_s=1.0, rng=0)
>>> sim.run(until=1000.0)
>>> 0 < clients.summary()["throughput_per_s"] <= 2.0    # the server caps it at 1 / 0.5 s
True
"""
from __future__ import annotations

import math

from pysim.rng import make_rng

THINK = ("exponential", "fixed")


class ClosedLoop:
    """``users`` clients on ``sim``, each running ``request(user)`` between think times of mean ``think_s``.

    Completions and response times are counted from ``warmup_s`` on.
    """

    def __init__(self, sim, users: int, request, *, think_s: float, think: str = "exponential",
                 warmup_s: float = 0.0, rng=0):
        if isinstance(users, bool) or not isinstance(users, int) or users < 1:
            raise ValueError(f"users must be an int >= 1, got {users!r}")
        if not (think_s >= 0 and math.isfinite(think_s)):
            raise ValueError(f"think_s must be finite and >= 0, got {think_s!r}")
        if think not in THINK:
            raise ValueError(f"think must be one of {THINK}, got {think!r}")
        if not warmup_s >= 0:
            raise ValueError(f"warmup_s must be >= 0, got {warmup_s!r}")
        self.sim, self.request, self.think_s, self.think, self.warmup_s = sim, request, think_s, think, warmup_s
        self.completions = 0                   # requests that ended after the warm-up (throughput)
        self.timed, self.response_sum_s = 0, 0.0  # requests that began after it (response time)
        streams = make_rng(rng).spawn(users)
        self.users = [sim.process(self._user(i, streams[i])) for i in range(users)]

    def _pause(self, gen) -> float:
        if self.think_s == 0:
            return 0.0
        return gen.exponential(self.think_s) if self.think == "exponential" else self.think_s

    def _user(self, user, gen):
        sim = self.sim
        while True:
            yield sim.timeout(self._pause(gen))
            start = sim.now
            yield sim.process(self.request(user))
            if sim.now >= self.warmup_s:
                self.completions += 1
            if start >= self.warmup_s:
                self.timed += 1
                self.response_sum_s += sim.now - start

    def summary(self, until: float | None = None) -> dict:
        """Throughput (requests completed after the warm-up, per second of the window) and mean response
        time (s) of the requests that began after it (so neither counts the warm-up's transient)."""
        end = self.sim.now if until is None else until
        window = end - self.warmup_s
        if not window > 0:
            raise ValueError("nothing measured yet: the run has not passed its warm-up")
        mean = self.response_sum_s / self.timed if self.timed else math.nan
        return {"throughput_per_s": self.completions / window, "mean_response_s": mean,
                "completions": self.completions}
