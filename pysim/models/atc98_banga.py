"""Scalable kernel performance for Internet servers under realistic loads (Banga & Mogul, USENIX ATC 1998).

Regenerates what survives of Tables 1 and 2 (the CPU profile of Squid at 750
cold connections, 50 hot, 220 requests/s, old and new kernel) and the figures
the text describes: Figure 1 (select() CPU against cold connections, 10 and 50
hot connections), Figures 3 and 4 (Squid response time and idle time against
request rate), Figure 5 (the same with 8192-byte files), Figure 6 (CPU shares
of select, ufalloc and the rest), Figure 7 and §5.1's thttpd numbers, and
Figure 8 (saturation throughput against cold connections, four kernels).

First principles: one event-driven server process on one CPU, simulated event
by event on the pysim engine (:class:`EventLoopServer`). Its clients are the
S-Clients' hot connections, each carrying one request at a time (§3), so at
saturation a select() call can return at most one event per hot connection.
A request is the chain of events the server's loop waits for (§2.1): the
accept, the request, for Squid the connection to the origin server and its
If-Modified-Since reply (§5.1), and the writes of the response, one socket
send buffer at a time, each after the client has acknowledged the last; the
response crosses the 100 Mbit/s FDDI. Each pass of the loop rebuilds and
scans the select bitmaps in user mode (linear in open descriptors) and calls
select(): the old kernel scans every descriptor on entry and again after a
wakeup, plus undo_scan; the new one checks only the descriptors with hints or
new interest, plus its set computation and bitmap copies (linear in the
descriptors, but far cheaper per descriptor). ufalloc() finds the lowest free
slot by a linear scan (old) or through a two-level bitmap (new), with
descriptors allocated exactly by the lowest-free rule, so the scan length
emerges from the open connections. How often select() runs, and how many
events each call returns, emerges from the loop: nothing fixes it.

Calibrated, each on one published cell (see CALIBRATION): Squid's other work
per request (Table 2's idle share), the new select's cost per descriptor
(Table 2's select share), Squid's user bitmap cost per descriptor (Table 2's
comm_select share), the old ufalloc cost per slot scanned (Table 1's ufalloc
share), the old select's cost per descriptor (Table 1's idle share: the
unmodified server just saturates at 220 requests/s) and thttpd's own work per
request (its idle share on the new kernel at 100 requests/s, where that work
is most of the busy time). Taken as given (see INPUTS): Table 1's shares of
four procedures the model folds into Squid's other work. Everything else is
a prediction, the 8192-byte results included: a larger response costs an
assumed amount more per kilobyte and more write events, and nothing is
refitted for it.

Not reproduced: the data-cache effects the paper blames for the smaller
"others" share of the new kernel at light load (Figure 6) and for Figure 5's
gap to the naive benchmark, and the live NetCache proxy (Tables 3-7,
Figure 9). See papers/atc98_banga/paper.yaml.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.hw import catalog
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.sw import CpuAccount
from pysim.units import us
from pysim.workloads.arrivals import poisson_gaps

#: The kernels the paper compares: (new select, new ufalloc).
KERNELS = {
    "unmodified": (False, False),
    "new ufalloc, old select": (False, True),
    "old ufalloc, new select": (True, False),
    "new kernel": (True, True),
}
#: Figure 3's and Figure 7's curves: three kernels on the realistic benchmark, and the naive one.
CURVES = ("unmodified", "new ufalloc, old select", "new kernel", "naive")
COLD_SWEEP = (0, 250, 500, 1000, 1500, 2000)     # Figures 1 and 8: the x axis, cold connections
SQUID_RATES = (50, 100, 150, 200, 250, 300, 350)  # Figures 3-5: offered requests/s
THTTPD_RATES = (100, 200, 400, 600, 800)          # Figure 7: offered requests/s
SATURATING_RATE = 4000.0                          # offered requests/s far above any kernel's capacity
OTHER_PROCEDURES = ("Xsyscall()", "memset()", "cache_lookup()", "namei()")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds on the 400 MHz Alpha 21164 (AlphaStation 500)."""

    # the workload (§3, §5.1)
    profile_cold: int = stated(750, "Tables 1 and 2 captions: 750 cold connections", ge=0)
    hot_connections: int = stated(50, "Tables 1 and 2 captions: 50 hot connections; §3: a small number (10-50) "
                                      "of HTTP clients, which repeatedly made HTTP requests", ge=1)
    figure1_hot: tuple = stated((10, 50), "Figure 1: curves for 10 hot connections and 50 hot connections")
    profile_rate_per_s: float = stated(220.0, "Tables 1 and 2 captions: 220 requests/second")
    light_rate_per_s: float = stated(100.0, "§3: Figure 1 at about 100 requests/second; §5.1: thttpd at 100")
    small_file_bytes: int = stated(1259, "§3: each request retrieved a 1259-byte response")
    large_file_bytes: int = stated(8192, "§5.1: in some experiments, an 8192-byte file")
    # the mechanisms (switches, so a counterfactual is a change of parameters)
    hinted_select: bool = stated(True, "§4.1: the new select() checks only hinted or newly interesting descriptors")
    bitmap_ufalloc: bool = stated(True, "§4.2: the new ufalloc() searches a two-level bitmap")
    cold_connections_held: bool = stated(True, "§3: the load-adding client's connections stay open, idle")
    all_ready_handled: bool = stated(True, "§2.1: when select() returns, the main loop invokes handlers for "
                                           "each of the ready descriptors")
    clients_wait_for_replies: bool = stated(True, "§3: a small number of HTTP clients, which repeatedly made "
                                                  "HTTP requests: a hot connection carries one request at a time")
    per_descriptor_interface: bool = stated(True, "§5.1: select() passes information proportional to the total "
                                                  "number of active connections on each call, and the user "
                                                  "process must do work proportional to it")
    # costs
    select_fixed_us: float = assumed(15.0, "entry, argument copy-in and return of select(): a few hundred "
                                           "instructions and cache misses on the 400 MHz 21164")
    select_per_fd_us: float = calibrated(1.94818, "old selscan()/soo_select() per descriptor, entry scan")
    new_select_per_event_us: float = assumed(3.0, "checking one hinted or newly interesting descriptor: one "
                                                  "old soo_select() call")
    new_select_per_fd_us: float = calibrated(0.22927, "the new select()'s set computation and bitmap copies")
    user_per_fd_us: float = calibrated(0.34829, "Squid's comm_select(): building and scanning the bitmaps")
    user_fixed_us: float = assumed(5.0, "the rest of one pass of the event loop: a few hundred instructions")
    ufalloc_per_slot_us: float = calibrated(0.52102, "the old ufalloc()'s linear scan, per slot")
    new_ufalloc_us: float = assumed(0.5, "§4.2: two word scans of the two-level bitmap, a few cache misses")
    squid_request_us: float = calibrated(2283.75, "Squid's other work per request")
    thttpd_request_us: float = calibrated(462.474, "thttpd's own work per request")
    per_kb_us: float = assumed(50.0, "copying and checksumming a kilobyte more at ~30-40 MB/s (a cache-missing "
                                     "copy on the 400 MHz 21164), and its share of a segment's protocol work")
    thttpd_user_per_fd_us: float = assumed(0.1, "thttpd's own select() loop: a bit set and a bit test per "
                                                "connection, some 40 instructions at 400 MHz (Squid's comm_select() "
                                                "also checks each descriptor's handlers and timeouts)")
    lan_rtt_us: float = assumed(300.0, "a round trip on the 100 Mbit/s FDDI, with the client's turn")
    origin_us: float = assumed(1000.0, "§5.1: the origin server's If-Modified-Since reply (never the bottleneck)")
    header_bytes: int = assumed(200, "an HTTP/1.0 response header: status line, date, type, length, modified")
    send_buffer_bytes: int = assumed(4096, "the socket send buffer one write fills: 4.3BSD's default TCP send "
                                           "space (the paper does not give Digital UNIX's); a larger response is "
                                           "written as the client acknowledges it")
    link_bits_per_s: float = stated(catalog.FDDI_100_BITS_PER_S, "§3: a 100Mbps FDDI network")
    base_fds: int = assumed(16, "descriptors a server holds open anyway (logs, sockets)", ge=1)
    other_procedures_pct: tuple = given(tuple(zip(OTHER_PROCEDURES, (1.71, 1.20, 1.15, 1.10))),
                                        "Table 1: Xsyscall() 1.71%, memset() 1.20%, cache_lookup() 1.15%, "
                                        "namei() 1.10%")

    def __post_init__(self):
        super().__post_init__()
        if not all(isinstance(h, int) and h >= 1 for h in self.figure1_hot):
            raise ValueError(f"figure1_hot must be whole numbers >= 1, got {self.figure1_hot!r}")
        names = tuple(name for name, _ in self.other_procedures_pct)
        if names != OTHER_PROCEDURES or not all(pct >= 0 for _, pct in self.other_procedures_pct):
            raise ValueError(f"other_procedures_pct must give a share >= 0 for each of {OTHER_PROCEDURES}, "
                             f"got {self.other_procedures_pct!r}")


