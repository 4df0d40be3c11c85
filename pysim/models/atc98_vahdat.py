"""Transparent Result Caching (Vahdat & Anderson, USENIX ATC 1998).

Regenerates Table 1 (what TREC's tracing adds to an open() loop, a compile
of Apache and a LaTeX run), Figure 4 (response time of the forking and the
caching Apache against client machines, 40 clients each) and the CGI numbers
of §3.3.3's text (one client; a 2.5-second CGI program under 40 and 80
clients).

First principles.

* Tracing (§2.1, §2.2): TREC catches a fixed set of system calls through
  /proc; every caught call stops the program and bounces to TREC's tracing
  thread and back. The slowdown is the traced-call rate times the cost of one
  bounce, written with :mod:`pysim.sw.syscalls`: a :class:`SyscallMix` of one
  second of each benchmark's untraced run, an :class:`Interposer` that
  catches TREC's calls (a user-level bounce and TREC's own handling per
  caught call), :func:`interposed` and :func:`slowdown`. read() and write()
  are not caught (§2.1); the real programs make four of them per traced call
  (§2.1's "four times as often"), which matters only if they are caught.
* CGI (§3.3.3): a closed network solved by exact MVA
  (:func:`pysim.queueing.closed.mva`): 40 clients per client machine, each
  requesting again as soon as its reply arrives; a delay for the client's
  own time and the round trip; the server's CPU, time-shared (processor
  sharing, so mean values do not depend on the service-time distribution);
  and the server's 10 Mbit/s Ethernet port. The forking server runs the CGI
  program for every request: Apache's spawn of the child plus the program's
  own run time (§3.3.3: printenv runs in 0.05 s locally). The caching server
  sends the stored result as a file (§3.3.2). :class:`CgiServerSim` runs the
  same network on the engine (closed-loop clients of
  :class:`pysim.workloads.clients.ClosedLoop`, a processor-sharing station)
  as a cross-check of the MVA.

Calibrated, each on one published cell (see CALIBRATION): TREC's handling of
one caught call beyond a bare user-level bounce (Table 1's open() overhead,
the one row with a single kind of traced call) and the client's own time per
request with the network's round trip (§3.3.3's caching server, one client).
Taken as given (see INPUTS): Table 1's traced-call rates and Apache's
untraced time, and the run times of the two CGI programs. Everything else is
a prediction: the Apache and LaTeX overheads, the forking server's time for
one client and the 39% gain, the 2.5-second program under 40 and 80 clients,
and Figure 4's curves (judged by the paper's claims; the figure prints no
numbers).

Not reproduced: Figures 1-3 are diagrams and a listing; the LaTeX run's
times and the open() loop's untraced time are lost in the text. Today's
experiments (a traced build and an open() loop under strace, a CGI program
against its cached result on loopback) are run by the notebook with the
programs this module writes out (:func:`build_tree`, :func:`cgi_site`) and
tabled by :func:`tracing_now` and :func:`cgi_now`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness import TracedRun
from pysim.hw import CpuCostModel, catalog
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.queueing.closed import Station, mva
from pysim.rng import spawn
from pysim.sw import Recipe, Work
from pysim.sw.syscalls import Interposer, SyscallMix, interposed, slowdown
from pysim.units import ms, us
from pysim.workloads.clients import ClosedLoop

#: The system calls TREC catches on Solaris 2.5.1 (§2.1).
TREC_CALLS = ("open", "fork", "fork1", "creat", "unlink", "exec", "execve", "rename", "exit")
#: The calls §2.1 leaves untraced because they are so frequent.
READ_WRITE = ("read", "write")
#: Table 1's rows.
BENCHMARKS = ("open", "Apache compile", "Latex")
#: The two servers of Figure 4 and §3.3.3.
SERVERS = ("forking", "caching")
#: §3.3.3's scenarios: (row label, which CGI program, client machines).
CGI_ROWS = (("printenv, 1 client", "printenv", 0), ("printenv, 40 clients", "printenv", 1),
            ("long CGI, 40 clients", "long", 1), ("long CGI, 80 clients", "long", 2))


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Tracing costs in microseconds on the 167 MHz UltraSPARC (Sun Ultra/1, Solaris 2.5.1)."""

    # --- tracing (§2.1, §2.2, Table 1)
    clock_hz: float = stated(167e6, "§2.2: a 167 Mhz Sun Ultra/1 workstation running Solaris 2.5.1")
    open_loop_calls: int = stated(5000, "§2.2: open and close on the same file in a tight loop 5000 times", ge=1)
    open_rate_per_s: float = given(403.0, "Table 1, open row: 403 calls/s")
    apache_rate_per_s: float = given(160.0, "Table 1, Apache row: 160 calls/s")
    latex_rate_per_s: float = given(16.0, "Table 1, Latex row: 16 calls/s (and §2.2's prose)")
    apache_untraced_s: float = given(128.4, "Table 1, Apache row: 128.4 s untraced")
    read_write_per_traced: float = stated(4.0, "§2.1: read and write executed four times as often as all other "
                                               "traced system calls combined (for some programs)", ge=0)
    bounce_us: float = assumed(59.0, "a bare user-level bounce on the same 167 MHz UltraSPARC and Solaris 2.5.1: "
                                     "SLIC's getpid() with a user-level extension, 61.83 us, less the plain "
                                     "getpid(), 2.82 us (Ghormley et al., USENIX 1998, Table 1)")
    trec_handler_us: float = calibrated(1300.801, "TREC's own work per caught call beyond the bounce: /proc "
                                                  "status and argument reads, the lineage update, the resume")
    kernel_dispatch_us: float = assumed(1.94, "an in-kernel interposer on the same machine: SLIC's system-call "
                                              "dispatcher (3.16 - 2.82 us) and one extension that inspects "
                                              "return values (1.60 us) (Ghormley et al., USENIX 1998, §3.3)")
    kernel_lineage_us: float = assumed(10.0, "an in-kernel lineage update: copy a path name in and update a "
                                             "table, a few thousand instructions at 167 MHz")
    user_level_tracing: bool = stated(True, "§2.1: TREC intercepts calls through the Solaris proc file system, "
                                            "which forces a context switch to the tracing thread")
    trace_reads_writes: bool = stated(False, "§2.1: read and write are not intercepted, for their overhead")
    # --- CGI (§3.3.3, Figure 4)
    clients_per_machine: int = stated(40, "§3.3.3: each client machine forked 40 copies of the same script", ge=1)
    client_machines: int = stated(7, "§3.3.3: between one and seven of the other machines acted as clients",
                                  ge=1)
    printenv_s: float = given(0.05, "§3.3.3: the printenv script takes .05 seconds to run locally")
    long_cgi_s: float = given(2.5, "§3.3.3: a synthetic CGI program which takes 2.5 seconds to execute")
    static_serve_ms: float = assumed(4.0, "Apache 1.2 sending a small file on a 167 MHz UltraSPARC: accept, "
                                          "parse, open, write, close and log, some hundreds of requests/s, as "
                                          "the period's small-file Web benchmarks ran on such machines")
    cgi_spawn_ms: float = assumed(5.0, "Apache's own part of running a CGI program beyond the program's local "
                                       "run: fork of the server child, the CGI environment, the pipe back and "
                                       "the header scan; a process creation cost a few ms on 1996 workstations")
    client_latency_s: float = calibrated(0.1048192, "the client's own time per request and the round trip: "
                                                    "the paper does not describe the client program")
    request_bytes: int = assumed(200, "an HTTP/1.0 GET with a few headers", ge=1)
    reply_bytes: int = assumed(1200, "printenv's output: some 25 variables of the CGI environment, with the "
                                     "response header", ge=1)
    address_space_penalty: float = assumed(0.0, "the share of the CPU each further CGI process present costs in "
                                                "switching and managing address spaces (§3.3.3 names the cost but "
                                                "gives no measure of it): none, so the CPU is plain", ge=0)
    caching: bool = stated(True, "§3.3.2: the modified Apache returns a cached result without spawning a process")


