"""Mechanism checks of the transformer-tunnel model (atc98_sudame): the IP_XFORM rewrite against scapy,
Figure 3's policy traced by hand, the per-packet recipe against a hand count, and the break-even rule."""
import dataclasses
import os

import numpy as np
import pytest

from pysim.calibration import fit_parameter
from pysim.engine import Simulation
from pysim.models import atc98_sudame as m
from pysim.network import packets as pk

scapy_all = pytest.importorskip("scapy.all")
IP, UDP, ICMP, Raw = scapy_all.IP, scapy_all.UDP, scapy_all.ICMP, scapy_all.Raw

P = m.Params()


def _ip_checksum_ok(raw: bytes) -> bool:
    pkt = IP(raw)
    carried = pkt.chksum
    del pkt.chksum
    return IP(bytes(pkt)).chksum == carried


@pytest.mark.parametrize("tunnel_dst, meta", [("10.0.1.1", 7), ("10.0.1.7", 3)])
def test_xform_rewrite_matches_scapy_and_round_trips(tunnel_dst, meta, seed):
    rng = np.random.default_rng(seed)
    for _ in range(5):
        data = rng.integers(0, 256, int(rng.integers(0, 1400))).astype(np.uint8).tobytes()
        orig = bytes(IP(src="10.0.0.1", dst="10.0.1.7", ttl=int(rng.integers(2, 255))) / UDP(sport=7, dport=9) / Raw(data))
        enc = m.xform_encap(orig, tunnel_dst)
        s = IP(enc)
        assert len(enc) == len(orig) + meta and s.len == len(enc)
        assert s.proto == m.IP_XFORM and s.dst == tunnel_dst and _ip_checksum_ok(enc)
        assert int.from_bytes(enc[20:22], "big") == 17  # the original protocol travels in the metadata
        assert m.xform_decap(enc) == orig  # byte for byte, checksum included


def test_combined_pair_splits_into_the_originals():
    a = bytes(IP(src="10.0.0.1", dst="10.0.1.7") / UDP(sport=7, dport=9) / Raw(b"a" * 228))
    b = bytes(IP(src="10.0.0.1", dst="10.0.1.7", id=2) / UDP(sport=7, dport=9) / Raw(b"b" * 228))
    both = m.combine(a, b)
    assert len(a) == len(b) == 256 and len(both) == 512 + m.COMBINE_META
    assert _ip_checksum_ok(both) and IP(both).len == len(both)
    assert m.split(both) == (a, b)
    with pytest.raises(ValueError):
        m.split(a)


def _trace(arrivals, p=P):
    sim = Simulation()
    t = m.ReassemblyTunnel(sim, p)

    def src():
        last = 0.0
        for at, size in arrivals:
            yield sim.timeout(at - last)
            last = at
            t.packet(sim.now, size)
    sim.process(src())
    sim.run()
    return [(round(time * 1e3, 6), size, len(orig)) for time, size, orig in t.sent]


def test_figure3_by_hand():
    # two small packets 10 ms apart: combined when the second arrives
    assert _trace([(0.0, 256), (0.010, 256)]) == [(10.0, 512, 2)]
    # an isolated small packet leaves when its 25 ms timer fires
    assert _trace([(0.0, 256)]) == [(25.0, 256, 1)]
    # a large packet flushes the delayed one, then goes itself
    assert _trace([(0.0, 256), (0.005, 1400)]) == [(5.0, 256, 1), (5.0, 1400, 1)]
    # a pair too big for the MTU (here 1000 bytes): the delayed one goes, the new one waits for its own timer
    narrow = dataclasses.replace(P, max_combined_bytes=1000)
    assert _trace([(0.0, 560), (0.005, 560), (0.100, 100)], narrow) == [(5.0, 560, 1), (30.0, 560, 1), (125.0, 100, 1)]
    # a stale timer (set for a packet already combined) does not send the next delayed packet early
    assert _trace([(0.0, 256), (0.010, 256), (0.020, 256)]) == [(10.0, 512, 2), (45.0, 256, 1)]


def test_reassembly_halves_a_steady_stream_and_not_a_sparse_one():
    steady = dataclasses.replace(P, spacing_jitter_ms=0.0, audio_seconds=10.0)
    r = m.run_reassembly(steady)
    assert r["link_packets"] * 2 == r["app_packets"]
    assert r["max_delay_ms"] == pytest.approx(20.0 + (16 + 14 + 512 + m.COMBINE_META + 4) * 8 / P.link_bps * 1e3, rel=1e-6)
    short = m.run_reassembly(dataclasses.replace(steady, reassembly_delay_ms=15.0))
    assert short["link_packets"] == short["app_packets"]


