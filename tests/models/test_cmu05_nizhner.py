"""Mechanism checks of the NFS-lite testbed model (cmu05_nizhner)."""
import dataclasses
import math
import shutil
import sys

import pytest

from pysim.models import cmu05_nizhner as m
from pysim.queueing.closed import asymptotic_bounds, mva_at
from pysim.units import us

P = m.Params()


def test_pci_timing_gives_the_measured_raw_write_rate():
    # §4.1: 680 Mbps of raw writes; the derived wait states must land within 1% of it for long DMA
    rate = 1 << 20
    bps = rate * 8 / P.pci.transfer_s(rate, write=True)
    assert bps == pytest.approx(680e6, rel=0.01)


def test_full_offload_peak_is_the_bus_demand_by_hand():
    # bus time per write: the payload's DMA (split at page boundaries) plus four control messages
    pci = P.pci
    msgs = sum(pci.transfer_s(b, write=True) for b in (P.query_bytes, P.addresses_bytes, P.done_bytes, P.done_bytes))
    dma = pci.transfer_s(P.payload_bytes, write=True)

    by_hand = P.payload_bytes * 8 / (dma + msgs) / 1e6
    sim = m.simulate(P, "IDP (full)", m.SATURATING_THREADS, quick=True)["throughput_mbps"]
    assert sim == pytest.approx(by_hand, rel=0.01)
    assert sim <= by_hand * 1.001  # page splits only ever add bus time
    # the partial offload adds exactly the header round trip to the bus
    extra = pci.transfer_s(P.header_bytes, write=True) + pci.transfer_s(P.verdict_bytes, write=True)
    assert P.payload_bytes * 8 / (dma + msgs + extra) / 1e6 < by_hand


def test_des_matches_exact_mva_below_and_at_saturation():
    # with the same stations the deterministic run sits between the asymptotic bounds and near MVA's
    for n in (1, 4, 8, 30):
        sim = m.simulate(P, "IDP (full)", n, quick=True)
        x_mva, r_mva, _ = mva_at(m.mva_stations(P, "IDP (full)"), n)
        st = m.mva_stations(P, "IDP (full)")
        queues = [s.demand() for s in st if s.kind == "queue"]
        delay = sum(s.demand() for s in st if s.kind == "delay")
        b = asymptotic_bounds(queues + [delay], 0.0, n)
        calls = sim["calls_per_s"]
        assert calls <= 1 / max(queues) * 1.01
        assert calls <= n / (sum(queues) + delay) * 1.03       # unloaded: no faster than R0 allows
        assert calls == pytest.approx(x_mva, rel=0.25)
        assert b["throughput_lower"] <= calls * 1.03  # page-split DMA and whole completions in a short window


def test_littles_law_holds_in_the_closed_loop():
    for impl in m.IMPLEMENTATIONS:
        for n in (3, 40):
            r = m.simulate(P, impl, n)  # the full run: a quick one holds too few of the partial's two-tick cycles
            assert r["calls_per_s"] * r["response_us"] * us == pytest.approx(n, rel=0.05)


def test_polling_thread_locks_one_call_per_tick():
    # one client: back-to-back calls each wait for the next poll, so a call takes exactly one tick
    for tick in (500.0, 1000.0, 2000.0):
        p = dataclasses.replace(P, tick_us=tick)
        assert m.simulate(p, "IDP (partial)", 1, payload=0, quick=True)["response_us"] == pytest.approx(tick, rel=1e-6)
    # below saturation throughput grows by one call per tick per thread
    r = m.simulate(P, "IDP (partial)", 10, quick=True)
    assert r["calls_per_s"] == pytest.approx(10 / (P.tick_us * us), rel=0.01)


def test_event_driven_stack_costs_a_wakeup_not_a_tick():
    p = dataclasses.replace(P, host_udp="event")
    full = m.simulate(P, "IDP (full)", 1, payload=0, quick=True)["response_us"]
    part = m.simulate(p, "IDP (partial)", 1, payload=0, quick=True)["response_us"]
    bus = (P.pci.transfer_s(P.header_bytes, write=True) + P.pci.transfer_s(P.verdict_bytes, write=True)) / us
    assert part - full == pytest.approx(P.wakeup_us + P.host_udp_us + bus, rel=1e-6)


def test_one_frame_per_poll_caps_throughput_at_the_tick_rate():
    p = dataclasses.replace(P, drain_all=False)
    r = m.simulate(p, "IDP (partial)", 50, quick=True)
    assert r["calls_per_s"] <= 1.02 / (P.tick_us * us)


def test_sun_rpc_is_cpu_bound_at_one_over_its_cpu_time():
    r = m.simulate(P, "Sun RPC", 60, quick=True)
    cpu = (P.sun_cpu_us + P.sun_copy_ns_per_byte * 1e-3 * P.payload_bytes) * us
    assert r["calls_per_s"] == pytest.approx(1 / cpu, rel=0.01)


def test_nic_buffer_never_exceeds_one_per_thread():
    f4 = m.figure4(quick=True)
    idp = f4.loc[list(m.IDP)]
    assert (idp["nic_buffer_bytes"] <= idp["buffer_bytes"] * 1.0001).all()
    assert (idp["nic_buffer_bytes"] > 0).all()


def test_deterministic_for_a_seed():
    a, b = m.table2(quick=True, rng=3), m.table2(quick=True, rng=3)
    assert a.equals(b)


def test_bad_parameters_are_refused_by_name():
    with pytest.raises(ValueError, match="host_udp"):
        m.Params(host_udp="interrupt")
    with pytest.raises(ValueError, match="threads"):
        m.simulate(P, "IDP (full)", 0)
    with pytest.raises(ValueError, match="impl"):
        m.simulate(P, "TCP offload", 1)


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_measured_eventfd_handoff_beats_a_tick_sleep():
    h = m.measure_handoff(quick=True)
    if not h["available"].all():
        pytest.skip(f"handoff not measurable here: {h['note'].tolist()}")
    assert h.loc["eventfd wake-up", "round_trip_us"] < h.loc["poll, sleep a 1 ms tick", "round_trip_us"]
    assert h.loc["poll, sleep a 1 ms tick", "round_trip_us"] >= 900  # a 1 ms sleep cannot return sooner


def test_real_closed_loop_obeys_littles_law():
    df = m.measure_closed_loop(python=sys.executable, threads=(1, 4, 16), quick=True)
    if df.empty:
        pytest.skip(df.attrs["note"])
    assert (abs(df["littles_law_threads"] / df.index - 1) < 0.1).all()
    assert df.loc[16, "calls_per_s"] <= 1 / (500e-6) * 1.05  # the server's busy loop caps it
    assert df.loc[4, "calls_per_s"] > 2.5 * df.loc[1, "calls_per_s"]  # linear below the knee
    assert math.isfinite(df.loc[1, "mva_calls_per_s"])
