"""The Arjuna transaction system from research to products (Little & Shrivastava, WIESS 2002).

An experience report with no measured result: no table, and seven figures
that are diagrams, a code fragment and a timeline. What the lab regenerates
is a companion to the mechanisms the paper says made the system work, or
fail, each judged by the paper's own claims about them:

* ``commit``: the two-phase commit that ends a top-level action (§2.2),
  driven over a tree of participant records (the shared
  :mod:`pysim.sw.twophase`): messages, forced writes and latency for one to
  four participants, one or two levels deep, under basic two-phase commit,
  presumed abort, presumed commit and a one-phase commit without a vote, on
  the object stores §2.1 names (flat files on a disk, non-volatile RAM).
* ``atomicity``: participants that crash before their update is durable,
  under two-phase commit and under one phase (§2.2: all or nothing).
* ``nesting``: top-level actions whose operations fail now and then, run as
  nested actions (a failed one is aborted and retried alone) or flat (the
  whole action rolls back and starts again), as §2.2 and §3.3 (ii) contrast.
* ``detector``: one client's heartbeat detector watching one replica whose
  machine falls silent now and then (the shared
  :class:`pysim.sw.failure.HeartbeatDetector`): false suspicions and
  detection time against the timeout.
* ``registration``: the student registration system of §2.4, ten
  workstations of which three hold a triplicated object store, over its
  eight years in service: every other workstation pings every replica and
  keeps its own view of the copies it writes (the shared
  :class:`pysim.sw.failure.AvailableCopies`); machines crash and are
  repaired; live machines fall silent now and then. With the first-year and
  the adjusted timeouts, and with one copy: false diagnoses, the stale reads
  they cause, detection time, transactions aborted by machine failures.

First principles: the commit protocols' message and log-write accounting
and their latency from message and force times; the retry of a nested or a
flat action; heartbeats, timeouts, views of the copies and their versions.
Nothing is calibrated and no published value is taken as an input: the
paper prints no measurement. Every cost, failure rate and the stalls of
live machines are assumed, each with its reason (``Params``); the paper's
own numbers that the model uses are the ten workstations, the three
replicas and the eight years (§2.4).

Not reproduced: the paper's organisational numbers (team size, share of
quality assurance, code sizes, products, licensees, tests) and Figure 7's
timeline: they count people, dates and products, not a mechanism. See
papers/wiess02_little/paper.yaml.

Then vs now: :func:`measure_two_phase` runs :data:`TWO_PHASE_PY`, which starts
a PostgreSQL server of its own on 127.0.0.1 (as the user nobody when run as
root: initdb refuses root), times commits in one phase and with PREPARE
TRANSACTION across one to four of its databases, and stops it;
:func:`measure_heartbeats` runs :data:`HEARTBEAT_PY`, UDP heartbeats on
loopback from a child process stopped now and then with SIGSTOP.
:func:`two_phase_now`, :func:`unit_costs` and :func:`heartbeat_now` set the
measurements beside the model.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.harness.runners import program_file
from pysim.hw import catalog
from pysim.models import Counterfactual
from pysim.params import ModelParams, assumed, from_catalog, stated
from pysim.rng import make_rng, spawn
from pysim.sw import twophase
from pysim.sw.failure import AvailableCopies, HeartbeatDetector
from pysim.units import ms
from pysim.harness.exclusive import exclusive

HOUR = 3600.0
DAY = 24 * HOUR
YEAR = 365 * DAY

STORES = ("flat file", "nvram")                       # §2.1: from flat file to non-volatile RAM
PROTOCOLS = ("one_phase",) + twophase.PROTOCOLS       # the baseline without a vote, then the shared three
PARTICIPANTS = (1, 2, 3, 4)                           # participants of one top-level action
DEPTHS = (1, 2)                                       # 2: every participant calls one more server
FAILURE_SWEEP = (1, 5, 10, 20)                        # % of operations that fail (nesting)
TIMEOUT_SWEEP_PINGS = (2, 3, 5, 10, 20, 30, 60)       # detector: timeouts in ping periods
CONFIGURATIONS = ("first-year timeouts", "adjusted timeouts", "one copy")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in the units their names carry; the 1990s costs of a LAN of Unix workstations."""

    # the deployed system (§2.4)
    workstations: int = stated(10, "§2.4: the Arjuna sub-system consists of ten Unix workstations", ge=2)
    replicas: int = stated(3, "§2.4: three act as a triplicated database (object store)", ge=1)
    years_in_service: float = stated(8.0, "§2.4: during the 8 years that the system has been in use")
    # the mechanisms (switches, so a counterfactual is a change of parameters)
    nested_actions: bool = stated(True, "§2.2: transactions can be nested; a nested action can abort without "
                                        "causing the abortion of the enclosing action")
    two_phase: bool = stated(True, "§2.2: a (two-phase) commit protocol is used during the termination of an "
                                   "outermost atomic action")
    agreed_membership: bool = assumed(False, "the paper does not describe how clients learn of a failure beyond "
                                             "timeouts and pings (§2.4); that one false diagnosis caused "
                                             "consistency problems means the clients' views were not agreed")
    live_nodes_stall: bool = stated(True, "§2.4: a live replica was inaccurately diagnosed as failed: a live "
                                          "machine can fall silent for longer than a timeout")
    protocol: str = assumed("presumed_abort", "the paper does not name Arjuna's commit variant; presumed abort is "
                                              "the one X/Open XA and OTS implementations of the time used",
                            choices=twophase.PROTOCOLS)
    # 1990s costs
    lan_bits_per_s: float = from_catalog(catalog.ETHERNET_10, "bits_per_s")
    message_bytes: int = assumed(200, "a request or reply of the commit protocol: RPC headers, the action's "
                                      "Uid, a status", ge=1)
    rpc_software_ms: float = assumed(1.0, "one message through UDP and the RPC layer on an early-1990s Unix "
                                          "workstation, both ends: about a millisecond each way")
    disk_force_ms: float = assumed(15.0, "a write to a flat file and its fsync on an early-1990s SCSI disk: an "
                                         "average seek (about 10 ms) and half a turn at 5400 rpm (5.6 ms)")
    nvram_force_ms: float = assumed(0.1, "a copy of a log record into battery-backed RAM on the bus")
    # the workload
    participants: int = assumed(3, "a registration update touches the student's record and a couple of related "
                                   "objects (courses, fees) held by other servers", ge=1)
    commit_crash_pct: float = assumed(1.0, "per participant and commit, a crash before its update is durable: far "
                                           "above a real machine's (one crash in weeks), so that a few thousand "
                                           "commits show every outcome", gt=0, lt=100)
    txn_per_s: float = assumed(2.0, "the registration peak: some 12,000 students, twenty transactions each, in "
                                    "a week of eight-hour days")
    read_pct: float = assumed(50.0, "registration creates and updates records: half the transactions write",
                              ge=0, le=100)
    # failures and their detection
    mttf_days: float = assumed(60.0, "a 1990s Unix workstation crashed, hung or was rebooted every month or two")
    mttr_hours: float = assumed(4.0, "a reboot, or a part swapped, within a working day")
    ping_period_s: float = assumed(1.0, "a ping a second from each client to each replica: some 40 small "
                                        "packets a second on the segment, nothing on a 10 Mbit/s LAN")
    ping_delay_ms: float = assumed(0.5, "one way on a lightly loaded 10 Mbit/s segment, both kernels included; "
                                        "each ping is delayed by half to one and a half times this")
    first_timeout_s: float = assumed(3.0, "as first deployed: three missed pings")
    timeout_s: float = assumed(30.0, "after testing and adjustment (§2.4): ten times the first, "
                                     "'pessimistically chosen'")
    stall_per_day: float = assumed(24.0, "about hourly, a live workstation answers nothing for a while: heavy "
                                         "paging, a busy kernel, a burst of traffic on the shared segment")
    stall_median_s: float = assumed(0.2, "most such silences last a fraction of a second")
    stall_sigma: float = assumed(1.0, "their lengths are lognormal with this shape: one in a hundred lasts "
                                      "ten times the median, one in a million a hundred and fifty times")

    def __post_init__(self):
        super().__post_init__()
        if self.replicas >= self.workstations:
            raise ValueError(f"replicas must be fewer than the workstations ({self.workstations}), "
                             f"got {self.replicas!r}")
        least = self.ping_period_s + 3.0 * self.ping_delay_ms * ms
        for name in ("first_timeout_s", "timeout_s"):
            if not getattr(self, name) > least:
                raise ValueError(f"{name} must be longer than a ping period and the longest delay "
                                 f"({least:g} s), got {getattr(self, name)!r}")


