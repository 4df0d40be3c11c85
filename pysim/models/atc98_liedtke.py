"""High-Performance Caching With The Lava Hit-Server (Liedtke, Panteleenko, Jaeger & Islam, USENIX ATC 1998).

Regenerates Table 1 (the pre-implementation analysis of sending one 1056-byte packet: PCI words, PCI,
memory-bus and Ethernet time per step, and the 624 Mbps the memory bus allows), the throughputs of §4's
prose (``throughput``: gets/s and Mbps for 1 KB and 10 KB objects, and 32 KB video blocks), the other
figures of §2.4 and §4 (``prose``: the DMA limit of the memory bus, the video clients, the loss of
delivery rate while a miss is transferred), Table 2 (hit and miss latency and bandwidth, 1 KB to 1 MB),
Figure 5 (Lava's net throughput against the same hardware serving gets the conventional way: reading,
authenticating and copying the object's bytes) and Figure 6 (the average boot latency of a boot storm).

First principles: the memory bus shared by the CPU and PCI DMA. :class:`HitServer` runs on the pysim
engine: the CPU handles a get (its own work, then the cache lines §3.2 itemises: 11 + ceil(9n/4) for an
n KB object), hands each packet to one of six Tulip cards through a descriptor ring
(:class:`pysim.hw.bus.DescriptorRing`), and the cards DMA descriptors, packets, status and interrupt words
over the PCI bus (:class:`pysim.hw.bus.Bus` with :class:`pysim.hw.bus.PciTiming` bursts) into or out of
main memory. Every DMA burst also holds the memory bus (:class:`pysim.hw.bus.MemoryBus`), where the CPU's
cache-line transfers wait their turn, stalling the CPU. Each card sends its packets on a 100 Mbit/s
Ethernet (framing from :class:`pysim.hw.net.Ethernet`). Throughput comes out of which of CPU, memory
bus and links saturates. Table 2's misses add a single-disk miss-server, pipelined with the links.
Figure 6 is a processor-sharing fluid simulation of a boot storm (:func:`pysim.workloads.traffic.boot_storm`)
on the six client links, capped by the hit-server's simulated 10 KB delivery rate.

Calibrated, each on one published cell (CALIBRATION): the memory bus's time per CPU cache-line transfer
(Table 1's 13.53 us per packet on the memory bus), the CPU's fixed work per get (§4's 36,000 1 KB gets/s)
and the miss-server's disk streaming rate (Table 2's 1 MB miss latency). Every other cell is a
prediction, except those following by arithmetic from fits or stated values (INPUTS).

Then vs now (:func:`measure_now`): a loopback UDP hit-server on this machine, one get of a 1 KB or
10 KB object as 1056-byte packets, three ways: read + copy + send, a header plus ``sendfile``, and
``sendmmsg`` of precomputed packets; C timed through :func:`pysim.harness.measure`.

Not reproduced: Figures 1-4 (diagrams), the other systems' bars of Figure 5 (not legible in the text;
only the text's 2,100 and 7,000 transactions/s are taken, as inputs), the consistency matrix of §5.2 and
the late-retransmission protocol (no measurement is given). See papers/atc98_liedtke/paper.yaml.
"""
from __future__ import annotations

import collections
import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness import measure
from pysim.harness.runners import cache_dir
from pysim.hw import catalog
from pysim.hw.bus import Bus, DescriptorRing, MemoryBus, PciTiming
from pysim.hw.net import Ethernet
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, derived, from_catalog, given, stated
from pysim.rng import make_rng
from pysim.units import KiB, MiB
from pysim.workloads.traffic import boot_storm
from pysim.harness.exclusive import one_core

