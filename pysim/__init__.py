"""pysim: classic systems papers replicated by simulation.

The package is a thin Python layer over a C core (``pysim._native``). Start
with :mod:`pysim.engine` for processes, :mod:`pysim.hw` for hardware models
and the period catalog, and :mod:`pysim.models` for the papers.
"""
from pysim.errors import (ApproximationWarning, CalibrationError, Interrupt, LedgerError, ModelError,
                          PysimError)

__version__ = "0.1.0"

__all__ = ["PysimError", "ModelError", "CalibrationError", "LedgerError", "Interrupt",
           "ApproximationWarning", "__version__"]
