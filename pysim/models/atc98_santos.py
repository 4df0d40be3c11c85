"""Increasing effective link bandwidth by suppressing replicated data (Santos & Wetherall, USENIX ATC 1998).

Regenerates, as far as the text holds them: Table 1 (replicated share of the outbound traffic of five
traces; its OCR is badly garbled, so only its Total row's all-outbound share is scored), Figure 1
(cumulative replicated volume by payload length: "97% ... in packets with a length greater than 500
bytes"), Figure 2 (replicated volume seen within a window of W bytes), Figure 6 and §4.1's live run
(per-minute bandwidth reduction with 200 MB LRU caches and the >= 500-byte classifier: "approximately
20%") and §4.2's prototype performance (packets/s, Mbit/s, per-box latency of a pair of Pentium II 300
PCs on a 100 Mbit/s channel).

First principles.

* *The outbound trace* (:func:`outbound_trace`): a Web site's responses to outside clients, drawn from
  :mod:`pysim.workloads.traffic` (Zipf popularity, Pareto sizes) and cut into TCP segments at the
  client's MSS (536 or 1460). A response's first segment carries its HTTP header (a Date line: never
  replicated); its later segments repeat an earlier response's exactly when the object, the MSS and the
  header's length are the same (§2: "data sent multiple times must be parceled into packet payloads in
  the same manner"). A repeat transfer is *aligned* (its header as long as the object's usual one) with
  probability ``p_align``. TCP retransmissions repeat single segments; the rest of the outbound traffic
  (mail, FTP, DNS, ACKs) carries unique payloads.
* *Replication as §2.2 defines it*: a payload equal to an earlier payload of the trace (payload keys,
  exact); the reuse distance is the bytes between the two copies (§2.5).
* *The live run* (§3, §4.1): compressor and decompressor caches of 200 MB in LRU order, in C
  (:class:`pysim.sw.pagecache.PageCache` over 256-byte granules, so a payload occupies the bytes it
  has); only payloads of >= 500 bytes are classified for the cache (§3.4); a hit sends the header and a
  16-byte MD5 fingerprint in place of the payload (§3.2.1).
* *The prototype* (§3.4, §4.2): two PCs on :class:`pysim.network.Network` whose CPU charges every packet
  a fixed cost and a cost per byte (a :class:`pysim.sw.Recipe` on a Pentium II 300: two copies across
  the user boundary and an MD5 pass at the stated 200 Mbit/s of a Pentium II 233, scaled by the clock).
  A TCP Reno stream of unreplicated full-size packets gives the throughput; a light probe stream gives
  the per-box latency (rx interrupt to tx-complete interrupt: the CPU's work and the frame's
  transmission).

Calibrated, each on one cell (see CALIBRATION): ``p_align`` on Table 1's Total all-outbound share
(20%), ``box_fixed_us`` (the per-packet kernel, system-call and context-switch residual) on §4.2's 6000
packets/s. Predictions: the live run's reduction, Figure 1's 97%, the latencies. The throughput in
Mbit/s follows from the fitted packets/s by arithmetic on the assumed packet size, so the paper's
"exceeding 60 Mbps" is shown but neither scored nor claimed.

Not reproduced: Table 2 (every cell lost in the text), Table 1's inbound columns (their OCR cannot be
assigned to columns), Figures 3-5 and 7 (diagrams). Then vs now (:func:`measure_now`): the same
suppression over generated packet streams on this machine, with MD5, BLAKE2b and xxHash fingerprints and
zlib level 1 per packet, timed by :mod:`pysim.network.payload`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.hw import CpuCostModel
from pysim.hw.catalog import Machine
from pysim.models import Counterfactual, Fit
from pysim.network import Network, payload, wire_bytes
from pysim.params import ModelParams, assumed, calibrated, derived, from_catalog, stated
from pysim.rng import make_rng
from pysim.sw import Recipe
from pysim.sw.pagecache import PageCache
from pysim.units import MB, MHz, us
from pysim.workloads import traffic
from pysim.harness.exclusive import one_core

#: The prototype's PCs (§3.4). Not in the shared catalog yet.
PENTIUM_II_300 = Machine(
    name="Intel Pentium II 300 MHz PC", cpu="Intel Pentium II (Klamath)", clock_hz=300 * MHz,
    memory_bytes=128 * 2 ** 20, used_by=("atc98_santos",),
    sources={"clock_hz": "paper: §3.4: 'PentiumII 300MHz machines running Linux 2.0.31'",
             "memory_bytes": "paper: §3.4: 'with 128MB of RAM each'"},
)

TRACES = ("A", "B", "C", "D", "E")
HEADER_BYTES = 40         # TCP/IP header without options: the part of a packet that is not payload
FINGERPRINT_BYTES = 16    # MD5 (§3)
GRANULE = 256             # bytes of the LRU's unit of space
PROPAGATION_S = 5e-6      # a LAN cable's propagation delay (tens of metres)


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Sizes in bytes, times in seconds unless the name says otherwise."""

    # the site's Web objects and their clients (assumed: the traces are private)
    objects: int = assumed(20_000, "documents and images of the W3C and LCS servers in 1997: tens of thousands",
                           ge=100)
    zipf_alpha: float = assumed(0.8, "Web request popularity is Zipf-like with alpha 0.64-0.83 (Breslau et al. "
                                     "1999); the lab's traffic default", gt=0, le=2)
    pareto_shape: float = assumed(1.2, "heavy-tailed Web file sizes, tail index 1.1-1.3 (Crovella and Bestavros "
                                       "1996); the lab's traffic default", gt=1, le=3)
    min_object_bytes: int = assumed(1000, "the Pareto body's lower bound: the lab's traffic default", ge=1)
    max_object_bytes: int = assumed(10_000_000, "the largest object a 1997 Web site served, about 10 MB", ge=1000)
    header_min_bytes: int = assumed(180, "an HTTP/1.0 response header is 150-300 bytes", ge=1)
    header_spread_bytes: int = assumed(120, "the spread of header lengths across objects (type, length, dates)",
                                       ge=1)
    mss_small_share: float = assumed(0.25, "clients behind 576-byte MTUs or with the default 536-byte MSS; "
                                           "Figure 1's step near 536 bytes shows them", ge=0, le=1)
    mss_small: int = stated(536, "§2.4: 'the default TCP segment size is 536 bytes'", ge=1)
    mss_large: int = derived(1460, "§2.4: the maximum Ethernet payload of 1500 bytes, less 40 of TCP/IP header",
                             ge=1)
    p_align: float = calibrated(0.7204353, "the probability that a repeat transfer is cut into the same payloads as "
                                     "earlier ones (same header length)", ge=0, le=1)
    retransmit_share: float = assumed(0.02, "TCP segments sent twice: Internet loss rates of 1-3% in 1995 "
                                            "(Paxson)", ge=0, lt=1)
    http_share: float = assumed(0.62, "HTTP's share of outbound bytes: Table 1's Total row reads 936 MB of "
                                      "outbound HTTP in about 1.5 GB outbound (2.6 GB less 1093 MB inbound); "
                                      "a doubtful reading", gt=0, le=1)
    other_payload_share: float = assumed(0.6, "non-HTTP outbound packets that carry data (the rest are ACKs of "
                                              "inbound transfers)", ge=0, le=1)
    trace_bytes: float = assumed(300 * MB, "§2.1: 2.6 GB in both directions over five traces; about 1.5 GB "
                                           "outbound, 300 MB each", gt=0)
    # the live run and the scheme
    cache_bytes: float = stated(200 * MB, "§3.4: caches limited to 200MB each", gt=0)
    min_payload_bytes: int = stated(500, "§3.4: 'a classifier that only accepted data with payloads of at "
                                         "least 500 bytes'", ge=0)
    live_bytes_per_s: float = derived(50e9 / 86400, "§4.1: about 50 GB in 24 hours", gt=0)
    live_minutes: int = assumed(60, "two hours of the 24-hour run after the caches fill (a stationary workload: "
                                     "more minutes only narrow the mean)", ge=1)
    # the prototype (§3.4, §4.2)
    clock_hz: float = from_catalog(PENTIUM_II_300, "clock_hz")
    md5_bits_per_s: float = derived(200e6 * 300 / 233, "§3: MD5 'exceeds 200 Mbps' on a Pentium II 233, scaled "
                                                       "to 300 MHz", gt=0)
    copy_ns_per_byte: float = assumed(10.0, "a Pentium II's memcpy between buffers in memory, about 100 MB/s "
                                            "(66 MHz SDRAM)", gt=0)
    box_fixed_us: float = calibrated(55.586825, "per packet: interrupt, the modified forwarding path, read and write "
                                           "system calls, context switches, hash-table lookup", gt=0)
    channel_bits_per_s: float = stated(100e6, "§4.2: 'we ran the system over a 100 Mbps channel'", gt=0)
    test_packet_bytes: int = assumed(1500, "§4.2's TCP stream over Ethernet: full-size 1500-byte IP packets", ge=41,
                                     le=1500)
    probe_pps: float = assumed(200.0, "the latency probe: light enough that no packet waits for another", gt=0)

    @property
    def cpu(self) -> CpuCostModel:
        """The Pentium II 300's unit costs for the prototype's per-packet work."""
        return CpuCostModel(self.clock_hz, {"box_fixed": self.box_fixed_us * us},
                            {"copy": self.copy_ns_per_byte * 1e-9, "md5": 8.0 / self.md5_bits_per_s})


