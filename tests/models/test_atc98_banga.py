"""Mechanism checks of the event-driven server model (atc98_banga)."""
import dataclasses

import pytest

from pysim.models import atc98_banga as m

P = m.Params()


def run(kernel, cold, rate=100.0, kind="squid", params=P, seconds=2.0):
    return m.run_server(params, m.Server(kind, kernel, cold), rate, seconds=seconds)


def test_old_select_cost_is_linear_in_descriptors_and_new_follows_ready_ones():
    old = [m.select_cost_us(P, False, n, 1) + m.select_cost_us(P, False, n, 1, rescan=True) for n in (0, 500, 1000)]
    assert old[2] - old[1] == pytest.approx(old[1] - old[0]) == pytest.approx(3 * 500 * P.select_per_fd_us)
    new_rescan = [m.select_cost_us(P, True, n, 4, rescan=True) for n in (0, 500, 1000)]
    assert new_rescan[0] == new_rescan[2] == 4 * P.new_select_per_event_us


def test_select_share_grows_with_cold_connections():
    shares = [run("unmodified", c, rate=50.0, seconds=6.0)["select_kernel_pct"] for c in (0, 500, 1000, 1500)]
    assert shares == sorted(shares)


def test_new_select_is_far_cheaper_per_descriptor():
    assert run("new kernel", 1500)["select_kernel_pct"] < 0.5 * run("unmodified", 1500)["select_kernel_pct"]


def test_lowest_free_descriptor_rule_makes_old_ufalloc_scan_past_cold_connections():
    few, many = run("unmodified", 100)["ufalloc_pct"], run("unmodified", 1500)["ufalloc_pct"]
    assert many > 5 * few
    assert run("new kernel", 1500)["ufalloc_pct"] < 0.05 * many


def test_descriptor_table_allocates_the_lowest_free_slot():
    t = m.DescriptorTable(16)
    fds = [t.alloc() for _ in range(5)]
    t.release(1)
    t.release(3)
    assert fds == [0, 1, 2, 3, 4] and t.alloc() == 1 and t.alloc() == 3 and t.alloc() == 5


def test_fewer_select_calls_return_more_events_as_the_loop_slows():
    assert run("unmodified", 2000)["events_per_select"] > run("unmodified", 0)["events_per_select"]


def test_cpu_accounting_covers_the_whole_window():
    r = run("unmodified", 750, rate=220.0)
    total = sum(r[k] for k in ("select_kernel_pct", "select_user_pct", "ufalloc_pct", "other_pct", "idle_pct"))
    assert total == pytest.approx(100.0, abs=2.0)


def test_throughput_follows_the_offered_load_below_saturation():
    assert run("new kernel", 750, rate=150.0, seconds=10.0)["throughput_per_s"] == pytest.approx(150.0, rel=0.1)


def test_same_seed_same_run_and_bad_input_rejected():
    assert run("unmodified", 500) == run("unmodified", 500)
    with pytest.raises(ValueError, match="kernel"):
        m.Server("squid", "linux", 0)
    with pytest.raises(ValueError, match="rate"):
        m.run_server(P, m.Server(), 0.0, seconds=1.0)
    with pytest.raises(ValueError, match="select_per_fd_us"):
        dataclasses.replace(P, select_per_fd_us=-1.0)


def test_larger_files_cost_more_per_request():
    small = run("new kernel", 750, rate=100.0, seconds=6.0)
    big = m.run_server(P, m.Server("squid", "new kernel", 750, 8192), 100.0, seconds=6.0)
    extra = (8192 - m.BASE_FILE_BYTES) / 1024 * P.per_kb_us * 100 * 1e-6 * 100  # percent of CPU at 100 req/s
    assert big["other_pct"] - small["other_pct"] == pytest.approx(extra, rel=0.15)
    with pytest.raises(ValueError, match="file_bytes"):
        m.Server("squid", "new kernel", 0, 0)
