"""Mechanism checks of the J-Kernel model (atc98_hawblitzel): LRMI cost recipes, thread switches,
argument copying, the closed web-server network, and the real JVM measurements."""
import dataclasses
import math
import shutil

import pandas as pd
import pytest

from pysim import ledger
from pysim.hw import CpuCostModel
from pysim.models import atc98_hawblitzel as m
from pysim.sw import Recipe, fit_residual
from pysim.units import us

P = m.Params()


def test_lrmi_is_its_parts_plus_the_residual_by_hand():
    # §3.2: an interface call, a thread lookup, two lock pairs; the residual is the same on both VMs
    t = m.table1(P)
    ms = P.ms_interface_call_us + P.ms_thread_lookup_us + 2 * P.ms_lock_us + P.stub_residual_us
    sun = P.sun_interface_call_us + P.sun_thread_lookup_us + 2 * P.sun_lock_us + P.stub_residual_us
    assert t.loc[("J-Kernel LRMI", "MS-VM"), "time_us"] == pytest.approx(ms, rel=1e-12)
    assert t.loc[("J-Kernel LRMI", "Sun-VM"), "time_us"] == pytest.approx(sun, rel=1e-12)
    share = 100 * (sun - P.stub_residual_us) / sun
    assert t.loc[("three operations", "Sun-VM"), "share_of_lrmi_pct"] == pytest.approx(share, rel=1e-12)


def test_the_stored_residual_is_what_fit_residual_leaves_of_the_published_lrmi():
    published = ledger.load("atc98_hawblitzel").cell("table1", "J-Kernel LRMI / MS-VM", "time_us").value
    parts = Recipe(ops={"interface_call": 1, "thread_lookup": 1, "lock": 2})
    cpu = m.cost_model(P, "MS-VM")
    bare = CpuCostModel(cpu.clock_hz, {k: v for k, v in cpu.fixed_s.items() if k != "stub_residual"})
    recipe, priced = fit_residual(parts, bare, published * us, "stub_residual")
    assert priced.fixed_s["stub_residual"] / us == pytest.approx(P.stub_residual_us, rel=1e-6)
    assert recipe.seconds(priced) == pytest.approx(m.lrmi_recipe(P).seconds(cpu), rel=1e-9)


def test_counterfactual_designs_change_what_an_lrmi_counts():
    plain = dataclasses.replace(P, capability_stubs=False)
    t = m.table1(plain)
    assert t.loc[("J-Kernel LRMI", "MS-VM"), "time_us"] == pytest.approx(P.regular_call_us)
    assert t.loc[("three operations", "MS-VM"), "time_us"] == 0.0
    switching = dataclasses.replace(P, thread_model="switch")
    by_hand = P.ms_interface_call_us + P.stub_residual_us + P.nt_double_switch_us + 2 * P.ms_lock_us
    assert m.table1(switching).loc[("J-Kernel LRMI", "MS-VM"), "time_us"] == pytest.approx(by_hand, rel=1e-12)


def test_a_java_double_switch_is_two_kernel_switches_and_a_monitor_per_switch():
    t = m.table3(P)
    assert t.loc["NT-base", "double_switch_us"] == pytest.approx(P.nt_double_switch_us)
    for vm, lock in (("MS-VM", P.ms_lock_us), ("Sun-VM", P.sun_lock_us)):
        assert t.loc[vm, "double_switch_us"] == pytest.approx(P.nt_double_switch_us + 2 * lock, rel=1e-12)
        assert t.loc[vm, "lrmi_with_switch_us"] > t.loc[vm, "lrmi_us"]
    user = m.table3(dataclasses.replace(P, kernel_threads=False))
    assert user.loc["NT-base", "double_switch_us"] == pytest.approx(2 * P.user_thread_switch_us)


