"""One module per paper: pysim.models.<id>. Each is pure: parameters in, DataFrames out.

Every module exposes:

* ``Params``: a frozen dataclass deriving from :class:`pysim.params.ModelParams`
  whose every field declares its provenance and allowed range;
* one function per artifact, ``f(params=None, *, rng=0, quick=False) -> DataFrame``;
* ``CALIBRATION``: a :class:`Fit` per calibrated parameter, naming the one
  published cell it was fitted to (these cells count as *fits*);
* ``INPUTS``: :class:`Inputs` naming the published cells the model takes as
  given, or that follow from given values by arithmetic alone (they count
  as *inputs*, never as predictions);
* ``COUNTERFACTUALS``: named :class:`Counterfactual` parameter changes (the
  mechanism switched off, the baseline system, a value the paper rules
  out). Every claim names one under which it must be false.

What a model may import is listed in :data:`ALLOWED_IMPORTS`; the contract
test enforces it.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from types import MappingProxyType

#: Modules a paper's model may import: the core, the shared mechanisms and
#: workloads, and the scientific stack. Never the ledger: models do not read
#: published results.
ALLOWED_IMPORTS = (
    "pysim.engine", "pysim.rng", "pysim.units", "pysim.queueing", "pysim.hw", "pysim.sw", "pysim.workloads",
    "pysim.params", "pysim.models", "pysim.errors", "pysim.policies", "pysim.harness", "pysim.jvm",
    "pysim.network",
    "__future__", "dataclasses", "math", "itertools", "functools", "collections", "typing", "enum", "bisect",
    "heapq", "statistics", "warnings", "struct", "ipaddress", "zlib", "hashlib", "re", "string",
    "numpy", "pandas", "scipy", "numba", "networkx", "pulp",
)


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

    @property
    def cell(self) -> tuple:
        return (self.artifact, self.row, self.column)


@dataclass(frozen=True)
class Inputs:
    """Published cells the model takes as given (through ``parameters``), or that
    follow from given values by arithmetic alone; ``why`` says which it is."""

    parameters: tuple
    cells: tuple  # of (artifact, row, column)
    why: str

    def __post_init__(self):
        object.__setattr__(self, "parameters", tuple(self.parameters))
        object.__setattr__(self, "cells", tuple(tuple(c) for c in self.cells))
        for c in self.cells:
            if len(c) != 3:
                raise ValueError(f"an input cell is (artifact, row, column), got {c!r}")
        if not self.why.strip():
            raise ValueError("Inputs needs a why")


def cells(artifact: str, rows, columns) -> tuple:
    """Every (artifact, row, column) of ``rows`` x ``columns``: a shorthand for Inputs."""
    return tuple((artifact, str(r), str(c)) for r, c in itertools.product(rows, columns))


@dataclass(frozen=True)
class Counterfactual:
    """A named change of parameters under which the paper's claims must fail."""

    name: str
    changes: MappingProxyType = field(default_factory=dict)
    why: str = ""

    def __post_init__(self):
        object.__setattr__(self, "changes", MappingProxyType(dict(self.changes)))
        if not self.changes:
            raise ValueError(f"counterfactual {self.name!r} changes nothing")
        if not self.why.strip():
            raise ValueError(f"counterfactual {self.name!r} needs a why")

    def apply(self, params):
        """``params`` with this counterfactual's changes (checked like any Params)."""
        import dataclasses

        return dataclasses.replace(params, **self.changes)


def input_cells(model) -> set:
    """(artifact, row, column) of every cell a model declares as an input."""
    return {c for i in getattr(model, "INPUTS", ()) for c in i.cells}


def fitted_cells(model) -> set:
    """(artifact, row, column) of every cell the model was calibrated on."""
    return {f.cell for f in getattr(model, "CALIBRATION", ())}


def counterfactuals(model) -> dict:
    """The model's counterfactuals by name."""
    return {c.name: c for c in getattr(model, "COUNTERFACTUALS", ())}


def require_positive(params) -> None:
    """ValueError naming the first field of a Params dataclass that is not > 0.

    Superseded by :class:`pysim.params.ModelParams`, which checks each field
    against its declared range; kept until every model declares ranges.
    """
    import dataclasses

    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        if not value > 0:
            raise ValueError(f"{f.name} must be > 0, got {value!r}")
