"""Mechanism checks of the IPv6/IPv4 translator model (atc98_fiuczynski): Appendix A against scapy, the
checksums, the fragment rules, and the testbed's timing against hand calculations."""
import dataclasses

import numpy as np
import pytest

from pysim.calibration import fit_parameter
from pysim.models import atc98_fiuczynski as m
from pysim.network import wire_bytes

scapy_all = pytest.importorskip("scapy.all")
IP, IPv6, TCP, UDP, ICMP, Raw = (scapy_all.IP, scapy_all.IPv6, scapy_all.TCP, scapy_all.UDP, scapy_all.ICMP,
                                 scapy_all.Raw)
IPv6ExtHdrFragment = scapy_all.IPv6ExtHdrFragment
ICMPv6EchoRequest, ICMPv6DestUnreach = scapy_all.ICMPv6EchoRequest, scapy_all.ICMPv6DestUnreach

P = m.Params()
V4, ALIAS, V6 = "128.95.2.15", "10.0.200.23", "5f02::971b:fea2"
AMAP = m.testbed_map()


def _valid_l4(pkt, layer):
    """scapy's own checksum for the layer, recomputed from scratch, equals the one carried."""
    name = "cksum" if "cksum" in pkt[layer].fields else "chksum"
    carried = getattr(pkt[layer], name)
    fresh = pkt.__class__(bytes(pkt))
    delattr(fresh[layer], name)
    return carried == getattr(fresh.__class__(bytes(fresh))[layer], name)


@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_v4_to_v6_matches_scapy_and_checksums_verify(proto, seed):
    rng = np.random.default_rng(seed)
    for _ in range(5):
        data = rng.integers(0, 256, int(rng.integers(0, 1400))).astype(np.uint8).tobytes()
        l4 = TCP(sport=int(rng.integers(1, 65535)), dport=80, flags="PA") if proto == "tcp" else UDP(sport=53, dport=int(rng.integers(1, 65535)))
        pkt4 = IP(src=V4, dst=ALIAS, ttl=int(rng.integers(2, 255)), flags="DF") / l4 / Raw(data)
        out, work = m.v4_to_v6(bytes(pkt4), AMAP)
        assert len(out) == 1 and len(out[0]) == len(bytes(pkt4)) + 20  # §2.2.1: +20 bytes, no Fragment header
        six = IPv6(out[0])
        assert six.src == "::ffff:128.95.2.15" and six.dst == V6
        assert six.hlim == pkt4.ttl - 1 and six.plen == len(bytes(pkt4)) - 20 and six.tc == 0 and six.fl == 0
        layer = TCP if proto == "tcp" else UDP
        assert six.nh == (6 if proto == "tcp" else 17) and _valid_l4(six, layer)
        assert bytes(six[layer].payload) == data
        assert work.summed_bytes == 12 + 40  # incremental: the two pseudo-headers, not the payload


def test_incremental_and_full_checksums_agree(seed):
    rng = np.random.default_rng(seed)
    for _ in range(20):
        n = int(rng.integers(0, 1460))
        pkt = m.tcp_v4(n)
        inc, w_inc = m.v4_to_v6(pkt, AMAP, incremental=True)
        full, w_full = m.v4_to_v6(pkt, AMAP, incremental=False)
        assert inc == full
        assert w_full.summed_bytes == 40 + 20 + n > w_inc.summed_bytes
        back_inc, _ = m.v6_to_v4(inc[0], AMAP, incremental=True)
        back_full, _ = m.v6_to_v4(inc[0], AMAP, incremental=False)
        assert back_inc == back_full


def test_round_trip_restores_the_packet_but_ttl():
    pkt = bytes(IP(src=V4, dst=ALIAS, ttl=64, flags="DF") / TCP(sport=1, dport=2) / Raw(b"hello" * 50))
    six, _ = m.v4_to_v6(pkt, AMAP)
    back, _ = m.v6_to_v4(six[0], AMAP)
    a, b = IP(pkt), IP(back)
    assert b.ttl == 62 and b.src == V4 and b.dst == ALIAS and b.flags == "DF" and b.id == 0
    assert bytes(a[TCP]) == bytes(b[TCP])
    assert _valid_l4(b, IP)


def test_echo_translation_and_its_incremental_icmp_checksum():
    pkt = m.echo_v4(56, dont_fragment=True)
    out, work = m.v4_to_v6(pkt, AMAP)
    six = IPv6(out[0])
    assert six.nh == 58 and isinstance(six.payload, ICMPv6EchoRequest)
    assert _valid_l4(six, ICMPv6EchoRequest)
    back, _ = m.v6_to_v4(out[0], AMAP)
    assert IP(back)[ICMP].type == 8 and _valid_l4(IP(back), ICMP)
    assert work.summed_bytes < 64  # the type word and the pseudo-header, not the data


