"""A Searchable-by-Content File System (Sridhar, Stylos & Zeilberger; CMU 15-712 report, 2005).

Regenerates the prose numbers of §3.3 (``copy_1mb``: copying a one-megabyte
file in 4 KB writes, reindexed once per write by synchronous indexing),
Figure 2 (indexing time of five packages with the coalescing indexer),
Figure 3 (Twelf indexed with a warm and a cold buffer cache), Figure 4
(OS_STUFF's indexing time under the three indexers) and Figure 5 (the pages
each indexer writes out, and reads in, while OS_STUFF is untarred).

First principles: SCFS on the pysim engine (:class:`IndexingFS`). An untar
(:func:`pysim.workloads.files.untar`) writes every file through FUSE in
``write_bytes`` pieces on one CPU. Each indexing operation reads the whole
file as it is at that moment, parses it and inserts one posting per distinct
keyword for a new version of the file (§3.1, §3.4); its cost is a
:class:`pysim.sw.Recipe` (a fixed open/version cost, a parse cost per byte, a
Berkeley DB insert per posting) priced on a :class:`pysim.hw.CpuCostModel`.
Distinct keywords per file follow Heaps' law. The three indexers differ only
in *when* they index (§3.3): *sync* indexes inside every write; *async*
queues one job per write and flushes the queue every second; *coalesced*
flushes every second too but its queue is idempotent (a file queued twice is
indexed once). A :class:`pysim.sw.pagecache.PageCache` holds the files' pages
and the index's: the files' reads hit or miss it (pages read in), the dirty
pages are written back past the dirty threshold and at the end (pages written
out). The index is versioned and only grows (§3.4), so every indexing
operation appends its postings. Figure 3's cold run reads every file from
the lab's model of the disk (:class:`pysim.hw.Disk`).

Period hardware: the paper names none. The lab's nearest period machine (the
Pentium 4 1.7 GHz, 128 MB, Ultrastar disk of the catalog) stands in; every
cost is assumed with its reason (see Params). Nothing is calibrated: the
figures carry no numbers (the OCR kept captions only), so there is nothing to
fit and the model's figures are judged by the paper's claims.

Published cells: §3.3's "256 writes" and "reindexed 256 times" follow from
the stated 4 KB write size and the one-megabyte file by arithmetic, and
Figure 2's package sizes are the workload's stated sizes: all are inputs.
The paper prints no result the model could predict as a number.

Then vs now (:func:`measure_now`): a real indexer on inotify (ctypes on
inotify_init1 / inotify_add_watch) over an untar of a tarball of this
Python's standard-library sources, with the index in SQLite, the three
indexers at 4 KB and at 128 KB writes; :func:`now_versus_model` sets the
measured operation counts beside what the model counts for the same tree.

Not reproduced: Figure 1 (a diagram); the virtual /index directory (§4) and
the append path (§3.5) have no measurements.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.harness.runners import program_file
from pysim.hw import CpuCostModel, Disk, catalog
from pysim.models import Counterfactual, Inputs, cells
from pysim.params import ModelParams, assumed, from_catalog, stated
from pysim.rng import make_rng
from pysim.sw import CpuAccount, Recipe
from pysim.sw.pagecache import PageCache
from pysim.units import KiB, MiB, ns, us
from pysim.workloads import files as fsw
from pysim.harness.exclusive import one_core

MACHINE = catalog.get("Pentium 4 1.7 GHz")
DISK = MACHINE.disk
PACKAGES = ("OS_STUFF", "FUSE", "Cytoscape", "War and Peace", "Twelf")
VARIANTS = ("sync", "async", "coalesced")
PAGE = 4096


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Sizes in bytes (package sizes in MiB), costs in microseconds or nanoseconds."""

    # the workload: Figure 2's caption, §3.3, §5.1
    os_stuff_mib: float = stated(0.58, "Figure 2 caption: OS_STUFF (0.58MB)")
    fuse_mib: float = stated(1.55, "Figure 2 caption: FUSE (1.55MB)")
    cytoscape_mib: float = stated(2.11, "Figure 2 caption: Cytoscape (2.11 MB)")
    war_and_peace_mib: float = stated(3.28, "Figure 2 caption: War and Peace (3.28 MB)")
    twelf_mib: float = stated(5.5, "Figure 2 caption: Twelf (5.5 MB)")
    copy_bytes: int = stated(MiB, "§3.3: copying a one megabyte file (256 x 4 KB: a binary megabyte)", ge=1)
    source_median_bytes: int = assumed(8 * KiB, "median file of a source or course-material tree; Python 3.11's "
                                                "stdlib .py files have a median of 9.4 KiB", ge=1)
    source_sigma: float = assumed(1.5, "spread of log file sizes; 1.5 in Python 3.11's stdlib .py files", gt=0, le=4)
    # the mechanism (§3.3, §3.4)
    write_bytes: int = stated(4096, "§3.3: writes of four kilobyte blocks (FUSE's page-sized writes)",
                              ge=1, le=256 * MiB)
    flush_s: float = stated(1.0, "§3.3: the queue is flushed only every second", gt=0, le=60)
    idempotent_queue: bool = stated(True, "§3.3: enqueueing a file multiple times results in one indexing "
                                          "operation (the coalesced indexer)")
    versioned_index: bool = stated(True, "§3.4: a destructive update creates a new version; nothing is removed "
                                         "and the database grows monotonically")
    # keywords: Heaps' law V = K n^beta over n tokens
    bytes_per_token: float = assumed(6.0, "an alphanumeric string and its separator: about 5-7 bytes in English "
                                          "text and in source code", ge=1, le=100)
    heaps_k: float = assumed(7.0, "Heaps' law constant; 10-100 for English corpora with stemming off, lower "
                                  "for one file read alone (a 4 KB file gets about 250 distinct words)", gt=0)
    heaps_beta: float = assumed(0.55, "Heaps' law exponent, 0.4-0.6 for English text (Baeza-Yates & Ribeiro-"
                                      "Neto); War and Peace gets about 10,000 distinct case-folded words", gt=0, lt=1)
    posting_bytes: int = assumed(32, "a Berkeley DB btree item: the keyword's share, an 8-byte (file, version) "
                                     "and about 12 bytes of item overhead, at a leaf fill of about 70%", ge=1)
    # CPU costs on the stand-in Pentium 4 (the paper gives none)
    clock_hz: float = from_catalog(MACHINE, "clock_hz")
    fuse_write_us: float = assumed(40.0, "a FUSE 2.x write: two context switches through /dev/fuse, two copies "
                                         "of 4 KB and the daemon's pwrite on XFS", gt=0, le=1e4)
    index_op_us: float = assumed(100.0, "per indexing operation: open and read the file through the cache, the "
                                        "'index' extended attribute, a new version record in the database",
                                 gt=0, le=1e5)
    parse_ns_per_byte: float = assumed(15.0, "scan for alphanumeric strings and fold case: about 25 cycles a byte "
                                             "on a 1.7 GHz Pentium 4, with the read's copy", gt=0, le=1e4)
    insert_us: float = assumed(10.0, "a Berkeley DB btree put of one posting, in its cache", gt=0, le=1e4)
    # memory and write-back on the stand-in machine
    memory_bytes: int = from_catalog(MACHINE, "memory_bytes", ge=PAGE)
    reserved_bytes: int = assumed(32 * MiB, "memory the page cache cannot use: the kernel, the FUSE daemon, tar, "
                                            "Berkeley DB's own cache", ge=0)
    dirty_ratio: float = assumed(0.10, "Linux 2.6's dirty_background_ratio: write-back starts at 10% of memory "
                                       "dirty", gt=0, le=1)
    readahead_bytes: int = assumed(128 * KiB, "Linux 2.6's largest read-ahead window: the cold indexer's "
                                              "request size", ge=PAGE)

    def __post_init__(self):
        super().__post_init__()
        if self.memory_bytes - self.reserved_bytes < PAGE:
            raise ValueError(f"reserved_bytes must leave at least a page of memory_bytes ({self.memory_bytes}) "
                             f"to the page cache, got {self.reserved_bytes!r}")

    @property
    def cache_pages(self) -> int:
        return (self.memory_bytes - self.reserved_bytes) // PAGE

    def package_mib(self, name: str) -> float:
        return {"OS_STUFF": self.os_stuff_mib, "FUSE": self.fuse_mib, "Cytoscape": self.cytoscape_mib,
                "War and Peace": self.war_and_peace_mib, "Twelf": self.twelf_mib}[name]


