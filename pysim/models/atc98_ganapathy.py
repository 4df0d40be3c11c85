"""General Purpose Operating System Support for Multiple Page Sizes (Ganapathy and Schimmel, USENIX ATC 1998).

Regenerates the few numbers the text gives and judges the rest by claims:

* ``reach``: the R10000 TLB's reach for each page size (§1: 512 KB at 4 KB
  pages to 2 GB at 16 MB), measured by sweeping working sets through the
  simulated TLB until the second sweep starts to miss;
* ``figure4``: the downgrade of a 64 KB page when its last 4 KB is unmapped
  (§6.7: 16 KB pages for the first 32 KB, 4 KB pages for the next 28 KB);
* ``fault``: §6.6's fault loop (16 base-page faults per 64 KB page over 4 KB);
* ``figure5`` and ``figure6``: % fewer TLB misses and % shorter run time at
  64 KB, 256 KB and 1 MB pages against the 16 KB base page, for synthetic
  kernels shaped after turb3d, vortex, tomcatv, fftpde and appsp;
* ``coalesce``: a companion to §6.4 (no published numbers): large pages the
  coalescing daemon forms at its weak, mild and strong levels, with and
  without §6.4.4's migratable-aware placement, as the kernel's share of
  memory grows.

First principles. The TLB is the lab's :class:`pysim.hw.memory.PairedTLB`:
the C multi-page-size TLB, where an entry maps an aligned even/odd *pair* of
pages of one size (one C-TLB page of twice the size) and carries a PID. The
fault-time page size follows §6.6 (:func:`pysim.sw.pages.map_range`): the
policy's hint, mapped only where the page is aligned and both sub-entries'
pages lie in the region; elsewhere the handler falls back (to the base page by
default, §7: "it may be forced to use base pages"). The downgrade follows §6.7
with the same rule, and §6.4's allocator and coalescing daemon are
:class:`pysim.sw.pages.PhysicalMemory`.
Run time is compute cycles per reference plus L2 misses (the lab's C cache,
4 MB two-way, 128-byte lines) times the memory latency plus TLB misses times
the refill cost; the gain of a page size is the time it removes.

Calibrated (see CALIBRATION): the TLB refill cost, on vortex's 20% at 1 MB
(§7). Everything else in Figures 5-6 is assumed (the paper gives no problem
sizes, no layout, no cache or clock figures) and judged by claims only.

Not reproduced: Figure 7 (contention) and Figure 8 (Sybase TPC-C) are not
modelled: neither prints a legible number and neither workload is described
beyond a sentence (see paper.yaml). Nothing here models the per-process miss
handler's cost saving for processes without large pages (§6.3): the paper
gives no handler cycle counts to set it against.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.hw import Cache
from pysim.hw.memory import PairedTLB
from pysim.models import Counterfactual, Fit, Inputs
from pysim.params import ModelParams, assumed, calibrated, stated
from pysim.rng import make_rng
from pysim.sw.pages import PhysicalMemory, downgrade, map_range
from pysim.workloads import memtrace

KB = 1024
MB = 1024 * KB
#: The R10000's page sizes (§3).
PAGE_SIZES = (4 * KB, 16 * KB, 64 * KB, 256 * KB, 1 * MB, 4 * MB, 16 * MB)
#: The page sizes §7 ran, the first being IRIX's base page on the Origin 2000.
RUN_SIZES_KB = (16, 64, 256, 1024)
BENCHMARKS = ("fftpde", "turb3d", "vortex", "tomcatv", "appsp")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Sizes in bytes or KB as named, times in CPU cycles."""

    tlb_entries: int = stated(64, "§3: the R10000 TLB has 64 entries", ge=1)
    paired: bool = stated(True, "§3: each entry has two sub-entries mapping adjacent pages of one size")
    tlb_policy: str = assumed("random", "the R10000 refills at the index of its Random register (tlbwr)",
                              choices=("random", "lru", "fifo"))
    base_page_kb: int = stated(16, "§7: the Origin 2000's base page is 16K", ge=4)
    fallback: str = stated("base", "§7: at large sizes the OS 'may be forced to use base pages'; §6.6 (d) "
                           "retries with a lower size ('next' tries each smaller size)", choices=("base", "next"))
    data_offset_kb: int = assumed(16, "where the data regions start within a 16 MB block: one base page past "
                                  "it; the paper gives no layout (text and initialised data come first)", ge=0)
    miss_cycles: float = calibrated(16.08, "cycles per TLB refill by the software handler, PTE load included")
    mask_cycles: float = assumed(4.0, "§6.3: the multi-size handler also writes PageMask (one mtc0 and its "
                                 "hazard); paid only by processes with large pages", ge=0)
    compute_cycles_per_ref: float = assumed(2.0, "R10000 FP codes: about one data reference every two cycles")
    mem_cycles: float = assumed(60.0, "an L2 miss to local Origin 2000 memory: about 310 ns at 195 MHz")
    l2_bytes: int = assumed(4 * MB, "§1: caches > 4MB; the Origin 2000's R10000 had a 4 MB L2", ge=1)
    l2_ways: int = assumed(2, "the R10000's L2 is two-way set associative", ge=1)
    l2_line: int = assumed(128, "the R10000's L2 line is 128 bytes", ge=8)
    vortex_heap_mb: int = assumed(40, "vortex's object heap: about 57 MB of memory in atc98_subramanian's "
                                  "Table 3, less text and tables", ge=1)
    vortex_node_bytes: int = assumed(64, "an object visited by vortex's lookups", ge=8)
    tomcatv_n: int = assumed(513, "SPEC95 tomcatv's reference grid is 513 x 513", ge=8)
    turb3d_n: int = assumed(64, "turb3d's 3-D FFTs on a 64^3 grid of complex doubles (4 MB)", ge=4)
    fftpde_n: int = assumed(64, "NAS fftpde on a 64^3 grid (the sample size), complex doubles", ge=4)
    fftpde_arrays: int = assumed(3, "NAS FT keeps three complex arrays (u0, u1, u2)", ge=1)
    appsp_n: int = assumed(64, "NAS SP's 64^3 grid, five doubles per point", ge=4)
    trace_refs: int = assumed(1_500_000, "references simulated per benchmark (ratios converge well before)",
                              ge=10_000)
    # the allocator companion (§6.4)
    memory_mb: int = assumed(64, "physical memory simulated for the allocator (in base pages)", ge=1)
    chunk_kb: int = assumed(256, "the large page the daemon coalesces (16 base pages)", ge=8)
    utilisation: float = assumed(0.6, "share of memory allocated after the churn", gt=0, lt=1)
    mild_threshold: int = assumed(4, "§6.4.3: mild level's per-size threshold, 'chosen by experimentation' "
                                  "and not given: a quarter of a chunk", ge=0)
    migration: bool = stated(True, "§6.4.2: the daemon migrates busy pages to empty a chunk")
    kernel_pinned: bool = stated(True, "§6.4.4: kernel pages (KSEG0, DMA, mlock) cannot be migrated")


