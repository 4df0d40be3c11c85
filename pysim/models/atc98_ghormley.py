"""SLIC: an extensibility system for commodity operating systems (Ghormley, Petrou, Rodrigues, Anderson;
USENIX ATC 1998).

Regenerates Table 1 (getpid(), sigprocmask() and kill() on an unmodified
kernel, with SLIC's dispatchers, with one null extension and with a
user-level extension), Figure 5 (getpid() against the number of extensions,
with §3.3's per-extension costs: the slope for each dispatcher and for
extensions that also inspect return values), Table 2 (the system calls each
extension catches in the three benchmarks) and Table 3 (the benchmarks'
elapsed times under each extension). Figures 1-4 are diagrams.

First principles: an event pays its base cost plus what SLIC's path adds,
counted as operations (:class:`pysim.sw.Recipe`) priced on one
:class:`pysim.hw.CpuCostModel` of the 167 MHz UltraSPARC. The layers are
:class:`pysim.sw.syscalls.Interposer` objects over a
:class:`pysim.sw.syscalls.SyscallMix`:

* the system-call dispatcher replaces every sysent entry, so every call pays
  its interception, and every copyin/copyout checks the thread's list of
  extension buffers (§3.2.2); the signal dispatcher's binary patches catch a
  kill() twice, once in sigaddqa() and again in sigtoproc() (§3.3);
* a call that an extension registered for (Slic_RegisterHandler filters by
  call and process) pays the dispatch (shadow structure, filters, argument
  block) once, then each extension in the chain (a procedure call through a
  pointer); an extension that inspects return values nests, and holds two
  more SPARC register windows, each spilled and filled (§3.3);
* a user-level extension is reached through the in-kernel Bounce extension:
  a context switch to the extension's process, its system call back, and a
  context switch back (§3.1.2);
* in the benchmarks, each extension's handler runs on the calls it catches:
  Encrypt's (copy and XOR the buffers) and REE's (check a path or a right).

So a benchmark's added time is calls caught x cost per call (Table 2 into
Table 3), and every unit cost but Encrypt's handler comes from the
microbenchmarks.

Calibrated, each on one published cell (see CALIBRATION): the dispatcher's
interception, the copy check and the signal dispatcher's interception (the
"SLIC, no extensions" row), the dispatch (getpid() with one extension), the
extension call (Figure 5's slope), the context switch (getpid() with a
user-level extension) and Encrypt's work per caught call (gcc under Encrypt).
Taken as given (see INPUTS): the unmodified times, every standard deviation,
the benchmarks' baselines and Table 2's counts. Predicted: sigprocmask() and
kill() with one extension and at user level, the signal dispatcher's and the
return-inspecting slopes, and every other Table 3 time.

Not reproduced: Table 2's process counts and total calls, lost in the text (each benchmark's total is a
caught count over its printed share); Figures 1-4 are diagrams.

Then vs now (:func:`measure_chain`, :func:`measure_bounce`,
:func:`measure_preload_build`, :func:`then_and_now`): the same three paths
measured on this machine with real C programs, a chain of function-pointer
extensions around getpid(), a seccomp user-notification supervisor as the
bounce, and an LD_PRELOAD extension on a real build.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pysim.harness import measure
from pysim.harness.runners import PipeClock, Snippet, cache_dir
from pysim.harness.runners import build as build_program
from pysim.hw import CpuCostModel
from pysim.models import Counterfactual, Fit, Inputs, cells
from pysim.params import ModelParams, assumed, calibrated, given, stated
from pysim.sw import Recipe, Work, fit_residual
from pysim.sw.syscalls import Interposer, SyscallMix, interposed, slowdown
from pysim.units import us
from pysim.harness.exclusive import exclusive, one_core

CONFIGURATIONS = ("Unmodified system", "SLIC, no extensions", "SLIC, 1 null extension", "SLIC user-level extension")
EVENTS = ("getpid", "sigprocmask", "kill")
BENCHMARKS = ("MAB", "TeX", "gcc")
EXTENSIONS = ("CERT", "Encrypt", "REE")
SETUPS = ("Baseline", "SLIC, no extensions", "CERT", "Encrypt", "REE", "CERT + Encrypt + REE")
MAX_EXTENSIONS = 20  # Figure 5's x axis


@dataclass(frozen=True)
class Params(ModelParams):
    """Inputs. Times in microseconds (Table 1) and seconds (Table 3) on the 167 MHz UltraSPARC, Solaris 2.5.1."""

    clock_hz: float = stated(167e6, "§3.3: a 167MHz UltraSPARC running Solaris 2.5.1")
    # Table 1's unmodified kernel, and every standard deviation the tables print
    base_us: tuple = given((("getpid", 2.82), ("sigprocmask", 3.75), ("kill", 103.52)),
                           "Table 1, Unmodified system: getpid() 2.82, sigprocmask() 3.75, kill() 103.52 us")
    table1_sd_us: tuple = given((
        ("Unmodified system", "getpid", 0.05), ("Unmodified system", "sigprocmask", 0.20),
        ("Unmodified system", "kill", 1.56), ("SLIC, no extensions", "getpid", 0.03),
        ("SLIC, no extensions", "sigprocmask", 0.10), ("SLIC, no extensions", "kill", 1.33),
        ("SLIC, 1 null extension", "getpid", 0.07), ("SLIC, 1 null extension", "sigprocmask", 0.09),
        ("SLIC, 1 null extension", "kill", 1.49), ("SLIC user-level extension", "getpid", 0.81),
        ("SLIC user-level extension", "sigprocmask", 0.88), ("SLIC user-level extension", "kill", 2.00)),
        "Table 1: the standard deviation across runs of every cell")
    # what each event makes SLIC do (§3.3)
    copies: tuple = stated((("getpid", 0), ("sigprocmask", 1), ("kill", 0)),
                           "§3.3: getpid() involves no buffers; sigprocmask() a memory copy of 16 bytes")
    signal_interceptions: int = stated(2, "§3.3: paths through sigaddq() or sigaddqa() experience the "
                                          "interposition overhead twice (they call sigtoproc())", ge=1)
    signal_extension_passes: int = assumed(1, "the dispatcher hands a signal to its extensions once, however "
                                              "many patched routines it passes", ge=1)
    in_kernel_extensions: bool = stated(True, "§3.1.2: extensions loaded into the kernel are invoked from the "
                                              "dispatcher with a procedure call")
    filter_by_call: bool = stated(True, "§3.1.1: extensions register handlers for the calls (and processes) "
                                        "they want; the dispatcher filters the rest")
    register_windows: bool = stated(True, "§3.3: SPARC register windows; inspecting return values holds two "
                                          "more of them per extension")
    windows_per_returning_extension: int = stated(2, "§3.3: one consumed by the extension awaiting the return "
                                                     "value and one by the dispatcher which invoked it", ge=0)
    bounce_context_switches: int = stated(2, "§3.1.2: invoking a user-level extension requires context switches "
                                             "(to the extension's process and back)", ge=0)
    # unit costs
    hook_cycles: float = calibrated(56.78, "sysent interception: the dispatcher's entry, a test for "
                                           "registered handlers, the call of the original routine", ge=0)
    copy_check_cycles: float = calibrated(16.7, "interposed copyin/copyout: the check of the thread's valid "
                                                "list of extension buffers", ge=0)
    signal_hook_cycles: float = calibrated(437.54, "one binary-patched signal routine: saved instructions, "
                                                   "shadow lookups of thread, process and target", ge=0)
    dispatch_cycles: float = calibrated(170.674, "a call some extension registered for: shadow structure, "
                                                 "pid and call filters, the argument block", ge=0)
    extension_cycles: float = calibrated(33.066, "one null extension that inspects arguments: a call through "
                                                 "the chain's pointer", ge=0)
    context_switch_us: float = calibrated(27.315, "a switch between the application and the extension's "
                                                  "process", ge=0)
    call_cycles: float = assumed(5.0, "a plain SPARC call and return (call, save, ret, restore and their "
                                      "delay slots) with no spill: about five cycles")
    call_with_spill_us: float = stated(0.8, "§3.3: the average cost of a standard procedure call which spills "
                                            "a register window on this platform is approximately 0.8 us")
    # the benchmarks (§4.4, Tables 2 and 3)
    baseline_s: tuple = given((("MAB", 15.70), ("TeX", 14.50), ("gcc", 160.30)),
                              "Table 3, Baseline: MAB 15.70 s (reconstructed), TeX 14.50 s, gcc 160.30 s")
    table3_sd_s: tuple = given((
        ("MAB", "Baseline", 0.10), ("MAB", "SLIC, no extensions", 0.16), ("MAB", "CERT", 0.30),
        ("MAB", "Encrypt", 0.85), ("MAB", "REE", 0.33), ("MAB", "CERT + Encrypt + REE", 0.09),
        ("TeX", "Baseline", 0.30), ("TeX", "SLIC, no extensions", 0.23), ("TeX", "CERT", 0.39),
        ("TeX", "Encrypt", 0.53), ("TeX", "REE", 0.73), ("TeX", "CERT + Encrypt + REE", 0.37),
        ("gcc", "Baseline", 1.99), ("gcc", "SLIC, no extensions", 0.34), ("gcc", "CERT", 0.55),
        ("gcc", "Encrypt", 0.53), ("gcc", "REE", 1.63), ("gcc", "CERT + Encrypt + REE", 3.43)),
        "Table 3: the standard deviation across runs of every cell")
    caught: tuple = given((("MAB", "Encrypt", 2732), ("MAB", "REE", 9246), ("TeX", "Encrypt", 1635),
                           ("TeX", "REE", 703), ("gcc", "Encrypt", 11031), ("gcc", "REE", 47888)),
                          "Table 2: system calls caught by Encrypt and REE (CERT catches none, §4.4)")
    caught_pct: tuple = given((("MAB", "REE", 23), ("TeX", "Encrypt", 60), ("gcc", "REE", 34)),
                              "Table 2: the per cent caught, for each benchmark the largest share printed")
    copies_per_call: float = assumed(1.0, "a benchmark's system call moves one buffer or path across the "
                                          "boundary on average (read, write, open, stat)", ge=0)
    encrypt_call_us: float = calibrated(718.4, "Encrypt's handler per caught call: the extra copy and the "
                                               "byte-wise XOR of the buffer, the pid/fd bookkeeping", ge=0)
    ree_call_us: float = assumed(10.0, "REE's check of a caught call: copying a path of some tens of bytes in, "
                                       "matching it against the policy's subtrees, a permission test; a couple "
                                       "of thousand instructions at 167 MHz (denied-list calls cost less)", ge=0)

    def __post_init__(self):
        super().__post_init__()
        if tuple(name for name, _ in self.base_us) != EVENTS:
            raise ValueError(f"base_us must give a time for each of {EVENTS}, got {self.base_us!r}")
        if tuple(b for b, _ in self.baseline_s) != BENCHMARKS:
            raise ValueError(f"baseline_s must give a time for each of {BENCHMARKS}, got {self.baseline_s!r}")
        if any(n < 0 for *_, n in self.caught) or any(not 0 < pct <= 100 for *_, pct in self.caught_pct):
            raise ValueError(f"caught must be counts >= 0 and caught_pct in (0, 100], got {self.caught!r}, "
                             f"{self.caught_pct!r}")
        shared = {(b, x) for b, x, _ in self.caught}
        if sorted(b for b, x, _ in self.caught_pct if (b, x) in shared) != sorted(BENCHMARKS):
            raise ValueError(f"caught_pct must give, for each of {BENCHMARKS}, the share of one count in caught, "
                             f"got {self.caught_pct!r}")


CALIBRATION = (
    Fit("hook_cycles", "table1", "SLIC, no extensions / getpid", "time_us", (0.0, 500.0)),
    Fit("copy_check_cycles", "table1", "SLIC, no extensions / sigprocmask", "time_us", (0.0, 500.0)),
    Fit("signal_hook_cycles", "table1", "SLIC, no extensions / kill", "time_us", (0.0, 5000.0)),
    Fit("dispatch_cycles", "table1", "SLIC, 1 null extension / getpid", "time_us", (0.0, 1000.0)),
    Fit("extension_cycles", "figure5", "slope", "getpid_us", (0.0, 500.0)),
    Fit("context_switch_us", "table1", "SLIC user-level extension / getpid", "time_us", (0.0, 200.0)),
    Fit("encrypt_call_us", "table3", "gcc / Encrypt", "time_s", (0.0, 5000.0)),
)
INPUTS = (
    Inputs(("base_us",), cells("table1", [f"Unmodified system / {e}" for e in EVENTS], ["time_us"]),
           "the unmodified kernel's times, taken as given"),
    Inputs(("table1_sd_us",), cells("table1", [f"{c} / {e}" for c in CONFIGURATIONS for e in EVENTS], ["sd_us"]),
           "Table 1's standard deviations, taken as given (the spread of the runs)"),
    Inputs(("baseline_s",), cells("table3", [f"{b} / Baseline" for b in BENCHMARKS], ["time_s"]),
           "the benchmarks' baseline times, taken as given"),
    Inputs(("table3_sd_s",), cells("table3", [f"{b} / {s}" for b in BENCHMARKS for s in SETUPS], ["sd_s"]),
           "Table 3's standard deviations, taken as given (the spread of the runs)"),
    Inputs(("caught", "caught_pct"),
           cells("table2", [f"{b} / {x}" for b in BENCHMARKS for x in EXTENSIONS], ["caught_calls", "caught_pct"]),
           "Table 2's counts, taken as given; the other shares follow from them by arithmetic"),
)
COUNTERFACTUALS = (
    Counterfactual("signal-twice", {"signal_extension_passes": 2},
                   "the signal dispatcher hands a kill() to its extensions at both patched routines it passes"),
    Counterfactual("no-address-space-switch", {"bounce_context_switches": 0},
                   "a user-level extension reached without switching processes (as a library in the "
                   "application's own address space would be)"),
    Counterfactual("flat-register-file", {"register_windows": False},
                   "a processor without register windows: a deeper call chain spills nothing"),
    Counterfactual("user-level-extensions", {"in_kernel_extensions": False},
                   "every extension runs at user level behind the Bounce extension (SLIC's development mode)"),
    Counterfactual("proc-tracer", {"in_kernel_extensions": False, "filter_by_call": False},
                   "§4.3's /proc approach: every system call of a traced process stops and is bounced to each "
                   "user-level extension, whether it wants the call or not"),
)


# --- unit costs ----------------------------------------------------------------------------------

def cost_model(p: Params) -> CpuCostModel:
    """The UltraSPARC's unit costs (seconds): every operation SLIC's paths count."""
    cyc = 1.0 / p.clock_hz
    base = dict(p.base_us)
    fixed = {
        "hook": p.hook_cycles * cyc, "copy_check": p.copy_check_cycles * cyc,
        "signal_hook": p.signal_hook_cycles * cyc, "dispatch": p.dispatch_cycles * cyc,
        "extension": p.extension_cycles * cyc,
        # a window spilled on the way down and filled on the way back: a spilling call less a plain one
        "window": max(0.0, p.call_with_spill_us * us - p.call_cycles * cyc),
        "context_switch": p.context_switch_us * us,
        "trap": base["getpid"] * us,  # a null system call: the crossing and next to no work (§3.3)
        "encrypt": p.encrypt_call_us * us, "ree": p.ree_call_us * us,
    }
    return CpuCostModel(p.clock_hz, fixed)


def extension_work(p: Params, *, returns: bool = False) -> Work:
    """One extension in the chain, per call it sees: a call through the chain's pointer; two more register
    windows spilled and filled when it also inspects return values; the bounce at user level."""
    ops = {"extension": 1}
    if returns and p.register_windows:
        ops["window"] = p.windows_per_returning_extension
    if not p.in_kernel_extensions:
        ops.update(context_switch=p.bounce_context_switches, trap=1)
    return Work(system=Recipe(ops=ops))


def dispatcher(p: Params, event: str) -> Interposer:
    """What loading the dispatcher adds to every event of its interface, before any extension."""
    if event == "kill":
        ops = {"signal_hook": p.signal_interceptions}
    else:
        ops = {"hook": 1, "copy_check": dict(p.copies)[event]}
    return Interposer(f"{'signal' if event == 'kill' else 'system call'} dispatcher", catches=frozenset({event}),
                      per_call=Work(system=Recipe(ops=ops)))


def chain(p: Params, event: str, n: int, *, returns: bool = False, user_level: bool = False) -> Interposer:
    """n extensions registered for ``event``: the dispatch once, then each extension in turn (a signal's
    chain runs once per pass); ``user_level`` puts the extension at user level, behind the Bounce."""
    passes = p.signal_extension_passes if event == "kill" else 1
    q = dataclasses.replace(p, in_kernel_extensions=False) if user_level else p
    dispatch = Work(system=Recipe(ops={"dispatch": 1}))
    return Interposer("extensions", catches=frozenset({event}), per_call=dispatch * passes,
                      per_extension=extension_work(q, returns=returns) * passes, extensions=n)


def event_us(p: Params, event: str, configuration: str, *, extensions: int = 1, returns: bool = False) -> float:
    """Microseconds one event takes in a Table 1 configuration (``extensions`` null extensions for
    'SLIC, 1 null extension' and Figure 5)."""
    base = dict(p.base_us)[event]
    if configuration == "Unmodified system":
        return base
    layers = [dispatcher(p, event)]
    if configuration == "SLIC, 1 null extension" and extensions > 0:
        layers.append(chain(p, event, extensions, returns=returns))
    elif configuration == "SLIC user-level extension":
        layers.append(chain(p, event, 1, user_level=True))
    added = sum(interposed(SyscallMix({event: 1}), layers).seconds(cost_model(p)))
    return base + added / us


# --- the artifacts -------------------------------------------------------------------------------

def table1(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 1: microseconds per event. Index: (configuration, benchmark). Columns: time_us, sd_us (given),
    overhead_us (over the unmodified kernel)."""
    p = params or Params()
    sd = {(c, e): s for c, e, s in p.table1_sd_us}
    rows = []
    for c in CONFIGURATIONS:
        for e in EVENTS:
            t = event_us(p, e, c)
            rows.append({"configuration": c, "benchmark": e, "time_us": t, "sd_us": sd[(c, e)],
                         "overhead_us": t - dict(p.base_us)[e]})
    return pd.DataFrame(rows).set_index(["configuration", "benchmark"])


