"""Mechanism checks of the event-driven server model (atc98_banga)."""
import dataclasses

import pytest

from pysim.models import atc98_banga as m

P = m.Params()


def run(kernel, cold, rate=100.0, kind="squid", params=P, seconds=2.0, rng=0):
    return m.run_server(params, m.Server(kind, kernel, cold), rate, seconds=seconds, rng=rng)


def isolated_thttpd_request_us(p, new_select, cold):
    """CPU per request, by hand, when requests never overlap: the blocked select() wakes for the accept;
    the request (already there) and the write each take one more pass; a last pass finds nothing and blocks."""
    n = p.base_fds + cold + 1                      # open descriptors plus the listening socket
    wake = p.new_select_per_event_us if new_select else 2 * p.select_per_fd_us * n
    alloc = p.new_ufalloc_us if new_select else p.ufalloc_per_slot_us * n   # lowest free slot: just past the cold

    def one_pass(fds, ready):
        return p.user_fixed_us + p.thttpd_user_per_fd_us * fds + m.select_cost_us(p, new_select, fds, ready)

    return wake + alloc + p.thttpd_request_us + 2 * one_pass(n + 1, 1) + one_pass(n, 0)


@pytest.mark.parametrize("kernel", ["unmodified", "new kernel"])
def test_cpu_per_isolated_request_matches_the_hand_count(kernel, seed):
    # at 0.5 requests/s a request almost never meets another, so busy time per request is the hand count
    cold, rate = 300, 0.5
    r = run(kernel, cold, rate=rate, kind="thttpd", seconds=400.0, rng=seed)
    busy_pct = sum(r[k] for k in ("select_kernel_pct", "select_user_pct", "ufalloc_pct", "other_pct"))
    busy_us = busy_pct / 100.0 / r["throughput_per_s"] * 1e6
    expected = isolated_thttpd_request_us(P, kernel == "new kernel", cold)
    assert busy_us == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize("rate", [0.5, 100.0, 220.0])
def test_time_is_either_charged_or_idle(rate):
    # a charge is booked whole when it starts, so only the charges straddling the window's two ends
    # (each under 5 ms) can be off: 2 x 5 ms in an 8-second window is 0.125%
    r = run("unmodified", 750, rate=rate, seconds=10.0)
    total = sum(r[k] for k in ("select_kernel_pct", "select_user_pct", "ufalloc_pct", "other_pct", "idle_pct"))
    assert total == pytest.approx(100.0, abs=0.125)


def test_throughput_follows_the_offered_load_below_saturation(seed):
    r = run("new kernel", 750, rate=150.0, seconds=10.0, rng=seed)
    assert r["throughput_per_s"] == pytest.approx(150.0, rel=0.1)


def test_descriptor_table_allocates_the_lowest_free_slot():
    t = m.DescriptorTable(16)
    fds = [t.alloc() for _ in range(5)]
    t.release(1)
    t.release(3)
    assert fds == [0, 1, 2, 3, 4] and t.alloc() == 1 and t.alloc() == 3 and t.alloc() == 5


def test_lowest_free_rule_makes_old_ufalloc_scan_past_cold_connections():
    # the scan length is not a parameter: it is where the lowest free slot lies
    few, many = run("unmodified", 100)["ufalloc_pct"], run("unmodified", 1500)["ufalloc_pct"]
    assert many > 5 * few
    assert run("new kernel", 1500)["ufalloc_pct"] < 0.05 * many


def test_select_calls_amortise_as_they_get_dearer():
    light, heavy = run("unmodified", 0, seconds=6.0), run("unmodified", 2000, seconds=6.0)
    assert heavy["events_per_select"] > 2 * light["events_per_select"]
    assert heavy["select_calls_per_s"] < 0.5 * light["select_calls_per_s"]


def test_without_amortisation_every_call_returns_one_event():
    p = dataclasses.replace(P, all_ready_handled=False)
    r = run("unmodified", 1000, params=p, seconds=4.0)
    assert r["events_per_select"] == pytest.approx(1.0, abs=0.01)
    assert r["select_kernel_pct"] > run("unmodified", 1000, seconds=4.0)["select_kernel_pct"]


def test_switches_turn_the_new_kernel_into_the_old():
    p = dataclasses.replace(P, hinted_select=False, bitmap_ufalloc=False)
    assert run("new kernel", 750, params=p) == run("unmodified", 750)
    q = dataclasses.replace(P, cold_connections_held=False)
    assert run("unmodified", 750, params=q) == run("unmodified", 0)


def test_same_seed_same_run_and_bad_input_rejected():
    assert run("unmodified", 500) == run("unmodified", 500)
    assert run("unmodified", 500, rng=1) != run("unmodified", 500)
    with pytest.raises(ValueError, match="kernel"):
        m.Server("squid", "linux", 0)
    with pytest.raises(ValueError, match="file_bytes"):
        m.Server("squid", "new kernel", 0, 0)
    with pytest.raises(ValueError, match="rate"):
        m.run_server(P, m.Server(), 0.0, seconds=1.0)
    with pytest.raises(ValueError, match="other_procedures_pct"):
        dataclasses.replace(P, other_procedures_pct=(("namei()", 1.0),))


def test_a_select_returns_at_most_one_event_per_hot_connection():
    # at saturation every hot connection has a request in the server: each has one event ready at a time
    p = dataclasses.replace(P, hot_connections=10)
    r = run("unmodified", 1000, rate=m.SATURATING_RATE, params=p, seconds=4.0)
    assert 5 < r["events_per_select"] <= 10
    open_loop = dataclasses.replace(p, clients_wait_for_replies=False)
    assert run("unmodified", 1000, rate=300.0, params=open_loop, seconds=4.0)["events_per_select"] > 10


def test_a_slow_network_caps_throughput_at_its_byte_rate():
    # 10 Mbit/s carries 10e6 / 8 / (8192 + header) responses a second, whatever the CPU could do
    p = dataclasses.replace(P, link_bits_per_s=10e6)
    r = m.run_server(p, m.Server("thttpd", "new kernel", 750, 8192), m.SATURATING_RATE, seconds=4.0)
    cap = 10e6 / 8 / (8192 + P.header_bytes)
    assert 0.95 * cap <= r["throughput_per_s"] <= 1.01 * cap


@pytest.mark.parametrize("file_bytes, writes", [(1259, 1), (8192, 3)])
def test_a_response_takes_one_write_event_per_send_buffer(file_bytes, writes):
    # isolated thttpd requests: accept, read, then one write per send buffer's worth of response
    r = m.run_server(P, m.Server("thttpd", "new kernel", 300, file_bytes), 0.5, seconds=400.0)
    events_per_request = r["events_per_select"] * r["select_calls_per_s"] / r["throughput_per_s"]
    assert -(-(file_bytes + P.header_bytes) // P.send_buffer_bytes) == writes
    assert events_per_request == pytest.approx(2 + writes, rel=0.03)
