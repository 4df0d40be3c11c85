"""An IPv6/IPv4 network address and protocol translator (Fiuczynski, Lam & Bershad, USENIX ATC 1998).

Regenerates Table 3 (ping round trips, direct and through NT's IPv4
forwarder and the translator, 64 to 1440 bytes on 100 Mbit/s Ethernet),
Table 4 (ttcp TCP bandwidth at 10 and 100 Mbit/s) and Table 5 (ICMP errors
provoked on purpose and translated, recursively, by the translator).

First principles:

* **The translator itself** (Appendix A), on byte buffers: IPv4 to IPv6 and
  back (:func:`v4_to_v6`, :func:`v6_to_v4`), the Fragment-header rules, the
  ICMP type, code and pointer tables, the recursive translation of the
  packet inside an ICMP error (Figure 6), and the checksums: incremental
  (RFC 1624, :mod:`pysim.network.packets`) for TCP, UDP and ICMP Echo, from
  scratch for ICMP errors (§2.2.3). Address mapping is stateless
  (IPv4-mapped and IPv4-compatible addresses) or stateful (bindings,
  §2.1). The tests check every codec against scapy.
* **The testbed** on the packet network in C (:mod:`pysim.network`): two
  hosts on 100 (or 10) Mbit/s Ethernet, directly or through a gateway PC
  that stores and forwards every packet on its one CPU. NT's receive path
  makes the gateway allocate a buffer and copy the whole packet (§3.1): a
  cost per packet plus a copy per byte. The translator adds its own cost
  per packet plus the checksum bytes it sums, which come from running the
  translator on the packets of the experiment; the IPv6 side's links carry
  the 20 (28 with a Fragment header) extra bytes the translator adds. ping
  is one request in flight at a time (a UDP ``rpc`` flow of the same sizes),
  ttcp a TCP Reno stream with delayed ACKs.

Calibrated, each on one cell of Table 3's one legible row (64 bytes; see
CALIBRATION): an end host's cost per ping traversal (v4-v4), the gateway's
forwarding cost per packet (FWD) and the translator's extra cost per packet
(NAPT). Predicted: the v6-v6 round trip, the other sizes, all of Table 4
(the forwarder's and the translator's bandwidth follow from the
per-packet costs fitted on pings and a copy at an assumed memcpy speed),
the gateway's CPU share, and Table 5.

Then vs now (:func:`measure_now`, :func:`then_and_now`): the translation
of a header with the incremental checksum and with a full one, and NT's
forwarding copy, as C snippets timed on this machine (:mod:`pysim.harness`),
beside the simulated Pentium Pro's costs.

Not reproduced: Tables 1-2 and Figures 1-6 (definitions and diagrams, no
data); Table 3's rows between 64 and 1440 bytes and Table 4's 10 Mbit/s row
are lost in the text, so the model's values there are unscored predictions;
the MSR IPv6 stack's bandwidth penalty (§3.1) has no mechanism here. See
papers/atc98_fiuczynski/paper.yaml.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from pysim.harness import measure
from pysim.hw import catalog
from pysim.hw.bus import PciTiming
from pysim.models import Counterfactual, Fit
from pysim.network import Network, wire_bytes
from pysim.network import packets as pk
from pysim.params import ModelParams, assumed, calibrated, from_catalog, stated
from pysim.rng import make_rng
from pysim.units import us
from pysim.harness.exclusive import one_core

PPRO = catalog.PENTIUM_PRO_200
CONFIGS = ("v4_v4", "v6_v6", "fwd", "napt")
IPV4_HEADER, IPV6_HEADER, FRAG_HEADER, ICMP_HEADER = 20, 40, 8, 8
PING_SIZES = (64, 128, 256, 512, 1024, 1440)
LINKS_MBPS = (10, 100)
KB = 1024  # ttcp's kilobyte


class Untranslatable(ValueError):
    """A packet the translator drops: no address binding, a single-hop or unknown ICMP type, IGMP."""


# --- bytes ----------------------------------------------------------------------------------------

def _u16(b: bytes, off: int) -> int:
    return int.from_bytes(b[off:off + 2], "big")


def _put16(b: bytearray, off: int, v: int) -> None:
    b[off:off + 2] = (v & 0xFFFF).to_bytes(2, "big")


def _sum16(data: bytes) -> int:
    """The one's-complement sum of ``data``'s 16-bit words (RFC 1071, before the final complement)."""
    return ~pk.checksum(data) & 0xFFFF


def _adjust(csum: int, removed: bytes, added: bytes) -> int:
    """RFC 1624 over sums: the checksum after words summing to ``removed`` leave and ``added`` enter the
    covered data (old and new may differ in length, as an IPv4 and an IPv6 pseudo-header do)."""
    total = (~csum & 0xFFFF) + (~_sum16(removed) & 0xFFFF) + _sum16(added)
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _v4_str(a: bytes) -> str:
    return ".".join(str(x) for x in a)


def _v4_pseudo(src: bytes, dst: bytes, proto: int, length: int) -> bytes:
    return src + dst + bytes([0, proto]) + length.to_bytes(2, "big")


def _v6_pseudo(src: bytes, dst: bytes, nh: int, length: int) -> bytes:
    return src + dst + length.to_bytes(4, "big") + bytes([0, 0, 0, nh])


# --- address mapping (§2.1) --------------------------------------------------------------------------

MAPPED = bytes(10) + b"\xff\xff"  # ::ffff:a.b.c.d, an IPv4-mapped address (IP6NODE4, stateless)
COMPATIBLE = bytes(12)            # ::a.b.c.d, an IPv4-compatible address (IPv6 nodes, stateless)


@dataclass(frozen=True)
class AddressMap:
    """IPv4 <-> IPv6 addresses. ``v6_nodes``: the IP4NODE6-to-IP6NODE6 bindings, (IPv4 alias, IPv6 address)
    as bytes; ``v4_nodes``: the IP6NODE4-to-IP4NODE4 bindings, (IPv6 alias, IPv4 address). Without a
    binding the mapping is stateless: an IPv4 node appears as its IPv4-mapped address, and an IPv6
    address with an IPv4-mapped or IPv4-compatible prefix stands for its low 32 bits."""

    v6_nodes: tuple = ()
    v4_nodes: tuple = ()

    def to_v6(self, a4: bytes) -> bytes:
        for alias, a6 in self.v6_nodes:
            if alias == a4:
                return a6
        for a6, real in self.v4_nodes:
            if real == a4:
                return a6
        return MAPPED + a4

    def to_v4(self, a6: bytes) -> bytes:
        for alias, real in self.v6_nodes:
            if real == a6:
                return alias
        for alias, a4 in self.v4_nodes:
            if alias == a6:
                return a4
        if a6[:12] in (MAPPED, COMPATIBLE) and a6[12:] != bytes(4):
            return a6[12:]
        raise Untranslatable("no binding for the IPv6 address")

    def bind(self, alias4: bytes, a6: bytes) -> AddressMap:
        """The bind phase: a new IP4NODE6 alias for an IPv6 node."""
        if any(a == alias4 for a, _ in self.v6_nodes):
            raise ValueError("the IPv4 alias is already bound")
        return replace(self, v6_nodes=self.v6_nodes + ((alias4, a6),))

    def unbind(self, alias4: bytes) -> AddressMap:
        return replace(self, v6_nodes=tuple(b for b in self.v6_nodes if b[0] != alias4))


# --- the translation (Appendix A) ----------------------------------------------------------------------

@dataclass
class Work:
    """What one translation did: header bytes written and bytes summed for checksums."""

    header_bytes: int = 0
    summed_bytes: int = 0
    fragments: int = 0
    notes: list = field(default_factory=list)


# ICMPv4 -> ICMPv6 (A.3); None: dropped
_UNREACH_4TO6 = {0: (1, 0), 1: (1, 0), 6: (1, 0), 7: (1, 0), 8: (1, 0), 11: (1, 0), 12: (1, 0),
                 2: (4, 1), 3: (1, 4), 4: (2, 0), 5: (1, 2), 9: (1, 1), 10: (1, 1)}
_PTR_4TO6 = {0: 0, 2: 4, 8: 7, 9: 6, 12: 8, 16: 24}
_UNREACH_6TO4 = {0: 1, 1: 10, 2: 5, 3: 1, 4: 3}
_PTR_6TO4 = {v: k for k, v in _PTR_4TO6.items()}


def _icmp4_to_6(msg: bytes, src6: bytes, dst6: bytes, amap: AddressMap, work: Work, *, incremental: bool,
                recursive: bool, fragment: bool) -> bytes:
    t, c, rest = msg[0], msg[1], int.from_bytes(msg[4:8], "big")
    body = msg[8:]
    if t in (8, 0):  # Echo, Echo Reply: only the type changes
        out = bytearray(msg)
        out[0] = 128 if t == 8 else 129
        if incremental and not fragment:
            pseudo = _v6_pseudo(src6, dst6, 58, len(msg))
            _put16(out, 2, _adjust(_u16(msg, 2), msg[0:2], bytes(out[0:2]) + pseudo))
            work.summed_bytes += 4 + len(pseudo)
        elif fragment:  # §2.2.3: the whole message's length is unknown, the checksum cannot be fixed
            work.notes.append("fragmented echo: checksum left wrong")
        else:
            _put16(out, 2, 0)
            _put16(out, 2, pk.checksum(_v6_pseudo(src6, dst6, 58, len(msg)) + bytes(out)))
            work.summed_bytes += len(msg) + 40
        return bytes(out)
    if t == 3:
        if c not in _UNREACH_4TO6:
            raise Untranslatable(f"ICMPv4 unreachable code {c}")
        t6, c6 = _UNREACH_4TO6[c]
        rest6 = 6 if t6 == 4 else 0
        if t6 == 2:  # Packet Too Big: the IPv6 path carries 20 bytes more per packet
            rest6 = (rest & 0xFFFF) + IPV6_HEADER - IPV4_HEADER
    elif t == 11:
        t6, c6, rest6 = 3, c, 0
    elif t == 12:
        t6, c6 = 4, 0
        rest6 = _PTR_4TO6.get(rest >> 24, 0xFFFFFFFF)
    else:
        raise Untranslatable(f"ICMPv4 type {t} is not translated")
    inner = _inner_4to6(body, amap, work) if recursive else body
    head = bytes([t6, c6, 0, 0]) + rest6.to_bytes(4, "big")
    msg6 = head + inner
    csum = pk.checksum(_v6_pseudo(src6, dst6, 58, len(msg6)) + msg6)  # errors: from scratch (§2.2.3)
    work.summed_bytes += len(msg6) + 40
    return msg6[:2] + csum.to_bytes(2, "big") + msg6[4:]


def _inner_4to6(body: bytes, amap: AddressMap, work: Work) -> bytes:
    """The IPv4 packet inside an ICMPv4 error, translated like any header (Figure 6); its TTL is kept."""
    ihl = (body[0] & 0xF) * 4
    proto = 58 if body[9] == 1 else body[9]
    plen = _u16(body, 2) - ihl
    src6, dst6 = amap.to_v6(body[12:16]), amap.to_v6(body[16:20])
    head = ((6 << 28).to_bytes(4, "big") + plen.to_bytes(2, "big") + bytes([proto, body[8]]) + src6 + dst6)
    work.header_bytes += IPV6_HEADER
    return head + body[ihl:]


def _icmp6_to_4(msg: bytes, src6: bytes, dst6: bytes, amap: AddressMap, work: Work, *, incremental: bool,
                recursive: bool, fragment: bool) -> bytes:
    t, c, rest = msg[0], msg[1], int.from_bytes(msg[4:8], "big")
    body = msg[8:]
    if t in (128, 129):  # Echo Request -> 8, Echo Reply -> 0 (A.4 prints them swapped: a slip)
        out = bytearray(msg)
        out[0] = 8 if t == 128 else 0
        if incremental and not fragment:
            pseudo = _v6_pseudo(src6, dst6, 58, len(msg))
            _put16(out, 2, _adjust(_u16(msg, 2), msg[0:2] + pseudo, bytes(out[0:2])))
            work.summed_bytes += 4 + len(pseudo)
        elif fragment:
            work.notes.append("fragmented echo: checksum left wrong")
        else:
            _put16(out, 2, 0)
            _put16(out, 2, pk.checksum(bytes(out)))
            work.summed_bytes += len(msg)
        return bytes(out)
    if t == 1:
        if c not in _UNREACH_6TO4:
            raise Untranslatable(f"ICMPv6 unreachable code {c}")
        t4, c4, rest4 = 3, _UNREACH_6TO4[c], 0
    elif t == 2:  # Packet Too Big -> Fragmentation Needed, MTU less the header difference
        has_frag = len(body) > 6 and body[6] == 44
        t4, c4 = 3, 4
        rest4 = max(68, rest - (IPV6_HEADER - IPV4_HEADER) - (FRAG_HEADER if has_frag else 0))
    elif t == 3:
        t4, c4, rest4 = 11, c, 0
    elif t == 4:
        if c == 1:
            t4, c4, rest4 = 3, 2, 0
        elif c == 2:
            t4, c4, rest4 = 12, 0, 0xFF << 24
        else:
            t4, c4, rest4 = 12, 0, _PTR_6TO4.get(rest, 0xFF) << 24
    else:
        raise Untranslatable(f"ICMPv6 type {t} is not translated (single-hop or unknown)")
    inner = _inner_6to4(body, amap, work) if recursive else body
    msg4 = bytes([t4, c4, 0, 0]) + rest4.to_bytes(4, "big") + inner
    csum = pk.checksum(msg4)
    work.summed_bytes += len(msg4)
    return msg4[:2] + csum.to_bytes(2, "big") + msg4[4:]


def _inner_6to4(body: bytes, amap: AddressMap, work: Work) -> bytes:
    nh, plen, hop = body[6], _u16(body, 4), body[7]
    data, ident, flags = body[40:], 0, 0x4000
    if nh == 44:
        nh, ident, flags = data[0], _u16(data, 6), (_u16(data, 2) & 0xFFF8) >> 3 | (0x2000 if data[3] & 1 else 0)
        data, plen = data[8:], plen - 8
    proto = 1 if nh == 58 else nh
    h = pk.IPv4(_v4_str(amap.to_v4(body[8:24])), _v4_str(amap.to_v4(body[24:40])), proto, plen + IPV4_HEADER,
                ttl=hop, ident=ident, dont_fragment=bool(flags & 0x4000), more_fragments=bool(flags & 0x2000),
                fragment_offset=flags & 0x1FFF).pack()
    work.header_bytes += IPV4_HEADER
    return h + data


def _fix_transport(proto: int, seg: bytes, old_pseudo: bytes, new_pseudo: bytes, work: Work, *,
                   incremental: bool, fragment_offset: int) -> bytes:
    """TCP and UDP: the checksum covers a pseudo-header with the addresses, which changed (§2.2.3)."""
    off = {6: 16, 17: 6}.get(proto)
    if off is None or fragment_offset or len(seg) < off + 2:
        return seg  # not TCP/UDP, or a later fragment: no transport header here
    out = bytearray(seg)
    old = _u16(seg, off)
    if proto == 17 and old == 0:  # an IPv4 UDP datagram without checksum: IPv6 needs one
        incremental = False
    if incremental:
        _put16(out, off, _adjust(old, old_pseudo, new_pseudo) or (0xFFFF if proto == 17 else 0))
        work.summed_bytes += len(old_pseudo) + len(new_pseudo)
    else:
        _put16(out, off, 0)
        c = pk.checksum(new_pseudo + bytes(out))
        _put16(out, off, c or (0xFFFF if proto == 17 else 0))
        work.summed_bytes += len(new_pseudo) + len(seg)
    return bytes(out)


def v4_to_v6(packet: bytes, amap: AddressMap = AddressMap(), *, mtu: int = 1500, incremental: bool = True,
             recursive: bool = True) -> tuple:
    """Translate an IPv4 packet (Appendix A.1, A.3). Returns (packets, work): the IPv6 packets to send
    (several if it had to be fragmented to ``mtu``), or an ICMPv4 Packet Too Big for the sender when
    Don't Fragment is set and the result does not fit.

    Raises
    ------
    Untranslatable
        For packets the translator drops silently (IGMP, untranslated ICMP types, no binding).
    """
    work = Work()
    ihl = (packet[0] & 0xF) * 4
    if packet[0] >> 4 != 4 or ihl < IPV4_HEADER:
        raise ValueError("not an IPv4 packet")
    total, ident, frag, ttl, proto = _u16(packet, 2), _u16(packet, 4), _u16(packet, 6), packet[8], packet[9]
    df, mf, offset = bool(frag & 0x4000), bool(frag & 0x2000), frag & 0x1FFF
    if proto == 2:
        raise Untranslatable("IGMP is dropped")
    src4, dst4 = packet[12:16], packet[16:20]
    src6, dst6 = amap.to_v6(src4), amap.to_v6(dst4)
    payload = packet[ihl:total]
    nh = 58 if proto == 1 else proto
    add_frag = not df or mf or offset != 0
    if proto == 1:
        payload = (_icmp4_to_6(payload, src6, dst6, amap, work, incremental=incremental, recursive=recursive,
                               fragment=mf or offset != 0) if offset == 0 else payload)
    else:
        payload = _fix_transport(proto, payload, _v4_pseudo(src4, dst4, proto, len(payload)),
                                 _v6_pseudo(src6, dst6, proto, len(payload)), work, incremental=incremental,
                                 fragment_offset=offset)
    size = IPV6_HEADER + (FRAG_HEADER if add_frag else 0) + len(payload)
    if size > mtu and df and not add_frag:
        room = mtu - (IPV6_HEADER - IPV4_HEADER)
        err = pk.ICMP(3, 4, room).with_checksum(packet[:ihl + 8])
        reply = pk.IPv4(_v4_str(dst4), _v4_str(src4), 1, IPV4_HEADER + ICMP_HEADER + ihl + 8).pack()
        work.notes.append("packet too big: ICMPv4 returned to the sender")
        return [reply + err.pack() + packet[:ihl + 8]], work
    hop = max(ttl - 1, 0)
    pieces = [(offset, payload, mf)]
    if size > mtu:  # fragment to the next hop's MTU, 8-byte multiples
        room = (mtu - IPV6_HEADER - FRAG_HEADER) // 8 * 8
        pieces = [(offset + k // 8, payload[k:k + room], mf or k + room < len(payload))
                  for k in range(0, len(payload), room)]
    out = []
    for off8, part, more in pieces:
        if add_frag:
            head = _v6_header(len(part) + FRAG_HEADER, 44, hop, src6, dst6)
            fh = bytes([nh, 0]) + (off8 << 3 | int(more)).to_bytes(2, "big") + ident.to_bytes(4, "big")
            out.append(head + fh + part)
        else:
            out.append(_v6_header(len(part), nh, hop, src6, dst6) + part)
    work.header_bytes += len(out) * (IPV6_HEADER + (FRAG_HEADER if add_frag else 0))
    work.fragments = len(out) if len(out) > 1 else 0
    return out, work


def _v6_header(plen: int, nh: int, hop: int, src6: bytes, dst6: bytes) -> bytes:
    return (6 << 28).to_bytes(4, "big") + plen.to_bytes(2, "big") + bytes([nh, hop]) + src6 + dst6


def v6_to_v4(packet: bytes, amap: AddressMap = AddressMap(), *, incremental: bool = True,
             recursive: bool = True) -> tuple:
    """Translate an IPv6 packet (Appendix A.2, A.4): (IPv4 packet, work). Extension headers other than
    the Fragment header are skipped and their bytes taken off the length.

    Raises
    ------
    Untranslatable
        For packets the translator drops silently.
    """
    work = Work()
    if packet[0] >> 4 != 6:
        raise ValueError("not an IPv6 packet")
    plen, nh, hop = _u16(packet, 4), packet[6], packet[7]
    src6, dst6 = packet[8:24], packet[24:40]
    src4, dst4 = amap.to_v4(src6), amap.to_v4(dst6)
    rest, ident, df, mf, offset, fragment = packet[40:40 + plen], 0, True, False, 0, False
    while nh in (0, 43, 60, 44):  # hop-by-hop, routing, destination options; fragment
        if nh == 44:
            ident, offset, mf = int.from_bytes(rest[4:8], "big") & 0xFFFF, _u16(rest, 2) >> 3, bool(rest[3] & 1)
            df, fragment = False, True
            nh, rest = rest[0], rest[8:]
        else:
            n = (rest[1] + 1) * 8
            nh, rest = rest[0], rest[n:]
    proto = 1 if nh == 58 else nh
    if proto == 58 or nh == 58:
        rest = (_icmp6_to_4(rest, src6, dst6, amap, work, incremental=incremental, recursive=recursive,
                            fragment=mf or offset != 0) if offset == 0 else rest)
    else:
        rest = _fix_transport(proto, rest, _v6_pseudo(src6, dst6, proto, len(rest)),
                              _v4_pseudo(src4, dst4, proto, len(rest)), work, incremental=incremental,
                              fragment_offset=offset)
    head = pk.IPv4(_v4_str(src4), _v4_str(dst4), proto, IPV4_HEADER + len(rest), ttl=max(hop - 1, 0),
                   ident=ident, dont_fragment=df, more_fragments=mf, fragment_offset=offset).pack()
    work.header_bytes += IPV4_HEADER
    if fragment:
        work.notes.append("fragment")
    return head + rest, work


# --- packets of the experiments ---------------------------------------------------------------------

V4_HOST, V6_HOST_ALIAS = bytes([128, 95, 2, 15]), bytes([10, 0, 200, 23])  # Figure 4's example
V6_HOST = bytes.fromhex("5f02" + "00" * 10 + "971bfea2")


def testbed_map() -> AddressMap:
    """Figure 4's mapping: the IPv6 host 5f02::971b:fea2 has the IPv4 alias 10.0.200.23."""
    return AddressMap(v6_nodes=((V6_HOST_ALIAS, V6_HOST),))


