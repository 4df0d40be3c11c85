"""The J-Kernel: multiple protection domains in Java (Hawblitzel, Chang, Czajkowski, Hu & von Eicken,
USENIX ATC 1998).

Regenerates what the text keeps of Table 1 (the cost of a null cross-domain call, LRMI, against its
parts on two 1998 JVMs), Table 3 (a double switch between Java threads), Table 5 (HTTP throughput of
IIS, the Java Web Server and the J-Kernel inside IIS, 1000-byte documents) and Table 6 (the J-Kernel's
3-argument call beside Eros's round-trip IPC).

First principles, as operation counts priced on each VM (:class:`pysim.sw.Recipe` on a
:class:`pysim.hw.CpuCostModel`, one per VM):

* an LRMI is the interface call that enters the generated stub, one lookup of the current thread's
  information, two lock acquire/release pairs to change thread segments (§3.2), and a named residual
  (the stub's own work: the revocation check, the segment bookkeeping, the call of the target);
* arguments that are not capabilities are copied: the fast copy costs an allocation and a call of the
  copy routine per object plus a copy per byte; Java serialisation costs a stream, a descriptor and
  reflection per object, and more per byte (§3.2);
* a double switch between Java threads is two NT kernel-thread switches (NT-base) plus, per switch, the
  Java monitor the woken thread reacquires (a wait/notify handoff);
* the web server of §4 is a closed network solved by exact MVA (:mod:`pysim.queueing.closed`): the
  clients' threads, a delay for the network and the clients' own turn, and one serial server station
  (the text finds one, two and four processors alike). The J-Kernel adds to IIS's work per request its
  cross-domain path (LRMIs and copies of the request and the document, priced as above) and the ISAPI
  bridge, which §4 says costs about as much as that path. :class:`WebServer` runs the same network on
  the engine with :class:`pysim.workloads.clients.ClosedLoop`, as a check of the MVA.

Taken as given (INPUTS): Table 1's unit costs (interface call, thread lookup, lock) on both VMs, NT-base,
the Java Web Server's throughput and Eros's IPC time. Calibrated, each on one cell
(CALIBRATION): the stub's residual on the MS-VM LRMI, the fast copy's cost per object on the J-Kernel's
3-argument call (Table 6), IIS's work per request on its throughput (Table 5). Predicted: the Sun-VM
LRMI and its three operations' share (the residual carried over unchanged), both Java double switches,
and the J-Kernel's throughput.

Not modelled (papers/atc98_hawblitzel/paper.yaml): Table 2 and Table 4, whose numbers are lost in the
text, and the L4 and Exokernel cells of Table 6.

Then vs now: :func:`java_microbenchmarks` times the same operations on this machine with the running
JDK (an interface call, ThreadLocal.get(), synchronized, a small capability stub that switches a
thread-local domain and copies its arguments, a wait/notify ping-pong, ObjectOutputStream against a
hand-written deep copy) through the lmbench harness of :mod:`pysim.harness`, with a warm-up;
:func:`then_and_now`, :func:`lrmi_breakdown_now` and :func:`copy_costs_now` set them beside the model.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.engine import Simulation
from pysim.harness import lmbench
from pysim.harness.runners import Measurement, PipeClock, Snippet, build
from pysim.hw import CpuCostModel
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.queueing.closed import Station, mva
from pysim.rng import make_rng
from pysim.sw import Recipe, fit_residual
from pysim.units import MHz, ns, us
from pysim.workloads.clients import ClosedLoop
from pysim.harness.exclusive import one_core

VMS = ("MS-VM", "Sun-VM")
SERVERS = ("IIS", "JWS", "J-Kernel")
#: Table 1's rows that are unit costs, with the operation each prices.
UNIT_ROWS = {"Regular method invocation": "call", "Interface method invocation": "interface_call",
             "Thread info lookup": "thread_lookup", "Acquire/release lock": "lock"}
#: The three operations §3.2 says make up most of an LRMI.
THREE_OPS = ("interface_call", "thread_lookup", "lock")


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds on the 200 MHz Pentium Pro under Windows NT 4.0."""

    clock_hz: float = stated(200 * MHz, "§3.2: 200Mhz Pentium-Pro systems running Windows NT 4.0")
    # Table 1's unit costs, per VM
    ms_interface_call_us: float = given(0.54, "Table 1: interface method invocation, MS-VM")
    sun_interface_call_us: float = given(0.05, "Table 1: interface method invocation, Sun-VM")
    ms_thread_lookup_us: float = given(0.55, "Table 1: thread info lookup, MS-VM")
    sun_thread_lookup_us: float = given(0.29, "Table 1: thread info lookup, Sun-VM")
    ms_lock_us: float = given(0.20, "Table 1: acquire/release lock, MS-VM")
    sun_lock_us: float = given(1.91, "Table 1: acquire/release lock, Sun-VM")
    regular_call_us: float = stated(0.03, "§3.2: a regular method invocation 'takes a few tens of nanoseconds' "
                                          "(Table 1's row is lost): 30 ns on both VMs")
    # the LRMI's mechanism (switches, so a counterfactual is a change of parameters)
    capability_stubs: bool = stated(True, "§3: cross-domain calls go through generated stubs that switch domains "
                                          "and copy non-capability arguments")
    thread_model: str = stated("segments", "§3: stubs give the illusion of switching threads with thread segments "
                                           "instead of switching Java threads", choices=("segments", "switch"))
    locks_per_lrmi: int = stated(2, "§3.2: two lock acquire/release pairs per call", ge=0)
    stub_residual_us: float = calibrated(0.73, "the stub's own work: revocation check, segment bookkeeping, the "
                                               "call of the target; carried unchanged to Sun-VM")
    # thread switches (Table 3)
    kernel_threads: bool = stated(True, "§3: most virtual machines map Java threads directly onto kernel threads")
    nt_double_switch_us: float = given(8.6, "§3.2: the base cost of two context switches between NT kernel "
                                            "threads (NT-base) is 8.6us")
    switch_lock_pairs: int = assumed(1, "per switch, the woken thread reacquires the Java monitor it waited on "
                                        "and releases it when it waits again (a wait/notify handoff)", ge=0)
    user_thread_switch_us: float = assumed(0.5, "a user-level thread switch (save registers, change stacks): "
                                                "about a hundred cycles at 200 MHz")
    # argument copying (Table 6, and the web server's requests)
    arg_count: int = stated(3, "Table 6: method invocation with 3 args", ge=0)
    arg_object_bytes: int = assumed(16, "each argument a small object of a few int fields", ge=0)
    copy_method: str = assumed("fast copy", "§3.2: the fast copy is the J-Kernel's fast path for arguments "
                                            "(serialisation is its default)", choices=("fast copy", "serialization"))
    fastcopy_object_us: float = calibrated(0.356667, "allocation and a call of the generated copy routine, per "
                                                     "object, on MS-VM")
    copy_us_per_byte: float = assumed(0.01, "field and array copying at about 100 MB/s on the 200 MHz Pentium Pro")
    serialise_stream_us: float = assumed(100.0, "JDK 1.1 serialisation: a new ObjectOutputStream and "
                                                "ObjectInputStream per copy, each writing or checking its header "
                                                "and building its handle table")
    serialise_object_us: float = assumed(30.0, "per object: the class descriptor looked up, written and resolved "
                                               "again, fields read and set by reflection")
    serialise_us_per_byte: float = assumed(0.05, "each byte written to a block-data buffer, copied to a byte array "
                                                 "and read back: three copies with bounds checks")
    # Table 6's comparison
    eros_rtt_us: float = given(4.90, "Table 6: Eros round-trip IPC on a P5-120")
    # the web server (§4, Table 5)
    clients: int = stated(8, "§4: eight multithreaded clients repeatedly request the same document", ge=1)
    threads_per_client: int = assumed(4, "'multithreaded' clients: a few threads each; the server saturates with "
                                         "any count above a handful", ge=1)
    client_delay_us: float = assumed(1000.0, "a client's turn between pages: its own work and the LAN round "
                                             "trips of an HTTP/1.0 connection (not stated)")
    document_bytes: int = stated(1000, "Table 5: 1000-byte documents", ge=1)
    iis_request_us: float = calibrated(1317.52, "IIS's work per page at the bottleneck")
    jws_pages_per_s: float = given(96.0, "Table 5: Java Web Server at 1000 bytes")
    bridge_per_jkernel: float = stated(1.0, "§4: the ISAPI bridge accounts for about half of the gap, the "
                                            "J-Kernel for the remainder", ge=0)
    lrmis_per_request: int = assumed(1, "§4: the system servlet forwards each request to the user servlet's "
                                        "domain; the document comes back as the call's result", ge=0)
    request_objects: int = assumed(4, "the request passed by copy: the request object, its URL and a few "
                                      "header strings", ge=0)
    request_bytes: int = assumed(200, "the URL and headers of a short GET", ge=0)