PPRO = catalog.PENTIUM_PRO_200
SIZES_KB = {"1K": 1, "10K": 10, "100K": 100, "1M": 1024}
STEPS = ("1) device interrupt", "2) inspect controller", "3) select packet", "4) prepare packet",
         "5) setup transmission", "6) transmit packet")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds (us) or milliseconds (ms), sizes in bytes, rates in bit/s."""

    clock_hz: float = from_catalog(PPRO, "clock_hz")
    # the PCI bus and the memory bus (§3.1)
    pci_cycle_ns: float = stated(30.0, "§3.1: 32-bit PCI bus with a cycle time of 30 ns (33 MHz)")
    pci_cycles_per_word: float = stated(1.5, "§3.1: the 440FX with these controllers takes on average 1.5 "
                                             "cycles to transfer a word", ge=1.0, le=4.0)
    burst_bytes: int = assumed(32, "a PCI-to-memory burst ends at a Pentium Pro cache line (32 B); the 440FX "
                                   "snoops and transfers a line at a time", ge=4)
    line_bytes: int = stated(32, "§3.2: 1024/32 = 32 cache misses per 1 K packet", ge=4)
    line_us: float = calibrated(0.37, "the memory bus's time per CPU cache-line transfer (a miss or a "
                                        "write-back) on the 440FX", gt=0, le=5.0)
    # the packet (§3.1)
    header_bytes: int = stated(32, "§3.1: 32 B header information", ge=14)
    packet_data_bytes: int = stated(1024, "§3.1: 1024 B object data per packet", ge=64)
    interrupt_words: int = stated(2, "§3.1 step 1: an interrupt word and a status word over PCI", ge=0)
    trigger_words: int = stated(1, "§3.1 step 5: the controller is triggered by one PCI word", ge=0)
    descriptor_words: int = stated(4, "§3.1 step 5: the controller reads the descriptor, 4 words", ge=0)
    table1_cpu_lines: int = stated(3, "§3.1 steps 2, 4, 5: status read (an L2 miss), header write-back, "
                                      "descriptor write", ge=0)
    # cache lines per get (§3.2): 11 + ceil(9n/4)
    hash_name_lines: int = stated(5, "§3.2 item 2: 1 line of the hash table, 4 of the name table", ge=0)
    root_lines: int = stated(2, "§3.2 item 3a: object root, ACL and packet descriptors", ge=0)
    request_lines: int = stated(4, "§3.2 item 6: a request with a 100-byte name, 4 lines", ge=0)
    packets_per_page_line: int = stated(4, "§3.2 item 3b: one object-page descriptor line per 4 packets", ge=1)
    lines_per_packet: int = stated(2, "§3.2 item 5: header and buffer descriptor: one line written, one read",
                                   ge=0)
    request_bytes: int = derived(164, "§3.2 item 6: a request of 4 lines with a 100-byte name; 32-byte "
                                      "header + 100-byte name + 32 bytes of key, nonce and operation", ge=64)
    # the CPU (cycles on the 200 MHz Pentium Pro)
    cpu_get_us: float = calibrated(20.4478, "the CPU's own work per get, outside its cache-line stalls: the "
                                          "request's interrupt, lookup, ACL check, the u-kernel's IPC", gt=0, le=500.0)
    cpu_packet_cycles: float = assumed(400.0, "steps 1-5 per packet without memory stalls (§3.1: 'instruction "
                                              "estimates'): interrupt entry, status check, header and MAC from "
                                              "the precomputed digest, descriptor; a few hundred instructions",
                                       ge=0)
    # the cards and links (§3.1)
    client_cards: int = stated(6, "§3.1: 6 Ethernets are used as client networks", ge=1, le=64)
    link_bps: float = stated(100e6, "§3.1: SMC EtherPower 10/100 cards on 100 Mbps Ethernets")
    ring_slots: int = assumed(16, "a Tulip transmit ring of 16 descriptors per card (the driver's choice; "
                                  "only has to keep the card busy)", ge=1)
    # the conventional data path (the counterfactual of Figure 5 and the claims)
    precompiled: bool = stated(True, "§3.2: precompiled packets and digests; the get never reads object data")
    mac_cycles_per_byte: float = assumed(8.0, "a keyed MD5 over the data in C on a P6: about 5 cycles a byte "
                                              "hand-tuned (Bosselaers et al. 1996), more in C; used only when "
                                              "packets are not precompiled", ge=0)
    # the miss-server (Table 2)
    disk_position_ms: float = assumed(17.0, "a 1997 5400 rpm IDE disk (Caviar class): ~11 ms average seek, "
                                            "5.6 ms half rotation, a little command overhead", ge=0)
    disk_bytes_per_s: float = calibrated(7522834.0, "the miss-server's streaming read: Caviar 33100 through "
                                                 "Linux 2.0's file system and the miss-server process",
                                         gt=1e5, le=1e9)
    miss_stage_bytes: int = assumed(32 * KiB, "the miss path's pipeline unit: the miss-server reads and "
                                              "forwards in 32 KB pieces (the video filter's block size, §2.1)", ge=1024)
    # the workloads of §4
    video_block_bytes: int = stated(32 * KiB, "§2.1: the ActiveMovie source filter requests 32 KByte blocks")
    video_bps: float = stated(1.5e6, "§4: MPEG I video clips (1.5 Mbps)")
    boot_clients: int = stated(1000, "§4: a boot server for 1000 NCs", ge=1)
    boot_window_s: float = stated(300.0, "§4: all NCs are turned on within the same 5-minute interval")
    boot_bytes: int = stated(10 * MiB, "§4: 10 Mbyte per NC", ge=1)
    think_object_bytes: int = stated(20 * KiB, "§4: once booted, every second a 20K object", ge=0)
    think_s: float = stated(1.0, "§4: every second")
    switched_clients: bool = assumed(False, "Figure 2: clients share the hit-server's six client Ethernets; "
                                            "the counterfactual gives every NC a port of its own on a "
                                            "server whose links are not the limit")
    # comparison systems (§2.2): inputs
    commercial_tps: float = given(2100.0, "§2.2: commercial servers achieve up to 2100 transactions/s [15]")
    research_tps: float = given(7000.0, "§2.2: research servers up to 7000 transactions/s [11]")

    @property
    def packet_bytes(self) -> int:
        return self.header_bytes + self.packet_data_bytes

    @property
    def pci(self) -> PciTiming:
        """The 440FX's PCI: bursts end at a cache line, the overhead cycles of a burst chosen so a long DMA
        averages ``pci_cycles_per_word`` (§3.1); arbitration, address and turnaround one cycle each."""
        words = self.burst_bytes // 4
        overhead = max(3, round(words * (self.pci_cycles_per_word - 1.0)))
        return PciTiming(read_wait_cycles=overhead - 3, write_wait_cycles=overhead - 3,
                         max_burst_bytes=self.burst_bytes, clock_hz=1e9 / self.pci_cycle_ns)

    @property
    def ethernet(self) -> Ethernet:
        return Ethernet(bits_per_s=self.link_bps)


CALIBRATION = (
    Fit("line_us", "table1", "total", "memory_bus_us", (0.01, 3.0)),
    Fit("cpu_get_us", "throughput", "1K", "gets_per_s", (1.0, 100.0)),
    Fit("disk_bytes_per_s", "table2", "1M", "miss_latency_ms", (1e6, 5e7)),
)
INPUTS = (
    Inputs((), cells("table1", ["total"], ["max_mbps"]),
           "1056 x 8 bits over the fitted 13.53 us per packet: arithmetic on the fitted cell"),
    Inputs((), cells("table1", ["total"], ["pci_words", "ideal_pci_us"]),
           "word counts stated step by step in §3.1 and their sum times 30 ns: arithmetic on stated values"),
    Inputs((), cells("throughput", ["1K"], ["mbps"]),
           "the fitted 1 KB gets/s times 1056 bytes a get: arithmetic on the fitted cell"),
    Inputs(("commercial_tps", "research_tps"),
           cells("figure5", ["commercial (text)", "research (text)"], ["gets_per_s_1k", "net_mbps_1k"]),
           "§2.2's best commercial and research servers, taken as given (Figure 5's bars are not legible)"),
)
COUNTERFACTUALS = (
    Counterfactual("copying-server", {"precompiled": False},
                   "gets served the conventional way: the CPU reads every object byte to authenticate it "
                   "and copies it into the packet, so each KB costs 64 more cache-line transfers"),
    Counterfactual("slow-line", {"line_us": 2.0},
                   "a memory bus five times slower per CPU cache line: CPU traffic crowds out DMA"),
    Counterfactual("switched-clients", {"switched_clients": True},
                   "every NC has its own port and the hit-server's links are not the limit"),
    Counterfactual("ram-miss-server", {"disk_position_ms": 0.01},
                   "a miss-server that finds every object in memory: no positioning per miss"),
)


# --- Table 1: the pre-implementation analysis ------------------------------------------------------

def _dma_us(p: Params, nbytes: int) -> float:
    """Microseconds a DMA of ``nbytes`` holds the PCI bus (and the memory bus behind it)."""
    return p.pci.transfer_s(nbytes, write=False) * 1e6 if nbytes else 0.0


def wire_us(p: Params, nbytes: int | None = None) -> float:
    """Microseconds one packet occupies its Ethernet: frame, preamble and gap (pysim.hw.net)."""
    n = p.packet_bytes if nbytes is None else nbytes
    return p.ethernet.message_occupancy_s(n - p.ethernet.header_bytes) * 1e6


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: sending one packet, step by step. Columns: pci_words (words over PCI), pci_bus_us,
    memory_bus_us (DMA into or out of memory plus the CPU's line transfers), processor_us,
    ethernet_us; the total row adds ideal_pci_us (one word a cycle) and max_mbps (the bottleneck's rate)."""
    p = params or Params()
    cyc = 1e6 / p.clock_hz
    words = {0: p.interrupt_words, 4: p.trigger_words + p.descriptor_words, 5: p.packet_bytes // 4}
    pci_us = {0: sum(_dma_us(p, 4) for _ in range(p.interrupt_words)),
              4: sum(_dma_us(p, 4) for _ in range(p.trigger_words)) + _dma_us(p, 4 * p.descriptor_words),
              5: _dma_us(p, p.packet_bytes)}
    mem_dma = dict(pci_us)
    mem_dma[4] = _dma_us(p, 4 * p.descriptor_words)  # the trigger goes to the card, not to memory
    cpu_lines = {1: 1, 3: 1, 4: 1} if p.table1_cpu_lines == 3 else {1: p.table1_cpu_lines}
    share = {0: 0.3, 1: 0.1, 2: 0.2, 3: 0.2, 4: 0.2}  # how steps 1-5 split the per-packet instructions
    rows = []
    for i, step in enumerate(STEPS):
        rows.append({"step": step, "pci_words": words.get(i, 0), "pci_bus_us": pci_us.get(i, 0.0),
                     "memory_bus_us": mem_dma.get(i, 0.0) + cpu_lines.get(i, 0) * p.line_us,
                     "processor_us": share.get(i, 0.0) * p.cpu_packet_cycles * cyc,
                     "ethernet_us": wire_us(p) if i == 5 else 0.0})
    df = pd.DataFrame(rows).set_index("step")
    df["ideal_pci_us"], df["max_mbps"] = np.nan, np.nan
    total = df.sum()
    total["ideal_pci_us"] = total["pci_words"] * p.pci_cycle_ns / 1e3
    total["max_mbps"] = p.packet_bytes * 8 / total["memory_bus_us"]  # the memory bus's limit (§2.4, Table 1)
    df.loc["total"] = total
    return df


# --- the hit-server on the engine ------------------------------------------------------------------

def get_lines(p: Params, n_packets: int) -> int:
    """CPU cache-line transfers of one get of ``n_packets`` (§3.2: 11 + ceil(9n/4) with the defaults)."""
    fixed = p.hash_name_lines + p.root_lines + p.request_lines
    lines = fixed + math.ceil(n_packets / p.packets_per_page_line) + p.lines_per_packet * n_packets
    if not p.precompiled:  # read every byte to authenticate it, and copy it into the packet buffer
        lines += n_packets * 2 * math.ceil(p.packet_data_bytes / p.line_bytes)
    return lines


class HitServer:
    """One hit-server saturated with gets of ``n_packets`` packets (§4's throughput experiment).

    ``serving`` is the CPU: per get its own work, then its cache lines (each waits for the memory bus,
    the CPU stalled meanwhile), then per packet its work and lines and a descriptor in a card's ring
    (cards in turn: requests come from random virtual clients spread over the cards). ``card`` moves a
    packet: descriptor and packet by DMA over PCI, each burst holding the memory bus too, then the wire,
    then the completion's status and interrupt words. ``miss_stream`` adds a 100 Mbit/s stream of
    object packets arriving from the miss-server (§4: the delivery rate during a miss transfer).
    """

    def __init__(self, p: Params, n_packets: int, *, miss_stream: bool = False):
        self.p, self.n = p, n_packets
        self.sim = sim = Simulation()
        self.pci = Bus(sim, p.pci)
        self.mem = MemoryBus(sim, line_bytes=p.line_bytes, line_s=p.line_us * 1e-6)
        self.cpu = sim.resource(1)
        self.rings = [DescriptorRing(p.ring_slots) for _ in range(p.client_cards)]
        self.queues = [sim.store() for _ in range(p.client_cards)]
        self.freed = [sim.event() for _ in range(p.client_cards)]
        self.wires = [sim.resource(1) for _ in range(p.client_cards)]
        self.sent_packets, self.marks = 0, []
        self.cyc = 1.0 / p.clock_hz
        self.wire_s = wire_us(p) * 1e-6
        extra = 0.0 if p.precompiled else p.mac_cycles_per_byte * p.packet_data_bytes * self.cyc
        self.packet_cpu_s = p.cpu_packet_cycles * self.cyc + extra
        sim.process(self.serving())
        for k in range(p.client_cards):
            sim.process(self.card(k))
        if miss_stream:
            sim.process(self.miss_stream())

    def dma(self, nbytes: int, *, write: bool):
        """A DMA between a card and memory: each PCI burst holds the PCI bus and the memory bus."""
        t = self.p.pci
        for b in t.bursts(nbytes):
            with self.pci.arbiter.request() as pci_turn:
                yield pci_turn
                with self.mem.port.request() as mem_turn:
                    yield mem_turn
                    s = t.burst_cycles(b, write) / t.clock_hz
                    self.pci.busy_s += s
                    yield self.sim.timeout(s)
                self.mem.lines["dma"] += math.ceil(b / self.p.line_bytes)
        self.pci.bytes_moved["write" if write else "read"] += nbytes

    def pci_word(self):
        """The CPU's trigger word to a card: PCI only."""
        yield self.sim.process(self.pci.transfer(4, write=True))

    def compute(self, seconds: float):
        with self.cpu.request() as turn:
            yield turn
            yield self.sim.timeout(seconds)

    def lines(self, n: int):
        """The CPU moves ``n`` cache lines; it holds itself (stalled) while they wait for the bus."""
        if n:
            with self.cpu.request() as turn:
                yield turn
                yield self.sim.process(self.mem.move(n * self.p.line_bytes, "cpu"))

    def serving(self):
        p, card = self.p, 0
        while True:
            self.sim.process(self.dma(p.request_bytes, write=True))  # the request arrives (pipelined)
            yield from self.compute(p.cpu_get_us * 1e-6)
            yield from self.lines(get_lines(p, self.n) - p.lines_per_packet * self.n)
            for _ in range(self.n):
                yield from self.compute(self.packet_cpu_s)
                yield from self.lines(p.lines_per_packet + (0 if p.precompiled else
                                                            2 * math.ceil(p.packet_data_bytes / p.line_bytes)))
                while not self.rings[card].fill():  # the ring is full: wait for the card to free a slot
                    self.rings[card].dropped -= 1
                    self.freed[card] = self.sim.event()
                    yield self.freed[card]
                yield from self.pci_word()
                yield self.queues[card].put(1)
                card = (card + 1) % p.client_cards

    def card(self, k: int):
        p = self.p
        while True:
            yield self.queues[k].get()
            yield from self.dma(4 * p.descriptor_words, write=False)
            yield from self.dma(p.packet_bytes, write=False)
            self.sim.process(self.transmit(k))

    def transmit(self, k: int):
        p = self.p
        with self.wires[k].request() as turn:
            yield turn
            yield self.sim.timeout(self.wire_s)
        for _ in range(p.interrupt_words):
            yield from self.dma(4, write=True)
        self.rings[k].free()
        if not self.freed[k].triggered:
            self.freed[k].succeed()
        self.sent_packets += 1

    def miss_stream(self):
        p = self.p
        while True:
            yield self.sim.timeout(self.wire_s)
            self.sim.process(self._one_put_packet())

    def _one_put_packet(self):
        p = self.p
        yield from self.dma(p.packet_bytes, write=True)
        for _ in range(p.interrupt_words):
            yield from self.dma(4, write=True)
        yield from self.compute(self.packet_cpu_s)
        yield from self.lines(p.lines_per_packet)  # linked, not copied; no MAC check from a miss-server

    def run(self, gets: int) -> dict:
        """Run ``gets`` gets' worth of packets after a warm-up of a tenth as many; gets/s and bus shares."""
        warm = max(2, gets // 10)
        per_get = self.n
        while self.sent_packets < warm * per_get:
            self.sim.step()
        t0, pkt0, busy0 = self.sim.now, self.sent_packets, self.pci.busy_s
        lines0 = dict(self.mem.lines)
        while self.sent_packets < (warm + gets) * per_get:
            self.sim.step()
        dt = self.sim.now - t0
        gets_done = (self.sent_packets - pkt0) / per_get
        mem_s = ((self.mem.lines["cpu"] - lines0["cpu"]) * self.mem.line_s
                 + (self.pci.busy_s - busy0))  # DMA bursts hold the memory bus too (the trigger words: PCI only)
        return {"gets_per_s": gets_done / dt, "memory_bus_pct": 100 * min(1.0, mem_s / dt),
                "pci_bus_pct": 100 * (self.pci.busy_s - busy0) / dt,
                "cpu_lines_per_get": (self.mem.lines["cpu"] - lines0["cpu"]) / gets_done}


def simulate(p: Params, object_bytes: int, *, quick: bool = False, miss_stream: bool = False) -> dict:
    """Saturated throughput for objects of ``object_bytes`` (whole packets of ``packet_data_bytes``)."""
    n = max(1, math.ceil(object_bytes / p.packet_data_bytes))
    gets = max(12, (300 if quick else 3000) // n)
    r = HitServer(p, n, miss_stream=miss_stream).run(gets)
    r["net_mbps"] = r["gets_per_s"] * object_bytes * 8 / 1e6
    r["mbps"] = r["gets_per_s"] * n * p.packet_bytes * 8 / 1e6
    return r


def throughput(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4's throughputs: gets/s, Mbps with headers (mbps) and without (net_mbps), and the buses' shares,
    for 1 KB and 10 KB objects and 32 KB video blocks."""
    p = params or Params()
    rows = {"1K": 1 * KiB, "10K": 10 * KiB, "video 32K": p.video_block_bytes}
    return pd.DataFrame({k: simulate(p, b, quick=quick) for k, b in rows.items()}).T.rename_axis("objects")


def prose(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4 in numbers. Column value: the video clients served
    at video_bps, and the loss of 10 KB delivery rate (%) while an object streams in from the miss-server."""
    p = params or Params()
    video = simulate(p, p.video_block_bytes, quick=quick)
    plain = simulate(p, 10 * KiB, quick=quick)
    during = simulate(p, 10 * KiB, quick=quick, miss_stream=True)
    return pd.DataFrame({"value": {
        "video_clients": math.floor(video["net_mbps"] * 1e6 / p.video_bps),
        "miss_transfer_loss_pct": 100 * (1 - during["gets_per_s"] / plain["gets_per_s"]),
    }}).rename_axis("quantity")


# --- Table 2: hits and misses -----------------------------------------------------------------------

def hit_latency_ms(p: Params, nbytes: int) -> float:
    """One get alone: the request, the CPU's work, and the object's packets back to back on one link."""
    n = math.ceil(nbytes / p.packet_data_bytes)
    cpu_us = p.cpu_get_us + get_lines(p, n) * p.line_us + p.cpu_packet_cycles / p.clock_hz * 1e6
    first_dma = _dma_us(p, p.packet_bytes)
    return (wire_us(p, p.request_bytes) + cpu_us + first_dma + n * wire_us(p)) / 1e3


def miss_latency_ms(p: Params, nbytes: int) -> float:
    """A miss alone: the request forwarded to the miss-server, the disk's positioning, then the object
    streamed through three pipelined stages in ``miss_stage_bytes`` pieces: disk read, the inter-server
    link into the hit-server, the client's link out of it."""
    n = math.ceil(nbytes / p.packet_data_bytes)
    wire_s = wire_us(p) * 1e-6
    stages = [nbytes / p.disk_bytes_per_s, n * wire_s, n * wire_s]  # seconds per stage for the whole object
    pieces = max(1, math.ceil(nbytes / p.miss_stage_bytes))
    pipelined = max(stages) + sum(stages) / pieces - max(stages) / pieces
    fwd = 2 * wire_us(p, p.request_bytes) * 1e-6
    return (fwd + p.disk_position_ms * 1e-3 + pipelined) * 1e3 + hit_latency_ms(p, 1) - wire_us(p) / 1e3


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: for 1 KB to 1 MB, miss and hit latency (ms), miss per hit latency (the paper's 1:x), and
    hit per miss bandwidth (x:1): the hit-server on all cards (simulated) against one miss at a time."""
    p = params or Params()
    rows = {}
    for label, kb in SIZES_KB.items():
        nbytes = kb * KiB
        hit, miss = hit_latency_ms(p, nbytes), miss_latency_ms(p, nbytes)
        hit_bps = simulate(p, nbytes, quick=True)["net_mbps"] * 1e6 if kb <= 100 else \
            simulate(p, 100 * KiB, quick=True)["net_mbps"] * 1e6
        miss_bps = nbytes * 8 / (miss * 1e-3)
        rows[label] = {"miss_latency_ms": miss, "hit_latency_ms": hit, "miss_per_hit": miss / hit,
                       "hit_per_miss_bandwidth": hit_bps / miss_bps}
    return pd.DataFrame(rows).T.rename_axis("size")


# --- Figure 5 ------------------------------------------------------------------------------------------

def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5: net throughput (Mbps) for 1 KB and 10 KB gets, and 1 KB gets/s, of Lava and of the same
    hardware serving gets the conventional way (reading, authenticating and copying the data); the text's
    best commercial and research servers (§2.2) as given, in gets/s."""
    p = params or Params()
    rows = {}
    for name, q in (("Lava", p), ("copying server", dataclasses.replace(p, precompiled=False))):
        one, ten = simulate(q, KiB, quick=quick), simulate(q, 10 * KiB, quick=quick)
        rows[name] = {"net_mbps_1k": one["net_mbps"], "net_mbps_10k": ten["net_mbps"],
                      "gets_per_s_1k": one["gets_per_s"]}
    rows["commercial (text)"] = {"gets_per_s_1k": p.commercial_tps, "net_mbps_1k": p.commercial_tps * 8192 / 1e6}
    rows["research (text)"] = {"gets_per_s_1k": p.research_tps, "net_mbps_1k": p.research_tps * 8192 / 1e6}
    return pd.DataFrame(rows).T.rename_axis("system")


# --- Figure 6: the boot storm -------------------------------------------------------------------------

def boot_latencies(p: Params, clients: int, boot_bytes: int, server_bps: float, *, rng=0) -> np.ndarray:
    """Boot latency (s) of each of ``clients`` NCs booting at uniform random times in the window.

    A fluid processor-sharing simulation, event to event: the NCs booting on a client link share
    equally what it carries beyond the booted NCs' 20 KB a second; and all links together are held to
    ``server_bps``, the hit-server's delivery rate (every flow scaled down evenly when it is exceeded).
    NCs are spread evenly over the links, independently of when they boot. All boot images are the same size, so on each link the
    flows finish in the order they started: a link's cumulative service per flow (``served``) says when.
    """
    gen = make_rng(rng)
    starts = boot_storm(clients, p.boot_window_s, [boot_bytes], rng=gen.spawn(1)[0])["time_s"].to_numpy()
    net = p.packet_data_bytes / (wire_us(p) * 1e-6)  # payload bytes/s one link carries
    links = clients if p.switched_clients else p.client_cards
    server = float("inf") if p.switched_clients else server_bps / 8
    bg = p.think_object_bytes / p.think_s
    served = [0.0] * links
    queues = {}  # link -> deque of (client, the link's served level at which it completes)
    link_of = gen.permutation(np.arange(clients) % links)  # an even share of NCs per link, in any boot order
    booted = [0] * links
    n_booted = 0
    finish = np.empty(clients)
    t, nxt = 0.0, 0
    while nxt < clients or queues:
        rates = {}
        for link, q in queues.items():
            cap = max(net - bg * booted[link], 0.05 * net)
            rates[link] = min(cap / len(q), net)
        total = sum(r * len(queues[k]) for k, r in rates.items())
        if total + bg * n_booted > server:
            scale = max(server - bg * n_booted, 0.05 * server) / total
            rates = {k: r * scale for k, r in rates.items()}
        t_fin, first = float("inf"), None
        for link, q in queues.items():
            dt = (q[0][1] - served[link]) / rates[link]
            if dt < t_fin:
                t_fin, first = dt, link
        t_arr = starts[nxt] - t if nxt < clients else float("inf")
        dt = max(0.0, min(t_fin, t_arr))
        for link in queues:
            served[link] += rates[link] * dt
        t += dt
        if t_arr <= t_fin:
            link = link_of[nxt]
            queues.setdefault(link, collections.deque()).append((nxt, served[link] + boot_bytes))
            nxt += 1
        else:
            client, _ = queues[first].popleft()
            finish[client] = t
            booted[first] += 1
            n_booted += 1
            if not queues[first]:
                del queues[first]
    return finish - starts


def figure6(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 6: mean boot latency (s) against the number of NCs for 5, 10 and 15 MB of boot data, and
    the standard deviation for 10 MB. Columns mean_s_5MB, mean_s_10MB, mean_s_15MB, sd_s_10MB."""
    p = params or Params()
    gen = make_rng(rng)
    server_bps = simulate(p, 10 * KiB, quick=True)["net_mbps"] * 1e6
    counts = (250, 500, 1000, 1500, 2000) if not quick else (500, 1000, 2000)
    reps = 2 if quick else 5
    rows = {}
    for c in counts:
        row = {}
        for mb in (5, 10, 15):
            lat = np.concatenate([boot_latencies(p, c, mb * MiB * p.boot_bytes // (10 * MiB), server_bps,
                                                 rng=gen.spawn(1)[0]) for _ in range(reps)])
            row[f"mean_s_{mb}MB"] = lat.mean()
            if mb == 10:
                row["sd_s_10MB"] = lat.std()
        rows[str(c)] = row
    return pd.DataFrame(rows).T.rename_axis("clients")


# --- then vs now ----------------------------------------------------------------------------------

NOW_DECLS = r"""
static int srv, cli, objfd; static char *obj, *pkts, *buf; static long npk;
static struct mmsghdr mm[64], rm[64]; static struct iovec iv[64], riv[64]; static char rbuf[64][2048];
static void drain(void) { for (;;) { int k = recvmmsg(cli, rm, 64, MSG_DONTWAIT, 0); if (k <= 0) break; sink += k; } }
static void setup_all(long size, const char *path) {
  npk = size / 1024;
  struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  cli = socket(AF_INET, SOCK_DGRAM, 0); bind(cli, (void*)&a, sizeof a);
  socklen_t l = sizeof a; getsockname(cli, (void*)&a, &l);
  int big = 8 << 20; setsockopt(cli, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  srv = socket(AF_INET, SOCK_DGRAM, 0); if (connect(srv, (void*)&a, sizeof a)) exit(2);
  obj = malloc(size); for (long i = 0; i < size; i++) obj[i] = (char)(i * 7);
  objfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600); if (write(objfd, obj, size) != size) exit(2);
  buf = malloc(size); pkts = malloc(npk * 1056);
  for (long k = 0; k < npk; k++) {
    memset(pkts + k * 1056, 0, 32); memcpy(pkts + k * 1056 + 32, obj + k * 1024, 1024);
    iv[k].iov_base = pkts + k * 1056; iv[k].iov_len = 1056; memset(&mm[k], 0, sizeof mm[k]);
    mm[k].msg_hdr.msg_iov = &iv[k]; mm[k].msg_hdr.msg_iovlen = 1; }
  for (int k = 0; k < 64; k++) { riv[k].iov_base = rbuf[k]; riv[k].iov_len = 2048; memset(&rm[k], 0, sizeof rm[k]);
    rm[k].msg_hdr.msg_iov = &riv[k]; rm[k].msg_hdr.msg_iovlen = 1; }
}
static void get_copy(long i) {
  if (pread(objfd, buf, npk * 1024, 0) != npk * 1024) exit(3);
  for (long k = 0; k < npk; k++) { char *p = pkts + k * 1056; memcpy(p + 4, &i, sizeof i);
    memcpy(p + 32, buf + k * 1024, 1024); if (send(srv, p, 1056, 0) != 1056) exit(4); }
  drain(); }
static void get_sendfile(long i) {
  for (long k = 0; k < npk; k++) { char *p = pkts + k * 1056; memcpy(p + 4, &i, sizeof i);
    if (send(srv, p, 32, MSG_MORE) != 32) exit(5);
    off_t o = k * 1024; if (sendfile(srv, objfd, &o, 1024) != 1024) exit(6); }
  drain(); }
static void get_mmsg(long i) {
  for (long k = 0; k < npk; k++) memcpy(pkts + k * 1056 + 4, &i, sizeof i);
  long s = 0; while (s < npk) { int r = sendmmsg(srv, mm + s, npk - s, 0); if (r <= 0) exit(7); s += r; }
  drain(); }
"""
NOW_INCLUDES = ("string.h", "unistd.h", "fcntl.h", "sys/socket.h", "sys/sendfile.h", "netinet/in.h", "arpa/inet.h")
NOW_WAYS = {"read + copy + send": "get_copy", "header + sendfile": "get_sendfile",
            "sendmmsg, precomputed": "get_mmsg"}


@one_core()
def measure_now(*, quick: bool = False) -> pd.DataFrame:
    """One get on this machine over loopback UDP, three ways, 1 KB and 10 KB objects (1056-byte
    datagrams, received and discarded by a socket of the same process): us per get, gets/s, Mbps."""
    d = cache_dir() / "atc98_liedtke"
    d.mkdir(parents=True, exist_ok=True)
    rows = []
    for kb in (1, 10):
        for way, fn in NOW_WAYS.items():
            m = measure("c", f"{fn}(i);", name=f"{way}, {kb} KB", decls=NOW_DECLS, includes=NOW_INCLUDES,
                        setup=f'setup_all({kb * 1024}, "{d / f"obj{kb}"}");',
                        enough_s=0.01 if quick else 0.05, tries=3 if quick else 7)
            us = m.per_op_s * 1e6
            rows.append({"objects": f"{kb}K", "way": way, "available": m.available, "us_per_get": us,
                         "gets_per_s": 1e6 / us if m.available else float("nan"),
                         "net_mbps": kb * 8192 / us if m.available else float("nan"), "note": m.reason})
    return pd.DataFrame(rows).set_index(["objects", "way"])


def then_and_now(now: pd.DataFrame, params: Params | None = None, *, quick: bool = False) -> pd.DataFrame:
    """The 1998 hit-server (model) beside today's loopback server, gets/s per object size."""
    t = throughput(params, quick=quick)
    out = now["gets_per_s"].unstack("way")
    out.insert(0, "1998 Lava (model)", t.loc[["1K", "10K"], "gets_per_s"].to_numpy())
    return out