CALIBRATION = ()
INPUTS = ()
COUNTERFACTUALS = (
    Counterfactual("flat-transactions", {"nested_actions": False},
                   "no nested transactions, as in JTA and XA (§3.3 ii): a failed operation rolls back the whole "
                   "top-level action"),
    Counterfactual("one-phase-commit", {"two_phase": False},
                   "the coordinator tells every participant to commit without asking first"),
    Counterfactual("single-copy", {"replicas": 1},
                   "the student records on one machine: §2.3's high-availability option unused"),
    Counterfactual("agreed-membership", {"agreed_membership": True},
                   "every client shares one view of the replicas: a copy suspected by one is fenced from all and "
                   "rejoins only after catching up"),
    Counterfactual("prompt-nodes", {"live_nodes_stall": False},
                   "a live machine always answers its pings within a period"),
    Counterfactual("timeouts-not-adjusted", {"timeout_s": 3.0},
                   "the failure-detection timeouts left as first deployed"),
)


# --- costs ----------------------------------------------------------------------------

def message_s(p: Params) -> float:
    """Seconds for one message of the commit protocol: the RPC software and the frame on the Ethernet."""
    lan = dataclasses.replace(catalog.ETHERNET_10, bits_per_s=p.lan_bits_per_s)
    return p.rpc_software_ms * ms + lan.frame_time_s(min(p.message_bytes, lan.max_payload))


def force_s(p: Params, store: str) -> float:
    """Seconds for one forced write on an object store ("flat file" or "nvram")."""
    if store not in STORES:
        raise ValueError(f"store must be one of {STORES}, got {store!r}")
    return (p.disk_force_ms if store == "flat file" else p.nvram_force_ms) * ms


# --- commit ---------------------------------------------------------------------------

def participant_tree(n: int, depth: int = 1, *, failed=()) -> twophase.Participant:
    """A coordinator with ``n`` participants, each the head of a chain ``depth`` deep (a server that calls
    another server within the action). Participants named in ``failed`` vote no."""
    if n < 1 or depth < 1:
        raise ValueError(f"n and depth must be >= 1, got n={n!r}, depth={depth!r}")
    heads = []
    for i in range(n):
        node = None
        for level in reversed(range(depth)):
            name = f"s{i}" + "".join(f".{j}" for j in range(level))
            node = twophase.Participant(name, [node] if node else [], vote_yes=name not in failed)
        heads.append(node)
    return twophase.Participant("coordinator", heads)


def one_phase(root: twophase.Participant, *, message_s: float, force_s: float) -> dict:
    """Commit without a vote: each participant is told to commit, forces its commit record, tells its own
    participants, and acknowledges. Messages, forced writes and seconds until the last acknowledgement."""
    def below(node):
        if not node.children:
            return 0.0, 0, 0
        times, msgs, forced = [], 0, 0
        for child in node.children:
            t, m, f = below(child)
            times.append(2 * message_s + force_s + t)
            msgs, forced = msgs + 2 + m, forced + 1 + f
        return max(times), msgs, forced

    finished, messages, forced = below(root)
    return {"messages": messages, "forced_writes": forced, "decided_s": math.nan, "finished_s": finished}


def commit_costs(protocol: str, n: int, depth: int, *, message_s: float, force_s: float) -> dict:
    """One top-level action's commit over ``n`` participants ``depth`` deep: messages, forced writes, the
    time the outcome was durable (``decided_s``) and the time the last acknowledgement came in."""
    tree = participant_tree(n, depth)
    if protocol == "one_phase":
        return one_phase(tree, message_s=message_s, force_s=force_s)
    r = twophase.run(tree, protocol, message_s=message_s, force_s=force_s)
    return {"messages": r.messages, "forced_writes": r.forced, "decided_s": r.decided_s, "finished_s": r.finished_s}


