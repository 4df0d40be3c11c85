"""Workload and trace generators shared by the papers' models.

* :mod:`pysim.workloads.arrivals`: request arrival processes (Poisson, ...).
* :mod:`pysim.workloads.addresses`: memory reference streams (Zipf-popular
  pages lying in runs, ...).

Every generator takes ``rng`` as a keyword (an int seed or a NumPy
Generator); streams that go on forever are Python generators, and the
caller decides how many items to take; vectorised ones return NumPy arrays.
"""
