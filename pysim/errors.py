"""The exceptions pysim raises: one small tree under PysimError."""


class PysimError(Exception):
    """Base of every error pysim raises on purpose."""


class ModelError(PysimError):
    """A paper's model cannot run with the parameters it was given."""


class CalibrationError(PysimError):
    """A calibration did not converge or its target is unusable."""


class LedgerError(PysimError):
    """A paper's ledger, claims or metadata file is malformed."""


class Interrupt(PysimError):
    """Thrown into a process by Process.interrupt(cause) (SimPy's ``Interrupt``)."""

    def __init__(self, cause=None):
        super().__init__(cause)

    def __str__(self):
        return f"{type(self).__name__}({self.cause!r})"

    @property
    def cause(self):
        """What the interrupter passed to interrupt()."""
        return self.args[0]


class ApproximationWarning(UserWarning):
    """A result was computed at reduced fidelity (quick mode, short runs)."""
