"""ALTQ: a framework for alternate queueing on PC-UNIX routers (Cho, USENIX ATC 1998).

Regenerates Table 1 (TCP throughput through router B with FIFO and with CBQ
over ATM, 10baseT and 100baseT, and CBQ's CPU overhead over the software
loopback), Table 2 (UDP request/response round trips over ATM and 10baseT,
FIFO and CBQ), Table 3 (each discipline's per-packet latency overhead), the
timer ceilings of §3.2 and §4.3 (``ceilings``), Figures 8-10 (a TCP flow in
a CBQ class allocated 5% to 95% of the link, and 100% borrowing from the
root) and Figure 11 (four rate-limited classes and a background flow over
ATM, sampled every 400 ms).

First principles, on the lab's packet network in C (:mod:`pysim.network`;
its CBQ, RED and SFQ are the disciplines, nothing is reimplemented here):
the testbed of Figure 6 (:class:`Testbed`): host A, 155 Mbit/s ATM to
router B, and B's interface to host C (ATM, 10baseT through a hub: CSMA/CD
between B's and C's stations, 100baseT full duplex, or a 128 Kbit/s HDLC
line). ALTQ's per-packet work is a stage on B's way to that interface: a
node whose CPU spends the discipline's cost on every packet before it
enters the queue, so it overlaps the transmission of the previous packet
(§4.2), unless the counterfactual ``no-overlap`` makes the link wait for it.
TCP Reno with delayed ACKs and a 64 KB window (netperf TCP_STREAM); UDP
request/response with one transaction outstanding (netperf UDP_RR). CBQ's
estimator, maxburst of 16 and suspension until the kernel timer's next
event, with §3.2's minimum of two ticks (10 ms ticks, or 1 ms in the
modified kernel of §4.3).

Calibrated, each on one published cell (see CALIBRATION): the end hosts'
per-packet and per-byte cost of a request/response transaction (Table 2's
ATM FIFO rows of 1024 and 8192 bytes, the only ATM rows whose sizes are
printed), and the loopback's per-segment and per-byte CPU (Table 1's CBQ
overheads at MTUs 1500 and 9180). Taken as given: Table 3's per-packet cost
of each discipline (so Table 3 and Table 2's CBQ-FIFO difference are inputs,
not predictions). Everything else is predicted: Table 1's link throughputs
and overheads, the loopback at MTU 16384, Table 2's other FIFO rows and its
CBQ row, the ceilings, and the shapes of Figures 8-11 (judged by claims).

Then vs now (:func:`measure_now`, :func:`then_and_now`): in an unprivileged
user and network namespace (probed, never assumed), Linux's HTB (CBQ's
successor) on a 100 Mbit/s loopback with a class at 5-95% of it, TCP
throughput through it; the per-packet cost of pfifo, TBF and HTB against no
qdisc; the clock read against microtime()'s 450 ns; the shortest sleep, and
the ceiling a timer-driven pacer of §3.2 reaches with it.

Not reproduced: Figure 7 (its axis values are lost in the text), Figures
14-15 (the leaf shares and the on/off schedule of Figures 12-13 are lost),
and the diagrams and code of Figures 1-6, 12, 13. See
papers/atc98_cho/paper.yaml.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.harness.commands import run_command
from pysim.hw import catalog
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.network import Network, queues
from pysim.network.queues import CbqClass
from pysim.params import ModelParams, assumed, calibrated, derived, from_catalog, given, stated
from pysim.rng import make_rng
from pysim.units import us
from pysim.harness.exclusive import exclusive

PPRO = catalog.PENTIUM_PRO_200

LINK_TYPES = ("ATM", "10baseT", "100baseT", "128K serial")
DISCIPLINES = ("FIFO", "FIFOQ", "RED", "WFQ", "CBQ", "CBQ+RED")
#: Table 2's transactions: (link, request bytes, response bytes), in the paper's order.
TRANSACTIONS = (("ATM", 1, 1), ("ATM", 64, 64), ("ATM", 1024, 64), ("ATM", 8192, 64),
                ("10baseT", 1, 1), ("10baseT", 64, 64), ("10baseT", 1024, 64))
LOOPBACK_MTUS = (16384, 9180, 1500)
UDP_IP_HEADER = 28  # bytes of IP and UDP header on a request or response
TCP_IP_HEADER = 40
SETTINGS_PCT = tuple(range(5, 100, 5)) + (100,)


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds or nanoseconds on the Pentium Pro 200, rates in bit/s."""

    clock_hz: float = from_catalog(PPRO, "clock_hz")
    # the links (§4.1, §3.2)
    atm_bps: float = derived(149.76e6, "OC-3c: 155.52 Mbit/s less SONET overhead leaves 149.76 Mbit/s for "
                                       "cells; the link kind 'atm' adds the cells' headers and AAL5")
    atm_mtu: int = stated(9180, "§3.2: ATM with a 9180-byte MTU")
    ether_mtu: int = stated(1500, "§3.2: 10baseT with a 1500-byte MTU")
    serial_bps: float = stated(128e3, "§4.1: a 128K serial line")
    serial_mtu: int = assumed(1500, "the RISCom/N2's HDLC interface; BSD's default MTU for a serial line")
    wire_delay_us: float = assumed(5.0, "a lab's cables and hub: about a microsecond of propagation, "
                                        "plus the NICs' latency")
    ifq_packets: int = assumed(50, "4.4BSD's IFQ_MAXLEN, the interface queue's length; CBQ's class queues "
                                   "the same", ge=2)
    # TCP (netperf TCP_STREAM, §4.1)
    window_bytes: int = assumed(65535, "§4.1: 'a suitable window size should be selected carefully'; the "
                                       "largest window without RFC 1323 scaling", ge=1460)
    delayed_ack: bool = assumed(True, "BSD TCP acknowledges every second segment")
    stream_packet_us: float = assumed(15.0, "an end host's TCP/IP and driver work per segment when streaming: "
                                            "some 3000 cycles at 200 MHz")
    stream_byte_ns: float = assumed(20.0, "an end host's copy and checksum per byte when streaming, "
                                          "about 50 MB/s on a 440FX Pentium Pro")
    forward_us: float = assumed(20.0, "router B's ip_forward and two drivers per packet; only the sum with "
                                      "the end hosts' cost reaches Table 2, so it sets no cell")
    # request/response (netperf UDP_RR, §4.2)
    rr_host_us: float = calibrated(73.38534, "an end host's per-packet cost of a transaction: the system call, "
                                            "the process wake-up, UDP/IP and the driver")
    rr_byte_ns: float = calibrated(57.52972, "an end host's per-byte latency of a transaction: copy, checksum "
                                           "and the NIC's DMA of the whole packet")
    # the disciplines' per-packet cost (Table 3: RTT difference from the original FIFO)
    fifoq_us: float = given(0.14, "Table 3, FIFOQ")
    red_us: float = given(1.62, "Table 3, RED")
    wfq_us: float = given(1.95, "Table 3, WFQ")
    cbq_us: float = given(10.72, "Table 3, CBQ")
    cbq_red_us: float = given(11.97, "Table 3, CBQ+RED")
    # CBQ (§3.1, §3.2, §4.3)
    maxburst: int = stated(16, "§3.2: maxburst is 16 (default)", ge=1)
    tick_ms: float = stated(10.0, "§3.2: most UNIX systems use 10 msec timer granularity")
    fast_tick_ms: float = stated(1.0, "§4.3: the kernel whose timer granularity is modified from 10ms to 1ms")
    min_ticks: int = stated(2, "§3.2: CBQ uses 20 msec as the minimum timer (two 10 ms ticks)", ge=1)
    gain_shift: int = assumed(5, "the estimator's EWMA gain 2**-5 of LBNL CBQ 2.0 and ALTQ", ge=1, le=16)
    table_share: float = assumed(0.95, "Tables 1-2's 'small CBQ configuration with three classes': the "
                                       "netperf traffic in a class of most of the link, borrowing", gt=0, le=1)
    # the loopback (Table 1's lower rows): one CPU runs sender, receiver and lo0
    lo_segment_us: float = calibrated(25.30798, "the loopback's CPU per TCP segment (both ends, lo0, the "
                                             "share of an ACK)")
    lo_byte_ns: float = calibrated(20.32064, "the loopback's CPU per byte: copy in, checksum twice, copy out")
    acks_per_segment: float = assumed(0.5, "delayed ACKs: one ACK, which also passes lo0's queue and CBQ, "
                                           "every second segment", ge=0, le=1)
    # Figure 11 (§4.4)
    guarantee_mbps: tuple = stated((10.0, 20.0, 30.0, 40.0), "§4.4: four classes of 10, 20, 30 and 40 Mbps")
    guarantee_first_s: float = assumed(5.0, "§4.4: the flows 'start 5 seconds apart'; the first at 5 s, "
                                            "as Figure 11's axis (0-50 s) suggests")
    guarantee_gap_s: float = stated(5.0, "§4.4: start 5 seconds apart")
    guarantee_on_s: float = stated(20.0, "§4.4: four 20-second-long TCP flows")
    probe_s: float = stated(0.4, "§4.4: cbqprobe reads the statistics every 400 msec")
    # the mechanisms (switches, so a counterfactual is a change of parameters)
    overlap: bool = stated(True, "§4.2: CBQ packet processing can overlap the sending time of the "
                                 "previous packet")
    cbq_enabled: bool = stated(True, "§4.3: the class is regulated by CBQ at host B")
    shared_10baset: bool = stated(True, "§4.1: when 10baseT is used, a dumb hub is inserted")

    def __post_init__(self):
        super().__post_init__()
        if len(self.guarantee_mbps) != 4 or not all(r > 0 for r in self.guarantee_mbps):
            raise ValueError(f"guarantee_mbps must be four rates > 0, got {self.guarantee_mbps!r}")
        if sum(self.guarantee_mbps) * 1e6 >= self.atm_bps:
            raise ValueError(f"guarantee_mbps must sum below the ATM link ({self.atm_bps / 1e6} Mbit/s), "
                             f"got {sum(self.guarantee_mbps)}")


