"""Mechanism checks of mhz (atc98_staelin): the GCD estimator against a literal transcription of
Figure 2, hand calculations, the harness on the simulated clock, and the real measurement."""
import dataclasses
import math
import os
import shutil
from functools import reduce

import numpy as np
import pytest

from pysim.models import atc98_staelin as m

P = m.Params()
CYCLES = np.array(P.cycles, dtype=float)


def figure2_gcd(e, max_count=6):
    """Figure 2 as printed, one dataset at a time: the times, their pairwise differences and 0;
    guesses b = min(e)/i; x = floor(y/b + 0.5); least squares y = a + b x; keep i == 1 or
    i*i*chi2 < min_chi2."""
    y = list(e) + [abs(e[i] - e[j]) for i in range(len(e)) for j in range(i + 1, len(e))] + [0.0]
    min_e, result, min_chi2 = min(e), None, None
    for i in range(1, max_count):
        b = min_e / i
        x = [math.floor(v / b + 0.5) for v in y]
        n, sx, sy = len(x), sum(x), sum(y)
        sxx, sxy = sum(v * v for v in x), sum(u * v for u, v in zip(x, y, strict=False))
        slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        a = (sy - slope * sx) / n
        chi2 = sum((v - a - slope * u) ** 2 for u, v in zip(x, y, strict=False))
        if i == 1 or i * i * chi2 < min_chi2:
            result, min_chi2 = slope, chi2
    return result


def test_gcd_matches_a_literal_transcription_of_figure2(seed):
    g = np.random.default_rng(seed)
    masks = m.subsets(9)
    for _ in range(20):
        values = CYCLES * g.uniform(2, 30) * (1 + g.normal(0, 0.01, 9))
        rows = masks[g.choice(len(masks), 25, replace=False)]
        fast = m.gcd_subsets(values, rows)
        slow = [figure2_gcd(values[r]) for r in rows]
        assert fast == pytest.approx(slow, rel=1e-9)


def test_the_worked_example_by_hand():
    # points (ticks, ns): (2, 11.1), (3, 16.6), (1, 5.5), (0, 0); the slope is 27.7 / 5 = 5.54 ns
    assert m.gcd_tick([11.1, 16.6]) == pytest.approx(5.54, abs=1e-12)
    # 11.1 and 22.2 are one and two ticks of 11.1 ns: half the clock of 2 and 4 cycles of 5.55 ns
    ex = m.gcd_example()
    assert ex.loc["common factor", "gcd_ns"] == pytest.approx(11.1, abs=1e-12)
    assert (ex.loc["common factor", "assigned_short"], ex.loc["common factor", "assigned_long"]) == (1, 2)
    assert (ex.loc["coprime", "assigned_short"], ex.loc["coprime", "assigned_long"]) == (2, 3)


@pytest.mark.parametrize("clock_mhz", [33.3, 90.0, 166.67, 600.0])
def test_exact_times_with_relatively_prime_counts_give_the_clock(clock_mhz):
    times = CYCLES / (clock_mhz * 1e6)
    assert m.estimate_mhz(times, P) == round(clock_mhz)
    # §4: with every count doubled, the apparent clock is halved
    assert m.estimate_mhz(2 * times, P) == round(clock_mhz / 2)


def test_the_i_squared_weighting_keeps_the_tick_not_a_fraction_of_it(seed):
    """§4.1: without the weighting, a guess of b/2 or b/3 fits noisy data about as well and wins."""
    g = np.random.default_rng(seed)
    wrong = {True: 0, False: 0}
    tried = 0
    while tried < 150:
        idx = g.choice(9, g.integers(2, 10), replace=False)
        if reduce(math.gcd, CYCLES[idx].astype(int).tolist()) != 1:
            continue
        tried += 1
        times = CYCLES[idx] * 5.0 * (1 + g.normal(0, 0.005, len(idx)))
        for weighted in wrong:
            wrong[weighted] += abs(m.gcd_tick(times, weighted=weighted) / 5.0 - 1) > 0.05
    assert wrong[True] == 0
    assert wrong[False] > 20


def test_valid_subsets_drop_outliers_and_need_two_classes():
    times = CYCLES / 100e6
    optimised_away = times.copy()
    optimised_away[8] = times[8] / 1000          # §7: a loop the compiler removed
    member = m.valid_subsets(optimised_away / 1e-9, P)
    assert not member[:, 8].any()
    assert m.estimate_mhz(optimised_away, P) == 100
    # two points of 2 cycles each (no two 5% apart) make no valid subset
    assert len(m.valid_subsets(np.array([20.0, 20.5]), P)) == 0


def test_minima_and_next_larger_values_must_agree():
    times = CYCLES / 200e6
    steady = np.tile(times, (11, 1))
    assert m.compute_mhz(steady, P) == (200.0, True)
    noisy = steady.copy()
    noisy[1:] *= 1.05                               # only the minimum escaped the noise
    mhz, accepted = m.compute_mhz(noisy, P)
    assert mhz == 200.0 and not accepted


def test_a_quiet_machine_reads_its_clock_with_either_timer(seed):
    for timer in (P.fine_timer_s, P.coarse_timer_s):
        r = m.MhzRun(m.Machine(150e6, timer), P, seed).run()
        assert r["accepted"] and abs(r["mhz"] - 150) <= 1
    # §6.1: a 10 ms clock needs the 1 s interval; a 1 us clock passes at 1 ms
    assert m.MhzRun(m.Machine(150e6, P.coarse_timer_s), P, seed).interval_s() == 1.0
    assert m.MhzRun(m.Machine(150e6, P.fine_timer_s), P, seed).interval_s() == 0.001


