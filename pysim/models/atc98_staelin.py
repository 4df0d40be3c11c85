"""mhz: Anatomy of a micro-benchmark (Staelin & McVoy, USENIX ATC 1998).

Regenerates the §4 worked example of the GCD method (``gcd_example``), the
§8 population results (``section8``: 643 volunteer runs, how many mhz
accepted, how many it got within 5%, the machine with a CPU-bound
competitor, the Cray), Figure 5's error distribution (``figure5``), and the
§1/§6 harness claims (``harness``: the interval the harness chooses for a
10 ms and a 1 us clock, how long mhz then measures, and how accurately).

First principles:

* mhz's estimator exactly as §4.1, §7 and Figure 2 give it
  (:func:`gcd_subsets`, :func:`estimate_mhz`, :func:`compute_mhz`): the
  dataset of times, their pairwise differences and the origin; guesses
  b_i = min(e)/i, i = 1..5, each refined by a least-squares line through
  (round(y/b_i), y), a later guess kept only if i^2 chi^2 beats the best
  chi^2; every subset of the nine expressions with two times 5% apart, after
  dropping times far from the median; the mode of the subsets' answers in
  whole MHz; the answer from the minima accepted only if the next larger
  values give the same within 1% or 1 MHz; three attempts.
* the measurement (:class:`MhzRun`), on lmbench 2.0's harness
  (:mod:`pysim.harness`) over its simulated twin clock: each expression is
  100 dependent copies in a loop (§5, Figure 3) taking a whole number of
  cycles; the harness finds the interval (§6.1), measures and subtracts the
  loop overhead as the version the volunteers ran did (§6.3, §8), sizes each
  loop (§6.4), and mhz takes eleven tries per expression, the tries in the
  outer loop and the nine expressions in the inner one (§7). A machine's
  clock reads in steps of its timer's resolution (10 ms or 1 us, §1), loses
  time to other work waking at random in short bursts, and, on §8's machine
  with a CPU-bound competitor, to that competitor's turns.
* a population of volunteer runs (:func:`volunteers`, :func:`population`)
  over clocks from a 33 MHz 68040 to the 600 MHz Cray T3E, each machine's
  share of the CPU taken by other work drawn from an exponential distribution.

Calibrated (see CALIBRATION): the mean share of the CPU other work takes on
a volunteer's machine, on Figure 5's 82% within 1%; how far the Cray's loop
overhead was over-measured, on its 633 MHz. Taken as given (INPUTS): the
number of runs, the ten runs on the machine with a competitor, the Cray's one
run and true clock, and the worked example's times and cycle counts.
Everything else is predicted: how many runs mhz accepts, how many land within
2% and 5%, what the competitor does to its runs, the worked example's GCDs.

The worked example is printed inconsistently: its times (11.1 ns for 2
cycles, 16.6 ns for 3) and the GCD they give describe a 180 MHz clock, not
the 120 MHz the text names (whose cycle is 8.33 ns). The model takes the
times, which the printed cycle counts and GCDs agree with; the MHz labels are
doubtful in the ledger.

Then vs now (:func:`measure_now`, :func:`then_and_now`, :func:`expressions_now`):
the nine expressions compiled as C and timed for real on this machine by the
same harness (:func:`mhz_now`), at 1 ms and at long intervals, alone and
beside a CPU-bound process pinned to the same CPU (started and stopped by the
measurement), the same estimator on the real times, against the clock the
machine reports; and the cost and step of reading its clock (:func:`clock_now`).

Not reproduced: Figure 6 (its MHz and OS columns are lost to OCR), the
Appendix's mmap/read remarks, and lmbench 1.0's "about 90%" of platforms
(see papers/atc98_staelin/paper.yaml).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.harness import (
    SimulatedClock,
    Snippet,
    auto_size,
    compute_enough,
    loop_overhead,
    measure,
)
from pysim.harness.lmbench import INTERVALS_S, TRIES
from pysim.harness.runners import REAL_INTERVALS_S, PipeClock, build
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.rng import make_rng, spawn
from pysim.units import MHz, ms, ns, us
from pysim.harness.exclusive import exclusive, one_core

#: The nine expressions of §5.2, in order (``p=*p`` chases a pointer that points to itself).
EXPRESSIONS = ("p=*p;", "a^=a+a;", "a^=a+a+a;", "a>>=b;", "a>>=a+a;", "a^=a<<b;", "a^=a+b;", "a+=(a+b)&07;",
               "a++;a^=1;a<<=1;")
COPIES = 100            # §4, Figure 3: each expression repeated a hundred times per loop iteration
SHIFT = EXPRESSIONS.index("a>>=b;")  # one dependent shift: one cycle on nearly every CPU
ATTEMPTS = 3            # §7: "on the third failure, it tells the user the system is too busy"
BUCKET_PCT = 0.5        # §8: each bucket of Figure 5 represents 0.5% error
WITHIN_PCT = 5.0        # §8: "within 5%"; Figure 5 shows the runs within it


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in seconds, clocks in Hz unless the name says otherwise."""

    # --- mhz's estimator (§4.1, §7, Figure 2) ---
    max_count: int = stated(6, "Figure 2: MAX_COUNT 6, guesses i = 1 .. MAX_COUNT-1 (the text says 1..6)", ge=2)
    accept_rel: float = stated(0.01, "§7: the minima and the next larger values agree within 1% ...", lt=1)
    accept_mhz: float = stated(1.0, "§7: ... or 1MHz")
    classes_rel: float = stated(0.05, "§7: points are different if the values differ by more than 5%", lt=1)
    filter_factor: float = assumed(20.0, "§7: filter_data() keeps results 'within a few multiples' of the median; "
                                         "lmbench's source keeps 1/20 to 20 times the median", gt=1)
    use_minimum: bool = stated(True, "§7: mhz uses the minimum experimental result for each expression")
    use_subsets: bool = stated(True, "§7: the GCD of every valid subset, and the mode of the GCDs")
    weighted_guesses: bool = stated(True, "§4.1: the i^2-weighted chi-squared prevents choosing multiples")
    tries: int = stated(TRIES, "§6: BENCH() does eleven experiments", ge=2)
    # --- the machine and its expressions (§3, §5) ---
    cycles: tuple = assumed((2, 2, 3, 1, 2, 2, 2, 3, 3),
                            "cycles of each expression (EXPRESSIONS order) on a scalar in-order CPU of 1998 with "
                            "one-cycle ALU operations and shifts and a two-cycle load: p=*p one load; a^=a+a an "
                            "add and a xor; a^=a+a+a two adds and a xor; a>>=b one shift; ...")
    loop_cycles: float = assumed(2.0, "the loop's decrement and branch, per iteration of 100 copies", ge=0)
    subtract_loop_overhead: bool = stated(True, "§8: the version of mhz in the experiments included the loop "
                                                "overhead, measured by §6.3's two loops")
    chase_cycles: float = assumed(2.0, "one load of §6.3's pointer-chasing overhead loops (as p=*p)")
    # --- the clocks of 1998 (§1, §6) ---
    coarse_timer_s: float = stated(10 * ms, "§1: low-resolution clocks, as poor as 10,000,000 nano-seconds")
    fine_timer_s: float = stated(1 * us, "§1: others have 1,000 nano-second resolution clocks")
    coarse_share: float = assumed(0.25, "the share of volunteers' systems with a 10 ms gettimeofday(); §1 names "
                                        "both kinds, the text gives no split", ge=0, le=1)
    auto_interval: bool = stated(True, "§6.1: compute_enough() finds the interval that measures to 1%")
    fixed_interval_s: float = assumed(10 * ms, "an interval chosen without looking at the clock (the harness "
                                               "switched off): one 1998 clock tick")
    burst_s: float = assumed(1 * ms, "one wakeup of other work on a volunteer's machine (a daemon, the X server, "
                                     "a network packet's processing): a context switch and a few hundred "
                                     "microseconds of work on a 1998 CPU")
    quantum_s: float = assumed(100 * ms, "the time slice a CPU-bound competitor gets in turn with mhz: 4.4BSD's "
                                         "round-robin interval (hz/10); SVR4 and Linux 2.0 gave 20-200 ms")
    # --- the volunteers (§8) ---
    runs: int = given(643, "§8: results for 643 runs of mhz", ge=1)
    clock_mhz_low: float = assumed(33.0, "the slowest machines named: a 33 MHz 68040 (Figure 6's first row), "
                                         "the 68020 (§8)")
    clock_mhz_high: float = stated(600.0, "§8: the fastest machine named, the Cray T3E at 600MHz")
    busy_share_mean: float = calibrated(0.0167, "mean share of the CPU that other work, waking at random in bursts, "
                                                "takes on a volunteer's machine (exponentially distributed)", lt=0.5)
    hog_runs: int = given(10, "§8: 10 runs from one machine with another CPU-bound process", ge=0)
    hog_share: float = stated(0.5, "§8: another CPU-bound process consuming 50% of the processor time",
                              ge=0, lt=1)
    cray_runs: int = given(1, "§8: one of the remaining runs was on a Cray T3E", ge=0)
    cray_mhz: float = given(600.0, "§8: the Cray's true clock, 600MHz")
    cray_excess_loop_cycles: float = calibrated(12.3, "how far the Cray's loop overhead was over-measured, "
                                                      "cycles per iteration of 100 copies", ge=0)
    # --- the worked example (§4) ---
    example_times_ns: tuple = given((11.1, 16.6), "§4: SHR 11.1ns, SHR;ADD 16.6ns")
    example_common_times_ns: tuple = given((11.1, 22.2), "§4: SHR 11.1ns, SHR;ADD;SUB 22.2ns")
    example_cycles: tuple = given((2, 3), "§4: SHR (2 cycles), SHR;ADD (3 cycles)")
    example_common_cycles: tuple = given((2, 4), "§4: SHR (2 cycles), SHR;ADD;SUB (4 cycles)")
    # --- §1: the harness's example machine ---
    example_clock_hz: float = stated(200 * MHz, "§1: processors with cycle times of 5 nano-seconds")

    def __post_init__(self):
        super().__post_init__()
        for name in ("cycles", "example_times_ns", "example_common_times_ns", "example_cycles",
                     "example_common_cycles"):
            v = getattr(self, name)
            if not (isinstance(v, tuple) and len(v) >= 2 and all(isinstance(x, (int, float)) and x > 0 for x in v)):
                raise ValueError(f"{name} must be a tuple of at least two numbers > 0, got {v!r}")
        if len(self.cycles) != len(EXPRESSIONS):
            raise ValueError(f"cycles must give one count per expression ({len(EXPRESSIONS)}), got {self.cycles!r}")
        if len(self.example_times_ns) != len(self.example_cycles) or \
                len(self.example_common_times_ns) != len(self.example_common_cycles):
            raise ValueError("the worked example gives one cycle count per execution time")
        if not self.clock_mhz_low < self.clock_mhz_high:
            raise ValueError(f"clock_mhz_low must be below clock_mhz_high, got {self.clock_mhz_low!r}")


