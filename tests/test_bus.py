"""The I/O bus: PCI burst timing by hand, masters interleaving on a shared bus, a device FIFO that
overruns once the wire outruns the bus, memory-bus sharing, descriptor rings."""
import pytest

from pysim.engine import Simulation
from pysim.hw.bus import Bus, DescriptorRing, DeviceFifo, MemoryBus, PciTiming

PCI = PciTiming(read_wait_cycles=10, write_wait_cycles=2, max_burst_bytes=256)


def test_a_burst_pays_arbitration_address_wait_states_and_turnaround_once():
    assert PCI.burst_cycles(256, write=True) == 1 + 1 + 2 + 64 + 1
    assert PCI.burst_cycles(256, write=False) == 1 + 1 + 10 + 64 + 1
    assert PCI.bursts(600) == [256, 256, 88]
    assert PCI.transfer_s(600, write=True) == pytest.approx((69 + 69 + (5 + 22)) / 33.33e6)
    # small transfers waste the bus: reads more than writes, and more the smaller they are
    assert PCI.efficiency(64, write=False) < PCI.efficiency(64, write=True) < PCI.efficiency(4096, write=True)
    assert PCI.peak_bytes_per_s == pytest.approx(133.3e6, rel=1e-3)


def test_two_masters_interleave_burst_by_burst_and_finish_together():
    sim = Simulation()
    bus = Bus(sim, PCI)
    done = {}

    def master(name):
        yield sim.process(bus.transfer(64 * 256, write=True))
        done[name] = sim.now

    sim.process(master("a"))
    sim.process(master("b"))
    sim.run()
    alone = PCI.transfer_s(64 * 256, write=True)
    assert done["b"] == pytest.approx(2 * alone) and done["a"] == pytest.approx(2 * alone - 69 / 33.33e6)


@pytest.mark.parametrize("wire_mb_s, overruns", [(80, False), (200, True)])
def test_a_fifo_overruns_exactly_when_the_wire_outruns_what_dma_can_move(wire_mb_s, overruns):
    sim = Simulation()
    bus = Bus(sim, PCI)
    fifo = DeviceFifo(sim, bus, capacity_bytes=2048, wire_bytes_per_s=wire_mb_s * 1e6, dma_bytes=256)
    sim.process(fifo.drain())
    p = sim.process(fifo.stream(2_000_000, chunk=64))
    sim.run(until=1.0)
    assert p.triggered
    dma_rate = 256 / (PCI.burst_cycles(256, write=True) / PCI.clock_hz)
    assert (fifo.overrun > 0) == overruns
    if overruns:  # what is lost is the excess of the wire over the bus
        assert fifo.overrun / fifo.received == pytest.approx(1 - dma_rate / (wire_mb_s * 1e6), abs=0.03)


def test_dma_on_the_memory_bus_slows_the_cpu_down():
    def finish(with_dma):
        sim = Simulation()
        mem = MemoryBus(sim, line_bytes=32, line_s=100e-9)
        if with_dma:
            sim.process(mem.move(1_000_000, who="dma"))
        cpu = sim.process(mem.move(320_000, who="cpu"))
        sim.run(until=cpu)
        return sim.now
    alone = finish(False)
    assert alone == pytest.approx(10_000 * 100e-9)
    assert finish(True) > 1.5 * alone


def test_a_full_ring_drops_and_freeing_makes_room():
    ring = DescriptorRing(2)
    assert ring.fill() and ring.fill() and not ring.fill()
    ring.free()
    assert ring.fill() and (ring.filled, ring.dropped, ring.freed) == (3, 1, 1)
    with pytest.raises(ValueError, match="only"):
        ring.free(5)


def test_bad_timings_are_refused():
    with pytest.raises(ValueError, match="max_burst_bytes"):
        PciTiming(read_wait_cycles=1, write_wait_cycles=1, max_burst_bytes=2)
    with pytest.raises(ValueError, match="at least one byte"):
        PCI.bursts(0)
