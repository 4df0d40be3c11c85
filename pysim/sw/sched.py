"""CPU scheduling on the engine: tasks as phase scripts, one or more CPUs with affinity and a
balancer, a clock tick, context-switch cost, and pluggable policies.

A :class:`Task` loops over its phases: ``("cpu", s)`` needs ``s`` seconds
of a CPU, ``("sleep", s)`` waits, ``("io", s)`` holds an I/O server (a
second :class:`Scheduler`, or a plain delay); or, given ``decide``, asks it
for each next phase as the last one ends. A :class:`Scheduler` runs
tasks on its CPUs: each CPU asks the policy whom to run, runs it until its
phase ends or the policy's quantum expires, and decides again; preemption
happens only at clock ticks (``tick_s``; 0 means at once), as in a kernel
that reschedules from its timer interrupt: at the end of a quantum, or when
a woken task is one the policy prefers to a runner (``Policy.preempts``). ``switch_s`` is charged when a
CPU changes task.

Policies (all take the same calls: :class:`Policy`):

* :class:`RoundRobin` (one quantum each, in turn);
* :class:`WeightedRoundRobin` (quanta in proportion to weights);
* :class:`DecayUsage` (4.4BSD: priority from recent CPU use, decayed each
  second by ``2 load / (2 load + 1)``, plus nice);
* :class:`StrictPriority` (the highest priority runnable task, FIFO within
  a level; a task may ``yield`` its turn);
* :class:`StrideScheduling` (fair share by tickets, Waldspurger 1995);
* :class:`MtrLs` (move-to-rear list scheduling over reservation domains,
  Bruno et al. 1998: a list of (domain, quantum) tokens served front to
  back, consumed service moved to the rear);
* :class:`NumbaPolicy` (a pick function over an array of task state that a
  reader writes in Python and compiles with Numba).

Per task the scheduler records CPU time, the delays between becoming
runnable and running (wake-up latency), and completed loops of its script.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

PHASES = ("cpu", "sleep", "io")
# work left below a nanosecond is done: the clock cannot advance by less than its own rounding
EPS_S = 1e-9


@dataclass(eq=False)  # a task is itself: two with equal fields are still two (and lists find it by identity)
class Task:
    """A process: ``script`` (kind, seconds) phases run in a loop (or once with ``loop=False``)."""

    name: str
    script: list
    domain: str = ""
    weight: float = 1.0
    priority: int = 0        # StrictPriority: larger runs first
    nice: int = 0
    tickets: float = 100.0
    affinity: frozenset | None = None  # CPUs it may run on; None: any
    loop: bool = True
    yields: bool = False     # StrictPriority: give the CPU up at every tick if another task of its level waits
    decide: object = None    # next_phase(now) -> (kind, seconds) or None (the task ends): a script decided
    #                          as it runs (on shared state such as a buffer flag) instead of a fixed loop
    # run-time state
    phase: int = 0
    left: float = 0.0
    cpu_s: float = 0.0
    loops: int = 0
    waits: list = field(default_factory=list)
    runnable_since: float | None = None
    done: bool = False

    def __post_init__(self):
        if not self.script:
            raise ValueError(f"task {self.name!r} has no phases")
        for kind, s in self.script:
            if kind not in PHASES or not s >= 0:
                raise ValueError(f"task {self.name!r}: phases are ({'|'.join(PHASES)}, seconds >= 0), got ({kind}, {s})")
        self.left = self.script[0][1]


class Policy:
    """The calls a scheduler makes. ``pick`` chooses among ``ready`` tasks; ``quantum`` bounds a run;
    ``charge`` books CPU time; ``woke`` and ``queued`` note a task becoming runnable."""

    def attach(self, scheduler) -> None:
        self.scheduler = scheduler

    def woke(self, task, now) -> None:
        pass

    def pick(self, ready, cpu, now):
        raise NotImplementedError

    def quantum(self, task, now) -> float:
        return math.inf

    def charge(self, task, ran_s, now) -> None:
        pass

    def preempts(self, woken, running, ran_s, now) -> bool:
        """Whether ``woken`` should take the CPU from ``running`` (at the next tick)."""
        return False


class RoundRobin(Policy):
    """First come, first served among the ready, each run limited to ``quantum_s``."""

    def __init__(self, quantum_s: float):
        if not quantum_s > 0:
            raise ValueError(f"quantum_s must be > 0, got {quantum_s!r}")
        self.quantum_s = quantum_s

    def pick(self, ready, cpu, now):
        return min(ready, key=lambda t: t.runnable_since)

    def quantum(self, task, now):
        return self.quantum_s


class WeightedRoundRobin(RoundRobin):
    """Round robin with each task's quantum ``quantum_s * weight``."""

    def quantum(self, task, now):
        return self.quantum_s * task.weight


