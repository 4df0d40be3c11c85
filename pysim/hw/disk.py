"""Mechanical disks: a data-sheet record (DiskSpec) and the C model behind it (Disk).

The seek curve is the usual two-part one, a + b*sqrt(d) for short seeks and
c + e*d for long ones, joined smoothly. Its four coefficients and the join
are derived from the three numbers data sheets print: track-to-track,
average and full-stroke seek, with "average" as data sheets define it (the
mean over all start/end pairs with a non-zero distance).
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pysim import _native
from pysim.hw.sourced import check_sources, frozen_sources

#: Request schedulers by name, as the C core numbers them.
SCHEDULERS = {"fcfs": 0, "sstf": 1, "scan": 2, "cscan": 3}


@dataclass(frozen=True)
class DiskSpec:
    """A disk as its data sheet describes it. Times in seconds, sizes in bytes."""

    name: str
    rpm: float
    cylinders: int
    heads: int
    zones: tuple  # ((first_cylinder, sectors_per_track), ...), outermost first
    track_to_track_s: float
    average_seek_s: float
    full_stroke_s: float
    head_switch_s: float
    overhead_s: float
    bus_bytes_per_s: float
    buffer_bytes: int
    sector_bytes: int = 512
    sources: types.MappingProxyType = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "sources", frozen_sources(self.sources))
        check_sources(self)
        if not (0 < self.track_to_track_s <= self.average_seek_s <= self.full_stroke_s):
            raise ValueError(f"{self.name}: need 0 < track_to_track_s <= average_seek_s <= full_stroke_s")

    @property
    def capacity_bytes(self) -> int:
        """Formatted capacity from the zone table."""
        bounds = [z[0] for z in self.zones[1:]] + [self.cylinders]
        return sum((end - z[0]) * self.heads * z[1] * self.sector_bytes for z, end in zip(self.zones, bounds))

    def seek_curve(self) -> dict:
        """Derived seek coefficients: boundary (cylinders), a, b (s, s/sqrt(cyl)), c, e (s, s/cyl)."""
        return _fit_seek(self.cylinders, self.track_to_track_s, self.average_seek_s, self.full_stroke_s)


def _curve_for_boundary(C, t1, tfull, B):
    """Coefficients through (1, t1) and (C-1, tfull), smooth at B."""
    sB = np.sqrt(B)
    b = (tfull - t1) / (sB / 2 + (C - 1) / (2 * sB) - 1)
    a = t1 - b
    e = b / (2 * sB)
    c = a + b * sB / 2
    return a, b, c, e


def _mean_seek(C, a, b, c, e, B):
    d = np.arange(1, C, dtype=np.float64)
    t = np.where(d < B, a + b * np.sqrt(d), c + e * d)
    w = C - d  # pairs at distance d, per data-sheet weighting
    return float(np.sum(w * t) / np.sum(w))


def _fit_seek(C, t1, tavg, tfull):
    lo, hi = 2.0, float(C - 1)
    f = lambda B: _mean_seek(C, *_curve_for_boundary(C, t1, tfull, B), B) - tavg  # noqa: E731
    if f(lo) * f(hi) > 0:
        raise ValueError(f"no two-part seek curve gives average {tavg * 1e3:.3g} ms between "
                         f"{t1 * 1e3:.3g} and {tfull * 1e3:.3g} ms over {C} cylinders")
    for _ in range(80):  # bisection: the mean is monotone in B
        mid = 0.5 * (lo + hi)
        if f(lo) * f(mid) <= 0:
            hi = mid
        else:
            lo = mid
    B = 0.5 * (lo + hi)
    a, b, c, e = _curve_for_boundary(C, t1, tfull, B)
    return {"boundary_cyl": float(B), "a_s": float(a), "b_s": float(b), "c_s": float(c), "e_s": float(e)}


class Disk:
    """The C disk model for a :class:`DiskSpec`.

    ``run`` serves a batch of requests (sorted by arrival) with a scheduler
    and returns per-request times; the disk keeps its head position, clock
    and read-ahead buffer between batches until :meth:`reset`.
    """

    def __init__(self, spec: DiskSpec):
        self.spec = spec
        k = spec.seek_curve()
        self._d = _native.Disk(spec.cylinders, spec.heads, spec.sector_bytes, spec.rpm, list(spec.zones),
                               k["boundary_cyl"], k["a_s"], k["b_s"], k["c_s"], k["e_s"], spec.head_switch_s,
                               spec.overhead_s, spec.bus_bytes_per_s, spec.buffer_bytes // spec.sector_bytes)

    @property
    def capacity_sectors(self) -> int:
        return self._d.capacity_sectors

    def seek_time_s(self, distance_cyl: int) -> float:
        """Seek time for a distance in cylinders."""
        if distance_cyl < 0:
            raise ValueError(f"distance_cyl must be >= 0, got {distance_cyl}")
        return self._d.seek_time(int(distance_cyl))

    def locate(self, lba: int) -> tuple:
        """(cylinder, head, sector, sectors_per_track) of a logical block."""
        return self._d.locate(int(lba))

    def reset(self) -> None:
        """Head to cylinder 0, empty buffer, clock 0."""
        self._d.reset()

    def serve(self, arrival_s: float, lba: int, sectors: int, write: bool = False) -> float:
        """One request, first come first served after the requests before it: its finish time. The
        scalar path of :meth:`run` for a model that hands the disk one request at a time."""
        if sectors < 1 or lba < 0 or lba + sectors > self.capacity_sectors:
            raise ValueError(f"request [{lba}, {lba + sectors}) must hold a sector and lie within the disk "
                             f"({self.capacity_sectors} sectors)")
        if not hasattr(self, "_one"):
            self._one = [np.empty(1) for _ in range(5)] + [np.empty(1, np.uint8)]
        self._d.run(SCHEDULERS["fcfs"], np.array([arrival_s], np.float64), np.array([lba], np.uint64),
                    np.array([sectors], np.uint32), np.array([int(write)], np.uint8), *self._one)
        return float(self._one[1][0])

    def run(self, arrival_s, lba, sectors, write=None, *, scheduler="fcfs") -> pd.DataFrame:
        """Serve requests; returns a DataFrame with start_s, finish_s, seek_s, rotation_s,
        transfer_s, buffer_hit and response_s per request (in request order).

        Raises
        ------
        ValueError
            Unknown scheduler, arrays of different lengths, unsorted arrivals,
            zero-sector requests or LBAs past the end of the disk.
        """
        if scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler must be one of {sorted(SCHEDULERS)}, got {scheduler!r}")
        arr = np.ascontiguousarray(arrival_s, dtype=np.float64)
        n = arr.size
        lba = np.ascontiguousarray(lba, dtype=np.uint64)
        sectors = np.ascontiguousarray(sectors, dtype=np.uint32)
        write = np.zeros(n, np.uint8) if write is None else np.ascontiguousarray(write, dtype=np.uint8)
        out = {k: np.empty(n) for k in ("start_s", "finish_s", "seek_s", "rotation_s", "transfer_s")}
        hit = np.empty(n, np.uint8)
        self._d.run(SCHEDULERS[scheduler], arr, lba, sectors, write, out["start_s"], out["finish_s"],
                    out["seek_s"], out["rotation_s"], out["transfer_s"], hit)
        df = pd.DataFrame(out)
        df["buffer_hit"] = hit.astype(bool)
        df["response_s"] = df["finish_s"] - arr
        return df