_DEFAULTS = Params()


def _with_the_coprime_sequence(p: Params) -> dict:
    """The common-factor example's times and cycles with the coprime example's longer sequence added."""
    (short, long_), (c_short, c_long) = p.example_common_times_ns, p.example_common_cycles
    return {"example_common_times_ns": (short, p.example_times_ns[-1], long_),
            "example_common_cycles": (c_short, p.example_cycles[-1], c_long)}


CALIBRATION = (
    Fit("busy_share_mean", "figure5", "1.0", "cumulative_pct", (0.005, 0.04)),
    Fit("cray_excess_loop_cycles", "section8", "Cray T3E", "reported_mhz", (0.0, 14.0)),
)
INPUTS = (
    Inputs(("runs",), (("section8", "all", "runs"),), "the population's size, taken as given"),
    Inputs(("hog_runs",), (("section8", "CPU-bound competitor", "runs"),),
           "how many runs came from the machine with a CPU-bound competitor, taken as given"),
    Inputs(("cray_runs", "cray_mhz"), (("section8", "Cray T3E", "runs"), ("section8", "Cray T3E", "clock_mhz")),
           "the Cray's one run and its true clock, taken as given"),
    Inputs(("example_times_ns", "example_common_times_ns", "example_cycles", "example_common_cycles"),
           cells("gcd_example", ["coprime", "common factor"],
                 ["time_short_ns", "time_long_ns", "cycles_short", "cycles_long"]),
           "the worked example's execution times and true cycle counts, taken as given"),
)
COUNTERFACTUALS = (
    Counterfactual("common-factor", {"cycles": (4, 4, 6, 2, 4, 4, 4, 6, 6)},
                   "every expression takes an even number of cycles: no two counts relatively prime"),
    Counterfactual("coprime-third", _with_the_coprime_sequence(_DEFAULTS),
                   "the common-factor example with the relatively prime sequence (SHR;ADD, 3 cycles) added"),
    Counterfactual("smallest-is-one-tick", {"max_count": 2},
                   "gcd() takes the smallest time as one tick, guessing no other cycle count"),
    Counterfactual("overhead-measured-right", {"cray_excess_loop_cycles": 0.0},
                   "the Cray's loop overhead measured as on any other machine"),
    Counterfactual("fixed-interval", {"auto_interval": False},
                   "the harness times a fixed 10 ms interval whatever the clock's resolution"),
)

