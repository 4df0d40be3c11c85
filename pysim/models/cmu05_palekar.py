"""A case for network attached storage: in-band NFS against out-of-band PanFS (Palekar & Iyer,
CMU 15-712 report, 2005).

Regenerates §7's prose numbers (:func:`prose`: PanFS's 56-61 sustained on large files, the knee at the
client's 1 GB of RAM in sequential and random reads, PanFS's bandwidth "nearly half" once PostMark forces it
to disk) and the curves the paper plots without values: Figures 2-3 (sequential write and read of files
larger than the NFS server's cache), Figure 4 (sequential reads over file sizes that reach the client's
RAM), Figure 5 (random reads and writes), Figures 6-7 (PostMark's create and delete rates and its read and
write bandwidth at 1,000, 10,000 and 100,000 files of 4-32 KB).

First principles. One client with one thread (§7.1) on gigabit Ethernet; a Panasas shelf of a
DirectorBlade (metadata server and, in-band, the NFS server with a 2 GB cache) and ten StorageBlades
(OSDs, each a 1.2 GHz Celeron with 512 MB and two SATA disks). Every request is a chain of stations on
the pysim engine (:class:`Shelf`): the hosts' CPUs (a cost per request and per byte moved through a
host's network stack), the switch ports (:class:`pysim.sw.rpc.Wire`, store-and-forward) and the OSDs'
disks (:class:`pysim.hw.storage.QueuedDisk` over the C disk model). Out of band (PanFS DirectFlow) the
client moves its data to and from the OSDs itself, striped with RAID 5 (the client computes parity;
a small write is a read-modify-write over the network). In band (NFSv3 over TCP) every byte is stored
and forwarded by the DirectorBlade, which reaches the same OSDs as a PanFS client of its own, so its
CPU carries each byte twice. A client keeps a window of requests outstanding (read-ahead and
write-behind for sequential I/O, one for random I/O). Which level of the storage hierarchy serves each
request comes from the C page caches (:class:`pysim.sw.pagecache.PageCache`): the client's page cache
(1 GB of RAM less the kernel's share), the NFS server's 2 GB cache (battery-backed, so NFSv3's COMMIT
is satisfied in memory), the OSDs' caches with a dirty limit that cleans to disk in the background.
A test's time is the sum, over the levels, of the requests each level served times that level's
time per request in a steady pipeline; a write-back level that is drained in the background bounds
the run by its disks' busy time. PostMark (:func:`pysim.workloads.files.postmark`) runs its pool
creation, transactions and deletion through the same hierarchy; a create is the metadata exchange
(NFS: LOOKUP, CREATE, WRITE, COMMIT through the DirectorBlade; PanFS: a create at the metadata server,
which makes the object on an OSD, the data sent straight to the OSD, and a close that commits the
size), a delete likewise.

Calibrated on one published cell (see CALIBRATION): the cost per byte of a 2.4 GHz host's network
stack (TCP, iSCSI or RPC, copies, interrupts), on PanFS's highest sustained bandwidth on large files.
Every other number is a prediction: PanFS's lowest sustained bandwidth (writes carry parity), the
knees, the PostMark ratio.

Not reproduced: the "anomaly" of Figure 4 beyond 1 GB (the paper does not describe it enough to
rebuild), and the size of the NFS client's advantage while files fit in the client's cache, which
the paper calls an implementation effect of the two clients (the PanFS client's cost per cached
request is assumed, so no claim is made on it). Figure 1 is a diagram.

Then vs now (:func:`measure_now`): on this machine, a file read through the page cache under a
budget enforced with ``posix_fadvise(POSIX_FADV_DONTNEED)``, so the cliff at the budget is the real
page cache's; a loopback store-and-forward proxy against direct reads from storage processes; and
PostMark's operations (the lab's generator) against the real file system as the file count grows.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import parse_value, run_command
from pysim.harness.runners import program_file
from pysim.hw.disk import Disk, DiskSpec
from pysim.hw.storage import QueuedDisk
from pysim.models import Counterfactual, Fit
from pysim.params import ModelParams, assumed, calibrated, derived, stated
from pysim.rng import make_rng
from pysim.sw.pagecache import PageCache
from pysim.sw.rpc import Wire
from pysim.units import MB, Gbit_per_s, GiB, KiB, MiB, ms, ns, us
from pysim.workloads.files import PostMarkConfig, iozone, postmark
from pysim.harness.exclusive import exclusive

#: A StorageBlade's disk: a 250 GB Serial-ATA drive of 2004 (§7.1 gives only the capacity and interface).
SATA_250GB = DiskSpec(
    name="250 GB 7200 rpm Serial-ATA (2004)",
    rpm=7200, cylinders=8_976, heads=64,
    zones=tuple((i * 598, round(1100 - i * (1100 - 600) / 14)) for i in range(15)),
    track_to_track_s=0.8 * ms, average_seek_s=8.5 * ms, full_stroke_s=17.0 * ms, head_switch_s=0.8 * ms,
    overhead_s=0.3 * ms, bus_bytes_per_s=150 * MB, buffer_bytes=8 * MiB,
    sources={
        "rpm": "assumed: 7200 rpm, the desktop SATA drives of 2004 (Barracuda 7200.7/7200.8, DiamondMax 10)",
        "cylinders": "derived: 250 GB / (64 heads x mean 850 sectors x 512 B)",
        "heads": "assumed: a logical geometry of 64 surfaces (the seek curve is fitted over the cylinders, "
                 "so fewer of them make the model quick to build; seek times stay the data sheet's in seconds, "
                 "and every track still ends in a head switch)",
        "zones": "assumed: 15 zones, 1100 sectors per track outside to 600 inside: 68 to 37 MB/s at 7200 rpm",
        "track_to_track_s": "datasheet: Barracuda 7200.8, track-to-track read 0.8 ms",
        "average_seek_s": "datasheet: Barracuda 7200.8, average read seek 8.5 ms",
        "full_stroke_s": "assumed: about twice the average seek",
        "head_switch_s": "assumed: equal to the track-to-track seek",
        "overhead_s": "assumed: about 0.3 ms of command overhead",
        "bus_bytes_per_s": "standard: Serial ATA 1.0, 150 MB/s",
        "buffer_bytes": "datasheet: 8 MB buffer",
        "sector_bytes": "standard: 512-byte sectors",
    },
)

SYSTEMS = ("nfs", "panfs")
LEVELS = ("client", "server", "osd", "disk")
#: Iozone's file sizes as powers of two (Iozone's -a and -g step by doubling), in MiB.
LARGE_MIB = (4096, 8192, 16384)
SMALL_MIB = (64, 128, 256, 512, 1024, 2048, 4096)
RANDOM_MIB = (64, 128, 256, 512, 1024, 2048)
POSTMARK_FILES = (1_000, 10_000, 100_000)


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Sizes in bytes, times in seconds unless the name says otherwise."""

    # the client (§7.1)
    client_ram_bytes: int = stated(1 * GiB, "§7.1: 2.4 GHz Intel P4 and 1GB of RAM")
    client_cache_share: float = assumed(0.85, "of the client's RAM, the page cache Linux 2.4 can use: the "
                                              "kernel, Iozone's buffers and the daemons keep the rest", gt=0, le=1)
    # the shelf (§4, §7.1)
    osds: int = stated(10, "§7.1: 1 Director Blade and 10 Storage Blades", ge=3)
    disks_per_osd: int = stated(2, "§7.1: 2 X 250GB Serial-ATA Drives", ge=1)
    osd_ram_bytes: int = stated(512 * MiB, "§7.1: each Storage Blade ... 512MB of SDR RAM")
    osd_cache_share: float = assumed(0.75, "of a StorageBlade's RAM, its object cache: its OS and OSD software "
                                           "keep a quarter", gt=0, le=1)
    osd_dirty_share: float = assumed(0.4, "of a StorageBlade's RAM, the dirty data it holds before cleaning to "
                                          "disk in the background: the 40% dirty limit of the BSD and Linux "
                                          "kernels of the period", gt=0, le=1)
    server_cache_bytes: int = stated(2 * GiB, "§7.2: the NFS server under test had a large buffer cache size "
                                              "of around 2GB")
    osd_clock_ratio: float = derived(2.0, "a StorageBlade's 1.2 GHz Celeron against the 2.4 GHz P4 and Xeon "
                                          "(§7.1): twice the time for the same work")
    server_clock_ratio: float = derived(1.0, "the DirectorBlade's 2.4 GHz Xeon against the client's 2.4 GHz P4 "
                                             "(§7.1): the same clock")
    # the network (§4)
    link_bytes_per_s: float = stated(1 * Gbit_per_s, "§4: the Gigabit Ethernet interconnect")
    frame_overhead_bytes: int = assumed(78, "Ethernet, IP and TCP headers, preamble and gap per 1460-byte "
                                            "segment", ge=0)
    one_way_s: float = assumed(30 * us, "one way through a gigabit switch and the NICs' interrupt moderation")
    # the hosts' software
    stack_ns_per_byte: float = calibrated(15.7724, "a 2.4 GHz host's network stack per byte in or out: TCP "
                                                 "checksum and copies, iSCSI or RPC framing, interrupts")
    request_us: float = assumed(40.0, "a 2.4 GHz host's work per request: system call or RPC dispatch, "
                                      "iSCSI/OSD or NFS headers, a wake-up")
    parity_ns_per_byte: float = assumed(1.0, "XOR of a stripe's data into its parity on a P4 with SSE2, about "
                                             "1 GB/s")
    copy_ns_per_byte: float = assumed(1.0, "a page-cache hit copied to the user on a P4 with DDR memory, "
                                           "about 1 GB/s")
    panfs_hit_us: float = assumed(150.0, "the PanFS client's extra work on a request its cache holds "
                                         "(§7.3: PanFS does not use the page cache as well as NFS); an "
                                         "implementation effect, no claim rests on it", ge=0)
    metadata_us: float = assumed(150.0, "the DirectorBlade's work on a namespace operation (create, remove): "
                                        "directory update and a journal record in battery-backed memory")
    object_us: float = assumed(80.0, "a StorageBlade's work to create or remove an object (on a 2.4 GHz "
                                     "scale; the Celeron's ratio applies)")
    # layouts and protocols
    stripe_unit_bytes: int = assumed(64 * KiB, "PanFS's RAID 5 stripe unit, 64 KB")
    nfs_transfer_bytes: int = assumed(32 * KiB, "NFSv3 over TCP, rsize and wsize of 32 KB")
    nfs_window: int = assumed(4, "Linux 2.4's NFS read-ahead and write-behind keep about four RPCs in "
                                 "flight", ge=1)
    panfs_window: int = assumed(9, "the PanFS client reads ahead and writes behind one RAID 5 stripe of nine "
                                   "data units", ge=1)
    record_bytes: int = assumed(64 * KiB, "Iozone's record size; the paper does not give it")
    page_bytes: int = assumed(4 * KiB, "the page size of every cache (i386)")
    # PostMark (§7.4)
    postmark_min_bytes: int = stated(4 * KiB, "§7.4: files with sizes varying from 4KB to 32KB")
    postmark_max_bytes: int = stated(32 * KiB, "§7.4: files with sizes varying from 4KB to 32KB")
    postmark_transactions: int = assumed(500, "PostMark's default; the paper does not give it")
    postmark_block_bytes: int = assumed(4 * KiB, "PostMark's read and write block size set to a page")
    # the mechanisms
    in_band: str = stated("store-and-forward", "§2, §7.2: for NFS every byte goes through the server",
                          choices=("store-and-forward", "direct"))
    client_caching: bool = stated(True, "§7.2-7.3: the client's page cache serves files that fit in it")
    nfs_lookup: bool = stated(True, "§7.1: NFSv3, whose client looks a new name up (and finds nothing) before "
                                    "its CREATE (RFC 1813); PanFS's client asks its metadata server once")

    @property
    def client_cache_bytes(self) -> int:
        return int(self.client_ram_bytes * self.client_cache_share)

    @property
    def osd_cache_bytes(self) -> int:
        return int(self.osd_ram_bytes * self.osd_cache_share)

    @property
    def osd_dirty_bytes(self) -> int:
        return int(self.osd_ram_bytes * self.osd_dirty_share)


