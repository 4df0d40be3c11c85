"""Real measurements of C, C++, Java and Tcl snippets, timed by the lmbench harness.

A snippet (a loop body, its setup and declarations) is wrapped in a small
program in its own language that answers, on a pipe, ``R n`` with the
seconds ``n`` iterations of the body take and ``E n`` with those of an empty
loop. :class:`PipeClock` drives it, so the very harness of
:mod:`pysim.harness.lmbench` (interval, auto-sizing, tries) times real code
exactly as it times the simulated twin. Programs are compiled once into a
cache keyed by their source. A missing compiler or interpreter, a build that
fails or a run that hangs gives a :class:`Measurement` that says so
(``available=False`` and the reason), never an exception, so a notebook goes
on where a tool is missing.

Keep the body from being optimised away: write its result to ``sink``
(declared by every template; C and C++ as ``volatile``).

>>> m = measure("c", "sink += i * 3;", name="multiply-add")   # doctest: +SKIP
>>> m.per_op_s                                                  # doctest: +SKIP
3.1e-10
"""
from __future__ import annotations

import hashlib
import os
import select
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pysim.harness import lmbench
from pysim.harness.exclusive import one_core

LANGUAGES = ("c", "c++", "java", "tcl")


@dataclass(frozen=True)
class Snippet:
    """A loop body to time, in one language, with what it needs around it."""

    language: str
    body: str
    setup: str = ""      # runs once before timing
    decls: str = ""      # top-level declarations (C/C++ functions, Java static members, Tcl procs)
    includes: tuple = ()  # C/C++ headers, Java imports

    def __post_init__(self):
        if self.language not in LANGUAGES:
            raise ValueError(f"language must be one of {LANGUAGES}, got {self.language!r}")
        if not self.body.strip():
            raise ValueError("a snippet needs a body")


@dataclass(frozen=True)
class Measurement:
    """One snippet timed: seconds per operation (loop overhead subtracted), or why it could not be."""

    name: str
    language: str
    available: bool
    per_op_s: float = float("nan")       # the statistic (median, or minimum) of the tries
    min_s: float = float("nan")
    median_s: float = float("nan")
    iterations: int = 0
    tries: int = 0
    loop_overhead_s: float = float("nan")
    enough_s: float = float("nan")
    reason: str = ""


# --- the programs ----------------------------------------------------------------------

_C = r"""#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
{includes}
static volatile uint64_t sink;
{decls}
static double now(void) {{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }}
static double body_loop(long n) {{ double t0 = now(); for (long i = 0; i < n; i++) {{ {body} }} return now() - t0; }}
static double empty_loop(long n) {{ double t0 = now(); for (long i = 0; i < n; i++) {{ __asm__ volatile(""); }} return now() - t0; }}
int main(void) {{
    {setup}
    char cmd; long n;
    printf("ready\n"); fflush(stdout);
    while (scanf(" %c %ld", &cmd, &n) == 2) {{
        printf("%.12g\n", cmd == 'E' ? empty_loop(n) : body_loop(n)); fflush(stdout);
    }}
    return (int)(sink & 0);
}}
"""

_JAVA = r"""import java.io.*;
{includes}
public class {cls} {{
    static long sink;
    {decls}
    static double bodyLoop(long n) {{ long t0 = System.nanoTime(); for (long i = 0; i < n; i++) {{ {body} }} return (System.nanoTime() - t0) * 1e-9; }}
    static double emptyLoop(long n) {{ long t0 = System.nanoTime(); for (long i = 0; i < n; i++) {{ sink += 0; }} return (System.nanoTime() - t0) * 1e-9; }}
    public static void main(String[] args) throws Exception {{
        {setup}
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        System.out.println("ready"); System.out.flush();
        String line;
        while ((line = in.readLine()) != null) {{
            String[] w = line.trim().split(" ");
            if (w.length < 2) break;
            long n = Long.parseLong(w[1]);
            System.out.println(w[0].equals("E") ? emptyLoop(n) : bodyLoop(n)); System.out.flush();
        }}
        if (sink == 42) System.err.println(sink);
    }}
}}
"""