class DecayUsage(Policy):
    """4.4BSD's scheduler: priority = usage / 4 + 2 nice (lower runs first), usage += ticks run,
    decayed every second by 2 load / (2 load + 1); a round-robin quantum among equals."""

    def __init__(self, quantum_s: float = 0.1, tick_s: float = 0.01):
        self.quantum_s, self.tick_s = quantum_s, tick_s
        self.usage, self.last_decay = {}, 0.0

    def _decay(self, now):
        while now - self.last_decay >= 1.0:
            load = max(1.0, len(self.scheduler.ready_tasks()))
            factor = 2 * load / (2 * load + 1)
            self.usage = {k: v * factor for k, v in self.usage.items()}
            self.last_decay += 1.0

    def prio(self, task) -> float:
        return self.usage.get(task.name, 0.0) / 4 + 2 * task.nice

    def pick(self, ready, cpu, now):
        self._decay(now)
        return min(ready, key=lambda t: (self.prio(t), t.runnable_since))

    def quantum(self, task, now):
        return self.quantum_s

    def charge(self, task, ran_s, now):
        self.usage[task.name] = self.usage.get(task.name, 0.0) + ran_s / self.tick_s

    def preempts(self, woken, running, ran_s, now):
        # the running task's usage grows by a tick per tick it has run in this turn
        return self.prio(woken) < self.prio(running) + ran_s / self.tick_s / 4


class StrictPriority(Policy):
    """The highest ``priority`` ready task runs; equals in FIFO order. A task with ``yields`` set
    gives way at each tick to others of its level (the fix for a starved checkpointer)."""

    def pick(self, ready, cpu, now):
        best = ready[0]
        for t in ready:  # one pass: the highest priority, and among equals the first come (the first listed)
            if t.priority > best.priority or (t.priority == best.priority and t.runnable_since < best.runnable_since):
                best = t
        return best

    def quantum(self, task, now):
        return self.scheduler.tick_s if task.yields and self.scheduler.tick_s else math.inf

    def preempts(self, woken, running, ran_s, now):
        return woken.priority > running.priority


class StrideScheduling(Policy):
    """Stride scheduling: each task's pass advances by stride = L / tickets per quantum run; the
    lowest pass runs. Shares converge to the tickets' proportions."""

    def __init__(self, quantum_s: float, big: float = 1e6):
        self.quantum_s, self.big, self.pass_ = quantum_s, big, {}

    def woke(self, task, now):
        if task.name not in self.pass_:
            self.pass_[task.name] = min(self.pass_.values(), default=0.0)

    def pick(self, ready, cpu, now):
        return min(ready, key=lambda t: (self.pass_.setdefault(t.name, 0.0), t.runnable_since))

    def quantum(self, task, now):
        return self.quantum_s

    def charge(self, task, ran_s, now):
        self.pass_[task.name] = self.pass_.get(task.name, 0.0) + self.big / task.tickets * ran_s / self.quantum_s


