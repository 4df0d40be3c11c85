"""Transport protocols and direct data placement: partitioning functionality (Nizhner, Biggadike &
Chamcham, CMU 15-712 report, 2005).

Regenerates Table 1 (null RPC response time of the three NFS-lite servers: :func:`table1`), Table 2
(peak write throughput, the client threads needed to reach it and the response time there, whose body
is lost in the text and is rebuilt from §4.3's prose: :func:`table2`), Figure 4 (write throughput
against client threads: :func:`figure4`) and Figure 5 (ENP-2611 packet-buffer space against
throughput and against client threads: :func:`figure5`).

First principles (:class:`Testbed`, on the engine): N client threads on three client machines, each
with one synchronous NFS-lite call outstanding (:class:`pysim.workloads.clients.ClosedLoop`, no
think time). A call holds its client machine's transmit path for its bytes at the 300 Mbps each
machine sustains (§4.1), crosses the switch to the server (:class:`pysim.sw.rpc.Wire`, gigabit
Ethernet), and then takes one of three paths:

* **Sun RPC**: the host's kernel UDP and the user-level server, one CPU (a FIFO resource) held per
  call for a fixed cost plus a copy per byte, after a latency (interrupt, wake-up).
* **IDP, full offload** (Figure 2a): the IXP2400 receives and checksums the frame; the data proxy asks
  the host for the page-cache addresses (a control round trip over PCI), DMAs the payload into the
  page-cache pages (one transfer per page touched), and signals completion (a second round trip).
  Every message and every DMA burst takes the one 32-bit, 33 MHz PCI bus (:class:`pysim.hw.bus.Bus`
  priced by :class:`pysim.hw.bus.PciTiming`, whose wait states follow from the measured 680 Mbps of
  raw writes).
* **IDP, partial offload** (Figure 2b): as full offload, plus one more round trip over PCI to the
  host's UDP/IP kernel thread before the proxy may go on. That thread polls for frames once per
  scheduler tick (§4.5: "a regularly-scheduled thread polling for frame arrivals") and forwards every
  frame waiting when it runs. A request therefore waits for the next tick; a single client's
  back-to-back calls lock onto the ticks, one call per tick.

Each request on the NIC holds a 2048-byte packet buffer (Figure 5's caption). Table 2's threads at
peak are the closed network's saturation point N* = R0 X_max (Kleinrock's: where the asymptotic bounds
meet), from the simulated unloaded write response R0 and saturated throughput X_max; its response time
at peak is the simulated response at that many threads.

Calibrated, each on one published cell (see CALIBRATION): the client side's fixed latency (the Sun
RPC client's stack both ways, the switch and media converters) on the full offload's null RPC; the
Sun RPC server's host latency on its null RPC; the scheduler tick on the partial offload's null RPC;
the Sun RPC server's CPU per call on its peak throughput. Everything else is a prediction: both IDP
peaks (the PCI bus: payload bursts plus four or six control messages), the threads and response time
at peak for both, and Figure 5's buffer ratio.

Not reproduced: Figures 1-3 are diagrams. NFS-lite reads (the paper gives no result: PCI reads were
too slow). The Sun RPC row of Table 2 has only its peak in the text.

Then vs now (through :mod:`pysim.harness`): :func:`measure_handoff` times a two-thread handoff in C,
the partitioned stack's hop, with a thread that polls and sleeps a tick, one that polls and sleeps
50 us, and an eventfd wake-up; :func:`measure_closed_loop` runs N client threads against a loopback
UDP server with an injected delay (Python's standard library, in a child process) beside exact MVA.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.harness.runners import measure
from pysim.hw.bus import Bus, PciTiming
from pysim.models import Counterfactual, Fit
from pysim.params import ModelParams, assumed, calibrated, derived, stated
from pysim.queueing.closed import Station, mva_at
from pysim.rng import make_rng
from pysim.sw.rpc import Wire
from pysim.units import Mbit_per_s, us
from pysim.workloads.clients import ClosedLoop
from pysim.harness.exclusive import exclusive

IMPLEMENTATIONS = ("Sun RPC", "IDP (full)", "IDP (partial)")
IDP = IMPLEMENTATIONS[1:]
#: Figure 4's x axis: client threads (the paper's sweep is not printed; its peaks lie at 13 and 73).
THREADS = (1, 2, 3, 4, 6, 8, 10, 13, 16, 20, 25, 30, 40, 50, 60, 73, 85, 100, 120, 150)
THREADS_QUICK = (1, 2, 4, 8, 13, 20, 30, 45, 60, 73, 100, 150)
#: Figure 5a's x axis: application throughput levels (Mbps) both IDP servers reach.
LEVELS_MBPS = (100, 200, 300, 400, 500)
#: Threads enough to saturate every server (the partial offload saturates near 60).
SATURATING_THREADS = 200


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds, sizes in bytes, rates in bits per second."""

    # the workload (§4)
    payload_bytes: int = assumed(1384, "§4: 'MTU-sized' writes: 1500 less IP (20), UDP (8), an ONC RPC call "
                                       "header with AUTH_NULL (40) and NFS-lite's arguments (a 32-byte file "
                                       "handle as NFSv2's, a 64-bit offset, a length and the opaque data's "
                                       "length: 48)", ge=1)
    call_header_bytes: int = derived(116, "IP, UDP, RPC header and NFS-lite arguments of a call (20+8+40+48)",
                                     ge=0)
    reply_bytes: int = assumed(52, "an RPC reply with AUTH_NULL and a status word, with IP and UDP headers",
                               ge=1)
    frame_overhead_bytes: int = stated(38, "IEEE 802.3: Ethernet header, FCS, preamble and inter-frame gap",
                                       ge=0)
    page_bytes: int = stated(4096, "§3.1.1: each file a collection of discontiguous page-sized blocks "
                                   "(IA-32 pages)", ge=1)
    client_machines: int = stated(3, "§4.1: three client machines", ge=1)
    client_bits_per_s: float = stated(300 * Mbit_per_s * 8, "§4.1: clients saturate their transmit paths at "
                                                            "roughly 300 Mbps")
    link_bits_per_s: float = stated(1e9, "§4.1, Figure 3: gigabit Ethernet switch")
    client_fixed_us: float = calibrated(55.786667, "the client side of a call outside its transmit path: the Sun "
                                              "RPC client's stack both ways, the switch, the media converters",
                                        ge=0)
    # the PCI bus (§4.1)
    pci_clock_hz: float = stated(33.33e6, "§4.1: 32 bits wide, clocked at 33 MHz (PCI's 33.33 MHz)")
    pci_burst_bytes: int = assumed(64, "a DMA burst of two 32-byte IXP2400 memory transfers; the bus "
                                       "arbitrates again between bursts", ge=4)
    pci_write_wait_cycles: int = derived(6, "§4.1's measured 680 Mbps of raw PCI writes: with 64-byte bursts "
                                            "(16 data phases) and 3 cycles of arbitration, address and "
                                            "turnaround, 6 wait cycles give 16/25 of 1067 Mbps = 683 Mbps",
                                         ge=0)
    pci_rtt_us: float = stated(3.0, "§4.1: a short-message round trip from the host to the ENP-2611 of 3 us",
                               ge=0)
    query_bytes: int = assumed(16, "the proxy's address query: file, offset, length", ge=1)
    addresses_bytes: int = assumed(16, "the host's answer: up to two (page address, length) pairs", ge=1)
    done_bytes: int = assumed(8, "a DMA-completion message or a return status: a tag and a word", ge=1)
    header_bytes: int = assumed(16, "the UDP/IP header fields the NIC sends to the host stack: addresses, "
                                    "ports, length", ge=1)
    verdict_bytes: int = assumed(8, "the host stack's answer: forward to which proxy, or drop", ge=1)
    # the NIC (§3.1.2): multithreaded microengines, so the stages are delays, not queues
    nic_stage_us: float = assumed(1.0, "one microengine stage (Ethernet receive with its packet filter, UDP/IP, "
                                       "proxy, transmit): a few hundred instructions at 600 MHz")
    nic_stages: int = stated(4, "§3.1.2, Figure 2: Ethernet Receive, UDP/IP, Data Proxy, Ethernet Transmit",
                             ge=1)
    checksum_ns_per_byte: float = assumed(1.0, "the UDP checksum in microengine code (§4.5: the costliest "
                                               "element): about half a cycle per byte at 600 MHz", ge=0)
    buffer_bytes: int = stated(2048, "Figure 5: each outstanding request corresponds to a 2048-byte packet "
                                     "buffer", ge=1)
    # the host's partitioned UDP stack (§4.2, §4.5)
    tick_us: float = calibrated(1000.0, "the scheduler tick at which the host UDP thread polls for frames")
    host_udp_us: float = assumed(2.0, "the host UDP/IP module's work per frame: header checks and a port "
                                      "lookup, a few thousand cycles at 1.5 GHz", ge=0)
    wakeup_us: float = assumed(10.0, "an event-driven wake-up of a kernel thread on a 1.5 GHz Pentium 4 under "
                                     "Linux 2.4: interrupt, wake-up and context switch (the counterfactual's "
                                     "handoff)", ge=0)
    host_udp: str = stated("tick", "§4.5: the host UDP stack is 'a regularly-scheduled thread polling for "
                                   "frame arrivals'", choices=("tick", "event"))
    drain_all: bool = assumed(True, "a polling thread forwards every frame waiting when it runs, not one")
    round_trip_on_pci: bool = stated(True, "§4.3: 'the partially-offloaded implementation adds a control "
                                           "message round-trip to the data path'")
    # the Sun RPC server (§3.1.1, §4.3)
    sun_host_latency_us: float = calibrated(16.450106, "the host path of a Sun RPC call outside its CPU work: the "
                                                  "D-Link NIC's interrupt, the wake-up of the server", ge=0)
    sun_cpu_us: float = calibrated(40.717894, "the Sun RPC server's CPU per call: kernel UDP, the RPC library, "
                                         "XDR, the dispatch")
    sun_copy_ns_per_byte: float = assumed(1.0, "memcpy of the data into the page-cache-like blocks on a "
                                               "Pentium 4 with RDRAM, about 1 GB/s", ge=0)

    @property
    def pci(self) -> PciTiming:
        """The server's PCI bus (reads are never priced: all cross-PCI traffic is writes, §3.1.2)."""
        return PciTiming(read_wait_cycles=self.pci_write_wait_cycles, write_wait_cycles=self.pci_write_wait_cycles,
                         max_burst_bytes=self.pci_burst_bytes, clock_hz=self.pci_clock_hz)


