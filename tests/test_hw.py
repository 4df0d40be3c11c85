"""Ethernet arithmetic, CPU cost model, catalog provenance, the rng contract."""
import dataclasses

import numpy as np
import pytest

from pysim.hw import CATALOG, CpuCostModel, get
from pysim.hw.net import Ethernet
from pysim.hw.sourced import SOURCE_KINDS
from pysim.queueing import open_network
from pysim.rng import make_rng, resolve_seed, spawn


def test_ethernet_frame_times_at_10_mbit():
    eth = Ethernet()
    assert eth.frame_time_s(46) == pytest.approx(51.2e-6)   # 64-byte minimum frame
    assert eth.frame_time_s(1) == pytest.approx(51.2e-6)    # padded
    assert eth.frame_time_s(1500) == pytest.approx(1214.4e-6)
    assert eth.timing(3001)["frames"] == 3
    # 2 full frames + 1 one-byte frame, each with preamble and gap
    assert eth.message_occupancy_s(3001) == pytest.approx(2 * 1230.4e-6 + 67.2e-6)
    with pytest.raises(ValueError, match="payload"):
        eth.frame_time_s(1501)
    with pytest.raises(ValueError, match="bits_per_s"):
        Ethernet(bits_per_s=0)


def test_cpu_cost_model():
    cpu = CpuCostModel(25e6, {"trap": 10e-6}, {"copy": 0.05e-6, "trap": 0.0})
    assert cpu.cost("trap") == pytest.approx(10e-6)
    assert cpu.cost("copy", 1000) == pytest.approx(50e-6)
    assert cpu.cycles(25) == pytest.approx(1e-6)
    with pytest.raises(KeyError, match="known"):
        cpu.cost("fork")
    with pytest.raises(ValueError, match="fixed_s"):
        CpuCostModel(1e6, {"trap": -1})


def test_every_catalog_number_has_a_source():
    assert len(CATALOG) >= 6
    for machine in CATALOG.values():
        for f in dataclasses.fields(machine):
            value = getattr(machine, f.name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and f.name != "sources":
                assert machine.sources[f.name].split(":")[0] in SOURCE_KINDS, (machine.name, f.name)


def test_catalog_lookup_lists_entries_on_a_miss():
    assert get("DECstation 5000/200").clock_hz == 25e6
    with pytest.raises(KeyError, match="entries"):
        get("VAX 11/780")


def test_rng_contract():
    assert make_rng(3).integers(0, 1 << 30) == make_rng(3).integers(0, 1 << 30)
    g = make_rng(0)
    assert make_rng(g) is g
    assert isinstance(g.bit_generator, np.random.PCG64)
    a, b = spawn(0, 2)
    assert a.integers(0, 1 << 30) != b.integers(0, 1 << 30)
    gen, seed = resolve_seed(None)
    assert isinstance(seed, int) and make_rng(seed).random() == gen.random()
    with pytest.raises(TypeError):
        make_rng(1.5)
    with pytest.raises(ValueError):
        make_rng(-1)


def test_c_draws_consume_the_generators_own_stream():
    g = make_rng(11)
    before = g.bit_generator.state["state"]["state"]
    open_network([1], [1.0], [0.5], departures=100, warmup=0, rng=g)
    assert g.bit_generator.state["state"]["state"] != before  # C advanced the same PCG64