CALIBRATION = (
    Fit("stub_residual_us", "table1", "J-Kernel LRMI / MS-VM", "time_us", (0.0, 2.0)),
    Fit("fastcopy_object_us", "table6", "J-Kernel", "time_us", (0.0, 2.0)),
    Fit("iis_request_us", "table5", "1000 / IIS", "throughput_pages_s", (100.0, 5000.0)),
)
INPUTS = (
    Inputs(("ms_interface_call_us", "sun_interface_call_us", "ms_thread_lookup_us", "sun_thread_lookup_us",
            "ms_lock_us", "sun_lock_us"),
           cells("table1", ["Interface method invocation / MS-VM", "Interface method invocation / Sun-VM",
                            "Thread info lookup / MS-VM", "Thread info lookup / Sun-VM",
                            "Acquire/release lock / MS-VM", "Acquire/release lock / Sun-VM"], ["time_us"]),
           "Table 1's unit costs, taken as given: the model composes them"),
    Inputs((), (("table1", "three operations / MS-VM", "share_of_lrmi_pct"),),
           "the MS-VM share follows by arithmetic from the given unit costs and the LRMI the residual is fitted on"),
    Inputs(("nt_double_switch_us",), cells("table3", ["NT-base"], ["double_switch_us"]),
           "NT-base, the kernel threads' double switch, taken as given"),
    Inputs(("jws_pages_per_s",), cells("table5", ["1000 / JWS"], ["throughput_pages_s"]),
           "the Java Web Server is not built: its throughput is taken as given"),
    Inputs(("eros_rtt_us",), cells("table6", ["Eros"], ["time_us"]), "Eros's IPC time, quoted from the literature"),
)
COUNTERFACTUALS = (
    Counterfactual("share-anything", {"capability_stubs": False},
                   "§2.1's share-anything approach: a cross-domain call is a plain method invocation and "
                   "arguments pass by reference"),
    Counterfactual("thread-switching", {"thread_model": "switch"},
                   "stubs switch Java threads (kernel threads) instead of thread segments"),
    Counterfactual("user-level-threads", {"kernel_threads": False},
                   "§3: 'a fast user-level threads package', so a thread switch costs little"),
)


# --- the mechanism: operation counts priced per VM -----------------------------------------

