"""Simultaneous multithreading: two programs on one package's two logical CPUs, from demand vectors.

A :class:`Program` is its solo time, solo instruction rate and events per
instruction (L2 misses, FP uops), as performance counters give them. On one
package the two share the issue slots, the L2 and the FP unit.
:func:`corun_stretch` solves for each program's stretch (co-run time over
solo time) as the fixed point of

    tau_i = e_i (1 + busy_j) + (1 - e_i)(1 + k r_j M_j) + g F_i r_j F_j

where ``e`` is the busy share of solo time (the solo instruction rate over
the package's issue peak), ``busy_j`` the share of wall time the sibling
spends issuing, ``r = 1/tau`` a program's progress rate, ``M`` its L2 misses
(millions a second) and ``F`` its FP uops (1e7 a second) when alone; ``k``
(``l2_conflict``) prices the sibling's misses, ``g`` (``fp_conflict``) the
FP unit's collisions. :func:`counters` emulates the counts a sample would
read beside a sibling.

>>> busy = Program("busy", 100.0, inst_per_s=4e9, l2_per_inst=0.0, fp_per_inst=0.0)
>>> [round(t, 6) for t in corun_stretch(busy, busy, issue_peak_inst_per_s=2e9)]  # the slots shared: twice as long
[2.0, 2.0]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Program:
    """A program's demand vector: solo time, solo instruction rate, events per instruction."""

    name: str
    solo_s: float
    inst_per_s: float
    l2_per_inst: float
    fp_per_inst: float

    @property
    def l2_per_s(self) -> float:
        return self.inst_per_s * self.l2_per_inst

    @property
    def fp_per_s(self) -> float:
        return self.inst_per_s * self.fp_per_inst


def corun_stretch(a: Program, b: Program | None, *, issue_peak_inst_per_s: float, l2_conflict: float = 0.0,
                  fp_conflict: float = 0.0, iterations: int = 400) -> tuple:
    """(a's stretch, b's stretch) on one package; a program alone (``b`` None) keeps its solo speed."""
    if b is None:
        return 1.0, np.nan
    if not issue_peak_inst_per_s > 0 or l2_conflict < 0 or fp_conflict < 0 or iterations < 1:
        raise ValueError("issue_peak_inst_per_s > 0, non-negative conflicts and iterations >= 1 are needed")
    e = np.array([min(1.0, a.inst_per_s / issue_peak_inst_per_s), min(1.0, b.inst_per_s / issue_peak_inst_per_s)])
    m = np.array([a.l2_per_s, b.l2_per_s]) / 1e6
    f = np.array([a.fp_per_s, b.fp_per_s]) / 1e7
    tau, sig = np.ones(2), np.ones(2)
    for _ in range(iterations):
        r = 1.0 / tau
        busy = e * sig / tau
        sig_new = 1.0 + busy[::-1]
        stall = 1.0 + l2_conflict * r[::-1] * m[::-1]
        tau_new = e * sig_new + (1.0 - e) * stall + fp_conflict * f * r[::-1] * f[::-1]
        if np.max(np.abs(tau_new - tau)) < 1e-12:
            tau = tau_new
            break
        tau, sig = 0.5 * (tau + tau_new), sig_new
    return float(tau[0]), float(tau[1])


def counters(a: Program, b: Program | None, sample_s: float, *, issue_peak_inst_per_s: float,
             l2_conflict: float = 0.0, fp_conflict: float = 0.0) -> dict:
    """The instructions, L2 misses and FP uops a counter sample of ``sample_s`` reads for ``a`` beside
    ``b``: fewer instructions as ``a`` stretches, and more misses per instruction as ``b``'s misses
    evict ``a``'s lines."""
    kw = {"issue_peak_inst_per_s": issue_peak_inst_per_s, "l2_conflict": l2_conflict, "fp_conflict": fp_conflict}
    ta, tb = corun_stretch(a, b, **kw)
    inst = a.inst_per_s * sample_s / ta
    inflation = 1.0 if b is None else 1.0 + l2_conflict * b.l2_per_s / 1e6 / tb
    return {"inst": inst, "l2": inst * a.l2_per_inst * inflation, "fp": inst * a.fp_per_inst}
