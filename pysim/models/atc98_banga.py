"""Scalable kernel performance for Internet servers under realistic loads (Banga & Mogul, USENIX ATC 1998).

Regenerates what survives of Tables 1 and 2 (the CPU profile of Squid at 750
cold connections, 50 hot, 220 requests/s, old and new kernel) and the figures
the text describes: Figure 1 (select() CPU against cold connections),
Figures 3 and 4 (Squid response time and idle time against request rate),
Figure 5 (the same with 8192-byte files), Figure 6 (CPU shares of select,
ufalloc and the rest), Figure 7 and §5.1's thttpd numbers, and Figure 8
(saturation throughput against cold connections for the four kernels).

First principles: one event-driven server process on one CPU, simulated event
by event on the pysim engine (:class:`EventLoopServer`). Each loop iteration
rebuilds and scans the select bitmaps in user mode (linear in open
descriptors) and calls select(): the old kernel scans every descriptor on
entry and again after a wakeup, plus undo_scan; the new one checks only the
descriptors with hints or new interest, plus its set computation and bitmap
copies (linear in the descriptors, but far cheaper per descriptor than the
old scan). Each request accepts a client descriptor and (Squid) opens one to
the origin server; ufalloc() finds the lowest free slot by a linear scan
(old) or through a two-level bitmap (new), with descriptors allocated exactly
by the lowest-free rule, so the scan length emerges from the open
connections. How often select() runs, and how many events each call returns,
emerges from the loop: nothing fixes it.

Calibrated, each on one published cell (see CALIBRATION): Squid's other work
per request (Table 2's idle share), the new select's cost per descriptor
(Table 2's select share), the user bitmap cost per descriptor (Table 2's
comm_select share), the old ufalloc cost per slot scanned (Table 1's ufalloc
share), the old select's cost per descriptor (Table 1's idle share: the
unmodified server just saturates at 220 requests/s) and thttpd's work per
request (its idle share on the old kernel at 100 requests/s). Taken as given
(see INPUTS): Table 1's shares of four procedures the model folds into
Squid's other work. Everything else is a prediction.

8192-byte responses (Figure 5, and thttpd's 8 KB numbers in §5.1) cost an
assumed amount more per kilobyte (more packets, more copying); nothing is
refitted for them.

Not reproduced: the data-cache effects the paper blames for the smaller
"others" share of the new kernel at light load (Figure 6) and for Figure 5's
gap to the naive benchmark, and the live NetCache proxy (Tables 3-7,
Figure 9). See papers/atc98_banga/paper.yaml.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pysim.engine import Simulation
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
    # costs
    select_fixed_us: float = assumed(15.0, "entry, argument copy-in and return of select(): a few hundred "
                                           "instructions and cache misses on the 400 MHz 21164")
    select_per_fd_us: float = calibrated(2.974, "old selscan()/soo_select() per descriptor, entry scan")
    new_select_per_event_us: float = assumed(3.0, "checking one hinted or newly interesting descriptor: one "
                                                  "old soo_select() call")
    new_select_per_fd_us: float = calibrated(0.3719, "the new select()'s set computation and bitmap copies")
    user_per_fd_us: float = calibrated(0.5470, "Squid's comm_select(): building and scanning the bitmaps")
    user_fixed_us: float = assumed(5.0, "the rest of one pass of the event loop: a few hundred instructions")
    ufalloc_per_slot_us: float = calibrated(0.5246, "the old ufalloc()'s linear scan, per slot")
    new_ufalloc_us: float = assumed(0.5, "§4.2: two word scans of the two-level bitmap, a few cache misses")
    squid_request_us: float = calibrated(2284.0, "Squid's other work per request")
    thttpd_request_us: float = calibrated(4835.0, "thttpd's work per request")
    per_kb_us: float = assumed(50.0, "~5 more TCP segments per 6.9 KB: copy and checksum at ~100 MB/s plus "
                                     "~40 us per segment on the 400 MHz 21164")
    lan_rtt_us: float = assumed(300.0, "a round trip on the 100 Mbit/s FDDI, with the client's turn")
    origin_us: float = assumed(1000.0, "§5.1: the origin server's If-Modified-Since reply (never the bottleneck)")
    listen_backlog: int = assumed(128, "the listen queue; arrivals beyond it are refused", ge=1)
    base_fds: int = assumed(16, "descriptors a server holds open anyway (logs, sockets)", ge=1)
    other_procedures_pct: tuple = given(tuple(zip(OTHER_PROCEDURES, (1.71, 1.20, 1.15, 1.10))),
                                        "Table 1: Xsyscall() 1.71%, memset() 1.20%, cache_lookup() 1.15%, "
                                        "namei() 1.10%")

    def __post_init__(self):
        super().__post_init__()
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
    Fit("thttpd_request_us", "thttpd", "1259 / unmodified", "idle_pct", (10.0, 8000.0)),
)
INPUTS = (
    Inputs(("other_procedures_pct",), cells("table1", OTHER_PROCEDURES, ["cpu_pct"]),
           "Table 1's shares of procedures the model folds into Squid's other work per request, taken as given"),
)
COUNTERFACTUALS = (
    Counterfactual("unmodified-kernel", {"hinted_select": False, "bitmap_ufalloc": False},
                   "every kernel runs the old select() and the old ufalloc()"),
    Counterfactual("old-select", {"hinted_select": False}, "every kernel runs the old select()"),
    Counterfactual("old-ufalloc", {"bitmap_ufalloc": False}, "every kernel runs the old ufalloc()"),
    Counterfactual("no-cold-cost", {"cold_connections_held": False},
                   "the cold connections cost nothing: as if the load-adding client were not there"),
    Counterfactual("one-event-per-select", {"all_ready_handled": False},
                   "the server handles one ready descriptor per select() call, so calls cannot amortise"),
)


@dataclass(frozen=True)
class Server:
    """Which server, which kernel, how much idle load."""

    kind: str = "squid"          # "squid" (an origin connection per request) or "thttpd"
    kernel: str = "unmodified"
    cold: int = 750
    file_bytes: int = 1259       # the response: 1259 bytes (the work costs are for this) or 8192

    def __post_init__(self):
        if self.kind not in ("squid", "thttpd"):
            raise ValueError(f"kind must be 'squid' or 'thttpd', got {self.kind!r}")
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
    scan = (p.new_select_per_event_us * n_ready + p.new_select_per_fd_us * n_fds if new_select
            else p.select_per_fd_us * n_fds)
    return p.select_fixed_us + scan


def select_proper_us(p: Params, new_select: bool, n_fds: int) -> float:
    """The part of one select() spent in the select() procedure itself: its entry, and for the new
    kernel the set computation and bitmap copies (the old one's per-descriptor work is in selscan(),
    soo_select() and undo_scan(); the new one's per-event checks in new_selscan_one(), new_soo_select())."""
    return p.select_fixed_us + (p.new_select_per_fd_us * n_fds if new_select else 0.0)


class DescriptorTable:
    """The process's descriptor table: lowest-free allocation, as UNIX requires (§2.3)."""

    def __init__(self, size):
        self.used = np.zeros(size, dtype=bool)
        self.count = 0

    def lowest_free(self) -> int:
        """The slot the next allocation takes (the old ufalloc() scans up to it)."""
        return int(np.argmin(self.used))

    def alloc(self) -> int:
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
    """One client request: when it arrived and the descriptors it holds."""

    t0: float
    fds: list = field(default_factory=list)


class EventLoopServer:
    """One single-threaded event-driven server on one CPU (§2.1), with its clients.

    Processes: :meth:`arrivals` (the S-Clients' Poisson requests) and
    :meth:`event_loop` (select(), then a handler per ready event);
    :meth:`handle` runs one stage of a request and :meth:`deliver` makes a
    later stage ready after a network delay.
    """

    def __init__(self, sim, params: Params, server: Server, rate: float, *, warmup_s: float, rng=0):
        self.sim, self.p, self.server, self.rate = sim, params, server, rate
        self.new_select, self.new_ufalloc = kernel_mechanisms(params, server.kernel)
        self.squid = server.kind == "squid"
        p = params
        per_request = (p.squid_request_us if self.squid else p.thttpd_request_us) \
            + p.per_kb_us * (server.file_bytes - p.small_file_bytes) / 1024  # more packets and copying
        n_stages = 3 if self.squid else 2
        self.stage_cost_us = [per_request / n_stages] * n_stages
        self.gaps = poisson_gaps(rate, rng=rng)
        self.cpu = CpuAccount(sim, warmup_s=warmup_s)
        cold = server.cold if p.cold_connections_held else 0
        self.fds = DescriptorTable(p.base_fds + cold + 8192)
        for _ in range(p.base_fds + cold):  # the load-adding client connected first
            self.fds.alloc()
        self.ready = []          # events the next select() will return: (stage, request)
        self.wakeup = None       # the event a blocked select() waits on
        self.blocked_since = 0.0
        self.pending_accepts = 0
        self.timed = 0           # requests that arrived after the warm-up and finished
        self.response_s = 0.0

    # --- the clients and the network -------------------------------------------------

    def arrivals(self):
        """The S-Clients: a Poisson stream of new connections, refused beyond the listen backlog."""
        for gap in self.gaps:
            yield self.sim.timeout(gap)
            if self.pending_accepts >= self.p.listen_backlog:
                self.cpu.count("refused")
                continue
            self.pending_accepts += 1
            self.became_ready(0, Request(self.sim.now))

    def deliver(self, delay_us, stage, req):
        """A packet that makes stage ``stage`` of ``req`` ready after ``delay_us``."""
        yield self.sim.timeout(delay_us * us)
        self.became_ready(stage, req)

    def became_ready(self, stage, req):
        self.ready.append((stage, req))
        if self.wakeup is not None and not self.wakeup.triggered:
            self.wakeup.succeed()

    # --- the server -----------------------------------------------------------------

    def event_loop(self):
        """Build the bitmaps, call select() (blocking if nothing is ready), run the handlers."""
        p, cpu = self.p, self.cpu
        while True:
            n = self.fds.count + 1  # plus the listening socket
            yield cpu.busy("select_user", (p.user_fixed_us + p.user_per_fd_us * n) * us)
            cpu.book("select_proper", select_proper_us(p, self.new_select, n) * us)
            yield cpu.busy("select_kernel", select_cost_us(p, self.new_select, n, len(self.ready)) * us)
            cpu.count("select_calls")
            if not self.ready:  # block: the CPU idles until a packet makes something ready
                self.wakeup, self.blocked_since = self.sim.event(), self.sim.now
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
            for stage, req in batch:
                yield from self.handle(stage, req)

    def allocate(self, req):
        """ufalloc(): a linear scan to the lowest free slot (old) or two bitmap words (new)."""
        cost = self.p.new_ufalloc_us if self.new_ufalloc else self.p.ufalloc_per_slot_us * (self.fds.lowest_free() + 1)
        req.fds.append(self.fds.alloc())
        return self.cpu.busy("ufalloc", cost * us)

    def handle(self, stage, req):
        """One stage of a request: accept (0), read the request (1), for Squid the origin's reply (2)."""
        p = self.p
        yield self.cpu.busy("other", self.stage_cost_us[stage] * us)
        last = len(self.stage_cost_us) - 1
        if stage == 0:  # accept: the client's descriptor; its request arrives a round trip later
            self.pending_accepts -= 1
            yield self.allocate(req)
            self.sim.process(self.deliver(p.lan_rtt_us, 1, req))
        elif stage == 1 and self.squid:  # ask the origin server (If-Modified-Since) on a new socket
            yield self.allocate(req)
            self.sim.process(self.deliver(p.lan_rtt_us + p.origin_us, 2, req))
        if stage == last:  # reply written; close everything
            for fd in req.fds:
                self.fds.release(fd)
            self.cpu.count("done")  # completions in the window, whenever they arrived
            if req.t0 >= self.cpu.warmup_s:
                self.timed += 1
                self.response_s += self.sim.now - req.t0

    def results(self, until: float) -> dict:
        """CPU shares (%), throughput, response time and select() statistics over the measured window."""
        if self.wakeup is not None:  # the run ended while select() slept: book that idle time too
            self.cpu.book("idle", until - max(self.blocked_since, self.cpu.warmup_s))
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
    """The naive benchmark has no cold connections (and every kernel behaves alike there, §5.1)."""
    if curve == "naive":
        return Server(kind, "unmodified", 0, file_bytes)
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

    Index: cold connections. Columns: kernel_select_pct, user_select_pct, events_per_select, select_calls_per_s.
    """
    p = params or Params()
    rows = []
    for cold in COLD_SWEEP:
        r = run_server(p, Server("squid", "unmodified", cold), p.light_rate_per_s, seconds=_seconds(quick), rng=rng)
        rows.append({"cold": str(cold), "kernel_select_pct": r["select_kernel_pct"],
                     "user_select_pct": r["select_user_pct"], "events_per_select": r["events_per_select"],
                     "select_calls_per_s": r["select_calls_per_s"]})
    return pd.DataFrame(rows).set_index("cold")


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
