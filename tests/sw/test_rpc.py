"""RPC on the engine: one call's latency by hand, a window fills the pipe up to the bottleneck,
the three ways of handling replies, and a delegated hop."""
import pytest

from pysim.engine import Simulation
from pysim.sw.rpc import Server, Wire, delegated, throughput

LAT, BW, SVC = 50e-6, 125e6, 20e-6  # 50 us one way, 1 Gbit/s, 20 us of service


def test_one_call_costs_two_transmissions_two_latencies_and_the_service():
    r = throughput(1, 1, latency_s=LAT, bytes_per_s=BW, service_s=SVC, request_bytes=100, reply_bytes=8192,
                   reply="continuation")
    assert r["latency_s"] == pytest.approx(100 / BW + LAT + SVC + 8192 / BW + LAT)


def test_one_outstanding_call_is_bound_by_the_round_trip_and_a_window_by_the_bottleneck():
    one = throughput(200, 1, latency_s=LAT, bytes_per_s=BW, service_s=SVC, request_bytes=100, reply_bytes=8192,
                     reply="continuation")
    many = throughput(200, 16, latency_s=LAT, bytes_per_s=BW, service_s=SVC, request_bytes=100,
                      reply_bytes=8192, reply="continuation")
    round_trip = 100 / BW + 2 * LAT + SVC + 8192 / BW
    assert one["calls_per_s"] == pytest.approx(1 / round_trip, rel=0.01)
    bottleneck = max(SVC, 8192 / BW)  # the reply wire
    assert many["calls_per_s"] == pytest.approx(1 / bottleneck, rel=0.05)


def test_waiting_switches_per_reply_deferral_per_batch_and_continuations_never():
    kw = dict(latency_s=LAT, bytes_per_s=BW, service_s=1e-6, request_bytes=64, reply_bytes=64, handler_s=2e-6,
              switch_s=10e-6)
    wait = throughput(256, 32, reply="wait", **kw)
    cont = throughput(256, 32, reply="continuation", **kw)
    defer = throughput(256, 32, reply="deferral", **kw)
    assert wait["switches"] == 256 and cont["switches"] == 0 and 0 < defer["switches"] < 256 / 4
    assert cont["calls_per_s"] > defer["calls_per_s"] > wait["calls_per_s"]


def test_a_delegated_hop_replies_straight_to_the_client():
    sim = Simulation()
    a, b = Server(sim, service_s=SVC), Server(sim, service_s=2 * SVC)
    wires = [Wire(sim, LAT, BW) for _ in range(3)]
    p = sim.process(delegated(sim, a, b, *wires, 100, 4096))
    sim.run()
    assert p.value == pytest.approx(3 * LAT + 2 * 100 / BW + 4096 / BW + 3 * SVC)
    assert a.served == b.served == 1


def test_bad_settings_are_refused():
    sim = Simulation()
    with pytest.raises(ValueError, match="bytes_per_s"):
        Wire(sim, 0, 0)
    with pytest.raises(ValueError, match="reply"):
        throughput(1, 1, latency_s=0, bytes_per_s=1, service_s=0, request_bytes=1, reply_bytes=1, reply="poll")
