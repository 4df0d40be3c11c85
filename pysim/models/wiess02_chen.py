"""Using end-user latency to manage Internet infrastructure (Chen & Perkowitz, WIESS 2002).

An industrial report on "real user monitoring": a JavaScript monitor times every page view in the
browser (fetch time to the last HTML byte, render time from there to ``onload``), records go to a
collector, and the analysis trims at a fixed 180 s threshold, ranks subnets by their contribution to a
group's mean, and reads capacity and server faults from response time against load by hour. The data
are a customer's and proprietary: two tables (mostly lost in the OCR) and seven charts without printed
values. What the lab regenerates is the paper's *world* and its *pipeline*, judged by its prose numbers:

* a page load (:func:`page_load`): DNS, TCP connect, request, server time (a dynamic page flushes its
  static head first, §3.1), the HTML and N embedded objects over k persistent connections, each transfer
  under slow start (:func:`transfer_s`, cross-checked in the tests against the shared TCP Reno of
  :mod:`pysim.network`), then the browser's layout; the monitor's fetch time with the cookie (from the
  click) and without it (from the first HTML byte);
* a population: connection classes (LAN, broadband, dialup) whose mix follows the hour (work LANs by day,
  home dialup by night, §4.2) and a diurnal request rate (Figure 4's shape), from
  :mod:`pysim.workloads.traffic`;
* a cluster (§4.3, :class:`Cluster` over :class:`pysim.sw.web.Cluster`): five M/G/c servers (one
  four-way, four eight-way) behind a balancer that equalises CPU utilisation (or round robin), on the
  shared engine; server 5 runs "beta software" that batches requests (holds them for a window, then runs
  them with less CPU each);
* the pipeline: 180 s trim and its < 5% check, a true 5% trimmed mean beside it, per-hour and per-server
  means, a subnet's contribution to a group mean (Table 1), the slowest /24s above a 0.1% traffic floor
  (Table 2).

First principles: slow-start arithmetic, queueing, the balancer's control loop, the statistics.
Calibrated: the batching server's CPU saving (on Figure 7's "about 20% more traffic") and its window (on
Figure 6's "about two seconds slower"), and Table 1's group size (on one row's contribution). Predicted:
the four-way server's traffic share, the servers' response time at 6 AM, the CDN's gain per class
(Figure 1), Table 1's other contributions. Every network, page and population value is assumed
(2002-typical, each with its reason), so absolute seconds are as good as those assumptions.

Not reproduced: Figures 2-3 (bar heights are not legible), Table 2's numbers (column headers lost; all
doubtful), the internal-versus-external attribution over WVK-12's subnets (no path data in the text).

Then vs now (:func:`measure_cluster`): five real back ends on loopback (Python stdlib HTTP servers in
their own processes, CPUs emulated as a pool of c slots since this machine has two cores) behind a real
least-CPU balancer, server 5 batching; its traffic shares and latencies beside the simulated cluster's.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness.commands import run_command
from pysim.models import Counterfactual, Fit, Inputs
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.rng import make_rng
from pysim.sw import web
from pysim.sw.web import PageTiming, Server, page_load, transfer_s, trimmed_mean  # noqa: F401 (the notebook's)
from pysim.workloads import traffic
from pysim.workloads.traffic import web_objects
from pysim.harness.exclusive import exclusive

CLASSES = ("lan", "broadband", "dialup")
HOURS = tuple(range(24))
BALANCERS = ("least-cpu", "round-robin")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in seconds, sizes in bytes, rates in bits or requests per second."""

    # §3.2: the analysis
    trim_s: float = stated(180.0, "§3.2: 'By default the system trims data points with response time exceeding "
                                  "180 seconds'")
    trim_share_limit: float = stated(0.05, "§3.2: 'confirm that the amount of data trimmed was less than 5%'",
                                     gt=0, lt=1)
    traffic_floor: float = stated(0.001, "Table 2: 'subnets with at least 0.1% site traffic'", gt=0, lt=1)
    # §4.3: the cluster
    cpus: tuple = stated((4, 8, 8, 8, 8), "§4.3: server 1 'a four-way multiprocessor', the others 'eight-way'")
    batching_server: int = stated(5, "§4.3: server 5 ran beta software", ge=0, le=5)
    balancer: str = stated("least-cpu", "§4.3: 'Load balancers generally use server-side metric such as CPU "
                                        "utilization'", choices=BALANCERS)
    batch_cpu_saving: float = calibrated(0.1665, ge=0, lt=1)
    batch_window_s: float = calibrated(3.2, ge=0)
    cpu_s: float = assumed(0.25, "CPU seconds to generate a dynamic news page on a 2002 server CPU "
                                 "(templates, a database query or two)")
    peak_utilisation: float = assumed(0.5, "§4.2/4.3: the sites had excess capacity at peak; half the CPUs "
                                           "busy at the busiest hour", lt=2)
    trough_fraction: float = assumed(0.2, "night trough a fifth of the daytime peak, the common US shape of "
                                          "Figure 4", lt=1)
    peak_hour: float = assumed(14.0, "busiest hour early afternoon (Figure 4: daytime peak)", ge=0, lt=24)
    sample_s: float = assumed(1.0, "the balancer reads each server's CPU utilisation once a second")
    gain: float = assumed(0.3, "the balancer moves a weight by 30% of a server's relative utilisation gap "
                               "per sample: settles in tens of samples without oscillating")
    hour_sim_s: float = assumed(240.0, "simulated seconds standing for each hour (time-compressed day)")
    quick_hour_sim_s: float = assumed(30.0, "the quick profile's seconds per hour")
    warmup_s: float = assumed(60.0, "balancer weights settle before measurement starts")
    # the network (per class: lan, broadband, dialup)
    rtt_s: tuple = assumed((0.07, 0.05, 0.20), "US round trips in 2002: office LAN behind a T1 and its "
                                               "routers, cable/DSL, and a V.90 modem (~100 ms of its own)")
    bandwidth_bps: tuple = assumed((1.5e6, 1.0e6, 45e3), "a T1's share, 2002 cable/DSL downstream, V.90's "
                                                         "~45 kbit/s effective")
    home_share_day: float = assumed(0.35, "share of views from home at 9-17 h on a news site (work LANs carry "
                                          "the rest)", ge=0, le=1)
    home_share_night: float = assumed(0.85, "share of views from home at night and early morning", ge=0, le=1)
    dialup_of_home: float = assumed(0.7, "US home Internet users on dialup in 2002 (broadband ~30%)", ge=0, le=1)
    # the page
    html_bytes: int = assumed(40_000, "a 2002 news front page's HTML")
    objects: int = assumed(25, "embedded images, scripts and style sheets per page", ge=0)
    object_min_bytes: int = assumed(1500, "smallest object: a spacer or icon")
    object_pareto_shape: float = assumed(1.5, "heavy-tailed object sizes (mean 3x the minimum)")
    cached_share: float = assumed(0.6, "share of objects a returning reader's browser has cached", ge=0, le=1)
    connections: int = assumed(2, "RFC 2616: two persistent connections per server (IE 5/6)", ge=1)
    mss_bytes: int = assumed(1460, "Ethernet MSS")
    initial_cwnd: int = assumed(2, "RFC 2581: up to two segments", ge=1)
    dns_s: float = assumed(0.1, "a resolver round trip plus recursion, beyond one RTT", ge=0)
    head_s: float = assumed(0.02, "the static head of a dynamic page leaves after 20 ms (§3.1: 'Dynamic web "
                                  "sites typically send a block of static HTML first')", ge=0)
    object_server_s: float = assumed(0.02, "an origin's time to serve a static object", ge=0)
    render_cpu_s: float = assumed(0.3, "layout and image decoding of a news page on a 2002 desktop", ge=0)
    flush_head: bool = stated(True, "§3.1: dynamic sites send a block of static HTML first")
    cookie_start: bool = stated(False, "§3.1: the worst case, timing from the top of the HTML document; the "
                                       "cookie variant times from the click")
    # Figure 1: the CDN
    cdn_rtt_s: tuple = assumed((0.02, 0.015, 0.16), "to a CDN edge in the user's metro: the path's long haul "
                                                    "goes, a modem's own latency stays")
    origin_object_server_s: float = assumed(0.15, "a busy 2002 origin serving images beside its dynamic "
                                                  "pages", ge=0)
    cdn_object_server_s: float = assumed(0.01, "a CDN cache hit", ge=0)
    cdn: bool = stated(True, "Figure 1: CDN service began on 28 June 2001")
    # §3.2: the noise
    slow_link_share: float = assumed(0.003, "§3.2: views over links at 'tens of bytes per second'", ge=0, lt=1)
    slow_link_bps: float = assumed(400.0, "'tens of bytes per second': 50 B/s")
    clock_jump_share: float = assumed(0.002, "§3.2: views spanning a local clock adjustment", ge=0, lt=1)
    clock_jump_s: float = assumed(3600.0, "an adjustment of an hour (daylight saving, a sync after drift)")
    view_spread: float = assumed(0.5, "lognormal sigma of a view's time around its page model (cross traffic, "
                                      "losses, page variety)", ge=0)
    views: int = assumed(40_000, "page views in the trimming sample", ge=100)
    # Table 1
    table1_requests: tuple = given((10, 6, 1), "table1[168.216.94/56/124, requests]: the Requests column")
    table1_mean_s: tuple = given((15.30, 8.07, 38.12), "table1[168.216.94/56/124, mean_rt_s]: Mean RT column")
    table1_total_requests: float = calibrated(115.5)
    contribution: str = assumed("share", "a subnet's contribution to the group mean: its share of requests "
                                         "times its mean", choices=("share", "removal"))
    # Table 2
    lan_subnets: int = assumed(400, "US LAN /24s seen by a busy sports site", ge=10)
    internal_bottleneck_subnets: int = assumed(6, "subnets behind a congested internal link (WVK-12-like)", ge=0)
    internal_bottleneck_bps: float = assumed(128e3, "a shared 128 kbit/s district link behind the school LAN")
    satellite_rtt_s: float = assumed(0.6, "Table 2 prose: 216.236.222 'is a satellite services provider' "
                                         "(geostationary: ~0.55-0.65 s round trip)")

    def __post_init__(self):
        super().__post_init__()
        for name in ("rtt_s", "bandwidth_bps", "cdn_rtt_s"):
            v = getattr(self, name)
            if len(v) != len(CLASSES) or any(not x > 0 for x in v):
                raise ValueError(f"{name} must be {len(CLASSES)} positive values (lan, broadband, dialup), "
                                 f"got {v!r}")
        if len(self.cpus) < 2 or any(int(c) != c or c < 1 for c in self.cpus):
            raise ValueError(f"cpus must be at least two positive integers, got {self.cpus!r}")
        if self.batching_server > len(self.cpus):
            raise ValueError(f"batching_server must be 0 (none) or 1..{len(self.cpus)}, "
                             f"got {self.batching_server!r}")
        if len(self.table1_requests) != 3 or len(self.table1_mean_s) != 3:
            raise ValueError("table1_requests and table1_mean_s must hold three values each")


