"""Software mechanisms that more than one paper uses.

A mechanism moves here as soon as a second paper needs it; no paper
reinvents what this package has.

* :mod:`pysim.sw.costs`: operation counts times unit costs on a
  :class:`pysim.hw.CpuCostModel` (system calls, copies, crossings, ...).
* :mod:`pysim.sw.syscalls`: crossing into the kernel (trap, loop step,
  compound), interposers (dispatcher, extension chains, user-level bounce)
  and system-call mixes, from a generator or a real ``strace`` log.
* :mod:`pysim.sw.cpu`: a simulated CPU's time by category, after a warm-up,
  for models on the engine.
"""
from pysim.sw.costs import STANDARD_OPS, Recipe, Work, fit_residual
from pysim.sw.cpu import CpuAccount

__all__ = ["Recipe", "Work", "STANDARD_OPS", "fit_residual", "CpuAccount"]
