"""`make bench` / `pysim bench`: the core's speed as ratios against every peer, measured in one run.

Each comparison runs the same input on both sides and checks that the
results agree (identical, or equal to rounding) before it reports a ratio:

* mm1: M/M/1 (lambda 0.9, mu 1.0) fed by one trace of interarrival and
  service times. The C stations against a bare binary-heap loop in plain C
  compiled here (goal >= 0.8, the median of interleaved rounds); the
  pysim.engine process model against SimPy (goal >= 5), salabim and Ciw,
  each running the same model in its own idiom on the same trace.
* bank: SimPy's bank with reneging customers (10,000 of them) as
  pysim.engine processes against SimPy (goal >= 10).
* cache: an 8-way 256 KiB LRU cache with 64-byte lines over one address
  trace, against a bare C loop (goal >= 0.5) and against pycachesim; the
  Numba LRU callback against the built-in LRU.
* pagecache: the C page cache (pysim.sw.pagecache, LRU, 1024 pages) over
  the pages of the same trace, against a bare LRU in plain C (a hash table
  and a linked list, goal >= 0.5), with the same hits.
* network: TCP Reno flows through a RED dumbbell (pysim.network.scenarios)
  against the same dumbbell in ns-3 (benchmarks/ns3_dumbbell.cc, built
  here with pkg-config where ns-3's headers are installed), after checking
  that both deliver about the same bytes; simulated seconds per wall
  second, and packets per wall second (goal: faster than ns-3).

Rates are customers (or addresses) per second of wall time, so that
implementations doing different numbers of events are compared on the
same work. These machines are shared and noisy: ratios, not absolute
times, are what the report stands on.
"""
from __future__ import annotations

import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from pysim import __version__
from pysim.rng import make_rng

BENCH_DIR = Path(__file__).resolve().parents[1] / "benchmarks"
GOALS = {"mm1.c_model_vs_plain_c": 0.8, "mm1.python_api_vs_simpy": 5.0, "bank.pysim_vs_simpy": 10.0,
         "cache.vs_plain_c": 0.5, "pagecache.vs_plain_c": 0.5, "network.vs_ns3": 1.0}
NS3_MODULES = ("ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-applications",
               "ns3-traffic-control")


