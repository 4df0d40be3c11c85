"""A web page as a browser loads it over TCP, and the statistics browser timings are read with.

:func:`transfer_s` is a transfer under slow start on a path of a given
round trip and bottleneck; :func:`page_load` is one page view: DNS and
connect, the request, the server's time (a dynamic page may flush its static
head first), the HTML, then the embedded objects over ``connections``
persistent connections sharing the bottleneck, then the browser's layout;
:class:`PageTiming` holds its first byte, HTML done and ``onload``.
:func:`trimmed_mean` drops the slow tail of a right-skewed latency sample.

:class:`Cluster` is the site behind the pages: M/G/c :class:`Server` s on
the engine (c CPUs each; a batching server holds requests for a window and
runs them with less CPU each) behind a round-robin or a least-CPU balancer,
which samples each server's CPU utilisation and shifts weight away from the
busier ones.

The settings of a page and a browser are read off any object that has them
by name (``html_bytes``, ``connections``, ``mss_bytes``, ``initial_cwnd``,
``dns_s``, ``head_s``, ``flush_head``, ``object_server_s``,
``render_cpu_s``): a :class:`Browser`, or a model's own parameters.

>>> round(transfer_s(1460, rtt_s=0.1, bits_per_s=1e6)[0], 4)  # one segment: its serialisation + half an RTT
0.0617
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Browser:
    """A page and the browser that loads it (the defaults: a 2002 news page in IE 5/6)."""

    html_bytes: int = 40_000
    connections: int = 2          # RFC 2616's two persistent connections per server
    mss_bytes: int = 1460
    initial_cwnd: int = 2         # RFC 2581
    dns_s: float = 0.1
    head_s: float = 0.02          # a dynamic page's static head leaves after this
    flush_head: bool = True
    object_server_s: float = 0.02
    render_cpu_s: float = 0.3


def transfer_s(nbytes: int, rtt_s: float, bits_per_s: float, *, cwnd: float = 2, mss: int = 1460,
               max_cwnd: float = 64) -> tuple:
    """Time from the first data segment leaving the sender to the last byte reaching the receiver, under
    slow start from ``cwnd`` segments (doubling each round trip, at most ``max_cwnd``), on a path of
    ``rtt_s`` and bottleneck ``bits_per_s``; and the congestion window afterwards.

    Each round sends min(cwnd, remaining) segments; a round lasts max(RTT, its serialisation), and the last
    round ends when its last byte arrives: its serialisation plus the one-way delay."""
    if nbytes < 0 or not rtt_s > 0 or not bits_per_s > 0 or not cwnd >= 1:
        raise ValueError(f"need nbytes >= 0, rtt_s > 0, bits_per_s > 0, cwnd >= 1; got {nbytes}, {rtt_s}, "
                         f"{bits_per_s}, {cwnd}")
    segs = math.ceil(nbytes / mss)
    t, w = 0.0, float(cwnd)
    while segs > 0:
        send = min(int(w), segs)
        ser = send * mss * 8 / bits_per_s
        segs -= send
        if segs == 0:
            t += ser + rtt_s / 2
        else:
            t += max(rtt_s, ser)
            w = min(2 * w, max_cwnd)
    return t, w


@dataclass(frozen=True)
class PageTiming:
    """One page view's events, seconds from the click."""

    first_byte_s: float
    html_done_s: float
    onload_s: float

    @property
    def fetch_s(self) -> float:
        return self.html_done_s

    @property
    def render_s(self) -> float:
        return self.onload_s - self.html_done_s


def page_load(p, rtt_s: float, bits_per_s: float, object_bytes, *, server_s: float = 0.0,
              object_server_s: float | None = None, object_rtt_s: float | None = None,
              setup_extra_s: float = 0.0) -> PageTiming:
    """A page view under the settings ``p`` (a :class:`Browser`, or anything with its fields): DNS and connect (plus ``setup_extra_s``, e.g. a SYN retry), the request, the server's
    ``server_s`` (the static head leaves after ``p.head_s`` when ``p.flush_head``), the HTML, then the
    uncached ``object_bytes`` over ``p.connections`` persistent connections (the first reuses the HTML's,
    the others open on demand), each object a round trip plus its server time plus its transfer, the
    connections sharing the bottleneck; ``onload`` after the browser's layout. ``object_rtt_s`` and
    ``object_server_s`` place the objects elsewhere (a CDN)."""
    o_rtt = rtt_s if object_rtt_s is None else object_rtt_s
    o_srv = p.object_server_s if object_server_s is None else object_server_s
    req_at = p.dns_s + rtt_s + setup_extra_s + rtt_s / 2          # the request reaches the server
    head = min(p.head_s, server_s) if p.flush_head else server_s
    first_byte = req_at + head + p.mss_bytes * 8 / bits_per_s + rtt_s / 2
    html_t, cwnd = transfer_s(p.html_bytes, rtt_s, bits_per_s, cwnd=p.initial_cwnd, mss=p.mss_bytes)
    tail = min(p.html_bytes, 8 * p.mss_bytes) * 8 / bits_per_s  # what is left to send once generation ends
    html_done = max(req_at + head + html_t, req_at + server_s + tail + rtt_s / 2)
    k = p.connections
    share_bps = bits_per_s / k if len(object_bytes) > 1 else bits_per_s
    same_path = object_rtt_s is None
    free = [html_done] + [html_done + o_rtt + (p.dns_s if not same_path else 0.0)] * (k - 1)
    windows = [cwnd if same_path else p.initial_cwnd] + [p.initial_cwnd] * (k - 1)
    if not same_path:
        free[0] = html_done + p.dns_s + o_rtt
    done = html_done
    for b in object_bytes:
        i = min(range(k), key=free.__getitem__)  # the first free connection, as np.argmin: a short list
        t, windows[i] = transfer_s(int(b), o_rtt, share_bps, cwnd=windows[i], mss=p.mss_bytes)
        free[i] += o_rtt / 2 + o_srv + t
        done = max(done, free[i])
    return PageTiming(first_byte, html_done, done + p.render_cpu_s)



