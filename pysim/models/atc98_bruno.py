"""The Eclipse operating system: reservation domains and MTR-LS (Bruno, Gabber, Ozden, Silberschatz, USENIX ATC 1998).

Regenerates Example 1 (§4: an I/O-bound process among infinite loops under
round robin, against the rate its reservation promises), Example 2 (§5.1,
Figure 6: the MTR-LS token list, panel by panel), Figure 9 (an MPEG
player's buffer underflows under CPU overload against its reservation, with
the reservation each scheduler needs), Figures 11 and 12 (a sleeper's
wake-up delay and an I/O-bound process's rate against the number of
``onoff`` hogs) and Table 2 (the source sizes, taken as given).

First principles: every run is the lab's CPU scheduler
(:mod:`pysim.sw.sched`) with a 5 ms clock tick (200 Hz) and a 0.5 s service
cycle (§6.2), the paper's processes as phase scripts (``onoff``: 11 ms of
CPU, 5 ms asleep; ``sleeper``; the I/O-bound loop of Example 1) and three
policies:

* MTR-LS (§5): :class:`pysim.sw.sched.MtrLs` over the domains' *effective*
  reservations (§6: a_i + (1 - sum a_j) / n, so every domain holds tokens),
  subclassed here (:class:`EclipseMtrLs`) to add §5.1's preemption of the
  running domain by an arriving one that is ahead of it in the list; the
  shared policy has none (see the report's shared-part request);
* WRR (§6.2): :class:`EclipseWrr`, the shared
  :class:`~pysim.sw.sched.WeightedRoundRobin` with Eclipse's per-domain
  budget (``cpu_time_left``, renewed every cycle; run_hi before run_lo) and
  a slice of one clock tick (the clock handler requeues the runner at every
  tick). Example 1 uses the paper's own round robin with a 10 ms slice;
* Plan 9's priority scheduler, which the paper does not describe beyond
  "adjusts the priorities of processes according to their CPU consumption":
  the shared :class:`~pysim.sw.sched.DecayUsage` (4.4BSD), an assumed
  stand-in.

Calibrated on one cell: the MPEG player's CPU per frame, on the reservation
MTR-LS needs to stop underflows (15%, Figure 9). The player is a paced
producer: it may run up to ``mpeg_buffer_frames`` frames ahead of the
decoder card, which displays ``mpeg_fps`` frames a second; a 200 Hz sample
counts an underflow when the frame on display has not been delivered. The
reservation WRR needs (55%) is a prediction. Example 1's expected rate and
Table 2 are inputs (arithmetic on stated values; the authors' source
counts).

Then vs now (:func:`measure_now`): onoff hogs, a sleeper and an I/O-like
loop (1 ms of CPU, 23 ms asleep) pinned to one core of this machine with
``sched_setaffinity`` under today's Linux scheduler, at several N and nice
levels; a C program built here, run through :mod:`pysim.harness`.

Not reproduced: Figure 10 (I/O overload; the text gives neither the MPEG
player's I/O demand, the disk, nor the random-I/O processes' request sizes,
and no number), Table 1 and Figures 1-8 (no data). See
papers/atc98_bruno/paper.yaml.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.harness.runners import cache_dir
from pysim.hw.catalog import Machine
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.sw.sched import DecayUsage, MtrLs, RoundRobin, Scheduler, Task, WeightedRoundRobin
from pysim.units import MHz
from pysim.harness.exclusive import exclusive

#: §7.1's machine. Only its name matters: every time in the model is stated or assumed in seconds.
MICRON_MILLENIA = Machine(
    name="Micron Millenia (Pentium 133 MHz)", cpu="Intel Pentium", clock_hz=133 * MHz, used_by=("atc98_bruno",),
    sources={"clock_hz": "paper: atc98_bruno §7.1 (an Intel Pentium processor running at 133MHz)"},
)

POLICIES = ("plan9", "wrr", "mtrls")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in seconds, reservations as fractions of the CPU."""

    # the kernel (§6.2)
    tick_s: float = stated(0.005, "§6.2: clock interrupts at 200Hz")
    cycle_s: float = stated(0.5, "§6.2: the CPU service cycle (T) is 1/2 second long")
    fs_reservation: float = stated(0.2, "§7.2: the file system runs in domain #1 with a fixed 20% CPU "
                                        "reservation (assumed for §7.3-7.4 too: 'in all cases')", ge=0, lt=1)
    plan9_quantum_s: float = assumed(0.1, "Plan 9's scheduler is not described (§7.1); 4.4BSD's 100 ms "
                                          "round-robin quantum among equal priorities")
    # the workloads (§4, §7)
    onoff_cpu_s: float = stated(0.011, "§7.1: each copy consumes 11ms of CPU")
    onoff_sleep_s: float = stated(0.005, "§7.1: and then sleeps for 5ms")
    sleeper_cpu_s: float = assumed(0.001, "§7.3 prints '| 1msec.' (OCR): 1 ms read, 11 ms possible; a sleeper "
                                          "is light, and 1 ms matches Example 1's CPU phase")
    sleeper_sleep_s: float = stated(0.1, "§7.3: then sleeps for 100 msec. repeatedly")
    io_cpu_s: float = stated(0.001, "§4 Example 1: 1 msec. of CPU to issue the next I/O request "
                                    "(assumed for Figure 12's I/O-bound program too)")
    io_disk_s: float = stated(0.023, "§4 Example 1: each I/O request requires 23 msec. to complete "
                                     "(assumed for Figure 12)")
    example1_loops: int = stated(10, "§4 Example 1: n = 10", ge=1)
    example1_slice_s: float = stated(0.010, "§4 Example 1: delta = 10 msec.")
    example1_reservation: float = stated(0.5, "§4 Example 1: we reserve 0.5 of the CPU", gt=0, le=1)
    max_onoffs: int = stated(10, "Figures 11-12: 0 to 10 concurrent onoff processes", ge=1)
    wrr_reservation: float = stated(0.25, "Figures 11-12: 'WRR with 25% reservation'", ge=0, lt=1)
    figure9_onoffs: int = stated(8, "§7.2: 8 concurrent instances of the onoff program", ge=1)
    # the MPEG player (§7.2): nothing but its threads is stated
    mpeg_fps: float = assumed(30.0, "MPEG-1 video at the NTSC frame rate; the text gives no frame rate")
    mpeg_buffer_frames: int = assumed(3, "the decoder card's data FIFO: a few frames; not in the text", ge=1)
    mpeg_frame_cpu_s: float = calibrated(0.00976025, "the player's CPU per frame (reading, parsing, writing to the "
                                                "card, its file system work included)")
    # the mechanisms (switches, so a counterfactual is a change of parameters)
    mtrls_preempts: bool = stated(True, "§5.1: a running process is preempted by an arriving one whose domain "
                                        "is ahead in L, at the end of the preemption interval")
    mtrls_list_order: bool = stated(True, "§5.1, Figure 4: the first runnable token in L runs")
    wrr_budgets: bool = stated(True, "§6.2: cpu_time_left per domain, run_hi before run_lo, renewed each cycle")
    # Table 2 (the authors' source counts: inputs)
    plan9_portable_lines: int = given(31046, "Table 2, portable, Plan9 2nd ed.")
    plan9_pc_lines: int = given(19031, "Table 2, PC dependent, Plan9 2nd ed.")
    eclipse_portable_changed: int = given(1143, "Table 2, portable, Eclipse (changed lines)")
    eclipse_pc_changed: int = given(22, "Table 2, PC dependent, Eclipse (changed lines)")
    eclipse_total_lines: int = given(51040, "Table 2, total, Eclipse")


