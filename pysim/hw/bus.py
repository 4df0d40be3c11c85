"""An I/O bus with DMA: PCI burst timing, masters sharing the bus, a device FIFO that overruns when
the bus stalls, descriptor rings, and a memory bus the CPU's cache-line traffic shares with DMA.

:class:`PciTiming` prices one transaction the way the PCI Local Bus
Specification 2.1 lays it out: arbitration, an address phase, the target's
initial wait states (a read from memory through the host bridge waits much
longer than a posted write), data phases of ``width_bytes`` a clock, a
turnaround; a transfer larger than ``max_burst_bytes`` (the latency timer,
or a cache line for Memory Read Line) is split into bursts that each pay
the overheads again. :meth:`PciTiming.efficiency` is the share of the peak
rate a transfer gets.

On the engine, :class:`Bus` is one shared bus: each master's transfer
takes the bus a burst at a time, first come first served, so masters
interleave at burst boundaries. :class:`DeviceFifo` fills at the wire's
rate and is drained by DMA over a :class:`Bus`; data arriving to a full
FIFO is lost (an overrun). :class:`DescriptorRing` holds buffers a
producer fills and a consumer frees; a full ring drops.

>>> pci = PciTiming(read_wait_cycles=10, write_wait_cycles=2, max_burst_bytes=256)
>>> round(pci.efficiency(4096, write=True), 3)
0.928
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class PciTiming:
    """One PCI bus's transaction timing. Defaults are the 32-bit, 33 MHz bus of PCI 2.1."""

    read_wait_cycles: int       # the target's initial wait states on a read (platform-specific)
    write_wait_cycles: int      # on a write (a posted write is accepted quickly)
    max_burst_bytes: int        # a burst ends here (latency timer, cache line, device FIFO)
    clock_hz: float = 33.33e6
    width_bytes: int = 4
    arbitration_cycles: int = 1
    address_cycles: int = 1
    turnaround_cycles: int = 1

    def __post_init__(self):
        if min(self.read_wait_cycles, self.write_wait_cycles, self.arbitration_cycles, self.address_cycles,
               self.turnaround_cycles) < 0:
            raise ValueError("cycle counts must be >= 0")
        if not self.clock_hz > 0 or self.width_bytes < 1 or self.max_burst_bytes < self.width_bytes:
            raise ValueError("clock_hz > 0, width_bytes >= 1 and max_burst_bytes >= width_bytes are needed")

    @property
    def peak_bytes_per_s(self) -> float:
        return self.clock_hz * self.width_bytes

    def burst_cycles(self, nbytes: int, write: bool) -> int:
        """Cycles of one burst of ``nbytes`` (at most max_burst_bytes)."""
        wait = self.write_wait_cycles if write else self.read_wait_cycles
        data = math.ceil(nbytes / self.width_bytes)
        return self.arbitration_cycles + self.address_cycles + wait + data + self.turnaround_cycles

    def bursts(self, nbytes: int) -> list:
        """The burst sizes a transfer of ``nbytes`` is split into."""
        if nbytes < 1:
            raise ValueError(f"a transfer moves at least one byte, got {nbytes!r}")
        full, rest = divmod(nbytes, self.max_burst_bytes)
        return [self.max_burst_bytes] * full + ([rest] if rest else [])

    def transfer_s(self, nbytes: int, *, write: bool) -> float:
        """Seconds the bus is busy moving ``nbytes`` (DMA read from memory: write=False)."""
        return sum(self.burst_cycles(b, write) for b in self.bursts(nbytes)) / self.clock_hz

    def efficiency(self, nbytes: int, *, write: bool) -> float:
        """The transfer's rate as a share of the bus's peak."""
        return nbytes / self.transfer_s(nbytes, write=write) / self.peak_bytes_per_s