CALIBRATION = (
    Fit("trec_handler_us", "table1", "open", "overhead_pct", (10.0, 10000.0)),
    Fit("client_latency_s", "cgi", "printenv, 1 client", "caching_s", (0.001, 1.0)),
)
INPUTS = (
    Inputs(("open_rate_per_s", "apache_rate_per_s", "latex_rate_per_s"),
           cells("table1", BENCHMARKS, ["calls_per_s"]), "Table 1's traced-call rates, taken as given"),
    Inputs(("apache_untraced_s",), cells("table1", ["Apache compile"], ["original_s"]),
           "the compile's untraced time, taken as given"),
    Inputs(("open_rate_per_s",), cells("table1", ["open"], ["trec_s"]),
           "the open() loop's traced time is its untraced time (5000 opens at the given rate) times one plus the "
           "fitted overhead: arithmetic on a given and a fitted cell"),
    Inputs(("printenv_s", "long_cgi_s"),
           cells("cgi", ["printenv, 1 client"], ["cgi_run_s"]) + cells("cgi", ["long CGI, 40 clients"],
                                                                       ["cgi_run_s"]),
           "the two CGI programs' run times, taken as given"),
)
COUNTERFACTUALS = (
    Counterfactual("in-kernel-tracing", {"user_level_tracing": False},
                   "TREC inside the kernel (§2.2: Watchdogs, Interposition Agents or SLIC): an in-kernel dispatcher "
                   "and lineage update per caught call, no /proc bounce"),
    Counterfactual("trace-reads-writes", {"trace_reads_writes": True},
                   "TREC also catches read() and write() (§2.1's rejected design)"),
    Counterfactual("no-caching", {"caching": False}, "the unmodified Apache on both curves: every request forks"),
    Counterfactual("cheap-cgi", {"long_cgi_s": 0.05},
                   "the long CGI program costs no more than printenv (0.05 s)"),
)