CALIBRATION = (
    Fit("squid_request_us", "table2", "all idle time", "cpu_pct", (100.0, 5000.0)),
    Fit("new_select_per_fd_us", "table2", "all kernel select functions", "cpu_pct", (0.001, 5.0)),
    Fit("user_per_fd_us", "table2", "comm_select()", "cpu_pct", (0.001, 5.0)),
    Fit("ufalloc_per_slot_us", "table1", "ufalloc()", "cpu_pct", (0.01, 10.0)),
    Fit("select_per_fd_us", "table1", "all idle time", "cpu_pct", (0.01, 5.0)),
    Fit("thttpd_request_us", "thttpd", "1259 / new kernel", "idle_pct", (10.0, 3000.0)),
)
INPUTS = (
    Inputs(("other_procedures_pct",), cells("table1", OTHER_PROCEDURES, ["cpu_pct"]),
           "Table 1's shares of procedures the model folds into Squid's other work per request, taken as given"),
)
COUNTERFACTUALS = (
    Counterfactual("unmodified-kernel", {"hinted_select": False, "bitmap_ufalloc": False},
                   "every kernel runs the old select() and the old ufalloc()"),
    Counterfactual("old-ufalloc", {"bitmap_ufalloc": False}, "every kernel runs the old ufalloc()"),
    Counterfactual("no-cold-cost", {"cold_connections_held": False},
                   "the cold connections cost nothing: as if the load-adding client were not there"),
    Counterfactual("one-event-per-select", {"all_ready_handled": False},
                   "the server handles one ready descriptor per select() call, so calls cannot amortise"),
    Counterfactual("open-loop-clients", {"clients_wait_for_replies": False},
                   "clients that send requests without waiting for replies: the hot connections bound nothing"),
    Counterfactual("scalable-interface", {"per_descriptor_interface": False},
                   "an event interface that passes only changes (the paper's [4]): neither the new select() nor "
                   "the user's loop does work per descriptor"),
)


