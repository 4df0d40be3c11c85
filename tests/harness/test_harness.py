"""The lmbench harness on the simulated twin (known truths) and on real snippets in four languages."""

import pytest

from pysim.harness import SimulatedClock, auto_size, bench, compute_enough, loop_overhead, measure


class CountingClock:
    """A perfect clock that records the iteration counts it was asked for."""

    def __init__(self, per_iteration_s):
        self.per, self.asked = per_iteration_s, []

    def run(self, n):
        self.asked.append(n)
        return n * self.per


def test_auto_size_grows_tenfold_below_150us_then_by_the_ratio():
    clock = CountingClock(1e-6)
    n = auto_size(clock, 0.1)
    # 1, 10, 100 iterations take under 150 us (x10 each); 1000 take 1 ms: x1.1 x 100 ms / 1 ms
    assert clock.asked[:4] == [1, 10, 100, 1000] and clock.asked[4] == 110_000
    assert n * 1e-6 >= 0.095


def test_a_coarse_timer_needs_a_longer_interval(seed):
    fine = SimulatedClock(per_iteration_s=5e-9, resolution_s=1e-6, rng=seed)
    coarse = SimulatedClock(per_iteration_s=5e-9, resolution_s=10e-3, rng=seed)
    # a 1 us timer measures a 1 ms loop to 0.1%; a 10 ms one needs a full second (§1, §6.1)
    assert compute_enough(fine) == 0.001
    assert compute_enough(coarse) == 1.0


def test_the_median_of_tries_recovers_the_true_time_through_the_timer(seed):
    clock = SimulatedClock(per_iteration_s=3.3e-9, resolution_s=1e-6, rng=seed)
    r = bench(clock, compute_enough(clock))
    assert r.value_s == pytest.approx(3.3e-9, rel=0.002)


def test_a_competitor_with_half_the_cpu_doubles_every_time(seed):
    """§8: a CPU-bound process taking 50% of the processor made mhz report half the clock."""
    clock = SimulatedClock(per_iteration_s=2e-9, resolution_s=1e-6, competitor_share=0.5, quantum_s=0.01,
                           rng=seed)
    r = bench(clock, 0.1, statistic="min")
    assert r.value_s == pytest.approx(4e-9, rel=0.1)
    alone = bench(SimulatedClock(per_iteration_s=2e-9, resolution_s=1e-6, rng=seed), 0.1, statistic="min")
    assert alone.value_s == pytest.approx(2e-9, rel=0.01)


def test_interrupts_inflate_the_median_by_their_share_of_the_cpu(seed):
    rate, cost = 1000.0, 20e-6  # 2% of the CPU
    clock = SimulatedClock(per_iteration_s=1e-8, resolution_s=1e-6, interrupt_rate_per_s=rate,
                           interrupt_s=cost, rng=seed)
    r = bench(clock, 0.1)
    assert r.value_s == pytest.approx(1e-8 / (1 - rate * cost), rel=0.01)


def test_loop_overhead_from_one_and_two_copy_loops(seed):
    """T1 = N1 (L + W), T2 = N2 (L + 2W) give back L (§6.2)."""
    loop, work = 0.7e-9, 2.0e-9
    one = SimulatedClock(per_iteration_s=loop + work, resolution_s=1e-6, rng=seed)
    two = SimulatedClock(per_iteration_s=loop + 2 * work, resolution_s=1e-6, rng=seed + 1)
    assert loop_overhead(one, two, 0.01) == pytest.approx(loop, abs=0.02e-9)


def test_bad_clock_parameters_are_named():
    with pytest.raises(ValueError, match="competitor_share must be in"):
        SimulatedClock(per_iteration_s=1e-9, competitor_share=1.0)
    with pytest.raises(ValueError, match="resolution_s must be finite"):
        SimulatedClock(per_iteration_s=1e-9, resolution_s=-1)


# --- real snippets ---------------------------------------------------------------------------

