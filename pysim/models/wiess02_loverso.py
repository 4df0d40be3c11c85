"""Tree houses and real houses: research and commercial software (LoVerso & Seltzer, WIESS 2002).

An experience report on Berkeley DB with no measured result: no table, no
figure, no experiment. What the lab regenerates is a companion to the two
technical mechanisms the paper describes in enough detail to rebuild, each
judged by the paper's own sentences about it:

* ``layout`` (§8): a Berkeley DB page is a header, an index array growing
  forward and item data growing backward from the page's end; checksums and
  encryption need a per-page area of IV and checksum. Per page size, the
  bytes left for items, the share of the page the area takes, where the
  index array starts and where the data ends in the adopted design (area
  after the header) and the rejected one (area at the page's end), and what
  the area costs a B-tree of small records: fan-out, leaf capacity, pages and
  levels, through the shared :mod:`pysim.sw.btree` layout model. Items are
  Berkeley DB's: a key and a data item per record, each with its own index
  slot and a 3-byte header, aligned to 4 bytes; interior items carry a
  12-byte header with the child's page number.
* ``starvation`` (§9): database tasks and a checkpoint task on one CPU
  (the shared :mod:`pysim.sw.sched` scheduler, with its ``StrictPriority``,
  ``RoundRobin`` and ``DecayUsage`` policies). The checkpoint flushes dirty
  buffers: it marks a buffer "I/O in progress", issues the write, and needs
  the CPU again to complete it and clear the mark. A database task that
  wants a marked buffer applies the 1997 fix: it releases its locks, gives
  up the CPU and retries. Under equal priorities the checkpoint gets its
  turn; under strict priority it runs only when no database task is
  runnable, so it finishes when the system is lightly loaded and never when
  the database tasks keep the CPU busy. Outputs: how long a buffer stays
  marked (the longest, including one still marked at the end), checkpoints
  completed, the database's operations per second and the CPU burnt in
  retries, by policy and offered load.

First principles: page arithmetic and B-tree shape; a discrete-event
uniprocessor scheduler with clock ticks and wake-up preemption. Nothing is
calibrated. The paper's 25-byte header and 36-byte crypto area are taken as
given (``INPUTS``); there is no published number to predict, so the
artifacts are judged by their claims. Every cost and load of the starvation
companion is assumed, each with its reason (``Params``).

Each task's next phase is decided when the last one ends (the shared
scheduler's ``Task.decide``), which a buffer flag needs; priority
inheritance is done by raising the checkpoint task's ``priority`` while a
database task waits on its buffer.

Not reproduced: the organisational numbers (200,000 lines, ten engineers,
3000 lines of portability layer, 1300 lines of Autoconf, 40,000 lines of Tcl
at 70% coverage, three staff-months of rewrite) and the self-blocking mutex
bug (a C precedence error, not a quantity). See papers/wiess02_loverso/paper.yaml.

Then vs now (:func:`measure_sqlite`, :func:`sqlite_now`): Berkeley DB's
utilities and Python bindings are not installable here, so the B-trees are
SQLite's, built with the ``sqlite3`` command-line shell at page sizes from
512 B to 8 KB with and without a reserved area per page (SQLite's
``reserve_bytes``: the space its checksum VFS and encryption extensions
use, placed at the page's end, the design Berkeley DB rejected), their pages
and depth read from the ``dbstat`` table, beside the shared layout model in
SQLite's format.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.harness.runners import cache_dir
from pysim.models import Counterfactual, Inputs
from pysim.params import ModelParams, assumed, given, stated
from pysim.rng import make_rng
from pysim.sw.btree import PageLayout, shape
from pysim.sw.sched import DecayUsage, RoundRobin, Scheduler, StrictPriority, Task
from pysim.harness.exclusive import one_core

POLICIES = ("strict priority", "equal priority", "time-sharing")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Sizes in bytes, times in seconds."""

    # §8: the page
    header_bytes: int = given(25, "layout[512, header_bytes]: §8, 'a collection of header information (25 bytes)'")
    crypto_bytes: int = given(36, "layout[512, crypto_bytes]: §8, '36 bytes of crypto initialization vectors (IV) "
                                  "and checksum data on each page'", ge=0)
    page_sizes: tuple = assumed((512, 1024, 2048, 4096, 8192), "§8 names the 512-byte page; Berkeley DB pages are "
                                                                "powers of two from 512 B to 64 KB, and 8 KB covers "
                                                                "the common ones")
    slot_bytes: int = assumed(2, "Berkeley DB's page index entries are 16-bit offsets (db_indx_t)")
    item_header_bytes: int = assumed(3, "a leaf item (BKEYDATA): a 2-byte length and a 1-byte type before the bytes")
    interior_header_bytes: int = assumed(12, "an interior item (BINTERNAL): length, type, padding, the child's "
                                             "4-byte page number and a 4-byte record count")
    align_bytes: int = assumed(4, "items are aligned to 4 bytes on the page")
    records: int = assumed(1_000_000, "a million small records: an embedded database's table", ge=1)
    key_bytes: int = assumed(8, "an 8-byte key (an integer or short identifier)", ge=1)
    data_bytes: int = assumed(32, "a 32-byte record, small enough that many share a 512-byte page", ge=1)
    fill: float = assumed(1.0, "pages filled by a sorted load (db_load); random inserts leave about 69%", gt=0, le=1)
    # §9: the tasks
    db_tasks: int = assumed(4, "§9: 'several equal priority tasks performed database operations'", ge=1)
    db_priority: int = assumed(1, "§9: the database tasks run above the checkpoint task", ge=0)
    checkpoint_priority: int = assumed(0, "§9: 'a lower priority task performed checkpoints'", ge=0)
    checkpoint_nice: int = assumed(10, "time-sharing: the checkpoint task niced down, the nearest to a lower priority "
                                       "a UNIX scheduler offers", ge=0)
    op_cpu_s: float = assumed(1e-3, "one database operation: a B-tree descent, a few pages latched, ~1 ms of a 2002 "
                                    "embedded CPU")
    pages_per_op: int = assumed(3, "a descent touches the root, an interior page and a leaf", ge=1)
    buffer_pages: int = assumed(64, "the hot part of the buffer pool, the pages operations compete for", ge=2)
    zipf_alpha: float = assumed(0.8, "skewed page popularity: upper levels and hot leaves", ge=0)
    write_fraction: float = assumed(0.3, "share of touched pages an operation dirties (updates)", ge=0, le=1)
    loads: tuple = assumed((0.2, 0.5, 0.8, 1.2, 2.0), "offered database CPU load (sum over the tasks of CPU "
                                                             "per operation over operation plus think time); above 1 "
                                                             "the tasks want more CPU than there is")
    checkpoint_interval_s: float = assumed(1.0, "a checkpoint a second, as an application thread calling "
                                                "txn_checkpoint on a timer would")
    issue_cpu_s: float = assumed(2e-4, "find the dirty buffer, mark it, call write(): 0.2 ms")
    write_s: float = assumed(5e-3, "a page write to a 2002 disk or flash device: 5 ms")
    finish_cpu_s: float = assumed(2e-4, "complete the write and clear the mark: 0.2 ms")
    spin_cpu_s: float = assumed(2e-4, "a retry: release the locks, yield, reacquire, look at the buffer again: "
                                      "0.2 ms (longer than a fast RTOS needs, which only coarsens the retry loop)")
    yield_sleep_s: float = assumed(0.01, "the 'sleep' retry: Berkeley DB's __os_yield slept (select() with a short "
                                         "timeout, a tick on a 2002 kernel); the 'sched_yield' retry stays runnable")
    tick_s: float = assumed(0.01, "a 100 Hz clock tick: preemption by a woken task waits for it", gt=0)
    quantum_s: float = assumed(0.01, "round-robin quantum under equal priorities: one tick")
    horizon_s: float = assumed(20.0, "simulated seconds per run: twenty checkpoints")
    quick_horizon_s: float = assumed(4.0, "the quick profile's run: four checkpoints")
    # the mechanisms, as switches
    yield_fix: bool = stated(True, "§9: 'the database task, seeing that I/O was in progress, released all of its "
                                   "locks and relinquished the CPU' (the 1997 fix)")
    priority_inheritance: bool = assumed(False, "not in the paper: the remedy a real-time OS offers (the writer "
                                                "inherits the priority of a task waiting on its buffer)")

    def __post_init__(self):
        super().__post_init__()
        if not self.page_sizes or any(int(p) != p or p < 512 or p & (p - 1) for p in self.page_sizes):
            raise ValueError(f"page_sizes must be powers of two >= 512, got {self.page_sizes!r}")
        if not self.loads or any(not (x > 0) for x in self.loads):
            raise ValueError(f"loads must be offered loads > 0, got {self.loads!r}")
        if self.db_priority < self.checkpoint_priority:
            raise ValueError(f"db_priority must be >= checkpoint_priority ({self.checkpoint_priority}), "
                             f"got {self.db_priority!r}")