CALIBRATION = (Fit("miss_cycles", "figure6", "vortex / 1024KB", "improvement_pct", (2.0, 200.0)),)
INPUTS = (Inputs((), (("fault", "64KB over 4KB", "base_faults"),),
                 "64K / 4K = 16: follows from the page sizes by arithmetic alone"),
          Inputs((), (("reach", "4K", "reach_kb"), ("reach", "16M", "reach_kb")),
                 "64 entries x 2 pages x the page size: follows from the stated TLB by arithmetic alone (the "
                 "model's sweep through the simulated TLB finds the same knee, a check of the TLB, not a "
                 "prediction)"))
COUNTERFACTUALS = (
    Counterfactual("unpaired", {"paired": False}, "a TLB entry maps one page, not an even/odd pair"),
    Counterfactual("aligned-data", {"data_offset_kb": 0}, "every data region starts on a 16 MB boundary, so "
                   "the alignment fallback never strikes"),
    Counterfactual("no-migration", {"migration": False}, "the coalescing daemon never migrates (weak level only)"),
    Counterfactual("movable-kernel", {"kernel_pinned": False}, "kernel pages could be migrated like user pages"),
    Counterfactual("cheap-refill", {"miss_cycles": 2.0}, "a TLB refill nearly free, as a hardware walker "
                   "hitting in cache"),
)