def cpu_model() -> str:
    """The CPU's model name, from /proc/cpuinfo where there is one."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _compile(name: str, workdir: Path) -> Path:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise RuntimeError(f"the benchmark compiles its plain-C baseline and needs a C compiler ({cc!r} not found)")
    src = BENCH_DIR / f"{name}.c"
    if not src.exists():
        raise RuntimeError(f"{src} not found: run the benchmark from a source checkout")
    exe = workdir / name
    subprocess.run([cc, "-O3", "-std=c99", "-o", str(exe), str(src)], check=True)
    return exe


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _best(fn, repeat):
    runs = [_timed(fn) for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def _interleaved(argv, ours, rounds: int):
    """Run the plain-C program ``argv`` and ``ours`` alternately ``rounds`` times, so both meet the same
    moments of a shared machine. Returns (the program's output fields per round, our seconds per round,
    our last result, plain/ours time ratio per round); the program prints its timed seconds second."""
    outs, ours_s, per_round, result = [], [], [], None
    for _ in range(rounds):
        outs.append(subprocess.run([str(a) for a in argv], check=True, capture_output=True, text=True).stdout.split())
        seconds, result = _timed(ours)
        ours_s.append(seconds)
        per_round.append(float(outs[-1][1]) / seconds)
    return outs, ours_s, result, per_round


def _scenarios():
    spec = importlib.util.spec_from_file_location("simpy_scenarios", BENCH_DIR / "simpy_scenarios.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# --- M/M/1 in each implementation's own idiom ---------------------------------------------

def _pysim_mm1(ia, svc):
    from pysim.engine import Simulation

    sim = Simulation()
    server = sim.resource(1)
    total = [0.0]

    def customer(s):
        arrive = sim.now
        req = server.request()
        yield req
        yield sim.timeout(s)
        server.release(req)
        total[0] += sim.now - arrive

    def source():
        timeout, process = sim.timeout, sim.process
        for a, s in zip(ia.tolist(), svc.tolist()):
            yield timeout(a)
            process(customer(s))

    sim.process(source())
    sim.run()
    return total[0] / ia.size


def _simpy_mm1(ia, svc):
    import simpy

    env = simpy.Environment()
    server = simpy.Resource(env, 1)
    total = [0.0]

    def customer(s):
        arrive = env.now
        req = server.request()
        yield req
        yield env.timeout(s)
        server.release(req)
        total[0] += env.now - arrive

    def source():
        for a, s in zip(ia.tolist(), svc.tolist()):
            yield env.timeout(a)
            env.process(customer(s))

    env.process(source())
    env.run()
    return total[0] / ia.size


def _salabim_mm1(ia, svc):
    import salabim as sim

    sim.yieldless(False)
    env = sim.Environment(trace=False)
    server = sim.Resource("server", capacity=1, env=env)
    total = [0.0]

    class Customer(sim.Component):
        def setup(self, s):
            self.s = s

        def process(self):
            arrive = env.now()
            yield self.request(server)
            yield self.hold(self.s)
            self.release(server)
            total[0] += env.now() - arrive

    class Source(sim.Component):
        def process(self):
            for a, s in zip(ia.tolist(), svc.tolist()):
                yield self.hold(a)
                Customer(s=s, env=env)

    Source(env=env)
    env.run()
    return total[0] / ia.size


def _ciw_mm1(ia, svc):
    import ciw

    network = ciw.create_network(arrival_distributions=[ciw.dists.Sequential(ia.tolist())],
                                 service_distributions=[ciw.dists.Sequential(svc.tolist())],
                                 number_of_servers=[1])
    q = ciw.Simulation(network)
    q.simulate_until_max_customers(ia.size, method="Finish")
    records = q.get_all_records()
    return sum(r.exit_date - r.arrival_date for r in records) / len(records)


PEERS = {"simpy": ("simpy", _simpy_mm1), "salabim": ("salabim", _salabim_mm1), "ciw": ("ciw", _ciw_mm1)}


def bench_mm1(n: int, n_peer: dict, workdir: Path, progress, rounds: int = 7) -> dict:
    """The C model against plain C on n customers; the Python API against each peer on n_peer[peer]."""
    from pysim.queueing import single_queue_trace

    gen = make_rng(0)
    ia, svc = gen.exponential(1 / 0.9, n), gen.exponential(1.0, n)
    ia.tofile(workdir / "ia.bin")
    svc.tofile(workdir / "svc.bin")
    exe = _compile("plain_mm1", workdir)
    progress(f"mm1: plain C and the C model, {rounds} interleaved rounds")
    outs, model_s, model, per_round = _interleaved([exe, workdir / "ia.bin", workdir / "svc.bin", n],
                                                   lambda: single_queue_trace(ia, svc), rounds)
    plain_s = [float(out[1]) for out in outs]
    plain_mean, plain_events = float(outs[-1][3]), int(outs[-1][2])
    impl = {"plain_c": {"seconds": min(plain_s), "customers": n, "mean_time_in_system_s": plain_mean,
                        "events": plain_events},
            "c_model": {"seconds": min(model_s), "customers": n, "mean_time_in_system_s": model.mean_sojourn_s,
                        "events": model.events}}
    agree = {"c_model": bool(np.isclose(model.mean_sojourn_s, plain_mean, rtol=1e-9, atol=0))}
    ratios = {"mm1.c_model_vs_plain_c": statistics.median(per_round)}
    for peer, (module, run_peer) in PEERS.items():
        if not _available(module):
            impl[peer] = {"available": False}
            continue
        m = n_peer[peer]
        progress(f"mm1: pysim processes and {peer}, {m} customers")
        py_s, py_mean = _best(lambda: _pysim_mm1(ia[:m], svc[:m]), 3)
        peer_s, peer_mean = _best(lambda: run_peer(ia[:m], svc[:m]), 1)
        impl.setdefault("python_api", {"seconds": py_s, "customers": m, "mean_time_in_system_s": py_mean})
        impl[peer] = {"seconds": peer_s, "customers": m, "mean_time_in_system_s": peer_mean,
                      "pysim_seconds_same_customers": py_s}
        agree[peer] = bool(np.isclose(peer_mean, py_mean, rtol=1e-9, atol=0))
        ratios[f"mm1.python_api_vs_{peer}"] = peer_s / py_s
    for r in impl.values():
        if r.get("seconds"):
            r["customers_per_s"] = r["customers"] / r["seconds"]
            r["events_per_s"] = r["events"] / r["seconds"] if r.get("events") else None
    return {"customers": n, "rounds": rounds, "c_model_round_ratios": per_round, "implementations": impl,
            "agree": agree, "same_result": all(agree.values()), "ratios": ratios}


def bench_bank(customers: int, progress) -> dict:
    """SimPy's bank with reneging, as pysim processes and as SimPy processes: the same outcomes, timed."""
    import simpy

    import pysim.engine

    bank = _scenarios().bank_reneging
    progress(f"bank: {customers} customers, pysim and SimPy")
    py_s, py_out = _best(lambda: bank(pysim.engine, 0, customers, trace=False), 5)
    simpy_s, simpy_out = _best(lambda: bank(simpy, 0, customers, trace=False), 3)
    same = py_out["served"] == simpy_out["served"] and py_out["reneged"] == simpy_out["reneged"] \
        and np.isclose(py_out["wait_s"], simpy_out["wait_s"], rtol=1e-12)
    return {"customers": customers, "outcomes": py_out, "same_result": bool(same),
            "implementations": {"pysim": {"seconds": py_s, "customers_per_s": customers / py_s},
                                "simpy": {"seconds": simpy_s, "customers_per_s": customers / simpy_s}},
            "ratios": {"bank.pysim_vs_simpy": simpy_s / py_s}}