# --- tracing ----------------------------------------------------------------------------------

def cost_model(p: Params) -> CpuCostModel:
    """The Ultra/1's prices of the operations an interposer performs per caught call."""
    return CpuCostModel(p.clock_hz, fixed_s={"bounce": p.bounce_us * us, "trec_handler": p.trec_handler_us * us,
                                             "kernel_dispatch": p.kernel_dispatch_us * us,
                                             "kernel_lineage": p.kernel_lineage_us * us})


def trec_interposer(p: Params) -> Interposer:
    """TREC as one interposing layer: what it catches and what each caught call costs.

    At user level (/proc) a caught call stops the program, bounces to TREC's tracing thread (the bounce,
    kernel side) and runs TREC's handler (user side); in the kernel it is a dispatch and a lineage update.
    """
    catches = frozenset(TREC_CALLS + (READ_WRITE if p.trace_reads_writes else ()))
    if p.user_level_tracing:
        per_call = Work(user=Recipe(ops={"trec_handler": 1}), system=Recipe(ops={"bounce": 1}))
    else:
        per_call = Work(system=Recipe(ops={"kernel_dispatch": 1, "kernel_lineage": 1}))
    return Interposer("TREC", catches=catches, per_call=per_call)


def per_call_s(p: Params) -> float:
    """Seconds one caught call costs the traced program."""
    return sum(trec_interposer(p).per_call.seconds(cost_model(p)))


def second_of(p: Params, benchmark: str) -> SyscallMix:
    """The calls of one second of a benchmark's untraced run.

    The open() loop pairs each open with an untraced close (§2.2). For the two real programs the text gives
    only the rate of traced calls, not which calls they are; one cost per caught call makes the split
    irrelevant, so they are booked as opens, with §2.1's reads and writes beside them.
    """
    if benchmark == "open":
        return SyscallMix({"open": p.open_rate_per_s, "close": p.open_rate_per_s})
    rate = {"Apache compile": p.apache_rate_per_s, "Latex": p.latex_rate_per_s}[benchmark]
    half = p.read_write_per_traced * rate / 2
    return SyscallMix({"open": rate, "read": half, "write": half})