def figure4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 4: a 64 KB page over 4 KB base pages loses its last 4 KB. Index: page size. Columns: pages,
    first_kb, end_kb (the range each size covers afterwards)."""
    p = params or Params()
    pages = downgrade(64 * KB, (60 * KB, 64 * KB), 4 * KB, sizes=PAGE_SIZES, paired=p.paired)
    rows = []
    for size in sorted({s for _, s in pages}, reverse=True):
        at = [a for a, s in pages if s == size]
        rows.append({"page": f"{size // KB}K", "pages": len(at), "first_kb": min(at) / KB,
                     "end_kb": (max(at) + size) / KB})
    return pd.DataFrame(rows).set_index("page")


def fault(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§6.6 (e): base-page faults the handler's loop takes to map one large page. Index: case. Columns:
    base_faults."""
    rows = []
    for large, base in ((64 * KB, 4 * KB), (1 * MB, 16 * KB), (16 * MB, 16 * KB)):
        va, size = map_range(0, 2 * large, large, base, sizes=PAGE_SIZES)[0]  # the even page of a pair that fits
        rows.append({"case": f"{large // KB}KB over {base // KB}KB", "base_faults": len(range(va, va + size, base))})
    return pd.DataFrame(rows).set_index("case")


# --- TLB reach (§1) -------------------------------------------------------------------------


def measured_reach(page_bytes: int, p: Params) -> int:
    """Bytes of the largest cyclic working set (one touch per page) whose second sweep never misses."""
    best = 0
    for n in range(1, 4 * p.tlb_entries + 2):
        t = PairedTLB(p.tlb_entries, "lru", paired=p.paired)  # LRU: a cyclic sweep's worst case
        sweep = np.arange(n, dtype=np.uint64) * np.uint64(page_bytes)
        cold = t.run(sweep, page_bytes)["misses"]  # the counts are cumulative
        if t.run(sweep, page_bytes)["misses"] > cold:
            break
        best = n
    return best * page_bytes