CHAIN = {"c": ("uint64_t x = sink;", "x = x * x + 1;", "sink = x;"),
         "java": ("long x = sink;", "x = x * x + 1;", "sink = x;")}


@pytest.mark.quiet
@pytest.mark.parametrize("language", ["c", "c++", "java"])
def test_a_dependent_chain_twice_as_long_takes_twice_as_long(language):
    """Each multiply-add waits for the last: twenty in a row cost twice ten, loop overhead subtracted. (Ten
    and twenty, not one and ten: a single operation costs about as much as the loop around it, so the
    overhead subtracted from it would decide the ratio.)"""
    base = "java" if language == "java" else "c"
    pre, op, post = CHAIN[base]
    ten = measure(language, f"{pre} {op * 10} {post}", enough_s=0.02, tries=7, statistic="min")
    twenty = measure(language, f"{pre} {op * 20} {post}", enough_s=0.02, tries=7, statistic="min")
    if not ten.available:
        pytest.skip(ten.reason)
    assert twenty.available, twenty.reason
    assert 1.6 < twenty.per_op_s / ten.per_op_s < 2.4


def test_tcl_snippets_are_timed_too():
    m = measure("tcl", "incr sink 3", enough_s=0.02, tries=5)
    if not m.available:
        pytest.skip(m.reason)
    assert 1e-9 < m.per_op_s < 1e-4 and m.iterations > 10


def test_a_missing_tool_a_broken_build_and_a_hang_are_reported_not_raised(monkeypatch, tmp_path):
    broken = measure("c", "this is not C;", enough_s=0.01, tries=3)
    assert not broken.available and "failed" in broken.reason
    hang = measure("c", "for (;;) {}", setup="", enough_s=0.01, tries=3, timeout_s=2)
    assert not hang.available and "TimeoutError" in hang.reason
    monkeypatch.setenv("PATH", str(tmp_path))  # no compilers, no interpreters
    monkeypatch.setenv("PYSIM_CACHE_DIR", str(tmp_path / "cache"))
    for lang in ("c", "c++", "java", "tcl"):
        m = measure(lang, "sink += 1;" if lang != "tcl" else "incr sink")
        assert not m.available and "not installed" in m.reason


def test_a_command_is_timed_with_its_childrens_cpu_and_a_missing_one_is_reported(tmp_path):
    from pysim.harness.commands import run_command, timed_runs
    busy = run_command(["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
    assert busy.available and busy.returncode == 0
    assert 0.05 < busy.cpu_s <= 1.05 * busy.elapsed_s  # a single-threaded loop: CPU time, never more than wall
    idle = run_command(["sleep", "0.2"])
    assert idle.elapsed_s >= 0.2 and idle.cpu_s < 0.05
    assert not run_command(["no-such-program-here"]).available
    slow = run_command(["sleep", "5"], timeout_s=0.2)
    assert not slow.available and "longer than" in slow.reason
    table = timed_runs({"plain": {}, "told": {"GREETING": "hi"}}, ["sh", "-c", 'test -n "$GREETING" || exit 3'],
                       rounds=2)
    assert not table.loc["plain", "available"] and table.loc["told", "available"]
    assert "exited with 3" in table.loc["plain", "reason"]


def test_warm_up_runs_until_the_body_stops_speeding_up():
    from pysim.harness.runners import warm_up

    class Jit:  # each iteration a little faster than the last, down to 1 ns after about 700,000
        done = 0

        def per(self):
            return max(1e-9, 2e-8 * 0.5 ** (self.done / 150_000))

        def run(self, n):
            t = self.per() * n
            self.done += n
            return t

    jit = Jit()
    warm_up(jit, 0.002)
    assert jit.per() < 1.5e-9  # kept going past the 2 ms minimum while it was still speeding up
    capped = Jit()
    warm_up(capped, 0.0001)
    assert capped.done < 200_000  # never past four times the minimum
