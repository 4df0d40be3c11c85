"""SimICS/sun4m: a virtual workstation (Magnusson et al., USENIX ATC 1998).

Regenerates what the paper's text still holds of its numbers:

* ``table3``: SimICS against native execution on SPECint95 (Table 3). Only the go column and part
  of the m88ksim column survive the text; the other benchmarks' cells are scrambled beyond placing.
* ``boot``: the instruction counts of §5.1 (a uniprocessor Solaris 2.6 boot, the 26-billion
  instruction session) and Table 2 (the 4-CPU boot). These are inputs: the model takes them as given
  and derives only what follows by arithmetic (the serial share of the boot under Amdahl's law).
* ``numa``: the remote-cache study of §5.2 (message reduction with a 1 MB and a 2 MB remote cache, the
  share of blocks never reused after leaving the L1, the share of those that the kernel's memcpy
  brought in).

First principles.

*Slowdown* (§3.1, §3.3, §6): an interpreter spends, per target instruction, a dispatch plus a service
routine (10-30 host instructions, §3.1), the inlined STC lookup (nine host instructions, §3.3) on a
memory operation, and the profile count of full profiling (§6); every event that leaves the fast
path (a miss in the simulated caches or TLB, which also misses the STC) adds a slow-path cost::

    host cycles per target instruction = CPI_interp x (dispatch + service + m x stc + profile
                                                        + sum_e r_e x slow_path_e)

so the simulator's MIPS is nearly the same for every program when events are rare (Sim 1, infinite
caches), and the *slowdown*, native MIPS over simulated MIPS, spreads with the native speed of the
program, not with the simulator's work. The recipe is priced with :class:`pysim.sw.Recipe` on a
:class:`pysim.hw.CpuCostModel` of the host.

*Remote cache* (§5.2): one node of the 4-node CC-NUMA machine runs PostgreSQL's sequential scan of
TPC-D Q6: the kernel's memcpy copies each 8 KB block of the table (homed on whichever node touched it
first) into a local user buffer, the query reads the buffer, and every block also touches a few lines
of a shared working set (buffer descriptors, catalog and kernel tables, homed anywhere). The trace runs
through a 16 KB direct-mapped L1 (:class:`pysim.hw.memory.Cache`) and a :class:`pysim.hw.hierarchy.NumaNode`
(the 512 KB 4-way L2 and a remote cache for lines homed elsewhere). A 17 MB stream has no temporal
reuse, so no remote cache smaller than the stream removes its messages; only the working set's reuse
is left to catch.

Calibrated, each on one cell (see CALIBRATION): the interpreter's host CPI (go, Sim 1 seconds), the
backend's private reused data (88% of blocks not reused) and the shared working set's references per
block scanned (1.0% fewer messages with a 1 MB remote cache). Predicted: go's Sim 2 time (the slow
path's cost and go's miss rate are assumed), m88ksim's Sim 1 speed, the 2 MB remote cache's reduction, the memcpy share of
the non-reused blocks, and the claims (the peak bound, the Sim 1 range, a remote cache that fails on
a scan and works on a stencil).

Then vs now (:func:`measure_now`): a small bytecode running a real loop, interpreted by a switch, by
computed goto (GCC's labels as values, SimICS's choice) and by tail calls, against the same loop in
native C, all compiled and timed through :mod:`pysim.harness`; and the native program under valgrind.
GCC 12 has no ``musttail``: the tail-call interpreter relies on GCC's sibling-call optimisation at -O2,
which turns ``return next(...)`` into a jump (checked by running a long program without overflowing
the stack). :func:`measure_programs` runs the catalogue's programs (:mod:`pysim.workloads.programs`)
under valgrind, whose cost per instruction grows with the data references it simulates.

Not reproduced: Table 1 (its cells cannot be placed, see paper.yaml), the other SPECint95 columns of
Table 3, the profile listings (Figures 6, 9, 10: outputs of a profiler run on programs we do not have).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.harness import interp
from pysim.harness.commands import run_command
from pysim.harness.interp import PROGRAM_DECLS, TRIPS, measure_dispatch
from pysim.harness.runners import Snippet, build
from pysim.hw import CpuCostModel
from pysim.hw.hierarchy import NumaNode
from pysim.hw.memory import Cache
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.rng import make_rng
from pysim.sw import Recipe
from pysim.units import KiB, MHz, MiB
from pysim.workloads import memtrace
from pysim.workloads.programs import cache_geometry
from pysim.workloads.programs import demand as catalogue_demand
from pysim.workloads.programs import seconds_per_trip
from pysim.harness.exclusive import one_core

BENCHMARKS = ("go", "m88ksim")
WORKLOADS = ("scan", "stencil")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Host costs in host instructions; sizes in bytes."""

    # --- the interpreter (§3.1, §3.3, §6)
    host_clock_hz: float = assumed(250 * MHz, "Table 3's 'Ultra Enterprise' has no clock in the text; §5.1's host "
                                              "is a 250 MHz UltraSPARC, taken for both")
    service_instr: float = assumed(20.0, "§3.1: service routines are 'typically 10-30 host processor "
                                         "instructions': the middle of the range")
    dispatch_instr: float = assumed(3.0, "threaded code (Figure 1 C): load the next routine's address, advance "
                                         "the intermediate-code pointer, jump")
    stc_instr: float = stated(9.0, "§3.3: the inlined STC lookup 'consists of nine host (SPARC) instructions'")
    mem_share: float = assumed(0.3, "loads and stores per instruction of SPARC integer code: about 0.3 in "
                                    "Hennessy & Patterson's SPECint mixes", gt=0, le=1)
    profile_instr: float = assumed(3.0, "§6: all runs generate full profiling; an execution count per "
                                        "instruction is a load, an add and a store")
    interp_cpi: float = calibrated(1.4518, "host cycles per host instruction of the interpreter's code")
    miss_path_instr: float = assumed(150.0, "the slow path of a simulated cache or TLB miss: the STC refill, "
                                            "the cache model's set lookup and LRU update, translation and "
                                            "protection checks, the profilers' counters for the address: of "
                                            "the order of 100-200 host instructions")
    go_events_per_kinstr: float = assumed(25.0, "go's misses per 1000 instructions in 16 KB/20 KB caches and a "
                                                "64-entry TLB: go has the largest code and data footprint of "
                                                "SPECint95 (a few % of references miss)")
    stc: bool = stated(True, "§3.3: memory operations take the inlined STC path when it hits")
    # dispatch style: 'labels' (SimICS), 'switch' (Figure 1 B), 'subroutine' (Figure 1 A)
    dispatch: str = stated("labels", "§3.1: SimICS primarily uses addressable labels using GCC",
                           choices=("labels", "switch", "subroutine"))
    switch_extra_instr: float = assumed(4.0, "a switch adds a bounds check, a table load and the jump back to "
                                             "the loop head to the labels' dispatch")
    subroutine_extra_instr: float = assumed(8.0, "a call from an inner loop adds call, return, register window "
                                                 "save/restore and the loop head")
    # --- the programs of Table 3 (inputs)
    go_instr: float = given(507e6, "Table 3, go: 6.0 MIPS x 84.5 s")
    go_native_s: float = given(3.2, "Table 3, go: native execution 3.2 s")
    m88ksim_instr: float = given(132e6, "Table 3, m88ksim: 6.9 MIPS x 19.2 s")
    m88ksim_native_s: float = given(0.5, "Table 3, m88ksim: native execution '05' s")
    # --- the boot counts (inputs)
    boot_1cpu_instr: float = given(1.40e9, "§5.1: 1,40 billion instructions to a login prompt, one CPU")
    boot_4cpu_instr: float = given(1_028_765_700, "Table 2: 1,028,765,700 instructions on each of four CPUs (§5.1: 1,03 billion)")
    cpus: int = stated(4, "Table 2: a 4-processor sun4m", ge=1)
    # --- the CC-NUMA node (§5.2)
    nodes: int = stated(4, "§5.2: four nodes", ge=2)
    line_bytes: int = assumed(32, "not given for §5.2; the SuperSPARC's 32-byte lines of §5.3")
    l1_bytes: int = stated(16 * KiB, "§5.2: L1 16 KB, direct-mapped")
    l2_bytes: int = stated(512 * KiB, "§5.2: L2 512 KB, 4-way set-associative")
    l2_ways: int = stated(4, "§5.2: L2 4-way", ge=1)
    rc_ways: int = assumed(4, "the remote cache's associativity is not given; as the L2's", ge=1)
    accessed_bytes: int = stated(17 * MiB, "§5.2: the amount of data accessed by each node is 17 MB (the scan "
                                           "is what the working set leaves of it)")
    block_bytes: int = assumed(8 * KiB, "PostgreSQL's block size, the unit memcpy copies from the buffer cache")
    ws_bytes: int = assumed(1 * MiB, "the shared working set every scanned block touches (PostgreSQL's shared "
                                     "buffer descriptors, lock and catalog tables, the kernel's tables), homed "
                                     "anywhere: of the order of a megabyte")
    ws_refs_per_block: float = calibrated(32.42993, "shared working-set lines touched per block scanned", ge=0)
    private_bytes: int = calibrated(1_611_648, "the backend's private, reused data (heap, sort and hash areas, "
                                             "stack): first touched by its own node, so local")
    private_refs_per_block: float = assumed(128.0, "private lines touched per 8 KB block: the tuple loop's state "
                                                   "for some 50 tuples a block", ge=0)
    workload: str = stated("scan", "§5.2: TPC-D query 6, a sequential scan", choices=WORKLOADS)
    stencil_points: int = assumed(384, "the counterfactual's scientific kernel: a 5-point stencil over a 384 x 384 "
                                       "grid of doubles (1.1 MB: more than the L2, its remote part less than a "
                                       "remote cache), swept six times", ge=16)

    @property
    def host(self) -> CpuCostModel:
        """The host: one host instruction costs interp_cpi cycles."""
        cyc = self.interp_cpi / self.host_clock_hz
        return CpuCostModel(self.host_clock_hz, {"host_instr": cyc})


