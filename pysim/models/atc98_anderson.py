"""Cheating the I/O bottleneck: network storage with Trapeze/Myrinet (Anderson et al., USENIX ATC 1998).

Regenerates Table 1 (gms_net RPC latency and bandwidth: 2-way and delegated
3-way calls, replies handled by a woken thread, a continuation or a deferred
continuation, payloads received solicited, unsolicited or unsolicited and
copied; 16-byte requests with 0, 4 KB and 8 KB replies), the raw Trapeze
rates of §2.1, §2.2 and §4 (one-way streams on the Alpha pair and the
Pentium-II, an Alcor that overwrites each buffer, TCP/IP over Trapeze), and
Figures 4 and 5 (sequential file reads on the Miata and writes on an Alcor
through read()/write(), whole-file mmap and MMB, bandwidth and CPU
utilisation against the bytes touched per 8 KB page).

First principles: every page moves through pipelined stages on the engine.
A message is a 16-byte control message with an optional payload; it crosses
the sender's I/O bus by DMA, the Myrinet link and the receiver's I/O bus by
DMA, in 1 KB pieces that overlap (cut-through delivery, :class:`CutThrough`).
Each NIC has one host-DMA engine (:class:`NicDma`): one transfer at a time,
the firmware's work per message, a setup per payload, then the bytes over
the host's PCI bus, priced burst by burst with the shared
:class:`pysim.hw.bus.PciTiming` (:class:`HostPci`: 32 bits at 33 MHz; the
direction a bridge runs at half rate, the Alcor's receive and the Miata's
send, ends each burst at a cache line and waits before the next, the wait
derived from the stated share). Calls are the shared :class:`pysim.sw.rpc.Client`
(a window of outstanding calls; replies handled by waiting, a continuation
or deferral) over these routes, the servers :class:`pysim.sw.rpc.Server`,
the delegated hop a directory server that forwards the request to the
caching site, which replies straight to the requester. Host work is priced
by operation recipes (:class:`pysim.sw.Recipe`) on each CPU. A blocking call
has one request outstanding, so its bandwidth is its payload over its
latency; nonblocking calls fill the pipeline, so theirs is the payload over
the busiest stage's time per call; which stage that is (a NIC and its bus,
the Miata's CPU, a server) emerges from the run. The file benchmark runs the
same routes: read-ahead is a window of nonblocking getpages whose replies
are injected by continuations at interrupt level, the user process touches
each page, and CPU time is booked as system or user (:class:`pysim.sw.CpuAccount`).
Writes fetch each partly written page first (synchronously for write() and
mmap, prefetched for MMB), except where the whole page is overwritten and
the interface knows it (write(), MMB with MAP_OVERWRITE), and push the dirty
pages behind.

Calibrated, each on one published cell (see CALIBRATION): the DMA setup per
payload (raw Trapeze at 4 KB), the NIC's work per message (2-way cont
solicited 4 KB bandwidth), the Miata's receive interrupt (2-way cont
unsolicited+copy 4 KB bandwidth, where its CPU binds), the server's work per
request (2-way cont solicited 4 KB latency), the thread switch (2-way wait
solicited 4 KB latency), the deferral's lock probe and queueing (2-way
defer solicited 4 KB latency), the receive-buffer recycling (2-way wait
unsolicited 4 KB latency), the Miata's copy rate (2-way wait
unsolicited+copy 4 KB latency), the Miata's loads from freshly DMA'd pages
(MMB dense read bandwidth) and the Alcor's stores under DMA load (the raw
overwrite rate). Every 8 KB and every 3-way cell, every other bandwidth, the
raw rates at 8 KB, on the Pentium-II and for TCP, and the rest of Figures 4
and 5 are predictions. An Alcor's CPU costs are the Miata's scaled by the
clocks; its memory-bound work runs at its calibrated store rate, a copy
moving each byte twice.

Not reproduced: the memory contention between the user process and the
kernel that the paper blames for the hump in Figure 5's system time, the
host's TCP/IP processing (only the path's capacity for TCP is modelled),
and the diagrams (Figures 1 to 3). See papers/atc98_anderson/paper.yaml.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.harness.runners import Snippet, build
from pysim.hw import CpuCostModel
from pysim.hw.bus import Bus, PciTiming
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, stated
from pysim.sw import CpuAccount, Recipe
from pysim.sw.rpc import Client, Server, Wire
from pysim.units import us
from pysim.harness.exclusive import exclusive, one_core

RPC_KINDS = ("2-way", "3-way")
REPLIES = {"wait": "wait", "cont": "continuation", "defer": "deferral"}   # Table 1's names -> pysim.sw.rpc's
HANDLINGS = ("Solicited", "Unsolicited", "Unsol+Copy")
PAYLOADS = (0, 4096, 8192)
INTERFACES = ("stream", "mmap", "MMB")
TESTS = ("read", "write")
TOUCHED = (8, 1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192)   # Figures 4-5's x axis: one word to the page
TO_HOST, FROM_HOST = "to_host", "from_host"
USER_SLICES = 8   # a page's user work runs in this many slices, so receive interrupts get the CPU between them


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds, rates in MB/s of 10^6 bytes, sizes in bytes."""

    # the hardware (§1, §2.1, §4)
    pci_MBps: float = stated(132.0, "§4: the full bandwidth of the 32-bit 33MHz PCI standard (132 MB/s) in one "
                                    "direction")
    pci_width_bytes: int = stated(4, "§4: the 32-bit PCI standard (its clock is the 132 MB/s over 4 bytes: 33 MHz)",
                                  choices=(4, 8))
    alcor_receive_share: float = stated(0.5, "§4: Alcor receives at half-bandwidth (§4.2.2: its I/O system can "
                                             "receive at only 66 MB/s)", gt=0, le=1)
    miata_send_share: float = stated(0.5, "§4: Miata sends at half-bandwidth", gt=0, le=1)
    link_Gbps: float = stated(1.28, "§1: Myricom's 1.28 Gb/s Myrinet LAN")
    miata_MHz: float = stated(500.0, "§4: Miata (PWS 500au) is a newer 500 MHz machine")
    alcor_MHz: float = stated(266.0, "§4: our Alcors (AlphaStation 500 and 600) are clocked at 266 MHz")
    request_bytes: int = stated(16, "§4.1: the request message is a 16-byte control message")
    reply_control_bytes: int = stated(16, "§4.1: kernel-kernel RPC microbenchmarks using 16-byte control messages")
    max_control_bytes: int = stated(128, "§2.1: short control messages (maximum 128 bytes)")
    page_bytes: int = stated(8192, "§2.2: the maximum payload size is set to the virtual memory page size (8K on "
                                   "the Alpha, §4.2.2's 8KB pages)")
    mmb_block_bytes: int = stated(262144, "§4.2.1: our MMB experiments use B = 256K")
    mmb_blocks: int = stated(2, "§4.2.1: and N = 2 (double buffering)", ge=1)
    tcp_mtu_bytes: int = stated(8320, "footnote 2: 8320-byte MTU")
    # the mechanisms, as switches (a counterfactual is a change of parameters)
    cut_through: bool = stated(True, "§2.1: the Trapeze firmware employs ... cut-through delivery [27]")
    delegated_reply: bool = stated(True, "§3.3: the caching site completes the three-way RPC by returning the "
                                         "page directly to the requester")
    nonblocking: bool = stated(True, "§3.4.1: nonblocking RPC, replies processed by continuations from the "
                                     "receive interrupt handler, so calls can be pipelined")
    mmb_prefetch: bool = stated(True, "§4.2.1: when an MMB mmap call is issued, the kernel immediately initiates "
                                      "an asynchronous prefetch of all pages in the newly mapped region")
    full_page_detected: bool = stated(True, "§4.2.2: stream and MMB (using the MAP_OVERWRITE flag) recognize this "
                                            "case")
    # the PCI buses, the network and the NIC
    pci_wait_cycles: int = assumed(2, "a bridge's initial wait states before a DMA burst in its fast direction: "
                                      "a posted write, or a read streamed from the bridge's prefetch buffers, "
                                      "starts within a couple of 33 MHz cycles", ge=0)
    bridge_line_bytes: int = assumed(64, "the 21164's 64-byte cache block: a bridge that runs a direction at a "
                                         "fraction of the PCI rate ends each burst at a line and makes the next "
                                         "wait (the wait states follow from the stated share)", ge=4)
    link_latency_us: float = assumed(0.5, "a pass through the 8-port M2F-SW8 crossbar and a few metres of cable")
    header_bytes: int = assumed(16, "Myrinet's route and type and Trapeze's header words in front of each control "
                                    "message")
    chunk_bytes: int = assumed(1024, "the pieces cut-through delivery overlaps: Trapeze pipelines messages larger "
                                     "than about 1 KB (Yocum et al. 1998)", ge=64)
    dma_setup_us: float = calibrated(9.87406, "a payload DMA's setup: the NIC firmware programs its host DMA engine "
                                           "for the frame (the bursts themselves are priced on the PCI bus)")
    nic_message_us: float = calibrated(4.64109, "the NIC firmware's work per message sent or received: the ring "
                                            "entry, the header, the control message's DMA set up")
    # the Miata's CPU (the client of Table 1 and of the read tests)
    stub_us: float = assumed(2.0, "gms_net_makebuf, a call record and a 16-byte message written into the send "
                                  "ring by programmed I/O: a few hundred instructions and a few uncached PCI writes")
    ipt_us: float = assumed(1.5, "an IPT entry allocated, its DMA address and key written to NIC memory by "
                                 "programmed I/O, and cancelled on receipt: a few uncached PCI writes")
    handler_us: float = assumed(1.0, "a continuation's call, or the woken caller's return: tens of instructions")
    interrupt_us: float = calibrated(14.46559, "the Trapeze receive interrupt, gms_net's upcall, the reply token "
                                           "decoded and the call record found")
    switch_us: float = calibrated(1.8, "waking the blocked caller: a process context switch (§4.1)", ge=0)
    defer_us: float = calibrated(4.0, "a continuation that finds a lock held: the probe fails and it is queued "
                                      "for the kernel daemon (§3.4.3)", ge=0)
    recycle_us: float = calibrated(7.9, "returning the receive-ring buffer to the VM page frame pool and "
                                        "allocating a new one (§4.1)", ge=0)
    copy_MBps: float = calibrated(122.63473, "the Miata's copy of a just-received payload (§4.1's Unsol+Copy)")
    inject_us: float = assumed(2.0, "the read-ahead continuation hashes the frame into the file cache and an LRU "
                                    "list (§3.4.2): a few hundred instructions")
    read_call_us: float = assumed(5.0, "a read() or write() of one cached page, without its copy: the trap and the "
                                       "file and page-cache lookups, some 2,500 instructions at 500 MHz")
    fault_us: float = assumed(5.0, "a fault on a page already in the page cache: the trap, the lookup, a page "
                                   "table entry")
    mmap_call_us: float = assumed(20.0, "an MMB mmap() of a 256 KB region: the call, a VM map entry, the release "
                                        "of the old region's 32 frames")
    user_warm_ns_per_byte: float = assumed(1.0, "the benchmark loading a word it has just been given: an 8-byte "
                                                "load and an add, about four cycles at 500 MHz from the on-chip "
                                                "caches")
    user_cold_ns_per_byte: float = calibrated(8.75736, "loading words of a page just written by DMA: a memory latency "
                                                   "per cache line")
    # the servers (Alcors in Table 1) and the Alcor client of the write tests
    server_us: float = calibrated(24.16908, "an Alcor's work per getpage: the interrupt, the hand-off to the server "
                                        "thread, the lookup, the reply built and sent (§3.1)")
    alcor_store_MBps: float = calibrated(58.7823, "an Alcor's CPU writing memory while its NIC streams out: one "
                                               "byte moved per byte stored, two per byte copied")
    # the benchmarks
    window: int = assumed(16, "nonblocking calls a bandwidth run keeps outstanding: enough to fill the pipeline "
                              "(the paper does not say)", ge=1)
    readahead_pages: int = assumed(16, "§3.4.2: read-ahead fetches the next N pages for some configurable depth "
                                       "N (not stated)", ge=1)
    dirty_pages: int = assumed(16, "pages being pushed behind the writer at once: the kernel's write-behind "
                                   "bound (not stated)", ge=1)
    raw_send_us: float = assumed(1.0, "a raw Trapeze send: the sender fills a send-ring entry by programmed I/O")
    raw_receive_us: float = assumed(1.0, "a raw Trapeze receive: the receiver polls the ring and finds the message")
    tcp_segments_per_ack: int = assumed(2, "TCP's delayed acknowledgement: one acknowledgement every second "
                                           "segment", ge=1)

    def __post_init__(self):
        super().__post_init__()
        if self.max_control_bytes < max(self.request_bytes, self.reply_control_bytes):
            raise ValueError(f"max_control_bytes must hold the request and reply control messages, got "
                             f"{self.max_control_bytes!r}")
        if self.bridge_line_bytes % self.pci_width_bytes or self.bridge_line_bytes > self.page_bytes:
            raise ValueError(f"bridge_line_bytes must be a whole number of PCI words and at most a page, got "
                             f"{self.bridge_line_bytes!r}")
        if self.mmb_block_bytes % self.page_bytes:
            raise ValueError(f"mmb_block_bytes must be a whole number of pages, got {self.mmb_block_bytes!r}")
        if self.tcp_mtu_bytes <= self.page_bytes:
            raise ValueError(f"tcp_mtu_bytes must exceed page_bytes (a page and its headers), got "
                             f"{self.tcp_mtu_bytes!r}")