def cost_model(p: Params, vm: str) -> CpuCostModel:
    """Unit costs of one VM on the 200 MHz Pentium Pro (seconds)."""
    if vm not in VMS:
        raise ValueError(f"vm must be one of {VMS}, got {vm!r}")
    own = {"MS-VM": (p.ms_interface_call_us, p.ms_thread_lookup_us, p.ms_lock_us),
           "Sun-VM": (p.sun_interface_call_us, p.sun_thread_lookup_us, p.sun_lock_us)}[vm]
    switch_us = p.nt_double_switch_us / 2 if p.kernel_threads else p.user_thread_switch_us
    fixed = {"call": p.regular_call_us, "interface_call": own[0], "thread_lookup": own[1], "lock": own[2],
             "stub_residual": p.stub_residual_us, "thread_switch": switch_us,
             "fastcopy_object": p.fastcopy_object_us, "serialise_stream": p.serialise_stream_us,
             "serialise_object": p.serialise_object_us}
    per_byte = {"copy": p.copy_us_per_byte, "serialise": p.serialise_us_per_byte}
    return CpuCostModel(p.clock_hz, {k: v * us for k, v in fixed.items()}, {k: v * us for k, v in per_byte.items()})


def double_switch_recipe(p: Params, *, java: bool = True) -> Recipe:
    """Two thread switches; a Java handoff also reacquires a monitor per switch."""
    return Recipe(ops={"thread_switch": 2, "lock": 2 * p.switch_lock_pairs if java else 0})


def lrmi_recipe(p: Params) -> Recipe:
    """A null cross-domain call: enter the stub, change thread segments (or switch threads), the residual."""
    if not p.capability_stubs:
        return Recipe(ops={"call": 1})
    stub = Recipe(ops={"interface_call": 1, "stub_residual": 1})
    if p.thread_model == "segments":
        return stub + Recipe(ops={"thread_lookup": 1, "lock": p.locks_per_lrmi})
    return stub + double_switch_recipe(p)


def copy_recipe(p: Params, objects: int, nbytes: int, method: str | None = None) -> Recipe:
    """Copying an argument graph of ``objects`` objects and ``nbytes`` bytes across a domain boundary."""
    method = method or p.copy_method
    if method not in ("fast copy", "serialization"):
        raise ValueError(f"method must be 'fast copy' or 'serialization', got {method!r}")
    if objects < 0 or nbytes < 0:
        raise ValueError(f"objects and nbytes must be >= 0, got {objects!r} and {nbytes!r}")
    if not p.capability_stubs or objects == 0:
        return Recipe()  # share anything: passed by reference
    if method == "fast copy":
        return Recipe(ops={"fastcopy_object": objects}, nbytes={"copy": nbytes})
    return Recipe(ops={"serialise_stream": 1, "serialise_object": objects}, nbytes={"serialise": nbytes})


def call_with_args_recipe(p: Params) -> Recipe:
    """Table 6's call: an LRMI whose ``arg_count`` small objects are copied."""
    return lrmi_recipe(p) + copy_recipe(p, p.arg_count, p.arg_count * p.arg_object_bytes)


def jkernel_path_recipe(p: Params) -> Recipe:
    """The J-Kernel's own cross-domain work per page: its LRMIs, the request copied in, the document out."""
    per_call = lrmi_recipe(p) * p.lrmis_per_request
    return (per_call + copy_recipe(p, p.request_objects, p.request_bytes)
            + copy_recipe(p, 1, p.document_bytes))


def _us(recipe: Recipe, cpu: CpuCostModel) -> float:
    return recipe.seconds(cpu) / us


# --- the artifacts --------------------------------------------------------------------------

def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: the null LRMI against its parts, per VM.

    Index: (operation, vm). Rows: Table 1's unit costs (the lock per acquire/release pair), 'three
    operations' (what the LRMI spends in interface calls, thread lookups and locks), 'stub residual' and
    'J-Kernel LRMI'. Columns: time_us, share_of_lrmi_pct, times_regular_call.
    """
    p = params or Params()
    lrmi = lrmi_recipe(p)
    rows = []
    for vm in VMS:
        cpu = cost_model(p, vm)
        parts = lrmi.breakdown(cpu)
        lrmi_us = sum(parts.values()) / us
        times = {row: cpu.fixed_s[op] / us for row, op in UNIT_ROWS.items()}
        times["three operations"] = sum(parts.get(op, 0.0) for op in THREE_OPS) / us
        times["stub residual"] = parts.get("stub_residual", 0.0) / us
        times["J-Kernel LRMI"] = lrmi_us
        for row, t in times.items():
            rows.append({"operation": row, "vm": vm, "time_us": t, "share_of_lrmi_pct": 100 * t / lrmi_us,
                         "times_regular_call": t / p.regular_call_us})
    return pd.DataFrame(rows).set_index(["operation", "vm"])


def table3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 3: a double switch between threads, and what it would add to an LRMI.

    Index: vm ('NT-base', 'MS-VM', 'Sun-VM'). Columns: double_switch_us, java_overhead_us, lrmi_us (the
    design as the parameters have it), lrmi_with_switch_us (stubs that switch Java threads), NaN for NT-base.
    """
    p = params or Params()
    switching = dataclasses.replace(p, thread_model="switch")
    base_cpu = cost_model(p, "MS-VM")  # the kernel's switch is the same under both VMs
    nt = _us(double_switch_recipe(p, java=False), base_cpu)
    rows = [{"vm": "NT-base", "double_switch_us": nt, "java_overhead_us": 0.0, "lrmi_us": math.nan,
             "lrmi_with_switch_us": math.nan}]
    for vm in VMS:
        cpu = cost_model(p, vm)
        java = _us(double_switch_recipe(p), cpu)
        rows.append({"vm": vm, "double_switch_us": java, "java_overhead_us": java - nt,
                     "lrmi_us": _us(lrmi_recipe(p), cpu), "lrmi_with_switch_us": _us(lrmi_recipe(switching), cpu)})
    return pd.DataFrame(rows).set_index("vm")


