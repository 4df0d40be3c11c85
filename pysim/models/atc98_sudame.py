"""Transformer tunnels: route-specific adaptations at the IP layer (Sudame & Badrinath, USENIX ATC 1998).

Regenerates Figures 4-5 (the tunnel's cost per packet at the sender and at the receiver, identity
function, 133 MHz Pentiums), §2.1's header arithmetic (7 or 3 bytes of metadata against IP-in-IP's
20, "at least 49 µsec" on a 2 Mbit/s WaveLAN), §5.3's reassembly experiment (the Figure 3 policy on a
RealAudio stream: link packets halved, nothing late) and Table 3's break-even of per-packet LZO on
WaveLAN, as far as the text holds it.

First principles:

* **The tunnel on byte buffers** (:func:`xform_encap`, :func:`xform_decap`): the IP header rewritten in
  place (protocol IP_XFORM, destination the tunnel's far end), 3 or 7 bytes of metadata after it, the
  header checksum recomputed (:mod:`pysim.network.packets`); the receiver strips the metadata and
  restores the packet. The tests check the packets against scapy.
* **The cost per packet** (:func:`overhead_recipe`): what §5.1 lists each end doing, counted as a
  :class:`pysim.sw.Recipe` (calls, header fields, the header moved to make room for the metadata, the
  header checksum) and priced on the 133 MHz Pentium with assumed cycle costs, plus the code and data
  cache lines the path touches, each a miss with an assumed probability: the per-packet spread of
  Figures 4-5. Nothing in it depends on the packet's size or protocol unless the metadata is inserted by
  copying the whole packet (the counterfactual ``copy-to-insert``).
* **Figure 3's reassembly policy** (:class:`ReassemblyTunnel`) on :mod:`pysim.engine`: one delayed
  packet per mobile host, a timer of the mobile host's choosing, at most two packets combined; a
  RealAudio-like stream (256-byte packets about every 20 ms) through it onto a 2 Mbit/s WaveLAN
  (:func:`pysim.network.wire_bytes`), the mobile host regenerating the originals for the player.
* **LZO's break-even** (§4): airtime saved at 3.8 µs per byte against compression and decompression
  time per KB.

Calibrated (CALIBRATION): ``tunnel_xmit_cycles``, what the sender does that the receiver does not (the
route lookup and the hand-over to the WaveLAN device), on Figure 4's 3100 cycles. Predicted: the
receiver's cost (Figure 5), and the reassembly tunnel's reduction of link packets. Inputs (INPUTS):
the header sizes and the 49 µs they imply, the combined packet's size, and Table 3's legible cells
(bytes saved per KB, text's compression time), from which the break-even follows by arithmetic.

Then vs now (:func:`lzo_now`, :func:`measure_now`): LZO1X-1 per 1 KB chunk on real files (bytes saved
are a property of the data and the algorithm), and the tunnel's header rewrite with its checksum as a C
snippet timed on this machine (:mod:`pysim.harness`), beside the 1998 costs.

Not reproduced: Table 2 (every number lost in the text; :func:`table2` runs the buffering mechanism with
an assumed handoff blackout, unscored), Table 1 and Figures 1-3 (no data), the energy-saving function
(§4 describes it; §5 does not measure it), Table 3's standard errors (spread over files the paper does
not describe). See papers/atc98_sudame/paper.yaml.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness import measure
from pysim.hw import CpuCostModel
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.network import packets as pk
from pysim.network import payload, wire_bytes
from pysim.params import ModelParams, assumed, calibrated, derived, given, stated
from pysim.rng import make_rng
from pysim.sw import Recipe
from pysim.harness.exclusive import one_core

IP_XFORM = 99  # "any private encryption scheme" in IANA's table: an unassigned-in-1998 stand-in for IP_XFORM
IPV4_HEADER = 20
CASES = (("ICMP", 64), ("ICMP", 1024), ("UDP", 64), ("UDP", 1460), ("TCP", 536), ("TCP", 1460))
TABLE3_ROWS = ("text", "text (compressed)", "image (GIF)", "PostScript", "PostScript (compressed)")
KB = 1024


# --- the tunnel on byte buffers (§2.1, §3) -------------------------------------------------------------

def xform_encap(packet: bytes, tunnel_dst: str) -> bytes:
    """The sender's rewrite: protocol -> IP_XFORM, destination -> the tunnel's far end, and the metadata
    (original protocol, 2 bytes; a flag, 1 byte; the original destination, 4 bytes, only if it differs
    from the far end) between the header and the payload; the header checksum recomputed."""
    ip = pk.IPv4.unpack(packet)
    same = ip.dst == tunnel_dst
    meta = ip.proto.to_bytes(2, "big") + bytes([1 if same else 0]) + (b"" if same else packet[16:20])
    body = packet[IPV4_HEADER:ip.total_length]
    head = replace(ip, dst=tunnel_dst, proto=IP_XFORM, total_length=ip.total_length + len(meta), checksum=None)
    return head.pack() + meta + body


def xform_decap(packet: bytes) -> bytes:
    """The receiver's IP_XFORM handler: strip the metadata, restore protocol and destination, recompute
    the header checksum (the packet then goes back on IP input)."""
    ip = pk.IPv4.unpack(packet)
    if ip.proto != IP_XFORM:
        raise ValueError(f"not an IP_XFORM packet (protocol {ip.proto})")
    proto = int.from_bytes(packet[20:22], "big")
    same = packet[22] == 1
    meta = 3 if same else 7
    dst = ip.dst if same else ".".join(str(b) for b in packet[23:27])
    body = packet[IPV4_HEADER + meta:ip.total_length]
    return replace(ip, dst=dst, proto=proto, total_length=ip.total_length - meta, checksum=None).pack() + body


COMBINE_META = 5  # original protocol (2), flag 2 = "a second packet follows" (1), first packet's length (2)


def combine(first: bytes, second: bytes) -> bytes:
    """Figure 3's 'combine', in the tunnel's in-place style: the first packet's header becomes the
    IP_XFORM header of the pair, its metadata says a second packet (with its own IP header) follows the
    first's payload. Adds COMBINE_META bytes, not a second header."""
    ip = pk.IPv4.unpack(first)
    meta = ip.proto.to_bytes(2, "big") + bytes([2]) + ip.total_length.to_bytes(2, "big")
    head = replace(ip, proto=IP_XFORM, total_length=ip.total_length + COMBINE_META + len(second), checksum=None)
    return head.pack() + meta + first[IPV4_HEADER:ip.total_length] + second