CALIBRATION = (
    Fit("dma_setup_us", "raw", "Alpha / 4096", "bandwidth_MBps", (0.01, 30.0)),
    Fit("nic_message_us", "table1", "2-way / cont / Solicited", "bw_16_4096_MBps", (0.01, 20.0)),
    Fit("interrupt_us", "table1", "2-way / cont / Unsol+Copy", "bw_16_4096_MBps", (5.0, 40.0)),
    Fit("server_us", "table1", "2-way / cont / Solicited", "lat_16_4096_us", (1.0, 80.0)),
    Fit("switch_us", "table1", "2-way / wait / Solicited", "lat_16_4096_us", (0.0, 30.0)),
    Fit("defer_us", "table1", "2-way / defer / Solicited", "lat_16_4096_us", (0.0, 30.0)),
    Fit("recycle_us", "table1", "2-way / wait / Unsolicited", "lat_16_4096_us", (0.0, 30.0)),
    Fit("copy_MBps", "table1", "2-way / wait / Unsol+Copy", "lat_16_4096_us", (30.0, 1000.0)),
    Fit("user_cold_ns_per_byte", "figure4", "read / MMB / 8192", "bandwidth_MBps", (0.5, 30.0)),
    Fit("alcor_store_MBps", "raw", "Alcor overwrite / 8192", "bandwidth_MBps", (10.0, 500.0)),
)
INPUTS = (
    Inputs((), cells("table1", ["2-way / wait / Solicited", "2-way / wait / Unsolicited",
                                "2-way / wait / Unsol+Copy"], ["bw_16_4096_MBps"]),
           "one call outstanding: these bandwidths are the payload over the fitted latency of the same row, "
           "arithmetic alone"),
)
COUNTERFACTUALS = (
    Counterfactual("blocking-only", {"nonblocking": False},
                   "no nonblocking RPC: every call, continuation or deferred, has one request outstanding, and "
                   "read-ahead and MMB prefetch one page at a time"),
    Counterfactual("free-thread-switch", {"switch_us": 0.0},
                   "waking a blocked caller costs nothing: continuations save nothing"),
    Counterfactual("free-deferral", {"defer_us": 0.0},
                   "a deferred continuation is queued at no cost: deferral costs what waiting does"),
    Counterfactual("free-buffer-recycling", {"recycle_us": 0.0},
                   "returning a receive buffer to the page pool and allocating another costs nothing, so the "
                   "IPT's set-up is pure overhead"),
    Counterfactual("relayed-reply", {"delegated_reply": False},
                   "delegation as a nested RPC: the caching site replies to the directory, which relays the page"),
    Counterfactual("slow-receiver-memory", {"copy_MBps": 30.0},
                   "a receiver whose memory system copies at a quarter of the Miata's rate (§4.2.2: an Alcor "
                   "leaves its CPU less than 25% of its memory bandwidth)"),
    Counterfactual("store-and-forward", {"cut_through": False},
                   "no cut-through delivery: each stage takes the whole payload before passing it on"),
    Counterfactual("free-copy", {"copy_MBps": 100000.0},
                   "a copy that costs nothing: read() is as cheap as mmap"),
    Counterfactual("no-mmb-prefetch", {"mmb_prefetch": False},
                   "MMB without its prefetch on mmap: each partly written page is fetched when first touched"),
    Counterfactual("overwrite-undetected", {"full_page_detected": False},
                   "no interface learns that a whole page will be overwritten: every page is fetched first"),
)


