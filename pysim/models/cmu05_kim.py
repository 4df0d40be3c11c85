"""Opportunity of hardware-based optimistic concurrency in OLTP (Kim, Nurvitadhi & Chung, CMU 15-712, 2005).

Regenerates Table 1 (the simulated machine) and Table 2 (the OLTP workloads) as the configuration the
model takes as given, Table 3 (lock acquire, release and critical-section times of DB2's and Oracle's
dominant lock patterns, in cycles at 4 GHz), Figure 7's four synchronization shares (DB2 and Oracle,
system and user mode), the abstract's averages, and two mechanism tables the paper argues from
without numbers: the lock constructs of §3 on the 16-way DSM (``locks``) and the lock predictors of §6
(``speculation``).

First principles: the lab's directory MSI protocol (:mod:`pysim.hw.coherence`) on a 16-CPU DSM whose
latencies are built from Table 1's 60 ns memory bank and assumed 2005 network hops; the locks issue
the loads, stores and atomics of their algorithms. Two wrappers are the paper's, not the shared
module's: every atomic first drains the pipeline (§2.3, §5.2; a 256-entry ROB retiring 8 a cycle,
Table 1), and the Pthreads lock (§5.2, Figure 6) releases with a ``swap``, an atomic, not a store.
:class:`LockLoop` runs each CPU through think time, acquire, critical section and release on the
engine and splits the acquire time into spinning (the lock held or being handed over by another CPU)
and the lock operations' own cost.

* DB2 Pattern 1 (Table 3: one address, highly contended) is 16 CPUs on one Pthreads test-and-set
  lock. Its critical section is Table 3's (an input); the think time between acquisitions is not
  given and is calibrated on the one published acquire time. The release time, the spin share and
  DB2's system-mode synchronization share (Figure 7) are then predictions: under contention the
  releasing ``swap`` queues at the line's home behind the spinners' atomics.
* DB2 Pattern 2 and Oracle (various / many addresses, little contention): 16 CPUs over many locks,
  the critical sections Table 3's, no work outside the lock episodes (the largest synchronization
  share the mechanism allows; the paper gives no rate). Their acquire and release times and the
  three other bars of Figure 7 are predictions, and the model misses them by about an order of
  magnitude: a lock's coherence traffic on this machine costs hundreds to a few thousand cycles, not
  Table 3's 10,000-20,000 (see papers/cmu05_kim/deviations.yaml).
* Speculation (§6): speculative lock elision (SLE: read the lock, run the section without writing
  it, validate at commit, take the lock after ``retries`` failures) and last-value prediction on
  atomics (§6.2: issue the atomic, run the section in its shadow, commit if the returned value was
  "free", else re-execute under the lock), on Pattern 1's hot lock with disjoint or shared data.

Not reproduced: Figures 1-6 and 8 (diagrams and code), Table 3's atomic mix (taken as given), the
Pthreads microbenchmarks of §5.2 (no thread counts, sections or results are printed).

Then vs now (:func:`measure_now`): test-and-set, test-and-test-and-set, ticket and MCS locks in C
with two threads on this machine, timed through :mod:`pysim.harness` (acquire plus release with a
second thread contending, alone, and a cache-line ping-pong between the two threads).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness import measure as harness_measure
from pysim.hw.coherence import (LOCKS, Directory, DsmLatency, TestAndSet, TestTestAndSet, elided_section,
                                 predicted_section)
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, derived, given, stated
from pysim.rng import make_rng
from pysim.harness.exclusive import exclusive

PATTERNS = ("DB2 Pattern 1", "DB2 Pattern 2", "Oracle Pattern")
BARS = {"DB2 system": "DB2 Pattern 1", "DB2 user": "DB2 Pattern 2",
        "Oracle system": "Oracle Pattern", "Oracle user": "Oracle Pattern"}
LOCK_NAMES = ("TAS+swap", "TAS", "TTAS", "ticket", "array", "MCS")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in cycles of the 4 GHz CPU unless the name says otherwise."""

    # Table 1: the machine
    cpus: int = stated(16, "Table 1: 16-way DSM", ge=1)
    clock_ghz: float = stated(4.0, "Table 1: 4 GHz")
    issue_width: int = stated(8, "Table 1: 8-way out-of-order CPUs", ge=1)
    rob_entries: int = stated(256, "Table 1: 256 ROB", ge=1)
    l1_kb: int = stated(64, "Table 1: L1 2-way 64KB", ge=1)
    l1_ways: int = stated(2, "Table 1: L1 2-way", ge=1)
    l2_mb: int = stated(8, "Table 1: L2 8-way 8MB", ge=1)
    l2_ways: int = stated(8, "Table 1: L2 8-way", ge=1)
    memory_gb: int = stated(3, "Table 1: Memory 3GB", ge=1)
    banks_per_module: int = stated(16, "Table 1: 16 banks for each module", ge=1)
    bank_ns: float = stated(60.0, "Table 1: 60 ns access per bank")
    # Table 2: the workloads (configuration only; the model has no database)
    warehouses: int = stated(100, "Table 2: 100 warehouses, both databases", ge=1)
    database_gb: int = stated(10, "Table 2: 10GB", ge=1)
    db2_disk_partitions: int = stated(32, "Table 2: striped over 32 disk partitions", ge=1)
    db2_clients: int = stated(64, "Table 2: DB2, 64 clients", ge=1)
    db2_buffer_pool_mb: int = stated(450, "Table 2: 450MB buffer pool space", ge=1)
    oracle_clients: int = stated(16, "Table 2: Oracle, 16 clients", ge=1)
    oracle_sga_gb: float = stated(1.4, "Table 2: 1.4GB SGA")
    # the DSM's latencies (not in the paper)
    hop_ns: float = assumed(50.0, "one network hop of a 2005 DSM (router and link), 30-100 ns in the "
                                  "SGI Origin 3000 and AlphaServer GS320 class")
    directory_ns: float = assumed(20.0, "a directory lookup at the line's home, SRAM or cached DRAM")
    hit_cycles: float = assumed(3.0, "an L1 hit at 4 GHz")
    # derived from Table 1
    drain_cycles: float = derived(32.0, "Table 1: a 256-entry ROB retiring 8 a cycle drains in 256/8 "
                                        "cycles before an atomic issues (§2.3, §5.2)")
    # Table 3: the lock patterns
    hot_cs_kcycles: float = given(10.0, "Table 3, DB2 Pattern 1, critical section")
    cold_cs_kcycles: float = given(100.0, "Table 3, DB2 Pattern 2 and Oracle, critical section")
    ldstub_swap_low_pct: float = given(75.0, "Table 3, atomic mix: ldstub, swap 75-80%")
    ldstub_swap_high_pct: float = given(80.0, "Table 3, atomic mix: ldstub, swap 75-80%")
    cas_low_pct: float = given(20.0, "Table 3, atomic mix: CAS 20-25%")
    cas_high_pct: float = given(25.0, "Table 3, atomic mix: CAS 20-25%")
    hot_addresses: int = stated(1, "Table 3, DB2 Pattern 1: 1 address, highly contended", ge=1)
    hot_lock: str = stated("TAS+swap", "§5.4: ldstub-swap pairs dominate; §5.2: Pthreads' lock is ldstub "
                                       "test-and-set released by swap", choices=LOCK_NAMES)
    hot_think_kcycles: float = calibrated(136.18257, "work between two acquisitions of the hot lock, exponential")
    cold_addresses: int = assumed(1024, "Table 3: 'various' / 'many addresses, little contention': enough "
                                        "locks that two of 16 CPUs seldom pick the same one", ge=1)
    cold_lock: str = assumed("TTAS", "§5.4: ldstub-swap or ldstub-store pairs, test-and-set or "
                                     "test-and-test-and-set; uncontended both cost one atomic",
                             choices=LOCK_NAMES)
    cold_think_kcycles: float = assumed(0.0, "not given: no work outside the lock episodes gives the "
                                             "largest synchronization share the mechanism allows", ge=0)
    # speculation (§6)
    data_lines: int = assumed(4096, "shared lines the hot lock's sections touch at random: sections "
                                    "seldom share a line (disjoint data)", ge=1)
    lines_per_section: int = assumed(2, "lines each critical section writes", ge=1)
    retries: int = assumed(3, "SLE's failed speculations before it takes the lock (Rajwar and Goodman)", ge=0)
    backoff_cycles: float = assumed(100.0, "TTAS's first backoff after a failed swap, doubling")

    def __post_init__(self):
        super().__post_init__()
        if self.lines_per_section > self.data_lines:
            raise ValueError(f"lines_per_section must be <= data_lines ({self.data_lines}), "
                             f"got {self.lines_per_section}")

    @property
    def cycle_s(self) -> float:
        return 1e-9 / self.clock_ghz

    def latency(self) -> DsmLatency:
        """The DSM's latencies: memory at the home two hops away, a dirty line three hops away."""
        ns = 1e-9
        return DsmLatency(hit_s=self.hit_cycles * self.cycle_s,
                          memory_s=(2 * self.hop_ns + self.directory_ns + self.bank_ns) * ns,
                          owner_s=(3 * self.hop_ns + self.directory_ns) * ns + 2 * self.hit_cycles * self.cycle_s,
                          invalidate_s=self.directory_ns / 4 * ns)


