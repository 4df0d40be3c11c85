"""Two-phase commit over a tree of participants, on the engine: messages, log writes, latency.

A :class:`Participant` has children (the participants it brought into the
transaction, for which it coordinates in turn), and may be read-only or vote
no. :func:`run` runs one commit on the engine with a message delay and a
forced-write time, under one of the protocols of Mohan, Lindsay and
Obermarck (1986):

* ``"basic"``: presumed nothing; every decision forced by the coordinator
  and by every subordinate, every decision acknowledged;
* ``"presumed_abort"``: an abort is never forced or acknowledged, and a
  read-only subordinate leaves after voting;
* ``"presumed_commit"``: the coordinator forces a record naming its
  subordinates before asking them (the collecting record), and a commit is
  not forced by subordinates nor acknowledged.

It returns the outcome, the time the root decided and the time the last
acknowledgement arrived, and counts messages, forced and unforced log
writes. A ``no`` vote anywhere aborts the transaction.

>>> tree = Participant("root", [Participant("a"), Participant("b")])
>>> r = run(tree, "basic", message_s=1e-3, force_s=10e-3)
>>> r.outcome, r.messages, r.forced
('commit', 8, 5)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pysim.engine import Simulation

PROTOCOLS = ("basic", "presumed_abort", "presumed_commit")


@dataclass
class Participant:
    """A node of the transaction tree."""

    name: str
    children: list = field(default_factory=list)
    read_only: bool = False
    vote_yes: bool = True

    def nodes(self):
        yield self
        for c in self.children:
            yield from c.nodes()


@dataclass
class Result:
    outcome: str
    decided_s: float      # when the root's decision was durable
    finished_s: float     # when the root had every acknowledgement it waits for
    messages: int
    forced: int
    unforced: int
    forced_by: dict


class _Run:
    def __init__(self, protocol, message_s, force_s):
        self.sim = Simulation()
        self.protocol, self.message_s, self.force_s = protocol, message_s, force_s
        self.messages = self.unforced = 0
        self.forced_by = {}

    def send(self):
        self.messages += 1
        return self.sim.timeout(self.message_s)

    def force(self, node):
        self.forced_by[node.name] = self.forced_by.get(node.name, 0) + 1
        return self.sim.timeout(self.force_s)

    def prepare(self, node, is_root=False):
        """Phase one below ``node``: returns its vote ("yes", "no" or "read_only")."""
        sim = self.sim
        if self.protocol == "presumed_commit" and node.children:
            yield self.force(node)  # the collecting record
        votes = []
        if node.children:
            procs = [sim.process(self._ask(c)) for c in node.children]
            votes = list((yield sim.all_of(procs)).values())
        if not node.vote_yes or "no" in votes:
            return "no"
        subtree_ro = node.read_only and all(v == "read_only" for v in votes)
        if subtree_ro and self.protocol != "basic":
            return "read_only"
        if not is_root:
            yield self.force(node)  # the prepared record
        return "yes"

    def _ask(self, child):
        yield self.send()  # prepare
        vote = yield self.sim.process(self.prepare(child))
        yield self.send()  # the vote
        self.votes[child.name] = vote
        return vote

    def decide(self, node, outcome, is_root=False):
        """Phase two below ``node`` (which has the outcome): returns when its acknowledgements are in."""
        sim, pa, pc = self.sim, self.protocol == "presumed_abort", self.protocol == "presumed_commit"
        if is_root:
            if not (pa and outcome == "abort"):
                yield self.force(node)  # the decision
        else:
            if (pa and outcome == "abort") or (pc and outcome == "commit"):
                self.unforced += 1
            else:
                yield self.force(node)
        if is_root:
            self.decided_at = sim.now
        # only subordinates that voted yes are prepared and wait for the outcome
        procs = [sim.process(self._tell(c, outcome)) for c in node.children if self.votes.get(c.name) == "yes"]
        if procs:
            yield sim.all_of(procs)
        if is_root or node.children:
            self.unforced += 1  # the end record

    def _tell(self, child, outcome):
        yield self.send()  # the decision
        yield self.sim.process(self.decide(child, outcome))
        acked = not ((self.protocol == "presumed_abort" and outcome == "abort")
                     or (self.protocol == "presumed_commit" and outcome == "commit"))
        if acked:
            yield self.send()


def run(root: Participant, protocol: str, *, message_s: float, force_s: float) -> Result:
    """One commit of the transaction ``root`` coordinates."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if message_s < 0 or force_s < 0:
        raise ValueError("message_s and force_s must be >= 0")
    names = [n.name for n in root.nodes()]
    if len(set(names)) != len(names):
        raise ValueError(f"participant names must be unique, got {names}")
    r = _Run(protocol, message_s, force_s)
    sim = r.sim
    out = {}

    def coordinator():
        vote = yield sim.process(r.prepare(root, is_root=True))
        outcome = "commit" if vote != "no" else "abort"
        out["outcome"] = outcome
        yield sim.process(r.decide(root, outcome, is_root=True))
        out["finished"] = sim.now

    r.votes = {}
    sim.process(coordinator())
    sim.run()
    return Result(out["outcome"], r.decided_at, out["finished"], r.messages, sum(r.forced_by.values()),
                  r.unforced, dict(r.forced_by))
