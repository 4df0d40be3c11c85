"""Fast consistency checking for the Solaris file system (Peacock, Kamaraju & Agrawal, USENIX ATC 1998).

Regenerates the LADDIS response-time curves of Figures 2-6 and 9 (RAID-0 and RAID-5 over 11 disks, with
and without Prestoserve NVRAM above and below the RAID driver; UFS with and without the bmap cache and
fast fsck; VxFS with and without its separate log disk; five settings of the CG flusher), the recovery
times of Figures 7 and 8 after a crash under load, and the numbers the text gives: §3.3's disk
operations per NFS write, §4's NVRAM write hit rates, §5.4's mkfs times and §6.4's small file system.

First principles. The NFS server is disk-bound (§4). LADDIS's operations (the mix of
:data:`pysim.sw.nfs.LADDIS_MIX`, what each reads and writes from :func:`pysim.sw.nfs.operations` for
NFSv2, where every update is stable before the reply) run against a file set created, as LADDIS does,
in proportion to the requested load, laid out in 16 MB cylinder groups by the hot-spot allocator (§3.4).
A trace generator (:class:`UfsTrace`, :class:`VxfsTrace`) turns them into block reads through the page,
buffer and inode caches (:class:`pysim.sw.pagecache.PageCache`) and into synchronous and write-behind
block writes: UFS writes the data, the inode and, past the direct blocks, the indirect block; the bmap
cache puts the cached pointers in the inode's block and writes the indirect block once every
``bmap_pointers`` appends (§3.3); fast fsck adds a synchronous CG write when an inode first turns busy
since its group was last cleaned, when an inode first allocates in the hot group (its ibusy list) and
when a group becomes the hot spot, and a linktag write before a directory entry is removed (§5.1-5.3);
VxFS writes one intent-log record per update and the blocks later. :func:`storage_demands` sends the
trace through Presto Upper (a write-back NVRAM: a rewrite of a block it holds is absorbed), SDS RAID-5
(a one-block write is six I/Os: old data and parity read, both written to the prewrite log, both
written in place, §3.2; Presto Lower absorbs the prewrite pair) or RAID-0, and the C disk model of each
member, which gives each request's seek, rotation and transfer. The LADDIS curve is a closed network
(exact MVA at one population: :func:`pysim.queueing.closed.mva_at`) of ``processes`` load generators, each pacing itself to its
share of the requested load, past saturation sending back to back; write-behind loads the disks as
shadow servers. The figure of merit (§6.2) is the saturating run, with the file set its load builds.
:func:`engine_run` replays the same kind of trace on the engine (queued disks, :class:`SdsRaid5`,
:class:`pysim.hw.storage.NvramCache`, :class:`pysim.workloads.clients.ClosedLoop`) as a check of the MVA.
Recovery (§6.3) is a fixed scan plus the busy working set: standard fsck reads every CG and inode
block (the C model and the engine time them) and each file's indirect and directory blocks; the bmap
cache makes fsck write each file's cached map back; fast fsck reads every CG, then checks each busy
inode and busy group, whose number comes from a fluid model of the CG flusher (:func:`busy_set`: it
works ``duty`` of every ``interval``, one write at a time, landing in NVRAM until the saturated server's
full board makes it wait for the disks); VxFS replays its log since the last write-back. mkfs (§5.4)
writes each group's superblock copy and CG block as SDS RAID-5 small writes on the engine.

Calibrated (see CALIBRATION), each on one cell: the share of NFS writes that append past the direct
blocks on §3.3's 2.58 disk operations per write; the share of LADDIS's files a run touches on Figure 2's
RAID-0 Presto peak (3046 ops/s); the number of LADDIS processes on that peak's 20.0 ms (Little's law);
mkfs's time per inode block on §5.4's 1378 s. Given: VxLD's 45-50 s log copy. Everything else,
the other figures of merit, Figure 4's bmap gain, the NVRAM hit rates, the recovery times and mkfs with
lastino, is predicted.

Not reproduced: Table 1 (its values are lost) and §6.4's figures for other systems. The disks (a 1997
7200 rpm 4.2 GB drive), LADDIS's file sizes and its write runs, the CPU and wire costs and VxFS's
workings are assumed; the paper gives none of them. See papers/atc98_peacock/ for what misses and why.

Then and now: :func:`measure_mkfs_fsck` makes and checks ext4 on sparse images (lazy against eager
inode tables; a check that skips unused inodes against one that reads them all) and
:func:`measure_fsync` times a synchronous 8 KB write on this machine's disk and in memory;
:func:`then_and_now` sets them beside the model's 1998 costs.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections import OrderedDict

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness import measure
from pysim.harness.commands import run_command
from pysim.harness.runners import cache_dir
from pysim.hw import CpuCostModel, Disk, DiskSpec
from pysim.hw.storage import NvramCache, QueuedDisk, Raid0, Raid5
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.queueing.closed import Station, mva_at, seidmann
from pysim.rng import make_rng
from pysim.sw.nfs import LADDIS_MIX, operations
from pysim.sw.pagecache import PageCache
from pysim.units import MB, KiB, MiB, ms, us
from pysim.workloads.clients import ClosedLoop
from pysim.harness.exclusive import one_core

# --- the period disk ----------------------------------------------------------------------------------

#: The SPARCstorage MultiPack's 4.2 GB drives (§6.1 gives only the capacity). A 7200 rpm Fast/Wide SCSI-2
#: drive of 1997 (Seagate Barracuda 4LP class); every mechanical number is assumed, with its reason.
DISK = DiskSpec(
    name="4.2 GB 7200 rpm Fast/Wide SCSI-2 disk (1997)",
    rpm=7200,
    cylinders=5288,
    heads=10,
    zones=tuple((i * 661, round(180 - i * (180 - 130) / 7)) for i in range(8)),
    track_to_track_s=0.6 * ms,
    average_seek_s=8.8 * ms,
    full_stroke_s=19.0 * ms,
    head_switch_s=0.6 * ms,
    overhead_s=0.5 * ms,
    bus_bytes_per_s=20 * MB,
    buffer_bytes=512 * KiB,
    sources={
        "rpm": "assumed: 7200 rpm, the speed of the 4 GB server drives of 1997 (Barracuda 4LP class)",
        "cylinders": "derived: 4.2 GB over 10 heads and a mean of 155 sectors a track (paper §6.1: 4.2-GByte disks)",
        "heads": "assumed: five platters, as 4 GB 3.5-inch drives of 1997 had",
        "zones": "assumed: 8 zones, 180 sectors a track outside to 130 inside (a 11-8 MB/s media rate at 7200 rpm)",
        "track_to_track_s": "assumed: 0.6 ms, typical of 1997 7200 rpm drives",
        "average_seek_s": "assumed: 8.8 ms read seek, typical of 1997 7200 rpm drives",
        "full_stroke_s": "assumed: 19 ms, typical of 1997 7200 rpm drives",
        "head_switch_s": "assumed: equal to the track-to-track seek",
        "overhead_s": "assumed: 0.5 ms of SCSI-2 command overhead, so back-to-back writes miss a revolution",
        "bus_bytes_per_s": "standard: Fast/Wide SCSI-2, 20 MB/s",
        "buffer_bytes": "assumed: a 512 KB read-ahead buffer",
        "sector_bytes": "standard: 512-byte sectors",
    },
)
SECTOR = DISK.sector_bytes
BLOCK = 8 * KiB  # UFS block (and the metadevices' interleave, §6.1)
SECTORS_PER_BLOCK = BLOCK // SECTOR
PERCENT = 100

# --- the configurations the paper measured (§6.1, §6.2) ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Setup:
    """One server configuration: the array, the NVRAM caches, the file system and its features."""

    raid: str = "raid0"            # "raid0" or "raid5" over the data disks
    presto: str = "none"           # "none", "upper" (above the metadevice) or "upper+lower" (also below RAID-5)
    fs: str = "ufs"                # "ufs" or "vxfs"
    bmap: bool = False             # §3.3's bmap cache
    fast_fsck: bool = False        # §5: busy bitmaps, ibusy lists, linktags, the CG flusher
    vxld: bool = False             # VxFS's log on a separate, twelfth disk
    flusher: tuple = (30.0, 0.10)  # the CG flusher: (interval in s, share of it spent flushing)

    def __post_init__(self):
        if self.raid not in ("raid0", "raid5"):
            raise ValueError(f"raid must be 'raid0' or 'raid5', got {self.raid!r}")
        if self.presto not in ("none", "upper", "upper+lower"):
            raise ValueError(f"presto must be 'none', 'upper' or 'upper+lower', got {self.presto!r}")
        if self.fs not in ("ufs", "vxfs"):
            raise ValueError(f"fs must be 'ufs' or 'vxfs', got {self.fs!r}")
        interval, duty = self.flusher
        if not (interval > 0 and 0 < duty <= 1):
            raise ValueError(f"flusher must be (interval > 0 s, duty in (0, 1]), got {self.flusher!r}")


UFS_VARIANTS = {"Bmap + fast fsck": (True, True), "Bmap": (True, False), "Fast fsck": (False, True),
                "Baseline UFS": (False, False)}


def _ufs(raid, presto, bmap, ff, flusher=(30.0, 0.10)) -> Setup:
    return Setup(raid, presto, "ufs", bmap, ff, False, flusher)


def _series(raid: str, presto: str, names) -> dict:
    """The curves of Figures 3-6: UFS variants and VxFS on one array and NVRAM setting."""
    out = {}
    for name in names:
        if name in UFS_VARIANTS:
            out[name] = _ufs(raid, presto, *UFS_VARIANTS[name])
        else:
            out[name] = Setup(raid, presto, "vxfs", vxld=name == "VxFS/VxLD")
    return out


FIVE = ("Bmap + fast fsck", "Bmap", "Fast fsck", "Baseline UFS", "VxFS/VxLD")
FIGURE2 = {
    "RAID-5 no Presto": _ufs("raid5", "none", True, True),
    "RAID-5 Presto Upper only": _ufs("raid5", "upper", True, True),
    "RAID-5 Presto Upper + Lower": _ufs("raid5", "upper+lower", True, True),
    "RAID-0 no Presto": _ufs("raid0", "none", True, True),
    "RAID-0 Presto Upper": _ufs("raid0", "upper", True, True),
}
FIGURE3 = _series("raid5", "none", FIVE)
FIGURE4 = _series("raid5", "upper+lower", FIVE)
FIGURE5 = _series("raid0", "none", FIVE)
FIGURE6 = _series("raid0", "upper", ("Bmap + fast fsck", "Fast fsck", "Baseline UFS", "VxFS/VxLD", "VxFS"))
FLUSHERS = {"10% every 30 s": (30.0, 0.10), "10% every 10 s": (10.0, 0.10), "10% every 2 s": (2.0, 0.10),
            "10% every 1 s": (1.0, 0.10), "40% every 1 s": (1.0, 0.40)}
FIGURE9 = {**{f"Fast fsck: {k}": _ufs("raid0", "upper", True, True, v) for k, v in FLUSHERS.items()},
           "Baseline UFS": _ufs("raid0", "upper", False, False), "VxFS": Setup("raid0", "upper", "vxfs")}
#: Requested LADDIS loads (NFS ops/s) on each figure's axis (its ticks, a step apart up to the axis' end);
#: every curve also gets its saturation point.
LOADS = {
    "figure2": (100, 300, *range(500, 3001, 500)),
    "figure3": tuple(range(100, 601, 50)),
    "figure4": tuple(range(200, 1601, 200)),
    "figure5": tuple(range(200, 1801, 200)),
    "figure6": tuple(range(500, 3001, 500)),
    "figure9": tuple(range(500, 3001, 500)),
}
#: Loads at the crash (NFS ops/s): Figure 7's axis, and Figure 8's up to 4000.
CRASH_LOADS = (0, 250, *range(500, 4001, 500))


# --- parameters ------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Sizes in the units the paper uses (GB, MB, KB); times in ms or us as named."""

    # the server and its storage (§6.1)
    disks: int = stated(11, "§6.1: for the RAID-0 and RAID-5 UFS tests, 11 drives were used", ge=3)
    disk_gb: float = stated(4.2, "§6.1: 12 4.2-GByte disks")
    memory_mb: float = stated(1024.0, "§6.1: 1 GByte of DRAM")
    nvram_mb: float = stated(32.0, "§6.1: 32 MByte of NVRAM")
    cpus: int = stated(2, "§6.1: 2 300-MHz UltraSPARC-II processors", ge=1)
    cpu_mhz: float = stated(300.0, "§6.1: 300-MHz UltraSPARC-II")
    cg_mb: float = stated(16.0, "§5.1: each cylinder group is limited to about 16 MBytes")
    crash_fs_gb: float = stated(44.0, "§6.3: our 44-GByte file system")
    mkfs_fs_gb: float = stated(40.0, "§5.4: a 40-GByte RAID-5 metadevice")
    small_fs_gb: float = stated(5.0, "§6.4: a single file system of about 5 GByte on a RAID-0 device")
    flusher_interval_s: float = stated(30.0, "§6.3: the flusher runs every 30 seconds")
    flusher_duty: float = stated(0.10, "§6.3: for 10% of the interval, or for 3.0 sec", le=1)
    run_s: float = stated(600.0, "§6.3: two 10-minute LADDIS runs")
    crash_into_run_s: float = stated(300.0, "§6.3: crashed 5 minutes into the second of two 10-minute runs")
    linktag_share: float = stated(0.125, "§5.3: the final one-eighth of each inode block holds linktags", lt=1)
    # UFS's on-disk format (not in the paper)
    inode_bytes: int = assumed(128, "the UFS on-disk inode is 128 bytes")
    bytes_per_inode: int = assumed(2048, "newfs's default of one inode per 2 KB of space in Solaris 2.5")
    bmap_pointers: int = assumed(28, "one 128-byte inode slot holds 28 four-byte block pointers after a "
                                     "16-byte header", ge=1)
    direct_blocks: int = assumed(12, "UFS inodes map 12 blocks directly", ge=1)
    # the LADDIS workload (SPECsfs 1.1; the paper gives neither the file set nor the access pattern)
    fileset_mb_per_op: float = assumed(5.0, "SPEC SFS 1.x builds 5 MB of files per requested op/s")
    accessed_share: float = calibrated(0.0302, "the share of LADDIS's files the run touches", le=1)
    file_kb: tuple = assumed(((1, 33), (2, 21), (4, 13), (8, 10), (16, 8), (32, 5), (64, 4), (128, 3),
                              (256, 2), (1024, 1)),
                             "SPEC SFS's file-size distribution (KB, % of files), as SFS 2.0 documents it")
    write_run: float = assumed(4.0, "LADDIS sends a file write of more than 8 KB as 8 KB calls in a row: a run of "
                                    "four (32 KB) is typical of its write sizes", ge=1)
    files_per_dir: int = assumed(30, "LADDIS spreads its files over directories of a few tens", ge=1)
    appending_write_share: float = calibrated(0.555, "writes that append past a file's direct blocks", le=1)
    processes: int = calibrated(61, "LADDIS load-generating processes on the two clients", ge=1)
    # caches and costs on the server
    page_cache_mb: float = assumed(800.0, "1 GB less the kernel, NFS daemons and the metadata buffers")
    buffer_cache_mb: float = assumed(20.0, "Solaris's metadata buffer cache, bufhwm: 2% of memory")
    inode_cache: int = assumed(17000, "Solaris 2.5.1's in-core inode cache for 1 GB of memory, ufs_ninode: "
                                      "max_nprocs + 16 + maxusers + 64", ge=1)
    nvram_write_us: float = assumed(100.0, "copying 8 KB into the Prestoserve board over the SBus")
    rpc_us: float = assumed(120.0, "an NFS RPC's receive, dispatch and reply through UDP on a 300 MHz "
                                   "UltraSPARC-II: some 36,000 instructions")
    vfs_us: float = assumed(60.0, "the UFS operation itself, above the disk driver")
    copy_ns_per_byte: float = assumed(5.0, "copying and checksumming a byte at about 200 MB/s")
    wire_us_per_kb: float = assumed(82.0, "100 Mbit/s Ethernet: 8192 bits and framing per KB")
    client_us: float = assumed(500.0, "the Ultra-1 client's own work per call and the round trip")
    # VxFS (not described in the paper)
    vxfs_log_mb: float = assumed(16.0, "VxFS's largest intent log")
    vxfs_flush_s: float = assumed(30.0, "VxFS writes its delayed metadata back like UFS's sync, every 30 s")
    vxld_copy_s: float = given(47.5, "§6.3: VxLD's log copy at reboot typically took between 45 and 50 seconds")
    # fsck and mkfs (not described in the paper)
    fsck_chunk_kb: int = assumed(56, "BSD fsck reads inodes 56 KB at a time (INOBUFSIZE)", ge=8)
    fsck_inode_us: float = assumed(5.0, "checking one inode: a few hundred instructions on the 300 MHz CPU")
    mkfs_block_ms: float = calibrated(4.189, "one 8 KB inode-block write of mkfs on the RAID-5 metadevice")
    # the mechanisms, as switches (counterfactuals change these)
    nvram_absorbs_rewrites: bool = stated(True, "§4: write hit rates between 60% and 70%: a block rewritten "
                                                "while in NVRAM costs the disk nothing")
    sds_prewrite_log: bool = stated(True, "§3.2: the update of a single block incurs 6 I/O operations, "
                                          "two of them to the prewrite log")
    busy_marks_sync: bool = stated(True, "§5.1: the marking must be done synchronously")
    flusher_writes: bool = stated(True, "§5.2: the flusher cleans a cylinder group by flushing all the inodes in "
                                        "its busy-inode bitmap and ibusy list")
    linktag_write: bool = stated(True, "§5.3: we thus require an additional write before a directory-entry "
                                       "deletion that was not done before")
    flusher_one_io_at_a_time: bool = stated(True, "§6.3: the flusher does only one disk operation at a time")
    fsck_reads_every_cg: bool = stated(True, "§6.3: fast fsck has to read all the cylinder groups at least once")
    bmap_cache_works: bool = stated(True, "§3.3: the inode and block-mapping information updated in one "
                                          "disk operation most of the time")
    vxfs_batches_log: bool = stated(False, "§1: with few or no asynchronous operations, the expected batching "
                                           "does not occur")
    fileset_grows_with_load: bool = stated(True, "§6.3: the number of files is directly proportional to the "
                                                 "LADDIS load")

    def __post_init__(self):
        super().__post_init__()
        shares = [s for _, s in self.file_kb]
        if not shares or any(not (kb > 0 and s >= 0) for kb, s in self.file_kb) or sum(shares) <= 0:
            raise ValueError(f"file_kb must be (KB > 0, share >= 0) pairs with a positive total, got {self.file_kb!r}")