CALIBRATION = (
    Fit("batch_cpu_saving", "cluster", "5", "traffic_vs_8way", (0.0, 0.5), tolerance=0.02),
    Fit("batch_window_s", "cluster", "5", "extra_response_s", (0.5, 8.0), tolerance=0.03),
    Fit("table1_total_requests", "table1", "168.216.124", "independent_delta_s", (20.0, 1000.0)),
)
INPUTS = (
    Inputs(("table1_requests", "table1_mean_s"),
           (("table1", "168.216.94", "requests"), ("table1", "168.216.56", "requests"),
            ("table1", "168.216.124", "requests"), ("table1", "168.216.94", "mean_rt_s"),
            ("table1", "168.216.56", "mean_rt_s"), ("table1", "168.216.124", "mean_rt_s")),
           "Table 1's printed requests and means per subnet, the data the contribution is computed from"),
)
COUNTERFACTUALS = (
    Counterfactual("round-robin", {"balancer": "round-robin"},
                   "a balancer that ignores CPU utilisation and deals requests in turn"),
    Counterfactual("no-batching", {"batching_server": 0},
                   "server 5 runs the released software: no batching window, no CPU saving"),
    Counterfactual("no-headroom", {"peak_utilisation": 1.3},
                   "the site without excess capacity: demand at the busiest hour exceeds the CPUs"),
    Counterfactual("flat-mix", {"home_share_day": 0.6, "home_share_night": 0.6},
                   "the same user mix at every hour"),
    Counterfactual("no-cdn", {"cdn": False}, "the objects stay on the origin"),
    Counterfactual("no-flush", {"flush_head": False},
                   "the dynamic page is generated whole before its first byte leaves"),
    Counterfactual("cookie-timing", {"cookie_start": True},
                   "the monitor times from the click (the cookie variant) for every view"),
    Counterfactual("no-noise", {"slow_link_share": 0.0, "clock_jump_share": 0.0, "view_spread": 0.0},
                   "no pathological views and no spread: clean latency data"),
    Counterfactual("removal", {"contribution": "removal"},
                   "contribution read as the change in the group mean when the subnet is removed"),
    Counterfactual("short-trim", {"trim_s": 20.0},
                   "a trim threshold of 20 s, which would cut ordinary dialup views"),
    Counterfactual("terrestrial", {"satellite_rtt_s": 0.07}, "216.236.222 on a terrestrial path"),
)


