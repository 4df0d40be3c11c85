"""A write-ahead-logging buffer manager: what recoverable memory costs under three logging policies.

A :class:`BufferManager` keeps pages of a database in ``capacity_pages`` of
memory (LRU) and runs transactions over them (``begin``, ``write``,
``read``, ``commit``, ``abort``). It counts what each policy does, for a
model to price: log bytes and forced log writes, page reads and writes,
write faults, bytes copied and compared. Three policies, as recoverable
virtual memory systems implement them:

* ``"setrange"``: the program declares each range before writing it; the
  old values are kept in memory as undo, the new ones logged as redo at
  commit. Pages a running transaction modified stay in memory (no steal).
* ``"page"``: the first write to a page faults; the whole page is logged
  as undo then, and whole again as redo at commit. A modified page may be
  evicted (steal) once its undo is on the log (write-ahead).
* ``"diff"``: the first write faults and copies the page to a shadow; at
  commit each modified page is compared with its shadow and only the
  changed bytes are logged; evicting a modified page logs a reverse diff as
  undo first. Shadows take memory, so the data a transaction can touch
  without paging halves.

All three are no-force: commit forces the log, never the pages.

>>> bm = BufferManager(capacity_pages=100, page_bytes=8192, policy="page")
>>> bm.begin(); bm.write(3, 0, 8); bm.commit()
>>> bm.counts.log_bytes == 2 * (8192 + bm.record_header_bytes), bm.counts.log_forces
(True, 1)
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

POLICIES = ("setrange", "page", "diff")


@dataclass
class WalCounts:
    """Work done so far, by kind."""

    transactions: int = 0
    log_bytes: int = 0         # undo and redo records written to the log
    undo_bytes: int = 0
    redo_bytes: int = 0
    log_forces: int = 0        # synchronous log writes (commits, and write-ahead before a steal)
    page_reads: int = 0        # pages read from the database
    page_writes: int = 0       # pages written to the database (evictions of dirty pages)
    write_faults: int = 0      # first writes to a page in a transaction (page and diff policies)
    copy_bytes: int = 0        # bytes copied (undo values, shadows, shadows refreshed at commit)
    compare_bytes: int = 0     # bytes compared (diffing page against shadow)
    steals: int = 0            # pages of a running transaction written before it committed


def merge_ranges(ranges) -> list:
    """Sorted, merged [start, end) ranges."""
    out = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


class BufferManager:
    """Pages in memory over a database and a log, under one logging ``policy``."""

    def __init__(self, capacity_pages: int, page_bytes: int, policy: str, *, record_header_bytes: int = 32):
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if capacity_pages < 2 or page_bytes < 1 or record_header_bytes < 0:
            raise ValueError("capacity_pages must be >= 2, page_bytes >= 1 and record_header_bytes >= 0")
        self.capacity, self.page_bytes, self.policy = capacity_pages, page_bytes, policy
        self.record_header_bytes = record_header_bytes
        self.resident = OrderedDict()   # page -> dirty (LRU order, oldest first)
        self.shadows = 0                # shadow copies in memory (diff policy)
        self.active = None              # page -> list of written ranges, while a transaction runs
        self.unforced_undo = set()      # pages whose undo is in the log buffer, not yet on disk
        self.counts = WalCounts()

    # --- memory ---------------------------------------------------------------------------------
    def _used(self) -> int:
        return len(self.resident) + self.shadows

    def _evict_one(self):
        for page, dirty in self.resident.items():  # oldest first
            if self.active is not None and page in self.active:
                if self.policy == "setrange":
                    continue  # no steal
                self._steal(page)
            elif dirty:
                self.counts.page_writes += 1
            del self.resident[page]
            return
        raise MemoryError(f"every one of the {self.capacity} pages is held by the running transaction "
                          f"(setrange cannot steal): the transaction is too large for memory")

    def _steal(self, page):
        c = self.counts
        if self.policy == "diff":  # a reverse diff is the undo; then page and shadow go
            changed = sum(e - s for s, e in merge_ranges(self.active[page]))
            c.compare_bytes += 2 * self.page_bytes
            self._log(undo=changed + self.record_header_bytes)
            self.shadows -= 1
            self.active[page] = ["stolen"]
        if page in self.unforced_undo or self.policy == "diff":
            c.log_forces += 1  # write-ahead: the undo reaches the log before the page reaches the disk
            self.unforced_undo.clear()
        c.page_writes += 1
        c.steals += 1

    def _make_room(self, pages: int):
        while self._used() + pages > self.capacity:
            self._evict_one()

    def _touch(self, page: int, dirty: bool = False):
        if page in self.resident:
            self.resident.move_to_end(page)
            self.resident[page] = self.resident[page] or dirty
            return
        self._make_room(1)
        self.counts.page_reads += 1
        self.resident[page] = dirty

    def _log(self, *, undo: int = 0, redo: int = 0):
        self.counts.undo_bytes += undo
        self.counts.redo_bytes += redo
        self.counts.log_bytes += undo + redo

    # --- transactions --------------------------------------------------------------------------
    def begin(self):
        if self.active is not None:
            raise RuntimeError("a transaction is already running")
        self.active = {}

    def read(self, page: int):
        self._touch(page)

    def write(self, page: int, offset: int, nbytes: int):
        """Write ``nbytes`` at ``offset`` of ``page`` inside the running transaction."""
        if self.active is None:
            raise RuntimeError("write outside a transaction: call begin() first")
        if not (0 <= offset and nbytes >= 1 and offset + nbytes <= self.page_bytes):
            raise ValueError(f"write [{offset}, {offset + nbytes}) outside a {self.page_bytes}-byte page")
        c = self.counts
        first = page not in self.active or self.active[page] == ["stolen"]
        if first and self.policy == "diff":
            self._make_room(2)  # the page and its shadow
        self._touch(page, dirty=True)
        if first:
            ranges = self.active.setdefault(page, [])
            if ranges == ["stolen"]:
                ranges.clear()
            if self.policy == "page":
                c.write_faults += 1
                self._log(undo=self.page_bytes + self.record_header_bytes)
                self.unforced_undo.add(page)
            elif self.policy == "diff":
                c.write_faults += 1
                c.copy_bytes += self.page_bytes
                self.shadows += 1
        if self.policy == "setrange":
            c.copy_bytes += nbytes  # the old values, kept in memory as undo
        self.active[page].append((offset, offset + nbytes))

    def commit(self):
        if self.active is None:
            raise RuntimeError("commit without a transaction")
        c = self.counts
        for page, ranges in self.active.items():
            live = [r for r in ranges if r != "stolen"]
            if self.policy == "setrange":
                for s, e in merge_ranges(live):
                    self._log(redo=e - s + self.record_header_bytes)
            elif self.policy == "page":
                self._log(redo=self.page_bytes + self.record_header_bytes)
            else:
                if page in self.resident and live:
                    c.compare_bytes += 2 * self.page_bytes
                    changed = sum(e - s for s, e in merge_ranges(live))
                    self._log(redo=changed + self.record_header_bytes)
                    c.copy_bytes += self.page_bytes  # the shadow takes the new contents, then goes
                    self.shadows -= 1
        c.log_forces += 1
        c.transactions += 1
        self.unforced_undo.clear()
        self.active = None

    def abort(self):
        """Undo the running transaction from its undo records (its pages are restored in memory)."""
        if self.active is None:
            raise RuntimeError("abort without a transaction")
        if self.policy == "diff":
            self.shadows -= sum(1 for r in self.active.values() if r != ["stolen"])
        self.active = None
        self.unforced_undo.clear()


class RecoverableStore:
    """A write-ahead-logged store with real contents, for testing recovery: steal and no-force.

    Pages of ``page_bytes`` live on a disk (a dict) and in ``capacity_pages`` of memory (LRU). A
    write logs the bytes' before and after images; commit appends a commit record and forces the
    log. A dirty page may be evicted while its transaction runs (steal), but only after the log is
    forced up to the last record that touched it (write-ahead). :meth:`crash` loses memory and the
    log's unforced tail; :meth:`recover` redoes every logged write in order, then undoes, newest
    first, those of transactions with no commit record, as ARIES's redo and undo passes do.
    """

    def __init__(self, capacity_pages: int, page_bytes: int):
        if capacity_pages < 1 or page_bytes < 1:
            raise ValueError("capacity_pages and page_bytes must be >= 1")
        self.capacity, self.page_bytes = capacity_pages, page_bytes
        self.disk, self.memory = {}, OrderedDict()  # page -> bytearray; memory page -> [data, dirty, last lsn]
        self.log, self.forced = [], 0               # records; how many are on disk
        self.txn, self.next_txn = None, 0

    def _page(self, page):
        if page in self.memory:
            self.memory.move_to_end(page)
        else:
            while len(self.memory) >= self.capacity:
                self._evict()
            data = bytearray(self.disk.get(page, bytes(self.page_bytes)))
            self.memory[page] = [data, False, -1]
        return self.memory[page]

    def _evict(self):
        page, (data, dirty, lsn) = next(iter(self.memory.items()))
        if dirty:
            self.force(upto=lsn + 1)  # write-ahead: the page's log records reach the disk first
            self.disk[page] = bytes(data)
        del self.memory[page]

    def force(self, upto: int | None = None):
        self.forced = max(self.forced, len(self.log) if upto is None else upto)

    def begin(self) -> int:
        if self.txn is not None:
            raise RuntimeError("a transaction is already running")
        self.txn, self.next_txn = self.next_txn, self.next_txn + 1
        return self.txn

    def write(self, page: int, offset: int, data: bytes):
        if self.txn is None:
            raise RuntimeError("write outside a transaction")
        if offset < 0 or offset + len(data) > self.page_bytes:
            raise ValueError(f"write [{offset}, {offset + len(data)}) outside a {self.page_bytes}-byte page")
        frame = self._page(page)
        before = bytes(frame[0][offset:offset + len(data)])
        self.log.append(("write", self.txn, page, offset, before, bytes(data)))
        frame[0][offset:offset + len(data)] = data
        frame[1], frame[2] = True, len(self.log) - 1

    def read(self, page: int) -> bytes:
        return bytes(self._page(page)[0])

    def commit(self):
        if self.txn is None:
            raise RuntimeError("commit without a transaction")
        self.log.append(("commit", self.txn))
        self.force()  # no-force for pages, force for the log
        self.txn = None

    def crash(self):
        """Lose memory, the running transaction and whatever of the log was not forced."""
        self.memory.clear()
        del self.log[self.forced:]
        self.txn = None

    def recover(self):
        committed = {r[1] for r in self.log if r[0] == "commit"}
        writes = [r for r in self.log if r[0] == "write"]
        for _, _, page, offset, _, after in writes:  # redo, oldest first
            data = bytearray(self.disk.get(page, bytes(self.page_bytes)))
            data[offset:offset + len(after)] = after
            self.disk[page] = bytes(data)
        for _, txn, page, offset, before, _ in reversed(writes):  # undo the losers, newest first
            if txn not in committed:
                data = bytearray(self.disk[page])
                data[offset:offset + len(before)] = before
                self.disk[page] = bytes(data)
        self.log.append(("end-of-recovery",))
        self.force()