CALIBRATION = (
    Fit("appending_write_share", "writes", "Baseline UFS", "disk_ops_per_write", (0.0, 1.0)),
    Fit("accessed_share", "figure2", "RAID-0 Presto Upper / peak", "throughput_ops", (0.005, 0.2)),
    Fit("processes", "figure2", "RAID-0 Presto Upper / peak", "response_ms", (5, 200), tolerance=0.03),
    Fit("mkfs_block_ms", "mkfs", "standard UFS", "mkfs_s", (0.5, 20.0)),
)
INPUTS = (
    Inputs(("vxld_copy_s",), cells("figure7", ["0"], ["vxld_copy_s"]),
           "VxLD's log copy at reboot, taken as given: the paper does not say how large the log was"),
)
COUNTERFACTUALS = (
    Counterfactual("no-bmap-cache", {"bmap_cache_works": False},
                   "the bmap cache saves nothing: every append writes the indirect block, and fsck has no cached "
                   "maps to write back"),
    Counterfactual("free-fast-fsck", {"busy_marks_sync": False, "linktag_write": False, "flusher_writes": False},
                   "fast fsck's bookkeeping costs no disk writes: no synchronous busy marks in the CG blocks, no "
                   "linktag write before a removal, no CG flusher"),
    Counterfactual("write-through-nvram", {"nvram_absorbs_rewrites": False},
                   "Presto acknowledges writes at once but writes every one to disk: rewrites are not absorbed"),
    Counterfactual("no-prewrite-log", {"sds_prewrite_log": False},
                   "RAID-5 small writes without SDS's prewrite log: four I/Os, so Presto Lower has nothing to hold"),
    Counterfactual("flusher-never-waits", {"flusher_one_io_at_a_time": False},
                   "the flusher's writes never wait behind the disk queues"),
    Counterfactual("busy-cg-bitmap", {"fsck_reads_every_cg": False},
                   "§6.3's proposal: a busy-CG bitmap in the superblock, so fast fsck reads only busy CGs"),
    Counterfactual("fixed-file-set", {"fileset_grows_with_load": False},
                   "LADDIS's file set the same size at every load"),
)


