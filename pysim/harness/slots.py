"""CPU slots: at most N notebooks compute at once, and a notebook waiting to measure gives its slot up.

``pysim reproduce`` runs one more worker than it has CPU slots. Each notebook's
kernel takes a slot as it starts (:func:`take`, from ``nb.about``) and keeps
it to the end. A notebook that must wait for the measurement lock
(:mod:`pysim.harness.exclusive`) hands its slot to a waiting notebook
meanwhile, so a core is never idle while another notebook measures alone.

The slots are ``flock``-ed files in a folder named by ``PYSIM_CPU_SLOTS``
(``<folder>:<count>``); without it there are no slots and nothing waits.
"""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

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
    t0 = time.monotonic()
    while True:
        for i in range(count):
            fd = os.open(folder / f"slot{i}", os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            _fd = fd
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