# --- the page load ------------------------------------------------------------------------------------

def class_mix(p: Params, hour: float) -> np.ndarray:
    """Shares of (lan, broadband, dialup) views at ``hour`` (:func:`pysim.workloads.traffic.class_mix`)."""
    return traffic.class_mix(hour, home_day=p.home_share_day, home_night=p.home_share_night,
                             dialup_of_home=p.dialup_of_home)


def load_shape(p: Params, hour: float) -> float:
    """Request rate at ``hour`` as a fraction of the peak (:func:`pysim.workloads.traffic.diurnal_load`)."""
    return traffic.diurnal_load(hour, peak_hour=p.peak_hour, trough_fraction=p.trough_fraction)


def _pages(p: Params, n: int, g: np.random.Generator) -> list:
    """Uncached object sizes of ``n`` page views (the page's objects, each cached with ``cached_share``)."""
    sizes = web_objects(max(p.objects, 1), pareto_shape=p.object_pareto_shape, min_bytes=p.object_min_bytes,
                        max_bytes=500_000, rng=g)["bytes"].to_numpy()[:p.objects]
    # lists of Python ints: page_load's arithmetic runs on them once per object
    return [sizes[g.random(p.objects) >= p.cached_share].tolist() for _ in range(n)]


def class_times(p: Params, *, rng=0, pages: int = 200, server_s: float = 0.0, cdn: bool = False) -> pd.DataFrame:
    """Mean page timings per connection class over ``pages`` sampled pages (which objects are cached).

    Index: class. Columns: response_s, fetch_s (from the click), render_s, nocookie_fetch_s."""
    g = make_rng(rng)
    views = _pages(p, pages, g)
    rows = []
    for c, name in enumerate(CLASSES):
        kw = {}
        if cdn:
            kw = {"object_rtt_s": p.cdn_rtt_s[c], "object_server_s": p.cdn_object_server_s}
        ts = [page_load(p, p.rtt_s[c], p.bandwidth_bps[c], v, server_s=server_s, **kw) for v in views]
        rows.append({"class": name, "response_s": np.mean([t.onload_s for t in ts]),
                     "fetch_s": np.mean([t.fetch_s for t in ts]), "render_s": np.mean([t.render_s for t in ts]),
                     "nocookie_fetch_s": np.mean([t.html_done_s - t.first_byte_s for t in ts])})
    return pd.DataFrame(rows).set_index("class")


