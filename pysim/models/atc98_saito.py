"""A transactional memory service in an extensible operating system (Saito & Bershad, USENIX ATC 1998).

Regenerates Figure 6 (the RVM benchmark: time per transaction against the
database's size, for setrange, page-grain logging and page diffing on SPIN,
page diffing on Digital UNIX, and ObjectStore) and Figures 8-11 (OO7's
traversals T1, T2a and T2c: the small database warm and cold, the medium
databases of fan-out 3 and 9 cold), on the paper's AlphaStation 250 (a
266 MHz 21064A, 47 MB of user memory, one RZ26L disk holding database and
log).

First principles, in two layers. *What happens* comes from the lab's
write-ahead-logging buffer manager (:class:`pysim.sw.wal.BufferManager`)
replaying each benchmark's accesses page by page: faults (every first
access of a page in a transaction faults, §4.2), pages read and evicted,
log records and their bytes, forces before a steal (write-ahead, §4.1),
copies and comparisons. Page diffing keeps each written page's shadow after
commit, refreshed with the committed contents (§4.3.3, Figure 5), so a page
written once holds two frames until it is evicted
(:class:`RetainedShadowBufferManager`); that is what halves the memory page
diffing can use. *What it costs* comes from each platform's paths, priced as
operation recipes (:mod:`pysim.sw.costs`) on the 266 MHz CPU: Rhino on SPIN
takes a fault in the kernel and rewrites a page-table entry (Figure 1(b));
the UNIX port takes a signal, calls mprotect, and copies pages through the
file system's buffer cache; ObjectStore takes the signal path and ships
pages to its server by IPC (Figure 1(a)). The disk is the lab's disk model
(:class:`pysim.hw.disk.Disk`, a seek curve and zoned geometry for the
RZ26L), served one request at a time in program order by
:class:`DiskArm`: seek from where the head is, half a revolution of
rotation on average, except for a log write that continues the last one,
which waits for its sector to come round again (a forced commit after a
short transaction costs most of a revolution). The replay (:func:`replay`)
records what each access and commit did as arrays; :func:`price` runs them
through a compiled kernel (Numba) that does what the recipes and
:class:`DiskArm` say, transaction by transaction (tests hold the two
together), so counterfactuals that change only prices reuse the replay.

The OO7 databases: OO7's shapes (pysim.workloads.objects.OO7) with atomic
part and connection sizes derived so that medium-3 and medium-9 have §5.3's
60 MB and 100 MB; with the same sizes the small configuration lays out to
about 6 MB, not §5.3's "about 10MB" (the three sizes cannot all come from one
set of object sizes; what else the small database holds, an index or the
assembly objects, is not traversed and is left out).

Nothing is calibrated: the figures print no numbers and Table 2's are lost
from the text, so every unit cost is assumed with its reason, and every
result is a prediction judged by the orderings and ratios the paper states
(papers/atc98_saito/claims.yaml).

Not reproduced: Table 2 (its numbers are not in the text), Table 1 (an API
listing) and the diagrams (Figures 1-5, 7); Figure 1's two fault paths are
the model's, see :data:`FAULT_PATHS`. ObjectStore's open-time prefetch
(§5.3) is not modelled: the text does not say how much it reads, and neither
is the disk's read-ahead (the text gives nothing of the RZ26L but its name).

Quick mode runs Figure 6 at four database sizes instead of ten (each still
4000 transactions); Figures 8-11 are one traversal per transaction and run
the same in both modes.

Then vs now (real, on this machine): write detection by mprotect and
SIGSEGV against userfaultfd write-protection, with a handler thread and in
the kernel's asynchronous mode; and a small recoverable-memory library over
an mmap'd file with fdatasync at commit (setrange, page-grain logging, page
diffing) running the RVM benchmark, which checks at the end that recovery
(the database file plus the log's redo records) gives what memory holds.
Both are C programs built with gcc and run through :mod:`pysim.harness`.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
import pandas as pd

from pysim.harness import measure, run_command
from pysim.harness.runners import cache_dir
from pysim.hw import CpuCostModel
from pysim.hw.disk import Disk, DiskSpec
from pysim.models import Counterfactual
from pysim.params import ModelParams, assumed, stated
from pysim.rng import make_rng
from pysim.sw.costs import Recipe
from pysim.sw.wal import BufferManager, merge_ranges
from pysim.units import MiB, ms, us
from pysim.workloads.objects import OO7, rvm_transactions
from pysim.harness.exclusive import one_core

#: The five systems of §5, in the order the paper lists them.
SYSTEMS = ("setrange", "page log", "pdiff (SPIN)", "pdiff (UNIX)", "ObjectStore")
#: OO7 was not run with setrange (§5.3: it exhausts the in-kernel heap).
OO7_SYSTEMS = SYSTEMS[1:]
#: What each system is: (buffer-manager policy, platform).
SYSTEM_KIND = {"setrange": ("setrange", "spin"), "page log": ("page", "spin"), "pdiff (SPIN)": ("diff", "spin"),
               "pdiff (UNIX)": ("diff", "unix"), "ObjectStore": ("page", "objectstore")}
TRAVERSALS = ("T1", "T2a", "T2c")
#: Figure 6's x axis (MB): the OCR keeps the ticks 80MB and 120MB.
RVM_SIZES_MB = (8, 16, 24, 32, 40, 48, 64, 80, 100, 120)
RVM_QUICK_SIZES_MB = (8, 16, 40, 120)
#: Figure 1's two ways of handling a write-detecting fault, step by step: (where the step runs, what it does).
#: A step that changes where control runs crosses the user-kernel boundary; one that enters another
#: user context (the handler, the server, back to the application) is a context switch.
FAULT_PATHS = {
    "conventional": (("kernel", "page fault"), ("handler", "signal to the handler"),
                     ("kernel", "call the server"), ("server", "server reads the page"),
                     ("kernel", "reply"), ("handler", "back in the handler"), ("kernel", "mprotect"),
                     ("handler", "mprotect returns"), ("kernel", "return from the signal"), ("app", "back to the app")),
    "SPIN": (("kernel", "page fault: procedure call to Rhino's handler"), ("kernel", "read the page contents"),
             ("kernel", "enable the page mapping"), ("app", "back to the app")),
}


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds on the 266 MHz 21064A; sizes in bytes unless the name says."""

    # the machine (§5)
    clock_hz: float = stated(266e6, "§5: a 21064A CPU running at 266MHz")
    memory_mb: float = stated(47.0, "§5: 47MB of user memory")
    program_mb: float = assumed(2.0, "the benchmark program's code, stack and heap, and Rhino's own tables: "
                                     "a few MB of the 47")
    unix_cache_mb: float = assumed(4.7, "Digital UNIX's unified buffer cache keeps its own copy of each page "
                                        "the UNIX port reads with read(); a tenth of memory (the cache's floor by "
                                        "default) is memory that port's buffer cannot use. Not for OO7, whose "
                                        "databases were on a raw device (§5.3, footnote 5)", ge=0)
    page_bytes: int = assumed(8192, "the Alpha's page (the paper does not say; Digital UNIX and SPIN on the "
                                    "21064A use 8 KB pages)", choices=(4096, 8192, 16384))
    # the RZ26L (§5 names the disk only; a 1 GB 3.5-inch SCSI-2 drive of 1993-94)
    disk_rpm: float = assumed(5400.0, "the RZ26 family's spindle speed")
    disk_cylinders: int = assumed(2570, "1.05 GB formatted over 14 heads at 60 sectors a track on average")
    disk_heads: int = assumed(14, "seven platters, typical of a 1 GB 3.5-inch drive of 1993", ge=1)
    disk_outer_sectors: int = assumed(72, "zoned recording, outermost zone: 3.3 MB/s at 5400 rpm", ge=1)
    disk_inner_sectors: int = assumed(48, "innermost zone: 2.2 MB/s at 5400 rpm", ge=1)
    disk_zones: int = assumed(8, "zones of the recording, outermost to innermost", ge=1)
    disk_track_to_track_ms: float = assumed(1.5, "a 1993 3.5-inch drive's single-track seek")
    disk_average_seek_ms: float = assumed(10.5, "data sheets of 1 GB 5400 rpm drives of the period: 9.5-12 ms")
    disk_full_stroke_ms: float = assumed(20.0, "about twice the average, as data sheets of the period give")
    disk_head_switch_ms: float = assumed(1.0, "head switch and settle of the period")
    disk_overhead_ms: float = assumed(0.5, "SCSI command and controller overhead per request, with the driver's")
    disk_bus_mb_per_s: float = assumed(10.0, "fast SCSI-2, 8 bits wide")
    # logging
    log_buffer_kb: float = assumed(64.0, "the log manager's buffer: written when full, forced at commit and "
                                         "before a steal (§4.1); a few pages")
    record_header_bytes: int = assumed(32, "a log record's header: transaction, page, offset, length", ge=0)
    # the RVM benchmark (§5.2)
    rvm_transactions: int = stated(4000, "§5.2: ran 4000 transactions for each size", ge=1)
    rvm_record_bytes: int = stated(128, "§5.2: reads and updates three 128-byte blocks", ge=1)
    rvm_append_bytes: int = stated(64, "§5.2: appends one 64-byte block to the end of the database", ge=1)
    rvm_hot_kb: float = assumed(16.0, "§5.2's 'narrow region': the benchmark follows TPC-A, whose teller and "
                                      "branch records number eleven per hundred thousand accounts, a page or two")
    rvm_app_us: float = assumed(20.0, "choosing three records and updating 448 bytes: a few thousand "
                                      "instructions at 266 MHz")
    rvm_warm_start: bool = assumed(True, "the database is mapped and read before the transactions run, as RVM "
                                         "maps a segment; §5.2 explains the results by the memory each scheme "
                                         "can use, a steady-state argument")
    # OO7 (§5.3)
    oo7_small_mb: float = stated(10.0, "§5.3: about 10MB for the small; shown beside the model's layout, not "
                                       "used: the medium sizes fix the object sizes (see the module docstring)")
    oo7_medium3_mb: float = stated(60.0, "§5.3: 60MB for the medium-3")
    oo7_medium9_mb: float = stated(100.0, "§5.3: 100MB for the medium-9")
    oo7_update_bytes: int = assumed(8, "OO7's update swaps an atomic part's x and y: two 4-byte integers", ge=1)
    oo7_visit_us: float = assumed(1.5, "one step of a traversal (load a part, test it, follow a connection): a "
                                       "hundred instructions and a few cache misses at 266 MHz")
    oo7_hot_runs: int = stated(3, "§5.3: four consecutive transactions after the cold run, the mean of the "
                                  "first three", ge=1)
    # unit costs on the 21064A (microseconds)
    unix_trap_us: float = assumed(3.0, "a null system call on Digital UNIX at 266 MHz: a few hundred cycles")
    spin_trap_us: float = assumed(6.0, "a system call into a SPIN extension, with the extra protection §5.1 "
                                       "says makes it slower than Digital UNIX's")
    spin_fault_us: float = assumed(10.0, "a page fault taken in SPIN's kernel and dispatched to Rhino's "
                                         "handler by a procedure call (Figure 1(b))")
    signal_us: float = assumed(80.0, "a fault delivered to a user-level handler and returned from: a full "
                                     "context switch each way (§1.2.1), a signal frame, sigreturn")
    mprotect_us: float = assumed(40.0, "mprotect of one page, which updates the memory object map as well as "
                                       "the page table (§5.1)")
    pmap_us: float = assumed(2.0, "rewriting one page-table entry directly (§5.1), with its TLB invalidation")
    lock_us: float = assumed(5.0, "a page lock taken or upgraded in the lock manager (§4.2)")
    ipc_us: float = assumed(300.0, "a local IPC round trip on Digital UNIX: two context switches, four "
                                   "crossings, message copies (§1.2.2: IPC in existing systems is slow)")
    log_record_us: float = assumed(3.0, "building one log record's header and linking it")
    begin_us: float = assumed(10.0, "a transaction record and its lists")
    commit_us: float = assumed(20.0, "walking the transaction's lists, releasing its locks")
    copy_ns_per_byte: float = assumed(15.0, "memcpy of data not in the 21064A's 16 KB caches: about 65 MB/s "
                                            "on the AlphaStation 250's memory system")
    compare_ns_per_byte: float = assumed(6.0, "comparing two pages word by word: a load of each and a "
                                              "compare per 8 bytes, per byte of the two pages")
    # the mechanisms, as switches (a counterfactual is a change of parameters)
    in_kernel_detection: bool = stated(True, "§2.2, Figure 1(b): Rhino's fault handler runs in the kernel, "
                                             "two crossings and no context switch")
    shadows_retained: bool = stated(True, "§4.3.3, Figure 5: at commit the new contents are copied to the "
                                          "shadow, which goes only when the page is evicted")
    exact_diffs: bool = stated(True, "§4.3.3: the differences between page and shadow, word by word, are the "
                                     "redo records")
    undo_written: bool = stated(True, "§4.3.4: for each modified page, log records twice as large as the page "
                                      "size, one undo and one redo; the log is one sequential file (§3.1), so a "
                                      "commit's force writes the undo records before it too")
    objectstore_ipc: bool = stated(True, "§5, §5.2: ObjectStore is client-server; whole pages go to the server "
                                         "by IPC")
    log_on_disk: bool = stated(True, "§3.1: the log manager manages the log device, a file on the disk")
    database_on_disk: bool = stated(True, "§5: one RZ26L disk holds the databases")

    def __post_init__(self):
        super().__post_init__()
        if self.disk_inner_sectors > self.disk_outer_sectors:
            raise ValueError(f"disk_inner_sectors must be <= disk_outer_sectors ({self.disk_outer_sectors}), "
                             f"got {self.disk_inner_sectors!r}")
        if not self.disk_track_to_track_ms <= self.disk_average_seek_ms <= self.disk_full_stroke_ms:
            raise ValueError("disk seeks must satisfy track-to-track <= average <= full stroke, got "
                             f"{self.disk_track_to_track_ms!r}, {self.disk_average_seek_ms!r}, "
                             f"{self.disk_full_stroke_ms!r}")
        if self.program_mb + self.unix_cache_mb >= self.memory_mb:
            raise ValueError(f"memory_mb must exceed program_mb + unix_cache_mb "
                             f"({self.program_mb + self.unix_cache_mb}), got {self.memory_mb!r}")


