"""Mechanism checks of the protocol-path model (sosp93_maeda)."""
import dataclasses

import pytest

from pysim.hw.catalog import ETHERNET_10
from pysim.models import sosp93_maeda as m

P = m.Params()
LIB = m.DECSTATION[-1]
KERNEL, SERVER, IPC, SHM = m.DECSTATION[:4]


@pytest.mark.parametrize("proto, n", [("TCP", 1), ("TCP", 1460), ("UDP", 1), ("UDP", 700)])
@pytest.mark.parametrize("system", m.DECSTATION + m.NEWAPI, ids=lambda s: s.name)
def test_one_way_totals_add_up_to_the_reported_latency(system, proto, n):
    c = m.stage_costs(P, proto, system, n)
    w = m.one_way_us(P, proto, system, n)
    assert w["send"] + w["receive"] + w["transit"] == pytest.approx(w["total"])
    assert sum(c.values()) + w["transit"] == pytest.approx(w["total"])
    assert m.rtt_ms(P, proto, system, n) == pytest.approx(2 * w["total"] / 1000)


def test_one_byte_costs_are_the_stated_inputs():
    t4 = m.table4()
    for proto, path, fixed in P.table4_one_byte_us:
        short = {"library": "lib"}.get(path, path)
        assert list(t4.loc[list(m.STAGES), f"{proto}_{short}_1B"]) == pytest.approx(fixed)


def test_wire_time_is_exact_ethernet_arithmetic():
    assert m.wire_us("TCP", 1460) == pytest.approx(1214.4)  # 1518-byte frame at 0.8 us/byte
    assert m.wire_us("UDP", 1) == pytest.approx(51.2)       # padded to the 64-byte minimum


def test_server_copies_four_times_what_the_kernel_copies_once():
    n = 1001
    slope = {s.path: (m.stage_costs(P, "UDP", s, n)["entry/copyin"] - m.stage_costs(P, "UDP", s, 1)["entry/copyin"])
             / (n - 1) for s in (KERNEL, SERVER)}
    assert slope["server"] == pytest.approx(4 * slope["kernel"]) == pytest.approx(4 * P.memcpy_us_per_byte)


def test_integrated_filter_removes_exactly_one_device_read_and_one_copy():
    n = 1472
    gap = m.one_way_us(P, "UDP", SHM, n)["total"] - m.one_way_us(P, "UDP", LIB, n)["total"]
    fixed_gap = P.fixed_us("UDP", "server")["device intr/read"] - P.fixed_us("UDP", "library")["device intr/read"]
    assert gap == pytest.approx(fixed_gap + (n - 1) * (P.device_read_us_per_byte + P.memcpy_us_per_byte
                                                       - P.device_read_us_per_byte))


def test_newapi_drops_only_the_socket_copy():
    n = 1472
    old = m.rtt_ms(P, "UDP", LIB, n)
    new = m.rtt_ms(P, "UDP", m.NEWAPI[-1], n)
    assert old - new == pytest.approx(2 * (n - 1) * P.memcpy_us_per_byte / 1000)


def test_free_cpu_leaves_ttcp_bound_by_the_wire():
    fast = dataclasses.replace(P, streaming_efficiency=1e-6)
    kbps = m.ttcp_throughput(fast, LIB, quick=True)
    per_segment = (ETHERNET_10.message_occupancy_s(1460 + 40) + ETHERNET_10.message_occupancy_s(40) / 2)
    assert kbps == pytest.approx(1460 / per_segment / 1024, rel=0.01)


def test_a_larger_window_never_lowers_throughput():
    small = dataclasses.replace(P, recv_buffer_kb=tuple((pf, s, 4 if s == KERNEL.name else kb)
                                                        for pf, s, kb in P.recv_buffer_kb))
    assert m.ttcp_throughput(small, KERNEL, quick=True) <= m.ttcp_throughput(P, KERNEL, quick=True)


def test_costlier_ipc_lowers_ipc_throughput_only():
    dear = dataclasses.replace(P, ipc_receive_us=P.ipc_receive_us * 2)
    assert m.ttcp_throughput(dear, IPC, quick=True) < m.ttcp_throughput(P, IPC, quick=True)
    assert m.ttcp_throughput(dear, SHM, quick=True) == m.ttcp_throughput(P, SHM, quick=True)


def test_tables_have_the_ledger_shape_and_are_deterministic():
    a, b = m.table2(quick=True), m.table2(quick=True)
    assert a.equals(b)
    assert list(a.columns)[:2] == ["tcp_throughput_KB_per_s", "recv_buffer_KB"]
    assert len(a) == len(m.DECSTATION) + len(m.GATEWAY)
    assert len(m.table3(quick=True)) == 3


@pytest.mark.parametrize("field, value", [("memcpy_us_per_byte", -1.0), ("streaming_efficiency", 1.5),
                                          ("ack_every", 0)])
def test_bad_parameters_are_rejected(field, value):
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(P, **{field: value})


def test_bad_message_sizes_are_rejected():
    with pytest.raises(ValueError, match="nbytes"):
        m.stage_costs(P, "UDP", LIB, 0)
    with pytest.raises(ValueError, match="proto"):
        m.stage_costs(P, "ICMP", LIB, 10)