CALIBRATION = (
    Fit("client_fixed_us", "table1", "IDP (full)", "null_rpc_us", (0.0, 200.0)),
    Fit("sun_host_latency_us", "table1", "Sun RPC", "null_rpc_us", (0.0, 200.0)),
    Fit("tick_us", "table1", "IDP (partial)", "null_rpc_us", (200.0, 5000.0)),
    Fit("sun_cpu_us", "table2", "Sun RPC", "peak_mbps", (5.0, 200.0)),
)
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("event-driven-udp", {"host_udp": "event"},
                   "the host UDP thread is woken by each frame (an interrupt and a context switch) instead of "
                   "polling once per scheduler tick"),
    Counterfactual("no-extra-pci", {"round_trip_on_pci": False},
                   "the partitioned stack's round trip to the host costs the PCI bus nothing"),
    Counterfactual("one-frame-per-poll", {"drain_all": False},
                   "the polling thread forwards one frame per tick and leaves the rest for later ticks"),
    Counterfactual("short-bursts", {"pci_burst_bytes": 16},
                   "DMA in 16-byte bursts, each paying the bus's overheads: a PCI bus the paper's 680 Mbps "
                   "rules out"),
)


def _check(impl: str, threads: int):
    if impl not in IMPLEMENTATIONS:
        raise ValueError(f"impl must be one of {IMPLEMENTATIONS}, got {impl!r}")
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be an int >= 1, got {threads!r}")