class Bus:
    """A shared bus on the engine: transfers take it a burst at a time, first come first served."""

    def __init__(self, sim, timing: PciTiming):
        self.sim, self.timing = sim, timing
        self.arbiter = sim.resource(1)
        self.busy_s = 0.0
        self.bytes_moved = {"read": 0, "write": 0}

    def transfer(self, nbytes: int, *, write: bool):
        """Move ``nbytes`` (a process to yield): each burst waits its turn for the bus."""
        for b in self.timing.bursts(nbytes):
            with self.arbiter.request() as turn:
                yield turn
                t = self.timing.burst_cycles(b, write) / self.timing.clock_hz
                self.busy_s += t
                yield self.sim.timeout(t)
        self.bytes_moved["write" if write else "read"] += nbytes


class MemoryBus:
    """A memory bus moving cache lines one at a time for whoever asks (the CPU and DMA alike)."""

    def __init__(self, sim, *, line_bytes: int, line_s: float):
        if line_bytes < 1 or not line_s > 0:
            raise ValueError("line_bytes >= 1 and line_s > 0 are needed")
        self.sim, self.line_bytes, self.line_s = sim, line_bytes, line_s
        self.port = sim.resource(1)
        self.lines = {"cpu": 0, "dma": 0}

    def move(self, nbytes: int, who: str = "cpu"):
        """Move ``nbytes`` as whole cache lines, taking the bus line by line (a process to yield)."""
        for _ in range(max(1, math.ceil(nbytes / self.line_bytes))):
            with self.port.request() as turn:
                yield turn
                yield self.sim.timeout(self.line_s)
            self.lines[who] = self.lines.get(who, 0) + 1


class DeviceFifo:
    """A device's receive FIFO of ``capacity_bytes``, filled from the wire at ``wire_bytes_per_s`` and
    drained over ``bus`` in transfers of ``dma_bytes`` once that much is waiting."""

    def __init__(self, sim, bus: Bus, *, capacity_bytes: int, wire_bytes_per_s: float, dma_bytes: int):
        if capacity_bytes < dma_bytes or dma_bytes < 1 or not wire_bytes_per_s > 0:
            raise ValueError("need 1 <= dma_bytes <= capacity_bytes and wire_bytes_per_s > 0")
        self.sim, self.bus = sim, bus
        self.capacity, self.wire_rate, self.dma_bytes = capacity_bytes, wire_bytes_per_s, dma_bytes
        self.level, self.received, self.delivered, self.overrun = 0, 0, 0, 0
        self.data = sim.event()

    def stream(self, nbytes: int, chunk: int = 4):
        """The wire delivers ``nbytes`` at its rate, ``chunk`` bytes at a time (a process to yield)."""
        step = chunk / self.wire_rate
        sent = 0
        while sent < nbytes:
            yield self.sim.timeout(step)
            k = min(chunk, nbytes - sent)
            sent += k
            self.received += k
            if self.level + k > self.capacity:
                self.overrun += k
                continue
            self.level += k
            if self.level >= self.dma_bytes and not self.data.triggered:
                self.data.succeed()

    def drain(self):
        """DMA the FIFO's contents to memory whenever a transfer's worth is waiting (run forever)."""
        while True:
            if self.level < self.dma_bytes:
                self.data = self.sim.event()
                yield self.data
            take = self.dma_bytes
            yield self.sim.process(self.bus.transfer(take, write=True))
            self.level -= take
            self.delivered += take


class DescriptorRing:
    """``size`` receive descriptors: the device fills one per packet, the host frees it when done."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError(f"a ring needs at least one descriptor, got {size!r}")
        self.size, self.used, self.filled, self.dropped, self.freed = size, 0, 0, 0, 0

    def fill(self) -> bool:
        """A packet arrives: True if a descriptor took it, False if the ring was full (dropped)."""
        if self.used >= self.size:
            self.dropped += 1
            return False
        self.used += 1
        self.filled += 1
        return True

    def free(self, n: int = 1) -> None:
        if n > self.used:
            raise ValueError(f"freeing {n} descriptors but only {self.used} are in use")
        self.used -= n
        self.freed += n