#: What each server's event loop waits for, request by request (§2.1: handlers run when a listening socket,
#: or a connection, becomes ready for reading or writing): the handler run on each event, in order. A write
#: sends one send buffer's worth; the next write waits for the client to acknowledge it.
STEPS = {
    "thttpd": ("accept", "read", "write"),
    "squid": ("accept", "read", "connected", "reply", "write"),  # §5.1: an If-Modified-Since to the origin
}


@dataclass(frozen=True)
class Server:
    """Which server, which kernel, how much idle load."""

    kind: str = "squid"          # "squid" (an origin connection per request) or "thttpd"
    kernel: str = "unmodified"
    cold: int = 750
    file_bytes: int = 1259       # the file served: 1259 bytes (the work costs are for this) or 8192

    def __post_init__(self):
        if self.kind not in STEPS:
            raise ValueError(f"kind must be one of {sorted(STEPS)}, got {self.kind!r}")
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {self.kernel!r}")
        if self.cold < 0:
            raise ValueError(f"cold must be >= 0, got {self.cold!r}")
        if self.file_bytes < 1:
            raise ValueError(f"file_bytes must be >= 1, got {self.file_bytes!r}")


def kernel_mechanisms(p: Params, kernel: str) -> tuple[bool, bool]:
    """(new select, new ufalloc) that ``kernel`` runs under ``p``'s switches."""
    new_select, new_ufalloc = KERNELS[kernel]
    return new_select and p.hinted_select, new_ufalloc and p.bitmap_ufalloc