def table6(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 6: the J-Kernel's 3-argument call (MS-VM) beside Eros's round-trip IPC (quoted).

    The J-Kernel's platform cell is lost; the call is priced on MS-VM, the only one of the two VMs whose
    null LRMI (Table 1) is below it. Index: system. Columns: operation, platform, time_us.
    """
    p = params or Params()
    jk = _us(call_with_args_recipe(p), cost_model(p, "MS-VM"))
    rows = [{"system": "Eros", "operation": "Round-trip IPC", "platform": "P5-120", "time_us": p.eros_rtt_us},
            {"system": "J-Kernel", "operation": f"Method invocation with {p.arg_count} args",
             "platform": "PPro-200, MS-VM", "time_us": jk}]
    return pd.DataFrame(rows).set_index("system")


def server_demands_us(p: Params) -> dict:
    """Work per page at the server's bottleneck (us): IIS, the J-Kernel inside IIS, and JWS (given)."""
    path = _us(jkernel_path_recipe(p), cost_model(p, "MS-VM"))
    return {"IIS": p.iis_request_us, "JWS": 1e6 / p.jws_pages_per_s,
            "J-Kernel": p.iis_request_us + (1 + p.bridge_per_jkernel) * path}


def closed_network(p: Params, demand_us: float) -> list:
    """The stations of §4's closed network: one serial server, the clients' turn as a delay."""
    return [Station("server", demand_us * us), Station("clients", p.client_delay_us * us, "delay")]


def population(p: Params) -> int:
    """Requests outstanding at once: every client thread has one."""
    return p.clients * p.threads_per_client


def table5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 5: pages/s at 1000 bytes, solved by exact MVA.

    Index: (document_bytes, server). Columns: throughput_pages_s, demand_us (work per page at the server),
    loss_vs_iis_pct.
    """
    p = params or Params()
    demands = server_demands_us(p)
    rows = []
    for server in SERVERS:
        x = float(mva(closed_network(p, demands[server]), population(p)).throughput[-1])
        rows.append({"document_bytes": str(p.document_bytes), "server": server, "throughput_pages_s": x,
                     "demand_us": demands[server]})
    out = pd.DataFrame(rows).set_index(["document_bytes", "server"])
    iis = out["throughput_pages_s"].iloc[0]
    out["loss_vs_iis_pct"] = 100 * (1 - out["throughput_pages_s"] / iis)
    return out


# --- the web server on the engine (a check of the MVA) -------------------------------------

class WebServer:
    """One serial server station with exponential work per page, driven by closed-loop clients."""

    def __init__(self, sim: Simulation, demand_s: float, rng):
        self.sim, self.demand_s, self.rng = sim, demand_s, rng
        self.cpu = sim.resource(1)

    def request(self, user):
        """One page: wait for the server, then hold it for the page's work."""
        with self.cpu.request() as turn:
            yield turn
            yield self.sim.timeout(self.rng.exponential(self.demand_s))


def simulate_server(params: Params | None, server: str, *, users: int | None = None, seconds: float = 20.0,
                    rng=0) -> dict:
    """Throughput (pages/s) and mean response (s) of one server on the engine; a fifth of the run warms up."""
    p = params or Params()
    if server not in SERVERS:
        raise ValueError(f"server must be one of {SERVERS}, got {server!r}")
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    service_rng, client_rng = make_rng(rng).spawn(2)
    sim = Simulation()
    web = WebServer(sim, server_demands_us(p)[server] * us, service_rng)
    clients = ClosedLoop(sim, users or population(p), web.request, think_s=p.client_delay_us * us,
                         warmup_s=0.2 * seconds, rng=client_rng)
    sim.run(until=seconds)
    return clients.summary(seconds)


def throughput_vs_clients(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Pages/s against the number of client threads: MVA and the engine, per server.

    Index: (users, server). Columns: mva_pages_s, simulated_pages_s.
    """
    p = params or Params()
    users = (1, 2, 4, 8, 32) if quick else (1, 2, 3, 4, 6, 8, 16, 32)
    seconds = 5.0 if quick else 30.0
    demands = server_demands_us(p)
    rows = []
    for server in SERVERS:
        curve = mva(closed_network(p, demands[server]), max(users)).throughput
        for n in users:
            sim = simulate_server(p, server, users=n, seconds=seconds, rng=rng)
            rows.append({"users": n, "server": server, "mva_pages_s": float(curve[n - 1]),
                         "simulated_pages_s": sim["throughput_per_s"]})
    return pd.DataFrame(rows).set_index(["users", "server"])


def argument_copying(params: Params | None = None, shapes=((1, 100), (1, 1000), (10, 100), (1, 10000))
                     ) -> pd.DataFrame:
    """The model's Table 4 (whose numbers are lost): the fast copy against serialisation, per shape, MS-VM.

    Index: (objects, bytes). Columns: fast_copy_us, serialization_us, ratio. The serialisation costs are
    assumed, not fitted: read it as what the mechanism implies, not as a result.
    """
    p = params or Params()
    cpu = cost_model(p, "MS-VM")
    rows = []
    for objects, nbytes in shapes:
        fast = _us(copy_recipe(p, objects, objects * nbytes, "fast copy"), cpu)
        serial = _us(copy_recipe(p, objects, objects * nbytes, "serialization"), cpu)
        rows.append({"objects": objects, "bytes": objects * nbytes, "fast_copy_us": fast,
                     "serialization_us": serial, "ratio": serial / fast if fast > 0 else math.nan})
    return pd.DataFrame(rows).set_index(["objects", "bytes"])


# --- then vs now: the same operations on this machine's JVM -----------------------------------

_CALLS = r"""
    static abstract class Base { abstract int f(int x); }
    static final class A extends Base { int f(int x) { return x + 1; } }
    static final class B extends Base { int f(int x) { return x + 2; } }
    static final class C extends Base { int f(int x) { return x + 3; } }
    static final class D extends Base { int f(int x) { return x + 4; } }
    interface Fn { int f(int x); }
    static final class FA implements Fn { public int f(int x) { return x + 1; } }
    static final class FB implements Fn { public int f(int x) { return x + 2; } }
    static final class FC implements Fn { public int f(int x) { return x + 3; } }
    static final class FD implements Fn { public int f(int x) { return x + 4; } }
    static Base mono = new A();
    static Base[] poly = {new A(), new B(), new C(), new D()};
    static Fn fmono = new FA();
    static Fn[] fpoly = {new FA(), new FB(), new FC(), new FD()};
    static final class Info { int x; }
    static final ThreadLocal<Info> TL = ThreadLocal.withInitial(Info::new);
    static final Object[] LOCKS = {new Object(), new Object()};
"""

# A capability in the J-Kernel's manner: a stub that checks revocation, looks up the thread's information,
# switches its domain under a lock, copies non-capability arguments, calls the target, and switches back.
_STUBS = r"""
    interface Remote { int nullCall(); int call3(Arg a, Arg b, Arg c); }
    static final class Arg {
        int x, y; byte[] data;
        Arg(int x, int y, int n) { this.x = x; this.y = y; data = new byte[n]; }
        Arg(Arg o) { x = o.x; y = o.y; data = o.data.clone(); }
    }
    static final class Domain { final String name; Domain(String name) { this.name = name; } }
    static final class ThreadInfo { Domain domain = new Domain("caller"); int depth; }
    static final ThreadLocal<ThreadInfo> INFO = ThreadLocal.withInitial(ThreadInfo::new);
    static final class RevokedException extends RuntimeException { }
    static final class Target implements Remote {
        int calls; Arg a, b, c;
        public int nullCall() { return ++calls; }
        public int call3(Arg a, Arg b, Arg c) { this.a = a; this.b = b; this.c = c; return a.x + b.y + c.data.length; }
    }
    static class Stub implements Remote {
        private Remote target; private final Domain callee;
        Stub(Remote target, Domain callee) { this.target = target; this.callee = callee; }
        void revoke() { target = null; }
        private Domain enter(ThreadInfo ti) {
            synchronized (ti) { Domain d = ti.domain; ti.domain = callee; ti.depth++; return d; }
        }
        private void leave(ThreadInfo ti, Domain back) { synchronized (ti) { ti.domain = back; ti.depth--; } }
        public int nullCall() {
            Remote t = target; if (t == null) throw new RevokedException();
            ThreadInfo ti = INFO.get(); Domain back = enter(ti);
            try { return t.nullCall(); } finally { leave(ti, back); }
        }
        public int call3(Arg a, Arg b, Arg c) {
            Remote t = target; if (t == null) throw new RevokedException();
            Arg a2 = new Arg(a), b2 = new Arg(b), c2 = new Arg(c);
            ThreadInfo ti = INFO.get(); Domain back = enter(ti);
            try { return t.call3(a2, b2, c2); } finally { leave(ti, back); }
        }
    }
    static final class Stub1 extends Stub { Stub1(Remote t, Domain d) { super(t, d); } }
    static final class Stub2 extends Stub { Stub2(Remote t, Domain d) { super(t, d); } }
    static final class Stub3 extends Stub { Stub3(Remote t, Domain d) { super(t, d); } }
    static final class Stub4 extends Stub { Stub4(Remote t, Domain d) { super(t, d); } }
    static Remote cap = new Stub1(new Target(), new Domain("callee"));
    static Remote[] caps = {new Stub1(new Target(), new Domain("a")), new Stub2(new Target(), new Domain("b")),
                            new Stub3(new Target(), new Domain("c")), new Stub4(new Target(), new Domain("d"))};
    static Arg A1 = new Arg(1, 2, 4), A2 = new Arg(3, 4, 4), A3 = new Arg(5, 6, 4);
"""

_COPIES = r"""
    static final class Node implements Serializable {
        byte[] data; Node next;
        Node(int bytes, Node next) { data = new byte[bytes]; this.next = next; }
        Node(Node o) { data = o.data.clone(); next = o.next == null ? null : new Node(o.next); }
    }
    static Node chain(int count, int bytes) {
        Node n = null; for (int k = 0; k < count; k++) n = new Node(bytes, n); return n;
    }
    static Node ARG, COPY;
    static Object serialCopy(Object o) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            ObjectOutputStream out = new ObjectOutputStream(bytes);
            out.writeObject(o); out.flush();
            return new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray())).readObject();
        } catch (IOException | ClassNotFoundException e) { throw new RuntimeException(e); }
    }
