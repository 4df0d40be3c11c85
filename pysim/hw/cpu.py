"""CPU cost model: fixed costs per operation and costs per byte."""
from __future__ import annotations

import types
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CpuCostModel:
    """Seconds an operation costs: ``fixed_s[op] + per_byte_s[op] * nbytes``.

    Parameters
    ----------
    clock_hz : float
        The clock, for converting cycle counts (``cycles(n)``).
    fixed_s, per_byte_s : mapping of str to float
        Costs in seconds and seconds per byte. An operation may have either or both.
    """

    clock_hz: float
    fixed_s: types.MappingProxyType = field(default_factory=lambda: types.MappingProxyType({}))
    per_byte_s: types.MappingProxyType = field(default_factory=lambda: types.MappingProxyType({}))

    def __post_init__(self):
        if not self.clock_hz > 0:
            raise ValueError(f"clock_hz must be > 0, got {self.clock_hz!r}")
        for name in ("fixed_s", "per_byte_s"):
            table = dict(getattr(self, name))
            for op, v in table.items():
                if not v >= 0:
                    raise ValueError(f"{name}[{op!r}] must be >= 0 seconds, got {v!r}")
            object.__setattr__(self, name, types.MappingProxyType(table))

    def cost(self, op: str, nbytes: float = 0) -> float:
        """Seconds for one ``op`` on ``nbytes`` bytes.

        Raises
        ------
        KeyError
            If ``op`` has neither a fixed nor a per-byte cost.
        """
        if op not in self.fixed_s and op not in self.per_byte_s:
            known = sorted(set(self.fixed_s) | set(self.per_byte_s))
            raise KeyError(f"unknown operation {op!r}; known: {known}")
        if nbytes < 0:
            raise ValueError(f"nbytes must be >= 0, got {nbytes!r}")
        return self.fixed_s.get(op, 0.0) + self.per_byte_s.get(op, 0.0) * nbytes

    def cycles(self, n: float) -> float:
        """Seconds taken by ``n`` cycles."""
        return n / self.clock_hz

    def with_costs(self, **changes) -> "CpuCostModel":
        """A copy with some fixed costs replaced (``op=seconds``)."""
        fixed = dict(self.fixed_s)
        fixed.update(changes)
        return CpuCostModel(self.clock_hz, fixed, self.per_byte_s)