CALIBRATION = (Fit("stack_ns_per_byte", "prose", "PanFS large files, highest", "bandwidth_MBps", (2.0, 60.0)),)
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("direct-server", {"in_band": "direct"},
                   "the NFS server forwards nothing: its data path costs what the client's direct path costs "
                   "(a server with the disks inside it and a free data path)"),
    Counterfactual("big-client", {"client_ram_bytes": 8 * GiB},
                   "a client with 8 GB of RAM: every file of Figures 4 and 5 fits in its page cache"),
    Counterfactual("no-client-cache", {"client_caching": False},
                   "neither client keeps file data in its page cache"),
    Counterfactual("big-osd-cache", {"osd_ram_bytes": 4 * GiB},
                   "StorageBlades with 4 GB of RAM each: PostMark's files never leave their caches"),
    Counterfactual("no-lookup", {"nfs_lookup": False},
                   "the NFS client creates a file in one exchange with the server, as PanFS's does"),
    Counterfactual("tiny-server-cache", {"server_cache_bytes": 256 * MiB},
                   "an NFS server with a 256 MB cache, smaller than the OSDs' together"),
)


# --- the shelf on the engine ---------------------------------------------------------------------------------

_POOL: list = []


def _disk_pool(spec: DiskSpec, n: int) -> list:
    """``n`` C disks of ``spec`` (the StorageBlades' only disk), built once per process (fitting a seek
    curve takes a while) and reset for each new simulation."""
    while len(_POOL) < n:
        _POOL.append(Disk(spec))
    return _POOL[:n]


