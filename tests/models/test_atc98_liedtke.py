"""Mechanism checks of the Lava hit-server model (atc98_liedtke): the bus arithmetic against a hand count,
the engine's hit-server against its bottleneck bounds, the boot storm against the M/D/1 processor-sharing
formula, and the calibrated parameters re-derived from their cells."""
import dataclasses
import math

import numpy as np
import pytest

from pysim.calibration import fit_parameter
from pysim.models import atc98_liedtke as m

P = m.Params()


def test_pci_timing_averages_the_stated_cycles_per_word():
    # a 1056-byte packet: 33 cache-line bursts of 8 words at 12 cycles = 1.5 cycles a word, 30 ns a cycle
    assert m._dma_us(P, P.packet_bytes) == pytest.approx(264 * 1.5 * 0.030, rel=1e-9)


def test_cache_lines_per_get_match_the_papers_formula():
    for n in (1, 2, 5, 10, 32):
        assert m.get_lines(P, n) == 11 + math.ceil(9 * n / 4)
    copying = dataclasses.replace(P, precompiled=False)
    assert m.get_lines(copying, 1) - m.get_lines(P, 1) == 2 * 1024 // 32


def test_ten_k_throughput_sits_at_its_hand_computed_bound():
    # the links: 10 packets spread over 6 cards at 86.4 us each; the memory bus: DMA + lines per get
    r = m.simulate(P, 10 * 1024, quick=True)
    link_bound = 6 / (10 * m.wire_us(P) * 1e-6)
    dma_us = 10 * (m._dma_us(P, 1056) + m._dma_us(P, 16) + 2 * m._dma_us(P, 4)) + m._dma_us(P, P.request_bytes)
    bus_bound = 1e6 / (dma_us + m.get_lines(P, 10) * P.line_us)
    assert r["gets_per_s"] <= min(link_bound, bus_bound) * 1.001
    assert r["gets_per_s"] >= 0.97 * min(link_bound, bus_bound)


def test_cpu_traffic_crowds_out_dma():
    # more CPU cache-line traffic on the shared memory bus lowers the 10 KB rate (the paper's point)
    slow = m.simulate(dataclasses.replace(P, line_us=2.0), 10 * 1024, quick=True)
    fast = m.simulate(P, 10 * 1024, quick=True)
    assert slow["gets_per_s"] < 0.8 * fast["gets_per_s"]


def test_boot_storm_matches_md1_processor_sharing(seed):
    # no background traffic, no server cap: each link is an M/D/1-PS queue, mean S / (1 - rho)
    p = dataclasses.replace(P, think_object_bytes=0)
    boot = 10 * 2 ** 20
    rate = P.packet_data_bytes / (m.wire_us(P) * 1e-6)
    s = boot / rate
    rho = 1000 / 300 / 6 * s
    lat = np.concatenate([m.boot_latencies(p, 1000, boot, 1e12, rng=seed + k) for k in range(8)])
    assert lat.min() >= s * (1 - 1e-9)
    assert lat.mean() == pytest.approx(s / (1 - rho), rel=0.12)


def test_switched_clients_boot_at_link_speed():
    p = dataclasses.replace(P, switched_clients=True)
    lat = m.boot_latencies(p, 200, 2 ** 20, 5e8, rng=1)
    assert np.allclose(lat, 2 ** 20 / (P.packet_data_bytes / (m.wire_us(P) * 1e-6)))


def test_same_seed_same_figure6():
    a, b = m.figure6(rng=3, quick=True), m.figure6(rng=3, quick=True)
    assert a.equals(b)


@pytest.mark.parametrize("fit", m.CALIBRATION, ids=lambda f: f.parameter)
def test_calibrated_values_land_on_their_cells(fit):
    value = fit_parameter("atc98_liedtke", fit, quick=True)
    assert value == pytest.approx(getattr(P, fit.parameter), rel=0.01)


def test_bad_parameter_is_refused():
    with pytest.raises(ValueError, match="pci_cycles_per_word"):
        m.Params(pci_cycles_per_word=0.5)