def test_fragment_header_rules():
    # DF clear: a Fragment header carries the IPv4 identification (§2.2.1, A.1)
    pkt = bytes(IP(src=V4, dst=ALIAS, id=0x1234, flags=0) / UDP(sport=1, dport=2) / Raw(b"x" * 100))
    out, _ = m.v4_to_v6(pkt, AMAP)
    six = IPv6(out[0])
    assert six.nh == 44 and six[IPv6ExtHdrFragment].id == 0x1234 and six[IPv6ExtHdrFragment].nh == 17
    assert len(out[0]) == len(pkt) + 28
    back, _ = m.v6_to_v4(out[0], AMAP)
    assert IP(back).flags == 0 and IP(back).id == 0x1234 and IP(back).len == len(pkt)
    # an MTU-sized datagram with DF clear splits in two IPv6 fragments that scapy reassembles
    big = bytes(IP(src=V4, dst=ALIAS, id=7, flags=0) / UDP(sport=1, dport=2) / Raw(b"y" * 1472))
    frags, work = m.v4_to_v6(big, AMAP, mtu=1500)
    assert len(frags) == 2 and all(len(f) <= 1500 for f in frags) and work.fragments == 2
    pieces = [IPv6(f)[IPv6ExtHdrFragment] for f in frags]
    assert pieces[0].m == 1 and pieces[1].m == 0 and pieces[1].offset * 8 == len(bytes(pieces[0].payload))
    assert b"".join(bytes(p.payload) for p in pieces)[8:] == b"y" * 1472
    # with DF set, the translator returns ICMPv4 Packet Too Big with the MTU less 20
    df = bytes(IP(src=V4, dst=ALIAS, flags="DF") / UDP(sport=1, dport=2) / Raw(b"z" * 1472))
    (reply,), _ = m.v4_to_v6(df, AMAP, mtu=1500)
    r = IP(reply)
    assert r.dst == V4 and r[ICMP].type == 3 and r[ICMP].code == 4 and r[ICMP].nexthopmtu == 1480


def test_icmp_error_tables_follow_appendix_a():
    quoted = bytes(IP(src=ALIAS, dst=V4, flags="DF") / UDP(sport=9, dport=10))[:28]
    cases = {(3, 0): (1, 0), (3, 1): (1, 0), (3, 3): (1, 4), (3, 5): (1, 2), (3, 9): (1, 1), (3, 10): (1, 1),
             (3, 2): (4, 1), (3, 4): (2, 0), (11, 0): (3, 0), (11, 1): (3, 1)}
    for (t, c), want in cases.items():
        err = bytes(IP(src=V4, dst=ALIAS, flags="DF") / ICMP(type=t, code=c, nexthopmtu=1000 if c == 4 else 0) / Raw(quoted))
        (six,), _ = m.v4_to_v6(err, AMAP)
        s = IPv6(six)
        assert (six[40], six[41]) == want, (t, c)
        inner = IPv6(six[48:])  # the quoted IPv4 header, translated (recursion)
        assert inner.src == V6 and inner.dst == "::ffff:128.95.2.15"
        assert s.plen == len(six) - 40
        if want == (2, 0):
            assert int.from_bytes(six[44:48], "big") == 1020
    for ptr4, ptr6 in {0: 0, 2: 4, 8: 7, 9: 6, 12: 8, 16: 24, 1: 0xFFFFFFFF}.items():
        err = bytes(IP(src=V4, dst=ALIAS, flags="DF") / ICMP(type=12, code=0, ptr=ptr4) / Raw(quoted))
        (six,), _ = m.v4_to_v6(err, AMAP)
        assert six[40] == 4 and int.from_bytes(six[44:48], "big") == ptr6
    for t in (13, 5, 9):  # timestamp, redirect (single hop), router advertisement: dropped
        with pytest.raises(m.Untranslatable):
            m.v4_to_v6(bytes(IP(src=V4, dst=ALIAS) / ICMP(type=t) / Raw(quoted)), AMAP)
    with pytest.raises(m.Untranslatable):
        m.v4_to_v6(bytes(IP(src=V4, dst=ALIAS, proto=2) / Raw(b"igmp" * 2)), AMAP)


def test_v6_unreachable_codes_and_checksum_from_scratch():
    quoted = bytes(IPv6(src="::ffff:128.95.2.15", dst=V6) / UDP(sport=9, dport=10))[:48]
    for code, want in {0: 1, 1: 10, 2: 5, 3: 1, 4: 3}.items():
        pkt = bytes(IPv6(src=V6, dst="::ffff:128.95.2.15") / ICMPv6DestUnreach(code=code) / Raw(quoted))
        back, _ = m.v6_to_v4(pkt, AMAP)
        r = IP(back)
        assert r[ICMP].type == 3 and r[ICMP].code == want and r.src == ALIAS and r.dst == V4
        assert _valid_l4(r, ICMP)


