"""A simulated twin of a measurement: the clock a benchmark reads on a period machine.

:class:`SimulatedClock` answers ``run(n)`` (what :mod:`pysim.harness.lmbench`
asks any clock) with what a timer would have read for ``n`` iterations of a
body that truly takes ``per_iteration_s``:

* the loop's own overhead, ``loop_overhead_s`` per iteration;
* interrupts: a Poisson stream of ``interrupt_rate_per_s``, each taking
  ``interrupt_s`` of the CPU;
* a competing CPU-bound process holding ``competitor_share`` of the CPU in
  time slices of ``quantum_s``: the measured loop gets the rest, so its wall
  time stretches once the run spans several slices;
* the timer: readings are multiples of ``resolution_s`` (the run starts at a
  random phase of the tick), and each reading costs ``call_overhead_s``.

Every draw comes from the clock's own ``rng``, so a seed fixes a whole
measurement campaign.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from pysim.rng import make_rng


@dataclass
class SimulatedClock:
    """What a timer reads for n iterations of a body on a machine with interference (see module doc)."""

    per_iteration_s: float
    resolution_s: float = 1e-6
    call_overhead_s: float = 0.0
    loop_overhead_s: float = 0.0
    interrupt_rate_per_s: float = 0.0
    interrupt_s: float = 0.0
    competitor_share: float = 0.0
    quantum_s: float = 0.01
    rng: object = 0
    _gen: object = field(init=False, repr=False)

    def __post_init__(self):
        for name in ("per_iteration_s", "resolution_s", "call_overhead_s", "loop_overhead_s",
                     "interrupt_rate_per_s", "interrupt_s", "quantum_s"):
            v = getattr(self, name)
            if not (v >= 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
        if not 0 <= self.competitor_share < 1:
            raise ValueError(f"competitor_share must be in [0, 1), got {self.competitor_share!r}")
        if self.quantum_s <= 0 and self.competitor_share > 0:
            raise ValueError("quantum_s must be > 0 when a competitor shares the CPU")
        self._gen = make_rng(self.rng)

    def true_elapsed(self, n: int) -> float:
        """Wall-clock seconds of n iterations with the interference, before the timer reads them."""
        work = n * (self.per_iteration_s + self.loop_overhead_s) + self.call_overhead_s
        if self.interrupt_rate_per_s > 0 and self.interrupt_s > 0:
            # interrupts arriving while the loop runs lengthen it, and more may arrive meanwhile
            expected = work * self.interrupt_rate_per_s / max(1e-12, 1 - self.interrupt_rate_per_s * self.interrupt_s)
            work += self._gen.poisson(expected) * self.interrupt_s
        if self.competitor_share > 0:
            # round robin: for each of our quanta the competitor runs share/(1-share) of one
            ours = self.quantum_s
            theirs = ours * self.competitor_share / (1 - self.competitor_share)
            phase = self._gen.uniform(0, ours)  # where in our quantum the run starts
            switches = math.floor((phase + work) / ours)
            work += switches * theirs
        return work

    def read(self, elapsed_s: float) -> float:
        """What a timer of this resolution reads for an interval of ``elapsed_s``."""
        if self.resolution_s == 0:
            return elapsed_s
        phase = self._gen.uniform(0, self.resolution_s)
        ticks = math.floor((phase + elapsed_s) / self.resolution_s)
        return ticks * self.resolution_s

    def run(self, n: int) -> float:
        """Seconds the timer reads for n iterations."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n!r}")
        return self.read(self.true_elapsed(int(n)))