CALIBRATION = (Fit("mpeg_frame_cpu_s", "thresholds", "MTR-LS", "threshold_pct", (0.001, 0.012)),)
INPUTS = (
    Inputs(("plan9_portable_lines", "plan9_pc_lines", "eclipse_portable_changed", "eclipse_pc_changed",
            "eclipse_total_lines"),
           cells("table2", ["portable", "PC dependent", "total"], ["plan9_lines"])
           + cells("table2", ["portable", "PC dependent"], ["eclipse_changed_lines"])
           + cells("table2", ["total"], ["eclipse_lines"]),
           "the authors' counts of their own source, taken as given; Plan 9's total is their sum"),
    Inputs((), cells("example1", [10], ["expected_per_s"]),
           "the rate §4 expects from the reservation: 1 / (cpu / a + io), arithmetic on stated values"),
    Inputs((), cells("example2", ["a.1", "a.2", "a.3"], ["domain", "left"]),
           "Figure 6(a) is the initial list: the stated quanta 10, 5 and 15 in domain order"),
)
COUNTERFACTUALS = (
    Counterfactual("no-wakeup-preemption", {"mtrls_preempts": False},
                   "MTR-LS without §5.1's preemption: a domain ahead in L that wakes waits for the running "
                   "quantum to end (the shared MtrLs as it stands)"),
    Counterfactual("fine-round-robin", {"example1_slice_s": 0.0002, "tick_s": 0.0002},
                   "round robin with 0.2 ms slices and ticks, close to processor sharing: a value §6.2's "
                   "200 Hz clock rules out"),
    Counterfactual("no-list-order", {"mtrls_list_order": False},
                   "MTR-LS's tokens kept, but the ready processes served first come, first served, not in the "
                   "order of L: the move to the rear switched off as a priority"),
    Counterfactual("light-load", {"figure9_onoffs": 1},
                   "one onoff instead of eight against the MPEG player: no CPU overload"),
    Counterfactual("no-wrr-budgets", {"wrr_budgets": False},
                   "WRR without per-domain budgets: plain round robin by clock tick, reservations ignored"),
)