class MtrLs(Policy):
    """Move-to-rear list scheduling (Bruno et al., USENIX 1998, §5): a list of [domain, left] tokens;
    each domain's tokens sum to its reservation x ``cycle_s``. The first token whose domain has a
    ready task runs it for at most ``left``; the service consumed is cut from that token and appended
    to the rear as a new token of that domain (adjacent tokens of one domain merge). A task that wakes
    in a domain ahead of the running one in the list preempts it at the next tick (§5.1), unless
    ``preempt`` is off."""

    def __init__(self, reservations: dict, cycle_s: float, *, preempt: bool = True):
        if not reservations or not cycle_s > 0 or sum(reservations.values()) > 1 + 1e-9:
            raise ValueError("reservations (domain -> share, summing to at most 1) and cycle_s > 0 are needed")
        self.cycle_s, self.preempt = cycle_s, preempt
        self.tokens = [[d, share * cycle_s] for d, share in reservations.items() if share > 0]
        self.unreserved = [d for d, share in reservations.items() if share == 0]

    def _token_of(self, ready):
        domains = {t.domain for t in ready}
        for k, (d, _) in enumerate(self.tokens):
            if d in domains:
                return k
        return None

    def pick(self, ready, cpu, now):
        k = self._token_of(ready)
        if k is None:  # only domains without a reservation want the CPU: first come, first served
            return min(ready, key=lambda t: t.runnable_since)
        d = self.tokens[k][0]
        return min((t for t in ready if t.domain == d), key=lambda t: t.runnable_since)

    def _first(self, domain) -> float:
        return next((k for k, (d, _) in enumerate(self.tokens) if d == domain), math.inf)

    def preempts(self, woken, running, ran_s, now):
        return self.preempt and self._first(woken.domain) < self._first(running.domain)

    def quantum(self, task, now):
        for d, left in self.tokens:
            if d == task.domain:
                return left
        return self.scheduler.tick_s or math.inf

    def charge(self, task, ran_s, now):
        # Cut the service from the domain's tokens front to back (a run rounded up to a tick may
        # overrun its token and borrow from the next), and move what was cut to the rear: a
        # domain's tokens always sum to its reservation. The list stays merged (no empty token, no
        # two adjacent tokens of one domain), so only the tokens cut to nothing and the rear change:
        # an emptied token leaves, and its two neighbours merge if they share a domain. With fine
        # ticks the list grows to hundreds of tokens, and rebuilding it on every charge dominated.
        d, owed, tokens = task.domain, ran_s, self.tokens
        k = 0
        while owed > 0 and k < len(tokens):
            dom, left = tokens[k]
            if dom != d:
                k += 1
                continue
            cut = min(owed, left)
            owed -= cut
            left -= cut
            if left > 1e-15:
                tokens[k] = [d, left]
                k += 1
                continue
            del tokens[k]
            if 0 < k < len(tokens) and tokens[k - 1][0] == tokens[k][0]:
                tokens[k - 1] = [tokens[k - 1][0], tokens[k - 1][1] + tokens[k][1]]
                del tokens[k]
        moved = ran_s - owed
        if moved > 0:
            if tokens and tokens[-1][0] == d:
                tokens[-1] = [d, tokens[-1][1] + moved]
            elif moved > 1e-15:
                tokens.append([d, moved])

    def snapshot(self) -> list:
        """The token list as (domain, left) pairs, front first."""
        return [(d, left) for d, left in self.tokens]


class NumbaPolicy(Policy):
    """A policy whose choice is ``pick(state, now) -> row`` over a float64 array with one row per ready
    task: [weight, priority, nice, cpu_s, runnable_since, tickets]; compile ``pick`` with numba.njit."""

    COLUMNS = ("weight", "priority", "nice", "cpu_s", "runnable_since", "tickets")

    def __init__(self, pick, quantum_s: float):
        self._pick, self.quantum_s = pick, quantum_s

    def pick(self, ready, cpu, now):
        state = np.array([[t.weight, t.priority, t.nice, t.cpu_s, t.runnable_since, t.tickets] for t in ready])
        row = int(self._pick(state, float(now)))
        if not 0 <= row < len(ready):
            raise ValueError(f"the compiled policy chose row {row} of {len(ready)}")
        return ready[row]

    def quantum(self, task, now):
        return self.quantum_s


