"""Helpers a paper's notebook calls: versions and seed, comparisons, saved outputs.

When ``pysim reproduce`` runs a notebook it sets PYSIM_RESULTS_DIR, and
:func:`save_table` / :func:`save_figure` write there (CSV; PNG and SVG). In
the browser they only return what they were given.
"""
from __future__ import annotations

import io
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from pysim import __version__, ledger
from pysim.results import write_bytes_atomic, write_text_atomic


def about(seed=0, quick=False) -> str:
    """One line with the versions and the seed, printed and returned."""
    line = (f"pysim {__version__} | numpy {np.__version__} | pandas {pd.__version__} | "
            f"python {platform.python_version()} | seed={seed} | quick={quick}")
    print(line)
    return line


def results_dir() -> Path | None:
    d = os.environ.get("PYSIM_RESULTS_DIR")
    return Path(d) if d else None


def save_table(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Write a regenerated table as <name>.csv under the results folder (when reproducing)."""
    d = results_dir()
    if d is not None:
        write_text_atomic(d / f"{name}.csv", df.to_csv())
    return df


def save_figure(fig, name: str):
    """Write a figure as <name>.png and <name>.svg under the results folder (when reproducing)."""
    d = results_dir()
    if d is not None:
        for fmt in ("png", "svg"):
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, bbox_inches="tight")
            write_bytes_atomic(d / f"{name}.{fmt}", buf.getvalue())
    return fig


def compare(paper_id: str, artifact: str, df: pd.DataFrame) -> pd.DataFrame:
    """The model's cells beside the published ones, with relative errors (see pysim.ledger.compare)."""
    cmp = ledger.compare(paper_id, artifact, df)
    return cmp.style.format({"published": "{:.4g}", "simulated": "{:.4g}", "rel_error": "{:+.1%}",
                             "tolerance": "{:.0%}"}).apply(_shade, axis=1) if len(cmp) else cmp


def _shade(row):
    color = "" if row["role"] != "prediction" else ("background-color: #e6f4ea" if row["within"]
                                                   else "background-color: #fce8e6")
    return [color] * len(row)


def verdict(paper_id: str, frames: dict) -> pd.DataFrame:
    """The paper's scorecard as the lab computes it: one row per artifact."""
    card = ledger.score_paper(paper_id, frames=frames)
    rows = [{"artifact": a, "verdict": v["verdict"], "cells within / scored": f"{v['cells_within']} / {v['cells_scored']}",
             "cells fitted": v["cells_fitted"], "claims held": f"{v['claims_held']} / {v['claims']}"}
            for a, v in card["artifacts"].items()]
    print(f"{paper_id}: {card['verdict']}")
    return pd.DataFrame(rows).set_index("artifact")


def claims(paper_id: str, frames: dict) -> pd.DataFrame:
    """Each claim of the paper: its quote, section, and whether it holds on these frames."""
    paper = ledger.load(paper_id)
    rows = []
    for c in paper.claims:
        try:
            held = ledger.evaluate_claim(c.check, {a: frames[a] for a in c.artifacts})
            outcome = "holds" if held else "does not hold"
        except (ledger.LedgerError, KeyError) as e:
            outcome = f"error: {e}"
        rows.append({"claim": c.id, "section": c.section, "paper says": c.quote, "model": outcome})
    return pd.DataFrame(rows).set_index("claim")


def params_table(model, paper_id: str | None = None) -> pd.DataFrame:
    """The model's Params: name, value, provenance (the comment beside each field) and, for a
    calibrated one, the published value it was fitted to (read from the paper's ledger)."""
    import dataclasses
    import inspect
    import re

    src = inspect.getsource(model.Params)
    notes = dict(re.findall(r"^\s+(\w+):[^#\n]*#\s*(.+)$", src, flags=re.M))
    p = model.Params()
    targets = {}
    if paper_id is not None:
        cells = {(c.artifact, c.row, c.column): c for c in ledger.load(paper_id).cells}
        for fit in getattr(model, "CALIBRATION", ()):
            c = cells[(fit.artifact, fit.row, fit.column)]
            targets[fit.parameter] = f"{c.value:g} {c.unit} ({fit.artifact}: {fit.row} / {fit.column})"
    rows = [{"parameter": f.name, "value": getattr(p, f.name), "provenance": notes.get(f.name, ""),
             "fitted to": targets.get(f.name, "")} for f in dataclasses.fields(p)]
    return pd.DataFrame(rows).set_index("parameter")


def published(paper_id: str, artifact: str) -> pd.DataFrame:
    """The ledger's cells of one artifact as a table: one row per (row, column)."""
    paper = ledger.load(paper_id)
    rows = [{"row": c.row, "column": c.column, "value": c.value, "source": c.source}
            for c in paper.cells if c.artifact == artifact]
    return pd.DataFrame(rows)


def parity_plot(cmp: pd.DataFrame, title: str, unit: str, *, ax=None):
    """Simulated against published for every compared cell, with the y = x line and tolerance band."""
    from pysim import plotting

    fig, ax = plotting.figure(title, f"published ({unit})", f"model ({unit})", ax=ax)
    lo = float(min(cmp["published"].min(), cmp["simulated"].min())) * 0.8
    hi = float(max(cmp["published"].max(), cmp["simulated"].max())) * 1.2
    tol = float(cmp["tolerance"].median()) if len(cmp) else 0.1
    xs = [lo, hi]
    ax.plot(xs, xs, color="0.3", linewidth=1)
    ax.fill_between(xs, [x * (1 - tol) for x in xs], [x * (1 + tol) for x in xs], color="0.85", label=f"±{tol:.0%}")
    for role, marker in (("prediction", "o"), ("fit", "s"), ("doubtful", "x")):
        sel = cmp[cmp["role"] == role]
        if len(sel):
            ax.plot(sel["published"], sel["simulated"], marker=marker, linestyle="none",
                    markerfacecolor="none" if role != "doubtful" else None, label=role)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend()
    return fig
