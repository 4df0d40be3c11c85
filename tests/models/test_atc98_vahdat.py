"""Mechanism checks of the TREC model (atc98_vahdat): tracing costs, the closed CGI network, the real runs."""
import dataclasses
import json
import math
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pysim.harness import TracedRun, traced_run
from pysim.models import atc98_vahdat as m
from pysim.sw.syscalls import SyscallMix

P = m.Params()


def write_tree(root: Path, files: dict) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755 if text.startswith("#!") else 0o644)
    return root


# --- tracing --------------------------------------------------------------------------------------

def test_overhead_is_traced_rate_times_bounce_and_handler():
    t1 = m.table1(P)
    per_call_s = (P.bounce_us + P.trec_handler_us) * 1e-6
    for name, rate in [("open", P.open_rate_per_s), ("Apache compile", P.apache_rate_per_s),
                       ("Latex", P.latex_rate_per_s)]:
        assert t1.loc[name, "overhead_pct"] == pytest.approx(100 * rate * per_call_s, rel=1e-12)
    # the open loop: 5000 opens at the given rate, then slowed by the overhead
    base = P.open_loop_calls / P.open_rate_per_s
    assert t1.loc["open", "trec_s"] == pytest.approx(base * (1 + P.open_rate_per_s * per_call_s), rel=1e-12)
    apache = P.apache_untraced_s * (1 + P.apache_rate_per_s * per_call_s)
    assert t1.loc["Apache compile", "trec_s"] == pytest.approx(apache)
    assert math.isnan(t1.loc["Latex", "original_s"])


def test_close_and_read_write_are_not_caught():
    trec = m.trec_interposer(P)
    assert trec.caught(SyscallMix({"open": 10, "close": 10, "read": 40, "write": 40})) == 10
    both = m.trec_interposer(dataclasses.replace(P, trace_reads_writes=True))
    assert both.caught(SyscallMix({"open": 10, "close": 10, "read": 40, "write": 40})) == 90


def test_tracing_reads_and_writes_multiplies_the_programs_overhead_by_five():
    base, rw = m.table1(P), m.table1(dataclasses.replace(P, trace_reads_writes=True))
    factor = 1 + P.read_write_per_traced           # §2.1: four reads/writes per traced call
    for name in ("Apache compile", "Latex"):
        assert rw.loc[name, "overhead_pct"] == pytest.approx(factor * base.loc[name, "overhead_pct"])
    assert rw.loc["open", "overhead_pct"] == pytest.approx(base.loc["open", "overhead_pct"])  # no reads there


def test_in_kernel_tracing_costs_the_dispatch_and_lineage_update_only():
    k = dataclasses.replace(P, user_level_tracing=False)
    assert m.per_call_s(k) == pytest.approx((P.kernel_dispatch_us + P.kernel_lineage_us) * 1e-6)
    assert m.table1(k)["overhead_pct"].max() < 1.0      # "little or no overhead"


def test_implied_cost_per_call_by_hand():
    assert m.implied_per_call_us(54.8, 403) == pytest.approx(0.548 / 403 * 1e6)
    with pytest.raises(ValueError, match="calls_per_s"):
        m.implied_per_call_us([1.0], [0.0])


# --- the closed CGI network ----------------------------------------------------------------------

def buzen_response(demands_queue, delay_s, n):
    """Client time per request with n clients: product form by Buzen's convolution (an independent peer of MVA).

    The delay station's factor is delay^k / k!; each single-server queue's is d^k.
    """
    g = np.array([delay_s ** k / math.factorial(k) for k in range(n + 1)])
    for d in demands_queue:
        h = np.zeros(n + 1)
        for k in range(n + 1):
            h[k] = sum(g[j] * d ** (k - j) for j in range(k + 1))
        g = h
    throughput = g[n - 1] / g[n]
    return n / throughput


@pytest.mark.parametrize("server", m.SERVERS)
@pytest.mark.parametrize("clients", [1, 5, 40])
def test_mva_matches_the_convolution_algorithm(server, clients):
    got = m.closed_load(P, server, P.printenv_s, clients).loc[clients, "response_s"]
    want = buzen_response([m.server_cpu_s(P, server, P.printenv_s), m.link_s(P)], P.client_latency_s, clients)
    assert got == pytest.approx(want, rel=1e-9)


