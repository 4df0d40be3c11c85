"""Storage built from disks, on the engine: a disk with a queue, RAID-0 and RAID-5, an NVRAM cache.

Every device offers ``io(lba, sectors, write)``, a process to ``yield``
that ends when the request is done, so devices stack: a RAID-5 over disks,
an NVRAM write-back cache over the RAID.

* :class:`QueuedDisk` serves requests first come first served; each
  request's time comes from the C disk model (seek, rotation, zoned
  transfer, read-ahead buffer) when its service starts.
* :class:`Raid0` stripes ``stripe_sectors`` at a time over its members.
* :class:`Raid5` adds rotating parity: a write of a whole stripe writes
  every member once (parity computed from the new data); a smaller write is
  a read-modify-write (read old data and parity, then write both), so it
  costs four I/Os; a read touches only the data.
* :class:`NvramCache` acknowledges writes once they are in battery-backed
  memory and destages them to the device behind it when they exceed a
  threshold (or when asked); reads of cached blocks never reach the device.

:attr:`ios` counts the physical requests each device served, by kind.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from pysim.hw.disk import Disk, DiskSpec


class QueuedDisk:
    """A :class:`pysim.hw.disk.Disk` behind a FIFO queue on ``sim``: built from ``spec``, or a
    ``disk`` built before (building one fits its seek curve; its head position carries over)."""

    def __init__(self, sim, spec: DiskSpec | None = None, *, disk: Disk | None = None, name: str = "disk"):
        if (spec is None) == (disk is None):
            raise ValueError("give the disk's spec or a built Disk (built once, reused across runs), not both")
        self.sim, self.name = sim, name
        self.disk = disk if disk is not None else Disk(spec)
        self.arm = sim.resource(1)
        self.ios = {"read": 0, "write": 0}
        self.busy_s = 0.0

    @property
    def capacity_sectors(self) -> int:
        return self.disk.capacity_sectors

    def io(self, lba: int, sectors: int, write: bool = False):
        """Serve one request; yields until it is done (queueing included)."""
        if sectors < 1:
            raise ValueError(f"a request moves at least one sector, got {sectors!r}")
        with self.arm.request() as turn:
            yield turn
            service = self.disk.serve(self.sim.now, lba, sectors, write) - self.sim.now
            self.busy_s += service
            self.ios["write" if write else "read"] += 1
            yield self.sim.timeout(service)


class Raid0:
    """Striping without redundancy over ``members`` (devices with ``io``)."""

    def __init__(self, sim, members, stripe_sectors: int):
        if len(members) < 2:
            raise ValueError(f"a RAID-0 needs at least two members, got {len(members)}")
        if stripe_sectors < 1:
            raise ValueError(f"stripe_sectors must be >= 1, got {stripe_sectors!r}")
        self.sim, self.members, self.unit = sim, list(members), stripe_sectors

    @property
    def capacity_sectors(self) -> int:
        per = min(m.capacity_sectors for m in self.members) // self.unit * self.unit
        return per * len(self.members)

    def pieces(self, lba: int, sectors: int) -> list:
        """The request split per member: [(member, member lba, sectors)]. A member's units of
        consecutive rows are contiguous on it, so each member gets one piece."""
        out, n = {}, len(self.members)
        while sectors > 0:
            unit, off = divmod(lba, self.unit)
            take = min(sectors, self.unit - off)
            member = unit % n
            if member in out:
                out[member][1] += take
            else:
                out[member] = [unit // n * self.unit + off, take]
            lba += take
            sectors -= take
        return [(m, a, k) for m, (a, k) in out.items()]

    def io(self, lba: int, sectors: int, write: bool = False):
        if lba + sectors > self.capacity_sectors:
            raise ValueError(f"request [{lba}, {lba + sectors}) past the end of the array "
                             f"({self.capacity_sectors} sectors)")
        parts = [self.sim.process(self.members[m].io(mlba, n, write)) for m, mlba, n in self.pieces(lba, sectors)]
        yield self.sim.all_of(parts)


class Raid5:
    """Block-interleaved distributed parity (left-symmetric) over ``members``."""

    def __init__(self, sim, members, stripe_sectors: int):
        if len(members) < 3:
            raise ValueError(f"a RAID-5 needs at least three members, got {len(members)}")
        if stripe_sectors < 1:
            raise ValueError(f"stripe_sectors must be >= 1, got {stripe_sectors!r}")
        self.sim, self.members, self.unit = sim, list(members), stripe_sectors
        self.ios = {"small_writes": 0, "full_stripe_writes": 0, "reads": 0}

    @property
    def data_disks(self) -> int:
        return len(self.members) - 1

    @property
    def capacity_sectors(self) -> int:
        rows = min(m.capacity_sectors for m in self.members) // self.unit
        return rows * self.unit * self.data_disks

    def place(self, unit: int) -> tuple:
        """(stripe row, data member, parity member) of logical stripe unit ``unit``."""
        row, k = divmod(unit, self.data_disks)
        n = len(self.members)
        parity = (n - 1 - row) % n
        return row, (parity + 1 + k) % n, parity

    def io(self, lba: int, sectors: int, write: bool = False):
        if lba + sectors > self.capacity_sectors:
            raise ValueError(f"request [{lba}, {lba + sectors}) past the end of the array "
                             f"({self.capacity_sectors} sectors)")
        stripe = self.unit * self.data_disks
        jobs = []
        while sectors > 0:  # one stripe row at a time
            row_start = lba // stripe * stripe
            take = min(sectors, row_start + stripe - lba)
            jobs.append(self.sim.process(self._row(lba, take, write)))
            lba += take
            sectors -= take
        yield self.sim.all_of(jobs)

    def _row(self, lba: int, sectors: int, write: bool):
        stripe = self.unit * self.data_disks
        row, _, parity = self.place(lba // self.unit)
        pieces = []  # (member, member lba, sectors)
        while sectors > 0:
            unit, off = divmod(lba, self.unit)
            take = min(sectors, self.unit - off)
            _, member, _ = self.place(unit)
            pieces.append((member, row * self.unit + off, take))
            lba += take
            sectors -= take
        sim = self.sim
        if not write:
            self.ios["reads"] += 1
            yield sim.all_of([sim.process(self.members[m].io(a, n)) for m, a, n in pieces])
            return
        full = sum(n for _, _, n in pieces) == stripe
        span_lo = min(a for _, a, _ in pieces) - row * self.unit
        span = max(a + n for _, a, n in pieces) - row * self.unit - span_lo
        if full:  # parity from the new data alone: every member written once
            self.ios["full_stripe_writes"] += 1
        else:  # read-modify-write: old data and old parity first
            self.ios["small_writes"] += 1
            reads = [sim.process(self.members[m].io(a, n)) for m, a, n in pieces]
            reads.append(sim.process(self.members[parity].io(row * self.unit + span_lo, span)))
            yield sim.all_of(reads)
        writes = [sim.process(self.members[m].io(a, n, True)) for m, a, n in pieces]
        writes.append(sim.process(self.members[parity].io(row * self.unit + span_lo, span, True)))
        yield sim.all_of(writes)


class NvramCache:
    """Battery-backed write-back memory of ``capacity_sectors`` in front of ``device``.

    A write costs ``access_s`` plus ``per_sector_s`` per sector once it fits; while the cache
    holds more than ``destage_at`` of its capacity dirty, the oldest blocks are written to the
    device (``destage_sectors`` at a time), and a write that finds the cache full waits for room.
    """

    def __init__(self, sim, device, capacity_sectors: int, *, access_s: float, per_sector_s: float = 0.0,
                 destage_at: float = 0.5, destage_sectors: int = 64):
        if capacity_sectors < 1 or not 0 < destage_at <= 1 or destage_sectors < 1:
            raise ValueError("capacity_sectors and destage_sectors must be >= 1 and destage_at in (0, 1]")
        if access_s < 0 or per_sector_s < 0:
            raise ValueError("access_s and per_sector_s must be >= 0")
        self.sim, self.device = sim, device
        self.capacity, self.access_s, self.per_sector_s = capacity_sectors, access_s, per_sector_s
        self.destage_at, self.destage_sectors = destage_at, destage_sectors
        self.dirty = OrderedDict()  # lba -> sectors, oldest first
        self.used = 0
        self.room = sim.event()
        self.destaging = False
        self.waiting = 0
        self.stats = {"write_hits": 0, "read_hits": 0, "read_misses": 0, "full_waits": 0, "destaged": 0}

    @property
    def capacity_sectors(self) -> int:
        return self.device.capacity_sectors

    def io(self, lba: int, sectors: int, write: bool = False):
        sim = self.sim
        if not write:
            if self.dirty.get(lba, 0) >= sectors:
                self.stats["read_hits"] += 1
                yield sim.timeout(self.access_s + self.per_sector_s * sectors)
            else:
                self.stats["read_misses"] += 1
                yield sim.process(self.device.io(lba, sectors))
            return
        if sectors > self.capacity:
            yield sim.process(self.device.io(lba, sectors, True))  # too big to cache: straight through
            return
        while lba not in self.dirty and self.used + sectors > self.capacity:
            self.stats["full_waits"] += 1
            self.waiting += 1
            self._start_destage()
            yield self.room
            self.waiting -= 1
        if lba in self.dirty:
            self.stats["write_hits"] += 1
            self.used -= self.dirty.pop(lba)
        self.dirty[lba] = sectors
        self.used += sectors
        yield sim.timeout(self.access_s + self.per_sector_s * sectors)
        if self.used > self.destage_at * self.capacity:
            self._start_destage()

    def _start_destage(self):
        if not self.destaging:
            self.destaging = True
            self.sim.process(self._destage())

    def _destage(self):
        """Write the oldest blocks until half the threshold is left, or while writers wait for room."""
        low = self.destage_at * self.capacity / 2
        while self.dirty and (self.used > low or self.waiting):
            batch, n = [], 0
            while self.dirty and n < self.destage_sectors:
                lba, k = self.dirty.popitem(last=False)
                batch.append((lba, k))
                n += k
            yield self.sim.all_of([self.sim.process(self.device.io(lba, k, True)) for lba, k in batch])
            self.used -= n
            self.stats["destaged"] += n
            room, self.room = self.room, self.sim.event()
            room.succeed()
        self.destaging = False

    def flush(self):
        """Write every dirty block to the device (a process to yield)."""
        while self.dirty:
            lba, n = self.dirty.popitem(last=False)
            yield self.sim.process(self.device.io(lba, n, True))
            self.used -= n
            self.stats["destaged"] += n


def sequential_lbas(start: int, count: int, sectors: int) -> np.ndarray:
    """``count`` back-to-back requests of ``sectors`` sectors from ``start``."""
    return start + np.arange(count, dtype=np.int64) * sectors


class LogDevice:
    """A sequential log on ``device``: records appended at its tail, made durable by forced writes.

    ``group=False`` forces each commit with a write of its own, in turn. ``group=True`` lets the
    commits that arrive while a write is in flight (and for ``delay_s`` after the first of them)
    share the next write: group commit.
    """

    def __init__(self, sim, device, *, group: bool = True, delay_s: float = 0.0, sector_bytes: int = 512,
                 start_lba: int = 0):
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, got {delay_s!r}")
        self.sim, self.device, self.group, self.delay_s = sim, device, group, delay_s
        self.sector_bytes, self.tail = sector_bytes, start_lba
        self.pending, self.pending_bytes = [], 0
        self.writer = None
        self.turn = sim.resource(1)
        self.stats = {"commits": 0, "writes": 0, "bytes": 0}

    def _sectors(self, nbytes: int) -> int:
        return max(1, -(-nbytes // self.sector_bytes))

    def commit(self, nbytes: int):
        """Append ``nbytes`` and wait until they are on the device (a process to yield)."""
        if nbytes < 0:
            raise ValueError(f"nbytes must be >= 0, got {nbytes!r}")
        if not self.group:
            with self.turn.request() as t:
                yield t
                yield from self._write(nbytes)
            self.stats["commits"] += 1
            return
        done = self.sim.event()
        self.pending.append(done)
        self.pending_bytes += nbytes
        if self.writer is None:
            self.writer = self.sim.process(self._group_writer())
        yield done

    def _write(self, nbytes: int):
        sectors = self._sectors(nbytes)
        lba, self.tail = self.tail, self.tail + sectors
        yield self.sim.process(self.device.io(lba, sectors, True))
        self.stats["writes"] += 1
        self.stats["bytes"] += nbytes

    def _group_writer(self):
        while self.pending:
            if self.delay_s:
                yield self.sim.timeout(self.delay_s)
            batch, nbytes = self.pending, self.pending_bytes
            self.pending, self.pending_bytes = [], 0
            yield from self._write(nbytes)
            self.stats["commits"] += len(batch)
            for done in batch:
                done.succeed()
        self.writer = None

    @property
    def mean_group(self) -> float:
        """Commits made durable per forced write."""
        return self.stats["commits"] / self.stats["writes"] if self.stats["writes"] else float("nan")