def select_cost_us(p: Params, new_select: bool, n_fds: int, n_ready: int, *, rescan: bool = False) -> float:
    """Kernel microseconds of one select() over n_fds descriptors with n_ready ready.

    rescan=False: the call's entry; rescan=True: the work after a wakeup (the old
    kernel scans everything again and undoes its wait records; the new one
    checks only the hinted descriptors).
    """
    if rescan:
        return p.new_select_per_event_us * n_ready if new_select else 2 * p.select_per_fd_us * n_fds
    scan = (p.new_select_per_event_us * n_ready + _new_set_work_us(p, n_fds) if new_select
            else p.select_per_fd_us * n_fds)
    return p.select_fixed_us + scan


def _new_set_work_us(p: Params, n_fds: int) -> float:
    """The new select()'s set computation and bitmap copies: linear in the descriptors the interface
    passes, nothing with an interface that passes only changes (the counterfactual)."""
    return p.new_select_per_fd_us * n_fds if p.per_descriptor_interface else 0.0


def select_proper_us(p: Params, new_select: bool, n_fds: int) -> float:
    """The part of one select() spent in the select() procedure itself: its entry, and for the new
    kernel the set computation and bitmap copies (the old one's per-descriptor work is in selscan(),
    soo_select() and undo_scan(); the new one's per-event checks in new_selscan_one(), new_soo_select())."""
    return p.select_fixed_us + (_new_set_work_us(p, n_fds) if new_select else 0.0)


class DescriptorTable:
    """The process's descriptor table: lowest-free allocation, as UNIX requires (§2.3)."""

    def __init__(self, size):
        self.used = np.zeros(size, dtype=bool)
        self.count = 0

    def lowest_free(self) -> int:
        """The slot the next allocation takes (the old ufalloc() scans up to it)."""
        return int(np.argmin(self.used))

    def alloc(self) -> int:
        if self.count + 1 > len(self.used):  # the table is full: double it, as a kernel grows its file table
            self.used = np.concatenate([self.used, np.zeros(len(self.used), dtype=bool)])
        free = np.flatnonzero(~self.used[: self.count + 1])  # a free slot exists at or below count
        fd = int(free[0])
        self.used[fd] = True
        self.count += 1
        return fd

    def release(self, fd):
        self.used[fd] = False
        self.count -= 1


@dataclass
class Request:
    """One client request: when it arrived, the descriptors it holds, the response bytes still to write."""

    t0: float
    bytes_left: int
    fds: list = field(default_factory=list)