def test_one_client_waits_for_the_sum_of_the_demands():
    c = m.cgi(P)
    sent = P.static_serve_ms / 1000
    base = P.client_latency_s + sent + m.link_s(P)
    assert c.loc["printenv, 1 client", "caching_s"] == pytest.approx(base)
    assert c.loc["printenv, 1 client", "forking_s"] == pytest.approx(base + P.cgi_spawn_ms / 1000 + P.printenv_s)


def test_a_saturated_server_makes_each_client_wait_n_times_the_cpu_demand():
    # the asymptotic bound N * D_max, approached once the CPU is saturated
    c = m.cgi(P)
    d = m.server_cpu_s(P, "forking", P.long_cgi_s)
    for label, n in [("long CGI, 40 clients", 40), ("long CGI, 80 clients", 80)]:
        assert c.loc[label, "forking_s"] == pytest.approx(n * d, rel=1e-3)
        assert c.loc[label, "forking_s"] >= n * d * (1 - 1e-12)


def test_ten_megabit_port_time_by_hand():
    # request 200 B and reply 1200 B, one frame each: payload + 18 B header/FCS + 8 B preamble + 12 B gap
    assert m.link_s(P) == pytest.approx(((200 + 38) + (1200 + 38)) * 8 / 10e6)


def test_without_caching_both_servers_are_the_same():
    f4 = m.figure4(dataclasses.replace(P, caching=False))["response_s"].unstack("server")
    assert np.allclose(f4["forking"], f4["caching"])


def test_address_space_penalty_slows_only_the_forking_server_more_with_more_processes():
    plain, slow = m.figure4(P), m.figure4(dataclasses.replace(P, address_space_penalty=0.01))
    assert np.allclose(plain.xs("caching", level="server")["response_s"],
                       slow.xs("caching", level="server")["response_s"])
    ratio = slow.xs("forking", level="server")["response_s"] / plain.xs("forking", level="server")["response_s"]
    assert (ratio > 1).all() and ratio.is_monotonic_increasing
    # saturated with n processes present, the CPU works at 1 / (1 + a (n - 1)) of its speed
    n = 7 * P.clients_per_machine
    assert ratio.iloc[-1] == pytest.approx(1 + 0.01 * (n - 1), rel=0.02)


def test_engine_simulation_agrees_with_mva(seed):
    # processor sharing and an exponential delay: mean values are those of the product form
    for server, clients in [("caching", 40), ("forking", 40), ("caching", 20)]:
        sim = m.simulate_cgi(P, server, P.printenv_s, clients, seconds=400.0, rng=seed)
        mva = m.closed_load(P, server, P.printenv_s, clients).loc[clients, "response_s"]
        assert sim["mean_response_s"] == pytest.approx(mva, rel=0.04)


def test_figure4_simulated_refuses_a_penalty():
    with pytest.raises(ValueError, match="address_space_penalty"):
        m.figure4_simulated(dataclasses.replace(P, address_space_penalty=0.1), quick=True)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="program"):
        m.cgi_seconds(P, "perl")
    with pytest.raises(ValueError, match="server"):
        m.server_cpu_s(P, "squid", 0.1)
    with pytest.raises(ValueError, match="n_units"):
        m.build_tree(0)
    with pytest.raises(ValueError, match="seconds"):
        m.simulate_cgi(P, "caching", 0.05, 2, seconds=0.0)
    with pytest.raises(ValueError, match="columns"):
        m.cgi_now(pd.DataFrame({"users": [1]}))


# --- then vs now: the tables and the real runs ------------------------------------------------------

def test_tracing_now_prices_a_call_on_the_open_loop_and_predicts_the_rest():
    loop = TracedRun(True, plain_s=0.01, traced_s=0.06, mix=SyscallMix({"openat": 5000, "read": 7}))
    build = TracedRun(True, plain_s=1.0, traced_s=1.2, mix=SyscallMix({"openat": 3000, "execve": 100}))
    missing = TracedRun(False, reason="strace is not installed")
    t = m.tracing_now({"open loop": loop, "build": build, "other": missing})
    assert t.loc["open loop", "per_call_us"] == pytest.approx(10.0)          # 0.05 s / 5000 calls
    assert t.loc["build", "calls_per_s"] == pytest.approx(3100.0)
    assert t.loc["build", "predicted_overhead_pct"] == pytest.approx(3100 * 10e-6 * 100)
    assert t.loc["other", "status"].startswith("not available: strace")
    assert t.loc["open (1998 model)", "overhead_pct"] == pytest.approx(m.table1(P).loc["open", "overhead_pct"])