CALIBRATION = (
    Fit("rr_host_us", "table2", "ATM FIFO 1024,64", "rtt_us", (1.0, 300.0)),
    Fit("rr_byte_ns", "table2", "ATM FIFO 8192,64", "rtt_us", (1.0, 200.0)),
    Fit("lo_segment_us", "table1", "loopback MTU 1500", "overhead_pct", (1.0, 200.0)),
    Fit("lo_byte_ns", "table1", "loopback MTU 9180", "overhead_pct", (1.0, 100.0)),
)
INPUTS = (
    Inputs(("fifoq_us", "red_us", "wfq_us", "cbq_us", "cbq_red_us"),
           cells("table3", ["FIFOQ", "RED", "WFQ", "CBQ", "CBQ+RED"], ["overhead_us"]),
           "Table 3's costs are the disciplines' per-packet work the model takes as given; with one "
           "transaction outstanding they add to the round trip unchanged"),
    Inputs((), cells("table3", ["FIFO"], ["overhead_us"]), "the baseline: the original FIFO less itself"),
    Inputs(("cbq_us",), cells("table2", ["ATM CBQ 64,64"], ["diff_us"]),
           "CBQ's round trip less FIFO's is the given per-packet cost of CBQ"),
)
COUNTERFACTUALS = (
    Counterfactual("no-overlap", {"overlap": False},
                   "the driver asks the discipline for the next packet only once the previous one has left "
                   "the wire, so the link idles while CBQ works"),
    Counterfactual("exact-timer", {"tick_ms": 0.001, "fast_tick_ms": 0.001},
                   "a kernel timer of a microsecond: a suspended class resumes when its estimator allows"),
    Counterfactual("stock-kernel", {"fast_tick_ms": 10.0},
                   "the modified kernel of §4.3 not installed: its 'fast' timer ticks every 10 ms too"),
    Counterfactual("large-maxburst", {"maxburst": 160},
                   "maxburst ten times the default, which §3.2 calls problematic"),
    Counterfactual("no-cbq", {"cbq_enabled": False},
                   "router B's interface keeps its FIFO: nothing regulates the classes"),
    Counterfactual("switched-10baset", {"shared_10baset": False},
                   "10baseT through a switch in full duplex instead of a hub: data and ACKs never collide"),
)


