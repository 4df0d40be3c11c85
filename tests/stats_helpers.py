"""Confidence intervals from independent replications, for statistical tests."""
import numpy as np

# Two-sided 99.9% Student-t quantiles t(0.9995, dof), from standard tables.
T_999 = {9: 4.781, 19: 3.883}


def replication_ci(values):
    """(mean, half-width) of the 99.9% t confidence interval over independent replications."""
    v = np.asarray(values, dtype=float)
    half = T_999[v.size - 1] * v.std(ddof=1) / np.sqrt(v.size)
    return float(v.mean()), float(half)
