"""Making Commodity PCs Fit for Signal Processing (Ismert, USENIX ATC 1998): the GuPPI.

Regenerates Table 1 (raw page-streaming DMA throughput in and out), the prose
rates of §4.1 (``rates``: the highest continuous input and output rates),
Figure 2 (the VM swap against a kernel-to-user copy, in cycles per buffer),
Figure 3 (the driver's overhead in cycles per sample), Figure 4 (input latency
against buffer size at two sampling rates) and the §3.1 argument for an
in-kernel driver (``jitter``: a kernel ring against a user-level refill under
competing processes).

First principles, on the lab's shared parts:

* **Page-streaming DMA** over :class:`pysim.hw.bus.PciTiming` and
  :class:`pysim.hw.bus.Bus`: every transfer is one page, split into bursts that
  each pay arbitration, address, the target's initial wait and turnaround; no
  descriptor crosses the bus (the card pops the next page address from its own
  FIFO). Table 1 is the time the engine takes to move about 1.2 MB this way.
* **The card's data FIFOs against PCI stalls** (:class:`ContinuityRun`): the
  A/D fills a :class:`pysim.hw.bus.DeviceFifo` (input) at the sampling rate while
  another master (the host bridge, other cards) takes the shared bus for stalls
  of a bounded random length; data arriving at a full FIFO is lost. The output
  direction is the mirror (:class:`OutputFifo`, built here: the shared DeviceFifo
  only receives): the card prefetches from memory by DMA reads, the D/A drains
  the FIFO, an empty FIFO is an underrun. The highest continuous rate is found
  by bisection with the same stall sequence at every rate.
* **The page-address FIFO, its low-water interrupt and the kernel ring**
  (:class:`DriverRun`): the card pops one page address per page; when the FIFO
  drains to its low-water mark it interrupts, the handler learns which pages
  are done and wakes the reader; ``read()`` swaps the tail buffer with the
  application's and puts the fresh buffer back into the address FIFO. Figure 4
  is the delay from a sample's arrival to the application seeing it; Figure 3's
  interrupts per page come from the same run.
* **Swap against copy** (Figure 2): :class:`pysim.sw.Recipe` counts of a
  software page-table walk, a PTE exchange and an ``invlpg`` for each of the two
  mappings, against a copy of the page at the memory bus's copy rate.
* **Scheduling jitter** (:func:`jitter`): the application as a
  :class:`pysim.sw.sched.Task` beside busy processes under a decay-usage
  scheduler with a 10 ms tick; the card streams regardless, so the ring must hold
  the buffers that complete while the application waits for the CPU. In the
  user-level design of §3.1 the application itself must refill the address FIFO,
  so a wait longer than the FIFO's pages breaks continuity whatever the ring.

Calibrated, each on one published cell (CALIBRATION): the host bridge's initial
wait on a DMA write (Table 1, input), the input FIFO's depth (§4.1, 512 Mbit/s)
and the sampling rate of Figure 4's experiment (its only legible point, just
over 1 ms at two pages). Predictions: Table 1's output, the continuous output
rate of §4.1, and the claims on Figures 2-4 and §3.1. Figure 2's and Figure 3's values
are not legible in the text (axis exponents lost): they are judged by claims.

Then vs now (:func:`measure_now`, :func:`measure_ring_now`): memcpy of a page
against ``mremap`` of a page against ``vmsplice`` of a page (C snippets through
:mod:`pysim.harness`), and a producer at 400 Mbit/s (``clock_nanosleep``) feeding
a ring to a consumer thread with and without busy processes, giving the ring
depth for zero overruns on this machine.

Not modelled: Figure 1 (a block diagram) and the AMPS receiver of §4.3 (no
filter length or cycle count is given). See papers/atc98_ismert/paper.yaml.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.harness.runners import cache_dir, measure
from pysim.hw import CpuCostModel, catalog
from pysim.hw.bus import Bus, DeviceFifo, PciTiming
from pysim.models import Counterfactual, Fit
from pysim.params import ModelParams, assumed, calibrated, from_catalog, stated
from pysim.rng import make_rng, spawn
from pysim.sw import Recipe
from pysim.sw.sched import DecayUsage, Scheduler, Task
from pysim.units import MHz, us
from pysim.harness.exclusive import exclusive, one_core

PPRO = catalog.PENTIUM_PRO_200
#: The FIFO's fill is tracked in steps of this many bytes (the A/D's 32-bit words, four at a time).
CHUNK_BYTES = 16
FIG2_PAGES = (1, 10, 25, 50, 100, 150, 200, 250, 300)
FIG3_PAGES = (1, 2, 5, 10, 20, 30, 50, 100, 150, 200, 250, 300)
FIG4_PAGES = (2, 10, 20, 40, 80, 120, 160)
JITTER_LOADS = (0, 1, 2, 4)


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Cycles are the 200 MHz Pentium Pro's; rates in bytes/s unless named otherwise."""

    clock_hz: float = from_catalog(PPRO, "clock_hz")
    page_bytes: int = stated(4096, "Fig. 3's axis: 2048 samples/page of 16-bit samples; i386 pages", ge=64)
    sample_bytes: int = stated(2, "§1: 16-bit samples (2048 samples in a 4 KB page, Fig. 3)", ge=1)
    # the PCI bus (§4.1) and the card's DMA engine
    pci_clock_hz: float = stated(33 * MHz, "§4.1: maximum PCI throughput 1056 Mbit/s = 33 MHz x 32 bits")
    burst_bytes: int = assumed(128, "the FPGA's DMA bursts: 32 data phases, a common block for a PCI master "
                                    "fed from a data FIFO; the paper gives no burst length", ge=4)
    pci_write_wait_cycles: float = calibrated(1.3354826, "the host bridge's initial wait on a posted DMA write", ge=0)
    pci_read_wait_cycles: float = assumed(8.0, "a 440FX host bridge's initial latency for a DMA read from memory "
                                               "(as atc98_fiuczynski assumes for the same chipset)", ge=0)
    raw_bytes: int = stated(1_200_000, "§4.1: Table 1 times the DMA of approximately 1.2 MB", ge=4096)
    page_streaming: bool = stated(True, "§2: page addresses come from an on-card FIFO the host fills, so bus "
                                        "grants carry only data")
    descriptor_bytes: int = assumed(16, "a scatter/gather descriptor (address, length, next, flags) a "
                                        "conventional DMA engine reads per page; only the counterfactual", ge=4)
    # stalls of the shared bus (§4.1: 'jitter due to the PCI bus'; none is quantified)
    stall_gap_us: float = assumed(100.0, "mean gap between bus stalls by other masters and the host bridge "
                                         "(refresh, CPU-to-PCI cycles, the IDE and video masters): tens per ms")
    stall_min_us: float = assumed(1.0, "a short stall: one burst of another master", ge=0)
    stall_max_us: float = assumed(30.0, "the longest stall: tens of microseconds (the reading's guess; a PIIX "
                                        "passing ISA cycles, or another master's long burst)")
    fifo_in_bytes: float = calibrated(4576.1902, "the GuPPI's input data FIFO (not given)")
    fifo_out_share: float = stated(0.5, "§4.1: the output data FIFO is half the size of the input data FIFO",
                                   le=1)
    # the driver (§3.1) and the VM additions (§3.2)
    addr_fifo_pages: int = assumed(64, "the page-address FIFO's entries (not given; a 64-deep FIFO part)", ge=2)
    low_water_pages: int = assumed(4, "§3.1.1: the interrupt level leaves pages to cover the handler's latency: "
                                      "4 pages are 300 us or more at up to 512 Mbit/s", ge=1)
    ring_buffers: int = stated(4, "Fig. 4: the ring is fixed at 4 buffers", ge=1)
    irq_latency_us: float = assumed(10.0, "from the FIFO's flag to the handler on a Pentium Pro with Linux 2.0")
    wakeup_us: float = assumed(15.0, "waking the reader and switching to it (lmbench's context switch on a "
                                     "Pentium Pro was some 10 us)")
    trap_cycles: float = assumed(300.0, "read()'s entry and return on Linux 2.0 (lmbench null call ~1.5 us)")
    read_cycles: float = assumed(400.0, "the driver's read(): ring bookkeeping, wait queue, user-buffer checks")
    swap_fixed_cycles: float = assumed(200.0, "per swap: find the user area, lock, set up the walk")
    pte_walk_cycles: float = assumed(25.0, "a software page-table walk to one PTE (pgd, pmd, pte offsets)")
    pte_swap_cycles: float = assumed(6.0, "exchange the physical addresses of two PTEs, protections kept")
    invlpg_cycles: float = assumed(30.0, "an invlpg of one page on a Pentium Pro")
    copy_bytes_per_s: float = assumed(50e6, "a Pentium Pro 200's memcpy of buffers larger than its L2: "
                                            "40-60 MB/s on EDO DRAM (lmbench's bcopy of the period)")
    addr_write_cycles: float = assumed(40.0, "one page address written to the card: a posted PIO write")
    irq_cycles: float = assumed(1500.0, "interrupt entry and exit, acknowledge, status read across PCI")
    vm_swap: bool = stated(True, "§3.2: read() swaps PTEs instead of copying")
    scan_cycles_per_sample: float = assumed(2.0, "Fig. 4's application compares each sample to a threshold")
    fig4_mbit_per_s: float = assumed(204.8, "Fig. 4's full sampling rate is not given: the rate of the paper's own "
                                            "application, §4.3's AMPS receiver (8-bit samples at 25.6 MHz)")
    # scheduling jitter (§3.1)
    stream_mbit_per_s: float = stated(400.0, "§1: the A-side cellular band at 25 MHz x 16 bits")
    jitter_buffer_pages: int = assumed(16, "a 64 KB buffer (the application chooses, footnote 2)", ge=1)
    jitter_ring_buffers: int = assumed(16, "a 1 MB ring of locked buffers, configured by the application", ge=1)
    app_cycles_per_sample: float = assumed(2.0, "the application's own work: a light filter on each sample")
    tick_ms: float = assumed(10.0, "Linux/i386 HZ=100")
    quantum_ms: float = assumed(100.0, "a time slice of ten ticks")
    kernel_refill: bool = stated(True, "§3.1: the interrupt handler refills the page-address FIFO; the user-level "
                                       "design left it to the application")

    def __post_init__(self):
        super().__post_init__()
        if self.page_bytes % self.sample_bytes or self.page_bytes % 4:
            raise ValueError(f"page_bytes must hold whole samples and words, got {self.page_bytes!r}")
        if self.low_water_pages >= self.addr_fifo_pages:
            raise ValueError(f"low_water_pages must be < addr_fifo_pages, got {self.low_water_pages!r}")
        if self.stall_min_us > self.stall_max_us:
            raise ValueError(f"stall_min_us must be <= stall_max_us, got {self.stall_min_us!r}")
        if self.fifo_in_bytes * self.fifo_out_share < 2 * self.burst_bytes:
            raise ValueError(f"fifo_in_bytes must hold two bursts in each direction, got {self.fifo_in_bytes!r}")

    @property
    def pci(self) -> PciTiming:
        return PciTiming(self.pci_read_wait_cycles, self.pci_write_wait_cycles, self.burst_bytes,
                         clock_hz=self.pci_clock_hz)

    @property
    def cpu(self) -> CpuCostModel:
        """The Pentium Pro's unit costs (seconds) for the driver's and the VM additions' operations."""
        c = 1.0 / self.clock_hz
        fixed = {"trap": self.trap_cycles * c, "read": self.read_cycles * c, "swap_setup": self.swap_fixed_cycles * c,
                 "pte_walk": self.pte_walk_cycles * c, "pte_swap": self.pte_swap_cycles * c,
                 "invlpg": self.invlpg_cycles * c, "addr_write": self.addr_write_cycles * c,
                 "interrupt": self.irq_cycles * c, "scan": self.scan_cycles_per_sample * c}
        return CpuCostModel(self.clock_hz, fixed, {"copy": 1.0 / self.copy_bytes_per_s})

    @property
    def samples_per_page(self) -> int:
        return self.page_bytes // self.sample_bytes