# --- the testbed of Figure 6 ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LinkType:
    """Host B's interface to host C."""

    name: str
    kind: str       # a pysim.network link kind
    bits_per_s: float
    mtu: int
    shared: bool    # a half-duplex segment through a hub


def link_type(p: Params, name: str) -> LinkType:
    if name not in LINK_TYPES:
        raise ValueError(f"link must be one of {LINK_TYPES}, got {name!r}")
    return {"ATM": LinkType("ATM", "atm", p.atm_bps, p.atm_mtu, False),
            "10baseT": LinkType("10baseT", "ethernet", 10e6, p.ether_mtu, p.shared_10baset),
            "100baseT": LinkType("100baseT", "ethernet", 100e6, p.ether_mtu, False),
            "128K serial": LinkType("128K serial", "hdlc", p.serial_bps, p.serial_mtu, False)}[name]


def discipline_cost_us(p: Params, name: str) -> float:
    """Per-packet work of a discipline beyond the original FIFO's macros (Table 3)."""
    if name not in DISCIPLINES:
        raise ValueError(f"discipline must be one of {DISCIPLINES}, got {name!r}")
    return {"FIFO": 0.0, "FIFOQ": p.fifoq_us, "RED": p.red_us, "WFQ": p.wfq_us, "CBQ": p.cbq_us,
            "CBQ+RED": p.cbq_red_us}[name]


def timer_s(p: Params, fast: bool = False) -> float:
    """The interval at which a suspended CBQ class is woken without packet events: the minimum timer.

    ALTQ sets a suspended class's timeout to two ticks at least; a class that sent its burst right after
    a tick is woken two ticks later, so in steady state it runs on a grid of ``min_ticks`` ticks."""
    return p.min_ticks * (p.fast_tick_ms if fast else p.tick_ms) * 1e-3


@dataclass(frozen=True)
class Allocation:
    """A CBQ class for the test traffic: its share of B's link, and whether it may borrow."""

    share: float
    borrow: bool = False
    fast_timer: bool = False