def test_a_competitor_over_long_intervals_halves_the_answer_and_is_accepted(seed):
    """§8: on a 10 ms clock the 1 s intervals span ten of the competitor's turns either way: every
    expression's time doubles, the GCD doubles with it, and the minima and next larger values agree."""
    r = m.MhzRun(m.Machine(150e6, P.coarse_timer_s, competitor_share=0.5), P, seed).run()
    assert r["accepted"]
    assert r["mhz"] / 150 == pytest.approx(0.5, abs=0.03)


def test_a_fine_clock_and_short_intervals_dodge_the_competitor():
    # with a 1 us clock the harness settles on 1 ms whenever its proportionality runs fall in mhz's own
    # 100 ms turns; each expression's minimum then misses the competitor and the answer is the clock
    answers = [m.MhzRun(m.Machine(150e6, P.fine_timer_s, competitor_share=0.5), P, s).run() for s in range(8)]
    short = [a for a in answers if a["enough_s"] == 0.001]
    assert short and all(abs(a["mhz"] - 150) <= 2 for a in short)


def test_steady_background_bursts_read_low_by_their_share(seed):
    """Bursts of other work, many to an interval, take a share u of the CPU: the run lasts 1/(1-u)
    as long, so mhz reads (1-u) of the clock, a little above it for the minimum of eleven tries."""
    u = 0.04
    r = m.MhzRun(m.Machine(150e6, P.coarse_timer_s, busy_share=u), P, seed).run()
    ratio = r["mhz"] / 150
    assert 1 - u - 0.01 <= ratio <= 1 - u + 0.015


def test_an_over_measured_loop_overhead_inflates_the_clock(seed):
    """§8, the Cray: subtracting too much per iteration shortens every time alike, and the answer rises."""
    answers = [m.MhzRun(m.Machine(600e6, P.fine_timer_s, excess_loop_cycles=e), P, seed).run()["mhz"]
               for e in (0.0, 4.0, 8.0)]
    assert abs(answers[0] - 600) <= 1
    assert answers[0] < answers[1] < answers[2]


def test_population_is_the_paper_s_and_deterministic():
    a, b = m.population(quick=True), m.population(quick=True)
    assert a.equals(b)
    assert (a["group"] == "CPU-bound competitor").sum() == P.hog_runs
    assert (a["group"] == "Cray T3E").sum() == P.cray_runs and len(a) == P.runs
    other = m.population(dataclasses.replace(P, runs=200), rng=1, quick=True)
    assert len(other) == 200


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="cycles"):
        dataclasses.replace(P, cycles=(1, 2, 3))
    with pytest.raises(ValueError, match="clock_mhz_low"):
        dataclasses.replace(P, clock_mhz_low=700.0)
    with pytest.raises(ValueError, match="runs"):
        m.volunteers(dataclasses.replace(P, runs=5))
    with pytest.raises(ValueError, match="hog needs cpu"):
        m.mhz_now(hog=True)


# --- the real measurement ----------------------------------------------------------------

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed: mhz is not built")


@needs_gcc
@pytest.mark.quiet  # a timing test: run before the notebooks start beside the suite
def test_mhz_for_real_counts_whole_cycles_and_dodges_a_competitor_with_short_intervals():
    """At 1 ms intervals the minimum of eleven tries escapes other work on a shared machine, a
    competitor pinned to the same CPU included; a>>=b is one dependent shift, one cycle."""
    cpu = max(os.sched_getaffinity(0))
    alone = m.mhz_now(cpu=cpu, enough_s=0.001)
    assert alone.available, alone.reason
    assert alone.accepted and alone.mhz > 100
    assert m.expressions_now(alone).loc["a>>=b;", "cycles_now"] == pytest.approx(1.0, abs=0.1)
    beside = m.mhz_now(cpu=cpu, hog=True, enough_s=0.001)
    assert beside.available, beside.reason
    assert beside.mhz == pytest.approx(alone.mhz, rel=0.05)


@needs_gcc
@pytest.mark.quiet
def test_a_competitor_takes_its_share_of_long_intervals():
    """Over intervals of many time slices the competitor's share cannot be dodged: the one-cycle
    shift's best time doubles on an otherwise idle CPU. Other work on a shared machine takes its
    own share of long intervals too, so the test needs a machine that is not overloaded."""
    if os.getloadavg()[0] > os.cpu_count():
        pytest.skip(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: other work would take "
                    f"its own share of every long interval")
    cpu = max(os.sched_getaffinity(0))
    alone, beside = [], []
    for _ in range(2):  # alternate, so a burst of other work spoils neither condition alone
        alone.append(m.mhz_now(cpu=cpu, enough_s=0.05, tries=3))
        beside.append(m.mhz_now(cpu=cpu, hog=True, enough_s=0.05, tries=3))
    runs = [m.combined(alone), m.combined(beside)]
    assert all(r.available for r in runs), [r.reason for r in runs]
    best = [np.asarray(r.tries_s)[:, m.SHIFT].min() for r in runs]
    assert 0.35 < best[0] / best[1] < 0.8