def commit(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """One top-level action's commit, by object store, protocol, depth and participants.

    Index: (store, protocol, depth, participants). Columns: messages, forced_writes, decided_ms (the
    outcome durable; none for one phase), finished_ms (the last acknowledgement in).
    """
    p = params or Params()
    rows = []
    for store in STORES:
        for protocol in PROTOCOLS:
            for depth in DEPTHS:
                for n in PARTICIPANTS:
                    c = commit_costs(protocol, n, depth, message_s=message_s(p), force_s=force_s(p, store))
                    rows.append({"store": store, "protocol": protocol, "depth": depth, "participants": n,
                                 "messages": c["messages"], "forced_writes": c["forced_writes"],
                                 "decided_ms": c["decided_s"] / ms, "finished_ms": c["finished_s"] / ms})
    return pd.DataFrame(rows).set_index(["store", "protocol", "depth", "participants"])


# --- atomicity ------------------------------------------------------------------------

@functools.cache
def _two_phase_outcome(n: int, failed: tuple, protocol: str) -> tuple:
    r = twophase.run(participant_tree(n, failed=failed), protocol, message_s=1.0, force_s=1.0)
    return r.outcome, r.messages, r.forced


def commit_with_crashes(p: Params, n: int, crashed: tuple) -> dict:
    """One commit over ``n`` participants of which those in ``crashed`` (indices) crash before their update
    is durable. Two-phase: a crashed participant never votes yes, so the coordinator aborts everywhere; a
    prepared one that crashes later commits on recovery. One phase: the others commit, the crashed lose
    their updates. Returns the outcome ("commit", "abort" or "mixed"), messages and forced writes."""
    if p.two_phase:
        outcome, messages, forced = _two_phase_outcome(n, tuple(f"s{i}" for i in crashed), p.protocol)
        return {"outcome": outcome, "messages": messages, "forced_writes": forced}
    lost = len(crashed)
    outcome = "commit" if lost == 0 else ("abort" if lost == n else "mixed")
    return {"outcome": outcome, "messages": 2 * n - lost, "forced_writes": n - lost}


def atomicity(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Commits with participants that crash (``commit_crash_pct`` each) before their update is durable.

    Index: participants (text). Columns: committed_pct, aborted_pct, mixed_pct (some participants committed
    and some did not), messages_per_commit, forced_per_commit.
    """
    p = params or Params()
    commits = 2_000 if quick else 20_000
    rows = []
    for n, g in zip(PARTICIPANTS, spawn(rng, len(PARTICIPANTS)), strict=True):
        crashes = g.random((commits, n)) < p.commit_crash_pct / 100.0
        tally = {"commit": 0, "abort": 0, "mixed": 0}
        messages = forced = 0
        for row in crashes:
            r = commit_with_crashes(p, n, tuple(int(i) for i in np.flatnonzero(row)))
            tally[r["outcome"]] += 1
            messages, forced = messages + r["messages"], forced + r["forced_writes"]
        rows.append({"participants": str(n), "committed_pct": 100.0 * tally["commit"] / commits,
                     "aborted_pct": 100.0 * tally["abort"] / commits, "mixed_pct": 100.0 * tally["mixed"] / commits,
                     "messages_per_commit": messages / commits, "forced_per_commit": forced / commits})
    return pd.DataFrame(rows).set_index("participants")


# --- nested actions -------------------------------------------------------------------

class TopLevelAction:
    """A top-level action that invokes one operation on each of ``n`` servers; each operation fails with
    probability ``failure``.

    Nested: every operation is a nested action; a failed one is aborted (an abort RPC runs its records'
    abort operations at its server: restore the state, release the lock) and retried alone. Flat: a failed
    operation rolls the whole action back (an abort RPC to every server touched so far), and the action
    starts again. Either way the action ends with a two-phase commit over its ``n`` participants.
    """

    def __init__(self, n: int, failure: float, *, nested: bool, protocol: str, rng):
        self.n, self.failure, self.nested, self.protocol = n, failure, nested, protocol
        self.rng = make_rng(rng)
        self.operations = self.top_aborts = self.nested_aborts = self.messages = 0

    def _operation(self) -> bool:
        self.operations += 1
        self.messages += 2  # the invocation and its reply
        return self.rng.random() >= self.failure

    def _abort(self, servers: int):
        self.messages += 2 * servers  # an abort RPC to each

    def run(self) -> dict:
        if self.nested:
            for _ in range(self.n):
                while not self._operation():
                    self.nested_aborts += 1
                    self._abort(1)
        else:
            done = 0
            while done < self.n:
                done += 1
                if not self._operation():
                    self.top_aborts += 1
                    self._abort(done)
                    done = 0
        _, messages, forced = _two_phase_outcome(self.n, (), self.protocol)
        self.messages += messages
        return {"operations": self.operations, "top_aborts": self.top_aborts, "nested_aborts": self.nested_aborts,
                "messages": self.messages, "forced_writes": forced}


def nesting(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Top-level actions over ``participants`` servers, nested or flat, against the share of operations
    that fail. Both structures draw the same failures (common random numbers).

    Index: (structure: nested or flat, failure_pct as text). Columns: top_aborts_per_commit,
    operations_per_commit, messages_per_commit, forced_per_commit.
    """
    p = params or Params()
    actions = 1_000 if quick else 10_000
    rows = []
    for pct, g in zip(FAILURE_SWEEP, spawn(rng, len(FAILURE_SWEEP)), strict=True):
        seed = int(g.integers(2 ** 63))
        for structure in ("nested", "flat"):
            nested = structure == "nested" and p.nested_actions
            totals = {"operations": 0, "top_aborts": 0, "messages": 0, "forced_writes": 0}
            stream = make_rng(seed)
            for _ in range(actions):
                r = TopLevelAction(p.participants, pct / 100.0, nested=nested, protocol=p.protocol,
                                   rng=stream).run()
                for k in totals:
                    totals[k] += r[k]
            rows.append({"structure": structure, "failure_pct": str(pct),
                         "top_aborts_per_commit": totals["top_aborts"] / actions,
                         "operations_per_commit": totals["operations"] / actions,
                         "messages_per_commit": totals["messages"] / actions,
                         "forced_per_commit": totals["forced_writes"] / actions})
    return pd.DataFrame(rows).set_index(["structure", "failure_pct"])


# --- failure detection ----------------------------------------------------------------

def _horizon_s(p: Params, quick: bool, quick_years: float = 1.0) -> float:
    return (min(quick_years, p.years_in_service) if quick else p.years_in_service) * YEAR


def stall_schedule(p: Params, horizon_s: float, rng) -> np.ndarray:
    """The silences of one live machine over ``horizon_s``: rows of (start_s, duration_s), sorted, with
    overlapping silences merged. Poisson starts, lognormal lengths; none if live machines never stall."""
    g = make_rng(rng)
    if not p.live_nodes_stall:
        return np.empty((0, 2))
    n = int(g.poisson(p.stall_per_day * horizon_s / DAY))
    starts = np.sort(g.uniform(0.0, horizon_s, n))
    ends = starts + p.stall_median_s * np.exp(p.stall_sigma * g.standard_normal(n))
    if n == 0:
        return np.empty((0, 2))
    # a silence that starts before every earlier one has ended joins them
    first = np.ones(n, dtype=bool)
    first[1:] = starts[1:] > np.maximum.accumulate(ends)[:-1]
    heads = np.flatnonzero(first)
    return np.column_stack([starts[heads], np.maximum.reduceat(ends, heads) - starts[heads]])


def silence_threshold_s(p: Params, timeout_s: float) -> float:
    """A silence shorter than this cannot trip a monitor: heartbeats go out every period and the moment a
    silence ends, so the longest gap between two arrivals is the silence, a period and the delay spread."""
    return timeout_s - p.ping_period_s - 1.5 * p.ping_delay_ms * ms


def windows(p: Params, stalls: np.ndarray, timeout_s: float) -> list:
    """Stretches of time to simulate: around each silence long enough to trip a monitor, from two periods
    before it to two after it ends, merged where they overlap. ``[(start_s, end_s, [indices of the
    silences inside])]``, each keyed later by its first silence's index."""
    margin = 2 * p.ping_period_s
    out = []
    for i in np.flatnonzero(stalls[:, 1] > silence_threshold_s(p, timeout_s)):
        s, d = stalls[i]
        lo, hi = s - margin, s + d + margin
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi, int(i)])
    result = []
    for lo, hi, key in out:
        inside = np.flatnonzero((stalls[:, 0] < hi) & (stalls[:, 0] + stalls[:, 1] > lo))
        result.append((lo, hi, key, [int(j) for j in inside]))
    return result


@dataclass(frozen=True)
class Episode:
    """One client's suspicion of one replica, in absolute seconds."""

    client: int
    start_s: float
    end_s: float
    real: bool
    detection_s: float | None


class ReplicaWatch:
    """Every client's heartbeat detector for one replica over one stretch of time, on the engine.

    The replica pings each client on that client's own phase: client c's detector runs in a frame shifted
    by an offset drawn in [0, period), so its heartbeats go out at ``start_s - offset + k * period``.
    """

    def __init__(self, p: Params, *, timeout_s: float, clients: int, start_s: float, end_s: float,
                 stalls=(), crash_s: float | None = None, rng=0):
        gens = spawn(rng, clients)
        self.sim = Simulation()
        self.start_s, self.end_s = start_s, end_s
        self.offsets = [float(g.uniform(0.0, p.ping_period_s)) for g in gens]
        lo, hi = 0.5 * p.ping_delay_ms * ms, 1.5 * p.ping_delay_ms * ms
        self.detectors = []
        for off, g in zip(self.offsets, gens, strict=True):
            local = [(s - start_s + off, d) for s, d in stalls]
            crash = None if crash_s is None else crash_s - start_s + off
            self.detectors.append(HeartbeatDetector(self.sim, period_s=p.ping_period_s, timeout_s=timeout_s,
                                                    delay=lambda gen: gen.uniform(lo, hi), stalls=local,
                                                    crash_s=crash, rng=g))

    def run(self) -> list:
        """Every client's suspicions (:class:`Episode`), in time order."""
        span = self.end_s - self.start_s + max(self.offsets)
        self.sim.run(until=span)
        out = []
        for c, (det, off) in enumerate(zip(self.detectors, self.offsets, strict=True)):
            for s in det.suspicions:
                end = span if s.end_s is None else s.end_s
                out.append(Episode(c, self.start_s + s.start_s - off, self.start_s + end - off, s.real,
                                   s.after_crash_s))
        return sorted(out, key=lambda e: e.start_s)