CALIBRATION = ()
INPUTS = (
    Inputs((), cells("copy_1mb", ["sync"], ["writes", "index_ops"]),
           "§3.3's 256 writes and 256 reindexings follow from the stated 4 KB write size and the one-megabyte "
           "file by arithmetic (2^20 / 2^12), and from synchronous indexing's definition (once per write)"),
    Inputs((), cells("figure2", PACKAGES, ["size_MB"]),
           "the package sizes of Figure 2's caption: the workload's stated sizes, generated to the byte"),
)
COUNTERFACTUALS = (
    Counterfactual("whole-file-writes", {"write_bytes": 256 * MiB},
                   "every file arrives in one write, as with FUSE's big_writes and a large tar buffer: nothing "
                   "to coalesce"),
    Counterfactual("no-idempotent-queue", {"idempotent_queue": False},
                   "the coalescing indexer's queue keeps every write's job (it becomes the async indexer)"),
    Counterfactual("immediate-flush", {"flush_s": 0.0001},
                   "the queue is flushed every 100 us instead of every second: files are indexed while "
                   "they are still being written"),
    Counterfactual("in-place-index", {"versioned_index": False},
                   "a reindexing overwrites the file's postings in place instead of appending a new version"),
    Counterfactual("tiny-cache", {"reserved_bytes": 128 * MiB - 64 * KiB},
                   "a 64 KB page cache: written files leave memory before they are indexed"),
)


