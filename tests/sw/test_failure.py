"""Heartbeat failure detection: stalls against the timeout, crash detection time, false suspicions
from network delay against the closed form, and available copies."""
import math

import numpy as np
import pytest

from pysim.engine import Simulation
from pysim.sw.failure import AvailableCopies, HeartbeatDetector


def _run(until, **kw):
    sim = Simulation()
    d = HeartbeatDetector(sim, **kw)
    sim.run(until=until)
    return d.summary(until), d


def test_a_stall_is_suspected_only_when_it_outlasts_the_timeout():
    quiet, _ = _run(10.0, period_s=0.1, timeout_s=0.5, stalls=[(3.05, 0.3)])
    assert quiet["false_suspicions"] == 0
    loud, d = _run(10.0, period_s=0.1, timeout_s=0.5, stalls=[(3.05, 2.0)])
    assert loud["false_suspicions"] == 1
    s = d.suspicions[0]
    assert s.start_s == pytest.approx(3.0 + 0.5, abs=0.03)  # the last heartbeat was at 3.0
    assert s.end_s == pytest.approx(5.05)                    # the stall ends and a heartbeat goes out


def test_a_crash_is_detected_between_timeout_minus_period_and_timeout():
    out, _ = _run(20.0, period_s=0.2, timeout_s=1.0, crash_s=7.13)
    assert 1.0 - 0.2 <= out["detection_s"] <= 1.0 + 0.2 / 4 + 1e-9


def _silence_probability(period, mean, timeout):
    """P(no heartbeat arrives within `timeout` of one that did), delays exponential with `mean`: every
    later heartbeat k (sent k periods on) must arrive later than d + timeout, d the first's delay."""
    d = np.linspace(0, 20 * mean, 20001)
    p = np.exp(-d / mean) / mean
    for k in range(1, int(timeout / period) + 2):
        p = p * np.exp(-np.clip(d + timeout - k * period, 0, None) / mean)
    return float(np.trapezoid(p, d))


def test_false_suspicions_from_exponential_delays_follow_the_closed_form():
    period, mean, seconds = 0.1, 0.02, 2000.0
    for timeout in (0.15, 0.2):
        out, _ = _run(seconds, period_s=period, timeout_s=timeout, rng=3,
                      delay=lambda g: g.exponential(mean))
        expected = out["heartbeats"] * _silence_probability(period, mean, timeout)
        assert out["false_suspicions"] == pytest.approx(expected, abs=4 * math.sqrt(expected))


def test_available_copies_write_to_every_copy_up_and_fail_with_none():
    obj = AvailableCopies(("a", "b", "c"))
    assert obj.write() == 3
    obj.suspect("b")
    assert obj.write() == 2 and obj.read() == "a"
    obj.rejoin("b")
    assert obj.write() == 3 and obj.copy_writes == 3 + 2 + 1 + 3
    for c in "abc":
        obj.suspect(c)
    with pytest.raises(RuntimeError, match="unavailable"):
        obj.read()
    with pytest.raises(ValueError, match="at least one"):
        AvailableCopies(())