# --- the policies -----------------------------------------------------------------------

class EclipseMtrLs(MtrLs):
    """MTR-LS as §5 specifies it, with the switches the counterfactuals turn: ``preempt`` (a domain
    that wakes ahead of the running one in L preempts it at the next tick, §5.1; the Scheduler applies
    it at the preemption interval, 5 ms in Eclipse, or at once with ``tick_s = 0``) and ``ordered``
    (off: first come, first served, the tokens only bounding a run). With ``record``, ``history`` keeps
    the list after every decision epoch (Figure 6); off, it stays None: with fine ticks the list holds
    hundreds of tokens, and copying it at every charge dominated the run."""

    def __init__(self, reservations: dict, cycle_s: float, *, preempt: bool = True, ordered: bool = True,
                 record: bool = False):
        super().__init__(reservations, cycle_s, preempt=preempt and ordered)
        self.ordered, self.history = ordered, [] if record else None

    def pick(self, ready, cpu, now):
        if not self.ordered:  # the counterfactual: first come, first served; the tokens only bound a run
            return min(ready, key=lambda t: t.runnable_since)
        return super().pick(ready, cpu, now)

    def charge(self, task, ran_s, now):
        super().charge(task, ran_s, now)
        if self.history is not None:
            self.history.append((now, task.domain, self.snapshot()))


