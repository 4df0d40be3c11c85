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

Papers price the same kinds of operation, so the names in
:data:`STANDARD_OPS` mean the same thing in every model that uses them.
What a recipe does not explain is a *residual*: :func:`fit_residual` names
it, prices it from one measurement and refuses a recipe that already costs
more than was measured. :class:`Work` keeps user-mode and kernel-mode
recipes apart, for papers that report the two times.
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field

from pysim.hw.cpu import CpuCostModel


#: The shared vocabulary of operations. A model may count others; these mean the same everywhere.
STANDARD_OPS = types.MappingProxyType({
    # fixed costs, per occurrence
    "call": "a direct procedure call and return",
    "virtual_call": "a call through a virtual-function table (C++) or invokevirtual (Java)",
    "interface_call": "a call through an interface (invokeinterface), with its method lookup",
    "proxy": "one indirection through a proxy or handle object to the real one",
    "lock": "an uncontended lock acquire and release",
    "thread_switch": "a switch between two threads of one address space",
    "context_switch": "a switch between two processes (address spaces)",
    "trap": "entering the kernel and returning (the crossing, without the call's own work)",
    "fault": "a page or protection fault taken and handled, back to the faulting instruction",
    "marshal": "marshalling one argument or field (the fixed part)",
    # per-byte costs
    "copy": "copying a byte (memcpy, copyin/copyout)",
    "checksum": "checksumming a byte",
    "serialise": "serialising a byte of an object graph",
})


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


def fit_residual(recipe: Recipe, cpu: CpuCostModel, measured_s: float, name: str) -> tuple:
    """Name what ``recipe`` does not explain of a measured ``measured_s``.

    Returns ``(recipe + one 'name', cpu with 'name' priced at the rest)``, so
    the recipe then costs ``measured_s`` exactly and the residual shows up,
    named, in every breakdown.

    Raises
    ------
    ValueError
        If the recipe already costs more than was measured (its counts or unit
        costs are too high, and no residual can fix that), or the name is taken.
    """
    if name in recipe.ops or name in cpu.fixed_s:
        raise ValueError(f"the residual's name {name!r} is already an operation")
    if not measured_s > 0:
        raise ValueError(f"measured_s must be > 0, got {measured_s!r}")
    explained = recipe.seconds(cpu)
    if explained > measured_s:
        raise ValueError(f"the recipe already costs {explained:.4g} s, more than the {measured_s:.4g} s measured; "
                         f"its counts or unit costs are too high")
    fixed = dict(cpu.fixed_s)
    fixed[name] = measured_s - explained
    return recipe + Recipe(ops={name: 1}), CpuCostModel(cpu.clock_hz, fixed, cpu.per_byte_s)


@dataclass(frozen=True)
class Work:
    """The work of a piece of a program as two recipes: in user mode and in the kernel."""

    user: Recipe = Recipe()
    system: Recipe = Recipe()

    def __add__(self, other: "Work") -> "Work":
        if not isinstance(other, Work):
            return NotImplemented
        return Work(self.user + other.user, self.system + other.system)

    def __mul__(self, k: float) -> "Work":
        return Work(self.user * k, self.system * k)

    __rmul__ = __mul__

    def seconds(self, cpu: CpuCostModel) -> tuple:
        """(user, system) seconds on ``cpu``."""
        return self.user.seconds(cpu), self.system.seconds(cpu)