def split(packet: bytes) -> tuple:
    """The mobile host's inverse of :func:`combine`: the two original packets."""
    ip = pk.IPv4.unpack(packet)
    if ip.proto != IP_XFORM or packet[22] != 2:
        raise ValueError("not a combined IP_XFORM packet")
    proto, n = int.from_bytes(packet[20:22], "big"), int.from_bytes(packet[23:25], "big")
    body = packet[IPV4_HEADER + COMBINE_META:ip.total_length]
    first = replace(ip, proto=proto, total_length=n, checksum=None).pack() + body[:n - IPV4_HEADER]
    return first, body[n - IPV4_HEADER:]


# --- the parameters ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Cycles on the 133 MHz Pentiums of §5, times in µs or ms, sizes in bytes."""

    clock_hz: float = stated(133e6, "§5: Pentium (133 MHz) desktops and laptops")
    link_us_per_byte: float = stated(3.8, "§5.4: on a 2-Mbps WaveLAN, transferring one byte requires 3.8 µsec")
    # §2.1: the metadata
    proto_bytes: int = stated(2, "§2.1: the original protocol number (2 bytes)", ge=1)
    flag_bytes: int = stated(1, "§2.1: a flag, original destination = tunnel's point-to-point address (1 byte)",
                             ge=1)
    addr_bytes: int = stated(4, "§2.1: the original destination address, if required (4 bytes)", ge=1)
    ipip_bytes: int = stated(20, "§2.1: IP encapsulation would require 20 bytes", ge=1)
    # §5.1: the cost per packet, identity function. Cycle costs of the operations (assumed, P54C)
    call_cycles: float = assumed(15.0, "an indirect call and return with a few arguments pushed on a P54C", ge=0)
    field_cycles: float = assumed(4.0, "load, byte-swap and store of one header or metadata field", ge=0)
    copy_cycles_per_byte: float = assumed(1.0, "rep movsb on unaligned bytes, about one per cycle on a P54C",
                                          ge=0)
    checksum_cycles_per_byte: float = assumed(0.75, "ip_fast_csum: 32-bit adc, unrolled, both pipes", ge=0)
    dispatch_cycles: float = assumed(40.0, "ip_rcv's walk of the inet_protos hash to the IP_XFORM handler",
                                     ge=0)
    requeue_cycles: float = assumed(60.0, "netif_rx: cli, timestamp, skb_queue_tail, mark_bh, sti", ge=0)
    alloc_cycles: float = assumed(200.0, "alloc_skb + kmalloc, used only when the packet is copied to make "
                                         "room (counterfactual)", ge=0)
    l2_line_cycles: float = assumed(12.0, "a 32-byte line from a 256 KB pipeline-burst L2: 3-1-1-1 at 66 MHz",
                                    ge=0)
    mem_line_cycles: float = assumed(30.0, "a 32-byte line from EDO DRAM: about 16 bus clocks at 66 MHz", ge=0)
    sender_code_bytes: int = assumed(1024, "the tunnel's transmit routine, the function table walk and the "
                                           "identity function: some 300 instructions", ge=0)
    receiver_code_bytes: int = assumed(640, "the IP_XFORM handler and the identity function: some 200 "
                                            "instructions", ge=0)
    data_lines: int = assumed(6, "sk_buff (2 lines), the header and metadata, the function table, the tunnel's "
                                 "private data or the protocol table, and a queue head", ge=0)
    p_code_from_memory: float = assumed(0.3, "ping sends one packet a second: the kernel's other work evicts "
                                             "part of the path from the 8 KB I-cache and the L2", ge=0, le=1)
    p_data_miss: float = assumed(0.5, "the sk_buff was touched by IP just before; the tables were not", ge=0,
                                 le=1)
    tunnel_xmit_cycles: float = calibrated(2348.0, "what only the sender does: the route lookup after the "
                                                   "rewrite and the hand-over to the WaveLAN device", ge=0)
    copy_to_insert: bool = assumed(False, "§5.1: the metadata goes in front of the payload by moving the "
                                          "header into the skb's headroom, not by copying the packet")
    samples: int = stated(3000, "§5.1: 'less than 5 in 3000' stray values: about 3000 packets per histogram",
                          ge=10)
    # §5.3: reassembly
    audio_packet_bytes: int = stated(256, "§5.3: small packets (of size 256 bytes)", ge=21)
    audio_spacing_ms: float = stated(20.0, "§5.3: the inter-arrival time for packets was close to 20 ms", gt=0)
    spacing_jitter_ms: float = assumed(2.0, "'close to 20 ms': RealAudio's server paces its packets, the "
                                            "Ethernet and the BS add a little jitter", ge=0)
    reassembly_delay_ms: float = stated(25.0, "§5.3: the tunnel configured with the delay parameter of 25 ms",
                                        ge=0)
    large_packet_bytes: int = assumed(576, "Figure 3's 'large': a packet more than half the 1500-byte WaveLAN "
                                           "MTU could not be combined; 576 marks the small ones", ge=1)
    max_combined_bytes: int = stated(1500, "§4: WaveLAN's MTU is 1500 bytes", ge=1)
    playout_buffer_ms: float = assumed(2000.0, "RealPlayer buffers seconds of audio before playing", ge=0)
    audio_seconds: float = assumed(120.0, "a two-minute clip (the paper does not give the file's length)", gt=0)
    # §5.4, Table 3 (given: the legible cells)
    text_saved_per_kb: float = given(375.0, "Table 3, text, bytes saved per KB", ge=0)
    ps_saved_per_kb: float = given(469.0, "Table 3, PostScript, bytes saved per KB", ge=0)
    text_compress_ms_per_kb: float = given(0.458, "Table 3, text, compression time (ms/KB)", ge=0)
    lzo_incompressible_speed_ratio: float = assumed(1.0, "LZO1X-1 spends about as long per byte on data it "
                                                         "cannot compress as on text (this machine's liblzo2: "
                                                         "4.3 against 4.7 ns/byte)", gt=0)
    lzo_decompress_ratio: float = assumed(0.25, "LZO decompresses about four times faster than LZO1X-1 "
                                                "compresses (its documentation: 'very fast decompression')",
                                          ge=0)
    # Table 2: buffering (all numbers lost)
    buffer_packets: int = stated(5, "§5.2: the buffer size used was 5 packets", ge=0)
    handoff_every_s: float = stated(10.0, "§5.2: handoffs were forced every 10 seconds", gt=0)
    handoff_blackout_ms: float = assumed(150.0, "Mobile IP registration through the new BS on a LAN plus the "
                                                "old BS's notice: a few round trips and a beacon", ge=0)
    audio_bytes: int = stated(1_200_000, "§5.2: audio files (total 1.2 MB)", ge=1)

    @property
    def link_bps(self) -> float:
        return 8e6 / self.link_us_per_byte

    @property
    def cpu(self) -> CpuCostModel:
        c = 1.0 / self.clock_hz
        return CpuCostModel(self.clock_hz,
                            fixed_s={"call": self.call_cycles * c, "field": self.field_cycles * c,
                                     "dispatch": self.dispatch_cycles * c, "requeue": self.requeue_cycles * c,
                                     "alloc": self.alloc_cycles * c, "tunnel_xmit": self.tunnel_xmit_cycles * c,
                                     "l2_line": self.l2_line_cycles * c},
                            per_byte_s={"copy": self.copy_cycles_per_byte * c,
                                        "checksum": self.checksum_cycles_per_byte * c})