CALIBRATION = ()
INPUTS = (
    Inputs(("header_bytes", "crypto_bytes"), (("layout", "512", "header_bytes"), ("layout", "512", "crypto_bytes")),
           "§8's page header and crypto area, design constants the page arithmetic takes as given"),
)
COUNTERFACTUALS = (
    Counterfactual("no-yield-fix", {"yield_fix": False},
                   "the code before the 1997 fix: a task that finds the buffer marked waits holding its locks, "
                   "among them the one the checkpoint needs to complete the write"),
    Counterfactual("equal-priorities", {"checkpoint_priority": 1},
                   "the checkpoint task at the database tasks' priority (§9: 'competing tasks ... of equal "
                   "priority'), under every policy"),
    Counterfactual("priority-inheritance", {"priority_inheritance": True},
                   "the checkpoint inherits the priority of a task waiting on its buffer until the write completes"),
    Counterfactual("checksum-only", {"crypto_bytes": 4},
                   "a 4-byte CRC per page in place of the 36-byte IV and HMAC: a per-page area the paper rules out "
                   "for encryption"),
)


# --- §8: the page and the tree ------------------------------------------------------------------------

def _aligned(n: int, p: Params) -> int:
    return -(-n // p.align_bytes) * p.align_bytes


def page_layout(p: Params, page_bytes: int, crypto: bool) -> PageLayout:
    """The page of ``page_bytes`` as the shared layout model sees it: the header (and the crypto area after
    it, in the adopted design) before the index array. Item sizes are passed whole (see :func:`tree`)."""
    return PageLayout(page_bytes=page_bytes, header_bytes=p.header_bytes + (p.crypto_bytes if crypto else 0),
                      slot_bytes=p.slot_bytes, pointer_bytes=0, fill=p.fill)


def tree(p: Params, page_bytes: int, crypto: bool):
    """(fan-out, records per leaf, Shape) of the B-tree of ``p.records`` records. A leaf record is a key item
    and a data item, each aligned with its header and each with an index slot (the second slot rides in the
    key's size); an interior entry is a BINTERNAL item holding the key and the child's page number."""
    lay = page_layout(p, page_bytes, crypto)
    key_item = _aligned(p.item_header_bytes + p.key_bytes, p) + p.slot_bytes
    data_item = _aligned(p.item_header_bytes + p.data_bytes, p)
    interior = _aligned(p.interior_header_bytes + p.key_bytes, p)
    return (lay.fanout(interior), lay.leaf_capacity(key_item, data_item),
            shape(lay, p.records, key_bytes=key_item, value_bytes=data_item))


def layout(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§8's page, per page size: with and without the crypto area.

    Index: page_bytes. Columns: header_bytes, crypto_bytes, usable_bytes, usable_crypto_bytes (after header
    and area), crypto_pct_of_page, crypto_pct_of_usable (of the bytes after the header), index_offset,
    index_offset_adopted (the area after the header moves the index array), data_end_rejected (the area at
    the page's end moves the end of the data), fanout, fanout_crypto, leaf_records, leaf_records_crypto,
    pages, pages_crypto, extra_pages_pct, levels, levels_crypto (for ``records`` records).
    """
    p = params or Params()
    rows = []
    for size in p.page_sizes:
        fan, leaf, sh = tree(p, size, False)
        fan_c, leaf_c, sh_c = tree(p, size, True)
        usable = size - p.header_bytes
        rows.append({"page_bytes": size, "header_bytes": p.header_bytes, "crypto_bytes": p.crypto_bytes,
                     "usable_bytes": usable, "usable_crypto_bytes": usable - p.crypto_bytes,
                     "crypto_pct_of_page": 100.0 * p.crypto_bytes / size,
                     "crypto_pct_of_usable": 100.0 * p.crypto_bytes / usable,
                     "index_offset": p.header_bytes, "index_offset_adopted": p.header_bytes + p.crypto_bytes,
                     "data_end_rejected": size - p.crypto_bytes,
                     "fanout": fan, "fanout_crypto": fan_c, "leaf_records": leaf, "leaf_records_crypto": leaf_c,
                     "pages": sh.pages, "pages_crypto": sh_c.pages,
                     "extra_pages_pct": 100.0 * (sh_c.pages / sh.pages - 1),
                     "levels": sh.levels, "levels_crypto": sh_c.levels})
    return pd.DataFrame(rows).set_index("page_bytes")


# --- §9: the checkpoint and the database tasks -------------------------------------------------------

class BufferPool:
    """The shared state: which pages are dirty, which one the checkpoint has marked, who waits on it."""

    def __init__(self, p: Params):
        self.p = p
        self.dirty = set()
        self.marked = None          # page number under I/O, or None
        self.marked_at = 0.0
        self.waiters = set()        # database tasks retrying on the marked page
        self.holds = []             # seconds each mark lasted
        self.waiter_locks = False   # a waiter holds the lock the checkpoint needs (before the 1997 fix)


class DatabaseTask:
    """One database task: an operation on a few pages, then think; a marked page means a retry."""

    def __init__(self, name: str, p: Params, pool: BufferPool, think_mean_s: float, g: np.random.Generator,
                 popularity: np.ndarray, checkpoint: "CheckpointTask", yield_sleep_s: float):
        self.name, self.p, self.pool, self.g, self.yield_sleep_s = name, p, pool, g, yield_sleep_s
        self.think_mean_s, self.popularity, self.checkpoint = think_mean_s, popularity, checkpoint
        # Generator.choice(n, k, p=...) draws k uniforms and searches this same CDF; building it once per
        # task instead of once per operation gives the same pages from the same stream, faster
        self._cdf = popularity.cumsum()
        self._cdf /= self._cdf[-1]
        self.state, self.pages = "think", ()
        self.ops, self.retries = 0, 0

    def first_phase(self):
        return ("sleep", float(self.g.exponential(self.think_mean_s)) + 1e-6)

    def _try(self, now):
        pool = self.pool
        if pool.marked is not None and pool.marked in self.pages:
            self.retries += 1
            pool.waiters.add(self.name)
            if not self.p.yield_fix:
                pool.waiter_locks = True
            if self.p.priority_inheritance:
                self.checkpoint.task.priority = max(self.checkpoint.task.priority, self.p.db_priority)
            self.state = "spin"
            return ("cpu", self.p.spin_cpu_s)
        pool.waiters.discard(self.name)
        self.state = "op"
        return ("cpu", self.p.op_cpu_s)

    def next_phase(self, now):
        if self.state == "think":      # a new operation: draw its pages
            self.pages = tuple(self._cdf.searchsorted(self.g.random(self.p.pages_per_op), side="right").tolist())
            return self._try(now)
        if self.state == "op":         # done: dirty some pages, think
            self.ops += 1
            for page in self.pages:
                if self.g.random() < self.p.write_fraction:
                    self.pool.dirty.add(page)
            self.state = "think"
            return ("sleep", float(self.g.exponential(self.think_mean_s)) + 1e-6)
        if self.state == "spin":       # the 1997 fix: give up the CPU (a short sleep, or sched_yield), retry
            if self.p.yield_fix and self.yield_sleep_s > 0:
                self.state = "yielded"
                return ("sleep", self.yield_sleep_s)
            return self._try(now)      # the next CPU phase queues behind its equals: sched_yield
        if self.state == "yielded":
            return self._try(now)
        raise AssertionError(self.state)


class CheckpointTask:
    """Every interval, flush the pages dirty at its start: mark, write, complete and clear the mark."""

    def __init__(self, p: Params, pool: BufferPool):
        self.p, self.pool, self.task, self.base_priority = p, pool, None, p.checkpoint_priority
        self.state, self.todo, self.started_at = "idle", [], 0.0
        self.done, self.durations = 0, []

    def first_phase(self):
        return ("sleep", self.p.checkpoint_interval_s)

    def _next_page(self, now):
        if not self.todo:
            self.done += 1
            self.durations.append(now - self.started_at)
            self.state = "idle"
            return ("sleep", max(self.started_at + self.p.checkpoint_interval_s - now, 1e-6))
        self.state = "issue"
        return ("cpu", self.p.issue_cpu_s)

    def next_phase(self, now):
        pool = self.pool
        if self.state == "idle":
            self.started_at, self.todo = now, sorted(pool.dirty)
            return self._next_page(now)
        if self.state == "issue":      # the buffer is marked and the write is in flight
            page = self.todo.pop(0)
            pool.dirty.discard(page)
            pool.marked, pool.marked_at = page, now
            self.state = "write"
            return ("io", self.p.write_s)
        if self.state in ("write", "blocked"):
            if pool.waiter_locks:      # a waiter holds the lock that completing the write needs
                self.state = "blocked"
                return ("sleep", self.p.tick_s)
            self.state = "finish"
            return ("cpu", self.p.finish_cpu_s)
        if self.state == "finish":     # the write is complete: clear the mark
            pool.holds.append(now - pool.marked_at)
            pool.marked, pool.waiters = None, set()
            self.task.priority = self.base_priority
            return self._next_page(now)
        raise AssertionError(self.state)


def _policy(p: Params, policy: str):
    if policy == "strict priority":
        return StrictPriority()
    if policy == "equal priority":
        return RoundRobin(p.quantum_s)
    if policy == "time-sharing":
        return DecayUsage(quantum_s=10 * p.tick_s, tick_s=p.tick_s)
    raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")


def zipf_popularity(n: int, alpha: float) -> np.ndarray:
    """Zipf(alpha) probabilities over ``n`` pages, the first the most popular."""
    w = 1.0 / np.arange(1, n + 1) ** alpha
    return w / w.sum()


YIELDS = ("sleep", "sched_yield")


def run_checkpoints(p: Params, policy: str, load: float, *, yield_kind: str = "sleep", horizon_s: float,
                    rng=0) -> dict:
    """One run: ``p.db_tasks`` database tasks offering ``load`` of the CPU and the checkpoint task, under
    ``policy``, for ``horizon_s`` simulated seconds; a task that finds its page marked retries after a
    sleep of ``p.yield_sleep_s`` (``yield_kind`` 'sleep') or at once behind its equals ('sched_yield'). Returns the marks' hold times, checkpoints done,
    operations, retries and CPU time by task kind."""
    if not load > 0:
        raise ValueError(f"load must be > 0, got {load!r}")
    if yield_kind not in YIELDS:
        raise ValueError(f"yield_kind must be one of {', '.join(YIELDS)}, got {yield_kind!r}")
    if not horizon_s > 0:
        raise ValueError(f"horizon_s must be > 0, got {horizon_s!r}")
    sim = Simulation()
    pool = BufferPool(p)
    ckpt = CheckpointTask(p, pool)
    streams = make_rng(rng).spawn(p.db_tasks)
    # offered load = tasks x op / (op + think)
    think_mean_s = max(p.db_tasks * p.op_cpu_s / load - p.op_cpu_s, 0.0)
    popularity = zipf_popularity(p.buffer_pages, p.zipf_alpha)
    sleep_s = p.yield_sleep_s if yield_kind == "sleep" else 0.0
    dbs = [DatabaseTask(f"db{k}", p, pool, think_mean_s, streams[k], popularity, ckpt, sleep_s)
           for k in range(p.db_tasks)]
    sched = Scheduler(sim, _policy(p, policy), tick_s=p.tick_s)
    equal = policy != "strict priority"
    # under equal priorities the checkpoint runs at the database tasks' level
    ckpt.base_priority = p.db_priority if equal else p.checkpoint_priority
    ckpt.task = sched.add(Task("checkpoint", [ckpt.first_phase()], priority=ckpt.base_priority,
                               nice=p.checkpoint_nice if policy == "time-sharing" else 0, decide=ckpt.next_phase))
    for a in dbs:
        sched.add(Task(a.name, [a.first_phase()], priority=p.db_priority, decide=a.next_phase))
    sim.run(until=horizon_s)
    holds = list(pool.holds)
    if pool.marked is not None:
        holds.append(horizon_s - pool.marked_at)
    cpu = {t.name: t.cpu_s for t in sched.tasks}
    spin_s = sum(a.retries for a in dbs) * p.spin_cpu_s
    return {"holds": holds, "checkpoints": ckpt.done, "ops": sum(a.ops for a in dbs),
            "retries": sum(a.retries for a in dbs), "spin_s": spin_s,
            "db_cpu_s": sum(cpu[a.name] for a in dbs), "checkpoint_cpu_s": cpu["checkpoint"],
            "marked_at_end": pool.marked is not None}


def starvation(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§9's checkpoint against the database tasks, by scheduling policy, kind of retry and offered load.

    Index: (policy, retry, load); retry is 'sleep' (give up the CPU for ``yield_sleep_s``) or 'sched_yield'
    (stay runnable behind one's equals). Columns: horizon_s, checkpoints (completed), longest_hold_s (the
    longest a buffer stayed marked, one still marked at the end counted to the end), mean_hold_ms,
    marked_at_end (1 if a buffer was still marked at the end), db_ops_per_s, retries_per_s, retry_cpu_pct,
    checkpoint_cpu_pct.
    """
    p = params or Params()
    horizon = p.quick_horizon_s if quick else p.horizon_s
    grid = [(a, b, c) for a in POLICIES for b in YIELDS for c in p.loads]
    seeds = make_rng(rng).spawn(len(grid))
    rows = []
    for (policy, kind, load), seed in zip(grid, seeds):
        r = run_checkpoints(p, policy, load, yield_kind=kind, horizon_s=horizon, rng=seed)
        holds = r["holds"]
        rows.append({"policy": policy, "retry": kind, "load": float(load), "horizon_s": horizon,
                     "checkpoints": r["checkpoints"],
                     "longest_hold_s": max(holds) if holds else 0.0,
                     "mean_hold_ms": 1e3 * float(np.mean(holds)) if holds else 0.0,
                     "marked_at_end": int(r["marked_at_end"]),
                     "db_ops_per_s": r["ops"] / horizon, "retries_per_s": r["retries"] / horizon,
                     "retry_cpu_pct": 100.0 * r["spin_s"] / horizon,
                     "checkpoint_cpu_pct": 100.0 * r["checkpoint_cpu_s"] / horizon})
    return pd.DataFrame(rows).set_index(["policy", "retry", "load"]).sort_index()


# --- then vs now: SQLite's B-trees with and without a reserved area per page ----------------------------

#: SQLite's reserved bytes per page: none, its checksum VFS's 8-byte checksum, and §8's 36 bytes.
RESERVES = (0, 8, 36)
SQLITE_ROWID0 = 2 ** 14  # rowids from 2**14 on take three bytes as varints
SQLITE_MIN_USABLE = 480  # SQLite's file format: page size less reserved bytes may not fall below 480


def _varint(n: int) -> int:
    return 1 if n < 128 else 2 if n < 16384 else 3


def sqlite_layout(page_bytes: int, reserve_bytes: int) -> PageLayout:
    """An SQLite table page in the shared layout model: an 8-byte leaf header, 2-byte cell pointers, 4-byte
    child pointers, the reserved bytes at the page's end."""
    return PageLayout(page_bytes=page_bytes, header_bytes=8, slot_bytes=2, pointer_bytes=4,
                      trailer_bytes=reserve_bytes)


def sqlite_model(page_bytes: int, reserve_bytes: int, rows: int, payload: int):
    """The shared layout model's Shape of an SQLite table of ``rows`` rows of an integer key and a
    ``payload``-byte blob: a leaf cell is the record's length and the rowid as varints and the record (its
    header, a null for the rowid column and the blob's serial type, then the blob)."""
    header = 1 + 1 + _varint(2 * payload + 12)
    record = header + payload
    return shape(sqlite_layout(page_bytes, reserve_bytes), rows, key_bytes=_varint(SQLITE_ROWID0 + rows),
                 value_bytes=_varint(record) + record)


def _sqlite_commands(page_bytes: int, reserve: int, rows: int, payload: int) -> list:
    return [f"pragma page_size={page_bytes};", f".filectrl reserve_bytes {reserve}",
            "create table t(k integer primary key, v blob);",
            f"with recursive c(i) as (select 0 union all select i + 1 from c where i < {rows - 1}) "
            f"insert into t select {SQLITE_ROWID0} + i, randomblob({payload}) from c;",
            "select count(*), max(length(path) - length(replace(path, '/', ''))) from dbstat where name = 't';",
            ".filectrl reserve_bytes"]


def measure_sqlite(params: Params | None = None, *, quick: bool = False, sqlite: str = "sqlite3") -> pd.DataFrame:
    """Build SQLite tables of ``params.data_bytes``-byte records (200,000 rows; 20,000 in the quick profile)
    with the ``sqlite3`` shell at every page size of ``params.page_sizes`` and every reserve of
    :data:`RESERVES`, and read their pages and depth from ``dbstat``.

    Index: (page_bytes, reserve_bytes). Columns: available, rows, pages, levels (the tree's depth),
    model_pages and model_levels (:func:`sqlite_model`), seconds (the shell's run: create and load), note
    (why a configuration is not available: a missing shell, or SQLite refusing it).
    """
    p = params or Params()
    rows_n = 20_000 if quick else 200_000
    work = cache_dir() / "wiess02_loverso"
    work.mkdir(parents=True, exist_ok=True)
    out = []
    for size in p.page_sizes:
        for reserve in RESERVES:
            db = work / f"t{size}-{reserve}.db"
            db.unlink(missing_ok=True)
            with one_core():
                r = run_command([sqlite, str(db), *_sqlite_commands(size, reserve, rows_n, p.data_bytes)],
                                timeout_s=120.0)
            row = {"page_bytes": size, "reserve_bytes": reserve, "available": False, "rows": rows_n,
                   "pages": np.nan, "levels": np.nan, "seconds": np.nan, "note": ""}
            try:
                sh = sqlite_model(size, reserve, rows_n, p.data_bytes)
                row["model_pages"], row["model_levels"] = sh.pages, sh.levels
            except ValueError as e:
                row["model_pages"], row["model_levels"], row["note"] = np.nan, np.nan, str(e)
            lines = [x for x in r.stdout.splitlines() if x.strip()]
            if not r.available:
                row["note"] = f"not available: {r.reason}"
            elif r.returncode != 0 or not any("|" in x for x in lines):
                row["note"] = "SQLite refused: " + (" ".join(r.stderr.split())[-200:] or "no output")
                if size - reserve < SQLITE_MIN_USABLE:
                    row["note"] += (f" (its file format needs {SQLITE_MIN_USABLE} usable bytes a page; "
                                    f"{size} - {reserve} leaves {size - reserve})")
            else:  # the shell echoes the reserve when it sets it and when asked; the counts hold a '|'
                pages, depth = next(x for x in lines if "|" in x).split("|")
                row.update(available=True, pages=float(pages), levels=float(depth), seconds=r.elapsed_s)
                if int(lines[-1]) != reserve:
                    row["note"] = f"the file kept {lines[-1]} reserved bytes, not {reserve}"
            db.unlink(missing_ok=True)
            out.append(row)
    return pd.DataFrame(out).set_index(["page_bytes", "reserve_bytes"])


def sqlite_now(measured: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """What a per-page area costs a B-tree, then and now, per page size: Berkeley DB 2002's 36 bytes after
    the header (the model, §8) beside SQLite's reserved bytes at the page's end (measured, and the shared
    layout model in SQLite's format).

    Index: page_bytes. Columns: bdb_extra_pages_pct (the model's ``layout``), sqlite_extra_pages_pct_8 and
    sqlite_extra_pages_pct_36 (measured: pages with the reserve over pages without, less one),
    model_extra_pages_pct_36, sqlite_model_error_pct (model pages over measured pages, less one, worst over
    the configurations of the page size), levels, levels_36.
    """
    p = params or Params()
    lay = layout(p)
    rows = []
    for size in p.page_sizes:
        def got(reserve, col, size=size):
            key = (size, reserve)
            if key not in measured.index or not bool(measured.loc[key, "available"]):
                return np.nan
            return float(measured.loc[key, col])
        base, base_model = got(0, "pages"), got(0, "model_pages")
        errs = [abs(got(r, "model_pages") / got(r, "pages") - 1) for r in RESERVES if got(r, "pages") > 0]
        rows.append({"page_bytes": size, "bdb_extra_pages_pct": lay.loc[size, "extra_pages_pct"],
                     "sqlite_extra_pages_pct_8": 100 * (got(8, "pages") / base - 1),
                     "sqlite_extra_pages_pct_36": 100 * (got(36, "pages") / base - 1),
                     "model_extra_pages_pct_36": 100 * (got(36, "model_pages") / base_model - 1),
                     "sqlite_model_error_pct": 100 * max(errs) if errs else np.nan,
                     "levels": got(0, "levels"), "levels_36": got(36, "levels")})
    return pd.DataFrame(rows).set_index("page_bytes")