def slope(counts, times) -> float:
    """The least-squares slope of times against counts (Figure 5's m)."""
    return float(np.polyfit(np.asarray(counts, float), np.asarray(times, float), 1)[0])


def figure5(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Figure 5: microseconds per event against the number of null extensions (0-20), for each event, and
    for getpid() with extensions that also inspect return values.

    Index: extensions ('unmodified', '0' .. '20', and 'slope': the per-extension cost fitted over 1-20, as
    the paper's m). Columns: getpid_us, sigprocmask_us, kill_us, getpid_returns_us.
    """
    p = params or Params()
    counts = range(MAX_EXTENSIONS + 1)
    curves = {f"{e}_us": [event_us(p, e, "SLIC, 1 null extension", extensions=n) for n in counts] for e in EVENTS}
    curves["getpid_returns_us"] = [event_us(p, "getpid", "SLIC, 1 null extension", extensions=n, returns=True)
                                   for n in counts]
    df = pd.DataFrame(curves, index=[str(n) for n in counts])
    df.loc["slope"] = {k: slope(list(counts)[1:], v[1:]) for k, v in curves.items()}
    base = dict(p.base_us)
    df.loc["unmodified"] = {"getpid_us": base["getpid"], "sigprocmask_us": base["sigprocmask"],
                            "kill_us": base["kill"], "getpid_returns_us": base["getpid"]}
    return df.rename_axis("extensions")


def total_calls(p: Params) -> dict:
    """System calls each benchmark issues: a caught count over its printed share (Table 2's totals are lost)."""
    count = {(b, x): n for b, x, n in p.caught}
    return {b: 100.0 * count[(b, x)] / pct for b, x, pct in p.caught_pct}


def table2(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 2: system calls caught by each extension. Index: (benchmark, extension).
    Columns: caught_calls, caught_pct, total_calls."""
    p = params or Params()
    count, total = {(b, x): n for b, x, n in p.caught}, total_calls(p)
    rows = [{"benchmark": b, "extension": x, "caught_calls": count.get((b, x), 0),
             "caught_pct": 100.0 * count.get((b, x), 0) / total[b], "total_calls": total[b]}
            for b in BENCHMARKS for x in EXTENSIONS]
    return pd.DataFrame(rows).set_index(["benchmark", "extension"])


def benchmark_mix(p: Params, bench: str) -> SyscallMix:
    """A benchmark's calls as Table 2 sorts them: caught by Encrypt, caught by REE (assumed apart: REE checks
    paths and rights, Encrypt watches opens and data), and the rest (named apart from the class "other" of
    :func:`pysim.sw.syscalls.class_of`, which an interposer also matches)."""
    count, total = {(b, x): n for b, x, n in p.caught}, total_calls(p)[bench]
    enc, ree = count.get((bench, "Encrypt"), 0), count.get((bench, "REE"), 0)
    return SyscallMix({"Encrypt's": enc, "REE's": ree, "the rest": max(0.0, total - enc - ree)})


#: The handler each extension runs on a call it catches (CERT catches none of the benchmarks' calls, §4.4).
HANDLERS = {"CERT": None, "Encrypt": "encrypt", "REE": "ree"}
#: Whose calls each kind of call in a benchmark's mix is.
OWNERS = {"Encrypt's": "Encrypt", "REE's": "REE", "the rest": None}


def layers_for(p: Params, loaded) -> list:
    """The interposers with SLIC loaded and the extensions ``loaded``: the dispatcher on every call, and for
    each kind of call the chain of extensions that see it (those registered for it, or all without filtering)."""
    out = [Interposer("dispatcher", per_call=Work(system=Recipe(ops={"hook": 1, "copy_check": p.copies_per_call})))]
    for kind, owner in OWNERS.items():
        seeing = [x for x in loaded if not p.filter_by_call or x == owner]
        if not seeing:
            continue
        ops = {"dispatch": 1}
        if owner in seeing and HANDLERS[owner]:
            ops[HANDLERS[owner]] = 1
        out.append(Interposer(f"chain on {kind} calls", catches=frozenset({kind}),
                              per_call=Work(system=Recipe(ops=ops)), per_extension=extension_work(p),
                              extensions=len(seeing)))
    return out


def table3(params: Params | None = None, *, rng=0, quick=False) -> pd.DataFrame:
    """Table 3: benchmark elapsed times (s) and slowdowns (%) under each configuration.
    Index: (benchmark, configuration). Columns: time_s, sd_s (given), slowdown_pct."""
    p = params or Params()
    cpu, base, sd = cost_model(p), dict(p.baseline_s), {(b, s): v for b, s, v in p.table3_sd_s}
    loaded = {"Baseline": (), "SLIC, no extensions": (), "CERT": ("CERT",), "Encrypt": ("Encrypt",),
              "REE": ("REE",), "CERT + Encrypt + REE": EXTENSIONS}
    rows = []
    for b in BENCHMARKS:
        mix = benchmark_mix(p, b)
        for s in SETUPS:
            layers = [] if s == "Baseline" else layers_for(p, loaded[s])
            added = sum(interposed(mix, layers).seconds(cpu))
            rows.append({"benchmark": b, "configuration": s, "time_s": base[b] + added, "sd_s": sd[(b, s)],
                         "slowdown_pct": 100.0 * (slowdown(base[b], added) - 1.0)})
    return pd.DataFrame(rows).set_index(["benchmark", "configuration"])


# --- then vs now: the same paths, measured on this machine ------------------------------------------
# Each experiment is a C program this module writes and pysim.harness.measure builds with gcc and times
# (the lmbench harness, minimum of the tries: the machine may be shared). Where a tool or a kernel facility
# is missing, the frame says "not available: <why>" in its note column instead of failing.

_CHAIN = r"""
long syscall(long number, ...);
struct call { long nr; long arg; long ret; };
typedef void (*extension)(struct call *);
typedef long (*wrapper)(struct call *, int);
static void __attribute__((noinline)) ext_args(struct call *c) { sink += (uint64_t)c->arg; }
static extension volatile chain[64];
static wrapper volatile nest[64];
static int volatile n_ext;
/* what the chain wraps: the real system call, or a null procedure (to see the chain alone) */
static long __attribute__((noinline)) real_call(long nr) { return syscall(nr); }
static long __attribute__((noinline)) null_call(long nr) { return nr + 1; }
static long (*volatile bottom)(long) = real_call;
/* extensions that inspect arguments: the dispatcher calls each in turn, then the call */
static long __attribute__((noinline)) dispatch(struct call *c) {
    for (int i = 0; i < n_ext; i++) chain[i](c);
    c->ret = bottom(c->nr);
    return c->ret;
}
/* extensions that inspect return values: each calls down the chain and looks at what comes back */
static long __attribute__((noinline)) issue(struct call *c, int k) {
    if (k >= n_ext) return bottom(c->nr);
    return nest[k](c, k + 1);
}
static long __attribute__((noinline)) ext_returns(struct call *c, int k) {
    long r = issue(c, k);
    sink += (uint64_t)r + (uint64_t)c->arg;
    return r;
}
"""
_CHAIN_BODIES = {"plain": "sink += (uint64_t)syscall(SYS_getpid);",
                 "args": "struct call c = { SYS_getpid, i, 0 }; sink += (uint64_t)dispatch(&c);",
                 "returns": "struct call c = { SYS_getpid, i, 0 }; sink += (uint64_t)issue(&c, 0);"}


def _timed(body, *, decls="", setup="", includes=(), quick=False, name="", tries=None, enough_s=None):
    """One real C snippet timed by the lmbench harness; (seconds per iteration, note)."""
    m = measure("c", body, name=name, decls=decls, setup=setup, includes=includes,
                tries=tries or (5 if quick else 11), statistic="min",
                enough_s=enough_s if enough_s is not None else (0.005 if quick else 0.02))
    return (m.per_op_s, "") if m.available else (float("nan"), f"not available: {m.reason}")


#: The chain's columns: (body, what it wraps) for extensions that inspect arguments or return values, around
#: the real getpid() or around a null procedure (the chain alone, clear of the system call's noise).
CHAIN_KINDS = {"args_ns": ("args", "real_call"), "returns_ns": ("returns", "real_call"),
               "args_alone_ns": ("args", "null_call"), "returns_alone_ns": ("returns", "null_call")}


@functools.lru_cache(maxsize=4)
@one_core()
def measure_chain(extensions: tuple = (0, 1, 2, 4, 8, 12, 16, 20), *, quick: bool = False) -> pd.DataFrame:
    """getpid() through a chain of n function-pointer extensions on this machine (nanoseconds per call).

    Index: extensions ('plain': the bare system call; '0' .. n; 'slope': the per-extension cost fitted over
    n >= 1, as Figure 5's m). Columns (see :data:`CHAIN_KINDS`): args_ns, returns_ns around getpid();
    args_alone_ns, returns_alone_ns around a null procedure; note ('not available: <why>' if it is).
    ``quick`` keeps 0, 1, 4 and 20 extensions and fewer, shorter tries.
    """
    if not extensions or any(not 0 <= n <= 64 for n in extensions):
        raise ValueError(f"extensions must be counts in [0, 64], got {extensions!r}")
    if quick:
        extensions = tuple(n for n in extensions if n in (0, 1, 4, 20)) or extensions[:3]
    notes, rows = [], {}
    plain, why = _timed(_CHAIN_BODIES["plain"], decls=_CHAIN, includes=("sys/syscall.h",), quick=quick)
    rows["plain"] = {"args_ns": plain * 1e9, "returns_ns": plain * 1e9}
    notes.append(why)
    for n in extensions:
        row = {}
        for col, (kind, wraps) in CHAIN_KINDS.items():
            setup = (f"n_ext = {n}; bottom = {wraps}; "
                     "for (int k = 0; k < 64; k++) { chain[k] = ext_args; nest[k] = ext_returns; }")
            t, why = _timed(_CHAIN_BODIES[kind], decls=_CHAIN, setup=setup, includes=("sys/syscall.h",), quick=quick)
            row[col] = t * 1e9
            notes.append(why)
        rows[str(n)] = row
    df = pd.DataFrame.from_dict(rows, orient="index")
    counted = [n for n in extensions if n >= 1]
    df.loc["slope"] = {k: slope(counted, df.loc[[str(n) for n in counted], k]) if len(counted) >= 2 else np.nan
                       for k in CHAIN_KINDS}
    df["note"] = next((w for w in notes if w), "")
    return df.rename_axis("extensions")


_SECCOMP = r"""
long syscall(long number, ...);
static int listener = -1;
/* the supervisor: receive each notification and let the kernel run the call (as Bounce passes it down) */
static void serve(void) {
    struct seccomp_notif req; struct seccomp_notif_resp resp;
    for (;;) {
        memset(&req, 0, sizeof req);
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) { if (errno == EINTR) continue; _exit(0); }
        memset(&resp, 0, sizeof resp);
        resp.id = req.id;
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
}
static void *serve_thread(void *arg) { (void)arg; serve(); return NULL; }
static void fail(const char *what) { fprintf(stderr, "%s: %s\n", what, strerror(errno)); exit(1); }
static void supervise(int one_cpu, int as_thread) {
    if (one_cpu) {  /* the 1998 machine had one processor: keep both parties on this one */
        unsigned cpu = 0; unsigned long mask;
        if (syscall(SYS_getcpu, &cpu, NULL, NULL) != 0) fail("getcpu");
        mask = 1UL << (cpu % (8 * sizeof mask));
        if (syscall(SYS_sched_setaffinity, 0, sizeof mask, &mask) != 0) fail("sched_setaffinity");
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("prctl(PR_SET_NO_NEW_PRIVS)");
    listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (listener < 0) fail("seccomp(SECCOMP_RET_USER_NOTIF)");
    if (as_thread) {
        pthread_t t;
        if (pthread_create(&t, NULL, serve_thread, NULL) != 0) fail("pthread_create");
        return;
    }
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) { prctl(PR_SET_PDEATHSIG, SIGKILL); if (getppid() == 1) _exit(0); serve(); }
    close(listener);
}
"""
_SECCOMP_INCLUDES = ("sys/syscall.h", "unistd.h", "stddef.h", "errno.h", "string.h", "signal.h", "pthread.h",
                     "sys/prctl.h", "sys/ioctl.h", "linux/seccomp.h", "linux/filter.h")
BOUNCES = {"seccomp notification, supervisor process, one CPU": (1, 0),
           "seccomp notification, supervisor thread, one CPU": (1, 1),
           "seccomp notification, supervisor process, any CPU": (0, 0)}


@functools.lru_cache(maxsize=2)
@exclusive()
def measure_bounce(*, quick: bool = False) -> pd.DataFrame:
    """getpid() bounced to a user-level supervisor by seccomp user notification (SECCOMP_RET_USER_NOTIF,
    answered with SECCOMP_USER_NOTIF_FLAG_CONTINUE), against the bare call, on this machine.

    Index: path ('plain getpid()' and each of :data:`BOUNCES`). Columns: time_ns, added_ns (over the bare
    call), note ('not available: <why>' where the kernel or a tool refuses).
    """
    plain, why = _timed(_CHAIN_BODIES["plain"], decls=_CHAIN, includes=("sys/syscall.h",), quick=quick)
    rows = {"plain getpid()": {"time_ns": plain * 1e9, "note": why}}
    for path, (one_cpu, as_thread) in BOUNCES.items():
        t, why = _timed("sink += (uint64_t)syscall(SYS_getpid);", decls=_SECCOMP, includes=_SECCOMP_INCLUDES,
                        setup=f"supervise({one_cpu}, {as_thread});", quick=quick, tries=5 if quick else 9,
                        enough_s=0.01 if quick else 0.05)
        rows[path] = {"time_ns": t * 1e9, "note": why}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.insert(1, "added_ns", df["time_ns"] - df.loc["plain getpid()", "time_ns"])
    return df.rename_axis("path")


# The LD_PRELOAD extension: open/openat/read/write caught in libc's dynamic symbols, passed through a
# dispatcher and EXTENSIONS extensions (0: the dispatcher alone; 1: an extension that reads every byte moved,
# as Encrypt's XOR pass does), with each process's counts appended to $SLIC_COUNT_FILE at exit.
_PRELOAD = r"""#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/types.h>
enum { OPEN, READ, WRITE, KINDS };
struct event { int kind; const unsigned char *buf; long ret; };
typedef void (*extension)(struct event *);
static long caught[KINDS], moved;
static volatile unsigned long checksum;
static void ext_inspect(struct event *e) {
    unsigned long s = 0;
    if (e->kind != OPEN && e->ret > 0) for (long i = 0; i < e->ret; i++) s += e->buf[i];
    checksum += s;
}
static extension volatile chain[1] = { ext_inspect };
static void dispatch(struct event *e) {
    caught[e->kind]++;
    if (e->kind != OPEN && e->ret > 0) moved += e->ret;
    for (int i = 0; i < EXTENSIONS; i++) chain[i](e);
}
static void *next(const char *name) { return dlsym(RTLD_NEXT, name); }
ssize_t read(int fd, void *buf, size_t n) {
    static ssize_t (*real)(int, void *, size_t);
    if (!real) real = (ssize_t (*)(int, void *, size_t))next("read");
    struct event e = { READ, buf, 0 };
    e.ret = real(fd, buf, n); dispatch(&e); return e.ret;
}
ssize_t write(int fd, const void *buf, size_t n) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))next("write");
    struct event e = { WRITE, buf, 0 };
    dispatch(&e); e.ret = real(fd, buf, n); return e.ret;
}
static int mode_of(int flags, va_list ap) { return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, int) : 0; }
int open(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    va_list ap; va_start(ap, flags); int mode = mode_of(flags, ap); va_end(ap);
    if (!real) real = (int (*)(const char *, int, ...))next("open");
    struct event e = { OPEN, (const unsigned char *)path, 0 };
    e.ret = real(path, flags, mode); dispatch(&e); return (int)e.ret;
}
int open64(const char *path, int flags, ...) __attribute__((alias("open")));
int openat(int dirfd, const char *path, int flags, ...) {
    static int (*real)(int, const char *, int, ...);
    va_list ap; va_start(ap, flags); int mode = mode_of(flags, ap); va_end(ap);
    if (!real) real = (int (*)(int, const char *, int, ...))next("openat");
    struct event e = { OPEN, (const unsigned char *)path, 0 };
    e.ret = real(dirfd, path, flags, mode); dispatch(&e); return (int)e.ret;
}
int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));
__attribute__((destructor)) static void report(void) {
    const char *path = getenv("SLIC_COUNT_FILE");
    char line[128];
    if (!path) return;
    int len = snprintf(line, sizeof line, "%ld %ld %ld %ld\n", caught[OPEN], caught[READ], caught[WRITE], moved);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0) { syscall(SYS_write, fd, line, (size_t)len); syscall(SYS_close, fd); }
}
"""
# One of the build's source files; '@' is its number.
_UNIT = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <ctype.h>
struct item@ { char name[32]; double weight; struct item@ *next; };
static int by_weight@(const void *a, const void *b) {
    const struct item@ *x = a, *y = b;
    return (x->weight > y->weight) - (x->weight < y->weight);
}
double work@(int n) {
    struct item@ *v = calloc((size_t)n, sizeof *v);
    double total = 0;
    if (!v) return -1;
    for (int i = 0; i < n; i++) {
        v[i].weight = sqrt((double)(i * 7 + @)) + sin(i);
        for (int j = 0; j < 31; j++) v[i].name[j] = (char)toupper('a' + (i + j) % 26);
        v[i].next = i ? &v[i - 1] : NULL;
    }
    qsort(v, (size_t)n, sizeof *v, by_weight@);
    for (struct item@ *p = &v[n - 1]; p; p = p->next) total += p->weight * (double)strlen(p->name);
    free(v);
    return total;
}
"""
# The driver: its setup writes the sources and builds the library, its body runs one build.
_DRIVER = r"""
extern char **environ;
static char dir[512], count_path[600], cpu_path[600], lib_path[600];
static char *build_env[256];
static char *build_argv[40];
static void fail(const char *what) { fprintf(stderr, "%s\n", what); exit(1); }
static void write_file(const char *path, const char *text, int number) {
    FILE *f = fopen(path, "w");
    if (!f) fail(path);
    for (const char *c = text; *c; c++) { if (*c == '@') fprintf(f, "%d", number); else fputc(*c, f); }
    fclose(f);
}
static void prepare(const char *where, int files, int extensions, int preload) {
    char path[700], command[2400];
    snprintf(dir, sizeof dir, "%s", where);
    mkdir(dir, 0755);
    snprintf(count_path, sizeof count_path, "%s/counts-%d-%d.txt", dir, preload, extensions);
    snprintf(cpu_path, sizeof cpu_path, "%s/cpu-%d-%d.txt", dir, preload, extensions);
    FILE *cpu = fopen(cpu_path, "w");
    if (cpu) fclose(cpu);
    build_argv[0] = "gcc"; build_argv[1] = "-O1"; build_argv[2] = "-c";
    for (int k = 0; k < files && k < 32; k++) {
        snprintf(path, sizeof path, "%s/unit%d.c", dir, k);
        write_file(path, UNIT, k);
        build_argv[3 + k] = malloc(32);
        snprintf(build_argv[3 + k], 32, "unit%d.c", k);
    }
    int n = 0;
    for (char **e = environ; *e && n < 250; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "SLIC_COUNT_FILE=", 16) != 0) build_env[n++] = *e;
    if (preload) {
        snprintf(path, sizeof path, "%s/slic.c", dir);
        write_file(path, PRELOAD, 0);
        snprintf(lib_path, sizeof lib_path, "%s/libslic%d.so", dir, extensions);
        snprintf(command, sizeof command, "gcc -O2 -shared -fPIC -DEXTENSIONS=%d -o %s %s -ldl", extensions,
                 lib_path, path);
        if (system(command) != 0) fail("building the LD_PRELOAD library failed");
        build_env[n] = malloc(700); snprintf(build_env[n++], 700, "LD_PRELOAD=%s", lib_path);
        build_env[n] = malloc(700); snprintf(build_env[n++], 700, "SLIC_COUNT_FILE=%s", count_path);
    }
}
static double children_cpu_s(void) {
    struct rusage r;
    getrusage(RUSAGE_CHILDREN, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + 1e-6 * (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}
static long build(void) {
    FILE *f = fopen(count_path, "w");
    if (f) fclose(f);
    double cpu0 = children_cpu_s();
    pid_t pid = fork();
    if (pid < 0) fail("fork");
    if (pid == 0) {
        if (chdir(dir) != 0) _exit(126);
        environ = build_env;
        execvp("gcc", build_argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the build failed");
    f = fopen(cpu_path, "a");  /* the build's CPU time (user and system, all its processes), for the caller */
    if (f) { fprintf(f, "%.6f\n", children_cpu_s() - cpu0); fclose(f); }
    return status;
}
"""
_DRIVER_INCLUDES = ("unistd.h", "string.h", "sys/stat.h", "sys/types.h", "sys/wait.h", "sys/resource.h")
#: The builds timed: (LD_PRELOAD library loaded, extensions in its chain).
BUILDS = {"plain build": (0, 0), "LD_PRELOAD dispatcher, no extension": (1, 0),
          "LD_PRELOAD, an extension reading every byte": (1, 1)}
