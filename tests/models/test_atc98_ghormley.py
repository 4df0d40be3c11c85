"""Mechanism checks of the SLIC interposition model (atc98_ghormley), and of its real measurements."""
import dataclasses
import shutil

import numpy as np
import pytest

from pysim.models import atc98_ghormley as m

P = m.Params()
CYCLE_US = 1e6 / P.clock_hz


def by_hand_us(p, event, n_ext, *, returns=False, user_level=False):
    """One event with SLIC loaded and n_ext null extensions, counted by hand from the Params."""
    base = dict(p.base_us)[event]
    if event == "kill":
        t = base + p.signal_interceptions * p.signal_hook_cycles * CYCLE_US
    else:
        t = base + (p.hook_cycles + dict(p.copies)[event] * p.copy_check_cycles) * CYCLE_US
    if n_ext == 0:
        return t
    window = p.call_with_spill_us - p.call_cycles * CYCLE_US
    per_ext = p.extension_cycles * CYCLE_US + (2 * window if returns else 0.0)
    if user_level:
        per_ext += 2 * p.context_switch_us + dict(p.base_us)["getpid"]
    return t + p.dispatch_cycles * CYCLE_US + n_ext * per_ext


@pytest.mark.parametrize("event", m.EVENTS)
def test_table1_is_the_hand_count_of_each_path(event):
    t1 = m.table1()
    assert t1.loc[("Unmodified system", event), "time_us"] == dict(P.base_us)[event]
    assert t1.loc[("SLIC, no extensions", event), "time_us"] == pytest.approx(by_hand_us(P, event, 0), rel=1e-12)
    assert t1.loc[("SLIC, 1 null extension", event), "time_us"] == pytest.approx(by_hand_us(P, event, 1), rel=1e-12)
    assert t1.loc[("SLIC user-level extension", event), "time_us"] == pytest.approx(
        by_hand_us(P, event, 1, user_level=True), rel=1e-12)


def test_only_sigprocmask_pays_the_copy_check():
    t1 = m.table1()
    over = t1.xs("SLIC, no extensions", level="configuration")["overhead_us"]
    assert over["sigprocmask"] - over["getpid"] == pytest.approx(P.copy_check_cycles * CYCLE_US, rel=1e-9)
    free = dataclasses.replace(P, copy_check_cycles=0.0)
    assert m.table1(free).loc[("SLIC, no extensions", "sigprocmask"), "overhead_us"] == pytest.approx(over["getpid"])


def test_figure5_is_a_straight_line_from_one_extension_with_the_extension_as_slope():
    f5 = m.figure5()
    counts = np.arange(1, m.MAX_EXTENSIONS + 1)
    curve = f5.loc[[str(n) for n in counts], "getpid_us"].to_numpy()
    step = P.extension_cycles * CYCLE_US
    assert np.allclose(np.diff(curve), step, rtol=1e-9)
    assert f5.loc["slope", "getpid_us"] == pytest.approx(step, rel=1e-9)
    # the jump from none to one extension is the dispatch plus one extension, not the slope
    assert f5.loc["1", "getpid_us"] - f5.loc["0", "getpid_us"] == pytest.approx(
        (P.dispatch_cycles + P.extension_cycles) * CYCLE_US, rel=1e-9)


def test_return_inspecting_extensions_pay_two_spilled_windows_each():
    f5 = m.figure5()
    window = P.call_with_spill_us - P.call_cycles * CYCLE_US
    assert f5.loc["slope", "getpid_returns_us"] - f5.loc["slope", "getpid_us"] == pytest.approx(2 * window, rel=1e-9)
    flat = m.figure5(dataclasses.replace(P, register_windows=False))
    assert flat.loc["slope", "getpid_returns_us"] == pytest.approx(flat.loc["slope", "getpid_us"], rel=1e-9)


def test_signal_twice_doubles_only_the_signal_dispatchers_extension_cost():
    twice = m.figure5(dataclasses.replace(P, signal_extension_passes=2))
    once = m.figure5()
    assert twice.loc["slope", "kill_us"] == pytest.approx(2 * once.loc["slope", "kill_us"], rel=1e-9)
    assert twice.loc["slope", "getpid_us"] == pytest.approx(once.loc["slope", "getpid_us"], rel=1e-9)