# --- Figure 1: the CDN ---------------------------------------------------------------------------------

def figure1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 1's prose: mean response time per connection class with the objects on a busy origin and on a
    CDN, and the gain. Index: class, then 'least improved' and 'most improved' (the classes' extremes).
    Columns: origin_s, cdn_s, improvement_pct."""
    p = params or Params()
    pages = 60 if quick else 300
    origin_p = _replace(p, object_server_s=p.origin_object_server_s)
    before = class_times(origin_p, rng=rng, pages=pages)
    after = class_times(origin_p, rng=rng, pages=pages, cdn=True) if p.cdn else before
    df = pd.DataFrame({"origin_s": before["response_s"], "cdn_s": after["response_s"]})
    df["improvement_pct"] = 100 * (1 - df["cdn_s"] / df["origin_s"])
    lo, hi = df["improvement_pct"].idxmin(), df["improvement_pct"].idxmax()
    df.loc["least improved"] = df.loc[lo]
    df.loc["most improved"] = df.loc[hi]
    return df


def _replace(p: Params, **changes) -> Params:
    return dataclasses.replace(p, **changes)


# --- §4.3: the cluster -------------------------------------------------------------------------------

RECORD = np.dtype([("t0", float), ("t1", float), ("hour", np.int64)])   # a Server's records: arrival, done, hour


class Cluster:
    """The site: Poisson arrivals at the hour's rate, over :class:`pysim.sw.web.Cluster` (the balancer and
    the M/G/c servers, one of them batching), in a time-compressed day."""

    def __init__(self, p: Params, hour_s: float, g: np.random.Generator):
        self.p, self.hour_s, self.g = p, hour_s, g
        self.sim = Simulation()
        self.servers = [Server(self.sim, i + 1, int(c), batching=p.batching_server == i + 1,
                               batch_window_s=p.batch_window_s, batch_saving=p.batch_cpu_saving)
                        for i, c in enumerate(p.cpus)]
        self.peak_rate = p.peak_utilisation * sum(p.cpus) / p.cpu_s
        self.rates = [self.peak_rate * load_shape(p, h + 0.5) for h in HOURS]   # per hour: once, not per arrival
        self.start = p.warmup_s
        self.sim.process(self._arrivals())
        self.balancer = web.Cluster(self.sim, self.servers, p.balancer, rng=g, sample_s=p.sample_s, gain=p.gain,
                                    start_level=p.peak_utilisation * load_shape(p, 0.5))

    def hour_at(self, t: float) -> int:
        return int(max(t - self.start, 0) // self.hour_s) % 24 if t >= self.start else 0

    def _arrivals(self):
        sim, g = self.sim, self.g
        hour = self.hour_at(sim.now)
        while True:
            yield sim.timeout(g.exponential(1 / self.rates[hour]))
            hour = self.hour_at(sim.now)     # the arrival's hour, and the rate of the next gap
            self.balancer.pick().submit(g.exponential(self.p.cpu_s), hour)

    def run(self) -> pd.DataFrame:
        """Run the day; one row per completed request measured (arrival after the warm-up):
        server, hour, server_s."""
        end = self.start + 24 * self.hour_s
        self.sim.run(until=end + 3 * max(self.p.batch_window_s, 1.0) + 30)
        parts = []
        for s in self.servers:
            rec = np.fromiter(s.records, dtype=RECORD, count=len(s.records))
            t0, t1 = rec["t0"], rec["t1"]
            keep = (self.start <= t0) & (t0 < end)
            t0, t1 = t0[keep], t1[keep]
            parts.append(pd.DataFrame({"server": np.full(len(t0), s.name, dtype=np.int64),
                                       "hour": ((t0 - self.start) // self.hour_s).astype(np.int64),
                                       "server_s": t1 - t0}))
        return pd.concat(parts, ignore_index=True)


def run_cluster(p: Params, *, quick: bool = False, rng=0) -> pd.DataFrame:
    """Per server and hour: requests per (real) hour, mean server time, CPU utilisation.

    Index: (server, hour). Columns: requests_per_h, server_s, utilisation."""
    hour_s = p.quick_hour_sim_s if quick else p.hour_sim_s
    g = make_rng(rng)
    recs = Cluster(p, hour_s, g).run()
    scale = 3600.0 / hour_s
    out = recs.groupby(["server", "hour"]).agg(n=("server_s", "size"), server_s=("server_s", "mean"))
    idx = pd.MultiIndex.from_product([range(1, len(p.cpus) + 1), HOURS], names=["server", "hour"])
    out = out.reindex(idx)
    out["n"] = out["n"].fillna(0)
    cpu = np.array([p.cpu_s * ((1 - p.batch_cpu_saving) if p.batching_server == s else 1)
                    for s in out.index.get_level_values("server")])
    c = np.array([p.cpus[s - 1] for s in out.index.get_level_values("server")])
    out["utilisation"] = out["n"] * cpu / (hour_s * c)
    out["requests_per_h"] = out["n"] * scale
    return out[["requests_per_h", "server_s", "utilisation"]]


def network_by_hour(p: Params, *, rng=0, quick: bool = False) -> pd.Series:
    """Mean network-and-browser part of the response time (server time excluded) by hour, over the hour's
    user mix."""
    per_class = class_times(p, rng=rng, pages=40 if quick else 150)["response_s"].to_numpy()
    return pd.Series([float(class_mix(p, h + 0.5) @ per_class) for h in HOURS], index=pd.Index(HOURS, name="hour"))


def _day(p: Params, rng, quick):
    """The simulated day (cluster and network parts), cached for an int seed: Figures 5-7 and ``cluster``
    read the same day."""
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return _day_cached(p, int(rng), bool(quick))
    return _day_run(p, rng, quick)


@functools.lru_cache(maxsize=8)
def _day_cached(p: Params, seed: int, quick: bool):
    return _day_run(p, seed, quick)


def _day_run(p: Params, rng, quick):
    g = make_rng(rng)
    a, b = g.spawn(2)
    cl = run_cluster(p, quick=quick, rng=a)
    net = network_by_hour(p, rng=b, quick=quick)
    resp = cl["server_s"] + net.reindex(cl.index.get_level_values("hour")).to_numpy()
    return cl.assign(response_s=resp), net


def figure6(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 6: mean response time by server over 24 hours. Index: hour. Columns: server_1_s ...
    server_5_s."""
    p = params or Params()
    day, _ = _day(p, rng, quick)
    df = day["response_s"].unstack("server")
    df.columns = [f"server_{s}_s" for s in df.columns]
    return df