def trimmed_mean(x: np.ndarray, share: float = 0.05) -> float:
    """Mean after dropping the top ``share`` of values (the paper's "extreme n%" of a right-skewed
    latency: the slow tail)."""
    x = np.sort(np.asarray(x, dtype=float))
    keep = len(x) - int(math.floor(share * len(x)))
    return float(x[:keep].mean())


# --- the servers behind the pages -------------------------------------------------------------------

class Server:
    """An M/G/c server on the engine: ``cpus`` CPUs as a resource. With ``batch_window_s`` > 0 arrivals
    wait for the end of the current window and are then released together; a batching server's requests
    each need ``1 - batch_saving`` of their CPU time. Completed requests are kept as ``records``:
    (arrival, done, tag)."""

    def __init__(self, sim, name, cpus: int, *, batching: bool = False, batch_window_s: float = 0.0,
                 batch_saving: float = 0.0):
        if cpus < 1 or batch_window_s < 0 or not 0 <= batch_saving < 1:
            raise ValueError(f"need cpus >= 1, batch_window_s >= 0 and 0 <= batch_saving < 1, got "
                             f"{cpus}, {batch_window_s}, {batch_saving}")
        self.sim, self.name, self.c = sim, name, cpus
        self.batching, self.window_s, self.saving = batching, batch_window_s, batch_saving
        self.cpu = sim.resource(cpus)
        self.busy_s = 0.0                  # CPU-seconds completed, for the balancer's samples
        self.pending = []                  # requests waiting for the batch window
        self.records = []
        self._open = []                    # start times of jobs holding a CPU, for partial-interval accounting
        if batching and batch_window_s > 0:
            sim.process(self._batcher())

    def submit(self, cpu_s: float, tag=None) -> None:
        """A request needing ``cpu_s`` of one CPU (less on a batching server)."""
        need = cpu_s * (1 - self.saving) if self.batching else cpu_s
        hold = None
        if self.batching and self.window_s > 0:
            hold = self.sim.event()
            self.pending.append(hold)
        self.sim.process(self._job(need, tag, hold))

    def _batcher(self):
        while True:
            yield self.sim.timeout(self.window_s)
            batch, self.pending = self.pending, []
            for ev in batch:
                ev.succeed()

    def _job(self, cpu_s: float, tag, hold):
        sim = self.sim
        t0 = sim.now
        if hold is not None:
            yield hold
        with self.cpu.request() as r:
            yield r
            start = sim.now
            self._open.append(start)
            yield sim.timeout(cpu_s)
            self._open.remove(start)
            self.busy_s += cpu_s
        self.records.append((t0, sim.now, tag))

    def busy_until_now(self) -> float:
        """CPU-seconds used up to now, counting jobs in service."""
        return self.busy_s + sum(self.sim.now - s for s in self._open)


class Cluster:
    """Servers behind a balancer. ``"round-robin"`` takes the servers in turn; ``"least-cpu"`` picks at
    random by weights, and every ``sample_s`` samples each server's CPU utilisation u and sets
    w <- w exp(-gain (u - mean u) / level), where level is the cluster's utilisation smoothed over
    ``smoothing_s`` (from ``start_level``), so a burst on one server does not shrink its own penalty."""

    BALANCERS = ("round-robin", "least-cpu")

    def __init__(self, sim, servers, balancer: str, *, rng, sample_s: float = 1.0, gain: float = 1.0,
                 start_level: float = 0.5, smoothing_s: float = 30.0):
        if balancer not in self.BALANCERS:
            raise ValueError(f"balancer must be one of {self.BALANCERS}, got {balancer!r}")
        if not servers or sample_s <= 0:
            raise ValueError("need at least one server and sample_s > 0")
        self.sim, self.servers, self.balancer, self.g = sim, list(servers), balancer, rng
        self.sample_s, self.gain, self.smoothing_s, self.level = sample_s, gain, smoothing_s, start_level
        self.weights = np.full(len(self.servers), 1.0 / len(self.servers))
        self.rr = 0
        if balancer == "least-cpu":
            sim.process(self._sampler())

    def pick(self) -> Server:
        if self.balancer == "round-robin":
            self.rr = (self.rr + 1) % len(self.servers)
            return self.servers[self.rr]
        i = bisect.bisect_left(self._cumulative, self.g.random() * self._total)  # np.searchsorted's side
        return self.servers[min(i, len(self.servers) - 1)]

    @property
    def weights(self) -> np.ndarray:
        return self._weights

    @weights.setter
    def weights(self, w: np.ndarray):
        # their sums are kept: a pick comes with every request, new weights only with every sample
        self._weights = w
        self._cumulative, self._total = np.cumsum(w).tolist(), float(w.sum())

    def _sampler(self):
        sim = self.sim
        last = [0.0] * len(self.servers)
        while True:
            yield sim.timeout(self.sample_s)
            used = [s.busy_until_now() for s in self.servers]
            util = np.array([(u - l) / (s.c * self.sample_s) for u, l, s in zip(used, last, self.servers)])
            last = used
            self.level += min(self.sample_s / self.smoothing_s, 1.0) * (float(util.mean()) - self.level)
            self.weights = self.weights * np.exp(-self.gain * (util - util.mean()) / max(self.level, 0.02))
            self.weights = np.clip(self.weights / self.weights.sum(), 1e-4, None)