CALIBRATION = (
    Fit("pci_write_wait_cycles", "table1", "Input", "raw_mbit_per_s", (0.0, 20.0)),
    Fit("fifo_in_bytes", "rates", "Input", "continuous_mbit_per_s", (600.0, 8000.0), tolerance=0.02),
)
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("equal-read-latency", {"pci_read_wait_cycles": 1.3354826},
                   "a DMA read from memory starts as quickly as a posted write"),
    Counterfactual("short-bursts", {"burst_bytes": 16}, "a DMA engine that bursts four words at a time"),
    Counterfactual("equal-fifos", {"fifo_out_share": 1.0}, "an output FIFO as deep as the input FIFO"),
    Counterfactual("copy", {"vm_swap": False}, "read() copies the kernel buffer out instead of swapping PTEs"),
    Counterfactual("user-level", {"kernel_refill": False},
                   "the first design of §3.1: the application refills the page addresses from user space"),
    Counterfactual("no-stalls", {"stall_max_us": 0.2, "stall_min_us": 0.1},
                   "a bus nobody else uses: stalls of a few clocks only"),
    Counterfactual("fine-grained-preemption", {"tick_ms": 0.05, "quantum_ms": 0.5},
                   "a scheduler that preempts for a woken process within 50 us (no 10 ms tick)"),
)