def test_bounce_is_two_context_switches_and_a_system_call():
    t1 = m.table1()
    bounce = (t1.loc[("SLIC user-level extension", "getpid"), "time_us"]
              - t1.loc[("SLIC, 1 null extension", "getpid"), "time_us"])
    assert bounce == pytest.approx(2 * P.context_switch_us + dict(P.base_us)["getpid"], rel=1e-12)
    same_space = m.table1(dataclasses.replace(P, bounce_context_switches=0))
    assert (same_space.loc[("SLIC user-level extension", "getpid"), "time_us"]
            - same_space.loc[("SLIC, 1 null extension", "getpid"), "time_us"]) == pytest.approx(2.82, rel=1e-9)


def test_user_level_counterfactual_bounces_once_per_extension():
    # every extension behind the Bounce: the 'user-level extension' row is not bounced twice
    p = dataclasses.replace(P, in_kernel_extensions=False)
    t1 = m.table1(p)
    assert t1.loc[("SLIC, 1 null extension", "getpid"), "time_us"] == pytest.approx(
        t1.loc[("SLIC user-level extension", "getpid"), "time_us"], rel=1e-12)


def test_total_calls_are_a_caught_count_over_its_share():
    totals = m.total_calls(P)
    assert totals["MAB"] == pytest.approx(9246 / 0.23)
    assert totals["TeX"] == pytest.approx(1635 / 0.60)
    assert totals["gcc"] == pytest.approx(47888 / 0.34)
    t2 = m.table2()
    assert t2.loc[("gcc", "Encrypt"), "caught_pct"] == pytest.approx(100 * 11031 / (47888 / 0.34))
    assert (t2.xs("CERT", level="extension")["caught_calls"] == 0).all()


def test_table3_is_calls_caught_times_cost_per_call():
    # gcc under Encrypt, by hand: every call pays the dispatcher, Encrypt's calls the dispatch, one extension
    # and Encrypt's handler
    t3, total = m.table3(), m.total_calls(P)["gcc"]
    every_call_us = (P.hook_cycles + P.copies_per_call * P.copy_check_cycles) * CYCLE_US
    encrypt_us = (P.dispatch_cycles + P.extension_cycles) * CYCLE_US + P.encrypt_call_us
    ree_us = (P.dispatch_cycles + P.extension_cycles) * CYCLE_US + P.ree_call_us
    base = dict(P.baseline_s)["gcc"]
    assert t3.loc[("gcc", "SLIC, no extensions"), "time_s"] == pytest.approx(base + total * every_call_us * 1e-6)
    assert t3.loc[("gcc", "Encrypt"), "time_s"] == pytest.approx(
        base + (total * every_call_us + 11031 * encrypt_us) * 1e-6, rel=1e-12)
    assert t3.loc[("gcc", "CERT + Encrypt + REE"), "time_s"] == pytest.approx(
        base + (total * every_call_us + 11031 * encrypt_us + 47888 * ree_us) * 1e-6, rel=1e-12)
    s = t3.loc[("gcc", "Encrypt")]
    assert s["slowdown_pct"] == pytest.approx(100 * (s["time_s"] / base - 1))


def test_a_filtering_dispatcher_makes_cert_free_and_a_proc_tracer_does_not():
    t3 = m.table3()
    for b in m.BENCHMARKS:
        assert t3.loc[(b, "CERT"), "time_s"] == t3.loc[(b, "SLIC, no extensions"), "time_s"]
    p = dataclasses.replace(P, in_kernel_extensions=False, filter_by_call=False)
    traced, total = m.table3(p), m.total_calls(P)["MAB"]
    bounce_us = (P.dispatch_cycles + P.extension_cycles) * CYCLE_US + 2 * P.context_switch_us + 2.82
    assert (traced.loc[("MAB", "CERT"), "time_s"] - traced.loc[("MAB", "SLIC, no extensions"), "time_s"]
            == pytest.approx(total * bounce_us * 1e-6, rel=1e-9))