# --- §4.1: the greatest common divisor of noisy times (Figure 2) ------------------------------

@functools.lru_cache(maxsize=16)
def subsets(k: int) -> np.ndarray:
    """Every subset of k expressions with at least two members, as a (subsets, k) boolean mask."""
    masks = ((np.arange(1, 1 << k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
    return masks[masks.sum(axis=1) >= 2]


def gcd_subsets(values, member: np.ndarray, *, max_count: int = 6, weighted: bool = True) -> np.ndarray:
    """Figure 2's gcd() of the times ``values`` (k,) restricted to each row of ``member`` (rows, k).

    A row's dataset is its times, their pairwise differences and the origin. For i = 1 ..
    max_count-1 the guess b_i = min(e)/i turns every point into a whole number of ticks
    round(y/b_i), and a least-squares line y = a + b x through (ticks, y) refines the tick to its
    slope b. The first guess is kept unless a later one has i^2 chi^2 below the best chi^2 so far
    (``weighted=False``: plain chi^2, which lets a fraction of the tick win). Returns the tick of
    each row, in the unit of ``values`` (NaN where a row has fewer than two times).
    """
    v = np.asarray(values, dtype=float)
    member = np.atleast_2d(np.asarray(member, dtype=bool))
    k, guesses = len(v), np.arange(1, max_count)
    i, j = np.triu_indices(k, 1)
    y = np.concatenate([v, np.abs(v[i] - v[j]), [0.0]])                    # every point, (P,)
    points = np.concatenate([member, member[:, i] & member[:, j], np.ones((len(member), 1), bool)], axis=1)
    m = points.astype(float)                                                 # rows x P
    n, sy, syy = m.sum(axis=1), m @ y, m @ (y * y)
    smallest = np.where(member, v[None, :], np.inf).argmin(axis=1)          # which time is min(e)
    # for the rows whose smallest time is s: every point in whole ticks when time s is guesses[g]
    # ticks, and the sums a least-squares line needs (x, x^2, x y), guesses x 3 per row
    sums = np.empty((len(member), len(guesses), 3))
    for s in np.unique(smallest):
        ticks = np.floor(y[None, :] * (guesses / v[s])[:, None] + 0.5)        # guesses x P
        rows = smallest == s
        quantities = np.concatenate([ticks, ticks * ticks, ticks * y])       # (3 x guesses) x P
        sums[rows] = (m[rows] @ quantities.T).reshape(-1, 3, len(guesses)).transpose(0, 2, 1)
    sx, sxx, sxy = sums[:, :, 0], sums[:, :, 1], sums[:, :, 2]
    n, sy, syy = n[:, None], sy[:, None], syy[:, None]
    with np.errstate(all="ignore"):
        det = n * sxx - sx * sx
        b = np.where(det > 0, (n * sxy - sx * sy) / det, np.nan)
        a = (sy - b * sx) / n
        chi2 = syy - 2 * a * sy - 2 * b * sxy + n * a * a + 2 * a * b * sx + b * b * sxx
    chi2 = np.where(chi2 > syy * 1e-12, chi2, 0.0)                          # below this: an exact fit
    best, best_chi2 = b[:, 0], chi2[:, 0]
    for g in range(1, len(guesses)):
        factor = guesses[g] ** 2 if weighted else 1
        better = factor * chi2[:, g] < best_chi2
        best = np.where(better, b[:, g], best)
        best_chi2 = np.where(better, chi2[:, g], best_chi2)
    return np.where(member.sum(axis=1) >= 2, best, np.nan)


def gcd_tick(times, **options) -> float:
    """The clock tick gcd() finds for one set of times (in the unit of the times)."""
    t = np.asarray(times, dtype=float)
    return float(gcd_subsets(t, np.ones((1, len(t)), bool), **options)[0])


def _median(values: np.ndarray, member: np.ndarray) -> np.ndarray:
    """Per row of ``member``, the median of the member values (the mean of the middle two for an even count)."""
    s = np.sort(np.where(member, values[None, :], np.nan), axis=1)  # NaN last
    n = member.sum(axis=1)
    r = np.arange(len(member))
    return 0.5 * (s[r, np.maximum((n - 1) // 2, 0)] + s[r, np.maximum(n // 2, 0)])


def valid_subsets(values: np.ndarray, p: Params) -> np.ndarray:
    """§7's subsets of the expressions, as a mask: filter_data() drops the times far from the
    subset's median (more than filter_factor times off), and a subset stays only if two of its
    times differ by more than classes_rel of its median (classes() >= 2)."""
    member = subsets(len(values)) if p.use_subsets else np.ones((1, len(values)), bool)
    member = member & np.isfinite(values)[None, :]
    med = _median(values, member)[:, None]
    with np.errstate(invalid="ignore"):
        member = member & (values[None, :] > med / p.filter_factor) & (values[None, :] < med * p.filter_factor)
    s = np.sort(np.where(member, values[None, :], np.nan), axis=1)
    with np.errstate(invalid="ignore"):
        two_classes = (np.diff(s, axis=1) > p.classes_rel * _median(values, member)[:, None]).any(axis=1)
    return member[two_classes & (member.sum(axis=1) >= 2)]


def mode_mhz(mhz: np.ndarray) -> float:
    """The most common value after rounding to whole MHz; the smallest of equally common ones."""
    mhz = mhz[np.isfinite(mhz) & (mhz > 0)]
    if not len(mhz):
        return float("nan")
    values, counts = np.unique(np.floor(mhz + 0.5), return_counts=True)
    return float(values[np.argmax(counts)])


def estimate_mhz(per_expression_s, p: Params) -> float:
    """mhz's answer from one time per expression (seconds; NaN for a missing one): the mode of
    the GCD's MHz over every valid subset (§7), or with ``use_subsets=False`` the GCD of all the
    times at once. NaN when no subset is valid."""
    v = np.asarray(per_expression_s, dtype=float) / ns
    member = valid_subsets(v, p)
    if not len(member):
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        return mode_mhz(1e3 / gcd_subsets(v, member, max_count=p.max_count, weighted=p.weighted_guesses))


def compute_mhz(tries_s: np.ndarray, p: Params) -> tuple[float, bool]:
    """§7: (MHz, accepted) from ``tries_s`` (tries x expressions, seconds per expression).

    The answer from each expression's minimum is accepted if the next larger values give the
    same within 1% or 1 MHz. With ``use_minimum=False`` the median takes the minimum's place
    (and the value above the median the next larger's).
    """
    s = np.sort(np.asarray(tries_s, dtype=float), axis=0)
    at = 0 if p.use_minimum else (len(s) - 1) // 2
    first, second = estimate_mhz(s[at], p), estimate_mhz(s[min(at + 1, len(s) - 1)], p)
    if not (math.isfinite(first) and math.isfinite(second)):
        return first, False
    agree = abs(first - second) / first <= p.accept_rel or abs(first - second) <= p.accept_mhz
    return first, bool(agree)


# --- §6, §7: one run of mhz on a simulated 1998 machine ----------------------------------------

@dataclass(frozen=True)
class Machine:
    """A volunteer's machine, as mhz's measurement sees it."""

    clock_hz: float
    timer_s: float                  # resolution of gettimeofday()
    busy_share: float = 0.0         # share of the CPU other work takes, waking at random in bursts
    competitor_share: float = 0.0   # share a CPU-bound competitor holds, in turns of one time slice
    excess_loop_cycles: float = 0.0  # how far the loop overhead is over-measured (the Cray's bug)
    group: str = "volunteers"


class TimedClock:
    """A clock that adds up the time its runs take: how long the measurement lasts."""

    def __init__(self, clock):
        self.clock, self.spent_s = clock, 0.0

    def run(self, n: int) -> float:
        t = self.clock.run(n)
        self.spent_s += t
        return t


class MhzRun:
    """One run of the mhz the volunteers ran, on the lmbench 2.0 harness over a simulated clock.

    Each expression is a loop of 100 dependent copies taking ``cycles`` each, plus the loop's
    own cycles (§5, Figure 3). The harness finds the interval once (§6.1), measures the loop
    overhead with a one-copy and a two-copy loop (§6.3) and subtracts it, sizes each
    expression's loop (§6.4); mhz then takes ``tries`` measurements with the tries outside and
    the expressions inside (§7), and up to three attempts until the minima and next larger
    values agree.
    """

    def __init__(self, machine: Machine, p: Params, rng=0):
        self.m, self.p = machine, p
        gens = spawn(rng, len(p.cycles) + 2)
        self.clocks = [self._clock(COPIES * c, g) for c, g in zip(p.cycles, gens, strict=False)]
        self.one_copy, self.two_copies = self._clock(p.chase_cycles, gens[-2]), self._clock(2 * p.chase_cycles,
                                                                                             gens[-1])

    def _clock(self, work_cycles: float, rng) -> TimedClock:
        m, p = self.m, self.p
        return TimedClock(SimulatedClock(per_iteration_s=work_cycles / m.clock_hz,
                                         loop_overhead_s=p.loop_cycles / m.clock_hz, resolution_s=m.timer_s,
                                         interrupt_rate_per_s=m.busy_share / p.burst_s, interrupt_s=p.burst_s,
                                         competitor_share=m.competitor_share, quantum_s=p.quantum_s, rng=rng))

    def interval_s(self) -> float:
        """§6.1: the interval that measures to 1% (or a fixed one, the harness switched off)."""
        return compute_enough(self.clocks[0], INTERVALS_S) if self.p.auto_interval else self.p.fixed_interval_s

    def overhead_s(self, enough_s: float) -> float:
        """§6.3: the loop overhead per iteration the alpha mhz subtracted (none once fixed)."""
        if not self.p.subtract_loop_overhead:
            return 0.0
        measured = loop_overhead(self.one_copy, self.two_copies, enough_s)
        return max(0.0, measured) + self.m.excess_loop_cycles / self.m.clock_hz

    def tries_s(self, enough_s: float, overhead_s: float) -> np.ndarray:
        """§7: tries x expressions, seconds per expression, the tries in the outer loop."""
        sizes = [auto_size(c, enough_s) for c in self.clocks]
        out = np.empty((self.p.tries, len(self.clocks)))
        for t in range(self.p.tries):
            for k, (clock, n) in enumerate(zip(self.clocks, sizes, strict=False)):
                out[t, k] = (clock.run(n) / n - overhead_s) / COPIES
        return out

    def run(self) -> dict:
        """mhz's answer, whether it was accepted, the attempts it took, the interval, the seconds the
        measurement ran, and the worst error of an expression's minimum against its true time (%)."""
        enough = self.interval_s()
        overhead = self.overhead_s(enough)
        mhz, accepted, attempts, tries = float("nan"), False, 0, None
        while not accepted and attempts < ATTEMPTS:
            attempts += 1
            tries = self.tries_s(enough, overhead)
            mhz, accepted = compute_mhz(tries, self.p)
        spent = sum(c.spent_s for c in (*self.clocks, self.one_copy, self.two_copies))
        true_s = np.asarray(self.p.cycles) / self.m.clock_hz
        worst = float(np.max(np.abs(tries.min(axis=0) / true_s - 1)))
        return {"mhz": mhz, "accepted": accepted, "attempts": attempts, "enough_s": enough, "seconds": spent,
                "timing_error_pct": 100 * worst}


# --- §8: the volunteers' runs ---------------------------------------------------------------

def volunteers(p: Params, rng=0) -> list[Machine]:
    """The machines of one population of ``p.runs`` runs.

    A volunteer's machine has a clock log-uniform between the slowest and the fastest named, a
    10 ms timer (a share ``coarse_share`` of them) or a 1 us one, and other work waking at random
    in bursts of ``burst_s`` that take a share of the CPU, exponential with mean
    ``busy_share_mean``. The ``hog_runs`` runs of the machine with a CPU-bound competitor add
    ``hog_share`` held in turns; the paper names neither its clock nor its timer, so each of its
    runs draws them as a volunteer's. The Cray's ``cray_runs`` runs have its true clock, a 1 us
    timer, nothing else running, and its loop overhead over-measured by
    ``cray_excess_loop_cycles``.
    """
    g = make_rng(rng)
    n = p.runs - p.hog_runs - p.cray_runs
    if n < 0:
        raise ValueError(f"runs ({p.runs}) must cover hog_runs ({p.hog_runs}) and cray_runs ({p.cray_runs})")
    k = n + p.hog_runs
    clocks = np.exp(g.uniform(math.log(p.clock_mhz_low), math.log(p.clock_mhz_high), k)) * MHz
    timers = np.where(g.uniform(size=k) < p.coarse_share, p.coarse_timer_s, p.fine_timer_s)
    busy = np.minimum(g.exponential(p.busy_share_mean, k), 0.5)
    out = [Machine(float(f), float(t), float(b)) for f, t, b in zip(clocks[:n], timers[:n], busy[:n], strict=False)]
    out += [Machine(float(f), float(t), float(b), p.hog_share, group="CPU-bound competitor")
            for f, t, b in zip(clocks[n:], timers[n:], busy[n:], strict=False)]
    out += [Machine(p.cray_mhz * MHz, p.fine_timer_s, excess_loop_cycles=p.cray_excess_loop_cycles,
                    group="Cray T3E")] * p.cray_runs
    return out


def _replicas(quick: bool) -> int:
    """Populations simulated: the paper's 643 runs once in quick mode, four times in full."""
    return 1 if quick else 4


#: Params fields that shape the population but not one run on a given machine: a run is cached
#: without them, so a change of population (a counterfactual Cray) reruns only what it changes.
_POPULATION_ONLY = ("runs", "clock_mhz_low", "clock_mhz_high", "busy_share_mean", "hog_runs", "hog_share",
                    "cray_runs", "cray_mhz", "cray_excess_loop_cycles", "coarse_share")


@functools.lru_cache(maxsize=1 << 15)
def _one_run(machine: Machine, p: Params, seed: tuple) -> tuple:
    """MhzRun(machine, p).run() on the generator of ``seed`` (a SeedSequence's entropy and spawn key)."""
    entropy, key = seed
    g = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))
    return tuple(MhzRun(machine, p, g).run().items())


@functools.lru_cache(maxsize=8)
def _population(p: Params, seed, replicas: int) -> pd.DataFrame:
    """Every run of ``replicas`` populations, one row each."""
    run_params = dataclasses.replace(p, **{f: getattr(_DEFAULTS, f) for f in _POPULATION_ONLY})
    rows = []
    for r, g in enumerate(spawn(seed, replicas)):
        machines_rng, runs_rng = g.spawn(2)
        machines = volunteers(p, machines_rng)
        for i, (m, child) in enumerate(zip(machines, runs_rng.bit_generator.seed_seq.spawn(len(machines)), strict=False)):
            res = dict(_one_run(m, run_params, (child.entropy, child.spawn_key)))
            rows.append({"replica": r, "run": i, "group": m.group, "clock_mhz": m.clock_hz / MHz,
                         "timer_s": m.timer_s, "busy_share": m.busy_share, **res})
    df = pd.DataFrame(rows)
    df["error_pct"] = 100 * (df["mhz"] / df["clock_mhz"] - 1)
    return df


def population(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Every simulated run: group, machine (clock_mhz, timer_s, busy_share), mhz's answer,
    accepted, attempts, the interval (enough_s), the seconds the measurement took, error_pct."""
    p = params or Params()
    seed = rng if isinstance(rng, (int, np.integer)) else make_rng(rng).integers(2 ** 63)
    return _population(p, int(seed), _replicas(quick)).copy()


# --- the artifacts ------------------------------------------------------------------------

def gcd_example(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4's worked example: the GCD of two instruction sequences' times, relatively prime cycle
    counts (2, 3) and counts with a common factor (2, 4).

    Index: case. Columns: time_short_ns, time_long_ns (the printed times), cycles_short,
    cycles_long (the printed true counts), gcd_ns (the tick gcd() finds), assigned_short,
    assigned_long (the counts it assigns), mhz (1/gcd), true_mhz (from the printed times and true
    counts), apparent_over_true (mhz / true_mhz).
    """
    p = params or Params()
    rows = []
    for case, times, true_cycles in (("coprime", p.example_times_ns, p.example_cycles),
                                     ("common factor", p.example_common_times_ns, p.example_common_cycles)):
        tick = gcd_tick(times, max_count=p.max_count, weighted=p.weighted_guesses)
        true_tick = times[0] / true_cycles[0]
        rows.append({"case": case, "time_short_ns": times[0], "time_long_ns": times[-1],
                     "cycles_short": true_cycles[0], "cycles_long": true_cycles[-1], "gcd_ns": tick,
                     "assigned_short": round(times[0] / tick), "assigned_long": round(times[-1] / tick),
                     "mhz": 1e3 / tick, "true_mhz": 1e3 / true_tick, "apparent_over_true": true_tick / tick})
    return pd.DataFrame(rows).set_index("case")


def _paper_counts(df: pd.DataFrame, p: Params) -> float:
    """How many populations ``df`` holds: counts are divided by it to read per the paper's runs."""
    return len(df) / p.runs


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5: the error distribution of the accepted runs within 5%, in 0.5% buckets.

    Index: error_pct, each bucket's upper edge (0.5 .. 5.0). Columns: runs (per the paper's 643
    runs), cumulative_pct (of the runs within 5%).
    """
    p = params or Params()
    df = population(p, rng=rng, quick=quick)
    err = df.loc[df["accepted"], "error_pct"].abs()
    err = err[err <= WITHIN_PCT].to_numpy()
    edges = np.arange(1, round(WITHIN_PCT / BUCKET_PCT) + 1) * BUCKET_PCT
    bucket = np.clip(np.ceil(err / BUCKET_PCT).astype(int) - 1, 0, len(edges) - 1)  # (0, 0.5], (0.5, 1.0], ...
    counts = np.bincount(bucket, minlength=len(edges))
    total = max(len(err), 1)
    out = pd.DataFrame({"error_pct": edges, "runs": counts / _paper_counts(df, p),
                        "cumulative_pct": 100 * np.cumsum(counts) / total})
    return out.set_index("error_pct")


def section8(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§8's population results, counted per the paper's 643 runs.

    Index: group ('all', 'CPU-bound competitor', 'others' (all but the competitor's machine),
    'volunteers' (neither the competitor's machine nor the Cray), 'Cray T3E'). Columns: runs,
    valid_runs (mhz accepted the data), within_5pct, beyond_5pct (accepted runs), mhz_over_clock
    (median of the accepted runs), reported_mhz (median), clock_mhz (median true clock).
    """
    p = params or Params()
    df = population(p, rng=rng, quick=quick)
    per = _paper_counts(df, p)
    groups = {"all": df, "CPU-bound competitor": df[df["group"] == "CPU-bound competitor"],
              "others": df[df["group"] != "CPU-bound competitor"], "volunteers": df[df["group"] == "volunteers"],
              "Cray T3E": df[df["group"] == "Cray T3E"]}
    rows = []
    for name, g in groups.items():
        ok = g[g["accepted"]]
        within = ok["error_pct"].abs() <= WITHIN_PCT
        rows.append({"group": name, "runs": len(g) / per, "valid_runs": len(ok) / per,
                     "within_5pct": within.sum() / per, "beyond_5pct": (~within).sum() / per,
                     "mhz_over_clock": float((ok["mhz"] / ok["clock_mhz"]).median()) if len(ok) else float("nan"),
                     "reported_mhz": float(ok["mhz"].median()) if len(ok) else float("nan"),
                     "clock_mhz": float(g["clock_mhz"].median()) if len(g) else float("nan")})
    return pd.DataFrame(rows).set_index("group")


def harness(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§1, §6: the harness on the §1 machine (a 5 ns cycle, nothing else running) with each of
    §1's timers.

    Index: timer ('10 ms', '1 us'). Columns (medians over the runs): enough_s (the interval the
    harness chooses), mhz_seconds (how long mhz measures), timing_error_pct (the worst
    expression's minimum against its true time), mhz_error_pct.
    """
    p = params or Params()
    runs = 3 if quick else 9
    rows = []
    for label, timer, g in zip(("10 ms", "1 us"), (p.coarse_timer_s, p.fine_timer_s), spawn(rng, 2), strict=False):
        machine = Machine(p.example_clock_hz, timer)
        res = [MhzRun(machine, p, child).run() for child in g.spawn(runs)]
        rows.append({"timer": label, "enough_s": np.median([r["enough_s"] for r in res]),
                     "mhz_seconds": np.median([r["seconds"] for r in res]),
                     "timing_error_pct": np.median([r["timing_error_pct"] for r in res]),
                     "mhz_error_pct": np.median([100 * (r["mhz"] * MHz / p.example_clock_hz - 1) for r in res])})
    return pd.DataFrame(rows).set_index("timer")


# --- then vs now: mhz run for real on this machine ------------------------------------------

#: Expression calls per timed body: the harness's loop calls mhz's 100-copy loop this many times
#: per iteration, so the call and the harness's own loop cost under 0.2% of an expression.
NOW_CALLS = 100

_PIN = r"""
long syscall(long number, ...);  /* not declared under the harness's _POSIX_C_SOURCE */
static int pin_to(int cpu) {
    unsigned long mask[16] = {0};
    mask[cpu / 64] = 1UL << (cpu % 64);
    return (int)syscall(SYS_sched_setaffinity, 0, sizeof mask, mask);
}
"""


def _hundred(expression: str) -> str:
    return " ".join([expression] * COPIES)


def expression_snippet(expression: str, cpu: int | None = None) -> Snippet:
    """One of mhz's expressions as Figure 3 builds it: 100 dependent copies in a loop inside a
    function of its own, with the variables in registers, called ``NOW_CALLS`` loop iterations
    per timed body; optionally pinned to ``cpu`` (the program stops if the kernel refuses)."""
    decls = (_PIN + f"""
typedef unsigned long TYPE;
static volatile TYPE one_v = 1;
static TYPE st_a, st_b;
static TYPE **st_p;
static TYPE __attribute__((noinline)) mhz_loop(long n, TYPE **p, TYPE a, TYPE b)
{{
    for (; n > 0; --n) {{ {_hundred(expression.replace("p=*p;", "p=(TYPE **)*p;"))} }}
    st_p = p;
    return a + b;
}}""")
    setup = "st_a = one_v; st_b = one_v; st_p = (TYPE **)&st_p;"
    if cpu is not None:
        setup += f" if (pin_to({int(cpu)}) != 0) return 3;"
    body = f"st_a = mhz_loop({NOW_CALLS}, st_p, st_a, st_b); sink = st_a;"
    return Snippet("c", body, setup=setup, decls=decls, includes=("unistd.h", "sys/syscall.h"))


def hog_snippet(cpu: int) -> Snippet:
    """A program whose start forks a CPU-bound child pinned to ``cpu``; the child spins until its
    parent is gone, so closing the program stops it."""
    setup = (f"pid_t parent = getpid(); if (fork() == 0) {{ if (pin_to({int(cpu)}) != 0) _exit(3); "
             "for (;;) { for (long i = 0; i < 1000000; i++) sink++; if (getppid() != parent) _exit(0); } }")
    return Snippet("c", "sink++;", setup=setup, decls=_PIN, includes=("unistd.h", "sys/types.h", "sys/syscall.h"))


@dataclass(frozen=True)
class NowRun:
    """mhz measured for real: every try of every expression (seconds per expression), the
    interval, the answer, whether mhz accepted it, the seconds the measurement took."""

    available: bool
    reason: str = ""
    tries_s: tuple = ()
    enough_s: float = float("nan")
    mhz: float = float("nan")
    accepted: bool = False
    seconds: float = float("nan")


def _start(snippet: Snippet, timeout_s: float):
    command, why = build(snippet)
    if command is None:
        raise RuntimeError(why)
    return PipeClock(command, timeout_s=timeout_s)


@exclusive()  # pinned to a CPU, with a competing hog on it in some runs
def mhz_now(params: Params | None = None, *, cpu: int | None = None, hog: bool = False,
            enough_s: float | None = None, tries: int | None = None, timeout_s: float = 60.0) -> NowRun:
    """Run mhz's measurement for real: the nine expressions compiled as C and timed by the lmbench
    harness (:mod:`pysim.harness`), the tries outside and the expressions inside (§7), then the
    same estimator as the simulation (:func:`compute_mhz`).

    ``cpu`` pins every program to one CPU; ``hog`` starts a CPU-bound process pinned there too
    and stops it after. ``enough_s`` fixes the interval (default: the harness's choice over
    :data:`pysim.harness.runners.REAL_INTERVALS_S`). Never raises for a missing tool: returns
    ``available=False`` and the reason.
    """
    p = params or Params()
    tries = tries or p.tries
    if hog and cpu is None:
        raise ValueError("hog needs cpu: the competitor must share one CPU with the measurement")
    clocks = []
    try:
        if hog:
            clocks.append(_start(hog_snippet(cpu), timeout_s))
        clocks += [_start(expression_snippet(e, cpu), timeout_s) for e in EXPRESSIONS]
        timed = [TimedClock(c) for c in clocks[hog:]]
        enough = enough_s if enough_s is not None else compute_enough(timed[3], REAL_INTERVALS_S)
        sizes = [auto_size(c, enough) for c in timed]
        out = np.empty((tries, len(timed)))
        for t in range(tries):
            for k, (clock, n) in enumerate(zip(timed, sizes, strict=False)):
                out[t, k] = clock.run(n) / n / (NOW_CALLS * COPIES)
    except (RuntimeError, TimeoutError, OSError, ValueError) as e:
        return NowRun(False, f"{type(e).__name__}: {e}")
    finally:
        for c in clocks:
            c.close()
    mhz, accepted = compute_mhz(out, p)
    return NowRun(True, "", tuple(map(tuple, out)), enough, mhz, accepted, sum(c.spent_s for c in timed))



#: C bodies that read the clock: the call lmbench times with (gettimeofday), today's monotonic
#: clock (a vDSO call on Linux), and a loop that spins until the monotonic clock moves (the
#: smallest step it shows).
CLOCK_BODIES = {
    "gettimeofday": ("struct timeval tv; gettimeofday(&tv, 0); sink += (uint64_t)tv.tv_usec;", ("sys/time.h",)),
    "clock_gettime": ("struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); sink += (uint64_t)ts.tv_nsec;", ()),
    "clock step": (("struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a); do clock_gettime(CLOCK_MONOTONIC, &b); "
                   "while (a.tv_nsec == b.tv_nsec && a.tv_sec == b.tv_sec); sink += (uint64_t)b.tv_nsec;"), ()),
}


@one_core()
def clock_now(*, quick: bool = False) -> pd.DataFrame:
    """The clock on this machine, measured by the harness: nanoseconds per read of each clock
    call and the smallest step the monotonic clock shows (median and minimum of the tries).

    Index: call. Columns: available, median_ns, min_ns, reason."""
    rows = []
    for name, (body, includes) in CLOCK_BODIES.items():
        m = measure("c", body, name=name, includes=includes, enough_s=0.01 if quick else None,
                    tries=5 if quick else TRIES)
        rows.append({"call": name, "available": m.available, "median_ns": m.median_s / ns, "min_ns": m.min_s / ns,
                     "reason": m.reason})
    return pd.DataFrame(rows).set_index("call")


def nominal_mhz() -> float:
    """The clock this machine reports (/proc/cpuinfo's 'cpu MHz', the first CPU); NaN where there is none."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("cpu mhz"):
                    return float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return float("nan")


def combined(runs: list, params: Params | None = None) -> NowRun:
    """Several runs of one condition as one: every try of every run, and mhz's answer from them all
    (the minimum over more tries, §7's remedy for noise that comes and goes)."""
    ok = [r for r in runs if r.available]
    if not ok:
        return runs[0] if runs else NowRun(False, "no runs")
    tries = np.concatenate([np.asarray(r.tries_s) for r in ok])
    mhz, accepted = compute_mhz(tries, params or Params())
    return NowRun(True, "", tuple(map(tuple, tries)), ok[0].enough_s, mhz, accepted, sum(r.seconds for r in ok))


def measure_now(params: Params | None = None, *, cpu: int | None = None, quick: bool = False) -> dict:
    """Every real run the then-vs-now comparison needs (:func:`then_and_now` tabulates them).

    'short': mhz at 1 ms intervals, whose minima dodge other work on a shared machine, and
    'repeats' of it, for the spread of the answer; 'alone': mhz at a long interval, the one the
    harness chooses (10 ms in quick mode); 'competitor': beside a CPU-bound process pinned to the
    same CPU, at the same interval. Alone and beside the competitor alternate (twice in the full
    profile) and each condition keeps all its tries, so a burst of other work on a shared machine
    spoils neither alone. 'competitor, 1 ms': the competitor at 1 ms intervals; 'clock':
    :func:`clock_now`; 'nominal_mhz'; 'interval': how the long interval was set.
    """
    p = params or Params()
    short = {"enough_s": 0.001, "tries": p.tries}
    out = {"short": mhz_now(p, cpu=cpu, **short),
           "repeats": [mhz_now(p, cpu=cpu, **short) for _ in range(1 if quick else 2)]}
    long_tries, rounds = (3, 1) if quick else (5, 1)
    first = mhz_now(p, cpu=cpu, enough_s=0.01 if quick else None, tries=long_tries)
    alone, beside = [first], []
    if cpu is None or not first.available:
        why = "no CPU to pin the competitor and the measurement to" if cpu is None else first.reason
        out["competitor"] = out["competitor, 1 ms"] = NowRun(False, why)
    else:
        for r in range(rounds):
            if r:
                alone.append(mhz_now(p, cpu=cpu, enough_s=first.enough_s, tries=long_tries))
            beside.append(mhz_now(p, cpu=cpu, hog=True, enough_s=first.enough_s, tries=long_tries))
        out["competitor"] = combined(beside, p)
        out["competitor, 1 ms"] = mhz_now(p, cpu=cpu, hog=True, **short)
    out["alone"] = combined(alone, p)
    out["clock"] = clock_now(quick=quick)
    out["nominal_mhz"] = nominal_mhz()
    out["interval"] = "fixed at 10 ms (quick mode)" if quick else "the harness's choice"
    return out


def _then(p: Params, rng) -> dict:
    """The 1998 side: mhz on the §1 machine (5 ns cycle) with a 1 us or a 10 ms timer, alone and
    beside a CPU-bound competitor holding half the CPU; medians of a few seeded runs."""
    out = {}
    for label, timer in (("fine", p.fine_timer_s), ("coarse", p.coarse_timer_s)):
        for who, share in (("alone", 0.0), ("competitor", p.hog_share)):
            runs = [MhzRun(Machine(p.example_clock_hz, timer, competitor_share=share), p, g).run()
                    for g in spawn(rng, 3)]
            out[label, who] = {k: float(np.median([r[k] for r in runs])) for k in ("mhz", "enough_s", "seconds")}
    return out


def then_and_now(now: dict, params: Params | None = None, *, rng=0) -> pd.DataFrame:
    """mhz then (the model's 1998 machine of §1) and now (``now`` from :func:`measure_now`).

    Index: quantity. Columns: then (the 1998 value, from the model or the paper), now (this
    machine), unit, note.
    """
    p = params or Params()
    then = _then(p, rng)
    clock_mhz = p.example_clock_hz / MHz
    short, alone, comp, comp1 = now["short"], now["alone"], now["competitor"], now["competitor, 1 ms"]
    reps = [r.mhz for r in (short, *now["repeats"]) if r.available and r.accepted]
    clock = now["clock"]

    def answer(run):
        return run.mhz if run.available else float("nan")

    def shift_speed(run):
        """1 / the minimum time of a>>=b, one dependent shift: a clock that needs no GCD."""
        return 1.0 / np.asarray(run.tries_s)[:, SHIFT].min() if run.available else float("nan")

    def verdict(run):
        return run.reason or ("accepted" if run.accepted else "not accepted: minima and next larger values disagree")

    def read(call):
        ok = call in clock.index and bool(clock.loc[call, "available"])
        return float(clock.loc[call, "min_ns"]) if ok else float("nan")

    halved, kept = (then["coarse", "competitor"]["mhz"] / then["coarse", "alone"]["mhz"],
                    then["fine", "competitor"]["mhz"] / then["fine", "alone"]["mhz"])
    rows = [
        ("clock the machine reports", clock_mhz, now["nominal_mhz"], "MHz", "then: §1's 5 ns cycle; now: /proc/cpuinfo"),
        ("mhz's answer, 1 ms intervals", then["fine", "alone"]["mhz"], answer(short), "MHz",
         f"then: a 1 us timer; now: {verdict(short)}"),
        ("mhz's answer / the reported clock", then["fine", "alone"]["mhz"] / clock_mhz,
         answer(short) / now["nominal_mhz"], "",
         "now: the reported clock is the nominal one; mhz counts the cycles the core runs"),
        ("spread of mhz's answer over repeats (max - min)", 0.0, (max(reps) - min(reps)) if reps else float("nan"),
         "MHz", f"now: {len(reps)} accepted runs at 1 ms intervals"),
        ("mhz's answer, long intervals", then["coarse", "alone"]["mhz"], answer(alone), "MHz",
         (f"then: a 10 ms timer ({then['coarse', 'alone']['enough_s']:g} s intervals); now: {alone.enough_s:g} s "
         f"intervals, {now['interval']}, {verdict(alone)}")),
        ("competitor, long intervals: mhz's answer / alone", halved, answer(comp) / answer(alone), "",
         f"then: a 10 ms timer; now: the same intervals as alone, {verdict(comp)}"),
        ("competitor, long intervals: a>>=b's speed / alone", halved, shift_speed(comp) / shift_speed(alone), "",
         "now: the minimum time of the one-cycle shift, no GCD"),
        ("competitor, 1 ms intervals: mhz's answer / alone", kept, answer(comp1) / answer(short), "",
         f"then: a 1 us timer (the harness's interval); now: {verdict(comp1)}"),
        ("competitor, 1 ms intervals: a>>=b's speed / alone", kept, shift_speed(comp1) / shift_speed(short), "",
         "now: the minimum time of the one-cycle shift, no GCD"),
        ("interval the harness chooses", then["fine", "alone"]["enough_s"], alone.enough_s, "s",
         f"then: a 1 us timer ({then['coarse', 'alone']['enough_s']:g} s with a 10 ms timer); now: {now['interval']}"),
        ("seconds mhz measures, long intervals", then["coarse", "alone"]["seconds"], alone.seconds, "s",
         f"then: a 10 ms timer ({then['fine', 'alone']['seconds']:.2f} s with a 1 us timer)"),
        ("timer resolution", p.fine_timer_s / ns, read("clock step"), "ns",
         "then: §1, 1 us at best (10 ms at worst); now: the smallest step clock_gettime shows (two reads)"),
        ("cost of reading the clock: gettimeofday", float("nan"), read("gettimeofday"), "ns",
         "then: not given in the paper; now: the minimum of the tries"),
        ("cost of reading the clock: clock_gettime", float("nan"), read("clock_gettime"), "ns",
         "now: the vDSO call, the minimum of the tries"),
    ]
    return pd.DataFrame(rows, columns=["quantity", "then", "now", "unit", "note"]).set_index("quantity")


def expressions_now(run: NowRun, params: Params | None = None) -> pd.DataFrame:
    """Each expression measured for real: the median and spread of its tries (ns), the cycles
    that makes at mhz's answer, beside the cycles the model assumes for a 1998 CPU.

    Index: expression. Columns: median_ns, spread_pct (interquartile range / median of the tries),
    cycles_now (the minimum at mhz's answer), cycles_1998.
    """
    p = params or Params()
    if not run.available:
        return pd.DataFrame({"expression": list(EXPRESSIONS), "cycles_1998": list(p.cycles)}).set_index("expression")
    t = np.asarray(run.tries_s) / ns
    med = np.median(t, axis=0)
    return pd.DataFrame({"expression": list(EXPRESSIONS), "median_ns": med,
                         "spread_pct": 100 * np.subtract(*np.percentile(t, [75, 25], axis=0)) / med,
                         "cycles_now": t.min(axis=0) * run.mhz / 1e3, "cycles_1998": list(p.cycles)}
                        ).set_index("expression")