def echo_v4(data_bytes: int, *, reply: bool = False, dont_fragment: bool = False, ident: int = 1) -> bytes:
    """An ICMPv4 Echo (ping) with ``data_bytes`` of data, from the IPv4 host to the IPv6 host's alias."""
    body = bytes((k * 7) & 0xFF for k in range(data_bytes))
    icmp = pk.ICMP(0 if reply else 8, 0, (ident << 16) | 1).with_checksum(body)
    ip = pk.IPv4(_v4_str(V4_HOST), _v4_str(V6_HOST_ALIAS), 1, IPV4_HEADER + ICMP_HEADER + data_bytes,
                 ident=ident, dont_fragment=dont_fragment)
    return ip.pack() + icmp.pack() + body


def tcp_v4(payload_bytes: int, *, dont_fragment: bool = True) -> bytes:
    """A TCP segment of ``payload_bytes`` from the IPv4 host, with a correct checksum."""
    src, dst = _v4_str(V4_HOST), _v4_str(V6_HOST_ALIAS)
    body = bytes((k * 13) & 0xFF for k in range(payload_bytes))
    head = bytearray((5001).to_bytes(2, "big") + (5002).to_bytes(2, "big") + (1).to_bytes(4, "big") +
                     (1).to_bytes(4, "big") + bytes([0x50, 0x10]) + (8760).to_bytes(2, "big") + bytes(4))
    ip = pk.IPv4(src, dst, 6, IPV4_HEADER + 20 + payload_bytes, dont_fragment=dont_fragment)
    _put16(head, 16, pk.checksum(pk.ipv4_pseudo_header(ip, 20 + payload_bytes) + bytes(head) + body))
    return ip.pack() + bytes(head) + body