def test_header_sizes_against_scapy():
    inner = IP(src="10.0.0.1", dst="10.0.1.7") / UDP() / Raw(b"x" * 100)
    ipip = IP(src="10.0.1.1", dst="10.0.1.7") / inner
    h = m.headers()
    assert h.loc["ip-in-ip", "overhead_bytes"] == len(bytes(ipip)) - len(bytes(inner))
    assert h.loc["xform, other destination", "saved_vs_ipip_us"] == pytest.approx(13 * P.link_us_per_byte)


def test_recipe_against_a_hand_count():
    # receiver: dispatch + 2 calls + 6 fields + requeue + 20 lines from L2, 20 bytes moved, 20 summed
    hand = (P.dispatch_cycles + 2 * P.call_cycles + 6 * P.field_cycles + P.requeue_cycles + 20 * P.l2_line_cycles
            + 20 * P.copy_cycles_per_byte + 20 * P.checksum_cycles_per_byte)
    got = m.overhead_recipe(P, "receiver").seconds(P.cpu) * P.clock_hz
    assert got == pytest.approx(hand)
    # the drawn misses add their means: lines x p x extra cycles
    s = m.overhead_samples(P, "receiver", 64, 200_000, 1)
    extra = 20 * P.p_code_from_memory * (P.mem_line_cycles - P.l2_line_cycles) + P.data_lines * P.p_data_miss * P.mem_line_cycles
    assert s.mean() == pytest.approx(hand + extra, rel=0.005)


def test_cost_is_flat_in_size_unless_the_packet_is_copied():
    cpu = P.cpu
    small, big = (m.overhead_recipe(P, "sender", n).seconds(cpu) for n in (64, 1460))
    assert small == big
    c = dataclasses.replace(P, copy_to_insert=True)
    slope = (m.overhead_recipe(c, "sender", 1460).seconds(cpu) - m.overhead_recipe(c, "sender", 64).seconds(cpu))
    assert slope * P.clock_hz == pytest.approx(1396 * P.copy_cycles_per_byte)


def test_calibration_lands_on_its_cell():
    for fit in m.CALIBRATION:
        value = fit_parameter("atc98_sudame", fit, P, quick=True, tol=1e-7)
        assert getattr(P, fit.parameter) == pytest.approx(value, rel=1e-3), fit.parameter


def test_break_even_rule():
    # §4: compressing pays while (t_c + t_d) per byte < bytes saved x link time per byte
    be = m.break_even_us_per_byte(P, "text")
    assert be == pytest.approx(1e3 * P.text_compress_ms_per_kb * (1 + P.lzo_decompress_ratio) / P.text_saved_per_kb)
    for us in (be * 0.9, be * 1.1):
        gain = m.table3(dataclasses.replace(P, link_us_per_byte=us)).loc["text", "net_gain_ms_per_KB"]
        assert (gain > 0) == (us > be)
    assert m.break_even_us_per_byte(P, "image (GIF)") == float("inf")


def test_buffering_loss_matches_blackout_share():
    t2 = m.table2()
    blackout_share = P.handoff_blackout_ms * 1e-3 / P.handoff_every_s
    assert t2.loc["without buffering", "avg_loss_pct"] == pytest.approx(100 * blackout_share, rel=0.1)
    rescued = P.buffer_packets * P.audio_spacing_ms * 1e-3 / P.handoff_every_s
    assert t2.loc["with buffering", "avg_loss_pct"] == pytest.approx(100 * (blackout_share - rescued), rel=0.15)


def test_lzo_saves_on_text_and_nothing_on_noise():
    from pysim.network import payload
    if payload._lzo() is None:
        pytest.skip("liblzo2 is not installed")
    text = b" ".join(b"the tunnel rewrites the header of every packet it carries" for _ in range(200))
    r = m.lzo_now({"text": text, "noise": os.urandom(20 * 1024)}, repeat=1)
    assert r.loc["text", "bytes_saved_per_KB"] > 500 and r.loc["noise", "bytes_saved_per_KB"] == 0


def test_same_seed_same_output():
    assert m.figure5(rng=3).equals(m.figure5(rng=3))
    assert m.reassembly(rng=3, quick=True).equals(m.reassembly(rng=3, quick=True))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="p_data_miss"):
        m.Params(p_data_miss=1.5)
    with pytest.raises(ValueError, match="side"):
        m.overhead_recipe(P, "middle")
    with pytest.raises(ValueError, match="IP_XFORM"):
        m.xform_decap(pk.IPv4("10.0.0.1", "10.0.0.2", 17, 20).pack())