CALIBRATION = (Fit("hot_think_kcycles", "table3", "DB2 Pattern 1", "acquire_kcycles", (10.0, 1000.0)),)
INPUTS = (
    Inputs(("hot_cs_kcycles",), cells("table3", ["DB2 Pattern 1"], ["cs_kcycles"]), "Table 3's section, given"),
    Inputs(("cold_cs_kcycles",), cells("table3", ["DB2 Pattern 2", "Oracle Pattern"], ["cs_kcycles"]),
           "Table 3's sections, given"),
    Inputs(("ldstub_swap_low_pct", "ldstub_swap_high_pct", "cas_low_pct", "cas_high_pct"),
           cells("table3", ["DB2 Pattern 1"], ["ldstub_swap_low_pct", "ldstub_swap_high_pct", "cas_low_pct",
                                               "cas_high_pct"]), "Table 3's atomic mix, given"),
    Inputs((), cells("table1", ["machine"], ["cpus", "clock_ghz", "issue_width", "rob_entries", "l1_kb", "l1_ways",
                                             "l2_mb", "l2_ways", "memory_gb", "banks_per_module", "bank_ns"]),
           "Table 1 is the machine's configuration: stated parameters, echoed"),
    Inputs((), cells("table2", ["IBM DB2"], ["warehouses", "database_gb", "disk_partitions", "clients",
                                             "buffer_mb"]) + cells("table2", ["Oracle"], ["warehouses",
                                                                                          "database_gb",
                                                                                          "clients", "sga_gb"]),
           "Table 2 is the workloads' configuration: stated parameters, echoed"),
)
COUNTERFACTUALS = (
    Counterfactual("spread-hot-lock", {"hot_addresses": 1024},
                   "DB2 Pattern 1's lock split over many addresses, as Pattern 2's: no hot lock"),
    Counterfactual("uncontended", {"hot_think_kcycles": 100_000.0},
                   "the hot lock requested so seldom that no CPU ever finds it held"),
    Counterfactual("shared-data", {"data_lines": 2},
                   "every critical section writes the same lines: true data conflicts (Figure 1c)"),
)