# --- the file system's layout: UFS cylinder groups ---------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Layout:
    """Where UFS keeps things, in 8 KB blocks: each cylinder group starts with its CG block and the ibusy
    overflow block (Figure 1), then its inode blocks, then its data blocks."""

    fs_blocks: int
    cg_blocks: int
    inode_blocks: int       # per cylinder group
    files_per_inode_block: int
    n_cg: int = 0           # derived from the above
    data_per_cg: int = 0

    def __post_init__(self):
        object.__setattr__(self, "n_cg", max(1, self.fs_blocks // self.cg_blocks))
        object.__setattr__(self, "data_per_cg", self.cg_blocks - 2 - self.inode_blocks)

    def cg_block(self, cg):
        return cg * self.cg_blocks

    def inode_block(self, cg, slot):
        return cg * self.cg_blocks + 2 + (slot // self.files_per_inode_block) % self.inode_blocks

    def data_block(self, index):
        """The block of the index-th data block in allocation order (cylinder group by cylinder group)."""
        cg, k = divmod(index, self.data_per_cg)
        return (cg % self.n_cg) * self.cg_blocks + 2 + self.inode_blocks + k


def layout(p: Params, fs_gb: float, setup: Setup) -> Layout:
    """The layout of a file system of ``fs_gb`` GB: 16 MB cylinder groups, an inode per 2 KB, 128-byte
    inodes; linktags take the last eighth of each inode block (§5.3) and the bmap cache the odd inode of
    each pair (§3.3)."""
    cg_blocks = int(p.cg_mb * MiB // BLOCK)
    inodes_per_cg = int(p.cg_mb * MiB // p.bytes_per_inode)
    inode_blocks = inodes_per_cg * p.inode_bytes // BLOCK
    slots = BLOCK // p.inode_bytes
    if setup.fast_fsck:
        slots = int(slots * (1 - p.linktag_share))
    if setup.bmap:
        slots //= 2
    return Layout(int(fs_gb * 1e9 // BLOCK), cg_blocks, inode_blocks, max(1, slots))


# --- the LADDIS file set -------------------------------------------------------------------------------------

class FileSet:
    """LADDIS's files, created in order through the hot-spot allocator (§3.4): each directory, then its
    files, taking data blocks and inode slots from one cylinder group until it is full."""

    def __init__(self, p: Params, lay: Layout, load: float, rng):
        self.lay = lay
        kb = np.array([k for k, _ in p.file_kb], dtype=float)
        share = np.array([s for _, s in p.file_kb], dtype=float)
        share /= share.sum()
        target = p.fileset_mb_per_op * MiB * max(load, 1.0)
        mean = float(kb @ share) * KiB
        n_files = max(1, int(target / mean))
        n_dirs = -(-n_files // p.files_per_dir)
        sizes = np.ceil(rng.choice(kb, size=n_files, p=share) * KiB / BLOCK).astype(np.int64)
        # creation order: a directory, then its files
        units = n_files + n_dirs
        self.is_dir = np.zeros(units, dtype=bool)
        dir_pos = np.arange(n_dirs) * (p.files_per_dir + 1)
        self.is_dir[dir_pos[dir_pos < units]] = True
        self.blocks = np.ones(units, dtype=np.int64)
        self.blocks[~self.is_dir] = sizes[: int((~self.is_dir).sum())]
        self.start = np.concatenate([[0], np.cumsum(self.blocks)[:-1]])  # data index of each unit's first block
        self.cg = (self.start // lay.data_per_cg) % lay.n_cg
        order = np.argsort(self.cg, kind="stable")
        rank = np.empty(units, dtype=np.int64)
        counts = np.bincount(self.cg, minlength=lay.n_cg)
        firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rank[order] = np.arange(units) - np.repeat(firsts, counts)
        self.inode_block = lay.inode_block(self.cg, rank)
        self.inodes_in_cg = counts
        self.dir_of = np.maximum.accumulate(np.where(self.is_dir, np.arange(units), 0))
        self.next_data = int(self.start[-1] + self.blocks[-1])  # the hot spot's rotor after the file set
        files = np.flatnonzero(~self.is_dir)
        self.accessed = rng.choice(files, size=max(1, int(len(files) * p.accessed_share)), replace=False)
        self.n_files, self.n_dirs = n_files, n_dirs
        # the traces' per-operation lookups index these one at a time (a trace touches few of the units, so
        # indexing the arrays costs less than converting them to lists)
        self.start_of, self.blocks_of = self.start, self.blocks
        self.inode_of, self.dir_list, self.cg_of = self.inode_block, self.dir_of, self.cg

    def home_block(self, unit, k=0):
        """The k-th data block of a unit as created (units and k may be arrays)."""
        if isinstance(unit, (int, np.integer)) and isinstance(k, (int, np.integer)):
            return self.lay.data_block(int(self.start_of[unit]) + k % int(self.blocks_of[unit]))
        return self.lay.data_block(self.start[unit] + k % self.blocks[unit])

    def large_files(self, direct_blocks: int) -> int:
        """Files mapped past their direct blocks (they have an indirect block)."""
        return int(((self.blocks > direct_blocks) & ~self.is_dir).sum())


# --- the block work of LADDIS operations -------------------------------------------------------------------

NFS_OPS = operations(2)  # NFSv2: every update is on stable storage before the reply (RFC 1094)
OP_NAMES = tuple(LADDIS_MIX)
_READS = {op: frozenset(work.reads) for op, work in NFS_OPS.items()}
FS_DEVICE, LOG_DEVICE = 0, 1


@dataclasses.dataclass
class Trace:
    """What ``n_ops`` LADDIS operations ask of the storage, in order; operation i arrives at i / load s.

    ``reads``: (op, block) buffer-cache misses; ``sync``: (op, block, device) writes the operation waits
    for (NFS's stable storage); ``background``: (op, block, device) writes nobody waits for.
    """

    n_ops: int
    load: float
    warm_ops: int        # operations before these, run only to fill the NVRAM (not counted)
    ops: np.ndarray
    reads: np.ndarray
    sync: np.ndarray
    background: np.ndarray
    counts: dict

    def per_write(self, what: str) -> float:
        """Mean of a per-write count (e.g. 'write_disk_ops') over the NFS writes."""
        return self.counts[what] / max(1, self.counts["writes"])


class _TraceBuilder:
    """Shared machinery: the two buffer caches, the output lists, the operation stream."""

    def __init__(self, p: Params, setup: Setup, files: FileSet, load: float, rng):
        self.p, self.setup, self.files, self.lay = p, setup, files, files.lay
        self.load, self.rng = load, rng
        self.meta = PageCache(capacity_bytes=int(p.buffer_cache_mb * MiB), page_bytes=BLOCK)
        self.data = PageCache(capacity_bytes=int(p.page_cache_mb * MiB), page_bytes=BLOCK)
        self.inodes = PageCache(capacity_pages=p.inode_cache)
        self.reads, self.sync, self.bg = [], [], []
        self.counts = {"writes": 0, "write_disk_ops": 0, "busy_marks": 0, "bmap_flushes": 0, "log_writes": 0}
        self.i = 0
        self.in_write = False

    def read(self, block, meta=True):
        """Read a block through its cache: metadata through the buffer cache, data and directories
        (files to the page cache) through the page cache."""
        cache = self.meta if meta else self.data
        if not cache.access(int(block)).hit:
            self.reads.append((self.i, int(block)))
            if self.in_write:
                self.counts["write_disk_ops"] += 1

    def write(self, block, meta=True, device=FS_DEVICE):
        (self.meta if meta else self.data).access(int(block), True)
        self.sync.append((self.i, int(block), device))
        if self.in_write:
            self.counts["write_disk_ops"] += 1

    def later(self, block, device=FS_DEVICE):
        self.bg.append((self.i, int(block), device))

    def warm(self):
        """Start from a steady state: the caches hold what a long run leaves there, the accessed files'
        metadata and data, met in random order (LRU keeps a random part of what does not fit)."""
        f = self.files
        self.inodes.run(self.rng.permutation(f.accessed).astype(np.uint64))
        self.meta.run(self.rng.permutation(f.inode_block[f.accessed]).astype(np.uint64))
        dirs = np.unique(f.dir_of[f.accessed])
        sizes = f.blocks[f.accessed]
        owner = np.repeat(f.accessed, sizes)
        k = np.arange(len(owner)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        data = np.concatenate([f.lay.data_block(f.start[owner] + k), f.home_block(dirs)])
        self.data.run(self.rng.permutation(data).astype(np.uint64))
        for cache in (self.inodes, self.meta, self.data):
            cache.reset_counts()

    def run(self, n_ops: int, warm_ops: int = 0) -> Trace:
        """``warm_ops`` operations that only fill the NVRAM, then ``n_ops`` that count (numbered from 0;
        the warm ones are numbered below 0)."""
        self.warm()
        total = n_ops + warm_ops
        mix = np.array([LADDIS_MIX[o] for o in OP_NAMES], dtype=float)
        kinds = self.rng.choice(len(OP_NAMES), size=total, p=mix / mix.sum())
        targets = self.rng.choice(self.files.accessed, size=total)
        appends = self.rng.random(total) < self.p.appending_write_share
        # a write continues its predecessor's run (same file, same kind) with probability 1 - 1/write_run
        writes = np.flatnonzero(kinds == OP_NAMES.index("write"))
        goes_on = self.rng.random(len(writes)) < 1 - 1 / self.p.write_run
        for k in np.flatnonzero(goes_on[1:]) + 1:
            targets[writes[k]], appends[writes[k]] = targets[writes[k - 1]], appends[writes[k - 1]]
        offsets = self.rng.integers(0, 1 << 30, size=total).tolist()
        kinds_l, targets_l, appends_l = kinds.tolist(), targets.tolist(), appends.tolist()
        for j in range(total):
            i = self.i = j - warm_ops
            if i == 0:
                self.counts = dict.fromkeys(self.counts, 0)
            name = OP_NAMES[kinds_l[j]]
            self.in_write = name == "write"
            if self.in_write:
                self.counts["writes"] += 1
            self.do(name, targets_l[j], i / self.load, appends_l[j], offsets[j])
        self.finish()
        as_array = lambda rows, width: np.array(rows, dtype=np.int64).reshape(-1, width)
        return Trace(n_ops, self.load, warm_ops, kinds[warm_ops:], as_array(self.reads, 2), as_array(self.sync, 3),
                     as_array(self.bg, 3), dict(self.counts))

    def do(self, name, unit, t, append, k):  # pragma: no cover - overridden
        raise NotImplementedError

    def finish(self):
        pass

    # reads every file system does the same way (the kinds pysim.sw.nfs lists for each operation)
    def common_reads(self, name, unit, k):
        """The reads :mod:`pysim.sw.nfs` lists for the operation; ``k`` picks the data block read."""
        f = self.files
        kinds = _READS[name]
        if "dir" in kinds:
            self.read(f.home_block(f.dir_list[unit]), meta=False)
        if "inode" in kinds and not self.inodes.access(unit).hit:  # the in-core inode cache missed
            self.read(f.inode_of[unit])
        if "data" in kinds and name in ("read", "readlink"):
            self.read(f.home_block(unit, k), meta=False)


class UfsTrace(_TraceBuilder):
    """UFS with the paper's features: synchronous metadata writes (§2), the hot-spot allocator (§3.4),
    the bmap cache (§3.3), busy bitmaps, ibusy lists and linktags (§5.1-5.3) and the CG flusher (§5.2),
    whose sweep returns to each cylinder group every ``clean_period_s`` seconds."""

    def __init__(self, p, setup, files, load, rng, *, clean_period_s: float):
        super().__init__(p, setup, files, load, rng)
        lay = self.lay
        units = len(files.blocks)
        self.clean_s = clean_period_s
        self.phase = rng.random(lay.n_cg) * clean_period_s
        # steady state: each accessed inode was last marked busy an exponential time ago, at the rate
        # appends and removes reach it
        self.marked = np.full(units, -np.inf)
        mix = sum(LADDIS_MIX.values())
        marks_per_s = load * (LADDIS_MIX["write"] * p.appending_write_share + LADDIS_MIX["remove"]) / mix
        self.marked[files.accessed] = -rng.exponential(len(files.accessed) / max(marks_per_s, 1e-9),
                                                       size=len(files.accessed))
        self.new_marked = {}
        self.ibusy = {}
        self.pending = {}  # cg -> [sweep number, inode blocks to flush]
        self.rotor = files.next_data
        self.hot = (self.rotor // lay.data_per_cg) % lay.n_cg
        self.new_inodes = 0
        self.window = rng.integers(0, p.bmap_pointers, size=units)
        self.indirect = np.full(units, -1, dtype=np.int64)
        self.bmap = setup.bmap and p.bmap_cache_works

    # --- the fast-fsck bookkeeping (§5.1, §5.2) ---
    def sweep(self, cg, t):
        return math.floor((t - self.phase[cg]) / self.clean_s)

    def busy_since_clean(self, when, cg, t):
        return when > t - ((t - self.phase[cg]) % self.clean_s)

    def mark_busy(self, key, cg, inode_block, t):
        """Mark an inode busy before its blocks or links change: one synchronous CG write unless it
        is already busy since its cylinder group was last cleaned."""
        when = self.marked[key] if isinstance(key, int) and key < len(self.marked) else self.new_marked.get(key,
                                                                                                         -np.inf)
        if self.busy_since_clean(when, cg, t):
            return
        self.counts["busy_marks"] += 1
        if self.p.busy_marks_sync:
            self.write(self.lay.cg_block(cg))
        if isinstance(key, int) and key < len(self.marked):
            self.marked[key] = t
        else:
            self.new_marked[key] = t
        sweep = self.sweep(cg, t)
        entry = self.pending.get(cg)
        if entry is not None and entry[0] < sweep:
            self.flush(cg, entry[1])
            entry = None
        if entry is None:
            entry = self.pending[cg] = [sweep, set()]
        entry[1].add(int(inode_block))

    def flush(self, cg, inode_blocks):
        """The flusher cleans a cylinder group: every busy inode, then the CG block (§5.2)."""
        if not self.p.flusher_writes:
            return
        for b in inode_blocks:
            self.later(b)
        self.later(self.lay.cg_block(cg))

    def finish(self):
        for cg, (_, blocks) in self.pending.items():
            self.flush(cg, blocks)

    def allocate(self, unit, t):
        """A data block from the hot spot; entering a new hot cylinder group marks all its free blocks
        busy in one synchronous CG write, and a foreign inode's first block there adds it to the CG's
        ibusy list (§5.1)."""
        lay = self.lay
        block = lay.data_block(self.rotor)
        cg = (self.rotor // lay.data_per_cg) % lay.n_cg
        self.rotor += 1
        if self.setup.fast_fsck:
            if cg != self.hot and self.p.busy_marks_sync:  # a new hot spot: all its free blocks marked busy
                self.write(lay.cg_block(cg))
            if self.files.cg_of[unit] != cg and not self.busy_since_clean(self.ibusy.get((unit, cg), -np.inf), cg, t):
                self.ibusy[(unit, cg)] = t
                if self.p.busy_marks_sync:
                    self.write(lay.cg_block(cg))
        self.hot = cg
        return block

    def do(self, name, unit, t, append, k):
        f, ff = self.files, self.setup.fast_fsck
        self.common_reads(name, unit, k)
        inode = f.inode_of[unit]
        if name == "setattr":
            self.write(inode)
        elif name == "write":
            if not append:  # rewrite a whole block in place (no read): the data, then the inode's times
                home = f.home_block(unit, k)
                self.write(home, meta=False)
                self.write(inode)
                return
            if ff:
                self.mark_busy(unit, f.cg_of[unit], inode, t)
            if self.indirect[unit] < 0:  # a new indirect block: allocated and cached, never read
                self.indirect[unit] = self.allocate(unit, t)
                self.meta.access(int(self.indirect[unit]), True)
            self.write(self.allocate(unit, t), meta=False)
            self.write(inode)  # with the bmap cache, the cached pointers ride in the same inode block
            if self.bmap:
                self.window[unit] += 1
                if self.window[unit] >= self.p.bmap_pointers:  # past the cache: flush it to the indirect block
                    self.window[unit] = 0
                    self.counts["bmap_flushes"] += 1
                    self.read(self.indirect[unit])
                    self.write(self.indirect[unit])
            else:
                self.read(self.indirect[unit])
                self.write(self.indirect[unit])
        elif name == "create":
            slot = int(f.inodes_in_cg[self.hot]) + self.new_inodes
            self.new_inodes += 1
            new = int(self.lay.inode_block(self.hot, slot))
            if ff:
                self.mark_busy(("new", self.new_inodes), self.hot, new, t)
            self.write(new)
            self.write(f.home_block(f.dir_list[unit]), meta=False)
        elif name == "remove":
            if ff:  # the inode and its linktag go first (§5.3): one write more than UFS does
                self.mark_busy(unit, f.cg_of[unit], inode, t)
                if self.p.linktag_write:
                    self.write(inode)
            self.write(f.home_block(f.dir_list[unit]), meta=False)
            self.write(inode)


class VxfsTrace(_TraceBuilder):
    """VxFS: each update is one synchronous intent-log write (small synchronous writes carry their data
    in the log); the blocks themselves are written back later, every ``vxfs_flush_s``. The log lives at
    the start of the file system, or on its own disk with VxLD (§6.1)."""

    def __init__(self, p, setup, files, load, rng):
        super().__init__(p, setup, files, load, rng)
        self.log_blocks = int(p.vxfs_log_mb * MiB // BLOCK)
        self.log_at = 0
        self.dirty = OrderedDict()
        self.epoch = -1
        self.appended = np.zeros(len(files.blocks), dtype=np.int64)
        self.new_inodes = 0

    def log(self):
        self.counts["log_writes"] += 1
        if self.setup.vxld:
            self.write(self.log_at, device=LOG_DEVICE)
        else:
            self.write(self.log_at % self.log_blocks)
        self.log_at += 1

    def delay(self, block):
        self.dirty[int(block)] = None

    def do(self, name, unit, t, append, k):
        epoch = int(t // self.p.vxfs_flush_s)
        if epoch != self.epoch:
            at, self.i = self.i, self.i if epoch > 0 else -1  # the write-back due as counting starts is the warm-up's
            for b in self.dirty:
                self.later(b)
            self.i = at
            self.dirty.clear()
            self.epoch = epoch
        f = self.files
        self.common_reads(name, unit, k)
        inode = f.inode_of[unit]
        if name not in ("write", "setattr", "create", "remove"):
            return
        self.log()
        if name == "write":
            if append:  # extents: the next block after the file's own
                block = f.lay.data_block(f.start_of[unit] + f.blocks_of[unit] + int(self.appended[unit]))
                self.appended[unit] += 1
            else:
                block = f.home_block(unit, k)
            self.delay(block)
            self.delay(inode)
        elif name == "setattr":
            self.delay(inode)
        else:
            cg = f.cg_of[f.dir_list[unit]]
            if name == "create":
                self.new_inodes += 1
                inode = f.lay.inode_block(cg, int(f.inodes_in_cg[cg]) + self.new_inodes)
            self.delay(inode)
            self.delay(f.home_block(f.dir_list[unit]))

    def finish(self):
        for b in self.dirty:
            self.later(b)


# --- the storage under the file system: NVRAM, RAID, disks -------------------------------------------------

READ, WRITE = 0, 1
_OLD = 1 << 44  # NVRAM keys of blocks written before a trace begins
FOREGROUND, BACKGROUND = 0, 1


class ArrayMap:
    """Logical 8 KB blocks onto member disks: RAID-0, or SDS RAID-5 (left-symmetric parity, a prewrite
    area at the start of each member, §3.2). A twelfth disk holds VxLD's log."""

    def __init__(self, p: Params, setup: Setup, *, prewrite_blocks: int = 128):
        self.p, self.setup = p, setup
        self.n = p.disks
        self.raid5 = setup.raid == "raid5"
        self.offset = prewrite_blocks if self.raid5 else 0
        self.prewrite_blocks = prewrite_blocks
        self.prewrite_at = np.zeros(self.n, dtype=np.int64)
        self.prewrite_to_disk = self.raid5 and p.sds_prewrite_log and setup.presto != "upper+lower"
        self.disks = self.n + (1 if setup.vxld else 0)

    def place(self, block: int) -> tuple:
        """(data disk, parity disk or -1, member block) of a logical block."""
        if not self.raid5:
            return block % self.n, -1, block // self.n
        row, k = divmod(block, self.n - 1)
        parity = (self.n - 1 - row) % self.n
        return (parity + 1 + k) % self.n, parity, row + self.offset

    def read(self, block: int, device: int = FS_DEVICE) -> list:
        if device == LOG_DEVICE:
            return [(self.n, block, READ)]
        disk, _, mb = self.place(block)
        return [(disk, mb, READ)]

    def write(self, block: int, device: int = FS_DEVICE) -> list:
        """The member I/Os of one block write: one on RAID-0; on RAID-5 a read-modify-write of data and
        parity, with SDS's two prewrite-log writes between (six I/Os, §3.2) unless Presto Lower holds
        the prewrite area."""
        if device == LOG_DEVICE:
            return [(self.n, block, WRITE)]
        disk, parity, mb = self.place(block)
        if parity < 0:
            return [(disk, mb, WRITE)]
        ios = [(disk, mb, READ), (parity, mb, READ)]
        if self.prewrite_to_disk:
            for d in (disk, parity):
                ios.append((d, int(self.prewrite_at[d] % self.prewrite_blocks), WRITE))
                self.prewrite_at[d] += 1
        return ios + [(disk, mb, WRITE), (parity, mb, WRITE)]


@dataclasses.dataclass
class Demands:
    """Disk seconds per NFS operation, by disk: what operations wait for (``foreground``) and what is
    written behind their backs (``background``); with the NVRAM hit rate and the trace's counts."""

    foreground_s: np.ndarray
    background_s: np.ndarray
    foreground_ios: np.ndarray  # requests per operation, by disk
    nvram_acks: float          # writes per operation acknowledged by NVRAM
    nvram_hit_rate: float      # of the writes reaching NVRAM, the share that found their block there
    ios_per_op: float          # member I/Os per operation, both classes
    counts: dict


def storage_demands(p: Params, setup: Setup, trace: Trace) -> Demands:
    """Run a trace's block requests through Presto Upper (a write-back NVRAM: a rewrite of a block it
    holds costs nothing, the least recently written block is destaged when it is full), the array and
    the C disk model; disk seconds per operation, by disk and class."""
    amap = ArrayMap(p, setup)
    presto = setup.presto != "none"
    nvram = PageCache(capacity_bytes=int(p.nvram_mb * MiB), page_bytes=BLOCK) if presto else None
    ios = []  # (op, disk, member block, read/write, class)

    def to_disk(op, items, cls):
        ios.extend((op, d, b, rw, cls) for d, b, rw in items)

    events = [(int(op), 0, int(b), FS_DEVICE) for op, b in trace.reads]
    events += [(int(op), 1, int(b), int(dev)) for op, b, dev in trace.sync]
    events += [(int(op), 2, int(b), int(dev)) for op, b, dev in trace.background]
    events.sort(key=lambda e: e[0])  # stable: within an operation, reads, then its writes, then write-behind
    if nvram is not None:  # a full board from the start: blocks written long ago, destaged as misses need room
        nvram.run(np.arange(nvram.capacity_pages, dtype=np.uint64) + _OLD, np.ones(nvram.capacity_pages, np.uint8))
    writes = hits = 0
    for op, kind, block, dev in events:
        key = block + (dev << 40)
        if op < 0:  # the warm-up: fill the NVRAM with this work's own blocks, count nothing
            if kind and nvram is not None:
                nvram.access(key, True)
            continue
        if kind == 0:
            if nvram is not None and nvram.is_cached(key):
                continue
            to_disk(op, amap.read(block, dev), FOREGROUND)
            continue
        if nvram is None:
            to_disk(op, amap.write(block, dev), FOREGROUND if kind == 1 else BACKGROUND)
            continue
        writes += 1
        access = nvram.access(key, True)
        hits += access.hit
        if not p.nvram_absorbs_rewrites and access.hit:
            to_disk(op, amap.write(block, dev), BACKGROUND)  # a write-through board: every write reaches disk
        if access.victim is not None and access.victim_dirty:
            victim = int(access.victim)
            if victim >= _OLD:  # a block from before the trace: destage one like the block that needs the room
                victim = key
            to_disk(op, amap.write(victim & ((1 << 40) - 1), victim >> 40), BACKGROUND)
    fg, bg, visits = _disk_seconds(ios, amap.disks, trace)
    acks = sum(1 for _, kind, _, _ in events if kind == 1) / trace.n_ops if presto else 0.0
    return Demands(fg, bg, visits, acks, hits / writes if writes else float("nan"), len(ios) / trace.n_ops,
                   dict(trace.counts))


@functools.lru_cache(maxsize=1)
def _disk_model() -> Disk:
    return Disk(DISK)


def _disk() -> Disk:
    """The C model of one of the disks, at rest (one model serves every disk in turn: building one fits
    its seek curve, which takes longer than a trace)."""
    disk = _disk_model()
    disk.reset()
    return disk


def _disk_seconds(ios, n_disks, trace):
    """Service seconds per operation on each disk, by class, from the C disk model serving each disk's
    requests in the order the operations issue them."""
    fg, bg, visits = np.zeros(n_disks), np.zeros(n_disks), np.zeros(n_disks)
    if not ios:
        return fg, bg, visits
    a = np.array(ios, dtype=np.int64)
    for d in range(n_disks):
        mine = a[a[:, 1] == d]
        if not len(mine):
            continue
        disk = _disk()
        r = disk.run(mine[:, 0] / trace.load, mine[:, 2] * SECTORS_PER_BLOCK, np.full(len(mine), SECTORS_PER_BLOCK),
                     mine[:, 3])
        service = (r["finish_s"] - r["start_s"]).to_numpy()
        fg[d] = service[mine[:, 4] == FOREGROUND].sum() / trace.n_ops
        bg[d] = service[mine[:, 4] == BACKGROUND].sum() / trace.n_ops
        visits[d] = (mine[:, 4] == FOREGROUND).sum() / trace.n_ops
    return fg, bg, visits


# --- the server's other work: CPU and wire ------------------------------------------------------------------

def cpu_model(p: Params) -> CpuCostModel:
    """The 300 MHz UltraSPARC-II's prices for the operations :mod:`pysim.sw.nfs` counts."""
    return CpuCostModel(p.cpu_mhz * 1e6, fixed_s={"rpc": p.rpc_us * us, "decode_op": 0.2 * p.vfs_us * us,
                                                  "vfs": p.vfs_us * us},
                        per_byte_s={"copy": p.copy_ns_per_byte * 1e-9})


def cpu_s_per_op(p: Params) -> float:
    """Server CPU seconds per LADDIS operation (the mix's mean of each NFSv2 operation's recipe)."""
    cpu = cpu_model(p)
    total = sum(LADDIS_MIX.values())
    return sum(share * NFS_OPS[op].cpu.seconds(cpu) for op, share in LADDIS_MIX.items()) / total


def wire_s_per_op(p: Params) -> float:
    """The client's own time and the wire, per operation (a delay: the clients do not queue for the server)."""
    total = sum(LADDIS_MIX.values())
    kb = sum(share * (NFS_OPS[op].data_bytes + 256) / KiB for op, share in LADDIS_MIX.items()) / total
    return p.client_us * us + kb * p.wire_us_per_kb * us


# --- LADDIS against the server: a closed network of load-generating processes --------------------------------

@dataclasses.dataclass(frozen=True)
class Point:
    """One LADDIS run: requested load, achieved throughput, mean response, and what a lone disk request
    waited (the CG flusher's view of the disks)."""

    requested: float
    throughput: float
    response_s: float
    disk_wait_s: float


def _stations(p: Params, setup: Setup, d: Demands, x: float) -> list:
    """The server as seen by one operation: each disk's foreground demand, stretched by the share of the
    disk its write-behind takes (the shadow-server approximation), the two CPUs (Seidmann's queue plus
    delay), and the wire."""
    out = []
    for k, (fg, bg) in enumerate(zip(d.foreground_s, d.background_s, strict=True)):
        busy = min(0.999, x * bg)
        out.append(Station(f"disk{k}", float(fg / (1 - busy))))
    if setup.fs == "vxfs" and p.vxfs_batches_log and setup.vxld:  # group commit: one write serves the queue
        log = out.pop(p.disks)
        out.append(Station(log.name, log.demand(), "ld", rates=tuple(range(1, p.processes + 1))))
    out.extend(seidmann("cpu", cpu_s_per_op(p), p.cpus))
    out.append(Station("wire", wire_s_per_op(p) + d.nvram_acks * p.nvram_write_us * us, "delay"))
    return out


def _solve(p, setup, d, think_s, x_bg):
    x, response, residence = mva_at(_stations(p, setup, d, x_bg), p.processes, think_s)
    waits = [residence[f"disk{k}"] / d.foreground_ios[k] for k in range(len(d.foreground_s))
             if d.foreground_ios[k] > 0] or [random_io_s()]
    return x, response, waits


def laddis_point(p: Params, setup: Setup, d: Demands, requested: float) -> Point:
    """LADDIS at ``requested`` ops/s: ``processes`` generators, each pacing itself (think time) to its share
    of the load; past saturation they send back to back and the throughput is what the server gives."""
    if math.isfinite(requested):
        x0, _, _ = _solve(p, setup, d, 0.0, requested)
        if x0 > requested:  # the generators keep up: find the think time that paces them to the load
            z = _root(lambda z: _solve(p, setup, d, z, requested)[0] - requested, 0.0, p.processes / requested)
            x, r, waits = _solve(p, setup, d, z, requested)
            return Point(requested, x, r, float(np.mean(waits)))
    # saturation: the generators send back to back; the write-behind's share of each disk grows with the
    # throughput itself, so the throughput is the fixed point x = X(x), below the disks' capacity
    x_cap = 1.0 / max(1e-9, (d.foreground_s + d.background_s).max())
    x = _root(lambda x: _solve(p, setup, d, 0.0, x)[0] - x, 0.0, x_cap, rtol=1e-3)
    x_mva, r_sat, waits = _solve(p, setup, d, 0.0, x)
    if x_mva > x * (1 + 1e-2):  # a disk full of write-behind alone: the NVRAM fills and writers wait for it
        return Point(requested, x, p.processes / x, float(np.mean(waits)))
    return Point(requested, x_mva, r_sat, float(np.mean(waits)))


def _root(f, lo, hi, *, rtol=1e-4, max_iter=40):
    """A root of a decreasing f between lo (f > 0) and hi (f < 0): regula falsi, Illinois variant."""
    f_lo, f_hi = f(lo), f(hi)
    if f_lo <= 0:
        return lo
    if f_hi >= 0:
        return hi
    side = 0
    for _ in range(max_iter):
        mid = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        f_mid = f(mid)
        if abs(f_mid) <= rtol * abs(f_lo - f_hi) or hi - lo <= rtol * hi:
            return mid
        if f_mid > 0:
            lo, f_lo = mid, f_mid
            if side == -1:
                f_hi /= 2
            side = -1
        else:
            hi, f_hi = mid, f_mid
            if side == 1:
                f_lo /= 2
            side = 1
    return mid


# --- the CG flusher's sweep and the busy working set (§5.2, §6.3) ---------------------------------------------

@dataclasses.dataclass(frozen=True)
class BusySet:
    """The flusher's steady state: how long a cylinder group stays busy between cleanings, and what a crash
    at a random moment finds busy."""

    cycle_s: float        # time between successful cleanings of a cylinder group
    busy_inodes: float
    busy_cgs: float
    flush_ios_per_s: float


def marks_per_op(p: Params) -> float:
    """Operations per LADDIS operation that mark an inode busy: appends (blocks added), creates and removes
    (link counts, §5.1)."""
    total = sum(LADDIS_MIX.values())
    return (LADDIS_MIX["write"] * p.appending_write_share + LADDIS_MIX["create"] + LADDIS_MIX["remove"]) / total


def busy_set(p: Params, flusher: tuple, *, inodes: float, cgs: float, throughput: float, io_s: float,
             elapsed_s: float) -> BusySet:
    """The CG flusher as a fluid model. Inodes of the working set (``inodes`` of them, in ``cgs`` cylinder
    groups) are marked busy at ``throughput`` x :func:`marks_per_op` a second. Every ``interval`` the flusher
    works for ``duty`` of it, one disk request at a time, each taking ``io_s``; it cleans a cylinder group
    by writing each busy inode and then the CG block, and the cleaning fails if an operation marks an inode
    there meanwhile (§5.2). A crash at a random moment finds each cylinder group at a random point of its
    cycle (but no older than the load itself)."""
    interval, duty = flusher
    rate = max(1e-12, throughput * marks_per_op(p))
    w, c = max(1.0, inodes), max(1.0, cgs)

    def busy(n, t):  # distinct items of n marked at least once in t seconds
        return n * -np.expm1(-rate * t / n)

    cycle = interval
    for _ in range(200):
        per_cg = busy(w, cycle) / c
        success = math.exp(-(rate / c) * (per_cg + 1) * io_s)
        work = busy(c, cycle) * (per_cg + 1) / success
        sweep = max(interval, work * io_s / duty)
        new = min(elapsed_s, sweep / success)
        if abs(new - cycle) <= 1e-6 * cycle:
            break
        cycle = 0.5 * (cycle + new)

    def mean_busy(n):  # mean over a cycle of what is busy
        x = rate * cycle / n
        return n * (1 - -np.expm1(-x) / x)

    return BusySet(cycle, mean_busy(w), mean_busy(c), busy(c, cycle) * (busy(w, cycle) / c + 1) / cycle)


@functools.lru_cache(maxsize=1)
def random_io_s() -> float:
    """Mean service of a random 8 KB request on one disk, from the C disk model (the flusher's request on
    an idle disk)."""
    disk = _disk()
    gen = np.random.default_rng(12345)
    n = 2000
    lba = gen.integers(0, disk.capacity_sectors // SECTORS_PER_BLOCK - 1, n) * SECTORS_PER_BLOCK
    r = disk.run(np.arange(n) * 1.0, lba, np.full(n, SECTORS_PER_BLOCK))
    return float((r["finish_s"] - r["start_s"]).mean())


# --- demands and curves, per configuration -----------------------------------------------------------------

def array_gb(p: Params, setup: Setup) -> float:
    """The file system's size on the array: every data disk (RAID-5 gives one disk's worth to parity)."""
    return p.disk_gb * (p.disks - (1 if setup.raid == "raid5" else 0))


def _seed(rng) -> int:
    """An int seed from ``rng`` (an int, or a Generator whose stream moves on), so results can be cached."""
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return int(rng)
    return int(make_rng(rng).integers(0, 2**31))


def _trace_ops(quick: bool) -> tuple:
    """(operations counted, operations before them that settle the NVRAM)."""
    return (2000, 2000) if quick else (10000, 4000)


#: Requested loads at which the traces run; demands in between are linear (every figure shares them). The quick
#: profile runs shorter traces at fewer loads.
ANCHORS = {False: (250.0, 1000.0, 2000.0, 3500.0), True: (250.0, 1000.0, 3500.0)}


@functools.lru_cache(maxsize=512)
def demands_at(p: Params, setup: Setup, fs_gb: float, load: float, n_ops: tuple, seed: int) -> Demands:
    """Disk work per operation of ``setup`` under LADDIS at ``load`` requested ops/s (the file set grows with
    the requested load, §6.3); the same seed gives every configuration the same files and operations."""
    return storage_demands(p, setup, trace_at(_trace_key(p, setup), setup, fs_gb, load, n_ops, seed))


@functools.lru_cache(maxsize=256)
def trace_at(p: Params, setup: Setup, fs_gb: float, load: float, n_ops: tuple, seed: int) -> Trace:
    """The block requests of ``n_ops`` LADDIS operations of ``setup`` at ``load`` requested ops/s."""
    lay = layout(p, fs_gb, setup)
    grow_load = load if p.fileset_grows_with_load else LOADS["figure2"][0]
    files, state = _file_set(p, lay, grow_load, load, seed)
    gen = np.random.Generator(np.random.PCG64())
    gen.bit_generator.state = state  # the stream goes on where the file set left it
    if setup.fs == "vxfs":
        return VxfsTrace(p, setup, files, load, gen).run(*n_ops)
    io_s = p.nvram_write_us * us if setup.presto != "none" else random_io_s()
    cycle = busy_set(p, setup.flusher, inodes=len(files.accessed), cgs=files.cg[files.accessed].max() + 1,
                     throughput=load, io_s=io_s, elapsed_s=p.run_s + p.crash_into_run_s).cycle_s
    return UfsTrace(p, setup, files, load, gen, clean_period_s=cycle).run(*n_ops)


@functools.lru_cache(maxsize=32)
def _file_set(p: Params, lay: Layout, grow_load: float, load: float, seed: int) -> tuple:
    """The file set of a run at ``load`` (built from the seed's stream for that load), and the stream's state
    after it: every configuration with this layout shares it, read-only."""
    gen = make_rng(np.random.SeedSequence([seed, round(load)]))
    files = FileSet(p, lay, grow_load, gen)
    for value in vars(files).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return files, gen.bit_generator.state


#: Params the traces and the storage never read (the server's CPU and wire, the MVA's population, recovery
#: and mkfs): set to their defaults in the cache keys, so a counterfactual of recovery reuses the traces.
_NOT_IN_TRACES = ("processes", "cpus", "cpu_mhz", "rpc_us", "vfs_us", "copy_ns_per_byte", "wire_us_per_kb",
                  "client_us", "vxfs_batches_log", "vxld_copy_s", "fsck_chunk_kb", "fsck_inode_us", "mkfs_block_ms",
                  "flusher_one_io_at_a_time", "fsck_reads_every_cg", "mkfs_fs_gb", "small_fs_gb", "crash_fs_gb",
                  "direct_blocks", "memory_mb", "flusher_interval_s", "flusher_duty")
#: ... and what only the storage below the file system reads (a trace is the file system's requests).
_STORAGE_ONLY = ("nvram_absorbs_rewrites", "sds_prewrite_log", "nvram_mb", "disks")
_FAST_FSCK_ONLY = ("busy_marks_sync", "linktag_write", "flusher_writes", "linktag_share")


def _defaults(p: Params, names) -> Params:
    base = Params()
    return dataclasses.replace(p, **{k: getattr(base, k) for k in names})


@functools.lru_cache(maxsize=64)
def _trace_params(p: Params) -> Params:
    return _defaults(p, _NOT_IN_TRACES)


@functools.lru_cache(maxsize=256)
def _trace_key(p: Params, setup: Setup) -> Params:
    """``p`` with what ``setup``'s trace never reads set to the defaults (a counterfactual of the storage, or of
    a feature the setup has off, reuses the trace)."""
    names = _STORAGE_ONLY
    if setup.fs == "vxfs" or not setup.bmap:
        names += ("bmap_cache_works",)
    if setup.fs == "vxfs" or not setup.fast_fsck:
        names += _FAST_FSCK_ONLY
    return _defaults(p, names)


def _interpolate(a: Demands, b: Demands, w: float) -> Demands:
    mix = lambda u, v: (1 - w) * u + w * v
    return Demands(mix(a.foreground_s, b.foreground_s), mix(a.background_s, b.background_s),
                   mix(a.foreground_ios, b.foreground_ios), mix(a.nvram_acks, b.nvram_acks),
                   mix(a.nvram_hit_rate, b.nvram_hit_rate), mix(a.ios_per_op, b.ios_per_op),
                   {k: mix(a.counts[k], b.counts[k]) for k in a.counts})


def demands(p: Params, setup: Setup, load: float, *, fs_gb: float | None = None, quick=False,
            seed: int = 0) -> Demands:
    """Demands at any load, linear between traces run at the :data:`ANCHORS` (held beyond them)."""
    fs_gb = fs_gb or array_gb(p, setup)
    anchors = ANCHORS[bool(quick)]
    key = _trace_params(p)
    at = lambda a: demands_at(key, setup, fs_gb, float(a), _trace_ops(quick), seed)
    if load <= anchors[0] or len(anchors) == 1:
        return at(anchors[0])
    for lo, hi in itertools.pairwise(anchors):
        if load <= hi:
            return _interpolate(at(lo), at(hi), (load - lo) / (hi - lo))
    return at(anchors[-1])


def saturation(p: Params, setup: Setup, at) -> Point:
    """The saturating run: the load at which the server gives what is asked, with the file set that load
    builds (``at(load)`` gives the demands at a requested load)."""
    top = ANCHORS[False][-1] * 2
    gap = lambda load: laddis_point(p, setup, at(load), math.inf).throughput - load
    load = _root(gap, 1.0, top, rtol=1e-3)
    return laddis_point(p, setup, at(load), math.inf)


def curve(p: Params, setup: Setup, loads, *, quick=False, seed=0, fs_gb=None) -> pd.DataFrame:
    """A LADDIS response-time curve: one row per requested load, and 'peak' (the largest throughput, the
    figure of merit, §6.2). Columns: throughput_ops, response_ms, disk_wait_ms."""
    at = lambda load: demands(p, setup, load, fs_gb=fs_gb, quick=quick, seed=seed)
    rows = {str(load): laddis_point(p, setup, at(load), load) for load in loads}
    rows["peak"] = saturation(p, setup, at)
    return pd.DataFrame({k: {"throughput_ops": v.throughput, "response_ms": v.response_s / ms,
                             "disk_wait_ms": v.disk_wait_s / ms} for k, v in rows.items()}).T.rename_axis("load")


# --- the storage on the engine: SDS RAID-5 with its prewrite log, and a LADDIS run -------------------------

class SdsRaid5:
    """Solstice DiskSuite's RAID-5 on the engine (§3.2): a one-block write reads the old data and parity,
    writes both to the prewrite log, then writes both in place (six I/Os); Presto Lower (``lower_nvram``)
    holds the prewrite area, so those two writes cost only an NVRAM copy. Reads and placement are those of
    :class:`pysim.hw.storage.Raid5` (left-symmetric parity)."""

    def __init__(self, sim, members, stripe_sectors: int, *, prewrite_sectors: int, prewrite: bool = True,
                 lower_nvram_s: float | None = None):
        self.sim, self.members, self.unit = sim, list(members), stripe_sectors
        self.array = Raid5(sim, members, stripe_sectors)
        self.offset, self.prewrite, self.lower_nvram_s = prewrite_sectors, prewrite, lower_nvram_s
        self.prewrite_at = [0] * len(self.members)
        self.prewrite_sectors = prewrite_sectors
        self.ios = {"small_writes": 0, "prewrite_writes": 0}

    @property
    def capacity_sectors(self) -> int:
        return self.array.capacity_sectors - self.offset * self.array.data_disks

    def io(self, lba: int, sectors: int, write: bool = False):
        """One request within a stripe unit."""
        if not write:
            yield self.sim.process(self.array.io(lba + self.offset * self.array.data_disks, sectors))
            return
        sim = self.sim
        row, disk, parity = self.array.place(lba // self.unit)
        at = (row + self.offset // self.unit) * self.unit + lba % self.unit
        self.ios["small_writes"] += 1
        yield sim.all_of([sim.process(self.members[d].io(at, sectors)) for d in (disk, parity)])
        if self.prewrite:
            self.ios["prewrite_writes"] += 2
            if self.lower_nvram_s is not None:
                yield sim.timeout(self.lower_nvram_s)
            else:
                jobs = []
                for d in (disk, parity):
                    jobs.append(sim.process(self.members[d].io(self.prewrite_at[d] % self.prewrite_sectors,
                                                               sectors, True)))
                    self.prewrite_at[d] += sectors
                yield sim.all_of(jobs)
        yield sim.all_of([sim.process(self.members[d].io(at, sectors, True)) for d in (disk, parity)])


def build_storage(sim, p: Params, setup: Setup):
    """The disks, the array and the NVRAM of ``setup`` on ``sim``: (device the file system uses, log device
    or None, the member disks)."""
    disks = [QueuedDisk(sim, DISK, name=f"disk{k}") for k in range(p.disks)]
    if setup.raid == "raid0":
        array = Raid0(sim, disks, SECTORS_PER_BLOCK)
    else:
        lower = p.nvram_write_us * us if setup.presto == "upper+lower" else None
        array = SdsRaid5(sim, disks, SECTORS_PER_BLOCK, prewrite_sectors=128 * SECTORS_PER_BLOCK,
                         prewrite=p.sds_prewrite_log, lower_nvram_s=lower)
    log = QueuedDisk(sim, DISK, name="log") if setup.vxld else None
    if setup.presto != "none":
        cap = int(p.nvram_mb * MiB // SECTOR)
        # the board destages a disk-load of blocks at once when full (the shared cache then drains to half)
        batch = 4 * p.disks * SECTORS_PER_BLOCK
        array = NvramCache(sim, array, cap, access_s=p.nvram_write_us * us, destage_at=1.0, destage_sectors=batch)
        if log is not None:
            log = NvramCache(sim, log, cap // 4, access_s=p.nvram_write_us * us, destage_at=1.0,
                             destage_sectors=batch)
    return array, log, disks


class EngineServer:
    """The NFS server on the engine: each LADDIS call takes the next operation of a trace, uses a CPU, reads
    its cache misses and writes its stable blocks in turn through NVRAM, array and disks, and leaves its
    write-behind running; the clients are :class:`pysim.workloads.clients.ClosedLoop` generators."""

    def __init__(self, sim, p: Params, setup: Setup, trace: Trace):
        self.sim, self.p, self.trace = sim, p, trace
        self.device, self.log, self.disks = build_storage(sim, p, setup)
        self.cpu = sim.resource(p.cpus)
        self.cpu_s, self.wire_s = cpu_s_per_op(p), wire_s_per_op(p)
        self.reads = _by_op(trace.reads[:, 0], trace.reads[:, 1:], trace.n_ops)
        self.sync = _by_op(trace.sync[:, 0], trace.sync[:, 1:], trace.n_ops)
        self.later = _by_op(trace.background[:, 0], trace.background[:, 1:], trace.n_ops)
        self.next = 0

    def _io(self, block, device, write):
        target = self.log if device == LOG_DEVICE else self.device
        return target.io(int(block) * SECTORS_PER_BLOCK % target.capacity_sectors, SECTORS_PER_BLOCK, write)

    def call(self, user):
        """One NFS call: the wire and client, a CPU, the reads, the stable writes; write-behind goes on alone."""
        op = self.next % self.trace.n_ops
        self.next += 1
        yield self.sim.timeout(self.wire_s)
        with self.cpu.request() as turn:
            yield turn
            yield self.sim.timeout(self.cpu_s)
        for (block,) in self.reads[op]:
            yield self.sim.process(self._io(block, FS_DEVICE, False))
        for block, device in self.sync[op]:
            yield self.sim.process(self._io(block, device, True))
        for block, device in self.later[op]:
            self.sim.process(self._io(block, device, True))


def _by_op(ops, rows, n_ops) -> list:
    """Rows grouped by operation: out[i] lists the rows of operation i (ops below 0 are dropped)."""
    out = [[] for _ in range(n_ops)]
    for op, row in zip(ops.tolist(), rows.tolist(), strict=True):
        if op >= 0:
            out[op].append(row)
    return out


def engine_run(p: Params, setup: Setup, requested: float, *, seconds: float = 4.0, quick=False, rng=0) -> dict:
    """LADDIS at ``requested`` ops/s on the engine, the MVA's think time pacing ``processes`` closed-loop
    generators: throughput and response time beside the MVA's (the check of the queueing model)."""
    seed = _seed(rng)
    d = demands(p, setup, requested, quick=quick, seed=seed)
    point = laddis_point(p, setup, d, requested)
    think = max(0.0, p.processes / point.throughput - point.response_s)
    gen = make_rng(np.random.SeedSequence([seed, round(requested), 1]))
    files = FileSet(p, layout(p, array_gb(p, setup), setup), requested, gen)
    if setup.fs == "vxfs":
        trace = VxfsTrace(p, setup, files, requested, gen).run(*_trace_ops(quick))
    else:
        trace = UfsTrace(p, setup, files, requested, gen, clean_period_s=p.flusher_interval_s).run(*_trace_ops(quick))
    sim = Simulation()
    server = EngineServer(sim, p, setup, trace)
    clients = ClosedLoop(sim, p.processes, server.call, think_s=think, warmup_s=seconds / 4, rng=gen)
    sim.run(until=seconds)
    got = clients.summary(seconds)
    return {"requested": requested, "mva_throughput": point.throughput, "engine_throughput": got["throughput_per_s"],
            "mva_response_ms": point.response_s / ms, "engine_response_ms": got["mean_response_s"] / ms}


# --- recovery after a crash (§6.3) and file-system creation (§5.4) -------------------------------------------

def _serial_reads_s(p: Params, blocks) -> float:
    """Seconds to read ``blocks`` one after another (each waits for the last) on the RAID-0 of the crash
    tests, each disk served by the C disk model."""
    pool = [Disk(DISK) for _ in range(p.disks)] if len(blocks) else []
    t = 0.0
    for b in np.asarray(blocks, dtype=np.int64).tolist():
        disk = pool[b % p.disks]
        r = disk.run([t], [b // p.disks * SECTORS_PER_BLOCK], [SECTORS_PER_BLOCK])
        t = float(r["finish_s"].iloc[0])
    return t


@functools.lru_cache(maxsize=32)
def cg_scan_s(p: Params, fs_gb: float) -> float:
    """Reading every cylinder-group block once, in order (what fast fsck always does, §6.3): one cylinder
    group in 64 timed on the disk model, scaled to all of them."""
    lay = layout(p, fs_gb, Setup())
    step = max(1, lay.n_cg // 64)
    sample = np.arange(0, lay.n_cg, step)
    return _serial_reads_s(p, lay.cg_block(sample)) * lay.n_cg / len(sample)


@functools.lru_cache(maxsize=32)
def inode_scan_s(p: Params, fs_gb: float) -> float:
    """Reading every inode block (standard fsck, §5.4) in ``fsck_chunk_kb`` reads, one after another, through
    the RAID-0 on the engine, plus checking each inode: one cylinder group timed, scaled to all."""
    lay = layout(p, fs_gb, Setup())
    sim = Simulation()
    array = Raid0(sim, [QueuedDisk(sim, DISK) for _ in range(p.disks)], SECTORS_PER_BLOCK)
    chunk = p.fsck_chunk_kb * KiB // SECTOR
    first = int(lay.inode_block(1, 0)) * SECTORS_PER_BLOCK
    total = lay.inode_blocks * SECTORS_PER_BLOCK

    def scan():
        yield sim.process(array.io(int(lay.cg_block(1)) * SECTORS_PER_BLOCK, SECTORS_PER_BLOCK))
        for at in range(first, first + total, chunk):
            yield sim.process(array.io(at, min(chunk, first + total - at)))

    sim.process(scan())
    sim.run()
    inodes = lay.inode_blocks * BLOCK // p.inode_bytes
    return lay.n_cg * (sim.now + inodes * p.fsck_inode_us * us)


@functools.lru_cache(maxsize=64)
def crash_state(p: Params, requested: float) -> dict:
    """What the crash tests' file system holds at ``requested`` ops/s (§6.3): LADDIS's files and directories,
    its accessed files, and the files with an indirect block."""
    if requested <= 0:
        return {"files": 0, "dirs": 0, "accessed": 0, "large": 0, "cgs": 0}
    lay = layout(p, p.crash_fs_gb, FIGURE9["Fast fsck: 10% every 1 s"])
    grow = requested if p.fileset_grows_with_load else LOADS["figure2"][0]
    files = FileSet(p, lay, grow, make_rng(7))
    return {"files": files.n_files, "dirs": files.n_dirs, "accessed": len(files.accessed),
            "large": files.large_files(p.direct_blocks), "cgs": int(files.cg[files.accessed].max()) + 1}


def recovery(p: Params, requested: float, flusher: tuple, *, quick=False, seed=0) -> dict:
    """Recovery times (s) after a crash at ``requested`` ops/s on the 44 GB RAID-0 with Presto (§6.3):
    standard UFS fsck, the bmap cache alone, fast fsck with ``flusher``, and VxFS's log replay. Also the
    busy working set the crash left, and the throughput the server was giving."""
    st = crash_state(p, requested)
    io = random_io_s()
    cgs = cg_scan_s(p, p.crash_fs_gb)
    ufs = cgs + inode_scan_s(p, p.crash_fs_gb) + (st["large"] + st["dirs"]) * io
    # fsck writes each file's cached bmap back into its indirect block (§6.3)
    bmap = ufs + (2 * st["large"] * io if p.bmap_cache_works else 0.0)
    out = {"ufs_s": ufs, "bmap_s": bmap, "throughput_ops": 0.0, "busy_inodes": 0.0, "busy_cgs": 0.0,
           "fast_fsck_s": cgs if p.fsck_reads_every_cg else 0.0, "vxfs_s": 0.0}
    if requested <= 0:
        return out
    # the load the server carried: the flusher settings change it little (Figure 9), so every setting's
    # crash run takes that of the 10%-every-second run (Figure 7's)
    crash = Setup("raid0", "upper", "ufs", True, True, False, (1.0, 0.10))
    at = lambda load: demands(p, crash, load, fs_gb=p.crash_fs_gb, quick=quick, seed=seed)
    point = laddis_point(p, crash, at(requested), requested)
    busy = busy_set(p, flusher, inodes=st["accessed"], cgs=st["cgs"], throughput=point.throughput,
                    io_s=flusher_io_s(p, crash, point), elapsed_s=p.run_s + p.crash_into_run_s)
    large = st["large"] / max(1, st["files"])
    link = (LADDIS_MIX["create"] + LADDIS_MIX["remove"]) / (marks_per_op(p) * sum(LADDIS_MIX.values()))
    per_inode = (1 + large * 3 + link) * io  # its inode block, its indirect block and bmap write-back, a linktag's
    per_cg = 2 * io                          # directory block; the ibusy overflow read and the CG rewritten
    out["fast_fsck_s"] += busy.busy_inodes * per_inode + busy.busy_cgs * per_cg
    # VxFS replays the log written since its metadata was last written back (half a flush interval on
    # average, at most the whole log): it reads the log in order and rewrites each record's block
    vx = Setup("raid0", "upper", "vxfs")
    log_writes = demands(p, vx, requested, fs_gb=p.crash_fs_gb, quick=quick, seed=seed).counts["log_writes"]
    records = min(p.vxfs_log_mb * MiB / BLOCK, point.throughput * log_writes / _trace_ops(quick)[0] * p.vxfs_flush_s / 2)
    out.update(vxfs_s=records * (io + BLOCK / _streaming_bytes_per_s(p)), throughput_ops=point.throughput,
               busy_inodes=float(busy.busy_inodes), busy_cgs=float(busy.busy_cgs))
    out["fast_fsck_s"] = float(out["fast_fsck_s"])
    return out


def flusher_io_s(p: Params, setup: Setup, point: Point) -> float:
    """How long one of the flusher's writes takes (§6.3: it does one at a time). With Presto it lands in
    NVRAM, unless the server is saturated: then the board is full and the write waits for a destage, in the
    disk queues (without Presto it always waits in them)."""
    saturated = point.throughput < point.requested * (1 - 1e-3)
    if setup.presto != "none" and (not saturated or not p.flusher_one_io_at_a_time):
        return p.nvram_write_us * us
    return point.disk_wait_s if p.flusher_one_io_at_a_time else random_io_s()


def _streaming_bytes_per_s(p: Params) -> float:
    """The array's sequential read rate: every disk at its outer-zone media rate."""
    spt = DISK.zones[0][1]
    return p.disks * spt * SECTOR * DISK.rpm / 60


def mkfs_s(p: Params, fs_gb: float, *, lastino: bool) -> float:
    """Making a file system on the SDS RAID-5 (§5.4): per cylinder group, the superblock copy and the CG
    block as small RAID-5 writes on the engine, and (without lastino) every inode block at the fitted
    ``mkfs_block_ms``; with lastino, only the root's inode block."""
    lay = layout(p, fs_gb, Setup())
    sim = Simulation()
    disks = [QueuedDisk(sim, DISK) for _ in range(p.disks)]
    array = SdsRaid5(sim, disks, SECTORS_PER_BLOCK, prewrite_sectors=128 * SECTORS_PER_BLOCK,
                     prewrite=p.sds_prewrite_log)
    sample = list(range(1, 9))

    def write_cgs():
        for cg in sample:
            base = int(lay.cg_block(cg)) * SECTORS_PER_BLOCK
            for off in (0, SECTORS_PER_BLOCK):
                yield sim.process(array.io(base + off, SECTORS_PER_BLOCK, True))

    sim.process(write_cgs())
    sim.run()
    per_cg = sim.now / len(sample)
    inode_blocks = 1 if lastino else lay.n_cg * lay.inode_blocks
    return lay.n_cg * per_cg + inode_blocks * p.mkfs_block_ms * ms


# --- the artifacts ------------------------------------------------------------------------------------------

def _curves(p: Params, series: dict, loads, quick, rng, *, fs_gb=None) -> pd.DataFrame:
    seed = _seed(rng)
    frames = {name: curve(p, st, loads, quick=quick, seed=seed, fs_gb=fs_gb) for name, st in series.items()}
    return pd.concat(frames, names=["series", "load"])


def figure2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 2: LADDIS response time against throughput, RAID-5 and RAID-0 with and without Presto, bmap
    cache and fast fsck on. Index (series, load): requested ops/s, and 'peak' (the figure of merit).
    Columns: throughput_ops, response_ms, disk_wait_ms."""
    return _curves(params or Params(), FIGURE2, LOADS["figure2"], quick, rng)


def figure3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 3: RAID-5 without Presto: bmap + fast fsck, bmap, fast fsck, baseline UFS, VxFS/VxLD."""
    return _curves(params or Params(), FIGURE3, LOADS["figure3"], quick, rng)


def _with_gain(df: pd.DataFrame, top: str, base: str, column: str) -> pd.DataFrame:
    df[column] = np.nan
    df.loc[(top, "peak"), column] = PERCENT * (df.loc[(top, "peak"), "throughput_ops"]
                                               / df.loc[(base, "peak"), "throughput_ops"] - 1)
    return df


def figure4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 4: RAID-5 with Presto Upper and Lower: the five configurations of Figure 3. Column
    gain_over_fast_fsck_pct: how much the bmap cache adds to fast fsck's peak (§6.2: 23%)."""
    df = _curves(params or Params(), FIGURE4, LOADS["figure4"], quick, rng)
    return _with_gain(df, "Bmap + fast fsck", "Fast fsck", "gain_over_fast_fsck_pct")


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5: RAID-0 without Presto (its legend is lost: the five configurations of Figure 3)."""
    return _curves(params or Params(), FIGURE5, LOADS["figure5"], quick, rng)


def figure6(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 6: RAID-0 with Presto Upper: bmap + fast fsck, fast fsck, baseline UFS, VxFS with and
    without VxLD."""
    return _curves(params or Params(), FIGURE6, LOADS["figure6"], quick, rng)


def figure9(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 9: RAID-0 with Presto, bmap + fast fsck under five flusher settings, baseline UFS and VxFS.
    Column reduction_vs_fast_fsck_pct: how far VxFS's peak lies below fast fsck's (default flusher)."""
    df = _curves(params or Params(), FIGURE9, LOADS["figure9"], quick, rng)
    df["reduction_vs_fast_fsck_pct"] = np.nan
    df.loc[("VxFS", "peak"), "reduction_vs_fast_fsck_pct"] = PERCENT * (
        1 - df.loc[("VxFS", "peak"), "throughput_ops"] / df.loc[("Fast fsck: 10% every 30 s", "peak"), "throughput_ops"])
    return df


def _crash_loads(quick):
    return CRASH_LOADS[::2] + (CRASH_LOADS[-1],) if quick else CRASH_LOADS


def figure7(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 7: recovery time (s) against the load at the crash (requested ops/s): baseline UFS, bmap
    only, fast fsck (10% every 1 s) and VxFS without VxLD, on the 44 GB RAID-0 with Presto. Also the
    busy working set fast fsck found, and VxLD's log copy (given)."""
    p, seed = params or Params(), _seed(rng)
    rows = {}
    for load in _crash_loads(quick):
        r = recovery(p, load, (1.0, 0.10), quick=quick, seed=seed)
        rows[str(load)] = {"load_ops": float(load), **r, "vxld_copy_s": p.vxld_copy_s}
    return pd.DataFrame(rows).T.rename_axis("load")


def figure8(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 8: fast fsck's recovery time (s) against load for five flusher settings. Index (flusher,
    load). Columns: load_ops, fast_fsck_s, ufs_s (standard fsck after the same crash), busy_inodes,
    throughput_ops."""
    p, seed = params or Params(), _seed(rng)
    rows = {}
    for name, fl in FLUSHERS.items():
        for load in _crash_loads(quick)[1:]:
            r = recovery(p, load, fl, quick=quick, seed=seed)
            rows[(name, str(load))] = {"load_ops": float(load),
                                       **{k: r[k] for k in ("fast_fsck_s", "ufs_s", "busy_inodes", "throughput_ops")}}
    return pd.DataFrame(rows).T.rename_axis(["flusher", "load"])


def writes(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.3: disk operations per NFS write without NVRAM (RAID-0, at half the load the baseline saturates
    at), the bmap cache's saving per appending write, and the writes' share of the time clients wait.
    Index: baseline UFS, bmap. Columns: disk_ops_per_write, saved_per_appending_write, write_wait_pct."""
    p, seed = params or Params(), _seed(rng)
    rows = {}
    for name, bmap in (("Baseline UFS", False), ("Bmap", True)):
        st = _ufs("raid0", "none", bmap, False)
        at = functools.partial(_demands_for, p, st, quick=quick, seed=seed)
        load = saturation(p, st, at).throughput / 2
        d = at(load)
        rows[name] = {"disk_ops_per_write": d.counts["write_disk_ops"] / d.counts["writes"],
                      "write_wait_pct": write_wait_pct(p, st, d, load)}
    appends = p.appending_write_share
    rows["Bmap"]["saved_per_appending_write"] = (rows["Baseline UFS"]["disk_ops_per_write"]
                                                 - rows["Bmap"]["disk_ops_per_write"]) / appends
    return pd.DataFrame(rows).T.rename_axis("variant")


def _demands_for(p, setup, load, *, quick, seed):
    return demands(p, setup, load, quick=quick, seed=seed)


def write_wait_pct(p: Params, setup: Setup, d: Demands, load: float) -> float:
    """The share (%) of all the time clients wait for replies that they wait for writes: each operation's
    wait is its disk requests times a request's mean residence, plus the CPU and the wire."""
    point = laddis_point(p, setup, d, load)
    per_io = point.disk_wait_s
    base = cpu_s_per_op(p) + wire_s_per_op(p)
    total = sum(LADDIS_MIX.values())
    write_ios = d.counts["write_disk_ops"] / d.counts["writes"]
    other_ios = max(0.0, d.ios_per_op - LADDIS_MIX["write"] / total * write_ios) / (1 - LADDIS_MIX["write"] / total)
    w = LADDIS_MIX["write"] / total
    waits_w, waits_o = base + write_ios * per_io, base + other_ios * per_io
    return PERCENT * w * waits_w / (w * waits_w + (1 - w) * waits_o)


def nvram(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4: dirty-write hit rates in Presto Upper (RAID-5 with Presto, 1000 requested ops/s). Index: UFS with
    bmap and fast fsck, VxFS/VxLD. Column: write_hit_pct."""
    p, seed = params or Params(), _seed(rng)
    rows = {}
    for name in ("Bmap + fast fsck", "VxFS/VxLD"):
        rows[name] = {"write_hit_pct": PERCENT * demands(p, FIGURE4[name], 1000.0, quick=quick, seed=seed).nvram_hit_rate}
    return pd.DataFrame(rows).T.rename_axis("file system")


def mkfs(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§5.4: making a file system on the 40 GB RAID-5 metadevice, with lastino and standard. Columns:
    mkfs_s, reduction_fold (standard over lastino)."""
    p = params or Params()
    last, std = mkfs_s(p, p.mkfs_fs_gb, lastino=True), mkfs_s(p, p.mkfs_fs_gb, lastino=False)
    return pd.DataFrame({"lastino": {"mkfs_s": last, "reduction_fold": std / last},
                         "standard UFS": {"mkfs_s": std, "reduction_fold": 1.0}}).T.rename_axis("mkfs")


def small_fs(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§6.4: bmap + fast fsck on RAID-0: a 5 GB file system without Presto, the whole array with Presto, at
    600 ops/s and at saturation; and fast fsck on a clean 5 GB file system. Index (setup, load). Columns:
    throughput_ops, response_ms, fast_fsck_s."""
    p, seed = params or Params(), _seed(rng)
    none = curve(p, FIGURE2["RAID-0 no Presto"], (600,), quick=quick, seed=seed, fs_gb=p.small_fs_gb)
    presto = curve(p, FIGURE2["RAID-0 Presto Upper"], (600,), quick=quick, seed=seed)
    df = pd.concat({"5 GB, no Presto": none, "Presto": presto}, names=["setup", "load"])
    df = df[["throughput_ops", "response_ms"]].copy()
    df["fast_fsck_s"] = np.nan
    df.loc[("5 GB, no Presto", "clean"), :] = [np.nan, np.nan, cg_scan_s(p, p.small_fs_gb)]
    return df


# --- then and now: mke2fs and e2fsck on sparse images, fsync on disk and in memory ---------------------------

_E2FS_PATHS = ("", "/usr/sbin/", "/sbin/")
NOW_SIZES_GB = {True: (1, 4), False: (4, 16, 64)}  # quick: small images, little I/O beside other work


def _tool(name: str) -> tuple:
    """The path of an e2fsprogs tool, or (None, why not)."""
    why = f"{name} is not installed"
    for prefix in _E2FS_PATHS:
        r = run_command([prefix + name, "-V"], timeout_s=30.0)
        if r.available:
            return prefix + name, ""
        why = r.reason
    return None, why


def _timed(argv) -> tuple:
    """Elapsed seconds of one run of ``argv``, or (nan, why not)."""
    r = run_command(argv, timeout_s=600.0)
    if not r.available or r.returncode not in (0, 4):  # e2fsck -n exits 4 when it leaves errors unfixed
        return math.nan, r.reason or f"{argv[0]} exited with {r.returncode}: {r.stderr.strip()[-200:]}"
    return r.elapsed_s, ""


#: The file systems made and checked: (column suffix, mke2fs options, inode tables initialised lazily).
_VARIANTS = (("lazy", [], 1), ("eager", [], 0), ("full", ["-O", "^metadata_csum,^uninit_bg"], 0))


@one_core()
def measure_mkfs_fsck(*, quick: bool = False) -> pd.DataFrame:
    """Make and check ext4 file systems on sparse image files of growing size, on this machine's disk.

    ``mkfs_lazy_s``: mke2fs with lazy inode-table initialisation (a table is written at its first use, as
    the paper's lastino lets mkfs skip all but the root's inode block, §5.4); ``mkfs_eager_s``: every
    inode table initialised now. ``fsck_lazy_s``: e2fsck -fn on the default ext4, which skips each group's
    unused inodes (bg_itable_unused, ext4's lastino); ``fsck_full_s``: the same check on an ext4 made without
    uninit_bg and metadata_csum, which reads every inode table, as standard UFS fsck did. Each check runs
    on a file system just made; medians over 1 (quick) or 3 rounds. Index: size_gb. Column ``note``:
    'not available: <why>' where e2fsprogs or the disk refuses.
    """
    mke2fs, why = _tool("mke2fs")
    e2fsck, why_fsck = _tool("e2fsck")
    image = str(cache_dir() / "atc98_peacock.img")
    rows = {}
    for gb in NOW_SIZES_GB[bool(quick)]:
        times = {f"{kind}_{v}_s": [] for kind in ("mkfs", "fsck") for v, _, _ in _VARIANTS}
        note = "" if mke2fs and e2fsck else f"not available: {why or why_fsck}"
        for _ in range(0 if note else (1 if quick else 3)):
            for name, features, lazy in _VARIANTS:
                run_command(["rm", "-f", image])
                made = run_command(["truncate", "-s", f"{gb}G", image], check=True)
                t, why_not = _timed([mke2fs, "-q", "-F", "-t", "ext4", *features, "-E",
                                     f"lazy_itable_init={lazy},nodiscard", image]) if made.available else (
                    math.nan, made.reason)
                times[f"mkfs_{name}_s"].append(t)
                if math.isfinite(t) and name != "eager":
                    t, why_not = _timed([e2fsck, "-fn", image])
                    times[f"fsck_{name}_s"].append(t)
                note = note or (f"not available: {why_not}" if why_not else "")
        row = {k: float(np.median(v)) if v else math.nan for k, v in times.items()
               if k in ("mkfs_lazy_s", "mkfs_eager_s", "fsck_lazy_s", "fsck_full_s")}
        rows[gb] = {**row, "note": note}
    run_command(["rm", "-f", image])
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("size_gb")


def _fs_type(path: str) -> str:
    r = run_command(["stat", "-f", "-c", "%T", path], timeout_s=10.0)
    return r.stdout.strip() if r.available and r.returncode == 0 else "unknown"


@one_core()
def measure_fsync(*, quick: bool = False) -> pd.DataFrame:
    """A synchronous 8 KB write (pwrite then fsync) on this machine's disk and in memory (tmpfs, the nearest
    thing to Prestoserve's NVRAM), timed by the lmbench harness. Index: where. Columns: us_per_write,
    file_system, note."""
    places = {"disk": str(cache_dir()), "memory (tmpfs)": "/dev/shm"}
    rows = {}
    for where, folder in places.items():
        setup = f'fd = open("{folder}/atc98_peacock-fsync.dat", O_CREAT | O_WRONLY | O_TRUNC, 0600); if (fd < 0) return 1;'
        m = measure("c", "if (pwrite(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf || fsync(fd)) sink++;",
                    name=f"write+fsync on {where}", decls="static char buf[8192]; static int fd;", setup=setup,
                    includes=("fcntl.h", "unistd.h"), tries=3 if quick else 7, enough_s=0.05)
        rows[where] = {"us_per_write": m.per_op_s / us if m.available else math.nan, "file_system": _fs_type(folder),
                       "note": "" if m.available else f"not available: {m.reason.strip().splitlines()[-1]}"}
        run_command(["rm", "-f", f"{folder}/atc98_peacock-fsync.dat"])
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("where")


def then_and_now(fs_now: pd.DataFrame, fsync_now: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """The paper's three costs, 1998 (the model) beside this machine (measured): making a file system with
    every inode initialised against lastino / lazy tables; a full check that reads every inode against one
    that skips unused ones; a synchronous write to disk against one to NVRAM / memory. Index: comparison.
    Columns: then_slow, then_fast, then_ratio, now_slow, now_fast, now_ratio, unit."""
    p = params or Params()
    big = fs_now.dropna(subset=["mkfs_eager_s"]).index.max() if fs_now["mkfs_eager_s"].notna().any() else None
    pick = lambda col: float(fs_now.loc[big, col]) if big is not None else math.nan
    mkfs_then = (mkfs_s(p, p.mkfs_fs_gb, lastino=False), mkfs_s(p, p.mkfs_fs_gb, lastino=True))
    fsck_then = (cg_scan_s(p, p.crash_fs_gb) + inode_scan_s(p, p.crash_fs_gb), cg_scan_s(p, p.crash_fs_gb))
    disk_us = fsync_now.loc["disk", "us_per_write"] if "disk" in fsync_now.index else math.nan
    mem_us = fsync_now.loc["memory (tmpfs)", "us_per_write"] if "memory (tmpfs)" in fsync_now.index else math.nan
    rows = {
        f"mkfs: every inode table vs lastino / lazy ({p.mkfs_fs_gb:g} GB then, {big} GB now)":
            (*mkfs_then, pick("mkfs_eager_s"), pick("mkfs_lazy_s"), "s"),
        f"full fsck vs one that skips unused inodes ({p.crash_fs_gb:g} GB then, {big} GB now)":
            (*fsck_then, pick("fsck_full_s"), pick("fsck_lazy_s"), "s"),
        "synchronous 8 KB write: disk vs NVRAM (then) / tmpfs (now)":
            (random_io_s() / us, p.nvram_write_us, disk_us, mem_us, "us"),
    }
    out = pd.DataFrame.from_dict(rows, orient="index",
                                 columns=["then_slow", "then_fast", "now_slow", "now_fast", "unit"])
    out.insert(2, "then_ratio", out["then_slow"] / out["then_fast"])
    out["now_ratio"] = out["now_slow"] / out["now_fast"]
    return out[["then_slow", "then_fast", "then_ratio", "now_slow", "now_fast", "now_ratio", "unit"]].rename_axis(
        "comparison")
