"""A real command run plain and under ``strace``: its system-call mix and what tracing costs it.

:func:`traced_run` runs ``argv`` untraced and then traced (optionally with
``--seccomp-bpf``, so only the calls traced stop the process), each
``tries`` times, and returns the median wall times and the mix the trace
saw. Where ``strace`` is missing or not permitted (no ptrace in a
container), the result says so instead of failing.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass

from pysim.sw.syscalls import SyscallMix, parse_strace_log
from pysim.harness.exclusive import one_core


@dataclass(frozen=True)
class TracedRun:
    """One command, run plain and traced; ``reason`` says why a part is missing."""

    available: bool
    plain_s: float = float("nan")
    traced_s: float = float("nan")
    mix: SyscallMix | None = None
    reason: str = ""

    @property
    def slowdown(self) -> float:
        """Traced time over plain time."""
        return self.traced_s / self.plain_s


def _timed(argv, *, cwd, timeout_s, env) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, timeout=timeout_s,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


@one_core()
def traced_run(argv, *, trace: str | None = None, seccomp_bpf: bool = True, tries: int = 3,
               cwd=None, timeout_s: float = 120.0, env=None) -> TracedRun:
    """Run ``argv`` plain and under ``strace -f``; median seconds of ``tries`` each, and the mix.

    Parameters
    ----------
    trace : str, optional
        strace's ``-e trace=`` set (``"read,write"``, ``"%file"``); every
        call when None.
    seccomp_bpf : bool
        Stop the traced process only at the calls traced (``--seccomp-bpf``;
        needs ``trace``); without it every call stops the process.
    """
    if tries < 1:
        raise ValueError(f"tries must be >= 1, got {tries!r}")
    if seccomp_bpf and trace is None:
        raise ValueError("seccomp_bpf filters the calls traced, so it needs trace= (a set of calls)")
    strace = shutil.which("strace")
    if strace is None:
        return TracedRun(False, reason="strace is not installed")
    env = dict(os.environ if env is None else env)
    try:
        plain = [_timed(list(argv), cwd=cwd, timeout_s=timeout_s, env=env) for _ in range(tries)]
    except (OSError, subprocess.SubprocessError) as e:
        return TracedRun(False, reason=f"the command failed untraced: {e}")
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "trace")
        opts = ["-f", "-qq", "-o", log] + (["-e", f"trace={trace}"] if trace else [])
        opts += ["--seccomp-bpf"] if seccomp_bpf else []
        traced = []
        try:
            for _ in range(tries):
                traced.append(_timed([strace, *opts, "--", *argv], cwd=cwd, timeout_s=timeout_s, env=env))
            with open(log, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except (OSError, subprocess.SubprocessError) as e:
            return TracedRun(False, plain_s=statistics.median(plain),
                             reason=f"strace could not trace the command (ptrace not permitted?): {e}")
    try:
        mix = parse_strace_log(text)
    except ValueError as e:
        return TracedRun(False, plain_s=statistics.median(plain), reason=str(e))
    return TracedRun(True, statistics.median(plain), statistics.median(traced), mix)