# --- the workload ---------------------------------------------------------------------------------

def package_files(p: Params, name: str, *, rng=0) -> list:
    """A package's files, ``(path, size)`` in archive order, totalling its stated size to the byte.

    War and Peace is one text file (Project Gutenberg's edition is); the other packages are trees whose
    file sizes are lognormal around ``source_median_bytes`` (:meth:`Namespace.generate`).
    """
    total = int(round(p.package_mib(name) * MiB))
    if name == "War and Peace":
        return [("war_and_peace.txt", total)]
    gen = make_rng(rng)
    mean = p.source_median_bytes * math.exp(p.source_sigma ** 2 / 2)
    n = int(3 * total / mean) + 20
    while True:
        ns = fsw.Namespace.generate(n, size_median=p.source_median_bytes, size_sigma=p.source_sigma, rng=gen)
        out, acc = [], 0
        for path, size in ns.paths():
            if size < 1:
                continue
            size = min(size, total - acc)
            out.append((path, size))
            acc += size
            if acc == total:
                return out
        n *= 2


def keywords(p: Params, nbytes) -> np.ndarray:
    """Distinct keywords of a file of ``nbytes`` (Heaps' law over its tokens, never more than the tokens)."""
    tokens = np.asarray(nbytes, dtype=float) / p.bytes_per_token
    return np.floor(np.minimum(tokens, p.heaps_k * tokens ** p.heaps_beta))


def cost_model(p: Params) -> CpuCostModel:
    """The stand-in Pentium 4's price for every operation SCFS counts."""
    return CpuCostModel(p.clock_hz, {"fuse_write": p.fuse_write_us * us, "index_op": p.index_op_us * us,
                                     "insert": p.insert_us * us}, {"parse": p.parse_ns_per_byte * ns})


def index_recipe(p: Params, nbytes: int) -> Recipe:
    """One indexing operation on a file of ``nbytes``: open it, parse every byte, insert its postings."""
    return Recipe(ops={"index_op": 1, "insert": float(keywords(p, nbytes))}, nbytes={"parse": nbytes})


def miss_s(misses: int) -> float:
    """Reading ``misses`` pages of one file from the disk: one positioning (command overhead, average seek,
    half a turn), then the pages at the outer zone's media rate (the file lies contiguously)."""
    if misses == 0:
        return 0.0
    media_bytes_per_s = DISK.zones[0][1] * DISK.sector_bytes * DISK.rpm / 60.0
    return DISK.overhead_s + DISK.average_seek_s + 30.0 / DISK.rpm + misses * PAGE / media_bytes_per_s


# --- the simulation -------------------------------------------------------------------------------