CALIBRATION = ()
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("user-level-detection", {"in_kernel_detection": False},
                   "Rhino on SPIN detects writes as the UNIX port does: a signal to a user-level handler and "
                   "mprotect (the extension's advantage switched off)"),
    Counterfactual("shadows-dropped-at-commit", {"shadows_retained": False},
                   "page diffing frees each shadow at commit, so only the running transaction's pages take "
                   "two frames"),
    Counterfactual("whole-page-diffs", {"exact_diffs": False},
                   "page diffing logs every modified page whole as its redo record, as if it could not compare"),
    Counterfactual("nvram-log", {"log_on_disk": False},
                   "the log in battery-backed memory (Rio, as Vista uses it, §6): log writes cost no disk time"),
    Counterfactual("free-logging", {"log_on_disk": False, "copy_ns_per_byte": 0.001},
                   "log activity costs nothing: the log in battery-backed memory and copying into it (or into a "
                   "shadow) free, so only diffing's comparisons are left to cost"),
    Counterfactual("cached-database", {"database_on_disk": False},
                   "database pages come from and go to memory: reading or evicting a page costs no disk time"),
    Counterfactual("ample-memory", {"memory_mb": 512.0},
                   "512 MB of memory, which §5 rules out (47 MB): no benchmark here has to page"),
    Counterfactual("local-objectstore", {"objectstore_ipc": False},
                   "ObjectStore's server in the client's address space: no IPC, no copies to ship pages"),
)


# --- the fault paths (Figure 1) -------------------------------------------------------------------

def path_counts(steps) -> dict:
    """User-kernel crossings and context switches along a fault path that starts in the application.

    A step in a different place from the last crosses the boundary when one side is the kernel; a step that
    enters a user context other than the one that was running is a context switch.
    """
    where, user, crossings, switches = "app", "app", 0, 0
    for place, _ in steps:
        if (place == "kernel") != (where == "kernel"):
            crossings += 1
        if place != "kernel" and place != user:
            switches += 1
            user = place
        where = place
    return {"crossings": crossings, "context_switches": switches}


# --- page diffing as Rhino does it -------------------------------------------------------------

class RetainedShadowBufferManager(BufferManager):
    """Page diffing with Rhino's shadows (§4.3.3, Figure 5): a written page's shadow stays after commit.

    The shared :class:`~pysim.sw.wal.BufferManager` frees a shadow at commit. Rhino copies the committed
    contents into it and keeps it, so the next transaction's first write to the page needs no copy, and every
    page written since it was read takes two frames until it is evicted: when every page accessed is written,
    the memory for data halves. Evicting a page (or its shadow) drops both; a page a running transaction has
    modified is stolen with a reverse diff as undo, forced first (write-ahead); a dirty page no transaction is
    modifying is written without undo.
    """

    def __init__(self, capacity_pages: int, page_bytes: int, *, record_header_bytes: int = 32):
        super().__init__(capacity_pages, page_bytes, "diff", record_header_bytes=record_header_bytes)
        self.shadowed = set()  # pages whose shadow is in memory
        self.victims = []  # pages written out to make room, in order (dirty evictions and steals)
        self._writing_resident = False

    def _make_room(self, pages: int):
        # the shared manager makes room for page and shadow at a first write even when the page is in memory
        # already; then only the shadow needs a frame
        super()._make_room(pages - 1 if self._writing_resident and pages == 2 else pages)

    def _modifying(self, page) -> bool:
        ranges = self.active.get(page) if self.active is not None else None
        return bool(ranges) and ranges != ["stolen"]

    def _evict_one(self):
        for page, dirty in self.resident.items():  # oldest first
            if self._modifying(page):
                self._steal(page)  # reverse diff, forced; the page written; its shadow goes
                self.victims.append(page)
            else:
                if dirty:
                    self.counts.page_writes += 1
                    self.victims.append(page)
                if page in self.shadowed:
                    self.shadows -= 1
            self.shadowed.discard(page)
            del self.resident[page]
            return
        raise MemoryError(f"all {self.capacity} frames hold pages and shadows of the running transaction")

    def write(self, page: int, offset: int, nbytes: int):
        if self.active is not None and page in self.shadowed and page not in self.active \
                and 0 <= offset and nbytes >= 1 and offset + nbytes <= self.page_bytes:
            # the shadow kept from the last commit holds the committed contents already: no copy
            self._touch(page, dirty=True)
            self.counts.write_faults += 1
            self.active[page] = [(offset, offset + nbytes)]
            return
        self._writing_resident = page in self.resident
        try:
            super().write(page, offset, nbytes)
        finally:
            self._writing_resident = False
        if self._modifying(page):
            self.shadowed.add(page)

    def commit(self):
        kept = [pg for pg in (self.active or {}) if self._modifying(pg) and pg in self.resident]
        super().commit()  # diffs and logs each page, copies it to its shadow (and counts the shadow gone)
        self.shadows += len(kept)  # Figure 5: the shadow takes the new contents and stays
        self.shadowed.update(kept)

    def abort(self):
        """Restore each modified page from its shadow; the shadows stay (they hold the committed contents)."""
        if self.active is None:
            raise RuntimeError("abort without a transaction")
        restored = [pg for pg in self.active if self._modifying(pg)]
        self.counts.copy_bytes += self.page_bytes * len(restored)
        self.active = None
        self.unforced_undo.clear()


class RecordingBufferManager(BufferManager):
    """The shared :class:`~pysim.sw.wal.BufferManager`, noting which page each eviction writes out (in
    ``victims``), so the disk can be sent to it: the page its LRU walk lets go (setrange's no-steal passes over
    the running transaction's pages)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.victims = []

    def _evict_one(self):
        no_steal = self.policy == "setrange" and self.active is not None
        victim = next((pg for pg in self.resident if not (no_steal and pg in self.active)), -1)
        written = self.counts.page_writes
        super()._evict_one()
        if self.counts.page_writes > written:
            self.victims.append(victim)


def buffer_manager(policy: str, capacity_pages: int, page_bytes: int, *, header: int, retained: bool):
    """The buffer manager for a policy: Rhino's page diffing keeps its shadows unless ``retained`` is False.
    Either way it notes the pages its evictions write (``victims``)."""
    if policy == "diff" and retained:
        return RetainedShadowBufferManager(capacity_pages, page_bytes, record_header_bytes=header)
    return RecordingBufferManager(capacity_pages, page_bytes, policy, record_header_bytes=header)


# --- the disk ------------------------------------------------------------------------------------

def disk_spec(p: Params) -> DiskSpec:
    """The RZ26L as the lab's disk model describes a drive (read-ahead not modelled: no buffer)."""
    step = p.disk_cylinders // p.disk_zones
    zones = tuple((i * step, round(p.disk_outer_sectors - i * (p.disk_outer_sectors - p.disk_inner_sectors)
                                   / max(1, p.disk_zones - 1))) for i in range(p.disk_zones))
    return DiskSpec(
        name="DEC RZ26L (1.05 GB)", rpm=p.disk_rpm, cylinders=p.disk_cylinders, heads=p.disk_heads, zones=zones,
        track_to_track_s=p.disk_track_to_track_ms * ms, average_seek_s=p.disk_average_seek_ms * ms,
        full_stroke_s=p.disk_full_stroke_ms * ms, head_switch_s=p.disk_head_switch_ms * ms,
        overhead_s=p.disk_overhead_ms * ms, bus_bytes_per_s=p.disk_bus_mb_per_s * 1e6, buffer_bytes=0,
        sources={k: "assumed: see atc98_saito.Params" for k in (
            "rpm", "cylinders", "heads", "zones", "track_to_track_s", "average_seek_s", "full_stroke_s",
            "head_switch_s", "overhead_s", "bus_bytes_per_s", "buffer_bytes", "sector_bytes")})


