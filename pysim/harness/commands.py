"""Real commands timed: elapsed time and the CPU time of the command and its children.

Models may not start processes themselves; they call :func:`run_command` or
:func:`timed_runs`, which report a missing program or a failure instead of
raising, so a notebook still runs where a tool is absent.

>>> r = run_command(["true"])
>>> r.available and r.returncode == 0 and r.elapsed_s >= 0
True
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass

import pandas as pd
from pysim.harness.exclusive import one_core


@dataclass(frozen=True)
class CommandResult:
    """One run: wall time, the children's user and system CPU time, output, or why it could not run."""

    available: bool
    returncode: int = -1
    elapsed_s: float = float("nan")
    user_s: float = float("nan")
    system_s: float = float("nan")
    stdout: str = ""
    stderr: str = ""
    reason: str = ""

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.system_s


def run_command(argv, *, cwd=None, env=None, timeout_s: float = 300.0, input_text: str | None = None,
                check: bool = False) -> CommandResult:
    """Run ``argv`` (a list; no shell) and time it. With ``check``, a non-zero exit counts as unavailable."""
    argv = [str(a) for a in argv]
    if not argv:
        raise ValueError("argv must name a program")
    if shutil.which(argv[0]) is None and not os.path.exists(argv[0]):
        return CommandResult(False, reason=f"{argv[0]} is not installed")
    full_env = dict(os.environ)
    full_env.update(env or {})
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=full_env, stdin=subprocess.PIPE if input_text else None,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        return CommandResult(False, reason=f"{argv[0]} could not start: {e}")
    out, err, usage = _wait(proc, input_text, timeout_s)
    if usage is None:
        return CommandResult(False, reason=f"{argv[0]} ran longer than {timeout_s} s")
    elapsed = time.perf_counter() - t0
    if check and proc.returncode != 0:
        return CommandResult(False, proc.returncode, elapsed, usage.ru_utime, usage.ru_stime, out, err,
                             reason=f"{argv[0]} exited with {proc.returncode}: {err.strip()[-300:]}")
    return CommandResult(True, proc.returncode, elapsed, usage.ru_utime, usage.ru_stime, out, err)


def _wait(proc, input_text, timeout_s):
    """Collect the output on threads and reap the child with wait4, which gives its (and its
    children's) resource usage; (stdout, stderr, rusage), or rusage None after a timeout."""
    chunks = {"out": [], "err": []}
    readers = [threading.Thread(target=lambda f=f, k=k: chunks[k].append(f.read()), daemon=True)
               for f, k in ((proc.stdout, "out"), (proc.stderr, "err"))]
    for t in readers:
        t.start()
    if input_text is not None:
        proc.stdin.write(input_text)
        proc.stdin.close()
    timed_out = threading.Event()

    def kill():
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout_s, kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    if timed_out.is_set():
        proc.returncode = -9
        return "", "", None
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    return "".join(chunks["out"]), "".join(chunks["err"]), usage


@one_core()
def timed_runs(variants: dict, argv, *, rounds: int = 3, cwd=None, timeout_s: float = 300.0) -> pd.DataFrame:
    """Run ``argv`` under each variant (name -> extra environment, e.g. ``{"LD_PRELOAD": lib}``),
    interleaved for ``rounds`` rounds; the median elapsed, user and system seconds per variant.

    A variant whose runs fail is reported with ``available`` False and the reason.
    """
    if rounds < 1 or not variants:
        raise ValueError("need at least one variant and one round")
    runs = {name: [] for name in variants}
    reasons = {}
    for _ in range(rounds):
        for name, env in variants.items():
            r = run_command(argv, cwd=cwd, env=env, timeout_s=timeout_s, check=True)
            if r.available:
                runs[name].append(r)
            else:
                reasons[name] = r.reason
    rows = []
    for name in variants:
        ok = runs[name]
        if not ok:
            rows.append({"variant": name, "available": False, "reason": reasons.get(name, "no run")})
            continue
        rows.append({"variant": name, "available": True, "runs": len(ok),
                     "elapsed_s": statistics.median(r.elapsed_s for r in ok),
                     "user_s": statistics.median(r.user_s for r in ok),
                     "system_s": statistics.median(r.system_s for r in ok), "reason": ""})
    return pd.DataFrame(rows).set_index("variant")


def parse_value(text: str):
    """A measurement program's printed value as an int, else a float, else the text itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