class Testbed:
    """Hosts A (source), B (router, and a second source) and C (sink) of Figure 6.

    A-B is 155 Mbit/s ATM; B reaches C over ``link``. B's packets for C pass an ALTQ stage (a node whose
    CPU does the discipline's per-packet work) and then the interface's queue: ``discipline`` (Tables 1-3)
    or a CBQ tree (``classes``, for Figures 8-11). The flows' class numbers index ``classes``."""

    def __init__(self, p: Params, link: str, *, discipline: str = "FIFO", classes=None, fast_timer=False,
                 host_packet_us: float = 0.0, host_byte_ns: float = 0.0, rng=0):
        self.p, self.link = p, link_type(p, link)
        lt, d = self.link, p.wire_delay_us * us
        cost = discipline_cost_us(p, discipline) if classes is None else p.cbq_us
        if not p.cbq_enabled:
            classes, cost = None, 0.0
            discipline = "FIFO"
        self.net = net = Network(rng=rng)
        self.a = net.host("A", cpu_packet_s=host_packet_us * us, cpu_byte_s=host_byte_ns * 1e-9)
        self.b = net.router("B", cpu_packet_s=p.forward_us * us)
        self.altq = net.router("B: ALTQ", cpu_packet_s=cost * us if p.overlap else 0.0)
        self.c = net.host("C", cpu_packet_s=host_packet_us * us, cpu_byte_s=host_byte_ns * 1e-9)
        fifo = queues.fifo(p.ifq_packets)
        net.link(self.a, self.b, p.atm_bps, d, kind="atm", queue=fifo, mtu=p.atm_mtu)
        net.one_way(self.b, self.altq, 1e12, 0.0, queue=queues.fifo(None))  # B's CPU to its interface
        queue = self._queue(discipline, classes, fast_timer)
        # without overlap the link is held for the discipline's work on every packet it sends
        hold = 0 if p.overlap else math.ceil(cost * us * lt.bits_per_s / 8)
        if lt.shared:  # B's and C's stations contend on the hub; the hub repeats at once
            hub = net.router("hub")
            self.out, self.back = net.shared_segment([self.altq, self.c], hub, lt.bits_per_s, d, kind=lt.kind,
                                                     queue=queue)
            net.one_way(hub, self.c, 1e12, 0.0, queue=queues.fifo(None))
            net.one_way(hub, self.b, 1e12, 0.0, queue=queues.fifo(None))
        else:
            self.out = net.one_way(self.altq, self.c, lt.bits_per_s, d, kind=lt.kind, queue=queue, mtu=lt.mtu,
                                   extra_bytes=hold)
            self.back = net.one_way(self.c, self.b, lt.bits_per_s, d, kind=lt.kind, queue=fifo, mtu=lt.mtu)
        net.route_shortest()

    def _queue(self, discipline, classes, fast_timer):
        p, lt = self.p, self.link
        if classes is not None:
            return queues.cbq(classes, timer_s=timer_s(p, fast_timer), gain_shift=p.gain_shift,
                              mean_pkt_bytes=lt.mtu, limit_packets=None)
        if discipline in ("FIFO", "FIFOQ"):
            return queues.fifo(p.ifq_packets)
        if discipline == "RED":
            return queues.red(limit_packets=p.ifq_packets, mean_pkt_bytes=lt.mtu)
        if discipline == "WFQ":  # ALTQ's WFQ is stochastic fairness queueing (§3.1)
            return queues.sfq(limit_packets=p.ifq_packets)
        # CBQ (CBQ+RED: the class queue's RED decisions are in its cost; the lab's CBQ queues are FIFO)
        return queues.cbq(self.table_classes(), timer_s=timer_s(p), gain_shift=p.gain_shift,
                          mean_pkt_bytes=lt.mtu, limit_packets=None)

    def table_classes(self):
        """Tables 1-2's three classes: the root, a control class, and the default class for netperf."""
        p = self.p
        return [CbqClass(1.0, parent=-1), CbqClass(1 - p.table_share, borrow=True, maxburst=p.maxburst,
                                                   limit_packets=p.ifq_packets),
                CbqClass(p.table_share, borrow=True, maxburst=p.maxburst, limit_packets=p.ifq_packets)]

    def tcp(self, src=None, *, bytes=-1, start_s=0.0, cls=2) -> int:  # noqa: A002
        mss = min(self.p.atm_mtu, self.link.mtu) - TCP_IP_HEADER
        return self.net.tcp(self.a if src is None else src, self.c, bytes=bytes, start_s=start_s, mss=mss,
                            max_window=max(1.0, self.p.window_bytes / mss), delayed_ack=self.p.delayed_ack,
                            cls=cls)

    def rr(self, request: int, response: int) -> int:
        return self.net.udp(self.a, self.c, pattern="rpc", size=request + UDP_IP_HEADER,
                            reply_size=response + UDP_IP_HEADER, outstanding=1, cls=2)


def allocation_classes(p: Params, alloc: Allocation, mtu: int) -> list:
    """Figures 8-10: the root, the test class (class 1) and the default class."""
    test = CbqClass(0.95 if alloc.borrow else alloc.share, borrow=alloc.borrow, maxburst=p.maxburst,
                    limit_packets=p.ifq_packets)
    return [CbqClass(1.0, parent=-1), test,
            CbqClass(0.05 if alloc.borrow else max(0.01, 1 - alloc.share), borrow=True, maxburst=p.maxburst,
                     limit_packets=p.ifq_packets)]


def tcp_mbps(p: Params, link: str, *, discipline="FIFO", alloc: Allocation | None = None, until_s: float,
              rng=0) -> float:
    """Goodput (Mbit/s) of one netperf TCP stream from A to C, after a warm-up of a fifth of the run."""
    classes = None if alloc is None else allocation_classes(p, alloc, link_type(p, link).mtu)
    tb = Testbed(p, link, discipline=discipline, classes=classes,
                 fast_timer=alloc is not None and alloc.fast_timer, host_packet_us=p.stream_packet_us,
                 host_byte_ns=p.stream_byte_ns, rng=rng)
    f = tb.tcp(cls=1 if alloc is not None else 2)
    warm = until_s / 5
    tb.net.run(warm)
    before = tb.net.flows().loc[f, "delivered_bytes"]
    tb.net.run(until_s)
    return 8 * (tb.net.flows().loc[f, "delivered_bytes"] - before) / (until_s - warm) / 1e6


