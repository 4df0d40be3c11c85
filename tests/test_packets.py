"""Packet codecs and checksums against scapy: headers byte for byte, checksums, RFC 1624's
incremental update against a full recomputation, fragmentation and reassembly, IP-in-IP."""
import ipaddress
import os
import random

import pytest

from pysim.network.packets import (ICMP, IPv4, IPv6, UDP, checksum_update_bytes, decapsulate,
                                   encapsulate, fragment_ipv4, ipv4_pseudo_header, reassemble_ipv4)

scapy = pytest.importorskip("scapy.all")


def test_ipv4_udp_headers_and_checksums_are_scapys():
    payload = os.urandom(37)
    ip = IPv4("192.0.2.1", "198.51.100.7", 17, 20 + 8 + 37, ttl=33, ident=4242)
    udp = UDP(5353, 53, 8 + 37).with_checksum(ipv4_pseudo_header(ip, 8 + 37), payload)
    ours = ip.pack() + udp.pack() + payload
    theirs = bytes(scapy.IP(src=ip.src, dst=ip.dst, ttl=33, id=4242) / scapy.UDP(sport=5353, dport=53) / payload)
    assert ours == theirs
    assert IPv4.unpack(ours) == IPv4.unpack(theirs) and IPv4.unpack(ours).checksum_ok()


def test_ipv6_and_icmpv6_echo_are_scapys():
    body = os.urandom(16)
    ip6 = IPv6("2001:db8::1", "2001:db8::2", 58, 8 + len(body), hop_limit=17)
    icmp = ICMP(128, 0, rest=(0x1234 << 16) | 7).with_checksum(body, ip6.pseudo_header(8 + len(body), 58))
    ours = ip6.pack() + icmp.pack() + body
    theirs = bytes(scapy.IPv6(src=ip6.src, dst=ip6.dst, hlim=17) /
                   scapy.ICMPv6EchoRequest(id=0x1234, seq=7, data=body))
    assert ours == theirs
    assert IPv6.unpack(ours) == ip6


def test_icmpv4_echo_is_scapys():
    body = b"ping" * 10
    icmp = ICMP(8, 0, rest=(1 << 16) | 2).with_checksum(body)
    assert icmp.pack() + body == bytes(scapy.ICMP(type=8, id=1, seq=2) / body)


@pytest.mark.parametrize("case", range(50))
def test_an_incremental_update_equals_a_full_recomputation(case):
    rng = random.Random(case)
    ip = IPv4(str(ipaddress.IPv4Address(rng.getrandbits(32))), str(ipaddress.IPv4Address(rng.getrandbits(32))),
              rng.choice([1, 6, 17]), rng.randrange(28, 1500), ttl=rng.randrange(1, 256), ident=rng.getrandbits(16))
    before = ip.pack()
    # a translator rewrites the TTL/protocol word and the destination address, then fixes the checksum
    after = IPv4.unpack(before)
    after = IPv4(after.src, str(ipaddress.IPv4Address(rng.getrandbits(32))), rng.choice([1, 6, 17]),
                 after.total_length, ttl=rng.randrange(1, 256), ident=after.ident)
    full = after.pack()
    old_words, new_words = before[8:10] + before[16:20], full[8:10] + full[16:20]
    incremental = checksum_update_bytes(IPv4.unpack(before).checksum, old_words, new_words)
    assert incremental == IPv4.unpack(full).checksum


def test_fragments_fit_the_mtu_reassemble_and_match_scapys_fragment():
    payload = os.urandom(3000)
    ip = IPv4("10.0.0.1", "10.0.0.2", 17, 20 + 3000, ident=77)
    frags = fragment_ipv4(ip, payload, 1500)
    assert [len(p) for _, p in frags] == [1480, 1480, 40]
    assert all(IPv4.unpack(h.pack()).checksum_ok() for h, _ in frags)
    theirs = scapy.fragment(scapy.IP(src=ip.src, dst=ip.dst, id=77, proto=17) / scapy.Raw(payload), fragsize=1480)
    assert [h.pack() + p for h, p in frags] == [bytes(f) for f in theirs]
    head, data = reassemble_ipv4(reversed(frags))
    assert data == payload and head.total_length == 3020
    with pytest.raises(ValueError, match="missing"):
        reassemble_ipv4(frags[:1] + frags[2:])
    with pytest.raises(ValueError, match="Don't Fragment"):
        fragment_ipv4(IPv4("10.0.0.1", "10.0.0.2", 17, 3020, dont_fragment=True), payload, 1500)


def test_ip_in_ip_wraps_and_unwraps():
    inner = IPv4("10.1.0.1", "10.2.0.1", 17, 28).pack() + UDP(1, 2, 8).pack()
    packet = encapsulate(inner, "192.0.2.1", "192.0.2.2")
    outer, back = decapsulate(packet)
    assert back == inner and outer.proto == 4 and outer.checksum_ok()
    assert packet == bytes(scapy.IP(src="192.0.2.1", dst="192.0.2.2", proto=4, id=0) / scapy.Raw(inner))


def test_payload_stages_compress_text_not_noise_and_lzo_round_trips():
    from pysim.network.payload import chunked, lzo_compress, lzo_decompress, run_stage
    text = (b"The quick brown fox jumps over the lazy dog. " * 400)[:16384]
    noise = os.urandom(16384)
    for name in ("zlib-1", "zlib-9"):
        assert run_stage(name, chunked(text, 1024)).ratio < 0.3
        assert run_stage(name, chunked(noise, 1024)).ratio > 1.0  # incompressible data grows a little
    lzo = run_stage("lzo1x-1", chunked(text, 1024))
    if not lzo.available:
        pytest.skip(lzo.reason)
    assert lzo.ratio < 0.5 and lzo_decompress(lzo_compress(text), len(text)) == text
    md5 = run_stage("md5", chunked(noise, 1024))
    assert md5.bytes_out == 16 * 16 and md5.ns_per_byte > 0
    with pytest.raises(ValueError, match="unknown stage"):
        run_stage("gzip", [b"x"])