def test_copies_cost_per_object_and_per_byte_and_nothing_by_reference():
    cpu = m.cost_model(P, "MS-VM")
    fast = m.copy_recipe(P, 10, 1000, "fast copy").seconds(cpu) / us
    assert fast == pytest.approx(10 * P.fastcopy_object_us + 1000 * P.copy_us_per_byte, rel=1e-12)
    serial = m.copy_recipe(P, 10, 1000, "serialization").seconds(cpu) / us
    assert serial == pytest.approx(P.serialise_stream_us + 10 * P.serialise_object_us
                                   + 1000 * P.serialise_us_per_byte, rel=1e-12)
    shared = dataclasses.replace(P, capability_stubs=False)
    assert m.copy_recipe(shared, 10, 1000).seconds(cpu) == 0.0
    # Table 4's point: the same bytes in more objects cost more
    grid = m.argument_copying(P)
    assert grid.loc[(10, 1000), "fast_copy_us"] > grid.loc[(1, 1000), "fast_copy_us"]


def test_table6_call_is_the_lrmi_plus_three_small_copies():
    t = m.table6(P)
    by_hand = (P.ms_interface_call_us + P.ms_thread_lookup_us + 2 * P.ms_lock_us + P.stub_residual_us
               + 3 * (P.fastcopy_object_us + P.arg_object_bytes * P.copy_us_per_byte))
    assert t.loc["J-Kernel", "time_us"] == pytest.approx(by_hand, rel=1e-12)


def repairman_throughput(demand_s, think_s, users):
    """M/M/1//N (the machine-repairman model), exactly: X = (1 - p0) / D."""
    r = demand_s / think_s
    terms = [math.prod(range(users - k + 1, users + 1)) * r ** k for k in range(users + 1)]
    return (1 - 1 / sum(terms)) / demand_s


@pytest.mark.parametrize("users", [1, 2, 8, 32])
def test_mva_throughput_matches_the_machine_repairman_formula(users):
    p = dataclasses.replace(P, clients=users, threads_per_client=1)
    t = m.table5(p)
    for server, demand in m.server_demands_us(p).items():
        expected = repairman_throughput(demand * us, p.client_delay_us * us, users)
        assert t.loc[("1000", server), "throughput_pages_s"] == pytest.approx(expected, rel=1e-9)


def test_jkernel_adds_its_path_and_an_equal_bridge_to_iis():
    d = m.server_demands_us(P)
    path = m.jkernel_path_recipe(P).seconds(m.cost_model(P, "MS-VM")) / us
    assert d["J-Kernel"] - d["IIS"] == pytest.approx(2 * path, rel=1e-12)
    more = dataclasses.replace(P, lrmis_per_request=5)
    assert m.server_demands_us(more)["J-Kernel"] - d["J-Kernel"] == pytest.approx(
        2 * 4 * m.lrmi_recipe(P).seconds(m.cost_model(P, "MS-VM")) / us, rel=1e-9)


@pytest.mark.parametrize("users", [2, 32])
def test_the_engine_agrees_with_mva(users, seed):
    # exponential work and think times make the network product-form, so MVA is exact; over 20 seeds
    # 60-second runs spread by 0.4% (2 users) and 0.5% (32): 2% is four standard deviations
    r = m.simulate_server(P, "IIS", users=users, seconds=60.0, rng=seed)
    expected = repairman_throughput(P.iis_request_us * us, P.client_delay_us * us, users)
    assert r["throughput_per_s"] == pytest.approx(expected, rel=0.02)


def test_fit_unit_costs_recovers_known_costs():
    truth = {"serialise_object": 700e-9, "serialise": 1.1e-9, "serialise_stream": 3e-6}
    shapes = [(1, 100), (1, 1000), (10, 1000), (1, 10000)]
    recipes = [Recipe(ops={"serialise_stream": 1, "serialise_object": o}, nbytes={"serialise": b}) for o, b in shapes]
    cpu = CpuCostModel(1e9, {k: v for k, v in truth.items() if k != "serialise"}, {"serialise": truth["serialise"]})
    fitted = m.fit_unit_costs(recipes, [r.seconds(cpu) for r in recipes], tuple(truth))
    for op, v in truth.items():
        assert fitted[op] == pytest.approx(v, rel=1e-9)
    with pytest.raises(ValueError, match="at least"):
        m.fit_unit_costs(recipes[:1], [1e-6], tuple(truth))


def measured_frame(**ns_by_benchmark):
    rows = [{"benchmark": b, "now_ns": v, "median_ns": v, "iterations": 1, "available": True, "reason": ""}
            for b, v in ns_by_benchmark.items()]
    return pd.DataFrame(rows).set_index("benchmark")