CALIBRATION = (
    Fit("p_align", "table1", "Total", "out_all_repl_pct", (0.0, 1.0)),
    Fit("box_fixed_us", "perf", "compressor", "packets_per_s", (10.0, 400.0)),
)
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("misaligned", {"p_align": 0.0},
                   "no repeat transfer is cut into the payloads of an earlier one: §2's alignment condition fails"),
    Counterfactual("gzip-window", {"cache_bytes": 32 * 1024},
                   "a dictionary as large as gzip's 32 KB window (§5.1) in place of 200 MB"),
    Counterfactual("no-classifier", {"min_payload_bytes": 0},
                   "every payload enters the cache, the small ones too"),
    Counterfactual("all-small-mss", {"mss_small_share": 1.0},
                   "every client uses the 536-byte default segment"),
    Counterfactual("ten-megabit-channel", {"channel_bits_per_s": 10e6},
                   "the prototype on its dedicated 10 Mbit/s Ethernet (§3.4) instead of the 100 Mbit/s test channel"),
    Counterfactual("uniform-popularity", {"zipf_alpha": 1e-6},
                   "every object equally popular: no hot set to repeat"),
)


# --- the outbound trace ---------------------------------------------------------------------------

def _objects(p: Params, gen) -> pd.DataFrame:
    objs = traffic.web_objects(p.objects, alpha=p.zipf_alpha, pareto_shape=p.pareto_shape,
                               min_bytes=p.min_object_bytes, max_bytes=p.max_object_bytes, rng=gen)
    objs["header"] = p.header_min_bytes + gen.integers(0, p.header_spread_bytes, p.objects)
    return objs


