"""Packet headers as bytes: IPv4, IPv6, ICMP, ICMPv6, UDP; the Internet checksum, its incremental
update, fragmentation and IP-in-IP tunnels.

Headers are dataclasses with ``pack()`` and ``unpack()``; the tests check
every codec against scapy. The checksum is RFC 1071's one's-complement sum;
:func:`checksum_update` is RFC 1624's incremental form (equation 3,
``HC' = ~(~HC + ~m + m')``), which a translator or a NAT uses to fix a
checksum after rewriting a field without summing the whole packet again.

>>> h = IPv4(src="10.0.0.1", dst="10.0.0.2", proto=17, total_length=28, ttl=64)
>>> IPv4.unpack(h.pack()).checksum_ok()
True
"""
from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, replace

PROTO = {"icmp": 1, "ipip": 4, "tcp": 6, "udp": 17, "ipv6": 41, "frag6": 44, "icmpv6": 58}


def checksum(data: bytes) -> int:
    """The Internet checksum of ``data`` (RFC 1071): the one's complement of the one's-complement sum
    of its 16-bit words (an odd byte is padded with zero)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def checksum_update(old_checksum: int, old_word: int, new_word: int) -> int:
    """RFC 1624 eqn 3: the checksum after one 16-bit word changes from ``old_word`` to ``new_word``."""
    total = (~old_checksum & 0xFFFF) + (~old_word & 0xFFFF) + (new_word & 0xFFFF)
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def checksum_update_bytes(old_checksum: int, old: bytes, new: bytes) -> int:
    """RFC 1624 over several words: ``old`` replaced by ``new`` (same even length, word-aligned)."""
    if len(old) != len(new) or len(old) % 2:
        raise ValueError("old and new must be the same even number of bytes")
    for k in range(0, len(old), 2):
        old_checksum = checksum_update(old_checksum, struct.unpack_from("!H", old, k)[0],
                                       struct.unpack_from("!H", new, k)[0])
    return old_checksum


@dataclass(frozen=True)
class IPv4:
    """An IPv4 header without options (20 bytes)."""

    src: str
    dst: str
    proto: int
    total_length: int
    ttl: int = 64
    ident: int = 0
    tos: int = 0
    dont_fragment: bool = False
    more_fragments: bool = False
    fragment_offset: int = 0  # in 8-byte units
    checksum: int | None = None  # None: computed on pack()

    LENGTH = 20

    def pack(self) -> bytes:
        flags = (0x4000 if self.dont_fragment else 0) | (0x2000 if self.more_fragments else 0)
        head = struct.pack("!BBHHHBBH4s4s", 0x45, self.tos, self.total_length, self.ident,
                           flags | self.fragment_offset, self.ttl, self.proto, 0,
                           ipaddress.IPv4Address(self.src).packed, ipaddress.IPv4Address(self.dst).packed)
        c = checksum(head) if self.checksum is None else self.checksum
        return head[:10] + struct.pack("!H", c) + head[12:]

    @classmethod
    def unpack(cls, data: bytes) -> IPv4:
        vihl, tos, length, ident, frag, ttl, proto, csum, src, dst = struct.unpack_from("!BBHHHBBH4s4s", data)
        if vihl >> 4 != 4 or vihl & 0xF != 5:
            raise ValueError(f"not an option-less IPv4 header (version/IHL byte {vihl:#x})")
        return cls(str(ipaddress.IPv4Address(src)), str(ipaddress.IPv4Address(dst)), proto, length, ttl, ident,
                   tos, bool(frag & 0x4000), bool(frag & 0x2000), frag & 0x1FFF, csum)

    def checksum_ok(self) -> bool:
        return checksum(self.pack()) == 0


@dataclass(frozen=True)
class IPv6:
    """An IPv6 fixed header (40 bytes)."""

    src: str
    dst: str
    next_header: int
    payload_length: int
    hop_limit: int = 64
    traffic_class: int = 0
    flow_label: int = 0

    LENGTH = 40

    def pack(self) -> bytes:
        first = (6 << 28) | (self.traffic_class << 20) | self.flow_label
        return struct.pack("!IHBB16s16s", first, self.payload_length, self.next_header, self.hop_limit,
                           ipaddress.IPv6Address(self.src).packed, ipaddress.IPv6Address(self.dst).packed)

    @classmethod
    def unpack(cls, data: bytes) -> IPv6:
        first, plen, nh, hlim, src, dst = struct.unpack_from("!IHBB16s16s", data)
        if first >> 28 != 6:
            raise ValueError(f"not an IPv6 header (version {first >> 28})")
        return cls(str(ipaddress.IPv6Address(src)), str(ipaddress.IPv6Address(dst)), nh, plen, hlim,
                   (first >> 20) & 0xFF, first & 0xFFFFF)

    def pseudo_header(self, upper_length: int, next_header: int) -> bytes:
        """RFC 8200 §8.1's pseudo-header for an upper-layer checksum."""
        return (ipaddress.IPv6Address(self.src).packed + ipaddress.IPv6Address(self.dst).packed +
                struct.pack("!IxxxB", upper_length, next_header))