CALIBRATION = (Fit("tunnel_xmit_cycles", "figure4", "all", "median_cycles", (0.0, 6000.0)),)
INPUTS = (
    Inputs((),
           cells("headers", ["ip-in-ip", "xform, other destination", "xform, tunnel destination"],
                 ["overhead_bytes"]) + cells("headers", ["xform, other destination"], ["saved_vs_ipip_us"]),
           "the stated sizes (proto_bytes, flag_bytes, addr_bytes, ipip_bytes), and 13 bytes at the stated "
           "3.8 us/byte (link_us_per_byte): arithmetic on stated constants"),
    Inputs((), cells("reassembly", ["reassembly tunnel"], ["combined_bytes"]),
           "two packets of the stated 256 bytes (audio_packet_bytes) side by side: arithmetic"),
    Inputs(("text_saved_per_kb", "ps_saved_per_kb", "text_compress_ms_per_kb"),
           cells("table3", ["text"], ["bytes_saved_per_KB", "compression_ms_per_KB"])
           + cells("table3", ["PostScript"], ["bytes_saved_per_KB"]),
           "Table 3's legible cells, taken as given"),
    Inputs((), cells("figure4", ["all"], ["median_us"]),
           "the fitted cycles (tunnel_xmit_cycles) at the stated 133 MHz: arithmetic"),
)
COUNTERFACTUALS = (
    Counterfactual("copy-to-insert", {"copy_to_insert": True},
                   "the metadata inserted by copying the whole packet into a larger buffer"),
    Counterfactual("short-delay", {"reassembly_delay_ms": 15.0},
                   "a reassembly delay shorter than the packets' spacing"),
    Counterfactual("ethernet-link", {"link_us_per_byte": 0.8},
                   "a 10 Mbit/s link in place of the 2 Mbit/s WaveLAN ('not useful on fast links', §4)"),
    Counterfactual("receiver-retransmits", {"dispatch_cycles": 2400.0},
                   "a receiver that routes and transmits again, as much as the sender does"),
)