_TCL = r"""set sink 0
{decls}
{setup}
proc body_loop {{n}} {{ global sink; set t0 [clock microseconds]; for {{set i 0}} {{$i < $n}} {{incr i}} {{ {body} }}; expr {{([clock microseconds] - $t0) * 1e-6}} }}
proc empty_loop {{n}} {{ set t0 [clock microseconds]; for {{set i 0}} {{$i < $n}} {{incr i}} {{ }}; expr {{([clock microseconds] - $t0) * 1e-6}} }}
puts ready; flush stdout
while {{[gets stdin line] >= 0}} {{
    lassign $line cmd n
    if {{$cmd eq "E"}} {{ puts [empty_loop $n] }} else {{ puts [body_loop $n] }}
    flush stdout
}}
"""


def cache_dir() -> Path:
    """Where built programs are kept (PYSIM_CACHE_DIR, else a per-user folder in the temp directory)."""
    d = Path(os.environ.get("PYSIM_CACHE_DIR") or Path(tempfile.gettempdir()) / f"pysim-harness-{os.getuid()}")
    d.mkdir(parents=True, exist_ok=True)
    return d


def program_file(name: str, text: str) -> Path:
    """``text`` written once into :func:`cache_dir` as ``name`` (rewritten only when it changed), its path.

    The write goes through a temporary file and a rename, so programs started at the same time never read
    half a file."""
    path = cache_dir() / name
    if not path.exists() or path.read_text() != text:
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def _tool(name: str) -> str | None:
    return shutil.which(name)


def build(snippet: Snippet, *, timeout_s: float = 120.0) -> tuple[list | None, str]:
    """The command that runs the snippet's program (building it if needed), or (None, why not)."""
    lang = snippet.language
    if lang in ("c", "c++"):
        cc = _tool("gcc" if lang == "c" else "g++")
        if cc is None:
            return None, f"{'gcc' if lang == 'c' else 'g++'} is not installed"
        includes = "\n".join(f"#include <{h}>" for h in snippet.includes)
        src = _C.format(includes=includes, decls=snippet.decls, setup=snippet.setup, body=snippet.body)
        flags = ["-O2", "-std=c99"] if lang == "c" else ["-O2", "-std=c++17", "-x", "c++"]
        key = hashlib.sha256((lang + src + " ".join(flags)).encode()).hexdigest()[:20]
        exe = cache_dir() / f"snippet-{key}"
        if not exe.exists():
            source = cache_dir() / f"snippet-{key}.{'c' if lang == 'c' else 'cpp'}"
            source.write_text(src)
            r = subprocess.run([cc, *flags, "-o", str(exe), str(source), "-lm"], capture_output=True, text=True,
                               timeout=timeout_s)
            if r.returncode != 0:
                return None, f"{cc} failed: {r.stderr.strip()[-800:]}"
        return [str(exe)], ""
    if lang == "java":
        javac, java = _tool("javac"), _tool("java")
        if javac is None or java is None:
            return None, "a JDK (javac and java) is not installed"
        probe = _JAVA.format(cls="X", includes="", decls=snippet.decls, setup=snippet.setup, body=snippet.body)
        key = "S" + hashlib.sha256(("\n".join(snippet.includes) + probe).encode()).hexdigest()[:20]
        src = _JAVA.format(cls=key, includes="\n".join(f"import {i};" for i in snippet.includes),
                           decls=snippet.decls, setup=snippet.setup, body=snippet.body)
        folder = cache_dir() / key
        if not (folder / f"{key}.class").exists():
            folder.mkdir(exist_ok=True)
            (folder / f"{key}.java").write_text(src)
            r = subprocess.run([javac, "-d", str(folder), str(folder / f"{key}.java")], capture_output=True,
                               text=True, timeout=timeout_s)
            if r.returncode != 0:
                return None, f"javac failed: {r.stderr.strip()[-800:]}"
        return [java, "-cp", str(folder), key], ""
    tclsh = _tool("tclsh")
    if tclsh is None:
        return None, "Tcl (tclsh) is not installed"
    src = _TCL.format(decls=snippet.decls, setup=snippet.setup, body=snippet.body)
    key = hashlib.sha256(src.encode()).hexdigest()[:20]
    script = cache_dir() / f"snippet-{key}.tcl"
    if not script.exists():
        script.write_text(src)
    return [tclsh, str(script)], ""


