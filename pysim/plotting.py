"""One figure style for the whole lab.

Published values are hollow markers, simulated values lines (with a band
across seeds where there is one); axis labels carry units.
"""
from __future__ import annotations

import matplotlib

STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "font.family": "DejaVu Sans",
}

PUBLISHED = {"marker": "o", "markerfacecolor": "none", "linestyle": "none", "markersize": 7, "markeredgewidth": 1.4}
SIMULATED = {"linestyle": "-", "linewidth": 1.8}


def use_style() -> None:
    """Apply the lab's style to matplotlib."""
    matplotlib.rcParams.update(STYLE)


def figure(title: str, xlabel: str, ylabel: str, *, ax=None):
    """A new styled (fig, ax) with title and unit-bearing labels."""
    import matplotlib.pyplot as plt

    use_style()
    if ax is None:
        fig, ax = plt.subplots()
    else:
        fig = ax.figure
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig, ax


def compare_series(ax, x_sim, y_sim, *, x_pub=None, y_pub=None, label="", color=None, band=None):
    """Draw one simulated series (line) and its published points (hollow markers) in one colour."""
    (line,) = ax.plot(x_sim, y_sim, color=color, label=f"{label} (model)" if label else "model", **SIMULATED)
    if band is not None:
        lo, hi = band
        ax.fill_between(x_sim, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
    if x_pub is not None and y_pub is not None and len(x_pub):
        ax.plot(x_pub, y_pub, color=line.get_color(), label=f"{label} (paper)" if label else "paper", **PUBLISHED)
    return line