def outbound_trace(p: Params, volume_bytes: float, *, rng=0, objects: pd.DataFrame | None = None) -> pd.DataFrame:
    """About ``volume_bytes`` of outbound packets in order: ``payload`` bytes, ``key`` (equal keys: equal
    payloads), ``http`` (a Web response's segment). Each packet also carries a 40-byte TCP/IP header."""
    if not volume_bytes > 0:
        raise ValueError(f"volume_bytes must be > 0, got {volume_bytes!r}")
    gen = make_rng(rng)
    g_obj, g_req, g_other = gen.spawn(3)
    objs = objects if objects is not None else _objects(p, g_obj)
    sizes, headers = objs["bytes"].to_numpy(), objs["header"].to_numpy()
    mean_resp = float((objs["share"] * (sizes + headers)).sum())
    n_req = max(1, int(p.http_share * volume_bytes / mean_resp))
    req = traffic.web_requests(objs, n_req, rng=g_req)
    small = g_req.random(n_req) < p.mss_small_share
    aligned = g_req.random(n_req) < p.p_align
    mss = np.where(small, p.mss_small, p.mss_large)
    total = sizes[req] + headers[req]
    nseg = -(-total // mss)
    # expand responses into segments
    owner = np.repeat(np.arange(n_req), nseg)
    start = np.cumsum(nseg) - nseg
    k = np.arange(owner.size) - start[owner]
    seg = np.where(k == nseg[owner] - 1, total[owner] - (nseg[owner] - 1) * mss[owner], mss[owner])
    shared = (k > 0) & aligned[owner]
    key = np.where(shared, (req[owner].astype(np.int64) << 17) | (small[owner].astype(np.int64) << 16) | k,
                   -(np.arange(owner.size, dtype=np.int64) + 1))
    http = pd.DataFrame({"payload": seg, "key": key, "http": True, "pos": owner.astype(float)})
    # the rest of the outbound traffic: unique payloads (and ACKs with none), interleaved at random
    other_bytes = (1 - p.http_share) * volume_bytes
    mean_other = p.other_payload_share * (p.mss_large / 2) + HEADER_BYTES
    n_other = int(other_bytes / mean_other)
    carries = g_other.random(n_other) < p.other_payload_share
    opay = np.where(carries, g_other.integers(1, p.mss_large + 1, n_other), 0)
    other = pd.DataFrame({"payload": opay, "key": -(np.arange(n_other, dtype=np.int64) + 1 + owner.size),
                          "http": False, "pos": np.sort(g_other.uniform(0, n_req, n_other))})
    trace = pd.concat([http, other], ignore_index=True).sort_values("pos", kind="stable")
    # TCP retransmissions: a segment sent again just after
    again = (trace["payload"].to_numpy() > 0) & (g_other.random(len(trace)) < p.retransmit_share)
    trace = trace.loc[trace.index.repeat(1 + again.astype(int))].reset_index(drop=True)
    return trace.drop(columns="pos")


def replication(trace: pd.DataFrame) -> pd.DataFrame:
    """§2.2's static analysis: for each packet, whether its payload repeats an earlier one and the bytes
    since the previous copy (``distance``; NaN when not replicated)."""
    wire = trace["payload"].to_numpy() + HEADER_BYTES
    end = np.cumsum(wire)
    has = trace["payload"].to_numpy() > 0
    keys = pd.Series(np.where(has, trace["key"].to_numpy(), np.iinfo(np.int64).min))
    prev_end = pd.Series(end).groupby(keys.to_numpy()).shift(1).to_numpy()
    repl = has & ~np.isnan(prev_end)
    return pd.DataFrame({"replicated": repl, "distance": np.where(repl, end - wire - prev_end, np.nan)})


def _trace_rows(p: Params, quick: bool, gen) -> dict:
    """The five traces of one site (one catalogue of objects). ``quick`` changes nothing: five full traces
    take about a second, and shorter traces would hold fewer repeats (a different experiment)."""
    objs = _objects(p, gen.spawn(1)[0])
    out = {}
    for name, g in zip(TRACES, gen.spawn(len(TRACES))):
        t = outbound_trace(p, p.trace_bytes, rng=g, objects=objs)
        out[name] = (t, replication(t))
    return out


def _shares(t: pd.DataFrame, r: pd.DataFrame) -> dict:
    wire = t["payload"] + HEADER_BYTES
    rep = t["payload"].where(r["replicated"], 0)
    http = t["http"]
    return {"out_all_vol_mb": wire.sum() / MB, "out_all_repl_pct": 100 * rep.sum() / wire.sum(),
            "out_http_vol_mb": wire[http].sum() / MB, "out_http_repl_pct": 100 * rep[http].sum() / wire[http].sum()}


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1, outbound columns: volume (MB, IP packets) and replicated payload bytes as a share of it (%),
    all traffic and HTTP, per trace and in total. Quick traces are a tenth as long."""
    p = params or Params()
    traces = _trace_rows(p, quick, make_rng(rng))
    rows = {name: _shares(t, r) for name, (t, r) in traces.items()}
    rows["Total"] = _shares(pd.concat([t for t, _ in traces.values()]), pd.concat([r for _, r in traces.values()]))
    return pd.DataFrame(rows).T.rename_axis("trace")


def figure1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 1: cumulative replicated volume (%) by payload length (bytes), all five traces; ``above_pct``
    is the share in longer payloads."""
    p = params or Params()
    traces = _trace_rows(p, quick, make_rng(rng))
    t = pd.concat([t for t, _ in traces.values()])
    r = pd.concat([r for _, r in traces.values()])
    rep = t["payload"].where(r["replicated"].to_numpy(), 0).to_numpy()
    lengths = np.array([100, 200, 300, 400, 500, 536, 600, 800, 1000, 1200, 1400, 1460, 1500])
    by_len = np.bincount(t["payload"].to_numpy(), weights=rep, minlength=1501)
    cum = 100 * np.cumsum(by_len)[lengths] / rep.sum()
    return pd.DataFrame({"cum_replicated_pct": cum, "above_pct": 100 - cum},
                        index=pd.Index(lengths, name="length_bytes"))


def figure2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 2: outbound replicated volume found within a window of W MB (% of the traffic, and % of all the
    replicated volume), over the five traces (MB: 10**6 bytes)."""
    p = params or Params()
    traces = _trace_rows(p, quick, make_rng(rng))
    t = pd.concat([t for t, _ in traces.values()])
    r = pd.concat([r for _, r in traces.values()])
    wire = (t["payload"] + HEADER_BYTES).sum()
    rep = t["payload"].where(r["replicated"].to_numpy(), 0).to_numpy()
    dist = r["distance"].to_numpy()
    windows = np.array([0.032, 0.25, 1, 4, 16, 32, 50, 100, 150, 200, 250, 300, 350])  # 0.032: gzip's 32 KB
    found = np.array([rep[dist <= w * MB].sum() for w in windows])
    return pd.DataFrame({"replicated_pct": 100 * found / wire, "share_of_replicated_pct": 100 * found / rep.sum()},
                        index=pd.Index(windows, name="window_mb"))


# --- the live run ---------------------------------------------------------------------------------

def suppress(trace: pd.DataFrame, cache_bytes: float, min_payload_bytes: int) -> pd.DataFrame:
    """Run the compressor over ``trace``: per packet, whether it went as a fingerprint, and its bytes in
    and on the channel. The decompressor's cache sees the same classified payloads in the same order, so
    it holds what the compressor holds (a lossless channel)."""
    payload_b = trace["payload"].to_numpy()
    classified = payload_b >= max(min_payload_bytes, 1)
    ids = pd.factorize(trace["key"].to_numpy()[classified])[0].astype(np.uint64)
    gran = -(-payload_b[classified] // GRANULE)
    owner = np.repeat(np.arange(ids.size), gran)
    j = np.arange(owner.size) - (np.cumsum(gran) - gran)[owner]
    keys = ids[owner] * np.uint64(8) + j.astype(np.uint64)
    # a cache larger than everything the trace holds behaves as that large one
    cache = PageCache(max(1, min(int(cache_bytes // GRANULE), keys.size)), policy="lru")
    hits = np.zeros(keys.size, dtype=np.uint8)
    cache.run(keys, hits_out=hits)
    all_hit = np.minimum.reduceat(hits, np.cumsum(gran) - gran) if keys.size else np.zeros(0, np.uint8)
    token = np.zeros(payload_b.size, dtype=bool)
    token[np.flatnonzero(classified)] = all_hit.astype(bool)
    wire_in = payload_b + HEADER_BYTES
    return pd.DataFrame({"token": token, "bytes_in": wire_in,
                         "bytes_channel": np.where(token, HEADER_BYTES + FINGERPRINT_BYTES, wire_in)})


def _live(p: Params, quick: bool, rng) -> pd.DataFrame:
    if isinstance(rng, (int, np.integer)):
        return _live_cached(p, quick, int(rng)).copy()
    return _live_run(p, quick, make_rng(rng))


@functools.lru_cache(maxsize=8)
def _live_cached(p: Params, quick: bool, seed: int) -> pd.DataFrame:
    return _live_run(p, quick, make_rng(seed))


def _live_run(p: Params, quick: bool, rng) -> pd.DataFrame:
    minutes = max(1, p.live_minutes // 6) if quick else p.live_minutes
    per_min = p.live_bytes_per_s * 60
    warm = 2 * p.cache_bytes  # let the caches fill before the minutes that count
    t = outbound_trace(p, warm + minutes * per_min, rng=rng)
    s = suppress(t, p.cache_bytes, p.min_payload_bytes)
    minute = np.floor((np.cumsum(s["bytes_in"].to_numpy()) - warm) / per_min)
    s["minute"] = minute
    s = s[(minute >= 0) & (minute < minutes)]
    g = s.groupby("minute")[["bytes_in", "bytes_channel"]].sum()
    out = pd.DataFrame({"reduction_pct": 100 * (1 - g["bytes_channel"] / g["bytes_in"]),
                        "input_mb": g["bytes_in"] / MB})
    out.index = out.index.astype(int).rename("minute")
    return out


def figure6(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 6: the bandwidth reduction (%) of each minute of the live run, after the caches fill."""
    return _live(params or Params(), quick, rng)


def live(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4.1's run in one row: the reduction over all its minutes (%), and the spread of the minutes."""
    f = figure6(params, rng=rng, quick=quick)
    total = 100 * (f["reduction_pct"] / 100 * f["input_mb"]).sum() / f["input_mb"].sum()
    return pd.DataFrame({"reduction_pct": [total], "min_minute_pct": [f["reduction_pct"].min()],
                         "max_minute_pct": [f["reduction_pct"].max()], "minutes": [len(f)]},
                        index=pd.Index(["run"], name="experiment"))


# --- the prototype --------------------------------------------------------------------------------

def box_recipe(p: Params, payload_bytes: int) -> Recipe:
    """A box's work for one packet with no replication (the worst case, §4.2): the fixed residual, the copy
    up to the user process and back down, and the MD5 pass over the payload."""
    return Recipe(ops={"box_fixed": 1}, nbytes={"copy": 2 * (payload_bytes + HEADER_BYTES), "md5": payload_bytes})


def _prototype(p: Params, *, tcp: bool, until_s: float, rng) -> tuple:
    net = Network(rng=rng)
    cpu = p.cpu
    per_byte = (box_recipe(p, 1).seconds(cpu) - box_recipe(p, 0).seconds(cpu))  # per payload byte
    fixed = box_recipe(p, 0).seconds(cpu) - 2 * HEADER_BYTES * cpu.per_byte_s["copy"]
    src, dst = net.host("sender"), net.host("receiver")
    comp = net.router("compressor", cpu_packet_s=fixed, cpu_byte_s=per_byte)
    decomp = net.router("decompressor", cpu_packet_s=fixed, cpu_byte_s=per_byte)
    for a, b in ((src, comp), (comp, decomp), (decomp, dst)):
        net.link(a, b, p.channel_bits_per_s if (a, b) == (comp, decomp) else 100e6, PROPAGATION_S, kind="ethernet")
    net.route_shortest()
    mss = p.test_packet_bytes - HEADER_BYTES
    if tcp:
        f = net.tcp(src, dst, mss=mss, header_bytes=HEADER_BYTES, delayed_ack=True, max_window=64)
    else:
        f = net.udp(src, dst, pattern="cbr", rate_pps=p.probe_pps, size=p.test_packet_bytes)
    net.run(until_s)
    return net, f


def perf(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4.2: packets/s and Mbit/s through the pair with a TCP stream of unreplicated packets, and each
    box's latency (us) for a light stream: its CPU work and the frame's transmission on its outgoing link
    (rx interrupt to tx-complete interrupt), plus any wait the probe met."""
    p = params or Params()
    g1, g2 = make_rng(rng).spawn(2)
    net, f = _prototype(p, tcp=True, until_s=3.0, rng=g1)  # cheap in C: the same run in quick mode
    pps = net.flows().loc[f, "goodput_bps"] / 8 / (p.test_packet_bytes - HEADER_BYTES)
    net2, f2 = _prototype(p, tcp=False, until_s=1.0, rng=g2)
    delay = net2.flows().loc[f2, "mean_delay_s"]
    frame = wire_bytes("ethernet", p.test_packet_bytes) * 8
    tx = {"in": frame / 100e6, "channel": frame / p.channel_bits_per_s, "out": frame / 100e6}
    box_s = box_recipe(p, p.test_packet_bytes - HEADER_BYTES).seconds(p.cpu)
    wait = delay - sum(tx.values()) - 2 * box_s - 3 * PROPAGATION_S
    rows = {"compressor": {"packets_per_s": pps, "latency_us": (box_s + tx["channel"] + wait / 2) / us},
            "decompressor": {"packets_per_s": pps, "latency_us": (box_s + tx["out"] + wait / 2) / us}}
    out = pd.DataFrame(rows).T.rename_axis("box")
    out.insert(1, "mbit_per_s", out["packets_per_s"] * p.test_packet_bytes * 8 / 1e6)
    out["cpu_us_per_packet"] = box_s / us
    return out


# --- then vs now ----------------------------------------------------------------------------------

def packet_bytes(trace: pd.DataFrame, *, text_share: float = 0.5, rng=0) -> list:
    """Payload bytes for a trace's packets: equal keys give equal bytes. Half the objects are text-like
    (words from a small vocabulary, as HTML compresses), half incompressible (JPEG and GIF)."""
    gen = make_rng(rng)
    vocab = [bytes(gen.integers(97, 123, int(n))) for n in gen.integers(2, 9, 400)]
    cache, out = {}, []
    for key, n in zip(trace["key"].to_numpy(), trace["payload"].to_numpy()):
        if key in cache:
            out.append(cache[key])
            continue
        g = np.random.default_rng(abs(int(key)))
        if g.random() < text_share:
            words = g.integers(0, len(vocab), int(n) // 3 + 1)
            data = b" ".join(vocab[w] for w in words)[: int(n)]
        else:
            data = g.bytes(int(n))
        cache[key] = data
        out.append(data)
    return out


@one_core()
def measure_now(*, quick: bool = False, rng=0) -> pd.DataFrame:
    """Fingerprints and per-packet zlib on this machine over a generated outbound stream: ns per byte,
    packets/s of the stage alone, and the bytes it saves (suppression with an unbounded cache, or zlib)."""
    p = Params()
    t = outbound_trace(p, (4 if quick else 40) * MB, rng=rng)
    t = t[t["payload"] > 0].reset_index(drop=True)
    chunks = packet_bytes(t, rng=rng)
    r = replication(t)
    wire = float((t["payload"] + HEADER_BYTES).sum())
    suppressed = float((t["payload"] - FINGERPRINT_BYTES).where(r["replicated"], 0).sum())
    rows = []
    for name in ("md5", "blake2b-16", "xxh64", "zlib-1"):
        res = payload.run_stage(name, chunks, repeat=2 if quick else 3)
        if not res.available:
            rows.append({"stage": name, "available": False, "note": res.reason})
            continue
        saved = suppressed if name != "zlib-1" else float(res.bytes_in - res.bytes_out)
        rows.append({"stage": name, "available": True, "ns_per_byte": res.ns_per_byte,
                     "packets_per_s": res.chunks / res.seconds, "mbit_per_s": 8 * res.bytes_in / res.seconds / 1e6,
                     "saved_pct": 100 * saved / wire, "note": ""})
    return pd.DataFrame(rows).set_index("stage")


def then_and_now(now: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """The 1998 model's per-byte MD5 beside this machine's stages (ns per byte)."""
    p = params or Params()
    then = 1e9 * 8 / p.md5_bits_per_s
    out = now[["ns_per_byte"]].copy()
    out["then_md5_ns_per_byte"] = then
    out["speedup_over_1998_md5"] = then / out["ns_per_byte"]
    return out
