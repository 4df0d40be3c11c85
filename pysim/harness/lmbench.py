"""The lmbench 2.0 timing harness (Staelin & McVoy, USENIX ATC 1998, §6), over any clock.

A *clock* is anything with ``run(n) -> seconds``: the elapsed time, as the
clock reads it, of ``n`` iterations of the body being measured. For real
measurements that is a compiled loop (:mod:`pysim.harness.runners`); for the
papers about measurement itself it is :class:`pysim.harness.twin.SimulatedClock`,
a timer with a resolution, interrupts and a competing process. The same
algorithm runs on both:

* :func:`auto_size`: grow the iteration count until a run lasts at least 95%
  of the interval wanted (x10 while a run is under 150 us, else x1.1 times
  the ratio);
* :func:`compute_enough`: the shortest interval (100 ms, else 1 s, unless
  a shorter one passes) at which runs of 100.0, 100.5, 101.0 and 101.5% of the
  iterations read as 100.0, 100.5, 101.0 and 101.5% of the time, within 0.1%;
* :func:`loop_overhead`: from a one-copy and a two-copy loop,
  L = 2 T1/N1 - T2/N2 per iteration;
* :func:`bench`: TRIES runs of the sized loop; the median (or the minimum).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

TRIES = 11
SHORT_RUN_S = 150e-6  # §6.4: below this, multiply the count by ten
INTERVALS_S = (0.001, 0.01, 0.1, 1.0)
JIGGLE = (1.0, 1.005, 1.010, 1.015)  # §6.1: run lengths that must read proportionally
JIGGLE_TOLERANCE = 0.001


@dataclass(frozen=True)
class BenchResult:
    """What :func:`bench` measured: seconds per iteration over the tries, the count, and the statistic."""

    iterations: int
    per_iteration_s: tuple  # every try, in order
    statistic: str          # "median" or "min"
    enough_s: float

    @property
    def value_s(self) -> float:
        """The reported seconds per iteration: the median, or the minimum, of the tries."""
        f = min if self.statistic == "min" else statistics.median
        return f(self.per_iteration_s)


def auto_size(clock, enough_s: float, *, start: int = 1, max_iterations: int = 10 ** 12) -> int:
    """The iteration count whose run lasts at least 95% of ``enough_s`` (§6.4)."""
    if not enough_s > 0:
        raise ValueError(f"enough_s must be > 0, got {enough_s!r}")
    n = max(1, int(start))
    while n < max_iterations:
        t = clock.run(n)
        if t >= 0.95 * enough_s:
            return n
        if t < SHORT_RUN_S or t <= 0:
            n *= 10
        else:
            n = max(n + 1, int(math.ceil(n * 1.1 * enough_s / t)))
    raise RuntimeError(f"the loop did not reach {enough_s} s within {max_iterations} iterations")


def proportional(clock, enough_s: float) -> bool:
    """True when runs of 100/100.5/101/101.5% of the sized count take proportionally as long (within 0.1%)."""
    n = auto_size(clock, enough_s)
    base = clock.run(n)
    if base <= 0:
        return False
    for k in JIGGLE[1:]:
        t = clock.run(int(round(n * k)))
        if abs(t / base - k) > JIGGLE_TOLERANCE * k:
            return False
    return True


def compute_enough(clock, intervals=INTERVALS_S) -> float:
    """The shortest interval of ``intervals`` at which the clock measures the loop to 1% (§6.1)."""
    for interval in intervals:
        if proportional(clock, interval):
            return interval
    return intervals[-1]


def loop_overhead(one_copy, two_copies, enough_s: float) -> float:
    """Seconds of loop overhead per iteration from a one-copy and a two-copy loop (§6.2):
    T1 = N1 (L + W), T2 = N2 (L + 2W), so L = 2 T1/N1 - T2/N2."""
    n1, n2 = auto_size(one_copy, enough_s), auto_size(two_copies, enough_s)
    return 2 * one_copy.run(n1) / n1 - two_copies.run(n2) / n2


def bench(clock, enough_s: float, *, tries: int = TRIES, statistic: str = "median",
          overhead_s: float = 0.0) -> BenchResult:
    """Size the loop once, run it ``tries`` times, subtract ``overhead_s`` per iteration (§6.3)."""
    if statistic not in ("median", "min"):
        raise ValueError(f"statistic must be 'median' or 'min', got {statistic!r}")
    if tries < 1:
        raise ValueError(f"tries must be >= 1, got {tries!r}")
    n = auto_size(clock, enough_s)
    per = tuple(clock.run(n) / n - overhead_s for _ in range(tries))
    return BenchResult(n, per, statistic, enough_s)