def translation_cost_bytes(p: Params) -> dict:
    """Bytes the translator sums per packet, as a + b x (IP packet size), for echoes and TCP segments:
    run on two sizes of each (the linear form is exact for both checksum methods)."""
    out = {}
    for kind, make, sizes in (("echo", echo_v4, (64, 1024)), ("tcp", tcp_v4, (0, 1000))):
        pts = []
        for n in sizes:
            pkt = make(n)
            _, w = v4_to_v6(pkt, testbed_map(), incremental=p.incremental_checksum)
            pts.append((len(pkt), w.summed_bytes))
        (x0, y0), (x1, y1) = pts
        b = (y1 - y0) / (x1 - x0)
        out[kind] = (y0 - b * x0, b)
    return out


def v6_growth(p: Params, kind: str) -> int:
    """Bytes the translator adds to a packet of the experiment: 20, or 28 with a Fragment header (ping's
    IPv4 echoes leave Don't Fragment clear; TCP sets it for path-MTU discovery)."""
    pkt = echo_v4(64, dont_fragment=p.ping_dont_fragment) if kind == "echo" else tcp_v4(100)
    out, _ = v4_to_v6(pkt, testbed_map(), incremental=p.incremental_checksum)
    return len(out[0]) - len(pkt)


# --- the parameters -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds or nanoseconds on the 200 MHz Pentium Pro PCs of §3."""

    clock_hz: float = from_catalog(PPRO, "clock_hz")
    # the testbed (§3, §3.1)
    ping_sizes: tuple = stated(PING_SIZES, "§3.1: ping packets ranging in size from 64 bytes to 1440 bytes; "
                                           "the sizes between are lost with Table 3 (assumed: powers of two)")
    ping_header_bytes: int = assumed(28, "ping's size is the ICMP data (NT's ping -l): an IPv4 packet adds 8 "
                                         "bytes of ICMP and 20 of IP header, so 1440 still fits IPv6's 1500",
                                     ge=0)
    ping_dont_fragment: bool = assumed(False, "ping leaves Don't Fragment clear, as NT's and Linux's did by "
                                              "default: the translator adds a Fragment header (§2.2.1)")
    wire_delay_us: float = assumed(1.0, "a few metres of cable and a hub or a NIC's latency")
    mss: int = assumed(1460, "TCP's segment on Ethernet's 1500-byte MTU", ge=536)
    tcp_window_segments: int = assumed(6, "NT 4.0's default receive window on Ethernet, 8760 bytes (six "
                                          "segments); the gateway's extra delay stays well inside it", ge=1)
    delayed_ack: bool = assumed(True, "RFC 1122 delayed ACKs: an ACK every second full segment")
    ttcp_bytes: int = stated(64 * 2 ** 20, "§3.1: sending 64 Mbytes using TCP", ge=1)
    # the costs
    host_ping_us: float = calibrated(52.10991, "an end host's cost per ping traversal (send or receive: system "
                                             "call or interrupt, ICMP/IP, driver, process wake-up)", gt=0)
    host_stream_us: float = assumed(20.0, "an end host's TCP/IP and driver work per segment when streaming, "
                                          "some 4000 cycles at 200 MHz (no wake-up per packet)", ge=0)
    host_byte_ns: float = assumed(30.0, "an end host's copy and checksum per byte: a 50 MB/s copy and a "
                                        "checksum at about 100 MB/s on a 440FX Pentium Pro", ge=0)
    forward_us: float = calibrated(60.39981, "the gateway's cost per forwarded packet: NT's receive path, "
                                           "buffer allocation, IP forwarding and the transmit path", gt=0)
    copy_ns_per_byte: float = assumed(20.0, "NT's copy of the whole packet (§3.1) at memcpy speed, about "
                                            "50 MB/s on a 440FX Pentium Pro (the lab's value, atc98_cho)", ge=0)
    translate_us: float = calibrated(10.82, "the translator's extra cost per packet: parse, map the "
                                             "addresses, build the new header, hand it to the other IP stack",
                                     ge=0)
    checksum_ns_per_byte: float = assumed(10.0, "the Internet checksum at about 100 MB/s on a Pentium Pro, "
                                                "one add per 16-bit word with carries", ge=0)
    # the NICs' bus (§3: 3Com 3c905 bus-masters on 32-bit 33 MHz PCI)
    pci_read_wait_cycles: int = assumed(8, "a 440FX host bridge's initial latency for a DMA read from memory",
                                        ge=0)
    pci_write_wait_cycles: int = assumed(2, "a posted write into the host bridge", ge=0)
    pci_burst_bytes: int = assumed(256, "a bus-master's latency timer of some 64 clocks", ge=4)
    # the mechanisms (switches, so a counterfactual is a change of parameters)
    copy_on_receive: bool = stated(True, "§3.1: NT's receive architecture: the forwarder allocates a buffer "
                                         "and copies the packet in its entirety")
    incremental_checksum: bool = stated(True, "§2.2.3: TCP, UDP and ICMP Echo checksums adjusted incrementally")
    recursive_icmp: bool = stated(True, "§2.2.2: the packet inside an ICMP error is translated recursively")

    def __post_init__(self):
        super().__post_init__()
        if not self.ping_sizes or min(self.ping_sizes) < 0 or max(self.ping_sizes) + 48 + 8 > 1500:
            raise ValueError(f"ping_sizes must be data sizes that fit a 1500-byte IPv6 packet, got "
                             f"{self.ping_sizes!r}")

    @property
    def pci(self) -> PciTiming:
        return PciTiming(self.pci_read_wait_cycles, self.pci_write_wait_cycles, self.pci_burst_bytes)


