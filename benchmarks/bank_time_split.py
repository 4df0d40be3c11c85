"""Where pysim's time goes in the bank benchmark: the scenario's own Python, or the engine.

`make bench` times SimPy's bank with reneging under pysim and under SimPy. A
part of pysim's time is not the engine's at all: the scenario's generators,
its random draws and its bookkeeping run in the interpreter whatever engine
drives them, and that part bounds the ratio any engine can reach. This
script samples one process running the scenario with ``perf record`` (call
stacks by DWARF, software clock) and gives each sample to the innermost
frame that is either the interpreter running Python code or the binding
(``pysim._native``), then prints both shares, in microseconds per customer,
and the ratio SimPy would be at if the engine cost nothing.

    python benchmarks/bank_time_split.py [--customers 10000] [--runs 60]

It needs Linux ``perf`` (``apt-get install linux-perf``) with software events.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN = """
import sys
sys.path.insert(0, {here!r})
import simpy_scenarios, pysim.engine
for _ in range({runs}):
    simpy_scenarios.bank_reneging(pysim.engine, 0, {customers}, trace=False)
"""


def per_customer_s(module, customers: int, tries: int) -> float:
    sys.path.insert(0, str(HERE))
    import simpy_scenarios

    best = float("inf")
    for _ in range(tries):
        t0 = time.perf_counter()
        simpy_scenarios.bank_reneging(module, 0, customers, trace=False)
        best = min(best, time.perf_counter() - t0)
    return best / customers


def split(stacks: str) -> dict:
    """Samples taken inside env.run(), by the innermost owner: "binding" or "python" (the scenario's code)."""
    counts = {"binding": 0, "python": 0, "other": 0}
    for block in stacks.split("\n\n"):
        frames = block.strip().splitlines()
        if not any("Env_run" in f for f in frames):
            continue  # start-up, imports and set-up
        owner = "other"
        for f in frames:  # innermost first
            if "_native." in f:
                owner = "binding"
                break
            if "_PyEval_EvalFrameDefault" in f:
                owner = "python"
                break
        counts[owner] += 1
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--customers", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=60, help="scenario runs sampled by perf")
    args = ap.parse_args(argv)
    if shutil.which("perf") is None:
        print("perf is not installed (apt-get install linux-perf): nothing measured")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        code = RUN.format(here=str(HERE), runs=args.runs, customers=args.customers)
        rec = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "--call-graph",
                              "dwarf,8192", "-o", data, sys.executable, "-c", code], capture_output=True, text=True)
        if rec.returncode != 0:
            print(f"perf record failed: {rec.stderr.strip()[-300:]}")
            return 1
        stacks = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True,
                                text=True).stdout
    counts = split(stacks)
    total = sum(counts.values())
    if total == 0:
        print("perf took no samples inside env.run()")
        return 1
    import simpy

    import pysim.engine

    pysim_s = per_customer_s(pysim.engine, args.customers, 5)
    simpy_s = per_customer_s(simpy, args.customers, 3)
    python_share = counts["python"] / total
    print(f"samples inside env.run(): {total} (binding {counts['binding']}, scenario's Python {counts['python']}, "
          f"other {counts['other']})")
    print(f"pysim {pysim_s * 1e6:.2f} us per customer: scenario's Python {python_share * pysim_s * 1e6:.2f}, "
          f"binding {counts['binding'] / total * pysim_s * 1e6:.2f}")
    print(f"SimPy {simpy_s * 1e6:.2f} us per customer: ratio now {simpy_s / pysim_s:.2f}, "
          f"with an engine that cost nothing {simpy_s / (python_share * pysim_s):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