# --- each host's PCI bus, as its NIC uses it (pysim.hw.bus) ----------------------------------------

@dataclass(frozen=True)
class Chunk:
    """A piece of a message on its way: the control message (``head``) or a piece of the payload."""

    nbytes: int
    head: bool = False           # the control message: the NIC's firmware works on the message
    first_payload: bool = False  # the payload's first piece: its DMA is set up


def bridge_timing(p: Params, share: float) -> PciTiming:
    """One direction of a host's PCI bridge as :class:`pysim.hw.bus.PciTiming`.

    The fast direction (``share`` 1) lets the NIC burst to the end of each DMA (a page at most), after
    ``pci_wait_cycles``. A direction the bridge runs at ``share`` of the PCI rate (§4: the Alcor receives,
    the Miata sends, at half) ends each burst at ``bridge_line_bytes`` and makes the next wait: the wait
    states are derived so that a stream of line bursts moves ``share`` of the bus's peak.
    """
    clock = p.pci_MBps * 1e6 / p.pci_width_bytes
    fast = PciTiming(read_wait_cycles=p.pci_wait_cycles, write_wait_cycles=p.pci_wait_cycles,
                     max_burst_bytes=max(p.page_bytes, p.chunk_bytes), clock_hz=clock, width_bytes=p.pci_width_bytes)
    if share >= 1:
        return fast
    data = p.bridge_line_bytes // p.pci_width_bytes
    overhead = fast.arbitration_cycles + fast.address_cycles + fast.turnaround_cycles
    wait = max(0, round(data / share - data - overhead))
    return PciTiming(read_wait_cycles=wait, write_wait_cycles=wait, max_burst_bytes=p.bridge_line_bytes,
                     clock_hz=clock, width_bytes=p.pci_width_bytes)


class HostPci:
    """A host's PCI bus with its NIC as the one DMA master: :class:`pysim.hw.bus.Bus` for the bookkeeping,
    a :class:`pysim.hw.bus.PciTiming` per direction (a DMA into host memory is a PCI write by the NIC, one
    out of it a read).

    With one master nothing can come between two bursts of a transfer, so a transfer holds the bus once
    for all its bursts (``Bus.transfer`` takes it burst by burst, which gives the same times here at up to
    128 events per page); and no transfer ever waits for the bus (the NIC's DMA engine runs one at a time),
    so the bus's arbiter is never asked: it would grant at once, two events per transfer for nothing.
    """

    def __init__(self, sim, to_host: PciTiming, from_host: PciTiming):
        self.sim = sim
        self.bus = Bus(sim, to_host)
        self.timing = {TO_HOST: to_host, FROM_HOST: from_host}
        self._seconds = {}   # (nbytes, direction) -> seconds: a run moves a handful of sizes many times

    def transfer_s(self, nbytes: int, direction: str) -> float:
        """Seconds a DMA of ``nbytes`` in ``direction`` holds the bus: its bursts, each with its overheads."""
        key = (nbytes, direction)
        if key not in self._seconds:
            if direction not in self.timing:
                raise ValueError(f"direction must be {TO_HOST!r} or {FROM_HOST!r}, got {direction!r}")
            self._seconds[key] = self.timing[direction].transfer_s(nbytes, write=direction == TO_HOST)
        return self._seconds[key]

    def transfer(self, nbytes: int, direction: str):
        """Move ``nbytes`` across the bus (a process to yield)."""
        hold = self.transfer_s(nbytes, direction)
        self.bus.busy_s += hold
        yield self.sim.timeout(hold)
        self.bus.bytes_moved["write" if direction == TO_HOST else "read"] += nbytes


class NicDma:
    """A NIC's host-DMA engine: one transfer at a time, in either direction. A payload's DMA is set up
    first (``setup_s``); the control message costs the firmware its work per message (``per_message_s``);
    then the bytes cross the host's :class:`HostPci`."""

    def __init__(self, sim, pci: HostPci, *, setup_s: float, per_message_s: float):
        if not (setup_s >= 0 and per_message_s >= 0):
            raise ValueError(f"setup_s and per_message_s must be >= 0 seconds, got {setup_s!r} and "
                             f"{per_message_s!r}")
        self.sim, self.pci, self.setup_s, self.per_message_s = sim, pci, setup_s, per_message_s
        self.engine = sim.resource(1)
        self.busy_s = 0.0

    def hold_s(self, chunk: Chunk, direction: str) -> float:
        """Seconds ``chunk`` holds the engine."""
        return (self.per_message_s if chunk.head else 0.0) + (self.setup_s if chunk.first_payload else 0.0) \
            + self.pci.transfer_s(chunk.nbytes, direction)

    def dma(self, chunk: Chunk, direction: str):
        """Carry ``chunk`` between the NIC and host memory (a process to yield)."""
        sim, bus = self.sim, self.pci.bus
        work = (self.per_message_s if chunk.head else 0.0) + (self.setup_s if chunk.first_payload else 0.0)
        hold = self.pci.transfer_s(chunk.nbytes, direction)
        with self.engine.request() as turn:
            yield turn
            start = sim.now
            if work:
                yield sim.timeout(work)
            # HostPci.transfer inlined: every piece of every message passes here
            bus.busy_s += hold
            yield sim.timeout(hold)
            bus.bytes_moved["write" if direction == TO_HOST else "read"] += chunk.nbytes
            self.busy_s += sim.now - start


class NicPort:
    """One direction of a NIC's host side: each piece crosses the host's bus by the NIC's DMA engine."""

    def __init__(self, nic: NicDma, direction: str):
        self.nic, self.direction = nic, direction

    def carry(self, chunk: Chunk):
        return self.nic.dma(chunk, self.direction)


class LinkStage:
    """One direction of a Myrinet link, as the shared :class:`pysim.sw.rpc.Wire`."""

    def __init__(self, wire: Wire):
        self.wire = wire

    def carry(self, chunk: Chunk):
        return self.wire.send(chunk.nbytes)


class CutThrough:
    """Carries a message through its stages (anything with ``carry(chunk)``) in pieces of ``chunk_bytes``:
    piece k+1 enters a stage while piece k is in the next, so a payload's latency pays the slowest stage
    once, not every stage in turn (Trapeze's cut-through delivery). With ``cut_through`` off the payload
    is one piece: store and forward."""

    def __init__(self, sim, stages, *, chunk_bytes: int, cut_through: bool = True):
        if chunk_bytes < 1:
            raise ValueError(f"chunk_bytes must be >= 1, got {chunk_bytes!r}")
        self.sim, self.stages, self.chunk_bytes, self.cut_through = sim, list(stages), chunk_bytes, cut_through
        self._pieces = {}

    def pieces(self, control_bytes: int, payload_bytes: int) -> list:
        """The control message, then the payload in pieces (one piece without cut-through)."""
        key = (control_bytes, payload_bytes)
        if key not in self._pieces:
            size = self.chunk_bytes if self.cut_through else max(payload_bytes, 1)
            out = [Chunk(control_bytes, head=True)]
            for start in range(0, payload_bytes, size):
                out.append(Chunk(min(size, payload_bytes - start), first_payload=start == 0))
            self._pieces[key] = tuple(out)
        return list(self._pieces[key])

    def send(self, control_bytes: int, payload_bytes: int):
        """Carry one message (a process to yield); ends when its last piece has left the last stage."""
        procs = [self.sim.process(self._carry(c)) for c in self.pieces(control_bytes, payload_bytes)]
        yield self.sim.all_of(procs)

    def _carry(self, chunk: Chunk):
        for stage in self.stages:
            yield from stage.carry(chunk)


# --- hosts, routes and the page RPC --------------------------------------------------------------

def miata_cpu(p: Params) -> CpuCostModel:
    """The Miata's costs: per operation (seconds) and per byte (seconds/byte)."""
    fixed = {"stub": p.stub_us, "ipt_map": p.ipt_us, "interrupt": p.interrupt_us, "continuation": p.handler_us,
             "context_switch": p.switch_us, "defer": p.defer_us, "frame_recycle": p.recycle_us,
             "inject": p.inject_us, "read_call": p.read_call_us, "fault": p.fault_us, "mmap_call": p.mmap_call_us,
             "raw_send": p.raw_send_us, "raw_receive": p.raw_receive_us,
             "server": p.server_us * p.alcor_MHz / p.miata_MHz}  # a Miata serving: the Alcor's work at 500 MHz
    per_byte = {"copy": 1 / (p.copy_MBps * 1e6), "load_cold": p.user_cold_ns_per_byte * 1e-9,
                "load_warm": p.user_warm_ns_per_byte * 1e-9}
    return CpuCostModel(p.miata_MHz * 1e6, {k: v * us for k, v in fixed.items()}, per_byte)


