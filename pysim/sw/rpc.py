"""Remote procedure calls on the engine: links, servers with threads, clients with a window of
outstanding calls, three ways to handle a reply, and a delegated three-way hop.

* :class:`Wire` is one direction of a link: a message waits for the wire,
  takes ``bytes / bandwidth`` on it, then ``latency_s`` to arrive
  (store-and-forward, first come first served).
* :class:`Server` serves requests with ``threads`` threads; a request's work
  is ``service_s`` (a number, or a function of the request bytes).
* :class:`Client` keeps at most ``window`` calls outstanding. Its CPU handles
  each reply in one of three ways: ``"wait"`` wakes the blocked thread (a
  thread switch and the handler), ``"continuation"`` runs the handler where
  the reply arrives (no switch), ``"deferral"`` queues the reply and a
  worker thread handles the queue in batches (one switch per batch).
* :func:`delegated` sends a request to a server that forwards it to a second
  one, which replies straight to the client (a three-way hop).

Times come out per call (:attr:`Client.latencies`) and as counts of the
client's thread switches.
"""
from __future__ import annotations

from pysim.engine import Simulation

REPLY_MODES = ("wait", "continuation", "deferral")


class Wire:
    """One direction of a link: ``latency_s`` one way, ``bytes_per_s`` on the wire."""

    def __init__(self, sim, latency_s: float, bytes_per_s: float, *, per_message_bytes: int = 0):
        if latency_s < 0 or not bytes_per_s > 0 or per_message_bytes < 0:
            raise ValueError("latency_s must be >= 0, bytes_per_s > 0 and per_message_bytes >= 0")
        self.sim, self.latency_s, self.bytes_per_s = sim, latency_s, bytes_per_s
        self.per_message_bytes = per_message_bytes
        self.wire = sim.resource(1)
        self.sent = 0

    def send(self, nbytes: int):
        """Carry ``nbytes`` across (a process to yield)."""
        with self.wire.request() as turn:
            yield turn
            yield self.sim.timeout((nbytes + self.per_message_bytes) / self.bytes_per_s)
        self.sent += 1
        yield self.sim.timeout(self.latency_s)


class Server:
    """``threads`` threads serving requests; ``service_s`` per request (or a function of its bytes)."""

    def __init__(self, sim, *, threads: int = 1, service_s=0.0):
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads!r}")
        self.sim, self.service_s = sim, service_s
        self.threads = sim.resource(threads)
        self.served = 0

    def serve(self, nbytes: int):
        with self.threads.request() as t:
            yield t
            s = self.service_s(nbytes) if callable(self.service_s) else self.service_s
            yield self.sim.timeout(s)
        self.served += 1


class Client:
    """Calls ``server`` over ``out`` and ``back`` with at most ``window`` outstanding."""

    def __init__(self, sim, server: Server, out: Wire, back: Wire, *, window: int = 1, reply: str = "wait",
                 handler_s: float = 0.0, switch_s: float = 0.0, batch: int = 8):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window!r}")
        if reply not in REPLY_MODES:
            raise ValueError(f"reply must be one of {REPLY_MODES}, got {reply!r}")
        if handler_s < 0 or switch_s < 0 or batch < 1:
            raise ValueError("handler_s and switch_s must be >= 0 and batch >= 1")
        self.sim, self.server, self.out, self.back = sim, server, out, back
        self.slots = sim.resource(window)
        self.cpu = sim.resource(1)
        self.reply, self.handler_s, self.switch_s, self.batch = reply, handler_s, switch_s, batch
        self.latencies, self.switches = [], 0
        self.queue, self.worker_busy = [], False

    def call(self, request_bytes: int, reply_bytes: int):
        """One call (a process to yield); ends when the client has handled the reply."""
        sim = self.sim
        with self.slots.request() as slot:
            yield slot
            t0 = sim.now
            yield sim.process(self.out.send(request_bytes))
            yield sim.process(self.server.serve(request_bytes))
            yield sim.process(self.back.send(reply_bytes))
            yield sim.process(self.handle())
            self.latencies.append(sim.now - t0)

    def handle(self):
        """The client's CPU takes the reply, in the chosen way."""
        sim = self.sim
        if self.reply == "deferral":
            done = sim.event()
            self.queue.append(done)
            if not self.worker_busy:
                self.worker_busy = True
                sim.process(self._worker())
            yield done
            return
        with self.cpu.request() as c:
            yield c
            if self.reply == "wait":
                self.switches += 1
                yield sim.timeout(self.switch_s + self.handler_s)
            else:
                yield sim.timeout(self.handler_s)

    def _worker(self):
        sim = self.sim
        while self.queue:
            take, self.queue = self.queue[:self.batch], self.queue[self.batch:]
            with self.cpu.request() as c:
                yield c
                self.switches += 1
                yield sim.timeout(self.switch_s + self.handler_s * len(take))
            for done in take:
                done.succeed()
        self.worker_busy = False

    def run(self, calls: int, request_bytes: int, reply_bytes: int):
        """Issue ``calls`` calls as fast as the window allows (a process to yield); returns when all are done."""
        procs = [self.sim.process(self.call(request_bytes, reply_bytes)) for _ in range(calls)]
        yield self.sim.all_of(procs)


def delegated(sim, first: Server, second: Server, client_to_first: Wire, first_to_second: Wire,
              second_to_client: Wire, request_bytes: int, reply_bytes: int):
    """A three-way hop: the client asks ``first``, which forwards to ``second``, which replies to the
    client directly (a process to yield; returns the latency)."""
    t0 = sim.now
    yield sim.process(client_to_first.send(request_bytes))
    yield sim.process(first.serve(request_bytes))
    yield sim.process(first_to_second.send(request_bytes))
    yield sim.process(second.serve(request_bytes))
    yield sim.process(second_to_client.send(reply_bytes))
    return sim.now - t0


def throughput(calls: int, window: int, *, latency_s: float, bytes_per_s: float, service_s: float,
               request_bytes: int, reply_bytes: int, reply: str = "wait", handler_s: float = 0.0,
               switch_s: float = 0.0) -> dict:
    """Calls per second and mean latency of ``calls`` calls with ``window`` outstanding, on a fresh
    simulation of one client, one single-threaded server and a symmetric link."""
    sim = Simulation()
    client = Client(sim, Server(sim, service_s=service_s), Wire(sim, latency_s, bytes_per_s),
                    Wire(sim, latency_s, bytes_per_s), window=window, reply=reply, handler_s=handler_s,
                    switch_s=switch_s)
    sim.process(client.run(calls, request_bytes, reply_bytes))
    sim.run()
    return {"calls_per_s": calls / sim.now, "latency_s": sum(client.latencies) / calls,
            "switches": client.switches}