# --- the cache ---------------------------------------------------------------------------------

def synthetic_trace(n: int, rng=0) -> np.ndarray:
    """Byte addresses: 70% in a hot 512 KiB region, 20% strided scans of 8 MiB, 10% uniform over 256 MiB."""
    gen = make_rng(rng)
    kind = gen.random(n)
    hot = gen.integers(0, 512 * 1024, n)
    scan = (np.arange(n) * 64) % (8 << 20) + (64 << 20)
    cold = gen.integers(0, 256 << 20, n)
    return np.where(kind < 0.7, hot, np.where(kind < 0.9, scan, cold)).astype(np.uint64)


def _pycachesim_hits(trace, size, line, ways) -> int:
    from cachesim import Cache as PCache
    from cachesim import CacheSimulator, MainMemory

    memory = MainMemory()
    l1 = PCache("L1", size // (line * ways), ways, line, "LRU")
    memory.load_to(l1)
    memory.store_from(l1)
    sim = CacheSimulator(l1, memory)
    sim.load(trace.tolist())
    return int(l1.stats()["HIT_count"])


def bench_cache(n: int, n_peer: int, workdir: Path, progress, rounds: int = 5) -> dict:
    from pysim import policies
    from pysim.hw import Cache

    size, line, ways = 256 * 1024, 64, 8
    trace = synthetic_trace(n)
    trace.tofile(workdir / "addrs.bin")
    exe = _compile("plain_cache", workdir)
    progress(f"cache: plain C and the built-in LRU, {rounds} interleaved rounds")
    outs, b_s, b_counts, per_round = _interleaved([exe, workdir / "addrs.bin", n, size, line, ways],
                                                  lambda: Cache(size, line, ways).run(trace), rounds)
    plain_s, plain_hits = [float(out[1]) for out in outs], int(outs[-1][2])
    callback = policies.compiled_lru()
    progress("cache: Numba LRU")
    nb_s, nb_counts = _best(lambda: Cache(size, line, ways, "custom", callback=callback).run(trace), 3)
    impl = {"plain_c": {"seconds": min(plain_s), "addresses": n, "hits": plain_hits},
            "builtin_lru": {"seconds": min(b_s), "addresses": n, "hits": b_counts["hits"]},
            "numba_lru": {"seconds": nb_s, "addresses": n, "hits": nb_counts["hits"]}}
    agree = {"builtin_lru": b_counts["hits"] == plain_hits, "numba_lru": nb_counts["hits"] == plain_hits}
    ratios = {"cache.vs_plain_c": statistics.median(per_round), "cache.numba_policy_vs_builtin": min(b_s) / nb_s}
    if _available("cachesim"):
        progress(f"cache: pycachesim on {n_peer} addresses")
        prefix = trace[:n_peer]
        own_s, own = _best(lambda: Cache(size, line, ways).run(prefix), 3)
        peer_s, peer_hits = _best(lambda: _pycachesim_hits(prefix, size, line, ways), 1)
        impl["pycachesim"] = {"seconds": peer_s, "addresses": n_peer, "hits": peer_hits,
                              "pysim_hits_same_addresses": own["hits"], "pysim_seconds_same_addresses": own_s}
        agree["pycachesim"] = peer_hits == own["hits"]
        ratios["cache.vs_pycachesim"] = peer_s / own_s
    else:
        impl["pycachesim"] = {"available": False}
    for r in impl.values():
        if r.get("seconds"):
            r["addresses_per_s"] = r["addresses"] / r["seconds"]
    return {"addresses": n, "geometry": {"size_bytes": size, "line_bytes": line, "ways": ways},
            "implementations": impl, "agree": agree, "same_result": all(agree.values()), "ratios": ratios}


def bench_pagecache(n: int, workdir: Path, progress, capacity: int = 1024, rounds: int = 5) -> dict:
    """The C page cache against a plain-C LRU on the 4 KiB pages of :func:`synthetic_trace`."""
    from pysim.sw.pagecache import PageCache

    keys = synthetic_trace(n) >> np.uint64(12)
    keys.tofile(workdir / "pages.bin")
    exe = _compile("plain_pagecache", workdir)
    progress(f"pagecache: plain C and the C page cache, {rounds} interleaved rounds")
    outs, pc_s, counts, per_round = _interleaved([exe, workdir / "pages.bin", n, capacity],
                                                 lambda: PageCache(capacity).run(keys), rounds)
    plain_s, plain_hits = [float(out[1]) for out in outs], int(outs[-1][2])
    impl = {"plain_c": {"seconds": min(plain_s), "addresses": n, "hits": plain_hits},
            "pagecache": {"seconds": min(pc_s), "addresses": n, "hits": counts.hits}}
    for r in impl.values():
        r["addresses_per_s"] = r["addresses"] / r["seconds"]
    agree = {"pagecache": counts.hits == plain_hits}
    return {"pages": n, "capacity_pages": capacity, "implementations": impl, "agree": agree,
            "same_result": all(agree.values()), "ratios": {"pagecache.vs_plain_c": statistics.median(per_round)}}


def _ns3_program() -> Path | None:
    """benchmarks/ns3_dumbbell.cc built against the installed ns-3 (cached), or None without ns-3."""
    import hashlib

    from pysim.harness.runners import cache_dir

    src = BENCH_DIR / "ns3_dumbbell.cc"
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None or shutil.which("pkg-config") is None or not src.exists():
        return None
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", *NS3_MODULES], capture_output=True, text=True,
                           check=False)
    if flags.returncode != 0:
        return None
    key = hashlib.sha256(src.read_bytes() + flags.stdout.encode()).hexdigest()[:16]
    exe = cache_dir() / f"ns3-dumbbell-{key}"
    if not exe.exists():
        built = subprocess.run([cxx, "-O2", "-std=c++17", str(src), "-o", str(exe), *flags.stdout.split()],
                               capture_output=True, text=True, check=False)
        if built.returncode != 0:
            return None
    return exe