CALIBRATION = (
    Fit("host_ping_us", "table3", "64", "v4_v4_us", (10.0, 150.0)),
    Fit("forward_us", "table3", "64", "fwd_us", (5.0, 200.0)),
    Fit("translate_us", "table3", "64", "napt_us", (0.0, 100.0)),
)
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("unix-receive", {"copy_on_receive": False},
                   "a receive path that hands the driver's buffer on (most UNIX systems, §3.1): no copy"),
    Counterfactual("free-translation", {"translate_us": 0.0, "checksum_ns_per_byte": 0.0},
                   "translation costs nothing beyond forwarding"),
    Counterfactual("stop-and-wait", {"tcp_window_segments": 1, "delayed_ack": False},
                   "a TCP window of one segment: the gateway's store-and-forward delay is not hidden"),
    Counterfactual("full-checksum", {"incremental_checksum": False},
                   "every checksum recomputed over the whole packet instead of adjusted (§2.2.3)"),
    Counterfactual("no-recursion", {"recursive_icmp": False},
                   "the packet inside an ICMP error is copied untranslated"),
)


# --- the testbed on the packet network ---------------------------------------------------------------

def _gateway_costs(p: Params, config: str, kind: str) -> tuple:
    """(seconds per packet, seconds per byte) of the gateway's CPU for ``config``."""
    if config not in ("fwd", "napt"):
        return 0.0, 0.0
    per_pkt = p.forward_us * us
    per_byte = p.copy_ns_per_byte * 1e-9 if p.copy_on_receive else 0.0
    if config == "napt":
        a, b = translation_cost_bytes(p)[kind]
        per_pkt += p.translate_us * us + a * p.checksum_ns_per_byte * 1e-9
        per_byte += b * p.checksum_ns_per_byte * 1e-9
    return per_pkt, per_byte