def test_cgi_now_pivots_and_adds_the_1998_ratio():
    runs = pd.DataFrame([{"server": s, "users": u, "throughput_per_s": 100.0, "mean_response_s": t}
                         for s, t in [("forking", 0.004), ("caching", 0.002)] for u in (1, 4)])
    out = m.cgi_now(runs)
    assert list(out.index) == [1, 4] and (out["forking_over_caching"] == 2.0).all()
    then = m.closed_load(P, "forking", P.printenv_s, 4)["response_s"] / m.closed_load(P, "caching", P.printenv_s,
                                                                                     4)["response_s"]
    assert out.loc[4, "forking_over_caching_1998"] == pytest.approx(then.loc[4])


@pytest.mark.skipif(not (shutil.which("cc") and shutil.which("make")), reason="needs a C compiler and make")
def test_the_build_tree_builds_and_runs(tmp_path):
    tree = write_tree(tmp_path, m.build_tree(3))
    subprocess.run(["make", "-s", "prog", "openloop"], cwd=tree, check=True, capture_output=True)
    out = subprocess.run(["./prog", "10"], cwd=tree, check=True, capture_output=True, text=True).stdout
    # unit k sums i * (k + 1) for i < n, plus the length of each name "item-k"
    n = 10
    want = sum(sum(i * (k + 1) + len(f"item-{k}") for i in range(n)) for k in range(3))
    assert int(out) == want
    subprocess.run(["./openloop", "100"], cwd=tree, check=True)


@pytest.mark.skipif(not (shutil.which("cc") and shutil.which("make") and shutil.which("strace")),
                    reason="needs a C compiler, make and strace")
def test_real_open_loop_traced_counts_every_open(tmp_path):
    tree = write_tree(tmp_path, m.build_tree(1))
    subprocess.run(["make", "-s", "openloop"], cwd=tree, check=True, capture_output=True)
    run = traced_run(["./openloop", "2000"], trace=m.STRACE_TRACE, cwd=tree, tries=1)
    if not run.available:
        pytest.skip(f"strace cannot trace here: {run.reason}")
    t = m.tracing_now({"open loop": run})
    assert run.mix.counts.get("openat", 0) + run.mix.counts.get("open", 0) >= 2000
    assert t.loc["open loop", "traced_calls"] >= 2000 and t.loc["open loop", "per_call_us"] > 0


def test_real_caching_server_runs_the_program_once_and_serves_its_output(tmp_path):
    site = write_tree(tmp_path, m.cgi_site())
    bodies = {}
    for server in m.SERVERS:
        proc = subprocess.Popen([sys.executable, "server.py", server], cwd=site, stdout=subprocess.PIPE, text=True)
        try:
            url = f"http://127.0.0.1:{int(proc.stdout.readline())}/cgi-bin/printenv?lang=en"
            bodies[server] = [urllib.request.urlopen(url, timeout=30).read() for _ in range(2)]
            load = subprocess.run([sys.executable, "load.py", url, "2", "0.3"], cwd=site, check=True,
                                  capture_output=True, text=True)
            assert json.loads(load.stdout)["completions"] > 0
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert b"QUERY_STRING=lang=en" in bodies["forking"][0]
    assert bodies["caching"][0] == bodies["caching"][1]                 # the second is the stored copy
    assert (site / "cache" / "printenv?lang=en").read_bytes().endswith(bodies["caching"][0])


def test_best_of_keeps_the_fastest_plain_and_traced_times():
    mix = SyscallMix({"openat": 10})
    runs = [TracedRun(True, 1.0, 3.0, mix), TracedRun(False, reason="ptrace not permitted"),
            TracedRun(True, 2.0, 2.5, mix)]
    best = m.best_of(runs)
    assert (best.plain_s, best.traced_s, best.mix) == (1.0, 2.5, mix)
    assert m.best_of(runs[1:2]).reason == "ptrace not permitted"
    with pytest.raises(ValueError, match="at least one"):
        m.best_of([])