def alcor_cpu(p: Params) -> CpuCostModel:
    """An Alcor's costs: the Miata's work per operation at the Alcor's clock (so its server work is
    ``server_us``), and its memory-bound work at its store rate (a copy moves each byte in and out)."""
    m = miata_cpu(p)
    slower = p.miata_MHz / p.alcor_MHz
    fixed = {k: v * slower for k, v in m.fixed_s.items()}
    store = 1 / (p.alcor_store_MBps * 1e6)
    per_byte = {"store": store, "copy": 2 * store, "load_warm": m.per_byte_s["load_warm"] * slower}
    return CpuCostModel(p.alcor_MHz * 1e6, fixed, per_byte)


def server_recipe() -> Recipe:
    """A server's work per request, the getpage and the directory's forward alike."""
    return Recipe(ops={"server": 1})


def request_recipe(handling: str, payload: int) -> Recipe:
    """The caller's work to issue a call: the stub, and for a solicited payload the IPT entry (§3.2)."""
    ipt = 1 if handling == "Solicited" and payload > 0 else 0
    return Recipe(ops={"stub": 1, "ipt_map": ipt})


def interrupt_recipe(handling: str, reply: str, payload: int) -> Recipe:
    """The receive interrupt's work on a reply: an unsolicited payload's buffer is returned to the page
    pool and replaced; a deferred continuation first fails its lock probe and is queued (§3.4.3)."""
    recycle = 1 if handling != "Solicited" and payload > 0 else 0
    defer = 1 if reply == "defer" else 0
    return Recipe(ops={"interrupt": 1, "frame_recycle": recycle, "defer": defer})


def handler_recipe(handling: str, payload: int) -> Recipe:
    """The continuation, or the woken caller: its call, and for Unsol+Copy the copy into the reply buffer."""
    return Recipe(ops={"continuation": 1}, nbytes={"copy": payload if handling == "Unsol+Copy" else 0})


class HostWork:
    """Work a host's CPU does for a message (a stub, an interrupt handler): ``seconds`` on the CPU
    resource, booked to ``account`` as ``category`` when there is one."""

    def __init__(self, sim, cpu, seconds: float, *, account: CpuAccount | None = None, category: str = "system"):
        self.sim, self.cpu, self.seconds, self.account, self.category = sim, cpu, seconds, account, category

    def run(self):
        if self.seconds <= 0:
            return
        with self.cpu.request() as turn:
            yield turn
            yield (self.account.busy(self.category, self.seconds) if self.account is not None
                   else self.sim.timeout(self.seconds))


class Route:
    """A message's way from one host to another: the sender's CPU work, the cut-through path, the
    receiver's CPU work. ``send(payload_bytes)`` is a process, as :class:`pysim.sw.rpc.Wire`'s."""

    def __init__(self, sim, path: CutThrough, control_bytes: int, *, before: HostWork | None = None,
                 after: HostWork | None = None):
        self.sim, self.path, self.control_bytes, self.before, self.after = sim, path, control_bytes, before, after

    def send(self, payload_bytes: int):
        if self.before is not None:
            yield from self.before.run()
        yield from self.path.send(self.control_bytes, payload_bytes)
        if self.after is not None:
            yield from self.after.run()


class DelegatingServer:
    """A directory site that forwards each request to the caching site (§3.3). With ``relay`` the
    caching site's reply comes back through the directory (a nested call) instead of going straight to
    the requester."""

    def __init__(self, sim, directory: Server, forward: Route, caching: Server, *, relay: Route | None = None,
                 reply_bytes: int = 0):
        self.sim, self.directory, self.forward, self.caching = sim, directory, forward, caching
        self.relay, self.reply_bytes = relay, reply_bytes

    def serve(self, nbytes: int):
        yield self.sim.process(self.directory.serve(nbytes))
        yield self.sim.process(self.forward.send(0))
        yield self.sim.process(self.caching.serve(nbytes))
        if self.relay is not None:
            yield self.sim.process(self.relay.send(self.reply_bytes))


class Host:
    """A machine: its CPU (a resource), its costs, its PCI bus and its NIC's DMA engine."""

    def __init__(self, sim, p: Params, cpu: CpuCostModel, *, receive_share: float = 1.0, send_share: float = 1.0):
        self.sim, self.costs = sim, cpu
        self.cpu = sim.resource(1)
        self.pci = HostPci(sim, bridge_timing(p, receive_share), bridge_timing(p, send_share))
        self.nic = NicDma(sim, self.pci, setup_s=p.dma_setup_us * us, per_message_s=p.nic_message_us * us)

    def port(self, direction: str) -> NicPort:
        return NicPort(self.nic, direction)

    def work(self, recipe: Recipe, **kw) -> HostWork:
        return HostWork(self.sim, self.cpu, recipe.seconds(self.costs), **kw)


def miata(sim, p: Params) -> Host:
    return Host(sim, p, miata_cpu(p), send_share=p.miata_send_share)


def alcor(sim, p: Params) -> Host:
    return Host(sim, p, alcor_cpu(p), receive_share=p.alcor_receive_share)


def path(sim, p: Params, sender: Host, receiver: Host) -> CutThrough:
    """The cut-through path from ``sender``'s memory to ``receiver``'s: its bus, the link, the other bus."""
    wire = Wire(sim, p.link_latency_us * us, p.link_Gbps * 1e9 / 8)
    return CutThrough(sim, [sender.port(FROM_HOST), LinkStage(wire), receiver.port(TO_HOST)],
                      chunk_bytes=p.chunk_bytes, cut_through=p.cut_through)


def control(p: Params, nbytes: int) -> int:
    """Bytes of a control message on the wire."""
    return nbytes + p.header_bytes


@dataclass(frozen=True)
class Call:
    """One Table 1 configuration: which RPC, how the reply is handled, how its payload is received."""

    rpc: str = "2-way"
    reply: str = "wait"
    handling: str = "Solicited"
    payload: int = 4096

    def __post_init__(self):
        if self.rpc not in RPC_KINDS:
            raise ValueError(f"rpc must be one of {RPC_KINDS}, got {self.rpc!r}")
        if self.reply not in REPLIES:
            raise ValueError(f"reply must be one of {tuple(REPLIES)}, got {self.reply!r}")
        if self.handling not in HANDLINGS:
            raise ValueError(f"handling must be one of {HANDLINGS}, got {self.handling!r}")
        if self.payload < 0:
            raise ValueError(f"payload must be >= 0 bytes, got {self.payload!r}")


class Testbed:
    """Table 1's setting for one :class:`Call`: the Miata client, an Alcor server (two for a delegated
    call: the directory site and the caching site), their NICs and links, and a shared
    :class:`pysim.sw.rpc.Client` with ``window`` calls outstanding."""

    def __init__(self, p: Params, call: Call, *, window: int = 1):
        self.sim = sim = Simulation()
        self.p, self.call = p, call
        self.client_host = miata(sim, p)
        mode = REPLIES[call.reply]
        c = self.client_host
        handler = handler_recipe(call.handling, call.payload).seconds(c.costs)
        self.client = Client(sim, None, None, None, window=window, reply=mode, handler_s=handler,
                             switch_s=c.costs.fixed_s["context_switch"], batch=window)
        self.client.cpu = c.cpu   # the client's reply handling runs on the host's CPU, with its stubs
        before = c.work(request_recipe(call.handling, call.payload))
        after = c.work(interrupt_recipe(call.handling, call.reply, call.payload))
        self.servers = [alcor(sim, p) for _ in range(1 if call.rpc == "2-way" else 2)]
        first, last = self.servers[0], self.servers[-1]
        self.client.out = Route(sim, path(sim, p, c, first), control(p, p.request_bytes), before=before)
        self.client.back = Route(sim, path(sim, p, last, c), control(p, p.reply_control_bytes), after=after)
        serve = [Server(sim, service_s=server_recipe().seconds(h.costs)) for h in self.servers]
        for h, s in zip(self.servers, serve, strict=True):
            s.threads = h.cpu  # the server thread runs on its host's CPU
        if call.rpc == "2-way":
            self.client.server = serve[0]
        else:
            forward = Route(sim, path(sim, p, first, last), control(p, p.request_bytes))
            relay = None
            if not p.delegated_reply:  # the caching site answers the directory, which relays the page
                relay = Route(sim, path(sim, p, last, first), control(p, p.reply_control_bytes))
                self.client.back = Route(sim, path(sim, p, first, c), control(p, p.reply_control_bytes), after=after)
            self.client.server = DelegatingServer(sim, serve[0], forward, serve[1], relay=relay,
                                                  reply_bytes=call.payload)

    def run(self, calls: int) -> dict:
        """Issue ``calls`` calls as fast as the window allows; latency of the first (every stage idle) and
        calls/s between the first quarter and the last window of calls (the pipeline full, neither filling
        nor draining)."""
        if calls < 2:
            raise ValueError(f"calls must be >= 2, got {calls!r}")
        window = self.client.slots.capacity
        done = []

        def timed():
            yield self.sim.process(self.client.call(0, self.call.payload))
            done.append(self.sim.now)

        for _ in range(calls):
            self.sim.process(timed())
        self.sim.run()
        first, last = calls // 4, calls - 1 - window
        rate = (last - first) / (done[last] - done[first]) if last > first else 1 / done[0]
        return {"latency_s": self.client.latencies[0], "calls_per_s": rate, "switches": self.client.switches}


