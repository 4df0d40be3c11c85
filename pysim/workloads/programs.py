"""A catalogue of SPEC-like programs by resource demand: small C kernels, each loading one resource.

The papers characterise their benchmarks by what they demand of the machine
(Nakajima & Pallipadi §3.1 pick 164.gzip as integer-bound, 177.mesa as
floating-point-bound and 197.parser as L2-miss-bound; Magnusson prices a
simulated program by its rate of memory events). SPEC CPU itself is not free
to ship, so the lab runs a kernel for each kind of demand instead:

========  ==========================================================  =====================
name      what it loads                                               stands for
========  ==========================================================  =====================
INT       the integer units: a dependent multiply-xorshift chain      164.gzip (integer)
FP        the FP units: two dependent multiply-add chains             177.mesa (floating point)
L2C       the cache hierarchy: a random pointer chase over 32 MB      197.parser (L2 misses)
STREAM    memory bandwidth: a sequential sum over 64 MB               a streaming scan
========  ==========================================================  =====================

Each kernel is a :class:`pysim.harness.Snippet` (one *trip* of its body is
a fixed amount of work), so the harness times it, pins it to a CPU, or runs
it under a tool. :func:`demand` measures a kernel's demand vector on this
machine: instructions and memory references per trip and cache misses per
instruction from valgrind's cachegrind (these machines have no hardware
counters), FP operations per instruction from the count in the source, and
the native instruction rate. :func:`as_program` turns that row into the
SMT solver's :class:`pysim.hw.smt.Program`.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pysim.harness.commands import run_command
from pysim.harness.exclusive import one_core
from pysim.harness.runners import Snippet, build
from pysim.hw.smt import Program


@dataclass(frozen=True)
class Kernel:
    """One catalogue program: its C loop body, what it loads, and its FP operations per trip."""

    name: str
    loads: str
    stands_for: str
    body: str
    setup: str = ""
    decls: str = ""
    fp_ops_per_trip: int = 0  # counted in the body's source: cachegrind does not count FP operations


STEPS = 4096  # inner steps per trip, in every kernel

CATALOGUE = {k.name: k for k in (
    Kernel("INT", "integer units: a dependent multiply-xorshift chain", "164.gzip (integer-bound)",
           "uint64_t x = sink + 1; for (int k = 0; k < 4096; k++) { x = x * 6364136223846793005ULL + "
           "1442695040888963407ULL; x ^= x >> 17; } sink = x;"),
    Kernel("FP", "floating-point units: two dependent multiply-add chains", "177.mesa (floating-point-bound)",
           "double a = (double)(sink & 7) + 1.0, b = 1.0000001; for (int k = 0; k < 4096; k++) { a = a * b + "
           "1e-9; b = b * 0.9999999 + 1e-7; } sink += (uint64_t)a;",
           fp_ops_per_trip=4 * STEPS),
    Kernel("L2C", "cache hierarchy: a random pointer chase over 32 MB", "197.parser (L2-miss-bound)",
           "uint64_t j = sink & MASK; for (int k = 0; k < 4096; k++) { j = chain[j]; } sink = j;",
           "chain = malloc(sizeof(uint64_t) * (MASK + 1)); for (uint64_t i = 0; i <= MASK; i++) chain[i] = i; "
           "uint64_t s = 88172645463325252ULL; for (uint64_t i = MASK; i > 0; i--) { s ^= s << 13; s ^= s >> 7; "
           "s ^= s << 17; uint64_t r = s % i; uint64_t t = chain[i]; chain[i] = chain[r]; chain[r] = t; }",
           "#define MASK ((1ULL << 22) - 1)\nstatic uint64_t *chain;"),
    Kernel("STREAM", "memory bandwidth: a sequential sum over 64 MB", "a streaming scan",
           "uint64_t s = 0; for (int k = 0; k < 4096; k++) { s += big[pos + k]; } pos = (pos + 4096) & MASK; "
           "sink += s;",
           "big = malloc(sizeof(uint64_t) * (MASK + 1)); for (uint64_t i = 0; i <= MASK; i++) big[i] = i;",
           "#define MASK ((1ULL << 23) - 1)\nstatic uint64_t *big; static uint64_t pos;"),
)}

_PIN = ("{ unsigned long mask = 1UL << %d; if (syscall(SYS_sched_setaffinity, 0, sizeof mask, &mask) != 0) "
        "return 3; }\n")


def kernel(name: str) -> Kernel:
    """The catalogue entry called ``name`` (a clear error names the others)."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise ValueError(f"no program {name!r} in the catalogue; it has {', '.join(CATALOGUE)}") from None