class IndexingFS:
    """SCFS under an untar: the writer and the indexer on one CPU, with a page cache under both.

    ``variant`` is 'sync' (index inside each write), 'async' (one queued job per write, flushed every
    ``flush_s``) or 'coalesced' (the same, but a file queued twice is indexed once, if the queue is
    idempotent).
    """

    DB_FILE = 0  # the index database's file number in the page cache

    def __init__(self, p: Params, variant: str, files):
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.p, self.variant, self.files = p, variant, list(files)
        self.sim = Simulation()
        self.cpu = CpuAccount(self.sim, resource=self.sim.resource(1))
        self.prices = cost_model(p)
        self.cache = PageCache(p.cache_pages, dirty_high=max(1, int(p.dirty_ratio * p.cache_pages)))
        self.size = {}
        self.pending = {} if (variant == "coalesced" and p.idempotent_queue) else []
        self.untar_done = False
        self.region = {}     # file -> index pages holding its postings (in-place index)
        self.db_pages = 0    # pages of the index database so far
        self.db_bytes = 0    # bytes appended to the versioned index so far
        self.t = {"writes": 0, "index_ops": 0, "parsed_bytes": 0, "postings": 0, "index_s": 0.0,
                  "pages_in": 0}

    def run(self) -> dict:
        self.sim.process(self.untar())
        if self.variant != "sync":
            self.sim.process(self.indexer())
        self.sim.run()
        c = self.cache.counts()
        out = dict(self.t)
        out["pages_out"] = c.writebacks + c.flushed + self.cache.dirty  # the rest reaches the disk at the sync
        out["elapsed_s"] = self.sim.now
        out["data_bytes"] = sum(s for _, s in self.files)
        return out

    def untar(self):
        """Extract the files in archive order, ``write_bytes`` at a time, through FUSE."""
        p = self.p
        for op in fsw.untar(self.files, buffer_bytes=p.write_bytes):
            if op[0] == "create":
                self.size[op[1] + 1] = 0  # file numbers from 1: 0 is the index database
            elif op[0] == "write":
                _, fid, off, n = op
                fid += 1
                pages = -(-n // PAGE)
                yield from self.cpu.hold("write", self.prices.cost("fuse_write") * pages)
                self.cache.run(self.cache.keys(fid, np.arange(off, off + n, PAGE)), np.ones(pages, dtype=bool))
                self.size[fid] = off + n
                self.t["writes"] += 1
                if self.variant == "sync":
                    yield from self.index(fid)
                elif isinstance(self.pending, dict):
                    self.pending[fid] = True
                else:
                    self.pending.append(fid)
        self.untar_done = True

    def indexer(self):
        """The slack process of §3.3: every ``flush_s``, index what the queue holds."""
        while True:
            yield self.sim.timeout(self.p.flush_s)
            batch = list(self.pending)
            self.pending = {} if isinstance(self.pending, dict) else []
            for fid in batch:
                yield from self.index(fid)
            if self.untar_done and not self.pending:
                return

    def index(self, fid: int):
        """Take the CPU, then read the whole file as it is now, parse it, insert its postings for a new
        version (the writer cannot change the file during an indexing operation: one CPU, no preemption)."""
        turn = self.cpu.resource.request()
        yield turn
        size = self.size[fid]
        before = self.cache.counts().misses
        self.cache.run(self.cache.keys(fid, np.arange(0, size, PAGE)))
        misses = self.cache.counts().misses - before
        recipe = index_recipe(self.p, size)
        seconds = recipe.seconds(self.prices) + miss_s(misses)
        self._write_postings(fid, recipe.ops["insert"])
        yield self.cpu.busy("index", seconds)
        self.cpu.resource.release(turn)
        t = self.t
        t["index_ops"] += 1
        t["parsed_bytes"] += size
        t["postings"] += recipe.ops["insert"]
        t["index_s"] += seconds
        t["pages_in"] += misses

    def _write_postings(self, fid: int, postings: float):
        """Dirty the index pages the postings go to: appended at the end of a versioned index; the
        file's own pages (grown as needed) in an in-place one."""
        nbytes = int(postings * self.p.posting_bytes)
        if self.p.versioned_index:
            first, self.db_bytes = self.db_bytes // PAGE, self.db_bytes + nbytes
            pages = np.arange(first, self.db_bytes // PAGE + 1, dtype=np.uint64)
        else:
            region = self.region.setdefault(fid, [])
            while len(region) * PAGE < nbytes:
                region.append(self.db_pages)
                self.db_pages += 1
            pages = np.asarray(region[:-(-nbytes // PAGE)], dtype=np.uint64)
        if pages.size:
            self.cache.run(self.cache.keys(self.DB_FILE, pages * np.uint64(PAGE)), np.ones(pages.size, dtype=bool))


def simulate(files, params: Params | None = None, variant: str = "coalesced") -> dict:
    """One untar of ``files`` ((path, size) in archive order) under one indexer: the counts and times."""
    return IndexingFS(params or Params(), variant, files).run()


def _replications(quick: bool) -> int:
    return 2 if quick else 8


def _mean_runs(p: Params, name: str, variants, rng, quick) -> pd.DataFrame:
    """Mean over replications (one generated package each) of each variant's run."""
    rows = []
    for r, g in enumerate(make_rng(rng).spawn(_replications(quick))):
        files = package_files(p, name, rng=g)
        for v in variants:
            rows.append({"replication": r, "variant": v, "files": len(files), **simulate(files, p, v)})
    return pd.DataFrame(rows).groupby("variant", sort=False).mean(numeric_only=True).drop(columns="replication")


def _tidy(df: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=df.index)
    out["data_MB"] = df["data_bytes"] / MiB
    for col in ("files", "writes", "index_ops"):
        if col in df:
            out[col] = df[col]
    out["parsed_MB"] = df["parsed_bytes"] / MiB
    out["postings"] = df["postings"]
    out["index_s"] = df["index_s"]
    return out


# --- the artifacts ------------------------------------------------------------------------------------

def copy_1mb(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.3: copying one ``copy_bytes`` file under each indexer. Columns: writes, index_ops, parsed_MB
    (bytes parsed, in MiB), parsed_x (bytes parsed over the file's size), index_s."""
    p = params or Params()
    rows = {}
    for v in VARIANTS:
        r = simulate([("copy", p.copy_bytes)], p, v)
        rows[v] = {"writes": r["writes"], "index_ops": r["index_ops"], "parsed_MB": r["parsed_bytes"] / MiB,
                   "parsed_x": r["parsed_bytes"] / p.copy_bytes, "index_s": r["index_s"]}
    df = pd.DataFrame(rows).T
    df.index.name = "variant"
    return df


def figure2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 2: indexing time of each package with the coalescing indexer (mean over replications).

    Columns: size_MB (MiB), files, index_ops, parsed_MB, postings, index_s, s_per_MB."""
    p = params or Params()
    rows = []
    for name, g in zip(PACKAGES, make_rng(rng).spawn(len(PACKAGES)), strict=True):
        t = _tidy(_mean_runs(p, name, ("coalesced",), g, quick)).iloc[0]
        rows.append({"package": name, "size_MB": t["data_MB"], "files": t["files"], "index_ops": t["index_ops"],
                     "parsed_MB": t["parsed_MB"], "postings": t["postings"], "index_s": t["index_s"],
                     "s_per_MB": t["index_s"] / t["data_MB"]})
    return pd.DataFrame(rows).set_index("package")


def figure4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 4: OS_STUFF under the three indexers (mean over replications).

    Columns: data_MB, files, writes, index_ops, parsed_MB, postings, index_s."""
    p = params or Params()
    df = _tidy(_mean_runs(p, "OS_STUFF", VARIANTS, rng, quick))
    df.index.name = "variant"
    return df


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5: pages written out (the files' and the index's) and pages read in from the disk by the
    indexer, while OS_STUFF is untarred under each indexer (mean over replications)."""
    p = params or Params()
    df = _mean_runs(p, "OS_STUFF", VARIANTS, rng, quick)[["pages_out", "pages_in"]]
    df.index.name = "variant"
    return df


def cold_index_s(p: Params, files) -> tuple:
    """Index an untarred tree after the cache was polluted: every file read from the disk (laid out in
    archive order, read in ``readahead_bytes`` requests back to back), then parsed. (seconds, pages read)."""
    prices = cost_model(p)
    sectors = p.readahead_bytes // DISK.sector_bytes
    lba, starts, lengths = 0, [], []
    for _, size in files:
        nsec = -(-size // DISK.sector_bytes)
        for off in range(0, nsec, sectors):
            starts.append(lba + off)
            lengths.append(min(sectors, nsec - off))
        lba += -(-size // PAGE) * (PAGE // DISK.sector_bytes)
    r = Disk(DISK).run(np.zeros(len(starts)), np.asarray(starts), np.asarray(lengths))
    cpu_s = sum(index_recipe(p, size).seconds(prices) for _, size in files)
    return cpu_s + float(r["finish_s"].iloc[-1]), sum(-(-size // PAGE) for _, size in files)


def figure3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 3: Twelf indexed by the coalescing indexer during the untar (warm) and directly after the
    cache was polluted (cold). Columns: index_s, pages_read (from the disk). Mean over replications."""
    p = params or Params()
    rows = []
    for g in make_rng(rng).spawn(_replications(quick)):
        files = package_files(p, "Twelf", rng=g)
        warm = simulate(files, p, "coalesced")
        cold_s, cold_pages = cold_index_s(p, files)
        rows += [{"cache": "warm", "index_s": warm["index_s"], "pages_read": warm["pages_in"]},
                 {"cache": "cold", "index_s": cold_s, "pages_read": cold_pages}]
    return pd.DataFrame(rows).groupby("cache", sort=False).mean()


# --- for the notebook ---------------------------------------------------------------------------------

def setup_table() -> pd.DataFrame:
    """The stand-in period machine and disk (the paper names neither), with each value's source."""
    rows = [("CPU", f"{MACHINE.cpu}, {MACHINE.clock_hz / 1e9:.1f} GHz",
             "assumed: the paper names no hardware; the lab's nearest period machine (" +
             MACHINE.sources["clock_hz"] + ")"),
            ("memory", f"{MACHINE.memory_bytes // MiB} MB", MACHINE.sources["memory_bytes"]),
            ("disk", f"{DISK.name}, {DISK.rpm:.0f} rpm", DISK.sources["rpm"]),
            ("file system", "SCFS (FUSE) over XFS, index in Berkeley DB", "paper: §3.1, §3.2"),
            ("workload", "untar of five packages, 0.58 to 5.5 MB", "paper: §5, Figure 2 caption")]
    return pd.DataFrame(rows, columns=["item", "value", "source"]).set_index("item")


def work_counts(params: Params | None = None, *, blocks=(1, 4, 16, 64, 256)) -> pd.DataFrame:
    """Bytes parsed per byte of file, by indexer, for one file of ``blocks`` writes (the quadratic cost)."""
    p = params or Params()
    rows = []
    for n in blocks:
        row = {"blocks": n}
        for v in VARIANTS:
            r = simulate([("f", n * p.write_bytes)], p, v)
            row[f"{v}_parsed_x"] = r["parsed_bytes"] / (n * p.write_bytes)
        rows.append(row)
    return pd.DataFrame(rows).set_index("blocks")


# --- then vs now: a real indexer on inotify over a real untar --------------------------------------

NOW_PROGRAM = r'''"""cmu05_sridhar's then-vs-now: a real content indexer on inotify, index in SQLite.

run BUDGET_BYTES WRITE_SIZES VARIANTS FLUSH_S: make a tarball of this Python's standard-library .py files
    (sorted walk, test suites left out) up to BUDGET_BYTES; for each write size (comma-separated) and each
    indexer (sync, async, coalesced), extract it into a fresh directory with os.write() calls of that size
    while an indexer watches every directory with inotify (IN_MODIFY) and keeps an inverted index (keyword ->
    file versions) in a fresh SQLite database. sync: after every write the writer reads the event and
    indexes the file before the next write. async: a writer process extracts; the indexer queues one job per
    event it receives and every FLUSH_S indexes each job. coalesced: the same, but the queue is a set.
    Prints a CSV header and one row per run ("run," first), then one line "sizes," with the files' sizes.
write TAR DEST WRITE_SIZE: the writer process of the async runs.
"""
import ctypes
import os
import re
import select
import shutil
import sqlite3
import struct
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time

IN_MODIFY, IN_Q_OVERFLOW = 0x2, 0x4000
SKIP = {"test", "tests", "idlelib", "lib2to3", "tkinter", "turtledemo", "ensurepip", "site-packages",
        "__pycache__"}
TOKEN = re.compile(rb"[A-Za-z0-9]+")
EVENT = struct.Struct("iIII")


def make_tar(budget, where):
    root = sysconfig.get_paths()["stdlib"]
    path, total, sizes = os.path.join(where, "stdlib.tar"), 0, []
    with tarfile.open(path, "w") as tar:
        for d, dirs, names in os.walk(root):
            dirs[:] = sorted(x for x in dirs if x not in SKIP and not x.startswith("config-"))
            for name in sorted(names):
                if not name.endswith(".py"):
                    continue
                full = os.path.join(d, name)
                size = os.path.getsize(full)
                if size == 0 or total + size > budget:
                    continue
                tar.add(full, arcname=os.path.relpath(full, root))
                total += size
                sizes.append(size)
    return path, sizes


def extract(tar_path, dest, write_size, after_write=None):
    writes = 0
    with tarfile.open(tar_path) as tar:
        for m in tar:
            if not m.isfile():
                continue
            data = memoryview(tar.extractfile(m).read())
            target = os.path.join(dest, m.name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                for off in range(0, len(data), write_size):
                    os.write(fd, data[off:off + write_size])
                    writes += 1
                    if after_write:
                        after_write()
            finally:
                os.close(fd)
    return writes


class Inotify:
    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.dirs, self.overflows = {}, 0

    def watch_tree(self, tar_path, dest):
        with tarfile.open(tar_path) as tar:
            names = {os.path.dirname(m.name) for m in tar if m.isfile()}
        dirs = {""}
        for n in names:
            while n:
                dirs.add(n)
                n = os.path.dirname(n)
        for d in sorted(dirs):
            full = os.path.join(dest, d)
            os.makedirs(full, exist_ok=True)
            wd = self.libc.inotify_add_watch(self.fd, full.encode(), IN_MODIFY)
            if wd < 0:
                raise OSError(ctypes.get_errno(), "inotify_add_watch " + full)
            self.dirs[wd] = full

    def read(self, timeout):
        """The paths of the IN_MODIFY events that arrive within timeout seconds (all those queued)."""
        out = []
        ready, _, _ = select.select([self.fd], [], [], timeout)
        while ready:
            try:
                buf = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            i = 0
            while i < len(buf):
                wd, mask, _, n = EVENT.unpack_from(buf, i)
                name = buf[i + EVENT.size:i + EVENT.size + n].rstrip(b"\0").decode()
                i += EVENT.size + n
                if mask & IN_Q_OVERFLOW:
                    self.overflows += 1
                elif mask & IN_MODIFY and wd in self.dirs:
                    out.append(os.path.join(self.dirs[wd], name))
        return out

    def close(self):
        os.close(self.fd)


class Index:
    """keyword -> (file, version): a new version per indexing, nothing removed (SCFS, section 3.4)."""

    def __init__(self, path):
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("PRAGMA cache_size=-65536")  # 64 MiB, so the growing index stays in SQLite's cache
        self.db.execute("CREATE TABLE files(path TEXT PRIMARY KEY, id INTEGER, version INTEGER)")
        self.db.execute("CREATE TABLE postings(keyword BLOB, file INTEGER, version INTEGER, "
                        "PRIMARY KEY (keyword, file, version)) WITHOUT ROWID")
        self.ops = self.parsed = self.postings = 0
        self.seconds = 0.0

    def index(self, path):
        t0 = time.perf_counter()
        with open(path, "rb") as f:
            data = f.read()
        words = set(TOKEN.findall(data.lower()))
        row = self.db.execute("SELECT id, version FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            fid, version = self.db.execute("SELECT COUNT(*) FROM files").fetchone()[0] + 1, 1
            self.db.execute("INSERT INTO files VALUES (?, ?, ?)", (path, fid, version))
        else:
            fid, version = row[0], row[1] + 1
            self.db.execute("UPDATE files SET version = ? WHERE id = ?", (version, fid))
        self.db.executemany("INSERT INTO postings VALUES (?, ?, ?)", ((w, fid, version) for w in words))
        self.db.commit()
        self.seconds += time.perf_counter() - t0
        self.ops += 1
        self.parsed += len(data)
        self.postings += len(words)

    def close(self):
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()
        return os.path.getsize(self.path)


def one_run(tar_path, work, write_size, variant, flush_s):
    dest = os.path.join(work, "tree")
    shutil.rmtree(dest, ignore_errors=True)
    db_path = os.path.join(work, "index.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db_path + suffix):
            os.remove(db_path + suffix)
    ino, index = Inotify(), Index(db_path)
    ino.watch_tree(tar_path, dest)
    events = 0
    t0 = time.perf_counter()
    if variant == "sync":
        def after_write():
            nonlocal events
            paths = ino.read(5.0)
            events += len(paths)
            for p in paths:
                index.index(p)
        writes = extract(tar_path, dest, write_size, after_write)
    else:
        writer = subprocess.Popen([sys.executable, __file__, "write", tar_path, dest, str(write_size)],
                                  stdout=subprocess.PIPE, text=True)
        pending = {} if variant == "coalesced" else []
        next_flush = time.perf_counter() + flush_s
        while True:
            done = writer.poll() is not None
            for p in ino.read(max(0.0, next_flush - time.perf_counter()) if not done else 0.0):
                events += 1
                if isinstance(pending, dict):
                    pending[p] = True
                else:
                    pending.append(p)
            if time.perf_counter() >= next_flush or done:
                if time.perf_counter() < next_flush:
                    time.sleep(next_flush - time.perf_counter())
                batch = list(pending)
                pending = {} if isinstance(pending, dict) else []
                for p in batch:
                    index.index(p)
                next_flush += flush_s
                if done and not pending and not ino.read(0.0):
                    break
        writes = int(writer.stdout.read().strip() or 0)
        writer.wait()
    wall = time.perf_counter() - t0
    db_bytes = index.close()
    ino.close()
    return {"variant": variant, "write_bytes": write_size, "writes": writes, "events": events,
            "index_ops": index.ops, "parsed_bytes": index.parsed, "postings": index.postings,
            "index_s": index.seconds, "wall_s": wall, "db_bytes": db_bytes, "overflows": ino.overflows}


COLUMNS = ("variant", "write_bytes", "writes", "events", "index_ops", "parsed_bytes", "postings", "index_s",
           "wall_s", "db_bytes", "overflows")


def main(argv):
    if argv[0] == "write":
        print(extract(argv[1], argv[2], int(argv[3])))
        return
    budget, sizes, variants, flush_s = int(argv[1]), argv[2], argv[3], float(argv[4])
    work = tempfile.mkdtemp(prefix="scfs-now-")
    try:
        tar_path, file_sizes = make_tar(budget, work)
        print("run," + ",".join(COLUMNS), flush=True)
        for ws in (int(s) for s in sizes.split(",")):
            for v in variants.split(","):
                r = one_run(tar_path, work, ws, v, flush_s)
                print("run," + ",".join(str(r[c]) for c in COLUMNS), flush=True)
        print("sizes," + ",".join(map(str, file_sizes)), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
'''


def now_program() -> str:
    """The measurement program, written once into the harness's cache folder; its path."""
    return str(program_file("cmu05_sridhar_now.py", NOW_PROGRAM))


@one_core()
def measure_now(python: str, *, quick: bool = False, write_sizes=(4 * KiB, 128 * KiB), variants=VARIANTS,
                flush_s: float | None = None, budget_bytes: int | None = None,
                timeout_s: float = 600.0) -> tuple:
    """The three indexers for real on this machine (see :data:`NOW_PROGRAM`); ``python`` is an interpreter
    (the notebook passes its own). Quick: about OS_STUFF's 0.58 MB of stdlib sources, flushed every 0.25 s;
    full: 3 MiB (between War and Peace and Twelf; the synchronous indexer's cost grows with the square of
    the largest files, so Twelf's 5.5 MB takes about a minute), flushed every second as §3.3 says.

    Returns ``(table, file_sizes)``: the table indexed by (write_bytes, variant) with columns writes, events
    (IN_MODIFY events the indexer received), index_ops, parsed_MB, postings, index_s (time inside the
    indexing routine, as §5.1 measured), wall_s, db_MB, note; an empty table with the reason in ``note``
    where inotify or the interpreter is missing.
    """
    budget = budget_bytes or int((0.6 if quick else 3.0) * MiB)
    flush = flush_s if flush_s is not None else (0.25 if quick else 1.0)
    r = run_command([python, now_program(), "run", budget, ",".join(map(str, write_sizes)), ",".join(variants),
                     flush], timeout_s=timeout_s, check=True)
    lines = [x.split(",") for x in r.stdout.splitlines()] if r.available else []
    table = [x[1:] for x in lines if x[0] == "run"]
    sizes = next((list(map(int, x[1:])) for x in lines if x[0] == "sizes" and len(x) > 1), [])
    runs = [dict(zip(table[0], row, strict=True)) for row in table[1:]] if table else []
    if not runs:
        why = r.reason if not r.available else (r.stderr.strip()[-300:] or "no output")
        return pd.DataFrame({"note": [f"not available: {why}"]}), sizes
    df = pd.DataFrame(runs)
    for col in df.columns.drop("variant"):
        df[col] = pd.to_numeric(df[col])
    df["parsed_MB"] = df["parsed_bytes"] / MiB
    df["db_MB"] = df["db_bytes"] / MiB
    df["note"] = np.where(df["overflows"] > 0, "inotify queue overflowed", "")
    cols = ["writes", "events", "index_ops", "parsed_MB", "postings", "index_s", "wall_s", "db_MB", "note"]
    return df.set_index(["write_bytes", "variant"])[cols], sizes


def now_versus_model(measured: pd.DataFrame, file_sizes, params: Params | None = None) -> pd.DataFrame:
    """The measured work beside what the model counts for the same files (in the same order), at each write
    size: writes, indexing operations and MiB parsed, and the model's time on the period machine."""
    p = params or Params()
    files = [(f"f{i}", s) for i, s in enumerate(file_sizes)]
    rows = []
    for (wb, v), m in measured.iterrows():
        q = dataclasses.replace(p, write_bytes=int(wb))
        s = simulate(files, q, v)
        rows.append({"write_bytes": wb, "variant": v, "writes_now": m["writes"], "writes_model": s["writes"],
                     "index_ops_now": m["index_ops"], "index_ops_model": s["index_ops"],
                     "parsed_MB_now": m["parsed_MB"], "parsed_MB_model": s["parsed_bytes"] / MiB,
                     "index_s_now": m["index_s"], "index_s_2005_model": s["index_s"]})
    return pd.DataFrame(rows).set_index(["write_bytes", "variant"])


def coalescing_gain(table: pd.DataFrame, column: str = "index_s") -> pd.DataFrame:
    """sync and async over coalesced, at each write size, for a (write_bytes, variant) table."""
    out = {}
    for wb, g in table.groupby(level=0):
        g = g.droplevel(0)
        out[wb] = {f"{v}_over_coalesced": g.loc[v, column] / g.loc["coalesced", column]
                   for v in ("sync", "async") if v in g.index and "coalesced" in g.index}
    df = pd.DataFrame(out).T
    df.index.name = "write_bytes"
    return df