class PipeClock:
    """A clock over a running snippet program: ``run(n)`` times n iterations of the body in the program."""

    def __init__(self, command: list, *, timeout_s: float = 60.0, empty: bool = False):
        self.timeout_s, self.kind = timeout_s, "E" if empty else "R"
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        if self._line() != "ready":
            self.close()
            raise RuntimeError(f"the snippet program did not start: {self.proc.stderr.read()[-800:]}")

    def _line(self) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout_s)
        if not ready:
            raise TimeoutError(f"the snippet program gave no answer within {self.timeout_s} s")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the snippet program ended: {self.proc.stderr.read()[-800:]}")
        return line.strip()

    def run(self, n: int) -> float:
        self.proc.stdin.write(f"{self.kind} {int(n)}\n")
        self.proc.stdin.flush()
        return float(self._line())

    def empty(self) -> "PipeClock":
        """A view of the same program that times the empty loop."""
        view = object.__new__(PipeClock)
        view.proc, view.timeout_s, view.kind = self.proc, self.timeout_s, "E"
        return view

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


#: The intervals tried for a real measurement: lmbench's, without its 1 s fallback (a shared,
#: noisy machine fails the 0.1% proportionality test at any length; 100 ms keeps runs short).
REAL_INTERVALS_S = (0.001, 0.01, 0.1)


def warm_up(clock, warmup_s: float, *, settle: float = 0.05) -> int:
    """Run the body until ``warmup_s`` has passed and it is no longer ``settle`` faster per iteration
    than it was half a warm-up earlier (a JIT still compiling), for at most four times ``warmup_s``.
    Returns the iterations run."""
    n, spent, total, history = 1, 0.0, 0, []
    while spent < 4 * warmup_s:
        t = clock.run(n)
        spent += t
        total += n
        history.append((spent, t / n))
        if spent >= warmup_s:
            then = [per for when, per in history if when <= spent - warmup_s / 2]
            if then and history[-1][1] > then[-1] * (1 - settle):
                break
        if t < warmup_s / 20:
            n *= 2
    return total


@one_core()
def measure(language: str, body: str, *, name: str = "", setup: str = "", decls: str = "", includes=(),
            enough_s: float | None = None, tries: int = lmbench.TRIES, statistic: str = "median",
            subtract_loop: bool = True, timeout_s: float = 60.0, warmup_s: float = 0.0) -> Measurement:
    """Time one snippet for real; seconds per iteration with the empty loop's subtracted.

    ``enough_s`` is the interval each try lasts; by default the harness finds
    the shortest of :data:`REAL_INTERVALS_S` the clock measures to 1%
    (:func:`pysim.harness.lmbench.compute_enough`). ``warmup_s`` runs the
    body first for at least that long and on while it still speeds up (a
    JIT compiling it), at most four times as long (:func:`warm_up`).
    """
    if warmup_s < 0:
        raise ValueError(f"warmup_s must be >= 0, got {warmup_s!r}")
    snippet = Snippet(language, body, setup, decls, tuple(includes))
    name = name or body.strip()[:40]
    try:
        command, why = build(snippet, timeout_s=max(timeout_s, 120.0))
    except subprocess.TimeoutExpired:
        return Measurement(name, language, False, reason="building the snippet timed out")
    if command is None:
        return Measurement(name, language, False, reason=why)
    try:
        with PipeClock(command, timeout_s=timeout_s) as clock:
            if warmup_s:
                warm_up(clock, warmup_s)
            enough = enough_s if enough_s is not None else lmbench.compute_enough(clock, REAL_INTERVALS_S)
            n = lmbench.auto_size(clock, enough)
            overhead = 0.0
            if subtract_loop:  # an empty loop of the same count (a JIT may remove it: then it costs nothing)
                empty = clock.empty()
                overhead = max(0.0, min(empty.run(n) / n for _ in range(3)))
            result = lmbench.bench(clock, enough, tries=tries, statistic=statistic, overhead_s=overhead)
    except (TimeoutError, RuntimeError, OSError, ValueError) as e:
        return Measurement(name, language, False, reason=f"{type(e).__name__}: {e}")
    per = sorted(result.per_iteration_s)
    return Measurement(name, language, True, result.value_s, per[0], per[len(per) // 2], result.iterations,
                       tries, overhead, enough)