def reach(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§1: TLB reach by page size. Index: page size (e.g. '4K'). Columns: reach_kb."""
    p = params or Params()
    rows = [{"page": f"{s // KB}K" if s < MB else f"{s // MB}M", "reach_kb": measured_reach(s, p) / KB}
            for s in PAGE_SIZES]
    return pd.DataFrame(rows).set_index("page")


# --- the benchmarks' reference streams (§7) -------------------------------------------------

REGION_BASE = 256 * MB  # data regions start data_offset_kb past this 16 MB boundary


def _pencils(n: int, elem: int, pattern: np.ndarray, budget: int) -> np.ndarray:
    """Byte offsets of 1-D passes along x, y and z of an n^3 array (x fastest): ``pattern`` gives the
    element indices one pencil touches; the first pencils of each direction, within ``budget``."""
    per_dir = max(1, min(n * n, budget // (3 * len(pattern))))
    out = []
    for stride, other in ((1, (n, n * n)), (n, (1, n * n)), (n * n, (1, n))):
        j = np.arange(per_dir)
        origins = (j % n) * other[0] + (j // n) * other[1]
        out.append((origins[:, None] + pattern[None, :] * stride).reshape(-1))
    return np.concatenate(out).astype(np.uint64) * np.uint64(elem)


def _fft_pattern(n: int) -> np.ndarray:
    return memtrace.fft(n, elem_bytes=1)[1].astype(np.int64)


def benchmark_trace(name: str, p: Params, *, rng=0, quick=False) -> tuple:
    """(byte offsets into the data region, region bytes) of a synthetic kernel shaped after ``name``.

    fftpde, turb3d: 3-D FFTs (radix-2 butterflies along x, y and z) of complex doubles; appsp: ADI line
    sweeps (forward and back) over five doubles per point; tomcatv: a 5-point stencil over a 2-D grid;
    vortex: a pointer chase through a heap of objects.
    """
    budget = min(p.trace_refs, 150_000) if quick else p.trace_refs
    if name in ("fftpde", "turb3d"):
        n = p.fftpde_n if name == "fftpde" else p.turb3d_n
        arrays = p.fftpde_arrays if name == "fftpde" else 1
        one = n ** 3 * 16
        parts = [_pencils(n, 16, _fft_pattern(n), budget // arrays) + np.uint64(a * one) for a in range(arrays)]
        return np.concatenate(parts), arrays * one
    if name == "appsp":
        n = p.appsp_n
        sweep = np.concatenate([np.arange(n), np.arange(n)[::-1]])
        return _pencils(n, 40, sweep, budget), n ** 3 * 40
    if name == "tomcatv":
        n = p.tomcatv_n
        rows = int(min(n, budget // (5 * (n - 2)) + 2))
        return memtrace.stencil(n, rows, elem_bytes=8)[1], n * n * 8
    if name == "vortex":
        heap = p.vortex_heap_mb * MB
        addrs = memtrace.pointer_chase(heap // p.vortex_node_bytes, budget, node_bytes=p.vortex_node_bytes,
                                       rng=rng)[1]
        return addrs, heap
    raise ValueError(f"benchmark must be one of {BENCHMARKS}, got {name!r}")


def page_of(addrs: np.ndarray, pages: list) -> np.ndarray:
    """The page size mapping each address, from map_range's pages (sorted by address)."""
    starts = np.array([a for a, _ in pages], dtype=np.uint64)
    sizes = np.array([s for _, s in pages], dtype=np.uint64)
    return sizes[np.searchsorted(starts, addrs, side="right") - 1]


def _counts_key(p: Params) -> Params:
    """p with the time constants neutral: the counts do not depend on them (so the fit reuses them)."""
    import dataclasses

    return dataclasses.replace(p, miss_cycles=1.0, mask_cycles=0.0, compute_cycles_per_ref=1.0, mem_cycles=1.0)


@functools.lru_cache(maxsize=64)
def _counts_cached(name: str, p: Params, seed: int, quick: bool) -> dict:
    return _counts(name, p, seed, quick)


def _counts(name: str, p: Params, rng, quick: bool) -> dict:
    """References, L2 misses and TLB misses at each page size of §7 for one benchmark."""
    trace_rng, tlb_rng = make_rng(rng).spawn(2)
    offsets, region = benchmark_trace(name, p, rng=trace_rng, quick=quick)
    base = p.base_page_kb * KB
    start = REGION_BASE + p.data_offset_kb * KB
    end = start + -(-region // base) * base
    addrs = offsets + np.uint64(start)
    l2 = Cache(p.l2_bytes, p.l2_line, p.l2_ways).run(addrs)["misses"]
    out = {"refs": int(addrs.size), "l2_misses": int(l2)}
    for kb, stream in zip(RUN_SIZES_KB, tlb_rng.spawn(len(RUN_SIZES_KB))):
        pages = map_range(start, end, kb * KB, base, sizes=PAGE_SIZES, paired=p.paired, fallback=p.fallback)
        tlb = PairedTLB(p.tlb_entries, p.tlb_policy, paired=p.paired, rng=stream)
        out[kb] = int(tlb.run(addrs, page_of(addrs, pages))["misses"])
        out[f"mapped_{kb}"] = sum(s for _, s in pages if s == kb * KB) / (end - start)
    return out


def counts(name: str, p: Params, rng=0, quick: bool = False) -> dict:
    key = _counts_key(p)
    if isinstance(rng, (int, np.integer)):
        return _counts_cached(name, key, int(rng), bool(quick))
    return _counts(name, key, rng, quick)


def _runs(p: Params, rng, quick) -> pd.DataFrame:
    rows = []
    for name in BENCHMARKS:
        c = counts(name, p, rng, quick)
        work = c["refs"] * p.compute_cycles_per_ref + c["l2_misses"] * p.mem_cycles
        base_cycles = work + c[RUN_SIZES_KB[0]] * p.miss_cycles
        for kb in RUN_SIZES_KB:
            refill = p.miss_cycles + (p.mask_cycles if kb * KB > p.base_page_kb * KB else 0.0)
            cycles = work + c[kb] * refill
            rows.append({"run": f"{name} / {kb}KB", "benchmark": name, "page_kb": kb,
                         "tlb_misses_per_kref": 1000 * c[kb] / c["refs"],
                         "tlb_miss_reduction_pct": 100 * (1 - c[kb] / c[RUN_SIZES_KB[0]]) if c[16] else 0.0,
                         "tlb_overhead_pct": 100 * c[kb] * refill / cycles,
                         "improvement_pct": 100 * (1 - cycles / base_cycles),
                         "large_mapped_pct": 100 * c[f"mapped_{kb}"]})
    return pd.DataFrame(rows).set_index("run")


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5: % reduction in TLB misses against 16 KB pages. Index: 'bench / sizeKB'. Columns: benchmark,
    page_kb, tlb_misses_per_kref, tlb_miss_reduction_pct, large_mapped_pct (share of the data mapped with
    the hinted size after the alignment fallback)."""
    p = params or Params()
    return _runs(p, rng, quick)[["benchmark", "page_kb", "tlb_misses_per_kref", "tlb_miss_reduction_pct",
                                 "large_mapped_pct"]]


def figure6(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 6: % run-time improvement against 16 KB pages. Index: 'bench / sizeKB'. Columns: benchmark,
    page_kb, tlb_overhead_pct (TLB-miss time / run time), improvement_pct."""
    p = params or Params()
    return _runs(p, rng, quick)[["benchmark", "page_kb", "tlb_overhead_pct", "improvement_pct"]]


# --- the large-page allocator and coalescing daemon (§6.4) ----------------------------------

KERNEL_SHARES = (0.0, 0.1, 0.2, 0.3)


def coalesce(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§6.4 companion: large pages the daemon forms after a churn, by placement, kernel share and level.
    Index: 'placement / kernel N% / level'. Columns: placement, kernel_pct, level, large_pages, large_pct (of
    the chunks the free memory could fill), migrations."""
    p = params or Params()
    base = p.base_page_kb * KB
    pages = (min(p.memory_mb, 16) if quick else p.memory_mb) * MB // base
    chunk = p.chunk_kb * KB // base
    if chunk < 2 or p.chunk_kb * KB % base:
        raise ValueError(f"chunk_kb must be a multiple of two or more base pages, got {p.chunk_kb}")
    rows = []
    cases = [(pl, sh) for pl in ("random", "migratable") for sh in KERNEL_SHARES]
    for (placement, share), stream in zip(cases, make_rng(rng).spawn(len(cases))):
        mem = PhysicalMemory(pages, chunk, placement, stream)
        mem.churn(6 * pages, p.utilisation, share if p.kernel_pinned else 0.0)
        possible = int(mem.free.sum()) // chunk
        for level in ("weak", "mild", "strong"):
            formed, moved = mem.coalesce(level, p.mild_threshold, p.migration)
            rows.append({"case": f"{placement} / kernel {round(100 * share)}% / {level}", "placement": placement,
                         "kernel_pct": 100 * share, "level": level, "large_pages": formed,
                         "large_pct": 100 * formed / possible if possible else 0.0, "migrations": moved})
    return pd.DataFrame(rows).set_index("case")


# --- then vs now: transparent huge pages on this machine ------------------------------------

_THP_SETUP = r"""
size_t bytes = (size_t){mb} << 20, align = 2u << 20;
char *raw = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
if (raw == MAP_FAILED) return 1;
a = (uint64_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
madvise(a, bytes, {advice});
memset(a, 0, bytes);
words = bytes / 8;
{init}
"""
_THP_PATTERNS = {
    # GUPS-like independent loads (the body loop names its count n: the array is `words` long) at random (xorshift) words
    "random": ("", "x ^= x << 13; x ^= x >> 7; x ^= x << 17; sink += a[x & (words - 1)];"),
    # a dependent chase through a random single cycle of 64-byte nodes (Sattolo's shuffle)
    "pointer chase": ("uint64_t m = words / 8; for (uint64_t i = 0; i < m; i++) a[8 * i] = i;"
                      "for (uint64_t i = m - 1; i > 0; i--) { x ^= x << 13; x ^= x >> 7; x ^= x << 17;"
                      " uint64_t j = x % i, t = a[8 * i]; a[8 * i] = a[8 * j]; a[8 * j] = t; }",
                      "p = a[8 * p]; sink += p;"),
    # a 5-point stencil swept row by row over a square grid of doubles
    "stencil": ("nx = 1; while (nx * nx < words) nx <<= 1; if (nx * nx > words) nx >>= 1; k = nx + 1;",
                "{ double *d = (double *)a; s += d[k - nx] + d[k - 1] + d[k] + d[k + 1] + d[k + nx];"
                " if (++k >= nx * (nx - 1) - 1) k = nx + 1; }"),
}


def thp_counters() -> dict:
    """thp_fault_alloc and thp_fault_fallback from /proc/vmstat (empty where it cannot be read)."""
    try:
        with open("/proc/vmstat") as f:
            pairs = (line.split() for line in f)
            return {k: int(v) for k, v in pairs if k in ("thp_fault_alloc", "thp_fault_fallback")}
    except OSError:
        return {}


def thp_mode() -> str:
    """The kernel's transparent-huge-page mode (the bracketed word), or 'unavailable'."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return "unavailable"
    return text[text.find("[") + 1:text.find("]")] if "[" in text else text.strip()


def thp_measure(sizes_mb=(4, 64), patterns=tuple(_THP_PATTERNS), *, seed: int = 1, quick: bool = False) -> pd.DataFrame:
    """Nanoseconds per access with madvise(MADV_NOHUGEPAGE) and MADV_HUGEPAGE, timed for real by the
    lmbench harness, with the THP fault counters' change over each huge-page run. Index: (size_MB,
    pattern). Columns: base_ns, huge_ns, speedup, thp_fault_alloc, thp_fault_fallback, note."""
    from pysim.harness import measure

    rows = []
    for mb in sizes_mb:
        if mb < 1 or mb & (mb - 1):
            raise ValueError(f"sizes_mb must be powers of two >= 1, got {mb!r}")
        for pattern in patterns:
            init, body = _THP_PATTERNS[pattern]
            row = {"size_MB": mb, "pattern": pattern, "note": ""}
            for label, advice in (("base_ns", "MADV_NOHUGEPAGE"), ("huge_ns", "MADV_HUGEPAGE")):
                before = thp_counters()
                r = measure("c", body, name=f"{pattern} {mb} MB {advice}", includes=("sys/mman.h", "string.h"),
                            decls=f"static uint64_t *a, words, x = {seed | 1}, p, nx, k; static volatile double s;",
                            setup=_THP_SETUP.format(mb=mb, advice=advice, init=init), enough_s=0.02 if quick else 0.05, tries=2 if quick else 3,
                            timeout_s=120.0)
                after = thp_counters()
                row[label] = r.per_op_s * 1e9 if r.available else float("nan")
                row["note"] = row["note"] or r.reason
                if advice == "MADV_HUGEPAGE":
                    for key in ("thp_fault_alloc", "thp_fault_fallback"):
                        row[key] = after.get(key, 0) - before.get(key, 0) if after else float("nan")
            row["speedup"] = row["base_ns"] / row["huge_ns"]
            rows.append(row)
    cols = ["base_ns", "huge_ns", "speedup", "thp_fault_alloc", "thp_fault_fallback", "note"]
    return pd.DataFrame(rows).set_index(["size_MB", "pattern"])[cols]