"""

_THREADS = r"""
    static final class PingPong { int turn; }
    static final PingPong PP = new PingPong();
    static void partner() {
        Thread t = new Thread(() -> { synchronized (PP) { while (true) {
            while (PP.turn != 1) { try { PP.wait(); } catch (InterruptedException e) { return; } }
            PP.turn = 0; PP.notify(); } } });
        t.setDaemon(true); t.start();
    }
    static void roundTrip() {
        synchronized (PP) { PP.turn = 1; PP.notify();
            while (PP.turn != 0) {
                try { PP.wait(); } catch (InterruptedException e) { throw new RuntimeException(e); } } }
    }
"""


@dataclass(frozen=True)
class JavaBenchmark:
    """One operation to time on this machine's JVM: its loop body, declarations and warm-up."""

    name: str
    decls: str
    body: str
    setup: str = ""
    warmup_s: float = 0.2     # serialisation's JIT settles only after seconds
    quick: bool = True        # also run in quick mode


def _copy_benchmarks(objects: int, nbytes: int, quick: bool) -> tuple:
    setup = f"ARG = chain({objects}, {nbytes});"
    shape = f"{objects} x {nbytes} B"
    return (JavaBenchmark(f"fast copy, {shape}", _COPIES, "COPY = new Node(ARG); sink += COPY.data.length;",
                          setup, 0.3, quick),
            JavaBenchmark(f"serialization, {shape}", _COPIES, "sink += ((Node) serialCopy(ARG)).data.length;",
                          setup, 1.5, quick))


