"""Model parameters whose provenance and allowed range are data.

Every field of a model's ``Params`` is declared with one of six helpers, one
per kind of provenance (DESIGN section 6). Each stores its kind, its source
and its allowed range in the field's metadata, where the lab reads them:
:func:`table` lists them, :meth:`ModelParams.__post_init__` checks every value
against its range, and the contract test checks that calibrated fields match
the model's ``CALIBRATION`` and input fields its ``INPUTS``.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Params(ModelParams):
...     link_gbit_per_s: float = stated(1.28, "§4: Myrinet link rate")
...     copy_us_per_kb: float = calibrated(2.0)
...     hops: int = assumed(2, "one switch between the hosts", ge=1)
>>> Params(hops=0)
Traceback (most recent call last):
...
ValueError: hops must be >= 1, got 0

Ranges: ``gt``, ``ge``, ``lt``, ``le`` bound a number; ``choices`` lists the
allowed values. A number with no bound given must be > 0, the common case
(a cost, a size, a rate). An ``int`` default makes the field integral, a
``bool`` default makes it a switch.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import pandas as pd

#: The provenance vocabulary, in the order a table lists it.
KINDS = ("stated", "derived", "catalog", "assumed", "calibrated", "input")

_UNSET = object()


def _field(kind, default, source, *, gt=None, ge=None, lt=None, le=None, choices=None):
    if kind not in ("calibrated",) and not (isinstance(source, str) and source.strip()):
        raise ValueError(f"a {kind} parameter needs its source as text, got {source!r}")
    bounds = {"gt": gt, "ge": ge, "lt": lt, "le": le}
    given = {k: v for k, v in bounds.items() if v is not None}
    is_number = isinstance(default, numbers.Real) and not isinstance(default, bool)
    if is_number and not given and choices is None:
        given = {"gt": 0}
    meta = {"provenance": kind, "source": source or "", "bounds": given,
            "choices": tuple(choices) if choices is not None else None}
    if isinstance(default, (list, dict, set)):
        raise TypeError(f"a parameter's default must be immutable (a tuple, not a {type(default).__name__})")
    return dataclasses.field(default=default, metadata=meta)


def stated(default, where: str, **limits):
    """A constant the paper gives; ``where`` cites the section or table ("§4", "Table 2")."""
    return _field("stated", default, where, **limits)


def derived(default, how: str, **limits):
    """Computed from stated values; ``how`` says from which and how."""
    return _field("derived", default, how, **limits)


def from_catalog(record, attribute: str, **limits):
    """A value of a hardware catalog record, referenced rather than copied."""
    if not hasattr(record, attribute):
        raise AttributeError(f"{type(record).__name__} {getattr(record, 'name', record)!r} has no {attribute!r}")
    return _field("catalog", getattr(record, attribute), f"{getattr(record, 'name', type(record).__name__)}."
                  f"{attribute}", **limits)


def assumed(default, why: str, **limits):
    """Not in the paper; ``why`` says why the value is plausible."""
    return _field("assumed", default, why, **limits)


def calibrated(default, note: str = "", **limits):
    """Fitted on one published cell, which the model's ``CALIBRATION`` names."""
    return _field("calibrated", default, note, **limits)


def given(default, cells: str, **limits):
    """A published result the model takes as an input; ``cells`` says which (the
    model's ``INPUTS`` names them exactly, so the scorecard counts them apart)."""
    return _field("input", default, cells, **limits)


def provenance(params_cls) -> dict:
    """``{field name: (kind, source)}`` of a Params class; ValueError for a field declared without a helper."""
    out = {}
    for f in dataclasses.fields(params_cls):
        kind = f.metadata.get("provenance")
        if kind not in KINDS:
            raise ValueError(f"{params_cls.__qualname__}.{f.name} has no provenance: declare it with "
                             f"stated(), derived(), from_catalog(), assumed(), calibrated() or given()")
        out[f.name] = (kind, f.metadata.get("source", ""))
    return out


def allowed(f: dataclasses.Field) -> str:
    """The allowed range of a field, in words ("> 0", "in [0, 1]", "one of 'a', 'b'")."""
    if f.metadata.get("choices") is not None:
        return "one of " + ", ".join(repr(c) for c in f.metadata["choices"])
    b = f.metadata.get("bounds", {})
    words = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
    return " and ".join(f"{words[k]} {v}" for k, v in b.items()) or "any value"


def _check_value(name, value, f, default):
    if f.metadata.get("choices") is not None:
        if value not in f.metadata["choices"]:
            raise ValueError(f"{name} must be {allowed(f)}, got {value!r}")
        return
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be True or False, got {value!r}")
        return
    if isinstance(default, numbers.Real):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} must be a number, got {value!r}")
        if isinstance(default, numbers.Integral) and not float(value).is_integer():
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        if isinstance(value, float) and math.isnan(value):
            raise ValueError(f"{name} must be a number, got nan")
        b = f.metadata.get("bounds", {})
        ok = (("gt" not in b or value > b["gt"]) and ("ge" not in b or value >= b["ge"])
              and ("lt" not in b or value < b["lt"]) and ("le" not in b or value <= b["le"]))
        if not ok:
            raise ValueError(f"{name} must be {allowed(f)}, got {value!r}")


@dataclass(frozen=True)
class ModelParams:
    """Base of every model's ``Params``: checks each value against its declared range.

    A subclass with rules across fields overrides ``__post_init__`` and calls
    ``super().__post_init__()`` first.
    """

    def __post_init__(self):
        for f in dataclasses.fields(self):
            if "provenance" not in f.metadata:
                continue  # provenance() and the contract test report the missing declaration
            _check_value(f.name, getattr(self, f.name), f, f.default)


def bad_values(f: dataclasses.Field) -> list:
    """Values outside a field's allowed range, for tests that bad input is refused."""
    if f.metadata.get("choices") is not None:
        return ["not-a-choice"]
    if isinstance(f.default, bool) or not isinstance(f.default, numbers.Real):
        return []
    out = [float("nan")]
    b = f.metadata.get("bounds", {})
    if "gt" in b:
        out.append(b["gt"])
    if "ge" in b:
        out.append(b["ge"] - 1)
    if "lt" in b:
        out.append(b["lt"])
    if "le" in b:
        out.append(b["le"] + 1)
    return out


def table(params, fits=(), targets=None) -> pd.DataFrame:
    """One row per parameter: value, provenance, source, allowed range, and for a
    calibrated one the cell it was fitted to (``fits``: the model's CALIBRATION;
    ``targets``: optional ``{parameter: text}`` naming each fit's published value)."""
    targets = targets or {}
    fit_of = {fit.parameter: fit for fit in fits}
    rows = []
    for f in dataclasses.fields(params):
        kind, source = f.metadata.get("provenance", "?"), f.metadata.get("source", "")
        if kind == "calibrated" and f.name in fit_of:
            fit = fit_of[f.name]
            source = f"fitted to {fit.artifact}[{fit.row}, {fit.column}]" + (f": {source}" if source else "")
        value = getattr(params, f.name)
        if isinstance(value, tuple) and len(value) > 4:
            value = f"({len(value)} values)"
        rows.append({"parameter": f.name, "value": value, "provenance": kind, "source": source,
                     "allowed": allowed(f), "fitted to": targets.get(f.name, "")})
    return pd.DataFrame(rows).set_index("parameter")