_INSPECT = r"""
static unsigned char buffer[65536];
static unsigned long __attribute__((noinline)) inspect(const unsigned char *b, long n) {
    unsigned long s = 0;
    for (long i = 0; i < n; i++) s += b[i];
    return s;
}
"""


def _c_literal(text: str) -> str:
    """``text`` as a C string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n\"\n\"") + '"'


def _counts(path) -> dict:
    """The LD_PRELOAD library's counts summed over the processes of the last build (zeros if none)."""
    total, processes = np.zeros(4), 0
    try:
        for line in path.read_text().split("\n"):
            if line.strip():
                total += np.array([float(x) for x in line.split()[:4]])
                processes += 1
    except (OSError, ValueError):
        pass
    return {"processes": float(processes), **dict(zip(("opens", "reads", "writes", "bytes"), total, strict=True))}


def _cpu_seconds(path) -> list:
    """The CPU seconds of each build the driver ran, in order (empty if it wrote none)."""
    try:
        return [float(x) for x in path.read_text().split()]
    except (OSError, ValueError):
        return []


@functools.lru_cache(maxsize=2)
@one_core()
def measure_preload_build(*, quick: bool = False) -> pd.DataFrame:
    """A real build (gcc -O1 -c of several C files) plain and under an LD_PRELOAD extension, on this machine.

    Each configuration is a C driver (built by :mod:`pysim.harness.runners`, kept running on its pipe) whose
    setup writes the sources and builds the library, and whose body runs one build; the three are run one
    build at a time in turn, after one untimed build each.

    Index: build (see :data:`BUILDS`). Columns: build_s (elapsed, the minimum over the rounds), slowdown_pct
    (over the plain build), cpu_s (user and system time of all the build's processes, the minimum over the
    rounds: what a shared machine's load disturbs least), cpu_slowdown_pct, processes (that loaded the library), opens, reads, writes (calls it caught in one build),
    bytes (moved by the reads and writes caught), note. ``quick`` builds 3 files instead of 8, in 3 rounds
    instead of 5.
    """
    files, where = (3 if quick else 8), cache_dir() / "atc98_ghormley-build"
    decls = (f"static const char *UNIT = {_c_literal(_UNIT)};\nstatic const char *PRELOAD = "
             f"{_c_literal(_PRELOAD)};\n" + _DRIVER)
    times, notes, clocks = {name: [] for name in BUILDS}, dict.fromkeys(BUILDS, ""), {}
    try:
        for name, (preload, extensions) in BUILDS.items():
            snippet = Snippet("c", "sink += (uint64_t)build();", f'prepare("{where}", {files}, {extensions}, '
                              f'{preload});', decls, _DRIVER_INCLUDES)
            command, why = build_program(snippet)
            if command is None:
                raise RuntimeError(why)
            clocks[name] = PipeClock(command, timeout_s=120.0)
            clocks[name].run(1)  # a first, untimed build: caches warm for every configuration alike
        names = list(BUILDS)
        for r in range(3 if quick else 5):  # one build of each per round, each round starting one further on,
            for name in names[r % 3:] + names[:r % 3]:  # so a change in load hits every build alike
                times[name].append(clocks[name].run(1))
    except (RuntimeError, TimeoutError, OSError, ValueError) as e:
        notes = dict.fromkeys(BUILDS, f"not available: {type(e).__name__}: {e}")
    finally:
        for clock in clocks.values():
            clock.close()
    rows = {}
    for name, (preload, extensions) in BUILDS.items():
        counts = _counts(where / f"counts-{preload}-{extensions}.txt") if preload else dict.fromkeys(
            ("processes", "opens", "reads", "writes", "bytes"), 0.0)
        cpu = _cpu_seconds(where / f"cpu-{preload}-{extensions}.txt")[1:]  # the first build was untimed
        rows[name] = {"build_s": min(times[name], default=np.nan), "cpu_s": min(cpu, default=np.nan), **counts,
                      "note": notes[name]}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.insert(1, "slowdown_pct", 100.0 * (df["build_s"] / df.loc["plain build", "build_s"] - 1.0))
    df.insert(3, "cpu_slowdown_pct", 100.0 * (df["cpu_s"] / df.loc["plain build", "cpu_s"] - 1.0))
    return df.rename_axis("build")