def test_now_residual_is_what_the_measured_parts_leave():
    parts = {"regular call, megamorphic": 2.0, "interface call, megamorphic": 3.0, "ThreadLocal.get()": 2.0,
             "synchronized": 5.0}
    b = m.lrmi_breakdown_now(measured_frame(**parts, **{"null LRMI, megamorphic": 25.0}))
    assert b.loc["now", "three_ops_us"] == pytest.approx(15e-3)
    assert b.loc["now", "residual_us"] == pytest.approx(10e-3)
    assert b.loc["now", "lrmi_over_regular_call"] == pytest.approx(12.5)
    overlapped = m.lrmi_breakdown_now(measured_frame(**parts, **{"null LRMI, megamorphic": 12.0}))
    assert math.isnan(overlapped.loc["now", "residual_us"]) and "overlaps" in overlapped.loc["now", "note"]


def test_then_and_now_reports_missing_measurements_as_nan():
    missing = pd.DataFrame({"now_ns": [math.nan], "median_ns": [math.nan], "iterations": [0],
                            "available": [False], "reason": ["a JDK is not installed"]},
                           index=pd.Index(["synchronized"], name="benchmark"))
    t = m.then_and_now(missing)
    assert t["now_us"].isna().all() and t.loc["J-Kernel LRMI", "then_ms_vm_us"] == pytest.approx(
        m.table1(P).loc[("J-Kernel LRMI", "MS-VM"), "time_us"])


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="vm"):
        m.cost_model(P, "IBM-VM")
    with pytest.raises(ValueError, match="method"):
        m.copy_recipe(P, 1, 1, "pickle")
    with pytest.raises(ValueError, match="server"):
        m.simulate_server(P, "Apache")
    with pytest.raises(ValueError, match="thread_model"):
        dataclasses.replace(P, thread_model="fibres")
    with pytest.raises(ValueError, match="enough_s"):
        m.time_java(m.JAVA_BENCHMARKS[0], enough_s=0, tries=1)


def test_a_missing_jdk_is_reported_not_raised(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYSIM_CACHE_DIR", str(tmp_path / "cache"))
    r = m.time_java(m.JAVA_BENCHMARKS[0], enough_s=0.01, tries=1)
    assert not r.available and "not installed" in r.reason


@pytest.mark.quiet  # timings: run before the notebooks start beside the suite
@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None, reason="no JDK on this machine")
def test_real_jvm_stub_costs_more_than_its_lookup_and_serialisation_more_than_a_copy():
    by_name = {b.name: b for b in m.JAVA_BENCHMARKS}

    def now(name):
        r = m.time_java(by_name[name], enough_s=0.01, tries=5, warmup_s=0.3)
        assert r.available, r.reason
        return r.per_op_s

    lookup, stub = now("ThreadLocal.get()"), now("null LRMI, megamorphic")
    assert 0 < lookup < stub < 10e-6          # the stub does a lookup, two locks and two calls
    fast, serial = now("fast copy, 1 x 1000 B"), now("serialization, 1 x 1000 B")
    assert serial > 10 * fast                  # a stream, a descriptor and reflection against one clone


class ShrinkingClock:
    """A loop that runs faster each time until the JIT is done: 10 ms, 8 ms, ... down to ``floor_s``."""

    def __init__(self, floor_s):
        self.floor_s, self.t, self.runs = floor_s, 0.010, 0

    def run(self, n):
        self.runs += 1
        t, self.t = self.t, max(self.floor_s, 0.8 * self.t)
        return t


def test_warm_up_runs_on_while_the_loop_still_speeds_up():
    settled = ShrinkingClock(floor_s=0.004)        # 10, 8, 6.4, 5.12, 4.1, then 4 ms for good
    spent = m.warm_up(settled, 1, warmup_s=0.010)
    assert settled.runs == 6 and spent == pytest.approx(0.010 + 0.008 + 0.0064 + 0.00512 + 0.004096 + 0.004)
    slow = ShrinkingClock(floor_s=0.0)             # never settles: stopped at four times the warm-up
    assert 0.040 <= m.warm_up(slow, 1, warmup_s=0.010) < 0.040 + 0.010