def _run_s(link: str, quick: bool) -> float:
    """Simulated seconds of a TCP run: enough packets for a steady state on every link."""
    base = {"ATM": 4.0, "10baseT": 8.0, "100baseT": 4.0, "128K serial": 60.0}[link]
    return base / 4 if quick else base


# --- Table 1 -------------------------------------------------------------------------------------------

def loopback_segment_us(p: Params, mtu: int, discipline: str = "FIFO") -> float:
    """CPU time per TCP segment over lo0 with one CPU doing all the work; CBQ adds its cost for the
    segment and for its share of an ACK, both of which pass lo0's queue."""
    mss = mtu - TCP_IP_HEADER
    cost = p.lo_segment_us + p.lo_byte_ns * 1e-3 * mss
    return cost + (1 + p.acks_per_segment) * discipline_cost_us(p, discipline)


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: TCP throughput (Mbit/s) with the original FIFO and with CBQ, and CBQ's overhead (%).
    Columns: fifo_mbps, cbq_mbps, overhead_pct. Links by simulation; the loopback rows from its CPU."""
    p = params or Params()
    gen = make_rng(rng)
    rows = {}
    for link in ("ATM", "10baseT", "100baseT"):
        seed = int(gen.integers(2**31))
        fifo = tcp_mbps(p, link, until_s=_run_s(link, quick), rng=seed)
        cbq = tcp_mbps(p, link, discipline="CBQ", until_s=_run_s(link, quick), rng=seed)
        rows[link] = (fifo, cbq)
    for mtu in LOOPBACK_MTUS:
        bits = 8 * (mtu - TCP_IP_HEADER)
        rows[f"loopback MTU {mtu}"] = (bits / loopback_segment_us(p, mtu), bits / loopback_segment_us(p, mtu, "CBQ"))
    df = pd.DataFrame.from_dict(rows, orient="index", columns=["fifo_mbps", "cbq_mbps"])
    df["overhead_pct"] = 100 * (df["fifo_mbps"] - df["cbq_mbps"]) / df["fifo_mbps"]
    return df.rename_axis("link")


# --- Table 2 and Table 3 -------------------------------------------------------------------------------

def rr_rtt_us(p: Params, link: str, request: int, response: int, discipline: str = "FIFO", *,
              until_s: float = 0.5, rng=0) -> float:
    """Mean round trip (us) of netperf's UDP request/response between A and C through B."""
    tb = Testbed(p, link, discipline=discipline, host_packet_us=p.rr_host_us, host_byte_ns=p.rr_byte_ns,
                 rng=rng)
    f = tb.rr(request, response)
    tb.net.run(until_s)
    fl = tb.net.flows().loc[f]
    if fl["completed"] < 2:
        raise ValueError(f"until_s must allow two transactions, got {until_s}")
    return 1e6 * (fl["last_s"] - fl["first_s"]) / (fl["completed"] - 1)  # from the first reply to the last


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: request/response transactions per second, the round trip (us) = 10^6 / transactions,
    and CBQ's round trip less FIFO's (us). Rows '<link> <queue> <request>,<response>'.
    Columns: trans_per_s, rtt_us, diff_us."""
    p = params or Params()
    until = 0.05 if quick else 0.2
    rows = {}
    for link, req, resp in TRANSACTIONS:
        fifo = rr_rtt_us(p, link, req, resp, until_s=until, rng=rng)
        cbq = rr_rtt_us(p, link, req, resp, "CBQ", until_s=until, rng=rng)
        rows[f"{link} FIFO {req},{resp}"] = (1e6 / fifo, fifo, np.nan)
        rows[f"{link} CBQ {req},{resp}"] = (1e6 / cbq, cbq, cbq - fifo)
    return pd.DataFrame.from_dict(rows, orient="index", columns=["trans_per_s", "rtt_us", "diff_us"]) \
        .rename_axis("transaction")


def table3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 3: each discipline's round trip less the original FIFO's (us), ATM, 64-byte request and
    response. Columns: overhead_us."""
    p = params or Params()
    until = 0.05 if quick else 0.2
    base = rr_rtt_us(p, "ATM", 64, 64, until_s=until, rng=rng)
    rows = {d: rr_rtt_us(p, "ATM", 64, 64, d, until_s=until, rng=rng) - base for d in DISCIPLINES}
    return pd.DataFrame({"overhead_us": pd.Series(rows)}).rename_axis("discipline")


# --- the timer ceilings (§3.2, §4.3) ----------------------------------------------------------------------