def figure7(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 7: page requests per hour by server. Index: hour. Columns: server_1_per_h ... server_5_per_h."""
    p = params or Params()
    day, _ = _day(p, rng, quick)
    df = day["requests_per_h"].unstack("server")
    df.columns = [f"server_{s}_per_h" for s in df.columns]
    return df


def cluster(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§4.3 over the day, per server: traffic against the mean of the other eight-way servers, mean response
    time, and its excess over theirs; CPU utilisation. Index: server ('1'...'5'). Columns: traffic_vs_8way,
    response_s, extra_response_s, utilisation_pct, server_s, min_hourly_extra_s, max_hourly_extra_s,
    min_hourly_traffic_vs_8way, max_hourly_traffic_vs_8way."""
    p = params or Params()
    day, _ = _day(p, rng, quick)
    n = day["requests_per_h"]
    wresp = (day["response_s"] * n).groupby("server").sum() / n.groupby("server").sum()
    wsrv = (day["server_s"] * n).groupby("server").sum() / n.groupby("server").sum()
    total = n.groupby("server").sum()
    util = day["utilisation"].groupby("server").mean()
    servers = list(total.index)
    peers = [s for s in servers if p.cpus[s - 1] == max(p.cpus) and s != p.batching_server]
    per_hour_resp = day["response_s"].unstack("server")
    per_hour_n = n.unstack("server")
    rows = []
    for s in servers:
        ref = [q for q in peers if q != s] or peers
        hourly_extra = per_hour_resp[s] - per_hour_resp[ref].mean(axis=1)
        hourly_traffic = per_hour_n[s] / per_hour_n[ref].mean(axis=1)
        rows.append({"server": str(s), "traffic_vs_8way": total[s] / total[ref].mean(),
                     "response_s": wresp[s], "extra_response_s": wresp[s] - wresp[ref].mean(),
                     "utilisation_pct": 100 * util[s], "server_s": wsrv[s],
                     "min_hourly_extra_s": hourly_extra.min(), "max_hourly_extra_s": hourly_extra.max(),
                     "min_hourly_traffic_vs_8way": hourly_traffic.min(),
                     "max_hourly_traffic_vs_8way": hourly_traffic.max()})
    return pd.DataFrame(rows).set_index("server")


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figures 4 and 5: page requests per hour (the whole site) and the traffic-weighted mean response time.
    Index: hour. Columns: requests_per_h, response_s, server_s, lan_share, dialup_share."""
    p = params or Params()
    day, _ = _day(p, rng, quick)
    n = day["requests_per_h"].unstack("server")
    r = day["response_s"].unstack("server")
    s = day["server_s"].unstack("server")
    df = pd.DataFrame({"requests_per_h": n.sum(axis=1),
                       "response_s": (r * n).sum(axis=1) / n.sum(axis=1),
                       "server_s": (s * n).sum(axis=1) / n.sum(axis=1)})
    mix = np.array([class_mix(p, h + 0.5) for h in df.index])
    df["lan_share"], df["dialup_share"] = mix[:, 0], mix[:, 2]
    return df


# --- §3.1 and §3.2: what the monitor sees, and the trimming --------------------------------------------

SCENARIOS = ("fast page", "slow generation", "slow network", "slow connect")


def fetch_bias(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.1: fetch time measured from the click (cookie) and from the first HTML byte (no cookie), for a LAN
    view of a fast page, a page whose generation takes 5 s, a page over a slow path (dialup, 1 s RTT) and a
    view whose connection set-up takes 3 s more (a lost SYN). Index: scenario. Columns: true_fetch_s,
    measured_fetch_s (the monitor's, by ``cookie_start``), nocookie_fetch_s, error_pct (the measured fetch
    below the true one, % of the true)."""
    p = params or Params()
    views = _pages(p, 1, make_rng(rng))
    cases = {"fast page": dict(rtt=p.rtt_s[0], bw=p.bandwidth_bps[0], server_s=0.05, extra=0.0),
             "slow generation": dict(rtt=p.rtt_s[0], bw=p.bandwidth_bps[0], server_s=5.0, extra=0.0),
             "slow network": dict(rtt=1.0, bw=p.bandwidth_bps[2], server_s=0.05, extra=0.0),
             "slow connect": dict(rtt=p.rtt_s[0], bw=p.bandwidth_bps[0], server_s=0.05, extra=3.0)}
    rows = []
    for name, c in cases.items():
        t = page_load(p, c["rtt"], c["bw"], views[0], server_s=c["server_s"], setup_extra_s=c["extra"])
        nocookie = t.html_done_s - t.first_byte_s
        measured = t.html_done_s if p.cookie_start else nocookie
        rows.append({"scenario": name, "true_fetch_s": t.html_done_s, "measured_fetch_s": measured,
                     "nocookie_fetch_s": nocookie, "error_pct": 100 * (1 - measured / t.html_done_s)})
    return pd.DataFrame(rows).set_index("scenario")


def view_records(p: Params, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """A day of page-view records as the collector receives them: class, hour, response_s (with per-view
    spread, views over pathologically slow links and clock adjustments mid-view)."""
    g = make_rng(rng)
    a, b = g.spawn(2)
    n = p.views // 4 if quick else p.views
    per_class = class_times(p, rng=a, pages=40 if quick else 150)["response_s"].to_numpy()
    weights = np.array([load_shape(p, h + 0.5) for h in HOURS])
    hours = b.choice(24, n, p=weights / weights.sum())
    mixes = np.array([class_mix(p, h + 0.5) for h in HOURS])[hours]
    cls = (b.random(n)[:, None] > np.cumsum(mixes, axis=1)).sum(axis=1)
    sigma = p.view_spread
    rt = per_class[cls] * np.exp(sigma * b.standard_normal(n) - sigma ** 2 / 2)
    slow = b.random(n) < p.slow_link_share
    page_bits = 8 * (p.html_bytes + (1 - p.cached_share) * p.objects * p.object_min_bytes
                     * p.object_pareto_shape / (p.object_pareto_shape - 1))
    rt = np.where(slow, rt + page_bits / p.slow_link_bps, rt)
    jump = b.random(n) < p.clock_jump_share
    rt = np.where(jump, rt + p.clock_jump_s * b.choice([-1.0, 1.0], n), rt)
    keep = rt > 0                     # a backwards jump gives a negative latency: the collector drops it
    return pd.DataFrame({"class": np.array(CLASSES)[cls][keep], "hour": hours[keep], "response_s": rt[keep]})


def trimming(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.2: per connection class and for all views: the raw mean, the mean after the fixed trim threshold,
    the 5% trimmed mean (the statistic it stands in for), the median, and the share trimmed.
    Index: class ('lan', 'broadband', 'dialup', 'all'). Columns: views, mean_s, threshold_mean_s,
    trimmed5_mean_s, median_s, trimmed_pct."""
    p = params or Params()
    rec = view_records(p, rng=rng, quick=quick)
    rows = []
    for name, grp in list(rec.groupby("class")) + [("all", rec)]:
        x = grp["response_s"].to_numpy()
        kept = x[x <= p.trim_s]
        rows.append({"class": name, "views": len(x), "mean_s": x.mean(), "threshold_mean_s": kept.mean(),
                     "trimmed5_mean_s": trimmed_mean(x, 0.05), "median_s": float(np.median(x)),
                     "trimmed_pct": 100 * (1 - len(kept) / len(x))})
    return pd.DataFrame(rows).set_index("class").reindex(list(CLASSES) + ["all"])


# --- Tables 1 and 2: subnets ---------------------------------------------------------------------------

TABLE1_SUBNETS = ("168.216.94", "168.216.56", "168.216.124")


def contributions(requests, means, total_requests: float, group_mean: float | None = None,
                  how: str = "share") -> np.ndarray:
    """A subnet's contribution to its group's mean response time: ``share`` is its requests over the
    group's times its mean (the terms the group mean sums); ``removal`` is how far the group mean falls
    without it, n (m - M) / (N - n), which needs the group mean M."""
    n, m = np.asarray(requests, float), np.asarray(means, float)
    if how == "share":
        return n * m / total_requests
    if how == "removal":
        if group_mean is None:
            raise ValueError("removal needs group_mean")
        return n * (m - group_mean) / (total_requests - n)
    raise ValueError(f"how must be 'share' or 'removal', got {how!r}")


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: WVK-12 subnets ordered by their contribution to the group's mean response time.
    Index: subnet. Columns: requests, mean_rt_s, independent_delta_s, rank."""
    p = params or Params()
    n = np.array(p.table1_requests, float)
    m = np.array(p.table1_mean_s, float)
    # the group mean the removal reading needs: the listed subnets' weighted mean stands for it
    group = float((n * m).sum() / n.sum())
    d = contributions(n, m, p.table1_total_requests, group, p.contribution)
    df = pd.DataFrame({"subnet": TABLE1_SUBNETS, "requests": n, "mean_rt_s": m, "independent_delta_s": d})
    df["rank"] = df["independent_delta_s"].rank(ascending=False, method="first")
    return df.set_index("subnet")


def subnet_report(p: Params, *, rng=0, quick: bool = False) -> pd.DataFrame:
    """A synthetic US-LAN population of /24 subnets (a sports site's visitors): terrestrial subnets with
    spread round trips, a few behind a congested internal link, and the satellite provider's; per subnet
    its traffic share and mean response time. Index: subnet. Columns: kind, traffic_pct, mean_rt_s."""
    g = make_rng(rng)
    a, b = g.spawn(2)
    views = _pages(p, 8 if quick else 60, a)
    k = p.lan_subnets
    rtt = b.lognormal(math.log(p.rtt_s[0]), 0.4, k)
    bw = np.full(k, p.bandwidth_bps[0])
    kind = np.array(["lan"] * k, dtype=object)
    kind[:p.internal_bottleneck_subnets] = "internal bottleneck"
    bw[:p.internal_bottleneck_subnets] = p.internal_bottleneck_bps
    kind[-1] = "satellite"
    rtt[-1] = p.satellite_rtt_s
    traffic = b.pareto(1.2, k) + 1
    names = [f"10.{i // 256}.{i % 256}" for i in range(k)]
    names[-1] = "216.236.222"
    mean_rt = [float(np.mean([page_load(p, r, w, v).onload_s for v in views]))
               for r, w in zip(rtt.tolist(), bw.tolist())]   # Python floats: NumPy scalars are slower here
    return pd.DataFrame({"subnet": names, "kind": kind, "traffic_pct": 100 * traffic / traffic.sum(),
                         "mean_rt_s": mean_rt}).set_index("subnet")


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: the slowest /24 subnets with at least ``traffic_floor`` of the site's (US LAN) traffic, slowest
    first, in the synthetic population. Index: rank ('1'...). Columns: subnet, kind, traffic_pct, mean_rt_s,
    satellite (1 for the satellite provider's subnet)."""
    p = params or Params()
    rep = subnet_report(p, rng=rng, quick=quick)
    rep = rep[rep["traffic_pct"] >= 100 * p.traffic_floor].sort_values("mean_rt_s", ascending=False).head(20)
    rep = rep.reset_index()
    rep["satellite"] = (rep["kind"] == "satellite").astype(int)
    rep.index = pd.Index([str(i + 1) for i in range(len(rep))], name="rank")
    return rep


# --- then vs now: five real back ends behind a least-CPU balancer ----------------------------------------

NOW_SCRIPT = r'''
import ast, sys, threading, time, random, queue, http.server, socketserver, urllib.request
from multiprocessing import Process
cfg = ast.literal_eval(sys.argv[1])

class Backend(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

def backend(port, cpus, batching, cpu_s, saving, window_s, ready):
    slots = threading.Semaphore(cpus)
    busy = [0.0]
    lock = threading.Lock()
    gate = threading.Condition()
    epoch = [0]
    def batcher():
        while True:
            time.sleep(window_s)
            with gate:
                epoch[0] += 1
                gate.notify_all()
    if batching:
        threading.Thread(target=batcher, daemon=True).start()
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *a):
            pass
        def do_GET(self):
            if self.path == "/cpu":
                with lock:
                    body = repr(busy[0]).encode()
            else:
                work = float(self.path.split("/")[-1])
                if batching:
                    with gate:
                        e = epoch[0]
                        while epoch[0] == e:
                            gate.wait()
                    work *= 1 - saving
                with slots:
                    t0 = time.perf_counter()
                    time.sleep(work)          # a CPU slot held for the request's CPU time
                    with lock:
                        busy[0] += time.perf_counter() - t0
                body = b"<html>" + b"x" * 2000 + b"</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    srv = Backend(("127.0.0.1", port), H)
    ready.put(port)
    srv.serve_forever()

def main():
    import multiprocessing as mp
    ready = mp.Queue()
    cpus, batching = cfg["cpus"], cfg["batching"]
    procs, ports = [], []
    for i, c in enumerate(cpus):
        port = cfg["port0"] + i
        pr = Process(target=backend, args=(port, c, i + 1 == batching, cfg["cpu_s"], cfg["saving"],
                                           cfg["window_s"], ready), daemon=True)
        pr.start(); procs.append(pr); ports.append(port)
    for _ in cpus:
        ready.get(timeout=20)
    n = len(cpus)
    weights = [1.0 / n] * n
    last = [0.0] * n
    stop = time.perf_counter() + cfg["seconds"]
    rng = random.Random(cfg["seed"])
    results = queue.Queue()
    def get(port, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
            return r.read()
    def sampler():
        nonlocal weights, last
        while time.perf_counter() < stop:
            time.sleep(cfg["sample_s"])
            used = [float(get(p, "/cpu")) for p in ports]
            util = [(u - l) / (c * cfg["sample_s"]) for u, l, c in zip(used, last, cpus)]
            last = used
            if cfg["balancer"] == "least-cpu":
                mean = max(sum(util) / n, 0.02)
                w = [wi * pow(2.718281828, -cfg["gain"] * (u - mean) / mean) for wi, u in zip(weights, util)]
                s = sum(w)
                weights = [max(x / s, 1e-4) for x in w]
    def one(i, work):
        t0 = time.perf_counter()
        try:
            get(ports[i], "/work/%.4f" % work)
            results.put((i, t0 - t_start, time.perf_counter() - t0))
        except Exception:
            results.put((i, t0 - t_start, float("nan")))
    threading.Thread(target=sampler, daemon=True).start()
    t_start = time.perf_counter()
    threads, rr = [], 0
    while time.perf_counter() < stop:
        time.sleep(rng.expovariate(cfg["rate"]))
        if cfg["balancer"] == "least-cpu":
            x, acc, i = rng.random() * sum(weights), 0.0, 0
            for i, w in enumerate(weights):
                acc += w
                if x <= acc:
                    break
        else:
            i, rr = rr, (rr + 1) % n
        th = threading.Thread(target=one, args=(i, rng.expovariate(1 / cfg["cpu_s"])), daemon=True)
        th.start(); threads.append(th)
    for th in threads:
        th.join(timeout=60)
    while not results.empty():
        i, t0, dt = results.get()
        print("req", i + 1, "%.4f" % t0, "%.5f" % dt)
    for pr in procs:
        pr.terminate()

if __name__ == "__main__":
    main()
'''


@exclusive()
def measure_cluster(params: Params | None = None, *, quick: bool = False, python: str = "python3",
                    rng=0) -> pd.DataFrame:
    """Run five real HTTP back ends on loopback (each its own process, ``cpus`` CPU slots, server 5
    batching) behind a real balancer (least-CPU weights from each back end's reported busy time, or round
    robin), with Poisson requests at half the cluster's capacity; per server: requests, traffic against the
    other eight-way servers, mean and 90th-percentile latency.

    The CPUs are emulated: a request holds one of the back end's slots for its CPU time (sleeping), as this
    machine has two cores; the processes, sockets, HTTP, the balancer's loop and the batching are real.
    Index: server ('1'...). Columns: requests, traffic_vs_8way, mean_ms, p90_ms, available. The run's
    ``attrs['note']`` says why it is not available where it is not."""
    p = params or Params()
    cpu_s = 0.05
    cfg = {"cpus": list(p.cpus), "batching": p.batching_server, "cpu_s": cpu_s, "saving": p.batch_cpu_saving,
           "window_s": p.batch_window_s / 10, "seconds": 4.0 if quick else 15.0,
           "rate": 0.5 * sum(p.cpus) / cpu_s, "sample_s": 0.2, "gain": p.gain, "balancer": p.balancer,
           "seed": int(make_rng(rng).integers(1 << 30)), "port0": 18_000 + int(make_rng(rng).integers(2000))}
    r = run_command([python, "-c", NOW_SCRIPT, repr(cfg)], timeout_s=180.0)
    rows = [line.split() for line in r.stdout.splitlines() if line.startswith("req ")]
    if not r.available or not rows:
        df = pd.DataFrame({"server": [str(i + 1) for i in range(len(p.cpus))], "available": False}).set_index("server")
        df.attrs["note"] = r.reason or r.stderr.strip()[-300:] or "no requests completed"
        return df
    rec = pd.DataFrame(rows, columns=["tag", "server", "t0", "latency_s"]).astype(
        {"server": int, "t0": float, "latency_s": float})
    rec = rec[rec["t0"] > cfg["seconds"] * 0.25]          # the balancer's weights settle first
    out = []
    peers = [s for s in range(1, len(p.cpus) + 1) if p.cpus[s - 1] == max(p.cpus) and s != p.batching_server]
    counts = rec.groupby("server").size().reindex(range(1, len(p.cpus) + 1), fill_value=0)
    for s in range(1, len(p.cpus) + 1):
        lat = rec.loc[rec["server"] == s, "latency_s"]
        ref = [q for q in peers if q != s] or peers
        out.append({"server": str(s), "requests": int(counts[s]),
                    "traffic_vs_8way": counts[s] / counts[ref].mean(), "mean_ms": 1e3 * lat.mean(),
                    "p90_ms": 1e3 * lat.quantile(0.9), "available": True})
    df = pd.DataFrame(out).set_index("server")
    df.attrs["note"] = (f"window {cfg['window_s']:.3f} s (a tenth of the model's), CPU {cpu_s} s a request; "
                        f"{cfg['seconds']:.0f} s run")
    return df


def simulate_now(params: Params | None = None, *, quick: bool = False, rng=0) -> pd.DataFrame:
    """The simulated cluster at :func:`measure_cluster`'s settings (0.05 s of CPU a request, a tenth of the
    window, a flat load at half the CPUs, samples every 0.2 s), for the side-by-side. Index: server.
    Columns: traffic_vs_8way, mean_ms (server time)."""
    p = params or Params()
    q = _replace(p, cpu_s=0.05, batch_window_s=p.batch_window_s / 10, trough_fraction=0.999,
                 peak_utilisation=0.5, sample_s=0.2, warmup_s=6.0, hour_sim_s=10.0, quick_hour_sim_s=1.0)
    cl = run_cluster(q, quick=quick, rng=rng)
    n = cl["requests_per_h"].groupby("server").sum()
    t = (cl["server_s"] * cl["requests_per_h"]).groupby("server").sum() / n
    peers = [s for s in n.index if p.cpus[s - 1] == max(p.cpus) and s != p.batching_server]
    rows = [{"server": str(s), "traffic_vs_8way": n[s] / n[[q_ for q_ in peers if q_ != s] or peers].mean(),
             "mean_ms": 1e3 * t[s]} for s in n.index]
    return pd.DataFrame(rows).set_index("server")