def _window_rng(root: int, *key: int) -> np.random.Generator:
    """A stream fixed by a run's root seed and a key (a replica, a silence): the same silence gets the same
    draws whatever the timeout, so results move smoothly across timeouts."""
    return make_rng(np.random.SeedSequence([root, *key]))


def false_suspicions(p: Params, stalls: np.ndarray, timeout_s: float, *, clients: int, root: int,
                     replica: int = 0) -> list:
    """Every stretch in which some client suspected the live replica: ``[(start_s, end_s, [Episode])]``."""
    out = []
    for lo, hi, key, inside in windows(p, stalls, timeout_s):
        watch = ReplicaWatch(p, timeout_s=timeout_s, clients=clients, start_s=lo, end_s=hi,
                             stalls=[tuple(stalls[j]) for j in inside], rng=_window_rng(root, replica, key))
        episodes = [e for e in watch.run() if not e.real]
        if episodes:
            out.append((lo, hi, episodes))
    return out


def detection_times(p: Params, timeout_s: float, *, clients: int, crashes, root: int, replica: int = 0) -> list:
    """For each crash time in ``crashes``, every client's detection time (seconds after the crash)."""
    out = []
    for k, t in enumerate(crashes):
        lo = t - 2 * p.ping_period_s
        watch = ReplicaWatch(p, timeout_s=timeout_s, clients=clients, start_s=lo,
                             end_s=t + timeout_s + 2 * p.ping_period_s, crash_s=t,
                             rng=_window_rng(root, replica, 1_000_000 + k))
        real = {}
        for e in watch.run():
            if e.real and e.client not in real:
                real[e.client] = e.start_s - t
        out.append([real.get(c, math.nan) for c in range(clients)])
    return out


