"""One module per paper: pysim.models.<id>. Each is pure: parameters in, DataFrames out.

Every module exposes ``Params`` (a frozen dataclass whose fields carry their
provenance), one function per artifact with the signature
``f(params=None, *, rng=0, quick=False) -> DataFrame``, and ``CALIBRATION``:
the published cells its calibrated parameters were fitted to.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Fit:
    """A calibrated parameter, the single published cell it was fitted to, and
    the bracket the fit searches (see pysim.calibration)."""

    parameter: str
    artifact: str
    row: str
    column: str
    bracket: tuple = (0.0, 1.0)
    tolerance: float = 0.01  # how close the fitted cell must land; wider only for integer parameters


def require_positive(params) -> None:
    """ValueError naming the first field of a Params dataclass that is not > 0."""
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        if not value > 0:
            raise ValueError(f"{f.name} must be > 0, got {value!r}")