#: What :func:`java_microbenchmarks` times. A call site that sees four receiver classes is megamorphic:
#: HotSpot dispatches through the vtable or itable instead of inlining, as the 1998 VMs always did. The
#: receiver changes every 16 calls, so the branch predictor follows it, as it would a call site that
#: sees one class at a time.
JAVA_BENCHMARKS = (
    JavaBenchmark("regular call, inlined", _CALLS, "sink += mono.f((int) i);", quick=False),
    JavaBenchmark("regular call, megamorphic", _CALLS, "sink += poly[(int) ((i >> 4) & 3)].f((int) i);"),
    JavaBenchmark("interface call, inlined", _CALLS, "sink += fmono.f((int) i);", quick=False),
    JavaBenchmark("interface call, megamorphic", _CALLS, "sink += fpoly[(int) ((i >> 4) & 3)].f((int) i);"),
    JavaBenchmark("ThreadLocal.get()", _CALLS, "sink += TL.get().x;"),
    # two lock objects in turn, so the JIT cannot merge one iteration's lock with the next
    JavaBenchmark("synchronized", _CALLS, "synchronized (LOCKS[(int) (i & 1)]) { sink++; }"),
    JavaBenchmark("null LRMI, inlined stub", _STUBS, "sink += cap.nullCall();", quick=False),
    JavaBenchmark("null LRMI, megamorphic", _STUBS, "sink += caps[(int) ((i >> 4) & 3)].nullCall();"),
    # the callee keeps its arguments, as a domain would, so the JIT cannot drop the copies
    JavaBenchmark("LRMI with 3 args", _STUBS, "sink += caps[(int) ((i >> 4) & 3)].call3(A1, A2, A3);"),
    JavaBenchmark("double thread switch", _THREADS, "roundTrip();", "partner();", 0.3),
    *_copy_benchmarks(1, 100, False),
    *_copy_benchmarks(1, 1000, True),
    *_copy_benchmarks(10, 100, True),
    *_copy_benchmarks(1, 10000, False),
)


def warm_up(clock, n: int, warmup_s: float) -> float:
    """Run the sized loop for at least ``warmup_s`` and on while it still gets faster (the JIT is still
    compiling: on a busy machine its threads lag), at most four times as long. Returns the seconds run."""
    spent, best = 0.0, math.inf
    while spent < 4 * warmup_s:
        t = clock.run(n)
        spent += t
        improved = t < 0.95 * best
        best = min(best, t)
        if spent >= warmup_s and not improved:
            break
    return spent