CALIBRATION = (
    Fit("interp_cpi", "table3", "go", "sim1_s", (0.3, 5.0)),
    Fit("private_bytes", "numa", "scan", "not_reused_pct", (64 * KiB, 12 * MiB), tolerance=0.01),
    Fit("ws_refs_per_block", "numa", "scan", "rc1_reduction_pct", (0.2, 80.0)),
)
INPUTS = (
    Inputs(("go_instr", "go_native_s", "m88ksim_instr", "m88ksim_native_s"),
           cells("table3", ["go"], ["native_s", "sim1_mips", "sim1_slowdown"])
           + cells("table3", ["go", "m88ksim"], ["instructions"]) + cells("table3", ["m88ksim"], ["native_s"]),
           "native times are given; go's MIPS and slowdowns follow from its given instruction count and "
           "native time and the two fitted seconds by arithmetic alone"),
    Inputs((), cells("numa", ["scan"], ["data_mb"]),
           "the data a node touches is §5.2's 17 MB by construction (the scan is sized from it)"),
    Inputs(("boot_1cpu_instr", "boot_4cpu_instr"),
           cells("boot", ["uniprocessor boot", "4-CPU boot, per CPU"], ["instructions"]),
           "the boot counts are taken as given (the paper's measurement of Solaris, not of SimICS)"),
)
COUNTERFACTUALS = (
    Counterfactual("switch-dispatch", {"dispatch": "switch"},
                   "a switch statement (Figure 1 B) in place of GCC's addressable labels"),
    Counterfactual("subroutine-dispatch", {"dispatch": "subroutine"},
                   "service routines called from an inner loop (Figure 1 A)"),
    Counterfactual("slow-service", {"service_instr": 60.0},
                   "service routines three times the paper's typical 10-30 host instructions"),
    Counterfactual("no-stc", {"stc": False},
                   "no simulator translation cache: every memory operation takes the slow path (§3.3)"),
    Counterfactual("stencil", {"workload": "stencil"},
                   "a scientific kernel with reuse (§5.2's 'scientific benchmark applications')"),
)


