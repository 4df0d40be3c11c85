"""Records whose every number carries its source."""
from __future__ import annotations

import dataclasses
import numbers
import types

#: The kinds of source a number may have (DESIGN section 6).
SOURCE_KINDS = ("paper", "datasheet", "derived", "assumed", "calibrated", "standard")


def check_sources(record) -> None:
    """Raise ValueError unless every numeric field of a dataclass has a source.

    ``record.sources`` maps field names to text that starts with one of
    SOURCE_KINDS followed by a colon, e.g. ``"paper: §4.1"``.
    """
    sources = record.sources
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.name == "sources" or value is None:
            continue
        numeric = isinstance(value, numbers.Number) and not isinstance(value, bool)
        numeric = numeric or (isinstance(value, tuple) and value and isinstance(value[0], (numbers.Number, tuple)))
        if not numeric:
            continue
        src = sources.get(f.name)
        if src is None:
            raise ValueError(f"{type(record).__name__}.{f.name}={value!r} has no source")
        kind = src.split(":", 1)[0]
        if kind not in SOURCE_KINDS:
            raise ValueError(f"{type(record).__name__}.{f.name}: source {src!r} must start with one of {SOURCE_KINDS}")


def frozen_sources(d: dict) -> types.MappingProxyType:
    """A read-only copy of a sources dict, so records stay immutable."""
    return types.MappingProxyType(dict(d))