def ceiling_mbps(p: Params, packet_bytes: int, *, fast_timer: bool = False, until_s: float = 2.0,
                 rng=0) -> float:
    """§3.2's worst case: a class allowed half of a fast link, flooded with ``packet_bytes`` packets so that
    its queue stays full and only the timer resumes it. The class's rate in Mbit/s of packets."""
    net = Network(rng=rng)
    a, b, c = net.host("src"), net.router("router"), net.host("sink")
    link_bps = 1e9
    net.link(a, b, 10 * link_bps, 0.0, queue=queues.fifo(1000))
    classes = [CbqClass(1.0, parent=-1), CbqClass(0.5, borrow=False, maxburst=p.maxburst),
               CbqClass(0.01, borrow=True, maxburst=p.maxburst)]
    out, _ = net.link(b, c, link_bps, p.wire_delay_us * us,
                      queue=queues.cbq(classes, timer_s=timer_s(p, fast_timer), gain_shift=p.gain_shift,
                                       mean_pkt_bytes=packet_bytes, limit_packets=p.ifq_packets))
    net.route_shortest()
    net.udp(a, c, rate_pps=2 * link_bps / 8 / packet_bytes, size=packet_bytes, cls=1)
    warm = until_s / 4
    net.run(warm)
    before = net.class_stats(out, 3).loc[1, "bytes"]
    net.run(until_s)
    return 8 * (net.class_stats(out, 3).loc[1, "bytes"] - before) / (until_s - warm) / 1e6


def ceilings(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.2 and §4.3: the rate a class reaches when only the kernel timer resumes it (Mbit/s), for the
    Ethernet MTU and the ATM MTU with 10 ms ticks, and the Ethernet MTU with 1 ms ticks.
    Columns: ceiling_mbps, link_mbps (the link it limits)."""
    p = params or Params()
    until = 0.6 if quick else 2.0
    rows = {"1500-byte packets, 10 ms timer": (ceiling_mbps(p, p.ether_mtu, until_s=until, rng=rng), 100.0),
            "9180-byte packets, 10 ms timer": (ceiling_mbps(p, p.atm_mtu, until_s=until, rng=rng),
                                               p.atm_bps / 1e6),
            "1500-byte packets, 1 ms timer": (ceiling_mbps(p, p.ether_mtu, fast_timer=True, until_s=until,
                                                           rng=rng), 100.0)}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["ceiling_mbps", "link_mbps"]).rename_axis("case")


# --- Figures 8-10: bandwidth allocation --------------------------------------------------------------------

def _settings(quick: bool) -> tuple:
    return tuple(s for s in SETTINGS_PCT if s % 10 == 0 or s in (5, 15, 55, 85, 95)) if quick else SETTINGS_PCT


def _allocation(p: Params, link: str, settings, *, fast_timer=False, quick=False, rng=0) -> list:
    out = []
    for s in settings:
        alloc = Allocation(min(s, 100) / 100, borrow=s >= 100, fast_timer=fast_timer)
        out.append(tcp_mbps(p, link, alloc=alloc, until_s=_run_s(link, quick), rng=rng))
    return out


def figure8(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 8: TCP throughput (Mbit/s) of a class allocated a share of the link (100: borrowing from
    the root). Columns: atm_mbps, fast_ethernet_mbps (10 ms timer), fast_ethernet_1khz_mbps."""
    p = params or Params()
    s = _settings(quick)
    return pd.DataFrame({"atm_mbps": _allocation(p, "ATM", s, quick=quick, rng=rng),
                         "fast_ethernet_mbps": _allocation(p, "100baseT", s, quick=quick, rng=rng),
                         "fast_ethernet_1khz_mbps": _allocation(p, "100baseT", s, fast_timer=True, quick=quick,
                                                                rng=rng)},
                        index=pd.Index(s, name="setting_pct"))


def figure9(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 9: the same over 10baseT through a hub. Columns: ethernet_mbps."""
    p = params or Params()
    s = _settings(quick)
    return pd.DataFrame({"ethernet_mbps": _allocation(p, "10baseT", s, quick=quick, rng=rng)},
                        index=pd.Index(s, name="setting_pct"))


def figure10(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 10: the same over the 128K serial line. Columns: serial_kbps."""
    p = params or Params()
    s = _settings(quick)
    return pd.DataFrame({"serial_kbps": [1e3 * x for x in _allocation(p, "128K serial", s, quick=quick, rng=rng)]},
                        index=pd.Index(s, name="setting_pct"))


# --- Figure 11: bandwidth guarantee ---------------------------------------------------------------------

def figure11(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 11: throughput (Mbit/s) of each class every probe interval over ATM: four classes held to
    their rates, each with a TCP flow of 20 s starting 5 s apart (class-0 and class-2 sent from B), and
    a background flow in the default class throughout. Columns: default, class_0 .. class_3."""
    p = params or Params()
    rates = [r * 1e6 for r in p.guarantee_mbps]
    free = 1 - sum(rates) / p.atm_bps
    classes = [CbqClass(1.0, parent=-1)] + \
              [CbqClass(r / p.atm_bps, borrow=False, maxburst=p.maxburst, limit_packets=p.ifq_packets)
               for r in rates] + \
              [CbqClass(free, borrow=True, maxburst=p.maxburst, limit_packets=p.ifq_packets)]
    tb = Testbed(p, "ATM", classes=classes, host_packet_us=p.stream_packet_us, host_byte_ns=p.stream_byte_ns,
                 rng=rng)
    for k, r in enumerate(rates):
        start = p.guarantee_first_s + k * p.guarantee_gap_s
        # a flow of 20 s at its class's rate: its bytes, so it stops when its time is up
        tb.tcp(tb.b if k in (0, 2) else tb.a, bytes=int(r / 8 * p.guarantee_on_s), start_s=start, cls=k + 1)
    tb.tcp(cls=len(classes) - 1)
    end = p.guarantee_first_s + 3 * p.guarantee_gap_s + p.guarantee_on_s + p.guarantee_first_s
    step = p.probe_s * (5 if quick else 1)
    times = np.arange(step, end + step / 2, step)
    rows, last = [], np.zeros(len(classes))
    for t in times:
        tb.net.run(float(t))
        sent = tb.net.class_stats(tb.out, len(classes))["bytes"].to_numpy(dtype=float)
        rows.append(8 * (sent - last) / step / 1e6)
        last = sent
    cols = ["root"] + [f"class_{k}" for k in range(4)] + ["default"]
    df = pd.DataFrame(rows, columns=cols, index=pd.Index(np.round(times, 3), name="time_s"))
    return df[["default"] + [f"class_{k}" for k in range(4)]]


# --- then vs now -----------------------------------------------------------------------------------------

#: The experiment on this machine, a stdlib-only Python program read from stdin. It prints one result a line:
#: ``<what> <key> <value>`` (``note`` lines carry text).
NOW_SCRIPT = r"""
import socket, subprocess, sys, threading, time

cfg = dict(a.split("=", 1) for a in sys.argv[1:])
floats = lambda k: [float(x) for x in cfg[k].split(",")]

def say(*words):
    print(*words, flush=True)

def sh(cmd):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    return r.returncode == 0, " ".join((r.stderr or r.stdout).split())[:200]

ok, why = sh("ip link set lo up && ip link set lo mtu 1500") if cfg["namespace"] == "1" else (False, "no namespace")
say("namespace", "lo", int(ok))
if not ok:
    say("note", "namespace", why)

def qdisc(kind, rate_mbit=None):
    sh("tc qdisc del dev lo root")
    if kind == "none":
        return True, ""
    if kind == "pfifo":
        return sh("tc qdisc add dev lo root pfifo limit 1000")
    if kind == "tbf":
        return sh("tc qdisc add dev lo root tbf rate 100gbit burst 1mb latency 10ms")
    rate = rate_mbit or 100000
    return sh("tc qdisc add dev lo root handle 1: htb default 10 r2q 1000 && "
              "tc class add dev lo parent 1: classid 1:1 htb rate %smbit && "
              "tc class add dev lo parent 1:1 classid 1:10 htb rate %smbit ceil %smbit"
              % (cfg["link_mbit"], rate, rate))

def tcp_mbps(seconds):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0)); srv.listen(1)
    got = [0]
    def sink():
        c, _ = srv.accept()
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            got[0] += len(b)
        c.close()
    t = threading.Thread(target=sink); t.start()
    s = socket.create_connection(srv.getsockname())
    buf = b"x" * 65536
    t0 = time.perf_counter(); base = None
    while True:
        now = time.perf_counter()
        if base is None and now - t0 >= seconds / 5:
            base, tb = got[0], now
        if now - t0 >= seconds:
            break
        s.sendall(buf)
    n, end = got[0] - base, time.perf_counter()
    s.close(); t.join(); srv.close()
    return 8 * n / (end - tb) / 1e6

def send_ns(chunks):
    # the fastest of many short chunks of sendto(), the receiver drained between chunks so that its
    # buffer never fills: the send path through the qdisc and into the socket, less the machine's noise
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); rx.bind(("127.0.0.1", 0)); rx.setblocking(False)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dst, msg, best = rx.getsockname(), b"y" * 64, float("inf")
    for _ in range(chunks):
        t0 = time.perf_counter_ns()
        for _ in range(200):
            tx.sendto(msg, dst)
        best = min(best, (time.perf_counter_ns() - t0) / 200)
        try:
            while True:
                rx.recv(2048)
        except BlockingIOError:
            pass
    rx.close(); tx.close()
    return best

