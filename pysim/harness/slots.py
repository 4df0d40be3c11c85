"""CPU slots: at most N notebooks compute at once, and a notebook waiting to measure gives its slot up.

``pysim reproduce`` runs two more workers than it has CPU slots. Each notebook's
kernel takes a slot as it starts (:func:`take`, from ``nb.about``) and keeps
it to the end. A notebook that must wait for the measurement lock
(:mod:`pysim.harness.exclusive`) hands its slot to a waiting notebook
meanwhile, so a core is never idle while another notebook measures alone.

An experiment that needs every core (two threads handing a lock back and
forth) pauses the notebooks holding the other slots while it runs
(:func:`paused`): their kernels' process groups are stopped and continued
after. Their simulations do not depend on the wall clock, so nothing they
compute changes; a watchdog process continues them even if the experiment
dies.

The slots are ``flock``-ed files in a folder named by ``PYSIM_CPU_SLOTS``
(``<folder>:<count>``), each holding its holder's process group; without it
there are no slots and nothing waits or pauses.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pysim.harness import timeline

SLOTS_ENV = "PYSIM_CPU_SLOTS"
_fd = None


def _config():
    value = os.environ.get(SLOTS_ENV, "")
    folder, _, count = value.rpartition(":")
    if not folder or not count.isdigit() or int(count) < 1:
        return None
    return Path(folder), int(count)


def holding() -> bool:
    """True when this process holds a slot."""
    return _fd is not None


def take(poll_s: float = 0.05) -> float:
    """Wait for a free slot and hold it (nothing to do without slots, or when held). Returns seconds waited."""
    global _fd
    cfg = _config()
    if cfg is None or _fd is not None:
        return 0.0
    folder, count = cfg
    t0, asked = time.monotonic(), time.time()
    while True:
        for i in range(count):
            fd = os.open(folder / f"slot{i}", os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpgrp()).encode(), 0)  # whom to pause (see paused)
            _fd = fd
            timeline.record("slot", asked, time.time())
            return time.monotonic() - t0
        time.sleep(poll_s)


def give() -> bool:
    """Give the held slot up; True if there was one."""
    global _fd
    if _fd is None:
        return False
    os.close(_fd)
    _fd = None
    return True


def others() -> list:
    """Process groups of the other notebooks that hold a slot now."""
    cfg = _config()
    if cfg is None:
        return []
    folder, count = cfg
    mine = os.fstat(_fd).st_ino if _fd is not None else None
    groups = []
    for i in range(count):
        path = folder / f"slot{i}"
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            if os.fstat(fd).st_ino == mine:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: nobody to pause
                continue
            except BlockingIOError:
                pass
            text = os.pread(fd, 32, 0).decode().strip()
            if text.isdigit() and int(text) != os.getpgrp():
                groups.append(int(text))
        finally:
            os.close(fd)
    return groups


_WATCHDOG = ("import os, signal, sys\n"
             "sys.stdin.read()  # until the experiment ends, or dies\n"
             "for g in sys.argv[1:]:\n"
             "    try: os.killpg(int(g), signal.SIGCONT)\n"
             "    except OSError: pass\n")


@contextlib.contextmanager
def paused():
    """Stop the other slot holders' process groups for the ``with`` block, and continue them after."""
    groups = others()
    if not groups:
        yield []
        return
    watchdog = subprocess.Popen([sys.executable, "-c", _WATCHDOG, *map(str, groups)], stdin=subprocess.PIPE)
    stopped = []
    try:
        for g in groups:
            try:
                os.killpg(g, signal.SIGSTOP)
                stopped.append(g)
            except OSError:  # it has just finished
                pass
        yield stopped
    finally:
        watchdog.stdin.close()  # the watchdog continues them
        watchdog.wait()
