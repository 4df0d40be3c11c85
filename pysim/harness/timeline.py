"""Where a parallel ``pysim reproduce`` spends its time: notebooks, CPU slots and measurement locks.

Two notebooks that both measure for real take turns on the lock
(:mod:`pysim.harness.exclusive`), and a notebook waits for a CPU slot
(:mod:`pysim.harness.slots`) before it computes. Which of these held a run
up is not visible in a notebook's wall time alone, so while
``PYSIM_TIMELINE`` names a file, every slot taken and every measurement
lock held appends one JSON line to it: who (``PYSIM_NOTEBOOK``), what, and
when it was asked for, got and given back (Unix seconds). Lines are short
and written with one ``O_APPEND`` write each, so processes never interleave
them. :func:`summary` folds the lines into per-notebook totals.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

TIMELINE_ENV = "PYSIM_TIMELINE"
WHO_ENV = "PYSIM_NOTEBOOK"


def record(what: str, asked: float, got: float, released: float | None = None, **extra) -> None:
    """Append one line (nothing to do unless ``PYSIM_TIMELINE`` is set)."""
    path = os.environ.get(TIMELINE_ENV)
    if not path:
        return
    line = {"who": os.environ.get(WHO_ENV, ""), "pid": os.getpid(), "what": what, "asked": asked, "got": got,
            "released": released, **extra}
    data = (json.dumps(line) + "\n").encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError:  # a diagnostic must never fail an experiment
        return
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read(path: Path | str) -> list[dict]:
    """The lines of a timeline file (a torn last line is skipped)."""
    rows = []
    try:
        text = Path(path).read_text()
    except OSError:
        return rows
    for line in text.splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return rows


def summary(rows: list[dict]) -> dict:
    """``{notebook: {"slot_wait_s", "lock_wait_s", "exclusive_s", "one_core_s", "paused_others_s"}}``."""
    out = {}
    for r in rows:
        s = out.setdefault(r.get("who", ""), {"slot_wait_s": 0.0, "lock_wait_s": 0.0, "exclusive_s": 0.0,
                                               "one_core_s": 0.0, "paused_others_s": 0.0})
        wait = max(0.0, r["got"] - r["asked"])
        held = max(0.0, r["released"] - r["got"]) if r.get("released") is not None else 0.0
        if r["what"] == "slot":
            s["slot_wait_s"] += wait
        elif r["what"] in ("exclusive", "one_core"):
            s["lock_wait_s"] += wait
            s[f"{r['what']}_s"] += held
            if r.get("pause"):
                s["paused_others_s"] += held
    return out