class Scheduler:
    """Tasks on ``cpus`` CPUs under ``policy``; ``io`` is the Scheduler (or None: a plain delay) that
    serves the tasks' io phases; ``balance_s`` moves a task from the busiest CPU's queue to an idle CPU
    that may run it, every ``balance_s`` seconds (0: any CPU takes any ready task at once)."""

    def __init__(self, sim, policy: Policy, *, cpus: int = 1, tick_s: float = 0.0, switch_s: float = 0.0,
                 io=None, name: str = "cpu"):
        if cpus < 1 or tick_s < 0 or switch_s < 0:
            raise ValueError("cpus >= 1, tick_s >= 0 and switch_s >= 0 are needed")
        self.sim, self.policy, self.cpus, self.tick_s, self.switch_s = sim, policy, cpus, tick_s, switch_s
        self.io, self.name = io, name
        self.tasks, self.ready = [], []
        self.idle = [sim.event() for _ in range(cpus)]
        self.last = [None] * cpus
        self.running = [None] * cpus       # (task, start) on each CPU
        self.kick = [sim.event() for _ in range(cpus)]
        self.switches = 0
        policy.attach(self)
        for c in range(cpus):
            sim.process(self._cpu(c))

    def ready_tasks(self) -> list:
        return list(self.ready)

    def add(self, task: Task, *, start_s: float = 0.0) -> Task:
        self.tasks.append(task)
        self.sim.process(self._start(task, start_s))
        return task

    def _start(self, task, start_s):
        yield self.sim.timeout(start_s)
        yield from self._advance(task, first=True)

    def _make_ready(self, task):
        task.runnable_since = self.sim.now
        self.policy.woke(task, self.sim.now)
        self.ready.append(task)
        allowed = [c for c in range(self.cpus) if task.affinity is None or c in task.affinity]
        for c in allowed:
            if not self.idle[c].triggered:
                self.idle[c].succeed()
                return
        for c in allowed:  # no idle CPU: a better task takes one from its runner at the next tick
            if self.running[c] and not self.kick[c].triggered:
                runner, start = self.running[c]
                if self.policy.preempts(task, runner, self.sim.now - start, self.sim.now):
                    self.kick[c].succeed()
                    return

    def _next_phase(self, task) -> bool:
        """Move the task past a finished phase; False when a one-shot script has ended."""
        if task.decide is not None:
            nxt = task.decide(self.sim.now)
            if nxt is None:
                task.done = True
                return False
            kind, seconds = nxt
            if kind not in PHASES or not seconds >= 0:
                raise ValueError(f"task {task.name!r} decided ({kind}, {seconds}): phases are "
                                 f"({'|'.join(PHASES)}, seconds >= 0)")
            task.script, task.phase, task.left = [(kind, seconds)], 0, seconds
            return True
        task.phase += 1
        if task.phase == len(task.script):
            task.loops += 1
            if not task.loop:
                task.done = True
                return False
            task.phase = 0
        task.left = task.script[task.phase][1]
        return True

    def _continue(self, task):
        """After a finished phase: a CPU phase is runnable at once (no zero-delay hop that would
        let another task take its turn); sleep and io phases run as a process."""
        if self._next_phase(task):
            if task.script[task.phase][0] == "cpu":
                self._make_ready(task)
            else:
                self.sim.process(self._advance(task))

    def _advance(self, task, first=False):
        """Run the task's phases that are not CPU (sleep, io) until it needs a CPU again."""
        while True:
            if not first and task.left <= EPS_S and not self._next_phase(task):
                return
            first = False
            kind, _ = task.script[task.phase]
            if kind == "cpu":
                self._make_ready(task)
                return
            if kind == "sleep" or self.io is None:
                yield self.sim.timeout(task.left)
            else:
                yield self.sim.process(self.io.serve(task.name, task.left, task.domain))
            task.left = 0.0

    def serve(self, name, seconds, domain=""):
        """Serve ``seconds`` of work for another scheduler's task (this one as its I/O server)."""
        t = Task(name, [("cpu", seconds)], domain=domain, loop=False)
        done = self.sim.event()
        self.tasks.append(t)
        t._done_event = done
        self._make_ready(t)
        yield done

    def _cpu(self, c):
        sim = self.sim
        while True:
            mine = [t for t in self.ready if t.affinity is None or c in t.affinity]
            if not mine:
                self.idle[c] = sim.event()
                yield self.idle[c]
                continue
            task = self.policy.pick(mine, c, sim.now)
            self.ready.remove(task)
            task.waits.append(sim.now - task.runnable_since)
            if self.last[c] is not task and self.switch_s:
                self.switches += 1
                yield sim.timeout(self.switch_s)
            self.last[c] = task
            run = min(task.left, self.policy.quantum(task, sim.now))
            if self.tick_s and run < task.left:  # a preemption waits for the next tick
                run = math.ceil((sim.now + run) / self.tick_s - 1e-9) * self.tick_s - sim.now
                run = min(max(run, self.tick_s), task.left)
            start = sim.now
            self.running[c], self.kick[c] = (task, start), sim.event()
            ended = sim.timeout(run)
            fired = yield ended | self.kick[c]
            if ended in fired:
                ran = run
            else:  # preempted by a woken task: run on to the next tick (at once without ticks)
                stop = math.ceil(sim.now / self.tick_s - 1e-9) * self.tick_s if self.tick_s else sim.now
                stop = min(stop, start + run)
                if stop > sim.now:
                    yield sim.timeout(stop - sim.now)
                ran = stop - start
            self.running[c] = None
            task.left -= ran
            task.cpu_s += ran
            self.policy.charge(task, ran, sim.now)
            if task.left > EPS_S:
                self._make_ready(task)
            elif hasattr(task, "_done_event"):
                task.done = True
                task._done_event.succeed()
            else:
                self._continue(task)

    def stats(self) -> "pd.DataFrame":
        """Per task: CPU seconds, loops completed, mean and worst wait between runnable and running."""
        import pandas as pd
        rows = [{"task": t.name, "domain": t.domain, "cpu_s": t.cpu_s, "loops": t.loops,
                 "mean_wait_s": float(np.mean(t.waits)) if t.waits else 0.0,
                 "max_wait_s": float(np.max(t.waits)) if t.waits else 0.0}
                for t in self.tasks if not hasattr(t, "_done_event")]
        return pd.DataFrame(rows).set_index("task")