class Testbed:
    """The NFS-lite testbed of §4.1 on the engine: ``threads`` client threads calling one server."""

    def __init__(self, p: Params, impl: str, threads: int, *, payload: int, warmup_s: float, rng=0):
        _check(impl, threads)
        self.p, self.impl, self.payload = p, impl, payload
        gen = make_rng(rng)
        self.sim = sim = Simulation()
        self.clients = [sim.resource(1) for _ in range(p.client_machines)]
        link = p.link_bits_per_s / 8
        self.up = Wire(sim, 0.0, link, per_message_bytes=p.frame_overhead_bytes)
        self.down = Wire(sim, 0.0, link, per_message_bytes=p.frame_overhead_bytes)
        self.bus = Bus(sim, p.pci)
        self.cpu = sim.resource(1)          # the Sun RPC server's CPU
        self.udp_thread = sim.resource(1)   # the host UDP thread, event-driven
        self.waiting = []                   # frames the polling host UDP thread has not seen yet
        self.offsets = [0] * threads        # each thread writes its own file sequentially
        self.on_nic, self.nic_area, self.nic_since = 0, 0.0, warmup_s
        self.warmup_s = warmup_s
        if impl == "IDP (partial)" and p.host_udp == "tick":
            sim.process(self._poller(gen.uniform(0.0, p.tick_us * us)))
        self.loop = ClosedLoop(sim, int(threads), self.call, think_s=0.0, warmup_s=warmup_s, rng=gen)

    # --- the host's partitioned UDP stack --------------------------------------------------------------
    def _poller(self, phase_s):
        """Poll once per tick: forward the frames waiting (all of them, or one), then sleep to the next tick."""
        sim, p = self.sim, self.p
        yield sim.timeout(phase_s)
        while True:
            while self.waiting:
                ev = self.waiting.pop(0)
                yield sim.timeout(p.host_udp_us * us)
                ev.succeed()
                if not p.drain_all:
                    break
            tick = p.tick_us * us
            k = math.floor((sim.now - phase_s) / tick + 1e-9) + 1   # the next tick, never this one again
            yield sim.timeout(max(0.0, phase_s + k * tick - sim.now))

    def _host_udp(self):
        if self.p.host_udp == "tick":
            ev = self.sim.event()
            self.waiting.append(ev)
            yield ev
        else:
            yield self.sim.timeout(self.p.wakeup_us * us)
            with self.udp_thread.request() as turn:
                yield turn
                yield self.sim.timeout(self.p.host_udp_us * us)

    # --- the NIC and the PCI bus ---------------------------------------------------------------------
    def _nic(self, delta):
        now = self.sim.now
        if now > self.nic_since:
            self.nic_area += self.on_nic * (now - self.nic_since)
            self.nic_since = now
        self.on_nic += delta

    def _round_trip(self, out_bytes, back_bytes):
        """A control message each way over PCI: their bus time, and the rest of §4.1's 3 us round trip."""
        p, bus = self.p, self.bus
        yield self.sim.process(bus.transfer(out_bytes, write=True))
        yield self.sim.process(bus.transfer(back_bytes, write=True))
        on_bus = (p.pci.transfer_s(out_bytes, write=True) + p.pci.transfer_s(back_bytes, write=True))
        yield self.sim.timeout(max(0.0, p.pci_rtt_us * us - on_bus))

    def _segments(self, user):
        """The payload's pieces, one per page-cache page it touches (scatter/gather DMA, §3.1.1)."""
        start, n, page = self.offsets[user], self.payload, self.p.page_bytes
        self.offsets[user] = start + n
        out, pos = [], start
        while pos < start + n:
            end = min(start + n, (pos // page + 1) * page)
            out.append(end - pos)
            pos = end
        return out

    def _idp(self, user):
        p, sim = self.p, self.sim
        self._nic(+1)
        yield sim.timeout((2 * p.nic_stage_us + p.checksum_ns_per_byte * 1e-3
                           * (self.payload + p.call_header_bytes)) * us)   # Ethernet Rx, UDP/IP
        if self.impl == "IDP (partial)":
            if p.round_trip_on_pci:
                yield sim.process(self.bus.transfer(p.header_bytes, write=True))
            yield sim.process(self._host_udp())
            if p.round_trip_on_pci:
                yield sim.process(self.bus.transfer(p.verdict_bytes, write=True))
        yield sim.timeout(p.nic_stage_us * us)                                   # the data proxy
        if self.payload:
            yield sim.process(self._round_trip(p.query_bytes, p.addresses_bytes))
            for seg in self._segments(user):
                yield sim.process(self.bus.transfer(seg, write=True))
        yield sim.process(self._round_trip(p.done_bytes, p.done_bytes))          # the host's handler
        yield sim.timeout((p.nic_stage_us + p.checksum_ns_per_byte * 1e-3 * p.reply_bytes) * us)   # Tx
        self._nic(-1)

    def _sun(self):
        p, sim = self.p, self.sim
        yield sim.timeout(p.sun_host_latency_us * us)
        with self.cpu.request() as turn:
            yield turn
            yield sim.timeout((p.sun_cpu_us + p.sun_copy_ns_per_byte * 1e-3 * self.payload) * us)

    # --- one call --------------------------------------------------------------------------------------
    def call(self, user):
        """One synchronous NFS-lite write (or null call) of thread ``user``: the process a client runs."""
        p, sim = self.p, self.sim
        call_bytes = self.payload + p.call_header_bytes
        with self.clients[user % p.client_machines].request() as turn:
            yield turn
            yield sim.timeout(call_bytes * 8 / p.client_bits_per_s)
        yield sim.timeout(p.client_fixed_us * us)
        yield sim.process(self.up.send(call_bytes))
        if self.impl == "Sun RPC":
            yield sim.process(self._sun())
        else:
            yield sim.process(self._idp(user))
        yield sim.process(self.down.send(p.reply_bytes))

    def run(self, until_s: float) -> dict:
        self.sim.run(until=until_s)
        self._nic(0)
        s = self.loop.summary(until_s)
        window = until_s - self.warmup_s
        return {"throughput_mbps": s["completions"] * self.payload * 8 / window / 1e6,
                "calls_per_s": s["throughput_per_s"], "response_us": s["mean_response_s"] / us,
                "nic_buffer_bytes": self.nic_area / window * self.p.buffer_bytes,
                "pci_busy": self.bus.busy_s / until_s}


@functools.lru_cache(maxsize=4096)
def _point(p: Params, impl: str, threads: int, payload: int, rng: int, quick: bool) -> dict:
    ticks = 12 if quick else 40
    until = max(ticks * p.tick_us * us, (400 if quick else 1500) * 1e-6 * max(1, threads))
    until = min(until, 0.25)
    tick = p.tick_us * us
    until = tick * math.ceil(until / tick)    # whole ticks measured: the polling thread works in batches
    bed = Testbed(p, impl, threads, payload=payload, warmup_s=tick * max(1, round(until / 5 / tick)), rng=rng)
    return bed.run(until)


def simulate(params: Params | None = None, impl: str = "IDP (full)", threads: int = 1, *, payload=None,
             rng=0, quick=False) -> dict:
    """One closed-loop run: throughput (Mbps of file data), calls/s, mean response (us), NIC buffer (bytes)."""
    p = params or Params()
    _check(impl, threads)
    seed = int(make_rng(rng).integers(2**31))
    return _point(p, impl, int(threads), p.payload_bytes if payload is None else int(payload), seed, bool(quick))


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: null RPC response time of one client thread (us). Columns: null_rpc_us."""
    p = params or Params()
    rows = {impl: simulate(p, impl, 1, payload=0, rng=rng, quick=quick)["response_us"] for impl in IMPLEMENTATIONS}
    return pd.DataFrame({"null_rpc_us": pd.Series(rows)}).rename_axis("implementation")


def figure4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 4: write throughput against client threads. Index (implementation, threads); columns
    throughput_mbps, response_us, buffer_bytes (Figure 5's accounting: 2048 B a thread) and
    nic_buffer_bytes (the simulated mean of requests held on the NIC, times 2048 B)."""
    p = params or Params()
    rows = []
    for impl in IMPLEMENTATIONS:
        for n in THREADS_QUICK if quick else THREADS:
            r = simulate(p, impl, n, rng=rng, quick=quick)
            rows.append({"implementation": impl, "threads": n, "throughput_mbps": r["throughput_mbps"],
                         "response_us": r["response_us"], "buffer_bytes": n * p.buffer_bytes,
                         "nic_buffer_bytes": r["nic_buffer_bytes"] if impl != "Sun RPC" else 0.0})
    return pd.DataFrame(rows).set_index(["implementation", "threads"])


def saturation(p: Params, impl: str, *, rng=0, quick=False) -> dict:
    """The closed loop's saturation point: R0 (one thread's write, us), X_max (Mbps) and N* = R0 X_max."""
    r0 = simulate(p, impl, 1, rng=rng, quick=quick)
    big = simulate(p, impl, SATURATING_THREADS, rng=rng, quick=quick)
    n_star = r0["response_us"] * us * big["calls_per_s"]
    return {"r0_us": r0["response_us"], "peak_mbps": big["throughput_mbps"], "n_star": n_star}


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2 (rebuilt from §4.3): peak throughput (Mbps), threads at peak (N* = R0 X_max), response at
    peak (us, simulated at round(N*) threads), buffer at peak (KiB). Index: implementation."""
    p = params or Params()
    rows = []
    for impl in IMPLEMENTATIONS:
        s = saturation(p, impl, rng=rng, quick=quick)
        n = max(1, round(s["n_star"]))
        at = simulate(p, impl, n, rng=rng, quick=quick)
        rows.append({"implementation": impl, "peak_mbps": s["peak_mbps"], "threads_at_peak": s["n_star"],
                     "response_at_peak_us": at["response_us"], "throughput_at_n_mbps": at["throughput_mbps"],
                     "unloaded_write_us": s["r0_us"], "buffer_at_peak_kib": s["n_star"] * p.buffer_bytes / 1024})
    return pd.DataFrame(rows).set_index("implementation")


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5a: ENP-2611 buffer space needed for a level of throughput. Index (implementation,
    throughput_mbps); columns threads (interpolated on Figure 4's sweep), buffer_kib (2048 B a thread),
    ratio_to_full (the partial offload's buffer over the full offload's at the same throughput)."""
    p = params or Params()
    f4 = figure4(p, rng=rng, quick=quick)
    rows = []
    for impl in IDP:
        c = f4.xs(impl)
        x = np.maximum.accumulate(c["throughput_mbps"].to_numpy())
        for level in LEVELS_MBPS:
            n = float(np.interp(level, x, c.index.to_numpy(dtype=float))) if level <= x[-1] else math.nan
            rows.append({"implementation": impl, "throughput_mbps": level, "threads": n,
                         "buffer_kib": n * p.buffer_bytes / 1024})
    df = pd.DataFrame(rows).set_index(["implementation", "throughput_mbps"])
    full = df.xs("IDP (full)")["buffer_kib"]
    df["ratio_to_full"] = [v / full.loc[lvl] for (_, lvl), v in df["buffer_kib"].items()]
    return df


# --- exact MVA of the same network (a cross-check of the engine's runs, and the notebook's knee) ---------
def mva_stations(p: Params, impl: str, payload: int | None = None) -> list:
    """The testbed as a product-form network: the bus (or the CPU) and the client machines as queues, all
    else as delays; the polling thread as a delay of half a tick (a frame arriving at a random moment)."""
    n = p.payload_bytes if payload is None else payload
    call = n + p.call_header_bytes
    client = call * 8 / p.client_bits_per_s
    wire = (call + p.reply_bytes + 2 * p.frame_overhead_bytes) * 8 / p.link_bits_per_s
    st = [Station("client", client / p.client_machines),
          Station("client_delay", client * (p.client_machines - 1) / p.client_machines, "delay")]
    fixed = p.client_fixed_us * us + wire
    if impl == "Sun RPC":
        st.append(Station("cpu", (p.sun_cpu_us + p.sun_copy_ns_per_byte * 1e-3 * n) * us))
        fixed += p.sun_host_latency_us * us
    else:
        pci = p.pci
        trips = [(p.done_bytes, p.done_bytes)] + ([(p.query_bytes, p.addresses_bytes)] if n else [])
        msgs = [m for t in trips for m in t]
        if impl == "IDP (partial)" and p.round_trip_on_pci:
            msgs += [p.header_bytes, p.verdict_bytes]
        bus = sum(pci.transfer_s(m, write=True) for m in msgs) + (pci.transfer_s(n, write=True) if n else 0.0)
        st.append(Station("pci", bus))
        rtt = sum(max(0.0, p.pci_rtt_us * us - pci.transfer_s(a, write=True) - pci.transfer_s(b, write=True))
                  for a, b in trips)
        fixed += rtt + (3 * p.nic_stage_us + p.checksum_ns_per_byte * 1e-3 * (call + p.reply_bytes)) * us
        if impl == "IDP (partial)":
            fixed += (p.tick_us / 2 + p.host_udp_us if p.host_udp == "tick" else p.wakeup_us + p.host_udp_us) * us
    st.append(Station("fixed", fixed, "delay"))
    return st


def mva_curve(params: Params | None = None, impl: str = "IDP (full)", threads=THREADS) -> pd.DataFrame:
    """Exact MVA (exponential service) of :func:`mva_stations` at each thread count: throughput_mbps, response_us."""
    p = params or Params()
    rows = []
    for n in threads:
        x, r, _ = mva_at(mva_stations(p, impl), int(n))
        rows.append({"threads": n, "throughput_mbps": x * p.payload_bytes * 8 / 1e6, "response_us": r / us})
    return pd.DataFrame(rows).set_index("threads")


# --- then vs now --------------------------------------------------------------------------------------
HANDOFF_DECLS = r"""
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <stdatomic.h>
static int efd_req, efd_rep;
static atomic_int flag;
static long nap_ns;
static int mode;  /* 0: eventfd wake-up; 1: poll a flag, sleep nap_ns between polls; 2: spin */
static void nap(void) { struct timespec t = {0, nap_ns}; nanosleep(&t, 0); }
static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        if (mode == 0) { uint64_t v; if (read(efd_req, &v, 8) != 8) return 0; v = 1; if (write(efd_rep, &v, 8) < 0) return 0; }
        else { while (atomic_load(&flag) != 1) { if (mode == 1) nap(); } atomic_store(&flag, 2); }
    }
    return 0;
}
static void handoff(void) {
    if (mode == 0) { uint64_t v = 1; if (write(efd_req, &v, 8) < 0) return; if (read(efd_rep, &v, 8) != 8) return; }
    else { atomic_store(&flag, 1); while (atomic_load(&flag) != 2) { } atomic_store(&flag, 0); }
}
"""
HANDOFF_SETUP = r"""
mode = {mode}; nap_ns = {nap_ns};
efd_req = eventfd(0, 0); efd_rep = eventfd(0, 0);
pthread_t th; pthread_create(&th, 0, worker, 0);
"""
HANDOFF_VARIANTS = {"poll, sleep a 1 ms tick": (1, 1_000_000), "poll, sleep 50 us": (1, 50_000),
                    "eventfd wake-up": (0, 0), "spin (busy poll)": (2, 0)}


@exclusive()
def measure_handoff(*, quick=False) -> pd.DataFrame:
    """Time a request handed to another thread and answered, for real, per variant (us per round trip):
    the partitioned stack's hop to its host thread. Through :func:`pysim.harness.runners.measure`."""
    rows = []
    for name, (mode, nap) in HANDOFF_VARIANTS.items():
        slow = mode == 1
        m = measure("c", "handoff();", name=name, decls=HANDOFF_DECLS,
                    setup=HANDOFF_SETUP.format(mode=mode, nap_ns=nap),
                    enough_s=(0.02 if quick else 0.1) if slow else (0.005 if quick else 0.02),
                    tries=3 if quick else 5, timeout_s=30.0)
        rows.append({"variant": name, "available": m.available, "round_trip_us": m.per_op_s / us,
                     "min_us": m.min_s / us, "note": m.reason})
    return pd.DataFrame(rows).set_index("variant")


CLOSED_LOOP_PROGRAM = r"""
import socket, sys, threading, time
service_s, delay_s, secs = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
counts = [int(a) for a in sys.argv[4:]]
def server(sock):
    while True:
        data, addr = sock.recvfrom(64)
        if data == b'q':
            return
        end = time.perf_counter() + service_s      # the bottleneck: one server thread, busy service_s
        while time.perf_counter() < end:
            pass
        sock.sendto(data, addr)
for n in counts:
    srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); srv.bind(('127.0.0.1', 0))
    th = threading.Thread(target=server, args=(srv,)); th.start()
    done, resp, stop = [0] * n, [0.0] * n, time.perf_counter() + secs
    def client(i):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5.0)
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            time.sleep(delay_s)                         # the injected delay: concurrent, a pure delay
            s.sendto(b'x', srv.getsockname()); s.recvfrom(64)
            resp[i] += time.perf_counter() - t0; done[i] += 1
    t0 = time.perf_counter()
    cs = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    [c.start() for c in cs]; [c.join() for c in cs]
    el = time.perf_counter() - t0
    srv.sendto(b'q', srv.getsockname()); th.join()
    print(n, sum(done) / el, sum(resp) / max(1, sum(done)), flush=True)
"""


@exclusive()
def measure_closed_loop(*, python: str, service_us: float = 500.0, delay_us: float = 4000.0,
                        threads=(1, 2, 4, 6, 8, 10, 12, 16), quick=False) -> pd.DataFrame:
    """N client threads against a loopback UDP server (one thread, busy ``service_us`` a call) with an
    injected pure delay of ``delay_us`` per call, for real; beside exact MVA of the same two stations."""
    secs = 0.25 if quick else 1.0
    res = run_command([python, "-c", CLOSED_LOOP_PROGRAM, service_us * us, delay_us * us, secs, *threads],
                      timeout_s=60.0 + 3 * secs * len(threads))
    rows = []
    for line in (res.stdout or "").splitlines() if res.available else []:
        n, x, r = line.split()
        xm, rm, _ = mva_at([Station("server", service_us * us), Station("delay", delay_us * us, "delay")], int(n))
        rows.append({"threads": int(n), "calls_per_s": float(x), "response_us": float(r) / us,
                     "littles_law_threads": float(x) * float(r), "mva_calls_per_s": xm, "mva_response_us": rm / us})
    df = pd.DataFrame(rows, columns=["threads", "calls_per_s", "response_us", "littles_law_threads",
                                     "mva_calls_per_s", "mva_response_us"]).set_index("threads")
    df.attrs["note"] = "" if res.available and rows else (res.reason or (res.stderr or "")[-300:])
    return df


def now_vs_then(handoff: pd.DataFrame, params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """The partial offload's null RPC in the 2005 model with the host hop at each measured handoff time of
    today (as an event-driven wake-up of that cost), beside the full offload's."""
    p = params or Params()
    rows = []
    full = table1(p, rng=rng, quick=quick).loc["IDP (full)", "null_rpc_us"]
    for variant, r in handoff.iterrows():
        if not r["available"] or not np.isfinite(r["round_trip_us"]):
            continue
        q = dataclasses.replace(p, host_udp="event", wakeup_us=max(0.0, float(r["round_trip_us"])))
        part = simulate(q, "IDP (partial)", 1, payload=0, rng=rng, quick=quick)["response_us"]
        rows.append({"handoff": variant, "handoff_us": r["round_trip_us"], "partial_null_rpc_us": part,
                     "ratio_to_full": part / full})
    return pd.DataFrame(rows).set_index("handoff") if rows else pd.DataFrame()