# --- the mechanism ------------------------------------------------------------------------------------

class DrainingDirectory(Directory):
    """The lab's directory, with the pipeline drained before every atomic (§2.3, §5.2)."""

    def __init__(self, sim, latency, drain_s, initial=None):
        super().__init__(sim, latency, initial)
        self.drain_s = drain_s

    def rmw(self, cpu, line, fn):
        if self.drain_s:
            yield self.sim.timeout(self.drain_s)
        return (yield from super().rmw(cpu, line, fn))


class PthreadLock(TestAndSet):
    """Solaris Pthreads on SPARC (§5.2, Figure 6): ldstub to acquire, swap (an atomic) to release."""

    name = "TAS+swap"

    def release(self, cpu):
        yield from self.d.rmw(cpu, self.line, lambda v: 0)


def make_lock(name: str, directory, cpus: int, backoff_s: float):
    if name == "TAS+swap":
        return PthreadLock(directory, cpus)
    if name == "TTAS":
        return TestTestAndSet(directory, cpus, backoff_s=backoff_s, backoff_max_s=64 * backoff_s)
    if name not in LOCKS:
        raise ValueError(f"lock must be one of {LOCK_NAMES}, got {name!r}")
    return LOCKS[name](directory, cpus)


class LockLoop:
    """``cpus`` CPUs, each ``sections`` times: think (exponential), pick one of the locks, acquire it,
    run the section (write ``lines_per_section`` of the lock's data lines, then ``cs_s``), release.

    ``mode``: 'lock' (always take the lock), 'sle' (speculative lock elision: read the lock, run the
    section without writing it, commit if neither the lock nor a line read was written meanwhile;
    after ``retries`` failures take the lock) or 'last-value' (§6.2: issue the lock's atomic and run
    the section in its shadow; commit if the atomic returned 'free', else re-execute under the lock).
    Per section it records the acquire time, split into spin (another CPU held the lock, or was
    handing it over) and the lock operations' own time, and the release time.
    """

    def __init__(self, p: Params, *, lock: str, addresses: int, cs_cycles: float, think_cycles: float,
                 sections: int, mode: str = "lock", data_lines: int | None = None, rng=0):
        if mode not in ("lock", "sle", "last-value"):
            raise ValueError(f"mode must be 'lock', 'sle' or 'last-value', got {mode!r}")
        if sections < 1:
            raise ValueError(f"sections must be >= 1, got {sections}")
        self.p, self.mode, self.sections = p, mode, sections
        self.sim = Simulation()
        lat, c = p.latency(), p.cycle_s
        self.locks = [make_lock(lock, DrainingDirectory(self.sim, lat, p.drain_cycles * c), p.cpus,
                                p.backoff_cycles * c) for _ in range(addresses)]
        self.cs_s, self.think_s = cs_cycles * c, think_cycles * c
        self.data_lines = p.data_lines if data_lines is None else data_lines
        self.gen = make_rng(rng)
        self.free_at = [0.0] * addresses      # when each lock's last release completed
        self.rows = []
        self.elided = self.aborts = self.locked = 0
        self.warm, self.start, self.end = [True] * p.cpus, [0.0] * p.cpus, [0.0] * p.cpus

    def run(self) -> pd.DataFrame:
        procs = [self.sim.process(self.cpu(c)) for c in range(self.p.cpus)]
        self.sim.run(until=self.sim.all_of(procs))
        self.elapsed_s = self.sim.now
        self.measured_s = sum(e - b for b, e in zip(self.start, self.end))
        self.measured_sections = self.p.cpus * (self.sections - self.sections // 4)
        return pd.DataFrame(self.rows, columns=["cpu", "lock", "acquire_s", "spin_s", "release_s", "mode"])

    def rate_per_s(self) -> float:
        """Sections per second, all CPUs: each CPU's own rate, summed (not the slowest CPU's finish)."""
        return sum(self.sections / e for e in self.end if e > 0)

    def cpu(self, cpu):
        for i in range(self.sections):
            if i == self.sections // 4:   # the first quarter of each CPU's sections is warm-up
                self.warm[cpu], self.start[cpu] = False, self.sim.now
            if self.think_s:
                yield self.sim.timeout(self.gen.exponential(self.think_s))
            k = int(self.gen.integers(len(self.locks)))
            n = min(self.p.lines_per_section, self.data_lines)
            lines = [("data", int(x)) for x in self.gen.choice(self.data_lines, n, replace=False)]
            if self.mode == "sle":
                done = False
                for _ in range(self.p.retries):
                    if (yield from self.speculate(cpu, k, lines)):
                        self.elided += 1
                        done = True
                        break
                    self.aborts += 1
                if done:
                    continue
            elif self.mode == "last-value":
                if (yield from self.predict(cpu, k, lines)):
                    continue
            yield from self.locked_section(cpu, k, lines, self.sim.now)
        self.end[cpu] = self.sim.now

    def locked_section(self, cpu, k, lines, asked):
        lock = self.locks[k]
        yield from lock.acquire(cpu)
        got = self.sim.now
        self.locked += 1
        spin = max(0.0, min(got, self.free_at[k]) - asked)
        yield from self.body(cpu, k, lines)
        t = self.sim.now
        yield from lock.release(cpu)
        self.free_at[k] = self.sim.now
        if not self.warm[cpu]:
            self.rows.append((cpu, k, got - asked, spin, self.sim.now - t, "locked"))

    def body(self, cpu, k, lines):
        d = self.locks[k].d
        for line in lines:
            yield from d.store(cpu, line, cpu)
        yield self.sim.timeout(self.cs_s)

    def speculate(self, cpu, k, lines):
        return (yield from elided_section(self.locks[k], cpu, lines, self.cs_s))

    def predict(self, cpu, k, lines):
        """§6.2: the atomic goes out; the section runs in its shadow with the value predicted 'free'."""
        lock, asked = self.locks[k], self.sim.now
        if not (yield from predicted_section(lock, cpu, lines, self.cs_s)):
            self.aborts += 1  # mispredicted: the lock was held; squash and re-execute under the lock
            return False
        self.elided += 1
        t = self.sim.now
        yield from lock.release(cpu)
        self.free_at[k] = self.sim.now
        if not self.warm[cpu]:
            self.rows.append((cpu, k, t - asked, 0.0, self.sim.now - t, "predicted"))
        return True


def _sections(quick: bool) -> int:
    return 40 if quick else 120


def pattern(p: Params, name: str, *, rng=0, quick=False, mode="lock", lock=None) -> dict:
    """One of Table 3's patterns run on the DSM: mean times (cycles) and per-CPU time shares (%)."""
    if name not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {name!r}")
    hot = name == "DB2 Pattern 1"
    cs = 1e3 * (p.hot_cs_kcycles if hot else p.cold_cs_kcycles)
    think = 1e3 * (p.hot_think_kcycles if hot else p.cold_think_kcycles)
    loop = LockLoop(p, lock=lock or (p.hot_lock if hot else p.cold_lock),
                    addresses=p.hot_addresses if hot else p.cold_addresses, cs_cycles=cs, think_cycles=think,
                    sections=_sections(quick), mode=mode, rng=rng)
    rows = loop.run()
    c = p.cycle_s
    total = loop.measured_s
    acquire, spin, release = rows["acquire_s"].sum(), rows["spin_s"].sum(), rows["release_s"].sum()
    n = len(rows) if len(rows) else 1
    return {"acquire_kcycles": acquire / n / c / 1e3, "release_kcycles": release / n / c / 1e3,
            "spin_kcycles": spin / n / c / 1e3, "cs_kcycles": cs / 1e3,
            "spin_pct": 100 * spin / total, "acquire_pct": 100 * (acquire - spin) / total,
            "release_pct": 100 * release / total, "sync_pct": 100 * (acquire + release) / total,
            "sections_per_mcycle": loop.rate_per_s() * c * 1e6,
            "elided": loop.elided, "aborts": loop.aborts, "locked": loop.locked}


def _seeded(rng):
    """One seed for every experiment of an artifact (common random numbers across parameter values)."""
    return int(make_rng(rng).integers(2**31))


# --- the artifacts ------------------------------------------------------------------------------------

def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: the machine the model simulates, with the latencies it derives (cycles).
    Index: 'machine'. Columns: Table 1's entries, and the DSM's load latencies."""
    p = params or Params()
    lat, c = p.latency(), p.cycle_s
    row = {"cpus": p.cpus, "clock_ghz": p.clock_ghz, "issue_width": p.issue_width, "rob_entries": p.rob_entries,
           "l1_kb": p.l1_kb, "l1_ways": p.l1_ways, "l2_mb": p.l2_mb, "l2_ways": p.l2_ways, "memory_gb": p.memory_gb,
           "banks_per_module": p.banks_per_module, "bank_ns": p.bank_ns,
           "bank_cycles": p.bank_ns * 1e-9 / c, "remote_load_cycles": lat.memory_s / c,
           "dirty_miss_cycles": lat.owner_s / c, "drain_cycles": p.drain_cycles}
    return pd.DataFrame([row], index=pd.Index(["machine"], name="system"))


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: the OLTP workloads' configuration. Index: workload. Columns: warehouses, database_gb,
    disk_partitions, clients, buffer_mb, sga_gb (NaN where the paper gives none)."""
    p = params or Params()
    rows = [{"warehouses": p.warehouses, "database_gb": p.database_gb, "disk_partitions": p.db2_disk_partitions,
             "clients": p.db2_clients, "buffer_mb": p.db2_buffer_pool_mb, "sga_gb": np.nan},
            {"warehouses": p.warehouses, "database_gb": p.database_gb, "disk_partitions": np.nan,
             "clients": p.oracle_clients, "buffer_mb": np.nan, "sga_gb": p.oracle_sga_gb}]
    return pd.DataFrame(rows, index=pd.Index(["IBM DB2", "Oracle"], name="workload"), dtype=float)


def table3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 3: the three lock patterns on the 16-way DSM. Index: pattern. Columns: acquire_kcycles,
    release_kcycles, cs_kcycles, spin_kcycles (the part of the acquire spent while another CPU held
    the lock), and the atomic mix (given; DB2 Pattern 1's row, where the text prints it)."""
    p = params or Params()
    seed = _seeded(rng)
    rows = {}
    for name in PATTERNS:
        r = pattern(p, name, rng=seed, quick=quick)
        rows[name] = {k: r[k] for k in ("acquire_kcycles", "release_kcycles", "cs_kcycles", "spin_kcycles")}
    df = pd.DataFrame.from_dict(rows, orient="index")
    for col in ("ldstub_swap_low_pct", "ldstub_swap_high_pct", "cas_low_pct", "cas_high_pct"):
        df[col] = np.nan
        df.loc["DB2 Pattern 1", col] = getattr(p, col)
    df.index.name = "pattern"
    return df


def figure7(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 7: the share of each mode's time in synchronization (%). Index: bar (DB2 system, DB2
    user, Oracle system, Oracle user; each runs its Table 3 pattern). Columns: sync_pct = spin_pct +
    acquire_pct (the lock operations' own time) + release_pct; removable_pct (what eliding the
    acquires and releases removes: all but the spinning, §5.3); speedup (1 / (1 - removable))."""
    p = params or Params()
    seed = _seeded(rng)
    runs = {name: pattern(p, name, rng=seed, quick=quick) for name in set(BARS.values())}
    rows = {}
    for bar, name in BARS.items():
        r = runs[name]
        removable = r["acquire_pct"] + r["release_pct"]
        rows[bar] = {"pattern": name, "sync_pct": r["sync_pct"], "spin_pct": r["spin_pct"],
                     "acquire_pct": r["acquire_pct"], "release_pct": r["release_pct"],
                     "removable_pct": removable, "speedup": 1.0 / (1.0 - removable / 100.0)}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index.name = "bar"
    return df


def headline(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """The abstract's averages: DB2's and Oracle's synchronization shares averaged per mode (%), the
    removable share, and the speedup that removing it gives. Index: mode (system, user)."""
    f7 = figure7(params, rng=rng, quick=quick)
    rows = {}
    for mode in ("system", "user"):
        sel = f7.loc[[f"DB2 {mode}", f"Oracle {mode}"]]
        removable = sel["removable_pct"].mean()
        rows[mode] = {"gain_pct": sel["sync_pct"].mean(), "removable_pct": removable,
                      "speedup": 1.0 / (1.0 - removable / 100.0)}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index.name = "mode"
    return df


def locks(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3's lock constructs on DB2 Pattern 1's hot lock (16 CPUs, its section and think time).
    Index: lock. Columns: acquire_kcycles, release_kcycles, spin_kcycles, sections_per_mcycle,
    misses_per_section (coherence misses of the lock's and the data's lines)."""
    p = params or Params()
    seed = _seeded(rng)
    rows = {}
    for name in LOCK_NAMES:
        loop = LockLoop(p, lock=name, addresses=p.hot_addresses, cs_cycles=1e3 * p.hot_cs_kcycles,
                        think_cycles=1e3 * p.hot_think_kcycles, sections=_sections(quick), rng=seed)
        r = loop.run()
        c = p.cycle_s
        misses = sum(lk.d.counts["misses"] for lk in loop.locks)
        rows[name] = {"acquire_kcycles": r["acquire_s"].mean() / c / 1e3,
                      "release_kcycles": r["release_s"].mean() / c / 1e3,
                      "spin_kcycles": r["spin_s"].mean() / c / 1e3,
                      "sections_per_mcycle": loop.rate_per_s() * c * 1e6,
                      "misses_per_section": misses / (p.cpus * loop.sections)}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index.name = "lock"
    return df


def speculation(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§6: DB2 Pattern 1's hot lock (test-and-set) run locked, with SLE and with last-value prediction.
    Index: scheme (locked, SLE, last-value). Columns: sections_per_mcycle, speedup (over locked),
    sync_pct, elided_pct (sections that committed without holding the lock), aborts_per_section."""
    p = params or Params()
    seed = _seeded(rng)
    rows = {}
    for scheme, mode in (("locked", "lock"), ("SLE", "sle"), ("last-value", "last-value")):
        r = pattern(p, "DB2 Pattern 1", rng=seed, quick=quick, mode=mode, lock="TAS")
        n = p.cpus * _sections(quick)
        rows[scheme] = {"sections_per_mcycle": r["sections_per_mcycle"], "sync_pct": r["sync_pct"],
                        "elided_pct": 100 * r["elided"] / n, "aborts_per_section": r["aborts"] / n}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.insert(1, "speedup", df["sections_per_mcycle"] / df.loc["locked", "sections_per_mcycle"])
    df.index.name = "scheme"
    return df


# --- then vs now ------------------------------------------------------------------------------------

#: C for the real locks: test-and-set (xchg, as ldstub), test-and-test-and-set, ticket and MCS, and a
#: thread that takes the same lock in a loop (the contender), with a short section and think time.
LOCK_C = r"""
#include <pthread.h>
#include <sched.h>
#define PAD 128
typedef struct { volatile int v; char pad[PAD - sizeof(int)]; } line_t;
static line_t tas_lock, ticket_next, ticket_serving, ping;
typedef struct qnode { struct qnode *volatile next; volatile int locked; char pad[PAD]; } qnode_t;
static qnode_t *volatile mcs_tail;
static qnode_t qn[2];
static line_t shared_data;
static volatile int stop;
static inline void relax(void) { __asm__ volatile("" ::: "memory"); }
static inline void tas_acquire(void) { while (__atomic_exchange_n(&tas_lock.v, 1, __ATOMIC_ACQUIRE)) relax(); }
static inline void ttas_acquire(void) {
    for (;;) { while (__atomic_load_n(&tas_lock.v, __ATOMIC_RELAXED)) relax();
               if (!__atomic_exchange_n(&tas_lock.v, 1, __ATOMIC_ACQUIRE)) return; } }
static inline void tas_release(void) { __atomic_store_n(&tas_lock.v, 0, __ATOMIC_RELEASE); }
static inline void ticket_acquire(void) {
    int me = __atomic_fetch_add(&ticket_next.v, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&ticket_serving.v, __ATOMIC_ACQUIRE) != me) relax(); }
static inline void ticket_release(void) {
    __atomic_store_n(&ticket_serving.v, ticket_serving.v + 1, __ATOMIC_RELEASE); }
static inline void mcs_acquire(int t) {
    qnode_t *me = &qn[t]; me->next = 0; me->locked = 1;
    qnode_t *pred = __atomic_exchange_n(&mcs_tail, me, __ATOMIC_ACQ_REL);
    if (!pred) return;
    __atomic_store_n(&pred->next, me, __ATOMIC_RELEASE);
    while (__atomic_load_n(&me->locked, __ATOMIC_ACQUIRE)) relax(); }
static inline void mcs_release(int t) {
    qnode_t *me = &qn[t];
    if (!__atomic_load_n(&me->next, __ATOMIC_ACQUIRE)) {
        qnode_t *expect = me;
        if (__atomic_compare_exchange_n(&mcs_tail, &expect, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
        while (!__atomic_load_n(&me->next, __ATOMIC_ACQUIRE)) relax(); }
    __atomic_store_n(&me->next->locked, 0, __ATOMIC_RELEASE); }
static inline void episode(int t) {
    switch (LOCK) {
    case 0: tas_acquire(); shared_data.v++; tas_release(); break;
    case 1: ttas_acquire(); shared_data.v++; tas_release(); break;
    case 2: ticket_acquire(); shared_data.v++; ticket_release(); break;
    case 3: mcs_acquire(t); shared_data.v++; mcs_release(t); break;
    }
}
static void think(int n) { for (int i = 0; i < n; i++) relax(); }
static void *contender(void *arg) {
    (void)arg;
    while (!stop) { if (LOCK == 4) { while (__atomic_load_n(&ping.v, __ATOMIC_ACQUIRE) != 1 && !stop) relax();
                                     __atomic_store_n(&ping.v, 0, __ATOMIC_RELEASE); }
                    else { episode(1); think(THINK); } }
    return 0;
}
static void start(void) { if (CONTEND) { pthread_t th; pthread_create(&th, 0, contender, 0); } }
static inline void one(void) {
    if (LOCK == 4) { __atomic_store_n(&ping.v, 1, __ATOMIC_RELEASE);
                     while (__atomic_load_n(&ping.v, __ATOMIC_ACQUIRE) != 0) relax(); }
    else { episode(0); think(THINK); }
}
"""

NOW_LOCKS = {"TAS": 0, "TTAS": 1, "ticket": 2, "MCS": 3}


def _now_snippet(lock: int, contend: bool, think: int, quick: bool):
    decls = f"#define LOCK {lock}\n#define CONTEND {int(contend)}\n#define THINK {think}\n" + LOCK_C
    return harness_measure("c", "one();", name=f"lock{lock}-{'2' if contend else '1'}threads", setup="start();",
                           decls=decls, enough_s=0.002 if quick else 0.02, tries=3 if quick else 11)


@exclusive(pause=True)  # two threads hand a lock back and forth: both cores
def measure_now(*, quick: bool = False, think_loops: int = 50) -> pd.DataFrame:
    """The locks run for real on this machine (C, pthreads, GCC atomics, timed by pysim.harness).

    For each of TAS, TTAS, ticket and MCS: one thread alone (the uncontended acquire and release) and
    two threads taking the same lock in a loop, each with a short section (one shared increment) and
    ``think_loops`` empty iterations between episodes; and a ping-pong in which the two threads hand
    one cache line back and forth (a round trip moves it twice). Index: (lock, threads). Columns:
    available, episode_ns (acquire, section, release and think, per episode of the timed thread),
    note. The ping-pong row gives one_way_ns = half the round trip."""
    rows = []
    for name, code in NOW_LOCKS.items():
        for contend in (False, True):
            m = _now_snippet(code, contend, think_loops, quick)
            rows.append({"lock": name, "threads": 2 if contend else 1, "available": m.available,
                         "episode_ns": m.per_op_s * 1e9, "note": m.reason})
    m = _now_snippet(4, True, 0, quick)
    rows.append({"lock": "ping-pong", "threads": 2, "available": m.available, "episode_ns": m.per_op_s * 1e9,
                 "note": m.reason})
    df = pd.DataFrame(rows).set_index(["lock", "threads"])
    df["one_way_ns"] = np.nan
    if m.available:
        df.loc[("ping-pong", 2), "one_way_ns"] = m.per_op_s * 1e9 / 2
    return df


def then_and_now(measured: pd.DataFrame, params: Params | None = None, *, quick: bool = True) -> pd.DataFrame:
    """The two-CPU experiment on the 2005 DSM (the model: two CPUs, the same lock, a short section)
    beside this machine. Index: lock. Columns: then_episode_ns, then_handoff_cycles, now_episode_ns,
    now_contended_over_alone."""
    p = params or Params()
    two = dataclasses.replace(p, cpus=2)
    rows = {}
    for name in NOW_LOCKS:
        loop = LockLoop(two, lock=name, addresses=1, cs_cycles=10.0, think_cycles=100.0,
                        sections=_sections(quick) * 4, rng=0)
        loop.run()
        then_ns = loop.elapsed_s / loop.sections * 1e9
        alone = measured.loc[(name, 1), "episode_ns"] if (name, 1) in measured.index else math.nan
        both = measured.loc[(name, 2), "episode_ns"] if (name, 2) in measured.index else math.nan
        rows[name] = {"then_episode_ns": then_ns, "then_misses_per_section": sum(
            lk.d.counts["misses"] for lk in loop.locks) / (2 * loop.sections), "now_alone_ns": alone,
            "now_two_threads_ns": both, "now_contended_over_alone": both / alone}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index.name = "lock"
    return df