class EventLoopServer:
    """One single-threaded event-driven server on one CPU (§2.1), with its clients.

    Processes: :meth:`arrivals` (the S-Clients' requests, one at a time on each hot connection) and
    :meth:`event_loop` (select(), then a handler per ready event). :meth:`handle` runs the handler of
    one event; :meth:`later` makes the next event of a request ready after a network delay.
    """

    def __init__(self, sim, params: Params, server: Server, rate: float, *, warmup_s: float, rng=0):
        self.sim, self.p, self.server, self.rate = sim, params, server, rate
        self.new_select, self.new_ufalloc = kernel_mechanisms(params, server.kernel)
        p = params
        self.steps = STEPS[server.kind]
        work_us = p.squid_request_us if server.kind == "squid" else p.thttpd_request_us
        self.step_us = work_us / len(self.steps)  # the server's own work, shared among its handlers
        self.response_bytes = server.file_bytes + p.header_bytes
        chunks = -(-self.response_bytes // p.send_buffer_bytes)
        self.extra_chunk_us = p.per_kb_us * max(server.file_bytes - p.small_file_bytes, 0) / 1024 / chunks
        self.user_per_fd_us = p.user_per_fd_us if server.kind == "squid" else p.thttpd_user_per_fd_us
        self.gaps = poisson_gaps(rate, rng=rng)
        self.cpu = CpuAccount(sim, warmup_s=warmup_s)
        cold = server.cold if p.cold_connections_held else 0
        self.fds = DescriptorTable(p.base_fds + cold + 4 * p.hot_connections)
        for _ in range(p.base_fds + cold):  # the load-adding client connected first
            self.fds.alloc()
        self.free_hot = p.hot_connections
        self.link_free_at = 0.0  # the FDDI ring, first come first served
        self.ready = []          # events the next select() will return: (step, request)
        self.wakeup = None       # the event a blocked select() waits on
        self.timed = 0           # requests that arrived after the warm-up and finished
        self.response_s = 0.0

    # --- the clients and the network -------------------------------------------------

    def arrivals(self):
        """The S-Clients: Poisson requests at the offered rate, each on a free hot connection; a request
        that finds every hot connection busy is not issued (counted as refused)."""
        for gap in self.gaps:
            yield self.sim.timeout(gap)
            if self.free_hot == 0 and self.p.clients_wait_for_replies:
                self.cpu.count("refused")
                continue
            self.free_hot -= 1
            self.became_ready("accept", Request(self.sim.now, self.response_bytes))

    def later(self, delay_s, step, req):
        """A packet that makes ``step`` of ``req`` ready after ``delay_s``."""
        yield self.sim.timeout(delay_s)
        self.became_ready(step, req)

    def became_ready(self, step, req):
        self.ready.append((step, req))
        if self.wakeup is not None and not self.wakeup.triggered:
            self.wakeup.succeed()

    def transmit(self, nbytes) -> float:
        """Queue ``nbytes`` on the network; seconds until the last of them arrives."""
        start = max(self.sim.now, self.link_free_at)
        self.link_free_at = start + 8 * nbytes / self.p.link_bits_per_s
        return self.link_free_at - self.sim.now

    # --- the server -----------------------------------------------------------------

    def event_loop(self):
        """Build the bitmaps, call select() (blocking if nothing is ready), run the handlers."""
        p, cpu = self.p, self.cpu
        user_per_fd = self.user_per_fd_us if p.per_descriptor_interface else 0.0
        while True:
            n = self.fds.count + 1  # plus the listening socket
            yield cpu.busy("select_user", (p.user_fixed_us + user_per_fd * n) * us)
            cpu.book("select_proper", select_proper_us(p, self.new_select, n) * us)
            yield cpu.busy("select_kernel", select_cost_us(p, self.new_select, n, len(self.ready)) * us)
            cpu.count("select_calls")
            if not self.ready:  # block: the CPU idles until a packet makes something ready
                self.wakeup = self.sim.event()
                yield from cpu.idle_until(self.wakeup)
                self.wakeup = None
                n = self.fds.count + 1
                yield cpu.busy("select_kernel",
                               select_cost_us(p, self.new_select, n, len(self.ready), rescan=True) * us)
            if p.all_ready_handled:
                batch, self.ready = self.ready, []
            else:
                batch, self.ready = self.ready[:1], self.ready[1:]
            cpu.count("events", len(batch))
            for step, req in batch:
                yield from self.handle(step, req)

    def allocate(self, req):
        """ufalloc(): a linear scan to the lowest free slot (old) or two bitmap words (new)."""
        cost = self.p.new_ufalloc_us if self.new_ufalloc else self.p.ufalloc_per_slot_us * (self.fds.lowest_free() + 1)
        req.fds.append(self.fds.alloc())
        return self.cpu.busy("ufalloc", cost * us)

    def handle(self, step, req):
        """The handler of one event of ``req``; it makes the request's next event ready (at once when the
        data is already there, after a network delay otherwise)."""
        p = self.p
        first_write = step == "write" and req.bytes_left == self.response_bytes
        if step != "write" or first_write:
            yield self.cpu.busy("other", self.step_us * us)
        if step == "accept":      # the client's descriptor; its request came with the connection
            yield self.allocate(req)
            self.became_ready("read", req)
        elif step == "read":      # thttpd answers at once; Squid opens a socket to the origin server
            if "connected" not in self.steps:
                self.became_ready("write", req)
            else:
                yield self.allocate(req)
                self.sim.process(self.later(p.lan_rtt_us * us, "connected", req))
        elif step == "connected":  # send If-Modified-Since; the origin answers after its own work
            self.sim.process(self.later((p.lan_rtt_us + p.origin_us) * us, "reply", req))
        elif step == "reply":     # not modified: answer the client from the cache
            self.became_ready("write", req)
        else:
            yield from self.write(req)

    def write(self, req):
        """Write one send buffer's worth of the response; close when all of it is written."""
        p = self.p
        chunk = min(req.bytes_left, p.send_buffer_bytes)
        yield self.cpu.busy("other", self.extra_chunk_us * us)
        req.bytes_left -= chunk
        delivered_s = self.transmit(chunk)
        if req.bytes_left > 0:    # the next write waits for the client's acknowledgement
            self.sim.process(self.later(delivered_s + p.lan_rtt_us * us, "write", req))
            return
        for fd in req.fds:
            self.fds.release(fd)
        self.sim.process(self.finish(req, delivered_s))

    def finish(self, req, delivered_s):
        """The client has the whole response: its hot connection is free for the next request."""
        yield self.sim.timeout(delivered_s)
        self.free_hot += 1
        self.cpu.count("done")  # completions in the window, whenever they arrived
        if req.t0 >= self.cpu.warmup_s:
            self.timed += 1
            self.response_s += self.sim.now - req.t0

    def results(self, until: float) -> dict:
        """CPU shares (%), throughput, response time and select() statistics over the measured window."""
        shares = self.cpu.shares_pct(until)
        out = {f"{k}_pct": shares.get(k, 0.0)
               for k in ("select_kernel", "select_proper", "select_user", "ufalloc", "other", "idle")}
        rates = self.cpu.rates_per_s(until)
        calls, events = self.cpu.counts.get("select_calls", 0), self.cpu.counts.get("events", 0)
        out["throughput_per_s"] = rates.get("done", 0.0)
        out["response_ms"] = 1e3 * self.response_s / self.timed if self.timed else float("nan")
        out["events_per_select"] = events / calls if calls else 0.0
        out["select_calls_per_s"] = rates.get("select_calls", 0.0)
        out["refused_per_s"] = rates.get("refused", 0.0)
        return out


def run_server(params: Params, server: Server, rate: float, *, seconds: float, rng=0) -> dict:
    """Simulate the server at `rate` requests/s (Poisson); CPU shares, idle, throughput, response time."""
    if not rate > 0:
        raise ValueError(f"rate must be > 0 requests/s, got {rate!r}")
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    sim = Simulation()
    server_model = EventLoopServer(sim, params, server, rate, warmup_s=0.2 * seconds, rng=rng)
    sim.process(server_model.arrivals())
    sim.process(server_model.event_loop())
    sim.run(until=seconds)
    return server_model.results(seconds)


def saturation(params: Params, server: Server, *, seconds: float, rng=0) -> float:
    """Requests/s completed when the offered load far exceeds capacity."""
    return run_server(params, server, SATURATING_RATE, seconds=seconds, rng=rng)["throughput_per_s"]


def _change_pct(value: float, reference: float) -> float:
    """How far ``value`` lies above ``reference``, in percent (NaN when the reference completed nothing)."""
    return 100.0 * (value / reference - 1.0) if reference > 0 else float("nan")


def _seconds(quick):
    return 2.0 if quick else 6.0


def _curve_server(p: Params, kind: str, curve: str, file_bytes: int) -> Server:
    """The naive benchmark has no cold connections; the paper found every kernel alike there (§5.1) and
    compares the new kernel's realistic runs with it, so the model runs it on the new kernel."""
    if curve == "naive":
        return Server(kind, "new kernel", 0, file_bytes)
    return Server(kind, curve, p.profile_cold, file_bytes)


# --- the artifacts ----------------------------------------------------------------------

def _profile(p: Params, kernel: str, quick, rng):
    r = run_server(p, Server("squid", kernel, p.profile_cold), p.profile_rate_per_s, seconds=_seconds(quick),
                   rng=rng)
    # procedures the model folds into Squid's other work per request: their given Table 1 shares, at this run's
    # throughput (the paper changed none of their code)
    itemised = {name: pct * r["throughput_per_s"] / p.profile_rate_per_s for name, pct in p.other_procedures_pct}
    rows = {"all kernel select functions": r["select_kernel_pct"], "select()": r["select_proper_pct"],
            "ufalloc()": r["ufalloc_pct"], "comm_select()": r["select_user_pct"], "all idle time": r["idle_pct"],
            **itemised, "everything else": r["other_pct"] - sum(itemised.values())}
    return pd.DataFrame({"cpu_pct": rows}).rename_axis("procedure")


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: CPU shares (%) of the unmodified kernel: Squid, 750 cold, 220 requests/s. Columns: cpu_pct."""
    return _profile(params or Params(), "unmodified", quick, rng)


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: the same profile on the modified kernel. Columns: cpu_pct."""
    return _profile(params or Params(), "new kernel", quick, rng)


def figure1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 1: % of CPU in kernel select() and in the user's bitmap loop, old kernel, 100 requests/s.

    Index: (hot, cold): hot and cold connections, and a last row ('any', 'peak') with the largest share
    plotted. Columns: kernel_select_pct, user_select_pct, events_per_select, select_calls_per_s.
    """
    p = params or Params()
    rows = []
    for hot in p.figure1_hot:
        ph = dataclasses.replace(p, hot_connections=hot)
        for cold in COLD_SWEEP:
            r = run_server(ph, Server("squid", "unmodified", cold), p.light_rate_per_s, seconds=_seconds(quick),
                           rng=rng)
            rows.append({"hot": str(hot), "cold": str(cold), "kernel_select_pct": r["select_kernel_pct"],
                         "user_select_pct": r["select_user_pct"], "events_per_select": r["events_per_select"],
                         "select_calls_per_s": r["select_calls_per_s"]})
    out = pd.DataFrame(rows)
    peak = {"hot": "any", "cold": "peak", "kernel_select_pct": out["kernel_select_pct"].max(),
            "user_select_pct": out["user_select_pct"].max()}  # the paper's "up to": the largest value plotted
    return pd.concat([out, pd.DataFrame([peak])], ignore_index=True).set_index(["hot", "cold"])


def _rate_sweep(p: Params, kind: str, rates, quick, rng, file_bytes: int) -> pd.DataFrame:
    """Response time, idle and throughput per (offered rate, curve); the rate 'saturation' offers far
    more than any kernel can serve, so its throughput is the curve's saturation throughput."""
    rows = []
    for rate in (*rates, "saturation"):
        offered = SATURATING_RATE if rate == "saturation" else float(rate)
        for curve in CURVES:
            r = run_server(p, _curve_server(p, kind, curve, file_bytes), offered, seconds=_seconds(quick), rng=rng)
            rows.append({"rate": str(rate), "kernel": curve, "response_ms": r["response_ms"],
                         "idle_pct": r["idle_pct"], "throughput_per_s": r["throughput_per_s"]})
    return pd.DataFrame(rows).set_index(["rate", "kernel"])


def figure3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figures 3 and 4: Squid response time, idle and throughput against offered requests/s, 750 cold, 1259 bytes.

    Index: (rate, kernel); kernel 'naive' is the benchmark without cold connections.
    Columns: response_ms, idle_pct, throughput_per_s.
    """
    p = params or Params()
    return _rate_sweep(p, "squid", SQUID_RATES, quick, rng, p.small_file_bytes)


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5: the same as Figure 3 with 8192-byte files. Columns: response_ms, idle_pct, throughput_per_s."""
    p = params or Params()
    return _rate_sweep(p, "squid", SQUID_RATES, quick, rng, p.large_file_bytes)


def figure7(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 7: thttpd response time, idle and throughput against offered requests/s, 750 cold, 1259 bytes.

    Columns: response_ms, idle_pct, throughput_per_s.
    """
    p = params or Params()
    return _rate_sweep(p, "thttpd", THTTPD_RATES, quick, rng, p.small_file_bytes)


def thttpd(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§5.1's thttpd numbers: idle at 100 requests/s, saturation throughput and its gain, 750 cold.

    Index: (file_bytes, kernel). Columns: idle_pct, saturation_per_s, gain_pct (saturation over the
    unmodified kernel's, same file).
    """
    p = params or Params()
    rows = []
    for size in (p.small_file_bytes, p.large_file_bytes):
        base = None
        for kernel in ("unmodified", "new kernel"):
            server = Server("thttpd", kernel, p.profile_cold, size)
            light = run_server(p, server, p.light_rate_per_s, seconds=_seconds(quick), rng=rng)
            sat = saturation(p, server, seconds=_seconds(quick), rng=rng)
            base = sat if base is None else base
            rows.append({"file_bytes": str(size), "kernel": kernel, "idle_pct": light["idle_pct"],
                         "saturation_per_s": sat, "gain_pct": _change_pct(sat, base)})
    return pd.DataFrame(rows).set_index(["file_bytes", "kernel"])


def figure6(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 6: CPU shares (%) of kernel select(), ufalloc(), everything else and idle; Squid, 750 cold.

    Index: (rate, kernel). Columns: ufalloc_pct, select_pct, other_pct (with the user-mode select loop,
    as in the paper's "others"), idle_pct.
    """
    p = params or Params()
    rows = []
    for rate in (100, 200, 300):
        for kernel in ("unmodified", "old ufalloc, new select", "new kernel"):
            r = run_server(p, Server("squid", kernel, p.profile_cold), float(rate), seconds=_seconds(quick), rng=rng)
            rows.append({"rate": str(rate), "kernel": kernel, "ufalloc_pct": r["ufalloc_pct"],
                         "select_pct": r["select_kernel_pct"], "other_pct": r["other_pct"] + r["select_user_pct"],
                         "idle_pct": r["idle_pct"]})
    return pd.DataFrame(rows).set_index(["rate", "kernel"])


def figure8(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 8: Squid saturation throughput against cold connections, four kernels.

    Index: (cold, kernel). Columns: throughput_per_s, drop_pct (below the same kernel at 0 cold),
    gain_pct (above the unmodified kernel at the same cold count).
    """
    p = params or Params()
    sat = {(cold, k): saturation(p, Server("squid", k, cold), seconds=_seconds(quick), rng=rng)
           for cold in COLD_SWEEP for k in KERNELS}
    rows = [{"cold": str(cold), "kernel": k, "throughput_per_s": sat[cold, k],
             "drop_pct": -_change_pct(sat[cold, k], sat[0, k]),
             "gain_pct": _change_pct(sat[cold, k], sat[cold, "unmodified"])}
            for cold in COLD_SWEEP for k in KERNELS]
    return pd.DataFrame(rows).set_index(["cold", "kernel"])


def curve(df: pd.DataFrame, kernel: str, column: str) -> pd.Series:
    """One kernel's curve of a (rate, kernel) frame against the offered rate (requests/s), without
    the saturation row: the series a figure plots."""
    s = df.xs(kernel, level="kernel")[column].drop("saturation", errors="ignore")
    return pd.Series(s.to_numpy(), index=[float(r) for r in s.index], name=kernel)

