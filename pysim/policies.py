"""Policies written in Python, compiled by Numba, run inside the C loops.

A reader edits a replacement policy or a queueing discipline here (or in a
notebook), and the cache, TLB or station calls it as a C function pointer
(Numba's ``cfunc``, the ``scipy.LowLevelCallable`` pattern), so a student's
policy runs at compiled speed without touching C.

Replacement policy: ``policy(event, set_index, way, meta, ways, now) -> way``

* ``event`` is HIT or FILL (``way`` is the way concerned; return anything)
  or VICTIM (``way`` is -1; return the way to evict, in ``[0, ways)``);
* ``meta`` is the set's per-way int64 state, the policy's to keep;
* ``now`` is the access counter (1, 2, ...).

Empty ways are filled before any victim is asked for, lowest way first.

Station discipline: ``select(n, arrival_s, service_s, klass) -> index`` of the
waiting job to start next, the arrays holding the ``n`` waiting jobs in
arrival order.
"""
from __future__ import annotations

import functools

import numba
from numba import types

HIT, FILL, VICTIM = 0, 1, 2

ASSOC_SIGNATURE = types.int64(types.int32, types.int64, types.int32, types.CPointer(types.int64), types.int32,
                              types.int64)
SELECT_SIGNATURE = types.int32(types.int32, types.CPointer(types.float64), types.CPointer(types.float64),
                               types.CPointer(types.int32))


def assoc_policy(fn):
    """Compile a replacement policy for :class:`pysim.hw.Cache` / :class:`pysim.hw.TLB` (``policy="custom"``)."""
    kernel = numba.njit(fn)

    @numba.cfunc(ASSOC_SIGNATURE, nopython=True)
    def compiled(event, set_index, way, meta_ptr, ways, now):
        return kernel(event, set_index, way, numba.carray(meta_ptr, (ways,)), ways, now)

    return compiled


def station_select(fn):
    """Compile a queueing discipline for :class:`pysim.engine.Station` (``discipline="custom"``)."""
    kernel = numba.njit(fn)

    @numba.cfunc(SELECT_SIGNATURE, nopython=True)
    def compiled(n, arrival_ptr, service_ptr, klass_ptr):
        return kernel(n, numba.carray(arrival_ptr, (n,)), numba.carray(service_ptr, (n,)),
                      numba.carray(klass_ptr, (n,)))

    return compiled


def lru(event, set_index, way, meta, ways, now):
    """Least recently used: remember each way's last use, evict the oldest."""
    if event != VICTIM:
        meta[way] = now
        return 0
    victim = 0
    for i in range(1, ways):
        if meta[i] < meta[victim]:
            victim = i
    return victim


def shortest_job_first(n, arrival_s, service_s, klass):
    """Start the waiting job with the least service demand (earliest arrival on ties)."""
    best = 0
    for i in range(1, n):
        if service_s[i] < service_s[best]:
            best = i
    return best


@functools.cache
def compiled_lru():
    """:func:`lru`, compiled once per process."""
    return assoc_policy(lru)


@functools.cache
def compiled_shortest_job_first():
    """:func:`shortest_job_first`, compiled once per process."""
    return station_select(shortest_job_first)