_DISK_FIELDS = ("disk_rpm", "disk_cylinders", "disk_heads", "disk_outer_sectors", "disk_inner_sectors", "disk_zones",
                "disk_track_to_track_ms", "disk_average_seek_ms", "disk_full_stroke_ms", "disk_head_switch_ms",
                "disk_overhead_ms", "disk_bus_mb_per_s")


@functools.lru_cache(maxsize=8)
def _disk(geometry: tuple) -> tuple:
    """(spec, Disk, where each lba lies, the pricing kernel's tables) for one geometry: fitting the seek curve
    and locating blocks are done once, shared by every arm (an arm keeps its own head position; the Disk's own
    state is not used). The tables: seek time by distance, each zone's first block, first cylinder and sectors
    per track (the lab's zoned layout), heads, revolution, overhead and head switch."""
    spec = disk_spec(Params(**dict(zip(_DISK_FIELDS, geometry, strict=True))))
    disk = Disk(spec)
    seek = np.array([disk.seek_time_s(d) for d in range(spec.cylinders)])
    bounds = [z[0] for z in spec.zones[1:]] + [spec.cylinders]
    first = np.cumsum([0] + [(end - z[0]) * spec.heads * z[1] for z, end in zip(spec.zones, bounds, strict=True)])
    tables = (seek, first.astype(np.int64), np.array([z[0] for z in spec.zones], np.int64),
              np.array([z[1] for z in spec.zones], np.int64), int(spec.heads), 60.0 / spec.rpm, spec.overhead_s,
              spec.head_switch_s)
    return spec, disk, {}, tables


def disk_of(p: Params) -> tuple:
    """The cached (spec, Disk, locations, tables) for ``p``'s disk."""
    return _disk(tuple(getattr(p, f) for f in _DISK_FIELDS))


class DiskArm:
    """A program's requests to one disk, one at a time, priced on the lab's disk model (:class:`Disk`).

    The seek is the model's curve from where the head is; the rotation is half a revolution on average,
    except for a request that starts where the last one stopped (a log append): its sector passed under the
    head when the last request ended, so it waits for the rest of a revolution after the program's idle time,
    the overhead and the seek. The transfer goes track by track with a head switch between tracks.
    """

    def __init__(self, spec: DiskSpec, *, disk: Disk | None = None, where: dict | None = None):
        self.disk = disk if disk is not None else Disk(spec)
        self.spec = spec
        self.period_s = 60.0 / spec.rpm
        self.cylinder = 0
        self.next_lba = -1
        self._where = where if where is not None else {}  # lba -> (cylinder, sector, sectors per track)

    def _locate(self, lba: int) -> tuple:
        w = self._where.get(lba)
        if w is None:
            cyl, _, sector, spt = self.disk.locate(lba)
            w = self._where[lba] = (cyl, sector, spt)
        return w

    def service_s(self, lba: int, sectors: int, idle_s: float = 0.0) -> float:
        """Seconds one request takes, ``idle_s`` after the disk finished the last one."""
        if sectors < 1 or lba < 0 or idle_s < 0:
            raise ValueError(f"need lba >= 0, sectors >= 1, idle_s >= 0; got {lba}, {sectors}, {idle_s}")
        cyl = self._locate(lba)[0]
        seek = self.disk.seek_time_s(abs(cyl - self.cylinder))
        if lba == self.next_lba:
            rotation = -(idle_s + self.spec.overhead_s + seek) % self.period_s
        else:
            rotation = self.period_s / 2
        transfer, pos, end = 0.0, lba, lba + sectors
        while pos < end:
            cyl, sector, spt = self._locate(pos)
            here = min(spt - sector, end - pos)
            transfer += here * self.period_s / spt
            pos += here
            if pos < end:
                transfer += self.spec.head_switch_s
        self.cylinder, self.next_lba = cyl, end
        return self.spec.overhead_s + seek + rotation + transfer


# --- the benchmarks' accesses --------------------------------------------------------------------
# A transaction is a tuple of accesses (page, reads first, writes): writes is a tuple of (offset, bytes).

@functools.lru_cache(maxsize=64)
def rvm_trace(db_bytes: int, n: int, hot_bytes: int, record_bytes: int, append_bytes: int, page_bytes: int,
              seed: int) -> tuple:
    """The RVM benchmark's transactions as page accesses: each 128-byte block is read, then written; the
    append is written without a read (shared generator :func:`pysim.workloads.objects.rvm_transactions`)."""
    out = []
    for writes in rvm_transactions(n, db_bytes, hot_bytes=hot_bytes, record_bytes=record_bytes,
                                   append_bytes=append_bytes, rng=seed):
        accesses = []
        for k, (offset, nbytes) in enumerate(writes):
            page, at = divmod(offset, page_bytes)
            accesses.append((page, k < len(writes) - 1, ((at, min(nbytes, page_bytes - at)),)))
        out.append(tuple(accesses))
    return tuple(out)


def oo7_object_bytes(p: Params) -> tuple:
    """(atomic part, connection) bytes that give the medium databases §5.3's sizes in OO7's layout:
    500 composites of a 200-byte header, a 20,000-byte document and 200 atomic parts each with 3 or 9
    connections (two equations, two unknowns)."""
    base = OO7.medium(3)
    per_part = {k: (size * MiB / base.composites - base.composite_bytes - base.document_bytes)
                / base.atomic_per_composite for k, size in ((3, p.oo7_medium3_mb), (9, p.oo7_medium9_mb))}
    connection = (per_part[9] - per_part[3]) / 6
    atomic = per_part[3] - 3 * connection
    if not (connection >= 1 and atomic >= 1):
        raise ValueError(f"oo7_medium3_mb and oo7_medium9_mb give no positive object sizes "
                         f"({p.oo7_medium3_mb!r}, {p.oo7_medium9_mb!r})")
    return round(atomic), round(connection)


def oo7_database(p: Params, config: str) -> OO7:
    """The OO7 database of a configuration ('small', 'medium-3', 'medium-9') with the derived object sizes."""
    atomic, connection = oo7_object_bytes(p)
    shapes = {"small": OO7(), "medium-3": OO7.medium(3), "medium-9": OO7.medium(9)}
    if config not in shapes:
        raise ValueError(f"config must be one of {sorted(shapes)}, got {config!r}")
    return dataclasses.replace(shapes[config], atomic_bytes=atomic, connection_bytes=connection,
                               page_bytes=p.page_bytes)