def _build(p: Params, config: str, mbps: float, kind: str, host_s: float, rng) -> tuple:
    """The hosts (and gateway) of ``config`` on links of ``mbps``: (network, a, b, gateway or None).
    ``a`` is the IPv6 host where there is one; its links carry the translator's extra bytes."""
    if config not in CONFIGS:
        raise ValueError(f"config must be one of {CONFIGS}, got {config!r}")
    net = Network(rng=rng)
    host_b = p.host_byte_ns * 1e-9
    a = net.host("a", cpu_packet_s=host_s, cpu_byte_s=host_b)
    b = net.host("b", cpu_packet_s=host_s, cpu_byte_s=host_b)
    bps, delay = mbps * 1e6, p.wire_delay_us * us
    v6_extra = IPV6_HEADER - IPV4_HEADER
    if config in ("v4_v4", "v6_v6"):
        extra = v6_extra if config == "v6_v6" else 0
        net.one_way(a, b, bps, delay, kind="ethernet", extra_bytes=extra)
        net.one_way(b, a, bps, delay, kind="ethernet", extra_bytes=extra)
        net.route_shortest()
        return net, a, b, None
    g_pkt, g_byte = _gateway_costs(p, config, kind)
    g = net.router("gateway", cpu_packet_s=g_pkt, cpu_byte_s=g_byte)
    extra = v6_growth(p, kind) if config == "napt" else 0
    net.one_way(a, g, bps, delay, kind="ethernet", extra_bytes=extra)
    net.one_way(g, a, bps, delay, kind="ethernet", extra_bytes=extra)
    net.one_way(g, b, bps, delay, kind="ethernet")
    net.one_way(b, g, bps, delay, kind="ethernet")
    net.route_shortest()
    return net, a, b, g


