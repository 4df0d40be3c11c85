"""Mechanism checks of the GuPPI model (atc98_ismert)."""
import dataclasses

import pytest

from pysim.models import atc98_ismert as m
from pysim.rng import make_rng

P = m.Params()


def test_table1_is_the_pci_burst_arithmetic():
    """Page-streaming DMA on the engine's bus equals the PCI burst formula by hand: a 4 KB page is 32 bursts of
    32 data phases, each paying arbitration, address, the initial wait and turnaround."""
    t = m.table1(P)
    for name, wait in (("Input", P.pci_write_wait_cycles), ("Output", P.pci_read_wait_cycles)):
        words = P.burst_bytes // 4
        by_hand = 32 * P.pci_clock_hz * words / (words + 3 + wait) * 1e-6
        assert t.loc[name, "raw_mbit_per_s"] == pytest.approx(by_hand, rel=1e-9)


def test_descriptor_fetches_cost_bus_time():
    conventional = m.table1(dataclasses.replace(P, page_streaming=False))
    assert (conventional["raw_mbit_per_s"] < m.table1(P)["raw_mbit_per_s"]).all()


def _limit(p, output, seed=1):
    return m.continuous_limit(p, output=output, duration_s=0.01, rng=seed, steps=12) * 8 / 1e6


def test_isolated_stalls_give_depth_over_stall():
    """One kind of stall, rare enough to be isolated: the input FIFO overflows when the rate times the stall
    exceeds its depth (less the burst waiting to go), and half the depth gives about half the rate."""
    p = dataclasses.replace(P, stall_gap_us=2000.0, stall_min_us=30.0, stall_max_us=30.0, fifo_in_bytes=1500.0)
    seed = int(make_rng(5).integers(2**31))  # the stream continuous_limit draws its stalls from
    run = m.ContinuityRun(p, 1e6, output=False, duration_s=0.01, rng=seed)
    assert min(run.gaps[:8]) > 2 * 30e-6  # this seed's stalls are isolated within the run
    rate_in = _limit(p, False, seed=5)
    by_hand = 8 * (p.fifo_in_bytes - p.burst_bytes) / 30e-6 / 1e6
    assert rate_in == pytest.approx(by_hand, rel=0.08)
    assert 0.42 <= _limit(p, True, seed=5) / rate_in <= 0.55


def test_no_stalls_lets_the_stream_run_near_the_bus_rate():
    p = dataclasses.replace(P, stall_min_us=0.1, stall_max_us=0.2)
    assert _limit(p, False) > 0.8 * m.table1(p).loc["Input", "raw_mbit_per_s"]


def test_deeper_fifo_absorbs_more_jitter():
    assert _limit(dataclasses.replace(P, fifo_in_bytes=2 * P.fifo_in_bytes), False) > _limit(P, False)


def test_figure2_copy_and_swap_by_hand():
    f = m.figure2(P)
    assert f.loc[300, "copy_cycles"] == pytest.approx(300 * 4096 / P.copy_bytes_per_s * P.clock_hz)
    per_page = 2 * P.pte_walk_cycles + P.pte_swap_cycles + 2 * P.invlpg_cycles
    assert f.loc[300, "swap_cycles"] == pytest.approx(P.swap_fixed_cycles + 300 * per_page)


@pytest.mark.parametrize("pages", [1, 2, 5, 40, 160])
def test_driver_keeps_the_card_fed_and_delivers_every_buffer(pages):
    r = m.DriverRun(P, rate_bytes_per_s=64e6, buffer_pages=pages, buffers=4, n_buffers=40).run()
    # the last buffer is known done only when the card pops a next page, which never comes
    assert r["starved"] == 0 and r["delivered"] == 39
    # a sample waits at least the rest of its buffer's fill (half a buffer on average)
    assert r["latency_s"] > 0.5 * pages * P.page_bytes / 64e6


def test_big_buffers_interrupt_once_per_address_fifo_refill():
    r = m.DriverRun(P, rate_bytes_per_s=64e6, buffer_pages=160, buffers=4, n_buffers=40).run()
    assert r["interrupts"] / r["pages"] == pytest.approx(1 / (P.addr_fifo_pages - P.low_water_pages), rel=0.1)


def test_latency_scales_with_fill_time():
    """Half the rate doubles the fill time: latency at a large buffer nearly doubles."""
    f = m.figure4(P, quick=True)
    assert f.loc[160, "half_rate_latency_ms"] / f.loc[160, "full_rate_latency_ms"] == pytest.approx(2, rel=0.15)


def test_unloaded_application_never_waits_and_load_needs_a_deeper_ring():
    j = m.jitter(P, quick=True)
    assert j.loc[0, "max_wait_ms"] == 0 and j.loc[0, "ring_needed_buffers"] <= 2
    assert j["ring_needed_buffers"].is_monotonic_increasing
    # a woken application waits at most until the next tick when it is favoured
    assert j.loc[1, "max_wait_ms"] <= P.tick_ms + 1e-6


def test_deterministic_for_a_seed():
    a, b = m.rates(P, quick=True, rng=3), m.rates(P, quick=True, rng=3)
    assert a.equals(b)


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match="low_water_pages"):
        m.Params(low_water_pages=64)
    with pytest.raises(ValueError, match="stall_min_us"):
        m.Params(stall_min_us=50.0)