def bench_network(flows: int, seconds: float, progress) -> dict:
    """The RED dumbbell in pysim (median of 3 runs) against ns-3 (one run): simulated seconds per wall
    second, after checking the delivered bytes agree within 15% (ns-3's TcpLinuxReno and RedQueueDisc
    differ in detail from 4.4BSD Reno and ns-2's RED)."""
    from pysim.network.scenarios import red_dumbbell

    progress(f"network: RED dumbbell, {flows} TCP flows, {seconds} simulated s")
    runs = [_timed(lambda: red_dumbbell(flows, seconds, rng=k)) for k in range(3)]
    wall = statistics.median(t for t, _ in runs)
    net, _ = runs[0][1]
    delivered = int(net.flows().delivered_bytes.sum())
    impl = {"pysim": {"seconds": wall, "simulated_s": seconds, "packets": net.packets_moved,
                      "delivered_bytes": delivered, "packets_per_s": net.packets_moved / wall}}
    ratios, agree = {}, {}
    exe = _ns3_program()
    if exe is None:
        impl["ns3"] = {"available": False}
    else:
        progress("network: the same dumbbell in ns-3")
        out = subprocess.run([str(exe), f"--flows={flows}", f"--until={seconds}"], capture_output=True, text=True,
                             check=True).stdout.split()
        ns3_bytes, ns3_wall = int(out[0]), float(out[1])
        impl["ns3"] = {"seconds": ns3_wall, "simulated_s": seconds, "delivered_bytes": ns3_bytes,
                       "packets_per_s": net.packets_moved * ns3_bytes / max(delivered, 1) / ns3_wall}
        agree["ns3"] = abs(ns3_bytes - delivered) <= 0.15 * ns3_bytes
        ratios["network.vs_ns3"] = ns3_wall / wall
    return {"flows": flows, "implementations": impl, "agree": agree, "same_result": all(agree.values()),
            "ratios": ratios}