def snippet(name: str, cpu: int | None = None) -> Snippet:
    """The kernel as a harness snippet, pinned to ``cpu`` when one is given."""
    k = kernel(name)
    if cpu is not None and (not isinstance(cpu, int) or cpu < 0):
        raise ValueError(f"cpu must be a CPU number >= 0, got {cpu!r}")
    pin = _PIN % cpu if cpu is not None else ""
    return Snippet("c", k.body, pin + k.setup, "long syscall(long number, ...);\n" + k.decls,
                   ("sys/syscall.h", "unistd.h"))


def command(name: str, cpu: int | None = None) -> tuple:
    """(argv of the built kernel program, "") or (None, why it cannot be built). The program speaks the
    harness's protocol: ``R n`` on stdin runs n trips and prints their seconds."""
    return build(snippet(name, cpu))


@one_core()
def seconds_per_trip(name: str, *, trips: int, tool: tuple = (), tries: int = 3) -> tuple:
    """(seconds per trip of the kernel, "") or (NaN, why not): the program's own timing of ``trips``
    trips, the minimum of ``tries``, run plain or under a tool given as its argv prefix (for example
    ``("valgrind", "--tool=none", "-q")``), so the tool's start-up and the kernel's setup are not counted."""
    if trips < 1 or tries < 1:
        raise ValueError(f"trips and tries must be >= 1, got {trips}, {tries}")
    argv, why = command(name)
    if argv is None:
        return float("nan"), why
    r = run_command([*tool, *argv], input_text=f"R {trips}\n" * tries, timeout_s=300.0)
    if not r.available or r.returncode != 0:
        return float("nan"), r.reason or r.stderr.strip()[-300:]
    return min(float(x) for x in r.stdout.split()[1:]) / trips, ""


def cache_geometry() -> dict:
    """This machine's L1 data, L1 instruction and L2 caches from sysfs, as cachegrind's ``--D1``, ``--I1``
    and ``--LL`` options ("size,ways,line"); empty where sysfs does not say. Cachegrind's own reading of
    CPUID is not trusted: on these VMs it takes a 320 MB last level. Its last level is given the L2, the
    level the papers' counters (the Pentium 4's L2 misses) count."""
    out = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")):
        try:
            level, kind = (index / "level").read_text().strip(), (index / "type").read_text().strip()
            size = int((index / "size").read_text().strip().rstrip("K")) * 1024
            ways = int((index / "ways_of_associativity").read_text())
            line = int((index / "coherency_line_size").read_text())
        except (OSError, ValueError):
            continue
        option = {("1", "Data"): "--D1", ("1", "Instruction"): "--I1", ("2", "Unified"): "--LL"}.get((level, kind))
        if option:
            out[option] = f"{size},{ways},{line}"
    return out