# --- the cost per packet (§5.1, Figures 4-5) ----------------------------------------------------------

def overhead_recipe(p: Params, side: str, packet_bytes: int = 64, *, same_dst: bool = False) -> Recipe:
    """What one end of the tunnel does per packet with the identity function, counted (§5.1's lists):
    sender: tunnel entry and function call, header rewritten (protocol, destination, length) and the
    metadata written, the header moved into the headroom (or the whole packet copied), the checksum, and
    the route lookup with the device hand-over (``tunnel_xmit``); receiver: protocol dispatch, metadata
    read and header restored, the header moved back, the checksum, the function call, the re-queue on IP
    input. Code-cache lines fetched from the L2 are counted too (the misses to memory are drawn)."""
    meta = p.proto_bytes + p.flag_bytes + (0 if same_dst else p.addr_bytes)
    fields = 3 + (2 if same_dst else 3)
    if side == "sender":
        code = p.sender_code_bytes
        ops = {"call": 3, "field": fields, "tunnel_xmit": 1}
        moved = IPV4_HEADER
        if p.copy_to_insert:
            ops["alloc"] = 1
            moved = packet_bytes + meta
        return Recipe(ops={**ops, "l2_line": -(-code // 32)}, nbytes={"copy": moved, "checksum": IPV4_HEADER})
    if side == "receiver":
        code = p.receiver_code_bytes
        return Recipe(ops={"dispatch": 1, "call": 2, "field": fields, "requeue": 1, "l2_line": -(-code // 32)},
                      nbytes={"copy": IPV4_HEADER, "checksum": IPV4_HEADER})
    raise ValueError(f"side must be 'sender' or 'receiver', got {side!r}")


def overhead_samples(p: Params, side: str, packet_bytes: int, n: int, rng) -> np.ndarray:
    """Cycles for ``n`` packets: the recipe plus code lines that come from memory rather than the L2 and
    data lines that miss, each drawn per packet."""
    gen = make_rng(rng)
    base = overhead_recipe(p, side, packet_bytes).seconds(p.cpu) * p.clock_hz
    lines = -(-(p.sender_code_bytes if side == "sender" else p.receiver_code_bytes) // 32)
    code = gen.binomial(lines, p.p_code_from_memory, n) * (p.mem_line_cycles - p.l2_line_cycles)
    data = gen.binomial(p.data_lines, p.p_data_miss, n) * p.mem_line_cycles
    return base + code + data


def _overhead(p: Params, side: str, rng, quick: bool) -> pd.DataFrame:
    gen = make_rng(rng)
    n = p.samples  # cheap (vectorised): quick mode keeps every sample, so the fit holds in both profiles
    rows, pooled = {}, []
    for proto, size in CASES:
        s = overhead_samples(p, side, size, n // len(CASES) + 1, gen.spawn(1)[0])
        pooled.append(s)
        rows[f"{proto} {size}"] = s
    rows["all"] = np.concatenate(pooled)
    out = {k: {"median_cycles": float(np.median(v)), "median_us": float(np.median(v)) / p.clock_hz * 1e6,
               "p10_cycles": float(np.percentile(v, 10)), "p90_cycles": float(np.percentile(v, 90))}
           for k, v in rows.items()}
    return pd.DataFrame.from_dict(out, orient="index").rename_axis("case")


def figure4(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Figure 4: the tunnel's cost per packet at the sender (the base station), identity function. Rows:
    protocol and packet size, and 'all' pooled. Columns: median_cycles, median_us, p10_cycles,
    p90_cycles."""
    return _overhead(params or Params(), "sender", rng, quick)


def figure5(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Figure 5: the cost per packet at the receiver (the mobile host). Same rows and columns as
    :func:`figure4`."""
    return _overhead(params or Params(), "receiver", rng, quick)


def histogram(params: Params | None = None, side: str = "sender", *, rng=0, quick: bool = False,
              bin_cycles: float = 100.0) -> pd.DataFrame:
    """The distribution behind Figures 4-5: percentage of packets per bin of ``bin_cycles`` (all cases
    pooled). Index: bin_start_cycles; column: pct_packets."""
    p = params or Params()
    gen = make_rng(rng)
    n = p.samples
    s = np.concatenate([overhead_samples(p, side, size, n // len(CASES) + 1, gen.spawn(1)[0])
                        for _, size in CASES])
    edges = np.arange(np.floor(s.min() / bin_cycles) * bin_cycles, s.max() + bin_cycles, bin_cycles)
    counts, _ = np.histogram(s, edges)
    return pd.DataFrame({"pct_packets": 100 * counts / len(s)}, index=pd.Index(edges[:-1], name="bin_start_cycles"))


# --- §2.1: header sizes ---------------------------------------------------------------------------------

def headers(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """§2.1: bytes each scheme adds to a packet and their airtime on the WaveLAN. Rows: 'ip-in-ip',
    'xform, other destination', 'xform, tunnel destination', 'xform, content unchanged'. Columns:
    overhead_bytes (measured on packets built by :func:`xform_encap` and
    :func:`pysim.network.packets.encapsulate`), airtime_us, saved_vs_ipip_us."""
    p = params or Params()
    inner = pk.IPv4("10.0.0.1", "10.0.1.7", 17, 128).pack() + bytes(108)
    sizes = {"ip-in-ip": len(pk.encapsulate(inner, "10.0.1.1", "10.0.1.7")) - len(inner),
             "xform, other destination": len(xform_encap(inner, "10.0.1.1")) - len(inner),
             "xform, tunnel destination": len(xform_encap(inner, "10.0.1.7")) - len(inner),
             "xform, content unchanged": 0}
    df = pd.DataFrame({"overhead_bytes": sizes}).rename_axis("scheme")
    df["airtime_us"] = df["overhead_bytes"] * p.link_us_per_byte
    df["saved_vs_ipip_us"] = df.loc["ip-in-ip", "airtime_us"] - df["airtime_us"]
    return df


# --- Figure 3: the reassembly tunnel (§4, §5.3) ----------------------------------------------------------

class ReassemblyTunnel:
    """Figure 3 at the base station, and the WaveLAN link it feeds. ``sent`` records every frame put on the
    link: (time, bytes, originals carried)."""

    def __init__(self, sim: Simulation, p: Params, *, enabled: bool = True):
        self.sim, self.p, self.enabled = sim, p, enabled
        self.delayed = None  # (arrival time, size)
        self.generation = 0  # a timer is valid only for the delayed packet it was set for
        self.sent = []

    def _send(self, originals: list, size: int) -> None:
        self.sent.append((self.sim.now, size, tuple(originals)))

    def packet(self, arrival: float, size: int) -> None:
        """reassemble(p) of Figure 3."""
        p = self.p
        if not self.enabled or size >= p.large_packet_bytes:
            if self.delayed is not None:
                self._send([self.delayed], self.delayed[1])
                self.delayed = None
            self._send([(arrival, size)], size)
            return
        if self.delayed is not None:
            if self.delayed[1] + size + COMBINE_META <= p.max_combined_bytes:
                self._send([self.delayed, (arrival, size)], self.delayed[1] + size)
                self.delayed = None
                return
            self._send([self.delayed], self.delayed[1])
        self.delayed = (arrival, size)
        self.generation += 1
        self.sim.process(self._timer(self.generation))

    def _timer(self, generation: int):
        yield self.sim.timeout(self.p.reassembly_delay_ms * 1e-3)
        if generation == self.generation and self.delayed is not None:
            self._send([self.delayed], self.delayed[1])
            self.delayed = None


def _audio_source(sim: Simulation, tunnel: ReassemblyTunnel, p: Params, n: int, gen):
    gaps = np.maximum(0.0, gen.normal(p.audio_spacing_ms, p.spacing_jitter_ms, n)) * 1e-3
    for g in gaps:
        yield sim.timeout(float(g))
        tunnel.packet(sim.now, p.audio_packet_bytes)


def run_reassembly(p: Params, *, enabled: bool = True, rng=0, quick: bool = False) -> dict:
    """A RealAudio-like stream through the tunnel: frames on the link, their wire bytes, and each original
    packet's delay (tunnel wait plus airtime) and lateness against the player's buffer."""
    gen = make_rng(rng)
    n = int(p.audio_seconds * (0.25 if quick else 1.0) * 1e3 / p.audio_spacing_ms)
    sim = Simulation()
    tunnel = ReassemblyTunnel(sim, p, enabled=enabled)
    sim.process(_audio_source(sim, tunnel, p, n, gen))
    sim.run()
    link_free, delays, wire, ip_bytes = 0.0, [], 0, 0
    for t, size, originals in tunnel.sent:  # the link sends frames in order, one at a time
        frame = size + (COMBINE_META if len(originals) > 1 else 0)
        w = wire_bytes("wavelan", frame)
        wire += w
        ip_bytes += frame
        done = max(t, link_free) + w * 8 / p.link_bps
        link_free = done
        delays += [done - a for a, _ in originals]
    delays = np.asarray(delays)
    return {"app_packets": len(delays), "link_packets": len(tunnel.sent), "wire_bytes": wire,
            "link_header_bytes": wire - ip_bytes,
            "mean_delay_ms": 1e3 * delays.mean(), "max_delay_ms": 1e3 * delays.max(),
            "late_packets": int((delays * 1e3 > p.playout_buffer_ms).sum()),
            "combined_bytes": max(size for _, size, _ in tunnel.sent)}


def reassembly(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """§5.3: the stream without and with the reassembly tunnel. Rows: 'no tunnel', 'reassembly tunnel'.
    Columns: app_packets, link_packets, link_packet_reduction (app over link packets), wire_bytes,
    link_header_bytes (the WaveLAN's preamble, MAC header and FCS), mean_delay_ms, max_delay_ms, late_packets,
    combined_bytes (the largest frame's IP payloads)."""
    p = params or Params()
    rows = {"no tunnel": run_reassembly(p, enabled=False, rng=rng, quick=quick),
            "reassembly tunnel": run_reassembly(p, enabled=True, rng=rng, quick=quick)}
    df = pd.DataFrame.from_dict(rows, orient="index").rename_axis("configuration")
    df.insert(2, "link_packet_reduction", df["app_packets"] / df["link_packets"])
    return df


def reassembly_sweep(params: Params | None = None, *, delays_ms=(5, 10, 15, 20, 25, 30, 40),
                     jitters_ms=(0.0, 2.0, 5.0), rng=0, quick: bool = False) -> pd.DataFrame:
    """Link-packet reduction and mean added delay against the delay parameter, for several jitters."""
    p = params or Params()
    rows = []
    for j in jitters_ms:
        for d in delays_ms:
            r = run_reassembly(replace(p, reassembly_delay_ms=float(d), spacing_jitter_ms=float(j)), rng=rng,
                               quick=quick)
            rows.append({"jitter_ms": j, "delay_ms": d, "link_packet_reduction": r["app_packets"] / r["link_packets"],
                         "mean_delay_ms": r["mean_delay_ms"]})
    return pd.DataFrame(rows).set_index(["jitter_ms", "delay_ms"])


# --- Table 3: compression's break-even (§4, §5.4) ----------------------------------------------------------

def table3(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Table 3 and §4's break-even rule. Rows: the five data types. Columns: bytes_saved_per_KB (given for
    text and PostScript; 0 for already-compressed data, which goes out unmodified), compression_ms_per_KB
    (given for text; the same per-byte LZO for PostScript; scaled by the assumed speed ratio for
    incompressible data), decompression_ms_per_KB (assumed ratio; none for packets sent unmodified),
    airtime_saved_ms_per_KB (bytes saved at the link's µs per byte) and net_gain_ms_per_KB (airtime saved
    less both CPU times)."""
    p = params or Params()
    saved = {"text": p.text_saved_per_kb, "PostScript": p.ps_saved_per_kb}
    rows = {}
    for r in TABLE3_ROWS:
        s = saved.get(r, 0.0)
        comp = p.text_compress_ms_per_kb * (1.0 if s > 0 else p.lzo_incompressible_speed_ratio)
        dec = comp * p.lzo_decompress_ratio if s > 0 else 0.0
        air = s * p.link_us_per_byte / 1e3
        rows[r] = {"bytes_saved_per_KB": s, "compression_ms_per_KB": comp, "decompression_ms_per_KB": dec,
                   "airtime_saved_ms_per_KB": air, "net_gain_ms_per_KB": air - comp - dec}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("data_type")


def break_even_us_per_byte(params: Params | None = None, data_type: str = "text") -> float:
    """The slowest link (µs per byte) on which compressing ``data_type`` no longer pays: §4's rule."""
    p = params or Params()
    t = table3(p).loc[data_type]
    if t["bytes_saved_per_KB"] <= 0:
        return float("inf")
    return 1e3 * (t["compression_ms_per_KB"] + t["decompression_ms_per_KB"]) / t["bytes_saved_per_KB"]


# --- Table 2: the buffering tunnel (§4, §5.2), numbers lost ----------------------------------------------

def table2(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Table 2's experiment with an assumed blackout (unscored: the table's numbers are lost). A CBR audio
    stream of ``audio_bytes`` in 256-byte packets every 20 ms; every ``handoff_every_s`` the mobile host
    is unreachable for ``handoff_blackout_ms`` (drawn uniformly within the spacing); the buffering tunnel
    re-sends its last ``buffer_packets`` packets on the handoff notice. Rows: 'without buffering', 'with
    buffering'. Columns: avg_loss_pct, avg_retransmissions_pct (the tunnel's re-sends, of packets sent)."""
    p = params or Params()
    payload_b = p.audio_packet_bytes - 28
    n = int(np.ceil(p.audio_bytes / payload_b))
    t = np.arange(n) * p.audio_spacing_ms * 1e-3
    rows = {}
    for label, buf in (("without buffering", 0), ("with buffering", p.buffer_packets)):
        g = make_rng(rng)  # the same handoff instants for both configurations
        lost = np.zeros(n, bool)
        resent = 0
        k = 1
        while k * p.handoff_every_s < t[-1]:
            start = k * p.handoff_every_s + g.uniform(0, p.audio_spacing_ms * 1e-3)
            out = (t >= start) & (t < start + p.handoff_blackout_ms * 1e-3)
            idx = np.flatnonzero(out)
            if buf and idx.size:
                rescued = idx[-buf:]  # the old BS's last `buf` packets, forwarded to the new BS
                resent += len(rescued)
                out[rescued] = False
            lost |= out
            k += 1
        rows[label] = {"avg_loss_pct": 100 * lost.mean(), "avg_retransmissions_pct": 100 * resent / n}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("configuration")


# --- then vs now ----------------------------------------------------------------------------------------

def lzo_now(corpus: dict, *, chunk_bytes: int = KB, repeat: int = 3) -> pd.DataFrame:
    """LZO1X-1 per ``chunk_bytes`` chunk on this machine, as the tunnel applies it (a chunk that does not
    shrink goes out unmodified). ``corpus``: data type -> bytes. Columns: KB, bytes_saved_per_KB,
    compression_ms_per_KB, available, reason. Bytes saved are a property of the data and the algorithm."""
    rows = {}
    for name, data in corpus.items():
        chunks = payload.chunked(data, chunk_bytes)
        r = payload.run_stage("lzo1x-1", chunks, repeat=repeat)
        if not r.available:
            rows[name] = {"KB": len(data) / KB, "available": False, "reason": r.reason}
            continue
        saved = sum(max(0, len(c) - len(payload.lzo_compress(c)) - 3) for c in chunks)  # 3: the metadata
        rows[name] = {"KB": len(data) / KB, "bytes_saved_per_KB": KB * saved / len(data),
                      "compression_ms_per_KB": r.seconds / (len(data) / KB) * 1e3, "available": True, "reason": ""}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("data_type")


_C_DECLS = r"""
static uint8_t pkt[1600];
static uint16_t csum(const uint8_t *p, int n) { uint32_t s = 0; for (int i = 0; i < n; i += 2) s += (uint32_t)p[i] << 8 | p[i+1];
    while (s >> 16) s = (s & 0xffff) + (s >> 16); return (uint16_t)~s; }
/* the sender's rewrite: move the header 7 bytes into the headroom, write the metadata, rewrite
   protocol, destination and length, recompute the header checksum; returns the new start */
static uint8_t *encap(uint8_t *ip) {
    uint8_t *h = ip - 7; memmove(h, ip, 20);
    uint8_t *m = h + 20; m[0] = 0; m[1] = h[9]; m[2] = 0; memcpy(m + 3, h + 16, 4);
    h[9] = 99; h[16] = 10; h[17] = 0; h[18] = 1; h[19] = 1;
    uint16_t len = (uint16_t)((h[2] << 8 | h[3]) + 7); h[2] = len >> 8; h[3] = len & 255;
    h[10] = h[11] = 0; uint16_t c = csum(h, 20); h[10] = c >> 8; h[11] = c & 255; return h; }
static uint8_t *decap(uint8_t *h) {
    uint8_t *m = h + 20; h[9] = m[1]; memcpy(h + 16, m + 3, 4);
    uint16_t len = (uint16_t)((h[2] << 8 | h[3]) - 7); h[2] = len >> 8; h[3] = len & 255;
    uint8_t *ip = h + 7; memmove(ip, h, 20); ip[10] = ip[11] = 0; uint16_t c = csum(ip, 20);
    ip[10] = c >> 8; ip[11] = c & 255; return ip; }
"""
_C_SETUP = "for (int i = 0; i < 1600; i++) pkt[i] = (uint8_t)(i * 7); pkt[64] = 0x45; pkt[66] = 0; pkt[67] = 128;"


@one_core()
def measure_now(*, quick: bool = False) -> pd.DataFrame:
    """The tunnel's header work (§5.1's sender and receiver lists, without the kernel around them) timed
    on this machine as C snippets. Rows: sender, receiver. Columns: ns_per_packet, available, reason."""
    ops = {"sender": "uint8_t *h = encap(pkt + 64); sink += h[11];",
           "receiver": "uint8_t *h = encap(pkt + 64); uint8_t *ip = decap(h); sink += ip[11];"}
    rows = {}
    for name, body in ops.items():
        m = measure("c", body, name=f"xform {name}", decls=_C_DECLS, setup=_C_SETUP, includes=("string.h",),
                    tries=3 if quick else 5, enough_s=0.005 if quick else None)
        rows[name] = {"ns_per_packet": m.per_op_s * 1e9, "available": m.available, "reason": m.reason}
    now = pd.DataFrame.from_dict(rows, orient="index").rename_axis("side")
    if now.loc["receiver", "available"] and now.loc["sender", "available"]:
        now.loc["receiver", "ns_per_packet"] = max(0.0, now.loc["receiver", "ns_per_packet"]
                                                   - now.loc["sender", "ns_per_packet"])
    return now


def then_and_now(now: pd.DataFrame, params: Params | None = None, *, rng=0) -> pd.DataFrame:
    """The 1998 cost per packet (the model's medians, Figures 4-5) beside this machine's header work."""
    p = params or Params()
    then = {"sender": figure4(p, rng=rng, quick=True).loc["all", "median_us"],
            "receiver": figure5(p, rng=rng, quick=True).loc["all", "median_us"]}
    out = pd.DataFrame({"then_ns": {k: v * 1e3 for k, v in then.items()}}).rename_axis("side")
    out["now_ns"] = now["ns_per_packet"]
    out["ratio"] = out["then_ns"] / out["now_ns"]
    return out


__all__ = ["Params", "CALIBRATION", "INPUTS", "COUNTERFACTUALS", "xform_encap", "xform_decap", "combine", "split",
           "overhead_recipe", "overhead_samples", "figure4", "figure5", "histogram", "headers",
           "ReassemblyTunnel", "run_reassembly", "reassembly", "reassembly_sweep", "table3",
           "break_even_us_per_byte", "table2", "lzo_now", "measure_now", "then_and_now"]