@functools.lru_cache(maxsize=2)
@one_core()
def measure_inspect_per_byte(*, quick: bool = False) -> float:
    """Seconds per byte of the extension's pass over a buffer (a 64 KB sum), on this machine (NaN if it
    cannot be measured)."""
    t, _ = _timed("sink += inspect(buffer, 65536);", decls=_INSPECT, quick=quick)
    return t / 65536


def build_accounting(build: pd.DataFrame, chain_ns: pd.DataFrame, per_byte_s: float) -> pd.DataFrame:
    """Each LD_PRELOAD build's added time against calls caught x cost (Table 2 into Table 3, now).

    The cost of a caught call is the chain measured alone (a dispatcher with no extension, and the slope per
    extension); the inspecting extension also pays ``per_byte_s`` on every byte moved. What the counts do not
    explain is named by :func:`pysim.sw.fit_residual`: loading the library into every process, and noise.
    The time added is CPU time (``cpu_s``), which the machine's other load disturbs least.
    Index: build. Columns: caught_calls, processes, explained_ms, measured_ms (CPU time added over the plain
    build), residual_ms, residual_per_process_us.
    """
    rows = {}
    plain_s = build.loc["plain build", "cpu_s"]
    cpu = CpuCostModel(1e9, {"interposed call": chain_ns.loc["0", "args_alone_ns"] * 1e-9,  # clock unused
                             "extension": chain_ns.loc["slope", "args_alone_ns"] * 1e-9},
                       {"inspect": per_byte_s})
    for name, (preload, extensions) in BUILDS.items():
        if not preload:
            continue
        r = build.loc[name]
        calls = r["opens"] + r["reads"] + r["writes"]
        recipe = Recipe(ops={"interposed call": calls, "extension": calls * extensions},
                        nbytes={"inspect": r["bytes"] * extensions})
        explained, added = recipe.seconds(cpu), r["cpu_s"] - plain_s
        if np.isfinite(added) and added > explained:
            _, priced = fit_residual(recipe, cpu, added, "rest")
            residual = priced.fixed_s["rest"]
        else:  # the build ran no slower than the counts explain: the rest is lost in the noise
            residual = added - explained
        rows[name] = {"caught_calls": calls, "processes": r["processes"], "explained_ms": explained * 1e3,
                      "measured_ms": added * 1e3, "residual_ms": residual * 1e3,
                      "residual_per_process_us": residual * 1e6 / r["processes"] if r["processes"] else np.nan}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("build")