# --- Table 1: page-streaming DMA over PCI ------------------------------------------------------

def _raw_dma(p: Params, write: bool) -> float:
    """Bytes/s of page-streaming DMA of ``raw_bytes`` (whole pages) on the engine's shared bus."""
    sim = Simulation()
    bus = Bus(sim, p.pci)
    pages = math.ceil(p.raw_bytes / p.page_bytes)

    def card():
        for _ in range(pages):
            if not p.page_streaming:  # fetch the next scatter/gather descriptor from memory first
                yield sim.process(bus.transfer(p.descriptor_bytes, write=False))
            yield sim.process(bus.transfer(p.page_bytes, write=write))

    sim.process(card())
    sim.run()
    return pages * p.page_bytes / sim.now


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: raw GuPPI throughput (Mbit/s), DMA of about 1.2 MB to memory (Input) and from it (Output).

    Columns: raw_mbit_per_s, pci_share_pct (of the bus's peak)."""
    p = params or Params()
    rows = {}
    for name, write in (("Input", True), ("Output", False)):
        bps = _raw_dma(p, write)
        rows[name] = {"raw_mbit_per_s": 8 * bps / 1e6, "pci_share_pct": 100 * bps / p.pci.peak_bytes_per_s}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("direction")


# --- §4.1's continuous rates: data FIFOs against bus stalls ------------------------------------

class OutputFifo:
    """The output data FIFO: the card reads pages from memory a burst at a time while room for a burst is
    free; the D/A takes ``chunk`` bytes at its rate; a D/A that finds the FIFO empty is an underrun.
    (The shared DeviceFifo models the receive side only.)"""

    def __init__(self, sim, bus: Bus, *, capacity_bytes: float, rate_bytes_per_s: float, burst_bytes: int):
        self.sim, self.bus = sim, bus
        self.capacity, self.rate, self.burst = capacity_bytes, rate_bytes_per_s, burst_bytes
        self.level = capacity_bytes  # primed before the D/A starts
        self.underrun = 0
        self.room = sim.event()

    def play(self, nbytes: int, chunk: int = CHUNK_BYTES):
        step = chunk / self.rate
        for _ in range(int(nbytes // chunk)):
            yield self.sim.timeout(step)
            if self.level < chunk:
                self.underrun += chunk
            else:
                self.level -= chunk
            if self.capacity - self.level >= self.burst and not self.room.triggered:
                self.room.succeed()

    def fill(self):
        while True:
            if self.capacity - self.level < self.burst:
                self.room = self.sim.event()
                yield self.room
            yield self.sim.process(self.bus.transfer(self.burst, write=False))
            self.level = min(self.capacity, self.level + self.burst)


class ContinuityRun:
    """One stream at a fixed rate through a data FIFO, with another master stalling the shared bus."""

    def __init__(self, p: Params, rate_bytes_per_s: float, *, output: bool, duration_s: float, rng):
        self.p, self.sim = p, Simulation()
        self.bus = Bus(self.sim, p.pci)
        nbytes = int(rate_bytes_per_s * duration_s)
        if output:
            self.fifo = OutputFifo(self.sim, self.bus, capacity_bytes=p.fifo_in_bytes * p.fifo_out_share,
                                   rate_bytes_per_s=rate_bytes_per_s, burst_bytes=p.burst_bytes)
            self.sim.process(self.fifo.play(nbytes))
            self.sim.process(self.fifo.fill())
        else:
            self.fifo = DeviceFifo(self.sim, self.bus, capacity_bytes=int(p.fifo_in_bytes),
                                   wire_bytes_per_s=rate_bytes_per_s, dma_bytes=p.burst_bytes)
            self.sim.process(self.fifo.stream(nbytes, chunk=CHUNK_BYTES))
            self.sim.process(self.fifo.drain())
        gen = make_rng(rng)
        n = int(3 * duration_s / (p.stall_gap_us * us)) + 10
        self.gaps = gen.exponential(p.stall_gap_us * us, n)
        self.stalls = gen.uniform(p.stall_min_us * us, p.stall_max_us * us, n)
        self.sim.process(self.stall_master(duration_s))
        self.duration = duration_s

    def stall_master(self, until_s):
        for gap, hold in zip(self.gaps, self.stalls):
            yield self.sim.timeout(gap)
            if self.sim.now > until_s:
                return
            with self.bus.arbiter.request() as turn:
                yield turn
                yield self.sim.timeout(hold)

    def lost_bytes(self) -> int:
        self.sim.run(until=self.duration)
        return self.fifo.underrun if isinstance(self.fifo, OutputFifo) else self.fifo.overrun


def continuous_limit(p: Params, *, output: bool, duration_s: float, rng=0, steps: int = 12) -> float:
    """The highest rate (bytes/s) with no byte lost, by bisection; every rate sees the same stalls."""
    seed = int(make_rng(rng).integers(2**31))
    lo, hi = 1e6, p.pci.peak_bytes_per_s
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        if ContinuityRun(p, mid, output=output, duration_s=duration_s, rng=seed).lost_bytes() == 0:
            lo = mid
        else:
            hi = mid
    return lo


def rates(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4.1: the highest continuous rate (Mbit/s) through the GuPPI's data FIFOs, input and output.

    Columns: continuous_mbit_per_s, fifo_bytes."""
    p = params or Params()
    duration = 0.03  # the worst stall cluster grows with the run: the same window in both profiles
    streams = spawn(make_rng(rng), 2)
    rows = {}
    for (name, output), gen in zip((("Input", False), ("Output", True)), streams):
        bps = continuous_limit(p, output=output, duration_s=duration, rng=gen, steps=10 if quick else 14)
        rows[name] = {"continuous_mbit_per_s": 8 * bps / 1e6,
                      "fifo_bytes": p.fifo_in_bytes * (p.fifo_out_share if output else 1.0)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("direction")


# --- Figure 2: swap against copy ----------------------------------------------------------------

def swap_recipe(p: Params, pages: int) -> Recipe:
    """The VM swap of §3.2 for a buffer of ``pages``: per page, walk to the user's and the kernel's PTE,
    exchange them, flush both entries from the TLB."""
    per_page = Recipe(ops={"pte_walk": 2, "pte_swap": 1, "invlpg": 2})
    return Recipe(ops={"swap_setup": 1}) + pages * per_page


def copy_recipe(p: Params, pages: int) -> Recipe:
    return Recipe(nbytes={"copy": pages * p.page_bytes})


def figure2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 2: cycles to hand a buffer of n pages to the application, by VM swap and by copy.

    Index: pages. Columns: swap_cycles (the driver's read path: the swap, or the copy when vm_swap is off),
    copy_cycles, copy_over_swap."""
    p = params or Params()
    rows = []
    for n in FIG2_PAGES:
        handoff = swap_recipe(p, n) if p.vm_swap else copy_recipe(p, n)
        swap_c = handoff.seconds(p.cpu) * p.clock_hz
        copy_c = copy_recipe(p, n).seconds(p.cpu) * p.clock_hz
        rows.append({"pages": n, "swap_cycles": swap_c, "copy_cycles": copy_c, "copy_over_swap": copy_c / swap_c})
    return pd.DataFrame(rows).set_index("pages")


# --- the driver: page-address FIFO, low-water interrupt, ring, read() ----------------------------

class DriverRun:
    """The input driver of §3.1.1 on the engine, the application always waiting in read().

    The card pops a page address at the start of each page and streams the page at the sampling rate; when
    the address FIFO drains to ``low_water_pages`` it interrupts. The handler (after ``irq_latency_us``)
    marks every page before the current one done and wakes the reader; read() hands over the tail buffer if
    all its pages are done (a swap), the application scans it, and the swapped-in buffer goes back into the
    address FIFO, as do free buffers whenever the driver runs."""

    def __init__(self, p: Params, *, rate_bytes_per_s: float, buffer_pages: int, buffers: int, n_buffers: int):
        self.p, self.sim = p, Simulation()
        self.page_s = p.page_bytes / rate_bytes_per_s
        self.n, self.ring, self.total = buffer_pages, buffers, n_buffers
        self.fifo = []            # page numbers queued on the card, in order
        self.next_page = 0        # the next page number to queue (buffers are consecutive pages)
        self.known_done = 0       # pages the driver knows are complete
        self.read_upto = 0        # buffers handed to the application
        self.current = -1         # the page the card is streaming
        self.interrupts = 0
        self.starved = 0
        # the driver sets the flag where it can fire: below what the ring can put in the FIFO
        self.low_water = max(1, min(p.low_water_pages, (buffers * buffer_pages) // 2))
        self.delivered = {}       # buffer -> time the application had seen it (scan done)
        self.reader = self.sim.event()
        self.irq_armed = True
        self._queue()
        self.sim.process(self.card())
        self.sim.process(self.application())

    def _queue(self):
        """Put free ring buffers' pages into the address FIFO, as many as fit."""
        limit = (self.read_upto + self.ring) * self.n  # the ring's pages not held by the application
        while self.next_page < min(limit, self.total * self.n) and len(self.fifo) < self.p.addr_fifo_pages:
            self.fifo.append(self.next_page)
            self.next_page += 1

    def card(self):
        while True:
            if not self.fifo:
                if self.next_page >= self.total * self.n:
                    return
                self.starved += 1  # no address: the data FIFO would overflow; wait for the driver
                yield self.sim.timeout(self.page_s / 8)
                continue
            self.current = self.fifo.pop(0)
            if len(self.fifo) <= self.low_water and self.irq_armed:
                self.irq_armed = False  # the handler re-enables the flag's interrupt when it is done
                self.sim.process(self.interrupt())
            yield self.sim.timeout(self.page_s)

    def interrupt(self):
        yield self.sim.timeout(self.p.irq_latency_us * us)
        self.interrupts += 1
        self.known_done = max(self.known_done, self.current)  # every page before the current one is done
        self._queue()
        self.irq_armed = True
        if not self.reader.triggered:
            self.reader.succeed()

    def application(self):
        p = self.p
        swap_s = (swap_recipe(p, self.n) if p.vm_swap else copy_recipe(p, self.n)).seconds(p.cpu)
        read_s = Recipe(ops={"trap": 1, "read": 1}).seconds(p.cpu)
        scan_s = Recipe(ops={"scan": self.n * p.samples_per_page}).seconds(p.cpu)
        while self.read_upto < self.total:
            if self.known_done < (self.read_upto + 1) * self.n:
                self.reader = self.sim.event()
                yield self.reader
                yield self.sim.timeout(p.wakeup_us * us)
                continue
            yield self.sim.timeout(read_s + swap_s)
            self.read_upto += 1
            self._queue()
            yield self.sim.timeout(scan_s)
            self.delivered[self.read_upto - 1] = self.sim.now

    def run(self) -> dict:
        self.sim.run(until=(self.total + 4 * self.ring + 4) * self.n * self.page_s)
        fill = self.n * self.page_s
        warm = max(2 * self.ring, self.total // 4)
        lat = [t - (k * fill + fill / 2) for k, t in self.delivered.items() if k >= warm]
        return {"latency_s": float(np.mean(lat)) if lat else math.nan, "interrupts": self.interrupts,
                "pages": self.total * self.n, "starved": self.starved, "delivered": len(self.delivered)}


def _n_buffers(pages: int, quick: bool) -> int:
    return max(12, (40 if quick else 160) // pages + 12)


def figure4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 4: mean input latency (ms) from a step's arrival at the A/D to the application seeing it,
    against buffer size (pages), ring of ``ring_buffers``, at the full sampling rate and at half of it.

    Index: pages. Columns: full_rate_latency_ms, half_rate_latency_ms."""
    p = params or Params()
    rows = []
    for n in FIG4_PAGES:
        row = {"pages": n}
        for col, share in (("full_rate_latency_ms", 1.0), ("half_rate_latency_ms", 0.5)):
            r = DriverRun(p, rate_bytes_per_s=share * p.fig4_mbit_per_s * 1e6 / 8, buffer_pages=n,
                          buffers=p.ring_buffers, n_buffers=_n_buffers(n, quick)).run()
            row[col] = 1e3 * r["latency_s"]
        rows.append(row)
    return pd.DataFrame(rows).set_index("pages")


# --- Figure 3: the driver's overhead per sample ---------------------------------------------------

def figure3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 3: the CPU's cycles per input sample spent in read() (with the swap) and in the address FIFO's
    interrupts, against buffer size, at 512 Mbit/s with a ring of ``ring_buffers``.

    Index: pages. Columns: cycles_per_sample, read_cycles_per_sample, interrupt_cycles_per_sample,
    interrupts_per_page."""
    p = params or Params()
    rate = 512e6 / 8
    rows = []
    for n in FIG3_PAGES:
        r = DriverRun(p, rate_bytes_per_s=rate, buffer_pages=n, buffers=p.ring_buffers,
                      n_buffers=_n_buffers(n, quick)).run()
        per_page_irq = r["interrupts"] / r["pages"]
        handoff = swap_recipe(p, n) if p.vm_swap else copy_recipe(p, n)
        read = (Recipe(ops={"trap": 1, "read": 1, "addr_write": n}) + handoff).seconds(p.cpu) * p.clock_hz
        samples = n * p.samples_per_page
        irq = per_page_irq * n * p.irq_cycles
        rows.append({"pages": n, "cycles_per_sample": (read + irq) / samples,
                     "read_cycles_per_sample": read / samples, "interrupt_cycles_per_sample": irq / samples,
                     "interrupts_per_page": per_page_irq})
    return pd.DataFrame(rows).set_index("pages")


# --- §3.1: the ring against scheduling jitter ------------------------------------------------------

class JitterRun:
    """The application beside ``busy`` CPU-bound processes under a decay-usage scheduler with ticks. The card
    completes a buffer every ``fill_s``; the application, woken for each, reads and works on it."""

    def __init__(self, p: Params, busy: int, duration_s: float):
        self.p, self.sim = p, Simulation()
        rate = p.stream_mbit_per_s * 1e6 / 8
        self.page_s = p.page_bytes / rate
        self.fill_s = p.jitter_buffer_pages * self.page_s
        work_s = p.app_cycles_per_sample * p.jitter_buffer_pages * p.samples_per_page / p.clock_hz
        self.work_s, self.duration = work_s, duration_s
        tick = p.tick_ms * 1e-3
        self.sched = Scheduler(self.sim, DecayUsage(quantum_s=p.quantum_ms * 1e-3, tick_s=tick), tick_s=tick)
        self.reads, self.runs, self.last_kind = 0, [], None
        self.app = Task("app", [("sleep", self.fill_s)], decide=self.decide)
        self.sched.add(self.app)
        for i in range(busy):
            self.sched.add(Task(f"busy{i}", [("cpu", 1.0)]))

    def decide(self, now):
        if self.last_kind == "cpu":
            self.reads += 1
        done = int(now / self.fill_s + 1e-9)
        if now >= self.duration:
            return None
        if done > self.reads:
            self.runs.append((now, self.reads))
            self.last_kind = "cpu"
            return ("cpu", self.work_s)
        self.last_kind = "sleep"
        return ("sleep", max((done + 1) * self.fill_s - now, 1e-9))

    def run(self) -> dict:
        self.sim.run(until=self.duration + 0.05)
        # occupancy when buffer k completes: buffers done and not yet taken, plus the one filling
        starts = np.array([t for t, _ in self.runs])
        taken = np.array([k for _, k in self.runs])
        completions = np.arange(1, int(self.duration / self.fill_s)) * self.fill_s
        idx = np.searchsorted(starts, completions, side="right") - 1
        read_by = np.where(idx >= 0, taken[np.maximum(idx, 0)] + 1, 0)
        backlog = np.arange(1, len(completions) + 1) - read_by
        ring_needed = int(backlog.max()) + 1 if len(backlog) else 1
        # the user-level design: the application tops the address FIFO up only when it runs
        horizon = self.p.addr_fifo_pages * self.page_s
        gaps = np.diff(np.concatenate([[0.0], starts]))
        breaks = int(np.sum(gaps > horizon))
        kernel_overruns = int(np.sum(backlog + 1 > self.p.jitter_ring_buffers))
        return {"ring_needed": ring_needed, "breaks": breaks, "kernel_overruns": kernel_overruns,
                "max_wait_ms": 1e3 * float(max(self.app.waits, default=0.0))}


def jitter(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.1: continuity of a 400 Mbit/s stream against competing CPU-bound processes.

    Index: busy (competing processes). Columns: ring_needed_buffers (smallest ring with no overrun),
    kernel_overruns_per_s (breaks with the driver's ring of ``jitter_ring_buffers``; with kernel_refill off,
    the user-level design's breaks), user_level_breaks_per_s (the application refilling the page addresses:
    a wait longer than the address FIFO's pages loses data), max_wait_ms (the application's longest wait
    for the CPU)."""
    p = params or Params()
    duration = 0.5 if quick else 2.0
    rows = []
    for busy in JITTER_LOADS:
        r = JitterRun(p, busy, duration).run()
        user = r["breaks"] / duration
        kernel = r["kernel_overruns"] / duration if p.kernel_refill else user
        rows.append({"busy": busy, "ring_needed_buffers": r["ring_needed"], "kernel_overruns_per_s": kernel,
                     "user_level_breaks_per_s": user, "max_wait_ms": r["max_wait_ms"]})
    return pd.DataFrame(rows).set_index("busy")


# --- then vs now -----------------------------------------------------------------------------------

NOW_PAGES = 300  # Figure 2's largest buffer: 1.2 MB, larger than a 1998 L2, a fraction of today's LLC

_PAGE_DECLS = r"""
static char *src, *dst, *cur, *other; static int pfd[2], devnull; static long pg;
"""
#: One page handed over per iteration, three ways (the body of a harness C snippet).
NOW_SNIPPETS = {
    "memcpy": dict(
        setup=f"pg = sysconf(_SC_PAGESIZE); src = malloc({NOW_PAGES} * pg); dst = malloc({NOW_PAGES} * pg);"
              f" memset(src, 1, {NOW_PAGES} * pg); memset(dst, 2, {NOW_PAGES} * pg);",
        body=f"memcpy(dst + (i % {NOW_PAGES}) * pg, src + (i % {NOW_PAGES}) * pg, pg); sink += dst[(i % {NOW_PAGES}) * pg];"),
    "mremap": dict(
        setup="pg = sysconf(_SC_PAGESIZE); char *a = mmap(0, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);"
              " cur = a; other = a + pg; cur[0] = 1; munmap(other, pg);",
        body="{ char *t; if (mremap(cur, pg, pg, MREMAP_MAYMOVE | MREMAP_FIXED, other) == MAP_FAILED) return -1;"
             " t = cur; cur = other; other = t; sink += cur[0]; }"),
    "vmsplice": dict(
        setup="pg = sysconf(_SC_PAGESIZE); src = aligned_alloc(pg, pg); memset(src, 1, pg);"
              " if (pipe(pfd)) return 1; devnull = open(\"/dev/null\", O_WRONLY);",
        body="{ struct iovec v = { src, (size_t)pg }; if (vmsplice(pfd[1], &v, 1, 0) != pg) return -1;"
             " if (splice(pfd[0], 0, devnull, 0, pg, 0) != pg) return -1; sink += 1; }"),
}
_NOW_INCLUDES = ("string.h", "unistd.h", "fcntl.h", "sys/mman.h", "sys/uio.h")


@one_core()
def measure_now(*, quick: bool = False) -> pd.DataFrame:
    """Figure 2 then and now: handing one 4 KB page to another address, on this machine (C snippets timed by
    :func:`pysim.harness.measure`): a copy (cycling over a 300-page buffer, as Figure 2's largest), an
    ``mremap`` that moves the page's PTE (the swap's analogue: a PTE moved and the TLB entry flushed), and a
    ``vmsplice`` of the page into a pipe spliced on to /dev/null (zero-copy hand-over through the kernel).

    Index: method. Columns: available, ns_per_page, then_ns_per_page (the model's Pentium Pro: the copy,
    and the swap's per-page cost for the two VM methods), note."""
    p = Params()
    then_copy = copy_recipe(p, 1).seconds(p.cpu) * 1e9
    then_swap = (swap_recipe(p, 2).seconds(p.cpu) - swap_recipe(p, 1).seconds(p.cpu)) * 1e9
    rows = []
    for name, snip in NOW_SNIPPETS.items():
        m = measure("c", snip["body"], name=name, setup=snip["setup"], decls=_PAGE_DECLS, includes=_NOW_INCLUDES,
                    enough_s=0.005 if quick else 0.02, tries=3 if quick else 7)
        ok = m.available and m.per_op_s > 0  # a failed call makes the loop return a negative time
        rows.append({"method": name, "available": ok, "ns_per_page": m.per_op_s * 1e9 if ok else np.nan,
                     "then_ns_per_page": then_copy if name == "memcpy" else then_swap, "note": m.reason if m.available else (m.reason or "")})
        if m.available and not ok:
            rows[-1]["note"] = f"{name} failed on this machine (no such facility, or refused)"
    return pd.DataFrame(rows).set_index("method")


RING_C = r"""#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
/* A producer at a fixed rate (clock_nanosleep to absolute deadlines) completes a buffer each period, as the
   card does; a consumer thread takes buffers and touches every page. Busy child processes load the CPUs.
   Reports the largest backlog (the ring depth needed for zero overruns is one more) and the producer's
   wake-up lateness. usage: ring <buffer_bytes> <period_ns> <seconds> <busy> */
static atomic_long produced, consumed;
static long nbuf, bufsz; static char *ring;
static volatile int stop;
static void *consumer(void *arg) {
    (void)arg; unsigned long s = 0;
    while (!stop || atomic_load(&consumed) < atomic_load(&produced)) {
        long c = atomic_load(&consumed);
        if (c >= atomic_load(&produced)) { struct timespec t = {0, 20000}; nanosleep(&t, 0); continue; }
        char *b = ring + (c % nbuf) * bufsz;
        for (long k = 0; k < bufsz; k += 64) s += b[k];
        atomic_store(&consumed, c + 1);
    }
    return (void *)s;
}
int main(int argc, char **argv) {
    if (argc < 5) return 2;
    bufsz = atol(argv[1]); long period = atol(argv[2]); double secs = atof(argv[3]); int busy = atoi(argv[4]);
    nbuf = 4096; ring = malloc(nbuf * bufsz); memset(ring, 0, nbuf * bufsz);
    pid_t kids[64]; int nk = busy < 64 ? busy : 64;
    for (int i = 0; i < nk; i++) { kids[i] = fork(); if (kids[i] == 0) { volatile unsigned long x = 0; for (;;) x++; } }
    pthread_t th; pthread_create(&th, 0, consumer, 0);
    struct timespec next; clock_gettime(CLOCK_MONOTONIC, &next);
    long n = (long)(secs * 1e9 / period), maxback = 0; double late_max = 0, late_sum = 0;
    for (long k = 0; k < n; k++) {
        next.tv_nsec += period; while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec++; }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, 0);
        struct timespec now; clock_gettime(CLOCK_MONOTONIC, &now);
        double late = (now.tv_sec - next.tv_sec) * 1e6 + (now.tv_nsec - next.tv_nsec) / 1e3;
        if (late > late_max) late_max = late; late_sum += late;
        char *b = ring + (k % nbuf) * bufsz; b[0] = (char)k;  /* the DMA's last word */
        atomic_store(&produced, k + 1);
        long back = k + 1 - atomic_load(&consumed);
        if (back > maxback) maxback = back;
        if (back >= nbuf) break;
    }
    stop = 1; pthread_join(th, 0);
    for (int i = 0; i < nk; i++) { kill(kids[i], SIGKILL); waitpid(kids[i], 0, 0); }
    printf("buffers %ld max_backlog %ld late_max_us %.1f late_mean_us %.2f\n", n, maxback, late_max, late_sum / n);
    return 0;
}
"""


def _ring_program() -> tuple:
    """(path of the compiled ring program, "") or (None, why not)."""
    d = cache_dir() / "atc98_ismert"
    d.mkdir(parents=True, exist_ok=True)
    h = 0xCBF29CE484222325
    for ch in RING_C.encode():
        h = ((h ^ ch) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    exe = d / f"ring-{h:016x}"
    if exe.exists():
        return exe, ""
    src = exe.with_suffix(".c")
    src.write_text(RING_C)
    r = run_command(["gcc", "-O2", "-std=c11", "-pthread", "-o", exe, src], timeout_s=120.0)
    if not r.available:
        return None, r.reason
    if r.returncode != 0:
        return None, f"gcc failed: {r.stderr.strip()[-400:]}"
    return exe, ""


def measure_ring_now(*, quick: bool = False, loads=(0, 2, 4)) -> pd.DataFrame:
    """§3.1 now: a 400 Mbit/s stream of 16-page buffers (a producer on ``clock_nanosleep``) into a ring read
    by a consumer thread, beside ``busy`` spinning processes; 0.5 s per load (quick) or 3 s.

    Index: busy. Columns: available, ring_needed_buffers (largest backlog + 1), late_max_us, late_mean_us,
    then_ring_needed_buffers (the model's 1998 scheduler, :func:`jitter`), note."""
    p = Params()
    buf = p.jitter_buffer_pages * p.page_bytes
    period_ns = int(round(buf * 8 / (p.stream_mbit_per_s * 1e6) * 1e9))
    then = jitter(p, quick=True)
    exe, why = _ring_program()
    rows = []
    for busy in loads:
        row = {"busy": busy, "available": False, "ring_needed_buffers": np.nan, "late_max_us": np.nan,
               "late_mean_us": np.nan,
               "then_ring_needed_buffers": float(then["ring_needed_buffers"].get(busy, np.nan)), "note": why}
        if exe is not None:
            with exclusive():  # the busy spinners load every core
                r = run_command([exe, buf, period_ns, 0.5 if quick else 3.0, busy], timeout_s=60.0)
            words = r.stdout.split() if r.available and r.returncode == 0 else []
            if len(words) >= 8:
                row.update(available=True, ring_needed_buffers=int(words[3]) + 1, late_max_us=float(words[5]),
                           late_mean_us=float(words[7]), note="")
            else:
                row["note"] = r.reason or r.stderr[-200:]
        rows.append(row)
    return pd.DataFrame(rows).set_index("busy")