@functools.lru_cache(maxsize=32)
def oo7_trace(db: OO7, kind: str, update_bytes: int, seed: int) -> tuple:
    """One traversal as page accesses, consecutive touches of a page folded into one access.

    Each updated part's x and y are ``update_bytes`` at a slot of the page; a page's slots are numbered in
    the order its parts are updated in the traversal, up to the parts a page holds, so the bytes a diff finds
    changed on a page never exceed what its parts hold. Returns (accesses, touches).
    """
    pages, writes = _touches(db, kind, seed)
    n = len(pages)
    new_run = np.ones(n, bool)
    new_run[1:] = pages[1:] != pages[:-1]
    run = np.cumsum(new_run) - 1
    nxt_write = np.zeros(n, bool)
    nxt_write[:-1] = writes[1:] & ~new_run[1:]
    updated = ~writes & nxt_write  # a part read, then written on the same page
    run_pages = pages[new_run]
    run_updates = np.bincount(run, weights=updated, minlength=len(run_pages)).astype(np.int64)
    per_part = db.atomic_bytes + db.connections * db.connection_bytes
    slots = max(1, db.page_bytes // per_part)
    before = pd.Series(run_updates).groupby(run_pages).cumsum().to_numpy() - run_updates
    accesses = []
    for page, first, count in zip(run_pages.tolist(), before.tolist(), run_updates.tolist(), strict=True):
        ranges = []
        for start, k in _slot_spans(first % slots, min(count, slots), slots):
            ranges.append((start * update_bytes, k * update_bytes))
        accesses.append((page, True, tuple(ranges)))
    return tuple(accesses), n


@numba.njit(cache=True)
def _dfs_orders(edges):
    """Each composite's atomic parts in the order OO7's depth-first walk from part 0 visits them: pop a part,
    skip it if seen, else visit it and push its connections last to first (as :meth:`OO7.traversal`)."""
    n, a, k = edges.shape
    order = np.empty((n, a), np.int64)
    counts = np.zeros(n, np.int64)
    stack = np.empty(a * k + 1, np.int64)
    seen = np.zeros(a, np.bool_)
    for c in range(n):
        seen[:] = False
        top, m = 1, 0
        stack[0] = 0
        while top > 0:
            top -= 1
            part = stack[top]
            if seen[part]:
                continue
            seen[part] = True
            order[c, m] = part
            m += 1
            for j in range(k - 1, -1, -1):
                stack[top] = edges[c, part, j]
                top += 1
        counts[c] = m
    return order, counts


@functools.lru_cache(maxsize=8)
def _t2c(db: OO7, seed: int) -> tuple:
    """T2c's touches, (pages, writes), as :meth:`OO7.traversal` gives them, built from each composite's walk
    (the same for every visit of a composite) instead of walking again at every visit."""
    lay = db.layout(rng=seed)
    order, counts = _dfs_orders(np.ascontiguousarray(lay["edges"], dtype=np.int64))
    per_visit_pages, per_visit_writes = {}, {}
    visits = lay["base_composites"].ravel()
    for c in np.unique(visits).tolist():
        parts = order[c, :counts[c]]
        pages = lay["atomic_at"][c, parts] // db.page_bytes
        per_visit_pages[c] = np.concatenate(([lay["composite_at"][c] // db.page_bytes], np.repeat(pages, 5)))
        w = np.ones((len(parts), 5), bool)
        w[:, 0] = False
        per_visit_writes[c] = np.concatenate(([False], w.ravel()))
    visits = visits.tolist()
    return (np.concatenate([per_visit_pages[c] for c in visits]).astype(np.int64),
            np.concatenate([per_visit_writes[c] for c in visits]))


def _touches(db: OO7, kind: str, seed: int) -> tuple:
    """(pages, writes) of a traversal, all three from one walk of the shared generator (its slow part): T2c
    reads each part and writes it four times, after reading the composite's header (a read followed by a
    read); T1 is its reads; T2a is T1 with one write after each composite's first part (tests check all
    three against :meth:`OO7.traversal`)."""
    if kind not in TRAVERSALS:
        raise ValueError(f"kind must be one of {TRAVERSALS}, got {kind!r}")
    pages, writes = _t2c(db, seed)
    if kind == "T2c":
        return pages, writes
    reads = np.flatnonzero(~writes)
    next_write = np.zeros(len(writes), bool)
    next_write[:-1] = writes[1:]
    header = (~writes & ~next_write)[reads]
    t1 = pages[reads]
    if kind == "T1":
        return t1, np.zeros(len(t1), bool)
    first_part = np.zeros(len(t1), bool)
    first_part[1:] = header[:-1]
    t2a = np.repeat(t1, 1 + first_part)
    w = np.zeros(len(t2a), bool)
    w[np.cumsum(1 + first_part)[first_part] - 1] = True
    return t2a, w


def _slot_spans(first: int, count: int, slots: int) -> list:
    """Consecutive slots from ``first``, ``count`` of them, wrapping at ``slots``: [(start, length)]."""
    if count <= 0:
        return []
    head = min(count, slots - first)
    return [(first, head)] + ([(0, count - head)] if count > head else [])


# --- what happens: the buffer manager replays the accesses -------------------------------------

#: Columns of a replay's access rows: the page; its read fault, write fault and setrange calls; a page read;
#: log bytes added before a write-ahead force (-1: no force) and after it (a new page's undo); bytes copied and
#: compared; steals; pages written out to make room (their numbers are the next ones in ``victims``).
ACCESS_COLUMNS = ("page", "read_fault", "write_fault", "setrange_calls", "page_read", "forced_log", "log_after",
                  "copy_bytes", "compare_bytes", "steals", "victims")
#: Columns of a replay's commit rows: redo bytes and records, pages to re-protect and to ship, CPU work.
COMMIT_COLUMNS = ("redo_bytes", "records", "pages_touched", "pages_modified", "copy_bytes", "compare_bytes")


class Replayed(NamedTuple):
    """What a run of transactions did, as arrays: ``access`` rows (:data:`ACCESS_COLUMNS`) of every transaction
    in order, transaction t's being ``access[starts[t]:starts[t + 1]]``; the pages written out to make room,
    in order (``victims``); one ``commit`` row (:data:`COMMIT_COLUMNS`) per transaction."""

    access: np.ndarray
    victims: np.ndarray
    commit: np.ndarray
    starts: np.ndarray


def replay(transactions, policy: str, *, capacity_pages: int, page_bytes: int, header: int, retained: bool = True,
           exact_diffs: bool = True, preload_pages: int = 0) -> Replayed:
    """Run transactions through a buffer manager and record what each access and each commit did.

    ``preload_pages`` pages (0, 1, ...) are read first and not counted (a warm start).
    """
    bm = buffer_manager(policy, capacity_pages, page_bytes, header=header, retained=retained)
    for page in range(min(preload_pages, capacity_pages - 1)):
        bm.read(page)
    c, victims = bm.counts, bm.victims
    setrange, page_policy = policy == "setrange", policy == "page"
    access, commits, starts = [], [], [0]
    for accesses in transactions:
        bm.begin()
        touched, written = set(), set()
        for page, reads, writes in accesses:
            reads0, writes0, forces0, log0 = c.page_reads, c.page_writes, c.log_forces, c.log_bytes
            copy0, compare0, steals0 = c.copy_bytes, c.compare_bytes, c.steals
            first_touch = page not in touched
            # every first access of a page in a transaction faults (§4.2); setrange's writes fault only for
            # the lock, as a read does
            read_fault = int(first_touch and (reads or setrange))
            write_fault = int(not setrange and bool(writes) and page not in written)
            if reads:
                bm.read(page)
            for offset, nbytes in writes:
                bm.write(page, offset, nbytes)
            touched.add(page)
            if writes:
                written.add(page)
            new_undo = page_bytes + header if page_policy and write_fault else 0
            dlog = c.log_bytes - log0
            forced = c.log_forces > forces0
            access.append((page, read_fault, write_fault, len(writes) if setrange else 0, c.page_reads - reads0,
                           dlog - new_undo if forced else -1, new_undo if forced else dlog, c.copy_bytes - copy0,
                           c.compare_bytes - compare0, c.steals - steals0, c.page_writes - writes0))
        log0, copy0, compare0 = c.log_bytes, c.copy_bytes, c.compare_bytes
        modified = [pg for pg, r in bm.active.items() if r and r != ["stolen"]]
        n_records = sum(len(merge_ranges(bm.active[pg])) for pg in modified) if setrange else len(modified)
        bm.commit()
        redo = c.log_bytes - log0
        if policy == "diff" and not exact_diffs:
            redo = len(modified) * (page_bytes + header)  # the counterfactual: whole pages, no comparison
        commits.append((redo, n_records, len(touched), len(modified), c.copy_bytes - copy0,
                        c.compare_bytes - compare0 if exact_diffs else 0))
        starts.append(len(access))
    return Replayed(np.array(access, np.int64).reshape(-1, len(ACCESS_COLUMNS)), np.array(victims, np.int64),
                    np.array(commits, np.int64).reshape(-1, len(COMMIT_COLUMNS)), np.array(starts, np.int64))


def cost_model(p: Params) -> CpuCostModel:
    """Unit costs on the 266 MHz 21064A, in seconds (fixed) and seconds per byte."""
    fixed = {"trap": p.unix_trap_us, "spin_trap": p.spin_trap_us, "fault": p.spin_fault_us, "signal": p.signal_us,
             "mprotect": p.mprotect_us, "pmap": p.pmap_us, "lock": p.lock_us, "ipc": p.ipc_us,
             "log_record": p.log_record_us, "begin": p.begin_us, "commit": p.commit_us, "rvm_app": p.rvm_app_us,
             "visit": p.oo7_visit_us}
    return CpuCostModel(p.clock_hz, {k: v * us for k, v in fixed.items()},
                        {"copy": p.copy_ns_per_byte * 1e-9, "compare": p.compare_ns_per_byte * 1e-9})


def event_recipes(p: Params, platform: str, *, through_cache: bool) -> dict:
    """What each event costs a platform, as operation recipes.

    Events: begin, commit, read_fault, write_fault, setrange, rearm (a touched page made to fault again at
    commit), miss and page_write (the CPU side of a page read or written), log_write (a write of the log
    buffer), ship (a modified page sent to ObjectStore's server at commit). ``through_cache``: the UNIX
    port's database is a file, read and written through the buffer cache with a copy each way (RVM); on a
    raw device (OO7) it is not.
    """
    if platform not in ("spin", "unix", "objectstore"):
        raise ValueError(f"platform must be spin, unix or objectstore, got {platform!r}")
    in_kernel = platform == "spin" and p.in_kernel_detection
    detect = Recipe({"fault": 1, "pmap": 1}) if in_kernel else Recipe({"signal": 1, "mprotect": 1})
    rearm = Recipe({"pmap": 1}) if in_kernel else Recipe({"mprotect": 1})
    page = p.page_bytes
    ipc = {"ipc": 1} if p.objectstore_ipc else {}
    if platform == "spin":
        begin, commit = Recipe({"spin_trap": 1, "begin": 1}), Recipe({"spin_trap": 1, "commit": 1})
        miss = page_write = log_write = Recipe()
    elif platform == "unix":  # §5.1: begin and commit are user code that issues several system calls
        begin, commit = Recipe({"trap": 2, "begin": 1}), Recipe({"trap": 2, "commit": 1})
        miss = page_write = Recipe({"trap": 1}, {"copy": page} if through_cache else {})
        log_write = Recipe({"trap": 1})
    else:  # ObjectStore: the server holds the database and the log
        begin, commit = Recipe({"begin": 1, **ipc}), Recipe({"commit": 1, **ipc})
        miss = Recipe(ipc, {"copy": 2 * page} if p.objectstore_ipc else {})
        page_write = log_write = Recipe()
    return {"begin": begin, "commit": commit, "detect": detect, "read_fault": detect + Recipe({"lock": 1}),
            "write_fault": detect + Recipe({"lock": 1}), "setrange": Recipe({"spin_trap": 1, "lock": 1, "pmap": 1}),
            "rearm": rearm, "miss": miss, "page_write": page_write, "log_write": log_write,
            "ship": Recipe(ipc, {"copy": 2 * page} if p.objectstore_ipc else {}),
            "log_record": Recipe({"log_record": 1})}


@dataclass
class Layout:
    """Where things lie on the disk, in sectors: database pages from 0, the log after them, swap beyond."""

    sectors_per_page: int
    log_start: int
    swap_start: int


#: The events a run is priced by, in the order the pricing kernel numbers them (see :func:`event_recipes`).
EVENTS = ("begin", "app", "read_fault", "write_fault", "setrange", "miss", "page_write", "log_write", "ship",
          "log_record", "rearm", "commit")
_BEGIN, _APP, _READ_FAULT, _WRITE_FAULT, _SETRANGE, _MISS, _PAGE_WRITE, _LOG_WRITE, _SHIP, _LOG_RECORD, _REARM, \
    _COMMIT = range(len(EVENTS))
#: Per-transaction results of :func:`price`, in its columns' order.
PRICE_COLUMNS = ("cpu_s", "disk_s", "log_bytes", "page_reads", "page_writes", "log_writes")
# the pricing kernel's state: seconds (CPU, disk, CPU at the last request) and counts
_CPU, _DISK, _AT_IO = range(3)
_LOG_BYTES, _PAGE_READS, _PAGE_WRITES, _FORCES, _PENDING, _LOG_TAIL, _SWAP, _CYL, _NEXT_LBA, _UNDO_HELD = range(10)


@numba.njit(cache=True)
def _arm_service(lba, sectors, idle, state, disk):
    """:meth:`DiskArm.service_s` for the pricing kernel; the arm's cylinder and next block live in ``state``."""
    seek_table, zone_lba, zone_cyl, zone_spt, heads, period, overhead, head_switch = disk
    z = 0
    while lba >= zone_lba[z + 1]:
        z += 1
    cyl = zone_cyl[z] + (lba - zone_lba[z]) // zone_spt[z] // heads
    seek = seek_table[abs(cyl - state[_CYL])]
    if lba == state[_NEXT_LBA]:
        rotation = -(idle + overhead + seek) % period
    else:
        rotation = period / 2
    transfer, pos, end = 0.0, lba, lba + sectors
    while pos < end:
        while pos >= zone_lba[z + 1]:
            z += 1
        off = pos - zone_lba[z]
        spt = zone_spt[z]
        cyl = zone_cyl[z] + off // spt // heads
        here = min(spt - off % spt, end - pos)
        transfer += here * period / spt
        pos += here
        if pos < end:
            transfer += head_switch
    state[_CYL], state[_NEXT_LBA] = cyl, end
    return overhead + seek + rotation + transfer


@numba.njit(cache=True)
def _io(lba, sectors, on_disk, t, state, disk):
    """A request the program waits for: the disk serves it after the CPU time since the last one."""
    if on_disk:
        t[_DISK] += _arm_service(lba, sectors, t[_CPU] - t[_AT_IO], state, disk)
    t[_AT_IO] = t[_CPU]


@numba.njit(cache=True)
def _force(t, state, events, ev_s, copy_s, unix, log_on_disk, disk):
    """Write what the log buffer holds, padded to whole sectors, at the log's tail."""
    pending = state[_PENDING]
    if pending <= 0:
        return
    if unix:  # write() copies the records into the kernel
        events[_LOG_WRITE] += 1
        t[_CPU] += ev_s[_LOG_WRITE] + pending * copy_s
    sectors = (pending + 511) // 512
    _io(state[_LOG_TAIL], sectors, log_on_disk, t, state, disk)
    state[_LOG_TAIL] += sectors
    state[_PENDING] = 0
    state[_FORCES] += 1


@numba.njit(cache=True)
def _log(nbytes, copied, t, state, events, ev_s, copy_s, unix, log_on_disk, buffer_bytes, disk):
    """Assemble ``nbytes`` of log records (a copy into the buffer, unless ``copied``); write the buffer when
    it is full."""
    if nbytes <= 0:
        return
    state[_LOG_BYTES] += nbytes
    if not copied:
        t[_CPU] += nbytes * copy_s
    state[_PENDING] += nbytes
    if state[_PENDING] >= buffer_bytes:
        _force(t, state, events, ev_s, copy_s, unix, log_on_disk, disk)


@numba.njit(cache=True)
def _price_kernel(access, victims, commit, starts, ev_s, copy_s, compare_s, platform, undo_mode, log_on_disk,
                  db_on_disk, buffer_bytes, spp, log_start, swap_start, app_ops, disk):
    """Price a replay, transaction by transaction: CPU by event and byte, the disk request by request in program
    order. ``platform``: 0 SPIN, 1 UNIX, 2 ObjectStore; ``undo_mode``: 0 none, 1 written to the log, 2 held in
    memory until a steal. Returns per-transaction rows (:data:`PRICE_COLUMNS`) and the count of each event."""
    unix, objectstore = platform == 1, platform == 2
    n = commit.shape[0]
    out = np.zeros((n, 6))
    events = np.zeros(len(ev_s), np.int64)
    t = np.zeros(3)
    state = np.zeros(10, np.int64)
    state[_LOG_TAIL], state[_SWAP], state[_NEXT_LBA] = log_start, swap_start, -1
    v = 0
    last = np.zeros(6)
    for k in range(n):
        events[_BEGIN] += 1
        events[_APP] += app_ops
        t[_CPU] += ev_s[_BEGIN] + app_ops * ev_s[_APP]
        for i in range(starts[k], starts[k + 1]):
            a = access[i]
            page, read_fault, write_fault, calls, page_read, forced_log, log_after, cp, cm, steals, nv = \
                a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]
            events[_READ_FAULT] += read_fault
            events[_WRITE_FAULT] += write_fault
            events[_SETRANGE] += calls
            t[_CPU] += (read_fault * ev_s[_READ_FAULT] + write_fault * ev_s[_WRITE_FAULT] + calls * ev_s[_SETRANGE]
                        + cp * copy_s + cm * compare_s)
            if forced_log >= 0 and undo_mode != 0:
                events[_LOG_RECORD] += steals
                t[_CPU] += steals * ev_s[_LOG_RECORD]
                if undo_mode == 2:  # the held undo records go to the log now, ahead of the page
                    _log(state[_UNDO_HELD], True, t, state, events, ev_s, copy_s, unix, log_on_disk, buffer_bytes,
                         disk)
                    state[_UNDO_HELD] = 0
                _log(forced_log, False, t, state, events, ev_s, copy_s, unix, log_on_disk, buffer_bytes, disk)
                # write-ahead: the undo reaches the log before the page reaches the disk
                _force(t, state, events, ev_s, copy_s, unix, log_on_disk, disk)
            for j in range(v, v + nv):
                events[_PAGE_WRITE] += 1
                t[_CPU] += ev_s[_PAGE_WRITE]
                state[_PAGE_WRITES] += 1
                if objectstore:  # no steal: the kernel pages the client's buffer out to swap
                    _io(state[_SWAP], spp, db_on_disk, t, state, disk)
                    state[_SWAP] += spp
                else:
                    _io(victims[j] * spp, spp, db_on_disk, t, state, disk)
            v += nv
            if page_read:
                events[_MISS] += 1
                t[_CPU] += ev_s[_MISS]
                state[_PAGE_READS] += 1
                _io(page * spp, spp, db_on_disk, t, state, disk)
            if log_after > 0 and undo_mode != 0:
                events[_LOG_RECORD] += write_fault
                t[_CPU] += write_fault * ev_s[_LOG_RECORD]
                if undo_mode == 2:
                    t[_CPU] += log_after * copy_s
                    state[_UNDO_HELD] += log_after
                else:
                    _log(log_after, False, t, state, events, ev_s, copy_s, unix, log_on_disk, buffer_bytes, disk)
        c = commit[k]
        t[_CPU] += c[4] * copy_s + c[5] * compare_s
        if objectstore:
            events[_SHIP] += c[3]
            t[_CPU] += c[3] * ev_s[_SHIP]
        events[_LOG_RECORD] += c[1]
        t[_CPU] += c[1] * ev_s[_LOG_RECORD]
        _log(c[0], False, t, state, events, ev_s, copy_s, unix, log_on_disk, buffer_bytes, disk)
        _force(t, state, events, ev_s, copy_s, unix, log_on_disk, disk)
        state[_UNDO_HELD] = 0  # committed: its undo records are not needed
        events[_REARM] += c[2]
        events[_COMMIT] += 1
        t[_CPU] += c[2] * ev_s[_REARM] + ev_s[_COMMIT]
        now = np.array([t[_CPU], t[_DISK], state[_LOG_BYTES], state[_PAGE_READS], state[_PAGE_WRITES],
                        state[_FORCES]], np.float64)
        out[k] = now - last
        last = now
    return out, events


def price(p: Params, policy: str, platform: str, layout: Layout, run: Replayed, *, through_cache: bool,
          app: Recipe, app_ops: int) -> tuple:
    """Price a replayed run on one platform: (per-transaction array of :data:`PRICE_COLUMNS`, {event: count}).

    Undo records are written to the log (Rhino, §4.3.4), kept in memory until a steal needs them
    (``undo_written`` False, page-grain logging), or not made at all (ObjectStore: no steal).
    """
    recipes = event_recipes(p, platform, through_cache=through_cache)
    recipes["app"] = app
    cpu = cost_model(p)
    ev_s = np.array([recipes[name].seconds(cpu) for name in EVENTS])
    undo = 0 if platform == "objectstore" else (1 if p.undo_written or policy != "page" else 2)
    out, events = _price_kernel(
        run.access, run.victims, run.commit, run.starts, ev_s, cpu.per_byte_s["copy"], cpu.per_byte_s["compare"],
        ("spin", "unix", "objectstore").index(platform), undo, p.log_on_disk, p.database_on_disk,
        int(p.log_buffer_kb * 1024), layout.sectors_per_page, layout.log_start, layout.swap_start, app_ops,
        disk_of(p)[3])
    return out, dict(zip(EVENTS, events.tolist(), strict=True))


# --- running a system ----------------------------------------------------------------------------

def capacity_pages(p: Params, platform: str, *, through_cache: bool) -> int:
    """Frames for the buffer: user memory less the program, less the UNIX buffer cache's copies where the
    database is a file read through it."""
    mb = p.memory_mb - p.program_mb - (p.unix_cache_mb if platform != "spin" and through_cache else 0.0)
    return int(mb * MiB // p.page_bytes)


def _trace(trace_key: tuple) -> tuple:
    """The transactions a trace key names (cached underneath)."""
    kind, args = trace_key[0], trace_key[1:]
    if kind == "rvm":
        return rvm_trace(*args)
    db, traversal, update_bytes, seed, repeats = args
    return (oo7_trace(db, traversal, update_bytes, seed)[0],) * repeats


@functools.lru_cache(maxsize=64)
def _distinct_pages(trace_key: tuple) -> int:
    return len({page for txn in _trace(trace_key) for page, _, _ in txn})


@functools.lru_cache(maxsize=128)
def _replayed(trace_key: tuple, policy: str, capacity: int, page_bytes: int, header: int, retained: bool,
              exact: bool, preload: int) -> Replayed:
    """Cached replays: counterfactuals that change only prices reuse them."""
    return replay(_trace(trace_key), policy, capacity_pages=capacity, page_bytes=page_bytes, header=header,
                  retained=retained, exact_diffs=exact, preload_pages=preload)


def run_system(p: Params, system: str, trace_key: tuple, *, db_pages: int, through_cache: bool, app: Recipe,
               app_ops: int, preload: int = 0) -> pd.DataFrame:
    """One system over one trace: per transaction (rows), its CPU and disk seconds and what it did
    (:data:`PRICE_COLUMNS`)."""
    policy, platform = SYSTEM_KIND[system]
    capacity = capacity_pages(p, platform, through_cache=through_cache)
    diff = policy == "diff"  # the shadow and diff switches matter to page diffing only
    needed = max(preload, 0) + (2 if diff else 1) * _distinct_pages(trace_key) + 8
    capacity = min(capacity, needed)  # when nothing is ever evicted, every larger memory replays alike
    run = _replayed(trace_key, policy, capacity, p.page_bytes, p.record_header_bytes, p.shadows_retained or not diff,
                    p.exact_diffs or not diff, min(preload, db_pages))
    spp = p.page_bytes // 512
    log_start = (db_pages + 64) * spp  # the log's extent after the database's (and its appends)
    total = disk_of(p)[1].capacity_sectors
    if log_start >= total * 0.6:
        raise ValueError(f"a database of {db_pages} pages leaves too little of the disk for the log")
    out, _ = price(p, policy, platform, Layout(spp, log_start, int(total * 0.6)), run, through_cache=through_cache,
                   app=app, app_ops=app_ops)
    return pd.DataFrame(out, columns=list(PRICE_COLUMNS))


# --- the artifacts -------------------------------------------------------------------------------

def figure6(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 6: the RVM benchmark, mean time per transaction against the database's size, five systems.

    Index: (db_mb, system). Columns: ms_per_txn, cpu_ms, disk_ms, log_kb (per transaction), page_reads and
    page_writes (per transaction). ``quick`` runs fewer database sizes (each still 4000 transactions).
    """
    p = params or Params()
    seed = int(make_rng(rng).integers(2**31))
    rows = []
    for mb in (RVM_QUICK_SIZES_MB if quick else RVM_SIZES_MB):
        db_bytes = mb * MiB
        db_pages = -(-(db_bytes + p.rvm_transactions * p.rvm_append_bytes) // p.page_bytes)
        key = ("rvm", db_bytes, p.rvm_transactions, int(p.rvm_hot_kb * 1024), p.rvm_record_bytes,
               p.rvm_append_bytes, p.page_bytes, seed)
        for system in SYSTEMS:
            per_txn = run_system(p, system, key, db_pages=db_pages, through_cache=True,
                                 app=Recipe({"rvm_app": 1}), app_ops=1,
                                 preload=db_bytes // p.page_bytes if p.rvm_warm_start else 0)
            rows.append({"db_mb": str(mb), "system": system, **_summary(per_txn.mean(), scale=1e3)})
    out = pd.DataFrame(rows).set_index(["db_mb", "system"])
    return out.rename(columns={"s": "ms_per_txn", "cpu": "cpu_ms", "disk": "disk_ms"})


def _summary(m: dict, *, scale: float) -> dict:
    return {"s": scale * (m["cpu_s"] + m["disk_s"]), "cpu": scale * m["cpu_s"], "disk": scale * m["disk_s"],
            "log_kb": m["log_bytes"] / 1024, "page_reads": m["page_reads"], "page_writes": m["page_writes"]}


def _oo7(p: Params, config: str, *, warm: bool, rng) -> pd.DataFrame:
    """OO7's traversals on one configuration: seconds per transaction, cold (the first transaction on an empty
    buffer) or warm (the mean of the hot runs after it)."""
    seed = int(make_rng(rng).integers(2**31))
    db = oo7_database(p, config)
    db_pages = -(-db.layout(rng=seed)["bytes"] // p.page_bytes)
    repeats = 1 + (p.oo7_hot_runs if warm else 0)
    rows = []
    for traversal in TRAVERSALS:
        touches = oo7_trace(db, traversal, p.oo7_update_bytes, seed)[1]
        key = ("oo7", db, traversal, p.oo7_update_bytes, seed, repeats)
        for system in OO7_SYSTEMS:
            per_txn = run_system(p, system, key, db_pages=db_pages, through_cache=False,
                                 app=Recipe({"visit": 1}), app_ops=touches)
            measured = per_txn.iloc[1:] if warm else per_txn.iloc[:1]
            m = _summary(measured.mean(), scale=1.0)
            rows.append({"traversal": traversal, "system": system, "s_per_txn": m["s"], "cpu_s": m["cpu"],
                         "disk_s": m["disk"], "log_mb": m["log_kb"] / 1024, "page_reads": m["page_reads"],
                         "page_writes": m["page_writes"]})
    return pd.DataFrame(rows).set_index(["traversal", "system"])


def figure8(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 8: OO7 small, buffer cache warm: seconds per transaction (index (traversal, system)).

    Columns: s_per_txn, cpu_s, disk_s, log_mb, page_reads, page_writes (per transaction).
    """
    return _oo7(params or Params(), "small", warm=True, rng=rng)


def figure9(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 9: OO7 small, buffer cache cold. Columns as Figure 8."""
    return _oo7(params or Params(), "small", warm=False, rng=rng)


def figure10(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 10: OO7 medium, fan-out 3, cold. Columns as Figure 8."""
    return _oo7(params or Params(), "medium-3", warm=False, rng=rng)


def figure11(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 11: OO7 medium, fan-out 9, cold. Columns as Figure 8."""
    return _oo7(params or Params(), "medium-9", warm=False, rng=rng)


def by_size(df: pd.DataFrame, column: str = "ms_per_txn") -> pd.DataFrame:
    """Figure 6 as a table: database sizes (MB, in order) down, systems across."""
    wide = df[column].unstack("system")
    return wide.loc[sorted(wide.index, key=float), list(SYSTEMS)].rename_axis("db_mb")


def series(df: pd.DataFrame, system: str, column: str = "ms_per_txn") -> pd.Series:
    """One system's curve of Figure 6 against the database's size (MB)."""
    s = df.xs(system, level="system")[column]
    return pd.Series(s.to_numpy(), index=[float(x) for x in s.index], name=system)


def fault_paths() -> pd.DataFrame:
    """Figure 1's two paths: crossings and context switches, counted step by step (:func:`path_counts`)."""
    return pd.DataFrame({name: path_counts(steps) for name, steps in FAULT_PATHS.items()}).T.rename_axis("path")


def write_detection_us(params: Params | None = None) -> pd.DataFrame:
    """The 1998 cost of detecting one page's first write and re-arming the page at commit, locks left out
    (what the measurements on this machine do), per path (us)."""
    p = params or Params()
    cpu = cost_model(p)
    rows = {}
    for name, platform in (("in the kernel (SPIN)", "spin"), ("signal and mprotect (UNIX)", "unix")):
        r = event_recipes(p, platform, through_cache=False)
        rows[name] = (r["detect"] + r["rearm"]).seconds(cpu) / us
    r = event_recipes(p, "unix", through_cache=False)
    rows["signal, server call and mprotect (Figure 1(a))"] = (r["detect"] + r["rearm"] + Recipe({"ipc": 1})
                                                              ).seconds(cpu) / us
    return pd.DataFrame({"us_per_page": rows}).rename_axis("path")


def forced_commit_ms(params: Params | None = None, *, log_bytes: int = 512, idle_us: float = 500.0) -> float:
    """One small forced log write on the RZ26L, ``idle_us`` after the last one ended (ms)."""
    p = params or Params()
    arm = DiskArm(disk_spec(p))
    sectors = -(-log_bytes // 512)
    arm.service_s(1_000_000, sectors)
    return arm.service_s(1_000_000 + sectors, sectors, idle_us * us) / ms


# --- then vs now: real measurements on this machine ----------------------------------------------
# C programs this module writes, built with gcc and run through pysim.harness. Where a tool or a kernel
# facility is missing, the frame says "not available: <why>" instead of failing.

_DETECT_DECLS = r"""
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
/* PAGEMAP_SCAN (Linux 6.7): not in older headers */
struct scan_region { uint64_t start, end, categories; };
struct scan_arg { uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted,
                  category_mask, category_anyof_mask, return_mask; };
#define SCAN_IOCTL _IOWR('f', 16, struct scan_arg)
#define SCAN_IS_WRITTEN (1 << 1)
#define SCAN_WP_MATCHING (1 << 0)
#define SCAN_CHECK_WPASYNC (1 << 1)
#define NPAGES 64
static char *region;
static long pg;
static int uffd = -1, pagemap = -1;
static struct scan_region found[NPAGES];
static void fail(const char *what) { fprintf(stderr, "%s: %s\n", what, strerror(errno)); exit(1); }
static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)sig; (void)ctx;
    char *page = (char *)((uintptr_t)si->si_addr & ~(uintptr_t)(pg - 1));
    if (page < region || page >= region + NPAGES * pg) { signal(SIGSEGV, SIG_DFL); return; }
    mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE);
}
static void *resolver(void *arg) {  /* the handler thread: un-protect the page, which wakes the writer */
    (void)arg;
    for (;;) {
        struct pollfd p = { uffd, POLLIN, 0 };
        struct uffd_msg m;
        if (poll(&p, 1, -1) < 0) continue;
        if (read(uffd, &m, sizeof m) != (ssize_t)sizeof m || m.event != UFFD_EVENT_PAGEFAULT) continue;
        struct uffdio_writeprotect wp = { { m.arg.pagefault.address & ~(uint64_t)(pg - 1), (uint64_t)pg }, 0 };
        ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
    }
    return NULL;
}
static void arm_uffd(void) {
    struct uffdio_writeprotect wp = { { (uint64_t)region, (uint64_t)(NPAGES * pg) }, UFFDIO_WRITEPROTECT_MODE_WP };
    if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) != 0) fail("UFFDIO_WRITEPROTECT");
}
static long scan_written(void) {  /* which pages were written since the last scan; protect them again */
    struct scan_arg a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a; a.flags = SCAN_WP_MATCHING | SCAN_CHECK_WPASYNC;
    a.start = (uint64_t)region; a.end = (uint64_t)(region + NPAGES * pg);
    a.vec = (uint64_t)found; a.vec_len = NPAGES; a.category_mask = SCAN_IS_WRITTEN; a.return_mask = SCAN_IS_WRITTEN;
    long n = ioctl(pagemap, SCAN_IOCTL, &a), pages = 0;
    for (long k = 0; k < n; k++) pages += (long)((found[k].end - found[k].start) / (uint64_t)pg);
    return pages;
}
static void setup(int mode) {
    pg = sysconf(_SC_PAGESIZE);
    region = mmap(NULL, (size_t)(NPAGES * pg), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) fail("mmap");
    memset(region, 1, (size_t)(NPAGES * pg));
    if (mode == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv; sa.sa_flags = SA_SIGINFO;
        if (sigaction(SIGSEGV, &sa, NULL) != 0) fail("sigaction");
        return;
    }
    uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (uffd < 0) fail("userfaultfd(UFFD_USER_MODE_ONLY)");
    struct uffdio_api api = { UFFD_API, mode == 1 ? UFFD_FEATURE_PAGEFAULT_FLAG_WP
                                                  : UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED, 0 };
    if (ioctl(uffd, UFFDIO_API, &api) != 0) fail(mode == 1 ? "UFFDIO_API (write-protect)" : "UFFDIO_API (asynchronous write-protect)");
    struct uffdio_register r = { { (uint64_t)region, (uint64_t)(NPAGES * pg) }, UFFDIO_REGISTER_MODE_WP, 0 };
    if (ioctl(uffd, UFFDIO_REGISTER, &r) != 0) fail("UFFDIO_REGISTER (write-protect)");
    if (mode == 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, resolver, NULL) != 0) fail("pthread_create");
        return;
    }
    pagemap = open("/proc/self/pagemap", O_RDONLY);
    if (pagemap < 0) fail("open /proc/self/pagemap");
    arm_uffd();
    for (int k = 0; k < NPAGES; k++) region[k * pg]++;
    if (scan_written() != NPAGES) fail("PAGEMAP_SCAN (written pages)");
}
"""
_DETECT_INCLUDES = ("string.h", "errno.h", "signal.h", "unistd.h", "fcntl.h", "poll.h", "pthread.h", "sys/mman.h",
                    "sys/ioctl.h", "sys/syscall.h", "linux/userfaultfd.h")
#: Write detection on this machine: (setup mode, loop body). Each iteration re-arms the 64 pages with one call
#: and writes each once, so each page's first write is detected once: the transaction's pattern.
DETECTORS = {
    "mprotect + SIGSEGV (user-level handler)": (
        0, "mprotect(region, (size_t)(NPAGES * pg), PROT_READ); for (int k = 0; k < NPAGES; k++) region[k * pg]++;"),
    "userfaultfd write-protect (handler thread)": (
        1, "arm_uffd(); for (int k = 0; k < NPAGES; k++) region[k * pg]++;"),
    "userfaultfd asynchronous write-protect (in the kernel)": (
        2, "for (int k = 0; k < NPAGES; k++) region[k * pg]++; sink += (uint64_t)scan_written();"),
    "no detection (plain writes)": (
        3, "for (int k = 0; k < NPAGES; k++) region[k * pg]++;"),
}
_DETECT_PAGES = 64


@functools.lru_cache(maxsize=2)
@one_core()
def measure_write_detection(*, quick: bool = False) -> pd.DataFrame:
    """The cost of detecting a page's first write on this machine (microseconds per page).

    Index: path (see :data:`DETECTORS`). Columns: us_per_page (re-arming and the detected write, per page),
    note ('not available: <why>' where the kernel or a tool refuses). userfaultfd is opened with
    UFFD_USER_MODE_ONLY, which an unprivileged process needs when vm.unprivileged_userfaultfd is 0.
    """
    rows = {}
    for path, (mode, body) in DETECTORS.items():
        m = measure("c", body, name=path, decls=_DETECT_DECLS, setup=f"setup({mode});", includes=_DETECT_INCLUDES,
                    tries=5 if quick else 11, statistic="min", enough_s=0.005 if quick else 0.02)
        rows[path] = {"us_per_page": m.per_op_s / _DETECT_PAGES / us if m.available else np.nan,
                      "note": "" if m.available else f"not available: {m.reason.strip().splitlines()[-1]}"}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("path")


_RVM_PROGRAM = r"""#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
/* A recoverable-memory library over an mmap'd file, and the RVM benchmark on it.
 * The database file is mapped privately: the kernel never writes it back, so the file holds the last
 * checkpoint and the log the committed changes since (redo). Commit appends the transaction's records to a
 * preallocated log file and calls fdatasync. When the log is nearly full, after a commit, the changed pages are
 * written to the database file, fdatasync'd, and the log starts again (a checkpoint). At the end the program
 * checks that recovery (the file plus the log's redo records) gives what memory holds; it reads the log up to
 * the tail the program knows, where a real recovery would find the tail by the records' sequence numbers.
 * Policies: setrange (the program declares each range; the ranges are the redo records), page (the first
 * write to a page faults; the page is logged whole as undo then and whole as redo at commit), diff (the first
 * write faults and copies the page to a shadow, kept after commit; at commit the changed words are the redo
 * records and the shadow takes the new contents). */
enum { SETRANGE, PAGE, DIFF };
static int policy;
static long pg, npages;
static char *db, *shadow_pool, **shadow;
static size_t db_len;
static int dbfd, logfd;
static char *logbuf; static size_t loglen, logcap;
static off_t logtail, logsize;
static long *txn_pages; static long ntxn;
static unsigned char *in_txn, *dirty;
static long *dirty_list; static long ndirty;
static struct { long off, len; } ranges[64]; static int nranges;
static long faults, syncs, checkpoints, shadows_made; static double log_bytes, diff_bytes;
struct hdr { uint32_t kind, len; uint64_t off; };
static void die(const char *what) { fprintf(stderr, "%s: %s\n", what, strerror(errno)); exit(1); }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static void log_append(uint32_t kind, uint64_t off, const void *data, uint32_t len) {
    struct hdr h = { kind, len, off };
    if (loglen + sizeof h + len > logcap) { fprintf(stderr, "log buffer overflow\n"); exit(1); }
    memcpy(logbuf + loglen, &h, sizeof h); loglen += sizeof h;
    if (len) { memcpy(logbuf + loglen, data, len); loglen += len; }
}
static void note_page(long p) {
    if (!in_txn[p]) { in_txn[p] = 1; txn_pages[ntxn++] = p; }
    if (!dirty[p]) { dirty[p] = 1; dirty_list[ndirty++] = p; }
}
static void on_segv(int sig, siginfo_t *si, void *ctx) {
    (void)sig; (void)ctx;
    char *a = (char *)si->si_addr;
    if (a < db || a >= db + db_len) { signal(SIGSEGV, SIG_DFL); return; }
    long p = (long)((a - db) / pg);
    char *page = db + p * pg;
    faults++;
    if (policy == PAGE) log_append(1, (uint64_t)(p * pg), page, (uint32_t)pg);   /* undo: the old page */
    if (policy == DIFF && !shadow[p]) { shadow[p] = shadow_pool + p * pg; memcpy(shadow[p], page, (size_t)pg); shadows_made++; }
    note_page(p);
    mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE);
}
static void setrange(long off, long len) {
    ranges[nranges].off = off; ranges[nranges].len = len; nranges++;
    note_page(off / pg);
}
static void checkpoint(void) {
    for (long k = 0; k < ndirty; k++) {
        long p = dirty_list[k];
        if (pwrite(dbfd, db + p * pg, (size_t)pg, (off_t)(p * pg)) != (ssize_t)pg) die("pwrite database");
        dirty[p] = 0;
    }
    ndirty = 0;
    if (fdatasync(dbfd) != 0) die("fdatasync database");
    logtail = 0; checkpoints++;
}
static void commit(void) {
    if (policy == SETRANGE) {
        for (int k = 0; k < nranges; k++) log_append(2, (uint64_t)ranges[k].off, db + ranges[k].off, (uint32_t)ranges[k].len);
    } else {
        for (long k = 0; k < ntxn; k++) {
            long p = txn_pages[k];
            char *page = db + p * pg;
            if (policy == PAGE) { log_append(2, (uint64_t)(p * pg), page, (uint32_t)pg); continue; }
            uint64_t *w = (uint64_t *)page, *s = (uint64_t *)shadow[p];
            long words = pg / 8;
            for (long i = 0; i < words; ) {            /* runs of changed words are the redo records */
                if (w[i] == s[i]) { i++; continue; }
                long j = i;
                while (j < words && w[j] != s[j]) j++;
                log_append(2, (uint64_t)(p * pg + i * 8), page + i * 8, (uint32_t)((j - i) * 8));
                diff_bytes += (double)((j - i) * 8);
                i = j;
            }
            memcpy(shadow[p], page, (size_t)pg);       /* the shadow takes the new contents and stays */
        }
    }
    log_append(3, 0, NULL, 0);
    size_t padded = (loglen + 511) / 512 * 512;
    if (pwrite(logfd, logbuf, padded, logtail) != (ssize_t)padded) die("pwrite log");
    if (fdatasync(logfd) != 0) die("fdatasync log");
    logtail += (off_t)padded; syncs++; log_bytes += (double)loglen;
    for (long k = 0; k < ntxn; k++) {
        long p = txn_pages[k];
        in_txn[p] = 0;
        if (policy != SETRANGE) mprotect(db + p * pg, (size_t)pg, PROT_READ);
    }
    ntxn = 0; nranges = 0; loglen = 0;
    /* between transactions every page holds committed data only: if the next commit might not fit in the log,
     * write the changed pages to the database file now and start the log again */
    if (logtail + (off_t)logcap > logsize) checkpoint();
}
/* Crash recovery, checked: the database file with the log's redo records applied in order must give what
 * memory holds (every transaction has committed). Undo records are skipped; a commit record ends its write,
 * which was padded to 512 bytes. */
static int recovers(void) {
    char *img = malloc(db_len), *lg = malloc((size_t)logtail + 1);
    if (!img || !lg) die("malloc");
    if (pread(dbfd, img, db_len, 0) != (ssize_t)db_len) die("pread database");
    if (logtail > 0 && pread(logfd, lg, (size_t)logtail, 0) != (ssize_t)logtail) die("pread log");
    off_t pos = 0;
    int ok = 1;
    while (ok && pos + (off_t)sizeof(struct hdr) <= logtail) {
        struct hdr h;
        memcpy(&h, lg + pos, sizeof h);
        pos += (off_t)sizeof h;
        if (h.kind == 3) { pos = (pos + 511) / 512 * 512; continue; }
        if ((h.kind != 1 && h.kind != 2) || h.off + h.len > db_len || pos + (off_t)h.len > logtail) { ok = 0; break; }
        if (h.kind == 2) memcpy(img + h.off, lg + pos, h.len);
        pos += (off_t)h.len;
    }
    ok = ok && memcmp(img, db, db_len) == 0;
    free(img); free(lg);
    return ok;
}
static uint64_t rng_state;
static uint64_t next_random(void) { rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17; return rng_state; }
static void update(long off, long len, long t) {
    if (policy == SETRANGE) setrange(off, len);
    memset(db + off, (int)(t & 0xff) | 1, (size_t)len);
}
int main(int argc, char **argv) {
    if (argc != 8) { fprintf(stderr, "usage: dir setrange|page|diff db_mb transactions hot_kb log_mb seed\n"); return 2; }
    const char *dir = argv[1];
    policy = !strcmp(argv[2], "setrange") ? SETRANGE : !strcmp(argv[2], "page") ? PAGE : DIFF;
    long db_mb = atol(argv[3]), txns = atol(argv[4]), hot = atol(argv[5]) * 1024, log_mb = atol(argv[6]);
    rng_state = (uint64_t)atoll(argv[7]) * 2654435761u + 88172645463325252ull;
    pg = sysconf(_SC_PAGESIZE);
    long records = db_mb * 1024 * 1024 / 128;
    db_len = (size_t)((db_mb * 1024 * 1024 + txns * 64 + pg - 1) / pg * pg);
    npages = (long)(db_len / (size_t)pg);
    char path[4096];
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) die("mkdir");
    snprintf(path, sizeof path, "%s/db-%s", dir, argv[2]);
    dbfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (dbfd < 0) die("open database");
    unlink(path);
    snprintf(path, sizeof path, "%s/log-%s", dir, argv[2]);
    logfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (logfd < 0) die("open log");
    unlink(path);
    char *zero = calloc(1, 1 << 20);
    for (size_t off = 0; off < db_len; off += 1 << 20) if (pwrite(dbfd, zero, (1 << 20) < db_len - off ? (size_t)(1 << 20) : db_len - off, (off_t)off) < 0) die("write database");
    logsize = (off_t)log_mb * 1024 * 1024;
    for (off_t off = 0; off < logsize; off += 1 << 20) if (pwrite(logfd, zero, 1 << 20, off) < 0) die("write log");
    if (fsync(dbfd) != 0 || fsync(logfd) != 0) die("fsync");
    db = mmap(NULL, db_len, PROT_READ | PROT_WRITE, MAP_PRIVATE, dbfd, 0);
    if (db == MAP_FAILED) die("mmap database");
    volatile char sum = 0;
    for (long p = 0; p < npages; p++) sum += db[p * pg];       /* warm: every page mapped */
    shadow_pool = mmap(NULL, db_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    shadow = calloc((size_t)npages, sizeof *shadow);
    txn_pages = calloc((size_t)npages, sizeof *txn_pages); dirty_list = calloc((size_t)npages, sizeof *dirty_list);
    in_txn = calloc((size_t)npages, 1); dirty = calloc((size_t)npages, 1);
    logcap = 64 * (size_t)pg + 4096; logbuf = malloc(logcap);
    if (policy != SETRANGE) {
        struct sigaction sa; memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv; sa.sa_flags = SA_SIGINFO;
        if (sigaction(SIGSEGV, &sa, NULL) != 0) die("sigaction");
        if (mprotect(db, db_len, PROT_READ) != 0) die("mprotect");
    }
    double sync_t0 = now();                                      /* a bare forced append, for reference */
    for (int k = 0; k < 20; k++) {
        if (pwrite(logfd, zero, 512, (off_t)(logsize - 512 * (k + 1))) != 512 || fdatasync(logfd) != 0) die("fdatasync");
    }
    double sync_us = (now() - sync_t0) / 20 * 1e6;
    long tail = records * 128;
    double t0 = now();
    for (long t = 0; t < txns; t++) {
        long blocks[3] = { (long)(next_random() % (uint64_t)records), (long)(next_random() % (uint64_t)(hot / 128)),
                           (long)(next_random() % (uint64_t)(hot / 128)) };
        for (int k = 0; k < 3; k++) { sum += db[blocks[k] * 128]; update(blocks[k] * 128, 128, t); }
        update(tail, 64, t); tail += 64;
        commit();
    }
    double elapsed = now() - t0;
    printf("us_per_txn=%.3f\nsync_us=%.3f\nlog_bytes_per_txn=%.1f\nfaults_per_txn=%.3f\nsyncs_per_txn=%.3f\n"
           "checkpoints=%ld\nshadows=%ld\ndiff_bytes_per_txn=%.1f\npage_bytes=%ld\nrecovers=%d\n",
           elapsed / txns * 1e6, sync_us, log_bytes / txns, (double)faults / txns, (double)syncs / txns,
           checkpoints, shadows_made, diff_bytes / txns, pg, recovers());
    return (int)(sum & 0);
}
"""
RVM_POLICIES = ("setrange", "page", "diff")


def _fnv1a(text: str) -> str:
    """A 64-bit FNV-1a digest of ``text``, in hex: names a build by its source."""
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def _built_rvm_program() -> tuple:
    """The recoverable-memory program, built with gcc into the harness's cache: (path or None, why not)."""
    key = _fnv1a(_RVM_PROGRAM)
    exe = cache_dir() / f"atc98_saito-rvm-{key}"
    if exe.exists():
        return str(exe), ""
    r = run_command(["gcc", "-O2", "-std=gnu99", "-x", "c", "-", "-o", str(exe)], input_text=_RVM_PROGRAM,
                    timeout_s=120.0, check=True)
    if not r.available:
        return None, r.reason
    return str(exe), ""


def run_rvm_program(policy: str, *, db_mb: int, transactions: int, hot_kb: int = 16, log_mb: int = 16,
                    seed: int = 0) -> dict:
    """One run of the recoverable-memory program (built on first use): its printed results as numbers, or
    {'note': 'not available: <why>'} where gcc or the kernel refuses."""
    if policy not in RVM_POLICIES or min(db_mb, transactions, hot_kb, log_mb) < 1:
        raise ValueError(f"need policy in {RVM_POLICIES} and db_mb, transactions, hot_kb, log_mb >= 1; got "
                         f"{policy!r}, {db_mb!r}, {transactions!r}, {hot_kb!r}, {log_mb!r}")
    exe, why = _built_rvm_program()
    if exe is None:
        return {"note": f"not available: {why}"}
    out = run_command([exe, str(cache_dir() / "atc98_saito-rvm"), policy, str(db_mb), str(transactions),
                       str(hot_kb), str(log_mb), str(seed)], timeout_s=600.0, check=True)
    if not out.available:
        return {"note": f"not available: {out.reason}"}
    return {k: float(v) for k, v in (w.split("=", 1) for w in out.stdout.split() if "=" in w)}


@functools.lru_cache(maxsize=2)
@one_core()
def measure_rvm_library(*, quick: bool = False, seed: int = 0) -> pd.DataFrame:
    """The RVM benchmark on a recoverable-memory library over an mmap'd file, with fdatasync at commit, on
    this machine's file system: setrange, page-grain logging and page diffing.

    The policies take turns, one run of each per round (a shared machine's disk changes speed from minute to
    minute, so each round compares the three at about the same time). Index: policy. Columns: us_per_txn (the
    median over the rounds), over_setrange (the median over the rounds of the run's time over setrange's in
    the same round), sync_us (a bare 512-byte forced append, median), log_bytes_per_txn, faults_per_txn,
    syncs_per_txn, diff_bytes_per_txn, page_bytes, recovers (1 when every run's database file and log recovered
    what memory held), rounds, note. ``quick``: 3 rounds of 100 transactions on an 8 MB database; otherwise 5
    rounds of 400 on 32 MB.
    """
    db_mb, txns, rounds = (8, 100, 3) if quick else (32, 400, 5)
    runs, notes = {policy: [] for policy in RVM_POLICIES}, {}
    for r in range(rounds):
        for policy in RVM_POLICIES:
            out = run_rvm_program(policy, db_mb=db_mb, transactions=txns, seed=seed + r)
            if "note" in out:
                notes[policy] = out["note"]
                continue
            runs[policy].append(out)
        if len(notes) == len(RVM_POLICIES):
            break  # nothing runs here: no use trying again
    rows = {}
    for policy in RVM_POLICIES:
        done = runs[policy]
        if not done:
            rows[policy] = {"rounds": 0, "note": notes.get(policy, "not available")}
            continue
        med = {k: float(np.median([d[k] for d in done])) for k in done[0]}
        med["recovers"] = float(min(d["recovers"] for d in done))
        paired = [d["us_per_txn"] / base["us_per_txn"] for d, base in zip(done, runs["setrange"], strict=False)]
        rows[policy] = {**med, "over_setrange": float(np.median(paired)) if paired else np.nan,
                        "rounds": len(done), "note": notes.get(policy, "")}
    columns = ["us_per_txn", "over_setrange", "sync_us", "log_bytes_per_txn", "faults_per_txn", "syncs_per_txn",
               "diff_bytes_per_txn", "page_bytes", "recovers", "rounds", "note"]
    return pd.DataFrame.from_dict(rows, orient="index").reindex(columns=columns).rename_axis("policy")


def then_and_now(detection: pd.DataFrame, library: pd.DataFrame, params: Params | None = None, *,
                 rng=0, quick=False) -> pd.DataFrame:
    """Rhino's costs on the 1998 AlphaStation (the model) beside the same things measured on this machine.

    Index: quantity (its unit in the label). Columns: then (1998, model), now (this machine), then_over_now.
    """
    p = params or Params()
    f6 = figure6(p, rng=rng, quick=True)
    smallest = str(RVM_QUICK_SIZES_MB[0])
    wd = write_detection_us(p)
    user_now = detection.loc["mprotect + SIGSEGV (user-level handler)", "us_per_page"]
    kernel_now = detection.loc["userfaultfd asynchronous write-protect (in the kernel)", "us_per_page"]
    thread_now = detection.loc["userfaultfd write-protect (handler thread)", "us_per_page"]
    user_then = wd.loc["signal and mprotect (UNIX)", "us_per_page"]
    kernel_then = wd.loc["in the kernel (SPIN)", "us_per_page"]
    rvm = {pol: f6.loc[(smallest, name), "ms_per_txn"]
           for pol, name in (("setrange", "setrange"), ("page", "page log"), ("diff", "pdiff (SPIN)"))}
    log_kb = {pol: f6.loc[(smallest, name), "log_kb"]
              for pol, name in (("setrange", "setrange"), ("page", "page log"), ("diff", "pdiff (SPIN)"))}
    now_ms = library["us_per_txn"] / 1e3
    rows = {
        "write detection per page, signal and mprotect (us)": (user_then, user_now),
        "write detection per page, in the kernel (us)": (kernel_then, kernel_now),
        "user-level over in-kernel detection (x)": (user_then / kernel_then, user_now / kernel_now),
        "write detection per page, an upcall to another context (us)": (
            wd.loc["signal, server call and mprotect (Figure 1(a))", "us_per_page"], thread_now),
        "a small forced log write (ms)": (forced_commit_ms(p), library["sync_us"].median() / 1e3),
        "RVM transaction, setrange (ms)": (rvm["setrange"], now_ms.get("setrange", np.nan)),
        "RVM transaction, page-grain logging (ms)": (rvm["page"], now_ms.get("page", np.nan)),
        "RVM transaction, page diffing (ms)": (rvm["diff"], now_ms.get("diff", np.nan)),
        "page-grain logging over setrange (x)": (rvm["page"] / rvm["setrange"],
                                                 library["over_setrange"].get("page", np.nan)),
        "page diffing over setrange (x)": (rvm["diff"] / rvm["setrange"], library["over_setrange"].get("diff", np.nan)),
        "log per transaction, page-grain logging (KB)": (log_kb["page"],
                                                        library["log_bytes_per_txn"].get("page", np.nan) / 1024),
        "log per transaction, page diffing (KB)": (log_kb["diff"],
                                                  library["log_bytes_per_txn"].get("diff", np.nan) / 1024),
    }
    df = pd.DataFrame.from_dict(rows, orient="index", columns=["then", "now"]).astype(float)
    df["then_over_now"] = np.where(df.index.str.endswith("(x)") | df.index.str.endswith("(KB)"), np.nan,
                                   df["then"] / df["now"])
    return df.rename_axis("quantity")


__all__ = [
    "CALIBRATION",
    "COUNTERFACTUALS",
    "INPUTS",
    "OO7_SYSTEMS",
    "SYSTEMS",
    "TRAVERSALS",
    "DiskArm",
    "Params",
    "RecordingBufferManager",
    "Replayed",
    "RetainedShadowBufferManager",
    "figure6",
    "figure8",
    "figure9",
    "figure10",
    "figure11",
    "measure_rvm_library",
    "measure_write_detection",
    "price",
    "replay",
    "then_and_now",
]