def detector(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """One client watching one replica, against the timeout (in ping periods, TIMEOUT_SWEEP_PINGS).

    Index: timeout_s. Columns: false_suspicions_per_year, mean_false_s (how long a false suspicion lasts),
    detection_s (mean time from a crash to its suspicion).
    """
    p = params or Params()
    horizon = _horizon_s(p, quick)
    g_stalls, g_root, g_crash = spawn(rng, 3)
    stalls = stall_schedule(p, horizon, g_stalls)
    root = int(g_root.integers(2 ** 63))
    crashes = g_crash.uniform(0.0, p.ping_period_s, 20 if quick else 100) + 10 * p.ping_period_s
    rows = []
    for pings in TIMEOUT_SWEEP_PINGS:
        timeout = pings * p.ping_period_s
        found = false_suspicions(p, stalls, timeout, clients=1, root=root)
        spans = [e.end_s - e.start_s for _, _, eps in found for e in eps]
        detected = [d[0] for d in detection_times(p, timeout, clients=1, crashes=crashes, root=root)]
        rows.append({"timeout_s": timeout, "false_suspicions_per_year": len(spans) / (horizon / YEAR),
                     "mean_false_s": float(np.mean(spans)) if spans else 0.0,
                     "detection_s": float(np.nanmean(detected))})
    return pd.DataFrame(rows).set_index("timeout_s")


# --- the registration system ----------------------------------------------------------

class ReplicatedStore:
    """The copies of the student records as the clients see them.

    Each client keeps its own :class:`pysim.sw.failure.AvailableCopies` view: it reads one copy it believes
    up and writes every copy it believes up, so a copy it suspects misses its writes. A copy a client hears
    again catches up (a state transfer) and rejoins its view. With ``agreed`` membership a suspicion by one
    client takes the copy out of every view, and it rejoins them all only when every suspecting client has
    heard it again. Each copy carries the version of the last write it holds; a read from a copy behind the
    latest write is stale.
    """

    def __init__(self, copies: tuple, clients: int, *, agreed: bool):
        self.copies = tuple(copies)
        self.views = [AvailableCopies(self.copies) for _ in range(clients)]
        self.version = dict.fromkeys(self.copies, 0)
        self.latest = 0
        self.agreed = agreed
        self.suspecting = {c: set() for c in self.copies}
        self.stale_reads = self.missed_writes = self.reads = self.writes = self.refused = 0

    def suspect(self, client: int, copy):
        if self.agreed:
            if not self.suspecting[copy]:
                for view in self.views:
                    view.suspect(copy)
            self.suspecting[copy].add(client)
        else:
            self.views[client].suspect(copy)

    def hear(self, client: int, copy):
        if self.agreed:
            self.suspecting[copy].discard(client)
            if self.suspecting[copy]:
                return
            for view in self.views:
                view.rejoin(copy)
        else:
            self.views[client].rejoin(copy)
        self.version[copy] = self.latest  # the catch-up transfer

    def transaction(self, client: int, *, write: bool, pick: float) -> bool:
        """Read one copy (``pick`` in [0, 1) chooses which) and, for an update, write every copy in the
        client's view. False if the client believes no copy is up."""
        view = self.views[client]
        up = sorted(view.up)
        if not up:
            self.refused += 1
            return False
        copy = up[int(pick * len(up))]
        self.reads += 1
        self.stale_reads += self.version[copy] < self.latest
        if write:
            view.write()
            self.writes += 1
            self.latest += 1
            for c in up:
                self.version[c] = self.latest
            self.missed_writes += len(self.copies) - len(up)
        return True


def _transactions(p: Params, g, lo: float, hi: float, clients: int):
    """Poisson transactions in [lo, hi): (time, client, write, pick), in time order."""
    n = int(g.poisson(p.txn_per_s * (hi - lo)))
    t = np.sort(g.uniform(lo, hi, n))
    return zip(t, g.integers(0, clients, n), g.random(n) >= p.read_pct / 100.0, g.random(n), strict=True)


def stale_reads_in(p: Params, lo: float, hi: float, episodes, *, replicas: int, clients: int, g) -> ReplicatedStore:
    """Replay one stretch with false suspicions of one replica (copy 0): the clients' views change as they
    suspect it and hear it again, and the transactions run against them."""
    store = ReplicatedStore(tuple(range(replicas)), clients, agreed=p.agreed_membership)
    events = [(e.start_s, 0, e.client, "suspect") for e in episodes] + \
             [(e.end_s, 0, e.client, "hear") for e in episodes]
    events += [(t, 1, int(c), (bool(w), float(k))) for t, c, w, k in _transactions(p, g, lo, hi, clients)]
    for _t, _, client, what in sorted(events, key=lambda x: (x[0], x[1])):
        if what == "suspect":
            store.suspect(client, 0)
        elif what == "hear":
            store.hear(client, 0)
        else:
            store.transaction(client, write=what[0], pick=what[1])
    return store


def down_intervals(p: Params, horizon_s: float, g) -> list:
    """A machine's crashes and repairs over ``horizon_s``: [(crash_s, back_s)], up and down times exponential."""
    out, t = [], 0.0
    while True:
        t += g.exponential(p.mttf_days * DAY)
        if t >= horizon_s:
            return out
        back = t + g.exponential(p.mttr_hours * HOUR)
        out.append((t, back))
        t = back


def all_down_s(intervals_by_replica: list, horizon_s: float) -> float:
    """Seconds in which every replica is down at once."""
    edges = sorted([(a, 1) for iv in intervals_by_replica for a, _ in iv]
                   + [(b, -1) for iv in intervals_by_replica for _, b in iv])
    down = total = 0
    last = 0.0
    for t, step in edges:
        t = min(t, horizon_s)
        if down == len(intervals_by_replica):
            total += t - last
        down += step
        last = t
    return total


def deployment(p: Params, *, replicas: int, timeout_s: float, horizon_s: float, rng) -> dict:
    """The registration system with ``replicas`` copies and ``timeout_s`` over ``horizon_s``: the other
    workstations are its clients. Rates per year; aborts per 10,000 transactions."""
    clients = p.workstations - replicas
    g_root, g_txn = spawn(rng, 2)
    root = int(g_root.integers(2 ** 63))
    years = horizon_s / YEAR
    diagnoses = stale = missed = 0
    downs, aborted, detect = [], 0, []
    for r in range(replicas):
        g_stall, g_crash = spawn(_window_rng(root, r), 2)
        crashes = down_intervals(p, horizon_s, g_crash)
        downs.append(crashes)
        stalls = stall_schedule(p, horizon_s, g_stall)
        for lo, hi, eps in false_suspicions(p, stalls, timeout_s, clients=clients, root=root, replica=r):
            diagnoses += 1
            store = stale_reads_in(p, lo, hi, eps, replicas=replicas, clients=clients,
                                   g=_window_rng(root, r, 2_000_000 + int(lo)))
            stale, missed = stale + store.stale_reads, missed + store.missed_writes
            aborted += store.refused  # one copy, falsely suspected: the client has none to use
        times = detection_times(p, timeout_s, clients=clients, crashes=[a for a, _ in crashes], root=root, replica=r)
        for (crash, _), per_client in zip(crashes, times, strict=True):
            detect.extend(per_client)
            if replicas > 1:
                aborted += _aborted_before_detection(p, crash, per_client, replicas, g_txn)
    aborted += int(g_txn.poisson(p.txn_per_s * all_down_s(downs, horizon_s)))
    transactions = p.txn_per_s * horizon_s
    return {"false_diagnoses_per_year": diagnoses / years, "stale_reads_per_year": stale / years,
            "missed_writes_per_year": missed / years, "detection_s": float(np.nanmean(detect)) if detect else math.nan,
            "aborted_per_10k": 1e4 * aborted / transactions,
            "unavailable_h_per_year": all_down_s(downs, horizon_s) / HOUR / years}


def _aborted_before_detection(p: Params, crash_s: float, detection: list, replicas: int, g) -> int:
    """Transactions that touch a crashed copy before their client has suspected it: every update (it
    writes all copies) and the reads that pick that copy. Their RPCs time out and the action aborts."""
    clients = len(detection)
    span = float(np.nanmax(detection))
    aborted = 0
    for t, c, write, pick in _transactions(p, g, crash_s, crash_s + span, clients):
        if t - crash_s < detection[c] and (write or pick < 1.0 / replicas):
            aborted += 1
    return aborted


def registration(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """The student registration system over its years in service (two years in quick mode: stale reads are
    rare events, a few a year with the first timeouts).

    Rows (CONFIGURATIONS): the triplicated store with the first-year timeouts and with the adjusted ones,
    and one copy with the adjusted timeouts; every row draws the same silences, crashes and transactions.
    Index: configuration. Columns: false_diagnoses_per_year (stretches in which a client took a live replica
    for failed), stale_reads_per_year, stale_reads_in_service (over the years in service), missed_writes_per_year,
    detection_s, aborted_per_10k (transactions aborted by machine failures), unavailable_h_per_year.
    """
    p = params or Params()
    horizon = _horizon_s(p, quick, quick_years=2.0)
    seed = int(make_rng(rng).integers(2 ** 63))
    setups = {"first-year timeouts": (p.replicas, p.first_timeout_s), "adjusted timeouts": (p.replicas, p.timeout_s),
              "one copy": (1, p.timeout_s)}
    rows = []
    for name in CONFIGURATIONS:
        replicas, timeout = setups[name]
        d = deployment(p, replicas=replicas, timeout_s=timeout, horizon_s=horizon, rng=seed)
        d["stale_reads_in_service"] = d["stale_reads_per_year"] * p.years_in_service
        rows.append({"configuration": name, **d})
    cols = ["false_diagnoses_per_year", "stale_reads_per_year", "stale_reads_in_service", "missed_writes_per_year",
            "detection_s", "aborted_per_10k", "unavailable_h_per_year"]
    return pd.DataFrame(rows).set_index("configuration")[cols]


# --- then vs now ----------------------------------------------------------------------

#: A program that starts a PostgreSQL server of its own and times commits across several of its databases,
#: with and without PREPARE TRANSACTION. Run it as ``python <file> commits warmup round_trips k...`` (see
#: :func:`two_phase_plan`); :func:`measure_two_phase` does, and :func:`parse_two_phase` reads what it prints.
TWO_PHASE_PY = r'''"""Commit with and without PostgreSQL's two-phase commit across several databases of a server this
program starts itself (initdb and pg_ctl, as the unprivileged user nobody when run as root), driven through
psql sessions over TCP on 127.0.0.1. The coordinator forces its decision to a file between the two phases.
Prints one line per measurement, in seconds ("round_trip 5.1e-05", "force 0.004", "commit k one decided two"),
or "unavailable <why>"."""
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


BUDGET_S = 480  # less than the harness's timeout, so that the server is stopped before the program is killed


class Unavailable(Exception):
    """Something the experiment needs is missing or refused to start."""


def tool(name):
    """A PostgreSQL program: on the PATH, in pg_config's bindir, or in Debian's versioned folders."""
    found = shutil.which(name)
    if found:
        return found
    folders = []
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        folders.append(out.stdout.strip())
    folders += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in folders:
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
    raise Unavailable(f"{name} is not installed")


class Server:
    """A throwaway cluster listening on 127.0.0.1 only, on a port that was free. Its write-ahead log (all a
    commit waits for) and its logs are in ``folder``, on the disk; its tables in ``memory`` (a folder on a
    tmpfs, when there is one), so that nothing but the log is flushed to the disk and the folders go quickly."""

    def __init__(self, folder, memory=None):
        self.folder, self.started, self.port = folder, False, None
        self.data = os.path.join(memory or folder, "data")
        self.as_user = []
        if os.geteuid() == 0:  # initdb and the server refuse to run as root
            if shutil.which("runuser") is None:
                raise Unavailable("running as root, and runuser is missing to start the server as nobody")
            nobody = pwd.getpwnam("nobody")
            for d in (folder, memory):
                if d is not None:
                    os.chown(d, nobody.pw_uid, nobody.pw_gid)
            self.as_user = [shutil.which("runuser"), "-u", "nobody", "--"]
        self.initdb, self.pg_ctl, self.postgres = tool("initdb"), tool("pg_ctl"), tool("postgres")

    def run(self, *argv):
        r = subprocess.run(self.as_user + list(argv), capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise Unavailable(f"{os.path.basename(argv[0])} failed: {(r.stderr or r.stdout).strip()[-300:]}")
        return r.stdout

    def start(self):
        self.run(self.initdb, "-D", self.data, "--waldir", os.path.join(self.folder, "wal"), "--wal-segsize=1",
                 "-U", "postgres", "--auth=trust", "--no-sync", "--no-instructions")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as conf:
            conf.write("fsync = off\n")  # the databases are scaffolding: create them quickly (see make_durable)
        for attempt in range(3):  # another program may take the port between our look and the server's bind
            self.port = free_port()
            options = (f"-k {self.folder} -c listen_addresses=127.0.0.1 -p {self.port} "
                       "-c max_prepared_transactions=8 -c shared_buffers=16MB -c synchronous_commit=on")
            self.started = True  # from here on, stop() runs whatever pg_ctl says
            try:
                self.run(self.pg_ctl, "-D", self.data, "-l", os.path.join(self.folder, "server.log"), "-w",
                         "-t", "60", "-o", options, "start")
                break
            except Unavailable:
                self.stop()
                if attempt == 2:
                    raise
        return self.run(self.postgres, "--version").strip()

    def stop(self):
        if self.started:
            subprocess.run(self.as_user + [self.pg_ctl, "-D", self.data, "-m", "fast", "-w", "stop"],
                           capture_output=True, timeout=60)
            self.started = False


def free_port():
    """A TCP port on 127.0.0.1 that nobody is listening on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Session:
    """One psql process on one database over TCP on loopback, driven through its pipes: each request ends with an echoed marker."""

    MARK = "@@done"

    def __init__(self, psql, port, database):
        self.proc = subprocess.Popen([psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                                      "-p", str(port), "-U", "postgres", "-d", database], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)

    def send(self, sql):
        self.proc.stdin.write(sql + "\n\\echo " + self.MARK + "\n")
        self.proc.stdin.flush()

    def wait(self):
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise Unavailable("psql stopped: " + self.proc.stderr.read().strip()[-300:])
            if line.rstrip("\n") == self.MARK:
                return lines
            lines.append(line.rstrip("\n"))

    def ask(self, sql):
        self.send(sql)
        return self.wait()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def make_durable(admin, sessions):
    """Turn fsync on for the whole server (a reload, no restart), wait until every session has it, and flush
    what the unsynced setup left behind."""
    admin.ask("CHECKPOINT;")
    os.sync()
    admin.ask("ALTER SYSTEM SET fsync = on;")
    admin.ask("SELECT pg_reload_conf();")
    for s in sessions:
        for _ in range(100):
            if s.ask("SHOW fsync;") == ["on"]:
                break
            time.sleep(0.05)
        else:
            raise Unavailable("the server did not turn fsync on")
    admin.ask("CHECKPOINT;")


def everywhere(sessions, sql_of):
    """Send a request to every session, then wait for all: the participants work in parallel."""
    for i, s in enumerate(sessions):
        s.send(sql_of(i))
    for s in sessions:
        s.wait()


LOG_BYTES = 1 << 20


def open_log(path):
    """The coordinator's log: a file of zeros written and flushed once, so that a decision record only
    overwrites its blocks, as a write-ahead log's segment is (PostgreSQL's own flush is an fdatasync)."""
    log = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.write(log, bytes(LOG_BYTES))
    os.fsync(log)
    os.lseek(log, 0, os.SEEK_SET)
    return log


def force(log):
    """The coordinator's decision record, forced to disk."""
    if os.lseek(log, 0, os.SEEK_CUR) >= LOG_BYTES - 64:
        os.lseek(log, 0, os.SEEK_SET)
    os.write(log, b"commit\n")
    os.fdatasync(log)


def measure(plan, sessions, log):
    """Round trips; then, for each number of databases k in turn (interleaved, so that a change in the
    disk's speed touches every k alike), the time of a commit in one phase, of the two-phase commit's first
    phase with the decision forced, of the whole two-phase commit, and of one forced write of the
    coordinator's log on its own."""
    rt = []
    for _ in range(plan["round_trips"]):
        t0 = time.perf_counter()
        sessions[0].ask("SELECT 1;")
        rt.append(time.perf_counter() - t0)
    forces, samples = [], []
    for i in range(plan["warmup"] + plan["commits"]):
        for k in plan["databases"]:
            use = sessions[:k]
            everywhere(use, lambda j: "BEGIN; INSERT INTO t VALUES (1);")
            t0 = time.perf_counter()
            everywhere(use, lambda j: "COMMIT;")
            t1 = time.perf_counter()
            everywhere(use, lambda j: "BEGIN; INSERT INTO t VALUES (2);")
            t2 = time.perf_counter()
            everywhere(use, lambda j: f"PREPARE TRANSACTION 'g{k}_{i}_{j}';")
            force(log)
            t3 = time.perf_counter()
            everywhere(use, lambda j: f"COMMIT PREPARED 'g{k}_{i}_{j}';")
            t4 = time.perf_counter()
            force(log)
            t5 = time.perf_counter()
            if i >= plan["warmup"]:
                samples.append((k, t1 - t0, t3 - t2, t4 - t2))
                forces.append(t5 - t4)
    # what the commits left: the rows each database holds, and any prepared transaction still in doubt
    counts = [int(s.ask("SELECT count(*) FROM t;")[0]) for s in sessions]
    in_doubt = int(sessions[0].ask("SELECT count(*) FROM pg_prepared_xacts;")[0])
    return {"round_trips": rt, "forces": forces, "samples": samples, "counts": counts, "in_doubt": in_doubt}


def out_of_time(signum, frame):
    raise Unavailable("the experiment ran out of time")


def main():
    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(BUDGET_S)  # a hang still reaches the clean-up below, which stops the server
    commits, warmup, round_trips, *databases = (int(a) for a in sys.argv[1:])
    plan = {"commits": commits, "warmup": warmup, "round_trips": round_trips, "databases": databases}
    folder = tempfile.mkdtemp(prefix="twopc-")
    shm = "/dev/shm"
    memory = tempfile.mkdtemp(prefix="twopc-", dir=shm) if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    server, sessions, log = None, [], None
    try:
        psql = tool("psql")
        server = Server(folder, memory)
        version = server.start()
        admin = Session(psql, server.port, "postgres")
        sessions.append(admin)
        for k in range(1, max(plan["databases"]) + 1):
            admin.ask(f"CREATE DATABASE d{k};")
        for k in range(1, max(plan["databases"]) + 1):
            s = Session(psql, server.port, f"d{k}")
            sessions.append(s)
            s.ask("CREATE TABLE t (x int);")
        make_durable(admin, sessions)
        log = open_log(os.path.join(folder, "coordinator.log"))
        result = measure(plan, sessions[1:], log)
        lines = [f"server {version}", f"port {server.port}", f"in_doubt {result['in_doubt']}",
                 "counts " + " ".join(str(n) for n in result["counts"])]
        lines += [f"round_trip {t!r}" for t in result["round_trips"]] + [f"force {t!r}" for t in result["forces"]]
        lines += [f"commit {k} {one!r} {decided!r} {two!r}" for k, one, decided, two in result["samples"]]
    except (Unavailable, OSError, subprocess.SubprocessError) as e:
        lines = ["unavailable " + " ".join(str(e).split())]
    except Exception as e:  # a bug or a surprise from the server: say so, and still clean up
        lines = [f"unavailable {type(e).__name__}: " + " ".join(str(e).split())]
    finally:
        signal.alarm(0)
        for s in sessions:
            s.close()
        if log is not None:
            os.close(log)
        if server is not None:
            server.stop()
        for d in (folder, memory):
            if d is not None:
                shutil.rmtree(d, ignore_errors=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
'''

#: A program that receives UDP heartbeats on loopback from a child process it starts (the same file, run
#: with ``child``), stopping the child with SIGSTOP and resuming it with SIGCONT on a given schedule. Run it
#: as ``python <file> run period_s seconds start:length...`` (see :func:`heartbeat_plan`);
#: :func:`measure_heartbeats` does, and :func:`parse_heartbeats` reads what it prints.
HEARTBEAT_PY = r'''"""UDP heartbeats on loopback from a child process, stopped and resumed on a schedule. Prints one line
per heartbeat ("beat send_s arrival_s") and per stall as it happened ("stall start_s length_s"), in seconds
from the first heartbeat, or "unavailable <why>"."""
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time


def child(port, period):
    """Send a heartbeat every period; after a stop, one at once, and every period from then on. Stop when
    the parent is gone."""
    parent = os.getppid()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    due = time.monotonic()
    while os.getppid() == parent:
        now = time.monotonic()
        if now < due:
            time.sleep(due - now)
            continue
        sock.sendto(struct.pack("!d", now), ("127.0.0.1", port))
        due = (now if now - due > period / 2 else due) + period


def main(period, seconds, planned):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(5.0)
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "child", str(sock.getsockname()[1]),
                             repr(period)])
    try:
        first = struct.unpack("!d", sock.recv(64))[0]
        beats = [(first, time.monotonic())]
        sock.settimeout(0.1)
        stop = threading.Event()

        def receive():
            while not stop.is_set():
                try:
                    data = sock.recv(64)
                except socket.timeout:
                    continue
                beats.append((struct.unpack("!d", data)[0], time.monotonic()))

        receiver = threading.Thread(target=receive, daemon=True)
        receiver.start()
        stalls = []
        for start, length in planned:
            wait = first + start - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            a = time.monotonic()
            os.kill(proc.pid, signal.SIGSTOP)
            time.sleep(length)
            b = time.monotonic()
            os.kill(proc.pid, signal.SIGCONT)
            stalls.append((a - first, b - a))
        rest = first + seconds - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        stop.set()
        receiver.join()
        lines = [f"period {period!r} {seconds!r}"] + [f"stall {a!r} {d!r}" for a, d in stalls]
        lines += [f"beat {s - first!r} {r - first!r}" for s, r in beats]
    except OSError as e:
        lines = ["unavailable " + " ".join(str(e).split())]
    finally:
        proc.kill()
        proc.wait()
    print("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1] == "child":
        child(int(sys.argv[2]), float(sys.argv[3]))
    else:
        main(float(sys.argv[2]), float(sys.argv[3]),
             [tuple(float(x) for x in a.split(":")) for a in sys.argv[4:]])
'''


def two_phase_plan(quick: bool = False) -> dict:
    """What :data:`TWO_PHASE_PY` measures: databases 1-4, commits per point (after a warm-up), round trips."""
    return {"databases": list(PARTICIPANTS), "commits": 12 if quick else 150, "warmup": 2,
            "round_trips": 50 if quick else 400}


def heartbeat_plan(quick: bool = False, *, rng=0) -> dict:
    """What :data:`HEARTBEAT_PY` runs: a heartbeat every 20 ms for 1.5 s (10 s in the full profile), and stalls
    at Poisson times (a quarter of a second apart on average, never overlapping) with lognormal lengths of
    median two periods (shape 0.8). Not the 1990s silences of :class:`Params`: these are chosen so that a few
    seconds hold stalls on both sides of every timeout of the sweep (1.5 to 10 periods)."""
    g = make_rng(rng)
    period, seconds = 0.02, 1.5 if quick else 10.0
    stalls, t = [], 0.1
    while True:
        t += g.exponential(0.25)
        length = float(2 * period * np.exp(0.8 * g.standard_normal()))
        if t + length > seconds - 0.2:
            return {"period_s": period, "seconds": seconds, "stalls": stalls}
        stalls.append((round(float(t), 6), round(length, 6)))
        t += length + 2 * period


def _lines(stdout: str) -> list:
    return [line.split(" ", 1) for line in stdout.splitlines() if line.strip()]


def _failed(r, lines) -> dict:
    """Why a run gave nothing: what the program said, or how it ended."""
    said = [rest for key, *rest in lines if key == "unavailable"]
    if said:
        return {"available": False, "reason": said[0][0] if said[0] else "unavailable"}
    if not r.available:
        return {"available": False, "reason": r.reason}
    tail = " ".join(r.stderr.split())[-300:]
    return {"available": False, "reason": f"the program exited with {r.returncode}: {tail}"}


def parse_two_phase(stdout: str) -> dict:
    """What :data:`TWO_PHASE_PY` printed, as a dict: ``available``, ``server``, ``port``, ``round_trip_s`` and
    ``force_s`` (lists of samples), ``commits`` (rows of databases, one_s, decided_s, two_s: one per
    commit), ``counts`` (the rows each database holds at the end) and ``in_doubt`` (prepared transactions
    left unresolved); or ``available`` False and the ``reason``."""
    out = {"available": True, "round_trip_s": [], "force_s": [], "commits": []}
    for key, *rest in _lines(stdout):
        words = rest[0].split() if rest else []
        if key == "unavailable":
            return {"available": False, "reason": rest[0] if rest else "unavailable"}
        if key == "server":
            out["server"] = rest[0]
        elif key in ("port", "in_doubt"):
            out[key] = int(words[0])
        elif key == "counts":
            out["counts"] = [int(x) for x in words]
        elif key in ("round_trip", "force"):
            out[key + "_s"].append(float(words[0]))
        elif key == "commit":
            out["commits"].append((int(words[0]), *(float(x) for x in words[1:])))
    if not out["commits"]:
        return {"available": False, "reason": "the program printed no measurement"}
    return out


def parse_heartbeats(stdout: str) -> dict:
    """What :data:`HEARTBEAT_PY` printed, as a dict: ``available``, ``period_s``, ``seconds``, ``stalls``
    [(start_s, length_s)] and ``heartbeats`` [(send_s, arrival_s)]; or ``available`` False and the ``reason``."""
    out = {"available": True, "stalls": [], "heartbeats": []}
    for key, *rest in _lines(stdout):
        if key == "unavailable":
            return {"available": False, "reason": rest[0] if rest else "unavailable"}
        a, b = (float(x) for x in rest[0].split())
        if key == "period":
            out["period_s"], out["seconds"] = a, b
        else:
            out["stalls" if key == "stall" else "heartbeats"].append((a, b))
    if "period_s" not in out or not out["heartbeats"]:
        return {"available": False, "reason": "the program printed no heartbeat"}
    return out


@exclusive()
def measure_two_phase(*, python: str | None, quick: bool = False, plan: dict | None = None) -> dict:
    """Run :data:`TWO_PHASE_PY` with ``python`` (the interpreter; the program needs only its standard
    library): a PostgreSQL server of its own on 127.0.0.1, started and stopped by the program, and commits
    with and without PREPARE TRANSACTION over 1-4 of its databases (``plan``: :func:`two_phase_plan`).
    Returns :func:`parse_two_phase`'s dict; ``available`` False, with the reason, where PostgreSQL is not
    installed or would not start."""
    plan = plan or two_phase_plan(quick)
    if python is None:
        return {"available": False, "reason": "no Python interpreter given"}
    argv = [python, program_file("wiess02_little_twopc.py", TWO_PHASE_PY), plan["commits"], plan["warmup"],
            plan["round_trips"], *plan["databases"]]
    r = run_command(argv, timeout_s=600.0)
    got = parse_two_phase(r.stdout) if r.available else {}
    return got if got.get("available") else _failed(r, _lines(r.stdout))


@exclusive()
def measure_heartbeats(*, python: str | None, quick: bool = False, rng=0, plan: dict | None = None) -> dict:
    """Run :data:`HEARTBEAT_PY` with ``python``: UDP heartbeats on loopback from a child process that is
    stopped (SIGSTOP) and resumed (SIGCONT) on ``plan`` (:func:`heartbeat_plan`, drawn from ``rng``).
    Returns :func:`parse_heartbeats`'s dict."""
    plan = plan or heartbeat_plan(quick, rng=rng)
    if python is None:
        return {"available": False, "reason": "no Python interpreter given"}
    argv = [python, program_file("wiess02_little_heartbeat.py", HEARTBEAT_PY), "run", plan["period_s"],
            plan["seconds"], *(f"{a!r}:{d!r}" for a, d in plan["stalls"])]
    r = run_command(argv, timeout_s=120.0 + plan["seconds"])
    got = parse_heartbeats(r.stdout) if r.available else {}
    return got if got.get("available") else _failed(r, _lines(r.stdout))


def _not_available(index, name, reason) -> pd.DataFrame:
    return pd.DataFrame({"status": [f"not available: {reason}"] * len(index)}, index=pd.Index(index, name=name))


def unit_costs(measured: dict, params: Params | None = None) -> pd.DataFrame:
    """The two costs a commit is made of, then and now. A message of the protocol: the 1990s RPC and
    Ethernet frame of :func:`message_s`; today half the mean round trip of a query through psql and TCP on
    loopback. A forced write: the 1990s flat-file store of :func:`force_s`; today PostgreSQL's own, a
    one-phase commit on one database less a round trip (means over ``measured``, :func:`measure_two_phase`).
    A third row gives, for comparison, the mean fdatasync of the coordinator's log file timed on its own
    between the commits (nothing for the 1990s). Index: cost. Columns: then_ms, now_ms, then_over_now."""
    p = params or Params()
    index = ["message", "forced write", "log file fdatasync"]
    if not measured.get("available"):
        return _not_available(index, "cost", measured.get("reason", "no measurement"))
    round_trip = float(np.mean(measured["round_trip_s"]))
    one = [c[1] for c in measured["commits"] if c[0] == 1]
    if not one:
        return _not_available(index, "cost", "no commit on one database was measured")
    now = [round_trip / 2, max(float(np.mean(one)) - round_trip, 0.0), float(np.mean(measured["force_s"]))]
    out = pd.DataFrame({"then_ms": [message_s(p) / ms, force_s(p, "flat file") / ms, math.nan],
                        "now_ms": np.array(now) / ms}, index=pd.Index(index, name="cost"))
    out["then_over_now"] = out["then_ms"] / out["now_ms"]
    return out


def two_phase_now(measured: dict, params: Params | None = None) -> pd.DataFrame:
    """PostgreSQL's commit across 1-4 databases, in one phase and with PREPARE TRANSACTION, beside the model.

    ``measured`` is :func:`measure_two_phase`'s dict. The measured columns are means over its commits
    (medians where named). The model today runs the same commit (:func:`commit_costs`, the protocol of
    ``params``) with today's costs from :func:`unit_costs`: a message is half a round trip, every forced
    write (a participant's and the coordinator's) PostgreSQL's flush. Its one-phase commit on one database
    is therefore the measured one (an input); every other model cell is a prediction from those two
    costs. The 1990s columns have the flat-file store. Index: databases. Columns: status, commits, one_phase_ms, decided_ms
    (the participants prepared and the decision forced), two_phase_ms, one_phase_median_ms,
    two_phase_median_ms, two_over_one, model_one_phase_ms, model_two_phase_ms, model_two_over_one,
    one_phase_1990s_ms, two_phase_1990s_ms, two_over_one_1990s.
    """
    p = params or Params()
    if not measured.get("available"):
        return _not_available(list(PARTICIPANTS), "databases", measured.get("reason", "no measurement"))
    samples = pd.DataFrame(measured["commits"], columns=["databases", "one", "decided", "two"])
    by_k = samples.groupby("databases")
    mean, median = by_k.mean() / ms, by_k.median() / ms
    costs = unit_costs(measured, p)
    msg, force = costs.loc["message", "now_ms"] * ms, costs.loc["forced write", "now_ms"] * ms
    then_m, then_f = message_s(p), force_s(p, "flat file")
    out = pd.DataFrame(index=mean.index)
    out["status"] = "measured"
    out["commits"] = by_k.size()
    out["one_phase_ms"], out["decided_ms"], out["two_phase_ms"] = mean["one"], mean["decided"], mean["two"]
    out["one_phase_median_ms"], out["two_phase_median_ms"] = median["one"], median["two"]
    out["two_over_one"] = out["two_phase_ms"] / out["one_phase_ms"]
    for k in out.index:
        out.loc[k, "model_one_phase_ms"] = commit_costs("one_phase", k, 1, message_s=msg, force_s=force)["finished_s"] / ms
        out.loc[k, "model_two_phase_ms"] = commit_costs(p.protocol, k, 1, message_s=msg, force_s=force)["finished_s"] / ms
        out.loc[k, "one_phase_1990s_ms"] = commit_costs("one_phase", k, 1, message_s=then_m,
                                                        force_s=then_f)["finished_s"] / ms
        out.loc[k, "two_phase_1990s_ms"] = commit_costs(p.protocol, k, 1, message_s=then_m,
                                                        force_s=then_f)["finished_s"] / ms
    out["model_two_over_one"] = out["model_two_phase_ms"] / out["model_one_phase_ms"]
    out["two_over_one_1990s"] = out["two_phase_1990s_ms"] / out["one_phase_1990s_ms"]
    return out


def heartbeat_delays(measured: dict) -> dict:
    """One-way loopback delays of the measured heartbeats (arrival less send): median and largest, us."""
    if not measured.get("available"):
        return {"median_us": math.nan, "max_us": math.nan}
    d = np.array([r - s for s, r in measured["heartbeats"]])
    return {"median_us": float(np.median(d)) * 1e6, "max_us": float(d.max()) * 1e6}


def heartbeat_now(measured: dict, *, timeouts_pings=(1.5, 2, 3, 5, 10)) -> pd.DataFrame:
    """False suspicions of a real heartbeat stream (``measured``: :func:`measure_heartbeats`'s dict) against the
    timeout, beside the shared HeartbeatDetector told of the same period and the stalls as they happened,
    with every heartbeat delayed by the measured median.

    A monitor suspects when nothing has arrived for the timeout, so the measured count is the number of
    gaps between arrivals (and from the last to the end) longer than the timeout. The model knows only the
    stalls it was told of; a busy machine adds silences of its own. Index: timeout_pings. Columns: status,
    timeout_ms, measured_false, model_false, stalls_over_timeout (certain to be suspected), stalls_near_timeout
    (within a period below it: suspected or not by the heartbeats' phase), unplanned_over_timeout (two sends
    further apart than the timeout with no stall between them: the live sender was scheduled late),
    late_deliveries (arrivals further apart than the timeout whose sends were not: the receiver was late).
    """
    index = [str(t) for t in timeouts_pings]
    if not measured.get("available"):
        return _not_available(index, "timeout_pings", measured.get("reason", "no measurement"))
    period, seconds = measured["period_s"], measured["seconds"]
    beats = sorted(measured["heartbeats"])
    sends, arrivals = np.array([b[0] for b in beats]), np.array([b[1] for b in beats])
    median_delay = float(np.median(arrivals - sends))
    stalls = [tuple(x) for x in measured["stalls"]]
    lengths = np.array([d for _, d in stalls])
    send_gaps, arrival_gaps = np.diff(sends), np.diff(arrivals)
    planned = np.array([any(a < t1 and a + d > t0 for a, d in stalls) for t0, t1 in itertools.pairwise(sends)],
                       dtype=bool)
    rows = []
    for pings, label in zip(timeouts_pings, index, strict=True):
        timeout = pings * period
        sim = Simulation()
        det = HeartbeatDetector(sim, period_s=period, timeout_s=timeout, stalls=stalls,
                                delay=lambda g: median_delay, rng=0)
        sim.run(until=seconds)
        last_gap = seconds - np.sort(arrivals)[-1]
        rows.append({"timeout_pings": label, "status": "measured", "timeout_ms": timeout / ms,
                     "measured_false": int(np.sum(np.diff(np.sort(arrivals)) > timeout) + (last_gap > timeout)),
                     "model_false": det.summary(seconds)["false_suspicions"],
                     "stalls_over_timeout": int(np.sum(lengths > timeout)),
                     "stalls_near_timeout": int(np.sum((lengths > timeout - period) & (lengths <= timeout))),
                     "unplanned_over_timeout": int(np.sum((send_gaps > timeout) & ~planned)),
                     "late_deliveries": int(np.sum((arrival_gaps > timeout) & (send_gaps <= timeout)))})
    return pd.DataFrame(rows).set_index("timeout_pings")