# --- slowdown -------------------------------------------------------------------------------------

def instruction_recipe(p: Params, events_per_kinstr: float = 0.0) -> Recipe:
    """Host instructions per target instruction: dispatch, service, STC on memory operations, profile
    count, and slow paths at the given event rate."""
    extra = {"labels": 0.0, "switch": p.switch_extra_instr, "subroutine": p.subroutine_extra_instr}[p.dispatch]
    mem = p.stc_instr if p.stc else p.miss_path_instr  # without the STC every access takes the slow path
    n = (p.dispatch_instr + extra + p.service_instr + p.mem_share * mem + p.profile_instr
         + events_per_kinstr / 1000.0 * p.miss_path_instr)
    return Recipe(ops={"host_instr": n})


def sim_mips(p: Params, events_per_kinstr: float = 0.0) -> float:
    """Simulated target instructions per second (millions)."""
    return 1e-6 / instruction_recipe(p, events_per_kinstr).seconds(p.host)


def table3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 3: SPECint95 (train, user mode) under SimICS against native, go and m88ksim.

    Index: benchmark. Columns: instructions, native_s, native_mips, sim1_s, sim1_mips, sim1_slowdown
    (infinite caches), sim2_s, sim2_mips, sim2_slowdown (16 KB/20 KB caches, 64-entry TLB; m88ksim's
    Sim 2 event rate is not known, so its Sim 2 cells are NaN).
    """
    p = params or Params()
    rows = {}
    for b in BENCHMARKS:
        n, native = getattr(p, f"{b}_instr"), getattr(p, f"{b}_native_s")
        m1 = sim_mips(p)
        ev = getattr(p, f"{b}_events_per_kinstr", np.nan)
        m2 = sim_mips(p, ev) if np.isfinite(ev) else np.nan
        rows[b] = {"instructions": n, "native_s": native, "native_mips": n / native / 1e6,
                   "sim1_s": n / m1 / 1e6, "sim1_mips": m1, "sim1_slowdown": n / m1 / 1e6 / native,
                   "sim2_s": n / m2 / 1e6, "sim2_mips": m2, "sim2_slowdown": n / m2 / 1e6 / native}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("benchmark")


def slowdown_curve(params: Params | None = None, rates=(0, 5, 10, 25, 50, 100), native_mips=(160.0, 264.0)):
    """Slowdown against the event rate (misses per 1000 instructions) for programs of given native MIPS."""
    p = params or Params()
    rows = [{"events_per_kinstr": r, "native_mips": nm, "sim_mips": sim_mips(p, r),
             "slowdown": nm / sim_mips(p, r)} for r in rates for nm in native_mips]
    return pd.DataFrame(rows)


def bounds(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """The interpreter's peak (§3.1, §6: 'approximately 20'): the slowdown with the dispatch and a typical
    service routine only (no memory operations, no profiling), for each benchmark's native speed;
    and the model's slowdowns with the typical routine. Index: benchmark. Columns: peak_slowdown,
    sim1_slowdown, sim2_slowdown, sim2_over_peak."""
    p = params or Params()
    t3 = table3(p)
    lean = dataclasses.replace(p, mem_share=1e-9, profile_instr=1e-9)
    out = pd.DataFrame({"peak_slowdown": t3["native_mips"] / sim_mips(lean),
                        "sim1_slowdown": t3["sim1_slowdown"], "sim2_slowdown": t3["sim2_slowdown"]})
    out["sim2_over_peak"] = out["sim2_slowdown"] / out["peak_slowdown"]
    return out


def boot(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§5.1 and Table 2: instructions to a login prompt. Index: case. Columns: instructions,
    serial_share (Amdahl: the share of the uniprocessor boot that no second CPU shortens, if every CPU
    executes the same count in lock-step, as Table 2's identical counts show)."""
    p = params or Params()
    ratio = p.boot_4cpu_instr / p.boot_1cpu_instr
    serial = (ratio - 1.0 / p.cpus) / (1.0 - 1.0 / p.cpus)
    return pd.DataFrame({"instructions": [p.boot_1cpu_instr, p.boot_4cpu_instr],
                         "serial_share": [1.0, serial]},
                        index=pd.Index(["uniprocessor boot", "4-CPU boot, per CPU"], name="case"))