def ipv4_pseudo_header(ip: IPv4, upper_length: int) -> bytes:
    return (ipaddress.IPv4Address(ip.src).packed + ipaddress.IPv4Address(ip.dst).packed +
            struct.pack("!xBH", ip.proto, upper_length))


@dataclass(frozen=True)
class UDP:
    """A UDP header (8 bytes); the checksum covers a pseudo-header, the header and the payload."""

    sport: int
    dport: int
    length: int
    checksum: int = 0

    LENGTH = 8

    def pack(self) -> bytes:
        return struct.pack("!HHHH", self.sport, self.dport, self.length, self.checksum)

    @classmethod
    def unpack(cls, data: bytes) -> UDP:
        return cls(*struct.unpack_from("!HHHH", data))

    def with_checksum(self, pseudo: bytes, payload: bytes) -> UDP:
        c = checksum(pseudo + replace(self, checksum=0).pack() + payload)
        return replace(self, checksum=c or 0xFFFF)  # a computed zero is sent as all ones


@dataclass(frozen=True)
class ICMP:
    """An ICMP (v4) or ICMPv6 header: type, code, checksum and the 4-byte rest of header."""

    type: int
    code: int
    rest: int = 0
    checksum: int = 0

    LENGTH = 8

    def pack(self) -> bytes:
        return struct.pack("!BBHI", self.type, self.code, self.checksum, self.rest)

    @classmethod
    def unpack(cls, data: bytes) -> ICMP:
        t, c, csum, rest = struct.unpack_from("!BBHI", data)
        return cls(t, c, rest, csum)

    def with_checksum(self, body: bytes, pseudo: bytes = b"") -> ICMP:
        """ICMPv4 sums the message alone; ICMPv6 adds the IPv6 pseudo-header."""
        return replace(self, checksum=checksum(pseudo + replace(self, checksum=0).pack() + body))


def fragment_ipv4(header: IPv4, payload: bytes, mtu: int) -> list:
    """Split a datagram into fragments that fit ``mtu`` (payloads in multiples of 8 bytes but the
    last); returns [(header, payload)] with offsets, More Fragments flags and checksums set.

    Raises
    ------
    ValueError
        If the datagram has Don't Fragment set and does not fit, or the MTU leaves no room.
    """
    room = (mtu - IPv4.LENGTH) // 8 * 8
    if room < 8:
        raise ValueError(f"an MTU of {mtu} leaves no room for a fragment's data")
    if IPv4.LENGTH + len(payload) <= mtu:
        return [(replace(header, total_length=IPv4.LENGTH + len(payload), checksum=None), payload)]
    if header.dont_fragment:
        raise ValueError("the datagram does not fit the MTU and has Don't Fragment set")
    out = []
    for start in range(0, len(payload), room):
        part = payload[start:start + room]
        last = start + room >= len(payload)
        h = replace(header, total_length=IPv4.LENGTH + len(part), fragment_offset=header.fragment_offset + start // 8,
                    more_fragments=header.more_fragments or not last, checksum=None)
        out.append((h, part))
    return out


def reassemble_ipv4(fragments) -> tuple:
    """The datagram from its fragments (in any order): (header, payload).

    Raises
    ------
    ValueError
        If a piece is missing or the fragments belong to different datagrams.
    """
    frags = sorted(fragments, key=lambda f: f[0].fragment_offset)
    if not frags:
        raise ValueError("no fragments")
    key = {(h.src, h.dst, h.ident, h.proto) for h, _ in frags}
    if len(key) != 1:
        raise ValueError("the fragments belong to different datagrams")
    data, expect = b"", 0
    for h, part in frags:
        if h.fragment_offset * 8 != expect:
            raise ValueError(f"a fragment is missing at byte {expect}")
        data += part
        expect += len(part)
    if frags[-1][0].more_fragments:
        raise ValueError("the last fragment is missing")
    head = replace(frags[0][0], total_length=IPv4.LENGTH + len(data), more_fragments=False, fragment_offset=0,
                   checksum=None)
    return head, data


def encapsulate(inner: bytes, src: str, dst: str, *, ttl: int = 64, ident: int = 0) -> bytes:
    """An IP-in-IP tunnel packet (RFC 2003): an outer IPv4 header (protocol 4) around ``inner``."""
    outer = IPv4(src, dst, PROTO["ipip"], IPv4.LENGTH + len(inner), ttl=ttl, ident=ident)
    return outer.pack() + inner


def decapsulate(packet: bytes) -> tuple:
    """(outer header, inner packet) of an IP-in-IP packet."""
    outer = IPv4.unpack(packet)
    if outer.proto != PROTO["ipip"]:
        raise ValueError(f"not an IP-in-IP packet (protocol {outer.proto})")
    return outer, packet[IPv4.LENGTH:outer.total_length]