def run(out_path: Path | str = "results/bench.json", *, quick: bool = False, progress=print) -> dict:
    """Run every comparison, write ``out_path`` (atomically) and return the report."""
    if quick:
        n_mm1, peers, n_bank, n_cache, n_pcs = 100_000, {"simpy": 20_000, "salabim": 500, "ciw": 2_000}, 2_000, \
            1_000_000, 100_000
    else:
        n_mm1, peers, n_bank, n_cache, n_pcs = 1_000_000, {"simpy": 200_000, "salabim": 3_000, "ciw": 20_000}, \
            10_000, 10_000_000, 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        mm1 = bench_mm1(n_mm1, peers, Path(tmp), progress)
        bank = bench_bank(n_bank, progress)
        cache = bench_cache(n_cache, n_pcs, Path(tmp), progress)
        pagecache = bench_pagecache(n_cache, Path(tmp), progress)
    network = bench_network(4, 20.0 if quick else 100.0, progress)
    ratios = {**mm1["ratios"], **bank["ratios"], **cache["ratios"], **pagecache["ratios"], **network["ratios"]}
    report = {
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
                    "numpy": np.__version__, "pysim": __version__},
        "profile": "quick" if quick else "full",
        "mm1": mm1, "bank": bank, "cache": cache, "pagecache": pagecache, "network": network, "ratios": ratios,
        "goals": {k: {"goal": g, "ratio": ratios[k], "met": ratios[k] >= g} for k, g in GOALS.items() if k in ratios},
    }
    from pysim.results import write_text_atomic

    write_text_atomic(Path(out_path), json.dumps(report, indent=2))
    return report


def format_report(report: dict) -> str:
    """The report as a table a person reads."""
    lines = [f"machine: {report['machine']['cpu']} ({report['machine']['cores']} cores), profile {report['profile']}"]
    for name, unit in (("mm1", "customers_per_s"), ("bank", "customers_per_s"), ("cache", "addresses_per_s"),
                       ("pagecache", "addresses_per_s"), ("network", "packets_per_s")):
        sec = report[name]
        agree = ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in sec.get("agree", {}).items())
        lines.append(f"\n{name}: results agree: {sec['same_result']}" + (f" ({agree})" if agree else ""))
        for impl, r in sec["implementations"].items():
            if r.get("available") is False:
                lines.append(f"  {impl:12s} not installed")
                continue
            extra = (f"  mean T = {r['mean_time_in_system_s']:.6f} s" if "mean_time_in_system_s" in r
                     else f"  hits = {r['hits']}" if "hits" in r else "")
            lines.append(f"  {impl:12s} {r[unit] / 1e6:9.4f} M {unit.split('_')[0]}/s{extra}")
    lines.append("\nratio                              value    goal")
    for k, v in report["ratios"].items():
        goal = report["goals"].get(k)
        mark = "" if goal is None else f"  >= {goal['goal']:<4} {'met' if goal['met'] else 'NOT MET'}"
        lines.append(f"  {k:32s} {v:7.2f}{mark}")
    rr = report["mm1"]["c_model_round_ratios"]
    lines.append(f"\nC model / plain C by round: {', '.join(f'{r:.2f}' for r in rr)} (median reported)")
    return "\n".join(lines)
