"""Cost recipes: what a piece of work does, counted, times what each operation costs.

A :class:`Recipe` counts operations (``ops``: how many times each runs) and
the bytes that per-byte operations touch (``nbytes``). A
:class:`pysim.hw.CpuCostModel` prices them. Recipes add (this work, then
that) and scale (n times this work), so a configuration is written as the
operations it performs, and comparing two configurations compares their
recipes:

>>> from pysim.hw import CpuCostModel
>>> cpu = CpuCostModel(1e8, fixed_s={"trap": 1e-6, "getpid": 1e-7}, per_byte_s={"copy": 1e-9})
>>> call = Recipe(ops={"trap": 1, "getpid": 1})
>>> round((3 * call).seconds(cpu) * 1e6, 3)
3.3
>>> round(Recipe(nbytes={"copy": 4096}).seconds(cpu) * 1e6, 3)
4.096
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field

from pysim.hw.cpu import CpuCostModel


def _frozen(d) -> types.MappingProxyType:
    return types.MappingProxyType(dict(d))


@dataclass(frozen=True)
class Recipe:
    """Operation counts (``ops``) and bytes per per-byte operation (``nbytes``) of one piece of work."""

    ops: types.MappingProxyType = field(default_factory=dict)
    nbytes: types.MappingProxyType = field(default_factory=dict)

    def __post_init__(self):
        for name in ("ops", "nbytes"):
            table = dict(getattr(self, name))
            for op, n in table.items():
                if not n >= 0:
                    raise ValueError(f"Recipe {name}[{op!r}] must be >= 0, got {n!r}")
            object.__setattr__(self, name, _frozen(table))

    def __add__(self, other: "Recipe") -> "Recipe":
        if not isinstance(other, Recipe):
            return NotImplemented
        ops, nbytes = dict(self.ops), dict(self.nbytes)
        for op, n in other.ops.items():
            ops[op] = ops.get(op, 0) + n
        for op, n in other.nbytes.items():
            nbytes[op] = nbytes.get(op, 0) + n
        return Recipe(ops, nbytes)

    def __mul__(self, k: float) -> "Recipe":
        if not k >= 0:
            raise ValueError(f"a recipe scales by a count >= 0, got {k!r}")
        return Recipe({op: n * k for op, n in self.ops.items()}, {op: n * k for op, n in self.nbytes.items()})

    __rmul__ = __mul__

    def breakdown(self, cpu: CpuCostModel) -> dict:
        """Seconds per operation (fixed and per-byte parts together).

        Raises
        ------
        KeyError
            If the CPU has no cost for an operation the recipe counts.
        """
        out = {}
        for op, n in self.ops.items():
            if op not in cpu.fixed_s:
                raise KeyError(f"the CPU has no fixed cost for {op!r}; it prices {sorted(cpu.fixed_s)}")
            out[op] = out.get(op, 0.0) + n * cpu.fixed_s[op]
        for op, n in self.nbytes.items():
            if op not in cpu.per_byte_s:
                raise KeyError(f"the CPU has no per-byte cost for {op!r}; it prices {sorted(cpu.per_byte_s)}")
            out[op] = out.get(op, 0.0) + n * cpu.per_byte_s[op]
        return out

    def seconds(self, cpu: CpuCostModel) -> float:
        """Seconds the whole recipe takes on ``cpu``."""
        return sum(self.breakdown(cpu).values())