def test_figure4_addresses_and_bindings():
    # Figure 4: IP4NODE4-to-IP6NODE4 {128.95.2.15, beef::805f:020f}, IP4NODE6-to-IP6NODE6 {10.0.200.23, 5f02::971b:fea2}
    beef = bytes.fromhex("beef" + "00" * 10 + "805f020f")
    amap = m.testbed_map()
    amap = dataclasses.replace(amap, v4_nodes=((beef, bytes([128, 95, 2, 15])),))
    pkt = bytes(IP(src=V4, dst=ALIAS, flags="DF") / UDP(sport=1, dport=2))
    (six,), _ = m.v4_to_v6(pkt, amap)
    assert IPv6(six).src == "beef::805f:20f" and IPv6(six).dst == V6
    gone = amap.unbind(bytes([10, 0, 200, 23]))
    with pytest.raises(m.Untranslatable):
        m.v6_to_v4(six, gone)
    with pytest.raises(ValueError):
        amap.bind(bytes([10, 0, 200, 23]), bytes(16))


def _hand_rtt_us(p, config, data):
    size = data + p.ping_header_bytes
    host = p.host_ping_us + p.host_byte_ns * 1e-3 * size
    wire = lambda extra: (wire_bytes("ethernet", size) + extra) * 8 / 100e6 * 1e6 + p.wire_delay_us  # noqa: E731
    dma = m._dma_s(p, size) * 1e6
    if config == "v4_v4":
        return 4 * host + 2 * wire(0) + 2 * dma
    g_pkt, g_byte = m._gateway_costs(p, config, "echo")
    gw = (g_pkt + g_byte * size) * 1e6
    extra = m.v6_growth(p, "echo") if config == "napt" else 0
    return 4 * host + 2 * gw + 2 * wire(extra) + 2 * wire(0) + 4 * dma


@pytest.mark.parametrize("config", ["v4_v4", "fwd", "napt"])
def test_ping_round_trip_is_the_sum_of_its_stops(config):
    for data in (64, 1024):
        assert m.ping_rtt_us(P, config, data) == pytest.approx(_hand_rtt_us(P, config, data), rel=1e-6)


def test_tcp_through_the_gateway_is_bound_by_the_slower_of_link_and_cpu():
    seg = P.mss + 40
    link = wire_bytes("ethernet", seg) * 8 / 100e6
    for config in ("fwd", "napt"):
        g_pkt, g_byte = m._gateway_costs(P, config, "tcp")
        cpu = g_pkt + g_byte * seg + 0.5 * (g_pkt + g_byte * 40)  # a delayed ACK every second segment
        expect = P.mss / max(link, cpu) / 1024
        got = m.tcp_stream(P, config, 100, seconds=1.0)["kbytes_per_s"]
        assert got == pytest.approx(expect, rel=0.03)
    slow = dataclasses.replace(P, forward_us=150.0)
    g_pkt, g_byte = m._gateway_costs(slow, "fwd", "tcp")
    r = m.tcp_stream(slow, "fwd", 100, seconds=1.0)
    assert r["kbytes_per_s"] == pytest.approx(P.mss / (g_pkt + g_byte * seg + 0.5 * (g_pkt + g_byte * 40)) / 1024,
                                              rel=0.03)
    assert r["gateway_cpu_pct"] == pytest.approx(100, abs=2)


def test_counterfactuals_move_the_mechanism():
    t4 = m.table4(P, quick=True)
    no_copy = m.table4(dataclasses.replace(P, copy_on_receive=False), quick=True)
    assert no_copy.loc["100 Mbps", "fwd_cpu_pct"] < t4.loc["100 Mbps", "fwd_cpu_pct"] - 10
    free = m.table3(dataclasses.replace(P, translate_us=0.0, checksum_ns_per_byte=0.0), quick=True)
    assert free["napt_minus_fwd_us"].max() < 6  # only the Fragment header's and IPv6's extra bytes remain
    full = m.translation_cost_bytes(dataclasses.replace(P, incremental_checksum=False))
    assert full["tcp"][1] == pytest.approx(1.0) and m.translation_cost_bytes(P)["tcp"][1] == 0


def test_calibration_lands_on_its_cells():
    for fit in m.CALIBRATION:
        value = fit_parameter("atc98_fiuczynski", fit, P, quick=True, tol=1e-7)
        assert getattr(P, fit.parameter) == pytest.approx(value, rel=1e-4), fit.parameter


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="ping_sizes"):
        m.Params(ping_sizes=(64, 1500))
    with pytest.raises(ValueError, match="mss"):
        m.Params(mss=100)
    with pytest.raises(ValueError, match="config"):
        m.ping_rtt_us(P, "tunnel", 64)