def then_and_now(chain_ns: pd.DataFrame, bounce_ns: pd.DataFrame, build: pd.DataFrame,
                 params: Params | None = None) -> pd.DataFrame:
    """SLIC's costs on the 1998 UltraSPARC (the model) beside the same paths measured on this machine.

    Index: quantity (its unit in the label). Columns: then (1998, model), now (this machine), then_over_now.
    The builds' slowdowns now are in CPU time (elapsed time is in ``build``); then, gcc's elapsed time.
    """
    p = params or Params()
    t1, f5, t3 = table1(p), figure5(p), table3(p)
    getpid = t1.loc[("Unmodified system", "getpid"), "time_us"]
    bounce_then = t1.loc[("SLIC user-level extension", "getpid"), "overhead_us"]
    bounce_now = bounce_ns.loc["seccomp notification, supervisor process, one CPU", "added_ns"] / 1e3
    plain_now = chain_ns.loc["plain", "args_ns"] / 1e3
    rows = {
        "getpid(), unmodified (us)": (getpid, plain_now),
        "dispatcher with no extension, per call (us)": (t1.loc[("SLIC, no extensions", "getpid"), "overhead_us"],
                                                        chain_ns.loc["0", "args_alone_ns"] / 1e3),
        "per extension, inspecting arguments (us)": (f5.loc["slope", "getpid_us"],
                                                     chain_ns.loc["slope", "args_alone_ns"] / 1e3),
        "per extension, inspecting return values (us)": (f5.loc["slope", "getpid_returns_us"],
                                                         chain_ns.loc["slope", "returns_alone_ns"] / 1e3),
        "user-level bounce, added per getpid() (us)": (bounce_then, bounce_now),
        "user-level bounce / getpid() (x)": (bounce_then / getpid, bounce_now / plain_now),
        "build slowdown, interposer and no extension (%)": (
            t3.loc[("gcc", "SLIC, no extensions"), "slowdown_pct"],
            build.loc["LD_PRELOAD dispatcher, no extension", "cpu_slowdown_pct"]),
        "build slowdown, an extension touching every byte (%)": (
            t3.loc[("gcc", "Encrypt"), "slowdown_pct"],
            build.loc["LD_PRELOAD, an extension reading every byte", "cpu_slowdown_pct"]),
    }
    df = pd.DataFrame.from_dict(rows, orient="index", columns=["then", "now"])
    df["then_over_now"] = np.where(df.index.str.endswith("(us)"), df["then"] / df["now"], np.nan)
    return df.rename_axis("quantity")