def rpc(p: Params, call: Call, *, calls: int = 64) -> dict:
    """Latency (one call outstanding) and calls/s of one Table 1 configuration.

    A blocked caller (wait) has one call outstanding; continuations and deferred continuations keep
    ``p.window`` outstanding (one without nonblocking RPC).
    """
    latency = Testbed(p, call, window=1).run(2)["latency_s"]
    window = p.window if call.reply != "wait" and p.nonblocking else 1
    rate = Testbed(p, call, window=window).run(calls)["calls_per_s"]
    return {"latency_us": latency / us, "calls_per_s": rate, "MBps": rate * call.payload / 1e6}


def _calls(quick: bool) -> int:
    return 160 if quick else 640


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: gms_net RPC latency and bandwidth, Miata client, Alcor server(s).

    Index: (rpc, reply, payload_handling). Columns: lat_16_0_us, msgs_per_s_16_0 (no payload: the same for
    every payload handling), lat_16_4096_us, bw_16_4096_MBps, lat_16_8192_us, bw_16_8192_MBps (MB of 10^6
    bytes), marginal_16_4096_us, marginal_16_8192_us (a payload's latency over the 16/0 call's).
    ``rng`` is accepted for the lab's signature; the model draws nothing.
    """
    p = params or Params()
    n = _calls(quick)
    rows = []
    for kind in RPC_KINDS:
        for reply in REPLIES:
            empty = rpc(p, Call(kind, reply, "Solicited", 0), calls=n)
            for handling in HANDLINGS:
                row = {"rpc": kind, "reply": reply, "payload_handling": handling,
                       "lat_16_0_us": empty["latency_us"], "msgs_per_s_16_0": empty["calls_per_s"]}
                for size in PAYLOADS[1:]:
                    r = rpc(p, Call(kind, reply, handling, size), calls=n)
                    row[f"lat_16_{size}_us"] = r["latency_us"]
                    row[f"bw_16_{size}_MBps"] = r["MBps"]
                    row[f"marginal_16_{size}_us"] = r["latency_us"] - empty["latency_us"]
                rows.append(row)
    return pd.DataFrame(rows).set_index(["rpc", "reply", "payload_handling"])


# --- raw Trapeze -----------------------------------------------------------------------------------

class RawStream:
    """Raw Trapeze one way (§2.1, §4): a sender posting messages back to back into a ring of send buffers,
    optionally overwriting each payload buffer first, to a receiver that polls its ring. ``acks``: the
    receiver answers every that many messages with a control message (TCP's acknowledgements)."""

    def __init__(self, p: Params, sender: Host, receiver: Host, *, control_bytes: int, payload: int,
                 overwrite: bool = False, acks: int = 0, ring: int = 8):
        sim = self.sim = sender.sim
        self.p, self.payload, self.control_bytes, self.acks = p, payload, control_bytes, acks
        self.ring = sim.resource(ring)
        send = Recipe(ops={"raw_send": 1}, nbytes={"store": payload} if overwrite else {})
        self.send_work = sender.work(send)
        self.receive_work = receiver.work(Recipe(ops={"raw_receive": 1}))
        self.forward = path(sim, p, sender, receiver)
        self.back = path(sim, p, receiver, sender)
        self.done = []

    def message(self):
        with self.ring.request() as slot:   # the send-ring entry is reused once its message has gone
            yield slot
            yield from self.send_work.run()
            yield self.sim.process(self.forward.send(self.control_bytes, self.payload))
        yield from self.receive_work.run()
        self.done.append(self.sim.now)
        if self.acks and len(self.done) % self.acks == 0:
            self.sim.process(self.back.send(self.control_bytes, 0))

    def run(self, messages: int) -> dict:
        """Seconds of the first message alone, and messages/s over the second half."""
        for _ in range(messages):
            self.sim.process(self.message())
        self.sim.run()
        half = messages // 2
        return {"first_s": self.done[0], "per_s": (messages - 1 - half) / (self.done[-1] - self.done[half])}


def _raw(p: Params, platform: str, payload: int, messages: int) -> dict:
    sim = Simulation()
    if platform == "Pentium-II":   # the 440LX's PCI runs at full rate both ways; the NIC and its costs are the same
        sender, receiver = Host(sim, p, miata_cpu(p)), Host(sim, p, miata_cpu(p))
    else:
        sender, receiver = alcor(sim, p), miata(sim, p)
    ctl, acks = control(p, p.reply_control_bytes), 0
    if platform == "Alpha TCP":    # a page per segment, its TCP/IP headers in the control message
        ctl, acks = control(p, p.tcp_mtu_bytes - p.page_bytes), p.tcp_segments_per_ack
    stream = RawStream(p, sender, receiver, control_bytes=ctl, payload=payload,
                       overwrite=platform == "Alcor overwrite", acks=acks)
    return stream.run(messages)


def raw(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Raw Trapeze rates: one-way streams Alcor to Miata at 4 and 8 KB (§4.1), an Alcor overwriting each
    8 KB buffer before sending it (§4.2.2), the Pentium-II/440LX at 8 and 64 KB and its one-way 4 KB
    latency (§2.1), TCP/IP over Trapeze with page-sized segments (§2.2, footnote 2).

    Index: (platform, payload_bytes). Columns: bandwidth_MBps (10^6 bytes), one_way_us, bandwidth_Mbit_s,
    bandwidth_MiBps (the same rate in the other units).
    """
    p = params or Params()
    n = 24 if quick else 96
    cases = [("Alpha", 4096), ("Alpha", 8192), ("Alcor overwrite", 8192), ("Pentium-II", 4096),
             ("Pentium-II", 8192), ("Pentium-II", 65536), ("Alpha TCP", p.page_bytes)]
    rows = []
    for platform, size in cases:
        r = _raw(p, platform, size, n)
        rate = r["per_s"] * size
        rows.append({"platform": platform, "payload_bytes": size, "bandwidth_MBps": rate / 1e6,
                     "one_way_us": r["first_s"] / us, "bandwidth_Mbit_s": 8 * rate / 1e6,
                     "bandwidth_MiBps": rate / 2 ** 20})
    return pd.DataFrame(rows).set_index(["platform", "payload_bytes"])


# --- sequential file access (§4.2) -----------------------------------------------------------------

@dataclass(frozen=True)
class FileTest:
    """One point of Figures 4 and 5: read or write, the interface, bytes touched per page."""

    test: str = "read"
    interface: str = "stream"
    touched: int = 8192

    def __post_init__(self):
        if self.test not in TESTS:
            raise ValueError(f"test must be one of {TESTS}, got {self.test!r}")
        if self.interface not in INTERFACES:
            raise ValueError(f"interface must be one of {INTERFACES}, got {self.interface!r}")
        if not 1 <= self.touched:
            raise ValueError(f"touched must be >= 1 byte, got {self.touched!r}")


class FileBenchmark:
    """§4.2.2's benchmark on the engine: one process walks a file in network memory page by page and
    touches ``touched`` bytes of each, through read()/write() (stream), whole-file mmap or MMB.

    Reads run on the Miata against an Alcor server: read-ahead (or MMB's prefetch) keeps nonblocking
    getpages outstanding, each reply injected into the page cache by a continuation at interrupt level.
    Writes run on an Alcor against the Miata: a page that is not wholly overwritten, or whose overwrite
    the interface cannot know of, is fetched first (synchronously for stream and mmap, prefetched by
    MMB), and every dirty page is pushed behind the writer (at most ``dirty_pages`` at once). CPU time
    goes to a :class:`pysim.sw.CpuAccount` as system or user.
    """

    def __init__(self, p: Params, test: FileTest, *, measured_pages: int, warmup_pages: int):
        if measured_pages < 1 or warmup_pages < 0:
            raise ValueError(f"measured_pages must be >= 1 and warmup_pages >= 0, got {measured_pages!r} and "
                             f"{warmup_pages!r}")
        self.sim = sim = Simulation()
        self.p, self.t = p, test
        self.per_block = p.mmb_block_bytes // p.page_bytes
        # the window closes while the read-ahead and the write-behind still run ahead and behind, as at its
        # start: pages after it are there only to keep them going
        self.first, self.last = warmup_pages, warmup_pages + measured_pages
        self.pages = self.last + p.mmb_blocks * self.per_block + p.readahead_pages + p.dirty_pages
        self.closed = sim.event()
        reading = test.test == "read"
        self.me = miata(sim, p) if reading else alcor(sim, p)
        self.peer = alcor(sim, p) if reading else miata(sim, p)
        self.account = CpuAccount(sim, warmup_s=math.inf, resource=self.me.cpu)
        # without nonblocking RPC there is no read-ahead and no MMB prefetch: a page is fetched when touched
        self.prefetching = p.nonblocking and (reading or (test.interface == "MMB" and p.mmb_prefetch))
        depth = p.readahead_pages if test.interface != "MMB" else p.mmb_blocks * self.per_block
        self.client = self._client(depth if self.prefetching else 1)
        self.fetched = {}                      # page -> the call process that brings it
        self.ahead = 0                         # every page below it has been asked for
        self.pushes = sim.resource(p.dirty_pages)
        self.push_route = Route(sim, path(sim, p, self.me, self.peer), control(p, p.request_bytes),
                                before=self._work(request_recipe("Unsolicited", 0)),
                                after=HostWork(sim, self.peer.cpu, interrupt_recipe("Unsolicited", "cont",
                                                                                      p.page_bytes)
                                               .seconds(self.peer.costs)))
        self.start_s = self.end_s = 0.0
        self.fetch_first = self.needs_fetch()
        self._page_s = {}   # opens a block (MMB) -> (system, user) seconds of a page's access

    def _work(self, recipe: Recipe, category: str = "system") -> HostWork:
        return HostWork(self.sim, self.me.cpu, recipe.seconds(self.me.costs), account=self.account,
                        category=category)

    def _client(self, window: int) -> Client:
        """Getpages from the peer: nonblocking with an inject continuation when prefetching, a blocked
        caller otherwise; the reply's interrupt work, and the continuation, at interrupt level."""
        sim, p = self.sim, self.p
        reply = "continuation" if self.prefetching else "wait"
        inject = Recipe(ops={"inject": 1})   # the page goes into the page cache either way
        handler = 0.0 if self.prefetching else handler_recipe("Solicited", 0).seconds(self.me.costs)
        switch = 0.0 if self.prefetching else self.me.costs.fixed_s["context_switch"]
        client = Client(sim, Server(sim, service_s=server_recipe().seconds(self.peer.costs)), None, None,
                        window=window, reply=reply, handler_s=handler, switch_s=switch)
        client.cpu = self.me.cpu
        client.server.threads = self.peer.cpu
        client.out = Route(sim, path(sim, p, self.me, self.peer), control(p, p.request_bytes),
                           before=self._work(request_recipe("Solicited", p.page_bytes)))
        client.back = Route(sim, path(sim, p, self.peer, self.me), control(p, p.reply_control_bytes),
                            after=self._work(interrupt_recipe("Solicited", "cont", p.page_bytes) + inject))
        return client

    # --- the kernel's side ---------------------------------------------------------------------

    def fetch(self, page: int):
        """Start fetching ``page`` (once) and give the process that ends when it is in the page cache."""
        if page not in self.fetched and page < self.pages:
            self.fetched[page] = self.sim.process(self.client.call(0, self.p.page_bytes))
        return self.fetched.get(page)

    def prefetch(self, page: int):
        """Keep the read-ahead going ahead of ``page``: the next N pages, or MMB's mapped blocks."""
        if self.t.interface == "MMB":
            start = page // self.per_block * self.per_block
            end = start + self.p.mmb_blocks * self.per_block
        else:
            start, end = page, page + self.p.readahead_pages
        # the pages below self.ahead were asked for by earlier calls: ask only for the new ones
        for q in range(max(start, self.ahead), end):
            self.fetch(q)
        if start <= self.ahead:
            self.ahead = max(self.ahead, end)

    def push(self, slot):
        """Write a dirty page behind the writer (§4.2: write-behind, a one-way message with the page);
        ``slot`` is its place among the dirty pages in flight, freed when the page is at the server."""
        yield self.sim.process(self.push_route.send(self.p.page_bytes))
        self.pushes.release(slot)

    # --- the benchmark process -------------------------------------------------------------------

    def needs_fetch(self) -> bool:
        """A written page is read first unless it is wholly overwritten and the interface knows it."""
        if self.t.test == "read":
            return True
        whole = self.t.touched >= self.p.page_bytes
        knows = self.t.interface in ("stream", "MMB") and self.p.full_page_detected
        return not (whole and knows)

    def page_work(self, page: int) -> tuple[Recipe, Recipe]:
        """(system, user) recipes of one page's access, apart from waiting for it."""
        b, t = min(self.t.touched, self.p.page_bytes), self.t
        system = Recipe()
        if t.interface == "MMB" and page % self.per_block == 0:
            system += Recipe(ops={"mmap_call": 1})
        if t.interface == "stream":
            system += Recipe(ops={"read_call": 1}, nbytes={"copy": b})
            user = Recipe(nbytes={"load_warm": b})
        else:
            mapped_over = t.test == "write" and t.interface == "MMB" and not self.needs_fetch()
            system += Recipe(ops={"fault": 0 if mapped_over else 1})
            user = Recipe(nbytes={"load_cold" if t.test == "read" else "store": b})
        return system, user

    def page_seconds(self, page: int) -> tuple[float, float]:
        """(system, user) seconds of one page's access on this host's CPU, apart from waiting for it."""
        key = self.t.interface == "MMB" and page % self.per_block == 0
        if key not in self._page_s:
            system, user = self.page_work(page)
            self._page_s[key] = (system.seconds(self.me.costs), user.seconds(self.me.costs))
        return self._page_s[key]

    def _cpu(self, seconds: float, category: str):
        """Work ``seconds`` on this host's CPU, booked as ``category``."""
        if seconds > 0:
            with self.me.cpu.request() as turn:
                yield turn
                yield self.account.busy(category, seconds)

    def run_process(self):
        t, sim = self.t, self.sim
        for page in range(self.pages):
            if page == self.first:             # the measured window opens here
                self.account.warmup_s, self.start_s = sim.now, sim.now
            if page == self.last:              # and closes here
                self.end_s = sim.now
                self.closed.succeed()
            system, user = self.page_seconds(page)
            if self.prefetching and self.fetch_first:
                self.prefetch(page)
            arrival = self.fetch(page) if self.fetch_first else None
            if arrival is not None and not arrival.triggered:
                yield arrival                   # the process stalls for its page
            yield from self._cpu(system, "system")
            for _ in range(USER_SLICES):        # user work in slices, so interrupts get the CPU between them
                yield from self._cpu(user / USER_SLICES, "user")
            if t.test == "write":            # the writer waits when too many dirty pages are in flight
                slot = self.pushes.request()
                yield slot
                sim.process(self.push(slot))

    def run(self) -> dict:
        """Bandwidth (10^6 bytes of file per second) and CPU shares over the measured pages."""
        self.sim.process(self.run_process())
        self.sim.run(until=self.closed)
        window = self.end_s - self.start_s
        shares = self.account.shares_pct(self.end_s)
        measured = self.last - self.first
        system, user = shares.get("system", 0.0), shares.get("user", 0.0)
        return {"bandwidth_MBps": measured * self.p.page_bytes / window / 1e6, "system_pct": system,
                "user_pct": user, "total_pct": system + user}


def file_point(p: Params, test: FileTest, *, quick: bool = False) -> dict:
    """One point of Figures 4 and 5: bandwidth and CPU shares over whole MMB blocks, after a warm-up."""
    per_block = p.mmb_block_bytes // p.page_bytes
    measured, warm = (2 if quick else 8) * per_block, 4 * per_block   # the pipeline settles in 4 blocks
    return FileBenchmark(p, test, measured_pages=measured, warmup_pages=warm).run()


@functools.lru_cache(maxsize=32)
def _file_sweep(p: Params, quick: bool) -> pd.DataFrame:
    rows = []
    for test in TESTS:
        for interface in INTERFACES:
            for touched in TOUCHED:
                r = file_point(p, FileTest(test, interface, touched), quick=quick)
                rows.append({"test": test, "interface": interface, "bytes_per_page": touched, **r})
    return pd.DataFrame(rows).set_index(["test", "interface", "bytes_per_page"])


def figure4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 4: sequential read (Miata) and write (Alcor) bandwidth against bytes touched per 8 KB page.

    Index: (test, interface, bytes_per_page). Columns: bandwidth_MBps (10^6 bytes of file per second).
    """
    return _file_sweep(params or Params(), bool(quick))[["bandwidth_MBps"]].copy()


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5: system and total CPU utilisation of the same runs.

    Index: (test, interface, bytes_per_page). Columns: system_pct, user_pct, total_pct.
    """
    return _file_sweep(params or Params(), bool(quick))[["system_pct", "user_pct", "total_pct"]].copy()


def curve(df: pd.DataFrame, test: str, interface: str, column: str) -> pd.Series:
    """One interface's curve of a Figure 4/5 frame against bytes touched per page."""
    s = df.xs((test, interface), level=("test", "interface"))[column]
    return pd.Series(s.to_numpy(), index=[int(x) for x in s.index], name=interface)


# --- then vs now: the same interfaces and call styles on this machine ------------------------------
# A small C program this module writes, builds with gcc and runs through pysim.harness.commands: read()
# against whole-file mmap against a sliding mmap window on tmpfs, with getrusage's user and system time;
# and a loopback TCP RPC whose server the program forks, with one request outstanding or a window of them.
# Where gcc or a facility is missing, the frames say "not available: <why>" in their note column.

NOW_PROGRAM = r"""
/* anderson_now: the arguments come in the environment variable ANDERSON_NOW, as words.
 *
 * file <file_bytes> <read|mmap|window> <block_bytes> <blocks> <passes> <touch>[,<touch>...]
 *     walks a scratch file on tmpfs (/dev/shm, else /tmp) page by page (8 KB), touching <touch> bytes of
 *     each, through read() into a buffer, one whole-file mmap, or a sliding window of <blocks> mappings of
 *     <block_bytes> (MAP_POPULATE standing for MMB's prefetch on mmap); one line per touch: seconds, user
 *     and system CPU, minor faults. The file is removed at the end.
 * rpc <payload_bytes> <window> <calls>
 *     a server forked here answers 16-byte requests over loopback TCP with a 16-byte header and the
 *     payload; the client keeps <window> requests outstanding; one line: seconds and CPU times. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#define PAGE 8192

static double wall(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static double tv(struct timeval t) { return t.tv_sec + 1e-6 * t.tv_usec; }

static uint64_t touch_page(const char *page, long touch)
{
    const uint64_t *w = (const uint64_t *)page;
    uint64_t s = 0;
    long words = touch / 8 > 0 ? touch / 8 : 1;
    for (long i = 0; i < words; i++) s += w[i];
    return s;
}

static int make_file(char *path, long bytes)
{
    strcpy(path, "/dev/shm/anderson-now-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) { strcpy(path, "/tmp/anderson-now-XXXXXX"); fd = mkstemp(path); }
    if (fd < 0) return -1;
    char *buf = malloc(1 << 20);
    if (!buf) return -1;
    for (long i = 0; i < (1 << 20); i++) buf[i] = (char)(i * 131 + 7);
    for (long off = 0; off < bytes; off += 1 << 20) {
        long n = bytes - off < (1 << 20) ? bytes - off : (1 << 20);
        if (pwrite(fd, buf, (size_t)n, off) != n) { free(buf); return -1; }
    }
    free(buf);
    return fd;
}

static uint64_t pass_read(int fd, long bytes, long touch)
{
    static char *buf;
    uint64_t s = 0;
    if (!buf && posix_memalign((void **)&buf, PAGE, PAGE) != 0) return 0;
    long want = touch < PAGE ? touch : PAGE;
    for (long off = 0; off < bytes; off += PAGE) {
        if (pread(fd, buf, (size_t)want, off) != want) return 0;
        s += touch_page(buf, want);
    }
    return s;
}

static uint64_t pass_mmap(int fd, long bytes, long touch)
{
    char *m = mmap(NULL, (size_t)bytes, PROT_READ, MAP_SHARED, fd, 0);
    uint64_t s = 0;
    if (m == MAP_FAILED) return 0;
    for (long off = 0; off < bytes; off += PAGE) s += touch_page(m + off, touch);
    munmap(m, (size_t)bytes);
    return s;
}

static uint64_t pass_window(int fd, long bytes, long touch, long block, int blocks)
{
    char *maps[64] = {0};
    uint64_t s = 0;
    for (long b = 0; b < bytes / block; b++) {
        int slot = (int)(b % blocks);
        if (maps[slot]) munmap(maps[slot], (size_t)block);   /* release the region mapped <blocks> ago */
        maps[slot] = mmap(NULL, (size_t)block, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, b * block);
        if (maps[slot] == MAP_FAILED) return 0;
        for (long off = 0; off < block; off += PAGE) s += touch_page(maps[slot] + off, touch);
    }
    for (int i = 0; i < blocks; i++) if (maps[i]) munmap(maps[i], (size_t)block);
    return s;
}

static int file_mode(int argc, char **argv)
{
    if (argc != 7) { fprintf(stderr, "usage: file bytes iface block blocks passes touches\n"); return 2; }
    const char *iface = argv[2];
    long bytes = atol(argv[1]), block = atol(argv[3]);
    int blocks = atoi(argv[4]), passes = atoi(argv[5]);
    if (bytes <= 0 || block <= 0 || bytes % block || block % PAGE || blocks < 1 || blocks > 64 || passes < 1) {
        fprintf(stderr, "bad sizes\n"); return 2;
    }
    char path[64];
    int fd = make_file(path, bytes);
    if (fd < 0) { fprintf(stderr, "cannot create a scratch file: %s\n", strerror(errno)); return 1; }
    sink += pass_read(fd, bytes, PAGE);   /* every page in the page cache before timing */
    for (char *tok = strtok(argv[6], ","); tok; tok = strtok(NULL, ",")) {
        long touch = atol(tok);
        struct rusage r0, r1;
        getrusage(RUSAGE_SELF, &r0);
        double t0 = wall();
        for (int p = 0; p < passes; p++) {
            if (!strcmp(iface, "read")) sink += pass_read(fd, bytes, touch);
            else if (!strcmp(iface, "mmap")) sink += pass_mmap(fd, bytes, touch);
            else sink += pass_window(fd, bytes, touch, block, blocks);
        }
        double t = wall() - t0;
        getrusage(RUSAGE_SELF, &r1);
        printf("touch=%ld seconds=%.9g user=%.9g system=%.9g minflt=%ld bytes=%ld\n", touch, t,
               tv(r1.ru_utime) - tv(r0.ru_utime), tv(r1.ru_stime) - tv(r0.ru_stime),
               r1.ru_minflt - r0.ru_minflt, bytes * (long)passes);
    }
    close(fd);
    unlink(path);
    return 0;
}

static int full_io(int fd, char *buf, long n, int writing)
{
    long done = 0;
    while (done < n) {
        long k = writing ? write(fd, buf + done, (size_t)(n - done)) : read(fd, buf + done, (size_t)(n - done));
        if (k <= 0) return -1;
        done += k;
    }
    return 0;
}

static void serve(int lfd, long payload)
{
    int fd = accept(lfd, NULL, NULL), one = 1;
    char req[16], *reply = calloc(1, (size_t)(16 + payload));
    if (fd < 0 || !reply) _exit(1);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    while (full_io(fd, req, 16, 0) == 0) {
        memcpy(reply, req, 16);            /* the reply token goes back in the header */
        if (full_io(fd, reply, 16 + payload, 1) != 0) break;
    }
    _exit(0);
}

static int rpc_mode(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: rpc payload window calls\n"); return 2; }
    long payload = atol(argv[1]), window = atol(argv[2]), calls = atol(argv[3]);
    if (payload < 0 || window < 1 || calls < window) { fprintf(stderr, "bad arguments\n"); return 2; }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    socklen_t len = sizeof a;
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)&a, &len)) { perror("listen"); return 1; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) serve(lfd, payload);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) { perror("connect"); kill(pid, SIGKILL); return 1; }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char req[16], *reply = malloc((size_t)(16 + payload));
    memset(req, 0, sizeof req);
    struct rusage r0, r1, rc;
    getrusage(RUSAGE_SELF, &r0);
    double t0 = wall();
    long sent = 0, got = 0;
    for (; sent < window; sent++) { memcpy(req, &sent, sizeof sent); full_io(fd, req, 16, 1); }
    while (got < calls) {
        if (full_io(fd, reply, 16 + payload, 0) != 0) { fprintf(stderr, "the server went away\n"); return 1; }
        got++;
        if (sent < calls) { memcpy(req, &sent, sizeof sent); full_io(fd, req, 16, 1); sent++; }
    }
    double t = wall() - t0;
    getrusage(RUSAGE_SELF, &r1);
    close(fd);
    int status;
    waitpid(pid, &status, 0);
    getrusage(RUSAGE_CHILDREN, &rc);
    printf("payload=%ld window=%ld calls=%ld seconds=%.9g user=%.9g system=%.9g server_user=%.9g "
           "server_system=%.9g\n", payload, window, calls, t, tv(r1.ru_utime) - tv(r0.ru_utime),
           tv(r1.ru_stime) - tv(r0.ru_stime), tv(rc.ru_utime), tv(rc.ru_stime));
    return 0;
}

static int anderson_main(void)
{
    static char words[4096];
    char *argv[16];
    int argc = 0;
    const char *env = getenv("ANDERSON_NOW");
    if (!env || strlen(env) >= sizeof words) { fprintf(stderr, "set ANDERSON_NOW to the arguments\n"); return 2; }
    strcpy(words, env);
    for (char *w = strtok(words, " "); w && argc < 16; w = strtok(NULL, " ")) argv[argc++] = w;
    if (argc > 0 && !strcmp(argv[0], "file")) return file_mode(argc, argv);
    if (argc > 0 && !strcmp(argv[0], "rpc")) return rpc_mode(argc, argv);
    fprintf(stderr, "ANDERSON_NOW must start with file or rpc\n");
    return 2;
}
"""

#: This machine's counterparts of the paper's interfaces: read() for stream, one mmap of the whole file,
#: and a sliding window of MAP_POPULATE mappings for MMB.
NOW_INTERFACES = {"stream": "read", "mmap": "mmap", "MMB": "window"}


def build_now_program() -> tuple[list | None, str]:
    """The command that runs the measurement program, built (and cached) by :mod:`pysim.harness.runners`
    around the program's own main, or (None, why not)."""
    program = Snippet("c", "sink += 0;", setup="return anderson_main();", decls=NOW_PROGRAM)
    return build(program)


def _run_now(command: list, words: list, timeout_s: float):
    """Run the program on ``words``; (its output, '') or (None, 'not available: why')."""
    r = run_command(command, env={"ANDERSON_NOW": " ".join(str(w) for w in words)}, timeout_s=timeout_s,
                    check=True)
    return (r.stdout, "") if r.available else (None, f"not available: {r.reason}")


def _fields(line: str) -> dict:
    return {k: float(v) for k, v in (w.split("=", 1) for w in line.split())}


@one_core()
def measure_files(*, quick: bool = False, touched=(8, 1024, 2048, 4096, 6144, 8192)) -> pd.DataFrame:
    """read() against whole-file mmap against a sliding mmap window, on this machine (a file on tmpfs).

    Index: (interface, bytes_per_page) with the paper's interface names. Columns: MBps (10^6 bytes of file
    per second), user_ns_per_byte, system_ns_per_byte (getrusage, per byte of file), faults_per_page,
    note ('not available: <why>' where it is). ``quick`` keeps 8, 4096 and 8192 bytes and a smaller file.
    """
    p = Params()
    command, why = build_now_program()
    file_bytes, passes = ((64 if quick else 256) << 20), (2 if quick else 4)
    touched = tuple(x for x in touched if x in (8, 4096, 8192)) if quick else tuple(touched)
    rows = []
    for iface, mode in NOW_INTERFACES.items():
        out, note = (None, f"not available: {why}") if command is None else _run_now(
            command, ["file", file_bytes, mode, p.mmb_block_bytes, p.mmb_blocks, passes,
                      ",".join(str(x) for x in touched)], 300.0)
        lines = [_fields(line) for line in (out or "").splitlines() if line.startswith("touch=")]
        for i, x in enumerate(touched):
            f = lines[i] if i < len(lines) else None
            rows.append({"interface": iface, "bytes_per_page": x,
                         "MBps": f["bytes"] / f["seconds"] / 1e6 if f else math.nan,
                         "user_ns_per_byte": 1e9 * f["user"] / f["bytes"] if f else math.nan,
                         "system_ns_per_byte": 1e9 * f["system"] / f["bytes"] if f else math.nan,
                         "faults_per_page": f["minflt"] / (f["bytes"] / p.page_bytes) if f else math.nan,
                         "note": note or ("" if f else "not available: no output")})
    return pd.DataFrame(rows).set_index(["interface", "bytes_per_page"])


@exclusive()
def measure_rpc(*, quick: bool = False, payloads=PAYLOADS, windows=(1, 16)) -> pd.DataFrame:
    """A loopback TCP RPC on this machine: 16-byte requests, replies of each payload, one call
    outstanding (a blocked caller) or a window of them (pipelined, as nonblocking calls are).

    Index: (payload_bytes, window). Columns: us_per_call (elapsed over calls: the latency with one call
    outstanding), calls_per_s, MBps (payload, 10^6 bytes/s), cpu_us_per_call (client and server, user and
    system), note.
    """
    command, why = build_now_program()
    calls = 2000 if quick else 20000
    rows = []
    for size in payloads:
        for w in windows:
            out, note = (None, f"not available: {why}") if command is None else _run_now(
                command, ["rpc", size, w, calls], 120.0)
            lines = [line for line in (out or "").splitlines() if line.startswith("payload=")]
            note = note or ("" if lines else "not available: no output")
            f = _fields(lines[-1]) if lines else None
            cpu = (f["user"] + f["system"] + f["server_user"] + f["server_system"]) if f else math.nan
            rows.append({"payload_bytes": size, "window": w,
                         "us_per_call": 1e6 * f["seconds"] / calls if f else math.nan,
                         "calls_per_s": calls / f["seconds"] if f else math.nan,
                         "MBps": size * calls / f["seconds"] / 1e6 if f else math.nan,
                         "cpu_us_per_call": 1e6 * cpu / calls if f else math.nan, "note": note})
    return pd.DataFrame(rows).set_index(["payload_bytes", "window"])


def then_and_now(files: pd.DataFrame, calls: pd.DataFrame, params: Params | None = None, *,
                 quick: bool = False) -> pd.DataFrame:
    """The 1998 model beside this machine: file reads per interface and bytes touched, and RPCs with one
    call outstanding against a window.

    ``files`` is :func:`measure_files`' frame, ``calls`` :func:`measure_rpc`'s. Index: (experiment, case).
    Columns: then_MBps, now_MBps, now_over_then (bandwidth), then_cpu_ns_per_byte and now_cpu_ns_per_byte
    (file reads: system and user CPU per byte of file), then_us_per_call and now_us_per_call (RPCs: elapsed
    over calls, the latency with one call outstanding), note.
    """
    p = params or Params()
    f5 = _file_sweep(p, bool(quick))
    rows = []
    for (iface, x), now in files.iterrows():
        then = f5.loc[("read", iface, x)] if ("read", iface, x) in f5.index else None
        then_mbps = then["bandwidth_MBps"] if then is not None else math.nan
        then_cpu = (then["system_pct"] + then["user_pct"]) / 100 * 1e3 / then_mbps if then is not None else math.nan
        rows.append({"experiment": "file read", "case": f"{iface} / {x}", "then_MBps": then_mbps,
                     "now_MBps": now["MBps"], "then_cpu_ns_per_byte": then_cpu,
                     "now_cpu_ns_per_byte": now["user_ns_per_byte"] + now["system_ns_per_byte"],
                     "then_us_per_call": math.nan, "now_us_per_call": math.nan, "note": now["note"]})
    for (size, w), now in calls.iterrows():
        reply = "wait" if w == 1 else "cont"
        then = rpc(p, Call("2-way", reply, "Solicited", int(size)), calls=_calls(quick))
        rows.append({"experiment": "RPC", "case": f"{size} B / window {w}",
                     "then_MBps": then["MBps"], "now_MBps": now["MBps"], "then_cpu_ns_per_byte": math.nan,
                     "now_cpu_ns_per_byte": math.nan, "then_us_per_call": 1e6 / then["calls_per_s"],
                     "now_us_per_call": now["us_per_call"], "note": now["note"]})
    out = pd.DataFrame(rows).set_index(["experiment", "case"])
    out.insert(2, "now_over_then", out["now_MBps"] / out["then_MBps"])
    return out
