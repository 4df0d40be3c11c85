"""Real experiments that would disturb each other never run at once on this machine.

``make reproduce`` runs two notebooks at once, and ``make test`` runs notebooks
beside the suite. Two then-vs-now experiments that overlap disturb each
other: a lock hand-off between two threads (kim) stalls for whole time
slices while another notebook pins CPU hogs to one core (bruno), and both
report the other's load as their own. So every real measurement holds a
machine-wide lock while it runs; simulation never takes it.

* :func:`exclusive`: the experiment uses the whole machine (several threads
  or processes, CPU hogs, pinning, a server and its clients). It runs alone.
* :func:`one_core`: a single-threaded timing loop. Several may run at once,
  one per core, but never beside an exclusive experiment.

A notebook that waits for the lock lends its CPU slot (:mod:`pysim.harness.slots`)
to another notebook meanwhile. The lock is an ``flock`` (exclusive or shared) on a file in the temporary
directory, so it is dropped when its holder exits or dies. It is re-entrant
in a process, where the outermost holder's mode stands; a child process
started while it is held (a server under test, a compiled snippet) inherits
the right to measure through the environment.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from pathlib import Path

from pysim.harness import slots, timeline

HELD_ENV = "PYSIM_MEASURING"
_depth = 0


def lock_path() -> Path:
    """The lock file every pysim process on this machine agrees on (``PYSIM_MEASURE_LOCK`` overrides it)."""
    return Path(os.environ.get("PYSIM_MEASURE_LOCK") or Path(tempfile.gettempdir()) / "pysim-measure.lock")


def exclusive(*, pause: bool = False):
    """Hold the measurement lock alone for the ``with`` block (or the decorated call).

    Blocks while any other process measures; ``waited_s()`` inside the block says how long. With
    ``pause``, for an experiment that needs every core, the notebooks computing in the other CPU
    slots are also stopped until it ends (:func:`pysim.harness.slots.paused`).

    Examples
    --------
    >>> from pysim.harness import exclusive
    >>> with exclusive():
    ...     pass
    """
    return _held(fcntl.LOCK_EX, pause=pause)


def one_core():
    """Hold the measurement lock shared, for a single-threaded experiment: it waits only for an
    exclusive holder, and excludes only exclusive experiments."""
    return _held(fcntl.LOCK_SH)


@contextlib.contextmanager
def _held(mode: int, pause: bool = False):
    global _depth, _waited
    if _depth or _ancestor_holds():
        _depth += 1
        try:
            yield
        finally:
            _depth -= 1
        return
    path = lock_path()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        t0, asked = time.monotonic(), time.time()
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:  # another experiment runs: lend this notebook's CPU slot while waiting
            lent = slots.give()
            fcntl.flock(fd, mode)
            if lent:
                slots.take()
        _waited = time.monotonic() - t0
        got = time.time()
        before = os.environ.get(HELD_ENV)
        os.environ[HELD_ENV] = str(os.getpid())
        _depth += 1
        try:
            with slots.paused() if pause else contextlib.nullcontext():
                yield
        finally:
            _depth -= 1
            timeline.record("exclusive" if mode == fcntl.LOCK_EX else "one_core", asked, got, time.time(),
                            pause=pause)
            if before is None:
                os.environ.pop(HELD_ENV, None)
            else:
                os.environ[HELD_ENV] = before
    finally:
        os.close(fd)  # closing the only descriptor releases the flock


_waited = 0.0


def _ancestor_holds() -> bool:
    """True when a process above this one set HELD_ENV while it held the lock."""
    holder = os.environ.get(HELD_ENV, "")
    if not holder.isdigit():
        return False
    pid = os.getppid()
    for _ in range(64):
        if pid <= 1:
            return False
        if str(pid) == holder:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the command name is the state, then ppid
    return False


def waited_s() -> float:
    """Seconds the latest outermost holder in this process waited for the lock."""
    return _waited