class EclipseWrr(WeightedRoundRobin):
    """§6.2's WRR: each domain has ``cpu_time_left`` for the current service cycle (its reservation x
    the cycle), renewed at every cycle's start; ready processes of domains with time left (run_hi) run
    before the others (run_lo), first come first served in each; the clock handler requeues the runner
    at every tick, so the slice is one tick. With ``budgets`` off every domain is alike: round robin."""

    def __init__(self, reservations: dict, cycle_s: float, tick_s: float, *, budgets: bool = True):
        super().__init__(tick_s)
        self.shares, self.cycle_s, self.budgets = dict(reservations), cycle_s, budgets
        self.cycle, self.left, self.hi = -1, {}, set()

    def _renew(self, now):
        cycle = math.floor(now / self.cycle_s + 1e-9)
        if cycle != self.cycle:
            self.cycle, self.left = cycle, {d: a * self.cycle_s for d, a in self.shares.items()}
            # run_hi's domains, kept beside the budgets: pick tests membership, not a budget per task
            self.hi = {d for d, left in self.left.items() if left > 1e-12} if self.budgets else set()

    def pick(self, ready, cpu, now):
        self._renew(now)
        hi = [t for t in ready if t.domain in self.hi]
        return min(hi or ready, key=lambda t: t.runnable_since)  # the first come in run_hi, else in run_lo

    def quantum(self, task, now):
        return self.quantum_s

    def charge(self, task, ran_s, now):
        self._renew(now - ran_s)
        left = self.left[task.domain] = self.left.get(task.domain, 0.0) - ran_s
        if left <= 1e-12:
            self.hi.discard(task.domain)


def effective(explicit: dict) -> dict:
    """§6: the effective reservation of domain i is a_i + (1 - sum a_j) / n."""
    total = sum(explicit.values())
    if total > 1 + 1e-12:
        raise ValueError(f"reservations sum to {total:.3f} > 1")
    return {d: a + (1.0 - total) / len(explicit) for d, a in explicit.items()}


def _policy(p: Params, name: str, explicit: dict):
    eff = effective(explicit)
    if name == "mtrls":
        return EclipseMtrLs(eff, p.cycle_s, preempt=p.mtrls_preempts, ordered=p.mtrls_list_order)
    if name == "wrr":
        return EclipseWrr(eff, p.cycle_s, p.tick_s, budgets=p.wrr_budgets)
    if name == "plan9":
        return DecayUsage(quantum_s=p.plan9_quantum_s, tick_s=p.tick_s)
    raise ValueError(f"policy must be one of {POLICIES}, got {name!r}")


def _onoffs(p: Params, n: int) -> list:
    # staggered starts, as copies launched one after the other from a shell would be
    return [(Task(f"onoff{k}", [("cpu", p.onoff_cpu_s), ("sleep", p.onoff_sleep_s)], domain=f"onoff{k}"),
             k * 0.0013) for k in range(n)]


def _duration(quick: bool) -> float:
    return 4.0 if quick else 12.0


# --- Example 2: the token list of Figure 6 ------------------------------------------------