def test_encrypt_cost_per_caught_call_predicts_the_other_benchmarks_in_proportion():
    # one cost per caught call: the added times of MAB and TeX stand to gcc's as their caught counts, once
    # the dispatcher's share on every call is taken out
    t3, totals = m.table3(), m.total_calls(P)
    every_call_s = (P.hook_cycles + P.copy_check_cycles) * CYCLE_US * 1e-6
    caught = {"MAB": 2732, "TeX": 1635, "gcc": 11031}
    per_call = {b: (t3.loc[(b, "Encrypt"), "time_s"] - dict(P.baseline_s)[b] - totals[b] * every_call_s) / caught[b]
                for b in m.BENCHMARKS}
    assert per_call["MAB"] == pytest.approx(per_call["gcc"], rel=1e-9)
    assert per_call["TeX"] == pytest.approx(per_call["gcc"], rel=1e-9)


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="base_us"):
        dataclasses.replace(P, base_us=(("getpid", 2.0),))
    with pytest.raises(ValueError, match="caught"):
        dataclasses.replace(P, caught=(("MAB", "REE", -1),))
    with pytest.raises(ValueError, match="caught_pct"):
        dataclasses.replace(P, caught_pct=(("MAB", "REE", 23),))
    with pytest.raises(ValueError, match="context_switch_us"):
        dataclasses.replace(P, context_switch_us=-1.0)
    with pytest.raises(ValueError, match="extensions"):
        m.measure_chain((0, 99))


def test_build_accounting_prices_calls_and_bytes_and_names_the_rest():
    import pandas as pd

    build = pd.DataFrame({"cpu_s": [1.0, 1.1, 1.3], "processes": [0, 10, 10], "opens": [0, 100, 100],
                          "reads": [0, 300, 300], "writes": [0, 0, 0], "bytes": [0, 1e6, 1e6]},
                         index=list(m.BUILDS))
    chain = pd.DataFrame({"args_alone_ns": [5.0, 2.0]}, index=["0", "slope"])
    acc = m.build_accounting(build, chain, per_byte_s=1e-9)
    dispatch_only = acc.loc["LD_PRELOAD dispatcher, no extension"]
    assert dispatch_only["explained_ms"] == pytest.approx(400 * 5e-9 * 1e3)
    assert dispatch_only["explained_ms"] + dispatch_only["residual_ms"] == pytest.approx(100.0)
    inspecting = acc.loc["LD_PRELOAD, an extension reading every byte"]
    assert inspecting["explained_ms"] == pytest.approx((400 * 7e-9 + 1e6 * 1e-9) * 1e3)
    assert inspecting["residual_per_process_us"] == pytest.approx((0.3 - 400 * 7e-9 - 1e-3) * 1e6 / 10)


# --- the real measurements (skipped where the tools are missing) -------------------------------------

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@needs_gcc
def test_a_real_chain_of_extensions_around_getpid():
    df = m.measure_chain((0, 1, 20), quick=True)
    if df["note"].iloc[0]:
        pytest.skip(df["note"].iloc[0])
    assert 0 < df.loc["plain", "args_ns"] < 100_000             # a system call takes nanoseconds to microseconds
    # twenty calls through pointers cost more than none, clear of the system call's noise
    assert df.loc["20", "args_alone_ns"] > df.loc["0", "args_alone_ns"]
    assert 0 < df.loc["slope", "args_alone_ns"] < 100


@needs_gcc
def test_a_real_seccomp_supervisor_answers_every_getpid():
    df = m.measure_bounce(quick=True)
    path = "seccomp notification, supervisor process, one CPU"
    if df.loc[path, "note"]:
        pytest.skip(df.loc[path, "note"])
    # a round trip through another process costs more than the bare call it wraps
    assert df.loc[path, "time_ns"] > 2 * df.loc["plain getpid()", "time_ns"]


@needs_gcc
def test_a_real_build_under_an_ld_preload_extension():
    df = m.measure_preload_build(quick=True)
    if df["note"].str.len().max():
        pytest.skip(df["note"].max())
    assert (df["build_s"] > 0).all() and (df["cpu_s"] > 0).all()
    assert (df["cpu_s"] < 2 * df["build_s"]).all()   # gcc runs its compilers one after another
    caught = df.loc["LD_PRELOAD dispatcher, no extension"]
    assert caught["opens"] > 0 and caught["reads"] > 0 and caught["processes"] >= 2
    assert df.loc["plain build", "opens"] == 0