if ok:  # Figure 8 today: an HTB class at a share of a 100 Mbit/s parent, a TCP stream through it
    for pct in floats("settings"):
        good, why = qdisc("htb", float(cfg["link_mbit"]) * pct / 100)
        if not good:
            say("note", "htb", why); break
        say("alloc", pct, tcp_mbps(float(cfg["seconds"])))
    for r in range(int(cfg["rounds"])):  # Table 3 today: the send path per datagram, interleaved rounds
        for k in cfg["qdiscs"].split(","):
            good, why = qdisc(k)
            if good:
                say("send_ns", k, send_ns(int(cfg["chunks"])))
            elif r == 0:
                say("note", k, why)
    sh("tc qdisc del dev lo root")

n = 200000  # the clock read, less the empty loop
t0 = time.perf_counter_ns()
for _ in range(n):
    time.clock_gettime_ns(time.CLOCK_MONOTONIC)
t1 = time.perf_counter_ns()
for _ in range(n):
    pass
say("clock_ns", "monotonic", ((t1 - t0) - (time.perf_counter_ns() - t1)) / n)
for req in floats("sleeps_s"):  # the shortest sleep: the timer today
    vals = []
    for _ in range(int(cfg["sleep_reps"])):
        a = time.perf_counter(); time.sleep(req); vals.append(time.perf_counter() - a)
    say("sleep_s", req, sorted(vals)[len(vals) // 2])

# a user-space CBQ pacer of section 3.2: maxburst datagrams, then suspended for min_ticks ticks
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); rx.bind(("127.0.0.1", 0))
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
size = int(cfg["packet_bytes"]); payload = b"z" * (size - 28)
for tick in floats("ticks_s"):
    sent, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < float(cfg["pacer_s"]):
        for _ in range(int(cfg["maxburst"])):
            tx.sendto(payload, rx.getsockname()); sent += 1
        try:
            while True:
                rx.recv(65536, socket.MSG_DONTWAIT)
        except BlockingIOError:
            pass
        time.sleep(int(cfg["min_ticks"]) * tick)
    say("pacer_mbps", tick, 8 * sent * size / (time.perf_counter() - t0) / 1e6)
"""


@exclusive()
def measure_now(*, quick: bool = False, python: str = "python3", rng=0) -> pd.DataFrame:
    """Run the then-vs-now experiments on this machine with ``python`` (stdlib only). HTB and the
    qdiscs' costs need an unprivileged user and network namespace (``unshare -rn``) and ``tc``; where
    they are missing those parts are skipped and the notes say why. Returns one row per measurement:
    what, key, value (notes in ``attrs['notes']``). ``rng`` is unused: the measurements are real."""
    p = Params()
    cfg = {"link_mbit": 100, "settings": "5,30,55,95" if quick else "5,15,25,35,45,55,75,95",
           "seconds": 0.3 if quick else 1.5, "qdiscs": "none,pfifo,tbf,htb", "rounds": 3 if quick else 7,
           "chunks": 15 if quick else 40, "sleeps_s": "0.001,0.0001,0.00001",
           "sleep_reps": 30 if quick else 300, "ticks_s": f"{p.tick_ms * 1e-3},{p.fast_tick_ms * 1e-3}",
           "min_ticks": p.min_ticks, "maxburst": p.maxburst, "packet_bytes": p.ether_mtu,
           "pacer_s": 0.3 if quick else 2.0}
    notes = []
    probe = run_command(["unshare", "-rn", "tc", "qdisc", "show", "dev", "lo"], timeout_s=30)
    namespace = probe.available and probe.returncode == 0
    if not namespace:
        notes.append("no unprivileged network namespace with tc: " + (probe.reason or probe.stderr.strip()[:200]))
    argv = (["unshare", "-rn"] if namespace else []) + [python, "-"] + \
        [f"{k}={v}" for k, v in {**cfg, "namespace": int(namespace)}.items()]
    res = run_command(argv, timeout_s=600, input_text=NOW_SCRIPT)
    rows = []
    for line in res.stdout.splitlines():
        what, key, value = (line.split(" ", 2) + ["", ""])[:3]
        if what == "note":
            notes.append(f"{key}: {value}")
        elif what:
            rows.append({"what": what, "key": key, "value": float(value)})
    if not res.available or res.returncode != 0:
        notes.append("the experiment failed: " + (res.reason or res.stderr.strip()[-300:]))
    df = pd.DataFrame(rows, columns=["what", "key", "value"])
    df.attrs["notes"] = notes
    return df


def then_and_now(now: pd.DataFrame, params: Params | None = None, *, quick: bool = False,
                 c_clock_ns: float = float("nan")) -> pd.DataFrame:
    """The 1998 figures (the model of the testbed, or the paper's constants) beside this machine's;
    ``c_clock_ns``: a clock read timed from C (``pysim.measure.basics``), if the caller has one.
    Rows: quantity; columns: then, now, unit."""
    p = params or Params()

    def values(what):
        return now[now["what"] == what]

    rows = []
    sends = values("send_ns").groupby("key")["value"].median()
    base = sends.get("none", np.nan)
    for k, then in (("pfifo", p.fifoq_us), ("tbf", np.nan), ("htb", p.cbq_us)):
        rows.append((f"per-packet cost of {k} over none", 1e3 * then, sends.get(k, np.nan) - base, "ns"))
    clock = values("clock_ns")["value"]
    rows.append(("clock read from Python (microtime then)", 450.0, clock.iloc[0] if len(clock) else np.nan, "ns"))
    rows.append(("clock read from C (microtime then)", 450.0, c_clock_ns, "ns"))
    sleeps = values("sleep_s")["value"]
    shortest = sleeps.min() if len(sleeps) else np.nan
    rows.append(("shortest timer wait", 1e3 * p.tick_ms, 1e6 * shortest, "us"))

    def ceiling(period_s):
        return 8 * p.maxburst * p.ether_mtu / period_s / 1e6

    rows.append(("ceiling of a class of 1500-byte packets", ceiling(timer_s(p)), ceiling(p.min_ticks * shortest),
                 "Mbit/s"))
    for _, r in values("pacer_mbps").iterrows():
        tick = float(r["key"])
        rows.append((f"user-space pacer, {tick * 1e3:g} ms ticks", ceiling(p.min_ticks * tick), r["value"],
                     "Mbit/s"))
    alloc = values("alloc")
    if len(alloc):
        model = figure8(p, quick=quick)["fast_ethernet_mbps"]
        for _, r in alloc.iterrows():
            s = int(float(r["key"]))
            rows.append((f"class at {s}% of 100 Mbit/s", model.get(s, np.nan), r["value"], "Mbit/s"))
    return pd.DataFrame(rows, columns=["quantity", "then", "now", "unit"]).set_index("quantity")