def example2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Example 2 (§5.1, Figure 6): quanta 10, 5, 15 for D1-D3, all busy; P1 runs 7 and leaves, P2
    exhausts its 5, P3 runs 3 when P1 returns and preempts it. Run on the scheduler with no ticks
    (time in the example's units). Index: panel.position ('a.1' ...). Columns: domain, left."""
    p = params or Params()
    sim = Simulation()
    quanta = {"1": 10.0, "2": 5.0, "3": 15.0}
    cycle = sum(quanta.values())
    policy = EclipseMtrLs({d: q / cycle for d, q in quanta.items()}, cycle, preempt=p.mtrls_preempts,
                          record=True)
    s = Scheduler(sim, policy, tick_s=0.0)
    s.add(Task("P1", [("cpu", 7.0), ("sleep", 8.0), ("cpu", 100.0)], domain="1", loop=False))
    s.add(Task("P2", [("cpu", 100.0)], domain="2", loop=False))
    s.add(Task("P3", [("cpu", 100.0)], domain="3", loop=False))
    panels = {"a": policy.snapshot()}
    sim.run(until=15.5)
    for label, (_, _, snap) in zip("bcd", policy.history[:3]):
        panels[label] = snap
    rows = {f"{label}.{k + 1}": {"domain": int(d), "left": left}
            for label, snap in panels.items() for k, (d, left) in enumerate(snap)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("token")


# --- Example 1 and Figures 11-12: a light process among hogs ------------------------------

def _light_run(p: Params, policy: str, n: int, light: str, reservation: float, quick: bool,
               *, hog: str = "onoff", rr_slice_s: float | None = None) -> dict:
    """One light process (``sleeper`` or ``io``) in domain 'light' with ``reservation`` against ``n`` hogs
    ('onoff', or 'loop': Example 1's infinite loops), each in its own domain; the file system's domain
    holds its reservation (§7.2). Returns its mean wake-up delay (s) and its loops per second."""
    sim = Simulation()
    explicit = {"light": reservation}
    if hog == "onoff":
        explicit["fs"] = p.fs_reservation
    hogs = (_onoffs(p, n) if hog == "onoff" else
            [(Task(f"loop{k}", [("cpu", 3600.0)], domain=f"loop{k}"), 0.0) for k in range(n)])
    explicit.update({t.domain: 0.0 for t, _ in hogs})
    if policy == "rr":
        sched = Scheduler(sim, RoundRobin(rr_slice_s), tick_s=0.0)
    else:
        sched = Scheduler(sim, _policy(p, policy, explicit), tick_s=p.tick_s)
    if light == "sleeper":
        script = [("cpu", p.sleeper_cpu_s), ("sleep", p.sleeper_sleep_s)]
    else:
        script = [("cpu", p.io_cpu_s), ("sleep", p.io_disk_s)]  # no contention on the device (§4, §7.4)
    task = Task(light, script, domain="light")
    for t, start in hogs:
        sched.add(t, start_s=start)
    sched.add(task, start_s=0.0021)
    warm, until = 1.0, _duration(quick)
    sim.run(until=warm)
    loops0, waits0 = task.loops, len(task.waits)
    sim.run(until=until)
    waits = task.waits[waits0:]
    return {"delay_s": float(np.mean(waits)) if waits else 0.0, "per_s": (task.loops - loops0) / (until - warm)}


@functools.lru_cache(maxsize=256)
def _light(p: Params, policy: str, n: int, light: str, reservation: float, quick: bool, hog: str = "onoff",
           rr_slice_s: float | None = None) -> dict:
    return _light_run(p, policy, n, light, reservation, quick, hog=hog, rr_slice_s=rr_slice_s)


def example1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Example 1 (§4): the I/O-bound process (1 ms of CPU, 23 ms of I/O, a 0.5 reservation) among n
    infinite loops. Index: n_loops. Columns: expected_per_s (what the reservation promises:
    1 / (cpu / a + io)), rr_per_s (simulated: round robin with the example's slice, the process
    appended to the tail of the ready queue), bound_per_s (§4's 1000 / (1 + n delta + 23)), and
    simulated wrr_per_s (Eclipse's WRR, 5 ms tick), mtrls_per_s, plan9_per_s."""
    p = params or Params()
    a = p.example1_reservation
    rows = {}
    for n in sorted({0, 1, 2, 5, p.example1_loops} if quick else range(p.example1_loops + 1)):
        row = {"expected_per_s": 1.0 / (p.io_cpu_s / a + p.io_disk_s),
               "rr_per_s": _light(p, "rr", n, "io", a, quick, "loop", p.example1_slice_s)["per_s"],
               "bound_per_s": 1.0 / (p.io_cpu_s + n * p.example1_slice_s + p.io_disk_s)}
        for pol in POLICIES:
            row[f"{pol}_per_s"] = _light(p, pol, n, "io", a, quick, "loop")["per_s"]
        rows[n] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("n_loops")


SERIES = (("plan9", "plan9", 0.0), ("wrr0", "wrr", 0.0), ("wrr25", "wrr", None), ("mtrls0", "mtrls", 0.0))


def _figure(p: Params, light: str, column: str, scale: float, quick: bool) -> pd.DataFrame:
    ns = sorted({0, 2, 5, p.max_onoffs} if quick else range(p.max_onoffs + 1))
    rows = {}
    for n in ns:
        rows[n] = {f"{name}_{column}": scale * _light(
            p, pol, n, light, p.wrr_reservation if res is None else res, quick)[
            "delay_s" if light == "sleeper" else "per_s"] for name, pol, res in SERIES}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("n_onoff")


def figure11(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 11: the sleeper's mean wake-up delay (ms) against the number of onoff processes.
    Columns: plan9_delay_ms, wrr0_delay_ms, wrr25_delay_ms, mtrls0_delay_ms."""
    return _figure(params or Params(), "sleeper", "delay_ms", 1000.0, quick)


def figure12(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 12: the I/O-bound program's rate (/s) against the number of onoff processes.
    Columns: plan9_io_per_s, wrr0_io_per_s, wrr25_io_per_s, mtrls0_io_per_s."""
    return _figure(params or Params(), "io", "io_per_s", 1.0, quick)


# --- Figure 9: the MPEG player under CPU overload -------------------------------------------

class PacedScript(list):
    """The MPEG player's phases: wait until the card has room, then a frame's CPU work.

    The wait is computed when the phase starts: frame k may be produced from (k - B) / fps on (the card
    holds B frames). The shared Task reads ``script[phase]`` as each phase begins, so this list answers
    with the wait of that moment and records each frame's delivery time."""

    def __init__(self, sim, fps: float, buffer_frames: int, frame_cpu_s: float):
        super().__init__([("sleep", 0.0), ("cpu", frame_cpu_s)])
        self.sim, self.fps, self.buffer, self.task, self.delivered = sim, fps, buffer_frames, None, []

    def __getitem__(self, i):
        kind, s = super().__getitem__(i)
        if i == 0 and self.task is not None:
            while len(self.delivered) < self.task.loops:  # a frame has just been handed to the card
                self.delivered.append(self.sim.now)
            k = len(self.delivered)
            s = max(0.0, (k - self.buffer) / self.fps - self.sim.now)
        return kind, s


def _mpeg_run(p: Params, policy: str, reservation: float, quick: bool) -> float:
    """Underflows per second (200 Hz samples) of the player in domain #2 with ``reservation``."""
    sim = Simulation()
    explicit = {"fs": p.fs_reservation, "mpeg": reservation}
    hogs = _onoffs(p, p.figure9_onoffs)
    explicit.update({t.domain: 0.0 for t, _ in hogs})
    sched = Scheduler(sim, _policy(p, policy, explicit), tick_s=p.tick_s)
    script = PacedScript(sim, p.mpeg_fps, p.mpeg_buffer_frames, p.mpeg_frame_cpu_s)
    player = Task("mpeg", script, domain="mpeg")
    script.task = player
    for t, start in hogs:
        sched.add(t, start_s=start)
    sched.add(player)
    until = _duration(quick)
    sim.run(until=until)
    script[0]  # book a delivery that ended the run
    delivered = np.array(script.delivered + [math.inf] * int(until * p.mpeg_fps + p.mpeg_buffer_frames + 2))
    # the card shows frame k during [(k + B) / fps, (k + B + 1) / fps): a sample underflows if it is missing
    samples = np.arange(1.0, until, 0.005)
    frame = np.floor(samples * p.mpeg_fps).astype(int) - p.mpeg_buffer_frames
    late = (frame >= 0) & (delivered[np.maximum(frame, 0)] > samples)
    return float(late.sum() / (until - 1.0))


@functools.lru_cache(maxsize=1024)
def _mpeg(p: Params, policy: str, reservation: float, quick: bool) -> float:
    return _mpeg_run(p, policy, reservation, quick)


def _grid(quick: bool) -> list:
    return [r / 100 for r in range(0, 101, 10 if quick else 5)]


def figure9(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 9: MPEG buffer underflows per second against the player's CPU reservation (%), 8 onoff.
    Columns: plan9_underflows_per_s, wrr_underflows_per_s, mtrls_underflows_per_s."""
    p = params or Params()
    rows = {round(100 * r): {f"{pol}_underflows_per_s": _mpeg(p, pol, r, quick) for pol in POLICIES}
            for r in _grid(quick) if r + p.fs_reservation <= 1.0}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("reservation_pct")


def _threshold(p: Params, pol: str, quick: bool) -> float:
    """The least reservation (%) from which the player has no underflow: the first grid point with none,
    then a bisection between it and the grid point below (the paper's 'binary search', §7)."""
    grid = [r for r in _grid(quick) if r + p.fs_reservation <= 1.0]
    under = [_mpeg(p, pol, r, quick) for r in grid]
    for j, u in enumerate(under):
        if u == 0 and all(v == 0 for v in under[j:]):
            break
    else:
        return math.inf
    if j == 0:
        return 0.0
    lo, hi = grid[j - 1], grid[j]
    for _ in range(4 if quick else 7):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _mpeg(p, pol, mid, quick) == 0 else (mid, hi)
    return 100.0 * hi


def thresholds(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """The reservation (%) each scheduler needs to prevent underflows (§7.2); inf where none suffices.
    Index: scheduler (MTR-LS, WRR, Plan9). Column: threshold_pct."""
    p = params or Params()
    names = {"mtrls": "MTR-LS", "wrr": "WRR", "plan9": "Plan9"}
    return pd.DataFrame({"threshold_pct": {names[pol]: _threshold(p, pol, quick) for pol in
                                           ("mtrls", "wrr", "plan9")}}).rename_axis("scheduler")


# --- Table 2 ------------------------------------------------------------------------------

def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: Plan 9 and Eclipse source sizes (lines), taken as given. Columns: plan9_lines,
    eclipse_changed_lines, eclipse_lines, changed_pct (changed lines over Plan 9's)."""
    p = params or Params()
    df = pd.DataFrame({
        "plan9_lines": [p.plan9_portable_lines, p.plan9_pc_lines, p.plan9_portable_lines + p.plan9_pc_lines],
        "eclipse_changed_lines": [p.eclipse_portable_changed, p.eclipse_pc_changed,
                                  p.eclipse_portable_changed + p.eclipse_pc_changed],
        "eclipse_lines": [np.nan, np.nan, p.eclipse_total_lines]},
        index=pd.Index(["portable", "PC dependent", "total"], name="part"))
    df["changed_pct"] = 100.0 * df["eclipse_changed_lines"] / df["plan9_lines"]
    return df


# --- then vs now ----------------------------------------------------------------------------

#: N onoff hogs (11 ms of CPU, 5 ms asleep, at a nice level), a sleeper (1 ms of CPU, 100 ms asleep: its
#: wake-up delay) and an I/O-like loop (1 ms of CPU, 23 ms asleep: its rate), all pinned to CPU 0.
ONOFF_C = r"""#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static void burn(double s) { double end = cpu() + s; while (cpu() < end) { } }
static void nap(double s) { struct timespec t = {(time_t)s, (long)((s - (time_t)s) * 1e9)}; nanosleep(&t, 0); }

int main(int argc, char **argv) {
    int n = atoi(argv[1]), hog_nice = atoi(argv[2]); double dur = atof(argv[3]), warm = 0.5;
    cpu_set_t set; CPU_ZERO(&set); CPU_SET(atoi(argv[4]), &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("sched_setaffinity"); return 2; }
    pid_t kids[64];
    for (int k = 0; k < n && k < 64; k++) {
        if ((kids[k] = fork()) == 0) { setpriority(PRIO_PROCESS, 0, hog_nice); for (;;) { burn(0.011); nap(0.005); } }
    }
    int fd[2]; if (pipe(fd) != 0) return 2;
    pid_t s = fork();
    if (s == 0) {  /* the sleeper: anticipated wake-up = when it went to sleep + 100 ms */
        double t0 = mono(), sum = 0; int cnt = 0;
        while (mono() - t0 < dur) {
            burn(0.001);
            double want = mono() + 0.1; nap(0.1);
            double late = mono() - want;
            if (mono() - t0 > warm) { sum += late; cnt++; }
        }
        dprintf(fd[1], "sleeper_delay_ms %.6f %d\n", cnt ? 1e3 * sum / cnt : -1.0, cnt); _exit(0);
    }
    pid_t io = fork();
    if (io == 0) {  /* the I/O-like loop: 1 ms of CPU, then 23 ms away */
        double t0 = mono(); int cnt = 0;
        while (mono() - t0 < warm) { burn(0.001); nap(0.023); }
        double t1 = mono();
        while (mono() - t0 < dur) { burn(0.001); nap(0.023); cnt++; }
        dprintf(fd[1], "io_per_s %.6f %d\n", cnt / (mono() - t1), cnt); _exit(0);
    }
    waitpid(s, 0, 0); waitpid(io, 0, 0);
    for (int k = 0; k < n && k < 64; k++) { kill(kids[k], SIGKILL); waitpid(kids[k], 0, 0); }
    close(fd[1]);
    char buf[256]; ssize_t r; while ((r = read(fd[0], buf, sizeof buf)) > 0) fwrite(buf, 1, r, stdout);
    return 0;
}
"""


def _digest(text: str) -> str:
    """FNV-1a, 64 bits: names the build by its source."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def build_onoff() -> tuple:
    """(path of the compiled experiment, "") or (None, why not)."""
    d = cache_dir() / "atc98_bruno"
    d.mkdir(parents=True, exist_ok=True)
    exe = d / f"onoff-{_digest(ONOFF_C)}"
    if exe.exists():
        return exe, ""
    src = exe.with_suffix(".c")
    src.write_text(ONOFF_C)
    r = run_command(["gcc", "-O2", "-std=c99", "-o", exe, src], timeout_s=120.0)
    if not r.available:
        return None, r.reason
    if r.returncode != 0:
        return None, f"gcc failed: {r.stderr.strip()[-400:]}"
    return exe, ""


def measure_now(*, quick: bool = False, ns=None, nices=(0, 19), cpu: int = 0, rng=0) -> pd.DataFrame:
    """Run the experiment on this machine under today's Linux scheduler: N onoff hogs at each nice level,
    a sleeper and an I/O-like loop, all pinned to ``cpu``. Index: (nice, n_onoff). Columns:
    sleeper_delay_ms, io_per_s, available, reason. A missing compiler gives rows that say so."""
    ns = tuple(ns if ns is not None else ((0, 10) if quick else (0, 2, 4, 6, 8, 10)))
    dur = 1.5 if quick else 2.5  # the sleeper wakes every 100 ms: 20 wake-ups a point after the warm-up
    exe, why = build_onoff()
    rows = []
    for nice in nices:
        for n in ns:
            row = {"nice": nice, "n_onoff": n, "sleeper_delay_ms": np.nan, "io_per_s": np.nan,
                   "available": False, "reason": why}
            if exe is not None:
                with exclusive():  # one run at a time: its hogs are pinned to ``cpu``
                    r = run_command([exe, n, nice, dur, cpu], timeout_s=60.0)
                if r.available and r.returncode == 0:
                    vals = {w[0]: float(w[1]) for w in (ln.split() for ln in r.stdout.splitlines()) if len(w) >= 2}
                    row.update(sleeper_delay_ms=vals.get("sleeper_delay_ms", np.nan),
                               io_per_s=vals.get("io_per_s", np.nan), available=True, reason="")
                else:
                    row["reason"] = r.reason or r.stderr.strip()[-200:]
            rows.append(row)
    return pd.DataFrame(rows).set_index(["nice", "n_onoff"])