def _dma_s(p: Params, nbytes: int) -> float:
    """A NIC's bus-master DMA of a packet in (a write to memory) and out (a read) over PCI."""
    return p.pci.transfer_s(nbytes, write=True) + p.pci.transfer_s(nbytes, write=False)


def ping_rtt_us(p: Params, config: str, data_bytes: int, *, rng=0) -> float:
    """One ping round trip (microseconds) through ``config`` on 100 Mbit/s Ethernet, simulated: one echo
    in flight at a time, every node's CPU charged per packet, plus the NICs' DMA at every store-and-
    forward stop (the simulated link carries only the wire's time)."""
    size = data_bytes + p.ping_header_bytes
    net, a, b, g = _build(p, config, 100, "echo", p.host_ping_us * us, rng)
    f = net.udp(a, b, pattern="rpc", size=size, reply_size=size, service_s=0.0, outstanding=1)
    net.run(1.0)  # far more than enough for the first replies; the rate is set by the round trip
    s = net.flows().loc[f]
    rtt = (s["last_s"] - s["first_s"]) / (s["completed"] - 1)
    hops = 2 if g is None else 4  # per hop: DMA out of the sender's memory, into the receiver's
    return (rtt + hops * _dma_s(p, size)) / us


def tcp_stream(p: Params, config: str, mbps: float, *, seconds: float = 2.0, rng=0) -> dict:
    """ttcp through ``config`` at ``mbps``: KB/s of payload and the gateway's CPU share."""
    net, a, b, g = _build(p, config, mbps, "tcp", p.host_stream_us * us, rng)
    f = net.tcp(a, b, bytes=-1, mss=p.mss, header_bytes=40, max_window=p.tcp_window_segments,
                delayed_ack=p.delayed_ack, initial_cwnd=2)
    net.run(seconds)
    s = net.flows().loc[f]
    kbps = s["goodput_bps"] / 8 / KB
    cpu = float("nan")
    pci = float("nan")
    if g is not None:
        q = net.queues()
        out = q[q["from"] == "gateway"]
        g_pkt, g_byte = _gateway_costs(p, config, "tcp")
        pkts = out["departures"].sum()
        data = s["delivered_packets"]
        nbytes = data * (p.mss + 40) + (pkts - data) * 40  # the gateway forwards data one way, ACKs back
        cpu = 100 * (pkts * g_pkt + nbytes * g_byte) / net.now
        pci = 100 * (data * _dma_s(p, p.mss + 40) + (pkts - data) * _dma_s(p, 40)) / net.now  # in and out
    return {"kbytes_per_s": kbps, "gateway_cpu_pct": cpu, "gateway_pci_pct": pci}


