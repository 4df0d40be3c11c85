"""Queueing networks: open ones run in C (:mod:`pysim.queueing.open`), closed ones solved by mean
value analysis (:mod:`pysim.queueing.closed`), and the closed forms to check them by."""
from pysim.queueing.closed import (ClosedResult, Station, amva, balanced_job_bounds, asymptotic_bounds, mva,
                                   mva_at, mva_multiclass, seidmann)
from pysim.queueing.open import (NetworkResult, erlang_c, jackson_throughputs, mm1_time_in_system, mmc_mean_wait,
                                 open_network, single_queue_trace)

__all__ = ["NetworkResult", "open_network", "single_queue_trace", "mm1_time_in_system", "erlang_c",
           "mmc_mean_wait", "jackson_throughputs", "Station", "ClosedResult", "mva", "mva_at", "mva_multiclass", "amva",
           "asymptotic_bounds", "balanced_job_bounds", "seidmann"]
