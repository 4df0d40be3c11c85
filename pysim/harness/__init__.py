"""Measurement in the manner of lmbench: the harness, a simulated twin, and real snippet runners.

* :mod:`pysim.harness.lmbench`: the lmbench 2.0 harness over any clock
  (interval, auto-sizing, loop overhead, tries, median or minimum);
* :mod:`pysim.harness.twin`: a simulated clock with a timer resolution,
  interrupts and a competing process, for the papers about measurement;
* :mod:`pysim.harness.runners`: real C, C++, Java and Tcl snippets timed by
  the same harness, reporting "not available" where a tool is missing;
* :mod:`pysim.harness.commands`: real commands timed (elapsed, and the
  CPU time of the command and its children), under several environments;
* :mod:`pysim.harness.tracing`: a real command run plain and under
  ``strace``, giving its system-call mix and the cost of tracing it;
* :mod:`pysim.harness.exclusive`: the machine-wide lock every real
  measurement holds, so that experiments that would disturb each other
  never run at once.
"""
from pysim.harness.lmbench import BenchResult, auto_size, bench, compute_enough, loop_overhead
from pysim.harness.runners import Measurement, Snippet, cache_dir, measure, program_file
from pysim.harness.commands import CommandResult, parse_value, run_command, timed_runs
from pysim.harness.tracing import TracedRun, traced_run
from pysim.harness.twin import SimulatedClock
from pysim.harness.exclusive import exclusive, one_core, waited_s

__all__ = ["BenchResult", "auto_size", "bench", "compute_enough", "loop_overhead", "Measurement", "Snippet",
           "measure", "cache_dir", "program_file", "SimulatedClock", "TracedRun", "traced_run", "CommandResult",
           "run_command", "parse_value", "timed_runs", "exclusive", "one_core", "waited_s"]