# --- the artifacts -------------------------------------------------------------------------------------

def table3(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Table 3: ping round trips (us) on 100 Mbit/s Ethernet. Rows: ICMP data bytes. Columns:
    v4_v4_us, v6_v6_us, fwd_us, napt_us (direct IPv4, direct IPv6, NT's forwarder, the translator) and
    napt_minus_fwd_us."""
    p = params or Params()
    gen = make_rng(rng)
    sizes = p.ping_sizes if not quick else (p.ping_sizes[0], p.ping_sizes[-1])
    rows = {}
    for n in sizes:
        rows[n] = {f"{c}_us": ping_rtt_us(p, c, n, rng=gen.spawn(1)[0]) for c in CONFIGS}
    df = pd.DataFrame.from_dict(rows, orient="index").rename_axis("size_bytes")
    df["napt_minus_fwd_us"] = df["napt_us"] - df["fwd_us"]
    return df


def table4(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Table 4: ttcp TCP bandwidth (KB/s, 1024 bytes). Rows: '10 Mbps', '100 Mbps'. Columns:
    v4_v4_kbytes_per_s, v6_v6_kbytes_per_s, fwd_kbytes_per_s, napt_kbytes_per_s, the gateway's CPU
    share (fwd_cpu_pct, napt_cpu_pct), its PCI bus share (fwd_pci_pct) and napt_over_fwd."""
    p = params or Params()
    gen = make_rng(rng)
    seconds = 0.5 if quick else 2.0
    rows = {}
    for mbps in LINKS_MBPS:
        r = {}
        for c in CONFIGS:
            res = tcp_stream(p, c, mbps, seconds=seconds * (10 if mbps == 10 else 1), rng=gen.spawn(1)[0])
            r[f"{c}_kbytes_per_s"] = res["kbytes_per_s"]
            if c in ("fwd", "napt"):
                r[f"{c}_cpu_pct"] = res["gateway_cpu_pct"]
            if c == "fwd":
                r["fwd_pci_pct"] = res["gateway_pci_pct"]
        rows[f"{mbps} Mbps"] = r
    df = pd.DataFrame.from_dict(rows, orient="index").rename_axis("link")
    df["napt_over_fwd"] = df["napt_kbytes_per_s"] / df["fwd_kbytes_per_s"]
    df["fwd_over_v4_v4"] = df["fwd_kbytes_per_s"] / df["v4_v4_kbytes_per_s"]
    return df


#: Table 5's error-causing actions, as the ICMPv6 error the IPv6 network returns for an IPv4 host's
#: packet (type, code, rest of header), translated back to ICMPv4 for the IPv4 host.
TABLE5_ACTIONS = {
    "port unreachable": (1, 4, 0),
    "packet too big": (2, 0, 1280),
    "fragment reassembly time exceeded": (3, 1, 0),
    "parameter problem": (4, 0, 7),
}


def table5(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Table 5: ICMP errors provoked on purpose, through the translator. An IPv4 host's UDP datagram is
    translated to IPv6; the IPv6 side answers with an ICMPv6 error quoting it, which is translated back.
    Columns: v4_type, v4_code, v4_pointer_or_mtu, inner_matches (1 if the quoted header is the
    IPv4 host's own packet, so its stack can match the error), checksum_ok (1 if the ICMPv4 checksum
    verifies)."""
    p = params or Params()
    amap = testbed_map()
    body = bytes(range(32))
    udp = pk.UDP(5001, 5002, 8 + len(body))
    ip = pk.IPv4(_v4_str(V4_HOST), _v4_str(V6_HOST_ALIAS), 17, IPV4_HEADER + 8 + len(body), ttl=30,
                 dont_fragment=True)
    sent = ip.pack() + udp.with_checksum(pk.ipv4_pseudo_header(ip, 8 + len(body)), body).pack() + body
    v6, _ = v4_to_v6(sent, amap, incremental=p.incremental_checksum)
    rows = {}
    for name, (t, c, rest) in TABLE5_ACTIONS.items():
        quoted = v6[0][:IPV6_HEADER + 8]
        err = bytes([t, c, 0, 0]) + rest.to_bytes(4, "big") + quoted
        err = err[:2] + pk.checksum(_v6_pseudo(V6_HOST, MAPPED + V4_HOST, 58, len(err)) + err).to_bytes(2, "big") + err[4:]
        pkt6 = _v6_header(len(err), 58, 64, V6_HOST, MAPPED + V4_HOST) + err
        v4, _ = v6_to_v4(pkt6, amap, incremental=p.incremental_checksum, recursive=p.recursive_icmp)
        icmp = v4[IPV4_HEADER:]
        inner = icmp[8:]
        rest4 = int.from_bytes(icmp[4:8], "big")
        rows[name] = {"v4_type": icmp[0], "v4_code": icmp[1],
                      "v4_pointer_or_mtu": rest4 >> 24 if icmp[0] == 12 else rest4 & 0xFFFF,
                      # the host matches an error to its socket by addresses, protocol and ports
                      "inner_matches": int(inner[0] == 0x45 and inner[12:20] == sent[12:20] and inner[9] == 17
                                           and inner[20:24] == sent[20:24]),
                      "checksum_ok": int(pk.checksum(icmp) == 0)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("error")


# --- then vs now ------------------------------------------------------------------------------------

_C_DECLS = r"""
static uint8_t pkt[1500], out[1520], buf[1520];
static uint32_t sum16(const uint8_t *p, long n) { uint32_t s = 0; for (long i = 0; i + 1 < n; i += 2) s += (uint32_t)p[i] << 8 | p[i+1]; if (n & 1) s += (uint32_t)p[n-1] << 8; while (s >> 16) s = (s & 0xffff) + (s >> 16); return s; }
static uint16_t adjust(uint16_t c, uint32_t removed, uint32_t added) { uint32_t s = (uint16_t)~c + (uint16_t)~removed + added; while (s >> 16) s = (s & 0xffff) + (s >> 16); return (uint16_t)~s; }
static const uint8_t prefix[12] = {0,0,0,0,0,0,0,0,0,0,0xff,0xff};
/* Appendix A.1 for a TCP segment of len bytes (DF set): IPv6 header, mapped addresses, checksum fixed. */
static long v4_to_v6(long len, int full) {
    long ihl = (pkt[0] & 15) * 4, plen = len - ihl;
    out[0] = 0x60; out[1] = out[2] = out[3] = 0; out[4] = plen >> 8; out[5] = plen & 255;
    out[6] = pkt[9] == 1 ? 58 : pkt[9]; out[7] = pkt[8] - 1;
    for (int i = 0; i < 12; i++) { out[8+i] = prefix[i]; out[24+i] = prefix[i]; }
    for (int i = 0; i < 4; i++) { out[20+i] = pkt[12+i]; out[36+i] = pkt[16+i]; }
    for (long i = 0; i < plen; i++) out[40+i] = pkt[ihl+i];
    uint8_t *tcp = out + 40;
    if (full) { tcp[16] = tcp[17] = 0; uint32_t s = sum16(out + 8, 32) + (uint32_t)plen + 6 + sum16(tcp, plen);
                while (s >> 16) s = (s & 0xffff) + (s >> 16); s = (uint16_t)~s; tcp[16] = s >> 8; tcp[17] = s & 255; }
    else { uint16_t c = (uint16_t)(tcp[16] << 8 | tcp[17]); c = adjust(c, sum16(pkt + 12, 8), sum16(out + 8, 32));
           tcp[16] = c >> 8; tcp[17] = c & 255; }
    return 40 + plen;
}
"""
_C_SETUP = (r"for (int i = 0; i < 1500; i++) pkt[i] = (uint8_t)(i * 13); pkt[0] = 0x45; pkt[8] = 64; "
            r"pkt[9] = 6; pkt[2] = {len} >> 8; pkt[3] = {len} & 255;")


@one_core()
def measure_now(*, quick: bool = False) -> pd.DataFrame:
    """Time, on this machine, the Appendix A translation of a TCP segment's header with the incremental
    checksum and with a full one, and NT's forwarding copy, for 64- and 1500-byte packets (C snippets,
    lmbench's harness). Rows: (operation, packet bytes); columns ns_per_packet, available, reason."""
    rows = []
    sizes = (1500,) if quick else (64, 1500)
    ops = {"translate, incremental checksum": "sink += v4_to_v6({len}, 0) + out[57];",
           "translate, full checksum": "sink += v4_to_v6({len}, 1) + out[57];",
           "forwarding copy (memcpy)": "for (long k = 0; k < {len}; k++) buf[k] = pkt[k]; sink += buf[{len} - 1];"}
    for n in sizes:
        for name, body in ops.items():
            m = measure("c", body.format(len=n), name=f"{name} {n}", decls=_C_DECLS,
                        setup=_C_SETUP.format(len=n), tries=3 if quick else 5,
                        enough_s=0.005 if quick else None)
            rows.append({"operation": name, "packet_bytes": n, "ns_per_packet": m.per_op_s * 1e9,
                         "available": m.available, "reason": m.reason})
    return pd.DataFrame(rows).set_index(["operation", "packet_bytes"])


def then_and_now(now: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """The simulated Pentium Pro's per-packet costs beside this machine's: rows as :func:`measure_now`'s;
    columns then_ns (the model: translation's fixed cost plus its checksum bytes, or the copy), now_ns
    and speedup."""
    p = params or Params()
    rows = []
    for (op, n), r in now.iterrows():
        if op.startswith("forwarding copy"):
            then = p.copy_ns_per_byte * n
        else:
            q = replace(p, incremental_checksum=not op.endswith("full checksum"))
            pkt = tcp_v4(n - IPV4_HEADER - 20)
            _, w = v4_to_v6(pkt, testbed_map(), incremental=q.incremental_checksum)
            then = p.translate_us * 1e3 + w.summed_bytes * p.checksum_ns_per_byte
        rows.append({"operation": op, "packet_bytes": n, "then_ns": then, "now_ns": r["ns_per_packet"],
                     "speedup": then / r["ns_per_packet"] if r["available"] else float("nan")})
    return pd.DataFrame(rows).set_index(["operation", "packet_bytes"])


def ping_growth(params: Params | None = None) -> pd.DataFrame:
    """How the translator grows an MTU-sized IPv4 packet (§2.2.1): IPv6 packets produced and bytes on
    the wire for a 1500-byte IPv4 datagram with Don't Fragment clear and set."""
    p = params or Params()
    rows = {}
    for df_flag in (False, True):
        pkt = tcp_v4(1500 - IPV4_HEADER - 20, dont_fragment=df_flag)
        out, w = v4_to_v6(pkt, testbed_map(), incremental=p.incremental_checksum)
        rows["DF set" if df_flag else "DF clear"] = {
            "packets_out": len(out), "bytes_out": sum(len(o) for o in out),
            "wire_bytes_out": sum(wire_bytes("ethernet", len(o)) for o in out),
            "result": "ICMPv4 packet too big" if out and out[0][0] >> 4 == 4 else "IPv6"}
    return pd.DataFrame.from_dict(rows, orient="index")


__all__ = ["Params", "CALIBRATION", "INPUTS", "COUNTERFACTUALS", "AddressMap", "Untranslatable", "v4_to_v6",
           "v6_to_v4", "table3", "table4", "table5", "measure_now", "then_and_now", "ping_growth"]
