"""Workload and trace generators shared by the papers' models.

* :mod:`pysim.workloads.arrivals`: request arrival processes (Poisson, ...).
* :mod:`pysim.workloads.addresses`: memory reference streams (Zipf-popular
  pages lying in runs, ...).
* :mod:`pysim.workloads.clients`: closed-loop clients on the engine.
* :mod:`pysim.workloads.syscalls`: system-call sequences drawn from a mix,
  and the mixes of simple programs.

Every generator takes ``rng`` as a keyword (an int seed or a NumPy
Generator); streams that go on forever are Python generators, and the
caller decides how many items to take; vectorised ones return NumPy arrays.
"""