def _cachegrind(argv: list, trips: int) -> tuple:
    """(cachegrind's event totals, the program's own seconds for ``trips`` trips under it) for one run,
    or (None, NaN) if valgrind is missing or fails."""
    fd, out = tempfile.mkstemp(prefix="pysim-cg-")
    os.close(fd)
    try:
        geometry = [f"{k}={v}" for k, v in cache_geometry().items()]
        r = run_command(["valgrind", "--tool=cachegrind", "--cache-sim=yes", *geometry,
                         f"--cachegrind-out-file={out}", "-q", *argv], input_text=f"R {trips}\n", timeout_s=300.0)
        if not r.available or r.returncode != 0 or len(r.stdout.split()) < 2:
            return None, float("nan")
        events = summary = None
        with open(out) as f:
            for line in f:
                if line.startswith("events:"):
                    events = line.split()[1:]
                elif line.startswith("summary:"):
                    summary = [int(x) for x in line.split()[1:]]
        counts = dict(zip(events, summary)) if events and summary else None
        return counts, float(r.stdout.split()[1])
    finally:
        os.unlink(out)


@one_core()
def demand(names=None, *, trips: int = 200, native_trips: int = 2000) -> pd.DataFrame:
    """Each kernel's demand vector on this machine.

    Cachegrind runs the program twice, with ``trips`` and ``2 * trips`` trips; the difference is one
    ``trips``'s worth of the body, without the setup. Its simulated caches are this machine's L1 and L2
    (:func:`cache_geometry`).
    The native rate is the program's own timing of ``native_trips`` trips (the minimum of three).

    Returns
    -------
    DataFrame indexed by program: available, inst_per_trip, refs_per_inst (data reads and writes per
    instruction), l1_miss_per_inst, l2_miss_per_inst (data misses, :func:`cache_geometry`), fp_per_inst,
    native_s_per_trip,
    inst_per_s, cachegrind_s_per_trip (the program's own timing under cachegrind), note.
    """
    names = list(names) if names is not None else list(CATALOGUE)
    if trips < 1 or native_trips < 1:
        raise ValueError(f"trips and native_trips must be >= 1, got {trips}, {native_trips}")
    rows = {}
    for name in names:
        k = kernel(name)
        row = {"available": False, "note": ""}
        argv, why = command(name)
        if argv is None:
            rows[name] = row | {"note": why}
            continue
        s_per_trip, why = seconds_per_trip(name, trips=native_trips)
        if why:
            rows[name] = row | {"note": why}
            continue
        row |= {"native_s_per_trip": s_per_trip}
        (one, _), (two, cg_s) = _cachegrind(argv, trips), _cachegrind(argv, 2 * trips)
        if one is None or two is None:
            rows[name] = row | {"note": "valgrind (cachegrind) is not available"}
            continue
        # the difference of two runs leaves the body alone; counts the setup and exit make differently by a
        # handful of misses could make a count of near zero come out below it
        d = {e: max(0.0, (two[e] - one[e]) / trips) for e in one}
        inst = d["Ir"]
        row |= {"available": True, "inst_per_trip": inst, "refs_per_inst": (d["Dr"] + d["Dw"]) / inst,
                "l1_miss_per_inst": (d["D1mr"] + d["D1mw"]) / inst,
                "l2_miss_per_inst": (d["DLmr"] + d["DLmw"]) / inst,
                "fp_per_inst": k.fp_ops_per_trip / inst, "inst_per_s": inst / s_per_trip,
                "cachegrind_s_per_trip": cg_s / (2 * trips)}
        rows[name] = row
    cols = ["available", "inst_per_trip", "refs_per_inst", "l1_miss_per_inst", "l2_miss_per_inst", "fp_per_inst",
            "native_s_per_trip", "inst_per_s", "cachegrind_s_per_trip", "note"]
    return pd.DataFrame.from_dict(rows, orient="index").reindex(columns=cols).rename_axis("program")


def as_program(name: str, row, solo_s: float) -> Program:
    """A :func:`demand` row as the SMT solver's demand vector."""
    if not row["available"]:
        raise ValueError(f"{name}: no measured demand ({row['note']})")
    if not solo_s > 0:
        raise ValueError(f"solo_s must be > 0 seconds, got {solo_s!r}")
    return Program(name, float(solo_s), float(row["inst_per_s"]), float(row["l2_miss_per_inst"]),
                   float(row["fp_per_inst"]))