class QuickDisk(QueuedDisk):
    """:class:`QueuedDisk` over a C disk built once per process (building one fits its seek curve) and
    reset for each run."""

    def __init__(self, sim, disk: Disk, *, name="disk"):
        disk.reset()
        super().__init__(sim, disk=disk, name=name)


class Host:
    """A machine on the switch: one CPU (a FIFO station) and its port's two directions."""

    def __init__(self, sim, p: Params, clock_ratio: float):
        self.sim, self.ratio = sim, clock_ratio
        self.cpu = sim.resource(1)
        per_frame = p.frame_overhead_bytes / 1460
        eff = p.link_bytes_per_s / (1 + per_frame)
        self.tx = Wire(sim, p.one_way_s / 2, eff, per_message_bytes=p.frame_overhead_bytes)
        self.rx = Wire(sim, p.one_way_s / 2, eff, per_message_bytes=p.frame_overhead_bytes)
        self.busy_s = 0.0

    def work(self, seconds: float):
        with self.cpu.request() as turn:
            yield turn
            s = seconds * self.ratio
            self.busy_s += s
            yield self.sim.timeout(s)


class Shelf:
    """The client, the DirectorBlade and the StorageBlades on one switch, and the chains of stations a
    request of each kind passes through (process methods to ``yield from``)."""

    HEADER = 200  # bytes of a request or an acknowledgement without data

    def __init__(self, p: Params, *, rng=0):
        self.p, self.sim = p, Simulation()
        sim = self.sim
        self.client = Host(sim, p, 1.0)
        self.server = Host(sim, p, p.server_clock_ratio)
        self.osds = [Host(sim, p, p.osd_clock_ratio) for _ in range(p.osds)]
        self.gen = make_rng(rng)
        self._disks = None
        self.new_files = False  # random writes go to new small files (PostMark), not into an old stripe

    @property
    def disks(self) -> list:
        """The OSDs' disks, made on first use (a run that never reaches a disk needs none)."""
        if self._disks is None:
            pool = _disk_pool(SATA_250GB, self.p.osds * self.p.disks_per_osd)
            k = self.p.disks_per_osd
            self._disks = [[QuickDisk(self.sim, pool[o * k + j]) for j in range(k)] for o in range(self.p.osds)]
        return self._disks

    # primitives
    def send(self, src: Host, dst: Host, nbytes: int):
        yield from src.tx.send(nbytes)
        yield from dst.rx.send(nbytes)

    def stack(self, host: Host, nbytes: int, requests: int = 1):
        p = self.p
        yield from host.work(requests * p.request_us * us + nbytes * p.stack_ns_per_byte * ns)

    def disk_busy_s(self) -> float:
        return 0.0 if self._disks is None else sum(d.busy_s for row in self._disks for d in row)

    def disk_io(self, osd: int, unit: int, nbytes: int, write: bool, random: bool):
        p = self.p
        d = unit // p.osds
        disk = self.disks[osd][d % p.disks_per_osd]
        sectors = max(1, nbytes // 512)
        span = disk.capacity_sectors // 2
        if random:
            lba = int(self.gen.integers(0, span - sectors))
        else:
            lba = (d // p.disks_per_osd) * (p.stripe_unit_bytes // 512)
        yield from disk.io(lba, sectors, write)

    # the StorageBlade's side of one unit
    def osd_serve(self, src: Host, osd: int, unit: int, nbytes: int, write: bool, level: str, random: bool):
        o = self.osds[osd]
        yield from self.send(src, o, self.HEADER + (nbytes if write else 0))
        yield from self.stack(o, nbytes)
        if level == "disk":
            yield from self.disk_io(osd, unit, nbytes, write, random)
        yield from self.send(o, src, self.HEADER + (0 if write else nbytes))
        yield from self.stack(src, 0 if write else nbytes)

    def direct(self, host: Host, unit: int, nbytes: int, write: bool, level: str, random: bool):
        """One unit between ``host`` and the OSDs, RAID 5 done by ``host`` (PanFS's data path)."""
        p, sim = self.p, self.sim
        osd = unit % p.osds
        parity = (osd + 1) % p.osds
        if not write:
            yield from self.stack(host, 0)
            yield from self.osd_serve(host, osd, unit, nbytes, False, level, random)
            return
        if random and self.new_files:  # a new small file: its unit and its parity (a copy), written at once
            yield from self.stack(host, 2 * nbytes)
            yield sim.all_of([sim.process(self.osd_serve(host, o, unit, nbytes, True, level, True))
                              for o in (osd, parity)])
            return
        if random:  # a small write: read old data and parity, then write both
            yield from self.stack(host, nbytes)
            yield sim.all_of([sim.process(self.osd_serve(host, o, unit, nbytes, False, level, True))
                              for o in (osd, parity)])
            yield from host.work(2 * nbytes * p.parity_ns_per_byte * ns)
            yield sim.all_of([sim.process(self.osd_serve(host, o, unit, nbytes, True, level, True))
                              for o in (osd, parity)])
            return
        # a full stripe: each data unit carries its share of the parity unit
        share = nbytes + nbytes // (p.osds - 1)
        yield from host.work(nbytes * p.parity_ns_per_byte * ns)
        yield from self.stack(host, share)
        yield from self.osd_serve(host, osd, unit, share, True, level, False)

    def nfs(self, unit: int, nbytes: int, write: bool, level: str, random: bool):
        """One NFS READ or WRITE through the DirectorBlade (in band)."""
        c, s = self.client, self.server
        if self.p.in_band == "direct":  # the counterfactual: a server that forwards nothing
            yield from self.direct(c, unit, nbytes, write, "client" if level == "server" else level, random)
            return
        yield from self.stack(c, nbytes if write else 0)
        yield from self.send(c, s, self.HEADER + (nbytes if write else 0))
        yield from self.stack(s, nbytes if write else 0)
        if level in ("osd", "disk"):  # the server, a PanFS client of the OSDs, forwards the bytes
            yield from self.direct(s, unit, nbytes, write, level, random)
        if not write:
            yield from self.stack(s, nbytes)
        yield from self.send(s, c, self.HEADER + (0 if write else nbytes))
        yield from self.stack(c, 0 if write else nbytes)

    def request(self, system: str, unit: int, nbytes: int, write: bool, level: str, random: bool):
        if system == "nfs":
            yield from self.nfs(unit, nbytes, write, level, random)
        else:
            yield from self.direct(self.client, unit, nbytes, write, level, random)

    def stream(self, system, n, nbytes, write, level, random, window, first=0):
        """Requests for units ``first`` to ``first + n - 1`` with at most ``window`` in flight (a process);
        returns the seconds they took."""
        sim = self.sim
        slots = sim.resource(window)
        t0 = sim.now

        def one(k):
            with slots.request() as s:
                yield s
                yield from self.request(system, k, nbytes, write, level, random)

        yield sim.all_of([sim.process(one(k)) for k in range(first, first + n)])
        return sim.now - t0

    # metadata operations (PostMark)
    def rpc(self, src: Host, dst: Host, work_s: float, nbytes: int = 0):
        yield from self.stack(src, nbytes)
        yield from self.send(src, dst, self.HEADER + nbytes)
        yield from dst.work(self.p.request_us * us + work_s)
        yield from self.send(dst, src, self.HEADER)
        yield from self.stack(src, 0)

    def namespace_op(self, host: Host, osd: int):
        """The metadata server's work on a create or remove: its own, and the object on an OSD."""
        p = self.p
        yield from host.work(p.metadata_us * us)
        yield from self.rpc(self.server, self.osds[osd], p.object_us * us)

    def create(self, system: str, k: int):
        """A file's create without its data: NFS LOOKUP + CREATE; PanFS create at the metadata server."""
        c, s, p = self.client, self.server, self.p
        osd = k % p.osds
        if system == "nfs" and p.nfs_lookup:
            yield from self.rpc(c, s, 0.0)  # LOOKUP (the name is not there)
        yield from self.stack(c, 0)
        yield from self.send(c, s, self.HEADER)
        yield from self.stack(s, 0)
        yield from self.namespace_op(s, osd)
        yield from self.send(s, c, self.HEADER)
        yield from self.stack(c, 0)

    def close(self, system: str):
        """Closing a written file: NFS COMMIT (the server's battery-backed cache makes it stable);
        PanFS commits the new size and times at the metadata server."""
        yield from self.rpc(self.client, self.server, 0.0)

    def remove(self, system: str, k: int):
        yield from self.create(system, k)  # the same exchange, removing the name and the object


# --- times per request, measured on the engine --------------------------------------------------------------

def _samples(quick: bool) -> int:
    return 96 if quick else 288


@functools.lru_cache(maxsize=512)
def _stream(p: Params, system: str, write: bool, level: str, random: bool, quick: bool, seed: int) -> tuple:
    """(seconds per byte end to end, the disks' busy seconds per byte spread over all of them) of
    ``system`` moving data from (or to) ``level`` in a steady pipeline."""
    if level == "client":
        extra = p.panfs_hit_us * us / p.record_bytes if system == "panfs" else 0.0
        return p.copy_ns_per_byte * ns + extra, 0.0
    nfs_own = system == "nfs" and p.in_band != "direct"  # a direct server moves data as PanFS does
    nbytes = p.nfs_transfer_bytes if nfs_own else p.stripe_unit_bytes
    window = 1 if random else (p.nfs_window if nfs_own else p.panfs_window)
    n = _samples(quick)
    shelf = Shelf(p, rng=seed)
    sim = shelf.sim
    warm = max(n // 6, 2 * p.osds * p.disks_per_osd)  # every disk's first (cold) request is in the warm-up
    out = {}

    def run():
        yield from shelf.stream(system, warm, nbytes, write, level, random, window)
        busy0 = shelf.disk_busy_s()
        out["s"] = yield from shelf.stream(system, n, nbytes, write, level, random, window, first=warm)
        out["busy"] = shelf.disk_busy_s() - busy0

    sim.process(run())
    sim.run()
    disks = p.osds * p.disks_per_osd
    return out["s"] / (n * nbytes), out["busy"] / disks / (n * nbytes)


def seconds_per_byte(p: Params, system: str, write: bool, level: str, random: bool, quick: bool = False,
                     seed: int = 0) -> float:
    """Steady-state seconds per byte of ``system`` moving data from (or to) ``level``: sequential I/O
    keeps the protocol's window in flight, random I/O one request; requests that reach every disk once
    warm up first."""
    return _stream(p, system, write, level, random, quick, seed)[0]


def drain_seconds_per_byte(p: Params, system: str, random: bool, quick: bool = False, seed: int = 0) -> float:
    """Seconds per byte the OSDs' disks, all working, need to write back what their caches hold."""
    return _stream(p, system, True, "disk", random, quick, seed)[1]


@functools.lru_cache(maxsize=256)
def op_seconds(p: Params, system: str, op: str, seed: int = 0) -> float:
    """Seconds of one PostMark metadata exchange (``create``, ``close`` or ``remove``), alone on the shelf."""
    shelf = Shelf(p, rng=seed)
    sim, out = shelf.sim, {}

    def run():
        t0 = sim.now
        if op == "create":
            yield from shelf.create(system, 0)
        elif op == "close":
            yield from shelf.close(system)
        elif op == "remove":
            yield from shelf.remove(system, 0)
        else:
            raise ValueError(f"op must be create, close or remove, got {op!r}")
        out["s"] = sim.now - t0

    sim.process(run())
    sim.run()
    return out["s"]


@functools.lru_cache(maxsize=64)
def random_write_s(p: Params, nbytes: int, quick: bool) -> float:
    """Mean time of a write of ``nbytes`` to a random place on a StorageBlade's disk (C disk model)."""
    sim = Simulation()
    disk = QuickDisk(sim, _disk_pool(SATA_250GB, 1)[0])
    gen = make_rng(1)
    n = 50 if quick else 200
    sectors = max(1, nbytes // 512)

    def run():
        for _ in range(n):
            yield from disk.io(int(gen.integers(0, disk.capacity_sectors // 2)), sectors, True)

    sim.process(run())
    sim.run()
    return sim.now / n


# --- which level serves each request: the C page caches ------------------------------------------------------

class Hierarchy:
    """The caches one system's requests pass through, as :class:`PageCache` objects (one page per key).

    Reads fill every level they miss; writes are absorbed by the first write-back level (the client's
    cache, then the NFS server's or the OSDs'), whose dirty victims go one level down. The OSDs'
    caches clean dirty data to disk in the background above their dirty limit.
    """

    def __init__(self, p: Params, system: str, page_bytes: int, *, client: bool = True):
        self.p, self.system, self.page = p, system, page_bytes
        n = lambda b: max(1, int(b) // page_bytes)
        self.client = PageCache(n(p.client_cache_bytes)) if client and p.client_caching else None
        self.server = PageCache(n(p.server_cache_bytes)) if system == "nfs" and p.in_band != "direct" else None
        self.osd = PageCache(n(p.osd_cache_bytes * p.osds), dirty_high=n(p.osd_dirty_bytes * p.osds))

    def read(self, keys) -> dict:
        """Serve reads of ``keys``; the number of pages each level served."""
        keys = np.asarray(keys, dtype=np.uint64)
        served = {lv: 0 for lv in LEVELS}
        for name in ("client", "server", "osd"):
            cache = getattr(self, name)
            if cache is None:
                continue
            hits = np.zeros(keys.size, np.uint8)
            cache.run(keys, hits_out=hits)
            served[name] += int(hits.sum())
            keys = keys[hits == 0]
        served["disk"] += int(keys.size)
        return served

    def write(self, keys, *, through: bool = False) -> dict:
        """Write ``keys``; how many pages each level absorbed, what the OSDs cleaned in the background
        (``flushed``) and wrote back in the foreground (``disk``). ``through``: the client sends its
        writes on at once (close-to-open) and keeps clean copies."""
        keys = np.asarray(keys, dtype=np.uint64)
        out = {lv: 0 for lv in LEVELS}
        out["flushed"] = 0
        down = keys
        if self.client is not None:
            before = self.client.counts()
            self.client.run(keys, None if through else np.ones(keys.size, np.uint8))
            after = self.client.counts()
            if not through:
                pushed = after.writebacks - before.writebacks
                out["client"] = int(keys.size - pushed)
                down = keys[:pushed]  # LRU write-back: the oldest writes leave first, in order
        if self.server is not None:
            before = self.server.counts()
            self.server.run(down, np.ones(down.size, np.uint8))
            pushed = self.server.counts().writebacks - before.writebacks
            out["server"] = int(down.size - pushed)
            down = down[:pushed]
        before = self.osd.counts()
        self.osd.run(down, np.ones(down.size, np.uint8))
        after = self.osd.counts()
        out["disk"] = int(after.writebacks - before.writebacks)
        out["osd"] = int(down.size - out["disk"])
        out["flushed"] = int(after.flushed - before.flushed)
        return out


# --- Iozone (Figures 2-5) ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _iozone_offsets(test: str, file_bytes: int, record_bytes: int, seed: int) -> np.ndarray:
    return np.array([op[2] for op in iozone(test, file_bytes, record_bytes, rng=seed)], dtype=np.uint64)


def _level_time(p, system, served_bytes: dict, write: bool, random: bool, quick: bool, seed: int) -> float:
    return sum(b * seconds_per_byte(p, system, write, lv, random, quick, seed)
               for lv, b in served_bytes.items() if lv in LEVELS and b)


@functools.lru_cache(maxsize=512)
def iozone_run(p: Params, system: str, file_bytes: int, test: str, *, quick: bool = False, seed: int = 0) -> dict:
    """MB/s of one Iozone test on a file of ``file_bytes`` after Iozone's write pass; and which levels
    served its records."""
    rec = p.record_bytes
    h = Hierarchy(p, system, rec)
    w = _iozone_offsets("write", file_bytes, rec, seed) // rec
    wr = h.write(w)
    random = test.startswith("random")
    if test == "write":
        served = wr
    elif test in ("read", "random_read"):
        served = h.read(_iozone_offsets(test, file_bytes, rec, seed) // rec)
    elif test == "random_write":
        served = h.write(_iozone_offsets(test, file_bytes, rec, seed) // rec)
    else:
        raise ValueError(f"test must be write, read, random_read or random_write, got {test!r}")
    write = test in ("write", "random_write")
    served_bytes = {lv: served[lv] * rec for lv in LEVELS}
    seconds = _level_time(p, system, served_bytes, write, random, quick, seed)
    if write and served.get("flushed"):  # background cleaning bounds the run by the disks' busy time
        disk_s = served["flushed"] * rec * drain_seconds_per_byte(p, system, random, quick, seed)
        seconds = max(seconds, disk_s)
    out = {"MBps": file_bytes / seconds / MB}
    out.update({f"{lv}_share": served[lv] / max(1, sum(served[x] for x in LEVELS)) for lv in LEVELS})
    return out


def _sweep(p, sizes_mib, tests, quick, seed) -> pd.DataFrame:
    rows = []
    for mib in sizes_mib:
        row = {"file_size_MB": mib}
        for test in tests:
            for system in SYSTEMS:
                r = iozone_run(p, system, mib * MiB, test, quick=quick, seed=seed)
                suffix = "" if len(tests) == 1 else f"_{test.split('_')[-1]}"
                row[f"{system}{suffix}_MBps"] = r["MBps"]
        rows.append(row)
    return pd.DataFrame(rows).set_index("file_size_MB")


def _seed(rng) -> int:
    return int(make_rng(rng).integers(2**31))


def figure2(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Figure 2: Iozone sequential write of files larger than the NFS server's cache. Columns:
    nfs_MBps, panfs_MBps, panfs_over_nfs. Index: file size (MiB)."""
    p = params or Params()
    df = _sweep(p, LARGE_MIB, ("write",), quick, _seed(rng))
    df["panfs_over_nfs"] = df["panfs_MBps"] / df["nfs_MBps"]
    return df


def figure3(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Figure 3: Iozone sequential read of files larger than the NFS server's cache (after the write
    pass). Columns as Figure 2."""
    p = params or Params()
    df = _sweep(p, LARGE_MIB, ("read",), quick, _seed(rng))
    df["panfs_over_nfs"] = df["panfs_MBps"] / df["nfs_MBps"]
    return df


def figure4(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Figure 4: Iozone sequential read over file sizes from 64 MB to 4 GB. Columns: nfs_MBps, panfs_MBps."""
    p = params or Params()
    return _sweep(p, SMALL_MIB, ("read",), quick, _seed(rng))


def figure5(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Figure 5: Iozone random reads and writes from 64 MB to 2 GB. Columns: {nfs,panfs}_{read,write}_MBps."""
    p = params or Params()
    return _sweep(p, RANDOM_MIB, ("random_read", "random_write"), quick, _seed(rng))


def knee_MB(curve: pd.Series) -> float:
    """The first file size whose bandwidth is below half of the smallest file's (NaN if none)."""
    below = curve[curve < 0.5 * curve.iloc[0]]
    return float(below.index[0]) if len(below) else float("nan")


# --- PostMark (Figures 6-7) ----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=16)
def postmark_phases(files: int, transactions: int, lo: int, hi: int, block: int, page: int, seed: int) -> dict:
    """PostMark's operations (:func:`pysim.workloads.files.postmark`) split into its three phases (the pool's
    creation, the transactions, the deletion of what is left): counts, and the page keys
    (``file << 40 | page``) written and read."""
    if block != page:
        raise ValueError(f"PostMark's block ({block} B) must be the cache's page ({page} B)")
    cfg = PostMarkConfig(files=files, transactions=transactions, min_size=lo, max_size=hi, block_bytes=block)
    names = ("pool", "transactions", "deletion")
    creates, deletes = dict.fromkeys(names, 0), dict.fromkeys(names, 0)
    written = {n: [] for n in names}   # (file, first page, pages)
    read = {n: [] for n in names}
    bytes_w, bytes_r = dict.fromkeys(names, 0), dict.fromkeys(names, 0)
    phase, closes, done, size = "pool", 0, 0, {}
    for op in postmark(cfg, rng=seed):
        kind = op[0]
        if kind == "write":  # a created file's blocks, counted whole at its create
            continue
        if kind == "create":
            creates[phase] += 1
            size[op[1]] = op[2]
            written[phase].append((op[1], 0, -(-op[2] // page)))
            bytes_w[phase] += op[2]
        elif kind == "append":
            written[phase].append((op[1], size[op[1]] // page, 1))
            bytes_w[phase] += op[2]
            size[op[1]] += op[2]
        elif kind == "read":
            read[phase].append((op[1], op[2] // page, 1))
            bytes_r[phase] += op[3]
        elif kind == "delete":
            deletes[phase] += 1
        # a transaction ends with its create (at the close) or its delete
        if phase == "pool" and kind == "close":
            closes += 1
            if closes == files:
                phase = "transactions" if transactions else "deletion"
        elif phase == "transactions" and kind in ("close", "delete"):
            done += 1
            if done == transactions:
                phase = "deletion"
    return {n: {"creates": creates[n], "deletes": deletes[n], "write": _keys(written[n]), "read": _keys(read[n]),
                "bytes_w": bytes_w[n], "bytes_r": bytes_r[n]} for n in names}


def _keys(runs) -> np.ndarray:
    """Page keys of (file, first page, pages) runs, in order."""
    if not runs:
        return np.zeros(0, np.uint64)
    f, first, n = (np.array(x, dtype=np.int64) for x in zip(*runs))
    starts = np.repeat(np.cumsum(n) - n, n)
    pages = np.repeat(first, n) + np.arange(int(n.sum())) - starts
    return (np.repeat(f, n).astype(np.uint64) << np.uint64(40)) | pages.astype(np.uint64)


@functools.lru_cache(maxsize=256)
def file_request_s(p: Params, system: str, write: bool, level: str, nbytes: int, seed: int = 0) -> float:
    """Seconds of one request moving a whole small file of ``nbytes`` from (or to) ``level``, alone on the
    shelf (PostMark's single thread); the mean of a few at random places."""
    if level == "client":
        return nbytes * p.copy_ns_per_byte * ns + (p.panfs_hit_us * us if system == "panfs" else 0.0)
    shelf = Shelf(p, rng=seed)
    shelf.new_files = True
    sim, n = shelf.sim, 8
    out = {}

    def run():
        out["s"] = yield from shelf.stream(system, n, nbytes, write, level, True, 1)

    sim.process(run())
    sim.run()
    return out["s"] / n


def postmark_run(p: Params, system: str, files: int, *, quick: bool = False, seed: int = 0) -> dict:
    """One PostMark run: creates/s and deletes/s of its creation and deletion phases, read and write
    MB/s over the whole run. Files are written when closed (close-to-open) as one request of the mean
    file's size; the caches say which level each page reaches."""
    ph = postmark_phases(files, p.postmark_transactions, p.postmark_min_bytes, p.postmark_max_bytes,
                         p.postmark_block_bytes, p.page_bytes, seed)
    h = Hierarchy(p, system, p.page_bytes)
    pg = p.page_bytes
    mean_file = (p.postmark_min_bytes + p.postmark_max_bytes) // 2
    per_page = pg / mean_file  # a page's share of a mean file's request
    flush_page_s = random_write_s(p, mean_file, quick) * per_page
    times = {}
    for name in ("pool", "transactions", "deletion"):
        x = ph[name]
        t = (x["creates"] * (op_seconds(p, system, "create", seed) + op_seconds(p, system, "close", seed))
             + x["deletes"] * op_seconds(p, system, "remove", seed))
        disk_busy = 0.0
        if x["write"].size:
            keys = x["write"]
            if system == "panfs":  # a small file's RAID 5 stripe is its unit and a parity unit: two copies
                keys = np.concatenate([keys, keys | np.uint64(1 << 63)])
            w = h.write(keys, through=True)
            pages = {lv: w[lv] / (2 if system == "panfs" else 1) for lv in ("server", "osd", "disk")}
            t += sum(n * per_page * file_request_s(p, system, True, lv, mean_file, seed) for lv, n in pages.items())
            t += w["disk"] * flush_page_s  # dirty victims written in the foreground
            disk_busy = w["flushed"] * flush_page_s / (p.osds * p.disks_per_osd)
        if x["read"].size:
            r = h.read(x["read"])
            t += sum(r[lv] * per_page * file_request_s(p, system, False, lv, mean_file, seed) for lv in LEVELS)
        times[name] = max(t, disk_busy)  # background cleaning bounds a phase by the disks' busy time
    total = sum(times.values())
    bytes_r = sum(ph[n]["bytes_r"] for n in ph)
    bytes_w = sum(ph[n]["bytes_w"] for n in ph)
    return {"creates_per_s": ph["pool"]["creates"] / times["pool"],
            "deletes_per_s": ph["deletion"]["deletes"] / times["deletion"],
            "read_MBps": bytes_r / total / MB, "write_MBps": bytes_w / total / MB, "seconds": total}


@functools.lru_cache(maxsize=32)
def _postmark_table(p: Params, quick: bool, seed: int) -> pd.DataFrame:
    rows = []
    for n in POSTMARK_FILES:
        row = {"files": n}
        for system in SYSTEMS:
            r = postmark_run(p, system, n, quick=quick, seed=seed)
            for k in ("creates_per_s", "deletes_per_s", "read_MBps", "write_MBps"):
                row[f"{system}_{k}"] = r[k]
        rows.append(row)
    return pd.DataFrame(rows).set_index("files")


def figure6(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Figure 6: PostMark's creates and deletes per second at 1,000, 10,000 and 100,000 files."""
    t = _postmark_table(params or Params(), quick, _seed(rng))
    return t[[c for c in t.columns if c.endswith("_per_s")]].copy()


def figure7(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """Figure 7: PostMark's read and write bandwidth (MB/s over the run) at 1,000, 10,000 and 100,000 files."""
    t = _postmark_table(params or Params(), quick, _seed(rng))
    return t[[c for c in t.columns if c.endswith("_MBps")]].copy()


# --- §7's prose numbers ------------------------------------------------------------------------------------

def prose(params: Params | None = None, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """§7's numbers: PanFS's lowest and highest sustained bandwidth over Figures 2-3 (MB/s), the knee of
    sequential and random reads (the first file size at which NFS's bandwidth is below half its
    smallest file's, in GB of 2^30 bytes), and PanFS's PostMark bandwidth at 100,000 files over
    10,000 (reads and writes together). Columns: bandwidth_MBps, file_size_GB, ratio."""
    p = params or Params()
    f2, f3 = figure2(p, rng=rng, quick=quick), figure3(p, rng=rng, quick=quick)
    panfs = pd.concat([f2["panfs_MBps"], f3["panfs_MBps"]])
    f4, f5 = figure4(p, rng=rng, quick=quick), figure5(p, rng=rng, quick=quick)
    f7 = figure7(p, rng=rng, quick=quick)
    both = f7["panfs_read_MBps"] + f7["panfs_write_MBps"]
    nan = float("nan")
    rows = [
        ("PanFS large files, lowest", panfs.min(), nan, nan),
        ("PanFS large files, highest", panfs.max(), nan, nan),
        ("sequential read knee", nan, knee_MB(f4["nfs_MBps"]) / 1024, nan),
        ("random read knee", nan, knee_MB(f5["nfs_read_MBps"]) / 1024, nan),
        ("PanFS PostMark, 100,000 files over 10,000", nan, nan, both.loc[100_000] / both.loc[10_000]),
    ]
    return pd.DataFrame(rows, columns=["quantity", "bandwidth_MBps", "file_size_GB", "ratio"]).set_index("quantity")


# --- then vs now: this machine ---------------------------------------------------------------------------------

#: The measurement program, run by :func:`measure_now` with the lab's Python (it imports the lab's PostMark
#: generator). One experiment per invocation; one JSON object per line on stdout.
NOW_PROGRAM = r'''
import json, os, socket, struct, sys, tempfile, threading, time
from collections import deque
from multiprocessing import Process

CHUNK = 1 << 20


def emit(**row):
    print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)


def parse_args(tokens):
    """key=value arguments; a value with commas is a list of ints, a number an int, else text."""
    out = {}
    for t in tokens:
        k, v = t.split("=", 1)
        out[k] = [int(x) for x in v.split(",") if x] if "," in v else int(v) if v.lstrip("-").isdigit() else v
    return out


def drop(fd, off=0, n=0):
    os.posix_fadvise(fd, off, n, os.POSIX_FADV_DONTNEED)


def cliff(folder, budget_mb, sizes_mb):
    """Re-read the first S MB of a file with the page cache held to a budget: every chunk read is
    remembered, and the oldest is dropped (DONTNEED) once the budget is exceeded, as LRU would."""
    path = os.path.join(folder, "cliff.bin")
    top = max(sizes_mb)
    block = os.urandom(CHUNK)
    with open(path, "wb") as f:
        for _ in range(top):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead: a dropped chunk is read again, alone
    try:
        for size in sizes_mb:
            drop(fd)
            cached = deque()

            def scan():
                got = 0
                for k in range(size):
                    got += len(os.pread(fd, CHUNK, k * CHUNK))
                    cached.append(k)
                    if len(cached) > budget_mb:
                        old = cached.popleft()
                        drop(fd, old * CHUNK, CHUNK)
                return got

            scan()  # warm what the budget keeps
            best = 0.0
            for _ in range(3):  # the fastest of three passes: the machine is shared
                t0 = time.perf_counter()
                got = scan()
                best = max(best, got / (time.perf_counter() - t0))
            emit(experiment="cliff", size_MB=size, budget_MB=budget_mb, MBps=best / 1e6)
    finally:
        os.close(fd)
        os.unlink(path)


def recv_exact(sock, n):
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("peer closed")
        got += k
    return bytes(buf)


HDR = struct.Struct("!cQI")  # op, offset or id, length


def serve_forever(lsock, handler, *args):
    """Accept connections, each served by a thread of its own."""
    while True:
        conn, _ = lsock.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handler, args=(conn, *args), daemon=True).start()


def osd_server(lsock, store_mb):
    serve_forever(lsock, osd_conn, os.urandom(store_mb << 20))


def osd_conn(conn, data):
    """A storage process: 'R' reads length bytes at offset; 'W' takes length bytes; 'C' creates an object."""
    try:
        while True:
            op, off, n = HDR.unpack(recv_exact(conn, HDR.size))
            if op == b"R":
                off %= len(data) - n
                conn.sendall(struct.pack("!I", n) + data[off:off + n])
            elif op == b"W":
                recv_exact(conn, n)
                conn.sendall(struct.pack("!I", 0))
            else:
                conn.sendall(struct.pack("!I", 0))
    except (ConnectionError, struct.error):
        conn.close()


def proxy_server(lsock, osd_ports):
    serve_forever(lsock, proxy_conn, osd_ports)


def proxy_conn(conn, osd_ports):
    """The file server: metadata itself ('L' layout, 'C' create), data stored and forwarded to the OSDs."""
    osds = [socket.create_connection(("127.0.0.1", p)) for p in osd_ports]
    for s in osds:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        while True:
            op, off, n = HDR.unpack(recv_exact(conn, HDR.size))
            if op == b"L":
                body = json.dumps(osd_ports).encode()
                conn.sendall(struct.pack("!I", len(body)) + body)
                continue
            if op == b"C":
                conn.sendall(struct.pack("!I", 0))
                continue
            s = osds[(off // (64 << 10)) % len(osds)]
            if op == b"R":
                s.sendall(HDR.pack(b"R", off, n))
                (k,) = struct.unpack("!I", recv_exact(s, 4))
                payload = recv_exact(s, k)  # stored ...
                conn.sendall(struct.pack("!I", k) + payload)  # ... and forwarded
            else:
                payload = recv_exact(conn, n)
                s.sendall(HDR.pack(b"C", off, 0))
                recv_exact(s, 4)
                s.sendall(HDR.pack(b"W", off, n) + payload)
                recv_exact(s, 4)
                conn.sendall(struct.pack("!I", 0))
    except (ConnectionError, struct.error):
        conn.close()
        for s in osds:
            s.close()


def listen():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s, s.getsockname()[1]


def call(sock, op, off, n, payload=b""):
    sock.sendall(HDR.pack(op, off, n) + payload)
    (k,) = struct.unpack("!I", recv_exact(sock, 4))
    return recv_exact(sock, k) if k else b""


def proxy(n_osds, file_mb, unit_kb, files):
    procs, ports = [], []
    for _ in range(n_osds):
        ls, port = listen()
        procs.append(Process(target=osd_server, args=(ls, 64), daemon=True))
        ports.append(port)
    ls, pport = listen()
    procs.append(Process(target=proxy_server, args=(ls, ports), daemon=True))
    for p in procs:
        p.start()
    unit = unit_kb << 10
    try:
        server = socket.create_connection(("127.0.0.1", pport))
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        layout = json.loads(call(server, b"L", 0, 0))
        osds = [socket.create_connection(("127.0.0.1", p)) for p in layout]
        for s in osds:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        units = (file_mb << 20) // unit
        for path in ("in-band", "out-of-band"):
            for rnd in range(2):  # the first round warms up
                t0 = time.perf_counter()
                for k in range(units):
                    off = k * unit
                    if path == "in-band":
                        call(server, b"R", off, unit)
                    else:
                        call(osds[(off // (64 << 10)) % len(osds)], b"R", off, unit)
                dt = time.perf_counter() - t0
            emit(experiment="proxy", path=path, MBps=units * unit / dt / 1e6)
        payload = os.urandom(16 << 10)
        for n in files:
            for path in ("in-band", "out-of-band"):
                t0 = time.perf_counter()
                for k in range(n):
                    off = k * (64 << 10)
                    if path == "in-band":  # create and data in one exchange, forwarded by the server
                        call(server, b"W", off, len(payload), payload)
                    else:  # a create at the metadata server, then the data straight to an OSD
                        call(server, b"C", k, 0)
                        call(osds[k % len(osds)], b"W", off, len(payload), payload)
                dt = time.perf_counter() - t0
                emit(experiment="creates", path=path, files=n, per_s=n / dt)
    finally:
        for p in procs:
            p.terminate()
            p.join()


def postmark_fs(folder, files, transactions, seed):
    from pysim.workloads.files import PostMarkConfig, postmark
    cfg = PostMarkConfig(files=files, transactions=transactions, min_size=4096, max_size=32768, block_bytes=4096)
    root = os.path.join(folder, f"pm{files}")
    os.makedirs(root)
    fds, closes, done, phase = {}, 0, 0, "pool"
    t = {"pool": 0.0, "transactions": 0.0, "deletion": 0.0}
    nbytes = {"read": 0, "write": 0}
    block = b"x" * 4096
    count = {"pool": 0, "deletion": 0}
    start = time.perf_counter()
    for op in postmark(cfg, rng=seed):
        kind = op[0]
        name = os.path.join(root, str(op[1])) if kind != "mkdir" else None
        if kind == "create":
            fds[op[1]] = os.open(name, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
            if phase == "pool":
                count["pool"] += 1
        elif kind == "write":
            nbytes["write"] += os.write(fds[op[1]], block[:op[3]])
        elif kind == "close":
            os.close(fds.pop(op[1]))
        elif kind == "read":
            fd = os.open(name, os.O_RDONLY)
            nbytes["read"] += len(os.pread(fd, op[3], op[2]))
            os.close(fd)
        elif kind == "append":
            fd = os.open(name, os.O_WRONLY | os.O_APPEND)
            nbytes["write"] += os.write(fd, block[:op[2]])
            os.close(fd)
        elif kind == "delete":
            os.unlink(name)
            if phase == "deletion":
                count["deletion"] += 1
        if phase == "pool" and kind == "close":
            closes += 1
            if closes == files:
                now = time.perf_counter()
                t["pool"], start, phase = now - start, now, "transactions"
        elif phase == "transactions" and kind in ("close", "delete"):
            done += 1
            if done == transactions:
                now = time.perf_counter()
                t["transactions"], start, phase = now - start, now, "deletion"
    t["deletion"] = time.perf_counter() - start
    os.rmdir(root)
    total = sum(t.values())
    emit(experiment="postmark", files=files, creates_per_s=count["pool"] / t["pool"],
         deletes_per_s=count["deletion"] / max(t["deletion"], 1e-9), read_MBps=nbytes["read"] / total / 1e6,
         write_MBps=nbytes["write"] / total / 1e6, seconds=total)


if __name__ == "__main__":
    what, args = sys.argv[1], parse_args(sys.argv[2:])
    with tempfile.TemporaryDirectory(dir=args.pop("folder", None) or None) as folder:
        if what == "cliff":
            cliff(folder, args["budget_mb"], args["sizes_mb"])
        elif what == "proxy":
            proxy(args["osds"], args["file_mb"], args["unit_kb"], args["files"])
        else:
            postmark_fs(folder, args["files"], args["transactions"], args["seed"])
'''


def now_program() -> str:
    """The measurement program (:data:`NOW_PROGRAM`), written once into the harness's cache folder; its path."""
    return str(program_file("cmu05_palekar_now.py", NOW_PROGRAM))


def _run_now(python: str, what: str, args: dict) -> tuple:
    """Run one experiment of the program; (rows as dicts, why it could not run or "")."""
    argv = [f"{k}={','.join(map(str, v)) + ',' if isinstance(v, (list, tuple)) else v}"
            for k, v in args.items() if v is not None]
    r = run_command([python, now_program(), what, *argv], timeout_s=600)
    if not r.available or r.returncode != 0:
        return [], (r.reason or r.stderr.strip()[-300:] or f"exit {r.returncode}")
    rows = [dict(kv.split("=", 1) for kv in line.split()) for line in r.stdout.splitlines()
            if line.startswith("experiment=")]
    return [{k: parse_value(v) for k, v in row.items()} for row in rows], ""


@exclusive()
def measure_now(python: str, *, quick: bool = False, rng=0, folder: str | None = None) -> dict:
    """Run the three experiments on this machine; a DataFrame each (``cliff``, ``proxy``, ``creates``,
    ``postmark``), with a ``note`` attribute saying what was missing.

    * the page-cache cliff: a file re-read under a cache budget held with posix_fadvise(DONTNEED);
    * a store-and-forward proxy in front of storage processes against reading them directly (loopback);
    * PostMark's operations (the lab's generator, as ``postmark`` itself is not installed here) against
      the real file system, at growing file counts.
    """
    budget = 32 if quick else 256
    sizes = [budget // 4, budget // 2, budget - 4, budget + 4, 2 * budget] if quick else \
        [budget // 4, budget // 2, 3 * budget // 4, budget - 8, budget + 8, 3 * budget // 2, 2 * budget]
    out, notes = {}, []
    rows, why = _run_now(python, "cliff", {"budget_mb": budget, "sizes_mb": sizes, "folder": folder})
    out["cliff"] = pd.DataFrame(rows).set_index("size_MB") if rows else pd.DataFrame()
    if why:
        notes.append(f"cliff: {why}")
    rows, why = _run_now(python, "proxy", {"osds": 4, "file_mb": 16 if quick else 256, "unit_kb": 64,
                                           "files": [200, 1000] if quick else [1000, 10000]})
    if why:
        notes.append(f"proxy: {why}")
    df = pd.DataFrame(rows)
    out["proxy"] = df[df["experiment"] == "proxy"].set_index("path")[["MBps"]] if rows else pd.DataFrame()
    out["creates"] = (df[df["experiment"] == "creates"].pivot(index="files", columns="path", values="per_s")
                      if rows else pd.DataFrame())
    pm = []
    tool = run_command(["postmark"], input_text="quit\n", timeout_s=10)
    notes.append("postmark: " + ("installed, but the generator is what runs here (its settings are ours)"
                                 if tool.available else "not installed; the lab's PostMark generator runs instead"))
    for n in ((500, 2_000) if quick else POSTMARK_FILES):
        rows, why = _run_now(python, "postmark", {"files": n, "transactions": 200 if quick else 500, "seed": _seed(rng),
                                                  "folder": folder})
        if why:
            notes.append(f"postmark {n}: {why}")
        pm.extend(rows)
    out["postmark"] = pd.DataFrame(pm).set_index("files").drop(columns="experiment") if pm else pd.DataFrame()
    out["note"] = "; ".join(notes)
    return out