def untraced_s(p: Params, benchmark: str) -> float:
    """The benchmark's untraced run time (s); NaN where the text has lost it."""
    if benchmark == "open":
        return p.open_loop_calls / p.open_rate_per_s  # 5000 opens at the given rate
    return p.apache_untraced_s if benchmark == "Apache compile" else math.nan


def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: TREC's overhead. Index: benchmark.

    Columns: original_s and trec_s (untraced and traced run time; NaN where the text lost them),
    calls_per_s (traced calls per second of the untraced run), overhead_pct, per_call_us (what one traced
    call adds, TREC's cost over the traced-call count).
    """
    p = params or Params()
    cpu, trec = cost_model(p), trec_interposer(p)
    rows = []
    for name in BENCHMARKS:
        mix = second_of(p, name)
        added_s = sum(interposed(mix, [trec]).seconds(cpu))
        factor = slowdown(1.0, added_s)
        traced = SyscallMix({c: n for c, n in mix.counts.items() if c in TREC_CALLS}).total
        rows.append({"benchmark": name, "original_s": untraced_s(p, name), "trec_s": untraced_s(p, name) * factor,
                     "calls_per_s": traced, "overhead_pct": 100.0 * (factor - 1.0),
                     "per_call_us": added_s / traced / us})
    return pd.DataFrame(rows).set_index("benchmark")


# --- CGI: the closed network --------------------------------------------------------------------

def cgi_seconds(p: Params, program: str) -> float:
    """The run time (s) of a CGI program: 'printenv' or 'long'."""
    if program not in ("printenv", "long"):
        raise ValueError(f"program must be 'printenv' or 'long', got {program!r}")
    return p.printenv_s if program == "printenv" else p.long_cgi_s


def server_cpu_s(p: Params, server: str, cgi_s: float) -> float:
    """Server CPU per request (s): a forking server spawns the program and runs it; a caching one sends a file."""
    if server not in SERVERS:
        raise ValueError(f"server must be one of {SERVERS}, got {server!r}")
    sent = p.static_serve_ms * ms
    return sent + p.cgi_spawn_ms * ms + cgi_s if spawns(p, server) else sent


def link_s(p: Params) -> float:
    """The server's Ethernet port busy per request (s): the request in, the reply out, 10 Mbit/s (§3.3.3)."""
    eth = catalog.ETHERNET_10
    return eth.message_occupancy_s(p.request_bytes) + eth.message_occupancy_s(p.reply_bytes)


def spawns(p: Params, server: str) -> bool:
    """Whether the server starts a process per request."""
    return server == "forking" or not p.caching


def cpu_station(p: Params, server: str, cgi_s: float, clients: int) -> Station:
    """The server's CPU, time-shared. With ``address_space_penalty`` a, a forking server with j requests
    (so j CGI processes) present works at 1 / (1 + a (j - 1)) of its speed: a load-dependent station."""
    demand = server_cpu_s(p, server, cgi_s)
    if p.address_space_penalty == 0 or not spawns(p, server):
        return Station("cpu", demand)
    rates = tuple(1.0 / (1.0 + p.address_space_penalty * (j - 1)) for j in range(1, clients + 1))
    return Station("cpu", demand, "ld", rates)


def stations(p: Params, server: str, cgi_s: float, clients: int) -> list:
    """The closed network one request visits: the client and the wire's latency, the server's CPU and port."""
    return [Station("client", p.client_latency_s, "delay"), cpu_station(p, server, cgi_s, clients),
            Station("port", link_s(p))]


def closed_load(p: Params, server: str, cgi_s: float, clients: int) -> pd.DataFrame:
    """Exact MVA for 1..``clients`` clients with no pause between requests.

    Index: population. Columns: throughput_per_s, response_s (the client's whole time per request),
    and queue length and utilization per station.
    """
    return mva(stations(p, server, cgi_s, clients), clients, think_s=0.0).frame()


def figure4(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 4: response time against client machines (40 clients each), forking and caching server.

    Index: (machines, server). Columns: clients, response_s, throughput_per_s, cpu_utilization,
    port_utilization.
    """
    p = params or Params()
    n = p.client_machines * p.clients_per_machine
    curves = {s: closed_load(p, s, p.printenv_s, n) for s in SERVERS}
    rows = []
    for m in range(1, p.client_machines + 1):
        for s in SERVERS:
            r = curves[s].loc[m * p.clients_per_machine]
            rows.append({"machines": m, "server": s, "clients": m * p.clients_per_machine,
                         "response_s": r["response_s"], "throughput_per_s": r["throughput_per_s"],
                         "cpu_utilization": r["cpu_utilization"], "port_utilization": r["port_utilization"]})
    return pd.DataFrame(rows).set_index(["machines", "server"])


def cgi(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """§3.3.3's numbers: the client's time per request on each server, one client and under load.

    Index: scenario. Columns: clients, cgi_run_s (the program's own run time), forking_s, caching_s,
    improvement_pct (the caching server's time below the forking one's), forking_over_caching.
    """
    p = params or Params()
    rows = []
    for label, program, machines in CGI_ROWS:
        clients = max(1, machines * p.clients_per_machine)
        run_s = cgi_seconds(p, program)
        t = {s: closed_load(p, s, run_s, clients).loc[clients, "response_s"] for s in SERVERS}
        rows.append({"scenario": label, "clients": clients, "cgi_run_s": run_s, "forking_s": t["forking"],
                     "caching_s": t["caching"], "improvement_pct": 100.0 * (1.0 - t["caching"] / t["forking"]),
                     "forking_over_caching": t["forking"] / t["caching"]})
    return pd.DataFrame(rows).set_index("scenario")


# --- CGI: the same network on the engine ---------------------------------------------------------

class CgiServerSim:
    """The Web server of §3.3.3 on the engine: a time-shared CPU and an Ethernet port, visited in turn.

    Each request first spends the client's own time and the round trip (exponential with the mean the
    model gives: a delay, whose distribution does not change mean values), then its CPU demand under
    processor sharing, then its bytes on the port.
    """

    def __init__(self, sim: Simulation, p: Params, server: str, cgi_s: float, *, rng):
        self.sim, self.p = sim, p
        self.cpu_s, self.link_s = server_cpu_s(p, server, cgi_s), link_s(p)
        self.cpu, self.port = sim.station(1, "ps"), sim.station(1, "fifo")
        self.gen = rng

    def request(self, user):
        yield self.sim.timeout(self.gen.exponential(self.p.client_latency_s))
        yield self.cpu.serve(self.cpu_s)
        yield self.port.serve(self.link_s)


def simulate_cgi(p: Params, server: str, cgi_s: float, clients: int, *, seconds: float, rng=0) -> dict:
    """Run ``clients`` closed-loop clients against :class:`CgiServerSim` for ``seconds`` (a fifth is warm-up).

    Returns throughput_per_s, mean_response_s and completions.
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    latency_rng, client_rng = spawn(rng, 2)
    sim = Simulation()
    web = CgiServerSim(sim, p, server, cgi_s, rng=latency_rng)
    loop = ClosedLoop(sim, clients, web.request, think_s=0.0, warmup_s=seconds / 5, rng=client_rng)
    sim.run(until=seconds)
    return loop.summary()


def figure4_simulated(params: Params | None = None, *, machines=(1, 4, 7), rng=0, quick=False) -> pd.DataFrame:
    """Figure 4's points simulated on the engine, for the MVA curves to be checked against (a plain CPU:
    the simulation has no address-space penalty). Index: (machines, server). Columns: response_s.
    """
    p = params or Params()
    if p.address_space_penalty != 0:
        raise ValueError("the simulation has a plain CPU: address_space_penalty must be 0, "
                         f"got {p.address_space_penalty!r}")
    seconds = 60.0 if quick else 300.0
    rows = []
    for m, gen in zip(machines, spawn(rng, len(machines)), strict=True):
        for s, g in zip(SERVERS, spawn(gen, len(SERVERS)), strict=True):
            r = simulate_cgi(p, s, p.printenv_s, m * p.clients_per_machine, seconds=seconds, rng=g)
            rows.append({"machines": m, "server": s, "response_s": r["mean_response_s"]})
    return pd.DataFrame(rows).set_index(["machines", "server"])


# --- then vs now: the programs the notebook runs, and its tables -----------------------------------

#: TREC's calls as Linux x86-64 names them today, for strace's -e trace= ('?' skips a name this
#: architecture lacks).
TREC_CALLS_LINUX = ("open", "openat", "openat2", "creat", "unlink", "unlinkat", "rename", "renameat", "renameat2",
                    "execve", "execveat", "fork", "vfork", "clone", "clone3", "exit", "exit_group")
STRACE_TRACE = ",".join("?" + c for c in TREC_CALLS_LINUX)

_MAKEFILE = """\
CC ?= cc
CFLAGS ?= -O1
UNITS := $(sort $(wildcard unit*.c))

prog: $(UNITS:.c=.o) main.o
\t$(CC) -o $@ $^

%.o: %.c common.h
\t$(CC) $(CFLAGS) -c $<

openloop: openloop.c
\t$(CC) -O2 -o $@ $<
"""

_COMMON_H = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct record { char name[32]; long value; struct record *next; };
"""

_UNIT_C = """\
#include "common.h"

static struct record *push_{k}(struct record *head, const char *name, long value)
{{
    struct record *r = malloc(sizeof *r);
    if (r == NULL) return head;
    snprintf(r->name, sizeof r->name, "%s-{k}", name);
    r->value = value;
    r->next = head;
    return r;
}}

long unit_{k}(int n)
{{
    struct record *head = NULL, *r;
    long sum = 0;
    for (int i = 0; i < n; i++) head = push_{k}(head, "item", (long)i * ({k} + 1));
    for (r = head; r != NULL; r = r->next) sum += r->value + (long)strlen(r->name);
    while (head != NULL) {{ r = head->next; free(head); head = r; }}
    return sum;
}}
"""

_OPENLOOP_C = """\
/* open and close one file n times: only the open is a call TREC traces (the paper's Table 1, first row) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    const char *path = argc > 2 ? argv[2] : argv[0];
    for (int i = 0; i < n; i++) {
        int fd = open(path, O_RDONLY);
        if (fd < 0) { perror(path); return 1; }
        close(fd);
    }
    return 0;
}
"""

_PRINTENV_CGI = """\
#!/bin/sh
# printenv, as in §3.3.3: print the CGI program's environment
printf 'Content-Type: text/plain\\n\\n'
env
"""

_SERVER_PY = '''\
"""An HTTP server that runs CGI programs, with the result cache of §3.3.2 as a switch.

Usage: server.py forking|caching. Prints its port, then serves 127.0.0.1 until stopped. A caching server
looks for cache/<program>?<arguments> first; on a miss it runs the program and keeps its output there,
written to a temporary name and renamed, so a partial result is never sent.
"""
import http.server
import os
import subprocess
import sys
import threading
import urllib.parse

ROOT = os.path.dirname(os.path.abspath(__file__))
CACHING = sys.argv[1] == "caching"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        name = os.path.basename(url.path)
        cached = os.path.join(ROOT, "cache", name + "?" + url.query)
        if CACHING and os.path.exists(cached):
            with open(cached, "rb") as f:
                out = f.read()
        else:
            env = {"PATH": "/usr/bin:/bin", "GATEWAY_INTERFACE": "CGI/1.1", "REQUEST_METHOD": "GET",
                   "QUERY_STRING": url.query, "SCRIPT_NAME": url.path, "SERVER_PROTOCOL": "HTTP/1.0",
                   "SERVER_SOFTWARE": "trec-demo", "REMOTE_ADDR": self.client_address[0]}
            out = subprocess.run([os.path.join(ROOT, "cgi-bin", name)], env=env, stdout=subprocess.PIPE,
                                 check=True).stdout
            if CACHING:
                tmp = "%s.%d" % (cached, threading.get_ident())
                with open(tmp, "wb") as f:
                    f.write(out)
                os.replace(tmp, cached)
        head, _, body = out.partition(b"\\n\\n")
        self.send_response(200)
        for line in head.decode().splitlines():
            key, _, value = line.partition(":")
            self.send_header(key.strip(), value.strip())
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 512
    daemon_threads = True


os.makedirs(os.path.join(ROOT, "cache"), exist_ok=True)
httpd = Server(("127.0.0.1", 0), Handler)
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
'''

_LOAD_PY = '''\
"""Closed-loop HTTP clients: each asks for URL again as soon as its last reply has arrived.

Usage: load.py URL USERS SECONDS [ROUNDS]. Every client makes one request first (unmeasured); then ROUNDS
windows of SECONDS each are measured back to back. Prints one JSON line with the median window's
throughput_per_s and mean_response_s, and the completions of all windows.
"""
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse

url = urllib.parse.urlsplit(sys.argv[1])
users, seconds = int(sys.argv[2]), float(sys.argv[3])
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
path = url.path + ("?" + url.query if url.query else "")
done = [[0] * users for _ in range(rounds)]
busy = [[0.0] * users for _ in range(rounds)]
edges = []


def fetch():
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    conn.request("GET", path)
    conn.getresponse().read()
    conn.close()


def open_windows():
    t = time.perf_counter()
    edges.extend(t + k * seconds for k in range(rounds + 1))


ready = threading.Barrier(users, action=open_windows)


def client(i):
    fetch()
    ready.wait()
    while True:
        t0 = time.perf_counter()
        k = int((t0 - edges[0]) // seconds)
        if k >= rounds:
            return
        fetch()
        done[k][i] += 1
        busy[k][i] += time.perf_counter() - t0


threads = [threading.Thread(target=client, args=(i,)) for i in range(users)]
for t in threads:
    t.start()
for t in threads:
    t.join()
windows = [(sum(d) / seconds, sum(b) / max(sum(d), 1)) for d, b in zip(done, busy)]
median = sorted(windows)[len(windows) // 2]
print(json.dumps({"completions": sum(map(sum, done)), "throughput_per_s": median[0], "mean_response_s": median[1]}))
'''


def build_tree(n_units: int = 8) -> dict:
    """The files of a small C project to build with make: ``n_units`` compilation units, a shared header,
    a main program, and the open() loop of Table 1's first row. ``{relative path: text}``."""
    if isinstance(n_units, bool) or not isinstance(n_units, int) or n_units < 1:
        raise ValueError(f"n_units must be an int >= 1, got {n_units!r}")
    files = {"Makefile": _MAKEFILE, "common.h": _COMMON_H, "openloop.c": _OPENLOOP_C}
    protos = "".join(f"long unit_{k}(int n);\n" for k in range(n_units))
    calls = "".join(f"    sum += unit_{k}(n);\n" for k in range(n_units))
    files["main.c"] = (f'#include "common.h"\n\n{protos}\nint main(int argc, char **argv)\n{{\n'
                       f"    int n = argc > 1 ? atoi(argv[1]) : 100;\n    long sum = 0;\n{calls}"
                       f'    printf("%ld\\n", sum);\n    return 0;\n}}\n')
    for k in range(n_units):
        files[f"unit{k:02d}.c"] = _UNIT_C.format(k=k)
    return files


def cgi_site() -> dict:
    """The files of the CGI experiment: printenv, the server with its result cache, the load generator.
    ``{relative path: text}``; a text that starts with '#!' is a program to mark executable."""
    return {"cgi-bin/printenv": _PRINTENV_CGI, "server.py": _SERVER_PY, "load.py": _LOAD_PY}


def best_of(runs) -> TracedRun:
    """Several runs of one command, plain and traced, as one: the fastest plain and the fastest traced time
    (other work on the machine only ever adds time), and the first run's mix. Unavailable runs are skipped;
    if none is available, the first one's reason is kept."""
    runs = [runs] if isinstance(runs, TracedRun) else list(runs)
    if not runs:
        raise ValueError("best_of needs at least one TracedRun")
    ok = [r for r in runs if r.available]
    if not ok:
        return runs[0]
    return TracedRun(True, min(r.plain_s for r in ok), min(r.traced_s for r in ok), ok[0].mix)


def tracing_now(runs: dict, params: Params | None = None) -> pd.DataFrame:
    """Table 1 on this machine, beside the model's Ultra/1.

    ``runs`` maps a name to a :class:`pysim.harness.TracedRun` (or several, combined by :func:`best_of`) of
    a real command run plain and under ``strace --seccomp-bpf`` with TREC's calls (:data:`STRACE_TRACE`);
    the one named 'open loop' prices a traced call, which then predicts the others' overhead from their
    traced-call rate (the paper's law).
    Index: run. Columns: status, traced_calls, plain_s, traced_s, calls_per_s, overhead_pct, per_call_us,
    predicted_overhead_pct, overhead_1998_pct (TREC's 1998 cost per call at this rate).
    """
    p = params or Params()
    then_us = per_call_s(p) / us
    nan = math.nan
    rows = []
    for name, run in runs.items():
        run = best_of(run)
        row = {"run": name, "status": f"not available: {run.reason}", "traced_calls": nan, "plain_s": nan,
               "traced_s": nan, "calls_per_s": nan, "overhead_pct": nan, "per_call_us": nan}
        if run.available:
            calls = run.mix.only(TREC_CALLS_LINUX).total
            row.update(status="measured", traced_calls=calls, plain_s=run.plain_s, traced_s=run.traced_s,
                       calls_per_s=calls / run.plain_s, overhead_pct=100.0 * (run.traced_s / run.plain_s - 1.0),
                       per_call_us=(run.traced_s - run.plain_s) / max(calls, 1) / us)
        rows.append(row)
    rows.append({"run": "open (1998 model)", "status": "model", "traced_calls": nan, "plain_s": nan,
                 "traced_s": nan, "calls_per_s": p.open_rate_per_s,
                 "overhead_pct": 100.0 * p.open_rate_per_s * then_us * us, "per_call_us": then_us})
    out = pd.DataFrame(rows).set_index("run")
    cost_now = out["per_call_us"].get("open loop", nan)
    out["predicted_overhead_pct"] = out["calls_per_s"] * cost_now * us * 100.0
    out["overhead_1998_pct"] = out["calls_per_s"] * then_us * us * 100.0
    return out


def cgi_now(measured: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """The CGI experiment on this machine, beside the 1998 model at the same number of clients.

    ``measured`` has one row per run: server ('forking' or 'caching'), users, throughput_per_s,
    mean_response_s. Index: users. Columns: forking_ms, caching_ms, forking_per_s, caching_per_s,
    forking_over_caching (now), forking_over_caching_1998 (the model's Ultra/1 with printenv).
    """
    p = params or Params()
    need = {"server", "users", "throughput_per_s", "mean_response_s"}
    if not need <= set(measured.columns):
        raise ValueError(f"measured needs columns {sorted(need)}, got {sorted(measured.columns)}")
    wide = measured.pivot(index="users", columns="server", values=["mean_response_s", "throughput_per_s"])
    out = pd.DataFrame(index=wide.index.astype(int))
    for s in SERVERS:
        out[f"{s}_ms"] = wide[("mean_response_s", s)].to_numpy() / ms
        out[f"{s}_per_s"] = wide[("throughput_per_s", s)].to_numpy()
    out["forking_over_caching"] = out["forking_ms"] / out["caching_ms"]
    top = int(out.index.max())
    then = {s: closed_load(p, s, p.printenv_s, top)["response_s"] for s in SERVERS}
    out["forking_over_caching_1998"] = [then["forking"].loc[n] / then["caching"].loc[n] for n in out.index]
    return out.rename_axis("users")


def implied_per_call_us(overhead_pct, calls_per_s) -> np.ndarray:
    """What one traced call must cost (us) for an overhead (%) at a traced-call rate (calls/s)."""
    overhead, rate = np.asarray(overhead_pct, dtype=float), np.asarray(calls_per_s, dtype=float)
    if np.any(rate <= 0):
        raise ValueError(f"calls_per_s must be > 0, got {calls_per_s!r}")
    return overhead / 100.0 / rate / us