# --- the remote cache ------------------------------------------------------------------------------

#: Private data (and the user buffer) lies below this address and is homed on the node itself.
PRIVATE_BASE = 1 << 30


def _homes(p: Params, n_pages: int, rng) -> np.ndarray:
    """First-touch placement: each page homed on whichever of the nodes touched it first (uniform)."""
    return rng.integers(0, p.nodes, size=n_pages)


def scan_trace(p: Params, scan_bytes: int, rng) -> tuple:
    """One node's data references during the scan: (addresses, source, region) with source 1 for the
    kernel's memcpy loads, and region 0 table, 1 user buffer, 2 working set. Lines of ``line_bytes``."""
    lb, blk = p.line_bytes, p.block_bytes
    per_blk = blk // lb
    n_blocks = max(1, scan_bytes // blk)
    table_base, buf_base, ws_base = 1 << 32, 1 << 31, 3 << 32
    priv_lines = max(1, p.private_bytes // lb)
    ws_lines = max(1, p.ws_bytes // lb)
    src = table_base + (np.arange(n_blocks)[:, None] * blk + np.arange(per_blk)[None, :] * lb)
    dst = buf_base + np.arange(per_blk) * lb
    # working-set references: a deterministic count per block (monotone in the rate), random lines
    cum = np.floor(np.arange(n_blocks + 1) * p.ws_refs_per_block).astype(np.int64)
    counts = np.diff(cum)
    ws = ws_base + rng.integers(0, ws_lines, size=int(cum[-1])) * lb
    pcum = np.floor(np.arange(n_blocks + 1) * p.private_refs_per_block).astype(np.int64)
    priv = PRIVATE_BASE + rng.integers(0, priv_lines, size=int(pcum[-1])) * lb
    addrs, source, region = [], [], []
    starts = cum[:-1]
    for b in range(n_blocks):
        copy = np.empty(2 * per_blk, dtype=np.int64)
        copy[0::2], copy[1::2] = src[b], dst  # memcpy: load a line of the block, store it to the buffer
        w = ws[starts[b]:starts[b] + counts[b]]
        q = priv[pcum[b]:pcum[b + 1]]
        addrs += [copy, dst, w, q]
        source += [np.tile([1, 0], per_blk), np.zeros(per_blk + w.size + q.size, dtype=np.int8)]
        region += [np.tile([0, 1], per_blk), np.ones(per_blk, dtype=np.int8), np.full(w.size, 2, dtype=np.int8),
                   np.full(q.size, 3, dtype=np.int8)]
    return (np.concatenate(addrs).astype(np.uint64), np.concatenate(source).astype(np.int8),
            np.concatenate(region).astype(np.int8))


def stencil_trace(p: Params, quick: bool) -> tuple:
    """The counterfactual: a 5-point stencil (pysim.workloads.memtrace), swept twice, every line shared."""
    _, a, _ = memtrace.stencil(p.stencil_points, p.stencil_points, base=1 << 32)
    a = np.concatenate([a] * (3 if quick else 6))
    return a.astype(np.uint64), np.zeros(a.size, dtype=np.int8), np.zeros(a.size, dtype=np.int8)


def node_run(p: Params, addrs, rc_bytes: int, rng) -> dict:
    """One node: L1, then the L2 and the remote cache (NumaNode). Messages are remote-cache misses
    (without a remote cache: every remote L2 miss)."""
    lb = p.line_bytes
    lines = addrs // np.uint64(lb) * np.uint64(lb)
    l1 = Cache(p.l1_bytes, lb, 1)
    _, l1_hits = l1.run(lines, return_hits=True)
    page_bits = 12
    pages = np.unique(lines >> np.uint64(page_bits))
    homes = dict(zip(pages.tolist(), _homes(p, pages.size, rng).tolist()))
    lut_keys = pages
    lut_vals = np.array([homes[k] for k in pages.tolist()], dtype=np.int64)
    lut_vals[(pages << np.uint64(page_bits)) < np.uint64(PRIVATE_BASE << 2)] = 0  # private and the buffer: local

    def home(ls):
        ls = np.asarray(ls, dtype=np.uint64) >> np.uint64(page_bits)
        return lut_vals[np.searchsorted(lut_keys, ls)]

    node = NumaNode(0, (p.l2_bytes, lb, p.l2_ways), (max(rc_bytes, lb * p.rc_ways), lb, p.rc_ways), home)
    r = node.run(lines[~l1_hits])
    r["messages"] = r["remote_cache_misses"] if rc_bytes > 0 else r["remote"]
    r["l1_hits"] = l1_hits
    r["lines"] = lines
    return r


def numa(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§5.2: one node of the 4-node machine. Index: workload (the model's workload). Columns: data_mb,
    messages_none, messages_rc1, messages_rc2, rc1_reduction_pct, rc2_reduction_pct, not_reused_pct
    (blocks missed in L1 once only, of all blocks), memcpy_share_pct (of those, the ones memcpy loaded).
    Quick: a quarter of the scan."""
    p = params or Params()
    seed = make_rng(rng)
    scan_bytes = max(p.block_bytes, p.accessed_bytes - p.ws_bytes - p.private_bytes) // (4 if quick else 1)
    if p.workload == "scan":
        addrs, source, _ = scan_trace(p, scan_bytes, seed.spawn(1)[0])
    else:
        addrs, source, _ = stencil_trace(p, quick)
    msgs = {}
    for key, rc in (("none", 0), ("rc1", 1 * MiB), ("rc2", 2 * MiB)):
        r = node_run(p, addrs, rc, make_rng(12345))  # the same placement for the three machines
        msgs[key] = r["messages"]
    lines, l1_hits = r["lines"], r["l1_hits"]
    missed = lines[~l1_hits]
    blocks, first, count = np.unique(missed, return_index=True, return_counts=True)
    once = count == 1
    from_memcpy = source[np.flatnonzero(~l1_hits)[first]] == 1
    row = {"data_mb": np.unique(lines).size * p.line_bytes / MiB,
           "messages_none": msgs["none"], "messages_rc1": msgs["rc1"], "messages_rc2": msgs["rc2"],
           "rc1_reduction_pct": 100.0 * (1 - msgs["rc1"] / msgs["none"]),
           "rc2_reduction_pct": 100.0 * (1 - msgs["rc2"] / msgs["none"]),
           "not_reused_pct": 100.0 * once.sum() / blocks.size,
           "memcpy_share_pct": 100.0 * (once & from_memcpy).sum() / max(1, once.sum())}
    return pd.DataFrame([row], index=pd.Index([p.workload], name="workload"))


# --- then vs now: interpreters on this machine ------------------------------------------------------

@functools.lru_cache(maxsize=4)
@one_core()
def measure_now(*, quick: bool = False, valgrind: bool = True) -> pd.DataFrame:
    """The bytecode loop on this machine: ns per loop trip for native C and the three interpreters, each
    timed by :func:`pysim.harness.measure` (median of tries), and the native loop under valgrind's
    ``none`` and ``cachegrind`` tools (the snippet program's own timing of 2*10^7 trips, so valgrind's
    start-up is not counted). Index: variant. Columns: available, ns_per_trip, ns_per_bytecode,
    slowdown (over native C), note."""
    dispatch = measure_dispatch(tries=3 if quick else 7, enough_s=0.01 if quick else None)
    rows = dispatch[["available", "ns_per_trip", "note"]].to_dict(orient="index")
    if valgrind:
        cmd, why = build(Snippet("c", interp.body("native_loop"), decls=PROGRAM_DECLS))
        n = 2_000 if quick else 20_000
        native = run_command(cmd, input_text=f"R {n}\nR {n}\n", timeout_s=60.0) if cmd else None
        base = min(float(x) for x in native.stdout.split()[1:]) if native and native.available else np.nan
        for tool in ("none", "cachegrind"):
            if cmd is None:
                rows[f"valgrind {tool}"] = {"available": False, "ns_per_trip": np.nan, "note": why}
                continue
            extra = ["--cache-sim=yes", "--cachegrind-out-file=/dev/null"] if tool == "cachegrind" else []
            r = run_command(["valgrind", f"--tool={tool}", "-q", *extra, *cmd], input_text=f"R {n}\n",
                            timeout_s=120.0)
            ok = r.available and r.returncode == 0 and len(r.stdout.split()) >= 2
            t = float(r.stdout.split()[1]) if ok else np.nan
            rows[f"valgrind {tool}"] = {"available": ok, "ns_per_trip": 1e9 * t / n / TRIPS if ok else np.nan,
                                        "note": "" if ok else (r.reason or r.stderr[-200:]),
                                        "native_ns_per_trip": 1e9 * base / n / TRIPS}
    df = pd.DataFrame.from_dict(rows, orient="index").rename_axis("variant")
    df["ns_per_bytecode"] = df["ns_per_trip"] / interp.BYTECODES_PER_TRIP
    df["slowdown"] = df["ns_per_trip"] / df.loc["native C", "ns_per_trip"]
    if "native_ns_per_trip" in df:  # valgrind against the same program's own native run
        vg = df["native_ns_per_trip"].notna()
        df.loc[vg, "slowdown"] = df.loc[vg, "ns_per_trip"] / df.loc[vg, "native_ns_per_trip"]
    return df


@one_core()
def measure_programs(*, quick: bool = False) -> pd.DataFrame:
    """The catalogue's programs (:mod:`pysim.workloads.programs`: integer, floating-point, pointer-chase
    and streaming kernels) natively and under valgrind on this machine. The paper prices a simulated
    instruction as dispatch + the rate of each event times its slow path; cachegrind simulates a cache
    access on every data reference, so its time per instruction should grow with the references per
    instruction, and valgrind's ``none`` tool (translation alone) should not.

    Index: program. Columns: available, refs_per_inst, l1_miss_per_inst, native_ns_per_inst,
    none_ns_per_inst, cachegrind_ns_per_inst, added_ns_per_inst (cachegrind less native), none_slowdown,
    cachegrind_slowdown, note. ``attrs["fit"]``: the paper's form fitted to the added time by least
    squares over the programs, added_ns_per_inst = dispatch_ns + per_ref_ns * refs_per_inst +
    per_miss_ns * l1_miss_per_inst, with the largest residual (ns)."""
    names = ("INT", "FP", "L2C", "STREAM")
    trips = 100 if quick else 300
    dem = catalogue_demand(names, trips=20 if quick else 100, native_trips=10 * trips)
    cachegrind = ("valgrind", "--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=/dev/null", "-q",
                  *(f"{k}={v}" for k, v in cache_geometry().items()))
    rows = {}
    for name in names:
        d = dem.loc[name]
        row = {"available": bool(d["available"]), "refs_per_inst": d["refs_per_inst"],
               "l1_miss_per_inst": d["l1_miss_per_inst"], "note": d["note"]}
        if row["available"]:  # each time the minimum of three runs of ``trips`` in one process
            none_s, why = seconds_per_trip(name, trips=trips, tool=("valgrind", "--tool=none", "-q"))
            cg_s, why_cg = seconds_per_trip(name, trips=trips, tool=cachegrind)
            inst = d["inst_per_trip"]
            row |= {"native_ns_per_inst": 1e9 * d["native_s_per_trip"] / inst,
                    "none_ns_per_inst": 1e9 * none_s / inst,
                    "cachegrind_ns_per_inst": 1e9 * cg_s / inst, "note": why or why_cg}
        rows[name] = row
    cols = ["available", "refs_per_inst", "l1_miss_per_inst", "native_ns_per_inst", "none_ns_per_inst",
            "cachegrind_ns_per_inst"]
    df = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=cols + ["note"]).rename_axis("program")
    df["added_ns_per_inst"] = df["cachegrind_ns_per_inst"] - df["native_ns_per_inst"]
    df["none_slowdown"] = df["none_ns_per_inst"] / df["native_ns_per_inst"]
    df["cachegrind_slowdown"] = df["cachegrind_ns_per_inst"] / df["native_ns_per_inst"]
    ok = df.dropna(subset=["refs_per_inst", "l1_miss_per_inst", "added_ns_per_inst"])
    if len(ok) >= 3:
        x = np.column_stack([np.ones(len(ok)), ok["refs_per_inst"].astype(float), ok["l1_miss_per_inst"].astype(float)])
        y = ok["added_ns_per_inst"].to_numpy(float)
        coef = np.linalg.lstsq(x, y, rcond=None)[0]
        df.attrs["fit"] = {"dispatch_ns": float(coef[0]), "per_ref_ns": float(coef[1]), "per_miss_ns": float(coef[2]),
                           "max_residual_ns": float(np.max(np.abs(x @ coef - y)))}
    return df


def then_and_now(measured: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """Slowdowns then (the model: SimICS's labels, a switch, subroutines, Sim 1 for go) and now (this
    machine: the bytecode loop). Index: dispatch. Columns: then_slowdown, now_slowdown."""
    p = params or Params()
    then = {d: table3(dataclasses.replace(p, dispatch=d)).loc["go", "sim1_slowdown"]
            for d in ("labels", "switch", "subroutine")}
    now = measured["slowdown"]
    rows = [("computed goto (labels)", then["labels"], now.get("computed goto", np.nan)),
            ("switch", then["switch"], now.get("switch", np.nan)),
            ("subroutine / tail calls", then["subroutine"], now.get("tail calls", np.nan))]
    return pd.DataFrame(rows, columns=["dispatch", "then_slowdown", "now_slowdown"]).set_index("dispatch")