@one_core()
def time_java(bench: JavaBenchmark, *, enough_s: float, tries: int, warmup_s: float | None = None) -> Measurement:
    """Time one benchmark with the lmbench harness after a warm-up, empty loop subtracted (minimum of the tries).

    As :func:`pysim.harness.measure`, with a warm-up first: at least ``warmup_s`` seconds of the sized loop,
    longer while it still speeds up (and a few runs of the empty loop), so the JIT has compiled what the
    loop runs before any try counts. A missing JDK, a
    build that fails or a run that hangs gives a Measurement with ``available=False`` and the reason.
    """
    if not enough_s > 0:
        raise ValueError(f"enough_s must be > 0, got {enough_s!r}")
    warm = bench.warmup_s if warmup_s is None else warmup_s
    snippet = Snippet("java", bench.body, bench.setup, bench.decls)
    try:
        command, why = build(snippet)
    except Exception as e:  # a javac that hangs or cannot start is reported, not raised
        return Measurement(bench.name, "java", False, reason=f"{type(e).__name__}: {e}")
    if command is None:
        return Measurement(bench.name, "java", False, reason=why)
    try:
        with PipeClock(command, timeout_s=60.0) as clock:
            n = lmbench.auto_size(clock, enough_s)
            warm_up(clock, n, warm)
            empty = clock.empty()
            for _ in range(5):
                empty.run(n)
            overhead = max(0.0, min(empty.run(n) / n for _ in range(3)))
            # the minimum of the tries: on a shared machine interference only ever adds time
            result = lmbench.bench(clock, enough_s, tries=tries, statistic="min", overhead_s=overhead)
    except (TimeoutError, RuntimeError, OSError, ValueError) as e:
        return Measurement(bench.name, "java", False, reason=f"{type(e).__name__}: {e}")
    per = sorted(result.per_iteration_s)
    return Measurement(bench.name, "java", True, result.value_s, per[0], per[len(per) // 2], result.iterations,
                       tries, overhead, enough_s)


def java_microbenchmarks(quick: bool = False) -> pd.DataFrame:
    """Time :data:`JAVA_BENCHMARKS` on this machine (a subset, shorter, in quick mode).

    Index: benchmark. Columns: now_ns (the minimum of the tries), median_ns, iterations, available, reason.
    """
    rows = []
    for bench in JAVA_BENCHMARKS:
        if quick and not bench.quick:
            continue
        m = (time_java(bench, enough_s=0.01, tries=3, warmup_s=min(bench.warmup_s, 0.3)) if quick
             else time_java(bench, enough_s=0.02, tries=5))
        rows.append({"benchmark": bench.name, "now_ns": m.per_op_s / ns, "median_ns": m.median_s / ns,
                     "iterations": m.iterations, "available": m.available, "reason": m.reason})
    return pd.DataFrame(rows).set_index("benchmark")


def _now_us(measured: pd.DataFrame, name: str) -> float:
    if name not in measured.index or not bool(measured.loc[name, "available"]):
        return math.nan
    return float(measured.loc[name, "now_ns"]) * ns / us


#: then_and_now's rows: (row, the benchmark measured now, what the model prices for 1998).
_THEN_NOW = (
    ("Regular method invocation", "regular call, megamorphic", "call"),
    ("Interface method invocation", "interface call, megamorphic", "interface_call"),
    ("Thread info lookup", "ThreadLocal.get()", "thread_lookup"),
    ("Acquire/release lock", "synchronized", "lock"),
    ("J-Kernel LRMI", "null LRMI, megamorphic", "lrmi"),
    ("Method invocation with 3 args", "LRMI with 3 args", "args"),
    ("Double thread switch", "double thread switch", "switch"),
)


def _then_us(p: Params, vm: str, what: str) -> float:
    cpu = cost_model(p, vm)
    if what == "lrmi":
        return _us(lrmi_recipe(p), cpu)
    if what == "args":
        return _us(call_with_args_recipe(p), cpu)
    if what == "switch":
        return _us(double_switch_recipe(p), cpu)
    return cpu.fixed_s[what] / us


def then_and_now(measured: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """Table 1's operations (and Tables 3 and 6's) as the model prices them in 1998, beside this machine.

    ``measured`` is :func:`java_microbenchmarks`' frame. Index: operation. Columns: then_ms_vm_us,
    then_sun_vm_us, now_us (NaN where not measured), ms_vm_over_now (how many times faster now).
    """
    p = params or Params()
    rows = []
    for row, bench, what in _THEN_NOW:
        now = _now_us(measured, bench)
        ms = _then_us(p, "MS-VM", what)
        rows.append({"operation": row, "then_ms_vm_us": ms, "then_sun_vm_us": _then_us(p, "Sun-VM", what),
                     "now_us": now, "ms_vm_over_now": ms / now if now > 0 else math.nan})
    return pd.DataFrame(rows).set_index("operation")


def lrmi_breakdown_now(measured: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """The LRMI as interface call + thread lookup + two locks + a named residual, 1998 against now.

    The residual now comes from :func:`pysim.sw.fit_residual` on the measured stub; where the parts
    measured alone cost more than the whole stub (a JIT that inlines and overlaps them), the residual is
    NaN and ``note`` says so. Index: when. Columns: three_ops_us, residual_us, lrmi_us, three_ops_share_pct,
    lrmi_over_regular_call, note.
    """
    p = params or Params()
    rows = []
    t1 = table1(p)
    for vm in VMS:
        rows.append({"when": f"1998, {vm}", "three_ops_us": t1.loc[("three operations", vm), "time_us"],
                     "residual_us": t1.loc[("stub residual", vm), "time_us"],
                     "lrmi_us": t1.loc[("J-Kernel LRMI", vm), "time_us"],
                     "regular_us": t1.loc[("Regular method invocation", vm), "time_us"], "note": "model"})
    parts = {op: _now_us(measured, bench) for _, bench, op in _THEN_NOW[:4]}
    whole = _now_us(measured, "null LRMI, megamorphic")
    row = {"when": "now", "lrmi_us": whole, "regular_us": parts["call"], "residual_us": math.nan, "note": ""}
    recipe = Recipe(ops={"interface_call": 1, "thread_lookup": 1, "lock": p.locks_per_lrmi})
    if all(v > 0 for v in (*parts.values(), whole)):
        cpu = CpuCostModel(p.clock_hz, {op: v * us for op, v in parts.items()})  # costs in seconds; clock unused
        row["three_ops_us"] = _us(recipe, cpu)
        try:
            _, priced = fit_residual(recipe, cpu, whole * us, "stub_residual")
            row["residual_us"] = priced.fixed_s["stub_residual"] / us
            row["note"] = "measured"
        except ValueError:
            row["note"] = "the parts measured alone cost more than the whole stub: the JIT overlaps them"
    else:
        row.update(three_ops_us=math.nan, note="not available: the JVM runs failed or were not made")
    rows.append(row)
    out = pd.DataFrame(rows).set_index("when")
    out["three_ops_share_pct"] = 100 * out["three_ops_us"] / out["lrmi_us"]
    out["lrmi_over_regular_call"] = out["lrmi_us"] / out["regular_us"]
    return out[["three_ops_us", "residual_us", "lrmi_us", "three_ops_share_pct", "lrmi_over_regular_call", "note"]]


def fit_unit_costs(recipes, measured_s, ops) -> dict:
    """Least-squares unit costs (seconds) of ``ops`` from recipes and their measured times.

    Each recipe counts the operations (``ops`` names a fixed operation or a per-byte one); returns
    ``{op: seconds}``. Needs at least as many recipes as operations.
    """
    recipes, measured = list(recipes), np.asarray(measured_s, dtype=float)
    if len(recipes) != len(measured) or len(recipes) < len(ops):
        raise ValueError(f"need as many measurements as recipes, and at least {len(ops)}; got "
                         f"{len(recipes)} recipes and {len(measured)} measurements")
    a = np.array([[r.ops.get(op, 0.0) + r.nbytes.get(op, 0.0) for op in ops] for r in recipes])
    solution, *_ = np.linalg.lstsq(a, measured, rcond=None)
    return dict(zip(ops, solution.tolist(), strict=True))


def _shape(name: str) -> tuple:
    objects, nbytes = name.split(", ")[1].removesuffix(" B").split(" x ")
    return int(objects), int(nbytes)


def copy_costs_now(measured: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """Argument copying now: each shape by serialisation and by deep copy, their ratio, and the model's
    1998 fast copy on MS-VM for the same shape. Index: (objects, bytes). Columns: then_fast_copy_us,
    now_fast_copy_us, now_serialization_us, now_ratio."""
    p = params or Params()
    cpu = cost_model(p, "MS-VM")
    rows = []
    for name in measured.index:
        if not name.startswith("fast copy, "):
            continue
        objects, nbytes = _shape(name)
        fast = _now_us(measured, name)
        serial = _now_us(measured, name.replace("fast copy", "serialization"))
        rows.append({"objects": objects, "bytes": objects * nbytes,
                     "then_fast_copy_us": _us(copy_recipe(p, objects, objects * nbytes, "fast copy"), cpu),
                     "now_fast_copy_us": fast, "now_serialization_us": serial,
                     "now_ratio": serial / fast if fast > 0 else math.nan})
    return pd.DataFrame(rows, columns=["objects", "bytes", "then_fast_copy_us", "now_fast_copy_us",
                                       "now_serialization_us", "now_ratio"]).set_index(["objects", "bytes"])


def copy_unit_costs_now(measured: pd.DataFrame, params: Params | None = None) -> pd.DataFrame:
    """Unit costs (ns) fitted by least squares to the measured shapes, for both ways of copying: per object
    and per byte, and for serialisation per stream too. NaN unless there are more shapes than costs.

    Index: method. Columns: per_stream_ns, per_object_ns, per_byte_ns.
    """
    p = params or Params()
    shapes = copy_costs_now(measured, p).dropna()
    ways = (("fast copy", "now_fast_copy_us", "fast copy"), ("serialization", "now_serialization_us", "serialization"))
    names = {"serialise_stream": "per_stream_ns", "fastcopy_object": "per_object_ns",
             "serialise_object": "per_object_ns", "copy": "per_byte_ns", "serialise": "per_byte_ns"}
    rows = []
    for method, column, how in ways:
        recipes = [copy_recipe(p, o, b, how) for o, b in shapes.index]
        ops = tuple(dict.fromkeys(op for r in recipes for op in (*r.ops, *r.nbytes))) if recipes else ()
        row = {"method": method, "per_stream_ns": math.nan, "per_object_ns": math.nan, "per_byte_ns": math.nan}
        if ops and len(recipes) > len(ops):
            fitted = fit_unit_costs(recipes, shapes[column].to_numpy() * us, ops)
            row.update({names[op]: v / ns for op, v in fitted.items()})
        rows.append(row)
    return pd.DataFrame(rows).set_index("method")


def ratios_then_and_now(measured: pd.DataFrame, process_rtt_us: float = math.nan,
                        params: Params | None = None) -> pd.DataFrame:
    """The paper's statements as ratios: 1998 (the model, per VM) against this machine.

    ``process_rtt_us`` is a measured round trip between two processes (a kernel IPC), set against the
    3-argument LRMI as Table 6 sets Eros's against the J-Kernel's. Index: statement. Columns:
    then_ms_vm, then_sun_vm, now, paper (the paper's words).
    """
    p = params or Params()
    t1, t3, t6 = table1(p), table3(p), table6(p)
    lrmi = {vm: t1.loc[("J-Kernel LRMI", vm), "time_us"] for vm in VMS}
    now = {name: _now_us(measured, name) for name in measured.index}
    breakdown = lrmi_breakdown_now(measured, p).loc["now"]
    shapes = copy_costs_now(measured, p).dropna()
    largest = shapes.iloc[int(np.argmax(shapes.index.get_level_values("bytes")))] if len(shapes) else None
    jk3 = t6.loc["J-Kernel", "time_us"]
    rows = [
        ("LRMI / regular call", t1.loc[("J-Kernel LRMI", "MS-VM"), "times_regular_call"],
         t1.loc[("J-Kernel LRMI", "Sun-VM"), "times_regular_call"], breakdown["lrmi_over_regular_call"],
         "60x to 180x (§3.2); now a call the JIT cannot inline"),
        ("LRMI / regular call, inlined", t1.loc[("J-Kernel LRMI", "MS-VM"), "times_regular_call"],
         t1.loc[("J-Kernel LRMI", "Sun-VM"), "times_regular_call"],
         breakdown["lrmi_us"] / now.get("regular call, inlined", math.nan),
         "60x to 180x (§3.2); now a call the JIT inlines (not timed in quick mode)"),
        ("interface call + thread lookup + 2 locks, % of LRMI", t1.loc[("three operations", "MS-VM"),
         "share_of_lrmi_pct"], t1.loc[("three operations", "Sun-VM"), "share_of_lrmi_pct"],
         breakdown["three_ops_share_pct"], "about 70% (MS-VM) and 80% (Sun-VM) (§3.2)"),
        ("double thread switch / LRMI", t3.loc["MS-VM", "double_switch_us"] / lrmi["MS-VM"],
         t3.loc["Sun-VM", "double_switch_us"] / lrmi["Sun-VM"],
         now.get("double thread switch", math.nan) / breakdown["lrmi_us"], "a significant cost (§3.2)"),
        ("serialization / fast copy, largest argument", math.nan, math.nan,
         largest["now_ratio"] if largest is not None else math.nan,
         "more than an order of magnitude for large arguments (§3.2; Table 4 lost)"),
        ("kernel IPC round trip / 3-argument LRMI", p.eros_rtt_us / jk3, math.nan,
         process_rtt_us / now.get("LRMI with 3 args", math.nan),
         "comparable with L4, Exokernel and Eros (§5, Table 6)"),
    ]
    return pd.DataFrame(rows, columns=["statement", "then_ms_vm", "then_sun_vm", "now", "paper"]).set_index("statement")
